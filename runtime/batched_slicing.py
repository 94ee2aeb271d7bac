"""Dynamic slices in batched generated code (``s2s.vmap``): each example's window, with the batch axis on
the array, on the start indices, or on both.

Conventions as in ``batching.py`` (batch axis 0, ``batched`` flags per operand). The start indices'
flag is one bool (a 1-D array of starts: batched, it is ``(batch, k)``) or one per start (a tuple of
scalars). Starts the same for every example cut one window across the batch (``jax.lax.dynamic_slice``
with the batch axis whole); starts that differ per example gather each example's window along each
of their axes (``take_along_axis``), and writes are a ``where`` over each example's window.
"""

import numpy as np

from . import slicing
from .arrays import namespace
from .batch_axes import broadcast_batch


def _per_start(start_indices, flags):
    """The starts one by one, each with its batched flag (a batched array of starts split by column)."""
    if isinstance(flags, (tuple, list)):
        return list(start_indices), [bool(f) for f in flags]
    if not flags:
        starts = slicing.starts_of(start_indices)
        return starts, [False] * len(starts)
    count = np.shape(start_indices)[1]
    return [start_indices[:, k] for k in range(count)], [True] * count


def _size(arrays_and_flags, starts, flags):
    for value, flag in arrays_and_flags:
        if flag:
            return np.shape(value)[0]
    for start, flag in zip(starts, flags):
        if flag:
            return np.shape(start)[0]
    raise ValueError("batched_slicing: nothing is batched, so there is no batch size")


def _along(xp, values, axis, ndim):
    """``values`` (one per example, ``(batch,)``, or one for all) shaped to broadcast along ``axis`` of a
    ``(batch, *example)`` array of example rank ``ndim``."""
    if np.ndim(values) == 0:
        return values
    return xp.reshape(values, (-1,) + (1,) * ndim)


def _positions(xp, n, axis, ndim):
    shape = [1] * (ndim + 1)
    shape[axis + 1] = n
    return xp.reshape(xp.arange(n), shape)


def dynamic_slice(operand, start_indices, slice_sizes, axes, batched):
    """Per-example ``rt.dynamic_slice(operand_i, start_indices_i, slice_sizes, axes)``."""
    o_flag, s_flags = bool(batched[0]), batched[1]
    starts, flags = _per_start(start_indices, s_flags)
    size = _size([(operand, o_flag)], starts, flags)
    xp = namespace(operand, starts)
    operand = operand if o_flag else broadcast_batch(operand, size)
    ex_shape = np.shape(operand)[1:]
    ndim = len(ex_shape)
    named = slicing.named_axes(ndim, len(starts), axes, "dynamic_slice")
    sizes = tuple(slice_sizes) if np.ndim(slice_sizes) else (slice_sizes,)
    shared = [(a, s, z) for a, s, z, f in zip(named, starts, sizes, flags) if not f]
    if shared:  # one window across the batch, the batch axis whole
        operand = slicing.dynamic_slice(
            operand,
            [0, *(s for _, s, _ in shared)],
            [size, *(z for _, _, z in shared)],
            [0, *(a + 1 for a, _, _ in shared)],
        )
    for a, s, z, f in zip(named, starts, sizes, flags):
        if f:  # each example's window along ``a``
            first = slicing.clamped_start(s, ex_shape[a], int(z))
            index = _along(xp, first, a, ndim) + _positions(xp, int(z), a, ndim)
            operand = xp.take_along_axis(operand, index, axis=a + 1)
    return operand


def dynamic_update_slice(operand, update, start_indices, axes, batched):
    """Per-example ``rt.dynamic_update_slice(operand_i, update_i, start_indices_i, axes)``."""
    o_flag, u_flag, s_flags = bool(batched[0]), bool(batched[1]), batched[2]
    starts, flags = _per_start(start_indices, s_flags)
    size = _size([(operand, o_flag), (update, u_flag)], starts, flags)
    xp = namespace(operand, update, starts)
    operand = operand if o_flag else broadcast_batch(operand, size)
    update = xp.asarray(update) if u_flag else broadcast_batch(update, size)
    ex_shape = np.shape(operand)[1:]
    ndim = len(ex_shape)
    named = slicing.named_axes(ndim, len(starts), axes, "dynamic_update_slice")
    full = slicing.window_shape(np.shape(update)[1:], ndim, named)
    update = xp.reshape(update, (size, *full))
    if not any(flags):  # one window across the batch
        return slicing.dynamic_update_slice(
            operand, update, [0, *starts], [0, *(a + 1 for a in named)]
        )
    # each example's window: the update stretched over the whole axis, kept inside the window
    inside = True
    for a, s in zip(named, starts):
        n, z = ex_shape[a], full[a]
        first = _along(xp, slicing.clamped_start(s, n, z), a, ndim)
        offset = _positions(xp, n, a, ndim) - first
        inside = xp.logical_and(inside, (offset >= 0) & (offset < z))
        update = xp.take_along_axis(update, xp.clip(offset, 0, z - 1), axis=a + 1)
    return xp.where(inside, update.astype(operand.dtype), operand)


def dynamic_update_slice_vjp(ct, update, start_indices, axes, batched):
    """Per-example ``rt.dynamic_update_slice_vjp(ct_i, update_i, start_indices_i, axes)``."""
    c_flag, u_flag, s_flags = bool(batched[0]), bool(batched[1]), batched[2]
    starts, flags = _per_start(start_indices, s_flags)
    size = _size([(ct, c_flag), (update, u_flag)], starts, flags)
    ct = ct if c_flag else broadcast_batch(ct, size)
    ex_update = np.shape(update)[1:] if u_flag else np.shape(update)
    ndim = np.ndim(ct) - 1
    named = slicing.named_axes(ndim, len(starts), axes, "dynamic_update_slice")
    full = slicing.window_shape(ex_update, ndim, named)
    window = dynamic_slice(
        ct, start_indices, [full[a] for a in named], axes, (True, s_flags)
    )
    return namespace(window).reshape(window, (size, *ex_update))


def _window_call(operand, start_indices, slice_sizes, axes, s_flags, lead):
    """A ``window`` call's starts, sizes and axes per example, and each start's batched flag."""
    starts, sizes, named = slicing._window_parts(
        operand, start_indices, slice_sizes, axes, lead=int(lead)
    )
    if isinstance(s_flags, (tuple, list)):
        flags = [bool(f) for f in s_flags]
    else:
        flags = [bool(s_flags)] * len(starts)
    return starts, sizes, named, flags


def _known(starts, flags) -> bool:
    """Starts the same for every example and known now: NumPy's slicing, as written."""
    return not any(flags) and not any(slicing._is_jax(s) for s in starts)


def _sequence_window(operand, start_indices, slice_sizes, flags) -> slice:
    """The slice of a Python list's items (its leaves batched or not): the same for every example."""
    if any(np.ravel(flags)):
        from .located import Refusal

        raise Refusal(
            "a slice `items[i:i + k]` of a Python list whose start differs per example",
            "slice the list at a start that is the same for every example, or stack it into an array",
        )
    return slicing._sequence_slice(start_indices, slice_sizes)


def window(operand, start_indices, slice_sizes, axes, batched):
    """Per-example ``rt.window(operand_i, start_indices_i, slice_sizes, axes)``."""
    if slicing._is_sequence(operand):
        return operand[
            _sequence_window(operand, start_indices, slice_sizes, batched[1])
        ]
    o_flag = bool(batched[0])
    starts, sizes, named, flags = _window_call(
        operand, start_indices, slice_sizes, axes, batched[1], o_flag
    )
    shape = np.shape(operand)[int(o_flag) :]
    if _known(starts, flags) and o_flag:
        return operand[
            (slice(None),) + slicing._slices(len(shape), starts, sizes, named)
        ]
    slicing._checked(shape, starts, sizes, named)
    return dynamic_slice(operand, tuple(starts), sizes, named, (o_flag, tuple(flags)))


def window_positions(operand, axis, start, size, batched):
    """Per-example ``rt.window_positions(operand_i, axis, start_i, size)``: a start per example gives each
    example its own positions (a batched index array)."""
    o_flag, s_flag = bool(batched[0]), bool(batched[1])
    shape = np.shape(operand)[int(o_flag) :]
    slicing._checked(shape, [start], [int(size)], [axis])
    xp = namespace(operand, start)
    first = xp.asarray(start)[:, None] if s_flag else xp.asarray(start)
    positions = first + xp.arange(int(size))
    if not s_flag:  # the same positions for every example of a batched array
        positions = xp.broadcast_to(positions, (np.shape(operand)[0], int(size)))
    return positions


def window_vjp(g, operand, start_indices, slice_sizes, axes, batched):
    """Per-example ``rt.window_vjp(g_i, operand_i, start_indices_i, slice_sizes, axes)``."""
    from .arrays import index_add, zeros_like_float

    g_flag, o_flag = bool(batched[0]), bool(batched[1])
    if slicing._is_sequence(operand):
        from .trees import tree_leaves, tree_zeros_like

        index = _sequence_window(operand, start_indices, slice_sizes, batched[2])
        zeros = tree_zeros_like(operand)
        if g_flag and not o_flag:  # the examples' own cotangents
            zeros = broadcast_batch(zeros, np.shape(next(tree_leaves(g)))[0])
        return index_add(zeros, index, g)
    starts, sizes, named, flags = _window_call(
        operand, start_indices, slice_sizes, axes, batched[2], o_flag
    )
    shape = np.shape(operand)[int(o_flag) :]
    size = _size([(g, g_flag), (operand, o_flag)], starts, flags)
    g = g if g_flag else broadcast_batch(g, size)
    zeros = zeros_like_float(operand if o_flag else broadcast_batch(operand, size))
    if _known(starts, flags):
        cut = (slice(None),) + slicing._slices(len(shape), starts, sizes, named)
        return index_add(zeros, cut, g)
    return dynamic_update_slice(
        zeros, g, tuple(starts), named, (True, True, tuple(flags))
    )
