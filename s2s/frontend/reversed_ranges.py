"""``reversed(range(...))`` as the ``range`` that counts down.

Guarantee of ``desugar(source)``: ``reversed(range(n))`` is ``range(n - 1, -1, -1)``
and ``reversed(range(a, b))`` is ``range(b - 1, a - 1, -1)`` (the builtins
``reversed`` and ``range``, which the function does not rebind), the same
positions in the same order, so a backward loop over a dict or list filled by an
earlier loop (BPTT: ``for t in reversed(range(T)): dh = ... hs[t] ...``) is read
as every loop over a ``range`` is. Ranges with a step are left as written.
"""

from __future__ import annotations

import builtins

import libcst as cst

from ..cstutil import iter_nodes, plus_int, rewrite
from .rewriting import PositionKeeping, bindings, with_node
from .source import FunctionSource


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its reversed ranges counting down (itself when it has none)."""
    node = source.node
    if not any(
        isinstance(n, cst.Name) and n.value == "reversed" for n in iter_nodes(node)
    ):
        return source
    bound = bindings(node)
    if any(
        name in bound
        or source.env.get(name, getattr(builtins, name)) is not getattr(builtins, name)
        for name in ("reversed", "range")
    ):
        return source
    ranges = _Down(source.file.positions)
    new = rewrite(node, ranges)
    return with_node(source, new) if ranges.changed else source


class _Down(PositionKeeping):
    changed = False

    def leave_Call(self, original, updated):
        inner = _range_of_reversed(updated)
        if inner is None:
            return updated
        args = [a.value for a in inner.args]
        start, stop = (cst.Integer("0"), args[0]) if len(args) == 1 else args
        self.changed = True
        return inner.with_changes(
            args=[
                cst.Arg(plus_int(stop, -1)),
                cst.Arg(plus_int(start, -1)),
                cst.Arg(cst.UnaryOperation(cst.Minus(), cst.Integer("1"))),
            ]
        )


def _range_of_reversed(node) -> cst.Call | None:
    """The ``range(n)`` or ``range(a, b)`` of ``reversed(range(...))``, else None."""
    if not (
        isinstance(node.func, cst.Name)
        and node.func.value == "reversed"
        and len(node.args) == 1
        and not node.args[0].star
        and node.args[0].keyword is None
    ):
        return None
    inner = node.args[0].value
    if (
        isinstance(inner, cst.Call)
        and isinstance(inner.func, cst.Name)
        and inner.func.value == "range"
        and len(inner.args) in (1, 2)
        and not any(a.star or a.keyword for a in inner.args)
    ):
        return inner
    return None
