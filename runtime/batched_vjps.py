"""Batched twins of the runtime helpers that gradient code calls, for per-example gradients
(``s2s.vmap`` of ``s2s.grad``): each is the helper applied to every example, batch axis 0.

``batched`` holds one flag per operand (an index operand's flags as ``rt.batching`` takes them).
Unbatched operands (shared weights) stay unbatched: nothing is copied per example that the
computation does not need.
"""

from __future__ import annotations

import numpy as np

from . import arrays, batching
from .arrays import grad_seed as _grad_seed
from .arrays import namespace
from .batch_axes import lift, sum_unbatched
from .batched_indexing import filled_per_example, traced_positions
from .trees import tree_zeros_like


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
    if batching.reads_whole(target, index, (tb, ib)):  # (``batching.index_get``)
        return g
    # a dict's or list's item: zeros like its leaves, ``g`` at the key
    if arrays.holds_items(target):
        return batching.index_add(tree_zeros_like(target), index, g, (tb, ib, gb))
    xp = namespace(g, target)
    dtype = xp.result_type(g, float)
    zeros = xp.zeros(np.shape(target), dtype)
    return batching.index_read_add(zeros, index, g, (tb, ib, gb))


def index_set_value_vjp(g, index, value, target, batched):
    """``rt.index_set_value_vjp`` per example: ``g`` at ``index``, summed to ``value``'s examples; where an
    example's index repeats a place, only its last write gets the cotangent (NumPy's rule).
    """
    gb, ib, vb, _ = batched
    parts = index if isinstance(index, tuple) else (index,)
    flags = ib if isinstance(ib, tuple) else (ib,) * len(parts)
    indices = [(p, f) for p, f in zip(parts, flags) if hasattr(p, "shape")]
    if arrays.truncates(
        target, value
    ):  # an integer array's item: no cotangent, per example
        zeros = arrays.zeros_like_float(value)
        if vb:
            return zeros
        return _broadcast(namespace(zeros), zeros, _size((g, gb), *indices))
    # a container's item: one key for every example
    if arrays.holds_items(g):
        return arrays.index_set_value_vjp(g, index, value)
    if len(parts) == 1 and _bool_array(parts[0]):
        return _mask_value_vjp(g, parts[0], value, (gb, flags[0], vb))
    size = _size((g, gb), *indices)
    g = g if gb else _broadcast(namespace(g), g, size)
    if traced_positions(parts, flags):
        # a write past an end is dropped (JAX's scatter): the value reached nothing there
        taken = filled_per_example(g, index, parts, flags)
        return unbroadcast(taken, value, (True, vb))
    picked = batching.getitem(g, index, (True, ib))
    if any(_gathers_per_example(p, f) for p, f in zip(parts, flags)):
        kept = _last_writes(g, index, ib, np.shape(picked))
        picked = namespace(picked).where(kept, picked, 0)
    return unbroadcast(picked, value, (True, vb))


def index_add_value_vjp(g, index, value, batched):
    """``rt.index_add_value_vjp`` per example: ``g`` at ``index``, summed to ``value``'s examples (every
    write of a repeated place gets the cotangent: they all add)."""
    return _value_vjp(g, index, value, batched, clamped=False)


def index_read_add_value_vjp(g, index, value, batched):
    """``rt.index_read_add_value_vjp`` per example: ``g`` read at ``index`` (a traced position past an end
    clamped, as JAX's gather clamps it), summed to ``value``'s examples."""
    return _value_vjp(g, index, value, batched, clamped=True)


def _value_vjp(g, index, value, batched, clamped: bool):
    """``g`` at ``index`` per example, summed to ``value``'s examples: zero where JAX's scatter drops the
    update, except at the traced positions a read ``clamped`` (``index_read_add``'s)."""
    gb, ib, vb = batched
    if isinstance(
        g, (dict, list, tuple)
    ):  # a container's element: the same key in every example
        return g[index]
    parts = index if isinstance(index, tuple) else (index,)
    flags = ib if isinstance(ib, tuple) else (ib,) * len(parts)
    if len(parts) == 1 and _bool_array(parts[0]):
        return _mask_value_vjp(g, parts[0], value, (gb, flags[0], vb))
    size = _size(
        (g, gb), *((p, f) for p, f in zip(parts, flags) if hasattr(p, "shape"))
    )
    g = g if gb else _broadcast(namespace(g), g, size)
    clamps = clamped and traced_positions(parts, flags)
    if not clamps and _drops_past_the_end(g, parts, flags):
        # JAX's scatter-add drops an update whose index is out of range: it gets no cotangent
        # (``rt.index_add_value_vjp``'s filling gather, per example)
        taken = filled_per_example(g, index, parts, flags)
        return unbroadcast(taken, value, (True, vb))
    return unbroadcast(batching.getitem(g, index, (True, ib)), value, (True, vb))


def _drops_past_the_end(g, parts, flags) -> bool:
    """Whether JAX's scatter at this per-example index drops an update out of range: integer arrays with
    axes, or traced positions of no axes (``x.at[i].set(v)``, each example's own ``i``).
    """
    on_jax = arrays._is_jax(g) or any(arrays._is_jax(p) for p in parts)
    gathered = any(_gathers_per_example(p, f) for p, f in zip(parts, flags))
    return on_jax and (gathered or traced_positions(parts, flags))


def _bool_array(part) -> bool:
    return getattr(part, "dtype", None) is not None and np.dtype(part.dtype) == bool


def _gathers_per_example(part, flag) -> bool:
    """Whether an index component is an integer array (or list) with axes in one example: places may repeat."""
    if isinstance(part, list):
        return True
    dtype = getattr(part, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind in "iu" and _rank(part, flag) > 0


def _last_writes(g, index, flags, shape):
    """Per example, whether each element of ``g_i[index_i]`` is the last write to its place: the order of
    the writes written at ``index`` (the last one lands) and read back."""
    xp = namespace(g)
    count = int(np.prod(shape[1:], dtype=int))
    order = xp.reshape(xp.arange(count), shape[1:])
    places = xp.full(np.shape(g), -1)
    written = batching.index_set(places, index, order, (True, flags, False))
    return batching.getitem(written, index, (True, flags)) == order


def _mask_value_vjp(g, mask, value, batched):
    """``index_set_value_vjp`` at a boolean mask per example: a ``where`` (a scalar or full-shaped value)."""
    gb, mb, vb = batched
    xp = namespace(g, mask)
    size = _size((g, gb), (mask, mb))
    g = g if gb else _broadcast(xp, g, size)
    rank = np.ndim(g) - 1
    ms = _example_shape(mask, mb)
    vs = _example_shape(value, vb)
    if not (len(vs) == 0 or tuple(vs) == tuple(np.shape(g)[1:])):
        picked = batching.getitem(
            g, mask, (True, mb)
        )  # an unbatched mask: NumPy's gather
        return unbroadcast(picked, value, (True, vb))
    m = mask if mb else xp.broadcast_to(mask, (size, *ms))
    m = xp.reshape(m, (size, *ms) + (1,) * (rank - len(ms)))
    return unbroadcast(xp.where(m, g, 0), value, (True, vb))


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
        if operand_batched:
            return zeros
        return _broadcast(xp, zeros, _size((g, gb), (a, ab), (b, bb)))
    ra, rb = _rank(a, ab), _rank(b, bb)
    if isinstance(
        axes, (int, np.integer)
    ):  # ``axes=k``: a's last k axes with b's first k
        a_axes, b_axes = list(range(ra - axes, ra)), list(range(axes))
    else:
        a_axes, b_axes = ([], []) if axes is None else axes
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
        grad = _broadcast(xp, grad, _size((g, gb), (a, ab), (b, bb)))
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


def _contraction_at(product, u, a, b, index, on, like, batched):
    """``rt.dot_at``/``inner_at``/``tensordot_at`` per example: ``product`` (the batched contraction) with
    operand ``index`` replaced by ``u``, or, unless ``on``, zeros like ``like`` (the result's shape where
    ``like`` is None); every example's, so the batch axis is there whichever operand carries it.
    """
    if len(batched) not in (
        3,
        4,
    ):  # (``u``, ``a``, ``b``, and ``like``'s where it is given)
        raise ValueError(
            f"batched_vjps: {len(batched)} flags for a contraction's operands"
        )
    fu, fa, fb = batched[:3]
    fl = batched[3] if len(batched) > 3 else False
    size = next(
        int(np.shape(x)[0])
        for x, flag in ((u, fu), (a, fa), (b, fb), (like, fl))
        if flag
    )
    if not on and like is not None:
        zeros = arrays.zeros_like_float(like)
        return zeros if fl else _broadcast(namespace(zeros), zeros, size)
    x0, f0, x1, f1 = (u, fu, b, fb) if index == 0 else (a, fa, u, fu)
    out = product(x0, x1, (f0, f1))
    out = out if (f0 or f1) else _broadcast(namespace(out), out, size)
    return out if on else out * 0


def dot_at(u, a, b, index, on, like, batched):
    """``rt.dot_at`` per example: ``np.dot`` with operand ``index`` replaced by ``u``."""
    return _contraction_at(batching.dot, u, a, b, index, on, like, batched)


def inner_at(u, a, b, index, on, like, batched):
    """``rt.inner_at`` per example: ``np.inner`` with operand ``index`` replaced by ``u``."""
    return _contraction_at(batching.inner, u, a, b, index, on, like, batched)


def tensordot_at(u, a, b, axes, index, on, like, batched):
    """``rt.tensordot_at`` per example: ``np.tensordot`` with operand ``index`` replaced by ``u``."""

    def product(x0, x1, flags):
        return batching.tensordot(x0, x1, axes, flags)

    return _contraction_at(product, u, a, b, index, on, like, batched)


# --- linalg.solve: NumPy's vector convention read from one example of ``b`` -----------------------


def _align(*operands):
    """``(x, batched, core)`` triples (``core``: 2 for matrices, 1 for vectors) with each batched operand's
    stack axes lifted to the others', so its batch axis lines up with no example's axis.
    """
    stacks = max(_rank(x, flag) - core for x, flag, core in operands)
    return [lift(x, stacks + core) if flag else x for x, flag, core in operands]


def _vectors(b, flag) -> bool:
    return _rank(b, flag) == 1


def _solve_vec(xp, a, v, vectors):
    if vectors:
        return xp.linalg.solve(a, xp.expand_dims(v, -1))[..., 0]
    return xp.linalg.solve(a, v)


def _matvec(xp, m, v, vectors):
    if vectors:
        return xp.matmul(m, xp.expand_dims(v, -1))[..., 0]
    return xp.matmul(m, v)


def _outer(xp, u, v, vectors):
    if vectors:
        return xp.expand_dims(u, -1) * xp.expand_dims(v, -2)
    return xp.matmul(u, xp.swapaxes(v, -1, -2))


def _with_batch(x, flag, size):
    return x if flag else _broadcast(namespace(x), x, size)


def _pair(op, x, v, b, batched, x_is_matrix):
    """``op(x, v)`` per example, ``b`` (one example of it) saying whether ``v`` holds vectors or matrices;
    ``x`` a matrix per example, or shaped like ``v``."""
    fx, fv, fb = batched
    vec = _vectors(b, fb)
    core = 1 if vec else 2
    x2, v2 = _align((x, fx, 2 if x_is_matrix else core), (v, fv, core))
    out = op(namespace(x, v), x2, v2, vec)
    return _with_batch(out, fx or fv, _size((x, fx), (v, fv), (b, fb)))


def solve_like(a, v, b, batched):
    """``rt.solve_like`` per example."""
    return _pair(_solve_vec, a, v, b, batched, x_is_matrix=True)


def solve_matvec(m, v, b, batched):
    """``rt.solve_matvec`` per example."""
    return _pair(_matvec, m, v, b, batched, x_is_matrix=True)


def solve_outer(u, v, b, batched):
    """``rt.solve_outer`` per example."""
    return _pair(_outer, u, v, b, batched, x_is_matrix=False)


def solve_vjp_b(g, a, b, batched):
    """``rt.solve_vjp_b`` per example: ``solve(a.T, g)`` summed to ``b``'s examples."""
    fg, fa, fb = batched
    vec = _vectors(b, fb)
    xp = namespace(g, a)
    a2, g2 = _align((a, fa, 2), (g, fg, 1 if vec else 2))
    b_bar = _solve_vec(xp, xp.swapaxes(a2, -1, -2), g2, vec)
    return unbroadcast(b_bar, b, (fa or fg, fb))


def solve_vjp_a(g, a, b, ans, batched):
    """``rt.solve_vjp_a`` per example: ``-solve(a.T, g) @ ans.T`` summed to ``a``'s examples."""
    fg, fa, fb, fx = batched
    vec = _vectors(b, fb)
    core = 1 if vec else 2
    xp = namespace(g, a, ans)
    a2, g2, x2 = _align((a, fa, 2), (g, fg, core), (ans, fx, core))
    b_bar = _solve_vec(xp, xp.swapaxes(a2, -1, -2), g2, vec)
    grad = -_outer(xp, b_bar, x2, vec)
    return unbroadcast(grad, a, (fa or fg or fx, fa))


def solve_jvp_a(a_dot, a, b, ans, batched):
    """``rt.solve_jvp_a`` per example: ``-solve(a, a_dot @ ans)``."""
    fd, fa, fb, fx = batched
    vec = _vectors(b, fb)
    core = 1 if vec else 2
    xp = namespace(a_dot, a, ans)
    d2, a2, x2 = _align((a_dot, fd, 2), (a, fa, 2), (ans, fx, core))
    out = -_solve_vec(xp, a2, _matvec(xp, d2, x2, vec), vec)
    size = _size((a_dot, fd), (a, fa), (b, fb), (ans, fx))
    return _with_batch(out, fd or fa or fx, size)


# --- gathers along an axis: the cotangent added back per example -----------------------------------


def _example_axis(axis, rank):
    return int(axis) % rank


def take_vjp(g, a, indices, axis, batched):
    """``rt.take_vjp`` per example: ``g`` added back at the indices, which may differ per example
    (``batching.take``'s cotangent)."""
    fg, fa, fi = batched
    xp = namespace(g, a)
    size = _size((g, fg), (a, fa), (indices, fi))
    if fi:
        from .batched_indexing import index_add

        shape = _example_shape(a, fa)
        dtype = xp.result_type(g, float)
        g = _with_batch(g, fg, size)
        if axis is None:
            flat = xp.zeros((size, int(np.prod(shape, dtype=int))), dtype)
            back = index_add(flat, indices, g, (True, True, True))
            return xp.reshape(back, (size, *shape))
        k = _example_axis(axis, len(shape))
        index = (slice(None),) * k + (indices,)
        flags = (True, (False,) * k + (True,), True)
        return index_add(xp.zeros((size, *shape), dtype), index, g, flags)
    g = _with_batch(g, fg, size)
    shape = _example_shape(a, fa)
    dtype = xp.result_type(g, float)
    indices = xp.asarray(indices)
    if axis is None:
        rows = np.reshape(np.arange(size), (size,) + (1,) * np.ndim(indices))
        flat = xp.zeros((size, int(np.prod(shape, dtype=int))), dtype)
        return xp.reshape(_index_add(flat, (rows, indices), g), (size, *shape))
    index = (slice(None),) * (_example_axis(axis, len(shape)) + 1) + (indices,)
    return _index_add(xp.zeros((size, *shape), dtype), index, g)


def _index_add(target, index, value):
    from .arrays import index_add

    return index_add(target, index, value)


def take_along_axis_vjp(g, arr, indices, axis, batched):
    """``rt.take_along_axis_vjp`` per example: ``g`` added back at each example's indices along ``axis``
    (repeated indices accumulate; where ``arr`` broadcast against ``indices``, its copies add up).
    """
    fg, fa, fi = batched
    xp = namespace(g, arr, indices)
    size = _size((g, fg), (arr, fa), (indices, fi))
    g = _with_batch(g, fg, size)
    indices = _with_batch(xp.asarray(indices), fi, size)
    shape = _example_shape(arr, fa)
    dtype = xp.result_type(g, float)
    rows = np.arange(size)
    if axis is None:  # each example read flat, its indices one-dimensional
        flat = xp.zeros((size, int(np.prod(shape, dtype=int))), dtype)
        out = _index_add(flat, (rows[:, None], indices), g)
        return xp.reshape(out, (size, *shape))
    axis = _example_axis(axis, len(shape))
    rank = len(shape) + 1
    index = [np.reshape(rows, (size,) + (1,) * (rank - 1))]
    for d, (n, m) in enumerate(zip(shape, np.shape(g)[1:])):
        if d == axis:
            index.append(indices)
            continue
        along = np.arange(m) if n == m else np.zeros(m, int)
        index.append(np.reshape(along, (1,) * (d + 1) + (m,) + (1,) * (rank - d - 2)))
    return _index_add(xp.zeros((size, *shape), dtype), tuple(index), g)


# --- products: cumprod's helpers along a shifted axis, einsum's with a letter for the batch axis -------


def _along(axis, x, flag):
    """A per-example ``axis`` of ``x`` as an axis of the batched array."""
    return int(axis) % _rank(x, flag) + 1


def cumprod_vjp(g, a, axis, batched):
    """``rt.cumprod_vjp`` per example (``axis=None``: each example was flattened first)."""
    from .rulesupport import cumprod_vjp as one

    fg, fa = batched
    xp = namespace(g, a)
    size = _size((g, fg), (a, fa))
    g, a = _with_batch(g, fg, size), _with_batch(a, fa, size)
    if axis is None:
        return xp.reshape(one(g, xp.reshape(a, (size, -1)), 1), np.shape(a))
    return one(g, a, _along(axis, a, True))


def cumprod_jvp(t, a, axis, batched):
    """``rt.cumprod_jvp`` per example (``axis=None``: each example flattened, as ``cumprod`` does)."""
    from .rulesupport import cumprod_jvp as one

    ft, fa = batched
    xp = namespace(t, a)
    size = _size((t, ft), (a, fa))
    t, a = _with_batch(t, ft, size), _with_batch(a, fa, size)
    if axis is None:
        return one(xp.reshape(t, (size, -1)), xp.reshape(a, (size, -1)), 1)
    return one(t, a, _along(axis, a, True))


def batching_einsum_vjp(g, subscripts, operands, batched):
    """Cotangents (a list) of the operands of ``batching.einsum(subscripts, batched, *operands)``:
    each example's (``g`` is batched), summed over the batch for an operand the same for every example.
    """
    size = int(np.shape(g)[0])
    every = [_with_batch(o, flag, size) for o, flag in zip(operands, batched)]
    per_example = einsum_vjp(g, subscripts, every, (), (True, True))
    return [sum_unbatched(c, flag) for c, flag in zip(per_example, batched)]


def einsum_vjp(g, subscripts, operands, extra, batched):
    """``rt.einsum_vjp`` per example: the subscripts given a fresh letter for the batch axis of ``g`` and
    of every operand (``extra``: constants, the same for every example)."""
    from .linalg import einsum_vjp as one

    fg, fo = batched
    size = next(
        int(np.shape(x)[0])
        for x, flag in ((g, fg), *((o, fo) for o in operands))
        if flag
    )
    g = _with_batch(g, fg, size)
    operands = [_with_batch(o, fo, size) for o in operands]
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    specs = inputs.split(",")
    # NumPy's implicit output: the ellipsis dims, then the letters seen once, sorted
    if not arrow:
        letters = [c for c in inputs if c.isalpha()]
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    batch = next(c for c in batching._LETTERS if c not in spec)
    n = len(operands)
    specs = [batch + s for s in specs[:n]] + specs[n:]
    return one(g, ",".join(specs) + "->" + batch + output, operands, extra)
