"""``astype`` and ``take_along_axis`` beyond the op table, against JAX.

The op table's harnesses feed float64 cotangents and tangents, so its
``astype`` cases cast to float64; here casts to float32 (JAX's cotangent is
float32, cast back to float64) and to integers and bool (JAX passes no
derivative: s2s must give float zeros shaped like ``x``, never a truncated
cotangent), also as NumPy calls' ``dtype`` arguments, and ``take_along_axis`` as a cross-entropy reads it, with integer
labels, through the whole compiler on both backends, in every mode.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_checks import jvp_of, oracle

import s2s
from s2s import runtime as rt

jax.config.update("jax_enable_x64", True)

BACKENDS = ["numpy", "xla"]


def cast_to_float32(x):
    y = x.astype(np.float32)
    return np.sum(np.sin(y) * y)


def cast_to_float32_jax(x):
    y = x.astype(jnp.float32)
    return jnp.sum(jnp.sin(y) * y)


def cast_to_int(x):
    k = x.astype(np.int32)
    return np.sum(k * x + np.astype(x, np.int64) * 1.5)


def cast_to_int_jax(x):
    k = x.astype(jnp.int32)
    return jnp.sum(k * x + jnp.astype(x, jnp.int64) * 1.5)


def cast_to_bool(x):
    return np.sum(x.astype(bool) * np.exp(x))


def cast_to_bool_jax(x):
    return jnp.sum(x.astype(bool) * jnp.exp(x))


def only_int(x):
    return np.sum(x.astype(np.int32) * 2.0)


def cross_entropy(logits, labels):
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(np.take_along_axis(logp, labels[:, None], axis=1))


def cross_entropy_jax(logits, labels):
    logp = logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def picked(x, idx):
    return np.sum(np.take_along_axis(x, idx, axis=0) ** 2)


def picked_jax(x, idx):
    return jnp.sum(jnp.take_along_axis(x, idx, axis=0) ** 2)


def dtype_arguments(x):
    """NumPy calls given an integer or bool ``dtype``: no derivative passes through their results."""
    k = np.asarray(x * 3.7, dtype=np.int32) + np.array(x * 2.5, dtype=int)
    flags = np.array(x, dtype=bool)
    counts = np.cumsum(x * 3.0, axis=-1, dtype=np.int32)
    filled = np.full_like(x, x[0, 0] * 3.7, dtype=np.int32) + np.full(
        3, x[1, 1] * 4.1, dtype=int
    )
    kept = np.asarray(x, dtype=np.float64) * np.sum(x * 2.5, dtype=np.int32)
    return np.sum((k + flags + counts + filled) * x + kept)


def dtype_arguments_jax(x):
    k = jnp.asarray(x * 3.7, dtype=jnp.int32) + jnp.array(x * 2.5, dtype=int)
    flags = jnp.array(x, dtype=bool)
    counts = jnp.cumsum(x * 3.0, axis=-1, dtype=jnp.int32)
    filled = jnp.full_like(x, x[0, 0] * 3.7, dtype=jnp.int32) + jnp.full(
        3, x[1, 1] * 4.1, dtype=int
    )
    kept = jnp.asarray(x, dtype=jnp.float64) * jnp.sum(x * 2.5, dtype=jnp.int32)
    return jnp.sum((k + flags + counts + filled) * x + kept)


X = np.array([[-1.7, 0.3, 2.4], [0.9, -0.2, 1.6]])
LOGITS = np.random.default_rng(0).normal(size=(5, 4))
LABELS = np.array([1, 3, 1, 0, 1])  # label 1 repeats: its cotangents accumulate


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "f, twin",
    [
        (cast_to_float32, cast_to_float32_jax),
        (cast_to_int, cast_to_int_jax),
        (cast_to_bool, cast_to_bool_jax),
    ],
    ids=["float32", "int", "bool"],
)
def test_astype_gradient_matches_jax(f, twin, backend):
    got = s2s.grad(f, backend=backend)(X)
    want = oracle(jax.grad, twin)(X)
    assert np.shape(got) == X.shape and np.asarray(got).dtype == X.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_dtype_arguments_pass_no_derivative(backend):
    """``np.asarray(v, dtype=int)``, ``np.sum(x, dtype=np.int32)``, ``np.full_like(..., dtype=int)``: the
    result is cast, and its derivative with it (a silent cotangent through the cast was the old bug).
    """
    got = s2s.grad(dtype_arguments, backend=backend)(X)
    np.testing.assert_allclose(
        got, oracle(jax.grad, dtype_arguments_jax)(X), rtol=1e-12
    )
    t = np.random.default_rng(4).normal(size=X.shape)
    _, got = s2s.jvp(dtype_arguments, (X,), (t,), backend=backend)
    _, want = oracle(jvp_of, dtype_arguments_jax)((X,), (t,))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = s2s.hessian(dtype_arguments, backend=backend)(X)
    np.testing.assert_allclose(
        got, oracle(jax.hessian, dtype_arguments_jax)(X), atol=1e-12
    )
    xs = np.stack([X, X[::-1] * 0.7])
    got = s2s.vmap(s2s.grad(dtype_arguments), backend=backend)(xs)
    want = oracle(jax.vmap, oracle(jax.grad, dtype_arguments_jax))(xs)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_astype_to_int_passes_no_gradient(backend):
    """A cast to integers is piecewise constant: the gradient is float zeros, not the cotangent truncated."""
    got = np.asarray(s2s.grad(only_int, backend=backend)(X))
    assert got.dtype == X.dtype and got.shape == X.shape
    assert not np.any(got)
    np.testing.assert_array_equal(
        got, jax.grad(lambda x: jnp.sum(x.astype(jnp.int32) * 2.0))(X)
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_astype_tangents(backend):
    t = np.random.default_rng(1).normal(size=X.shape)
    out, out_dot = s2s.jvp(lambda_free_float32, (X,), (t,), backend=backend)
    want, want_dot = jax.jvp(lambda x: jnp.astype(x, jnp.float32) * 3.0, (X,), (t,))
    assert np.asarray(out_dot).dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(out_dot, want_dot, rtol=1e-6)
    out, out_dot = s2s.jvp(cast_to_int, (X,), (t,), backend=backend)
    want, want_dot = oracle(jvp_of, cast_to_int_jax)((X,), (t,))
    np.testing.assert_allclose(out, want, rtol=1e-12)
    np.testing.assert_allclose(out_dot, want_dot, rtol=1e-12)


def lambda_free_float32(x):
    return np.astype(x, np.float32) * 3.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "f, twin",
    [(cast_to_float32, cast_to_float32_jax), (cast_to_int, cast_to_int_jax)],
    ids=["float32", "int"],
)
def test_astype_hessian_matches_jax(f, twin, backend):
    got = s2s.hessian(f, backend=backend)(X)
    np.testing.assert_allclose(got, oracle(jax.hessian, twin)(X), rtol=1e-5, atol=1e-6)


def test_astype_helpers_are_transposes():
    """``<astype_jvp(t), u> == <t, astype_vjp(u)>`` for inexact targets, and both are zeros for integer ones."""
    rng = np.random.default_rng(2)
    t, u = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    for dtype in (np.float32, np.float64, "float32", float, jnp.float32):
        forward = np.sum(
            rt.astype_jvp(t, dtype).astype(np.float64) * u.astype(np.dtype(dtype))
        )
        reverse = np.sum(t * rt.astype_vjp(u.astype(np.dtype(dtype)), t, dtype))
        np.testing.assert_allclose(forward, reverse, rtol=1e-6)
        assert rt.astype_vjp(u, t, dtype).dtype == t.dtype
    for dtype in (np.int32, int, bool, "int64", jnp.int32):
        for value in (rt.astype_jvp(t, dtype), rt.astype_vjp(u, t, dtype)):
            assert (
                value.dtype == np.float64
                and value.shape == t.shape
                and not np.any(value)
            )


@pytest.mark.parametrize("backend", BACKENDS)
def test_cross_entropy_gradient_matches_jax(backend):
    got = s2s.grad(cross_entropy, backend=backend)(LOGITS, LABELS)
    np.testing.assert_allclose(
        got, oracle(jax.grad, cross_entropy_jax)(LOGITS, LABELS), rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_cross_entropy_hessian_matches_jax(backend):
    got = s2s.hessian(cross_entropy, backend=backend)(LOGITS, LABELS)
    np.testing.assert_allclose(
        got,
        oracle(jax.hessian, cross_entropy_jax)(LOGITS, LABELS),
        rtol=1e-9,
        atol=1e-12,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_cross_entropy_tangent_matches_jax(backend):
    t = np.random.default_rng(3).normal(size=LOGITS.shape)
    out, out_dot = s2s.jvp(
        cross_entropy,
        (LOGITS, LABELS),
        (t, np.zeros(LABELS.shape, jax.dtypes.float0)),
        backend=backend,
    )
    want, want_dot = jax.jvp(lambda z: cross_entropy_jax(z, LABELS), (LOGITS,), (t,))
    np.testing.assert_allclose(out, want, rtol=1e-12)
    np.testing.assert_allclose(out_dot, want_dot, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_repeated_indices_accumulate(backend):
    """Every element of ``x`` read twice along axis 0 (and row 2 three times) gets both contributions."""
    x = np.arange(12.0).reshape(3, 4) / 7
    idx = np.array([[2, 0, 1, 1], [2, 0, 1, 1], [2, 2, 2, 0]])
    got = s2s.grad(picked, backend=backend)(x, idx)
    np.testing.assert_allclose(got, oracle(jax.grad, picked_jax)(x, idx), rtol=1e-12)


def test_take_along_axis_vjp_on_both_backends():
    """The scatter of ``rt.take_along_axis_vjp`` agrees between NumPy and ``jax.jit``, broadcasting included."""
    rng = np.random.default_rng(4)
    arr = rng.normal(size=(1, 3, 2))
    # (2, 4, 1): arr and indices broadcast
    indices = np.array([[[0], [2], [2], [1]], [[1], [1], [0], [-1]]])
    g = rng.normal(size=np.shape(np.take_along_axis(arr, indices, axis=1)))
    eager = rt.take_along_axis_vjp(g, arr, indices, 1)
    compiled = jax.jit(
        lambda g, arr, indices: rt.take_along_axis_vjp(g, arr, indices, 1)
    )(g, arr, indices)
    _, pullback = jax.vjp(lambda a: jnp.take_along_axis(a, indices, axis=1), arr)
    np.testing.assert_allclose(eager, pullback(g)[0], rtol=1e-12)
    np.testing.assert_allclose(compiled, eager, rtol=1e-12)
    flat = rt.take_along_axis_vjp(np.ones(4), arr, np.array([0, 5, 0, -1]), None)
    np.testing.assert_array_equal(flat, np.reshape([2.0, 0, 0, 0, 0, 2.0], arr.shape))
