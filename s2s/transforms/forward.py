"""Forward mode: every active value of a normal-form function gets its tangent computed next to it.

Output guarantees: the result is again Python over ``xp``/``rt``: the primal
statements in order, each followed by the statements that compute the
tangents of its active results (``h_dot``), cited under the same user line.
Only active variables (varied by the inputs, read by the outputs) get
tangents; a value that no input reaches has zeros as its tangent where one
is needed. ``rt.cond``/``scan``/``while_loop`` run functions that carry
(value, tangent) pairs (``forward_control``); user helpers are called
through their own ``<helper>_jvp``.

An op's tangent comes from its forward rule, as its family derives it
(``families.py``).
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import call, tuple_of
from ..errors import MissingRule, S2SError
from ..naming import Namer
from ..passes.dataflow import used_names
from ..passes.normal_form import eqn_of
from ..rules.registry import tangent_name
from . import forward_control
from .activity import (
    CONSTANT_NAMES,
    RULE_HINT,
    activity,
    check_closed_world,
    compound_reads,
    diff_names,
    eqn_inputs,
)
from .reverse import Mode
from .skeleton import Context, HelperRequests, Transform


def _tuple(items) -> cst.Tuple:
    return tuple_of(*items)


class Forward(Transform):
    """Builds the forward-mode statements of a body, in order."""

    mode = "forward"
    control = forward_control.RULES

    def __init__(
        self,
        body,
        active,
        ctx: Context,
        tangents: dict,
        requests: HelperRequests | None = None,
    ):
        super().__init__(body, active, ctx)
        self.tan = dict(tangents)  # variable -> name of its tangent
        # local function -> its version on (value, tangent) pairs
        self.paired: dict[str, tuple[str, frozenset]] = {}
        self.requests = requests if requests is not None else HelperRequests("jvp")

    def nested(self, body, inputs: dict, outputs) -> Forward:
        """Forward mode of a local function's ``body`` (its tangent inputs named in ``inputs``)."""
        return jvp_body(body, inputs, outputs, self.ctx, self.requests)

    def run(self, body) -> list:
        for stmt in body:
            self.visit(stmt)
        self.origin = None
        return self.out

    # --- tangents --------------------------------------------------------------
    def fresh(self, name: str) -> str:
        """A new tangent name for ``name``; later reads of ``name``'s tangent get it."""
        self.tan[name] = self.namer.fresh(tangent_name(name))
        return self.tan[name]

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
        if compound_reads(atom) & self.active:
            raise AssertionError(
                f"s2s: an operand `{ir.code(atom)}` that is not an atom carries a derivative "
                "(a pass broke the normal form): its tangent would be lost"
            )
        return call("rt.zeros_like_float", atom)

    def tangent_target(self, target) -> cst.BaseExpression:
        """Fresh tangent names shaped like an assignment target (``_`` for inactive names)."""
        if isinstance(target, cst.Name):
            if target.value in self.active:
                return cst.Name(self.fresh(target.value))
            return cst.Name("_")
        return _tuple([self.tangent_target(el.value) for el in target.elements])

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
        if not eqn_inputs(e, self.flows, self.defs) & self.active:
            # what it reads lost its tangent since the analysis (a counter a loop carries): nor has it one
            self.active = self.active - set(ir.target_names(stmt.target))
            self.out.append(stmt)
            return
        if e.kind == "runtime" and e.name in self.control:
            self.control[e.name](self, stmt, e)
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
                f"no derivative rule for `{e.name}`", stmt.origin, RULE_HINT
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
        name = self.requests.name(e.name, wrt, stmt.origin)
        target = _tuple([stmt.target, self.tangent_target(stmt.target)])
        self.emit(target, call(name, *e.args, *(self.tangent(e.args[i]) for i in wrt)))

    def op(self, target, e):
        value = self.derive(e, target)
        dtype = self.result_dtype(e)
        # the tangent through the call's cast (none through an integer type)
        if dtype is not None:
            value = call("rt.astype_jvp", value, dtype)
        self.emit(cst.Name(self.fresh(target)), value)


def jvp_body(
    body, inputs: dict, outputs, ctx: Context, requests: HelperRequests | None = None
) -> Forward:
    """Forward mode of ``body`` for tangents of ``inputs`` (variable -> tangent name), reading ``outputs``' tangents after."""
    wanted = set().union(set(), *(diff_names(o) for o in outputs))
    active = activity(body, list(inputs), wanted, ctx.helpers, ctx.flows) | (
        set(inputs) & wanted
    )
    check_closed_world(
        body, active, ctx.helpers, Forward.control, list(inputs), wanted, ctx.flows
    )
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
    # the primals keep their defaults where Python allows (``codegen`` makes an entry's tangents keyword-only)
    params = [*fn.params, *(ir.Param(tangents[name]) for name in wrt)]
    body = [*fwd.out, ir.Return(tuple_of(*result), None)]
    names = ", ".join(f"`{w}`" for w in wrt)
    doc = (
        f"Value of `{fn.name}` and its tangent (forward mode) for tangents of {names}."
    )
    return ir.Function(
        f"{fn.name}_jvp", tuple(params), tuple(body), fn.origin, docstring=doc
    )
