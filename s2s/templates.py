"""Rule functions as code templates: parsed once, parameters renamed into the program's variables.

``rule_entries(op)`` gives one expression per leading parameter of the op
(``None`` where no derivative flows); ``instantiate`` substitutes names.
"""

from __future__ import annotations

import functools
import inspect
import textwrap

import libcst as cst

from .cstutil import substitute
from .rules import OPS


@functools.lru_cache(maxsize=None)
def rule_entries(op_name: str) -> tuple[cst.BaseExpression | None, ...]:
    """The return expression of the op's rule, split per leading parameter."""
    rule = OPS[op_name].rule
    module = cst.parse_module(textwrap.dedent(inspect.getsource(rule)))
    fndef = next(n for n in module.body if isinstance(n, cst.FunctionDef))
    last = fndef.body.body[-1]
    ret = last.body[0] if isinstance(last, cst.SimpleStatementLine) else None
    if not isinstance(ret, cst.Return) or ret.value is None or len(fndef.body.body) != 1:
        raise ValueError(f"rule for {op_name!r} must be a single `return` statement")
    value = ret.value
    if isinstance(value, cst.Tuple) and not value.lpar:
        entries = [e.value for e in value.elements]
    else:
        entries = [value]
    return tuple(None if isinstance(e, cst.Name) and e.value == "None" else e for e in entries)


def instantiate(entry: cst.BaseExpression, bindings: dict) -> cst.BaseExpression:
    """The entry with each parameter name replaced by its bound expression."""
    return substitute(entry, bindings)
