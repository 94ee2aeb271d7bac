"""Batched twins of the helpers that a gradient's loops call (``rt.sequence_vjp`` and the others), for
per-example gradients (``s2s.vmap`` of ``s2s.grad``): each is the helper applied to every example.

``batched`` holds one flag per operand; the result is batched (batch axis 0).
"""

from __future__ import annotations

import inspect

import numpy as np

from . import iteration
from .arrays import namespace
from .trees import _children, _is_record, _rebuild, tree_leaves

# --- loop inputs' cotangents: restructurings along each example's first axis ----------------------
#
# ``rt.sequence_vjp`` and the others index, stack, slice and reverse per-step cotangents along
# axis 0 and read ``xs`` for its structure and length. With the batch axis moved last on every
# array leaf, the per-example helper does all of that to every example at once; the batch axis
# then goes back to the front. Unbatched operands are broadcast first (a view).


def array_leaves(tree):
    """The leaves of ``tree``, through ``Elements`` and ``Zipped`` too (``trees.tree_leaves`` keeps those whole)."""
    from .iteration import Elements, Zipped

    if isinstance(tree, Elements):
        for item in tree.items:
            yield from array_leaves(item)
    elif isinstance(tree, (tuple, list, Zipped)):
        for item in tree:
            yield from array_leaves(item)
    elif isinstance(tree, dict):
        for item in tree.values():
            yield from array_leaves(item)
    elif _is_record(tree):
        for _, item in _children(tree):
            yield from array_leaves(item)
    elif tree is not None:
        yield tree


def _map(fn, tree):
    """``fn`` on each array or number leaf of ``tree``, through tuples, lists, dicts, namedtuples, ``Zipped``
    and ``Elements`` (``None`` and run-time ranges kept)."""
    from .iteration import DynamicRange, Elements, Zipped

    if tree is None or isinstance(tree, (DynamicRange, str)):
        return tree
    if isinstance(tree, Elements):
        return Elements(_map(fn, item) for item in tree.items)
    if isinstance(tree, Zipped):
        return Zipped(_map(fn, item) for item in tree)
    if isinstance(tree, dict):
        return {k: _map(fn, v) for k, v in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(_map(fn, v) for v in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(_map(fn, v) for v in tree)
    if _is_record(tree):
        return _rebuild(tree, [(k, _map(fn, v)) for k, v in _children(tree)])
    return fn(tree)


def _batch_last(tree, flag, size):
    """Every array leaf with its batch axis last (unbatched leaves broadcast to ``size`` first)."""

    def leaf(x):
        if not hasattr(x, "shape") or (flag and np.ndim(x) == 0):
            # a number, or the zero standing for a field with no derivative (a layer's activation
            # name): the same for every example
            return x
        xp = namespace(x)
        if flag:
            return xp.moveaxis(x, 0, -1)
        return xp.broadcast_to(xp.expand_dims(x, -1), (*np.shape(x), size))

    return _map(leaf, tree)


def _batch_front(tree, size):
    """The inverse of ``_batch_last``: the batch axis back in front; a number leaf broadcast to it."""

    def leaf(x):
        xp = namespace(x)
        if not hasattr(x, "shape") or np.ndim(x) == 0:
            return xp.broadcast_to(xp.asarray(x), (size,))
        return xp.moveaxis(x, -1, 0)

    return _map(leaf, tree)


def _restructured(helper, operands, batched):
    """``helper(*operands)`` per example, for a loop-input cotangent helper (see above)."""
    if not any(True for x in operands for _ in tree_leaves(x)):
        return helper(
            *operands
        )  # empty sequences (a loop of no step): nothing per example
    size = _batch_size(*zip(operands, batched))
    moved = [_batch_last(x, flag, size) for x, flag in zip(operands, batched)]
    return _batch_front(helper(*moved), size)


def _per_example(helper):
    """``helper`` (a loop-input cotangent helper of ``rt``) for every example, called as
    ``(*operands, batched)`` with one flag per operand."""

    def per_example(*operands_and_flags):
        *operands, batched = operands_and_flags
        return _restructured(helper, operands, batched)

    per_example.__name__ = helper.__name__
    per_example.__doc__ = f"``rt.{helper.__name__}`` per example."
    # (the helper's parameters, then the flags: what its rules bind)
    signature = inspect.signature(helper)
    batched = inspect.Parameter("batched", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    per_example.__signature__ = signature.replace(
        parameters=[*signature.parameters.values(), batched]
    )
    return per_example


sequence_vjp = _per_example(iteration.sequence_vjp)
sequence_vjp_transpose = _per_example(iteration.sequence_vjp_transpose)
enumerate_vjp = _per_example(iteration.enumerate_vjp)
enumerate_vjp_transpose = _per_example(iteration.enumerate_vjp_transpose)
zip_vjp = _per_example(iteration.zip_vjp)
zip_vjp_transpose = _per_example(iteration.zip_vjp_transpose)
reversed_vjp = _per_example(iteration.reversed_vjp)
reversed_vjp_transpose = _per_example(iteration.reversed_vjp_transpose)
items_vjp = _per_example(iteration.items_vjp)
items_vjp_transpose = _per_example(iteration.items_vjp_transpose)
values_vjp = _per_example(iteration.values_vjp)
values_vjp_transpose = _per_example(iteration.values_vjp_transpose)
sequence_like = _per_example(iteration.sequence_like)
sequence_like_transpose = _per_example(iteration.sequence_like_transpose)


def enumerate_jvp(tangents, start, batched, size):
    """``rt.enumerate_jvp`` per example: zero tangents for the indices, batched like the items."""
    from .iteration import Elements, Zipped, iterate

    tangents = tangents if batched[0] else _broadcast_tree(tangents, size)
    steps = iterate(tangents)
    if isinstance(steps, Elements):
        return Elements((np.zeros(size), x) for x in steps.items)
    first = next(leaf for leaf in array_leaves(steps) if hasattr(leaf, "shape"))
    xp = namespace(first)
    return Zipped((xp.zeros((size, int(np.shape(first)[1]))), steps))


def _broadcast_tree(tree, size):
    def leaf(x):
        xp = namespace(x)
        x = xp.asarray(x)
        return xp.broadcast_to(x, (size, *np.shape(x)))

    return _map(leaf, tree)


def _batch_size(*pairs) -> int:
    """The batch size, from the first batched operand (an array, or a tree of them)."""
    for x, flag in pairs:
        if flag:
            leaves = [leaf for leaf in array_leaves(x) if hasattr(leaf, "shape")]
            if leaves:
                return int(np.shape(leaves[0])[0])
    for (
        x,
        flag,
    ) in pairs:  # a batched container of numbers only: its length is no batch size
        if flag:
            for leaf in tree_leaves(x):
                return int(np.shape(leaf)[0])
    raise ValueError("batched_vjps: no operand is batched, so there is no batch size")


def batched_total(items, size):
    """``total`` of each example of batched ``items``: an array's rows are its axis 1."""
    if hasattr(items, "shape"):
        return namespace(items).sum(items, axis=1)
    return iteration.total(items)


def batched_total_vjp(g, items, flags, size):
    """``total_vjp`` of each example; ``flags``: whether ``g`` and ``items`` are batched (an unbatched one is
    the same for every example)."""
    from .batch_axes import broadcast_batch

    g_batched, items_batched = flags
    g = g if g_batched else broadcast_batch(g, size)
    if hasattr(items, "shape"):
        shape = np.shape(items) if items_batched else (size, *np.shape(items))
        xp = namespace(g, items)
        return xp.broadcast_to(xp.expand_dims(g, 1), shape)
    return iteration.total_vjp(
        g, items if items_batched else broadcast_batch(items, size)
    )
