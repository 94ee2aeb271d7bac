"""Splitting, joining, deleting, inserting and counting written as compositions of ops with rules
(``decompose``): ``array_split``, ``hsplit``, ``vsplit``, ``dsplit``, ``rollaxis``, ``delete``, ``insert``,
``bincount``, the items of ``np.r_``/``np.c_`` (``rt.concatenated_item``) and
``np.fill_diagonal`` (``rt.fill_diagonal``, the value of the array it writes: ``frontend/effects.py``).

Positions and shapes come from ``runtime/joins.py`` helpers, which read static
shapes and Python values only (positions computed from data are refused, as
JAX refuses them under ``jit``); the data flows through ``split``, ``take``,
``concatenate``, ``reshape`` and index updates, so each function
gets its forward, reverse and batching rules from theirs.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import batch, decompose, nondiff

_HELPERS = tuple(
    f"rt.{name}"
    for name in (
        "concatenated_item_shape", "split_points", "split_axis", "rollaxis_destination", "flat_unless_axis",
        "axis_or_first", "kept_positions", "insert_values_layout", "insert_order", "diagonal_positions",
        "bincount_length",
    )
)  # fmt: skip
nondiff("shape logic: static shapes, axes and positions", *_HELPERS)
batch("example", *_HELPERS)


@decompose(name="rt.concatenated_item")
def concatenated_item(a, ndmin, trans1d):
    return xp.reshape(a, rt.concatenated_item_shape(a, ndmin, trans1d))


@decompose
def array_split(ary, indices_or_sections, axis=0):
    return xp.split(ary, rt.split_points(ary, indices_or_sections, axis), axis=axis)


@decompose
def hsplit(ary, indices_or_sections):
    return xp.split(ary, indices_or_sections, axis=rt.split_axis(ary, 1, "hsplit"))


@decompose
def vsplit(ary, indices_or_sections):
    return xp.split(ary, indices_or_sections, axis=rt.split_axis(ary, 0, "vsplit"))


@decompose
def dsplit(ary, indices_or_sections):
    return xp.split(ary, indices_or_sections, axis=rt.split_axis(ary, 2, "dsplit"))


@decompose
def rollaxis(a, axis, start=0):
    return xp.moveaxis(a, axis, rt.rollaxis_destination(a, axis, start))


@decompose
def delete(arr, obj, axis=None):
    flat = xp.reshape(arr, rt.flat_unless_axis(arr, axis))
    return xp.take(flat, rt.kept_positions(arr, obj, axis), axis=rt.axis_or_first(axis))


@decompose
def insert(arr, obj, values, axis=None):
    # NumPy's: ``values`` (cast to ``arr``'s dtype) shaped into the block of new items, which the
    # positions then interleave with ``arr``'s along the axis
    flat = xp.reshape(arr, rt.flat_unless_axis(arr, axis))
    along = rt.axis_or_first(axis)
    padded, axes, block = rt.insert_values_layout(flat, obj, values, along)
    items = xp.broadcast_to(xp.transpose(xp.reshape(values, padded), axes), block)
    joined = xp.concatenate([flat, xp.astype(items, flat.dtype)], axis=along)
    return xp.take(joined, rt.insert_order(flat, obj, values, along), axis=along)


@decompose
def bincount(x, weights=None, minlength=0, length=None):
    bins = rt.bincount_length(x, minlength, length)
    if weights is None:
        return rt.index_add(xp.zeros(bins, dtype=xp.asarray(x).dtype), xp.asarray(x), 1)
    return rt.index_add(xp.zeros(bins), xp.asarray(x), weights)


@decompose(name="rt.fill_diagonal")
def fill_diagonal(a, val, wrap=False, *, inplace=False):
    # NumPy's: ``val``, repeated as needed, written at every ``shape[1] + 1``-th flat position (the value
    # of ``jnp.fill_diagonal(a, val, inplace=False)``)
    positions = rt.diagonal_positions(a, wrap)
    values = xp.resize(xp.ravel(val), xp.shape(positions))
    return xp.reshape(rt.index_set(xp.ravel(a), positions, values), xp.shape(a))
