"""Shape logic that derivative rules call (``rt.<helper>``): transposes of shape ops, order statistics.

Every helper is a pure function of NumPy or JAX arrays (and tracers): it asks
its arguments for their namespace and reads only static shapes, so generated
code calling it runs eagerly on NumPy and compiles under ``jax.jit``.
"""

import itertools
import sys

import numpy as np

from .arrays import index_add, namespace, reduced_like, unbroadcast, zeros_like_float
from .collected import items_of, stacked_along
from .iteration import Elements
from .trees import _is_container


def _axes(axis, ndim):
    """``axis`` (None, int or sequence) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(sorted(int(a) % ndim for a in axes))


def inverse_permutation(axes, ndim):
    """The ``axes`` argument of the transpose that undoes ``transpose(_, axes)`` (None stays None)."""
    if axes is None:
        return None
    return tuple(int(i) for i in np.argsort([int(a) % ndim for a in axes]))


def opposite(shift):
    """``-shift`` for an int or a tuple of ints, staying static (a Python value) under ``jax.jit``; of an
    array of shifts (one per example, under ``vmap``), the array of their opposites."""
    return tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift


def step(x1, x2):
    """Partial of ``maximum(x1, x2)`` in ``x1``: 1 where ``x1`` is larger, 0 where smaller, 0.5 at a tie
    (JAX splits ties evenly), the same infinity on both sides included (their difference is NaN).
    """
    xp = namespace(x1, x2)
    with np.errstate(invalid="ignore"):
        gap = x1 - x2
    return (1 + xp.sign(xp.where(x1 == x2, 0, gap))) / 2


def selects(mask):
    """The partial of an operand that ``where`` picks where ``mask`` holds. Rules apply it as
    ``where(mask, g, 0)``, JAX's ``select``: a NaN or inf cotangent of the other side never leaks
    through, as it would through ``g * mask`` (``0 * nan``)."""
    return mask


def clip_partial(a, a_min, a_max, wrt):
    """Partial of ``clip(a, a_min, a_max)`` wrt argument ``wrt`` (0, 1, 2), as JAX computes it.

    JAX clips as ``minimum(maximum(a, a_min), a_max)``, so ties split evenly.
    """
    xp = namespace(a, a_min, a_max)
    low = a if a_min is None else xp.maximum(a, a_min)
    upper = 1.0 if a_max is None else step(a_max, low)
    if wrt == 2:
        return 1 - upper
    lower = 1.0 if a_min is None else step(a, a_min)
    return upper * (lower if wrt == 0 else 1 - lower)


def extremum_vjp(g, a, ans, axis=None, keepdims=False):
    """Cotangent of ``a`` in ``max(a, axis)`` or ``min(a, axis)``: shared evenly among ties, as JAX does."""
    xp = namespace(g, a, ans)
    mask = a == reduced_like(ans, a, axis, keepdims)
    count = xp.sum(mask, axis=axis, keepdims=True)
    return reduced_like(g, a, axis, keepdims) * mask / count


def _to_last(xp, a, axes):
    """Move ``axes`` of ``a`` to the end and merge them into one axis; returns (array, moved shape)."""
    ndim = np.ndim(a)
    moved = xp.moveaxis(a, axes, tuple(range(ndim - len(axes), ndim)))
    shape = np.shape(moved)
    return xp.reshape(moved, shape[: ndim - len(axes)] + (-1,)), shape


def prod_vjp(g, a, axis=None, keepdims=False):
    """Cotangent of ``a`` in ``prod(a, axis)``, exact where ``a`` has zeros (products of the others)."""
    xp = namespace(g, a)
    a = xp.asarray(a)
    axes = _axes(axis, np.ndim(a))
    flat, shape = _to_last(xp, a, axes)
    ones = xp.ones_like(flat[..., :1])
    before = xp.cumprod(xp.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(
        xp.cumprod(
            xp.concatenate([ones, xp.flip(flat, -1)[..., :-1]], axis=-1), axis=-1
        ),
        -1,
    )
    others = xp.reshape(before * after, shape)
    ndim = np.ndim(a)
    others = xp.moveaxis(others, tuple(range(ndim - len(axes), ndim)), axes)
    return reduced_like(g, a, axis, keepdims) * others


def cumprod_vjp(g, a, axis=None):
    """Cotangent of ``a`` in ``cumprod(a, axis)``, exact where ``a`` has zeros.

    Builds, along the axis (length n), the n x n products that leave out one
    factor each: O(n^2) memory along that axis, in exchange for no division.
    """
    xp = namespace(g, a)
    shape = np.shape(a)
    if axis is None:
        a, axis = xp.reshape(a, (-1,)), 0
    x = xp.moveaxis(xp.asarray(a), axis, -1)
    n = np.shape(x)[-1]
    left_out = xp.where(xp.eye(n, dtype=bool), 1, xp.expand_dims(x, -2))
    partial = xp.cumprod(left_out, axis=-1)  # [..., j, i]: d ans_i / d a_j for i >= j
    grad = xp.sum(
        xp.triu(partial) * xp.expand_dims(xp.moveaxis(g, axis, -1), -2), axis=-1
    )
    return xp.reshape(xp.moveaxis(grad, -1, axis), shape)


def cumprod_jvp(a_dot, a, axis=None):
    """Tangent of ``cumprod(a, axis)`` for a tangent ``a_dot`` of ``a``, exact where ``a`` has zeros."""
    xp = namespace(a_dot, a)
    if axis is None:
        a, a_dot, axis = xp.reshape(a, (-1,)), xp.reshape(a_dot, (-1,)), 0
    x = xp.moveaxis(xp.asarray(a), axis, -1)
    n = np.shape(x)[-1]
    left_out = xp.where(xp.eye(n, dtype=bool), 1, xp.expand_dims(x, -2))
    # [..., j, i]: d ans_i / d a_j for i >= j
    partial = xp.triu(xp.cumprod(left_out, axis=-1))
    out = xp.sum(partial * xp.expand_dims(xp.moveaxis(a_dot, axis, -1), -1), axis=-2)
    return xp.moveaxis(out, -1, axis)


def _split_as(g, shapes, axis):
    """Split ``g`` along ``axis`` into pieces as long as ``shapes`` are there, each reshaped to its shape."""
    xp = namespace(g)
    sizes = [s[axis] for s in shapes]
    cuts = [int(c) for c in np.cumsum(sizes)[:-1]]
    return [
        xp.reshape(piece, s) for piece, s in zip(xp.split(g, cuts, axis=axis), shapes)
    ]


def concatenate_vjp(g, arrays, axis=0):
    """Cotangents (a list) of ``arrays`` in ``concatenate(arrays, axis)``."""
    if axis is None:
        flat = _split_as(g, [(int(np.size(a)),) for a in arrays], 0)
        return [
            namespace(g).reshape(piece, np.shape(a)) for piece, a in zip(flat, arrays)
        ]
    return _split_as(g, [np.shape(a) for a in arrays], axis)


def unstack(g, axis=0):
    """``g`` cut along ``axis`` into a list of slices: the cotangents of ``stack(arrays, axis)``; the items
    of a collected list held as ``Elements`` or item by item (``rt.rows``)."""
    return items_of(g, axis)


def restack(items, axis=0):
    """The cotangent of ``rt.unstack(x, axis)``: the items stacked back along ``axis``; ``Elements`` of
    them where their shapes differ (layers' activations), a list where they are containers (``rt.rows``) or
    groups of items of their own (``Elements``: a nested loop's groups, ``passes/nested_appends.py``).
    """
    if hasattr(items, "shape"):
        # stacked already (a list's cotangent another ``restack`` made; per example, the batch axis
        # leads and the items follow it, so its leading axis is no item axis to stack again)
        return items
    if any(_is_container(it) or isinstance(it, Elements) for it in items):
        return list(items)
    stacked = stacked_along(items, axis)
    return Elements(items) if stacked is None else stacked


def hstack_vjp(g, tup):
    """Cotangents (a list) of ``tup`` in ``hstack(tup)``."""
    shapes = [np.shape(a) or (1,) for a in tup]
    pieces = _split_as(g, shapes, 0 if len(shapes[0]) == 1 else 1)
    return [namespace(g).reshape(p, np.shape(a)) for p, a in zip(pieces, tup)]


def vstack_vjp(g, tup):
    """Cotangents (a list) of ``tup`` in ``vstack(tup)``."""
    shapes = [
        (1,) * (2 - np.ndim(a)) + np.shape(a) if np.ndim(a) < 2 else np.shape(a)
        for a in tup
    ]
    pieces = _split_as(g, shapes, 0)
    return [namespace(g).reshape(p, np.shape(a)) for p, a in zip(pieces, tup)]


def column_shape(shape):
    """The shape ``np.column_stack`` gives an array of ``shape`` before joining: a 0-d or 1-d one is a column."""
    return shape + (1,) * (2 - len(shape)) if len(shape) < 2 else shape


def depth_shape(shape):
    """The shape ``np.dstack`` gives an array of ``shape`` before joining (``np.atleast_3d``'s)."""
    return {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}.get(len(shape), shape)


def column_stack_vjp(g, tup):
    """Cotangents (a list) of ``tup`` in ``column_stack(tup)``: 1-d arrays were columns."""
    pieces = _split_as(g, [column_shape(np.shape(a)) for a in tup], 1)
    return [namespace(g).reshape(p, np.shape(a)) for p, a in zip(pieces, tup)]


def dstack_vjp(g, tup):
    """Cotangents (a list) of ``tup`` in ``dstack(tup)``: arrays made at least 3-d, joined along their third."""
    pieces = _split_as(g, [depth_shape(np.shape(a)) for a in tup], 2)
    return [namespace(g).reshape(p, np.shape(a)) for p, a in zip(pieces, tup)]


def split_vjp(g, ary, indices_or_sections, axis=0):
    """Cotangent of ``ary`` in ``split(ary, indices_or_sections, axis)``; ``g`` is a list, None for unused pieces."""
    xp = namespace(*g, ary)
    shape = np.shape(ary)
    n = shape[axis]
    if np.ndim(indices_or_sections) == 0:
        cuts = [n // int(indices_or_sections)] * int(indices_or_sections)
    else:  # the lengths of ary[start:stop] with NumPy's slice semantics
        bounds = [0, *(int(i) for i in indices_or_sections), n]
        cuts = [
            len(range(*slice(s, e).indices(n))) for s, e in itertools.pairwise(bounds)
        ]
    axis = axis % len(shape)
    dtype = next((p.dtype for p in g if p is not None), xp.result_type(float))
    pieces = [
        (
            xp.zeros(shape[:axis] + (size,) + shape[axis + 1 :], dtype)
            if piece is None
            else piece
        )
        for piece, size in zip(g, cuts)
    ]
    return xp.concatenate(pieces, axis=axis)


def tile_vjp(g, A, reps):
    """Cotangent of ``A`` in ``tile(A, reps)``: the sum of the tiles."""
    xp = namespace(g, A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    shape = np.shape(A)
    ndim = max(len(shape), len(reps))
    padded = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + reps
    interleaved = tuple(d for pair in zip(reps, padded) for d in pair)
    summed = xp.sum(xp.reshape(g, interleaved), axis=tuple(range(0, 2 * ndim, 2)))
    return xp.reshape(summed, shape)


def repeat_vjp(g, a, repeats, axis=None):
    """Cotangent of ``a`` in ``repeat(a, repeats, axis)``: each element collects its copies."""
    xp = namespace(g, a)
    shape = np.shape(a)
    if axis is None:
        inner = (int(np.size(a)),)
        axis = 0
    else:
        inner = shape
        axis = axis % len(shape)
    n = inner[axis]
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        r = int(np.reshape(repeats, ()))
        split = np.shape(g)[:axis] + (n, r) + np.shape(g)[axis + 1 :]
        grad = xp.sum(xp.reshape(g, split), axis=axis + 1)
    else:
        owners = np.repeat(np.arange(n), np.asarray(repeats))
        zeros = xp.zeros((n,) + inner[:axis] + inner[axis + 1 :], dtype=g.dtype)
        grad = xp.moveaxis(index_add(zeros, owners, xp.moveaxis(g, axis, 0)), 0, axis)
    return xp.reshape(grad, shape)


PAD_COPIES = ("edge", "reflect", "symmetric", "wrap")  # modes whose pads copy elements


def pad_vjp(g, array, pad_width, mode="constant"):
    """Cotangent of ``array`` in ``pad(array, pad_width, mode)``: the unpadded middle of ``g``; for modes
    that pad with copies of elements, each copy's cotangent added back to the element it copies.
    """
    shape = np.shape(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (len(shape), 2))
    if mode in PAD_COPIES:
        xp = namespace(g)
        for axis, (n, (before, after)) in enumerate(zip(shape, widths)):
            # the element each position along this axis copies (np.pad of the positions themselves)
            source = np.pad(np.arange(n), (int(before), int(after)), mode=mode)
            lead = xp.moveaxis(g, axis, 0)
            zeros = xp.zeros((n, *np.shape(lead)[1:]), lead.dtype)
            g = xp.moveaxis(index_add(zeros, source, lead), 0, axis)
        return g
    if mode != "constant":
        from .located import Refusal

        raise Refusal(
            f"the derivative of np.pad with mode={mode!r}",
            f"pad with mode='constant' or one of {', '.join(map(repr, PAD_COPIES))}",
        )
    return g[
        tuple(
            slice(int(before), int(before) + n) for (before, _), n in zip(widths, shape)
        )
    ]


def diag_vjp(g, v, k=0):
    """Cotangent of ``v`` in ``diag(v, k)``: a diagonal read off, or written back onto a matrix."""
    xp = namespace(g, v)
    if np.ndim(v) == 1:
        return xp.diagonal(g, k)
    n, m = np.shape(v)
    length = np.shape(g)[0]
    if k >= 0:
        return xp.eye(n, m, k, dtype=g.dtype) * xp.expand_dims(
            xp.pad(g, (0, n - length)), 1
        )
    return xp.eye(n, m, k, dtype=g.dtype) * xp.pad(g, (0, m - length))


def take_length(a, axis=None) -> int:
    """How many positions ``take(a, indices, axis)`` reads from: ``a``'s length along ``axis`` (its size
    for ``axis=None``)."""
    return int(np.size(a)) if axis is None else np.shape(a)[axis]


def take_indices(indices, length, mode=None):
    """The positions ``take(a, indices, axis, mode=mode)`` reads, of ``length`` (``take_length``): clipped
    into range (``"clip"``) or wrapped around (``"wrap"``), as given otherwise (out of range, JAX's
    ``"fill"`` reads nothing). Elementwise: batched indices are normalized as they are.
    """
    if mode not in ("clip", "wrap"):
        return indices
    xp = namespace(indices)
    indices = xp.asarray(indices)
    return xp.clip(indices, 0, length - 1) if mode == "clip" else indices % length


def take_vjp(g, a, indices, axis=None):
    """Cotangent of ``a`` in ``take(a, indices, axis)``: ``g`` added back at the indices."""
    xp = namespace(g, a, indices)
    indices = xp.asarray(indices)
    shape = np.shape(a)
    if axis is None:
        return xp.reshape(
            index_add(xp.zeros(int(np.size(a)), g.dtype), indices, g), shape
        )
    index = (slice(None),) * (axis % len(shape)) + (indices,)
    return index_add(xp.zeros(shape, g.dtype), index, g)


def take_along_axis_vjp(g, arr, indices, axis=-1):
    """Cotangent of ``arr`` in ``take_along_axis(arr, indices, axis)``: ``g`` added back at the indices along
    ``axis`` (repeated indices accumulate; where ``arr`` broadcast against ``indices``, its copies add up).
    """
    xp = namespace(g, arr, indices)
    shape = np.shape(arr)
    if axis is None:  # ``arr`` read flat, ``indices`` one-dimensional
        flat = index_add(xp.zeros(int(np.size(arr)), g.dtype), xp.asarray(indices), g)
        return xp.reshape(flat, shape)
    axis = axis % len(shape)
    # put_along_axis's index: ``indices`` along ``axis``, a position (0 where ``arr`` broadcast) elsewhere
    index = []
    for d, (n, m) in enumerate(zip(shape, np.shape(g))):
        along = np.arange(m) if n == m else np.zeros(m, int)
        index.append(
            xp.asarray(indices)
            if d == axis
            else np.reshape(along, (1,) * d + (m,) + (1,) * (len(shape) - d - 1))
        )
    return index_add(xp.zeros(shape, g.dtype), tuple(index), g)


def _inexact(dtype) -> bool:
    """Whether ``dtype`` (a dtype, scalar type, Python type or name) is a floating or complex type.

    Once JAX is loaded, ``jax.numpy.issubdtype`` answers: it also knows JAX's own floats (bfloat16).
    """
    xp = sys.modules.get("jax.numpy", np)
    return bool(xp.issubdtype(dtype, xp.inexact))


def _cast(value, dtype):
    """``value`` as ``dtype``: its real part where a complex value becomes real."""
    xp = namespace(value)
    value = xp.asarray(value)
    if xp.iscomplexobj(value) and not xp.issubdtype(dtype, xp.complexfloating):
        value = xp.real(value)
    return value.astype(dtype)


def astype_vjp(g, x, dtype):
    """Cotangent of ``x`` in ``astype(x, dtype)``: ``g`` cast back to ``x``'s dtype when ``dtype`` is inexact;
    zeros shaped like ``x`` when it is an integer or bool (no derivative flows through such a cast, as in JAX).
    """
    if not _inexact(dtype):
        return zeros_like_float(x)
    xp = namespace(g, x)
    return _cast(g, _float_dtype(xp, x))


def astype_jvp(tangent, dtype):
    """Tangent of ``astype(x, dtype)`` for a tangent of ``x``: cast to ``dtype`` when it is inexact, else zeros
    (``None``: the value kept as it is, its tangent too)."""
    if dtype is None:
        return tangent
    if not _inexact(dtype):
        return zeros_like_float(tangent)
    return _cast(tangent, dtype)


def array_vjp(g, data):
    """Cotangent of ``data`` in ``asarray(data)``: ``g`` itself, or nested lists of its slices for nested lists."""
    if isinstance(data, (list, tuple)):
        return type(data)(array_vjp(g[i], item) for i, item in enumerate(data))
    return unbroadcast(g, data)


# --- second derivatives: reductions along axes, seen with the reduced axes last ---------------


def to_last(a, axis=None):
    """``a`` with the axes ``axis`` (None: all of them) moved to the end and merged into one."""
    xp = namespace(a)
    a = xp.asarray(a)
    if axis is None:
        return xp.reshape(a, (-1,))
    return _to_last(xp, a, _axes(axis, np.ndim(a)))[0]


def from_last(t, like, axis=None):
    """The inverse of ``to_last``: ``t``, its last axis the merged ``axis`` of ``like``, in ``like``'s layout."""
    xp = namespace(t)
    shape = np.shape(like)
    if axis is None:
        return xp.reshape(t, shape)
    axes = _axes(axis, len(shape))
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    moved = xp.reshape(t, tuple(shape[i] for i in kept + axes))
    return xp.moveaxis(moved, tuple(range(len(kept), len(shape))), axes)


def _float_dtype(xp, a):
    dtype = xp.asarray(a).dtype
    return dtype if xp.issubdtype(dtype, xp.inexact) else xp.result_type(float)


def leave_one_out(a):
    """``out[..., j, k] = a[..., k]`` for ``k != j``, 0 for ``k == j``: row ``j`` is ``a`` without its element ``j``."""
    xp = namespace(a)
    n = np.shape(a)[-1]
    return xp.expand_dims(a, -2) * (1 - xp.eye(n, dtype=_float_dtype(xp, a)))


def leave_one_out_vjp(w):
    """The transpose of ``leave_one_out``: ``out[..., k]`` sums ``w[..., j, k]`` over the rows ``j != k``."""
    xp = namespace(w)
    n = np.shape(w)[-1]
    return xp.sum(w * (1 - xp.eye(n, dtype=_float_dtype(xp, w))), axis=-2)


def eye_last(a, axis=None):
    """The identity as large as the axes ``axis`` of ``a`` (merged), in ``a``'s float dtype."""
    xp = namespace(a)
    n = int(np.prod([np.shape(a)[i] for i in _axes(axis, np.ndim(a))]))
    return xp.eye(n, dtype=_float_dtype(xp, a))


def running_argmax(a, axis=0, reverse=False):
    """Where ``lax.cummax(a, axis, reverse)`` takes each of its values from: the position along ``axis``
    of the largest value so far (of two equal ones, the one met first)."""
    return _running_position(a, axis, reverse, largest=True)


def running_argmin(a, axis=0, reverse=False):
    """Where ``lax.cummin(a, axis, reverse)`` takes each of its values from (see ``running_argmax``)."""
    return _running_position(a, axis, reverse, largest=False)


def _running_position(a, axis, reverse, largest):
    from .lax import cummax, cummin

    xp = namespace(a)
    moved = xp.moveaxis(xp.asarray(a), axis, -1)
    if reverse:
        moved = xp.flip(moved, -1)
    n, last = moved.shape[-1], moved.ndim - 1
    if n == 0:
        return xp.zeros(np.shape(a), dtype=int)
    best = (cummax if largest else cummin)(moved, last)
    later, so_far = moved[..., 1:], best[..., :-1]
    new = later > so_far if largest else later < so_far
    steps = xp.where(new, xp.arange(1, n), 0)
    first = xp.zeros(steps.shape[:-1] + (1,), dtype=steps.dtype)
    position = cummax(xp.concatenate([first, steps], axis=-1), last)
    if reverse:
        position = n - 1 - xp.flip(position, -1)
    return xp.moveaxis(position, -1, axis)
