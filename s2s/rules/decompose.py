"""Ops defined by other ops; the body is inlined before differentiation."""

import numpy as xp

from s2s import runtime as rt

from .registry import decompose


@decompose
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    mu = xp.mean(a, axis=axis, keepdims=True)
    n = xp.size(a) / xp.size(mu)
    return xp.sum(xp.square(a - mu), axis=axis, keepdims=keepdims) / (n - ddof)


@decompose
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return xp.sqrt(xp.var(a, axis=axis, ddof=ddof, keepdims=keepdims))


@decompose
def diff(a, n=1, axis=-1):
    # the n-th differences along ``axis``: a product with a banded matrix of binomial coefficients
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
