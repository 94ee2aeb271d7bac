"""Tests of what a module has, decided when the code is read: ``hasattr(np, "trapezoid")``.

Version shims (``np.trapezoid(y) if hasattr(np, "trapezoid") else np.trapz(y)``) name, in the branch
the test rules out, an attribute this version of the library lacks; s2s resolves every branch it
keeps, so ``desugar`` drops that branch here.

Guarantee: an ``if``/``elif`` statement or a conditional expression whose test is
``hasattr(M, "name")`` or ``not hasattr(M, "name")``, ``M`` a module the function's environment
names (not a name the function binds) and ``hasattr`` Python's, keeps only the branch Python
takes (an ``if`` without ``else`` whose test is false: nothing). Every other test stays as it is.
"""

from __future__ import annotations

import builtins
import inspect

import libcst as cst

from .rewriting import (
    PositionKeeping,
    bindings,
    function_body,
    mentions,
    object_of,
    with_blocks,
    with_body,
)
from .source import FunctionSource


def _truth(test, source: FunctionSource, bound) -> bool | None:
    """The value of a ``hasattr`` test of a module (see the module), else None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _truth(test.expression, source, bound)
        return None if inner is None else not inner
    if not (
        isinstance(test, cst.Call)
        and isinstance(test.func, cst.Name)
        and test.func.value == "hasattr"
        and "hasattr" not in bound
        and source.env.get("hasattr", builtins.hasattr) is builtins.hasattr
        and len(test.args) == 2
        and not any(a.star or a.keyword for a in test.args)
        and isinstance(test.args[1].value, cst.SimpleString)
    ):
        return None
    module = object_of(test.args[0].value, source.env, bound)
    if not inspect.ismodule(module):
        return None
    return hasattr(module, test.args[1].value.evaluated_value)


def _leaves(stmt) -> bool:
    """Whether a line returns or raises (the lines after it in its block never run)."""
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(
        stmt.body[-1], (cst.Return, cst.Raise)
    )


class _Expressions(PositionKeeping):
    def __init__(self, source, bound):
        super().__init__(source.file.positions)
        self.source, self.bound = source, bound

    def leave_IfExp(self, original, updated):
        truth = _truth(updated.test, self.source, self.bound)
        if truth is None:
            return updated
        return updated.body if truth else updated.orelse


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with the branches its ``hasattr`` tests of modules rule out dropped (see the module)."""
    body = function_body(source)
    if body is None or not mentions("hasattr", body):
        return source
    bound = bindings(source.node)
    positions = source.file.positions

    def block(statements):
        out = []
        for stmt in statements:
            kept = taken(stmt)
            out.extend(kept)
            if kept and kept[-1] is not stmt and _leaves(kept[-1]):
                break  # (``if hasattr(...): return ...`` taken: the lines after it never run)
        return out

    def taken(stmt) -> list:
        if isinstance(stmt, cst.If):
            truth = _truth(stmt.test, source, bound)
            if truth is True:
                return block(stmt.body.body)
            if truth is False:
                if isinstance(stmt.orelse, cst.Else):
                    return block(stmt.orelse.body.body)
                return taken(stmt.orelse) if isinstance(stmt.orelse, cst.If) else []
        return [with_blocks(stmt, block, positions)]

    expressions = _Expressions(source, bound)
    statements = [s.visit(expressions) for s in block(body)]
    return with_body(source, statements)
