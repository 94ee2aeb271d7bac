"""Desugar: augmented assignment and chained comparisons become plain assignments and ops.

Output: no ``AugAssign``; every comparison has one operator.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import iter_nodes

_AUG_TO_BINARY = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.PowerAssign: cst.Power, cst.MatrixMultiplyAssign: cst.MatrixMultiply,
    cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo, cst.BitAndAssign: cst.BitAnd,
    cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
}  # fmt: skip


class _SplitComparisons(cst.CSTTransformer):
    def leave_Comparison(self, original, node):
        if len(node.comparisons) == 1:
            return node
        parts, left = [], node.left
        for c in node.comparisons:
            parts.append(cst.Comparison(left, [c]))
            left = c.comparator
        out = parts[0]
        for part in parts[1:]:
            out = cst.Call(cst.parse_expression("xp.logical_and"), [cst.Arg(out), cst.Arg(part)])
        return out


def _expr(node, fn):
    if not any(type(n) is cst.Comparison and len(n.comparisons) > 1 for n in iter_nodes(node)):
        return node  # untouched: keeps node identities, and with them the origins of sub-expressions
    out = node.visit(_SplitComparisons())
    if out is not node and node in fn.origins:
        fn.origins[out] = fn.origins[node]
    return out


def desugar(fn: ir.Function) -> ir.Function:
    body = []
    for stmt in fn.body:
        if isinstance(stmt, ir.AugAssign):
            binary = _AUG_TO_BINARY[type(stmt.operator)]()
            value = cst.BinaryOperation(cst.Name(stmt.target.value), binary, stmt.value)
            if stmt.origin is not None:
                fn.origins[value] = stmt.origin
            stmt = ir.Assign(cst.Name(stmt.target.value), value, stmt.origin)
        if isinstance(stmt, ir.Assign):
            stmt = ir.Assign(stmt.target, _expr(stmt.value, fn), stmt.origin)
        else:
            stmt = ir.Return(_expr(stmt.value, fn), stmt.origin)
        body.append(stmt)
    locals_ = {name: desugar(local) for name, local in fn.locals.items()}
    return fn.with_body(body, locals=locals_)
