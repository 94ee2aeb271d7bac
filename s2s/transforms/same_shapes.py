"""Drop broadcasts between values proved to have one shape: ``rt.unbroadcast(g, x)`` is ``g`` there.

Derivative rules sum a cotangent down to its operand's shape (``rt.unbroadcast(g, x)``) and broadcast a
tangent up to its result's (``rt.broadcast_like(t, r)``), because an operand may broadcast. Most do
not: in ``x + x * x``, ``tanh(x)`` or ``np.mean(z) + l2 * np.sum(w * w)`` every operand already has the
shape of the result. This pass proves such shapes equal and writes the value itself, so a generated
module reads like a hand-written gradient.

The analysis gives each value a *shape expression*: the set of atoms whose shapes broadcast to its own
shape (the empty set is a 0-d value). A name bound by a statement s2s cannot read, a parameter, an
``x @ W``, a slice: a fresh atom. An elementwise op or arithmetic operator: the union of its operands'
sets; a full reduction (``xp.sum(a)``): the empty set; a runtime function with a known result shape
(``rt.reduced_like(g, x)``: ``x``'s). Two equal sets are equal shapes, since broadcasting is a function
of the set. ``rt.grad_seed(out)`` raises unless ``out`` is 0-d, so after it (in the function's own
body, not a branch or a loop's) every atom of ``out`` is 0-d, and leaves the sets it was in.

Guarantees:

- a call goes only where its value provably has the shape of its ``like`` argument, which is an array
  or a number, so the call would have returned its value unchanged;
- Python sequences are never taken for arrays: ``+`` and ``*`` combine shapes only where an operand is
  surely an array or a number (``ws + vs`` joins lists, ``[w] * 3`` repeats one);
- names rebound in a branch or loop body, or by an element write, get fresh atoms; a local function's
  body is read on its own, its free names each one atom for the body.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import count

import libcst as cst

from .. import ir
from ..cstutil import dotted, replace_nodes
from ..passes.dataflow import assigned
from ..rules.registry import OPS

# the runtime's functions whose result has the shape of one argument (its position)
SHAPE_OF_ARGUMENT = {
    "rt.unbroadcast": 1, "rt.broadcast_like": 1, "rt.reduced_like": 1,
    "rt.matmul_vjp_lhs": 1, "rt.matmul_vjp_rhs": 2, "rt.extremum_vjp": 1,
}  # fmt: skip
# the calls this pass drops: their value, where it has their ``like``'s shape
DROPPED = frozenset({"rt.unbroadcast", "rt.broadcast_like"})
# reductions of every element, when given only their operand (and these keywords): 0-d
FULL_REDUCTIONS = frozenset(
    {"sum", "mean", "max", "min", "prod", "amax", "amin", "var", "std", "nansum"}
)
_FULL_REDUCTION_KEYWORDS = frozenset({"dtype", "where", "ddof"})

ARRAY, NUMERIC, UNKNOWN = (
    "array",
    "numeric",
    "unknown",
)  # surely an array; a number or an array
_NOT_FOR_SEQUENCES = (
    cst.Subtract, cst.Divide, cst.Power, cst.FloorDivide, cst.MatrixMultiply,
)  # fmt: skip


@dataclass(frozen=True)
class Shape:
    atoms: frozenset
    kind: str = UNKNOWN


@dataclass
class _Analysis:
    """The shapes of one function's values, read statement by statement."""

    fresh: count = field(default_factory=count)
    zero_d: set = field(default_factory=set)  # atoms proved 0-d
    # a DROPPED call -> whether its value has its like's shape, each place it stands (a node may be shared)
    sites: dict = field(default_factory=dict)
    nested: int = (
        0  # inside a branch, a loop or a local function: what runs there may not run
    )

    def atom(self, kind=UNKNOWN) -> Shape:
        return Shape(frozenset({next(self.fresh)}), kind)

    def body(self, body, env: dict) -> None:
        for stmt in body:
            self.statement(stmt, env)

    def statement(self, stmt, env: dict) -> None:
        if isinstance(stmt, ir.Assign):
            shape = self.of(stmt.value, env)
            names = ir.target_names(stmt.target)
            if isinstance(stmt.target, cst.Name):
                env[stmt.target.value] = shape
            else:
                env.update({n: self.atom() for n in names})
                if not names:  # ``x[i] = v``: x, and what it aliases, may change
                    self._forget(env, [stmt])
        elif isinstance(stmt, ir.Return):
            self.of(stmt.value, env)
        elif isinstance(stmt, ir.Def):
            self.nested += 1
            self.body(stmt.function.body, {})
            self.nested -= 1
            env[stmt.function.name] = self.atom()
        else:  # an augmented assignment, a branch, a loop: what it binds is unknown before and after
            self._forget(env, [stmt])
            self.nested += 1
            for block in ir.blocks_of(stmt):
                self.body(block, dict(env))
            self.nested -= 1
            self._forget(env, [stmt])

    def _forget(self, env: dict, body) -> None:
        for name in assigned(body) | {_element_base(s) for s in ir.walk(body)} - {None}:
            env[name] = self.atom()

    def of(self, node, env: dict) -> Shape:
        """``node``'s shape; records the DROPPED calls in it and learns what its evaluation proves."""
        if isinstance(node, cst.Name):
            if node.value not in env:
                env[node.value] = self.atom()
            return env[node.value]
        if isinstance(node, (cst.Integer, cst.Float)):
            return Shape(frozenset(), NUMERIC)
        if isinstance(node, cst.UnaryOperation):
            inner = self.of(node.expression, env)
            if not isinstance(node.operator, cst.Minus):
                return self.atom()
            self._learn_numeric(node.expression, env)
            return Shape(inner.atoms, _numeric(inner.kind))
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, env)
        if isinstance(node, cst.Call):
            return self._call(node, env)
        if isinstance(node, (cst.IfExp, cst.BooleanOperation, cst.Lambda)) or any(
            isinstance(node, kind)
            for kind in (cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp)
        ):
            return self.atom()  # (what runs conditionally proves nothing after it)
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                self.of(child, env)
            elif isinstance(child, (cst.Arg, cst.BaseElement, cst.SubscriptElement)):
                for inner in child.children:
                    if isinstance(inner, cst.BaseExpression):
                        self.of(inner, env)
        return self.atom()

    def _binary(self, node: cst.BinaryOperation, env: dict) -> Shape:
        left, right = self.of(node.left, env), self.of(node.right, env)
        op, kinds = node.operator, {left.kind, right.kind}
        if isinstance(op, _NOT_FOR_SEQUENCES) or (
            isinstance(op, cst.Multiply) and node.left.deep_equals(node.right)
        ):  # a sequence raises here: after it, both operands are numbers or arrays
            self._learn_numeric(node.left, env)
            self._learn_numeric(node.right, env)
            if isinstance(op, cst.MatrixMultiply):
                return self.atom(ARRAY)
        elif isinstance(
            op, cst.Add
        ):  # a number and a sequence raise; an array broadcasts one
            if kinds == {UNKNOWN}:
                return self.atom()
        elif isinstance(op, cst.Multiply):  # an int repeats a sequence; a float raises
            floats = isinstance(node.left, cst.Float) or isinstance(
                node.right, cst.Float
            )
            if not (ARRAY in kinds or floats or UNKNOWN not in kinds):
                return self.atom()
        else:
            return self.atom()
        return Shape(left.atoms | right.atoms, ARRAY if ARRAY in kinds else NUMERIC)

    def _learn_numeric(self, node, env: dict) -> None:
        if isinstance(node, cst.Name) and node.value in env:
            shape = env[node.value]
            env[node.value] = Shape(shape.atoms, _numeric(shape.kind))

    def _call(self, node: cst.Call, env: dict) -> Shape:
        args = [self.of(a.value, env) for a in node.args]
        self.of(node.func, env)
        callee = dotted(node.func) or ""
        positional = [
            s for a, s in zip(node.args, args) if not a.keyword and not a.star
        ]
        if any(a.star for a in node.args):
            return self.atom()
        if callee in DROPPED and len(node.args) == 2 and len(positional) == 2:
            self.sites.setdefault(node, []).append((positional[0], positional[1]))
        if callee == "rt.grad_seed" and positional:
            if (
                not self.nested
            ):  # (it raises where ``out`` is not 0-d: after it, ``out`` is)
                self.zero_d |= positional[0].atoms
            return Shape(frozenset(), ARRAY)
        if callee == "rt.reduced_count":
            return Shape(frozenset(), NUMERIC)  # (an int)
        if callee in SHAPE_OF_ARGUMENT and len(positional) > SHAPE_OF_ARGUMENT[callee]:
            like = positional[SHAPE_OF_ARGUMENT[callee]]
            return Shape(
                like.atoms, ARRAY if like.kind == ARRAY else _numeric(like.kind)
            )
        if not callee.startswith("xp."):
            return self.atom()
        name = callee[len("xp.") :]
        keywords = {a.keyword.value for a in node.args if a.keyword}
        if (
            name in FULL_REDUCTIONS
            and len(positional) == 1
            and keywords <= _FULL_REDUCTION_KEYWORDS
        ):  # (NumPy's 0-d results are its scalars, which broadcast as arrays do)
            return Shape(frozenset(), ARRAY)
        op = OPS.get(name)
        if op is None or op.family != "elementwise" or keywords:
            return self.atom()  # (``xp.split``: a list)
        return Shape(frozenset().union(*(s.atoms for s in positional)), ARRAY)

    def equal(self, a: Shape, b: Shape) -> bool:
        return a.atoms - self.zero_d == b.atoms - self.zero_d


def _numeric(kind: str) -> str:
    return kind if kind in (ARRAY, NUMERIC) else NUMERIC


def _element_base(stmt):
    if isinstance(stmt, ir.Assign) and not ir.target_names(stmt.target):
        node = stmt.target
        while isinstance(node, (cst.Subscript, cst.Attribute)):
            node = node.value
        return node.value if isinstance(node, cst.Name) else None
    return None


def without_same_shape_broadcasts(fn: ir.Function) -> ir.Function:
    """``fn`` with each ``rt.unbroadcast(g, x)`` / ``rt.broadcast_like(t, r)`` whose value provably has
    its ``like``'s shape replaced by the value (module docstring)."""
    analysis = _Analysis()
    analysis.body(fn.body, {})
    dropped = {
        call: call.args[0].value
        for call, places in analysis.sites.items()
        if all(
            like.kind != UNKNOWN and analysis.equal(value, like)
            for value, like in places
        )
    }
    if not dropped:
        return fn
    return fn.with_body(_replaced(fn.body, dropped))


def _replaced(body, dropped: dict) -> list:
    out = []
    for stmt in body:
        if isinstance(stmt, ir.Def):
            inner = stmt.function
            stmt = ir.Def(inner.with_body(_replaced(inner.body, dropped)), stmt.origin)
        elif isinstance(stmt, (ir.Assign, ir.Return)):
            stmt = replace(stmt, value=replace_nodes(stmt.value, dropped))
        elif isinstance(stmt, ir.If):
            stmt = replace(
                stmt,
                body=tuple(_replaced(stmt.body, dropped)),
                orelse=tuple(_replaced(stmt.orelse, dropped)),
            )
        elif isinstance(stmt, (ir.For, ir.While)):
            stmt = replace(stmt, body=tuple(_replaced(stmt.body, dropped)))
        out.append(stmt)
    return out
