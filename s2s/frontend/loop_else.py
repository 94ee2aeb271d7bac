"""``for``/``while`` loops with an ``else:`` block, written with the flag Python keeps for them.

``else`` runs when the loop ends without ``break``. ``desugar(source)`` rewrites each such loop as::

    completed = True
    for x in xs:                 # every ``break`` of this loop (not of an inner one) becomes
        ...                      #     completed = False; break
    if completed:
        <the else block>

which the rest of s2s reads like any loop with ``break`` (a ``return`` in the loop leaves the function,
so the block never runs then either). New nodes keep the positions of the user's code they stand for.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from ..naming import Namer
from .rewriting import PositionKeeping, assignment_line, place, with_node
from .source import FunctionSource


class _Breaks(cst.CSTTransformer):
    """A loop's own ``break`` statements, each after ``flag = False`` (inner loops and functions kept)."""

    def __init__(self, flag: str):
        super().__init__()
        self.flag = flag

    def visit_For(self, node) -> bool:
        return False

    def visit_While(self, node) -> bool:
        return False

    def visit_FunctionDef(self, node) -> bool:
        return False

    def leave_SimpleStatementLine(self, original, updated):
        if not any(isinstance(s, cst.Break) for s in updated.body):
            return updated
        cleared = cst.Assign([cst.AssignTarget(cst.Name(self.flag))], cst.Name("False"))
        body = []
        for s in updated.body:
            if isinstance(s, cst.Break):
                body.append(cleared)
            body.append(s)
        return updated.with_changes(body=body)


class _LoopElse(PositionKeeping):
    def __init__(self, source: FunctionSource, namer: Namer):
        super().__init__(source.file.positions)
        self.namer = namer

    def leave_IndentedBlock(self, original, updated):
        out = []
        for stmt in updated.body:
            if isinstance(stmt, (cst.For, cst.While)) and stmt.orelse is not None:
                out.extend(self._written(stmt))
            else:
                out.append(stmt)
        return updated.with_changes(body=out)

    def _written(self, loop) -> list:
        flag = self.namer.fresh("completed")
        body = loop.body.with_changes(
            body=[rewrite(s, _Breaks(flag)) for s in loop.body.body]
        )
        new_loop = place(
            loop.with_changes(body=body, orelse=None), loop, self.positions
        )
        start = assignment_line(cst.Name(flag), cst.Name("True"), loop, self.positions)
        then = cst.If(cst.Name(flag), loop.orelse.body)
        return [start, new_loop, place(then, loop.orelse, self.positions)]


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its loops' ``else`` blocks run on a flag their ``break``s clear."""
    node = source.node
    if not any(
        isinstance(n, (cst.For, cst.While)) and n.orelse is not None
        for n in iter_nodes(node)
    ):
        return source
    names = {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}
    new = rewrite(node, _LoopElse(source, Namer(names | set(source.env))))
    return with_node(source, new)
