"""Iterators kept in a name and looped over once, read as the loop over the call that made them.

Guarantee of ``desugar(source)``: ``pairs = zip(ws, ws[1:])`` (or
``enumerate``, ``reversed``, ``range``, ``map`` of builtins), a statement of
the function's own body whose name is bound nowhere else and read exactly
once, as the iterable of a later ``for`` or comprehension, is dropped, and
that loop iterates the call itself. An iterator read twice (Python's second
pass finds it empty) or read otherwise stays, and its error.
"""

from __future__ import annotations

import builtins

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .rewriting import (
    PositionKeeping,
    assignment,
    bindings,
    function_body,
    with_body,
)
from .source import FunctionSource

ITERATORS = ("zip", "enumerate", "reversed", "range")


class _Loops(PositionKeeping):
    """Loops over the names ``calls`` holds, over the calls themselves."""

    def __init__(self, calls: dict, positions: dict):
        super().__init__(positions)
        self.calls = calls

    def leave_For(self, original, updated):
        return self._over(updated)

    def leave_CompFor(self, original, updated):
        return self._over(updated)

    def _over(self, node):
        if isinstance(node.iter, cst.Name) and node.iter.value in self.calls:
            return node.with_changes(iter=self.calls[node.iter.value])
        return node


def _iterator(stmt, env) -> tuple[str, cst.Call] | None:
    assign = assignment(stmt)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name):
        return None
    value = assign.value
    if not (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value in ITERATORS
        and env.get(value.func.value, getattr(builtins, value.func.value))
        is getattr(builtins, value.func.value)
    ):
        return None
    return assign.targets[0].target.value, value


def _uses(node, name: str) -> tuple[int, int]:
    """How many times ``name`` is read, and how many of those reads are a loop's iterable."""
    reads = sum(
        1 for n in iter_nodes(node) if isinstance(n, cst.Name) and n.value == name
    )
    loops = sum(
        1
        for n in iter_nodes(node)
        if isinstance(n, (cst.For, cst.CompFor))
        and isinstance(n.iter, cst.Name)
        and n.iter.value == name
    )
    return reads, loops


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with the iterators it keeps in names, looped over once, inlined into their loops."""
    statements = function_body(source)
    if statements is None:
        return source
    calls = {}
    for i, stmt in enumerate(statements):
        found = _iterator(stmt, source.env)
        if found is None:
            continue
        name, call = found
        # the assignment's own target is one read of the name in the body; the loop's iterable the other
        if _uses(source.node.body, name) != (2, 1):
            continue
        # the call moves to its loop: nothing on the way may rebind what it reads
        read = {n.value for n in iter_nodes(call) if isinstance(n, cst.Name)}
        until = next(
            (j for j in range(i + 1, len(statements)) if _uses(statements[j], name)[1]),
            None,
        )
        if until is not None and not any(
            bindings(s).keys() & read for s in statements[i + 1 : until + 1]
        ):
            calls[name] = call
    if not calls:
        return source
    kept = [
        s for s in statements if (_iterator(s, source.env) or (None,))[0] not in calls
    ]
    loops = _Loops(calls, source.file.positions)
    return with_body(source, [rewrite(s, loops) for s in kept])
