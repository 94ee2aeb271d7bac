"""Desugar: sugar becomes plain assignments, ops and ``if`` statements.

Output guarantees (in every block, local functions included):
- no ``AugAssign``: ``h += v`` is ``h = h + v``;
- no element writes: ``x[i] = v`` is ``x = rt.index_set(x, i, v)`` (a new
  array; ``passes/aliasing`` has rejected writes NumPy would make visible
  through another name), ``x[i] += v`` is
  ``x = rt.index_set(x, i, rt.index_get(x, i) + v)`` (``index_get`` reads the
  whole array where ``i`` is a traced mask, which ``x[i]`` cannot),
  ``x[i][j] = v`` writes ``v`` into a copy of ``x[i]`` and that into ``x``;
- every comparison has one operator (``a < b < c`` is ``xp.logical_and(a < b, b < c)``);
- ``and``/``or`` of truth values in a value (``done = x < a or x > b``; comparisons, ``bool(...)``, not
  guarded by ``is``/``in``/``len``) are ``rt.logical_or(rt.as_bool(a), rt.as_bool(b))``;
- the tests of ``if`` and ``while`` hold no ``and``/``or``/``not``: they are
  ``rt.logical_and``/``logical_or``/``logical_not``, so array predicates work
  and Python values (a static flag, an empty tuple) keep Python's truth; an ``if``'s ``and``/``or``
  with a guard (``best is None or v > best``) evaluates its second operand only where Python does
  (an ``if`` on the first, as for ``a or b`` in a value);
- no conditional expressions: ``y = a if c else b`` is an ``if`` statement
  assigning a temporary ``_ifexp``.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import call, dotted, iter_nodes, rewrite
from ..errors import UnsupportedSyntax
from ..naming import Namer
from .dataflow import used_names

_AUG_TO_BINARY = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.PowerAssign: cst.Power, cst.MatrixMultiplyAssign: cst.MatrixMultiply,
    cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo, cst.BitAndAssign: cst.BitAnd,
    cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
}  # fmt: skip


class _SplitComparisons(cst.CSTTransformer):
    def leave_Comparison(self, original, node):
        if len(node.comparisons) == 1:
            return node
        parts, left = [], node.left
        for c in node.comparisons:
            parts.append(cst.Comparison(left, [c]))
            left = c.comparator
        out = parts[0]
        for part in parts[1:]:
            out = call("xp.logical_and", out, part)
        return out


def _keep_origin(fn, old, new):
    if new is not old and old in fn.origins:
        fn.origins[new] = fn.origins[old]
    return new


def _expr(node, fn):
    if any(type(n) is cst.BooleanOperation for n in iter_nodes(node)):
        node = _keep_origin(fn, node, rewrite(node, _TruthValues(fn)))
    if not any(
        type(n) is cst.Comparison and len(n.comparisons) > 1 for n in iter_nodes(node)
    ):
        return node  # untouched: keeps node identities, and with them the origins of sub-expressions
    return _keep_origin(fn, node, rewrite(node, _SplitComparisons()))


# tests whose other operand may be meaningful only where they hold (``x is None or x.shape[0] > 2``,
# ``k in d and d[k] > 0``): Python's short-circuit stays
_GUARDS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)
_GUARD_CALLS = frozenset({"len", "hasattr", "isinstance", "callable"})


class _TruthValues(cst.CSTTransformer):
    """``terminated = x < -a or x > a``: ``and``/``or``/``not`` of truth values (comparisons, ``bool(...)``)
    in a value are ``rt.logical_or(rt.as_bool(a), rt.as_bool(b))``, so a truth value computed from data
    compiles (Python's result for Python values; an array of more than one element is NumPy's error).
    """

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def leave_BooleanOperation(self, original, updated):
        if not (_truth(updated.left) and _truth(updated.right)):
            return updated
        func = (
            "rt.logical_and"
            if isinstance(updated.operator, cst.And)
            else "rt.logical_or"
        )
        new = call(func, _as_bool(updated.left), _as_bool(updated.right))
        return _keep_origin(self.fn, original, new)


class _ChosenOperands(cst.CSTTransformer):
    """``scale or 2.0``, ``mask and x`` in a value: Python returns one operand, ``a if a else b`` (``b if a
    else a``), a conditional value that carries its derivative (and compiles) as any other. ``and``/``or``
    of truth values stay (``_TruthValues``)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def leave_BooleanOperation(self, original, updated):
        left, right = updated.left, updated.right
        if _truth(left) and _truth(right):
            return updated
        if isinstance(updated.operator, cst.Or):
            new = cst.IfExp(test=left, body=left, orelse=right)
        else:
            new = cst.IfExp(test=left, body=right, orelse=left)
        return _keep_origin(self.fn, original, new)


class _GuardedOperands(cst.CSTTransformer):
    """``x is None or x > 0`` (an ``is``/``in`` test first): ``a if a else b`` (``b if a else a`` for
    ``and``), so the second operand runs only where Python reaches it; other ``and``/``or`` stay.
    """

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def leave_BooleanOperation(self, original, updated):
        if not _is_guard(updated.left):
            return updated
        left, right = updated.left, updated.right
        if isinstance(updated.operator, cst.Or):
            new = cst.IfExp(test=left, body=left, orelse=right)
        else:
            new = cst.IfExp(test=left, body=right, orelse=left)
        return _keep_origin(self.fn, original, new)


def _is_guard(node) -> bool:
    """``x is None``, ``k in d`` (and their negations): a test after which the other operand may read
    what exists only where it holds."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _is_guard(node.expression)
    return isinstance(node, cst.Comparison) and any(
        isinstance(c.operator, _GUARDS) for c in node.comparisons
    )


def _guards_first(node, fn):
    if any(type(n) is cst.BooleanOperation for n in iter_nodes(node)):
        return _keep_origin(fn, node, rewrite(node, _GuardedOperands(fn)))
    return node


def _chosen(node, fn):
    if any(type(n) is cst.BooleanOperation for n in iter_nodes(node)):
        return _keep_origin(fn, node, rewrite(node, _ChosenOperands(fn)))
    return node


def _truth(node) -> bool:
    """A truth value whose evaluation needs no guard: a comparison (not ``is``/``in``), ``bool(...)``,
    ``not`` of one, or ``and``/``or`` of them (rewritten already: ``rt.logical_*``)."""
    if isinstance(node, cst.Comparison):
        return not any(
            isinstance(c.operator, _GUARDS) for c in node.comparisons
        ) and not any(
            isinstance(n, cst.Call)
            and isinstance(n.func, cst.Name)
            and n.func.value in _GUARD_CALLS
            for n in iter_nodes(node)
        )
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _truth(node.expression)
    if isinstance(node, cst.BooleanOperation):
        return _truth(node.left) and _truth(node.right)
    if isinstance(node, cst.Call):
        return dotted(node.func) in ("rt.as_bool", "rt.logical_and", "rt.logical_or")
    return False


def _as_bool(node):
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return call("rt.logical_not", _as_bool(node.expression))
    if isinstance(node, cst.Call):
        return node
    return call("rt.as_bool", node)


def _predicate(node, fn):
    """A test with ``and``/``or``/``not`` spelled as array ops (which work on array predicates)."""
    if isinstance(node, cst.BooleanOperation):
        func = (
            "rt.logical_and" if isinstance(node.operator, cst.And) else "rt.logical_or"
        )
        return _keep_origin(
            fn, node, call(func, _predicate(node.left, fn), _predicate(node.right, fn))
        )
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _keep_origin(
            fn, node, call("rt.logical_not", _predicate(node.expression, fn))
        )
    return _expr(node, fn)


def index_value(subscript: cst.Subscript) -> cst.BaseExpression:
    """The index of ``a[...]`` as a value: the index itself (``i``, a mask), or ``xp.s_[...]``."""
    elements = subscript.slice
    if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
        return elements[0].slice.value
    return cst.Subscript(
        cst.parse_expression("xp.s_"),
        [e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in elements],
    )


def _computed_index(subscript: cst.Subscript) -> bool:
    """Whether the index of ``a[...]`` calls or compares (``a[a > 0]``, ``a[rng.integers(3)]``)."""
    return any(
        isinstance(n, (cst.Call, cst.Comparison))
        for e in subscript.slice
        for n in iter_nodes(e.slice)
    )


def _written(target: cst.Subscript, value, fn):
    """``(x, new value of x)`` for the element write ``target = value`` (nested subscripts write through)."""
    base = target.value
    new = _keep_origin(
        fn, target, call("rt.index_set", base, index_value(target), value)
    )
    if isinstance(base, cst.Subscript):
        return _written(base, new, fn)
    return base, new


class _Desugar:
    def __init__(self, fn: ir.Function, namer: Namer):
        self.fn = fn
        self.namer = namer

    def block(self, body) -> tuple:
        out = []
        for stmt in body:
            out.extend(self.statement(stmt))
        return tuple(out)

    def statement(self, stmt) -> list:
        fn = self.fn
        if isinstance(stmt, ir.AugAssign):
            binary = _AUG_TO_BINARY[type(stmt.operator)]()
            target = stmt.target
            hoisted = []
            # rt.index_get: reads the whole array under a traced mask
            if isinstance(target, cst.Subscript):
                if _computed_index(target):
                    # ``a[a > 0] += v``: the index computed once, as Python does, so the read and the
                    # write select by one mask
                    held = cst.Name(self.namer.fresh("_index"))
                    hoisted.append(ir.Assign(held, index_value(target), stmt.origin))
                    target = target.with_changes(
                        slice=[cst.SubscriptElement(cst.Index(held))]
                    )
                current = call(
                    "rt.index_get", target.value.deep_clone(), index_value(target)
                )
            else:
                current = cst.Name(target.value)
            value = cst.BinaryOperation(current, binary, stmt.value)
            if stmt.origin is not None:
                fn.origins[value] = stmt.origin
            return [
                *(s for h in hoisted for s in self.statement(h)),
                *self.statement(ir.Assign(target, value, stmt.origin)),
            ]
        if isinstance(stmt, ir.Assign):
            hoisted, value = self.hoist(_chosen(stmt.value, fn), stmt.origin)
            target = stmt.target
            if isinstance(target, cst.Subscript):
                target, value = _written(target, value, fn)
            return hoisted + [ir.Assign(target, _expr(value, fn), stmt.origin)]
        if isinstance(stmt, ir.Return):
            hoisted, value = self.hoist(_chosen(stmt.value, fn), stmt.origin)
            return hoisted + [ir.Return(_expr(value, fn), stmt.origin)]
        if isinstance(stmt, ir.If):
            # ``best is None or v > best``: the guarded operand only where the guard lets Python reach it
            hoisted, test = self.hoist(_guards_first(stmt.test, fn), stmt.origin)
            return hoisted + [
                ir.If(
                    _predicate(test, fn),
                    self.block(stmt.body),
                    self.block(stmt.orelse),
                    stmt.origin,
                )
            ]
        if isinstance(stmt, ir.While):
            if any(isinstance(n, cst.IfExp) for n in iter_nodes(stmt.test)):
                raise UnsupportedSyntax(
                    "a conditional expression in a `while` test",
                    stmt.origin,
                    "compute the test in a variable",
                )
            return [
                ir.While(_predicate(stmt.test, fn), self.block(stmt.body), stmt.origin)
            ]
        if isinstance(stmt, ir.For):
            hoisted, iterable = self.hoist(stmt.iter, stmt.origin)
            return hoisted + [
                ir.For(
                    stmt.target, _expr(iterable, fn), self.block(stmt.body), stmt.origin
                )
            ]
        return [stmt]

    def hoist(self, node, origin):
        """Statements computing the conditional expressions in ``node``, and ``node`` reading their results."""
        found = [n for n in iter_nodes(node) if isinstance(n, cst.IfExp)]
        if not found:
            return [], node
        outer = found[0]  # pre-order: the first one found contains any others inside it
        name = cst.Name(self.namer.fresh("_ifexp"))
        here = self.fn.origins.get(outer, origin)
        branch = ir.If(
            outer.test,
            (ir.Assign(name, outer.body, here),),
            (ir.Assign(name, outer.orelse, here),),
            here,
        )
        rest = node.deep_replace(outer, name) if node is not outer else name
        more, rest = self.hoist(rest, origin)
        return self.statement(branch) + more, rest


def desugar(fn: ir.Function, namer: Namer | None = None) -> ir.Function:
    namer = namer or Namer(used_names(fn))
    body = _Desugar(fn, namer).block(fn.body)
    locals_ = {name: desugar(local, namer) for name, local in fn.locals.items()}
    return fn.with_body(body, locals=locals_)
