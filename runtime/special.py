"""``rt.special``: ``scipy.special`` / ``jax.scipy.special`` functions; JAX's own on JAX values, NumPy otherwise.

On NumPy values, functions with a closed form use JAX's formula in NumPy
(``xlogy``, ``logit``, ``entr``, ...); the others call ``scipy.special`` (or,
without SciPy, JAX's function in float64: ``library.scipy_special``).
``logsumexp`` is expanded into other ops by the compiler before
differentiation; it is here so it also runs as written.
"""

from __future__ import annotations

import numpy as np

from .library import library, quiet, scipy_special


@library("jax.scipy.special.erf")
def erf(x):
    return scipy_special("erf", x)


@library("jax.scipy.special.erfc")
def erfc(x):
    return scipy_special("erfc", x)


@library("jax.scipy.special.erfinv")
def erfinv(x):
    return scipy_special("erfinv", x)


@library("jax.scipy.special.gammaln")
def gammaln(x):
    return scipy_special("gammaln", x)


@library("jax.scipy.special.digamma")
def digamma(x):
    return scipy_special("digamma", x)


@library("jax.scipy.special.polygamma")
def polygamma(n, x):
    return scipy_special("polygamma", n, x)


@library("jax.scipy.special.ndtr")
def ndtr(x):
    return scipy_special("ndtr", x)


@library("jax.scipy.special.ndtri")
def ndtri(p):
    return scipy_special("ndtri", p)


@library("jax.scipy.special.log_ndtr")
def log_ndtr(x, series_order=3):
    return scipy_special("log_ndtr", x)


@library("jax.scipy.special.xlogy")
@quiet
def xlogy(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return np.where((x != 0) | np.isnan(y), x * np.log(y), np.zeros_like(x * y))


@library("jax.scipy.special.xlog1py")
@quiet
def xlog1py(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return np.where((x != 0) | np.isnan(y), x * np.log1p(y), np.zeros_like(x * y))


@library("jax.scipy.special.logit")
@quiet
def logit(x):
    return np.log(x / (1 - np.asarray(x)))


@library("jax.scipy.special.entr")
@quiet
def entr(x):
    x = np.asarray(x)
    return np.where(x < 0, -np.inf, -xlogy(x, x))


@library("jax.scipy.special.logsumexp")
@quiet
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    a = np.asarray(a, dtype=np.result_type(a, 1.0))
    if b is not None:
        a = np.where(np.asarray(b) != 0, a, -np.inf)
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    terms = np.exp(a - top) if b is None else np.exp(a - top) * b
    total = np.sum(terms, axis=axis, keepdims=keepdims)
    top = top if keepdims else np.squeeze(top, axis=axis)
    sign = np.sign(total)
    out = np.log(np.abs(total)) + top
    if return_sign:
        return out, sign
    return out if b is None else np.where(sign < 0, np.nan, out)
