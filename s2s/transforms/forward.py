"""Forward mode: every active value of a normal-form function gets its tangent computed next to it.

Output guarantees: the result is again Python over ``xp``/``rt``: the primal
statements in order, each followed by the statements that compute the
tangents of its active results (``h_dot``), cited under the same user line.
Only active variables (varied by the inputs, read by the outputs) get
tangents; a value that no input reaches has zeros as its tangent where one
is needed. ``rt.cond``/``scan``/``while_loop`` run functions that carry
(value, tangent) pairs (``forward_control``); user helpers are called
through their own ``<helper>_jvp``.

Tangents by family: elementwise, the tangents times the rule's partials;
linear, the op applied to the tangents; multilinear, the sum of the op with
one operand at a time replaced by its tangent; ``vjp``, the op's explicit
forward rule.
"""

from __future__ import annotations

import inspect

import libcst as cst

from .. import ir
from ..cstutil import call, names_in, tuple_of
from ..errors import MissingRule, S2SError
from ..naming import Namer
from ..passes.dataflow import used_names
from ..passes.normal_form import eqn_of, is_static
from ..rules.registry import op_named, tangent_name
from ..templates import bind, instantiate, rule_template
from . import forward_control
from .activity import (
    CONSTANT_NAMES,
    activity,
    array_evidence,
    check_closed_world,
    diff_names,
    local_functions,
)
from .activity import (
    RULE_HINT as _RULE_HINT,
)
from .forward_control import _tuple
from .reverse import Context, Mode
from .simplify import fold


def _sum(terms, leafwise=False):
    """``a + b + ...``; with ``leafwise``, ``rt.tree_add`` (runtime helpers' values may be lists of arrays)."""
    value = terms[0]
    for term in terms[1:]:
        value = (
            call("rt.tree_add", value, term)
            if leafwise
            else cst.BinaryOperation(value, cst.Add(), term)
        )
    return value


class HelperRequests:
    """The helper jvps forward-mode code calls: (helper, tangent arguments) -> the generated function's name."""

    def __init__(self):
        self.names: dict = {}

    def name(self, helper: str, wrt: tuple) -> str:
        if (helper, wrt) not in self.names:
            taken = sum(1 for h, _ in self.names if h == helper)
            self.names[(helper, wrt)] = f"{helper}_jvp" + (
                f"_{taken + 1}" if taken else ""
            )
        return self.names[(helper, wrt)]


class Forward:
    """Builds the forward-mode statements of a body, in order."""

    def __init__(
        self,
        body,
        active,
        ctx: Context,
        tangents: dict,
        requests: HelperRequests | None = None,
    ):
        self.active = active
        self.ctx = ctx
        self.helpers = ctx.helpers
        self.flows = ctx.flows
        self.namer = ctx.namer
        self.arrays = array_evidence(body, ctx.helpers)
        self.defs = local_functions(body)
        self.tan = dict(tangents)  # variable -> name of its tangent
        # local function -> its version on (value, tangent) pairs
        self.paired: dict[str, str] = {}
        self.requests = requests if requests is not None else HelperRequests()
        self.out: list[ir.Stmt] = []
        self.origin = None

    def run(self, body) -> list:
        for stmt in body:
            self.visit(stmt)
        self.origin = None
        return self.out

    # --- tangents --------------------------------------------------------------
    def emit(self, target, value):
        self.out.append(ir.Assign(target, fold(value), self.origin))

    def fresh(self, name: str) -> str:
        """A new tangent name for ``name``; later reads of ``name``'s tangent get it."""
        self.tan[name] = self.namer.fresh(tangent_name(name))
        return self.tan[name]

    def zeros(self, name: str) -> cst.Call:
        return call(
            "rt.zeros_like_float" if name in self.arrays else "rt.tree_zeros_like",
            cst.Name(name),
        )

    def tangent(self, atom) -> cst.BaseExpression:
        """The tangent of an atom: a tangent's name, zeros where no input reaches, containers of those."""
        if isinstance(atom, cst.Name):
            if atom.value in self.tan:
                return cst.Name(self.tan[atom.value])
            if atom.value == "None":
                return atom
            return (
                self.zeros(atom.value)
                if atom.value not in CONSTANT_NAMES
                else call("rt.zeros_like_float", atom)
            )
        if isinstance(atom, (cst.Tuple, cst.List)):
            return atom.with_changes(
                elements=[
                    e.with_changes(value=self.tangent(e.value)) for e in atom.elements
                ]
            )
        if isinstance(atom, cst.Dict):
            return atom.with_changes(
                elements=[
                    e.with_changes(value=self.tangent(e.value)) for e in atom.elements
                ]
            )
        return call("rt.zeros_like_float", atom)

    def tangent_target(self, target) -> cst.BaseExpression:
        """Fresh tangent names shaped like an assignment target (``_`` for inactive names)."""
        if isinstance(target, cst.Name):
            if target.value in self.active:
                return cst.Name(self.fresh(target.value))
            return cst.Name("_")
        return _tuple([self.tangent_target(el.value) for el in target.elements])

    def is_active(self, atom) -> bool:
        return bool(diff_names(atom) & self.active)

    # --- statements ------------------------------------------------------------
    def visit(self, stmt):
        if isinstance(stmt, ir.Def):
            self.out.append(stmt)
            return
        self.origin = stmt.origin
        if not self.active.intersection(ir.target_names(stmt.target)):
            self.out.append(stmt)
            return
        e = eqn_of(stmt.value, self.helpers)
        if e.kind == "runtime" and e.name in forward_control.RULES:
            forward_control.RULES[e.name](self, stmt, e)
            return
        if e.kind == "helper":
            self.helper(stmt, e)
            return
        self.out.append(stmt)
        if isinstance(stmt.target, cst.Tuple):  # unpacking: the tangent unpacks alike
            self.emit(self.tangent_target(stmt.target), self.tangent(stmt.value))
            return
        target = stmt.target.value
        if e.kind == "copy":
            atom = e.args[0]
            if isinstance(atom, cst.Name) and atom.value in self.tan:
                self.tan[target] = self.tan[atom.value]  # an alias: the same tangent
            else:
                tangent = self.tangent(atom)
                self.emit(cst.Name(self.fresh(target)), tangent)
        elif e.kind == "getitem" or e.kind == "attribute":
            value = stmt.value
            self.emit(
                cst.Name(self.fresh(target)),
                value.with_changes(value=self.tangent(value.value)),
            )
        elif e.kind in ("op", "runtime"):
            self.op(target, e)
        else:
            raise MissingRule(
                f"no derivative rule for `{e.name}`", stmt.origin, _RULE_HINT
            )

    def helper(self, stmt, e):
        """``y = h(a, b)`` becomes ``y, y_dot = h_jvp(a, b, a_dot)``, tangents for the arguments that carry them
        (``h_jvp`` is made for those; another set of them gets ``h_jvp_2``);
        for a ``custom_jvp`` function, the user's rule: ``y, y_dot = rule(*nondiff, (a, b), (a_dot, b_dot))``.
        """
        custom = self.ctx.custom.get(e.name)
        if custom is not None and custom.kind == "vjp":
            raise S2SError(
                f"forward mode (jvp) cannot go through `{e.name}`: it is a custom_vjp function",
                stmt.origin,
                "define its derivative with custom_jvp instead (reverse mode then uses it too), or use reverse mode",
            )
        if custom is not None:
            nondiff = [e.args[i] for i in custom.nondiff_argnums]
            diff = [e.args[i] for i in custom.diff_argnums]
            value = call(
                custom.rules[0],
                *nondiff,
                _tuple(diff),
                _tuple([self.tangent(a) for a in diff]),
            )
            self.emit(_tuple([stmt.target, self.tangent_target(stmt.target)]), value)
            return
        flags = self.flows[e.name]
        wrt = tuple(i for i, a in enumerate(e.args) if flags[i] and self.is_active(a))
        name = self.requests.name(e.name, wrt)
        target = _tuple([stmt.target, self.tangent_target(stmt.target)])
        self.emit(target, call(name, *e.args, *(self.tangent(e.args[i]) for i in wrt)))

    def op(self, target, e):
        op = op_named(("rt." if e.kind == "runtime" else "") + e.name)
        if op is None or op.rule is None:
            raise MissingRule(
                f"no derivative rule for `{e.name}`", self.origin, _RULE_HINT
            )
        bindings = bind(op, e, self.origin)
        value = _FAMILIES[op.family](self, op, e, bindings, target)
        self.emit(cst.Name(self.fresh(target)), value)

    def _leading(self, op, template):
        """The op's leading parameters whose rule entry is not ``None`` (derivatives flow through them)."""
        return [p for p, entry in zip(op.params, template.entries) if entry is not None]

    def _statements(self, template, bindings):
        """Emit the rule's own assignments under fresh names; the bindings they add."""
        bindings = dict(bindings)
        for local, value in template.statements:
            names = {n: cst.Name(self.namer.fresh(f"_{n}")) for n in names_in(local)}
            self.emit(instantiate(local, names), instantiate(value, bindings))
            bindings.update(names)
        return bindings

    def elementwise(self, op, e, bindings, target):
        template = rule_template(op.name)
        bindings = self._statements(template, {**bindings, "ans": cst.Name(target)})
        terms = []
        for p in self._leading(op, template):
            if self.is_active(bindings[p]):
                partial = instantiate(template.entries[op.params.index(p)], bindings)
                terms.append(
                    fold(
                        cst.BinaryOperation(
                            self.tangent(bindings[p]), cst.Multiply(), partial
                        )
                    )
                )
        value = _sum(terms)
        # a tangent that reads no operand as large as the result (``x_dot`` of ``x + c``) is broadcast to it
        read = names_in(value)
        covered = {n for n in self.tan if self.tan[n] in read} | read
        others = [a for a in (*e.args, *(v for _, v in e.kwargs)) if not is_static(a)]
        if any(not names_in(a) <= covered for a in others):
            value = call("rt.broadcast_like", fold(value), cst.Name(target))
        return value

    def linear(self, op, e, bindings, target):
        template = rule_template(op.name)
        replaced = {p: self.tangent(bindings[p]) for p in self._leading(op, template)}
        return rebuild(op, e, replaced)

    def multilinear(self, op, e, bindings, target):
        template = rule_template(op.name)
        terms = []
        for p in self._leading(op, template):
            if op.signature.parameters[p].kind is inspect.Parameter.VAR_POSITIONAL:
                elements = [el.value for el in bindings[p].elements]
                for i, el in enumerate(elements):
                    if self.is_active(el):
                        one = [
                            self.tangent(x) if j == i else x
                            for j, x in enumerate(elements)
                        ]
                        terms.append(rebuild(op, e, {p: _tuple(one)}))
            elif self.is_active(bindings[p]):
                terms.append(rebuild(op, e, {p: self.tangent(bindings[p])}))
        return _sum(terms, leafwise=e.kind == "runtime")

    def explicit(self, op, e, bindings, target):
        if op.jvp is None:
            raise MissingRule(
                f"no forward-mode rule for `{e.name}`", self.origin, _RULE_HINT
            )
        template = rule_template(op.name, forward=True)
        active = [p for p in self._leading(op, template) if self.is_active(bindings[p])]
        tangents = {tangent_name(p): self.tangent(bindings[p]) for p in active}
        bindings = self._statements(
            template, {**bindings, **tangents, "ans": cst.Name(target)}
        )
        return _sum(
            [
                instantiate(template.entries[op.params.index(p)], bindings)
                for p in active
            ],
            leafwise=e.kind == "runtime",
        )


_FAMILIES = {
    "elementwise": Forward.elementwise,
    "linear": Forward.linear,
    "multilinear": Forward.multilinear,
    "vjp": Forward.explicit,
}


def rebuild(op, e, replaced: dict) -> cst.BaseExpression:
    """The op's call (or operator) again, with the arguments of the parameters in ``replaced`` swapped.

    A ``*args`` parameter is replaced by a tuple of atoms, one per argument.
    """
    params = op.signature.parameters
    positional = [
        p for p in op.params if params[p].kind is not inspect.Parameter.KEYWORD_ONLY
    ]
    args = []
    for i, a in enumerate(e.args):
        p = positional[min(i, len(positional) - 1)]
        if params[p].kind is inspect.Parameter.VAR_POSITIONAL:
            args.extend(
                [el.value for el in replaced[p].elements]
                if p in replaced
                else e.args[i:]
            )
            break
        args.append(replaced.get(p, a))
    node = e.node
    if isinstance(node, cst.BinaryOperation):
        return node.with_changes(left=args[0], right=args[1])
    if isinstance(node, cst.UnaryOperation):
        return node.with_changes(expression=args[0])
    keywords = [cst.Arg(replaced.get(k, v), keyword=cst.Name(k)) for k, v in e.kwargs]
    return node.with_changes(args=[cst.Arg(a) for a in args] + keywords)


def jvp_body(
    body, inputs: dict, outputs, ctx: Context, requests: HelperRequests | None = None
) -> Forward:
    """Forward mode of ``body`` for tangents of ``inputs`` (variable -> tangent name), reading ``outputs``' tangents after."""
    wanted = set().union(set(), *(diff_names(o) for o in outputs))
    active = activity(body, list(inputs), wanted, ctx.helpers, ctx.flows) | (
        set(inputs) & wanted
    )
    check_closed_world(body, active, ctx.helpers, forward_control.RULES)
    fwd = Forward(body, active, ctx, inputs, requests)
    fwd.run(body)
    return fwd


def forward(
    fn: ir.Function,
    mode: Mode,
    helpers=frozenset(),
    flows=None,
    custom=None,
    requests=None,
) -> ir.Function:
    """The ``jvp`` function of ``fn`` (normal form): ``f_jvp(*params, *tangents) -> (out, out_dot)``.

    Tangent parameters come for the parameters ``mode.wrt`` (all of them for ``jvp``).
    """
    ctx = Context(Namer(used_names(fn)), helpers, flows or {}, custom or {})
    *stmts, ret = fn.body
    out, aux = ret.value, None
    if mode.has_aux:
        if not (isinstance(out, cst.Tuple) and len(out.elements) == 2):
            raise S2SError(
                f"with has_aux=True, `{fn.name}` must return a pair (output, aux)",
                ret.origin,
            )
        out, aux = out.elements[0].value, out.elements[1].value
    wrt = [
        fn.params[i].name
        for i in ((mode.wrt,) if isinstance(mode.wrt, int) else mode.wrt)
    ]
    tangents = {name: ctx.namer.fresh(tangent_name(name)) for name in wrt}
    fwd = jvp_body(stmts, tangents, [out], ctx, requests)
    fwd.origin = ret.origin
    out_dot = fwd.tangent(out)
    # tuple_of: `return a, b` stays one element
    result = [out, out_dot] + ([aux] if aux is not None else [])
    params = [ir.Param(p.name) for p in fn.params] + [
        ir.Param(tangents[name]) for name in wrt
    ]
    body = [*fwd.out, ir.Return(tuple_of(*result), None)]
    names = ", ".join(f"`{w}`" for w in wrt)
    doc = (
        f"Value of `{fn.name}` and its tangent (forward mode) for tangents of {names}."
    )
    return ir.Function(
        f"{fn.name}_jvp", tuple(params), tuple(body), fn.origin, docstring=doc
    )
