"""Tuple and list displays with ``*`` items, as the concatenations they are.

Guarantee of ``desugar(source)``: a tuple display with ``*`` items read as a value
(``(-1, *x.shape[2:])``) is ``(-1,) + tuple(x.shape[2:])``, a list display
``[h0, *hs]`` is ``[h0] + list(hs)``: the same items in the same order, which
every transform reads (shapes built from shapes, lists joined). A shape given to
``reshape``/``transpose`` one size at a time with a ``*`` among them
(``x.reshape(-1, *x.shape[2:])``) is first given as one tuple display, as NumPy
reads it. Assignment and loop targets (``first, *rest = xs``) are left to
``starred``.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, paren, rewrite
from .rewriting import PositionKeeping, place, with_node
from .source import FunctionSource

_SHAPE_METHODS = ("reshape", "transpose")  # (``calls.VARARG_METHODS``)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its displays of ``*`` items as concatenations (itself when it has none)."""
    node = source.node
    if not any(
        isinstance(n, cst.StarredElement) or (isinstance(n, cst.Arg) and n.star == "*")
        for n in iter_nodes(node)
    ):
        return source
    items = _Items(source.file.positions, _target_displays(node))
    new = rewrite(node, items)
    return with_node(source, new) if items.changed else source


def _target_displays(node) -> set[int]:
    """The ids of the displays that assignment and loop targets are made of."""
    targets = [
        n.target
        for n in iter_nodes(node)
        if isinstance(n, (cst.AssignTarget, cst.For, cst.CompFor))
    ]
    return {
        id(d)
        for t in targets
        for d in iter_nodes(t)
        if isinstance(d, (cst.Tuple, cst.List))
    }


class _Items(PositionKeeping):
    changed = False

    def __init__(self, positions: dict, targets: set[int]):
        super().__init__(positions)
        self.targets = targets

    def leave_Call(self, original, updated):
        func = updated.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value in _SHAPE_METHODS
            and any(a.star == "*" for a in updated.args)
            and not any(a.star == "**" or a.keyword for a in updated.args)
        ):
            return updated
        shape = cst.Tuple(
            [
                cst.StarredElement(a.value) if a.star else cst.Element(a.value)
                for a in updated.args
            ]
        )
        return updated.with_changes(args=[cst.Arg(self._joined(original, shape))])

    def leave_Tuple(self, original, updated):
        return self._joined(original, updated)

    def leave_List(self, original, updated):
        return self._joined(original, updated)

    def _joined(self, original, display):
        """``display`` as the concatenation of its runs of items and its ``*`` items."""
        if id(original) in self.targets or not any(
            isinstance(e, cst.StarredElement) for e in display.elements
        ):
            return display
        self.changed = True
        make = "tuple" if isinstance(display, cst.Tuple) else "list"
        pieces, run = [], []
        for e in display.elements:
            if isinstance(e, cst.StarredElement):
                if run:
                    pieces.append(_display(display, run))
                    run = []
                listed = make == "list" and isinstance(
                    e.value, (cst.List, cst.ListComp)
                )
                pieces.append(
                    e.value if listed else cst.Call(cst.Name(make), [cst.Arg(e.value)])
                )
            else:
                run.append(e.value)
        if run:
            pieces.append(_display(display, run))
        joined = pieces[0]
        for piece in pieces[1:]:
            joined = cst.BinaryOperation(joined, cst.Add(), piece)
        if len(pieces) > 1:
            joined = paren(joined)
        return place(joined, original, self.positions)


def _display(like, values):
    elements = [cst.Element(v) for v in values]
    if isinstance(like, cst.Tuple):
        # (a one-item tuple keeps its comma)
        elements[-1] = elements[-1].with_changes(comma=cst.Comma())
        return cst.Tuple(elements)
    return cst.List(elements)
