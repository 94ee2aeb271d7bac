"""Loops over a ``range`` that an enclosing loop's index bounds, with the span of all their values.

Guarantee: ``for j in range(lo, hi[, step])`` nested in loops over ranges
(``for i in range(a, b[, s])``, ``zip(range(...), ...)``, ``enumerate(xs)``,
``reversed(range(...))``), whose bounds depend on the enclosing indices, with
``step`` and ``s`` integer literals and ``lo``/``hi`` monotone in each index
(sums and differences of indices, of the enclosing loops' earlier single
assignments of them and of loop-invariant values, products by integer
literals, floor division by positive literals), iterates
``rt.range(lo, hi, step, within=(L, H))``: every value the inner loop takes, in
any step of the enclosing loops, lies in ``range(L, H)``; ``L`` and ``H``
read no enclosing index. The bounds at the smallest and the largest index
give them::

    for i in range(n):                  for i in range(n):
        for j in range(i + 1, n):  ->       for j in rt.range(i + 1, n, within=(1, n)):

Compiled, ``i`` is traced and ``range(i + 1, n)`` has no length known when
traced: ``rt.range`` then loops over ``range(L, H)`` and skips the steps
outside ``range(lo, hi)`` (a loop of fixed length, so reverse mode and
nesting work). Any other loop is kept as it is.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import libcst as cst

from .. import ir
from ..cstutil import call, int_literal, names_in
from .dataflow import writes


def bounded_ranges(fn: ir.Function) -> ir.Function:
    """``fn`` with its nested loops over index-bounded ranges given their span (nested bodies too)."""
    return fn.with_body(_block(fn.body, ()))


@dataclass
class _Loop:
    """An enclosing loop: the smallest and largest value of each index, the names its body binds, and
    its earlier assignments of names it binds once (what a bound that reads them reads).
    """

    indices: dict  # index name -> (smallest, largest), ``_Affine``s that read no index
    varying: set
    once: set
    defs: dict = field(default_factory=dict)


def _block(body, loops: tuple, top: bool = True) -> tuple:
    """``body`` rewritten; ``top``: it is the innermost loop's own body (not a branch in it), whose
    assignments hold whenever a later statement of it runs."""
    out = []
    for stmt in body:
        if isinstance(stmt, ir.For):
            stmt = _loop(stmt, loops)
        elif isinstance(stmt, (ir.If, ir.While)):
            changes = {"body": _block(stmt.body, loops, False)}
            if isinstance(stmt, ir.If):
                changes["orelse"] = _block(stmt.orelse, loops, False)
            stmt = replace(stmt, **changes)
        elif isinstance(stmt, ir.Def):
            function = stmt.function
            stmt = replace(stmt, function=function.with_body(_block(function.body, ())))
        target = stmt.target if isinstance(stmt, ir.Assign) else None
        if (
            top
            and loops
            and isinstance(target, cst.Name)
            and target.value in loops[-1].once
            and _current(stmt.value, loops)
        ):
            loops[-1].defs[target.value] = stmt.value
        out.append(stmt)
    return tuple(out)


def _current(value, loops) -> bool:
    """Whether ``value`` reads only what holds this step's value where it is assigned: indices, names the
    loops do not change, and assignments before it (not a name the step assigns later, whose value here
    is the previous step's)."""
    for name in names_in(value):
        known = any(name in loop.indices or name in loop.defs for loop in loops)
        if not known and any(name in loop.varying for loop in loops):
            return False
    return True


def _loop(stmt: ir.For, loops: tuple) -> ir.For:
    """``stmt`` with its range's span where enclosing indices bound it, and its body likewise."""
    found = _range_of(stmt.iter)
    iterator, indices = stmt.iter, {}
    if found is not None:
        bounds, step, position, made = found
        values = _values(bounds, step, loops)
        index = _index_name(stmt.target, position)
        if values is not None and index is not None:
            indices[index] = values
        enclosing = {name for loop in loops for name in loop.indices}
        if (
            values is not None
            and made is stmt.iter
            and _reads(bounds, loops, enclosing)
        ):
            smallest, largest = values
            within = cst.Tuple(
                [cst.Element(smallest.node()), cst.Element(largest.plus(1).node())]
            )
            iterator = call("rt.range", *(a.value for a in made.args), within=within)
    counts = Counter(n for s in ir.walk(stmt.body) for n in writes(s))
    bound = set(counts) | set(ir.target_names(stmt.target))
    indices = {n: v for n, v in indices.items() if n not in counts}
    once = {n for n, k in counts.items() if k == 1}
    inner = _Loop(indices, bound | {n for loop in loops for n in loop.varying}, once)
    return replace(stmt, iter=iterator, body=_block(stmt.body, (*loops, inner)))


def _reads(bounds, loops, indices) -> bool:
    """Whether ``bounds`` read an enclosing index, directly or through an earlier assignment."""
    seen = set()
    todo = [n for b in bounds for n in names_in(b)]
    while todo:
        name = todo.pop()
        if name in indices:
            return True
        if name in seen:
            continue
        seen.add(name)
        for loop in loops:
            if name in loop.defs:
                todo.extend(names_in(loop.defs[name]))
    return False


def _range_of(iterator):
    """``(bounds, step, position, range call)`` of the range a loop's index runs over: ``range(...)`` itself
    (position None), the first sequence of ``zip`` (position 0) or of ``reversed``, or ``enumerate``'s
    count (position 0); ``bounds`` is ``[start, stop]``."""
    if not isinstance(iterator, cst.Call) or not isinstance(iterator.func, cst.Name):
        return None
    name = iterator.func.value
    if any(a.star or a.keyword is not None for a in iterator.args):
        return None
    args = [a.value for a in iterator.args]
    if name == "range":
        step = int_literal(args[2]) if len(args) == 3 else 1
        if not 1 <= len(args) <= 3 or not step:
            return None
        bounds = args[:2] if len(args) > 1 else [cst.Integer("0"), args[0]]
        return bounds, step, None, iterator
    if name in ("zip", "reversed") and args:
        inner = _range_of(args[0])
        if inner is None or inner[2] is not None:
            return None
        return inner[0], inner[1], 0 if name == "zip" else None, inner[3]
    if name == "enumerate" and len(args) == 1:
        count = cst.Call(cst.Name("len"), [cst.Arg(args[0])])
        return [cst.Integer("0"), count], 1, 0, iterator
    return None


def _index_name(target, position) -> str | None:
    if position is not None:
        if not isinstance(target, (cst.Tuple, cst.List)) or not target.elements:
            return None
        target = target.elements[position].value
    return target.value if isinstance(target, cst.Name) else None


def _values(bounds, step, loops):
    """``(smallest, largest)`` values of ``range(start, stop, step)`` over every value of the enclosing
    indices, as ``_Affine``s that read none, or None where the bounds are not monotone in them.
    """
    start, stop = bounds
    if step > 0:
        smallest, largest = _bound(start, -1, loops), _bound(stop, 1, loops)
        return (
            None
            if smallest is None or largest is None
            else (smallest, largest.plus(-1))
        )
    smallest, largest = _bound(stop, -1, loops), _bound(start, 1, loops)
    return None if smallest is None or largest is None else (smallest.plus(1), largest)


def _bound(expr, want: int, loops, depth: int = 0):
    """The smallest (``want`` -1) or largest (+1) value of ``expr`` over the enclosing indices, as an
    ``_Affine`` that reads none; None where it cannot tell."""
    if depth > 20:
        return None
    number = int_literal(expr)
    if number is not None:
        return _Affine({}, number)
    if isinstance(expr, cst.Name):
        for loop in reversed(loops):
            if expr.value in loop.indices:
                return loop.indices[expr.value][0 if want < 0 else 1]
            if expr.value in loop.defs:
                return _bound(loop.defs[expr.value], want, loops, depth + 1)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _bound(expr.expression, -want, loops, depth + 1)
        return None if inner is None else inner.scaled(-1)
    if isinstance(expr, cst.BinaryOperation):
        return _binary(expr, want, loops, depth)
    if names_in(expr) & {n for loop in loops for n in (*loop.varying, *loop.indices)}:
        return None  # reads what the loops change, not as a sum of them
    return _Affine.atom(expr)


def _binary(expr: cst.BinaryOperation, want: int, loops, depth: int):
    op, left, right = expr.operator, expr.left, expr.right
    if isinstance(op, (cst.Add, cst.Subtract)):
        sign = 1 if isinstance(op, cst.Add) else -1
        a = _bound(left, want, loops, depth + 1)
        b = _bound(right, sign * want, loops, depth + 1)
        return None if a is None or b is None else a.add(b.scaled(sign))
    if isinstance(op, cst.Multiply):
        factor, other = int_literal(left), right
        if factor is None:
            factor, other = int_literal(right), left
        if factor is None:
            return _constant(expr, loops)
        inner = _bound(other, want if factor >= 0 else -want, loops, depth + 1)
        return None if inner is None else inner.scaled(factor)
    if isinstance(op, cst.FloorDivide):
        divisor = int_literal(right)
        if divisor is None or divisor <= 0:
            return _constant(expr, loops)
        inner = _bound(left, want, loops, depth + 1)
        return None if inner is None else inner.floordiv(divisor)
    return _constant(expr, loops)


def _constant(expr, loops):
    """``expr`` as an atom where it reads nothing the enclosing loops change, else None."""
    if names_in(expr) & {n for loop in loops for n in (*loop.varying, *loop.indices)}:
        return None
    return _Affine.atom(expr)


class _Affine:
    """``sum(coefficient * atom) + constant``, atoms being expressions that read no loop index."""

    def __init__(self, terms: dict, constant: int):
        self.terms, self.constant = terms, constant  # code -> (coefficient, node)

    @classmethod
    def atom(cls, node):
        return cls({ir.code(node): (1, node)}, 0)

    def plus(self, k: int) -> _Affine:
        return _Affine(self.terms, self.constant + k)

    def scaled(self, k: int) -> _Affine:
        terms = {c: (k * a, n) for c, (a, n) in self.terms.items() if k * a}
        return _Affine(terms, k * self.constant)

    def add(self, other: _Affine) -> _Affine:
        terms = dict(self.terms)
        for c, (a, n) in other.terms.items():
            total = terms.get(c, (0, n))[0] + a
            terms[c] = (total, n)
            if not total:
                del terms[c]
        return _Affine(terms, self.constant + other.constant)

    def floordiv(self, k: int) -> _Affine:
        if not self.terms:
            return _Affine({}, self.constant // k)
        return _Affine.atom(cst.parse_expression(f"({self.code()}) // {k}"))

    def code(self) -> str:
        parts = []
        for a, node in self.terms.values():
            text = ir.code(node)
            if not isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                text = f"({text})"
            term = text if abs(a) == 1 else f"{abs(a)} * {text}"
            parts.append(("-" if a < 0 else "+", term))
        if self.constant or not parts:
            parts.append(("-" if self.constant < 0 else "+", str(abs(self.constant))))
        sign, first = parts[0]
        text = ("-" if sign == "-" else "") + first
        return text + "".join(f" {s} {t}" for s, t in parts[1:])

    def node(self) -> cst.BaseExpression:
        return cst.parse_expression(self.code())
