"""What batched generated code (``s2s.vmap``) calls for ops whose batching depends on ranks.

Convention: a *batched* operand carries its batch axis at axis 0 (size ``B``); an
*unbatched* one has no batch axis and is shared by every example. A ``batched``
argument is a tuple of bools, one per operand, in order. Results are always
batched. Each function computes exactly ``stack([op(example_i(args)) for i in
range(B)])``, where ``example_i(a)`` is ``a[i]`` for a batched operand and ``a``
otherwise, without a Python loop over the batch and without ``jax.vmap``: the
batch axis rides along in broadcasting, ``einsum`` letters or an ``arange(B)``
advanced index. Everything works eagerly on NumPy arrays and on JAX arrays under
``jax.jit`` (only static shapes and ranks are read).
"""

import numpy as np

from .arrays import _is_jax, namespace
from .batch_axes import lift
from .trees import _child, _children, _is_container, _rebuild, tree_map

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

__all__ = [
    "any_example",
    "clip_index",
    "cond_with_residuals",
    "digitize",
    "dot",
    "einsum",
    "fill_index",
    "getitem",
    "guard",
    "guard_vjp",
    "in_bounds",
    "index_add",
    "index_get",
    "index_max",
    "index_min",
    "index_multiply",
    "index_read_add",
    "index_set",
    "inner",
    "matmul",
    "norm",
    "outer",
    "reads_whole",
    "require_unique",
    "searchsorted",
    "select",
    "solve",
    "take",
    "take_length",
    "tensordot",
    "vdot",
    "zero_at",
]


# --------------------------------------------------------------------------- helpers


def _flags(batched, count, name):
    """``batched`` as a tuple of ``count`` bools, checked: at least one operand is batched."""
    flags = tuple(bool(f) for f in batched)
    if len(flags) != count:
        raise ValueError(
            f"batching.{name}: `batched` has {len(flags)} flags for {count} operands"
        )
    if not any(flags):
        raise ValueError(
            f"batching.{name}: no operand is batched, so there is no batch size; "
            "call the unbatched operation instead"
        )
    return flags


def _rank(x, flag):
    """The rank of one example of ``x``."""
    return np.ndim(x) - int(flag)


def _lift(xp, x, flag, rank):
    """A batched ``x`` with size-1 axes after the batch axis, so one example has rank ``rank``
    (``rt.lift``); an unbatched ``x`` as it is: right-aligned broadcasting pads it on the left.
    """
    return lift(x, rank) if flag else x


def _contract(xp, a, b, flags, a_axes, b_axes):
    """Per-example ``tensordot(a_i, b_i, (a_axes, b_axes))`` (non-negative per-example axes) as one einsum."""
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    letters = iter(_LETTERS[1:])
    batch = _LETTERS[0]
    a_letters = [next(letters) for _ in range(ra)]
    b_letters = [None] * rb
    for i, j in zip(a_axes, b_axes):
        b_letters[j] = a_letters[i]
    b_letters = [c if c is not None else next(letters) for c in b_letters]
    out = [a_letters[i] for i in range(ra) if i not in a_axes]
    out += [b_letters[j] for j in range(rb) if j not in b_axes]
    a_spec = (batch if flags[0] else "") + "".join(a_letters)
    b_spec = (batch if flags[1] else "") + "".join(b_letters)
    return xp.einsum(f"{a_spec},{b_spec}->{batch}{''.join(out)}", a, b)


def _multiply(xp, a, b, flags):
    """Per-example ``a_i * b_i`` (NumPy broadcasting within each example)."""
    rank = max(_rank(a, flags[0]), _rank(b, flags[1]))
    return _lift(xp, a, flags[0], rank) * _lift(xp, b, flags[1], rank)


def _flatten(xp, x, flag):
    """One example of ``x`` raveled: ``(B, n)`` for a batched ``x``, ``(n,)`` for an unbatched one."""
    return xp.reshape(x, flat_shape(x, flag))


def flat_shape(x, flag) -> tuple:
    """The shape of ``_flatten(x, flag)`` (what ``outer``'s decomposition reshapes an operand to)."""
    shape = np.shape(x)
    if flag:
        return (shape[0], int(np.prod(shape[1:], dtype=int)))
    return (int(np.prod(shape, dtype=int)),)


def kept_shape(x) -> tuple:
    """A batched ``x``'s shape with every example axis kept as 1 (``norm(..., keepdims=True)``)."""
    shape = np.shape(x)
    return shape[:1] + (1,) * (len(shape) - 1)


def norm_axes(x, axis):
    """The axes of the batched ``x`` that ``norm(x, ord, axis)`` reduces per example (``norm``'s choice)."""
    rank = len(np.shape(x)) - 1
    if axis is None:
        if rank not in (1, 2):
            raise ValueError("batching.norm: Improper number of dimensions to norm.")
        return 1 if rank == 1 else (1, 2)
    if isinstance(axis, (tuple, list)):
        axes = tuple(_axis(int(i), rank, "norm") + 1 for i in axis)
        return axes[0] if len(axes) == 1 else axes
    return _axis(int(axis), rank, "norm") + 1


# --------------------------------------------------------------------------- products


def matmul(a, b, batched):
    """Per-example ``np.matmul(a_i, b_i)``: 1-D operands promoted as NumPy does, stacks broadcast per example."""
    flags = _flags(batched, 2, "matmul")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if ra == 0 or rb == 0:
        raise ValueError(
            "batching.matmul: matmul does not take scalar (0-d) examples; use `*`"
        )
    if ra == 1:
        a = xp.expand_dims(a, -2)
    if rb == 1:
        b = xp.expand_dims(b, -1)
    rank = max(ra, rb, 2)
    out = xp.matmul(_lift(xp, a, flags[0], rank), _lift(xp, b, flags[1], rank))
    if ra == 1 and rb == 1:
        return out[..., 0, 0]
    if ra == 1:
        return out[..., 0, :]
    if rb == 1:
        return out[..., 0]
    return out


def dot(a, b, batched):
    """Per-example ``np.dot(a_i, b_i)``: a product with scalars, else ``a_i``'s last axis against ``b_i``'s
    second-to-last (its only axis when ``b_i`` is 1-D)."""
    flags = _flags(batched, 2, "dot")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if ra == 0 or rb == 0:
        return _multiply(xp, a, b, flags)
    return _contract(xp, a, b, flags, [ra - 1], [max(rb - 2, 0)])


def inner(a, b, batched):
    """Per-example ``np.inner(a_i, b_i)``: a product with scalars, else the last axes contracted."""
    flags = _flags(batched, 2, "inner")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if ra == 0 or rb == 0:
        return _multiply(xp, a, b, flags)
    return _contract(xp, a, b, flags, [ra - 1], [rb - 1])


def vdot(a, b, batched):
    """Per-example ``np.vdot(a_i, b_i)``: both raveled, ``a_i`` conjugated, summed products (one scalar each)."""
    flags = _flags(batched, 2, "vdot")
    xp = namespace(a, b)
    a = _flatten(xp, a, flags[0])
    b = _flatten(xp, b, flags[1])
    if xp.iscomplexobj(a):
        a = xp.conj(a)
    a_spec = "zi" if flags[0] else "i"
    b_spec = "zi" if flags[1] else "i"
    return xp.einsum(f"{a_spec},{b_spec}->z", a, b)


def outer(a, b, batched):
    """Per-example ``np.outer(a_i, b_i)``: both raveled, every product (one matrix each)."""
    flags = _flags(batched, 2, "outer")
    xp = namespace(a, b)
    a = _flatten(xp, a, flags[0])
    b = _flatten(xp, b, flags[1])
    return xp.expand_dims(a, -1) * xp.expand_dims(b, -2)


def tensordot(a, b, axes, batched):
    """Per-example ``np.tensordot(a_i, b_i, axes)``; ``axes`` an int (``a_i``'s last ``axes`` axes against
    ``b_i``'s first) or a pair of per-example axes (or sequences of them, negative ones allowed).
    """
    flags = _flags(batched, 2, "tensordot")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if not isinstance(axes, (tuple, list)) and np.ndim(axes) == 0:
        n = int(axes)
        if n < 0 or n > min(ra, rb):
            raise ValueError(f"batching.tensordot: cannot contract {n} axes")
        a_axes, b_axes = list(range(ra - n, ra)), list(range(n))
    else:
        a_axes, b_axes = (
            [int(x)] if np.ndim(x) == 0 else [int(i) for i in x] for x in axes
        )
        if len(a_axes) != len(b_axes):
            raise ValueError("batching.tensordot: shape-mismatch for sum")
        a_axes = [_axis(i, ra, "tensordot") for i in a_axes]
        b_axes = [_axis(i, rb, "tensordot") for i in b_axes]
    return _contract(xp, a, b, flags, a_axes, b_axes)


def _axis(axis, rank, name):
    if not -rank <= axis < rank:
        raise ValueError(
            f"batching.{name}: axis {axis} is out of bounds for an example of rank {rank}"
        )
    return axis % rank


def einsum(subscripts, batched, *operands):
    """Per-example ``np.einsum(subscripts, *operands_i)``: a fresh letter names the batch axis of the
    batched operands and leads the output (implicit output made explicit as NumPy reads it:
    the ellipsis dims, then the letters seen once, sorted)."""
    flags = _flags(batched, len(operands), "einsum")
    xp = namespace(*operands)
    if not isinstance(subscripts, str):
        raise TypeError(
            "batching.einsum: give the subscripts as a string, not in sublist form"
        )
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    specs = inputs.split(",")
    if len(specs) != len(operands):
        raise ValueError(
            f"batching.einsum: {len(specs)} operand subscripts for {len(operands)} operands"
        )
    if not arrow:
        letters = [c for c in inputs if c.isalpha()]
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    fresh = [c for c in _LETTERS if c not in spec]
    if not fresh:
        raise ValueError("batching.einsum: no letter is left for the batch axis")
    batch = fresh[0]
    specs = [batch + s if f else s for s, f in zip(specs, flags)]
    return xp.einsum(",".join(specs) + "->" + batch + output, *operands)


# --------------------------------------------------------------------------- linear algebra


def solve(a, b, batched):
    """Per-example ``np.linalg.solve(a_i, b_i)``: ``b_i`` a vector when it is 1-D (NumPy 2's rule), else
    (a stack of) matrices, stacks broadcast per example."""
    flags = _flags(batched, 2, "solve")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if ra < 2 or rb < 1:
        raise ValueError(
            "batching.solve: each example needs a (stack of) square matrices and a "
            "vector or matrices"
        )
    if rb == 1:
        b = xp.expand_dims(b, -1)
        rank = ra
        return xp.linalg.solve(
            _lift(xp, a, flags[0], rank), _lift(xp, b, flags[1], rank)
        )[..., 0]
    rank = max(ra, rb)
    return xp.linalg.solve(_lift(xp, a, flags[0], rank), _lift(xp, b, flags[1], rank))


def norm(x, ord=None, axis=None, keepdims=False):
    """Per-example ``np.linalg.norm(x_i, ord, axis, keepdims)`` of a batched ``x`` (``axis`` names
    per-example axes; with ``axis=None`` the example's rank picks a vector or a matrix norm).
    """
    xp = namespace(x)
    if not np.shape(x):
        raise ValueError("batching.norm: `x` must be batched (batch axis 0)")
    if axis is None and ord is None:
        flat = xp.linalg.norm(_flatten(xp, x, True), axis=-1)
        return xp.reshape(flat, kept_shape(x)) if keepdims else flat
    return xp.linalg.norm(x, ord=ord, axis=norm_axes(x, axis), keepdims=keepdims)


# --------------------------------------------------------------------------- control flow


def _map2(fn, a, b):
    if a is None and b is None:
        return None
    if _is_container(a):
        if _is_container(b) and len(_children(a)) == len(_children(b)):
            return _rebuild(
                a, [(k, _map2(fn, v, _child(b, k))) for k, v in _children(a)]
            )
        _refuse_structures()
    if _is_container(b):
        _refuse_structures()
    return fn(a, b)


def _refuse_structures():
    """Per-example paths whose values differ in structure (a tuple on one, an array on the other)."""
    from .control import BRANCH_STRUCTURE
    from .located import Refusal

    raise Refusal(*BRANCH_STRUCTURE)


def select(pred, on_true, on_false):
    """Per-example ``on_true_i if pred_i else on_false_i`` for pytrees of batched leaves (``pred``: ``(B,)``)."""
    xp = namespace(pred, on_true, on_false)
    size = np.shape(pred)
    # one test for every example (on a loop's Python key): ``on_true if pred else on_false``
    if not size:
        if not _is_jax(pred):
            return on_true if bool(pred) else on_false
        return _map2(lambda t, f: xp.where(pred, t, f), on_true, on_false)
    if len(size) != 1:
        raise ValueError(
            f"batching.select: `pred` must have shape (B,), not {tuple(size)}"
        )
    if (on_true is None) != (on_false is None):
        return _chosen_over_none(pred, on_true, on_false)

    def leaf(t, f):
        if (t is None) != (f is None):
            return _chosen_over_none(pred, t, f)
        # the cotangent of an unset value beside a value's: zero, shaped like it
        if type(f).__name__ == "UnsetCotangent" and not _placeholder(t):
            f = xp.zeros_like(t)
        if type(t).__name__ == "UnsetCotangent" and not _placeholder(f):
            t = xp.zeros_like(f)
        # a variable a ``while`` loop's steps assign (``control.filled``): unset until every example's
        # loop ran a step; its cotangent (no step reads it) is zero
        if type(f).__name__ == "Unset":
            if not _is_jax(pred) and np.all(pred):
                return t
            if not _is_jax(pred) and not np.any(pred):
                return f  # no example has assigned it yet
            # zeros for the examples that have not assigned it (read only once they have, as in
            # Python: a ``return`` flag guards ``_result``, a ``while`` loop's step assigns it)
            f = xp.zeros_like(t)
        if type(t).__name__ == "Unset":
            t = xp.zeros_like(f)
        skips = (type(t).__name__ == "Skipped", type(f).__name__ == "Skipped")
        if all(skips):
            return t  # (no example appends)
        if any(skips):
            # an item appended for some examples, not others: each example's list its own length
            from .collected import SKIPPED
            from .located import Refusal

            raise Refusal(*SKIPPED)
        rank = max(np.ndim(t), np.ndim(f), 1)
        return xp.where(xp.reshape(pred, size + (1,) * (rank - 1)), t, f)

    return _map2(leaf, on_true, on_false)


def _chosen_over_none(pred, on_true, on_false):
    """``select`` where one side is None (``best = None`` before a loop whose steps assign it): the other
    side where every example takes it, known when traced (the first step's ``best is None``); else a
    batch that would hold None for some examples and arrays for others, which nothing can.
    """
    value = on_true if on_false is None else on_false
    if not _is_jax(pred):
        taken = np.asarray(pred) if on_false is None else ~np.asarray(pred)
        if np.all(taken):
            return value
        if not np.any(taken):
            return None
    from .located import Refusal

    raise Refusal(
        "a variable is None for some examples and an array for others (assigned on a path a test on "
        "each example's data picks)",
        "give it an array before the test (`best = np.full(shape, -np.inf)`), or run each example "
        "on its own",
    )


def cond_with_residuals(pred, true_fn, false_fn, *operands):
    """``rt.cond_with_residuals`` in batched code, its predicate the same for every example: the branch not
    taken leaves zeros of its residuals' shapes, never None, since a backward branch that runs per example
    (``select`` keeps what it computes for no example) may read them; None only where that branch could
    not run at all (it raises, or reads a variable only the taken branch assigns).
    """
    from . import control

    out, (res_true, res_false) = control.cond_with_residuals(
        pred, true_fn, false_fn, *operands
    )
    if res_true is None:
        res_true = control.zero_residuals(true_fn, operands)
    if res_false is None:
        res_false = control.zero_residuals(false_fn, operands)
    return out, (res_true, res_false)


def _placeholder(v) -> bool:
    return getattr(type(v), "placeholder", False)


def guard(x, pred, shared_by_all):
    """What one branch of a per-example ``if`` reads, safe for the examples that do not take it: their
    values are those of an example that does (the double ``where`` careful JAX users write), so the
    branch computes nothing from inputs it was never meant for, and no nan or inf it would make there
    reaches a derivative. Values are unchanged for the examples that take the branch.

    ``pred``: ``(B,)``, which examples take the branch; ``shared_by_all``: ``x`` has no batch axis (the
    same for every example: returned as it is).
    """
    if shared_by_all:
        return x
    xp = namespace(pred, x)
    first = xp.argmax(pred)  # an example that takes the branch (any, when none does)

    def leaf(v):
        if not hasattr(v, "shape") or np.ndim(v) == 0:
            return v
        reference = xp.asarray(v)[first]
        return xp.where(_per_example(xp, pred, np.ndim(v)), v, reference)

    return tree_map(leaf, x)


def guard_vjp(ct, pred, shared_by_all):
    """The cotangent through ``guard``: each example's own where it takes the branch, zero elsewhere
    (``where``, never a product: a nan computed for an example that does not take it stops here); for
    an unbatched value, zero unless some example takes the branch."""
    xp = namespace(pred, ct)
    if not shared_by_all:
        return tree_map(
            lambda v: xp.where(_per_example(xp, pred, np.ndim(v)), v, 0.0), ct
        )
    some = xp.any(pred)
    return tree_map(lambda v: xp.where(some, v, 0.0), ct)


def _per_example(xp, pred, rank):
    return xp.reshape(pred, np.shape(pred) + (1,) * (rank - 1))


def any_example(pred):
    """Whether any example's ``pred`` holds: the test of a batched ``while`` loop."""
    return namespace(pred).any(pred)


# --------------------------------------------------------------------------- indexing


# Indexing with batched arrays or indices: runtime/batched_indexing.py
from .batched_indexing import (  # noqa: E402
    clip_index,
    fill_index,
    getitem,
    in_bounds,
    index_add,
    index_get,
    index_max,
    index_min,
    index_multiply,
    index_read_add,
    index_set,
    reads_whole,
    require_unique,
    take,
    take_length,
    zero_at,
)


def searchsorted(a, v, side="left", batched=(False, False)):
    """Per-example ``np.searchsorted(a_i, v_i, side)``: with ``a`` batched, the count of ``a_i``'s elements
    below ``v_i`` (``side="right"``: not above), every pair compared at once."""
    xp = namespace(a, v)
    if not batched[0]:
        return xp.searchsorted(a, v, side=side)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    rank = np.ndim(v) - (1 if batched[1] else 0)
    rows = xp.reshape(a, (np.shape(a)[0],) + (1,) * rank + (np.shape(a)[-1],))
    below = (
        rows < xp.expand_dims(v, -1)
        if side == "left"
        else rows <= xp.expand_dims(v, -1)
    )
    return xp.sum(below, axis=-1)


def digitize(x, bins, right=False, batched=(False, False)):
    """Per-example ``np.digitize(x_i, bins, right)``: elementwise in ``x`` for bins every example shares;
    bins that differ per example are refused (their order, rising or falling, decides the count).
    """
    if batched[1]:
        from .located import Refusal

        raise Refusal(
            "`np.digitize` with bins that differ per example under vmap",
            "for rising bins, write `np.searchsorted(bins, x, side='right')` (`side='left'` for right=True)",
        )
    return namespace(x, bins).digitize(x, bins, right=right)


def softmax(x, axis, where, batched):
    """``rt.nn.softmax(x, axis, where=where)`` per example: the axis past the batch axis, ``where``
    given the batch axis and lined up with the examples' axes."""
    from . import nn
    from .batch_axes import batch_axis, broadcast_batch

    xb, wb = batched
    size = np.shape(x)[0] if xb else np.shape(where)[0]
    if not xb:
        x = broadcast_batch(x, size)
    axes = batch_axis(axis, x)
    if where is None:
        return nn.softmax(x, axes)
    if not wb:
        where = broadcast_batch(where, size)
    rank = np.ndim(x) - 1
    where = lift(where, rank)
    return nn.softmax(x, axes, where=where)
