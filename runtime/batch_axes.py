"""Axes and shapes in batched generated code (``s2s.vmap``): the batch axis is axis 0 of every batched value.

An *example* is one slice along the batch axis. These helpers translate what
the user's code says about one example (an axis, a shape, ``len``) into the
batched array's terms, move the mapped axes of the inputs to the front and
the batch axis of the outputs to where ``out_axes`` asks, and line up the
operands of elementwise ops whose examples differ in rank.
"""

from __future__ import annotations

import numpy as np

from .arrays import holds_numbers, namespace
from .bounded import BoundedRange
from .iteration import Elements
from .trees import tree_leaves, tree_map


def _is_array(x) -> bool:
    return hasattr(x, "shape") and hasattr(x, "ndim")


def batch_size(*mapped, axis_size=None) -> int:
    """The size of the mapped axes of ``(value, in_axes)`` pairs; JAX's error when they disagree."""
    sizes = set()
    for value, axes in mapped:
        for leaf, axis in _leaves_with_axes(value, axes):
            if axis is not None:
                sizes.add(int(leaf.shape[axis]))
    if axis_size is not None:
        sizes.add(int(axis_size))
    if (
        not sizes
        and mapped
        and all(
            isinstance(leaf, str) for value, _ in mapped for leaf in tree_leaves(value)
        )
    ):
        return None  # a helper mapped over dict keys only (the same for every example): no size
    if not sizes:
        raise ValueError(
            "vmap must have at least one non-None value in in_axes, or be given axis_size"
        )
    if len(sizes) > 1:
        raise ValueError(
            f"vmap got inconsistent sizes for array axes to be mapped: {sorted(sizes)}"
        )
    return sizes.pop()


def _leaves_with_axes(value, axes):
    """(leaf, its mapped axis or None) for each array leaf of ``value``; ``axes`` is a prefix of its tree."""
    if isinstance(value, Elements):  # (a list of items of different shapes: the items)
        value = list(value.items)
    if axes is None or isinstance(axes, int):
        for leaf in tree_leaves(value):
            if isinstance(leaf, str):
                continue  # a dict key read per example (the same for all): no batch axis
            if axes is not None and not (0 <= axes % max(leaf.ndim, 1) < leaf.ndim):
                raise ValueError(
                    f"vmap was requested to map its argument along axis {axes}, which implies that its rank "
                    f"should be at least {axes + 1 if axes >= 0 else -axes}, but is only {leaf.ndim} "
                    f"(its shape is {tuple(leaf.shape)})"
                )
            yield leaf, (None if axes is None else axes % leaf.ndim)
        return
    if isinstance(axes, dict):
        for key in axes:
            yield from _leaves_with_axes(value[key], axes[key])
        return
    if len(axes) != len(value):
        raise ValueError(
            f"vmap in_axes specification must be a tree prefix of the arguments: {axes!r} for a "
            f"{type(value).__name__} of {len(value)} entries"
        )
    for item, axis in zip(value, axes):
        yield from _leaves_with_axes(item, axis)


def batch_leaves(value, axes, size, kept=False):
    """``value`` with each leaf's mapped axis moved to the front; unmapped leaves broadcast to ``size``.
    ``kept``: the unmapped items of a sequence ``axes`` (``(None, 0)``) stay as they are, for a mapped
    helper that reads them unbatched (``transforms/batch.prelude``)."""
    if axes is None or isinstance(axes, int):
        return tree_map(lambda leaf: _to_front(leaf, axes, size), value)
    if isinstance(axes, dict):
        out = dict(value)
        for key in axes:
            out[key] = batch_leaves(value[key], axes[key], size)
        return type(value)(out) if not isinstance(value, dict) else out
    items = [
        v if kept and _unmapped(a) else batch_leaves(v, a, size)
        for v, a in zip(value, axes)
    ]
    if hasattr(value, "_fields"):
        return type(value)(*items)
    return type(value)(items)


def batch_leaves_vjp(g, axes, kept=False):
    """The cotangent of ``value`` in ``batch_leaves(value, axes, size, kept)``: each leaf's batch axis
    moved back to its place, summed where the leaf was broadcast (``None``)."""
    if axes is None or isinstance(axes, int):
        return tree_map(lambda leaf: _from_front(leaf, axes), g)
    if isinstance(axes, dict):
        out = dict(g)
        for key in axes:
            out[key] = batch_leaves_vjp(g[key], axes[key])
        return type(g)(out) if not isinstance(g, dict) else out
    items = [
        v if kept and _unmapped(a) else batch_leaves_vjp(v, a) for v, a in zip(g, axes)
    ]
    if hasattr(g, "_fields"):
        return type(g)(*items)
    return type(g)(items)


def _unmapped(axes) -> bool:
    """Whether ``axes`` (a tree prefix of ints and None) maps no leaf."""
    return next(iter(tree_leaves(axes)), None) is None  # (None is no leaf)


def _from_front(leaf, axis):
    xp = namespace(leaf)
    if axis is None:
        return xp.sum(leaf, axis=0)
    return xp.moveaxis(leaf, 0, axis)


def batch_size_of(tree, axes=None, kept=False) -> int:
    """The size of the leading axis of ``tree``'s leaves (a batched value's batch size); with ``kept``,
    of the items of the sequence ``tree`` that ``axes`` maps (``batch_leaves``)."""
    if kept:
        tree = [v for v, a in zip(tree, axes) if not _unmapped(a)]
    return int(np.shape(next(iter(tree_leaves(tree))))[0])


def rebatch_leaves(g, axes):
    """The cotangent of ``value`` in ``unbatch_leaves(value, axes)``: each leaf's axis moved back to the
    front (``axes`` holds no ``None``)."""
    return batch_leaves(g, axes, None)


def _to_front(leaf, axis, size):
    if (
        axis is None
    ):  # (a placeholder, a key, a range: as ``broadcast_batch`` gives them)
        return broadcast_batch(leaf, size)
    return namespace(leaf).moveaxis(leaf, axis, 0)


def unbatch_leaves(value, axes):
    """Outputs: each leaf's batch axis (0) moved to ``axes`` (an int, or a tree prefix of ints)."""
    if isinstance(axes, int):
        return tree_map(lambda leaf: namespace(leaf).moveaxis(leaf, 0, axes), value)
    if axes is None:
        raise ValueError(
            "vmap out_axes None inside a tree is supported where the function returns that part as "
            "an element of a tuple it writes out (`return a, b` with out_axes=(0, None))"
        )
    if isinstance(axes, dict):
        matches = isinstance(value, dict) and set(axes) == set(value)
    else:
        matches = isinstance(value, (tuple, list)) and len(axes) == len(value)
    if not matches:
        raise ValueError(
            "vmap out_axes specification must be a tree prefix of the corresponding value, got "
            f"specification {axes!r} for a value of type {type(value).__name__}"
            + (f" of length {len(value)}" if isinstance(value, (tuple, list)) else "")
        )
    if isinstance(axes, dict):
        return {k: unbatch_leaves(value[k], axes[k]) for k in value}
    items = [unbatch_leaves(v, a) for v, a in zip(value, axes)]
    if hasattr(value, "_fields"):
        return type(value)(*items)
    return type(value)(items)


def broadcast_batch(value, size):
    """An unbatched value (any tree) given a batch axis of ``size``: every example the same (a Python
    sequence a loop visits, element by element)."""
    if isinstance(value, Elements):
        return Elements([broadcast_batch(item, size) for item in value.items])

    def leaf(x):
        if isinstance(x, BoundedRange):
            return x.broadcast(size)
        if isinstance(
            x, Elements
        ):  # items of different shapes, inside a tuple: each one
            return broadcast_batch(x, size)
        if getattr(type(x), "placeholder", False):
            return x  # no value (``rt.unset``, ``rt.skipped``): none per example either
        if isinstance(x, str) or not holds_numbers(x):
            # a dict key a loop computes (``"W" + str(l)``), a key path: the same for every example
            return x
        xp = namespace(x)
        x = xp.asarray(x)
        return xp.broadcast_to(x, (size, *xp.shape(x)))

    return tree_map(leaf, value)


def batch_scalars(value, size):
    """A batched loop carry with its scalar leaves (Python numbers, 0-d arrays: ``lax.while_loop(cond,
    body, (x, 0))``'s counter) given the batch axis: they have none (a batched leaf is an array with its
    leading batch axis), and a loop whose examples stop apart carries one per example.
    """

    def leaf(x):
        if (
            getattr(type(x), "placeholder", False)
            or isinstance(x, (str, bytes))  # (a setting: the same for every example)
            or np.ndim(x) != 0
        ):
            return x
        xp = namespace(x)
        return xp.broadcast_to(xp.asarray(x), (size,))

    return tree_map(leaf, value)


def lift(x, rank):
    """Batched ``x`` with size-1 axes after the batch axis, so its examples have rank at least ``rank``
    (NumPy broadcasting then lines up examples with examples, not with the batch axis).
    """
    xp = namespace(x)
    missing = rank - (xp.ndim(x) - 1)
    if missing <= 0:
        return x
    return xp.reshape(x, (xp.shape(x)[0],) + (1,) * missing + tuple(xp.shape(x)[1:]))


def example_ndim(x) -> int:
    """``x.ndim`` of one example (an unbatched value's own rank)."""
    return namespace(x).ndim(x) - 1


def largest_rank(*ranks) -> int:
    """The largest of some examples' ranks (Python ints: ``max`` read again as an op would not be one)."""
    return max(ranks)


def example_shape(x) -> tuple:
    """``x.shape`` of one example."""
    return tuple(namespace(x).shape(x)[1:])


def example_size(x) -> int:
    """``x.size`` of one example."""
    shape = example_shape(x)
    size = 1
    for n in shape:
        size *= n
    return size


def example_len(x) -> int:
    """``len(x)`` of one example: the second axis of an array; a container's own length."""
    if _is_array(x):
        return example_shape(x)[0]
    return len(x)


def unpack_examples(x, count):
    """``a, b = x`` for each example: a batched array's examples unpacked along their first axis (each part
    keeps the batch axis in front); a container, whose leaves carry the batch axis already, as it is.
    """
    # a branch's residuals that could not be made (``batching.cond_with_residuals``)
    if x is None:
        from .located import Refusal

        raise Refusal(
            "vmap of a gradient that runs both branches of a choice here (an `if`, or a dict's function "
            "called by key) for every example (its test was kept by a loop, so it is read per example), "
            "but the branch not taken cannot run on these values, so it has no residuals",
            "compute the test from the loop's own values where the branch is (not from what an earlier "
            "step kept), or loop over the examples with `s2s.grad`",
        )
    if not _is_array(x):
        return x
    n = example_len(x)
    if n != count:
        few = "not enough" if n < count else "too many"
        raise ValueError(f"{few} values to unpack (expected {count}, got {n})")
    return tuple(x[:, i] for i in range(count))


def fill_examples(tree, leaves, batched, size):
    """``rt.fill_like`` in batched code: ``tree``'s array leaves carry the batch axis (broadcast first when
    ``batched`` is False), so the rest of a path indexes each example, past the batch axis.
    """
    from .trees import fill

    if not batched:
        tree = broadcast_batch(tree, size)
    return fill(tree, leaves, (slice(None),))


def fill_examples_vjp(g, leaves, batched, size):
    """``rt.fill_like_vjp`` in batched code (the cotangents of ``fill_examples``' leaves): what each
    example's ``g`` holds at each path (``g`` broadcast first when ``batched`` is False).
    """
    from .trees import fill_vjp

    if not batched:
        g = broadcast_batch(g, size)
    return fill_vjp(g, leaves, (slice(None),))


def pack_examples(parts, like):
    """The transpose of ``unpack_examples``: the parts stacked back along each example's first axis when
    ``like`` is a batched array, else the parts as they are."""
    if not _is_array(like):
        return parts
    return namespace(*parts).stack(parts, axis=1)


def example_axes(*xs) -> tuple:
    """Every axis of an example (of the largest of ``xs``), as axes of the batched array
    (``axis=None`` of a reduction)."""
    return tuple(range(1, max(namespace(x).ndim(x) for x in xs)))


def batch_axis(axis, *xs, flattens=False, squeezes=False):
    """A per-example axis (int, tuple of ints, or None for every axis of the largest of ``xs``, as an
    ``axis=None`` literal reads) as an axis of the batched arrays. ``flattens``: the op reads ``None`` as
    "the flattened array" (``np.concatenate``), which a value known only when traced cannot say here;
    ``squeezes``: as every size-1 axis (``np.squeeze``).
    """
    if axis is None and squeezes:
        return unit_axes(xs[0])
    if axis is None:
        if flattens:
            from .located import Refusal

            raise Refusal(
                "`axis=None` passed in a variable to an op that flattens its input for it "
                "(`concatenate`, `cumsum`, `argmax`, ...), under vmap",
                "write `axis=None` in the call itself, or flatten first (`np.ravel(x)`)",
            )
        return example_axes(*xs)
    if isinstance(axis, tuple | list):
        return tuple(batch_axis(a, *xs) for a in axis)
    return axis + 1 if axis >= 0 else axis


def batch_shape(shape, size) -> tuple:
    """A per-example shape (an int or a tuple) with the batch axis in front."""
    if isinstance(shape, int) or getattr(shape, "ndim", 1) == 0:
        shape = (shape,)
    return (size, *tuple(shape))


def flat_examples(x):
    """Each example flattened: ``(batch, -1)`` (an op's ``axis=None`` that flattens its input)."""
    xp = namespace(x)
    return xp.reshape(x, (xp.shape(x)[0], -1))


def example_transpose(x, axes=None):
    """``x.T`` / ``transpose(x, axes)`` of each example."""
    n = example_ndim(x)
    order = tuple(reversed(range(n))) if axes is None else tuple(a % n for a in axes)
    return namespace(x).transpose(x, (0, *(a + 1 for a in order)))


def _swap_leading(x):
    # a stack of per-step Python values (the keys of a loop over a dict's items) has no batch axis
    return namespace(x).moveaxis(x, 1, 0) if _is_array(x) and x.ndim > 1 else x


def loop_first(xs, size=None):
    """A batched sequence a loop runs over, step-major: an array's loop axis (each example's first) in
    front of the batch axis, so each step's item is batched along axis 0; ``zip``/``enumerate`` of
    sequences, each one so. A Python list, tuple or dict is visited item by item: its items are batched
    values already, and stay as they are; an empty one knows the batch ``size`` its items would have
    (a loop over no items still gives its outputs the batch axis).
    """
    from .iteration import Zipped

    if isinstance(xs, Zipped):
        return Zipped(loop_first(x, size) for x in xs)
    if isinstance(xs, (list, tuple, Elements)) and len(xs) == 0:
        return Elements([], getattr(xs, "width", None), size)
    return _swap_leading(xs)


def loop_first_vjp(g, xs):
    """The cotangent of ``loop_first(xs)``: ``g`` batch-major again where ``xs`` had arrays made step-major
    (a list ``xs`` was visited item by item, unchanged: so is its cotangent). Its own transpose.
    """
    from .iteration import Zipped

    if g is None:
        return None
    if isinstance(xs, Zipped):
        return type(g)(loop_first_vjp(gi, xi) for gi, xi in zip(g, xs, strict=True))
    return _swap_leading(g) if _is_array(xs) else g


def sequence_batch_first(xs):
    """A sequence made step-major by ``loop_first``, batch-major again (its inverse)."""
    return loop_first(xs)


def batch_first(ys, flags=True):
    """Stacked per-step values of a batched loop, ``(steps, batch, ...)`` at every array leaf, as batched
    values ``(batch, steps, ...)`` (lists of steps that could not be stacked, ``Elements``, as they are).
    ``flags``: which of them carry the batch axis, a tuple of flags for each tuple of ``ys`` (a
    gradient's residuals, some the same for every example: a branch's test on the loop's index).
    """
    if isinstance(ys, Elements):
        return ys
    if flags is True:
        return tree_map(_swap_leading, ys)
    if flags is False or ys is None:
        return ys
    if isinstance(ys, dict):  # (a dict display's entries, flagged in order)
        return {k: batch_first(y, f) for (k, y), f in zip(ys.items(), flags)}
    parts = [batch_first(y, flag) for y, flag in zip(ys, flags)]
    if hasattr(ys, "_fields"):
        return type(ys)(*parts)
    return tuple(parts) if isinstance(ys, tuple) else parts


def steps_first(ys, flags=True):
    """Batched stacks of per-step values, step-major again (the inverse of ``batch_first``)."""
    return batch_first(ys, flags)


def shape_rank(shape) -> int:
    """The rank a shape argument (an int or a tuple) asks for."""
    return 1 if isinstance(shape, int) or getattr(shape, "ndim", 1) == 0 else len(shape)


def unit_axes(x) -> tuple:
    """The size-1 axes of an example (``squeeze(x)`` with no axis), as axes of the batched ``x``."""
    return tuple(i + 1 for i, n in enumerate(example_shape(x)) if n == 1)


def example_item(x, key):
    """``x[key]`` of each example for a constant key: an array's entry past the batch axis, a container's
    element (its values carry the batch axis already)."""
    if _is_array(x):
        return x[_past_batch(key)]
    return x[key]


def _past_batch(key) -> tuple:
    """``key`` applied past the batch axis (a tuple key ``(0, 1)`` indexes two axes, as ``x[0, 1]``)."""
    return (slice(None), *key) if isinstance(key, tuple) else (slice(None), key)


def tree_sum_batch(g):
    """The cotangent of a broadcast along the batch axis: each leaf summed over it."""
    return tree_map(lambda leaf: namespace(leaf).sum(leaf, axis=0), g)


def example_item_vjp(g, x, key):
    """The cotangent of ``rt.example_item(x, key)``: ``g`` at the key, zeros elsewhere."""
    if _is_array(x):
        xp = namespace(g, x)
        zeros = xp.zeros(xp.shape(x), xp.result_type(g))
        if hasattr(zeros, "at"):
            return zeros.at[_past_batch(key)].add(g)
        zeros[_past_batch(key)] += g
        return zeros
    from .trees import fill_like, tree_add, tree_zeros_like

    # ``ws[:-1]``: its items where they came from
    if isinstance(key, slice) and type(x) in (list, tuple):
        out = list(tree_zeros_like(x))
        for i, item in zip(range(*key.indices(len(x))), g, strict=True):
            out[i] = tree_add(out[i], item)
        return type(x)(out)
    return fill_like(x, {(key,): g})


def first_example(x):
    """The first example of a batched value: what a shape-only computation reads."""
    return tree_map(lambda leaf: leaf[0] if _is_array(leaf) else leaf, x)


def enumerate_steps(xs, start=0, *, size):
    """``rt.enumerate`` of a batched sequence made step-major (``loop_first``), its indices given the batch
    axis too (every value a loop step reads is then batched alike)."""
    from .iteration import Zipped
    from .iteration import enumerate as enumerate_

    pairs = enumerate_(xs, start)
    if isinstance(pairs, Elements):
        return Elements((broadcast_batch(i, size), x) for i, x in pairs.items)
    index, items = pairs
    xp = namespace(index)
    return Zipped(
        (xp.broadcast_to(xp.asarray(index)[:, None], (len(index), size)), items)
    )


def unsum_batch(g, like):
    """The transpose of ``tree_sum_batch``: each leaf of ``g`` broadcast along ``like``'s batch axis."""
    from .trees import tree_leaves as leaves

    sizes = iter([int(namespace(x).shape(x)[0]) for x in leaves(like)])
    return tree_map(lambda leaf: broadcast_batch(leaf, next(sizes)), g)


def sum_unbatched(x, batched):
    """A per-example cotangent as the cotangent of its operand: summed over the batch axis when the
    operand is the same for every example (``batched`` False), as it is otherwise."""
    return x if batched else tree_map(lambda leaf: namespace(leaf).sum(leaf, axis=0), x)
