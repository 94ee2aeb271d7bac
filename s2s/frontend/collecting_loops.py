"""Loops over a sequence known when s2s reads the code that read the list they append to, written out.

An explicit Runge-Kutta step collects its stages from a Butcher tableau, each stage reading the ones
before it::

    ks = []
    for a_row in A:                      # A: a module-level list of lists
        yi = y + h * sum(a * k for a, k in zip(a_row, ks))
        ks.append(f(yi))

The list's items are the loop's outputs, which a compiled loop has only after it ends, and each step
reads a different number of them: there is no loop to compile. JAX's tracing writes such a loop out,
and so does ``desugar(source)``: one copy of the body per item, after its target is assigned the item
(``a_row = A[0]``, ``k = 2``), so the appends are appends in a row.

Guarantee: a ``for`` (in any block, no ``else``) over a static sequence (a module-level list or tuple,
a display, ``range`` of ints the code spells: literals, module-level ints, ``len`` of a module-level
sequence; ``enumerate``/``zip`` of those) of at most ``MAX_STEPS`` items, whose body neither jumps out
nor yields, appends to a list bound before the loop and reads that list in another line of its body
(or in the appended value), is written out. Other loops stay as they are (a loop that reads what it
collects then stays a located error). New nodes keep the loop's position, the copies its body's.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from ..cstutil import iter_nodes
from . import source as sources
from .rewriting import (
    assignment_line,
    bindings,
    function_body,
    with_blocks,
    with_body,
)
from .static_sequences import Fresh, StaticSequences

MAX_STEPS = 32  # a longer loop is one a person means to run as a loop


class _Writer:
    def __init__(self, source: sources.FunctionSource):
        self.source = source
        self.positions = source.file.positions
        self.bound = bindings(source.node, items=False)
        self.sequences = StaticSequences(source, self.bound, MAX_STEPS)
        self.changed = False

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            steps = self._steps(stmt) if isinstance(stmt, cst.For) else None
            if steps is None:
                out.append(with_blocks(stmt, self.block, self.positions))
                continue
            self.changed = True
            for item in steps:
                out.append(
                    assignment_line(
                        self._copy(stmt.target), self._copy(item), stmt, self.positions
                    )
                )
                out += self.block([self._copy(s) for s in stmt.body.body])
        return out

    def _copy(self, node):
        return node.visit(Fresh(self.positions))

    def _steps(self, loop: cst.For) -> list | None:
        """The items ``loop`` runs over, as expressions, where it is one to write out; else None."""
        if loop.orelse is not None or loop.asynchronous is not None:
            return None
        if not isinstance(loop.body, cst.IndentedBlock):
            return None
        jumps = (cst.Break, cst.Continue, cst.Return, cst.Yield)
        if any(isinstance(n, jumps) for n in iter_nodes(loop.body)):
            return None
        if not self._reads_what_it_collects(loop):
            return None
        return self.sequences.items(loop.iter)

    def _reads_what_it_collects(self, loop: cst.For) -> bool:
        """Whether ``loop``'s body appends to a list bound before it, and names that list elsewhere too."""
        appends = Counter()
        for stmt in loop.body.body:
            line = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
            if (
                isinstance(line, cst.Expr)
                and isinstance(line.value, cst.Call)
                and isinstance(line.value.func, cst.Attribute)
                and isinstance(line.value.func.value, cst.Name)
                and line.value.func.attr.value == "append"
            ):
                appends[line.value.func.value.value] += 1
        bound_inside = bindings(loop, items=False)
        names = Counter(
            n.value
            for n in iter_nodes(loop.body, skip={cst.Attribute: "value"})
            if isinstance(n, cst.Name) and n.value in appends
        )
        return any(
            names[name] > count and not bound_inside[name]
            for name, count in appends.items()
        )


def desugar(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with its loops that read what they collect written out (see the module)."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.For) for stmt in body for n in iter_nodes(stmt)
    ):
        return source
    writer = _Writer(source)
    statements = writer.block(body)
    return with_body(source, statements) if writer.changed else source
