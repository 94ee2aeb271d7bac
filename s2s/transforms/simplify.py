"""Clean generated straight-line code: fold constants, drop copies and dead assignments.

``fold`` (applied to each generated expression) folds ``e * 1``, ``1 * e``,
``e ** 1``, ``e + 0``, ``e - 0``, ``--e``, ``e * (1 / d)``, arithmetic and comparisons on numeric literals
and ``xp.where`` of a constant condition (``xp.where(False, 0.0, e)`` is ``e``), and drops trailing
arguments of ``rt.``/``xp.`` calls that equal the callee's defaults; ``simplify`` leaves no
assignment whose value is never read and no ``a = b`` copies between names.
"""

from __future__ import annotations

import functools
import inspect

import libcst as cst
import numpy

from .. import ir, runtime
from ..cstutil import (
    Parenthesizer,
    _paren_binary,
    dotted,
    int_literal,
    iter_nodes,
    names_in,
    rewrite,
    substitute,
    tuple_of,
)
from ..passes.dataflow import reads, substitute_reads
from .same_shapes import without_same_shape_broadcasts

_FOLD = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b, cst.Power: lambda a, b: a**b,
}  # fmt: skip


_COMPARE = {
    cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b,
    cst.LessThan: lambda a, b: a < b, cst.GreaterThan: lambda a, b: a > b,
}  # fmt: skip


def _decided_where(node: cst.Call):
    """``xp.where(False, 0.0, e)`` -> ``e``: the branch a constant condition picks, when the other is a number
    (so the result's shape is the picked branch's)."""
    if (
        dotted(node.func) != "xp.where"
        or len(node.args) != 3
        or any(a.keyword for a in node.args)
    ):
        return None
    test, yes, no = (a.value for a in node.args)
    if not (isinstance(test, cst.Name) and test.value in ("True", "False")):
        return None
    picked, other = (yes, no) if test.value == "True" else (no, yes)
    return picked if number(other) is not None else None


def number(node) -> float | int | None:
    if isinstance(node, cst.Integer) and not node.lpar:
        return int(node.value)
    if isinstance(node, cst.Float) and not node.lpar:
        return float(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = number(node.expression)
        return None if inner is None else -inner
    return None


def _num(value) -> cst.BaseExpression:
    node = (
        cst.Integer(str(abs(value)))
        if isinstance(value, int)
        else cst.Float(repr(abs(value)))
    )
    return cst.UnaryOperation(cst.Minus(), node) if value < 0 else node


class _Fold(Parenthesizer):
    def leave_BinaryOperation(self, original, node):
        a, b = number(node.left), number(node.right)
        op = type(node.operator)
        if a is not None and b is not None and op in _FOLD:
            return _num(_FOLD[op](a, b))
        if op is cst.Multiply:
            right = node.right
            if (
                isinstance(right, cst.BinaryOperation)
                and isinstance(right.operator, cst.Divide)
                and number(right.left) == 1
            ):
                # g * (1 / x) -> g / x
                return _paren_binary(
                    cst.BinaryOperation(node.left, cst.Divide(), right.right)
                )
            if b == 1:
                return node.left
            if a == 1:
                return node.right
            if b == -1:
                return cst.UnaryOperation(cst.Minus(), node.left)
            if a == -1:
                return cst.UnaryOperation(cst.Minus(), node.right)
        if op in (cst.Add, cst.Subtract) and b == 0:
            return node.left
        if op is cst.Add and a == 0:
            return node.right
        if op is cst.Power and b == 1:
            return node.left
        if op is cst.Divide and b == 1:
            return node.left
        if op is cst.Divide and a is not None and b and len(repr(a / b)) <= 8:
            return _num(a / b)
        return _paren_binary(node)

    def leave_Comparison(self, original, node):
        """``2 == 0`` -> ``False``: a comparison of numeric literals (a rule's test of a constant exponent)."""
        if (
            len(node.comparisons) == 1
            and type(node.comparisons[0].operator) in _COMPARE
        ):
            a, b = number(node.left), number(node.comparisons[0].comparator)
            if a is not None and b is not None:
                return cst.Name(str(_COMPARE[type(node.comparisons[0].operator)](a, b)))
        return node

    def leave_Call(self, original, node):
        node = drop_default_arguments(node)
        picked = _decided_where(node)
        return picked if picked is not None else super().leave_Call(original, node)

    def leave_Tuple(self, original, node):
        """``(True, *(a, b))`` -> ``(True, a, b)``: a rule's flags spliced into a literal tuple."""
        if not any(_starred_tuple(el) for el in node.elements):
            return node
        spliced = [
            inner if _starred_tuple(el) else el
            for el in node.elements
            for inner in (el.value.elements if _starred_tuple(el) else (el,))
        ]
        return tuple_of(*(el.value for el in spliced))

    def leave_Subscript(self, original, node):
        """``(True, False)[0]`` -> ``True``: an entry of a literal tuple read by a constant index."""
        if isinstance(node.value, cst.Tuple) and len(node.slice) == 1:
            index = node.slice[0].slice
            key = int_literal(index.value) if isinstance(index, cst.Index) else None
            starred = any(
                isinstance(el, cst.StarredElement) for el in node.value.elements
            )
            if (
                key is not None
                and not starred
                and -len(node.value.elements) <= key < len(node.value.elements)
            ):
                return node.value.elements[key].value
        return node


def _starred_tuple(el) -> bool:
    return isinstance(el, cst.StarredElement) and isinstance(el.value, cst.Tuple)

    def leave_UnaryOperation(self, original, node):
        inner = node.expression
        if (
            isinstance(node.operator, cst.Minus)
            and isinstance(inner, cst.UnaryOperation)
            and isinstance(inner.operator, cst.Minus)
        ):
            return inner.expression
        return super().leave_UnaryOperation(original, node)


@functools.cache
def _defaults(callee: str) -> tuple[tuple[str, ...], dict]:
    """Parameter names and literal defaults of ``rt.<name>`` or ``xp.<name>`` (NumPy's), if inspectable."""
    module, _, name = callee.partition(".")
    obj = {"rt": runtime, "xp": numpy}.get(module)
    for part in name.split("."):
        obj = getattr(obj, part, None)
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return (), {}
    names = tuple(params)
    defaults = {
        n: p.default
        for n, p in params.items()
        if p.default is not inspect.Parameter.empty
    }
    return names, defaults


def _is_default(node, default) -> bool:
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return repr(default) == node.value
    value = number(node)
    if value is not None:
        return (
            type(default) in (int, float)
            and not isinstance(default, bool)
            and value == default
        )
    if isinstance(node, cst.SimpleString):
        return isinstance(default, str) and node.evaluated_value == default
    return False


def drop_default_arguments(node: cst.Call) -> cst.Call:
    """``rt.reduced_like(g, a, None, False)`` -> ``rt.reduced_like(g, a)``: arguments equal to the callee's defaults go."""
    callee = dotted(node.func)
    if not callee or not callee.startswith(("rt.", "xp.")):
        return node
    names, defaults = _defaults(callee)
    if not defaults:
        return node
    args = list(node.args)
    args = [
        a
        for a in args
        if not (
            a.keyword
            and a.keyword.value in defaults
            and _is_default(a.value, defaults[a.keyword.value])
        )
    ]
    while args and args[-1].keyword is None and not args[-1].star:
        i = len(args) - 1
        if (
            i < len(names)
            and names[i] in defaults
            and _is_default(args[i].value, defaults[names[i]])
        ):
            args.pop()
        else:
            break
    if len(args) == len(node.args):
        return node
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(args=args)


class _NoneTests(cst.CSTTransformer):
    """``0.1 is None`` -> ``False``: an argument substituted into a test of its default (a number or a
    string is never None; Python warns at such a comparison when it compiles the module).
    """

    def leave_Comparison(self, original, node):
        target, *rest = node.comparisons
        if (
            not rest
            and isinstance(target.operator, (cst.Is, cst.IsNot))
            and isinstance(target.comparator, cst.Name)
            and target.comparator.value == "None"
            and (
                number(node.left) is not None or isinstance(node.left, cst.SimpleString)
            )
        ):
            return cst.Name(str(isinstance(target.operator, cst.IsNot)))
        return node


def _literal_none_tests(expr):
    if not any(isinstance(n, cst.Comparison) for n in iter_nodes(expr)):
        return expr
    return rewrite(expr, _NoneTests())


def fold(expr: cst.BaseExpression) -> cst.BaseExpression:
    """Constant-fold and drop multiplications by one, parenthesizing as precedence needs."""
    return rewrite(expr, _Fold())


def propagate_copies(body, keep=frozenset()):
    """Replace names bound by ``a = b`` with ``b`` downstream (unless ``a`` is in ``keep``).

    A copy is propagated when ``a`` is assigned once and ``b`` is not assigned
    again after the copy: accumulators such as ``x_bar = x_bar + ...`` change
    value, so a copy taken before they do is kept.
    """
    counts: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, stmt in enumerate(body):
        if isinstance(stmt, ir.Assign):
            for name in ir.target_names(stmt.target):
                counts[name] = counts.get(name, 0) + 1
                last[name] = i
    mapping, out = {}, []
    for i, stmt in enumerate(body):
        # a branch or loop body: its free names follow, its own copies go too (capture-avoiding: a loop's
        # carry named like the copied name, ``y_prev = y`` then ``def for_body(y, k)``, is renamed first)
        if isinstance(stmt, ir.Def):
            inner = substitute_reads(stmt, mapping, apart=True).function
            body_ = propagate_copies(inner.body, keep=frozenset(inner.param_names))
            out.append(ir.Def(inner.with_body(body_), stmt.origin))
            continue
        value = substitute(stmt.value, mapping) if mapping else stmt.value
        value = _literal_none_tests(value)
        if (
            isinstance(stmt, ir.Assign)
            and isinstance(stmt.target, cst.Name)
            and isinstance(value, cst.Name)
            and stmt.target.value not in keep
            and value.value not in ("True", "False", "None")
            and counts.get(stmt.target.value) == 1
            and last.get(value.value, -1) < i
        ):
            mapping[stmt.target.value] = value
            continue
        out.append(
            ir.Assign(stmt.target, value, stmt.origin)
            if isinstance(stmt, ir.Assign)
            else ir.Return(value, stmt.origin)
        )
    return out


# calls kept for the errors they raise or what they print, even when their value is unused
CHECKS = frozenset(
    {"rt.grad_seed", "rt.batch_size", "rt.debug_print", "rt.log", "rt.warn", "rt.check"}
)


def _is_check(value) -> bool:
    return isinstance(value, cst.Call) and dotted(value.func) in CHECKS


def eliminate_dead(body):
    """Drop assignments none of whose names are read later (values are pure, but for ``CHECKS``)."""
    live, out = set(), []
    for stmt in reversed(body):
        if isinstance(stmt, ir.Def):
            if stmt.function.name not in live:
                continue
            inner = stmt.function.with_body(eliminate_dead(stmt.function.body))
            stmt = ir.Def(inner, stmt.origin)
            live |= reads(stmt)
            out.append(stmt)
            continue
        if isinstance(stmt, ir.Assign):
            names = ir.target_names(stmt.target)
            kept = _is_check(stmt.value) or any(map(ir.is_output_token, names))
            if not kept and not any(n in live for n in names):
                continue
        live |= names_in(stmt.value)
        out.append(stmt)
    return out[::-1]


def simplify(fn: ir.Function) -> ir.Function:
    """Generated code cleaned: broadcasts between values of one shape dropped (``same_shapes``), copies
    propagated, dead assignments dropped (values were folded when emitted)."""
    fn = without_same_shape_broadcasts(fn)
    body = propagate_copies(fn.body, keep=frozenset(fn.param_names))
    return fn.with_body(eliminate_dead(body))
