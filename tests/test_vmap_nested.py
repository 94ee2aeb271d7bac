"""``s2s.vmap`` of ``s2s.vmap``: one batched module over the product of both mapped axes, against
``jax.vmap(jax.vmap(...))`` of the ``jnp.where`` twin."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_checks import oracle

import s2s
from s2s.errors import S2SError
from tests.programs import vmap as P

RNG = np.random.default_rng(9)

CASES = [
    # (inner in_axes, inner out_axes, outer in_axes, outer out_axes, shapes)
    ((None, 0), 0, (0, None), 0, [(4, 3), (5, 3)]),  # the pairwise matrix
    ((0, 0), 0, (0, 0), 0, [(4, 5, 3), (4, 5, 3)]),
    ((0, 0), 0, (1, 1), 1, [(5, 4, 3), (5, 4, 3)]),
    ((0, None), 0, (None, 0), 1, [(5, 3), (4, 3)]),
    ((-1, None), 0, (0, None), 0, [(4, 3, 5), (3,)]),
]


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_vmap_of_vmap_matches_jax(case, backend):
    inner_in, inner_out, outer_in, outer_out, shapes = case
    args = [RNG.uniform(0.0, 1.5, size=s) for s in shapes]
    if backend == "xla":
        args = [np.float32(a) for a in args]
    inner = s2s.vmap(P.distance, in_axes=inner_in, out_axes=inner_out)
    got = s2s.vmap(inner, in_axes=outer_in, out_axes=outer_out, backend=backend)(*args)
    with jax.enable_x64(backend == "numpy"):
        twin = oracle(jax.vmap, P.twin_distance, in_axes=inner_in, out_axes=inner_out)
        want = oracle(jax.vmap, twin, in_axes=outer_in, out_axes=outer_out)(*args)
    tol = {"rtol": 1e-9} if backend == "numpy" else {"rtol": 1e-5, "atol": 1e-6}
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), **tol)


def test_the_source_is_the_batched_module_over_the_merged_axis():
    nested = s2s.vmap(s2s.vmap(P.distance, in_axes=(None, 0)), in_axes=(0, None))
    assert "def distance_batched(x, y):" in nested.source


def test_what_nesting_does_not_cover_is_an_error():
    inner = s2s.vmap(P.distance, in_axes=(None, 0), axis_name="i")
    with pytest.raises(S2SError, match="axis_name"):
        s2s.vmap(inner, in_axes=(0, None))
    with pytest.raises(S2SError, match="three deep"):
        s2s.vmap(s2s.vmap(s2s.vmap(P.distance)))
    nested = s2s.vmap(s2s.vmap(P.distance), in_axes=(0, 0))
    with pytest.raises(ValueError, match="inconsistent sizes for the outer"):
        nested(np.ones((4, 2, 3)), np.ones((5, 2, 3)))
    with pytest.raises(
        TypeError, match="scalar-output"
    ):  # as ``jax.grad``: its output is a matrix
        s2s.grad(nested)(np.ones((4, 2, 3)), np.ones((4, 2, 3)))


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_rebound_global_is_read_again(backend, monkeypatch):
    """The merged call is compiled from the module that is current: a global the function reads,
    rebound after the first call, gives the new values (never the compiled old ones)."""
    nested = s2s.vmap(
        s2s.vmap(P.scaled_distance, in_axes=(None, 0)),
        in_axes=(0, None),
        backend=backend,
    )
    jacobians = s2s.vmap(
        s2s.jacrev(P.scaled_distance), in_axes=(0, None), backend=backend
    )
    x, y = np.float32(RNG.uniform(0.0, 1.5, (2, 3))), np.float32(
        RNG.uniform(0.0, 1.5, (4, 3))
    )
    before = np.asarray(nested(x, y)), np.asarray(jacobians(x, y[0]))
    monkeypatch.setattr(P, "SCALE", 3.0)
    after = np.asarray(nested(x, y)), np.asarray(jacobians(x, y[0]))
    for old, new in zip(before, after):
        np.testing.assert_allclose(new, old * 1.5, rtol=1e-5)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_an_inner_vmap_over_a_tree_mapped_again_and_differentiated(backend):
    """k02: the merged batch axes of an inner ``jax.vmap`` whose argument is a dict, under ``s2s.vmap``, and
    the gradient of code calling that batched function (the merging's transpose, leaf by leaf).
    """
    grads = {"w": RNG.normal(size=(2, 3, 4)), "b": RNG.normal(size=(2, 3))}
    mapped = s2s.vmap(P.clipped_total, in_axes=(0, None), backend=backend)
    with jax.enable_x64(True):
        want = jax.vmap(P.clipped_total, in_axes=(0, None))(grads, 1.0)
        want_grad = jax.grad(
            lambda g: jnp.sum(jax.vmap(P.clipped_total, in_axes=(0, None))(g, 1.0))
        )(grads)
    np.testing.assert_allclose(np.asarray(mapped(grads, 1.0)), want, rtol=1e-6)
    got_grad = s2s.grad(P.summed_clipped_totals, backend=backend)(grads, 1.0)
    for k in grads:
        np.testing.assert_allclose(np.asarray(got_grad[k]), want_grad[k], rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("name", ["gp_kernel_matrix", "cross_kernel_matrix"])
def test_a_vmap_of_a_vmap_inside_is_differentiated(name, backend):
    """k05: the JAX documentation's kernel matrix, ``jax.vmap(jax.vmap(k, ...), ...)`` inside the function,
    as its gradient, forward mode and Hessian (the double map is one module over the merged axes).
    """
    f = getattr(P, name)
    r = np.random.default_rng(4)
    args = (np.array([0.7, 0.2]), r.normal(size=(4, 2)), r.normal(size=(3, 2)))
    tangents = (np.ones(2), np.zeros((4, 2)), np.zeros((3, 2)))
    with jax.enable_x64(True):
        for got, want in [
            (s2s.grad(f, backend=backend)(*args), jax.grad(f)(*args)),
            (
                s2s.jvp(f, args, tangents, backend=backend)[1],
                jax.jvp(f, args, tangents)[1],
            ),
            (s2s.hessian(f, backend=backend)(*args), jax.hessian(f)(*args)),
        ]:
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize(
    "in_axes", [(None, None, 0, 0), (0, None, 0, 0), (0, 0, None, None)]
)
def test_per_example_gradients_of_a_loss_that_maps_inside(in_axes, backend):
    """j06, k12: ``s2s.vmap(s2s.grad(loss))`` where ``loss`` calls ``jax.vmap`` (the gradient's vjp of the
    inner map is the function's own vjp over both batch axes, each cotangent summed per outer example).
    """
    r = np.random.default_rng(5)
    w, b = r.normal(size=3), 0.1
    X, Y = r.normal(size=(4, 3)), r.normal(size=4)
    batched = [
        np.stack([a, 0.5 * np.asarray(a), -np.asarray(a)]) if ax == 0 else a
        for a, ax in zip((w, b, X, Y), in_axes)
    ]
    f = P.mean_of_a_mapped_loss
    with jax.enable_x64(True):
        got = s2s.vmap(s2s.grad(f, argnums=(0, 1)), in_axes=in_axes, backend=backend)(
            *batched
        )
        want = jax.vmap(jax.grad(f, argnums=(0, 1)), in_axes=in_axes)(*batched)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize(
    "name", ["gp_kernel_matrix", "cross_kernel_matrix", "ard_kernel_matrix"]
)
def test_a_function_with_a_vmap_of_a_vmap_inside_mapped_again(name, backend):
    """Three levels: ``s2s.vmap`` (and of its gradient) of a function whose kernel matrix is a vmap of a
    vmap: the inner double map's own inner map is mapped over the merged axes too."""
    f = getattr(P, name)
    r = np.random.default_rng(6)
    params, xs, ys = (
        np.array([0.7, 0.2]),
        r.normal(size=(3, 4, 2)),
        r.normal(size=(3, 2)),
    )
    with jax.enable_x64(True):
        for got, want in [
            (
                s2s.vmap(f, (None, 0, None), backend=backend)(params, xs, ys),
                jax.vmap(f, (None, 0, None))(params, xs, ys),
            ),
            (
                s2s.vmap(
                    s2s.grad(f, backend=backend), (None, 0, None), backend=backend
                )(params, xs, ys),
                jax.vmap(jax.grad(f), (None, 0, None))(params, xs, ys),
            ),
        ]:
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_kernel_calling_a_helper_of_the_parameters_under_a_double_map(backend):
    """m08: the kernel's helper (``_softplus`` of the length scales) is lowered while the outer map maps
    the inner one again, and its module holds it (was `name softplus_2 is not defined`). Its gradient and
    forward mode match JAX's; second derivatives of the batched ``jnp.dot`` are a located error.
    """
    f = P.ard_kernel_matrix
    r = np.random.default_rng(4)
    args = (np.array([0.7, 0.2]), r.normal(size=(4, 2)), r.normal(size=(3, 2)))
    tangents = (np.ones(2), np.zeros((4, 2)), np.zeros((3, 2)))
    with jax.enable_x64(True):
        np.testing.assert_allclose(
            s2s.grad(f, backend=backend)(*args), jax.grad(f)(*args), rtol=1e-6
        )
        np.testing.assert_allclose(
            s2s.jvp(f, args, tangents, backend=backend)[1],
            jax.jvp(f, args, tangents)[1],
            rtol=1e-6,
        )
    with pytest.raises(S2SError, match=r"second derivatives of `np\.dot` inside"):
        s2s.hessian(f, backend=backend)(*args)
