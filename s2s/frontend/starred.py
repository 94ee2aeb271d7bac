"""Unpacking targets beyond names: starred targets as the indexing they stand for, element targets as
writes after the unpacking.

Guarantees of ``desugar(source)``, each new line at the statement's position:

- ``first, *rest, (W, b) = value`` (one starred name) is ``first = value[0]``, ``rest =
  value[1:-1]``, ``W, b = value[-1]`` (``value`` first bound to a fresh name when it is not a
  name). Other starred targets are left for the fence to report.
- ``i0, i1 = i * s, i * s + fw`` (names, a display of one length, no value reading a target: not
  ``a, b = b, a``) is one line per name, so what reads a name's value (a window's width) finds it.
- ``h, cache["a"] = value`` (an element or item target inside a tuple target, at any depth) is ``h,
  cache_item = value`` then ``cache["a"] = cache_item``: Python's unpacking (its length check
  included), then the writes in Python's order, left to right.

The lines of local functions are read so too.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes
from ..naming import Namer
from .rewriting import (
    assignment,
    assignment_line,
    function_body,
    place,
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
    if len(stars) != 1 or not isinstance(stars[0].value, cst.Name):
        return None
    return stmt


def _has_element_target(target) -> bool:
    """A tuple target holding an element (``x[i]``) target, at any depth."""
    return isinstance(target, (cst.Tuple, cst.List)) and any(
        isinstance(e.value, cst.Subscript) or _has_element_target(e.value)
        for e in target.elements
        if not isinstance(e, cst.StarredElement)
    )


def _independent_pairs(stmt) -> bool:
    """``a, b = x, y``: names and a display of one length, no value reading a target (``a, b = b, a``)."""
    assign = assignment(stmt)
    if assign is None or len(assign.targets) != 1:
        return False
    target, value = assign.targets[0].target, assign.value
    if not (
        isinstance(target, (cst.Tuple, cst.List))
        and isinstance(value, (cst.Tuple, cst.List))
        and len(target.elements) == len(value.elements) > 1
        and all(
            isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
            for e in target.elements
        )
        and not any(isinstance(e, cst.StarredElement) for e in value.elements)
    ):
        return False
    names = [e.value.value for e in target.elements]
    read = {
        n.value
        for e in value.elements
        for n in iter_nodes(e.value)
        if isinstance(n, cst.Name)
    }
    return len(set(names)) == len(names) and not read & set(names)


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
        self.namer = Namer(
            n.value for n in iter_nodes(source.node) if isinstance(n, cst.Name)
        )
        self.changed = False

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            if (
                isinstance(stmt, cst.SimpleStatementLine)
                and _starred_assign(stmt) is not None
            ):
                for line in self.unstar(stmt):
                    out.extend(self.written(line))
            elif assignment(stmt) is not None and _has_element_target(
                assignment(stmt).targets[0].target
            ):
                out.extend(self.written(stmt))
            elif _independent_pairs(stmt):
                self.changed = True
                assign = assignment(stmt)
                out.extend(
                    assignment_line(t.value, v.value, stmt, self.positions)
                    for t, v in zip(
                        assign.targets[0].target.elements, assign.value.elements
                    )
                )
            elif isinstance(stmt, cst.FunctionDef) and isinstance(
                stmt.body, cst.IndentedBlock
            ):  # a local function's lines too
                body = stmt.body.with_changes(body=self.block(stmt.body.body))
                out.append(place(stmt.with_changes(body=body), stmt, self.positions))
            else:
                out.append(with_blocks(stmt, self.block, self.positions))
        return out

    def written(self, line) -> list:
        """``line`` unpacking into names, then its element targets written from them."""
        stmt = assignment(line)
        if stmt is None or not _has_element_target(stmt.targets[0].target):
            return [line]
        self.changed = True
        writes = []

        def named(target):
            if isinstance(target, (cst.Tuple, cst.List)):
                return target.with_changes(
                    elements=[
                        e.with_changes(value=named(e.value)) for e in target.elements
                    ]
                )
            if isinstance(target, cst.Subscript):
                base = target
                while isinstance(base, cst.Subscript):
                    base = base.value
                hint = base.value if isinstance(base, cst.Name) else "item"
                name = cst.Name(self.namer.fresh(f"{hint}_item"))
                writes.append(assignment_line(target, name, line, self.positions))
                return name
            return target

        target = named(stmt.targets[0].target)
        return [assignment_line(target, stmt.value, line, self.positions), *writes]

    def unstar(self, line) -> list:
        self.changed = True
        stmt = _starred_assign(line)
        elements = stmt.targets[0].target.elements
        value, out = stmt.value, []
        if not isinstance(value, cst.Name):
            name = self.namer.fresh("_unpacked")
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
    """``source`` with its starred assignments as indexing, and its unpackings of displays one line per
    name (itself when it has none)."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.StarredElement)
        or (isinstance(n, cst.AssignTarget) and _has_element_target(n.target))
        or (
            isinstance(n, cst.Assign)
            and isinstance(n.value, cst.Tuple)
            and isinstance(n.targets[0].target, cst.Tuple)
        )
        for n in iter_nodes(source.node)
    ):
        return source
    unstar = _Unstar(source)
    statements = unstar.block(body)
    return with_body(source, statements) if unstar.changed else source
