"""Op-table cases for library functions: ``jax.nn``, ``jax.lax``, ``scipy.special`` / ``jax.scipy.special`` and
``scipy.stats`` / ``jax.scipy.stats``, spelled as users call them (``op_table.py`` appends them to ``CASES``).

A case's call is evaluated with ``namespace(np)`` (NumPy, ``jax``, SciPy) and
its JAX twin with ``namespace(jnp)``, where ``np`` is ``jax.numpy`` and
``scipy`` is ``jax.scipy``: ``scipy.stats.norm.logpdf(x, m, s)`` is checked
against ``jax.scipy.stats.norm.logpdf``. Modules written for s2s start with
``HEADER``. A case's op is what s2s resolves the called object to
(``library_name``): ``rt.nn.relu`` for ``jax.nn.relu``, ``exp`` for ``jax.lax.exp``.

Domains added here: ``prob`` (0.05, 0.95), ``wide`` (-8, 8: past the kinks of
``relu6``, ``hard_tanh``, ``sparse_plus``), ``low`` (-1, 0.45: below ``positive``, a
location inside a density's support).
"""

from __future__ import annotations

import types

import jax
import jax.scipy.integrate
import jax.scipy.linalg
import jax.scipy.special
import jax.scipy.stats
import numpy as np
import scipy.integrate
import scipy.linalg
import scipy.spatial.distance
import scipy.special
import scipy.stats
from op_table import DOMAINS, C

from s2s.frontend.identity import library_op

DOMAINS.update({"prob": (0.05, 0.95), "wide": (-8.0, 8.0), "low": (-1.0, 0.45)})

HEADER = "import numpy\nimport numpy as np\nimport jax\nimport scipy.integrate\nimport scipy.linalg\nimport scipy.special\nimport scipy.stats\n"


def _cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """The JAX twin of ``scipy.integrate.cumulative_trapezoid`` (JAX has none): written out here."""
    jnp = jax.numpy
    y = jnp.moveaxis(y, axis, -1)
    widths = (
        dx if x is None else jnp.diff(x if x.ndim == 1 else jnp.moveaxis(x, axis, -1))
    )
    out = jnp.cumsum(widths * (y[..., 1:] + y[..., :-1]) / 2, axis=-1)
    if initial is not None:
        out = jnp.concatenate([jnp.full(out.shape[:-1] + (1,), initial), out], axis=-1)
    return jnp.moveaxis(out, -1, axis)


def _halfnorm_logpdf(x, loc=0.0, scale=1.0):
    """JAX twins of SciPy's distributions JAX lacks, from other formulas: the normal's, folded."""
    jnp = jax.numpy
    folded = jnp.log(2.0) + jax.scipy.stats.norm.logpdf(x, loc, scale)
    return jnp.where(x < loc, -jnp.inf, folded)


def _halfnorm_cdf(x, loc=0.0, scale=1.0):
    jnp = jax.numpy
    return jnp.where(
        x < loc, 0.0, jax.scipy.special.erf((x - loc) / (scale * jnp.sqrt(2.0)))
    )


def _halfcauchy_logpdf(x, loc=0.0, scale=1.0):
    """The Cauchy density, folded."""
    jnp = jax.numpy
    folded = jnp.log(2.0) + jax.scipy.stats.cauchy.logpdf(x, loc, scale)
    return jnp.where(x < loc, -jnp.inf, folded)


def _halfcauchy_cdf(x, loc=0.0, scale=1.0):
    jnp = jax.numpy
    return jnp.where(
        x < loc, 0.0, 2.0 * jax.scipy.stats.cauchy.cdf(x, loc, scale) - 1.0
    )


def _invgamma_logpdf(x, a, loc=0.0, scale=1.0):
    """The gamma density of ``1 / y``, by the change of variables ``y = (x - loc) / scale``."""
    jnp = jax.numpy
    y = (x - loc) / scale
    return jax.scipy.stats.gamma.logpdf(1.0 / y, a) - 2.0 * jnp.log(y) - jnp.log(scale)


def _lognorm_logpdf(x, s, loc=0.0, scale=1.0):
    """The normal density of ``log(y)``, by the change of variables ``y = (x - loc) / scale``."""
    jnp = jax.numpy
    y = (x - loc) / scale
    return jax.scipy.stats.norm.logpdf(jnp.log(y), 0.0, s) - jnp.log(y) - jnp.log(scale)


_SCIPY_ONLY_STATS = types.SimpleNamespace(
    halfnorm=types.SimpleNamespace(
        logpdf=_halfnorm_logpdf,
        pdf=lambda *a, **k: jax.numpy.exp(_halfnorm_logpdf(*a, **k)),
        cdf=_halfnorm_cdf,
    ),
    halfcauchy=types.SimpleNamespace(
        logpdf=_halfcauchy_logpdf,
        pdf=lambda *a, **k: jax.numpy.exp(_halfcauchy_logpdf(*a, **k)),
        cdf=_halfcauchy_cdf,
    ),
    invgamma=types.SimpleNamespace(
        logpdf=_invgamma_logpdf,
        pdf=lambda *a, **k: jax.numpy.exp(_invgamma_logpdf(*a, **k)),
    ),
    lognorm=types.SimpleNamespace(
        logpdf=_lognorm_logpdf,
        pdf=lambda *a, **k: jax.numpy.exp(_lognorm_logpdf(*a, **k)),
    ),
)


class _JaxStats:
    """``jax.scipy.stats``, with the distributions JAX lacks written out."""

    def __getattr__(self, name):
        found = getattr(_SCIPY_ONLY_STATS, name, None)
        return found if found is not None else getattr(jax.scipy.stats, name)


class _JaxSpecial:
    """``jax.scipy.special``, with ``log_expit`` (``jax.nn.log_sigmoid``)."""

    log_expit = staticmethod(lambda x: -jax.numpy.logaddexp(0.0, -x))

    def __getattr__(self, name):
        return getattr(jax.scipy.special, name)


def _cdist(XA, XB, metric="euclidean"):
    """The JAX twin of ``scipy.spatial.distance.cdist`` (JAX has none), from its formula."""
    jnp = jax.numpy
    diff = XA[:, None, :] - XB[None, :, :]
    if metric == "cityblock":
        return jnp.sum(jnp.abs(diff), axis=-1)
    squared = jnp.sum(diff**2, axis=-1)
    return squared if metric == "sqeuclidean" else jnp.sqrt(squared)


def _pdist(X, metric="euclidean"):
    rows, cols = np.triu_indices(X.shape[0], k=1)
    diff = X[rows] - X[cols]
    if metric == "cityblock":
        return jax.numpy.sum(jax.numpy.abs(diff), axis=-1)
    squared = jax.numpy.sum(diff**2, axis=-1)
    return squared if metric == "sqeuclidean" else jax.numpy.sqrt(squared)


def _squareform(v):
    n = round((1 + float(np.sqrt(1 + 8 * v.shape[0]))) / 2)
    rows, cols = np.triu_indices(n, k=1)
    upper = jax.numpy.zeros((n, n), v.dtype).at[rows, cols].set(v)
    return upper + upper.T


class _JaxScipy:
    """``jax.scipy``, with ``integrate.cumulative_trapezoid`` and ``spatial.distance.cdist`` written out."""

    stats = _JaxStats()
    special = _JaxSpecial()
    spatial = types.SimpleNamespace(
        distance=types.SimpleNamespace(
            cdist=_cdist, pdist=_pdist, squareform=_squareform
        )
    )

    integrate = type(
        "integrate",
        (),
        {
            "trapezoid": staticmethod(jax.scipy.integrate.trapezoid),
            "cumulative_trapezoid": staticmethod(_cumulative_trapezoid),
        },
    )

    def __getattr__(self, name):
        return getattr(jax.scipy, name)


def _sliding_window_view(x, window_shape, axis=None):
    """The JAX twin of ``numpy.lib.stride_tricks.sliding_window_view`` (JAX has none): a gather."""
    flat = np.arange(np.size(x)).reshape(np.shape(x))
    positions = np.lib.stride_tricks.sliding_window_view(flat, window_shape, axis)
    return jax.numpy.reshape(x, (-1,))[positions]


class _JaxNumpy:
    """``jax.numpy`` spelled ``numpy``, with ``lib.stride_tricks.sliding_window_view`` written out."""

    lib = types.SimpleNamespace(
        stride_tricks=types.SimpleNamespace(sliding_window_view=_sliding_window_view)
    )

    def __getattr__(self, name):
        return getattr(jax.numpy, name)


def namespace(module) -> dict:
    """The globals a case's call is evaluated in: ``np`` is ``module`` (and ``numpy``, for spellings of
    NumPy's submodules); SciPy is ``jax.scipy`` for ``jax.numpy``."""
    own = module is np
    return {
        "np": module,
        "numpy": np if own else _JaxNumpy(),
        "jax": jax,
        "scipy": scipy if own else _JaxScipy(),
    }


def library_name(spelled: str) -> str | None:
    """The op s2s resolves a library spelling to (``jax.nn.relu`` -> ``rt.nn.relu``); None for NumPy's own."""
    if spelled.split(".")[0] not in ("jax", "scipy", "numpy"):
        return None
    return library_op(eval(spelled, namespace(np)))


U = {"x": "..."}
B = {"x": "~...", "y": "~..."}
LAST = {"x": "... a"}
DENSITY = {"x": "~...", "m": "~...", "s": "~..."}
POSITIVE_SCALE = {"s": "positive"}

LIBRARY_CASES = [
    # jax.nn: ops with derivatives of their own
    C("rt.nn.relu", "jax.nn.relu(x)", U),
    C("rt.nn.relu", "jax.nn.relu(x)", U, "ties"),
    C("rt.nn.relu6", "jax.nn.relu6(x)", U, "wide"),
    C("rt.nn.relu6", "jax.nn.relu6(x)", U, "ties"),
    C("rt.nn.sigmoid", "jax.nn.sigmoid(x)", U),
    C("rt.nn.sigmoid", "jax.lax.logistic(x)", U),
    C("rt.nn.sigmoid", "scipy.special.expit(x)", U),
    C("rt.nn.sigmoid", "jax.scipy.special.expit(x)", U),
    C("rt.nn.softmax", "jax.nn.softmax(x)", LAST),
    C("rt.nn.softmax", "jax.nn.softmax(x, axis=0)", "a ..."),
    C("rt.nn.softmax", "jax.nn.softmax(x, axis=(0, -1))", "a b c"),
    C("rt.nn.softmax", "jax.nn.softmax(x, where=np.arange(x.shape[-1]) != 1)", LAST),
    # jax.ops: segment reductions (an empty segment: its identity)
    C("rt.ops.segment_sum", "jax.ops.segment_sum(x, np.array([0, 2, 0]), 4)", "3 ..."),
    C(
        "rt.ops.segment_max",
        "jax.ops.segment_max(x, np.array([1, 0, 1]), num_segments=2)",
        "3 ...",
        fd=False,
    ),
    C(
        "rt.ops.segment_min",
        "jax.ops.segment_min(x, np.array([1, 0, 1]), num_segments=2)",
        "3 ...",
        fd=False,
    ),
    C("rt.nn.softmax", "jax.nn.softmax(x, axis=0, where=x > -0.5)", "a ...", fd=False),
    # jax.nn: JAX's compositions
    C("rt.nn.softplus", "jax.nn.softplus(x)", U),
    C("rt.nn.log_sigmoid", "jax.nn.log_sigmoid(x)", U),
    C("rt.nn.silu", "jax.nn.silu(x)", U),
    C("rt.nn.silu", "jax.nn.swish(x)", U),
    C("rt.nn.mish", "jax.nn.mish(x)", U),
    C("rt.nn.soft_sign", "jax.nn.soft_sign(x)", U),
    C("rt.nn.soft_sign", "jax.nn.soft_sign(x)", U, "ties"),
    C("rt.nn.sparse_plus", "jax.nn.sparse_plus(x)", U, "wide"),
    C("rt.nn.sparse_sigmoid", "jax.nn.sparse_sigmoid(x)", U, "wide"),
    C("rt.nn.squareplus", "jax.nn.squareplus(x)", U),
    C(
        "rt.nn.squareplus",
        "jax.nn.squareplus(x, b)",
        {"x": "~...", "b": "~..."},
        {"b": "positive"},
    ),
    C("rt.nn.elu", "jax.nn.elu(x)", U),
    C("rt.nn.elu", "jax.nn.elu(x, 0.5)", U, "ties"),
    C("rt.nn.selu", "jax.nn.selu(x)", U),
    C("rt.nn.celu", "jax.nn.celu(x, alpha=2.0)", U),
    C("rt.nn.celu", "jax.nn.celu(x)", U, "ties"),
    C("rt.nn.leaky_relu", "jax.nn.leaky_relu(x)", U),
    C("rt.nn.leaky_relu", "jax.nn.leaky_relu(x, negative_slope=0.2)", U, "ties"),
    C("rt.nn.hard_tanh", "jax.nn.hard_tanh(x)", U, "wide"),
    C("rt.nn.hard_tanh", "jax.nn.hard_tanh(x)", U, "ties"),
    C("rt.nn.hard_sigmoid", "jax.nn.hard_sigmoid(x)", U, "wide"),
    C("rt.nn.hard_silu", "jax.nn.hard_silu(x)", U, "wide"),
    C("rt.nn.hard_silu", "jax.nn.hard_swish(x)", U),
    C("rt.nn.gelu", "jax.nn.gelu(x)", U),
    C("rt.nn.gelu", "jax.nn.gelu(x, approximate=False)", U),
    C("rt.nn.glu", "jax.nn.glu(x)", "... 4"),
    C("rt.nn.glu", "jax.nn.glu(x, axis=0)", "2 ..."),
    C("rt.nn.log_softmax", "jax.nn.log_softmax(x)", LAST),
    C("rt.nn.log_softmax", "jax.nn.log_softmax(x, axis=0)", "a ..."),
    C("rt.nn.log_softmax", "jax.nn.log_softmax(x, axis=None)", U),
    C("rt.nn.standardize", "jax.nn.standardize(x)", "... 3"),
    C(
        "rt.nn.standardize",
        "jax.nn.standardize(x, axis=0, algorithm='stable')",
        "3 ...",
    ),
    C(
        "rt.nn.standardize",
        "jax.nn.standardize(x, -1, m, v, 0.1)",
        {"x": "~...", "m": "~...", "v": "~..."},
        {"v": "positive"},
    ),
    # scipy.special, jax.scipy.special
    C("rt.special.erf", "jax.scipy.special.erf(x)", U),
    C("rt.special.erf", "jax.lax.erf(x)", U),
    C("rt.special.erfc", "scipy.special.erfc(x)", U),
    C("rt.special.erfinv", "jax.scipy.special.erfinv(x)", U, "unit"),
    C("rt.special.gammaln", "scipy.special.gammaln(x)", U, "positive"),
    C("rt.special.gammaln", "jax.lax.lgamma(x)", U, "positive"),
    C("rt.special.digamma", "jax.scipy.special.digamma(x)", U, "positive"),
    C("rt.special.polygamma", "scipy.special.polygamma(1, x)", U, "positive"),
    C("rt.special.polygamma", "jax.scipy.special.polygamma(2, x)", U, "positive"),
    C("rt.special.ndtr", "scipy.special.ndtr(x)", U),
    C("rt.special.ndtri", "jax.scipy.special.ndtri(x)", U, "prob", rtol=1e-6),
    C("rt.special.log_ndtr", "scipy.special.log_ndtr(x)", U),
    C("rt.special.log_ndtr", "jax.scipy.special.log_ndtr(x)", U, "wide"),
    C("rt.special.xlogy", "scipy.special.xlogy(x, y)", B, {"y": "positive"}),
    C("rt.special.xlog1py", "jax.scipy.special.xlog1py(x, y)", B, {"y": "unit"}),
    C("rt.special.logit", "scipy.special.logit(x)", U, "prob"),
    C("rt.special.entr", "jax.scipy.special.entr(x)", U, "positive"),
    # jax.lax.top_k: the largest entries (a gather at the positions a sort finds)
    C("rt.top_k", "jax.lax.top_k(x, 2)[0]", "... 4"),
    # numpy.lib.stride_tricks: every window, a gather
    C(
        "rt.sliding_window_view",
        "numpy.lib.stride_tricks.sliding_window_view(x, 2, axis=-1)",
        "... 4",
    ),
    C(
        "rt.sliding_window_view",
        "numpy.lib.stride_tricks.sliding_window_view(x, (2, 3), axis=(0, 1))",
        "3 4 ...",
    ),
    C(
        "rt.sliding_window_view",
        "numpy.lib.stride_tricks.sliding_window_view(x, (2, 2))",
        "3 3",
    ),
    # scipy.integrate
    C("trapezoid", "scipy.integrate.trapezoid(y, x)", {"y": "a", "x": "a"}),
    C("rt.cumulative_trapezoid", "scipy.integrate.cumulative_trapezoid(x)", LAST),
    C(
        "rt.cumulative_trapezoid",
        "scipy.integrate.cumulative_trapezoid(y, x, axis=0, initial=0)",
        {"y": "a b", "x": "a"},
    ),
    C(
        "rt.cumulative_trapezoid",
        "scipy.integrate.cumulative_trapezoid(y, dx=0.3, axis=0)",
        {"y": "a b"},
    ),
    C("rt.special.logsumexp", "jax.scipy.special.logsumexp(x)", U),
    C("rt.special.logsumexp", "jax.nn.logsumexp(x, axis=1, keepdims=True)", "a b ..."),
    C(
        "rt.special.logsumexp",
        "jax.nn.logsumexp(x, axis=-1, where=x > -0.5)",
        "a ...",
        fd=False,
    ),
    C(
        "rt.special.logsumexp",
        "scipy.special.logsumexp(x, 0, y)",
        {"x": "a ...", "y": "a ..."},
        {"y": "positive"},
    ),
    C(
        "rt.special.logsumexp",
        "jax.scipy.special.logsumexp(x, (0, 1), y)",
        {"x": "a b", "y": "b"},
        {"y": "positive"},
    ),
    # jax.lax
    C("rt.lax.rsqrt", "jax.lax.rsqrt(x)", U, "positive"),
    C("rt.lax.clamp", "jax.lax.clamp(-0.5, x, 0.7)", U),
    # (where lo > hi, clamp is hi, but JAX's rule gives hi no slope: compared with JAX, not differences)
    C(
        "rt.lax.clamp",
        "jax.lax.clamp(lo, x, hi)",
        {"lo": "...", "x": "...", "hi": "..."},
        fd=False,
    ),
    C(
        "rt.lax.clamp",
        "jax.lax.clamp(lo, x, hi)",
        {"lo": "...", "x": "...", "hi": "..."},
        "ties",
    ),
    # running extremes: each value's derivative reaches the element it is (no ties in the draws)
    C("rt.lax.cummax", "jax.lax.cummax(x, axis=1)", "a b ..."),
    C("rt.lax.cummax", "jax.lax.cummax(x, reverse=True)", "a ..."),
    C("rt.lax.cummin", "jax.lax.cummin(x)", "a ..."),
    C("rt.lax.integer_pow", "jax.lax.integer_pow(x, 3)", U),
    C("rt.lax.integer_pow", "jax.lax.integer_pow(x, -2)", U, "nonzero"),
    C("rt.lax.integer_pow", "jax.lax.integer_pow(x, 1)", U),
    # no derivative by definition (its value moves: no finite differences)
    C("rt.stop_gradient", "jax.lax.stop_gradient(x)", U, fd=False),
    C("exp", "jax.lax.exp(x)", U),
    C("square", "jax.lax.square(x)", U),
    C("maximum", "jax.lax.max(x, y)", {"x": "...", "y": "..."}, fd=False),
    C("power", "jax.lax.pow(x, y)", {"x": "...", "y": "..."}, "positive"),
    C(
        "where",
        "jax.lax.select(c > 0, x, y)",
        {"c": "...", "x": "...", "y": "..."},
        fd=False,
    ),
    C("arctan2", "jax.lax.atan2(x, y)", {"x": "...", "y": "..."}, "nonzero"),
    C("tanh", "jax.lax.tanh(x)", U),
    # scipy.stats, jax.scipy.stats
    C(
        "rt.stats.norm_logpdf",
        "scipy.stats.norm.logpdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C("rt.stats.norm_logpdf", "jax.scipy.stats.norm.logpdf(x)", U),
    C(
        "rt.stats.norm_pdf",
        "jax.scipy.stats.norm.pdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C("rt.stats.norm_cdf", "scipy.stats.norm.cdf(x, m, s)", DENSITY, POSITIVE_SCALE),
    C(
        "rt.stats.norm_logcdf",
        "jax.scipy.stats.norm.logcdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C(
        "rt.stats.norm_ppf",
        "scipy.stats.norm.ppf(q, m, s)",
        {"q": "~...", "m": "~...", "s": "~..."},
        {"q": "prob", "s": "positive"},
        rtol=1e-6,
    ),
    C(
        "rt.stats.multivariate_normal_logpdf",
        "scipy.stats.multivariate_normal.logpdf(x, m, c)",
        {"x": "n", "m": "n", "c": "n n"},
        {"c": "spd"},
        fd=False,
    ),
    C(
        "rt.stats.multivariate_normal_pdf",
        "jax.scipy.stats.multivariate_normal.pdf(x, m, c)",
        {"x": "k n", "m": "n", "c": "n n"},
        {"c": "spd"},
        fd=False,
    ),
    C(
        "rt.stats.t_logpdf",
        "scipy.stats.t.logpdf(x, d, m, s)",
        {"x": "~...", "d": "~...", "m": "~...", "s": "~..."},
        {"d": "gt1", "s": "positive"},
    ),
    C(
        "rt.stats.t_pdf",
        "jax.scipy.stats.t.pdf(x, d)",
        {"x": "~...", "d": "~..."},
        {"d": "gt1"},
    ),
    C(
        "rt.stats.gamma_logpdf",
        "scipy.stats.gamma.logpdf(x, a)",
        {"x": "~...", "a": "~..."},
        "positive",
    ),
    C(
        "rt.stats.gamma_logpdf",
        "jax.scipy.stats.gamma.logpdf(x, a, m, s)",
        {"x": "~...", "a": "~...", "m": "~...", "s": "~..."},
        {"x": "positive", "a": "positive", "m": "low", "s": "positive"},
    ),
    C(
        "rt.stats.gamma_pdf",
        "jax.scipy.stats.gamma.pdf(x, a)",
        {"x": "~...", "a": "~..."},
        "positive",
    ),
    C(
        "rt.stats.beta_logpdf",
        "scipy.stats.beta.logpdf(x, a, b)",
        {"x": "~...", "a": "~...", "b": "~..."},
        {"x": "prob", "a": "positive", "b": "positive"},
    ),
    C(
        "rt.stats.beta_pdf",
        "jax.scipy.stats.beta.pdf(x, a, b)",
        {"x": "~...", "a": "~...", "b": "~..."},
        {"x": "prob", "a": "positive", "b": "positive"},
    ),
    C(
        "rt.stats.bernoulli_logpmf",
        "scipy.stats.bernoulli.logpmf(1.0, p)",
        {"p": "..."},
        "prob",
    ),
    C(
        "rt.stats.bernoulli_pmf",
        "jax.scipy.stats.bernoulli.pmf(0.0, p)",
        {"p": "..."},
        "prob",
    ),
    C(
        "rt.stats.poisson_logpmf",
        "scipy.stats.poisson.logpmf(3.0, mu)",
        {"mu": "..."},
        "positive",
    ),
    C(
        "rt.stats.poisson_pmf",
        "jax.scipy.stats.poisson.pmf(2.0, mu)",
        {"mu": "..."},
        "positive",
    ),
    C(
        "rt.stats.cauchy_logpdf",
        "scipy.stats.cauchy.logpdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C("rt.stats.cauchy_pdf", "jax.scipy.stats.cauchy.pdf(x)", U),
    C(
        "rt.stats.cauchy_cdf",
        "jax.scipy.stats.cauchy.cdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C(
        "rt.stats.cauchy_logcdf",
        "scipy.stats.cauchy.logcdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C(
        "rt.stats.expon_logpdf",
        "scipy.stats.expon.logpdf(x, 0.0, s)",
        {"x": "~...", "s": "~..."},
        {"x": "positive", "s": "positive"},
    ),
    C("rt.stats.expon_pdf", "jax.scipy.stats.expon.pdf(x)", U, "positive"),
    C(
        "rt.stats.expon_cdf",
        "scipy.stats.expon.cdf(x, scale=s)",
        {"x": "~...", "s": "~..."},
        {"x": "positive", "s": "positive"},
    ),
    C(
        "rt.stats.halfnorm_logpdf",
        "scipy.stats.halfnorm.logpdf(x, m, s)",
        DENSITY,
        {"x": "positive", "s": "positive"},
    ),
    C(
        "rt.stats.halfnorm_pdf",
        "scipy.stats.halfnorm.pdf(x, scale=s)",
        {"x": "~...", "s": "~..."},
        {"x": "positive", "s": "positive"},
    ),
    C("rt.stats.halfnorm_cdf", "scipy.stats.halfnorm.cdf(x)", U, "positive"),
    C(
        "rt.stats.halfcauchy_logpdf",
        "scipy.stats.halfcauchy.logpdf(x, m, s)",
        DENSITY,
        {"x": "positive", "s": "positive"},
    ),
    C(
        "rt.stats.halfcauchy_pdf",
        "scipy.stats.halfcauchy.pdf(x, scale=s)",
        {"x": "~...", "s": "~..."},
        {"x": "positive", "s": "positive"},
    ),
    C("rt.stats.halfcauchy_cdf", "scipy.stats.halfcauchy.cdf(x)", U, "positive"),
    C(
        "rt.stats.invgamma_logpdf",
        "scipy.stats.invgamma.logpdf(x, a, scale=s)",
        {"x": "~...", "a": "~...", "s": "~..."},
        {"x": "positive", "a": "positive", "s": "positive"},
    ),
    C(
        "rt.stats.invgamma_pdf",
        "scipy.stats.invgamma.pdf(x, a)",
        {"x": "~...", "a": "~..."},
        {"x": "positive", "a": "positive"},
    ),
    C(
        "rt.distance.cdist",
        "scipy.spatial.distance.cdist(x, y, metric='sqeuclidean')",
        {"x": "k n", "y": "m n"},
    ),
    C(
        "rt.distance.cdist",
        "scipy.spatial.distance.cdist(x, y)",
        {"x": "k n", "y": "m n"},
    ),
    C(
        "rt.distance.cdist",
        "scipy.spatial.distance.cdist(x, y, 'cityblock')",
        {"x": "k n", "y": "m n"},
    ),
    C("rt.distance.pdist", "scipy.spatial.distance.pdist(x)", {"x": "k n"}),
    C(
        "rt.distance.pdist",
        "scipy.spatial.distance.pdist(x, metric='sqeuclidean')",
        {"x": "k n"},
    ),
    C(
        "rt.distance.squareform",
        "scipy.spatial.distance.squareform(scipy.spatial.distance.pdist(x, 'cityblock'))",
        {"x": "k n"},
    ),
    C(
        "rt.stats.lognorm_logpdf",
        "scipy.stats.lognorm.logpdf(x, s)",
        {"x": "~...", "s": "~..."},
        {"x": "positive", "s": "positive"},
    ),
    C(
        "rt.stats.lognorm_pdf",
        "scipy.stats.lognorm.pdf(x, s, scale=m)",
        {"x": "~...", "s": "~...", "m": "~..."},
        {"x": "positive", "s": "positive", "m": "positive"},
    ),
    C("rt.nn.log_sigmoid", "scipy.special.log_expit(x)", U),
    C(
        "rt.stats.laplace_logpdf",
        "scipy.stats.laplace.logpdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C(
        "rt.stats.laplace_pdf",
        "jax.scipy.stats.laplace.pdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C(
        "rt.stats.laplace_cdf",
        "scipy.stats.laplace.cdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C(
        "rt.stats.logistic_logpdf",
        "scipy.stats.logistic.logpdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C("rt.stats.logistic_pdf", "jax.scipy.stats.logistic.pdf(x)", U),
    C(
        "rt.stats.logistic_cdf",
        "scipy.stats.logistic.cdf(x, m, s)",
        DENSITY,
        POSITIVE_SCALE,
    ),
    C(
        "rt.stats.uniform_logpdf",
        "scipy.stats.uniform.logpdf(x, -2.0, s + 4.0)",
        {"x": "~...", "s": "~..."},
        {"x": "unit", "s": "positive"},
    ),
    C("rt.stats.uniform_pdf", "jax.scipy.stats.uniform.pdf(x, -2.0, 5.0)", U, "unit"),
    # incomplete gamma, zeta and the rest of scipy.special (JAX's own partial where none is closed)
    C(
        "rt.special.gammainc",
        "scipy.special.gammainc(a, x)",
        {"a": "~...", "x": "~..."},
        "positive",
    ),
    C(
        "rt.special.gammaincc",
        "jax.scipy.special.gammaincc(a, x)",
        {"a": "~...", "x": "~..."},
        "positive",
    ),
    C("rt.special.gammainc", "scipy.special.gammainc(1.5, x)", U, "positive"),
    C("rt.special.gammaincc", "jax.scipy.special.gammaincc(2.5, x)", U, "positive"),
    C("rt.special.zeta", "jax.scipy.special.zeta(3.0, q)", {"q": "..."}, "positive"),
    C("rt.special.loggamma", "scipy.special.loggamma(x)", U, "positive"),
    C(
        "rt.special.zeta",
        "jax.scipy.special.zeta(x, q)",
        {"x": "~...", "q": "~..."},
        {"x": "gt1", "q": "positive"},
    ),
    C("rt.special.expn", "scipy.special.expn(2, x)", U, "positive"),
    C("rt.special.dawsn", "jax.scipy.special.dawsn(x)", U),
    C("rt.special.spence", "scipy.special.spence(x)", U, "prob"),
    C("rt.special.sici", "scipy.special.sici(x)[0]", U),
    C("rt.special.sici", "jax.scipy.special.sici(x)[1]", U, "positive"),
    C("rt.special.fresnel", "scipy.special.fresnel(x)[0]", U),
    C("rt.special.fresnel", "jax.scipy.special.fresnel(x)[1]", U),
    C("rt.special.owens_t", "scipy.special.owens_t(h, a)", {"h": "~...", "a": "~..."}),
    C("rt.special.boxcox", "scipy.special.boxcox(x, y)", B, {"x": "positive"}),
    C("rt.special.boxcox", "jax.scipy.special.boxcox(x, 0.0)", U, "positive"),
    C("rt.special.boxcox1p", "scipy.special.boxcox1p(x, y)", B, {"x": "positive"}),
    C("rt.special.comb", "scipy.special.comb(x, 2.0)", U, "gt1"),
]

from op_table_composed import COMPOSED_CASES  # noqa: E402

LIBRARY_CASES += COMPOSED_CASES
