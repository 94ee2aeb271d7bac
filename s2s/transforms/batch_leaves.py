"""The batching of a gradient's residuals leaf by leaf: which items of a tuple display (a branch's or a
loop's residuals, nested) carry the batch axis, as nested flags (``{index: flag or flags}``).

A display a batched body returns is given the batch axis only where its items have one
(``broadcast_leaves``); ``rt.batch_first(steps, mask(flags))`` turns a loop's stacked outputs back to
batch-major leaf by leaf; the names they are bound to, and the items a loop over them unpacks, are
marked alike (``unpacked_flags``), a tuple of its own through ``Batch.displayed``.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..passes.normal_form import is_static


def any_batched(flag) -> bool:
    """Whether a display's item is batched: its flag, or, for a tuple of its own, any of its items'."""
    if isinstance(flag, dict):
        return any(any_batched(f) for f in flag.values())
    return flag


def leaf_flags(inner, display: cst.Tuple) -> dict:
    """Whether each item of a tuple display (the steps' outputs) is batched: a tuple of its own item by
    item, a display's holder by its own flags, ``None`` and literals not."""
    flags = {}
    for k, el in enumerate(display.elements):
        v = el.value
        if isinstance(v, cst.Tuple):
            flags[k] = leaf_flags(inner, v)
        elif isinstance(v, cst.Name) and v.value in inner.displayed:
            flags[k] = inner.displayed[v.value]
        else:
            flags[k] = not is_static(v) and inner.is_batched(v)
    return flags


def all_batched(flags) -> bool:
    """Whether every leaf is batched (then one flag says it: the whole value)."""
    if isinstance(flags, dict):
        return all(all_batched(f) for f in flags.values())
    return flags


def broadcast_leaves(inner, display: cst.Tuple, flags: dict) -> cst.Tuple:
    """The display with its batched items given the batch axis (a holder of items as it is)."""
    elements = []
    for k, el in enumerate(display.elements):
        v, flag = el.value, flags[k]
        if isinstance(v, cst.Tuple) and isinstance(flag, dict):
            v = broadcast_leaves(inner, v, flag)
        elif flag is True:
            v = inner.broadcast(v)
        elements.append(el.with_changes(value=v))
    return display.with_changes(elements=elements)


def mask(flags):
    """Nested flags as the nested tuple ``rt.batch_first`` reads."""
    if isinstance(flags, dict):
        return tuple(mask(flags[k]) for k in sorted(flags))
    return bool(flags)


def held_flags(b, sequence):
    """A sequence's batching: its displayed leaves' flags where it holds some (a tuple display of
    sequences item by item), else one flag."""
    if isinstance(sequence, cst.Name) and sequence.value in b.displayed:
        flags = b.displayed[sequence.value]
    elif isinstance(sequence, cst.Tuple):
        flags = {k: held_flags(b, el.value) for k, el in enumerate(sequence.elements)}
    else:
        return b.is_batched(sequence)
    if all_batched(flags):
        return True
    return flags if any_batched(flags) else False


def unpacked_flags(target, flag, batched: set, held: dict) -> None:
    """The names ``target`` unpacks from an item flagged ``flag`` (nested flags for a tuple): the batched
    ones into ``batched``, those bound to a tuple of flags of its own into ``held``."""
    if isinstance(flag, dict) and isinstance(target, (cst.Tuple, cst.List)):
        for k, el in enumerate(target.elements):
            unpacked_flags(el.value, flag.get(k, True), batched, held)
        return
    names = set(ir.target_names(target)) - {"_"}
    if isinstance(flag, dict) and isinstance(target, cst.Name):
        held[target.value] = flag
    if any_batched(flag):
        batched |= names


def leaf_axes(flags):
    """Nested flags as ``rt.batch_leaves``'s axes: 0 for a batched leaf, None for one to broadcast (a
    tuple's items in order, a dict's by key)."""
    if not isinstance(flags, dict):
        return 0 if flags else None
    # (a tuple display's flags are under its negative positions too: ``x[-1]``)
    positions = sorted(k for k in flags if isinstance(k, int) and k >= 0)
    if positions and all(isinstance(k, int) for k in flags):
        return tuple(leaf_axes(flags[k]) for k in positions)
    return {k: leaf_axes(f) for k, f in flags.items()}
