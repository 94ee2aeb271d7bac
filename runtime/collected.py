"""Lists a loop collects (``hs.append(h)`` in its body), as the runtime holds them after it.

A loop's per-step outputs are stacked (``stack``: one array per leaf where the
steps agree, ``Elements`` where their shapes differ). On top of that form:
steps an ``if`` skipped give ``rt.skipped()``, which ``rt.kept`` drops after
the loop; lists whose items are containers (tuples of a layer's arrays) are
rebuilt item by item (``rt.rows``), so indexing and looping give the items;
lists joined by ``+`` (``[h0] + hs``) are one stacked array where the items
share a shape, else ``Elements`` (``rt.join_steps``).
"""

from __future__ import annotations

import sys

import numpy as np

from .arrays import _concrete_key, _is_jax, namespace, zeros_like_float
from .bounded import BoundedRange, SpanSteps, stacked
from .iteration import Elements, per_element
from .located import Refusal
from .trees import (
    _RECORD_TYPES,
    _child,
    _children,
    _is_container,
    _is_record,
    _rebuild,
    tree_leaves,
    tree_map,
)


def _kind(item):
    """What ``stack`` groups by: numbers and arrays alike (a Python ``False`` at the first step, traced
    values at the others, stack into one array), containers by their type."""
    if isinstance(item, (bool, int, float, complex, np.generic, np.ndarray)) or _is_jax(
        item
    ):
        return "array"
    return type(item)


def stack(items):
    """Per-step outputs stacked along a new leading axis, structure kept.

    Leaves whose shapes differ from step to step (a loop over layers of
    different sizes), that are missing on some steps (the residuals of a
    branch not taken), or containers whose keys differ from step to step,
    stay a Python sequence, as ``Elements``: nothing is dropped.
    """
    if all(it is None for it in items):
        return None
    if any(it is None or getattr(type(it), "placeholder", False) for it in items):
        return Elements(items)  # (``Skipped``, ``rt.unset``: no value on some steps)
    if len({_kind(it) for it in items}) > 1:
        return Elements(items)
    first = items[0]
    if isinstance(first, (BoundedRange, SpanSteps)):  # inner loops over bounded ranges
        return stacked(items)
    if isinstance(first, Elements):  # tapes of inner `while` loops
        return Elements(items)
    if isinstance(first, dict):
        if not first and not any(
            items
        ):  # ``[{} for _ in range(n)]``: n empty dicts, none stacked away
            return Elements(items)
        if any(it.keys() != first.keys() for it in items):
            return Elements(
                items
            )  # dicts with other keys (layers with and without a bias)
        return {k: stack([it[k] for it in items]) for k in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(stack([it[i] for it in items]) for i in range(len(first))))
    if _is_record(first):
        if any(
            [k for k, _ in _children(it)] != [k for k, _ in _children(first)]
            for it in items
        ):
            return Elements(items)
        return _rebuild(
            first,
            [(k, stack([_child(it, k) for it in items])) for k, _ in _children(first)],
        )
    if isinstance(first, (tuple, list)):
        if len({len(it) for it in items}) > 1:
            return Elements(items)
        return type(first)(stack([it[i] for it in items]) for i in range(len(first)))
    if isinstance(first, str) or len({np.shape(it) for it in items}) > 1:
        return Elements(items)
    if _concrete_key(first):  # typed keys (NumPy backend): JAX stacks them
        import jax.numpy as jnp

        return jnp.stack(items)
    return namespace(*items).stack([namespace(it).asarray(it) for it in items])


def rows(ys, axis=0):
    """A list collected by a loop whose items are containers (``caches.append((A, W, Z))``): the loop's
    outputs hold each component stacked (along ``axis``: 1 under ``vmap``), so the list is rebuilt item
    by item, and indexing, slicing and looping over it give its items as Python's list does. Arrays (and
    ``Elements`` of arrays) stay as they are."""
    # a loop's first steps collected values shaped unlike the rest (``peeling.PeeledLeaf``)
    if type(ys).__name__ == "PeeledLeaf":
        ys = Elements(ys.steps())
    if isinstance(ys, Elements):
        return list(ys.items) if any(_is_container(y) for y in ys.items) else ys
    if not _is_container(ys):
        return ys
    first = list(tree_leaves(ys))
    n = len(first[0]) if isinstance(first[0], Elements) else np.shape(first[0])[axis]
    return [_step(ys, i, axis) for i in range(n)]


def rows_vjp(g, ys, axis=0):
    """The cotangent of ``ys`` in ``rows(ys)``: the items' cotangents stacked back, zeros for items none reached."""
    if not isinstance(g, list):
        return g
    items = ys.items if isinstance(ys, Elements) else None
    parts = [
        (
            part
            if part is not None
            else tree_map(zeros_like_float, items[i] if items else _step(ys, i, axis))
        )
        for i, part in enumerate(g)
    ]
    if items is not None:
        return Elements(parts)
    stacked = stack(parts)
    return (
        stacked if axis == 0 else tree_map(lambda leaf: _to_axis(leaf, axis), stacked)
    )


def _step(ys, i, axis):
    """Step ``i`` of every stacked leaf of ``ys`` (along ``axis``; ``Elements`` by item)."""
    return tree_map(
        lambda leaf: (
            leaf[i]
            if isinstance(leaf, Elements)
            else namespace(leaf).take(leaf, i, axis=axis)
        ),
        ys,
    )


def _to_axis(leaf, axis):
    return (
        leaf if isinstance(leaf, Elements) else namespace(leaf).moveaxis(leaf, 0, axis)
    )


def join_steps(parts, axis=0):
    """``a + b + ...`` of lists (``[h0] + hs``, ``hs + gs``), each a Python list, a loop's stacked items or
    ``Elements``: the stacked parts concatenated along ``axis`` (1 under ``vmap``: examples first) where the
    items share a shape; else ``Elements`` of all the items (activations of layers of different widths).
    """
    parts = [p for p in parts if not (isinstance(p, (list, tuple)) and not p)]
    if not any(isinstance(p, Elements) for p in parts):
        stacked = [
            stacked_along(p, axis) if isinstance(p, (list, tuple)) else p for p in parts
        ]
        shapes = {
            None if s is None else np.shape(s)[:axis] + np.shape(s)[axis + 1 :]
            for s in stacked
        }
        if len(shapes) == 1 and None not in shapes:
            return namespace(*stacked).concatenate(stacked, axis=axis)
    items = [item for p in parts for item in items_of(p, axis)]
    # a list of containers (``params[:-1] + [(W, b)]``) is a Python list, as ``rows`` makes it
    return items if any(_is_container(it) for it in items) else Elements(items)


def join_steps_vjp(g, parts, axis=0):
    """The cotangents of ``join_steps``'s parts from its own, each in its part's form."""
    lengths = [len(p) if not hasattr(p, "shape") else np.shape(p)[axis] for p in parts]
    items = items_of(g, axis) if isinstance(g, (Elements, list)) else None
    out, start = [], 0
    for part, n in zip(parts, lengths):
        if (
            not hasattr(part, "shape") and n == 0
        ):  # an empty list's cotangent: an empty list
            out.append(Elements([]) if isinstance(part, Elements) else type(part)())
        elif items is not None:
            piece = items[start : start + n]
            stacked = stacked_along(piece, axis) if hasattr(part, "shape") else None
            out.append(
                stacked
                if stacked is not None
                else (Elements(piece) if isinstance(part, Elements) else list(piece))
            )
        else:
            index = (slice(None),) * axis + (slice(start, start + n),)
            piece = g[index]
            out.append(piece if hasattr(part, "shape") else items_of(piece, axis))
        start += n
    return out


def stacked_along(items, axis):
    """Arrays of one shape stacked along ``axis``; None where their shapes differ, or where they are
    containers (tuples of a layer's arrays)."""
    items = list(items)
    if any(_is_container(it) for it in items):
        return None
    if not items or len({np.shape(it) for it in items}) > 1:
        return None
    return namespace(*items).stack([namespace(it).asarray(it) for it in items], axis)


def items_of(part, axis):
    """A list's items, from its Python list, its ``Elements`` or its stacked array (along ``axis``); none
    from a loop that ran no step (``rt.scan``'s per-step outputs are None then)."""
    if part is None:
        return []
    if isinstance(part, Elements):
        return list(part.items)
    if isinstance(part, (list, tuple)):
        return list(part)
    from .peeling import PeeledLeaf

    if isinstance(part, PeeledLeaf) and axis == 0:
        # (a loop whose steps changed the items' shapes: each step's own)
        return part.steps()
    return [
        namespace(part).take(part, i, axis=axis) for i in range(np.shape(part)[axis])
    ]


class Skipped:
    """The item of a step whose ``if`` skipped the ``append`` (``if W.ndim == 2: mats.append(W)``, or a
    comprehension's ``if`` clause): ``rt.kept`` drops it after the loop. The condition must be known when
    traced (a loop over a Python list, a shape test), as the list's length is its number of true steps.
    """

    placeholder = True

    def __getitem__(self, step):
        return self  # the stacked form of skipped items: each step's is skipped

    def __repr__(self):
        return "rt.skipped()"


_SKIPPED = Skipped()
_RECORD_TYPES[Skipped] = (
    False  # a leaf of s2s's trees; to JAX, a node with no leaves (``skipped``)
)

SKIPPED = (
    "an `append` skipped on a condition known only at run time: the list's length would depend on "
    "the values, which a compiled program cannot have",
    "filter on what is known when traced (a shape, a dict key, a position in a Python list), keep "
    "every item and mask the ones to drop (`np.where(keep, v, 0.0)`; `sum(v for v in vs if v > 0)` "
    "compiles, so does a slice: `x[::2]`), or run eagerly with backend='numpy'",
)


ALL_SKIPPED = (
    "a list to which a loop compiled as one rolled step (over an array's rows) appends nothing: "
    "the derivative of its steps needs the items' shapes",
    "drop the loop (its test is false on every row), or loop over a Python list",
)


def skipped() -> Skipped:
    """The item of a step that appends nothing (see ``Skipped``). To JAX it is a node with no leaves, so
    a ``lax.scan`` whose steps all skip (a static test in a rolled loop) or that saves it for its
    backward pass carries it as it is."""
    if "jax" in sys.modules and not _skipped_registered:
        import jax

        jax.tree_util.register_pytree_node(
            Skipped, lambda _: ((), None), lambda _, __: _SKIPPED
        )
        _skipped_registered.append(True)
    return _SKIPPED


_skipped_registered: list = []


def has_skipped(tree) -> bool:
    return any(isinstance(leaf, Skipped) for leaf in tree_leaves(tree))


def kept(ys, size=None):
    """A list collected by a conditional ``append``, from the loop's per-step items: the skipped ones
    dropped, the others stacked as a loop appending on every step would give them. ``size``: the batch
    size under ``vmap``, where a list that kept nothing is empty in every example."""
    empty = np.zeros((0,) if size is None else (size, 0))  # Python's `sum([])` is 0
    if isinstance(ys, Skipped):  # every step of a rolled loop skipped
        return empty
    if not isinstance(ys, Elements):
        return ys  # no step skipped (or none ran)
    items = [y for y in ys.items if not isinstance(y, Skipped)]
    return stack(items) if items else empty


def kept_vjp(g, ys):
    """The per-step cotangents of ``rt.kept(ys)`` from its own: the skipped steps' placeholders back."""
    if isinstance(ys, Skipped):
        raise Refusal(*ALL_SKIPPED)
    if not isinstance(ys, Elements) or g is None:
        return g
    skips = [isinstance(y, Skipped) for y in ys.items]
    parts = iter(per_element(g, skips.count(False)))
    return Elements([y if skip else next(parts) for y, skip in zip(ys.items, skips)])


def append_row(collected, item, axis=0):
    """``hs.append(v)`` after the loop that collected ``hs``: the items again, ``item`` after them, in the
    form ``collected`` has (a list of containers, ``Elements``, or one array stacked along ``axis``:
    1 under ``vmap``; an item shaped unlike the stacked ones makes ``Elements``). A loop that ran no
    step collected nothing (``None``): the list holds ``item`` alone."""
    if collected is None:
        if _is_container(item):
            return [item]
        return namespace(item).expand_dims(namespace(item).asarray(item), axis)
    if isinstance(collected, list):
        return [*collected, item]
    if isinstance(collected, Elements):
        return Elements([*collected.items, item])
    xp = namespace(collected, item)
    shape = list(np.shape(collected))
    del shape[axis]
    if tuple(shape) == tuple(np.shape(item)):
        return xp.concatenate([collected, xp.expand_dims(item, axis)], axis=axis)
    rows = [xp.take(collected, k, axis=axis) for k in range(np.shape(collected)[axis])]
    return Elements([*rows, item])


def append_row_first(g, collected, item, axis=0):
    """The cotangent of ``collected`` in ``append_row(collected, item, axis)``."""
    if collected is None:
        return None
    if isinstance(g, list):
        return g[:-1]
    if isinstance(g, Elements):
        parts = g.items[:-1]
        if isinstance(collected, Elements):
            return Elements(parts)
        return namespace(*parts).stack(parts, axis=axis)
    n = np.shape(g)[axis] - 1
    return namespace(g).take(g, np.arange(n), axis=axis)


def append_row_last(g, collected, item, axis=0):
    """The cotangent of ``item`` in ``append_row(collected, item, axis)``."""
    if isinstance(g, (list, Elements)):
        return g[-1] if isinstance(g, list) else g.items[-1]
    return namespace(g).take(g, np.shape(g)[axis] - 1, axis=axis)
