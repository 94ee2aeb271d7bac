"""Batched twins of the cotangents of shape ops (``rt.concatenate_vjp``, ``rt.tile_vjp``, ``rt.pad_vjp``, ...)
and casts, for per-example gradients (``s2s.vmap`` of ``s2s.grad``): each is the helper applied to every
example, batch axis 0, without a loop over the batch.

``batched`` holds one flag per operand (a list operand's flag covers its elements: the batching rule gives
every element of a list literal the batch axis). Operands read only for their shapes are broadcast as views.
"""

from __future__ import annotations

import numpy as np

from . import rulesupport
from .arrays import namespace
from .batched_vjps import _example_shape, _size, _with_batch, unbroadcast


def _list_size(*pairs) -> int:
    """The batch size from ``(value, flag)`` pairs whose values may be lists of arrays."""
    for x, flag in pairs:
        if flag:
            leaf = x[0] if isinstance(x, (list, tuple)) else x
            return int(np.shape(leaf)[0])
    raise ValueError("batched_shape_vjps: no operand is batched")


def _example_shapes(arrays, flag) -> list[tuple]:
    return [_example_shape(a, flag) for a in arrays]


def _split_examples(g, shapes, axis):
    """Each example of ``g`` cut along its ``axis`` into pieces as long as ``shapes`` say, each reshaped to
    its shape (batch axis in front)."""
    xp = namespace(g)
    size = np.shape(g)[0]
    cuts = [int(c) for c in np.cumsum([s[axis] for s in shapes])[:-1]]
    pieces = xp.split(g, cuts, axis=axis + 1)
    return [xp.reshape(p, (size, *s)) for p, s in zip(pieces, shapes)]


def concatenate_vjp(g, arrays, axis, batched):
    """``rt.concatenate_vjp`` per example: ``g`` cut back into the arrays' example shapes."""
    fg, fa = batched
    g = _with_batch(g, fg, _list_size((g, fg), (arrays, fa)))
    shapes = _example_shapes(arrays, fa)
    if axis is None:  # each example was flattened first
        flat = _split_examples(g, [(int(np.prod(s, dtype=int)),) for s in shapes], 0)
        xp = namespace(g)
        return [xp.reshape(p, (np.shape(g)[0], *s)) for p, s in zip(flat, shapes)]
    return _split_examples(g, shapes, int(axis) % len(shapes[0]))


def _unstacked(g, tup, batched, joined_shape, axis):
    """Per-example cotangents of ``tup``, whose examples were reshaped to ``joined_shape(example shape)`` and
    joined along ``axis`` (a function of the joined shapes where it depends on them)."""
    fg, ft = batched
    g = _with_batch(g, fg, _list_size((g, fg), (tup, ft)))
    shapes = _example_shapes(tup, ft)
    joined = [joined_shape(s) for s in shapes]
    pieces = _split_examples(g, joined, axis(joined) if callable(axis) else axis)
    xp = namespace(g)
    return [xp.reshape(p, (np.shape(g)[0], *s)) for p, s in zip(pieces, shapes)]


def hstack_vjp(g, tup, batched):
    """``rt.hstack_vjp`` per example: 1-d (or 0-d) examples were joined along their axis, others along their
    second."""
    return _unstacked(
        g,
        tup,
        batched,
        lambda s: s or (1,),
        lambda joined: 0 if len(joined[0]) == 1 else 1,
    )


def column_stack_vjp(g, tup, batched):
    """``rt.column_stack_vjp`` per example: 1-d (or 0-d) examples were columns, joined along their second axis."""
    return _unstacked(g, tup, batched, rulesupport.column_shape, 1)


def dstack_vjp(g, tup, batched):
    """``rt.dstack_vjp`` per example: examples were made at least 3-d, joined along their third axis."""
    return _unstacked(g, tup, batched, rulesupport.depth_shape, 2)


def vstack_vjp(g, tup, batched):
    """``rt.vstack_vjp`` per example: examples were made at least 2-d, then joined along their first axis."""
    return _unstacked(
        g, tup, batched, lambda s: (1,) * (2 - len(s)) + s if len(s) < 2 else s, 0
    )


def tile_vjp(g, A, reps, batched):
    """``rt.tile_vjp`` per example: each example's tiles summed."""
    fg, fa = batched
    xp = namespace(g, A)
    size = _size((g, fg), (A, fa))
    g = _with_batch(g, fg, size)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    shape = _example_shape(A, fa)
    ndim = max(len(shape), len(reps))
    padded = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + reps
    interleaved = tuple(d for pair in zip(reps, padded) for d in pair)
    summed = xp.sum(
        xp.reshape(g, (size, *interleaved)), axis=tuple(range(1, 2 * ndim + 1, 2))
    )
    return xp.reshape(summed, (size, *shape))


def repeat_vjp(g, a, repeats, axis, batched):
    """``rt.repeat_vjp`` per example (``axis=None``: each example was flattened first)."""
    fg, fa = batched
    xp = namespace(g, a)
    size = _size((g, fg), (a, fa))
    g = _with_batch(g, fg, size)
    shape = _example_shape(a, fa)
    if axis is None:
        like = xp.zeros((size, int(np.prod(shape, dtype=int))), g.dtype)
        axis = 0
    else:
        like = xp.zeros((size, *shape), g.dtype)
        axis = int(axis) % len(shape)
    out = rulesupport.repeat_vjp(g, like, repeats, axis + 1)
    return xp.reshape(out, (size, *shape))


def pad_vjp(g, array, pad_width, mode, batched):
    """``rt.pad_vjp`` per example: the unpadded middle of each example of ``g``."""
    from .batched_ops import pad_width as batch_pad_width

    fg, fa = batched
    size = _size((g, fg), (array, fa))
    g = _with_batch(g, fg, size)
    array = _with_batch(array, fa, size)
    return rulesupport.pad_vjp(g, array, batch_pad_width(pad_width, array), mode)


def diag_vjp(g, v, k, batched):
    """``rt.diag_vjp`` per example: a 1-d example's diagonal read off ``g``, or ``g`` written back onto the
    diagonal of a 2-d example."""
    fg, fv = batched
    xp = namespace(g, v)
    size = _size((g, fg), (v, fv))
    g = _with_batch(g, fg, size)
    shape = _example_shape(v, fv)
    if len(shape) == 1:
        return xp.diagonal(g, k, axis1=1, axis2=2)
    n, m = shape
    length = np.shape(g)[1]
    eye = xp.eye(n, m, k, dtype=g.dtype)
    if k >= 0:
        return eye * xp.expand_dims(xp.pad(g, ((0, 0), (0, n - length))), 2)
    return eye * xp.expand_dims(xp.pad(g, ((0, 0), (0, m - length))), 1)


def array_vjp(g, data, batched):
    """``rt.array_vjp`` per example: for a (nested) list, each element's slice of ``g`` past the batch axis;
    for an array, ``g`` summed to its examples."""
    fg, fd = batched
    if isinstance(data, (list, tuple)):
        g = _with_batch(g, fg, _list_size((g, fg), (data, fd)))
        return type(data)(
            array_vjp(g[:, i], item, (True, fd)) for i, item in enumerate(data)
        )
    return unbroadcast(g, data, (fg, fd))


def array_vjp_transpose(ct, like, data, batched):
    """The transpose of ``array_vjp`` in ``g`` (``array_vjp`` differentiated again): ``ct``, one cotangent
    per example shaped like ``data``'s (a list of them for a list), back to the examples of ``like`` (the
    ``g`` it was given), summed over the batch where ``like`` has none."""
    fg = batched[0]
    back = _array_back(ct, _example_shape(like, fg), data)
    return back if fg else namespace(back).sum(back, axis=0)


def _array_back(ct, shape, data):
    xp = namespace(ct[0] if isinstance(ct, (list, tuple)) else ct)
    if isinstance(data, (list, tuple)):
        rows = [_array_back(c, shape[1:], item) for c, item in zip(ct, data)]
        return xp.stack(rows, axis=1)
    size, example = np.shape(ct)[0], np.shape(ct)[1:]
    ct = xp.reshape(ct, (size,) + (1,) * (len(shape) - len(example)) + example)
    return xp.broadcast_to(ct, (size, *shape))


def astype_vjp(g, x, dtype, batched):
    """``rt.astype_vjp`` per example: ``g`` cast back to ``x``'s dtype, or zeros for a cast to integers."""
    fg, fx = batched
    size = _size((g, fg), (x, fx))
    return rulesupport.astype_vjp(
        _with_batch(g, fg, size), _with_batch(x, fx, size), dtype
    )
