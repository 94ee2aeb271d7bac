"""Batched twins of NumPy ops whose meaning depends on an example's rank (``hstack``, ``diag``, ``tile``,
``pad``, ``asarray`` of a list): each is the op applied to every example, the batch axis at 0.
"""

from __future__ import annotations

import numpy as np

from .arrays import namespace
from .batch_axes import batch_shape, lift, shape_rank
from .masked import _check_mask


def _example_rank(x) -> int:
    return np.ndim(x) - 1


def asarray(data, dtype=None):
    """``asarray`` per example: an array as it is; a list or tuple of batched values stacked after the
    batch axis (nested lists too)."""
    if isinstance(data, (list, tuple)):
        parts = [asarray(d) for d in data]
        xp = namespace(*parts)
        out = xp.stack(parts, axis=1)
    else:
        xp = namespace(data)
        out = xp.asarray(data)
    return out if dtype is None else out.astype(dtype)


def full(shape, fill_value, dtype, size):
    """``full(shape, fill_value)`` per example, the fill value batched."""
    xp = namespace(fill_value)
    out = xp.broadcast_to(
        lift(xp.asarray(fill_value), shape_rank(shape)), batch_shape(shape, size)
    )
    return out if dtype is None else out.astype(dtype)


def full_like(a, fill_value, dtype, batched, size):
    """``full_like(a, fill_value)`` per example."""
    a_batched, fill_batched = batched
    xp = namespace(a, fill_value)
    shape = tuple(np.shape(a)[1:]) if a_batched else tuple(np.shape(a))
    fill = lift(xp.asarray(fill_value), len(shape)) if fill_batched else fill_value
    out = xp.broadcast_to(fill, (size, *shape))
    return out.astype(dtype if dtype is not None else xp.result_type(a))


def tile(a, reps):
    """``tile(a, reps)`` per example: ``reps`` padded to the example's rank, the batch axis repeated once."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    rank = max(len(reps), _example_rank(a))
    a = lift(a, rank)
    reps = (1,) * (rank - len(reps)) + reps
    return namespace(a).tile(a, (1, *reps))


def hstack(tup):
    """``hstack`` per example: 1-d examples joined along their axis, others along their second."""
    xp = namespace(*tup)
    parts = [lift(t, 1) for t in tup]
    return xp.concatenate(parts, axis=1 if _example_rank(parts[0]) == 1 else 2)


def vstack(tup):
    """``vstack`` per example: examples made at least 2-d, then joined along their first axis."""
    xp = namespace(*tup)
    parts = [lift(t, 2) for t in tup]
    return xp.concatenate(parts, axis=1)


def column_stack(tup):
    """``column_stack`` per example: 1-d (and 0-d) examples made columns, then joined along their second axis."""
    xp = namespace(*tup)
    parts = [
        (
            t
            if _example_rank(t) >= 2
            else xp.reshape(lift(t, 1), (*np.shape(lift(t, 1)), 1))
        )
        for t in tup
    ]
    return xp.concatenate(parts, axis=2)


def dstack(tup):
    """``dstack`` per example: examples made at least 3-d as ``np.atleast_3d`` does, joined along their third."""
    xp = namespace(*tup)
    parts = []
    for t in tup:
        rank, t = _example_rank(t), lift(t, 1)
        if rank <= 1:
            t = xp.reshape(t, (np.shape(t)[0], 1, np.shape(t)[1], 1))
        elif rank == 2:
            t = xp.expand_dims(t, -1)
        parts.append(t)
    return xp.concatenate(parts, axis=3)


def pad_width(width, x):
    """A per-example ``pad_width`` with no padding for the batch axis in front."""
    rank = _example_rank(x)
    per = np.broadcast_to(
        (
            np.asarray(width, dtype=int).reshape(-1, 2)
            if np.ndim(width)
            else np.full((1, 2), width)
        ),
        (rank, 2),
    )
    return ((0, 0), *(tuple(int(v) for v in row) for row in per))


def diag(v, k=0):
    """``diag`` per example: a 1-d example's diagonal matrix, a 2-d example's diagonal."""
    xp = namespace(v)
    if _example_rank(v) == 2:
        return xp.diagonal(v, k, axis1=1, axis2=2)
    size, n = np.shape(v)
    m = n + abs(k)
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    out = xp.zeros((size, m, m), dtype=xp.result_type(v))
    if hasattr(out, "at"):
        return out.at[:, rows, cols].set(v)
    out[:, rows, cols] = v
    return out


def reshape(a, shape, order="C"):
    """``reshape(a, shape, order)`` per example; Fortran order with the batch axis last, where F-order
    keeps each example's elements together."""
    xp = namespace(a)
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    size = np.shape(a)[0]
    if order != "F":
        return xp.reshape(a, (size, *shape), order=order)
    moved = xp.moveaxis(a, 0, -1)
    return xp.moveaxis(xp.reshape(moved, (*shape, size), order="F"), -1, 0)


def convolve(a, v, mode, batched):
    """``convolve(a_i, v_i, mode)`` per example (1-d examples, either operand batched): the full convolution
    as one einsum of ``a`` against a band gathered from ``v``, then the mode's window of it.
    """
    from .linalg import convolve_window

    fa, fv = batched
    xp = namespace(a, v)
    if np.ndim(a) - fa != 1 or np.ndim(v) - fv != 1:
        raise ValueError("convolve: each example's operands must be 1-d arrays")
    n, m = int(np.shape(a)[-1]), int(np.shape(v)[-1])
    shift = (
        np.arange(n + m - 1)[:, None] - np.arange(n)[None, :]
    )  # [k, i]: v's index in out[k]'s term i
    inside = (shift >= 0) & (shift < m)
    band = xp.where(inside, xp.take(v, np.clip(shift, 0, m - 1), axis=-1), 0)
    spec = ("z" if fv else "") + "ki," + ("z" if fa else "") + "i->zk"
    start, length = convolve_window(n, m, mode)
    return xp.einsum(spec, band, a)[:, start : start + length]


def last_axis_padding(g, a, v, mode):
    """``pad``'s width for a batched cotangent ``g`` of ``convolve(a_i, v_i, mode)``: the examples' last axis
    padded back to the full convolution's length, the batch axis not."""
    from .linalg import convolve_padding

    return ((0, 0),) * (np.ndim(g) - 1) + (convolve_padding(a, v, mode),)


def leading_mask(mask, x, batched):
    """``rt.leading_mask`` per example: unit axes for the axes of ``x``'s examples past the mask's."""
    mask_batched, x_batched = batched
    xp = namespace(mask, x)
    kept = xp.asarray(mask) != 0
    _check_mask(np.shape(kept)[mask_batched:], np.shape(x)[x_batched:])
    if (
        x_batched and not mask_batched
    ):  # one mask for every example: it gets the batch axis too
        kept = xp.broadcast_to(kept, (np.shape(x)[0], *np.shape(kept)))
        mask_batched = 1
    extra = (np.ndim(x) - x_batched) - (np.ndim(kept) - mask_batched)
    return xp.reshape(kept, (*np.shape(kept), *(1,) * extra)) if extra > 0 else kept


def span_mask(x, start, stop, keys=(), batched=(False, False, False, False)):
    """``rt.span_mask`` per example: a bound per example gives each its own positions."""
    from .masked import _check_keys, _slice_bound

    x_batched, start_batched, stop_batched = batched[:3]
    _check_keys(keys, int(bool(batched[3:] and batched[3])))
    n = np.shape(x)[1 if x_batched else 0]
    size = next(
        (
            np.shape(v)[0]
            for v, b in zip((x, start, stop), batched)
            if b and v is not None
        ),
        None,
    )
    if size is None:  # only a key is per example: the same positions for every example
        size = next(np.shape(k)[0] for k in keys if np.ndim(k))
    xp = namespace(*(v for v in (x, start, stop) if v is not None))
    positions = xp.arange(n)

    def per_example(bound, is_batched, default):
        if bound is None:
            return default
        bound = _slice_bound(xp, xp.asarray(bound), n)
        return bound[:, None] if is_batched else bound

    low = per_example(start, start_batched, 0)
    high = per_example(stop, stop_batched, n)
    kept = (positions >= low) & (positions < high)
    return xp.broadcast_to(kept, (size, n))


def contracted_selection(mask, x, rows, batched):
    """``rt.contracted_selection`` per example."""
    from .masked import contracted_selection as one

    mask_batched, x_batched = batched[:2]
    one(
        np.zeros(np.shape(mask)[mask_batched:], bool),
        np.zeros(np.shape(x)[x_batched:]),
        rows,
    )
    return leading_mask(mask, x, (mask_batched, x_batched))


def unit_axes_mask(mask, x, batched):
    """``rt.unit_axes_mask`` per example."""
    from .masked import unit_axes_mask as one

    mask_batched, x_batched = batched
    one(
        np.zeros(np.shape(mask)[mask_batched:], bool), np.zeros(np.shape(x)[x_batched:])
    )
    return leading_mask(mask, x, batched)


def selected_fill(x, kept, batched):
    """``rt.selected_fill`` per example: each example's first kept value, with unit axes to broadcast."""
    x_batched, kept_batched = batched
    xp = namespace(x, kept)
    size = np.shape(x)[0] if x_batched else np.shape(kept)[0]
    if not x_batched:
        x = xp.broadcast_to(x, (size, *np.shape(x)))
    example = np.shape(x)[1:]
    if not kept_batched:
        kept = xp.broadcast_to(kept, example)[None]
    full = xp.reshape(xp.broadcast_to(kept, (size, *example)), (size, -1))
    first = xp.argmax(full, axis=1)
    values = xp.take_along_axis(xp.reshape(x, (size, -1)), first[:, None], axis=1)[:, 0]
    found = xp.take_along_axis(full, first[:, None], axis=1)[:, 0]
    values = xp.where(found, values, xp.zeros_like(values))
    return xp.reshape(values, (size,) + (1,) * len(example))


def selection(x, index, fill, batched):
    """``rt.selection`` per example: a mask (each example's, or one for all) keeps the shape; positions
    gather."""
    from .batched_indexing import getitem
    from .selections import is_mask_key

    x_batched, index_batched = batched
    if not is_mask_key(index, index_batched is True):
        return getitem(x, index, (x_batched, index_batched))
    xp = namespace(x, index)
    kept = leading_mask(index, x, (index_batched, x_batched))
    if fill:
        dropped = selected_fill(x, kept, (x_batched, True))
    else:
        dropped = xp.zeros((), xp.result_type(x))
    return xp.where(kept, x, dropped)


def selection_vjp(ct, x, index, batched):
    """``rt.selection_vjp`` per example."""
    from . import batched_indexing
    from .selections import is_mask_key
    from .trees import tree_zeros_like

    ct_batched, x_batched, index_batched = batched
    if not is_mask_key(index, index_batched is True):
        flags = (x_batched, index_batched, ct_batched)
        return batched_indexing.index_add(tree_zeros_like(x), index, ct, flags)
    xp = namespace(ct, index)
    if index_batched or x_batched:
        kept = leading_mask(index, x, (index_batched, x_batched))
    else:  # only the cotangent is per example: the mask lines up with its examples' axes
        from .masked import leading_mask as one

        kept = one(index, x)
    return xp.where(kept, ct, xp.zeros((), xp.result_type(ct)))


def selection_mask(index, x, batched, size):
    """``rt.selection_mask`` per example: a mask's kept elements, or all of them (unit axes)."""
    from .selections import is_mask_key

    index_batched, x_batched = batched
    if is_mask_key(index, index_batched):
        return leading_mask(index, x, batched)
    return np.ones((size,) + (1,) * (np.ndim(x) - x_batched), bool)


def selection_length(index, x, batched, size):
    """``rt.selection_length`` per example."""
    from .selections import is_mask_key
    from .selections import selection_length as one

    index_batched, x_batched = batched
    xp = namespace(index, x)
    if index_batched and is_mask_key(index, True):
        return xp.count_nonzero(xp.reshape(index, (size, -1)), axis=1)
    if index_batched:  # positions per example
        length = (
            np.shape(index)[1] if np.ndim(index) > 1 else np.shape(x)[1 + x_batched]
        )
    else:
        length = one(index, xp.zeros(np.shape(x)[x_batched:], bool))
    return xp.broadcast_to(xp.asarray(length), (size,))


def selected_size(kept, v, batched, size):
    """``rt.selected_size`` per example: each example's count of kept elements."""
    kept_batched, v_batched = batched
    xp = namespace(kept, v)
    shape = np.shape(v)[1:] if v_batched else np.shape(v)
    if not kept_batched:
        kept = xp.broadcast_to(kept, shape)[None]
    whole = xp.broadcast_to(kept, (size, *shape))
    return xp.count_nonzero(xp.reshape(whole, (size, -1)), axis=1)
