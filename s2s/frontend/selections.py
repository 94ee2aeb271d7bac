"""``np.select(condlist, choicelist, default)`` as the ``where`` calls it stands for.

Guarantee: a call of NumPy's or ``jax.numpy``'s ``select`` whose two lists
are written out at the call (list or tuple displays of one length) is read as
nested ``where``s, the first condition outermost::

    np.select([x < 0, x < 1], [-x, x**2], default=1.0)

is read as ``np.where(x < 0, -x, np.where(x < 1, x**2, 1.0))``: the first
true condition picks its choice, and a choice's derivative flows only where it
is picked (``where``'s rule, safe for NaNs in the others). Lists built
elsewhere are an error that says to write them out.
"""

from __future__ import annotations

import inspect

import libcst as cst

from ..errors import S2SError, UnsupportedSyntax
from . import spellings


def is_select(obj) -> bool:
    """Whether ``obj`` is NumPy's or ``jax.numpy``'s ``select`` (by identity)."""
    return obj is not None and spellings.canonical_op(obj) == "select"


def _signature(condlist, choicelist, default=0):
    """``select``'s parameters, as NumPy and JAX bind them."""


def lower(resolver, node: cst.Call) -> cst.BaseExpression:
    """The call as nested ``xp.where`` calls over the resolved conditions and choices."""
    if any(a.star for a in node.args):
        resolver.fail(node, "argument unpacking in a call of `np.select`",
                      "pass the condition and choice lists written out", UnsupportedSyntax)  # fmt: skip
    try:
        bound = inspect.signature(_signature).bind(
            *[a.value for a in node.args if a.keyword is None],
            **{a.keyword.value: a.value for a in node.args if a.keyword is not None},
        )
    except TypeError as err:
        resolver.fail(node, f"call of `np.select` does not match its signature: {err}",
                      None, S2SError)  # fmt: skip
    conditions = _items(resolver, bound.arguments["condlist"])
    choices = _items(resolver, bound.arguments["choicelist"])
    if len(conditions) != len(choices):
        resolver.fail(node, f"`np.select` with {len(conditions)} conditions and {len(choices)} choices",
                      "give one choice per condition", S2SError)  # fmt: skip
    default = bound.arguments.get("default")
    value = resolver.expr(default) if default is not None else cst.Integer("0")
    where = cst.parse_expression("xp.where")
    for condition, choice in reversed(list(zip(conditions, choices))):
        value = resolver.mark(
            cst.Call(
                where,
                [
                    cst.Arg(resolver.expr(condition)),
                    cst.Arg(resolver.expr(choice)),
                    cst.Arg(value),
                ],
            ),
            node,
        )
    return value


def _items(resolver, node) -> list:
    if not isinstance(node, (cst.List, cst.Tuple)) or any(
        isinstance(e, cst.StarredElement) for e in node.elements
    ):
        resolver.fail(node, "`np.select` of lists made elsewhere",
                      "write the conditions and the choices out at the call: "
                      "np.select([c1, c2], [v1, v2], default)", UnsupportedSyntax)  # fmt: skip
    return [e.value for e in node.elements]
