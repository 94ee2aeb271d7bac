"""Starred assignment targets, as the indexing they stand for.

Guarantee: ``desugar(source)`` gives the same function with each statement
``first, *rest, last = value`` (one starred name, among names) replaced by
``first = value[0]``, ``rest = value[1:-1]``, ``last = value[-1]`` (``value``
first bound to a fresh name when it is not a name), each at the statement's
position. Other starred targets are left for the fence to report.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes
from .rewriting import (
    assignment,
    assignment_line,
    function_body,
    with_blocks,
    with_body,
)
from .source import FunctionSource


def _starred_assign(line) -> cst.Assign | None:
    stmt = assignment(line)
    if stmt is None:
        return None
    target = stmt.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    elements = target.elements
    stars = [e for e in elements if isinstance(e, cst.StarredElement)]
    if len(stars) != 1 or not all(isinstance(e.value, cst.Name) for e in elements):
        return None
    return stmt


def _index(value, index) -> cst.Subscript:
    return cst.Subscript(value, [cst.SubscriptElement(index)])


def _int(k: int) -> cst.BaseExpression:
    return (
        cst.Integer(str(k))
        if k >= 0
        else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-k)))
    )


class _Unstar:
    def __init__(self, source: FunctionSource):
        self.positions = source.file.positions
        self.taken = {
            n.value for n in iter_nodes(source.node) if isinstance(n, cst.Name)
        }
        self.changed = False

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            if (
                isinstance(stmt, cst.SimpleStatementLine)
                and _starred_assign(stmt) is not None
            ):
                out.extend(self.unstar(stmt))
            else:
                out.append(with_blocks(stmt, self.block, self.positions))
        return out

    def unstar(self, line) -> list:
        self.changed = True
        stmt = _starred_assign(line)
        elements = stmt.targets[0].target.elements
        value, out = stmt.value, []
        if not isinstance(value, cst.Name):
            name, k = "_unpacked", 1
            while name in self.taken:
                k += 1
                name = f"_unpacked_{k}"
            self.taken.add(name)
            out.append(assignment_line(cst.Name(name), value, line, self.positions))
            value = cst.Name(name)
        star = next(
            i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement)
        )
        after = len(elements) - star - 1
        for i, e in enumerate(elements):
            if i < star:
                index = cst.Index(_int(i))
            elif i > star:
                index = cst.Index(_int(i - len(elements)))
            else:
                index = cst.Slice(
                    lower=_int(star) if star else None,
                    upper=_int(-after) if after else None,
                )
            out.append(
                assignment_line(e.value, _index(value, index), line, self.positions)
            )
        return out


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its starred assignments as indexing (itself when it has none)."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.StarredElement) for n in iter_nodes(source.node)
    ):
        return source
    unstar = _Unstar(source)
    statements = unstar.block(body)
    return with_body(source, statements) if unstar.changed else source
