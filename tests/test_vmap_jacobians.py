"""``s2s.vmap`` of ``s2s.jacrev``/``s2s.jacfwd``: one Jacobian per example, against ``jax.vmap`` of
``jax.jacrev``/``jax.jacfwd`` of the ``jnp.where`` twin."""

import jax
import numpy as np
import pytest
from jax_checks import oracle

import s2s
from s2s.errors import S2SError
from tests.programs import vmap as P

RNG = np.random.default_rng(21)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)], ids=str)
@pytest.mark.parametrize("kind", ["jacrev", "jacfwd"])
def test_per_example_jacobians_match_jax(kind, argnums, backend):
    w, xs = RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3))
    if backend == "xla":
        w, xs = np.float32(w), np.float32(xs)
    jac = getattr(s2s, kind)(P.squashed, argnums=argnums)
    got = s2s.vmap(jac, in_axes=(None, 0), backend=backend)(w, xs)
    with jax.enable_x64(backend == "numpy"):
        twin = getattr(jax, kind)(P.twin_squashed, argnums=argnums)
        want = oracle(jax.vmap, twin, in_axes=(None, 0))(w, xs)
    tol = {"rtol": 1e-9} if backend == "numpy" else {"rtol": 1e-4, "atol": 1e-5}
    for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), **tol)


def test_the_source_is_the_batched_derivative_module():
    text = s2s.vmap(s2s.jacrev(P.squashed), in_axes=(None, 0)).source
    assert "_vjp_batched(" in text


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_per_example_hessians_match_jax(backend):
    w, xs = RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3))
    if backend == "xla":
        w, xs = np.float32(w), np.float32(xs)
    got = s2s.vmap(
        s2s.hessian(P.squashed_loss, argnums=(0, 1)), (None, 0), backend=backend
    )(w, xs)
    with jax.enable_x64(backend == "numpy"):
        twin = oracle(jax.hessian, P.twin_squashed_loss, argnums=(0, 1))
        want = oracle(jax.vmap, twin, in_axes=(None, 0))(w, xs)
    tol = (
        {"rtol": 1e-9, "atol": 1e-12}
        if backend == "numpy"
        else {"rtol": 1e-3, "atol": 1e-4}
    )
    for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), **tol)


def _cosines(x, k=0.5):
    return jax.numpy.sum(jax.numpy.cos(x) * k)


@pytest.mark.parametrize("kind", ["hessian", "jacrev", "jacfwd"])
def test_a_parameter_the_call_leaves_out_keeps_its_default(kind):
    """``vmap(hessian(f))(xs)`` of ``f(x, k=0.5)``: ``k`` is its default for every example, not mapped."""
    xs = RNG.normal(size=(2, 3))
    got = s2s.vmap(getattr(s2s, kind)(s2s.grad(_cosines)), backend="numpy")(xs)
    with jax.enable_x64(True):
        want = jax.vmap(getattr(jax, kind)(jax.grad(_cosines)))(xs)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def _cosines_keyword_only(x, w, *, k=0.5):
    return jax.numpy.cos(x * w) * k


@pytest.mark.parametrize("kind", ["hessian", "jacrev", "jacfwd"])
def test_a_keyword_only_parameter_keeps_its_default(kind):
    """``vmap(jacfwd(f), in_axes=(0, None))`` of ``f(x, w, *, k=0.5)``."""
    xs, w = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    got = s2s.vmap(getattr(s2s, kind)(_cosines_keyword_only), (0, None))(xs, w)
    with jax.enable_x64(True):
        want = jax.vmap(getattr(jax, kind)(_cosines_keyword_only), (0, None))(xs, w)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_what_it_does_not_cover_is_a_located_refusal():
    with pytest.raises(S2SError, match="out_axes=1 is not supported"):
        s2s.vmap(s2s.jacrev(P.squashed), out_axes=1)
