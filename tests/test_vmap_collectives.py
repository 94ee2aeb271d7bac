"""Collectives over a named axis (``s2s.psum`` and ``jax.lax.psum`` and the rest) inside ``s2s.vmap``,
against ``jax.vmap(..., axis_name=...)`` of the same functions."""

import jax
import numpy as np
import pytest
from jax_checks import oracle

import s2s
from s2s.errors import MissingRule
from tests.programs import collectives as P

RNG = np.random.default_rng(11)
B = 4


def arr(*shape):
    return RNG.normal(size=shape)


CASES = [
    (P.normalize, lambda: (arr(B, 3) ** 2 + 1.0,), 0),
    (P.center, lambda: (arr(B, 3),), 0),
    (P.extremes, lambda: (arr(3, B),), 1),
    (P.position, lambda: (arr(B),), 0),
    (P.batch_norm, lambda: (arr(B, 5), arr(5)), (0, None)),
    (P.tree_sum, lambda: ({"w": arr(B, 2), "b": arr(B)},), 0),
    (P.total_loss, lambda: (arr(3, 2), arr(B, 3), arr(B, 2)), (None, 0, 0)),
    (P.mean_loss, lambda: (arr(3), arr(B, 3), arr(B)), (None, 0, 0)),
    (P.shared_scale, lambda: (arr(B, 2),), 0),
]


def _check(got, want, tol):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), **tol)


TOL = {"numpy": {"rtol": 1e-9, "atol": 1e-12}, "xla": {"rtol": 1e-4, "atol": 1e-5}}


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("fn, make, in_axes", CASES, ids=[c[0].__name__ for c in CASES])
def test_collectives_match_jax_vmap(fn, make, in_axes, backend):
    args = make()
    if backend == "xla":
        args = jax.tree.map(lambda a: np.asarray(a, np.float32), args)
    got = s2s.vmap(fn, in_axes=in_axes, axis_name="batch", backend=backend)(*args)
    with jax.enable_x64(backend == "numpy"):
        want = oracle(jax.vmap, fn, in_axes=in_axes, axis_name="batch")(*args)
    _check(got, want, TOL[backend])


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("fn", [P.total_loss, P.mean_loss], ids=lambda f: f.__name__)
def test_per_example_gradients_of_a_collective_match_jax(fn, backend):
    """JAX's semantics: psum's cotangent is psum'ed again (each example's gradient counts every example)."""
    w = arr(3, 2) if fn is P.total_loss else arr(3)
    x, y = arr(B, 3), arr(B, *np.shape(w)[1:])
    args = (w, x, y)
    if backend == "xla":
        args = jax.tree.map(lambda a: np.asarray(a, np.float32), args)
    spec = dict(in_axes=(None, 0, 0), axis_name="batch")
    got = s2s.vmap(s2s.grad(fn), **spec, backend=backend)(*args)
    with jax.enable_x64(backend == "numpy"):
        want = jax.vmap(oracle(jax.grad, fn), **spec)(*args)
    _check(got, want, TOL[backend])


def test_gradient_of_a_batched_collective_matches_jax():
    """Reverse mode of the batched module (``grad`` of ``vmap``): the collective's reduction transposed."""
    w, x, y = arr(3, 2), arr(B, 3), arr(B, 2)
    batched = s2s.vmap(P.total_loss, in_axes=(None, 0, 0), axis_name="batch")

    def summed(w, x, y):
        return batched(w, x, y).sum()

    got = s2s.grad(summed, backend="numpy")(w, x, y)
    with jax.enable_x64(True):
        jax_batched = oracle(
            jax.vmap, P.total_loss, in_axes=(None, 0, 0), axis_name="batch"
        )
        want = jax.grad(lambda *a: jax_batched(*a).sum())(w, x, y)
    _check(got, want, TOL["numpy"])


def test_batched_module_names_the_reduction_over_examples():
    text = s2s.vmap(P.batch_norm, in_axes=(0, None), axis_name="batch").source
    assert "rt.pmean_examples(x)" in text
    assert "rt.pmean(" not in text and "jax" not in text


def test_a_collective_over_another_axis_is_left_to_the_outer_map():
    """``axis_name`` names the inner map only: the outer axis's psum runs per inner example, under JAX's map."""
    xs = np.asarray(arr(2, B, 3), np.float32)
    inner = s2s.vmap(P.normalize, axis_name="other")
    assert 'rt.psum(x, "batch")' in inner.source
    got = oracle(jax.vmap, inner, axis_name="batch")(xs)
    want = jax.vmap(
        oracle(jax.vmap, P.normalize, axis_name="other"), axis_name="batch"
    )(xs)
    _check(got, want, TOL["xla"])


def test_a_collective_outside_a_mapped_function_is_jax_unbound_name_error():
    with pytest.raises(NameError, match="unbound axis name"):
        s2s.transform(P.normalize, backend="numpy")(arr(3))
    with pytest.raises(NameError, match="unbound axis name"):
        s2s.vmap(P.normalize, axis_name="other")(arr(B, 3))


def test_differentiating_through_pmax_is_a_located_error():
    grad = s2s.vmap(s2s.grad(P.max_loss), in_axes=(None, 0), axis_name="batch")
    with pytest.raises(MissingRule, match=r"no derivative rule for `rt\.pmax`") as info:
        grad(arr(3), arr(B, 3))
    assert "collectives.py" in str(info.value) and "^" in str(info.value)


def test_axis_name_is_checked():
    with pytest.raises(TypeError, match="axis_name must be a string"):
        s2s.vmap(P.normalize, axis_name=0)
