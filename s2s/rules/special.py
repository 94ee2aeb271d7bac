"""Rules of ``scipy.special`` / ``jax.scipy.special`` and of the ``jax.lax`` ops NumPy lacks, spelled
``rt.special.<name>`` and ``rt.lax.<name>`` in generated code (``s2s/rules/vocabulary.py`` lists the spellings).

Each partial is JAX's (its primitive's JVP rule, or the function's custom
JVP: ``xlogy``, ``logit``, ``log_ndtr``, ``entr``), written with ops that have
rules, so derivatives of every order exist (``gammaln`` -> ``digamma`` ->
``polygamma(1, x)`` -> ``polygamma(2, x)`` ...). ``logsumexp`` is JAX's
composition (its maximum held by ``stop_gradient``), branching on its
constant ``b is None`` and ``return_sign``.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import batch, decompose, elementwise, no_derivative, nondiff


@elementwise(name="rt.special.erf")
def erf(x):
    return 2 / xp.sqrt(xp.pi) * xp.exp(-xp.square(x))


@elementwise(name="rt.special.erfc")
def erfc(x):
    return -2 / xp.sqrt(xp.pi) * xp.exp(-xp.square(x))


@elementwise(name="rt.special.erfinv")
def erfinv(x, *, ans):
    return xp.sqrt(xp.pi) / 2 * xp.exp(xp.square(ans))


@elementwise(name="rt.special.gammaln")
def gammaln(x):
    return rt.special.digamma(x)


@elementwise(name="rt.special.digamma")
def digamma(x):
    return rt.special.polygamma(1, x)


@elementwise(name="rt.special.polygamma")
def polygamma(n, x):
    return None, rt.special.polygamma(n + 1, x)


@elementwise(name="rt.special.ndtr")
def ndtr(x):
    return xp.exp(-0.5 * xp.square(x)) / xp.sqrt(2 * xp.pi)


@elementwise(name="rt.special.ndtri")
def ndtri(p, *, ans):
    # JAX: 0 at p = 0 and 1 (``ans`` infinite), where a guard after it (``where(isfinite(z), z, 0)``) reads
    return xp.where(
        xp.isinf(ans), 0.0, xp.sqrt(2 * xp.pi) * xp.exp(0.5 * xp.square(ans))
    )


@elementwise(name="rt.special.log_ndtr")
def log_ndtr(x, series_order=3, *, ans):
    # JAX: the normal log-density minus ``ans``, exponentiated (finite far into both tails)
    return xp.exp(-0.5 * xp.square(x) - 0.5 * xp.log(2 * xp.pi) - ans)


@elementwise(name="rt.special.xlogy")
def xlogy(x, y):
    return xp.log(y), x / y


@elementwise(name="rt.special.xlog1py")
def xlog1py(x, y):
    return xp.log1p(y), x / (1 + y)


@elementwise(name="rt.special.logit")
def logit(x):
    return 1 / (x * (1 - x))


@elementwise(name="rt.special.entr")
def entr(x):
    # JAX: no slope where x < 0 (the value is -inf there)
    return xp.where(x < 0, 0.0, -(xp.log(x) + 1))


@decompose(name="rt.special.logsumexp")
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    if b is not None:
        a = xp.where(b != 0, a, -xp.inf)
    if where is not None:  # JAX's: the elements left out count as -inf
        a = xp.where(where, a, -xp.inf)
    top = xp.max(a, axis=axis, keepdims=True)
    top = rt.stop_gradient(xp.where(xp.isfinite(top), top, 0.0))
    terms = xp.exp(a - top)
    if b is not None:
        terms = terms * b
    total = xp.sum(terms, axis=axis, keepdims=keepdims)
    if not keepdims:
        top = xp.squeeze(top, axis=axis)
    sign = xp.sign(total)
    out = xp.log(xp.abs(total)) + top
    if return_sign:
        return out, sign
    if b is not None:
        out = xp.where(sign < 0, xp.nan, out)
    return out


@elementwise(name="rt.special.gamma")
def gamma(x, *, ans):
    return ans * rt.special.digamma(x)


@elementwise(name="rt.special.beta")
def beta(a, b, *, ans):
    both = rt.special.digamma(a + b)
    return ans * (rt.special.digamma(a) - both), ans * (rt.special.digamma(b) - both)


@elementwise(name="rt.special.betaln")
def betaln(a, b):
    both = rt.special.digamma(a + b)
    return rt.special.digamma(a) - both, rt.special.digamma(b) - both


@elementwise(name="rt.special.poch")
def poch(z, m, *, ans):
    return (
        ans * (rt.special.digamma(z + m) - rt.special.digamma(z)),
        ans * rt.special.digamma(z + m),
    )


@elementwise(name="rt.special.erfcx")
def erfcx(x, *, ans):
    return 2 * x * ans - 2 / xp.sqrt(xp.pi)


@elementwise(name="rt.special.expi")
def expi(x):
    return xp.exp(x) / x


@elementwise(name="rt.special.exp1")
def exp1(x):
    return -xp.exp(-x) / x


# modified Bessel functions: i0' = i1, i1' = i0 - i1 / x (1/2 at 0); the scaled ones (``e``) times exp(-|x|)


@elementwise(name="rt.special.i0e")
def i0e(x, *, ans):
    return rt.special.i1e(x) - xp.sign(x) * ans


@elementwise(name="rt.special.i1e")
def i1e(x, *, ans):
    # 1/2 at 0, where 1/x is infinite
    tiny = x == 0
    safe = xp.where(tiny, 1.0, x)
    return xp.where(tiny, 0.5, rt.special.i0e(safe) - ans * (xp.sign(safe) + 1 / safe))


@elementwise
def i0(x):
    return rt.special.i1(x)


@elementwise(name="rt.special.i1")
def i1(x, *, ans):
    tiny = x == 0
    safe = xp.where(tiny, 1.0, x)
    return xp.where(tiny, 0.5, xp.i0(safe) - ans / safe)


@decompose
def sinc(x):
    # JAX: sin(pi x) / (pi x), its value and every derivative at 0 from the Maclaurin series
    pi_x = xp.pi * x
    zero = pi_x == 0
    safe = xp.where(zero, 1.0, pi_x)
    return xp.where(zero, rt.special.sinc_series(0, pi_x), xp.sin(safe) / safe)


@elementwise(name="rt.special.sinc_series")
def sinc_series(k, x):
    return None, rt.special.sinc_series(k + 1, x)


@decompose(name="rt.special.factorial")
def factorial(n, exact=False):
    return xp.where(n < 0, 0.0, xp.exp(rt.special.gammaln(n + 1.0)))


@decompose(name="rt.special.multigammaln")
def multigammaln(a, d):
    terms = rt.special.gammaln(xp.expand_dims(a, -1) - rt.special.half_steps(d))
    return xp.sum(terms, axis=-1) + d * (d - 1) / 4 * xp.log(xp.pi)


@decompose(name="rt.special.rel_entr")
def rel_entr(p, q):
    # JAX: p log(p / q) where both are positive, 0 where p == 0 <= q, inf elsewhere
    positive = xp.logical_and(p > 0, q > 0)
    safe_p = xp.where(positive, p, 1.0)
    safe_q = xp.where(positive, q, 1.0)
    value = rt.special.xlogy(safe_p, safe_p) - rt.special.xlogy(safe_p, safe_q)
    return xp.where(
        positive, value, xp.where(xp.logical_and(p == 0, q >= 0), 0.0, xp.inf)
    )


@decompose(name="rt.special.kl_div")
def kl_div(p, q):
    return rt.special.rel_entr(p, q) - p + q


@decompose(name="rt.special.softmax")
def softmax(x, axis=None):
    return xp.exp(x - rt.special.logsumexp(x, axis=axis, keepdims=True))


@decompose(name="rt.special.log_softmax")
def log_softmax(x, axis=None):
    return x - rt.special.logsumexp(x, axis=axis, keepdims=True)


# --- incomplete gamma, zeta and the other functions of scipy.special with derivatives in JAX --------
# A partial with no closed form (``gammainc`` in ``a``, ``zeta`` in ``x``) is JAX's own, evaluated by
# ``rt.special.jax_partial``: it has no derivative of its own, so a second derivative there is an error.

no_derivative(
    "JAX's own partial derivative of an elementwise function (JAX differentiates it no further)",
    rt.special.jax_partial,
    "rt.special.jax_partial",
)
batch("elementwise", "rt.special.jax_partial")
nondiff("the sign of the gamma function: piecewise constant", "rt.special.gammasgn")
batch("elementwise", "rt.special.gammasgn")


@elementwise(name="rt.special.gammainc")
def gammainc(a, x):
    return (
        rt.special.jax_partial("gammainc", 0, a, x),
        xp.exp((a - 1) * xp.log(x) - x - rt.special.gammaln(a)),
    )


@elementwise(name="rt.special.gammaincc")
def gammaincc(a, x):
    return (
        rt.special.jax_partial("gammaincc", 0, a, x),
        -xp.exp((a - 1) * xp.log(x) - x - rt.special.gammaln(a)),
    )


@elementwise(name="rt.special.loggamma")
def loggamma(x):
    return rt.special.digamma(x)


@elementwise(name="rt.special.zeta")
def zeta(x, q=None):
    return rt.special.jax_partial("zeta", 0, x, q), -x * rt.special.zeta(x + 1, q)


@elementwise(name="rt.special.expn")
def expn(n, x):
    return None, -rt.special.expn(n - 1, x)


@elementwise(name="rt.special.dawsn")
def dawsn(x, *, ans):
    return 1 - 2 * x * ans


@elementwise(name="rt.special.spence")
def spence(x):
    return xp.log(x) / (1 - x)


@elementwise(name="rt.special.sici_si")
def sici_si(x):
    # sin(x) / x, 1 at 0
    tiny = x == 0
    safe = xp.where(tiny, 1.0, x)
    return xp.where(tiny, 1.0, xp.sin(safe) / safe)


@elementwise(name="rt.special.sici_ci")
def sici_ci(x):
    return xp.cos(x) / x


@decompose(name="rt.special.sici")
def sici(x):
    return rt.special.sici_si(x), rt.special.sici_ci(x)


@elementwise(name="rt.special.fresnel_s")
def fresnel_s(x):
    return xp.sin(xp.pi / 2 * xp.square(x))


@elementwise(name="rt.special.fresnel_c")
def fresnel_c(x):
    return xp.cos(xp.pi / 2 * xp.square(x))


@decompose(name="rt.special.fresnel")
def fresnel(x):
    return rt.special.fresnel_s(x), rt.special.fresnel_c(x)


@elementwise(name="rt.special.owens_t")
def owens_t(h, a):
    wide = 1 + xp.square(a)
    return (
        -xp.exp(-xp.square(h) / 2)
        * rt.special.erf(a * h / xp.sqrt(2.0))
        / (2 * xp.sqrt(2 * xp.pi)),
        xp.exp(-xp.square(h) * wide / 2) / (2 * xp.pi * wide),
    )


@decompose(name="rt.special.boxcox")
def boxcox(x, lmbda):
    # JAX's: log(x) where lmbda is 0, the power branch with a safe lmbda elsewhere
    zero = lmbda == 0
    safe = xp.where(zero, 1.0, lmbda)
    log_x = xp.log(x)
    return xp.where(zero, log_x, xp.expm1(safe * log_x) / safe)


@decompose(name="rt.special.boxcox1p")
def boxcox1p(x, lmbda):
    zero = lmbda == 0
    safe = xp.where(zero, 1.0, lmbda)
    log1p_x = xp.log1p(x)
    return xp.where(zero, log1p_x, xp.expm1(safe * log1p_x) / safe)


@decompose(name="rt.special.comb")
def comb(N, k, exact=False, repetition=False):
    # JAX's: a ratio of gamma functions where 0 <= k <= N, zero elsewhere
    if repetition:
        return xp.where(
            xp.logical_and(k == 0, N >= 0), 1.0, rt.special.comb(N + k - 1, k)
        )
    valid = xp.logical_and(xp.logical_and(k <= N, N >= 0), k >= 0)
    safe_n = xp.where(valid, N, 0.0)
    safe_k = xp.where(valid, k, 0.0)
    ratio = (
        rt.special.gammaln(safe_n + 1)
        - rt.special.gammaln(safe_k + 1)
        - rt.special.gammaln(safe_n + 1 - safe_k)
    )
    return xp.where(valid, xp.exp(ratio), 0.0)


# --- jax.lax ops that NumPy has no function for ----------------------------------------------


@elementwise(name="rt.lax.rsqrt")
def rsqrt(x, *, ans):
    return -0.5 * ans / x


@elementwise(name="rt.lax.clamp")
def clamp(min, x, max):
    # JAX: the bound that clamps gets the slope; at a tie neither x nor the bound does
    return (
        xp.logical_and(min > x, min < max),
        xp.logical_and(x > min, x < max),
        max < x,
    )


@elementwise(name="rt.lax.integer_pow")
def integer_pow(x, y):
    return y * rt.lax.integer_pow(x, y - 1)
