"""``while`` loops whose test only Python numbers decide, run as ``for`` loops of the steps they take.

A time-stepping loop records its states in a list::

    t = 0.0
    while t < t_end:
        x = x + dt * f(x)
        t += dt
        xs.append(x)

A compiled ``while`` loop cannot collect a list (its length would depend on data), but here the test
reads only ``t``, whose steps add numbers, and ``t_end``: the count of steps is known as soon as those
numbers are. ``desugar(source)`` writes the loop as a count of its steps, made by a ``while`` loop of
the numbers alone, then a ``for`` loop over that many steps running the body as it is::

    steps = 0
    t_counted = t
    while t_counted < t_end:
        t_counted += dt
        steps += 1
    for _step in range(steps):
        ...

Where the numbers are constants of the compiled code (literals, a default the caller leaves out), the
count is a Python int and the ``for`` loop a scan of that length; where one is known only at run time,
the ``for`` loop's range is (and collecting a list in it is the located error it was).

Guarantee: a ``while`` loop without ``else``, ``break``, ``continue`` or ``return`` whose body
appends to a list; its test built from names, literals, comparisons and arithmetic, and sizes of arrays
the body neither binds nor changes (``len(x)``, ``x.shape[0]``, ``x.size``); each name of the
test the body assigns (its counters) assigned only by statements of the body's own level, ``c = e``
or ``c op= e``, ``e`` reading only literals, counters and names the body does not assign, by
arithmetic. The counting loop runs those statements in their order, as each step of the loop does,
so it takes the loop's count of steps, float rounding included. Any other loop stays as it is.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, names_in, own_nodes, rewrite
from .rewriting import (
    PositionKeeping,
    assignment_line,
    bindings,
    function_body,
    namer_of,
    place,
    with_blocks,
    with_body,
)
from .source import FunctionSource

_ARITHMETIC = (
    cst.BaseBinaryOp,
    cst.BaseUnaryOp,
    cst.BaseCompOp,
    cst.BaseBooleanOp,
    cst.BaseParenthesizableWhitespace,
    cst.Comment,
    cst.Newline,
    cst.Name,
    cst.Integer,
    cst.Float,
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.Comparison,
    cst.BooleanOperation,
    cst.ComparisonTarget,
    cst.LeftParen,
    cst.RightParen,
)


def _arithmetic(node, fixed=frozenset()) -> bool:
    """Whether ``node`` computes with names and number literals only (no call, subscript, attribute),
    and sizes of the arrays ``fixed`` names (``len(x)``, ``x.shape[0]``, ``x.size``, ``x.ndim``).
    """
    sized = {id(n) for s in _sizes(node, fixed) for n in iter_nodes(s)}
    return all(isinstance(n, _ARITHMETIC) or id(n) in sized for n in iter_nodes(node))


def _sizes(node, fixed) -> list:
    """The size reads in ``node`` of names in ``fixed``: known when the code is traced."""
    return [
        n
        for n in iter_nodes(node)
        if _length_of(n, fixed) or _shape_item_of(n, fixed) or _size_of(n, fixed)
    ]


def _fixed_name(node, fixed) -> bool:
    return isinstance(node, cst.Name) and node.value in fixed


def _length_of(n, fixed) -> bool:
    """``len(x)``."""
    return (
        isinstance(n, cst.Call)
        and isinstance(n.func, cst.Name)
        and n.func.value == "len"
        and len(n.args) == 1
        and _fixed_name(n.args[0].value, fixed)
    )


def _shape_item_of(n, fixed) -> bool:
    """``x.shape[0]``, ``x.shape[-1]``."""
    return (
        isinstance(n, cst.Subscript)
        and isinstance(n.value, cst.Attribute)
        and n.value.attr.value == "shape"
        and _fixed_name(n.value.value, fixed)
        and len(n.slice) == 1
        and isinstance(n.slice[0].slice, cst.Index)
        and isinstance(n.slice[0].slice.value, (cst.Integer, cst.UnaryOperation))
    )


def _size_of(n, fixed) -> bool:
    """``x.size``, ``x.ndim``."""
    return (
        isinstance(n, cst.Attribute)
        and n.attr.value in ("size", "ndim")
        and _fixed_name(n.value, fixed)
    )


def _appends(statements) -> bool:
    return any(
        isinstance(n, cst.Call)
        and isinstance(n.func, cst.Attribute)
        and n.func.attr.value == "append"
        for n in own_nodes(statements)
    )


def _counter_update(stmt, counters: set[str]):
    """``(counter, the statement)`` where a body's statement assigns a counter, else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
        name = small.target.value
    elif (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
    ):
        name = small.targets[0].target.value
    else:
        return None
    return (name, small) if name in counters else None


class _Rewriter:
    def __init__(self, source: FunctionSource):
        self.positions = source.file.positions
        self.namer = namer_of(source)
        self.changed = False

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            stmt = with_blocks(stmt, self.block, self.positions)
            counted = self.counted(stmt) if isinstance(stmt, cst.While) else None
            out.extend([stmt] if counted is None else counted)
        return out

    def counted(self, loop: cst.While) -> list | None:
        body = list(loop.body.body)
        jumps = (cst.Break, cst.Continue, cst.Return, cst.Yield)
        assigned = set(bindings(loop.body))
        # names whose sizes the test may read: neither bound nor changed by a method in the body
        changed = {
            n.func.value.value
            for n in own_nodes(body)
            if isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and isinstance(n.func.value, cst.Name)
        }
        fixed = names_in(loop.test) - assigned - changed
        if (
            loop.orelse is not None
            or not _appends(body)
            or not _arithmetic(loop.test, fixed)
            or any(isinstance(n, jumps) for n in own_nodes(body))
        ):
            return None
        counters = names_in(loop.test) & assigned
        lines_of = [s for s in body if _counter_update(s, counters)]
        updates = [_counter_update(s, counters) for s in lines_of]
        # every assignment of a counter is one of those updates, by arithmetic of counters and invariants
        written = [
            n
            for s in body
            for n in iter_nodes(s)
            if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.For))
            and names_in(n.target) & counters
        ]
        if (
            not counters
            or len(written) != len(updates)
            or any(
                not _arithmetic(small.value)
                or names_in(small.value) & (assigned - counters)
                for _, small in updates
            )
        ):
            return None
        renamed = {c: self.namer.fresh(f"{c}_counted") for c in sorted(counters)}
        steps = self.namer.fresh("steps")
        rename = _Renamed(self.positions, renamed)
        counting = [
            place(
                cst.SimpleStatementLine([rewrite(small, rename)]), line, self.positions
            )
            for line, (_, small) in zip(lines_of, updates)
        ]
        counting.append(
            cst.SimpleStatementLine(
                [cst.AugAssign(cst.Name(steps), cst.AddAssign(), cst.Integer("1"))]
            )
        )
        lines = [
            assignment_line(cst.Name(steps), cst.Integer("0"), loop, self.positions)
        ]
        lines += [
            assignment_line(cst.Name(new), cst.Name(old), loop, self.positions)
            for old, new in renamed.items()
        ]
        lines.append(cst.While(rewrite(loop.test, rename), cst.IndentedBlock(counting)))
        step = self.namer.fresh("_step")
        lines.append(
            cst.For(
                cst.Name(step),
                cst.Call(cst.Name("range"), [cst.Arg(cst.Name(steps))]),
                loop.body,
            )
        )
        self.changed = True
        return [place(line, loop, self.positions) for line in lines]


class _Renamed(PositionKeeping):
    def __init__(self, positions, renamed: dict):
        super().__init__(positions)
        self.renamed = renamed

    def leave_Name(self, original, updated):
        new = self.renamed.get(updated.value)
        return updated if new is None else updated.with_changes(value=new)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its number-counted ``while`` loops (see the module) written as ``for`` loops."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.While) for n in iter_nodes(source.node)
    ):
        return source
    rewriter = _Rewriter(source)
    statements = rewriter.block(body)
    return with_body(source, statements) if rewriter.changed else source
