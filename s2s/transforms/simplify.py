"""Clean generated straight-line code: fold constants, drop copies and dead assignments.

``fold`` (applied to each generated expression) folds ``e * 1``, ``1 * e``,
``e ** 1``, ``--e`` and arithmetic on numeric literals; ``simplify`` leaves no
assignment whose value is never read and no ``a = b`` copies between names.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import Parenthesizer, _paren_binary, names_in, substitute

_FOLD = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b, cst.Power: lambda a, b: a**b,
}  # fmt: skip


def number(node) -> float | int | None:
    if isinstance(node, cst.Integer) and not node.lpar:
        return int(node.value)
    if isinstance(node, cst.Float) and not node.lpar:
        return float(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = number(node.expression)
        return None if inner is None else -inner
    return None


def _num(value) -> cst.BaseExpression:
    node = cst.Integer(str(abs(value))) if isinstance(value, int) else cst.Float(repr(abs(value)))
    return cst.UnaryOperation(cst.Minus(), node) if value < 0 else node


class _Fold(Parenthesizer):
    def leave_BinaryOperation(self, original, node):
        a, b = number(node.left), number(node.right)
        op = type(node.operator)
        if a is not None and b is not None and op in _FOLD:
            return _num(_FOLD[op](a, b))
        if op is cst.Multiply:
            if b == 1:
                return node.left
            if a == 1:
                return node.right
            if b == -1:
                return cst.UnaryOperation(cst.Minus(), node.left)
            if a == -1:
                return cst.UnaryOperation(cst.Minus(), node.right)
        if op is cst.Power and b == 1:
            return node.left
        if op is cst.Divide and b == 1:
            return node.left
        if op is cst.Divide and a is not None and b and len(repr(a / b)) <= 8:
            return _num(a / b)
        return _paren_binary(node)

    def leave_UnaryOperation(self, original, node):
        inner = node.expression
        if isinstance(node.operator, cst.Minus) and isinstance(inner, cst.UnaryOperation) and isinstance(inner.operator, cst.Minus):
            return inner.expression
        return super().leave_UnaryOperation(original, node)


def fold(expr: cst.BaseExpression) -> cst.BaseExpression:
    """Constant-fold and drop multiplications by one, parenthesizing as precedence needs."""
    return expr.visit(_Fold())


def _target_names(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    return [n for el in target.elements for n in _target_names(el.value)]


def propagate_copies(body, keep=frozenset()):
    """Replace names bound by ``a = b`` with ``b`` downstream (unless ``a`` is in ``keep``).

    A copy is propagated when ``a`` is assigned once and ``b`` is not assigned
    again after the copy: accumulators such as ``x_bar = x_bar + ...`` change
    value, so a copy taken before they do is kept.
    """
    counts: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, stmt in enumerate(body):
        if isinstance(stmt, ir.Assign):
            for name in _target_names(stmt.target):
                counts[name] = counts.get(name, 0) + 1
                last[name] = i
    mapping, out = {}, []
    for i, stmt in enumerate(body):
        value = substitute(stmt.value, mapping) if mapping else stmt.value
        if (
            isinstance(stmt, ir.Assign)
            and isinstance(stmt.target, cst.Name)
            and isinstance(value, cst.Name)
            and stmt.target.value not in keep
            and value.value not in ("True", "False", "None")
            and counts.get(stmt.target.value) == 1
            and last.get(value.value, -1) < i
        ):
            mapping[stmt.target.value] = value
            continue
        out.append(ir.Assign(stmt.target, value, stmt.origin) if isinstance(stmt, ir.Assign) else ir.Return(value, stmt.origin))
    return out


def eliminate_dead(body):
    """Drop assignments none of whose names are read later (values are pure)."""
    live, out = set(), []
    for stmt in reversed(body):
        if isinstance(stmt, ir.Assign):
            names = _target_names(stmt.target)
            if not any(n in live for n in names):
                continue
        live |= names_in(stmt.value)
        out.append(stmt)
    return out[::-1]


def simplify(fn: ir.Function) -> ir.Function:
    """Generated code cleaned: copies propagated, dead assignments dropped (values were folded when emitted)."""
    body = propagate_copies(fn.body, keep=frozenset(fn.param_names))
    return fn.with_body(eliminate_dead(body))
