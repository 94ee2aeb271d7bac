"""Loops over a sequence known when s2s reads the code that no compiled loop can run, written out.

Two kinds. An explicit Runge-Kutta step collects its stages from a Butcher tableau, each stage reading
the ones before it::

    ks = []
    for a_row in A:                      # A: a module-level list of lists
        yi = y + h * sum(a * k for a, k in zip(a_row, ks))
        ks.append(f(yi))

The list's items are the loop's outputs, which a compiled loop has only after it ends, and each step
reads a different number of them. And a loop that passes its variable to a recursive function of the
program (``for n in range(DEGREE + 1): feats += coef[n] * cheb(n, x)``, ``cheb`` calling itself down to
``n == 0``): the recursion's depth is the variable's value, which a compiled loop's counter does not
have when the code is traced. There is no loop to compile: JAX's tracing writes such a loop out, and so
does ``desugar(source)``: one copy of the body per item, after its target is assigned the item
(``a_row = A[0]``, ``n = 2``).

Guarantee: a ``for`` (in any block, no ``else``) over a static sequence (``static_sequences``: a
display, a module-level list or tuple, ``range`` of ints the code spells, ``enumerate``/``zip`` of
those) of at most ``MAX_STEPS`` items, whose body neither jumps out nor yields, and that either appends
to a list bound before the loop and reads that list in another line of its body (or in the appended
value) other than as its last item (``hs[-1]``, which a compiled loop carries), or passes an expression of its names to a module-level function of the program that calls
itself, is written out. Other loops stay as they are (a loop that reads what it collects then stays a
located error). New nodes keep the loop's position, the copies its body's.
"""

from __future__ import annotations

import inspect
from collections import Counter

import libcst as cst

from ..cstutil import int_literal, iter_nodes, names_in, rewrite
from . import source as sources
from .rewriting import (
    assignment_line,
    bindings,
    function_body,
    object_of,
    with_blocks,
    with_body,
)
from .spellings import is_library
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
        return rewrite(node, Fresh(self.positions))

    def _steps(self, loop: cst.For) -> list | None:
        """The items ``loop`` runs over, as expressions, where it is one to write out; else None."""
        if loop.orelse is not None or loop.asynchronous is not None:
            return None
        if not isinstance(loop.body, cst.IndentedBlock):
            return None
        jumps = (cst.Break, cst.Continue, cst.Return, cst.Yield)
        if any(isinstance(n, jumps) for n in iter_nodes(loop.body)):
            return None
        if not (self._reads_what_it_collects(loop) or self._recurses_on(loop)):
            return None
        return self.sequences.items(loop.iter)

    def _recurses_on(self, loop: cst.For) -> bool:
        """Whether ``loop``'s body passes an expression of its names to a recursive function."""
        targets = {n.value for n in iter_nodes(loop.target) if isinstance(n, cst.Name)}
        for node in iter_nodes(loop.body):
            if not isinstance(node, cst.Call) or not any(
                names_in(a.value) & targets for a in node.args
            ):
                continue
            if _calls_itself(object_of(node.func, self.source.env, self.bound)):
                return True
        return False

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
        nodes = list(iter_nodes(loop.body, skip={cst.Attribute: "value"}))
        # ``hs[-1]``, the last item, a compiled loop carries: not a read that stops it
        last = {
            id(n.value)
            for n in nodes
            if isinstance(n, cst.Subscript)
            and isinstance(n.value, cst.Name)
            and len(n.slice) == 1
            and isinstance(n.slice[0].slice, cst.Index)
            and int_literal(n.slice[0].slice.value) == -1
        }
        names = Counter(
            n.value
            for n in nodes
            if isinstance(n, cst.Name) and n.value in appends and id(n) not in last
        )
        return any(
            names[name] > count and not bound_inside[name]
            for name, count in appends.items()
        )


def _calls_itself(fn) -> bool:
    """A module-level function of the program whose code names itself (``cheb`` calling ``cheb``)."""
    return (
        inspect.isfunction(fn)
        and not is_library(fn)
        and fn.__name__ in fn.__code__.co_names
        and fn.__globals__.get(fn.__name__) is fn
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
