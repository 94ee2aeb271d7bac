"""Loops over ``np.ndindex`` and ``np.ndenumerate``: one loop over the positions of a grid.

Guarantee of ``desugar(source)``: a ``for`` loop or comprehension clause over
``np.ndindex(shape)`` whose target unpacks the position (``for i, j in
np.ndindex(out.shape)``) iterates ``np.ndindex(shape[0], shape[1])``, the grid's
extents one per axis (a tuple display's items as written); one over
``np.ndenumerate(x)`` whose target is ``(i, j), v`` iterates ``np.ndindex`` of
``x``'s extents and reads ``v`` as ``x[i, j]`` (a line at the top of the loop's
body; in a comprehension, ``v`` read so where the clause's element uses it).
The resolver reads ``np.ndindex`` of extents as ``itertools.product`` of ranges
(``combinatorics``): one loop over the positions in NumPy's (C) order, which
compiles, differentiates and batches. A target that does not unpack the
position, where the rank is not written, is a located error that says how to
write it.
"""

from __future__ import annotations

import libcst as cst
import numpy as np

from ..cstutil import iter_nodes, rewrite, substitute
from ..errors import UnsupportedSyntax
from .rewriting import (
    PositionKeeping,
    assignment_line,
    bindings,
    object_of,
    place,
    with_node,
)
from .source import FunctionSource

_GRIDS = (np.ndindex, np.ndenumerate)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its loops over ``np.ndindex``/``np.ndenumerate`` over extents (itself when none)."""
    node = source.node
    if not any(
        isinstance(n, cst.Name) and n.value in ("ndindex", "ndenumerate")
        for n in iter_nodes(node)
    ):
        return source
    grids = _Grids(source)
    new = rewrite(node, grids)
    return with_node(source, new) if grids.changed else source


class _Grids(PositionKeeping):
    changed = False

    def __init__(self, source: FunctionSource):
        super().__init__(source.file.positions)
        self.source = source
        self.bound = bindings(source.node)
        self._in_comprehension: list[list] = []

    def leave_For(self, original, updated):
        found = self._grid(updated.iter, updated.target)
        if found is None:
            return updated
        target, extents, read = found
        body = updated.body
        if read is not None:
            value, element = read
            line = assignment_line(value, element, original, self.positions)
            body = body.with_changes(body=[line, *body.body])
        return updated.with_changes(
            target=target, iter=self._ndindex(updated.iter, extents), body=body
        )

    def leave_CompFor(self, original, updated):
        found = self._grid(updated.iter, updated.target)
        if found is None:
            return updated
        target, extents, read = found
        if read is not None:
            self._in_comprehension[-1].append(read)
        return updated.with_changes(
            target=target, iter=self._ndindex(updated.iter, extents)
        )

    def visit_ListComp(self, node):
        # a comprehension's ``v`` of ``np.ndenumerate``: read where its element and tests use it
        self._in_comprehension.append([])

    visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp

    def leave_ListComp(self, original, updated):
        reads = {v.value: element for v, element in self._in_comprehension.pop()}
        if not reads:
            return updated
        return substitute(
            updated, reads
        )  # (free names only: not ``x.v``, not keywords)

    leave_SetComp = leave_GeneratorExp = leave_DictComp = leave_ListComp

    def _grid(self, iterated, target):
        """``(target, extents, read)`` of a loop over a grid, else None: ``read`` is ``(v, x[i, j])`` for
        ``np.ndenumerate``."""
        if not isinstance(iterated, cst.Call) or any(
            a.star or a.keyword for a in iterated.args
        ):
            return None
        kind = object_of(iterated.func, self.source.env, self.bound)
        if not any(kind is g for g in _GRIDS):
            return None
        self.changed = True
        args = [a.value for a in iterated.args]
        if kind is np.ndenumerate:
            if (
                len(args) != 1
                or not isinstance(target, cst.Tuple)
                or len(target.elements) != 2
                or not isinstance(target.elements[0].value, cst.Tuple)
                or not isinstance(target.elements[1].value, cst.Name)
            ):
                self._fail(
                    iterated, "`np.ndenumerate` whose loop target is not `(i, j), v`"
                )
            if not isinstance(args[0], (cst.Name, cst.Attribute)):
                self._fail(iterated, "`np.ndenumerate` of an expression")
            position, value = (e.value for e in target.elements)
            names = [e.value for e in position.elements]
            shape = cst.Attribute(args[0], cst.Name("shape"))
            extents = [_item(shape, k) for k in range(len(names))]
            element = cst.Subscript(
                args[0], [cst.SubscriptElement(cst.Index(n)) for n in names]
            )
            return position, extents, (value, place(element, iterated, self.positions))
        if len(args) != 1:
            return target, args, None  # ``np.ndindex(n, m)``: the extents as written
        (shape,) = args
        if isinstance(shape, (cst.Tuple, cst.List)):
            return target, [e.value for e in shape.elements], None
        if isinstance(shape, cst.Integer):
            return target, [shape], None
        if not isinstance(target, cst.Tuple):
            self._fail(
                iterated, "`np.ndindex` of a shape, with a target that is not unpacked"
            )
        rank = len(target.elements)
        return target, [_item(shape, k) for k in range(rank)], None

    def _ndindex(self, like, extents):
        """``np.ndindex(*extents)``, spelled through the module ``like`` names its function by."""
        func = like.func
        if isinstance(func, cst.Attribute):
            func = func.with_changes(attr=cst.Name("ndindex"))
        else:  # ``from numpy import ndenumerate``
            func = next(
                (
                    cst.Attribute(cst.Name(name), cst.Name("ndindex"))
                    for name, value in self.source.env.items()
                    if value is np and name not in self.bound
                ),
                None,
            )
            if func is None:
                self._fail(like, "`ndenumerate` where the function names no `numpy`")
        call = like.with_changes(func=func, args=[cst.Arg(e) for e in extents])
        return place(call, like, self.positions)

    def _fail(self, node, what):
        raise UnsupportedSyntax(
            what,
            self.source.origin(node),
            "unpack the position, one name per axis: `for i, j in np.ndindex(x.shape):` or "
            "`for (i, j), v in np.ndenumerate(x):` with `x` a name (s2s writes it as one loop over "
            "the grid's positions)",
        )


def _item(shape, k: int) -> cst.Subscript:
    return cst.Subscript(shape, [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))])
