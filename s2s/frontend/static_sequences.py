"""Sequences known when s2s reads the code, item by item, for the rewrites that write a loop out.

``StaticSequences(source, bound).items(node)`` gives the items of ``node`` as expressions, or None: a
list or tuple display (its elements), ``range`` of ints the code spells (literals, module-level ints,
``len`` of a static sequence, ``+ - * // %`` of those: ``literal`` items), a module-level list or tuple (``A[0]``,
``A[1]``, ...: the constant read where it is), and ``enumerate``/``zip`` of those (``k, item`` and
``a, b`` tuples, written without parentheses: ``a_row, c = RK4_A[0], RK4_C[0]``). At most ``most``
items.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import int_literal, literal
from .rewriting import PositionKeeping, object_of


class Fresh(PositionKeeping):
    """A copy of a tree, every node new (a statement written out twice shares no node), positions kept."""

    def on_leave(self, original, updated):
        if isinstance(updated, cst.CSTNode) and updated is original:
            updated = updated.with_changes()
        return super().on_leave(original, updated)


class StaticSequences:
    def __init__(self, source, bound, most: int):
        self.env, self.bound, self.most = source.env, bound, most

    def items(self, node) -> list | None:
        """The items of a sequence known when s2s reads the code, as expressions, else None."""
        if isinstance(node, (cst.List, cst.Tuple)):
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return None
            found = [e.value for e in node.elements]
        elif isinstance(node, cst.Call):
            found = self._called(node)
        else:
            held = object_of(node, self.env, self.bound)
            if not isinstance(held, (list, tuple)) or len(held) > self.most:
                return None
            found = [
                cst.Subscript(
                    node, [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))]
                )
                for k in range(len(held))
            ]
        return found if found is not None and len(found) <= self.most else None

    def range_of(self, node) -> range | None:
        """The ``range`` a call ``range(...)`` of ints the code spells stands for (any length), else None."""
        if not is_range_call(node, self.bound):
            return None
        bounds = [self._int(a.value) for a in node.args]
        if not 1 <= len(bounds) <= 3 or None in bounds or bounds[2:] == [0]:
            return None
        return range(*bounds)

    def _int(self, node) -> int | None:
        """An int the code spells: a literal, a module-level int, ``len`` of a static sequence, and
        ``+ - * // %`` of those."""
        value = int_literal(node)
        if value is not None:
            return value
        if isinstance(node, cst.Call):
            if (
                isinstance(node.func, cst.Name)
                and node.func.value == "len"
                and "len" not in self.bound
                and len(node.args) == 1
                and not node.args[0].star
                and not node.args[0].keyword
            ):
                items = self.items(node.args[0].value)
                return None if items is None else len(items)
            return None
        if isinstance(node, cst.BinaryOperation) and type(node.operator) in _ARITHMETIC:
            left, right = self._int(node.left), self._int(node.right)
            if left is None or right is None or (right == 0 and _divides(node)):
                return None
            return _ARITHMETIC[type(node.operator)](left, right)
        held = object_of(node, self.env, self.bound)
        return held if type(held) is int else None

    def _called(self, node: cst.Call) -> list | None:
        if not isinstance(node.func, cst.Name) or node.func.value in self.bound:
            return None
        if any(a.keyword or a.star for a in node.args):
            return None
        kind, args = node.func.value, [a.value for a in node.args]
        if kind == "range":
            steps = self.range_of(node)
            if steps is None:
                return None
            return [literal(k) for k in steps] if len(steps) <= self.most else None
        if kind == "enumerate" and len(args) == 1:
            items = self.items(args[0])
            if items is None:
                return None
            return [unparenthesized([literal(k), v]) for k, v in enumerate(items)]
        if kind == "zip" and args:
            columns = [self.items(a) for a in args]
            if None in columns:
                return None
            return [unparenthesized(row) for row in zip(*columns)]
        return None


def is_range_call(node, bound) -> bool:
    """``range(...)`` of one to three positional arguments, ``range`` Python's."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "range"
        and "range" not in bound
        and 1 <= len(node.args) <= 3
        and not any(a.keyword or a.star for a in node.args)
    )


_ARITHMETIC = {
    cst.Add: lambda a, b: a + b,
    cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b,
    cst.FloorDivide: lambda a, b: a // b,
    cst.Modulo: lambda a, b: a % b,
}


def _divides(node) -> bool:
    return isinstance(node.operator, (cst.FloorDivide, cst.Modulo))


def unparenthesized(values) -> cst.Tuple:
    """``a, b``: a tuple written as an assignment's value is (``a_row, c = RK4_A[0], RK4_C[0]``)."""
    return cst.Tuple([cst.Element(v) for v in values], lpar=[], rpar=[])
