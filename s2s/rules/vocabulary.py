"""Library functions s2s knows, by the op they are: op name -> the spellings that reach it.

The resolver (``s2s/frontend/identity.py``) imports each spelling and keys
the object it finds, so any other way of reaching the same object resolves
too (``from jax.nn import relu``, ``jax._src.nn.functions.relu``). Spellings
of one op have the same semantics: ``jax.nn.sigmoid``, ``jax.lax.logistic``
and ``scipy.special.expit`` are one op. A ``scipy.stats`` spelling is a method
of a distribution object (``norm.logpdf``): it is keyed by the object and the
method. Spellings whose library is not installed are skipped.

Ops named ``rt.<...>`` are spelled so in generated code (the runtime runs
JAX's function on JAX values, see ``runtime/library.py``); the others are
``xp.<op>``, the NumPy op of that name (``lax.exp`` is ``xp.exp``).
"""

from __future__ import annotations


def _stats(op: str, *functions: str) -> dict[str, tuple[str, ...]]:
    """``rt.stats.norm_logpdf``: ``jax.scipy.stats.norm.logpdf`` and ``scipy.stats.norm.logpdf``."""
    out = {}
    for function in functions:
        path = f"scipy.stats.{op}.{function}"
        out[f"rt.stats.{op}_{function}"] = (f"jax.{path}", path)
    return out


LIBRARY: dict[str, tuple[str, ...]] = {
    # jax.numpy functions whose NumPy twin writes in place (``frontend/effects.py``)
    "rt.fill_diagonal": ("jax.numpy.fill_diagonal",),
    "rt.polydiv": ("jax.numpy.polydiv",),  # the remainder keeps its leading zeros
    # jax.ops: segment reductions
    "rt.ops.segment_sum": ("jax.ops.segment_sum",),
    "rt.ops.segment_max": ("jax.ops.segment_max",),
    "rt.ops.segment_min": ("jax.ops.segment_min",),
    # jax.nn
    "rt.nn.relu": ("jax.nn.relu",),
    "rt.nn.relu6": ("jax.nn.relu6",),
    "rt.nn.sigmoid": (
        "jax.nn.sigmoid",
        "jax.lax.logistic",
        "jax.scipy.special.expit",
        "scipy.special.expit",
    ),
    "rt.nn.softmax": ("jax.nn.softmax",),
    "rt.nn.one_hot": ("jax.nn.one_hot",),
    "rt.nn.softplus": ("jax.nn.softplus",),
    "rt.nn.log_sigmoid": ("jax.nn.log_sigmoid", "scipy.special.log_expit"),
    "rt.nn.silu": ("jax.nn.silu", "jax.nn.swish"),
    "rt.nn.mish": ("jax.nn.mish",),
    "rt.nn.soft_sign": ("jax.nn.soft_sign",),
    "rt.nn.sparse_plus": ("jax.nn.sparse_plus",),
    "rt.nn.sparse_sigmoid": ("jax.nn.sparse_sigmoid",),
    "rt.nn.squareplus": ("jax.nn.squareplus",),
    "rt.nn.elu": ("jax.nn.elu",),
    "rt.nn.selu": ("jax.nn.selu",),
    "rt.nn.celu": ("jax.nn.celu",),
    "rt.nn.leaky_relu": ("jax.nn.leaky_relu",),
    "rt.nn.hard_tanh": ("jax.nn.hard_tanh",),
    "rt.nn.hard_sigmoid": ("jax.nn.hard_sigmoid",),
    "rt.nn.hard_silu": ("jax.nn.hard_silu", "jax.nn.hard_swish"),
    "rt.nn.gelu": ("jax.nn.gelu",),
    "rt.nn.glu": ("jax.nn.glu",),
    "rt.nn.log_softmax": ("jax.nn.log_softmax",),
    "rt.nn.standardize": ("jax.nn.standardize",),
    "rt.nn.identity": ("jax.nn.identity",),
    "rt.nn.log1mexp": ("jax.nn.log1mexp",),
    "rt.nn.logmeanexp": ("jax.nn.logmeanexp",),
    "rt.nn.dot_product_attention": ("jax.nn.dot_product_attention",),
    # scipy.special, jax.scipy.special (and the lax primitives they are)
    "rt.special.logsumexp": (
        "jax.nn.logsumexp",
        "jax.scipy.special.logsumexp",
        "scipy.special.logsumexp",
    ),
    "rt.special.erf": (
        "jax.scipy.special.erf",
        "jax.lax.erf",
        "scipy.special.erf",
        "math.erf",
    ),
    "rt.special.erfc": (
        "jax.scipy.special.erfc",
        "jax.lax.erfc",
        "scipy.special.erfc",
        "math.erfc",
    ),
    "rt.special.erfinv": (
        "jax.scipy.special.erfinv",
        "jax.lax.erf_inv",
        "scipy.special.erfinv",
    ),
    "rt.special.gammaln": (
        "jax.scipy.special.gammaln",
        "jax.lax.lgamma",
        "scipy.special.gammaln",
        "math.lgamma",
    ),
    "rt.special.digamma": (
        "jax.scipy.special.digamma",
        "jax.lax.digamma",
        "scipy.special.digamma",
        "scipy.special.psi",
    ),
    "rt.special.polygamma": (
        "jax.scipy.special.polygamma",
        "jax.lax.polygamma",
        "scipy.special.polygamma",
    ),
    "rt.special.ndtr": ("jax.scipy.special.ndtr", "scipy.special.ndtr"),
    "rt.special.ndtri": ("jax.scipy.special.ndtri", "scipy.special.ndtri"),
    "rt.special.log_ndtr": ("jax.scipy.special.log_ndtr", "scipy.special.log_ndtr"),
    "rt.special.xlogy": ("jax.scipy.special.xlogy", "scipy.special.xlogy"),
    "rt.special.xlog1py": ("jax.scipy.special.xlog1py", "scipy.special.xlog1py"),
    "rt.special.logit": ("jax.scipy.special.logit", "scipy.special.logit"),
    "rt.special.entr": ("jax.scipy.special.entr", "scipy.special.entr"),
    "rt.cumulative_trapezoid": ("scipy.integrate.cumulative_trapezoid",),
    "rt.sliding_window_view": ("numpy.lib.stride_tricks.sliding_window_view",),
    "rt.top_k": ("jax.lax.top_k",),
    # what ``frontend/numpy_maps.py`` writes ``np.apply_along_axis`` with
    "rt.rows_along": ("s2s.runtime.maps.rows_along",),
    "rt.rows_back": ("s2s.runtime.maps.rows_back",),
    "trapezoid": ("scipy.integrate.trapezoid", "jax.scipy.integrate.trapezoid"),
    "rt.special.gamma": (
        "jax.scipy.special.gamma",
        "scipy.special.gamma",
        "math.gamma",
    ),
    "rt.special.beta": ("jax.scipy.special.beta", "scipy.special.beta"),
    "rt.special.betaln": ("jax.scipy.special.betaln", "scipy.special.betaln"),
    "rt.special.poch": ("jax.scipy.special.poch", "scipy.special.poch"),
    "rt.special.erfcx": ("jax.scipy.special.erfcx", "scipy.special.erfcx"),
    "rt.special.gammainc": ("jax.scipy.special.gammainc", "scipy.special.gammainc"),
    "rt.special.gammaincc": ("jax.scipy.special.gammaincc", "scipy.special.gammaincc"),
    "rt.special.loggamma": ("jax.scipy.special.loggamma", "scipy.special.loggamma"),
    "rt.special.zeta": ("jax.scipy.special.zeta", "scipy.special.zeta"),
    "rt.special.expn": ("jax.scipy.special.expn", "scipy.special.expn"),
    "rt.special.dawsn": ("jax.scipy.special.dawsn", "scipy.special.dawsn"),
    "rt.special.spence": ("jax.scipy.special.spence", "scipy.special.spence"),
    "rt.special.sici": ("jax.scipy.special.sici", "scipy.special.sici"),
    "rt.special.fresnel": ("jax.scipy.special.fresnel", "scipy.special.fresnel"),
    "rt.special.owens_t": ("jax.scipy.special.owens_t", "scipy.special.owens_t"),
    "rt.special.boxcox": ("jax.scipy.special.boxcox", "scipy.special.boxcox"),
    "rt.special.boxcox1p": ("jax.scipy.special.boxcox1p", "scipy.special.boxcox1p"),
    "rt.special.comb": ("jax.scipy.special.comb", "scipy.special.comb"),
    "rt.special.gammasgn": ("jax.scipy.special.gammasgn", "scipy.special.gammasgn"),
    "rt.special.expi": ("jax.scipy.special.expi", "scipy.special.expi"),
    "rt.special.exp1": ("jax.scipy.special.exp1", "scipy.special.exp1"),
    "rt.special.i0e": (
        "jax.scipy.special.i0e",
        "scipy.special.i0e",
        "jax.lax.bessel_i0e",
    ),
    "rt.special.i1e": (
        "jax.scipy.special.i1e",
        "scipy.special.i1e",
        "jax.lax.bessel_i1e",
    ),
    "i0": ("jax.scipy.special.i0", "scipy.special.i0"),
    "rt.special.i1": ("jax.scipy.special.i1", "scipy.special.i1"),
    "rt.special.factorial": ("jax.scipy.special.factorial", "scipy.special.factorial"),
    "rt.special.multigammaln": (
        "jax.scipy.special.multigammaln",
        "scipy.special.multigammaln",
    ),
    "rt.special.rel_entr": ("jax.scipy.special.rel_entr", "scipy.special.rel_entr"),
    "rt.special.kl_div": ("jax.scipy.special.kl_div", "scipy.special.kl_div"),
    "rt.special.softmax": ("jax.scipy.special.softmax", "scipy.special.softmax"),
    "rt.special.log_softmax": (
        "jax.scipy.special.log_softmax",
        "scipy.special.log_softmax",
    ),
    # scipy.linalg, jax.scipy.linalg
    "rt.solve_triangular": (
        "jax.scipy.linalg.solve_triangular",
        "scipy.linalg.solve_triangular",
    ),
    "rt.cho_solve": ("jax.scipy.linalg.cho_solve", "scipy.linalg.cho_solve"),
    "rt.scipy_cholesky": ("jax.scipy.linalg.cholesky", "scipy.linalg.cholesky"),
    "rt.cho_factor": ("jax.scipy.linalg.cho_factor", "scipy.linalg.cho_factor"),
    # jax.lax ops NumPy lacks
    "rt.lax.rsqrt": ("jax.lax.rsqrt",),
    "rt.lax.clamp": ("jax.lax.clamp",),
    "rt.lax.cummax": ("jax.lax.cummax",),
    "rt.lax.cummin": ("jax.lax.cummin",),
    "rt.lax.integer_pow": ("jax.lax.integer_pow",),
    "rt.stop_gradient": ("jax.lax.stop_gradient", "s2s.stop_gradient"),
    # collectives (in a function vmapped with an axis name)
    "rt.psum": ("jax.lax.psum", "s2s.psum"),
    "rt.pmean": ("jax.lax.pmean", "s2s.pmean"),
    "rt.pmax": ("jax.lax.pmax", "s2s.pmax"),
    "rt.pmin": ("jax.lax.pmin", "s2s.pmin"),
    "rt.axis_index": ("jax.lax.axis_index", "s2s.axis_index"),
    # jax.lax ops that are NumPy's (lax is stricter: same shapes and dtypes; the values agree)
    "add": ("jax.lax.add",),
    "subtract": ("jax.lax.sub",),
    "multiply": ("jax.lax.mul",),
    "negative": ("jax.lax.neg",),
    "maximum": ("jax.lax.max",),
    "minimum": ("jax.lax.min",),
    "power": ("jax.lax.pow",),
    "abs": ("jax.lax.abs",),
    "sign": ("jax.lax.sign",),
    "floor": ("jax.lax.floor",),
    "ceil": ("jax.lax.ceil",),
    "square": ("jax.lax.square",),
    "sqrt": ("jax.lax.sqrt",),
    "exp": ("jax.lax.exp",),
    "expm1": ("jax.lax.expm1",),
    "log": ("jax.lax.log",),
    "log1p": ("jax.lax.log1p",),
    "sin": ("jax.lax.sin",),
    "cos": ("jax.lax.cos",),
    "tan": ("jax.lax.tan",),
    "arcsin": ("jax.lax.asin",),
    "arccos": ("jax.lax.acos",),
    "arctan": ("jax.lax.atan",),
    "arctan2": ("jax.lax.atan2",),
    "sinh": ("jax.lax.sinh",),
    "cosh": ("jax.lax.cosh",),
    "tanh": ("jax.lax.tanh", "jax.nn.tanh"),
    "arcsinh": ("jax.lax.asinh",),
    "arccosh": ("jax.lax.acosh",),
    "arctanh": ("jax.lax.atanh",),
    "where": ("jax.lax.select",),
    "isfinite": ("jax.lax.is_finite",),
    "less": ("jax.lax.lt",),
    "less_equal": ("jax.lax.le",),
    "greater": ("jax.lax.gt",),
    "greater_equal": ("jax.lax.ge",),
    "equal": ("jax.lax.eq",),
    "not_equal": ("jax.lax.ne",),
    # scipy.stats, jax.scipy.stats
    **_stats("norm", "logpdf", "pdf", "logcdf", "cdf", "ppf"),
    **_stats("multivariate_normal", "logpdf", "pdf"),
    **_stats("t", "logpdf", "pdf"),
    **_stats("gamma", "logpdf", "pdf"),
    **_stats("beta", "logpdf", "pdf"),
    **_stats("bernoulli", "logpmf", "pmf"),
    **_stats("poisson", "logpmf", "pmf"),
    **_stats("cauchy", "logpdf", "pdf", "logcdf", "cdf"),
    **_stats("expon", "logpdf", "pdf", "cdf"),
    **_stats("laplace", "logpdf", "pdf", "cdf"),
    **_stats("halfnorm", "logpdf", "pdf", "cdf"),
    **_stats("halfcauchy", "logpdf", "pdf", "cdf"),
    **_stats("invgamma", "logpdf", "pdf"),
    **_stats("lognorm", "logpdf", "pdf"),
    **_stats("logistic", "logpdf", "pdf", "cdf"),
    **_stats("uniform", "logpdf", "pdf"),
    # scipy.spatial.distance
    "rt.distance.cdist": ("scipy.spatial.distance.cdist",),
    "rt.distance.pdist": ("scipy.spatial.distance.pdist",),
    "rt.distance.squareform": ("scipy.spatial.distance.squareform",),
}

# library functions of arrays (not of trees, as ``rt.psum`` is): their operands and results are arrays
ARRAY_FUNCTIONS = frozenset(
    op
    for op in LIBRARY
    if op.startswith(("rt.nn.", "rt.special.", "rt.lax.", "rt.stats.", "rt.distance."))
)


def user_spelling(op: str) -> str:
    """How users write the op (its first spelling: ``jax.nn.gelu`` for ``rt.nn.gelu``), for messages."""
    return LIBRARY.get(op, (op,))[0]
