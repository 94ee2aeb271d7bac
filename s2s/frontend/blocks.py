"""``np.block(...)`` of nested list displays, as the concatenations it stands for.

Guarantee: a call of NumPy's or ``jax.numpy``'s ``block`` whose argument is
written out as nested list displays is read innermost lists first::

    np.block([[A, B], [C, D]])

is read as ``rt.block_join(-2, rt.block_join(-1, A, B), rt.block_join(-1, C, D))``:
``rt.block_join(axis, *operands)`` (``s2s/rules/grids.py``) concatenates
its operands along ``axis`` (minus the list's depth), each first given the leading unit axes
that bring it to the rank of its list (JAX's and NumPy's rule: the larger of
the list's depth and its operands' ranks). It is a composition of
``reshape`` and ``concatenate``, so it has rules in every mode. Lists made
elsewhere are an error that says to write them out.
"""

from __future__ import annotations

import libcst as cst

from ..errors import UnsupportedSyntax
from . import spellings


def is_block(obj) -> bool:
    """Whether ``obj`` is NumPy's or ``jax.numpy``'s ``block`` (by identity)."""
    return obj is not None and spellings.canonical_op(obj) == "block"


def lower(resolver, node: cst.Call) -> cst.BaseExpression:
    """The call as nested ``rt.block_join`` calls over the resolved operands."""
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        resolver.fail(node, "`np.block` with other than one list of arrays",
                      "pass one nested list of arrays: np.block([[A, B], [C, D]])", UnsupportedSyntax)  # fmt: skip
    value, _ = _block(resolver, node.args[0].value, node)
    return value


def _block(resolver, node, call) -> tuple[cst.BaseExpression, int]:
    """The joined (nested) list display and its depth; an operand and depth 1."""
    if isinstance(node, cst.Tuple):
        resolver.fail(node, "`np.block` of a tuple", "write the nesting with lists: [[A, B], [C, D]]",
                      UnsupportedSyntax)  # fmt: skip
    if not isinstance(node, cst.List):
        return resolver.expr(node), 1
    if not node.elements or any(
        isinstance(e, cst.StarredElement) for e in node.elements
    ):
        resolver.fail(node, "`np.block` of an empty or unpacked list", "write every array out at the call",
                      UnsupportedSyntax)  # fmt: skip
    parts = [_block(resolver, e.value, call) for e in node.elements]
    depths = {d for _, d in parts}
    if len(depths) != 1:
        resolver.fail(node, "`np.block` of lists nested to different depths",
                      "nest every array equally deep: [[A, B], [C, D]]", UnsupportedSyntax)  # fmt: skip
    depth = depths.pop()
    operands = [cst.Arg(value) for value, _ in parts]
    joined = cst.Call(
        cst.parse_expression("rt.block_join"),
        [cst.Arg(cst.UnaryOperation(cst.Minus(), cst.Integer(str(depth)))), *operands],
    )
    return resolver.mark(joined, call), depth + 1
