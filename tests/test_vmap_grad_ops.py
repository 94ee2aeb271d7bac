"""Per-example gradients (``s2s.vmap`` of ``s2s.grad``) through the batching rules of the helpers that the
gradients of norms, products, einsum, joins and splits, tiles, pads, diagonals, lists and casts call,
against a loop of ``s2s.grad`` on NumPy; forward mode (``s2s.vmap`` of ``s2s.jvp``) through theirs too.
"""

import functools

import jax
import numpy as np
import pytest
from jax_checks import jvp_of, oracle

import s2s

B = 3


def summed(w, s):
    return s * np.sum(w)


def norm2(x):
    return np.linalg.norm(x) * np.sum(x)


def norm_axis(x, s):
    return np.sum(np.linalg.norm(x * s, axis=-1, keepdims=True) ** 2)


def norm_ord(x):
    return np.linalg.norm(x, 3) + np.linalg.norm(x, 1)


def norm_matrix(x):
    return np.linalg.norm(x, "fro") + np.linalg.norm(x, np.inf)


def _normalized_sum(z):
    return np.sum(z / np.linalg.norm(z, axis=-1, keepdims=True))


def _matrix_norms(z):
    return np.linalg.norm(z, 2) + np.linalg.norm(z, "nuc")


def norm_gradient_step(x):
    """k11: a gradient step inside (``jax.grad`` of norms): the norms' second derivatives, per example."""
    step = jax.grad(_normalized_sum)(x)
    return _normalized_sum(x - 0.1 * step)


def matrix_norm_gradient_step(x):
    return _matrix_norms(x - 0.1 * jax.grad(_matrix_norms)(x))


def prod_all(x, s):
    return s * np.prod(x)


def prod_axis(x):
    return np.sum(np.prod(x, axis=0) * np.arange(x.shape[1]))


def cumprod_flat(x):
    return np.sum(np.cumprod(x) ** 2)


def cumprod_axis(x, w):
    return np.sum(np.cumprod(x, axis=-1) * w)


def contracted(a, b):
    return np.sum(np.tanh(np.einsum("ij,jk->ik", a, b)))


def implicit(a, b):
    return np.sum(np.einsum("...i,i", a, b) ** 2)


def tensordot_by_count(a, b):
    """``axes=1`` (a count, not a pair of lists): a's last axis with b's first."""
    return np.sum(np.tensordot(np.outer(a, b), a, axes=1) ** 2)


def joined(a, b):
    c = np.concatenate([a, b, a], axis=-1)
    return np.sum(np.sin(c) * np.arange(c.shape[-1]))


def joined_flat(a, b):
    c = np.concatenate((a, b), axis=None)
    return np.sum(c**3)


def stacked(a, b):
    return np.sum(np.stack([a, b], axis=-1) ** 2 * np.array([1.0, 2.0]))


def hjoined(a, b):
    h = np.hstack([a, b])
    return np.sum(np.cos(h) * np.arange(h.size).reshape(h.shape))


def vjoined(a, b):
    v = np.vstack([a, b])
    return np.sum(np.cos(v) * np.arange(v.size).reshape(v.shape))


def split_up(x):
    p, q, r = np.split(x, [1, 3], axis=-1)
    return np.sum(p**2) + np.sum(np.sin(r))


def split_even(x):
    return np.sum(np.split(x, 2)[1] ** 3)


def tiled(x):
    t = np.tile(x, (2, 3))
    return np.sum(np.sin(t) * np.arange(t.size).reshape(t.shape))


def repeated(x):
    r = np.repeat(x, 2, axis=0)
    return np.sum(np.sin(r) * np.arange(r.size).reshape(r.shape))


def repeated_flat(x):
    r = np.repeat(x, 3)
    return np.sum(r**2 * np.arange(r.size))


def padded(x):
    p = np.pad(x, ((1, 0), (2, 1)))
    return np.sum(np.sin(p) * np.arange(p.size).reshape(p.shape))


def diagonal_of(x):
    return np.sum(np.diag(x, 1) ** 2) + np.sum(np.diag(x) ** 3)


def diagonal_matrix(v):
    m = np.diag(v, -1)
    return np.sum(np.sin(m) * np.arange(m.size).reshape(m.shape))


def listed(a, b):
    m = np.array([a * b, np.sin(a), b])
    return np.sum(m**2 * np.arange(m.size).reshape(m.shape))


def cast(x):
    return np.sum(np.sin(x.astype(np.float32)) + x.astype(np.int32) * x)


def chol(x):
    return np.sum(np.linalg.cholesky(x) * np.arange(9.0).reshape(3, 3))


def conv_full(a, v):
    return np.sum(np.sin(np.convolve(a, v)))


def conv_same(a, v):
    c = np.convolve(a, v, mode="same")
    return np.sum(c**2 * np.arange(c.shape[0]))


def conv_valid(a, v):
    return np.sum(np.cos(np.convolve(a, v, "valid")))


def differences(x):
    return np.sum(np.diff(x) ** 2) + np.sum(np.sin(np.diff(x, 2, axis=0)))


def crossed(a, b):
    return np.sum(np.cross(a, b) ** 2 * np.array([1.0, 2.0, 3.0]))


def kronecker(a, b):
    k = np.kron(a, b)
    return np.sum(np.sin(k) * np.arange(k.size).reshape(k.shape))


def _spd(r, *batch):
    m = r.normal(size=batch + (3, 3))
    return m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)


def _rng():
    return np.random.default_rng(0)


def _pos(r, *shape):
    return r.uniform(0.5, 1.5, size=shape) * r.choice([-1.0, 1.0], size=shape)


CASES = [
    (summed, lambda r: (_pos(r, 2, 3), _pos(r, B)), (None, 0)),
    (norm2, lambda r: (_pos(r, B, 4),), (0,)),
    (tensordot_by_count, lambda r: (_pos(r, B, 3), _pos(r, 3)), (0, None)),
    (norm_axis, lambda r: (_pos(r, B, 2, 3), _pos(r, B)), (0, 0)),
    (norm_axis, lambda r: (_pos(r, 2, 3), _pos(r, B)), (None, 0)),
    (norm_ord, lambda r: (_pos(r, B, 4),), (0,)),
    (norm_matrix, lambda r: (_pos(r, B, 2, 3),), (0,)),
    (norm_gradient_step, lambda r: (_pos(r, B, 2, 3),), (0,)),
    (matrix_norm_gradient_step, lambda r: (_pos(r, B, 3, 2),), (0,)),
    (prod_all, lambda r: (_pos(r, B, 2, 2), _pos(r, B)), (0, 0)),
    (prod_all, lambda r: (_pos(r, 2, 2), _pos(r, B)), (None, 0)),
    (prod_axis, lambda r: (_pos(r, B, 3, 2),), (0,)),
    (cumprod_flat, lambda r: (_pos(r, B, 2, 3),), (0,)),
    (cumprod_axis, lambda r: (_pos(r, B, 2, 3), _pos(r, 2, 3)), (0, None)),
    (cumprod_axis, lambda r: (_pos(r, 2, 3), _pos(r, B, 2, 3)), (None, 0)),
    (contracted, lambda r: (_pos(r, B, 2, 3), _pos(r, 3, 2)), (0, None)),
    (contracted, lambda r: (_pos(r, 2, 3), _pos(r, B, 3, 2)), (None, 0)),
    (implicit, lambda r: (_pos(r, B, 2, 3), _pos(r, B, 3)), (0, 0)),
    (joined, lambda r: (_pos(r, B, 2, 3), _pos(r, 2, 1)), (0, None)),
    (joined, lambda r: (_pos(r, 2, 3), _pos(r, B, 2, 1)), (None, 0)),
    (joined_flat, lambda r: (_pos(r, B, 2, 3), _pos(r, B, 2)), (0, 0)),
    (stacked, lambda r: (_pos(r, B, 3), _pos(r, 3)), (0, None)),
    (hjoined, lambda r: (_pos(r, B, 2), _pos(r, 3)), (0, None)),
    (hjoined, lambda r: (_pos(r, B, 2, 2), _pos(r, B, 2, 1)), (0, 0)),
    (vjoined, lambda r: (_pos(r, B, 3), _pos(r, 3)), (0, None)),
    (vjoined, lambda r: (_pos(r, 2, 3), _pos(r, B, 1, 3)), (None, 0)),
    (split_up, lambda r: (_pos(r, B, 2, 5),), (0,)),
    (split_even, lambda r: (_pos(r, B, 4, 2),), (0,)),
    (tiled, lambda r: (_pos(r, B, 3),), (0,)),
    (tiled, lambda r: (_pos(r, B, 2, 2),), (0,)),
    (repeated, lambda r: (_pos(r, B, 2, 3),), (0,)),
    (repeated_flat, lambda r: (_pos(r, B, 2, 2),), (0,)),
    (padded, lambda r: (_pos(r, B, 2, 3),), (0,)),
    (diagonal_of, lambda r: (_pos(r, B, 3, 4),), (0,)),
    (diagonal_matrix, lambda r: (_pos(r, B, 3),), (0,)),
    (listed, lambda r: (_pos(r, B, 2), _pos(r, 2)), (0, None)),
    (listed, lambda r: (_pos(r, B), _pos(r, B)), (0, 0)),
    (cast, lambda r: (_pos(r, B, 3),), (0,)),
    (chol, lambda r: (_spd(r, B),), (0,)),
    (conv_full, lambda r: (_pos(r, B, 4), _pos(r, 3)), (0, None)),
    (conv_full, lambda r: (_pos(r, 2), _pos(r, B, 3)), (None, 0)),
    (conv_same, lambda r: (_pos(r, B, 4), _pos(r, B, 3)), (0, 0)),
    (conv_same, lambda r: (_pos(r, B, 2), _pos(r, 5)), (0, None)),
    (conv_valid, lambda r: (_pos(r, B, 5), _pos(r, B, 2)), (0, 0)),
    (conv_valid, lambda r: (_pos(r, 2), _pos(r, B, 4)), (None, 0)),
    (differences, lambda r: (_pos(r, B, 4, 3),), (0,)),
    (crossed, lambda r: (_pos(r, B, 2, 3), _pos(r, 3)), (0, None)),
    (kronecker, lambda r: (_pos(r, B, 2), _pos(r, 2, 3)), (0, None)),
    (kronecker, lambda r: (_pos(r, 2, 2), _pos(r, B, 2, 1)), (None, 0)),
]
IDS = [f"{c[0].__name__}-{c[2]}" for c in CASES]


def _loop(f, args, in_axes):
    outs = []
    for i in range(B):
        outs.append(f(*(a if ax is None else a[i] for a, ax in zip(args, in_axes))))
    return np.stack(outs)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("fn, make, in_axes", CASES, ids=IDS)
def test_per_example_gradient_matches_a_loop(fn, make, in_axes, backend):
    args = make(_rng())
    want = _loop(s2s.grad(fn, backend="numpy"), args, in_axes)
    got = s2s.vmap(s2s.grad(fn), in_axes=in_axes, backend=backend)(*args)
    tol = 1e-9 if backend == "numpy" else 1e-4
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_cumprod_tangent_batched_matches_a_loop():
    """``rt.cumprod_jvp``'s batched twin (forward mode of cumprod), each operand batched or shared."""
    from s2s import runtime as rt

    r = _rng()
    t, a = _pos(r, B, 2, 3), _pos(r, B, 2, 3)
    for axis in (None, 0, -1):
        for flags in ((True, True), (True, False), (False, True)):
            args = [x if f else x[0] for x, f in zip((t, a), flags)]
            got = rt.batched_vjps.cumprod_jvp(*args, axis, flags)
            want = np.stack(
                [
                    rt.cumprod_jvp(
                        *(x[i] if f else x for x, f in zip(args, flags)), axis
                    )
                    for i in range(B)
                ]
            )
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_einsum_gradient_source_uses_the_batched_twin():
    text = s2s.vmap(s2s.grad(contracted), in_axes=(0, None), backend="numpy").source
    assert "rt.batched_vjps.einsum_vjp" in text


def _smoothed(x, k):
    return np.convolve(x, k, mode="same")


def smoothed_by_an_inner_vmap(k, xs):
    """'Thinking in JAX''s smoothing: ``jax.vmap`` of a convolution inside, either operand mapped."""
    shared = jax.vmap(_smoothed, in_axes=(0, None))(xs, k)
    own = jax.vmap(_smoothed)(xs, np.stack([k, 2.0 * k, k**2]))
    return np.sum(shared**2) + np.sum(np.sin(own))


def _twin_smoothed_by_an_inner_vmap(k, xs):
    def smooth(x, kk):
        return jax.numpy.convolve(x, kk, mode="same")

    shared = jax.vmap(smooth, in_axes=(0, None))(xs, k)
    own = jax.vmap(smooth)(xs, jax.numpy.stack([k, 2.0 * k, k**2]))
    return jax.numpy.sum(shared**2) + jax.numpy.sum(jax.numpy.sin(own))


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_derivatives_of_an_inner_vmap_of_convolve_match_jax(backend):
    """The derivative rules of ``rt.batched_ops.convolve``: gradient, forward mode and Hessian."""
    r = _rng()
    k, xs = _pos(r, 3), _pos(r, 3, 6)
    with jax.enable_x64(True):
        twin = _twin_smoothed_by_an_inner_vmap
        for argnums in (0, 1):
            np.testing.assert_allclose(
                np.asarray(
                    s2s.grad(smoothed_by_an_inner_vmap, argnums, backend=backend)(k, xs)
                ),
                oracle(jax.grad, twin, argnums)(k, xs),
                rtol=1e-6,
            )
        tangents = (np.ones(3), np.zeros((3, 6)))
        np.testing.assert_allclose(
            np.asarray(
                s2s.jvp(smoothed_by_an_inner_vmap, (k, xs), tangents, backend=backend)[
                    1
                ]
            ),
            oracle(jvp_of, twin)((k, xs), tangents)[1],
            rtol=1e-6,
        )
        np.testing.assert_allclose(
            np.asarray(s2s.hessian(smoothed_by_an_inner_vmap, backend=backend)(k, xs)),
            oracle(jax.hessian, twin)(k, xs),
            rtol=1e-6,
        )


def attention_by_an_inner_vmap(w, xs, mask):
    """``jax.nn.softmax`` inside ``jax.vmap``: over each example's scores, over scores shared by every
    example under per-example masks (m20's attention weights)."""

    def attend(x):
        return jax.nn.softmax(x[:, None] * w, axis=-1) @ w

    def masked(m):
        return jax.nn.softmax(w * 2.0, where=m)

    own = jax.vmap(attend)(xs)
    shared = jax.vmap(masked)(mask)
    return jax.numpy.sum(jax.numpy.sin(own)) + jax.numpy.sum(shared**2)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_derivatives_of_an_inner_vmap_of_softmax_match_jax(backend):
    """The derivative rules of ``rt.batching.softmax``: gradient (the shared scores' summed over the
    examples), forward mode, and per-example gradients."""
    r = _rng()
    w, xs = r.normal(size=4), r.normal(size=(3, 4))
    mask = np.array([[True, True, False, True], [True] * 4, [False, True, True, True]])
    f = attention_by_an_inner_vmap
    with jax.enable_x64(True):
        for argnums in (0, 1):
            np.testing.assert_allclose(
                np.asarray(s2s.grad(f, argnums, backend=backend)(w, xs, mask)),
                oracle(jax.grad, f, argnums)(w, xs, mask),
                rtol=1e-6,
            )
        tangents = (np.ones(4), np.full((3, 4), 0.5))
        np.testing.assert_allclose(
            np.asarray(
                s2s.jvp(
                    lambda w, xs: f(w, xs, mask), (w, xs), tangents, backend=backend
                )[1]
            ),
            oracle(jvp_of, functools.partial(f, mask=mask))((w, xs), tangents)[1],
            rtol=1e-6,
        )
        per_example = s2s.vmap(s2s.grad(f), in_axes=(0, None, None), backend=backend)
        ws = np.stack([w, 0.5 * w])
        np.testing.assert_allclose(
            np.asarray(per_example(ws, xs, mask)),
            oracle(jax.vmap, jax.grad(f), (0, None, None))(ws, xs, mask),
            rtol=1e-6,
        )


def library_function_in_a_lambda(w, xs):
    """A lambda that only calls JAX's function (``lambda r: jnp.tanh(r)``): a lambda of the program,
    mapped as one (was refused as `tanh`, a function of jax)."""
    own = jax.vmap(lambda r: jax.numpy.tanh(r))(xs * w)
    norms = jax.vmap(lambda r: jax.numpy.linalg.norm(r))(xs)
    return jax.numpy.sum(own**2) + jax.numpy.sum(jax.lax.stop_gradient(norms))


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_lambda_calling_a_library_function_is_mapped_and_differentiated(backend):
    r = _rng()
    w, xs = r.normal(size=4), r.normal(size=(3, 4))
    f = library_function_in_a_lambda
    with jax.enable_x64(True):
        np.testing.assert_allclose(
            np.asarray(s2s.grad(f, backend=backend)(w, xs)),
            oracle(jax.grad, f)(w, xs),
            rtol=1e-6,
        )
        ws = np.stack([w, -w])
        np.testing.assert_allclose(
            np.asarray(s2s.vmap(f, in_axes=(0, None), backend=backend)(ws, xs)),
            oracle(jax.vmap, f, (0, None))(ws, xs),
            rtol=1e-6,
        )


def _grads_and_tangents_match_jax(f, backend, hessian=False):
    """``f(w, xs)`` (``w`` of 3 numbers, ``xs`` of 4 rows of 3) against JAX: the gradient with respect to
    each argument, a tangent of both, and (``hessian``) the Hessian in ``w``."""
    r = _rng()
    w, xs = r.normal(size=3), r.normal(size=(4, 3))
    with jax.enable_x64(True):
        for argnums in (0, 1):
            np.testing.assert_allclose(
                np.asarray(s2s.grad(f, argnums, backend=backend)(w, xs)),
                oracle(jax.grad, f, argnums)(w, xs),
                rtol=1e-6,
            )
        tangents = (np.ones(3), np.full((4, 3), 0.5))
        np.testing.assert_allclose(
            np.asarray(s2s.jvp(f, (w, xs), tangents, backend=backend)[1]),
            oracle(jvp_of, f)((w, xs), tangents)[1],
            rtol=1e-6,
        )
        if hessian:
            np.testing.assert_allclose(
                np.asarray(s2s.hessian(f, backend=backend)(w, xs)),
                oracle(jax.hessian, f)(w, xs),
                rtol=1e-6,
            )


def products_by_an_inner_vmap(w, xs):
    """``jnp.outer`` and ``jnp.linalg.norm`` per example (a kernel's features, distances)."""
    feats = jax.vmap(lambda r: jax.numpy.outer(r, w))(xs)
    dists = jax.vmap(lambda r: jax.numpy.linalg.norm(r - w))(xs)
    kept = jax.vmap(lambda m: jax.numpy.linalg.norm(m, keepdims=True))(feats)
    rows = jax.vmap(lambda m: jax.numpy.linalg.norm(m, axis=-1))(feats)
    return (
        jax.numpy.sum(jax.numpy.sin(feats))
        + jax.numpy.sum(dists**2)
        + jax.numpy.sum(kept)
        + jax.numpy.sum(rows)
    )


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_derivatives_of_outer_and_norm_inside_a_vmap_match_jax(backend):
    """``rt.batching.outer`` and ``rt.batching.norm`` are written with the ops they are made of: gradient,
    forward mode and Hessian."""
    _grads_and_tangents_match_jax(products_by_an_inner_vmap, backend, hessian=True)


def solves_by_an_inner_vmap(w, xs):
    """``jnp.linalg.solve`` per example: one matrix for many right-hand sides, a matrix per example with
    one right-hand side, and both per example (matrices and a matrix right-hand side).
    """
    a = jax.numpy.outer(w, w) + 3.0 * jax.numpy.eye(3)
    shared = jax.vmap(lambda b: jax.numpy.linalg.solve(a, b))(xs)
    own = jax.vmap(lambda r: jax.numpy.linalg.solve(a + r**2 * jax.numpy.eye(3), w))(xs)
    both = jax.vmap(lambda r: jax.numpy.linalg.solve(a * r[0], r[:, None] * a))(xs)
    return (
        jax.numpy.sum(jax.numpy.sin(shared))
        + jax.numpy.sum(own**2)
        + jax.numpy.sum(both)
    )


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_derivatives_of_solve_inside_a_vmap_match_jax(backend):
    _grads_and_tangents_match_jax(solves_by_an_inner_vmap, backend)
