"""Ops whose outputs carry no derivative (JAX's gradient through them is zero or undefined)."""

import numpy as np

from .registry import no_derivative, nondiff

# elementwise ops without a derivative, by kind (``batching.py`` batches them elementwise)
COMPARISONS = ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
LOGICAL = ("logical_and", "logical_or", "logical_not", "logical_xor")
BITWISE = (
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "invert",
    "left_shift",
    "right_shift",
)

nondiff("comparison", *COMPARISONS)
nondiff("boolean-valued", *LOGICAL)
nondiff("bitwise: integer- or boolean-valued (`(x > 0) & (x < 2)`)", *BITWISE)
nondiff("identity and membership: a Python bool", "is", "is_not", "in", "not_in")
nondiff("boolean-valued", "isnan", "isfinite", "isinf", "all", "any")
nondiff("boolean-valued", "signbit", "isneginf", "isposinf", "isclose")
nondiff(
    "piecewise constant: zero derivative almost everywhere",
    "sign",
    "floor",
    "ceil",
    "round",
    "trunc",
    "rint",
)
nondiff("piecewise constant: zero derivative almost everywhere", "floor_divide")
nondiff("integer-valued", "argmax", "argmin", "argsort", "nonzero", "count_nonzero")
nondiff("integer-valued", "searchsorted", "digitize")
nondiff("integer-valued: positions", "unravel_index", "ravel_multi_index")
nondiff("shape query", "shape", "ndim", "size")
nondiff("a Python bool: whether a value is a scalar (`if np.isscalar(y):`)", "isscalar")
nondiff("dtype query: `np.finfo(x.dtype).eps`", "finfo", "iinfo")
nondiff("dtype query: the dtype arrays promote to", "result_type")
nondiff(
    "constructor: its value does not depend on differentiable inputs",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "empty",
    "empty_like",
    "eye",
    "identity",
)
no_derivative(
    "its values are start + step * i: JAX needs start and step concrete (write start + step * np.arange(n))",
    np.arange,
    "arange",
)


def _nextafter(x1, x2, /):
    """NumPy's ufunc ``nextafter``'s signature."""


def _spacing(x, /):
    """NumPy's ufunc ``spacing``'s signature."""


no_derivative("the next float: JAX defines no derivative", _nextafter, "nextafter")
no_derivative(
    "the gap to the next float: JAX defines no derivative", _spacing, "spacing"
)
# array, asarray, full and full_like carry their data's derivative: see linear.py.
