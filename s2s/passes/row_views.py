"""Views of one row per iteration, for the aliasing check: ``y1 = y[n]`` in ``for n in range(...)``.

A direct-form filter keeps the last outputs under names of their own::

    for n in range(len(x)):
        y[n] = b0 * x[n] - a1 * y1 - a2 * y2
        y2, y1 = y1, y[n]

``y1`` and ``y2`` may view rows of ``y`` (they do when ``y`` has two axes),
and ``y`` is written afterwards. But the write of a later iteration reaches
row ``n`` of *that* iteration, and a ``range`` gives each iteration its own
``n``: a view of the row an earlier iteration of the same run of the loop
wrote is untouched by it. ``RowViews`` follows, along the aliasing check's
linear walk of the function (loop bodies twice, ``LoopHead`` marking each
pass), which names view the row ``base[n]`` of which iteration, and says
when a write ``base[n, ...] = v`` cannot reach such a view. Everything it
does not know stays a possible share: a view of a view (``y1[0]``), a row
index that is not the loop's own variable, a loop variable assigned anywhere
else, an iterable other than ``range`` (or ``zip`` of a ``range`` and the sequences the loop reads at
its counter: ``frontend/indexed_loops``), whose values may repeat, and a view
kept from an earlier run of the loop (its rows come round again).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .. import ir
from ..cstutil import dotted


@dataclass(frozen=True)
class LoopHead(ir.Assign):
    """A ``for`` loop's ``target = next item``, in the linear walk: ``entry`` on the loop's first pass."""

    entry: bool = False


# iterables that give every iteration its own value
_DISTINCT = frozenset({"range", "rt.range"})


def _row_index(value) -> tuple[str, str] | None:
    """``(base, n)`` for ``base[n]`` or ``base[n, ...]`` with names ``base`` and ``n``, else None."""
    if not (
        isinstance(value, cst.Subscript)
        and isinstance(value.value, cst.Name)
        and value.slice
    ):
        return None
    first = value.slice[0].slice
    if isinstance(first, cst.Index) and isinstance(first.value, cst.Name):
        return value.value.value, first.value.value
    return None


def _counter(loop) -> str | None:
    """The variable of a ``for`` loop over ``range`` (``for n in range(...)``), also zipped with the
    sequences it reads (``for n, x_n in zip(range(...), x)``: ``frontend/indexed_loops``), else None.
    """
    target, it = loop.target, loop.iter
    if (
        isinstance(target, cst.Tuple)
        and target.elements
        and isinstance(it, cst.Call)
        and dotted(it.func) in ("zip", "rt.zip")
        and it.args
    ):
        target, it = target.elements[0].value, it.args[0].value
    if (
        isinstance(target, cst.Name)
        and isinstance(it, cst.Call)
        and dotted(it.func) in _DISTINCT
    ):
        return target.value
    return None


def _head_counter(head) -> str | None:
    """The counter a loop head's target binds first (its name, or its tuple's first name)."""
    target = head.target
    if isinstance(target, cst.Tuple) and target.elements:
        target = target.elements[0].value
    return target.value if isinstance(target, cst.Name) else None


class RowViews:
    """Which names view the row of one iteration; fed every statement of the linear walk in order."""

    def __init__(self, fn: ir.Function):
        loops = [s for s in ir.walk(fn.body) if isinstance(s, ir.For)]
        counted = {_counter(s) for s in loops} - {None}
        # a name bound anywhere else (another loop's target, an assignment) may take a value again
        elsewhere = {
            n
            for s in ir.walk(fn.body)
            if isinstance(s, (ir.Assign, ir.AugAssign))
            or (isinstance(s, ir.For) and _counter(s) is None)
            for n in ir.target_names(s.target)
        } | set(fn.param_names)
        self._counted = counted - elsewhere
        self._iteration: dict[str, tuple[int, int]] = {}  # loop variable -> (run, pass)
        self._rows: dict[str, tuple] = {}  # name -> (base, loop variable, (run, pass))

    def _view(self, value):
        """The row view ``value`` is (a new one, or a name's), else None."""
        if isinstance(value, cst.Name):
            return self._rows.get(value.value)
        row = _row_index(value)
        if row is not None and row[1] in self._iteration:
            return (*row, self._iteration[row[1]])
        return None

    def step(self, stmt) -> None:
        """Take one statement of the walk: a loop head starts an iteration, an assignment moves views."""
        if isinstance(stmt, LoopHead) and _head_counter(stmt) is not None:
            name = _head_counter(stmt)
            if name in self._counted:
                run, passed = self._iteration.get(name, (0, 0))
                self._iteration[name] = (
                    (run + 1, 1) if stmt.entry else (run, passed + 1)
                )
        if not isinstance(stmt, (ir.Assign, ir.AugAssign)):
            return
        pairs = [(stmt.target, stmt.value)]
        if (
            isinstance(stmt, ir.Assign)
            and isinstance(stmt.target, cst.Tuple)
            and isinstance(stmt.value, cst.Tuple)
            and len(stmt.target.elements) == len(stmt.value.elements)
        ):
            pairs = [
                (t.value, v.value)
                for t, v in zip(stmt.target.elements, stmt.value.elements)
            ]
        # the right-hand side is read before any name is bound (``y2, y1 = y1, y[n]``)
        views = [
            (t, self._view(v) if isinstance(stmt, ir.Assign) else None)
            for t, v in pairs
        ]
        for target, view in views:
            for name in ir.target_names(target):
                self._rows.pop(name, None)
            if view is not None and isinstance(target, cst.Name):
                self._rows[target.value] = view

    def untouched(self, target, other: str) -> bool:
        """Whether the element write into ``target`` cannot reach ``other``: a view of the same base's row
        at the loop's variable, taken in an earlier iteration of the loop's current run.
        """
        row = _row_index(target)
        view = self._rows.get(other)
        if row is None or view is None or view[:2] != row:
            return False
        now = self._iteration.get(row[1])
        return now is not None and view[2][0] == now[0] and view[2][1] != now[1]
