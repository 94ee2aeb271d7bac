"""Selections by a mask that feed reductions of all of them, as masked reductions.

A write by a mask, ``x[m] = v`` (``rt.index_set``) whose value is a number, a whole reduction of a
selection, or elementwise ops of selections by the same mask, is ``x = np.where(m, v, x)``, ``v`` over
the full shape: ``h[h < 0] = 0.1 * h[h < 0]`` compiles as ``np.where(h < 0, 0.1 * h, h)``.

Guarantee: ``s = x[m]``, where ``m`` is a mask (a comparison, a logical op
or ``isnan``-like test, or the positions ``np.nonzero(m)`` / ``np.where(m)``
of one), whose every read is a reduction of the whole selection
(``np.sum``, ``np.mean``, ``np.max``, ``np.min``, ``np.prod``,
``np.count_nonzero``, ``len``), is rewritten into that reduction of
``np.where(m, x, fill)`` over ``x``'s own shape::

    total = np.sum(h[h > 0])           ->  total = np.sum(np.where(h > 0, h, 0.0))
    mean = np.mean(h[mask])            ->  mean = np.sum(np.where(mask, h, 0.0)) / np.count_nonzero(mask)

A selection given unit axes (``x[m][:, None]``, ``x[m][None]``), and elementwise
ops of such, reduced whole, is the whole array given them: the mask must
select along one axis (``rt.unit_axes_mask``, an error at run time otherwise),
and the reduction's mask gets the same unit axes::

    np.sum(np.logaddexp(0.0, eta[idx][:, None] + offsets[None, :]))

The selection's size depends on the mask's values, so ``jax.jit`` cannot
compile it; the masked reduction has static shapes and the same value and
derivative (``where`` passes the cotangent to the selected elements only).
The fill is the reduction's identity (0, 1, -inf, +inf); a mask of fewer axes
than ``x`` selects along its leading ones (``rt.leading_mask``). Elementwise
ops may read other values too (``m * A[k, k:]``): they broadcast against the
whole array as against the selection, the selected axis as far from the last
one. A product of two selections by one mask, ``a @ b`` (``np.dot``,
``np.inner``, ``np.vdot``), contracting the selected axis, is the product of
the whole arrays zero where the mask drops (``rt.contracted_selection``). A
selection read any other way is kept, and under ``jax.jit`` it is the located
error that says its size depends on the values.

A key the function is given (an argument, or an item, attribute or ``asarray`` of one: ``err[mask]``)
may be a mask or integer positions, told apart only when the code is traced: its selections that
only feed elementwise ops and whole reductions go through ``rt.selection`` (a mask keeps the whole
shape, positions gather), ``rt.selection_mask`` (the kept elements, or all) and
``rt.selection_length`` (``runtime/selections.py``); products and writes by such a key are kept.

Slices whose bounds a compiled loop computes (``x[i + 1:]``) are selections
by ``rt.span_mask`` here (``passes/slice_masks.py``), kept as slices where
the rewrite does not take them all.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import libcst as cst

from .. import ir
from ..cstutil import (
    call,
    dotted,
    iter_nodes,
    literal,
    replace_nodes,
    substitute,
)
from ..naming import Namer
from ..rules import OPS
from . import slice_masks
from .dataflow import reads, used_names, writes
from .normal_form import eqn_of

MASK_OPS = frozenset(
    {
        "less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
        "logical_or", "logical_not", "logical_xor", "isnan", "isfinite", "isinf", "signbit",
    }
)  # fmt: skip
# ``&``, ``|``, ``^``, ``~`` of masks are masks (of integer arrays, they are integers: positions)
BITWISE = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "invert"})
# the reduction's identity: what a dropped element becomes
FILLS = {"sum": "0.0", "prod": "1.0", "max": "-xp.inf", "min": "xp.inf", "mean": "0.0"}


def masks(fn: ir.Function) -> ir.Function:
    """``fn`` with its masked selections that only feed whole reductions rewritten (nested bodies too)."""
    if not any(
        isinstance(s, ir.Def) or _makes_mask(s) or _selects_by_name(s)
        for s in ir.walk(fn.body)
    ):
        return fn  # the common case: no names to hand out, no rewrite
    return _masks(fn, Namer(used_names(fn)), frozenset(), frozenset(fn.param_names))


def _made_masks(body) -> set[str]:
    """The names ``body`` binds to masks (``mask = x > 0``): a nested body (a branch on data, a loop's
    step) selecting by one reads it as a mask too."""
    return {
        s.target.value
        for s in body
        if _makes_mask(s) and isinstance(s.target, cst.Name)
    }


def _makes_mask(stmt) -> bool:
    if not isinstance(stmt, ir.Assign):
        return False
    e = eqn_of(stmt.value)
    return _positions_mask(e) or (
        e.kind == "op"
        and (
            e.name in MASK_OPS
            or _as_bool(e)
            or (e.name in ("nonzero", "where") and len(e.args) == 1)
        )
    )


def _positions_mask(e) -> bool:
    """``rt.nonzero_mask(m)``: positions of nonzeros used only to index, read as their mask
    (``frontend/nonzero_masks``)."""
    return e.kind == "runtime" and e.name == "nonzero_mask"


def _selects_by_name(stmt) -> bool:
    """``s = x[key]``: a key that may be a mask the function is given."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, cst.Subscript)):
        return False
    index = stmt.value.slice[0].slice if len(stmt.value.slice) == 1 else None
    return isinstance(index, cst.Index) and _is_name(index.value)


def _as_bool(e) -> bool:
    """``x.astype(bool)`` (``np.bool_``): a mask of an array's nonzero elements."""
    if e.name != "astype" or len(e.args) != 2 or e.kwargs:
        return False
    return dotted(e.args[1]) in ("bool", "xp.bool_", "xp.bool")


def _masks(
    fn: ir.Function,
    namer: Namer,
    varying: frozenset,
    arguments: frozenset,
    outer: frozenset = frozenset(),
) -> ir.Function:
    """``varying``: the names ``fn`` reads that are traced when it compiles (a local function's parameters
    and what its enclosing functions compute from theirs), by which its slices' bounds may vary.
    ``arguments``: the names of the user function's arguments that ``fn`` sees as they were given.
    ``outer``: the masks its enclosing functions made, which it reads as they are.
    """
    inner = frozenset(slice_masks.derived(fn.body, varying))
    arguments = frozenset(_given(fn.body, arguments))
    rebound = set().union(set(), *(writes(s) for s in ir.walk(fn.body)))
    outer = frozenset(outer - rebound - set(fn.param_names))
    masks_here = outer | _made_masks(fn.body)
    body = [
        (
            ir.Def(
                _masks(
                    s.function,
                    namer,
                    inner | set(s.function.param_names),
                    arguments - set(s.function.param_names),
                    masks_here,
                ),
                s.origin,
            )
            if isinstance(s, ir.Def)
            else s
        )
        for s in fn.body
    ]
    # slices by computed bounds as selections, kept only where their masks are rewritten away
    trial, windows = slice_masks.as_selections(body, varying, copy.deepcopy(namer))
    if windows:
        left = slice_masks.unresolved(
            _rewritten(trial, copy.deepcopy(namer), arguments, outer), windows
        )
        keep = set(windows.values()) - left
        body, _ = slice_masks.as_selections(body, varying, namer, keep)
    return fn.with_body(_rewritten(body, namer, arguments, outer))


def _rewritten(
    body: list, namer: Namer, arguments: frozenset, outer=frozenset()
) -> list:
    # a mask's name, or positions' name -> the mask (those an enclosing function made: as they are)
    found = {name: cst.Name(name) for name in outer}
    positions = set()
    roots = {}  # s = x[m] -> (x, mask name)
    derived = (
        {}
    )  # a selection, or an elementwise op of selections by one mask (and numbers) -> the mask
    scalars = set()  # whole reductions of selections: one number
    # id of ``y = rt.index_set(x, m, v)``, a write by a mask -> (x, mask name, v)
    masked_writes = {}
    # a mask -> the first mask computed by the same expression of the same values
    same = {}
    flipped = (
        {}
    )  # ``t = s.T`` of a selection ``s`` -> ``s`` (a product's operand: 1-D, as ``s``)
    made = {}  # a mask's expression (as code) -> (its name, the names it reads)
    # a selection with unit axes (``s[:, None]``), or elementwise ops of such -> the index (as code)
    expanded = {}
    given = arguments
    # keys the function is given: a mask or positions, told apart when traced
    possible = set()
    for stmt in body:
        bound = writes(
            stmt
        )  # a mask's values rebound: a later equal expression is another mask
        made = {c: m for c, m in made.items() if not bound & m[1]}
        if not (isinstance(stmt, ir.Assign) and isinstance(stmt.target, cst.Name)):
            continue
        name, value = stmt.target.value, stmt.value
        e = eqn_of(value)
        if (
            (e.kind == "op" and _is_mask_op(e, found))
            or _is_window(e)
            or _positions_mask(e)
        ):
            found[name] = cst.Name(name)
            code = cst.Module([]).code_for_node(value)
            first = made.setdefault(code, (name, reads(stmt)))[0]
            same[name] = same.get(first, first)
        elif e.kind == "op" and e.name in ("nonzero", "where") and len(e.args) == 1:
            found[name] = e.args[
                0
            ]  # the positions of the mask's true (nonzero) elements
            positions.add(name)
        elif _is_name(e.args[0] if e.args else None) and (
            _expansion(value, derived) is not None
        ):
            # ``s[:, None]``: the selection with unit axes, the mask given them too where it is reduced
            derived[name] = derived[e.args[0].value]
            expanded[name] = _expansion(value, derived)
        elif e.kind == "getitem" and len(value.slice) == 1:
            index = value.slice[0].slice
            key = index.value if isinstance(index, cst.Index) else None
            if isinstance(key, cst.Name) and key.value in given - found.keys():
                found[key.value] = key
                possible.add(key.value)
            if isinstance(key, cst.Name) and key.value in found and _is_name(e.args[0]):
                roots[name] = (e.args[0], same.get(key.value, key.value))
                derived[name] = roots[name][1]
        elif e.kind == "op" and _elementwise(e.name) and not e.kwargs:
            keys = {derived.get(a.value) for a in e.args if _is_name(a)} - {None}
            numbers = all(_is_name(a) or _is_number(a) for a in e.args)
            # (other values it reads, ``m * A[k, k:]``, broadcast against the whole array as against the
            # selection: the selected axis is as far from the last one; one that does not is a shape error)
            spread = (
                {
                    expanded.get(a.value, "")
                    for a in e.args
                    if _is_name(a) and a.value in derived
                }
                if numbers
                else set()
            )
            if numbers and len(keys) == 1 and len(spread) == 1:
                derived[name] = keys.pop()
                if spread != {""}:  # each selection read with the same unit axes
                    expanded[name] = spread.pop()
        elif e.kind == "op" and e.name == "transpose" and len(e.args) == 1:
            if _is_name(e.args[0]) and e.args[0].value in derived and not e.kwargs:
                flipped[name] = e.args[0].value  # ``s.T``: read by products only
        elif _reduction_of(value, derived) is not None or _product_of(
            value, derived, flipped
        ):
            scalars.add(name)
        write = _mask_write(value, found)
        if write is not None:
            write = (write[0], same.get(write[1], write[1]), write[2])
            if write[1] not in possible and _writable(write, derived, scalars):
                masked_writes[id(stmt)] = write
    masks_ok = {
        key
        for key in {*derived.values(), *(w[1] for w in masked_writes.values())}
        if _only_reduced(
            key, derived, body, masked_writes, {} if key in possible else flipped
        )
        and not (key in possible and _in_product(key, derived, body))
        and _expansions_reduced(key, derived, expanded, body, possible)
    }
    if not masks_ok:
        return body
    out = []
    leading = {}  # (mask name, x) -> the name of ``rt.leading_mask(mask, x)``
    # a mask whose selections get unit axes -> the name of ``rt.unit_axes_mask(mask, x)``
    unit = {}

    def kept_by(key, x, stmt):
        """The mask ``key`` against ``x`` (``rt.leading_mask``, or ``rt.selection_mask``), once per key."""
        return _leading(found[key], x, key, leading, stmt, namer, out, key in possible)

    def length_by(key, x, stmt):
        """``len(x[key])``, as ``_length`` writes it."""
        return _length(found[key], x, key, leading, stmt, namer, out, key in possible)

    for stmt in body:
        target = (
            stmt.target.value
            if isinstance(stmt, ir.Assign) and isinstance(stmt.target, cst.Name)
            else None
        )
        if id(stmt) in masked_writes and masked_writes[id(stmt)][1] in masks_ok:
            # ``h[h < 0] = 0.1 * h[h < 0]``: ``h = np.where(h < 0, 0.1 * h, h)``
            x, key, v = masked_writes[id(stmt)]
            kept = kept_by(key, x, stmt)
            out.append(
                ir.Assign(stmt.target, call("xp.where", kept, v, x), stmt.origin)
            )
            continue
        if target in expanded and derived[target] in masks_ok:
            # ``s[:, None]``: checked first, the mask of one axis (``rt.unit_axes_mask``)
            key = derived[target]
            if key not in unit and _expansion(stmt.value, derived) is not None:
                root_x = next(x for x, k in roots.values() if k == key)
                unit[key] = cst.Name(namer.fresh("selected"))
                check = call("rt.unit_axes_mask", found[key], root_x)
                out.append(ir.Assign(unit[key], check, stmt.origin))
        if target in roots and roots[target][1] in masks_ok:
            x, key = roots[target]
            if key in possible:
                # ``x[key]`` as NumPy reads it, the mask's kind known when traced
                selection = call("rt.selection", x, found[key])
                out.append(ir.Assign(stmt.target, selection, stmt.origin))
                continue
            kept = kept_by(key, x, stmt)
            # (an equation of its own: the batching of ``where`` reads its operands' ranks)
            fill = cst.Name(namer.fresh("fill"))
            out.append(ir.Assign(fill, call("rt.selected_fill", x, kept), stmt.origin))
            out.append(
                ir.Assign(stmt.target, call("xp.where", kept, x, fill), stmt.origin)
            )
            continue
        lengths = (
            _lengths(stmt.value, {v for v, k in derived.items() if k in masks_ok})
            if isinstance(stmt, (ir.Assign, ir.Return))
            else []
        )
        if lengths and not (target is not None and _reduction_of(stmt.value, derived)):
            # ``np.sum(s) / len(s)``: each length the count of the kept elements, an equation of its own
            counts = {}
            for length in lengths:
                v = _counted(length).value
                key = derived[v]
                root_x = next(x for x, k in roots.values() if k == key)
                counts[length] = count = cst.Name(namer.fresh("count"))
                if isinstance(length, cst.Attribute):  # ``s.size``: every kept element
                    value = call(
                        "rt.selected_size", kept_by(key, root_x, stmt), cst.Name(v)
                    )
                else:
                    value = length_by(key, root_x, stmt)
                out.append(ir.Assign(count, value, stmt.origin))
            stmt = replace(stmt, value=replace_nodes(stmt.value, counts))
        product = (
            _product_of(stmt.value, derived, flipped) if target is not None else None
        )
        if product is not None and derived[product[0]] in masks_ok:
            # a selection itself: the array it selects from, zero where dropped
            whole = [roots[v][0] if v in roots else cst.Name(v) for v in product]
            mask = found[derived[product[0]]]
            out += _masked_product(stmt, whole, mask, namer, flipped)
            continue
        reduced = _reduction_of(stmt.value, derived) if target is not None else None
        if reduced is not None and derived[reduced[1]] in masks_ok:
            op, v = reduced
            key = derived[v]
            root_x = next(x for x, k in roots.values() if k == key)
            if op == "len":
                out.append(
                    ir.Assign(stmt.target, length_by(key, root_x, stmt), stmt.origin)
                )
                continue
            kept = kept_by(key, root_x, stmt)
            if v in expanded:  # the mask of one axis, given the same unit axes
                spread = cst.Name(namer.fresh("selected"))
                index = cst.parse_expression(f"_[{expanded[v]}]").slice
                out.append(
                    ir.Assign(spread, cst.Subscript(unit[key], index), stmt.origin)
                )
                kept = spread
            axes = None
            if _along_selected(stmt.value):  # the axes the mask covers
                helper = "rt.selection_axes" if key in possible else "rt.mask_axes"
                axes = cst.Name(namer.fresh("selected_axes"))
                out.append(ir.Assign(axes, call(helper, found[key]), stmt.origin))
            out += _masked(op, cst.Name(v), kept, stmt, namer, axes)
            continue
        out.append(stmt)
    # positions no longer read (``np.nonzero(m)``: its size depends on the values too)
    read = set().union(set(), *(reads(s) for s in ir.walk(out)))
    return [
        s
        for s in out
        if not (
            isinstance(s, ir.Assign)
            and isinstance(s.target, cst.Name)
            and s.target.value in positions
            and s.target.value not in read
        )
    ]


def _is_mask_op(e, found) -> bool:
    """A comparison-like op, ``x.astype(bool)``, or ``&``/``|``/``^``/``~`` of masks."""
    if e.name in MASK_OPS or _as_bool(e) or _positions_mask(e):
        return True
    return e.name in BITWISE and all(_is_name(a) and a.value in found for a in e.args)


def _given(body: list, arguments: frozenset) -> set[str]:
    """The user function's ``arguments`` as given, and the items, attributes and ``asarray`` of them that
    ``body`` binds once: keys whose kind (a mask or positions) only the traced value tells.
    """
    given = set(arguments)
    for stmt in body:
        kept = None
        if isinstance(stmt, ir.Assign) and isinstance(stmt.target, cst.Name):
            e = eqn_of(stmt.value)
            source = e.args[0] if e.args else None
            taken = e.kind in ("getitem", "attribute") or (
                e.kind == "op" and e.name in ("asarray", "array")
            )
            if taken and _is_name(source) and source.value in given:
                kept = stmt.target.value
        given -= {n for s in ir.walk([stmt]) for n in writes(s)}
        if kept is not None:
            given.add(kept)
    return given


def _in_product(key: str, derived: dict, body: list) -> bool:
    """Whether a product of two selections by ``key`` reads them (kept as written for a given key)."""
    selections = {n: k for n, k in derived.items() if k == key}
    return any(
        isinstance(s, ir.Assign) and _product_of(s.value, selections)
        for s in ir.walk(body)
    )


def _leading(mask, x, key, cache, stmt, namer, out, given=False) -> cst.Name:
    """The name of ``rt.leading_mask(mask, x)`` (``given``: a given key's ``rt.selection_mask``), emitted
    once per mask."""
    if key not in cache:
        name = cst.Name(namer.fresh("selected"))
        helper = "rt.selection_mask" if given else "rt.leading_mask"
        out.append(ir.Assign(name, call(helper, mask, x), stmt.origin))
        cache[key] = name
    return cache[key]


def _length(mask, x, key, cache, stmt, namer, out, given=False):
    """``len(x[mask])``: the count of the kept elements, or (``given``) ``rt.selection_length``."""
    if given:
        return call("rt.selection_length", mask, x)
    return call("xp.count_nonzero", _leading(mask, x, key, cache, stmt, namer, out))


def _elementwise(op: str) -> bool:
    found = OPS.get(op)
    return found is not None and found.family == "elementwise" and op != "where"


def _is_number(node) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _is_name(node) -> bool:
    return isinstance(node, cst.Name)


def _along_selected(value) -> bool:
    """Whether a reduction call has ``axis=0`` (``X[m].mean(axis=0)``: over the selected rows)."""
    if not (isinstance(value, cst.Call) and len(value.args) == 2):
        return False
    arg = value.args[1]
    named = arg.keyword is None or arg.keyword.value == "axis"
    return named and isinstance(arg.value, cst.Integer) and arg.value.value == "0"


def _reduction_of(value, selections) -> tuple[str, str] | None:
    """``(op, s)`` for ``xp.<op>(s)`` or ``len(s)`` of a selection ``s`` (no other argument but ``axis=0``,
    the axis the selection makes), else None."""
    if not isinstance(value, cst.Call) or not (
        len(value.args) == 1 or _along_selected(value)
    ):
        return None
    arg = value.args[0]
    if arg.keyword is not None or not _is_name(arg.value):
        return None
    if arg.value.value not in selections:
        return None
    if isinstance(value.func, cst.Name) and value.func.value == "len":
        if len(value.args) > 1:
            return None
        return "len", arg.value.value  # (a static call in normal form: an atom)
    e = eqn_of(value)
    if e.kind == "op" and e.name in (*FILLS, "count_nonzero"):
        return e.name, arg.value.value
    return None


def _mask_write(value, found):
    """``(x, m, v)`` of ``rt.index_set(x, m, v)`` (``x[m] = v``) by a mask ``m`` (or its positions)."""
    if not isinstance(value, cst.Call):
        return None
    e = eqn_of(value)
    if not (e.kind == "runtime" and e.name == "index_set" and len(e.args) == 3):
        return None
    x, key, v = e.args
    if not _is_name(x):
        return None
    if not (_is_name(key) and key.value in found):
        return None
    return x, key.value, v


def _writable(write, derived, scalars) -> bool:
    """Whether a masked write's value stands for every selected element once written over the whole
    array: a number, a whole reduction (one number), or elementwise ops of selections by the same mask.
    """
    _, key, v = write
    if _is_number(v):
        return True
    return _is_name(v) and (v.value in scalars or derived.get(v.value) == key)


def _expansion(value, derived) -> str | None:
    """The index (as code) of ``s[:, None]`` (``s[None]``, ``s[..., None]``) of a selection ``s``: full
    slices, ``...`` and at least one ``None``; else None."""
    if not (isinstance(value, cst.Subscript) and _is_name(value.value)):
        return None
    if value.value.value not in derived:
        return None
    parts = []
    for element in value.slice:
        index = element.slice
        if isinstance(index, cst.Slice) and not (
            index.lower or index.upper or index.step
        ):
            parts.append(":")
        elif isinstance(index, cst.Index) and isinstance(index.value, cst.Ellipsis):
            parts.append("...")
        elif isinstance(index, cst.Index) and dotted(index.value) == "None":
            parts.append("None")
        else:
            return None
    return ", ".join(parts) if "None" in parts else None


def _expansions_reduced(key, derived, expanded, body, possible) -> bool:
    """Whether the selections by ``key`` with unit axes (``expanded``) are only read by elementwise ops
    and whole reductions, or reductions along the selected axis where it stays first (``s[:, None]``;
    not counted), a mask the function computes."""
    names = {n for n in expanded if derived[n] == key}
    if not names:
        return True
    if key in possible:
        return False
    for stmt in ir.walk(body):
        if not reads(stmt) & names:
            continue
        target = getattr(stmt, "target", None)
        if _is_name(target) and target.value in names:
            continue
        value = getattr(stmt, "value", None)
        reduced = _reduction_of(value, names) if _is_name(target) else None
        if reduced is None or reduced[0] == "len":
            return False
        if _along_selected(value) and expanded[reduced[1]].startswith("None"):
            return False  # (``s[None]``: the selected axis is axis 1)
        if _lengths(value, names):
            return False
    return True


def _only_reduced(
    key: str, derived: dict, body: list, masked_writes: dict, flipped: dict
) -> bool:
    """Whether every read of the values selected by mask ``key`` is an elementwise op of them (one more
    such value), a whole reduction, or the value a write by the same mask writes, in ``body`` (nested
    functions included)."""
    names = {n for n, k in derived.items() if k == key}
    written = {s for s, w in masked_writes.items() if w[1] == key}
    for stmt in ir.walk(body):
        if id(stmt) in written:
            value = masked_writes[id(stmt)][2]
            if (reads(stmt) & names) - {getattr(value, "value", None)}:
                return False  # a selection read otherwise than as the value written
            continue
        read = reads(stmt) & names
        if not read or (
            isinstance(stmt, (ir.Assign, ir.Return))
            and not _read_besides_lengths(stmt.value, names)
        ):
            continue
        target = (
            stmt.target.value
            if isinstance(stmt, ir.Assign) and isinstance(stmt.target, cst.Name)
            else None
        )
        if target in names or (target is not None and _reduction_of(stmt.value, names)):
            continue
        transposes = {t: v for t, v in flipped.items() if v in names}
        if target in transposes:
            continue  # ``s.T``: its own reads are checked below
        if target is not None and _product_of(
            stmt.value, dict.fromkeys(names, key), transposes
        ):
            continue
        return False
    transposes = {t for t, v in flipped.items() if v in names}
    for stmt in ir.walk(body):
        if reads(stmt) & transposes and not (
            isinstance(stmt, ir.Assign)
            and _product_of(stmt.value, dict.fromkeys(names, key), flipped)
        ):
            return False  # ``s.T`` read otherwise than as a product's operand
    return True


def _is_window(e) -> bool:
    """The positions a slice by computed bounds keeps (``passes/slice_masks.py``)."""
    return e.kind == "runtime" and e.name == "span_mask"


# products of two selections by one mask, contracting the selected axis (``U[i, i + 1:] @ x[i + 1:]``)
PRODUCTS = ("matmul", "dot", "inner", "vdot")


def _product_of(value, selections, flipped=None) -> tuple[str, str] | None:
    """``(a, b)`` for ``a @ b`` (``np.dot``, ``np.inner``, ``np.vdot``) of two selections by one mask, or
    transposes of them (``flipped``: a transpose's name -> the selection's)."""
    if not isinstance(value, (cst.Call, cst.BinaryOperation)):
        return None
    e = eqn_of(value)
    if e.kind != "op" or e.name not in PRODUCTS or e.kwargs or len(e.args) != 2:
        return None
    if not all(_is_name(a) for a in e.args):
        return None
    a, b = ((flipped or {}).get(x.value, x.value) for x in e.args)
    keys = {selections.get(a), selections.get(b)}
    return (a, b) if len(keys) == 1 and None not in keys else None


def _masked_product(stmt, whole, mask, namer, flipped) -> list:
    """``a @ b`` of two selections as the product of ``whole`` (the arrays they select from, or the
    selections over the whole shape), zero where the mask drops: the selected axis is the one the
    product contracts (``rt.contracted_selection`` checks it)."""
    out, zeroed = [], []
    # (``@`` and ``np.dot`` contract a 2-D ``b``'s rows)
    rows = eqn_of(stmt.value).name in ("matmul", "dot")
    operands = [a.value for a in eqn_of(stmt.value).args]
    for k, v in enumerate(whole):
        kept = cst.Name(namer.fresh("kept"))
        # a 2-D selection's rows are contracted as ``b`` of ``a @ b``, or transposed as ``a`` of
        # ``a.T @ b`` (a Gram matrix ``A.T @ A``) or of ``np.inner(a.T, b.T)``
        flips = operands[k] in flipped
        rows_ok = (
            (k == 0 and rows) or eqn_of(stmt.value).name == "inner"
            if flips
            else k == 1 and rows
        )
        selection = call("rt.contracted_selection", mask, v, literal(rows_ok))
        out.append(ir.Assign(kept, selection, stmt.origin))
        zero = cst.Name(namer.fresh("zeroed"))
        out.append(
            ir.Assign(zero, call("xp.where", kept, v, cst.Float("0.0")), stmt.origin)
        )
        if flips:
            flipped_zero = cst.Name(namer.fresh("zeroed"))
            out.append(ir.Assign(flipped_zero, call("xp.transpose", zero), stmt.origin))
            zero = flipped_zero
        zeroed.append(zero)
    value = substitute(stmt.value, dict(zip(operands, zeroed)))
    out.append(ir.Assign(stmt.target, value, stmt.origin))
    return out


def _lengths(value, names) -> list:
    """The ``len(s)`` and ``s.size`` atoms in ``value`` of the selections ``names``."""
    return [
        n
        for n in iter_nodes(value)
        if (
            isinstance(n, cst.Call)
            and isinstance(n.func, cst.Name)
            and n.func.value == "len"
            and len(n.args) == 1
            and _is_name(n.args[0].value)
            and n.args[0].value.value in names
        )
        or (
            isinstance(n, cst.Attribute)
            and n.attr.value == "size"
            and _is_name(n.value)
            and n.value.value in names
        )
    ]


def _counted(length) -> cst.Name:
    """The selection a ``len(s)`` or ``s.size`` atom counts."""
    return length.value if isinstance(length, cst.Attribute) else length.args[0].value


def _read_besides_lengths(value, names) -> bool:
    """Whether ``value`` reads a selection of ``names`` other than by its length."""
    counted = {id(_counted(c)) for c in _lengths(value, names)}
    return any(
        isinstance(n, cst.Name) and n.value in names and id(n) not in counted
        for n in iter_nodes(value)
    )


def _masked(op: str, v, kept, stmt, namer, axes=None) -> list:
    """Statements computing the reduction ``op`` of the selected ``v`` (full-shape, ``kept`` where selected)
    into ``stmt``'s target; ``axes``: the mask's axes only (``axis=0`` of the selection), else all.
    """
    out = []
    along = {} if axes is None else {"axis": axes}

    def let(hint, value):
        name = cst.Name(namer.fresh(hint))
        out.append(ir.Assign(name, value, stmt.origin))
        return name

    if op == "count_nonzero":
        zeros = let("kept", call("xp.where", kept, v, cst.Integer("0")))
        counted = call("xp.count_nonzero", zeros, **along)
        out.append(ir.Assign(stmt.target, counted, stmt.origin))
        return out
    masked = let("kept", call("xp.where", kept, v, cst.parse_expression(FILLS[op])))
    if op != "mean":
        out.append(
            ir.Assign(stmt.target, call(f"xp.{op}", masked, **along), stmt.origin)
        )
        return out
    total = let("total", call("xp.sum", masked, **along))
    unit = let("unit", call("xp.ones_like", v))  # an equation of its own: normal form
    ones = let("ones", call("xp.where", kept, unit, cst.Float("0.0")))
    count = let("count", call("xp.sum", ones, **along))
    out.append(
        ir.Assign(
            stmt.target, cst.BinaryOperation(total, cst.Divide(), count), stmt.origin
        )
    )
    return out
