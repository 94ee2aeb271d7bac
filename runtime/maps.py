"""Rows of an array along an axis, and back: ``np.apply_along_axis(f, axis, arr)`` read as ``jax.vmap``
of ``f`` over ``rows_along(arr, axis)``, its results put back by ``rows_back`` (``frontend/numpy_maps``).
"""

from __future__ import annotations

import numpy as np

from .arrays import namespace


def rows_shape_along(arr, axis):
    """The shape of ``arr``'s lines along ``axis``, one per row: ``(-1, arr.shape[axis])``."""
    return (-1, np.shape(arr)[axis])


def rows_back_shape(out, arr, axis):
    """``arr``'s shape without ``axis``, then the shape of one of ``f``'s results (none, or one axis)."""
    shape = list(np.shape(arr))
    del shape[axis]
    each = tuple(np.shape(out)[1:])
    if len(each) > 1:
        raise ValueError(
            "np.apply_along_axis: s2s maps functions that return a number or a 1-D array; "
            f"this one returns arrays of shape {each}"
        )
    return (*shape, *each)


def rows_back_axis(out, arr, axis):
    """Where ``f``'s result axis goes: ``axis`` (NumPy's place for it), or nowhere (-1 stays -1)."""
    return axis % np.ndim(arr) if np.ndim(out) > 1 else -1


def rows_along(arr, axis):
    """``arr``'s lines along ``axis`` as the rows of a 2-D array."""
    xp = namespace(arr)
    return xp.reshape(xp.moveaxis(arr, axis, -1), rows_shape_along(arr, axis))


def rows_back(out, arr, axis):
    """The results of ``f`` on ``rows_along(arr, axis)``, shaped as ``np.apply_along_axis`` gives them."""
    xp = namespace(out)
    shaped = xp.reshape(out, rows_back_shape(out, arr, axis))
    return xp.moveaxis(shaped, -1, rows_back_axis(out, arr, axis))
