"""``rt.special``: ``scipy.special`` / ``jax.scipy.special`` functions; JAX's own on JAX values, NumPy otherwise.

On NumPy values, functions with a closed form use JAX's formula in NumPy
(``xlogy``, ``logit``, ``entr``, ...); the others call ``scipy.special`` (or,
without SciPy, JAX's function in float64: ``library.scipy_special``).
``logsumexp`` is expanded into other ops by the compiler before
differentiation; it is here so it also runs as written.
"""

from __future__ import annotations

import numpy as np

from .library import _object, library, quiet, scipy_special
from .trees import uses_jax


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
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    a = np.asarray(a, dtype=np.result_type(a, 1.0))
    if b is not None:
        a = np.where(np.asarray(b) != 0, a, -np.inf)
    if where is not None:
        a = np.where(where, a, -np.inf)
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


@library("jax.scipy.special.gamma")
def gamma(x):
    return scipy_special("gamma", x)


@library("jax.scipy.special.beta")
def beta(a, b):
    return scipy_special("beta", a, b)


@library("jax.scipy.special.betaln")
def betaln(a, b):
    return scipy_special("betaln", a, b)


@library("jax.scipy.special.poch")
def poch(z, m):
    return scipy_special("poch", z, m)


@library("jax.scipy.special.erfcx")
def erfcx(x):
    return scipy_special("erfcx", x)


@library("jax.scipy.special.i0e")
def i0e(x):
    return scipy_special("i0e", x)


@library("jax.scipy.special.i1e")
def i1e(x):
    return scipy_special("i1e", x)


@library("jax.scipy.special.i1")
def i1(x):
    return scipy_special("i1", x)


@library("jax.scipy.special.expi")
def expi(x):
    return scipy_special("expi", x)


@library("jax.scipy.special.exp1")
def exp1(x):
    return scipy_special("exp1", x)


@library("jax.scipy.special.rel_entr")
@quiet
def rel_entr(p, q):
    p, q = np.asarray(p), np.asarray(q)
    positive = (p > 0) & (q > 0)
    safe_p, safe_q = np.where(positive, p, 1.0), np.where(positive, q, 1.0)
    value = safe_p * np.log(safe_p / safe_q)
    return np.where(positive, value, np.where((p == 0) & (q >= 0), 0.0, np.inf))


@library("jax.scipy.special.kl_div")
def kl_div(p, q):
    return rel_entr(p, q) - p + q


@library("jax.scipy.special.softmax")
@quiet
def softmax(x, axis=None):
    return np.exp(x - logsumexp(x, axis=axis, keepdims=True))


@library("jax.scipy.special.log_softmax")
@quiet
def log_softmax(x, axis=None):
    return x - logsumexp(x, axis=axis, keepdims=True)


@library("jax.scipy.special.multigammaln")
def multigammaln(a, d):
    return scipy_special("multigammaln", a, d)


@library("jax.scipy.special.factorial")
def factorial(n, exact=False):
    n = np.asarray(n, dtype=np.result_type(n, 1.0))
    return np.where(n < 0, 0.0, np.exp(gammaln(n + 1)))


def half_steps(d):
    """``0, 1/2, 1, ...``: the ``d`` shifts of the multivariate gamma function's factors (a constant)."""
    return np.arange(int(d), dtype=float) / 2


def sinc_series(k, x):
    """The ``k``-th derivative of ``sin(x) / x`` at 0, shaped like ``x`` (``np.sinc`` at 0, as JAX)."""
    value = 0.0 if k % 2 else (-1) ** (k // 2) / (k + 1)
    return x * 0 + value


def jax_partial(name: str, i: int, *args):
    """JAX's own partial derivative of ``jax.scipy.special.<name>`` in its argument ``i`` (an elementwise
    function: the JVP with a unit tangent there), for partials with no closed form."""
    import jax

    def partial(*values):
        fn = _object(f"jax.scipy.special.{name}")
        tangents = tuple(
            jax.numpy.ones_like(v) if k == i else jax.numpy.zeros_like(v)
            for k, v in enumerate(values)
        )
        return jax.jvp(fn, values, tangents)[1]

    if uses_jax(args, []):
        shape = jax.numpy.broadcast_shapes(*(jax.numpy.shape(a) for a in args))
        values = [
            jax.numpy.broadcast_to(jax.numpy.asarray(a, float), shape) for a in args
        ]
        return partial(*values)
    arrays = [np.asarray(a) for a in args]
    dtype = np.result_type(*(a.dtype for a in arrays), 1.0)
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    with jax.enable_x64(True):
        wide = [
            jax.numpy.broadcast_to(jax.numpy.asarray(a, np.float64), shape)
            for a in arrays
        ]
        out = partial(*wide)
    return np.asarray(out).astype(dtype)


@library("jax.scipy.special.gammainc")
def gammainc(a, x):
    return scipy_special("gammainc", a, x)


@library("jax.scipy.special.gammaincc")
def gammaincc(a, x):
    return scipy_special("gammaincc", a, x)


@library("jax.scipy.special.loggamma")
def loggamma(x):
    return scipy_special("loggamma", x)


@library("jax.scipy.special.zeta")
def zeta(x, q=None):
    return scipy_special("zeta", x, q)


@library("jax.scipy.special.expn")
def expn(n, x):
    return scipy_special("expn", n, x)


@library("jax.scipy.special.dawsn")
def dawsn(x):
    return scipy_special("dawsn", x)


@library("jax.scipy.special.spence")
def spence(x):
    return scipy_special("spence", x)


@library("jax.scipy.special.owens_t")
def owens_t(h, a):
    return scipy_special("owens_t", h, a)


@library("jax.scipy.special.gammasgn")
def gammasgn(x):
    return scipy_special("gammasgn", x)


def sici_si(x):
    """The sine integral: ``scipy.special.sici(x)[0]``."""
    return sici(x)[0]


def sici_ci(x):
    """The cosine integral: ``scipy.special.sici(x)[1]``."""
    return sici(x)[1]


@library("jax.scipy.special.sici")
def sici(x):
    return scipy_special("sici", x)


def fresnel_s(x):
    """The Fresnel sine integral: ``scipy.special.fresnel(x)[0]``."""
    return fresnel(x)[0]


def fresnel_c(x):
    """The Fresnel cosine integral: ``scipy.special.fresnel(x)[1]``."""
    return fresnel(x)[1]


@library("jax.scipy.special.fresnel")
def fresnel(x):
    return scipy_special("fresnel", x)


@library("jax.scipy.special.boxcox")
def boxcox(x, lmbda):
    return scipy_special("boxcox", x, lmbda)


@library("jax.scipy.special.boxcox1p")
def boxcox1p(x, lmbda):
    return scipy_special("boxcox1p", x, lmbda)


@library("jax.scipy.special.comb")
def comb(N, k, exact=False, repetition=False):
    return scipy_special("comb", N, k, False, repetition)
