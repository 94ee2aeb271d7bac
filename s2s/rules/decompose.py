"""Ops defined by other ops; the body is inlined before differentiation."""

import numpy as xp

from .registry import decompose


@decompose
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    mu = xp.mean(a, axis=axis, keepdims=True)
    n = xp.size(a) / xp.size(mu)
    return xp.sum(xp.square(a - mu), axis=axis, keepdims=keepdims) / (n - ddof)


@decompose
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return xp.sqrt(xp.var(a, axis=axis, ddof=ddof, keepdims=keepdims))
