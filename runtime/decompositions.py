"""Shapes and constants the decompositions of NumPy ops read (``np.diff`` as a product, ``np.kron`` as
reshapes, ``np.frexp``'s parts): computed from their operands' shapes and dtypes, no derivative of their own.
"""

import math

import numpy as np

from .arrays import namespace


def diff_weights(a, n=1, axis=-1):
    """The matrix ``w`` with ``moveaxis(a, axis, -1) @ w`` the ``n``-th differences of ``a`` along ``axis``
    (``np.diff``): ``w[i, j]`` is the coefficient of element ``i`` in difference ``j``, in ``a``'s dtype.
    """
    n = int(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    dtype = np.dtype(a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype)
    if dtype == np.dtype(bool):
        raise TypeError(
            "np.diff of booleans (NumPy compares neighbours): write `a[1:] != a[:-1]`"
        )
    length = int(np.shape(a)[axis])
    w = np.zeros((length, max(length - n, 0)), dtype)
    for k in range(n + 1):
        coefficient = (-1) ** (n - k) * math.comb(n, k)
        w[np.arange(k, k + w.shape[1]), np.arange(w.shape[1])] = coefficient
    return w


def diff_edge_shape(a, edge, axis):
    """The shape ``np.diff``'s ``prepend``/``append`` value takes: ``a``'s, one long along ``axis`` for a
    number (broadcast), the value's own length there for an array."""
    shape = list(np.shape(a))
    shape[axis] = 1 if np.ndim(edge) == 0 else np.shape(edge)[axis]
    return tuple(shape)


def kron_shape(a, b, which):
    """Shapes for ``np.kron(a, b)`` as a product of reshapes: ``a``'s with a unit axis after each of its axes
    (``which`` 0), ``b``'s with one before each (1), the result's (2); the lower rank padded with ones.
    """
    sa, sb = tuple(np.shape(a)), tuple(np.shape(b))
    rank = max(len(sa), len(sb))
    sa, sb = (1,) * (rank - len(sa)) + sa, (1,) * (rank - len(sb)) + sb
    if which == 0:
        return tuple(d for n in sa for d in (n, 1))
    if which == 1:
        return tuple(d for n in sb for d in (1, n))
    return tuple(p * q for p, q in zip(sa, sb))


def frexp_exponent(x):
    """The integer exponent ``e`` of ``x = m * 2 ** e`` (``np.frexp``'s second result)."""
    return namespace(x).frexp(x)[1]


def frexp_scale(x):
    """``2 ** -e`` for ``np.frexp``'s exponent ``e`` of ``x``: the factor that gives its mantissa."""
    xp = namespace(x)
    mantissa, exponent = xp.frexp(x)
    return xp.ldexp(xp.ones_like(mantissa), -exponent)


def pad_border(like, pad_width, side=None, axis=None):
    """The border ``np.pad(like, pad_width)`` adds, as ones where the constant of ``side`` (0: before, 1:
    after; None: both) of ``axis`` (None: every axis) lands and zeros elsewhere, in ``like``'s floating
    dtype: ``np.pad(x, w, constant_values=c)`` is ``np.pad(x, w) + c * pad_border(x, w)``, and with a
    value per side (and axis) the sum of such terms (NumPy writes each border cell with one of them).
    """
    shape = np.shape(like)
    indicator = np.zeros((len(shape), 2))
    sides = [0, 1] if side is None else [side]
    for k in range(len(shape)) if axis is None else [axis]:
        indicator[k, sides] = 1.0
    dtype = np.result_type(getattr(like, "dtype", float), float)
    return np.pad(np.zeros(shape, dtype), pad_width, constant_values=indicator)
