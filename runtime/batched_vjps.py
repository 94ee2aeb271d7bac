"""Batched twins of the runtime helpers that gradient code calls, for per-example gradients
(``s2s.vmap`` of ``s2s.grad``): each is the helper applied to every example, batch axis 0.

``batched`` holds one flag per operand (an index operand's flags as ``rt.batching`` takes them).
Unbatched operands (shared weights) stay unbatched: nothing is copied per example that the
computation does not need.
"""

from __future__ import annotations

import numpy as np

from . import batching
from .arrays import grad_seed as _grad_seed
from .arrays import namespace
from .batch_axes import lift


def _rank(x, flag) -> int:
    return np.ndim(x) - 1 if flag else np.ndim(x)


def _example_shape(x, flag) -> tuple:
    return tuple(np.shape(x)[1:]) if flag else tuple(np.shape(x))


def _size(*pairs) -> int:
    return next(int(np.shape(x)[0]) for x, flag in pairs if flag)


def grad_seed(out):
    """Ones like a batched ``out``, whose examples must be real scalars (``rt.grad_seed``'s check)."""
    _grad_seed(out[0])
    xp = namespace(out)
    return xp.ones_like(out, dtype=xp.result_type(out, float))


def unbroadcast(value, like, batched):
    """Each example of ``value`` summed down to the shape of ``like``'s examples."""
    value_batched, like_batched = batched
    target = _example_shape(like, like_batched)
    xp = namespace(value, like)
    if not value_batched:
        value = xp.broadcast_to(value, (_size((like, like_batched)), *np.shape(value)))
    shape = tuple(np.shape(value)[1:])
    if shape == target:
        return value
    extra = len(shape) - len(target)
    if extra > 0:
        value = xp.sum(value, axis=tuple(range(1, extra + 1)))
    now = np.shape(value)[1:]
    kept = tuple(i + 1 for i, n in enumerate(target) if n == 1 and now[i] != 1)
    if kept:
        value = xp.sum(value, axis=kept, keepdims=True)
    return xp.reshape(value, (np.shape(value)[0], *target))


def broadcast_like(value, like, batched):
    """Each example of ``value`` broadcast to the shape of ``like``'s examples."""
    value_batched, like_batched = batched
    target = _example_shape(like, like_batched)
    xp = namespace(value, like)
    size = _size((value, value_batched), (like, like_batched))
    if value_batched:
        value = lift(value, len(target))
    return xp.broadcast_to(value, (size, *target))


def matmul_vjp_lhs(g, x1, x2, batched):
    """``rt.matmul_vjp_lhs`` per example: the cotangent of ``x1`` in ``x1 @ x2``."""
    gb, b1, b2 = batched
    xp = namespace(g, x1, x2)
    r1, r2 = _rank(x1, b1), _rank(x2, b2)
    if r2 == 1:
        grad = xp.expand_dims(g, -1) * (lift(x2, _rank(g, gb) + 1) if b2 else x2)
    elif r1 == 1:
        product = batching.matmul(
            xp.expand_dims(g, -2), xp.swapaxes(x2, -1, -2), (gb, b2)
        )
        grad = xp.squeeze(product, -2)
    else:
        grad = batching.matmul(g, xp.swapaxes(x2, -1, -2), (gb, b2))
    return unbroadcast(grad, x1, (gb or b2, b1))


def matmul_vjp_rhs(g, x1, x2, batched):
    """``rt.matmul_vjp_rhs`` per example: the cotangent of ``x2`` in ``x1 @ x2``."""
    gb, b1, b2 = batched
    xp = namespace(g, x1, x2)
    r1, r2 = _rank(x1, b1), _rank(x2, b2)
    if r1 == 1 and r2 == 1:
        grad = (lift(g, 1) if gb else g) * x1
    elif r1 == 1:
        grad = xp.expand_dims(x1, -1) * xp.expand_dims(g, -2)
    elif r2 == 1:
        product = batching.matmul(
            xp.swapaxes(x1, -1, -2), xp.expand_dims(g, -1), (b1, gb)
        )
        grad = xp.squeeze(product, -1)
    else:
        grad = batching.matmul(xp.swapaxes(x1, -1, -2), g, (b1, gb))
    return unbroadcast(grad, x2, (gb or b1, b2))


def index_get_vjp(g, target, index, batched):
    """``rt.index_get_vjp`` per example: ``g`` added at ``index`` into zeros like ``target``."""
    gb, tb, ib = batched
    xp = namespace(g, target)
    dtype = xp.result_type(g, float)
    zeros = xp.zeros(np.shape(target), dtype)
    return batching.index_add(zeros, index, g, (tb, ib, gb))


def index_set_value_vjp(g, index, value, batched):
    """``rt.index_set_value_vjp`` per example: ``g`` at ``index``, summed to ``value``'s examples."""
    gb, ib, vb = batched
    parts = index if isinstance(index, tuple) else (index,)
    if any(hasattr(p, "shape") and np.ndim(p) > 0 for p in parts):
        raise TypeError(
            "s2s.vmap of a gradient through an element write at array indices (`x[idx] = v`) is not "
            "supported: the last write's cotangent per example has no batching rule yet; write with "
            "integers and slices, or compute per example"
        )
    picked = batching.getitem(g, index, (gb, ib))
    return unbroadcast(picked, value, (gb or _any(ib), vb))


def _any(flags) -> bool:
    return any(flags) if isinstance(flags, tuple) else bool(flags)


_LETTERS = "abcdefghijklmnopqrstuvwxy"
_BATCH = "z"


def _example(x, flag):
    return x[0] if flag else x


def contraction_vjp(g, a, b, axes, index, on, batched):
    """The cotangent of operand ``index`` of ``tensordot(a, b, axes)`` per example (``axes`` None: a
    product with a 0-d operand), as one einsum with a letter for the batch axis."""
    gb, ab, bb = batched[:3]
    xp = namespace(g, a, b)
    operand, operand_batched = (a, ab) if index == 0 else (b, bb)
    if not on:
        zeros = xp.zeros(np.shape(operand), xp.result_type(g, float))
        return zeros if operand_batched else _broadcast(xp, zeros, _size((g, gb)))
    ra, rb = _rank(a, ab), _rank(b, bb)
    a_axes, b_axes = ([], []) if axes is None else axes
    if isinstance(a_axes, int):
        a_axes, b_axes = list(range(ra - a_axes, ra)), list(range(a_axes))
    a_axes = [int(i) % ra for i in np.atleast_1d(a_axes)] if ra else []
    b_axes = [int(i) % rb for i in np.atleast_1d(b_axes)] if rb else []
    letters = iter(_LETTERS)
    a_spec = [next(letters) for _ in range(ra)]
    b_spec = [next(letters) for _ in range(rb)]
    for i, j in zip(a_axes, b_axes):
        b_spec[j] = a_spec[i]
    free = [c for i, c in enumerate(a_spec) if i not in a_axes]
    free += [c for j, c in enumerate(b_spec) if j not in b_axes]
    other, other_batched, other_spec = (
        (b, bb, b_spec) if index == 0 else (a, ab, a_spec)
    )
    target = a_spec if index == 0 else b_spec
    spec = (
        (_BATCH if gb else "")
        + "".join(free)
        + ","
        + (_BATCH if other_batched else "")
        + "".join(other_spec)
        + "->"
        + (_BATCH if gb or other_batched else "")
        + "".join(target)
    )
    grad = xp.einsum(spec, g, other)
    if not (gb or other_batched):
        grad = _broadcast(xp, grad, _size((operand, operand_batched)))
    return grad


def _broadcast(xp, x, size):
    return xp.broadcast_to(x, (size, *np.shape(x)))


def _dot_axes(a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return None
    return [-1], [0 if np.ndim(b) == 1 else -2]


def dot_vjp(g, a, b, index, on, batched):
    """``rt.dot_vjp`` per example."""
    axes = _dot_axes(_example(a, batched[1]), _example(b, batched[2]))
    return contraction_vjp(g, a, b, axes, index, on, batched)


def inner_vjp(g, a, b, index, on, batched):
    """``rt.inner_vjp`` per example."""
    ea, eb = _example(a, batched[1]), _example(b, batched[2])
    axes = None if np.ndim(ea) == 0 or np.ndim(eb) == 0 else ([-1], [-1])
    return contraction_vjp(g, a, b, axes, index, on, batched)


def tensordot_vjp(g, a, b, axes, index, on, batched):
    """``rt.tensordot_vjp`` per example."""
    return contraction_vjp(g, a, b, axes, index, on, batched)
