"""Rules of ``jax.nn``, spelled ``rt.nn.<name>`` in generated code (``s2s/rules/vocabulary.py`` lists the spellings).

Where JAX gives a function a derivative of its own (``relu``, ``relu6``,
``softmax``: custom JVPs; ``sigmoid``: the ``logistic`` primitive) it is an op
here with that derivative, so gradients at kinks and at ±1000 are JAX's.
Where JAX writes a function as a composition of ``jax.numpy`` ops, it is a
``decompose`` op whose body is JAX's composition, written with ops that have
rules: derivatives of every order are then those JAX's autodiff computes.
A decomposition may branch on an argument that must be a Python constant
(``approximate``, ``mean is None``): the branch is chosen where the call is
inlined.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import (
    batch,
    batch_rule,
    decompose,
    elementwise,
    jvp,
    nondiff,
    signature_of,
    vjp,
)

# --- ops with derivatives of their own ---------------------------------------------------------


@elementwise(name="rt.nn.relu")
def relu(x):
    # JAX: the slope at 0 is 0 (a mask: the cotangent keeps its dtype)
    return x > 0


@elementwise(name="rt.nn.relu6")
def relu6(x):
    # JAX: the slope at 0 and at 6 is 0
    return xp.logical_and(x > 0, x < 6)


@elementwise(name="rt.nn.sigmoid")
def sigmoid(x, *, ans):
    return ans * (1 - ans)


@vjp(name="rt.nn.softmax", roles={"where": "data"})
def softmax(x, axis=-1, where=None, *, ans, g):
    # (entries outside ``where`` are 0 in ``ans``: no derivative reaches them)
    return ans * (g - xp.sum(ans * g, axis=axis, keepdims=True)), None


@jvp(softmax)
def softmax_jvp(x, axis=-1, where=None, *, ans, x_dot):
    return ans * (x_dot - xp.sum(ans * x_dot, axis=axis, keepdims=True))


@batch_rule("rt.nn.softmax")
def softmax_batched(x, axis=-1, where=None, *, batched, batch_size):
    return rt.batching.softmax(x, axis, where, batched)


# the batched softmax (``jax.nn.softmax`` inside ``jax.vmap``), differentiated
# (an ``x`` the same for every example gets the cotangents of every example, summed)
@vjp(name="rt.batching.softmax", roles={"where": "data"})
def batching_softmax(x, axis, where, flags, *, ans, g):
    along = rt.batch_axis(axis, ans)
    ct = ans * (g - xp.sum(ans * g, axis=along, keepdims=True))
    return rt.sum_unbatched(ct, flags[0]), None, None, None


@jvp(batching_softmax)
def batching_softmax_jvp(x, axis, where, flags, *, ans, x_dot):
    along = rt.batch_axis(axis, ans)
    return ans * (x_dot - xp.sum(ans * x_dot, axis=along, keepdims=True))


nondiff("one-hot indicators of integer labels", "rt.nn.one_hot")
signature_of(rt.nn.one_hot, "rt.nn.one_hot")
batch("axes", "rt.nn.one_hot")


# --- JAX's compositions --------------------------------------------------------------------------


@decompose(name="rt.nn.softplus")
def softplus(x):
    return xp.logaddexp(x, 0.0)


@decompose(name="rt.nn.log_sigmoid")
def log_sigmoid(x):
    return -xp.logaddexp(-x, 0.0)


@decompose(name="rt.nn.silu")
def silu(x):
    return x * rt.nn.sigmoid(x)


@decompose(name="rt.nn.mish")
def mish(x):
    return x * xp.tanh(xp.logaddexp(x, 0.0))


@decompose(name="rt.nn.soft_sign")
def soft_sign(x):
    return x / (xp.abs(x) + 1)


@decompose(name="rt.nn.sparse_plus")
def sparse_plus(x):
    return xp.where(x <= -1.0, 0.0, xp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@decompose(name="rt.nn.sparse_sigmoid")
def sparse_sigmoid(x):
    return 0.5 * xp.clip(x + 1.0, 0.0, 2.0)


@decompose(name="rt.nn.squareplus")
def squareplus(x, b=4):
    return (x + xp.sqrt(xp.square(x) + b)) / 2


@decompose(name="rt.nn.elu")
def elu(x, alpha=1.0):
    # the inner where keeps expm1 finite where its branch is not taken (x = 1000)
    return xp.where(x > 0, x, alpha * xp.expm1(xp.where(x > 0, 0.0, x)))


@decompose(name="rt.nn.selu")
def selu(x):
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * xp.where(x > 0, x, alpha * xp.expm1(xp.where(x > 0, 0.0, x)))


@decompose(name="rt.nn.celu")
def celu(x, alpha=1.0):
    return xp.maximum(x, 0.0) + alpha * xp.expm1(xp.minimum(x, 0.0) / alpha)


@decompose(name="rt.nn.leaky_relu")
def leaky_relu(x, negative_slope=0.01):
    return xp.where(x >= 0, x, negative_slope * x)


@decompose(name="rt.nn.hard_tanh")
def hard_tanh(x):
    return xp.where(x > 1, 1.0, xp.where(x < -1, -1.0, x))


@decompose(name="rt.nn.hard_sigmoid")
def hard_sigmoid(x):
    return rt.nn.relu6(x + 3.0) / 6.0


@decompose(name="rt.nn.hard_silu")
def hard_silu(x):
    return x * (rt.nn.relu6(x + 3.0) / 6.0)


@decompose(name="rt.nn.gelu")
def gelu(x, approximate=True):
    if approximate:
        cdf = 0.5 * (1.0 + xp.tanh(xp.sqrt(2 / xp.pi) * (x + 0.044715 * x**3)))
        return x * cdf
    return 0.5 * x * rt.special.erfc(-x * xp.sqrt(0.5))


@decompose(name="rt.nn.glu")
def glu(x, axis=-1):
    a, b = xp.split(x, 2, axis)
    return a * rt.nn.sigmoid(b)


@decompose(name="rt.nn.log_softmax")
def log_softmax(x, axis=-1):
    shifted = x - rt.stop_gradient(xp.max(x, axis, keepdims=True))
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis, keepdims=True))


@decompose(name="rt.nn.standardize")
def standardize(
    x, axis=-1, mean=None, variance=None, epsilon=1e-05, *, algorithm="fast"
):
    if mean is None:
        mean = xp.mean(x, axis, keepdims=True)
    if variance is None:
        if algorithm == "fast":
            variance = xp.clip(
                xp.mean(xp.square(x), axis, keepdims=True) - xp.square(mean), 0.0, None
            )
        else:
            variance = xp.mean(xp.square(x - mean), axis, keepdims=True)
    return (x - mean) * rt.lax.rsqrt(variance + epsilon)


@decompose(name="rt.nn.identity")
def identity(x):
    return xp.asarray(x)


@elementwise(name="rt.nn.log1mexp")
def log1mexp(x):
    # JAX's own rule (a custom_jvp): 1 / expm1(x), finite down to the smallest x (no branch's 0 / 0)
    return 1 / xp.expm1(x)


@decompose(name="rt.nn.logmeanexp")
def logmeanexp(x, axis=None, where=None, keepdims=False):
    total = rt.special.logsumexp(x, axis=axis, keepdims=True) - xp.log(
        rt.reduced_size(x, axis, where)
    )
    return xp.reshape(total, rt.reduced_shape(x, axis, keepdims))


# --- attention -----------------------------------------------------------------------------------

_ATTENTION_HELPERS = tuple(
    f"rt.nn.{name}"
    for name in (
        "attention_shapes",
        "attention_grouped",
        "causal_mask",
        "large_negative",
    )
)
nondiff("shape logic: static shapes, masks and constants", *_ATTENTION_HELPERS)
batch("example", *_ATTENTION_HELPERS)


@decompose(name="rt.nn.dot_product_attention")
def dot_product_attention(
    query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
    query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
    implementation=None, return_residual=False,
):  # fmt: skip
    # JAX's XLA formulation: query heads grouped by key head, the softmax in float32
    grouped, kv, factor = rt.nn.attention_shapes(
        query, key, scale, query_seq_lengths, key_value_seq_lengths, local_window_size,
        implementation, return_residual,
    )  # fmt: skip
    logits = xp.einsum(
        "btkgh,bskh->bkgts", xp.reshape(query, grouped), xp.reshape(key, kv)
    )
    logits = logits * factor
    if bias is not None:
        logits = logits + xp.reshape(bias, rt.nn.attention_grouped(bias, query, key))
    if mask is not None:
        allowed = xp.reshape(mask, rt.nn.attention_grouped(mask, query, key))
        logits = xp.where(allowed, logits, rt.nn.large_negative(logits))
    if is_causal:
        logits = xp.where(
            rt.nn.causal_mask(grouped, kv), logits, rt.nn.large_negative(logits)
        )
    probs = rt.nn.softmax(xp.astype(logits, xp.float32), axis=-1)
    out = xp.einsum(
        "bkgts,bskh->btkgh", xp.astype(probs, key.dtype), xp.reshape(value, kv)
    )
    return xp.reshape(out, xp.shape(query))
