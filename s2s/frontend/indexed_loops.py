"""Loops over ``range`` whose index reads sequences, as loops over the sequences themselves.

Guarantee: ``desugar(source)`` gives the same function with each loop
``for i in range(n):`` whose body reads ``xs[i]`` (``xs`` a name, or a path from
one by constant keys and attributes, ``params["layers"]``, whose name the loop
does not assign; ``i`` never assigned in it) read as

    for i, xs_i in zip(range(n), xs):

with every ``xs[i]`` in the body read as ``xs_i``. A descending loop ``for t in range(b - 1, a - 1, -1)`` (``a`` an integer literal;
``reversed(range(a, b))`` is one: ``reversed_ranges``) zips ``reversed(xs[a + c:b + c])``. A loop ``for l in range(a, b)``
(``a`` an integer literal) reading ``xs[l + c]`` (``c`` an integer literal, ``a + c >= 0``:
never a read from the end) zips ``xs[a + c:]`` as ``xs_l_plus_c`` (``xs_l_minus_1``). A Python list (layers of
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

from ..cstutil import int_literal, iter_nodes, names_in, parenthesize, plus_int, rewrite
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


def _offset(node, index: str) -> int | None:
    """``c`` for ``index``, ``index + c``, ``index - c`` or ``c + index`` (``c`` an integer literal)."""
    if _name(node) == index:
        return 0
    if not isinstance(node, cst.BinaryOperation):
        return None
    left, right = node.left, node.right
    if isinstance(node.operator, cst.Add) and _name(right) == index:
        left, right = right, left
    if _name(left) != index or not isinstance(right, cst.Integer):
        return None
    if isinstance(node.operator, cst.Add):
        return int(right.value)
    return -int(right.value) if isinstance(node.operator, cst.Subtract) else None


def _from_the_end(node, index: str) -> int | None:
    """``c`` for ``-index``, ``-index + c``, ``-index - c`` or ``c - index`` (``c`` an integer literal)."""
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and _name(node.expression) == index
    ):
        return 0
    if not isinstance(node, cst.BinaryOperation) or not isinstance(
        node.operator, (cst.Add, cst.Subtract)
    ):
        return None
    if (
        isinstance(node.operator, cst.Subtract)
        and isinstance(node.left, cst.Integer)
        and _name(node.right) == index
    ):
        return int(node.left.value)
    if _from_the_end(node.left, index) == 0 and isinstance(node.right, cst.Integer):
        c = int(node.right.value)
        return c if isinstance(node.operator, cst.Add) else -c
    return None


def _indexed_by(node, index: str):
    """``(xs, c, False)`` (``xs`` a path: ``_path``) for ``xs[index + c]`` (one index), ``(xs, c, True)``
    for ``xs[c - index]`` (``xs[-l]``: an item from the end), else None."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return None
    element = node.slice[0].slice
    if not isinstance(element, cst.Index) or _path(node.value) is None:
        return None
    offset = _offset(element.value, index)
    if offset is not None:
        return node.value, offset, False
    offset = _from_the_end(element.value, index)
    return None if offset is None else (node.value, offset, True)


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def _identifier(code: str) -> str:
    """A name made of a path's code: ``params["layers"]`` -> ``params_layers``."""
    return re.sub(r"\W+", "_", code).strip("_")


def _assigned(body) -> set[str]:
    """Names the loop body binds or writes into (``x = ..``, ``x[i] = ..``, ``x += ..``, loop targets);
    not the names an element write's index reads (``alpha[t, j] = ..`` writes ``alpha`` only).
    """
    out = set()
    for node in iter_nodes(body):
        if isinstance(
            node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)
        ):
            out |= _written_names(node.target)
    return out


def _written_names(target) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(set(), *(_written_names(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return _written_names(target.value)
    while isinstance(target, (cst.Subscript, cst.Attribute)):
        target = target.value
    return {target.value} if isinstance(target, cst.Name) else set()


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
            or len(iterator.args) not in (1, 2, 3)
            or any(a.keyword is not None or a.star for a in iterator.args)
        ):
            return updated
        assigned = _assigned(updated.body)
        if index in assigned:
            return updated
        args = [a.value for a in iterator.args]
        if (
            len(args) == 3
        ):  # ``range(top - 1, low - 1, -1)``: the items from ``top - 1`` down to ``low``
            if int_literal(args[2]) != -1 or int_literal(args[1]) is None:
                return updated
            first, count, descending = (
                int_literal(args[1]) + 1,
                plus_int(args[0], 1),
                True,
            )
        else:
            start = args[0] if len(args) == 2 else cst.Integer("0")
            first, count, descending = int_literal(start), args[-1], False
        # (the code of a sequence read, the index's offset, whether from the end) -> the sequence
        read = {}
        for node in iter_nodes(updated.body):
            found = _indexed_by(node, index)
            if found is None or _path(found[0]) in assigned:
                continue
            xs, offset, from_end = found
            if first is None or (from_end and descending):
                continue
            # ``xs[i - 1]`` from ``i = 1`` on: the items from ``xs[0]`` (never a read from the end);
            # ``xs[-l]`` from ``l = 1`` on: the items from the last one back (always from the end)
            if (offset - first < 0) if from_end else (first + offset >= 0):
                read.setdefault((_code(xs), offset, from_end), xs)
        if not read:
            return updated
        self.changed = True
        items = {
            key: self.namer.fresh(
                _identifier(key[0])
                + f"_{index}"
                + ("_from_end" if key[2] else "")
                + _suffix(key[1])
            )
            for key in read
        }
        body = rewrite(updated.body, _Items(index, items, self.positions))
        loop = updated.with_changes(
            target=cst.Tuple(
                [cst.Element(cst.Name(index))]
                + [cst.Element(cst.Name(items[key])) for key in read]
            ),
            iter=cst.Call(
                cst.Name("zip"),
                [cst.Arg(iterator)]
                + [
                    cst.Arg(
                        _back(xs, key[1] - first, count, key[1])
                        if key[2]
                        else (
                            _down(xs, first + key[1], plus_int(count, key[1]))
                            if descending
                            else _from(xs, first + key[1])
                        )
                    )
                    for key, xs in read.items()
                ],
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
                                [
                                    cst.ComparisonTarget(
                                        cst.GreaterThanEqual(),
                                        plus_int(
                                            count, -1 - key[1] if key[2] else key[1]
                                        ),
                                    )
                                ],
                            ),
                            cst.SimpleString(
                                repr(
                                    f"{key[0]}[{'-' if key[2] else ''}{index}"
                                    f"{_suffix(key[1], ' ')}] reads past the "
                                    f"{'start' if key[2] else 'end'} of {key[0]}"
                                )
                            ),
                        )
                    ]
                ),
                original,
                self.positions,
            )
            for key, xs in read.items()
            if not (_length_of(count) == key[0] and key[1] == 0 and not key[2])
        ]
        return cst.FlattenSentinel([*checks, loop]) if checks else loop


def _suffix(offset: int, spaced: str = "") -> str:
    """How an offset reads in a name (``_plus_1``, ``_minus_1``) or, ``spaced``, in code (`` + 1``)."""
    if offset == 0:
        return ""
    if spaced:
        return f"{spaced}{'+' if offset > 0 else '-'}{spaced}{abs(offset)}"
    return f"_{'plus' if offset > 0 else 'minus'}_{abs(offset)}"


def _down(xs, low: int, top):
    """``reversed(xs[low:top])``: the items a descending loop reads, in its order."""
    items = cst.Subscript(
        xs, [cst.SubscriptElement(cst.Slice(cst.Integer(str(low)), top))]
    )
    return cst.Call(cst.Name("reversed"), [cst.Arg(items)])


def _back(xs, top: int, count, c: int):
    """``reversed(xs[c + 1 - count:top + 1])``: the items ``xs[c - l]`` an ascending loop ``for l in
    range(first, count)`` reads (``top = c - first``, below 0: from the end), in its order.
    """
    stop = plus_int(cst.Integer("0"), top + 1) if top + 1 < 0 else None
    start = _minus(c + 1, count)
    items = cst.Subscript(xs, [cst.SubscriptElement(cst.Slice(start, stop))])
    return cst.Call(cst.Name("reversed"), [cst.Arg(items)])


def _minus(k: int, count):
    """``k - count``, folded where ``count`` is an int literal or adds or subtracts one
    (``2 - (len(ws) + 1)`` is ``1 - len(ws)``)."""
    if int_literal(count) is not None:
        return plus_int(cst.Integer("0"), k - int_literal(count))
    if (
        isinstance(count, cst.BinaryOperation)
        and isinstance(count.operator, (cst.Add, cst.Subtract))
        and isinstance(count.right, cst.Integer)
    ):
        sign = 1 if isinstance(count.operator, cst.Add) else -1
        return _minus(k - sign * int(count.right.value), count.left)
    if k > 0:
        return parenthesize(
            cst.BinaryOperation(cst.Integer(str(k)), cst.Subtract(), count)
        )
    return plus_int(parenthesize(cst.UnaryOperation(cst.Minus(), count)), k)


def _from(xs, start):
    """``xs`` from its item ``start`` on (``xs`` itself from 0)."""
    if start is None or start == 0:
        return xs
    return cst.Subscript(
        xs, [cst.SubscriptElement(cst.Slice(cst.Integer(str(start)), None))]
    )


class _Items(PositionKeeping):
    """``xs[i + c]`` (``xs[c - i]``) -> its item's name (a node at the subscript's position)."""

    def __init__(self, index: str, items: dict, positions: dict):
        super().__init__(positions)
        self.index = index
        self.items = items

    def leave_Subscript(self, original, updated):
        found = _indexed_by(updated, self.index)
        key = None if found is None else (_code(found[0]), *found[1:])
        return cst.Name(self.items[key]) if key in self.items else updated


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``range`` loops that index sequences as loops over them (itself when none)."""
    node = source.node
    if not isinstance(node, cst.FunctionDef) or not any(
        isinstance(n, cst.For) for n in iter_nodes(node)
    ):
        return source
    taken = {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}
    loops = _Loops(source.file.positions, taken)
    new = rewrite(node, loops)
    return with_node(source, new) if loops.changed else source
