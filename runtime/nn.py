"""``rt.nn``: what generated code calls for ``jax.nn`` functions; JAX's own on JAX values, NumPy otherwise.

The NumPy implementations are JAX's formulas (``jax/_src/nn/functions.py``).
Functions that s2s differentiates as a composition of other ops (``gelu``,
``log_softmax``, ...) are expanded by the compiler before differentiation;
they are here so every ``rt.nn`` name also runs as written.
"""

from __future__ import annotations

import numpy as np

from .library import library, quiet, scipy_special

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@library("jax.nn.relu")
def relu(x):
    return np.maximum(x, 0)


@library("jax.nn.relu6")
def relu6(x):
    return np.minimum(np.maximum(x, 0), 6.0)


@library("jax.nn.sigmoid")
@quiet
def sigmoid(x):
    return 1 / (1 + np.exp(-np.asarray(x)))


@library("jax.nn.softmax")
@quiet
def softmax(x, axis=-1, where=None):
    if where is None:
        unnormalized = np.exp(x - np.max(x, axis, keepdims=True))
        return unnormalized / np.sum(unnormalized, axis, keepdims=True)
    # JAX's ``where=``: only those entries normalized; the others 0
    masked = np.where(where, x, -np.inf)
    top = np.max(masked, axis, keepdims=True)
    unnormalized = np.where(where, np.exp(masked - top), 0.0)
    with np.errstate(
        invalid="ignore", divide="ignore"
    ):  # a row with nothing kept: 0s, as JAX's
        return np.where(
            where, unnormalized / np.sum(unnormalized, axis, keepdims=True), 0.0
        )


@library("jax.nn.one_hot")
def one_hot(x, num_classes, *, dtype=None, axis=-1):
    x = np.asarray(x)
    position = axis % (x.ndim + 1)
    shape = [1] * x.ndim
    shape.insert(position, num_classes)
    classes = np.arange(num_classes).reshape(shape)
    return (np.expand_dims(x, position) == classes).astype(dtype or np.float64)


# --- expanded into other ops by the compiler --------------------------------------------------


@library("jax.nn.softplus")
@quiet
def softplus(x):
    return np.logaddexp(x, 0)


@library("jax.nn.log_sigmoid")
@quiet
def log_sigmoid(x):
    return -np.logaddexp(-np.asarray(x), 0)


@library("jax.nn.silu")
def silu(x):
    return x * sigmoid(x)


@library("jax.nn.mish")
def mish(x):
    return x * np.tanh(softplus(x))


@library("jax.nn.soft_sign")
def soft_sign(x):
    return x / (np.abs(x) + 1)


@library("jax.nn.sparse_plus")
def sparse_plus(x):
    return np.where(x <= -1.0, 0.0, np.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@library("jax.nn.sparse_sigmoid")
def sparse_sigmoid(x):
    return 0.5 * np.clip(x + 1.0, 0.0, 2.0)


@library("jax.nn.squareplus")
def squareplus(x, b=4):
    return (x + np.sqrt(np.square(x) + b)) / 2


@library("jax.nn.elu")
@quiet
def elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.where(x > 0, 0.0, x)))


@library("jax.nn.selu")
def selu(x):
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


@library("jax.nn.celu")
@quiet
def celu(x, alpha=1.0):
    return np.maximum(x, 0.0) + alpha * np.expm1(np.minimum(x, 0.0) / alpha)


@library("jax.nn.leaky_relu")
def leaky_relu(x, negative_slope=0.01):
    return np.where(x >= 0, x, negative_slope * x)


@library("jax.nn.hard_tanh")
def hard_tanh(x):
    return np.where(x > 1, 1, np.where(x < -1, -1, x))


@library("jax.nn.hard_sigmoid")
def hard_sigmoid(x):
    return relu6(x + 3.0) / 6.0


@library("jax.nn.hard_silu")
def hard_silu(x):
    return x * hard_sigmoid(x)


@library("jax.nn.gelu")
def gelu(x, approximate=True):
    if approximate:
        inner = np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)
        return x * (0.5 * (1.0 + np.tanh(inner)))
    return 0.5 * x * scipy_special("erfc", -x * np.sqrt(0.5))


@library("jax.nn.glu")
def glu(x, axis=-1):
    a, b = np.split(x, 2, axis)
    return a * sigmoid(b)


@library("jax.nn.log_softmax")
@quiet
def log_softmax(x, axis=-1):
    shifted = x - np.max(x, axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis, keepdims=True))


@library("jax.nn.standardize")
def standardize(
    x, axis=-1, mean=None, variance=None, epsilon=1e-05, *, algorithm="fast"
):
    if mean is None:
        mean = np.mean(x, axis, keepdims=True)
    if variance is None and algorithm == "fast":
        variance = np.clip(
            np.mean(np.square(x), axis, keepdims=True) - mean**2, 0, None
        )
    elif variance is None:
        variance = np.mean(np.square(x - mean), axis, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon)


@library("jax.nn.identity")
def identity(x):
    return np.asarray(x)


@library("jax.nn.log1mexp")
@quiet
def log1mexp(x):
    x = np.asarray(x)
    return np.where(x < np.log(2.0), np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))


@library("jax.nn.logmeanexp")
@quiet
def logmeanexp(x, axis=None, where=None, keepdims=False):
    from .special import logsumexp

    count = np.sum(np.ones_like(x), axis=axis, keepdims=keepdims)
    return logsumexp(x, axis=axis, keepdims=keepdims) - np.log(count)


# --- dot_product_attention: static shapes of JAX's XLA implementation ---------------------------------


def _four_d(shape) -> tuple:
    return (1,) * (4 - len(shape)) + tuple(shape)


def attention_shapes(
    query, key, scale, query_lengths, kv_lengths, window, implementation, residual
):
    """For ``jax.nn.dot_product_attention``: ``(grouped, kv, scale)``: ``query`` reshaped to ``(B, T, K, G, H)``
    (``G`` query heads per key head), keys and values to ``(B, S, K, H)``, and the logits' scale
    (``1/sqrt(H)`` by default). Options of JAX's other paths are refused."""
    from .located import Refusal

    if (
        query_lengths is not None
        or kv_lengths is not None
        or window is not None
        or residual
    ):
        raise Refusal(
            "`jax.nn.dot_product_attention` with sequence lengths, a local window or a residual",
            "pass the padding as mask= (a boolean array of shape (B, N, T, S))",
        )
    if implementation not in (None, "xla"):
        raise Refusal(
            f"`jax.nn.dot_product_attention` with implementation={implementation!r}",
            "leave implementation out (s2s writes JAX's XLA formulation)",
        )
    b, t, n, h = _four_d(np.shape(query))
    kv = _four_d(np.shape(key))
    heads = kv[2]
    if n % heads:
        raise ValueError(
            f"The number of query heads must be a multiple of key/value heads, but got {n} vs {heads}"
        )
    return (
        (b, t, heads, n // heads, h),
        kv,
        (1.0 / np.sqrt(h) if scale is None else scale),
    )


def attention_grouped(t, query, key) -> tuple:
    """A bias or mask ``(B, N, T, S)`` (fewer leading axes: 1s) as JAX groups it: ``(B, 1, 1, T, S)`` for one
    head, else ``(B, K, G, T, S)``."""
    b, heads_t, rows, cols = _four_d(np.shape(t))
    heads = _four_d(np.shape(key))[2]
    if heads_t == 1:
        return (b, 1, 1, rows, cols)
    return (b, heads, heads_t // heads, rows, cols)


def causal_mask(grouped, kv) -> np.ndarray:
    """Where a query may attend: keys at or before its position (``(T, S)``, lower triangular)."""
    return np.tril(np.ones((grouped[1], kv[1]), dtype=bool))


def large_negative(logits):
    """JAX's masked logit: ``-0.7`` times the largest float32 (finite in float32's softmax)."""
    dtype = np.dtype(getattr(logits, "dtype", np.float32))
    largest = min(np.finfo(dtype).max, np.finfo(np.float32).max)
    return np.asarray(-0.7 * largest, dtype=dtype)


@library("jax.nn.dot_product_attention")
def dot_product_attention(
    query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
    query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
    implementation=None, return_residual=False,
):  # fmt: skip
    grouped, kv, scale = attention_shapes(query, key, scale, query_seq_lengths, key_value_seq_lengths,
                                          local_window_size, implementation, return_residual)  # fmt: skip
    q = np.reshape(query, grouped)
    logits = np.einsum("btkgh,bskh->bkgts", q, np.reshape(key, kv)) * scale
    if bias is not None:
        logits = logits + np.reshape(bias, attention_grouped(bias, query, key))
    if mask is not None:
        grouped_mask = np.reshape(mask, attention_grouped(mask, query, key))
        logits = np.where(grouped_mask, logits, large_negative(logits))
    if is_causal:
        logits = np.where(causal_mask(grouped, kv), logits, large_negative(logits))
    probs = softmax(logits.astype(np.float32), axis=-1).astype(np.asarray(key).dtype)
    out = np.einsum("bkgts,bskh->btkgh", probs, np.reshape(value, kv))
    return np.reshape(out, np.shape(query))
