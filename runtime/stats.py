"""``rt.stats``: ``scipy.stats`` / ``jax.scipy.stats`` densities, as ``<distribution>_<function>``.

The compiler expands each into the ops JAX computes it with before any
transform, so generated code never calls these; they are here so every
``rt.stats`` name runs as written: JAX's own function on JAX values,
``scipy.stats`` (or, without SciPy, JAX's function in float64) on NumPy values.
"""

from __future__ import annotations

import functools

import numpy as np

from .library import _object, _through_jax, uses_jax


def _density(distribution: str, function: str):
    """The function ``<distribution>.<function>`` of ``jax.scipy.stats`` / ``scipy.stats``, with the
    signature of the decorated stub."""

    def wrap(stub):
        @functools.wraps(stub)
        def run(*args, **kwargs):
            path = f"scipy.stats.{distribution}.{function}"
            if uses_jax(args, list(kwargs.values())):
                return _object(f"jax.{path}")(*args, **kwargs)
            try:
                found = _object(path)
            except ImportError:
                return _through_jax(f"jax.{path}", *args, *kwargs.values())
            return np.asarray(found(*args, **kwargs))

        return run

    return wrap


# fmt: off
@_density("norm", "logpdf")
def norm_logpdf(x, loc=0, scale=1): ...
@_density("norm", "pdf")
def norm_pdf(x, loc=0, scale=1): ...
@_density("norm", "logcdf")
def norm_logcdf(x, loc=0, scale=1): ...
@_density("norm", "cdf")
def norm_cdf(x, loc=0, scale=1): ...
@_density("norm", "ppf")
def norm_ppf(q, loc=0, scale=1): ...
@_density("multivariate_normal", "logpdf")
def multivariate_normal_logpdf(x, mean, cov): ...
@_density("multivariate_normal", "pdf")
def multivariate_normal_pdf(x, mean, cov): ...
@_density("t", "logpdf")
def t_logpdf(x, df, loc=0, scale=1): ...
@_density("t", "pdf")
def t_pdf(x, df, loc=0, scale=1): ...
@_density("gamma", "logpdf")
def gamma_logpdf(x, a, loc=0, scale=1): ...
@_density("gamma", "pdf")
def gamma_pdf(x, a, loc=0, scale=1): ...
@_density("beta", "logpdf")
def beta_logpdf(x, a, b, loc=0, scale=1): ...
@_density("beta", "pdf")
def beta_pdf(x, a, b, loc=0, scale=1): ...
@_density("bernoulli", "logpmf")
def bernoulli_logpmf(k, p, loc=0): ...
@_density("bernoulli", "pmf")
def bernoulli_pmf(k, p, loc=0): ...
@_density("poisson", "logpmf")
def poisson_logpmf(k, mu, loc=0): ...
@_density("poisson", "pmf")
def poisson_pmf(k, mu, loc=0): ...
@_density("cauchy", "logpdf")
def cauchy_logpdf(x, loc=0, scale=1): ...
@_density("cauchy", "pdf")
def cauchy_pdf(x, loc=0, scale=1): ...
@_density("cauchy", "logcdf")
def cauchy_logcdf(x, loc=0, scale=1): ...
@_density("cauchy", "cdf")
def cauchy_cdf(x, loc=0, scale=1): ...
# fmt: on
