"""Appends a loop makes on a test of its counter alone, collected every step and picked after the loop.

``for n in range(N_STEPS): ...; if (n + 1) % SAVE_EVERY == 0: snapshots.append(h.copy())`` (a solver
saving snapshots, an MCMC chain thinned): which steps append depends only on the counter of a range
known when the code is read, but a compiled loop's counter is traced, and a list whose length a
traced test decides cannot be compiled. ``desugar(source)`` appends every step's value to a list of
its own (``snapshots_steps``) and, after the loop, picks the steps the test keeps, computed now: a
slice where they are evenly spaced (``snapshots = snapshots_steps[2::3]``), else their items.

Guarantee: a ``for`` (in any block, no ``else``) over ``range``, its target a name the body does not
bind, whose body holds, at its own level,
``if TEST:`` (no ``else``) of ``name.append(value)`` lines only, ``TEST`` of the counter, ints,
module-level ints and parameters the function never binds again (``save_every``) alone (``+ - * // %``,
comparisons, ``and``/``or``/``not``; a parameter's test is decided when the code runs), each ``name`` a list
the loop neither binds nor reads otherwise, and at most ``MAX_PICKED`` steps kept unevenly. Where
the range's bounds are not ints the code spells (a helper's ``n_steps``), the kept steps are found
when the code runs (``kept = [j for j, n in enumerate(range(n_steps)) if TEST]``, Python ints where
the bounds are), then their items (``[steps[j] for j in kept]``). Each
value is then computed on every step (what it reads is the loop's, as in the ``if``). Other loops stay
as they are. New nodes keep the ``if``'s position.
"""

from __future__ import annotations

import itertools

import libcst as cst

from ..cstutil import iter_nodes, names_in
from .fence import is_append
from .rewriting import (
    assignment_line,
    bindings,
    function_body,
    mentions,
    namer_of,
    object_of,
    place,
    with_blocks,
    with_body,
)
from .source import FunctionSource
from .static_sequences import StaticSequences, is_range_call

MAX_PICKED = 64  # steps kept unevenly, written item by item
_ARITHMETIC = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.FloorDivide,
    cst.Modulo,
)


class _Reader:
    def __init__(self, source: FunctionSource):
        self.source = source
        self.positions = source.file.positions
        self.bound = bindings(source.node)
        self.namer = namer_of(source)
        self.static = StaticSequences(source, self.bound, 0)
        self.changed = False

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            picked = self._picked(stmt) if isinstance(stmt, cst.For) else None
            if picked is None:
                out.append(with_blocks(stmt, self.block, self.positions))
            else:
                out.extend(picked)
                self.changed = True
        return out

    def _picked(self, loop: cst.For) -> list | None:
        """The loop appending every step, then the lines picking the kept steps, else None."""
        steps = self.static.range_of(loop.iter)
        if (
            not is_range_call(loop.iter, self.bound)
            or loop.orelse is not None
            or not isinstance(loop.target, cst.Name)
            or not isinstance(loop.body, cst.IndentedBlock)
        ):
            return None
        counter = loop.target.value
        if counter in bindings(loop.body) or names_in(loop.iter) & set(
            bindings(loop.body)
        ):  # (the range read again after the loop must be the one it ran over)
            return None
        body, after = [], []
        in_loop = bindings(loop.body)
        for k, stmt in enumerate(loop.body.body):
            appends = self._counter_appends(stmt, counter, loop)
            if appends is None or not _ready(appends[1], loop.body.body[:k], in_loop):
                body.append(stmt)
                continue
            test, lines = appends
            try:
                kept = (
                    None  # a range (or a test) known when the code runs: the kept steps found then
                    if steps is None or names_in(test) & self._parameters()
                    else [
                        j for j, n in enumerate(steps) if self._holds(test, counter, n)
                    ]
                )
            except ArithmeticError:  # (``n % 0``: Python's error where the code runs)
                return None
            for name, value in lines:
                every = self.namer.fresh(f"{name}_steps")
                body.append(place(_append(every, value), stmt, self.positions))
                after.append((name, every, kept, stmt, test))
        if not after:
            return None
        picks = []
        for name, every, kept, like, test in after:
            if kept is None:
                # ``kept = [j for j, n in enumerate(range(...)) if TEST]``: Python ints, computed when the
                # code runs (the range's bounds are known then), then the items at those steps
                positions = cst.Name(self.namer.fresh(f"{name}_kept"))
                j = cst.Name(self.namer.fresh("j"))
                found = _comprehension(
                    j,
                    cst.Tuple([cst.Element(j), cst.Element(loop.target)]),
                    cst.Call(cst.Name("enumerate"), [cst.Arg(loop.iter)]),
                    test,
                )
                picks.append(assignment_line(positions, found, like, self.positions))
                item = cst.Subscript(
                    cst.Name(every), [cst.SubscriptElement(cst.Index(j))]
                )
                chosen = cst.ListComp(item, cst.CompFor(target=j, iter=positions))
            else:
                chosen = _chosen(cst.Name(every), kept)
            if chosen is None:
                return None
            joined = cst.BinaryOperation(cst.Name(name), cst.Add(), chosen)
            picks.append(assignment_line(cst.Name(name), joined, like, self.positions))
        starts = [
            assignment_line(cst.Name(every), cst.List([]), like, self.positions)
            for _, every, _, like, _ in after
        ]
        new = loop.with_changes(body=loop.body.with_changes(body=body))
        return [*starts, place(new, loop, self.positions), *picks]

    def _counter_appends(self, stmt, counter, loop):
        """``(test, [(list, value)])`` for ``if TEST: a.append(v)`` of the counter alone, else None."""
        if not (
            isinstance(stmt, cst.If)
            and stmt.orelse is None
            and isinstance(stmt.body, cst.IndentedBlock)
            and self._of_counter(stmt.test, counter)
        ):
            return None
        lines = []
        for inner in stmt.body.body:
            found = _append_of(inner)
            if found is None:
                return None
            name, value = found
            # the list: bound before the loop, neither bound nor read in it but by this append
            if (
                name == counter
                or name in bindings(loop)
                or mentions(name, [loop]) != 1
                or name not in self.bound
            ):
                return None
            lines.append((name, value))
        return stmt.test, lines

    def _of_counter(self, test, counter) -> bool:
        """A test of the counter, ints and module-level ints alone (arithmetic, comparisons, logic)."""
        allowed = (
            cst.Name,
            cst.Integer,
            cst.BinaryOperation,
            cst.Comparison,
            cst.ComparisonTarget,
            cst.BooleanOperation,
            cst.UnaryOperation,
            cst.LeftParen,
            cst.RightParen,
            cst.Equal,
            cst.NotEqual,
            cst.LessThan,
            cst.LessThanEqual,
            cst.GreaterThan,
            cst.GreaterThanEqual,
            cst.And,
            cst.Or,
            cst.Not,
            cst.Minus,
            *_ARITHMETIC,
            cst.SimpleWhitespace,
            cst.ParenthesizedWhitespace,
            cst.Newline,
            cst.EmptyLine,
            cst.TrailingWhitespace,
        )
        if not all(isinstance(n, allowed) for n in iter_nodes(test)):
            return False
        if counter not in names_in(test):
            return False
        for name in names_in(test) - {counter}:
            if name in self._parameters():
                continue  # (its value known when the code runs: the kept steps found then)
            if (
                name in self.bound
                or type(object_of(cst.Name(name), self.source.env, self.bound))
                is not int
            ):
                return False
        return True

    def _parameters(self) -> set:
        """The function's parameters it never binds again (``save_every=5`` of a solver's helper)."""
        node = self.source.node
        params = getattr(node, "params", None)
        if params is None:
            return set()
        names = {
            p.name.value
            for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        }
        return {n for n in names if self.bound[n] == 1}

    def _holds(self, test, counter, n) -> bool:
        code = cst.Module([]).code_for_node(test)
        names = {k: v for k, v in self.source.env.items() if type(v) is int}
        return bool(eval(code, {"__builtins__": {}}, {**names, counter: n}))


def _ready(lines, before, in_loop) -> bool:
    """Whether each value reads, of what the loop binds, only names its body binds on the lines before
    the ``if`` (each step's own value then; ``h - h_prev`` with ``h_prev = h`` at the end of the step would
    read what the first step has not bound yet)."""
    earlier = set(bindings(cst.Module(body=list(before)))) if before else set()
    return all(
        name in earlier or name not in in_loop
        for _, value in lines
        for name in names_in(value)
    )


def _comprehension(value, target, iterable, test) -> cst.ListComp:
    return cst.ListComp(
        value, cst.CompFor(target=target, iter=iterable, ifs=[cst.CompIf(test)])
    )


def _append_of(stmt):
    """``(name, value)`` of a line ``name.append(value)``, else None."""
    if not (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
    ):
        return None
    if not is_append(stmt.body[0]):
        return None
    call = stmt.body[0].value
    return call.func.value.value, call.args[0].value


def _append(name: str, value) -> cst.SimpleStatementLine:
    func = cst.Attribute(cst.Name(name), cst.Name("append"))
    return cst.SimpleStatementLine([cst.Expr(cst.Call(func, [cst.Arg(value)]))])


def _chosen(every, kept: list):
    """The kept steps of the list ``every``: a slice where evenly spaced, else a display of its items."""
    if not kept:
        return cst.List([])
    gaps = {b - a for a, b in itertools.pairwise(kept)}
    if len(gaps) <= 1:
        step = gaps.pop() if gaps else 1
        bounds = cst.Slice(
            lower=cst.Integer(str(kept[0])),
            upper=cst.Integer(str(kept[-1] + 1)),
            step=cst.Integer(str(step)) if step != 1 else None,
        )
        return cst.Subscript(every, [cst.SubscriptElement(bounds)])
    if len(kept) > MAX_PICKED:
        return None
    return cst.List(
        [
            cst.Element(
                cst.Subscript(
                    every, [cst.SubscriptElement(cst.Index(cst.Integer(str(j))))]
                )
            )
            for j in kept
        ]
    )


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its loops' appends on a test of the counter alone collected every step and picked
    after the loop (see the module)."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.Attribute) and n.attr.value == "append"
        for n in iter_nodes(source.node)
    ):
        return source
    reader = _Reader(source)
    statements = reader.block(body)
    return with_body(source, statements) if reader.changed else source
