"""Densities of ``scipy.stats`` / ``jax.scipy.stats``, spelled ``rt.stats.<distribution>_<function>``.

Each is a ``decompose`` op whose body is JAX's implementation
(``jax/_src/scipy/stats/``) written with ops that have rules, so s2s
differentiates exactly what JAX differentiates: the same ``where`` guards
outside the support (``-inf``, with no derivative), ``xlogy``/``xlog1py``
where JAX uses them. ``beta``'s normaliser is ``gammaln(a) + gammaln(b) -
gammaln(a + b)`` (JAX's ``betaln`` evaluates the same function by another
formula). ``multivariate_normal`` takes a full ``(n, n)`` covariance.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import decompose


@decompose(name="rt.stats.norm_logpdf")
def norm_logpdf(x, loc=0, scale=1):
    scale_sqrd = xp.square(scale)
    log_normalizer = xp.log(2 * xp.pi * scale_sqrd)
    quadratic = xp.square(x - loc) / scale_sqrd
    return (log_normalizer + quadratic) / -2


@decompose(name="rt.stats.norm_pdf")
def norm_pdf(x, loc=0, scale=1):
    scale_sqrd = xp.square(scale)
    log_normalizer = xp.log(2 * xp.pi * scale_sqrd)
    quadratic = xp.square(x - loc) / scale_sqrd
    return xp.exp((log_normalizer + quadratic) / -2)


@decompose(name="rt.stats.norm_cdf")
def norm_cdf(x, loc=0, scale=1):
    return rt.special.ndtr((x - loc) / scale)


@decompose(name="rt.stats.norm_logcdf")
def norm_logcdf(x, loc=0, scale=1):
    return rt.special.log_ndtr((x - loc) / scale)


@decompose(name="rt.stats.norm_ppf")
def norm_ppf(q, loc=0, scale=1):
    return rt.special.ndtri(q) * scale + loc


@decompose(name="rt.stats.multivariate_normal_logpdf")
def multivariate_normal_logpdf(x, mean, cov):
    n = xp.shape(cov)[-1]
    L = xp.linalg.cholesky(cov)
    y = xp.linalg.solve(L, xp.expand_dims(x - mean, -1))[..., 0]
    log_det = xp.sum(xp.log(xp.diag(L)))
    return -0.5 * xp.sum(y * y, axis=-1) - n / 2 * xp.log(2 * xp.pi) - log_det


@decompose(name="rt.stats.multivariate_normal_pdf")
def multivariate_normal_pdf(x, mean, cov):
    n = xp.shape(cov)[-1]
    L = xp.linalg.cholesky(cov)
    y = xp.linalg.solve(L, xp.expand_dims(x - mean, -1))[..., 0]
    log_det = xp.sum(xp.log(xp.diag(L)))
    return xp.exp(-0.5 * xp.sum(y * y, axis=-1) - n / 2 * xp.log(2 * xp.pi) - log_det)


@decompose(name="rt.stats.t_logpdf")
def t_logpdf(x, df, loc=0, scale=1):
    scaled_x = (x - loc) / scale
    df_over_two = df / 2
    df_plus_one_over_two = df_over_two + 0.5
    normalize_term_tmp = xp.log(scale * scale * xp.pi * df) / 2
    normalize_term = (
        rt.special.gammaln(df_over_two)
        + normalize_term_tmp
        - rt.special.gammaln(df_plus_one_over_two)
    )
    quadratic = scaled_x * scaled_x / df
    return -(normalize_term + df_plus_one_over_two * xp.log1p(quadratic))


@decompose(name="rt.stats.t_pdf")
def t_pdf(x, df, loc=0, scale=1):
    scaled_x = (x - loc) / scale
    df_over_two = df / 2
    df_plus_one_over_two = df_over_two + 0.5
    normalize_term_tmp = xp.log(scale * scale * xp.pi * df) / 2
    normalize_term = (
        rt.special.gammaln(df_over_two)
        + normalize_term_tmp
        - rt.special.gammaln(df_plus_one_over_two)
    )
    quadratic = scaled_x * scaled_x / df
    return xp.exp(-(normalize_term + df_plus_one_over_two * xp.log1p(quadratic)))


@decompose(name="rt.stats.gamma_logpdf")
def gamma_logpdf(x, a, loc=0, scale=1):
    ok = x >= loc
    y = xp.where(ok, (x - loc) / scale, 1.0)
    log_linear_term = rt.special.xlogy(a - 1, y) - y
    shape_terms = rt.special.gammaln(a) + xp.log(scale)
    return xp.where(ok, log_linear_term - shape_terms, -xp.inf)


@decompose(name="rt.stats.gamma_pdf")
def gamma_pdf(x, a, loc=0, scale=1):
    ok = x >= loc
    y = xp.where(ok, (x - loc) / scale, 1.0)
    log_linear_term = rt.special.xlogy(a - 1, y) - y
    shape_terms = rt.special.gammaln(a) + xp.log(scale)
    return xp.exp(xp.where(ok, log_linear_term - shape_terms, -xp.inf))


@decompose(name="rt.stats.beta_logpdf")
def beta_logpdf(x, a, b, loc=0, scale=1):
    shape_term = (
        rt.special.gammaln(a + b) - rt.special.gammaln(a) - rt.special.gammaln(b)
    )
    y = (x - loc) / scale
    log_linear_term = rt.special.xlogy(a - 1, y) + rt.special.xlog1py(b - 1, -y)
    log_probs = shape_term + log_linear_term - xp.log(scale)
    outside = xp.logical_or(x > loc + scale, x < loc)
    result = xp.where(outside, -xp.inf, log_probs)
    invalid = xp.logical_or(xp.logical_or(a <= 0, b <= 0), scale <= 0)
    return xp.where(invalid, xp.nan, result)


@decompose(name="rt.stats.beta_pdf")
def beta_pdf(x, a, b, loc=0, scale=1):
    shape_term = (
        rt.special.gammaln(a + b) - rt.special.gammaln(a) - rt.special.gammaln(b)
    )
    y = (x - loc) / scale
    log_linear_term = rt.special.xlogy(a - 1, y) + rt.special.xlog1py(b - 1, -y)
    log_probs = shape_term + log_linear_term - xp.log(scale)
    outside = xp.logical_or(x > loc + scale, x < loc)
    result = xp.where(outside, -xp.inf, log_probs)
    invalid = xp.logical_or(xp.logical_or(a <= 0, b <= 0), scale <= 0)
    return xp.exp(xp.where(invalid, xp.nan, result))


@decompose(name="rt.stats.bernoulli_logpmf")
def bernoulli_logpmf(k, p, loc=0):
    x = k - loc
    log_probs = rt.special.xlogy(x, p) + rt.special.xlog1py(1 - x, -p)
    return xp.where(xp.logical_or(x < 0, x > 1), -xp.inf, log_probs)


@decompose(name="rt.stats.bernoulli_pmf")
def bernoulli_pmf(k, p, loc=0):
    x = k - loc
    log_probs = rt.special.xlogy(x, p) + rt.special.xlog1py(1 - x, -p)
    return xp.exp(xp.where(xp.logical_or(x < 0, x > 1), -xp.inf, log_probs))


@decompose(name="rt.stats.poisson_logpmf")
def poisson_logpmf(k, mu, loc=0):
    x = k - loc
    log_probs = rt.special.xlogy(x, mu) - rt.special.gammaln(x + 1) - mu
    return xp.where(xp.logical_or(x < 0, xp.round(k) != k), -xp.inf, log_probs)


@decompose(name="rt.stats.poisson_pmf")
def poisson_pmf(k, mu, loc=0):
    x = k - loc
    log_probs = rt.special.xlogy(x, mu) - rt.special.gammaln(x + 1) - mu
    return xp.exp(xp.where(xp.logical_or(x < 0, xp.round(k) != k), -xp.inf, log_probs))


@decompose(name="rt.stats.cauchy_logpdf")
def cauchy_logpdf(x, loc=0, scale=1):
    scaled_x = (x - loc) / scale
    return -(xp.log(xp.pi * scale) + xp.log1p(scaled_x * scaled_x))


@decompose(name="rt.stats.cauchy_pdf")
def cauchy_pdf(x, loc=0, scale=1):
    scaled_x = (x - loc) / scale
    return xp.exp(-(xp.log(xp.pi * scale) + xp.log1p(scaled_x * scaled_x)))


@decompose(name="rt.stats.cauchy_cdf")
def cauchy_cdf(x, loc=0, scale=1):
    return 0.5 + 1.0 / xp.pi * xp.arctan((x - loc) / scale)


@decompose(name="rt.stats.cauchy_logcdf")
def cauchy_logcdf(x, loc=0, scale=1):
    return xp.log(0.5 + 1.0 / xp.pi * xp.arctan((x - loc) / scale))


@decompose(name="rt.stats.expon_logpdf")
def expon_logpdf(x, loc=0, scale=1):
    log_probs = -((x - loc) / scale + xp.log(scale))
    return xp.where(x < loc, -xp.inf, log_probs)


@decompose(name="rt.stats.expon_pdf")
def expon_pdf(x, loc=0, scale=1):
    log_probs = -((x - loc) / scale + xp.log(scale))
    return xp.exp(xp.where(x < loc, -xp.inf, log_probs))


@decompose(name="rt.stats.expon_cdf")
def expon_cdf(x, loc=0, scale=1):
    return xp.where(x < loc, 0.0, -xp.expm1(-(x - loc) / scale))


@decompose(name="rt.stats.halfnorm_logpdf")
def halfnorm_logpdf(x, loc=0, scale=1):
    scaled_x = (x - loc) / scale
    log_probs = 0.5 * xp.log(2.0 / xp.pi) - xp.log(scale) - 0.5 * xp.square(scaled_x)
    return xp.where(scaled_x < 0, -xp.inf, log_probs)


@decompose(name="rt.stats.halfnorm_pdf")
def halfnorm_pdf(x, loc=0, scale=1):
    return xp.exp(rt.stats.halfnorm_logpdf(x, loc, scale))


@decompose(name="rt.stats.halfnorm_cdf")
def halfnorm_cdf(x, loc=0, scale=1):
    scaled_x = (x - loc) / scale
    return xp.where(scaled_x < 0, 0.0, 2.0 * rt.special.ndtr(scaled_x) - 1.0)


@decompose(name="rt.stats.halfcauchy_logpdf")
def halfcauchy_logpdf(x, loc=0, scale=1):
    scaled_x = (x - loc) / scale
    log_probs = xp.log(2.0 / xp.pi) - xp.log(scale) - xp.log1p(scaled_x * scaled_x)
    return xp.where(scaled_x < 0, -xp.inf, log_probs)


@decompose(name="rt.stats.halfcauchy_pdf")
def halfcauchy_pdf(x, loc=0, scale=1):
    return xp.exp(rt.stats.halfcauchy_logpdf(x, loc, scale))


@decompose(name="rt.stats.halfcauchy_cdf")
def halfcauchy_cdf(x, loc=0, scale=1):
    scaled_x = (x - loc) / scale
    return xp.where(scaled_x < 0, 0.0, 2.0 / xp.pi * xp.arctan(scaled_x))


@decompose(name="rt.stats.invgamma_logpdf")
def invgamma_logpdf(x, a, loc=0, scale=1):
    y = (x - loc) / scale
    log_probs = -(a + 1) * xp.log(y) - rt.special.gammaln(a) - 1.0 / y - xp.log(scale)
    return xp.where(y <= 0, -xp.inf, log_probs)


@decompose(name="rt.stats.invgamma_pdf")
def invgamma_pdf(x, a, loc=0, scale=1):
    return xp.exp(rt.stats.invgamma_logpdf(x, a, loc, scale))


@decompose(name="rt.stats.lognorm_logpdf")
def lognorm_logpdf(x, s, loc=0, scale=1):
    log_y = xp.log((x - loc) / scale)
    log_probs = (
        -0.5 * xp.square(log_y / s)
        - xp.log(s * xp.sqrt(2.0 * xp.pi))
        - log_y
        - xp.log(scale)
    )
    return xp.where(x <= loc, -xp.inf, log_probs)


@decompose(name="rt.stats.lognorm_pdf")
def lognorm_pdf(x, s, loc=0, scale=1):
    return xp.exp(rt.stats.lognorm_logpdf(x, s, loc, scale))


@decompose(name="rt.stats.laplace_logpdf")
def laplace_logpdf(x, loc=0, scale=1):
    return -xp.log(2.0 * scale) - xp.abs(x - loc) / scale


@decompose(name="rt.stats.laplace_pdf")
def laplace_pdf(x, loc=0, scale=1):
    return xp.exp(-xp.log(2.0 * scale) - xp.abs(x - loc) / scale)


@decompose(name="rt.stats.laplace_cdf")
def laplace_cdf(x, loc=0, scale=1):
    scaled_x = (x - loc) / scale
    return xp.where(scaled_x < 0, 0.5 * xp.exp(scaled_x), 1.0 - 0.5 * xp.exp(-scaled_x))


@decompose(name="rt.stats.logistic_logpdf")
def logistic_logpdf(x, loc=0, scale=1):
    half = (x - loc) / scale / 2.0
    return -2.0 * xp.logaddexp(half, -half) - xp.log(scale)


@decompose(name="rt.stats.logistic_pdf")
def logistic_pdf(x, loc=0, scale=1):
    half = (x - loc) / scale / 2.0
    return xp.exp(-2.0 * xp.logaddexp(half, -half) - xp.log(scale))


@decompose(name="rt.stats.logistic_cdf")
def logistic_cdf(x, loc=0, scale=1):
    return rt.nn.sigmoid((x - loc) / scale)


@decompose(name="rt.stats.uniform_logpdf")
def uniform_logpdf(x, loc=0, scale=1):
    outside = xp.logical_or(x < loc, x > loc + scale)
    return xp.where(outside, -xp.inf, -xp.log(scale * xp.ones_like(x)))


@decompose(name="rt.stats.uniform_pdf")
def uniform_pdf(x, loc=0, scale=1):
    outside = xp.logical_or(x < loc, x > loc + scale)
    return xp.where(outside, 0.0, 1.0 / (scale * xp.ones_like(x)))
