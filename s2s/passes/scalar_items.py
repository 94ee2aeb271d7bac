"""Items taken from an array by an index, for the aliasing check: a copy when a number, a view otherwise.

``s = x[0]`` then ``s += x[i]`` in a loop: for a vector ``x``, ``x[0]`` is a NumPy scalar, a copy,
and the update changes only ``s``; for a matrix it is a view of the first row, and NumPy would change
``x`` too. Which one it is depends on ``x``'s number of axes, which s2s knows only when the code runs.
So such a name shares nothing with its array, and where NumPy's answer would differ for a view (an
in-place update of the item while a name of the array is read later, or of the array while the item
is), ``ItemBindings`` has the check ``rt.item_is_copy(x, 1, s)`` written after the binding: the
compiled code runs where ``x[0]`` is a number, and stops at the user's line, saying why, where it
is a view, or where ``x`` is a list holding arrays (its items are the arrays themselves). An index
with a slice, ``None`` or ``...`` (``x[0, :]``), a string key (``d["W"]``: a dict's entry) or a
base the function made as a list or dict makes no such item: it stays the same memory as ``x`` for
the aliasing check.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from .. import ir
from ..cstutil import call, literal
from .row_views import LoopHead


def _item_of(value) -> tuple[str, int] | None:
    """``(base, number of indices)`` for ``base[i]`` / ``base[i, j]`` (no slice, ``None`` or ``...``; no
    string key either: ``d["W"]`` is a dict's entry, the very object the dict holds)."""
    if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name)):
        return None
    for el in value.slice:
        if not isinstance(el.slice, cst.Index) or el.slice.star is not None:
            return None
        index = el.slice.value
        if isinstance(index, (cst.Ellipsis, cst.SimpleString, cst.FormattedString)) or (
            isinstance(index, cst.Name) and index.value == "None"
        ):
            return None
    return value.value.value, len(value.slice)


class ItemBindings:
    """The names bound to items of arrays, and the bindings an in-place update needs checked."""

    def __init__(self):
        # name -> [(the names of the array when the item was taken, base, number of indices, binding)]: the
        # items it may hold (more than one where a branch, which may not run, bound it)
        self._items: dict[str, list] = {}
        self.checked: dict[int, tuple] = (
            {}
        )  # id(binding) -> (binding, name, base, count)
        # names holding arithmetic's result (``y = 1.0 + x[0]``), and the updates checked to be of a number:
        # id(update) -> (update, name, the name that may hold it too)
        self._numbers: set[str] = set()
        self.numbers_checked: dict[int, tuple] = {}

    def bind(self, stmt, groups, containers=frozenset(), maybe=False) -> bool:
        """Take an assignment; True where it binds an item (then it shares nothing with its array).
        ``containers``: names of lists and dicts, whose items are the objects they hold, never copies.
        ``maybe``: an assignment in a branch, after which a name may still hold what it held.
        """
        if not isinstance(stmt, ir.Assign):
            return False
        names = set(ir.target_names(stmt.target))
        computed = _computed(stmt)
        # (in a branch, which may not run, a name may still hold what it held)
        for name in names:
            if computed and (not maybe or name in self._numbers):
                self._numbers.add(name)
            else:
                self._numbers.discard(name)
        for name, found in list(self._items.items()):
            if name in names and not maybe:
                del self._items[name]
            elif not maybe:  # a name rebound holds another array now
                self._items[name] = [
                    (holders - names, base, count, binding)
                    for holders, base, count, binding in found
                ]
        item = (
            _item_of(stmt.value)
            if isinstance(stmt.target, cst.Name) and not isinstance(stmt, ir.Return)
            else None
        )
        if item is None or item[0] in containers:
            return False
        base, count = item
        holders = frozenset(groups.get(base, {base})) | {base}
        self._items.setdefault(stmt.target.value, []).append(
            (holders, base, count, stmt)
        )
        return True

    def updated(self, name: str, group, read_later) -> None:
        """An in-place update of ``name`` (whose memory ``group`` shares): the items it may change or be
        changed through, read afterwards where NumPy would see the change, get their bindings checked.
        """
        for own in self._items.get(name, []):
            if any(read_later(h) for h in own[0]):
                self._check(name, own)
        for item, entries in self._items.items():
            for found in entries:
                if item != name and found[0] & (group | {name}) and read_later(item):
                    self._check(item, found)

    def number_updated(self, stmt, name: str, holder: str) -> bool:
        """An in-place update of ``name`` (``y += v``) that ``holder`` may see: where ``name`` holds
        arithmetic's result, NumPy's answer is s2s's as long as it is a number (a scalar, rebound) and the
        update gets that checked (True); otherwise False (the update is refused)."""
        if name not in self._numbers:
            return False
        self.numbers_checked.setdefault(id(stmt), (stmt, name, holder))
        return True

    def _check(self, name, found):
        _, base, count, binding = found
        binding = (
            getattr(binding, "whole", None) or binding
        )  # (a name's part of ``a, b = e1, e2``)
        self.checked.setdefault(id(binding), []).append((binding, name, base, count))

    def with_checks(self, fn: ir.Function) -> ir.Function:
        """``fn`` with each checked binding followed by its ``assert``."""
        if not self.checked and not self.numbers_checked:
            return fn
        return fn.with_body(self._block(fn.body))

    def _block(self, body) -> list:
        out = []
        for stmt in body:
            blocks = ir.blocks_of(stmt)
            if isinstance(stmt, ir.If):
                stmt = replace(
                    stmt,
                    body=tuple(self._block(stmt.body)),
                    orelse=tuple(self._block(stmt.orelse)),
                )
            elif blocks:
                stmt = replace(stmt, body=tuple(self._block(stmt.body)))
            if id(stmt) in self.numbers_checked:
                out.append(_number_assertion(*self.numbers_checked[id(stmt)]))
            out.append(stmt)
            if not blocks:
                out += [_assertion(*found) for found in self.checked.get(id(stmt), [])]
        return out


def _computed(stmt) -> bool:
    """``name = `` arithmetic (``1.0 + x[0]``, ``-v``): a number where it is 0-d (NumPy gives a scalar), a
    new array otherwise."""
    return (
        isinstance(stmt.target, cst.Name)
        and not isinstance(stmt, (LoopHead, ir.Return))
        and isinstance(stmt.value, (cst.BinaryOperation, cst.UnaryOperation))
    )


def _number_assertion(update, name: str, holder: str) -> ir.Assign:
    """``rt.check(rt.is_number(name), ...)`` before an in-place update that ``holder`` may see."""
    message = (
        f"`{name}` is updated in place while `{holder}` may hold it, and it is an array, not a number: "
        f"NumPy would change `{holder}` too (s2s computes a new array)"
    )
    hint = (
        f"write `{name} = {name} {ir.code(update.operator).strip()[:-1]} ...` for a new array, or copy first "
        f"(`{name} = {name}.copy()`), where `{holder}` should keep its value"
    )
    test = call("rt.is_number", cst.Name(name))
    check = call("rt.check", test, literal(message), hint=literal(hint))
    return ir.Assign(cst.Name(ir.OUTPUT_TOKEN), check, update.origin)


def _assertion(binding, name: str, base: str, count: int) -> ir.Assign:
    """``assert rt.item_is_copy(base, count, name)``, saying why, at the binding's line."""
    axes = "axis" if count == 1 else "axes"
    message = (
        f"`{name}` was taken from `{base}` by an index, and is not a number: a view of `{base}` (an "
        f"array of more than {count} {axes}) or the very array a list or dict holds, which NumPy would "
        f"change together with `{name}` where one is updated in place (s2s computes a new array)"
    )
    hint = f"copy it (`{name} = {base}[...].copy()`), or update it as a new value (`{name} = {name} + ...`)"
    test = call(
        "rt.item_is_copy", cst.Name(base), cst.Integer(str(count)), cst.Name(name)
    )
    check = call("rt.check", test, literal(message), hint=literal(hint))
    return ir.Assign(cst.Name(ir.OUTPUT_TOKEN), check, binding.origin)
