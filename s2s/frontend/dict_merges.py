"""Merges of dicts, read as the displays they make: ``p | q`` is ``{**p, **q}``.

Guarantee of ``desugar(source)``: each ``a | b`` where one operand is surely a dict (a dict display,
a dict comprehension, a ``dict(...)`` call, such a merge, or a name every binding of which in the
function is a plain assignment of one of those) is ``{**a, **b}``, and ``a |= b`` so is
``a = {**a, **b}``: the dict Python's ``|`` makes, the right operand's values winning, its keys in
the same order. ``d.update(b, k=v)`` as a statement, of such a name ``d`` that no other name is bound
to (no alias sees the change), is ``d = {**d, **b, "k": v}``; ``dict(a, k=v)`` is ``{**a, "k": v}``.
``d.setdefault(k, v)`` as a statement (of any name: CS231n's ``config.setdefault("momentum", 0.9)``
on the dict its caller passed) is the item write ``d[k] = d.get(k, v)``, checked as writes are.
Any other ``|`` stays NumPy's; one whose operand carries a derivative is a located error
(``transforms/activity.py``), never a silent zero.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .rewriting import PositionKeeping, bindings, with_node
from .source import FunctionSource


def _merged(*operands) -> cst.Dict:
    """``{**a, "k": v, **c}`` of ``a | {"k": v} | c``: a display's entries in place, others spread."""
    entries = []
    for operand in operands:
        if isinstance(operand, cst.BinaryOperation) and isinstance(
            operand.operator, cst.BitOr
        ):
            entries += _merged(operand.left, operand.right).elements
        elif isinstance(operand, cst.Dict):
            entries += [
                e.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                for e in operand.elements
            ]
        else:
            entries.append(cst.StarredDictElement(operand))
    return cst.Dict(entries)


def _dict_names(node) -> set[str]:
    """Names every binding of which in the function is ``name = <a dict>`` (or ``name |= ...`` of one)."""
    plain: dict[str, list] = {}
    for n in iter_nodes(node):
        if isinstance(n, cst.Assign) and len(n.targets) == 1:
            target = n.targets[0].target
            if isinstance(target, cst.Name):
                plain.setdefault(target.value, []).append(n.value)
        elif (
            isinstance(n, cst.AugAssign)
            and isinstance(n.operator, cst.BitOrAssign)
            and isinstance(n.target, cst.Name)
        ):
            plain.setdefault(n.target.value, []).append(
                cst.BinaryOperation(n.target, cst.BitOr(), n.value)
            )
    counts = bindings(node, items=False)
    names = {
        name for name, values in plain.items() if len(values) == counts.get(name, 0)
    }
    # a merge is a dict when an operand is: drop the names with another binding until none is dropped
    while True:
        kept = {name for name in names if all(_is_dict(v, names) for v in plain[name])}
        if kept == names:
            return names
        names = kept


def _is_dict(node, names) -> bool:
    if isinstance(node, (cst.Dict, cst.DictComp)):
        return True
    if isinstance(node, cst.Name):
        return node.value in names
    if isinstance(node, cst.Call):
        return isinstance(node.func, cst.Name) and node.func.value == "dict"
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        return _is_dict(node.left, names) or _is_dict(node.right, names)
    return False


def _spread(args) -> list:
    """``**a`` and ``"k": v`` entries of a call's ``a`` and ``k=v`` arguments (None where one is starred)."""
    entries = []
    for a in args:
        if a.star:
            return None
        if a.keyword is None:
            entries.append(cst.StarredDictElement(a.value))
        else:
            entries.append(
                cst.DictElement(cst.SimpleString(repr(a.keyword.value)), a.value)
            )
    return entries


def _aliased(node) -> set[str]:
    """Names some other name is bound to (``e = d``): a change in place would be seen through ``e``."""
    return {
        n.value.value
        for n in iter_nodes(node)
        if isinstance(n, cst.Assign) and isinstance(n.value, cst.Name)
    }


class _Merges(PositionKeeping):
    def __init__(self, positions, names, aliased):
        super().__init__(positions)
        self.names = names
        self.aliased = aliased

    def leave_Call(self, original, updated):
        if (
            isinstance(updated.func, cst.Name)
            and updated.func.value == "dict"
            and updated.args
            and any(a.keyword is not None for a in updated.args)
        ):
            entries = _spread(updated.args)
            if (
                entries is not None
                and sum(a.keyword is None for a in updated.args) <= 1
            ):
                return cst.Dict(entries)
        return updated

    def leave_Expr(self, original, updated):
        call = updated.value
        if (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "setdefault"
            and isinstance(call.func.value, cst.Name)
            and len(call.args) == 2
            and not any(a.star or a.keyword for a in call.args)
        ):  # ``d.setdefault(k, v)``: an item write, whatever holds ``d`` (its checks are a write's)
            d, (key, value) = call.func.value, (a.value for a in call.args)
            get = cst.Call(
                cst.Attribute(d, cst.Name("get")), [cst.Arg(key), cst.Arg(value)]
            )
            item = cst.Subscript(d, [cst.SubscriptElement(cst.Index(key))])
            return cst.Assign([cst.AssignTarget(item)], get)
        if (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "update"
            and isinstance(call.func.value, cst.Name)
            and call.func.value.value in self.names - self.aliased
        ):
            entries = _spread(call.args)
            if entries is not None and sum(a.keyword is None for a in call.args) <= 1:
                target = call.func.value
                return cst.Assign(
                    [cst.AssignTarget(target)],
                    cst.Dict([cst.StarredDictElement(target), *entries]),
                )
        return updated

    def leave_BinaryOperation(self, original, updated):
        if isinstance(updated.operator, cst.BitOr) and _is_dict(original, self.names):
            return _merged(updated.left, updated.right)
        return updated

    def leave_AugAssign(self, original, updated):
        if isinstance(updated.operator, cst.BitOrAssign) and (
            _is_dict(original.target, self.names)
            or _is_dict(original.value, self.names)
        ):
            return cst.Assign(
                [cst.AssignTarget(updated.target)],
                _merged(updated.target, updated.value),
            )
        return updated


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its merges of dicts written as displays (itself when it has none)."""
    node = source.node
    if not any(
        isinstance(n, (cst.BitOr, cst.BitOrAssign))
        or (isinstance(n, cst.Name) and n.value in ("update", "dict", "setdefault"))
        for n in iter_nodes(node)
    ):
        return source
    merges = _Merges(source.file.positions, _dict_names(node), _aliased(node))
    return with_node(source, rewrite(node, merges))
