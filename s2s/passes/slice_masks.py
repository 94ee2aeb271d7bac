"""Slices whose bounds a compiled loop computes, as selections by a mask (what ``passes/masks.py`` rewrites).

Guarantee of ``as_selections(body, varying, namer)``: in a local function (a
loop's body or a branch, whose parameters are traced when it compiles),
``s = x[k, lo:hi]`` (integer keys, and one slice of step 1 a bound of which
reads ``varying``, the parameters and what the function computes from them,
then keys or whole slices ``:``), also read as ``rt.index_get(x, xp.s_[...])``,
becomes::

    row = x[k]
    window = rt.span_mask(row, lo, hi, (k,))
    s = row[window]

(``U[k:, k]`` runs along ``U[:, k]``; ``rt.span_mask`` checks that the keys
are integers, as index arrays would move the sliced axis.)

and a write ``x = rt.index_set(x, xp.s_[k, lo:hi], v)`` becomes
``row = rt.index_set(x[k], window, v)`` then ``x = rt.index_set(x, k, row)``.
Slices with the same bounds (the same expressions of names not bound again
in between) share one mask. ``masks`` then rewrites the selections that feed
whole reductions, products of two of them (``U[i, i + 1:] @ x[i + 1:]``) and
masked writes; ``unresolved`` names the masks of the others, which the caller
leaves as the slices they were (compiled, they stay the located error about
bounds that the compiled code computes).
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import call, dotted, int_literal, names_in, tuple_of
from .dataflow import reads, writes


def as_selections(body, varying: set, namer, keep=None) -> tuple[list, dict]:
    """``(body, windows)``: ``body`` with its slices by computed bounds as selections by masks, and each
    mask's name -> its key (the bounds' code); with ``keep``, only the slices whose key it holds.
    """
    varying = set(varying)
    defs = {}  # a name bound once so far -> its value's code
    masks = {}  # key -> (mask name, the names its bounds read)
    out, windows = [], {}
    for stmt in body:
        converted = _converted(stmt, varying, defs, masks, namer, keep, windows)
        out.extend(converted if converted is not None else [stmt])
        written = writes(stmt)
        if reads(stmt) & varying:
            varying |= written
        masks = {k: m for k, m in masks.items() if not written & m[1]}
        single = isinstance(stmt, ir.Assign) and isinstance(stmt.target, cst.Name)
        for name in written:  # (a name bound twice: its code is no key)
            defs[name] = stmt.value if single and name not in defs else None
    return out, windows


def derived(body, varying: set) -> set:
    """``varying`` and the names ``body`` computes from them (what a local function made here reads as
    traced values)."""
    varying = set(varying)
    for stmt in ir.walk(body):
        if reads(stmt) & varying:
            varying |= writes(stmt)
    return varying


def unresolved(body, windows: dict) -> set:
    """The keys of the masks in ``windows`` that ``body`` still selects or writes by (not rewritten)."""
    left = set()
    for stmt in ir.walk(body):
        value = getattr(stmt, "value", None)
        if value is None:
            continue
        for node in _indices(value):
            if isinstance(node, cst.Name) and node.value in windows:
                left.add(windows[node.value])
    return left


def _indices(value):
    """The indices ``value`` selects or writes by: ``x[m]``, ``rt.index_set(x, m, v)``."""
    if isinstance(value, cst.Subscript) and len(value.slice) == 1:
        index = value.slice[0].slice
        if isinstance(index, cst.Index):
            yield index.value
    writes_or_reads = ("rt.index_set", "rt.index_get")
    if isinstance(value, cst.Call) and dotted(value.func) in writes_or_reads:
        yield value.args[1].value


def _converted(stmt, varying, defs, masks, namer, keep, windows):
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.target, cst.Name)):
        return None
    value = stmt.value
    written = None
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):
        base, elements = value.value, value.slice
    elif isinstance(value, cst.Call) and dotted(value.func) in (
        "rt.index_get",
        "rt.index_set",
    ):
        args = [a.value for a in value.args]
        if not isinstance(args[0], cst.Name) or not _is_index(args[1]):
            return None
        base, elements = args[0], args[1].slice
        if dotted(value.func) == "rt.index_set":
            written = args[2]
    else:
        return None
    window = _window(elements, varying)
    if window is None:
        return None
    k, low, high = window
    key = (_code(low, defs), _code(high, defs))
    if keep is not None and key not in keep:
        return None
    out = []
    # the line the slice runs along: ``x`` itself, or ``x[i]``, ``U[:, k]`` (the slice as ``:``)
    line = [
        el.slice if j != k else cst.Slice(None, None) for j, el in enumerate(elements)
    ]
    whole = all(isinstance(p, cst.Slice) for p in line)
    row = base
    if not whole:
        row = cst.Name(namer.fresh("row"))
        out.append(ir.Assign(row, _subscript(base, line), stmt.origin))
    # (keys must be integers: index arrays would move the sliced axis)
    keys = [
        p.value
        for p in line
        if isinstance(p, cst.Index) and isinstance(p.value, cst.Name)
    ]
    mask = masks.get(key)
    if mask is None:
        name = cst.Name(namer.fresh("window"))
        bounds = [b if b is not None else cst.Name("None") for b in (low, high)]
        args = [row, *bounds] + ([tuple_of(*keys)] if keys else [])
        out.append(ir.Assign(name, call("rt.span_mask", *args), stmt.origin))
        read = {n for b in (low, high) if b is not None for n in names_in(b)}
        for b in (low, high):
            if isinstance(b, cst.Name) and defs.get(b.value) is not None:
                read |= names_in(defs[b.value])
        masks[key] = mask = (name, read)
        windows[name.value] = key
    name = mask[0]
    if written is None:
        selection = cst.Subscript(row, [cst.SubscriptElement(cst.Index(name))])
        out.append(ir.Assign(stmt.target, selection, stmt.origin))
        return out
    if whole:
        out.append(
            ir.Assign(
                stmt.target, call("rt.index_set", base, name, written), stmt.origin
            )
        )
        return out
    new_row = cst.Name(namer.fresh("row"))
    out.append(
        ir.Assign(new_row, call("rt.index_set", row, name, written), stmt.origin)
    )
    at = line[0].value if len(line) == 1 else _index_expression(line)
    out.append(
        ir.Assign(stmt.target, call("rt.index_set", base, at, new_row), stmt.origin)
    )
    return out


def _is_index(node) -> bool:
    """``xp.s_[...]``: an index of several components (or a slice) as a value."""
    return isinstance(node, cst.Subscript) and dotted(node.value) == "xp.s_"


def _window(elements, varying):
    """``(k, low, high)`` for one slice of step 1 at position ``k`` with a bound in ``varying``, keys before
    it and keys or whole slices after it (the axis it runs along is then the leading one of the line
    ``x[keys..., :, ...]``)."""
    slices = [k for k, el in enumerate(elements) if isinstance(el.slice, cst.Slice)]
    if not slices:
        return None
    k = slices[0]
    for el in elements:
        if isinstance(el.slice, cst.Index) and (
            el.slice.star or not _atom(el.slice.value)
        ):
            return None
    part = elements[k].slice
    if part.step is not None and int_literal(part.step) != 1:
        return None
    bounds = [b for b in (part.lower, part.upper) if b is not None]
    if not all(_atom(b) for b in bounds):
        return None
    if not any(isinstance(b, cst.Name) and b.value in varying for b in bounds):
        return None
    for other in slices[1:]:
        whole = elements[other].slice
        if any(b is not None for b in (whole.lower, whole.upper, whole.step)):
            return None
    return k, part.lower, part.upper


def _atom(node) -> bool:
    return isinstance(node, cst.Name) or int_literal(node) is not None


def _code(bound, defs) -> str | None:
    """A bound's code, a name bound once read as the value it holds (``_add`` -> ``i + 1``)."""
    if bound is None:
        return None
    if isinstance(bound, cst.Name) and defs.get(bound.value) is not None:
        return ir.code(defs[bound.value])
    return ir.code(bound)


def _subscript(base, parts) -> cst.Subscript:
    return cst.Subscript(base, [cst.SubscriptElement(p) for p in parts])


def _index_expression(parts) -> cst.Subscript:
    return _subscript(cst.parse_expression("xp.s_"), parts)
