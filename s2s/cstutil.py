"""Small libcst helpers shared by passes and transforms: substitution, parentheses, literals."""

from __future__ import annotations

import dataclasses
import functools
import math

import libcst as cst
import numpy

# Binding strength of expression kinds, loosest first (Python's precedence table).
_PRECEDENCE = {
    cst.Or: 1, cst.And: 2, cst.Not: 3,
    cst.BitOr: 5, cst.BitXor: 6, cst.BitAnd: 7, cst.LeftShift: 8, cst.RightShift: 8,
    cst.Add: 9, cst.Subtract: 9,
    cst.Multiply: 10, cst.Divide: 10, cst.FloorDivide: 10, cst.Modulo: 10, cst.MatrixMultiply: 10,
    cst.Minus: 11, cst.Plus: 11, cst.BitInvert: 11, cst.Power: 12,
}  # fmt: skip
_ATOM = 20


def precedence(node: cst.BaseExpression) -> int:
    if node.lpar:
        return _ATOM
    if isinstance(node, cst.BinaryOperation):
        return _PRECEDENCE[type(node.operator)]
    if isinstance(node, cst.UnaryOperation):
        return _PRECEDENCE[type(node.operator)]
    if isinstance(node, cst.BooleanOperation):
        return _PRECEDENCE[type(node.operator)]
    if isinstance(node, cst.Comparison):
        return 4
    if isinstance(node, (cst.Lambda,)):
        return 0
    if isinstance(node, cst.IfExp):
        return 0
    if isinstance(node, (cst.Integer, cst.Float)) and node.value.startswith("-"):
        return 11
    return _ATOM


def paren(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _needs(child, parent_prec, right=False, power_base=False):
    p = precedence(child)
    if power_base:
        return p <= 12
    return p < parent_prec or (right and p == parent_prec)


class Parenthesizer(cst.CSTTransformer):
    """Adds the parentheses operator precedence needs; subclasses rewrite nodes in the same traversal."""

    def leave_BinaryOperation(self, original, node):
        return _paren_binary(node)

    def leave_UnaryOperation(self, original, node):
        if precedence(node.expression) < _PRECEDENCE[type(node.operator)]:
            return node.with_changes(expression=paren(node.expression))
        return node

    def leave_Attribute(self, original, node):
        if precedence(node.value) < _ATOM or isinstance(
            node.value, (cst.Integer, cst.Float)
        ):
            return node.with_changes(value=paren(node.value))
        return node

    def leave_Comparison(self, original, node):
        # ``(k or "id") == "tanh"``; a comparison's operand that is one is parenthesized too (not chained)
        left = paren(node.left) if precedence(node.left) <= 4 else node.left
        targets = [
            (
                t.with_changes(comparator=paren(t.comparator))
                if precedence(t.comparator) <= 4
                else t
            )
            for t in node.comparisons
        ]
        return node.with_changes(left=left, comparisons=targets)

    def leave_BooleanOperation(self, original, node):
        prec = _PRECEDENCE[type(node.operator)]
        left = paren(node.left) if _needs(node.left, prec) else node.left
        right = (
            paren(node.right) if _needs(node.right, prec, right=True) else node.right
        )
        return node.with_changes(left=left, right=right)

    def leave_IfExp(self, original, node):
        # ``(a if b else c) if d else e``: an ``if``-``else`` or lambda before ``else`` is parenthesized
        test = paren(node.test) if precedence(node.test) <= 0 else node.test
        body = paren(node.body) if precedence(node.body) <= 0 else node.body
        return node.with_changes(test=test, body=body)

    def leave_Subscript(self, original, node):
        if precedence(node.value) < _ATOM:
            return node.with_changes(value=paren(node.value))
        return node

    def leave_Call(self, original, node):
        if precedence(node.func) < _ATOM:
            return node.with_changes(func=paren(node.func))
        return node


def _paren_binary(node: cst.BinaryOperation) -> cst.BinaryOperation:
    prec = _PRECEDENCE[type(node.operator)]
    is_pow = isinstance(node.operator, cst.Power)
    left, right = node.left, node.right
    if _needs(left, prec, power_base=is_pow):
        left = paren(left)
    if (is_pow and precedence(right) < 11) or (
        not is_pow and _needs(right, prec, right=True)
    ):
        right = paren(right)
    if left is node.left and right is node.right:
        return node
    return node.with_changes(left=left, right=right)


def parenthesize(node: cst.BaseExpression) -> cst.BaseExpression:
    """Add the parentheses that operator precedence needs (trees built by hand have none)."""
    return rewrite(node, Parenthesizer())


def rewrite(
    node: cst.CSTNode, visitor: cst.CSTTransformer | cst.CSTVisitor
) -> cst.CSTNode:
    """``node.visit(visitor)``, without libcst's visitor machinery, which visits whitespace and punctuation
    and rebuilds every node: the same ``visit_``/``leave_`` calls (and ``on_visit``/``on_leave``) on the
    nodes code is made of, in libcst's order, each node rebuilt only where a child came back another (so
    a node no method changed is the node it was). Visitors with methods for punctuation or whitespace, for
    attributes (``leave_Call_args``), or reading metadata go through libcst.
    """
    plan = _plan(type(visitor))
    if plan is None:
        return node.visit(visitor)
    return _walked(node, visitor, plan)


class _Plan:
    """How ``rewrite`` calls a visitor class: its ``visit_``/``leave_`` methods by node type, or its own
    ``on_visit``/``on_leave``; ``keeps``: a ``CSTVisitor`` (its ``leave_`` methods return nothing).
    """

    def __init__(self, kind: type, visits: dict, leaves: dict):
        base = (
            cst.CSTVisitor if issubclass(kind, cst.CSTVisitor) else cst.CSTTransformer
        )
        self.keeps = base is cst.CSTVisitor
        self.on_visit = kind.on_visit if kind.on_visit is not base.on_visit else None
        self.on_leave = kind.on_leave if kind.on_leave is not base.on_leave else None
        self.visits, self.leaves = visits, leaves


# node types ``rewrite`` never hands to a visitor (libcst does): punctuation, whitespace, comments
_PUNCTUATION = (
    cst.BaseParenthesizableWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Newline,
    cst.Comment,
    cst.Comma,
    cst.Colon,
    cst.Semicolon,
    cst.Dot,
    cst.AssignEqual,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
)


def _plan(kind: type) -> _Plan | None:
    """The class's plan, made once and kept on the class itself: a class made by each call of a function
    (a transformer closing over the call's values) goes with its plan, which a cache would keep alive.
    """
    if "_rewrite_plan" not in kind.__dict__:
        kind._rewrite_plan = _made_plan(kind)
    return kind.__dict__["_rewrite_plan"]


def _made_plan(kind: type) -> _Plan | None:
    if not issubclass(kind, (cst.CSTTransformer, cst.CSTVisitor)) or getattr(
        kind, "METADATA_DEPENDENCIES", ()
    ):
        return None
    base = cst.CSTVisitor if issubclass(kind, cst.CSTVisitor) else cst.CSTTransformer
    generic = ("on_visit_attribute", "on_leave_attribute")
    if any(getattr(kind, m) is not getattr(base, m) for m in generic):
        return None
    methods = {"visit_": {}, "leave_": {}}
    for name in dir(kind):
        prefix = name[: name.find("_") + 1]
        if prefix not in methods or getattr(kind, name) is getattr(base, name, None):
            continue
        node_type = getattr(cst, name[len(prefix) :], None)
        if not isinstance(node_type, type) or issubclass(node_type, _PUNCTUATION):
            return None  # (``leave_Call_args``, ``visit_Comma``)
        methods[prefix][node_type] = getattr(kind, name)
    return _Plan(kind, methods["visit_"], methods["leave_"])


def _walked(node, visitor, plan: _Plan):
    if plan.on_visit is not None:
        descend = plan.on_visit(visitor, node)
    else:
        visit = plan.visits.get(type(node))
        descend = visit is None or visit(visitor, node) is not False
    updated = (
        _with_children(
            node, lambda child: _walked(child, visitor, plan), _visit_fields(type(node))
        )
        if descend
        else node
    )
    if plan.on_leave is not None:
        left = (
            plan.on_leave(visitor, node)
            if plan.keeps
            else plan.on_leave(visitor, node, updated)
        )
    else:
        leave = plan.leaves.get(type(node))
        if leave is None:
            return updated
        left = leave(visitor, node) if plan.keeps else leave(visitor, node, updated)
    return updated if plan.keeps else left


def _with_children(node, visit, fields=None):
    """``node`` with ``visit`` applied to each of its child nodes (``_child_fields``), rebuilt only where
    one came back another; in a sequence, ``RemovalSentinel.REMOVE`` drops a child and a
    ``FlattenSentinel`` stands for its nodes (libcst's conventions)."""
    changes = {}
    for name in fields or _child_fields(type(node)):
        value = getattr(node, name)
        kind = _KIND.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind == _NODE:
            new = visit(value)
            if new is not value:
                changes[name] = _in_field(type(node), name, new)
        elif kind == _SEQUENCE and value:
            items = [visit(v) if _kind(type(v)) == _NODE else v for v in value]
            if any(a is not b for a, b in zip(items, value)):
                changes[name] = tuple(_flattened(items))
    return node.with_changes(**changes) if changes else node


def _flattened(items):
    for item in items:
        if isinstance(item, cst.FlattenSentinel):
            yield from item.nodes
        elif item is not cst.RemovalSentinel.REMOVE:
            yield item


def _in_field(kind: type, name: str, new):
    """What a node removed from a field of its own leaves there: None, or libcst's default sentinel."""
    if new is not cst.RemovalSentinel.REMOVE:
        return new
    default = {f.name: f.default for f in dataclasses.fields(kind)}.get(name)
    if default is None or default is cst.MaybeSentinel.DEFAULT:
        return default
    raise TypeError(f"a {kind.__name__}'s `{name}` cannot be removed")


# the fields whose nodes libcst visits in another order than ``_child_fields`` lists them (source order)
_SOURCE_ORDER = {
    cst.Arg: ("keyword", "value"),
    cst.FunctionDef: ("decorators", "name", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.ImportFrom: ("relative", "module", "names"),
    cst.Parameters: (
        "posonly_params",
        "posonly_ind",
        "params",
        "star_arg",
        "kwonly_params",
        "star_kwarg",
    ),
}


@functools.cache
def _visit_fields(kind: type) -> tuple[str, ...]:
    """``_child_fields`` in the order libcst visits them (``_SOURCE_ORDER``)."""
    fields = _child_fields(kind)
    first = _SOURCE_ORDER.get(kind, ())
    return (*(f for f in first if f in fields), *(f for f in fields if f not in first))


class _Substitute(Parenthesizer):
    def __init__(self, mapping):
        self.mapping = mapping

    def leave_Name(self, original, node):
        replacement = self.mapping.get(node.value)
        return replacement if replacement is not None else node

    def leave_Attribute(self, original, node):
        return super().leave_Attribute(original, node.with_changes(attr=original.attr))

    def leave_Arg(self, original, node):
        return node.with_changes(keyword=original.keyword)

    def leave_Call(self, original, node):
        """``f(a, *(b, c))``, a tuple display spread (a rule's ``*args`` bound), as ``f(a, b, c)``."""
        node = (
            super().leave_Call(original, node)
            if hasattr(super(), "leave_Call")
            else node
        )
        if not any(_spread_display(a) for a in node.args):
            return node
        args = []
        for a in node.args:
            if _spread_display(a):
                args += [cst.Arg(e.value) for e in a.value.elements]
            else:
                args.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        return node.with_changes(args=args)


def _spread_display(arg: cst.Arg) -> bool:
    return (
        arg.star == "*"
        and isinstance(arg.value, (cst.Tuple, cst.List))
        and not any(isinstance(e, cst.StarredElement) for e in arg.value.elements)
    )


def replace_nodes(node: cst.CSTNode, mapping: dict) -> cst.CSTNode:
    """``node`` with the nodes ``mapping`` names (by identity: libcst nodes compare so) replaced; a node is
    rebuilt only where one under it was (without libcst's visitor machinery, as ``rewrite``).
    """
    return _swapped(node, mapping) if mapping else node


def _swapped(node, mapping):
    found = mapping.get(node)
    if found is not None:
        return found
    return _with_children(node, lambda child: _swapped(child, mapping))


def substitute(node: cst.CSTNode, mapping: dict) -> cst.CSTNode:
    """Replace free names (not attribute names, not keywords) by expressions; add needed parentheses.
    (Half the calls find none of the names: those return ``node`` after a walk, not a rewrite.)
    """
    if not mapping or not any(
        type(n) is cst.Name and n.value in mapping for n in iter_nodes(node)
    ):
        return node
    return rewrite(node, _Substitute(mapping))


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        skip = {
            "lpar",
            "rpar",
            "whitespace_before",
            "whitespace_after",
            "comma",
            "equal",
        }
        fields = _CHILD_FIELDS[kind] = tuple(
            f.name
            for f in dataclasses.fields(kind)
            if f.name not in skip and not f.name.startswith("whitespace")
        )
    return fields


def one_line(operator):
    """An operator with single spaces around it: an expression split over lines inside parentheses
    (black's wrapping) may be emitted later where no parentheses hold it."""
    changes = {
        field: cst.SimpleWhitespace(" ")
        for field in ("whitespace_before", "whitespace_after", "whitespace_between")
        if isinstance(getattr(operator, field, None), cst.ParenthesizedWhitespace)
    }
    return operator.with_changes(**changes) if changes else operator


class _OneLine(cst.CSTTransformer):
    def leave_BinaryOperation(self, original, updated):
        return updated.with_changes(operator=one_line(updated.operator))

    def leave_BooleanOperation(self, original, updated):
        return updated.with_changes(operator=one_line(updated.operator))

    def leave_ComparisonTarget(self, original, updated):
        return updated.with_changes(operator=one_line(updated.operator))


def operators_on_one_line(node: cst.CSTNode) -> cst.CSTNode:
    """``node`` with every operator's whitespace on one line (``one_line``)."""
    return node.visit(_OneLine())


def child_nodes(node: cst.CSTNode) -> list:
    """``node.children`` without whitespace, commas and parentheses, and without libcst's visitor machinery
    (which makes ``children`` a walk of its own): the nodes code is made of, in field order.
    """
    return _children(node, _child_fields(type(node)))


def _children(node: cst.CSTNode, names) -> list:
    """The nodes in the fields ``names`` of ``node``, in order (node types told apart by a table: ``isinstance``
    of libcst's abstract classes is slow, and the front end asks it millions of times).
    """
    children = []
    for name in names:
        value = getattr(node, name)
        kind = _KIND.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind == _NODE:
            children.append(value)
        elif kind == _SEQUENCE:
            children.extend(v for v in value if _kind(type(v)) == _NODE)
    return children


_NODE, _SEQUENCE, _OTHER = 1, 2, 0
# a type -> whether its values are nodes, sequences or neither
_KIND: dict[type, int] = {}


def _kind(kind: type) -> int:
    found = _KIND.get(kind)
    if found is None:
        found = _KIND[kind] = (
            _NODE
            if issubclass(kind, cst.CSTNode)
            else _SEQUENCE if issubclass(kind, (tuple, list)) else _OTHER
        )
    return found


def iter_nodes(node: cst.CSTNode, skip=()):
    """Every node under ``node`` (itself included), without libcst's visitor machinery.

    ``skip`` maps node types to the one field to descend into instead of all
    (``{cst.Attribute: "value"}`` does not enter attribute names). A function's
    or block's nodes are kept once walked to the end (``_WALKED``): the front
    end's rewrites each look through the function for what they rewrite, and
    most find nothing and leave it as it is.
    """
    kept = not skip and type(node) in _KEPT
    if kept:
        held = _WALKED.get(id(node))
        if held is not None and held[0] is node:
            yield from held[1]
            return
    walked = [] if kept else None
    stack = [node]
    while stack:
        n = stack.pop()
        if walked is not None:
            walked.append(n)
        yield n
        only = skip.get(type(n)) if skip else None
        children = _children(n, (only,) if only else _child_fields(type(n)))
        stack.extend(reversed(children))  # pre-order: source order
    if walked is not None:
        if len(_WALKED) > 64:
            _WALKED.clear()
        _WALKED[id(node)] = (node, tuple(walked))


# the nodes whose walks ``iter_nodes`` keeps (node id -> (node, its nodes)): the node is held, so its id is
# not another's while it is kept
_KEPT = (cst.FunctionDef, cst.Lambda, cst.IndentedBlock)
_WALKED: dict = {}


def own_nodes(statements):
    """The nodes of ``statements`` (a list), not those inside the functions, lambdas and classes they
    define (the defining nodes themselves are)."""
    stack = list(reversed(statements))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            stack.extend(reversed(child_nodes(node)))


_FREE = {cst.Attribute: "value", cst.Arg: "value"}


def names_in(node: cst.CSTNode) -> set[str]:
    """Free names read by an expression (attribute names and keywords excluded)."""
    return set(_names_in(node))


@functools.lru_cache(maxsize=1 << 16)
def _names_in(node: cst.CSTNode) -> frozenset[str]:
    # nodes are immutable and hash by identity: the passes ask about the same expressions many times
    return frozenset(n.value for n in iter_nodes(node, _FREE) if type(n) is cst.Name)


def call(func: str, *args, **kwargs) -> cst.Call:
    """``func(*args, **kwargs)`` for a dotted ``func`` (``"rt.scan"``) and argument expressions."""
    arguments = [cst.Arg(a) for a in args] + [
        cst.Arg(v, keyword=cst.Name(k)) for k, v in kwargs.items()
    ]
    return cst.Call(dotted_expression(func), arguments)


def dotted_expression(func: str) -> cst.BaseExpression:
    """``rt.scan`` as an attribute chain, built directly (parsing it costs a millisecond per call)."""
    parts = func.split(".")
    if not all(p.isidentifier() for p in parts):
        return cst.parse_expression(func)
    node = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(node, cst.Name(part))
    return node


def tuple_of(*items) -> cst.Tuple:
    """A tuple of expressions; items that are tuples themselves keep their own parentheses."""
    return cst.Tuple(
        [
            cst.Element(paren(i) if isinstance(i, cst.Tuple) and not i.lpar else i)
            for i in items
        ]
    )


def plus_int(node: cst.BaseExpression, offset: int) -> cst.BaseExpression:
    """``node + offset``, folded where ``node`` is an int literal or adds or subtracts one (``len(xs) - 1``
    plus 1 is ``len(xs)``), parenthesized as precedence needs."""
    if offset == 0:
        return node
    number = int_literal(node)
    if number is not None:
        total = number + offset
        folded = cst.Integer(str(abs(total)))
        return folded if total >= 0 else cst.UnaryOperation(cst.Minus(), folded)
    if (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, (cst.Add, cst.Subtract))
        and isinstance(node.right, cst.Integer)
    ):
        sign = 1 if isinstance(node.operator, cst.Add) else -1
        return plus_int(node.left, sign * int(node.right.value) + offset)
    op = cst.Add() if offset > 0 else cst.Subtract()
    return parenthesize(cst.BinaryOperation(node, op, cst.Integer(str(abs(offset)))))


def int_literal(node) -> int | None:
    """The value of an int literal (``3``, ``-1``), else None."""
    if isinstance(node, cst.Integer):
        return int(node.value)
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return -int(node.expression.value)
    return None


def literal_key(node):
    """A dict key or index written out: a string or an int literal (``"W"``, ``3``, ``-1``), else None."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    return int_literal(node)


def literal(value) -> cst.BaseExpression:
    """A Python literal (number, string, bool, None, slice, and tuples, lists and dicts of those; a NumPy
    scalar as the Python number it holds) as an expression."""
    if type(value) is tuple or (
        isinstance(value, tuple) and not hasattr(value, "_fields")
    ):
        elements = [cst.Element(literal(v)) for v in value]
        if len(elements) == 1:
            return cst.Tuple(elements=[elements[0].with_changes(comma=cst.Comma())])
        return cst.Tuple(elements)
    if type(value) is list:
        return cst.List([cst.Element(literal(v)) for v in value])
    if type(value) is dict:
        return cst.Dict(
            [cst.DictElement(literal(k), literal(v)) for k, v in value.items()]
        )
    if type(value) is slice:
        parts = [literal(p) for p in (value.start, value.stop, value.step)]
        return cst.Call(cst.Name("slice"), [cst.Arg(p) for p in parts])
    if isinstance(value, numpy.generic):  # ``np.int64(6)``: the Python number
        return literal(value.item())
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return cst.UnaryOperation(cst.Minus(), literal(-value))
    if isinstance(value, float) and not math.isfinite(
        value
    ):  # ``repr`` gives ``inf``, ``nan``: no names
        return cst.parse_expression(f'float("{value!r}")')
    return cst.parse_expression(repr(value))


def name_of(node) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def dotted(node) -> str | None:
    """``"xp.linalg.norm"`` for an attribute chain of names, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        return ".".join([node.value, *reversed(parts)])
    return None
