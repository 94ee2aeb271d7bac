"""``np.linalg.multi_dot([A, B, C])`` as the matrix products it stands for.

Guarantee: a call of NumPy's or ``jax.numpy``'s ``linalg.multi_dot`` whose
list is written out at the call is read as ``xp.matmul(xp.matmul(A, B), C)``:
left to right, the values of NumPy's cheapest order up to rounding, with a
vector first or last read as a row or a column, as ``multi_dot`` reads it.
``matmul`` has rules in every mode. Lists made elsewhere are an error that
says to write them out.
"""

from __future__ import annotations

import libcst as cst

from ..errors import UnsupportedSyntax
from . import spellings


def is_multi_dot(obj) -> bool:
    """Whether ``obj`` is NumPy's or ``jax.numpy``'s ``linalg.multi_dot`` (by identity)."""
    return obj is not None and any(
        obj is spellings._lookup(module, "linalg.multi_dot")
        for module in spellings._modules()
    )


def lower(resolver, node: cst.Call) -> cst.BaseExpression:
    """The call as nested ``xp.matmul`` calls over the resolved arrays."""
    arg = node.args[0] if len(node.args) == 1 else None
    if (
        arg is None
        or (arg.keyword is not None and arg.keyword.value != "arrays")
        or arg.star
        or not isinstance(arg.value, (cst.List, cst.Tuple))
        or any(isinstance(e, cst.StarredElement) for e in arg.value.elements)
        or len(arg.value.elements) < 2
    ):
        resolver.fail(node, "`np.linalg.multi_dot` of other than a list of two or more arrays written out",
                      "write the list out at the call: np.linalg.multi_dot([A, B, C])",
                      UnsupportedSyntax)  # fmt: skip
    first, *rest = (resolver.expr(e.value) for e in arg.value.elements)
    out = first
    for array in rest:
        out = resolver.mark(
            cst.Call(cst.parse_expression("xp.matmul"), [cst.Arg(out), cst.Arg(array)]),
            node,
        )
    return out
