"""Lambdas called where they are written, read as the local functions they are.

``(lambda t: np.sin(t) * t)(x)``, and a lambda called through a wrapper whose math is its own
(``jax.checkpoint(lambda t: ...)(x)``, ``jax.jit``, ``jax.remat``), run the lambda's body on the
arguments. ``desugar(source)`` binds the lambda to a fresh name on a line just before its statement
(``checkpointed = lambda t: ...``) and calls it by that name, which s2s reads as any local function
held in a name (through the wrapper as before).

Guarantee: only a lambda in a simple statement's own nodes (not inside another lambda, a
comprehension or a nested ``def``, whose names it might read) is bound; the lambda is made one line
earlier than Python makes it, and reads its free names when called, in the same statement, so it sees
the same values. New nodes keep the lambda's position.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import child_nodes, iter_nodes, replace_nodes
from .library import wrapper_maker
from .rewriting import (
    assignment_line,
    bindings,
    function_body,
    namer_of,
    object_of,
    place,
    with_blocks,
    with_body,
)
from .source import FunctionSource

_SCOPES = (
    cst.Lambda,
    cst.FunctionDef,
    cst.ClassDef,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


class _Binder:
    def __init__(self, source: FunctionSource):
        self.source = source
        self.positions = source.file.positions
        self.bound = bindings(source.node)
        self.namer = namer_of(source)
        self.changed = False

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            stmt = with_blocks(stmt, self.block, self.positions)
            if isinstance(stmt, cst.SimpleStatementLine):
                lines, stmt = self._bound(stmt)
                out.extend(lines)
            out.append(stmt)
        return out

    def _called(self, node) -> cst.Lambda | None:
        """The lambda a call runs: its callee, or the function its wrapper's call is given."""
        func = node.func
        if isinstance(func, cst.Lambda):
            return func
        if (
            isinstance(func, cst.Call)
            and func.args
            and isinstance(func.args[0].value, cst.Lambda)
            and func.args[0].keyword is None
            and wrapper_maker(object_of(func.func, self.source.env, self.bound))
            in ("jit", "checkpoint")
        ):
            return func.args[0].value
        return None

    def _bound(self, stmt) -> tuple[list, cst.SimpleStatementLine]:
        lines, replaced = [], {}
        stack = list(child_nodes(stmt))
        while stack:
            node = stack.pop()
            if isinstance(node, _SCOPES):
                continue
            stack.extend(child_nodes(node))
            made = self._called(node) if isinstance(node, cst.Call) else None
            if made is None or made in replaced:
                continue
            name = cst.Name(self.namer.fresh("called_lambda"))
            lines.append(assignment_line(name, made, made, self.positions))
            replaced[made] = place(name, made, self.positions)
        if not replaced:
            return [], stmt
        self.changed = True
        return lines, place(replace_nodes(stmt, replaced), stmt, self.positions)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its lambdas called in place bound to names first (see the module)."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.Call)
        and (
            isinstance(n.func, cst.Lambda)
            or (
                isinstance(n.func, cst.Call)
                and n.func.args
                and isinstance(n.func.args[0].value, cst.Lambda)
            )
        )
        for n in iter_nodes(source.node)
    ):
        return source
    binder = _Binder(source)
    statements = binder.block(body)
    return with_body(source, statements) if binder.changed else source
