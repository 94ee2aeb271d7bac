"""Ops defined by other ops; the body is inlined before differentiation."""

import numpy as xp

from s2s import runtime as rt

from .registry import batch, decompose, nondiff, signature_of

nondiff("an exponent: integer-valued", "rt.frexp_exponent")
nondiff("a power of two: piecewise constant", "rt.frexp_scale")
batch("elementwise", "rt.frexp_exponent", "rt.frexp_scale")
nondiff("integer-valued: positions", "rt.running_argmax", "rt.running_argmin")
signature_of(rt.running_argmax, "rt.running_argmax")
signature_of(rt.running_argmin, "rt.running_argmin")
batch("axes", "rt.running_argmax", "rt.running_argmin")


# running extremes (``np.maximum.accumulate``): each value read from where it was found, so the
# derivative reaches that element (``take_along_axis``'s rules)
@decompose(name="rt.lax.cummax")
def cummax(operand, axis=0, reverse=False):
    return xp.take_along_axis(
        operand, rt.running_argmax(operand, axis, reverse), axis=axis
    )


@decompose(name="rt.lax.cummin")
def cummin(operand, axis=0, reverse=False):
    return xp.take_along_axis(
        operand, rt.running_argmin(operand, axis, reverse), axis=axis
    )


@decompose
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    mu = xp.mean(a, axis=axis, keepdims=True)
    n = xp.size(a) / xp.size(mu)
    return xp.sum(xp.square(a - mu), axis=axis, keepdims=keepdims) / (n - ddof)


@decompose
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return xp.sqrt(xp.var(a, axis=axis, ddof=ddof, keepdims=keepdims))


@decompose
def diff(a, n=1, axis=-1, prepend=None, append=None):
    # values joined at the ends first (numbers broadcast along ``axis``), then the n-th differences along
    # ``axis``: a product with a banded matrix of binomial coefficients
    if prepend is not None:
        edge = xp.broadcast_to(prepend, rt.diff_edge_shape(a, prepend, axis))
        a = xp.concatenate([edge, a], axis=axis)
    if append is not None:
        edge = xp.broadcast_to(append, rt.diff_edge_shape(a, append, axis))
        a = xp.concatenate([a, edge], axis=axis)
    moved = xp.moveaxis(a, axis, -1)
    return xp.moveaxis(xp.matmul(moved, rt.diff_weights(a, n, axis)), -1, axis)


@decompose
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # 3-vectors only (NumPy 2 deprecates 2-vectors); ``axis`` sets all three
    if axis is not None:
        axisa = axis
        axisb = axis
        axisc = axis
    u = xp.moveaxis(a, axisa, -1)
    v = xp.moveaxis(b, axisb, -1)
    c = xp.stack(
        [
            u[..., 1] * v[..., 2] - u[..., 2] * v[..., 1],
            u[..., 2] * v[..., 0] - u[..., 0] * v[..., 2],
            u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0],
        ],
        axis=-1,
    )
    return xp.moveaxis(c, -1, axisc)


@decompose
def kron(a, b):
    # every product a[i] * b[j], the axes of ``a`` and ``b`` interleaved, then merged pairwise
    product = xp.reshape(a, rt.kron_shape(a, b, 0)) * xp.reshape(
        b, rt.kron_shape(a, b, 1)
    )
    return xp.reshape(product, rt.kron_shape(a, b, 2))


@decompose
def divmod_(x1, x2):
    return xp.floor_divide(x1, x2), xp.remainder(x1, x2)


@decompose
def modf(x):
    # JAX's: the whole part rounds toward zero, the fraction keeps the derivative
    whole = xp.trunc(x)
    return x - whole, whole


@decompose
def frexp(x):
    # the mantissa is x scaled by a power of two (piecewise constant), the exponent an integer
    return x * rt.frexp_scale(x), rt.frexp_exponent(x)


@decompose
def partition(a, kth, axis=-1):
    # JAX's order: the kth + 1 smallest ascending, then the others descending (top_k of each side)
    ordered = xp.sort(xp.moveaxis(a, axis, -1), axis=-1)
    low = ordered[..., : kth + 1]
    high = xp.flip(ordered[..., kth + 1 :], axis=-1)
    return xp.moveaxis(xp.concatenate([low, high], axis=-1), -1, axis)
