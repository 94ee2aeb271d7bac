"""Dicts the function makes and reads only by constant keys, whose entries it grows, as one name per key.

``history = {"loss": [], "norm": []}`` then ``history["loss"].append(l)`` in a loop: a list held in a
dict, changed through the dict. ``desugar(source)`` writes each entry as a variable of the function
(``history_loss = []``) and ``history["loss"]`` as that name, so the lists are the function's own
(appended, collected by compiled loops, reduced) and the dict is gone.

Guarantee: ``d = {"key": value, ...}`` (string keys, no ``**``) or ``d = {}`` in the function's own
top-level lines, ``d`` bound nowhere else, and neither bound nor written item by item in a nested function
or lambda (which may read its entries and call their methods: a local object's method appending to
``self.derived_variables["Z"]``, ``local_objects``'s, as it runs again after that pass); every other
read of ``d`` is ``d["key"]`` with a string literal (read, assigned, updated in place, a method's
receiver), at least one of them the receiver of a method call (``d["loss"].append(v)``: the
construct this exists for; other dicts stay dicts), or ``return d`` where the display set every key
(it returns the display of the names). A key read before any line assigns it is Python's
``KeyError`` there, s2s's unbound-name error here. Any other dict stays as it is.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from . import source as sources
from .rewriting import (
    PositionKeeping,
    assignment,
    assignment_line,
    bindings,
    function_body,
    namer_of,
    with_body,
)

_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def _key(node) -> str | None:
    """The string literal ``node`` is, else None."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _item_key(node, name: str) -> str | None:
    """``key`` of ``name["key"]``, else None."""
    if not (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Name)
        and node.value.value == name
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
    ):
        return None
    return _key(node.slice[0].slice.value)


def _display(value) -> list | None:
    """``[(key, value)]`` of a dict display with string keys only, else None."""
    if not isinstance(value, cst.Dict):
        return None
    entries = []
    for el in value.elements:
        key = _key(el.key) if isinstance(el, cst.DictElement) else None
        if key is None:
            return None
        entries.append((key, el.value))
    return entries


class _Entries(PositionKeeping):
    """``d["key"]`` as its name; ``return d`` as the display of the names."""

    def __init__(self, positions, name: str, names: dict):
        super().__init__(positions)
        self.name, self.names = name, names

    def leave_Subscript(self, original, updated):
        key = _item_key(updated, self.name)
        return cst.Name(self.names[key]) if key in self.names else updated

    def leave_Return(self, original, updated):
        if isinstance(updated.value, cst.Name) and updated.value.value == self.name:
            entries = [
                cst.DictElement(cst.SimpleString(repr(k)), cst.Name(n))
                for k, n in self.names.items()
            ]
            return updated.with_changes(value=cst.Dict(entries))
        return updated


def _grown(node, name: str) -> bool:
    """Whether an item of ``name`` is the receiver of a method call (``name["loss"].append(v)``)."""
    return any(
        isinstance(n, cst.Call)
        and isinstance(n.func, cst.Attribute)
        and _item_key(n.func.value, name) is not None
        for n in iter_nodes(node)
    )


def _rewritten(source, body, k: int, namer):
    """``body`` with the dict bound by its line ``k`` written as names, or None where it cannot be."""
    assign = assignment(body[k])
    target = assign.targets[0].target
    name = target.value
    entries = _display(assign.value)
    rest = [*body[:k], *body[k + 1 :]]
    if entries is None or not any(_grown(s, name) for s in rest):
        return None
    if bindings(source.node, items=False)[name] != 1:
        return None
    for n in iter_nodes(cst.Module(rest)):
        if (
            isinstance(n, _SCOPES)
            and _names(n, name)
            and (isinstance(n, cst.ClassDef) or bindings(n)[name])
        ):
            return None  # a closure that binds the dict or writes its items: those would be the closure's
    keys = [key for key, _ in entries]
    for n in iter_nodes(cst.Module(rest)):
        key = _item_key(n, name)
        if key is not None and key not in keys:
            keys.append(key)
    names = {key: namer.fresh(f"{name}_{_identifier(key)}") for key in keys}
    returned = any(
        isinstance(n, cst.Return)
        and isinstance(n.value, cst.Name)
        and n.value.value == name
        for n in iter_nodes(cst.Module(rest))
    )
    if returned and len(keys) != len(entries):
        return None  # a key set later may be unset on some path to the ``return``
    positions = source.file.positions
    rename = _Entries(positions, name, names)
    new_rest = [rewrite(s, rename) for s in rest]
    if any(_names(s, name) for s in new_rest):
        return None  # read whole, or by a key computed at run time
    made = [
        assignment_line(cst.Name(names[key]), value, body[k], positions)
        for key, value in entries
    ]
    return [*new_rest[:k], *made, *new_rest[k:]]


def _names(node, name: str) -> bool:
    """Whether ``name`` appears under ``node`` (an attribute's name too: a cautious answer)."""
    return any(isinstance(n, cst.Name) and n.value == name for n in iter_nodes(node))


def _identifier(key: str) -> str:
    text = "".join(c if c.isalnum() or c == "_" else "_" for c in key)
    return text if text and not text[0].isdigit() else f"k{text}"


def desugar(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with its grown dicts (see the module) written as names of the function."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.Dict) for s in body for n in iter_nodes(s)
    ):
        return source
    namer = namer_of(source)
    changed = False
    k = 0
    while k < len(body):
        assign = assignment(body[k])
        if assign is not None and isinstance(assign.targets[0].target, cst.Name):
            new = _rewritten(source, body, k, namer)
            if new is not None:
                body, changed = new, True
                continue
        k += 1
    if not changed:
        return source
    return with_body(source, body)
