"""Loops over ``range`` whose index reads sequences, as loops over the sequences themselves.

Guarantee: ``desugar(source)`` gives the same function with each loop
``for i in range(n):`` whose body reads ``xs[i]`` (``xs`` a name, or a path from
one by constant keys and attributes, ``params["layers"]``, whose name the loop
does not assign; ``i`` never assigned in it) read as

    for i, xs_i in zip(range(n), xs):

with every ``xs[i]`` in the body read as ``xs_i``. A Python list (layers of
different shapes) is then visited item by item, as ``for w in ws`` is, where
indexing it by a compiled loop counter could not be; an array is visited
row by row in one compiled loop. Where ``n`` is not ``len(xs)``, the loop
starts with ``assert len(xs) >= n``: Python would stop at ``xs[i]`` past its
end, and ``zip`` must not stop early instead. New nodes take the positions of
the nodes they replace, so errors and comments cite the user's lines.
"""

from __future__ import annotations

import re

import libcst as cst

from ..cstutil import iter_nodes, names_in
from ..naming import Namer
from .rewriting import PositionKeeping, place, with_node
from .source import FunctionSource


def _name(node) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def _path(node) -> str | None:
    """The base name of a sequence read by a path, ``xs``, ``params["layers"]`` or ``self.blocks``
    (constant keys), else None."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute) or (
            isinstance(node, cst.Subscript)
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, (cst.SimpleString, cst.Integer))
        ):
            node = node.value
        else:
            return None


def _indexed_by(node, index: str):
    """``xs`` (a path: ``_path``) for ``xs[index]`` (one plain index), else None."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return None
    element = node.slice[0].slice
    if not isinstance(element, cst.Index) or _name(element.value) != index:
        return None
    return node.value if _path(node.value) is not None else None


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def _identifier(code: str) -> str:
    """A name made of a path's code: ``params["layers"]`` -> ``params_layers``."""
    return re.sub(r"\W+", "_", code).strip("_")


def _assigned(body) -> set[str]:
    """Names the loop body binds or writes into (``x = ..``, ``x[i] = ..``, ``x += ..``, loop targets)."""
    out = set()
    for node in iter_nodes(body):
        if isinstance(
            node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)
        ):
            out |= {n.value for n in iter_nodes(node.target) if isinstance(n, cst.Name)}
    return out


def _length_of(count) -> str | None:
    """``xs`` for ``len(xs)``."""
    if (
        isinstance(count, cst.Call)
        and _name(count.func) == "len"
        and len(count.args) == 1
        and _name(count.args[0].value) is not None
    ):
        return count.args[0].value.value
    return None


class _Loops(PositionKeeping):
    def __init__(self, positions: dict, taken: set):
        super().__init__(positions)
        self.namer = Namer(taken)
        self.changed = False
        self.enclosing: list[set] = []  # what each enclosing loop binds

    def visit_For(self, node):
        self.enclosing.append(_assigned(node))
        return True

    def leave_For(self, original, updated):
        self.enclosing.pop()
        index = _name(updated.target)
        iterator = updated.iter
        bound = set().union(*self.enclosing)
        if (
            index is None
            # ``range(i)`` of an enclosing loop's index: indexed, a loop of its own length
            # (``passes/bounded_ranges.py``), which no sequence's rows can follow
            or names_in(iterator) & bound
            or updated.orelse is not None
            or updated.asynchronous is not None
            or not isinstance(iterator, cst.Call)
            or _name(iterator.func) != "range"
            or len(iterator.args) != 1
            or iterator.args[0].keyword is not None
            or iterator.args[0].star
        ):
            return updated
        assigned = _assigned(updated.body)
        if index in assigned:
            return updated
        read = {}  # the code of each sequence read -> the sequence
        for node in iter_nodes(updated.body):
            xs = _indexed_by(node, index)
            if xs is not None and _path(xs) not in assigned:
                read.setdefault(_code(xs), xs)
        if not read:
            return updated
        self.changed = True
        items = {key: self.namer.fresh(_identifier(key) + f"_{index}") for key in read}
        body = updated.body.visit(_Items(index, items, self.positions))
        count = iterator.args[0].value
        loop = updated.with_changes(
            target=cst.Tuple(
                [cst.Element(cst.Name(index))]
                + [cst.Element(cst.Name(items[key])) for key in read]
            ),
            iter=cst.Call(
                cst.Name("zip"),
                [cst.Arg(iterator)] + [cst.Arg(xs) for xs in read.values()],
            ),
            body=body,
        )
        checks = [
            place(
                cst.SimpleStatementLine(
                    [
                        cst.Assert(
                            cst.Comparison(
                                cst.Call(cst.Name("len"), [cst.Arg(xs)]),
                                [cst.ComparisonTarget(cst.GreaterThanEqual(), count)],
                            ),
                            cst.SimpleString(
                                repr(f"{key}[{index}] reads past the end of {key}")
                            ),
                        )
                    ]
                ),
                original,
                self.positions,
            )
            for key, xs in read.items()
            if _length_of(count) != key
        ]
        return cst.FlattenSentinel([*checks, loop]) if checks else loop


class _Items(PositionKeeping):
    """``xs[i]`` -> ``xs_i`` (a node at the subscript's position)."""

    def __init__(self, index: str, items: dict, positions: dict):
        super().__init__(positions)
        self.index = index
        self.items = items

    def leave_Subscript(self, original, updated):
        xs = _indexed_by(updated, self.index)
        if xs is None or _code(xs) not in self.items:
            return updated
        return cst.Name(self.items[_code(xs)])


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``range`` loops that index sequences as loops over them (itself when none)."""
    node = source.node
    if not isinstance(node, cst.FunctionDef) or not any(
        isinstance(n, cst.For) for n in iter_nodes(node)
    ):
        return source
    taken = {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}
    loops = _Loops(source.file.positions, taken)
    new = node.visit(loops)
    return with_node(source, new) if loops.changed else source
