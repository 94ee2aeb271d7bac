"""Reverse mode: a normal-form function becomes its forward pass followed by its backward pass.

Output guarantees: the result is again straight-line Python over ``xp``/``rt``;
cotangents are named after their variables (``h_bar``); only active variables
get cotangents; each backward statement cites the user's line of the primal
statement it comes from. Containers (tuples, lists, dicts, namedtuples)
read with constant keys get cotangents of their own structure through
``rt.fill_like``; values that may be containers accumulate with
``rt.tree_add``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from .. import ir
from ..cstutil import call, int_literal, literal, names_in, tuple_of
from ..errors import MissingRule, S2SError
from ..naming import Namer, bar
from ..passes.dataflow import used_names
from ..passes.desugar import index_value
from ..passes.normal_form import eqn_of
from . import control_rules
from .activity import (
    RULE_HINT,
    activity,
    check_closed_world,
    compound_reads,
    diff_names,
)
from .skeleton import Context, HelperRequests, Transform

RT = cst.Name("rt")
XP = cst.Name("xp")


def index(base: cst.BaseExpression, key) -> cst.Subscript:
    return cst.Subscript(base, [cst.SubscriptElement(cst.Index(literal(key)))])


@dataclass
class Cotangent:
    """A variable's cotangent so far: a dense sum held in ``name``, plus pending container ``paths``."""

    name: str | None = None
    paths: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Mode:
    """What to generate: ``grad``, ``value_and_grad`` or ``vjp`` with respect to parameters ``wrt``."""

    kind: str
    # an int gives one gradient, a tuple a tuple of them (as JAX's argnums)
    wrt: tuple[int, ...] | int = 0
    has_aux: bool = False


def _constant_key(subscript: cst.Subscript):
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    v = subscript.slice[0].slice.value
    if int_literal(v) is not None:
        return int_literal(v)
    if isinstance(v, cst.SimpleString):
        return v.evaluated_value
    return None


def _elements(atom) -> dict | None:
    """Key -> element of a tuple, list or dict literal (None when a dict key is not a literal)."""
    if isinstance(atom, cst.Dict):
        keys = [_literal_key(e.key) for e in atom.elements]
        if any(k is _NOT_LITERAL for k in keys):
            return None
        return {k: e.value for k, e in zip(keys, atom.elements)}
    if isinstance(atom, (cst.Tuple, cst.List)):
        return {i: e.value for i, e in enumerate(atom.elements)}
    return None  # a number, a string: no elements


_NOT_LITERAL = object()


def _literal_key(node):
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Integer):
        return int(node.value)
    return _NOT_LITERAL


def _leaves(target, prefix=()):
    if isinstance(target, cst.Name):
        yield prefix, target.value
        return
    for i, el in enumerate(target.elements):
        yield from _leaves(el.value, (*prefix, i))


class Backward(Transform):
    """Builds the backward pass statement by statement, from the last primal statement up."""

    mode = "reverse"
    control = control_rules.RULES
    phase = "backward"

    def __init__(self, body, active, ctx: Context):
        super().__init__(body, active, ctx)
        # id of a rewritten control-flow statement -> its backward rule
        self.plans: dict[int, object] = {}
        # id of a plan's statement -> the names bound by all the statements it stands for
        self.groups: dict[int, set] = {}
        self.cot: dict[str, Cotangent] = {}
        # names known to hold a tuple of that many elements (a loop body's packed carry)
        self.tuples: dict[str, int] = {}

    def nested(
        self, body, inputs, seeds, origin=None, tuples=None, constant=frozenset()
    ) -> Adjoint:
        """Reverse mode of a local function's ``body``: the adjoint a control rule builds its functions from
        (``tuples``: names known to hold a tuple of that many elements, such as the loop's packed carry;
        ``constant``: names known to carry no derivative, such as a counter the loop carries).
        """
        return adjoint(body, inputs, seeds, self.ctx, origin, tuples, constant)

    def forward(self, body) -> list:
        """The primal statements, each active ``rt.cond``/``rt.scan`` rewritten to keep what its backward rule reads."""
        out = []
        for stmt in body:
            e = (
                eqn_of(stmt.value, self.helpers)
                if isinstance(stmt, ir.Assign)
                else None
            )
            active = e is not None and self.active.intersection(
                ir.target_names(stmt.target)
            )
            rule = None
            if active and e.kind == "runtime" and e.name in self.control:
                rule = self.control[e.name]
            elif (
                active
                and e.kind == "helper"
                and getattr(self.ctx.custom.get(e.name), "kind", None) == "vjp"
            ):
                rule = custom_vjp
            if rule is None:
                out.append(stmt)
                continue
            self.origin = stmt.origin
            stmts, plan = rule(self, stmt, e)
            # the plan, run at the last statement, stands for all of them
            for s in stmts[:-1]:
                self.plans[id(s)] = _nothing
            self.plans[id(stmts[-1])] = plan
            self.groups[id(stmts[-1])] = set().union(
                *(ir.target_names(s.target) for s in stmts if isinstance(s, ir.Assign))
            )
            out.extend(stmts)
        self.origin = None
        return out

    # --- accumulation -------------------------------------------------------
    def add(self, var: str, expr):
        c = self.cot.setdefault(var, Cotangent())
        if c.name is None:
            c.name = self.namer.fresh(bar(var))
            self.emit(cst.Name(c.name), expr)
        elif var in self.arrays:
            self.emit(
                cst.Name(c.name), cst.BinaryOperation(cst.Name(c.name), cst.Add(), expr)
            )
        else:
            self.emit(cst.Name(c.name), call("rt.tree_add", cst.Name(c.name), expr))

    def add_path(self, var: str, path: tuple, expr):
        c = self.cot.setdefault(var, Cotangent())
        if path in c.paths:
            expr = call("rt.tree_add", c.paths[path], expr)
        c.paths[path] = expr

    def pending_paths(self, var: str):
        """The cotangent of ``var`` if it is made of container paths only (nothing dense)."""
        c = self.cot.get(var)
        return c.paths if c is not None and c.name is None and c.paths else None

    def take(self, var: str):
        """The cotangent of ``var`` as a name (materialising pending paths), or None if none reached it."""
        c = self.cot.get(var)
        if c is None:
            return None
        size = self.tuples.get(var)
        if c.paths and size is not None and set(c.paths) == {(i,) for i in range(size)}:
            # every element of a known tuple has a cotangent: the tuple of them (no template needed, so
            # the tuple itself is not kept for the backward pass)
            elements = [cst.Element(c.paths[(i,)]) for i in range(size)]
            c.paths = {}
            self.add(var, cst.Tuple(elements))
            return cst.Name(c.name)
        if c.paths:
            entries = [
                cst.DictElement(literal(p), v)
                for p, v in sorted(c.paths.items(), key=lambda kv: repr(kv[0]))
            ]
            c.paths = {}
            self.add(var, call("rt.fill_like", cst.Name(var), cst.Dict(entries)))
        return cst.Name(c.name)

    def project(self, source: str, path: tuple, leaf: str):
        """``leaf`` was read out of ``source`` at ``path``: pass its cotangent up as a path."""
        pending = self.pending_paths(leaf)
        if pending is not None:
            for sub, expr in pending.items():
                self.add_path(source, path + sub, expr)
            self.cot[leaf].paths = {}
        else:
            g = self.take(leaf)
            if g is not None:
                self.add_path(source, path, g)

    def contribute(self, atom, expr):
        """Add ``expr`` to the cotangent of ``atom`` (a name, or a container of atoms)."""
        if isinstance(atom, cst.Name):
            if atom.value in self.active:
                self.add(atom.value, expr)
        elif isinstance(atom, (cst.Tuple, cst.List)):
            self.contribute_many([e.value for e in atom.elements], expr)
        elif isinstance(atom, cst.Dict):
            for e in atom.elements:
                if diff_names(e.value) & self.active:
                    self.contribute(
                        e.value,
                        cst.Subscript(expr, [cst.SubscriptElement(cst.Index(e.key))]),
                    )
        elif compound_reads(atom) & self.active:
            raise AssertionError(
                f"s2s: an operand `{ir.code(atom)}` that is not an atom carries a derivative "
                "(a pass broke the normal form): its cotangent would be lost"
            )

    def contribute_many(self, atoms, expr):
        """Atoms receive the entries of the tuple (or list) of cotangents ``expr``."""
        live = [a for a in atoms if diff_names(a) & self.active]
        if not live:
            return
        fresh = all(isinstance(a, cst.Name) and a.value not in self.cot for a in live)
        distinct = len({a.value for a in live if isinstance(a, cst.Name)}) == len(live)
        if fresh and distinct:
            targets = []
            for a in atoms:
                if a in live:
                    c = self.cot.setdefault(a.value, Cotangent())
                    c.name = self.namer.fresh(bar(a.value))
                    targets.append(cst.Element(cst.Name(c.name)))
                else:
                    targets.append(cst.Element(cst.Name("_")))
            self.emit(cst.Tuple(targets), expr)
            return
        if not isinstance(expr, cst.Name):
            tmp = self.namer.fresh("_cotangents")
            self.emit(cst.Name(tmp), expr)
            expr = cst.Name(tmp)
        for i, a in enumerate(atoms):
            if a in live:
                self.contribute(a, index(expr, i))

    # --- statements ----------------------------------------------------------
    def visit(self, stmt: ir.Assign):
        if isinstance(stmt, ir.Def):
            return
        names = ir.target_names(stmt.target)
        if not any(n in self.cot for n in self.groups.get(id(stmt), names)):
            return  # no cotangent reached it, nor (for a plan) any statement it stands for
        self.origin = stmt.origin
        plan = self.plans.get(id(stmt))
        if plan is not None:
            plan(self)
            return
        if isinstance(stmt.target, cst.Tuple):
            self.unpack(stmt.target, stmt.value)
            return
        target = names[0]
        e = eqn_of(stmt.value, self.helpers)
        if e.kind == "copy":
            self.copy(target, e.args[0])
        elif e.kind == "attribute":
            self.project(e.args[0].value, (e.name,), target)
        elif e.kind == "getitem":
            self.getitem(target, stmt.value)
        elif e.kind in ("op", "runtime"):
            self.op(target, e)
        elif e.kind == "helper":
            self.helper(target, e)
        else:
            raise MissingRule(
                f"no derivative rule for `{e.name}`", stmt.origin, RULE_HINT
            )

    def unpack(self, target, value):
        """``a, b = value``: a name (its elements' cotangents go up as paths) or a tuple of atoms, element by element."""
        if isinstance(value, cst.Name):
            for path, leaf in _leaves(target):
                if leaf in self.active:
                    self.project(value.value, path, leaf)
            return
        for t, v in zip(target.elements, value.elements):
            if isinstance(t.value, cst.Name):
                if t.value.value in self.cot:
                    self.copy(t.value.value, v.value)
            else:
                self.unpack(t.value, v.value)

    def copy(self, target, atom):
        """``target = atom``: a name (an alias) or a container literal of atoms."""
        pending = self.pending_paths(target)
        if isinstance(atom, cst.Name):
            if pending is not None:
                self.project(atom.value, (), target)
            else:
                self.contribute(atom, self.take(target))
            return
        elements = _elements(atom)
        if pending is None or elements is None:
            self.contribute(atom, self.take(target))
            return
        self.cot[target].paths = {}
        for path, expr in pending.items():
            key = (
                path[0] + len(elements)
                if isinstance(path[0], int) and path[0] < 0
                else path[0]
            )
            if key not in elements:  # (a read Python refuses: IndexError, KeyError)
                what = "dict" if isinstance(atom, cst.Dict) else "list or tuple"
                raise S2SError(
                    f"item {path[0]!r} of this {what} of {len(elements)} items is read, "
                    "which it does not hold",
                    self.origin,
                    "read only the items it holds (a `zip` stops at its shortest sequence)",
                )
            element = elements[key]
            if len(path) == 1:
                self.contribute(element, expr)
            elif isinstance(element, cst.Name):
                self.add_path(element.value, path[1:], expr)
            else:
                self.copy_into(element, path[1:], expr)

    def copy_into(self, atom, path, expr):
        """A cotangent ``expr`` at ``path`` inside the container literal ``atom``."""
        holder = self.namer.fresh("_element")
        self.cot[holder] = Cotangent(paths={path: expr})
        self.copy(holder, atom)

    def getitem(self, target, value: cst.Subscript):
        base = value.value.value
        key = _constant_key(value)
        if key is not None and base not in self.arrays:
            self.project(base, (key,), target)
            return
        g = self.take(target)
        # a read at a position known only when traced is transposed as JAX's clamped read is
        # (``rt.index_read_add``); one of literals adds where it read
        add = "rt.index_read_add" if any(map(names_in, value.slice)) else "rt.index_add"
        c = self.cot.get(base)
        if c is not None and c.name is not None and not c.paths:
            # scattered into the cotangent it adds to (not into zeros, then added: a full-size temporary)
            self.emit(
                cst.Name(c.name), call(add, cst.Name(c.name), index_value(value), g)
            )
            return
        self.add(base, call(add, self.zeros(base), index_value(value), g))

    def op(self, target, e):
        dtype = self.result_dtype(e)
        c = self.cot.get(target)
        if dtype is not None and c is not None:
            # the result's cotangent through the call's cast (none through an integer type)
            g = self.take(target)
            c.name = self.namer.fresh(bar(target))
            self.emit(cst.Name(c.name), call("rt.astype_jvp", g, dtype))
        self.derive(e, target)

    def helper(self, target, e):
        g = self.take(target)
        custom = self.ctx.custom.get(e.name)
        # a custom_jvp function: its rule, transposed (``<rule>_vjp``, generated)
        if custom is not None:
            nondiff = [e.args[i] for i in custom.nondiff_argnums]
            diff = [e.args[i] for i in custom.diff_argnums]
            zeros = [
                (
                    self.zeros(a.value)
                    if isinstance(a, cst.Name)
                    else call("rt.zeros_like_float", a)
                )
                for a in diff
            ]
            seed = _tuple(call("rt.tree_zeros_like", cst.Name(target)), g)
            # (the rule's vjp for its tangents, made where the helpers' vjps are)
            transposed = self.ctx.vjps.name(
                custom.rules[0], (len(nondiff) + 1,), self.origin
            )
            value = call(transposed, *nondiff, _tuple(*diff), _tuple(*zeros), seed)
            self.contribute_many(diff, value)
            return
        # the helper's vjp for the arguments that take a cotangent here, and only those
        flags = self.flows[e.name]
        which = tuple(
            i for i, a in enumerate(e.args) if flags[i] and diff_names(a) & self.active
        )
        if not which:
            return
        vjp = call(self.ctx.vjps.name(e.name, which, self.origin), *e.args, g)
        if len(which) == 1:
            self.contribute(e.args[which[0]], vjp)
        else:
            self.contribute_many([e.args[i] for i in which], vjp)


def custom_vjp(back, stmt, e):
    """A ``custom_vjp`` function: its ``fwd`` runs in the forward pass and keeps residuals, its ``bwd`` gives the cotangents."""
    custom = back.ctx.custom[e.name]
    fwd, bwd = custom.rules
    residuals = back.namer.fresh(f"{e.name}_residuals")
    forward = [
        ir.Assign(
            _tuple(stmt.target, cst.Name(residuals)), call(fwd, *e.args), stmt.origin
        )
    ]

    def plan(back):
        g = back.take(stmt.target.value)
        nondiff = [e.args[i] for i in custom.nondiff_argnums]
        back.contribute_many(
            [e.args[i] for i in custom.diff_argnums],
            call(bwd, *nondiff, cst.Name(residuals), g),
        )

    return forward, plan


def _nothing(back):
    """The plan of a statement whose adjoint another statement's plan emits."""


@dataclass
class Adjoint:
    """Statements ``forward`` (the primal ones, control flow keeping residuals) then ``backward``.

    ``cotangents`` maps each input to the name holding its cotangent after
    ``backward`` (None where no derivative reached it).
    """

    forward: list
    backward: list
    cotangents: dict
    arrays: set = field(default_factory=set)  # names known to be arrays


def adjoint(
    body, inputs, seeds, ctx: Context, origin=None, tuples=None, constant=frozenset()
) -> Adjoint:
    """Reverse mode of the statements ``body`` for cotangents ``seeds`` (pairs of atom and cotangent) of their
    results; the names in ``constant`` get none."""
    outputs = set().union(set(), *(diff_names(atom) for atom, _ in seeds))
    active = (
        activity(body, inputs, outputs, ctx.helpers, ctx.flows)
        | (set(inputs) & outputs)
    ) - set(constant)
    check_closed_world(
        body, active, ctx.helpers, Backward.control, inputs, outputs, ctx.flows
    )
    back = Backward(body, active, ctx)
    back.tuples = dict(tuples or {})
    forward = back.forward(body)
    back.origin = origin
    for atom, seed in seeds:
        back.contribute(atom, seed)
    for stmt in reversed(forward):
        back.visit(stmt)
    back.origin = None
    cotangents = {
        name: (back.take(name) if name in active else None) for name in inputs
    }
    return Adjoint(forward, back.out, cotangents, back.arrays)


def reverse(
    fn: ir.Function,
    mode: Mode,
    helpers=frozenset(),
    flows=None,
    custom=None,
    requests: HelperRequests | None = None,
) -> ir.Function:
    """The ``mode.kind`` function of ``fn`` (in normal form, single assignment). The helper vjps its code
    calls are named in ``requests`` (one per helper and set of arguments with cotangents), for the caller
    to generate."""
    ctx = Context(
        Namer(used_names(fn)),
        helpers,
        flows or {},
        custom or {},
        requests if requests is not None else HelperRequests("vjp"),
    )
    namer = ctx.namer
    *stmts, ret = fn.body
    out = ret.value
    aux = None
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
    params = list(fn.params)
    if mode.kind == "vjp":
        # every parameter positional: the cotangent comes last
        params = [ir.Param(p.name) for p in params]
        seed_name = namer.fresh(f"{fn.name}_bar")
        params.append(ir.Param(seed_name))
        seed = cst.Name(seed_name)
    else:
        seed = call("rt.grad_seed", out)
    adj = adjoint(stmts, wrt, [(out, seed)], ctx, ret.origin)
    if mode.kind != "vjp" and not any(
        s.value.deep_equals(seed) for s in adj.backward if isinstance(s, ir.Assign)
    ):
        # no derivative reaches the output: its check (a real scalar, as JAX asks) still runs
        adj.backward.insert(
            0,
            ir.Assign(
                cst.Name(namer.fresh("_checked_output")),
                seed,
                replace(ret.origin, phase="backward") if ret.origin else None,
            ),
        )
    grads = []
    for name in wrt:
        g = adj.cotangents[name]
        if g is None:
            # zeros, never ``None``: a helper's caller asks for the cotangents its summary says flow
            # (``program.flows``, read conservatively: ``if c > lo`` in a loop's body), which this more
            # precise reading may find zero
            g = call("rt.tree_zeros_like", cst.Name(name))
        grads.append(g)
    grad = (
        grads[0]
        if isinstance(mode.wrt, int)
        else cst.Tuple([cst.Element(g) for g in grads])
    )
    result = _result(mode, out, aux, grad)
    body = [*adj.forward, *adj.backward, ir.Return(result, None)]
    name = f"{fn.name}_{mode.kind}"
    return ir.Function(
        name, tuple(params), tuple(body), fn.origin, docstring=_docstring(fn, mode, wrt)
    )


def _tuple(*items):
    return tuple_of(*items)


def _result(mode, out, aux, grad):
    if mode.kind == "value_and_grad":
        return _tuple(_tuple(out, aux) if aux is not None else out, grad)
    if aux is not None:
        return _tuple(grad, aux)
    return grad


def _docstring(fn, mode, wrt):
    names = ", ".join(f"`{w}`" for w in wrt)
    return {
        "grad": f"Gradient of `{fn.name}` with respect to {names}.",
        "value_and_grad": f"Value of `{fn.name}` and its gradient with respect to {names}.",
        "vjp": f"Cotangents of {names} for a cotangent of `{fn.name}`'s output.",
    }[mode.kind]
