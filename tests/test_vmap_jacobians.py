"""``s2s.vmap`` of ``s2s.jacrev``/``s2s.jacfwd``: one Jacobian per example, against ``jax.vmap`` of
``jax.jacrev``/``jax.jacfwd`` of the ``jnp.where`` twin."""

import jax
import jax.numpy as jnp
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


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_a_jacobian_by_rows_maps_vjp_fn_over_cotangents(backend):
    """The autodiff cookbook's Jacobian by rows, ``vmap(vjp_fn)(eye)``: the backward module mapped over the
    cotangent, the primal and its residuals the same for every row; JAX's rows, with ``has_aux`` too.
    """
    x = np.array([0.4, -1.2, 0.7])

    def twin(v):
        y = jnp.array([jnp.sin(v[0]) * v[1], v[1] ** 3 + v[2], jnp.exp(v[0] - v[2])])
        return y, y[0] ** 2

    _, want_fn, want_aux = jax.vjp(twin, x, has_aux=True)
    want = jax.vmap(want_fn)(np.eye(3))
    _, vjp_fn, aux = s2s.vjp(P.three_outputs_with_aux, x, has_aux=True, backend=backend)
    (rows,) = s2s.vmap(vjp_fn, backend=backend)(np.eye(3))
    np.testing.assert_allclose(rows, want[0], rtol=1e-12)
    np.testing.assert_allclose(aux, want_aux, rtol=1e-12)
    (columns,) = s2s.vmap(vjp_fn, in_axes=1, backend=backend)(np.eye(3).T)
    np.testing.assert_allclose(columns, want[0], rtol=1e-12)
    # a function of the user's calling it is no function s2s reads: the error says how to map it
    with pytest.raises(S2SError, match=r"s2s\.vmap\(vjp_fn\)"):
        s2s.vmap(lambda ct: vjp_fn(ct), backend=backend)(np.eye(3))
