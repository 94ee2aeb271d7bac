"""``jax.lax`` control flow written by hand, lowered where it is read into s2s's own control flow.

A call of ``jax.lax.cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan`` or ``map`` (found by
the object it names, however it is spelled: ``lax.scan``, ``jax.lax.scan``, ``from jax.lax import
scan``) becomes statements placed before the statement holding it, and the call's value is the
name(s) they bind. The functions it takes (a ``lambda``, a local ``def``, a function of the
program, or what calls one: ``functools.partial``, ``jax.jit``) are called there like any call, so
the ``inline`` pass puts a local function's body in place and a program function stays a helper.

- ``lax.cond(p, t, f, *ops)`` (also ``operand=`` and the old ``cond(p, x_t, t, x_f, f)``) is
  ``if p: out = t(*ops) else: out = f(*ops)``; ``lax.switch(i, [f0, f1, ...], *ops)`` is an
  ``if``/``elif`` chain on ``xp.clip(i, 0, n - 1)``, the index clamped as JAX clamps it;
- ``lax.while_loop(c, b, x)`` is ``v = x; while c(v): v = b(v)``;
- ``lax.fori_loop(lo, hi, b, x)`` is ``v = x; for i in range(lo, hi): v = b(i, v)``;

the ``control`` pass then lowers these as it lowers the user's own ``if``/``while``/``for``
(``rt.cond``, ``rt.while_loop``, ``rt.scan`` over ``rt.range``, a ``while`` loop for bounds known
only at run time).

- ``lax.scan(f, init, xs, length, reverse)`` and ``lax.map(f, xs)`` have no Python loop of their
  meaning (a tree of sequences stepped together, per-step outputs stacked leaf by leaf, the last
  step first): they become what ``control`` writes for a loop, a loop-body ``def`` that calls
  ``f`` and ``carry, ys = rt.scan(body, init, xs)`` (``reverse=True``; ``rt.range(length)``
  stands for ``xs=None``), whose rules transform the body in every mode.

``unroll`` and ``batch_size`` change how JAX compiles a loop, not what it computes: accepted and
left out. Anything else (an option computed at run time, ``*args`` unpacking, a function s2s
cannot read) is a located error.
"""

from __future__ import annotations

import ast
import sys

import libcst as cst

from .. import ir
from ..cstutil import call, child_nodes
from ..errors import S2SError, UnsupportedSyntax
from ..naming import Namer

KINDS = ("cond", "switch", "while_loop", "fori_loop", "scan", "map")
# options of how JAX compiles a loop, not of what it computes
IGNORED = {"scan": ("unroll",), "fori_loop": ("unroll",), "map": ("batch_size",)}


def kind(obj) -> str | None:
    """``"scan"`` for ``jax.lax.scan`` (by identity), and so on for ``KINDS``; None for anything else."""
    jax = sys.modules.get("jax")
    if jax is None or obj is None:
        return None
    lax = getattr(jax, "lax", None)
    for name in KINDS:
        if obj is getattr(lax, name, None):
            return name
    return None


class LaxControl:
    """Lowering of ``jax.lax`` control-flow calls, a part of ``resolve.Resolver``."""

    _lax_names = None

    def lax_namer(self) -> Namer:
        """One namer per function for what the lowering binds, avoiding every name it binds or reads."""
        if self._lax_names is None:
            self._lax_names = namer_for(self)
        return self._lax_names

    def lax_call(self, kind: str, node: cst.Call):
        what = f"`{self.source.file.module.code_for_node(node.func)}`"
        self._lax = CallSite(self, kind, node, what)
        try:
            return getattr(self, "_lax_" + kind)(self._lax)
        except S2SError as err:
            # raised at a call s2s wrote (which has no place in the file): the user's call is the place
            if err.origin is None:
                self.fail(node, err.message, err.hint, type(err))
            raise

    # --- cond and switch -------------------------------------------------------------------
    def _lax_cond(self, c):
        args = c.bind(
            ("pred", "true_fun", "false_fun"), star="operands", keywords=("operand",)
        )
        operands = args.get("operands", [])
        if "operand" in args:
            if operands:
                c.fail(
                    "positional operands and `operand=` together",
                    "pass the operands one way",
                )
            operands = [args["operand"]]
        branches = [args["true_fun"], args["false_fun"]]
        shaped = (operands, operands)
        # the deprecated ``cond(pred, true_operand, true_fun, false_operand, false_fun)``
        if (
            len(operands) == 2
            and not self._is_function(branches[0])
            and self._is_function(operands[1])
        ):
            true_x, true_fun, false_x, false_fun = branches[0], branches[1], *operands
            branches, shaped = [true_fun, false_fun], ([true_x], [false_x])
            operands = [true_x, false_x]
        out = c.fresh("cond")
        pred = self._atom(args["pred"], c, "pred")
        values = {id(o): self._atom(o, c) for o in operands}
        calls = [
            self._lax_apply(c, fun, [values[id(o)] for o in ops], role)
            for fun, ops, role in zip(branches, shaped, ("true_fun", "false_fun"))
        ]
        body, orelse = ((ir.Assign(cst.Name(out), value, c.origin),) for value in calls)
        self._pending.append(ir.If(pred, body, orelse, c.origin))
        return cst.Name(out)

    def _lax_switch(self, c):
        args = c.bind(("index", "branches"), star="operands", keywords=("operand",))
        operands = args.get("operands", [])
        if "operand" in args:
            if operands:
                c.fail(
                    "positional operands and `operand=` together",
                    "pass the operands one way",
                )
            operands = [args["operand"]]
        listed = args["branches"]
        if not isinstance(listed, (cst.List, cst.Tuple)) or not listed.elements:
            c.fail(
                "`branches` that are not a list of functions written in the call",
                "write them in the call: `lax.switch(i, [f, g, h], x)`",
                at=listed,
            )
        if any(isinstance(el, cst.StarredElement) for el in listed.elements):
            c.fail(
                "`*` unpacking in `branches`",
                "list the functions one by one",
                at=listed,
            )
        index = self._atom(args["index"], c, "index")
        values = [self._atom(o, c) for o in operands]
        last = len(listed.elements) - 1
        calls = [
            self._lax_apply(c, el.value, values, "branch") for el in listed.elements
        ]
        out = c.fresh("switch")
        if last == 0:
            self._pending.append(ir.Assign(cst.Name(out), calls[0], c.origin))
            return cst.Name(out)
        # JAX clamps the index into range
        clamped = c.fresh("index")
        self._pending.append(
            ir.Assign(
                cst.Name(clamped),
                call("xp.clip", index, cst.Integer("0"), cst.Integer(str(last))),
                c.origin,
            )
        )
        chain = (ir.Assign(cst.Name(out), calls[last], c.origin),)
        for k in reversed(range(last)):
            test = cst.Comparison(
                cst.Name(clamped),
                [cst.ComparisonTarget(cst.Equal(), cst.Integer(str(k)))],
            )
            chain = (
                ir.If(
                    test,
                    (ir.Assign(cst.Name(out), calls[k], c.origin),),
                    chain,
                    c.origin,
                ),
            )
        self._pending.extend(chain)
        return cst.Name(out)

    # --- loops -------------------------------------------------------------------------------
    def _lax_while_loop(self, c):
        args = c.bind(("cond_fun", "body_fun", "init_val"))
        value = c.fresh("loop_value")
        self._pending.append(
            ir.Assign(cst.Name(value), self.expr(args["init_val"]), c.origin)
        )
        test = self._lax_apply(c, args["cond_fun"], [cst.Name(value)], "cond_fun")
        step = self._lax_apply(c, args["body_fun"], [cst.Name(value)], "body_fun")
        self._pending.append(
            ir.While(test, (ir.Assign(cst.Name(value), step, c.origin),), c.origin)
        )
        return cst.Name(value)

    def _lax_fori_loop(self, c):
        args = c.bind(
            ("lower", "upper", "body_fun", "init_val"), keywords=IGNORED["fori_loop"]
        )
        bounds = [self._atom(args[k], c, k) for k in ("lower", "upper")]
        value = c.fresh("loop_value")
        self._pending.append(
            ir.Assign(cst.Name(value), self.expr(args["init_val"]), c.origin)
        )
        i = c.fresh("i")
        step = self._lax_apply(
            c, args["body_fun"], [cst.Name(i), cst.Name(value)], "body_fun"
        )
        self._pending.append(
            ir.For(
                cst.Name(i),
                cst.Call(cst.Name("range"), [cst.Arg(b) for b in bounds]),
                (ir.Assign(cst.Name(value), step, c.origin),),
                c.origin,
            )
        )
        return cst.Name(value)

    def _lax_scan(self, c):
        args = c.bind(
            ("f", "init", "xs", "length", "reverse"),
            keywords=("xs", "length", "reverse", *IGNORED["scan"], "_split_transpose"),
            required=2,
        )
        if "_split_transpose" in args:
            c.fail("`_split_transpose=`", "leave it out", at=args["_split_transpose"])
        reverse = (
            self._lax_constant(args["reverse"], c, "reverse")
            if "reverse" in args
            else False
        )
        if not isinstance(reverse, bool):
            c.fail(
                f"`reverse={reverse!r}`",
                "pass `reverse=True` or `reverse=False`",
                at=args["reverse"],
            )
        init = self._named_value(args["init"], c, "init")
        xs = args.get("xs")
        if xs is not None and not (isinstance(xs, cst.Name) and xs.value == "None"):
            xs = self._atom(xs, c, "xs")
            item = None
        elif "length" in args:
            # no sequence: ``length`` steps, the function called with ``None``
            xs = call("rt.range", self._atom(args["length"], c, "length"))
            item = cst.Name("None")
        else:
            c.fail("`xs=None` without `length`", "pass `length=` (the number of steps)")
        carry, x = c.fresh("carry"), c.fresh("x")
        new, y = c.fresh("carry"), c.fresh("y")
        step = self._lax_apply(
            c, args["f"], [cst.Name(carry), item or cst.Name(x)], "step"
        )
        body = [
            ir.Assign(
                cst.Tuple([cst.Element(cst.Name(new)), cst.Element(cst.Name(y))]),
                step,
                c.origin,
            ),
            ir.Return(
                cst.Tuple([cst.Element(cst.Name(new)), cst.Element(cst.Name(y))]),
                c.origin,
            ),
        ]
        return self._lax_loop(c, "scan_body", (carry, x), body, init, xs, reverse)

    def _lax_map(self, c):
        args = c.bind(("f", "xs"), keywords=IGNORED["map"])
        xs = self._atom(args["xs"], c, "xs")
        carry, x, y = c.fresh("carry"), c.fresh("x"), c.fresh("y")
        step = self._lax_apply(c, args["f"], [cst.Name(x)], "fn")
        body = [
            ir.Assign(cst.Name(y), step, c.origin),
            ir.Return(
                cst.Tuple([cst.Element(cst.Tuple([])), cst.Element(cst.Name(y))]),
                c.origin,
            ),
        ]
        _, ys = self._lax_loop(
            c, "map_body", (carry, x), body, cst.Tuple([]), xs, False, carried=False
        ).elements
        return ys.value

    def _lax_loop(self, c, base, params, body, init, xs, reverse, carried=True):
        """``def <base>(carry, x): ...`` then ``carry, ys = rt.scan(<base>, init, xs)``: what ``control`` writes
        for a loop (``_, ys = ...`` when nothing is ``carried``); the value is ``(carry, ys)``.
        """
        name = c.fresh(base)
        fn = ir.Function(
            name, tuple(ir.Param(p) for p in params), tuple(body), c.origin
        )
        self._pending.append(ir.Def(fn, c.origin))
        ys = c.fresh("ys")
        carry = c.fresh("carry") if carried else "_"
        scan = call(
            "rt.scan",
            cst.Name(name),
            init,
            xs,
            **({"reverse": cst.Name("True")} if reverse else {}),
        )
        target = cst.Tuple([cst.Element(cst.Name(carry)), cst.Element(cst.Name(ys))])
        assign = ir.Assign(target, scan, c.origin)
        self._pending.append(assign)
        value = cst.Tuple([cst.Element(cst.Name(carry)), cst.Element(cst.Name(ys))])
        self._lax_value = (value, assign)
        return value

    def lax_bound(self, target, value) -> bool:
        """``h, hs = lax.scan(...)``: the user's ``(carry, ys)`` target bound by the ``rt.scan`` statement itself,
        not copied from the names it binds; whether it was (the assignment is then done).
        """
        last = getattr(self, "_lax_value", None)
        if last is None or last[0] is not value or not isinstance(target, cst.Tuple):
            return False
        if len(target.elements) != 2:
            return False
        assign = last[1]
        # an ignored part of the carry or outputs (``_, ys = ...``) still has a value, and a cotangent
        target = _named(target, self._lax)
        for k, stmt in enumerate(self._pending):
            if stmt is assign:
                self._pending[k] = ir.Assign(target, assign.value, assign.origin)
                self._lax_value = None
                return True
        return False

    # --- the functions and values a call takes ------------------------------------------------
    def _lax_apply(self, c, fun, args, role):
        """The resolved call of ``fun`` (an argument of the ``lax`` call) on the atoms ``args``; a lambda is a
        local function named after its ``role`` (``step``, ``body_fun``, ...)."""
        if isinstance(fun, cst.Lambda):
            name = c.fresh(role)
            self._local(name, fun)
            fun = cst.Name(name)
        elif isinstance(fun, (cst.Name, cst.Attribute, cst.Call)):
            pass
        else:
            c.fail(
                f"`{c.code(fun)}` as the function of {c.what}",
                "pass a `lambda`, a function defined with `def`, or a function of your program",
                at=fun,
            )
        return self._Call(cst.Call(fun, [cst.Arg(a) for a in args]))

    def _is_function(self, node) -> bool:
        """Whether an argument names a function (for the old ``cond`` signature): a lambda, a local ``def``,
        or a function of the program."""
        if isinstance(node, cst.Lambda):
            return True
        if isinstance(node, cst.Name) and (
            node.value in self._local_fns or node.value in self._outer_fns
        ):
            return True
        obj = (
            self._callee_object(node)
            if isinstance(node, (cst.Name, cst.Attribute))
            else None
        )
        return callable(obj) and not hasattr(obj, "__array__")

    def _atom(self, node, c, base="operand"):
        """``node`` resolved; a name of its own first (in a pending statement) unless it is a name or literal,
        so the value is computed once, where the call computes it."""
        value = self.expr(node)
        if isinstance(value, (cst.Name, cst.Integer, cst.Float)):
            return value
        name = c.fresh(base)
        self._pending.append(ir.Assign(cst.Name(name), value, c.origin))
        return cst.Name(name)

    def _named_value(self, node, c, base):
        """``node`` resolved, under a name of its own unless it is one: a loop's initial carry, which a batched
        loop gives the batch axis (a literal would keep none)."""
        value = self.expr(node)
        if isinstance(value, cst.Name):
            return value
        name = c.fresh(base)
        self._pending.append(ir.Assign(cst.Name(name), value, c.origin))
        return cst.Name(name)

    def _lax_constant(self, node, c, option):
        """The value of an option that must be known when s2s reads the code: a literal or a module constant."""
        obj = (
            self._callee_object(node)
            if isinstance(node, (cst.Name, cst.Attribute))
            else None
        )
        if obj is not None:
            return obj
        try:
            return ast.literal_eval(c.code(node))
        except (ValueError, SyntaxError):
            c.fail(
                f"`{option}=` computed at run time",
                f"write it as a constant (`{option}=True`)",
                at=node,
            )


class CallSite:
    """One ``lax`` call being lowered: its arguments by JAX's parameter names, fresh names, errors at it."""

    def __init__(self, resolver, kind, node, what):
        self.resolver = resolver
        self.kind = kind
        self.node = node
        self.what = what
        self.origin = resolver.source.origin(node)
        self.namer = resolver.lax_namer()

    def code(self, node) -> str:
        return self.resolver.source.file.module.code_for_node(node)

    def fail(self, message, hint=None, at=None):
        self.resolver.fail(
            at if at is not None else self.node,
            f"{self.what}: {message}",
            hint,
            UnsupportedSyntax,
        )

    def fresh(self, base: str) -> str:
        name = self.namer.fresh(base)
        self.resolver.locals.add(name)
        return name

    def bind(self, names, star=None, keywords=(), required=None) -> dict:
        """The call's argument nodes by parameter name: ``names`` positional (the first ``required``, all by
        default, required), ``star`` collecting more, ``keywords`` also allowed by keyword only.
        """
        required = len(names) if required is None else required
        out, extra = {}, []
        positional = [a for a in self.node.args if a.keyword is None]
        for a in self.node.args:
            if a.star:
                self.fail(
                    f"`{a.star}` argument unpacking",
                    "pass the arguments one by one",
                    at=a,
                )
        for k, a in enumerate(positional):
            if k < len(names):
                out[names[k]] = a.value
            elif star is not None:
                extra.append(a.value)
            else:
                self.fail(f"takes at most {len(names)} positional arguments", at=a)
        if extra:
            out[star] = extra
        allowed = set(names) | set(keywords)
        for a in self.node.args:
            if a.keyword is None:
                continue
            key = a.keyword.value
            if key not in allowed:
                self.fail(f"unexpected keyword argument `{key}`", None, at=a)
            if key in out:
                self.fail(f"got `{key}` twice", None, at=a)
            out[key] = a.value
        missing = [n for n in names[:required] if n not in out]
        if missing:
            self.fail(f"missing argument `{missing[0]}`", None)
        for name in IGNORED.get(self.kind, ()):
            out.pop(name, None)
        return out


def _named(target, c):
    """``target`` with each ``_`` a fresh name (``_`` is where generated code binds nothing)."""
    if isinstance(target, cst.Name):
        return cst.Name(c.fresh("unused")) if target.value == "_" else target
    return target.with_changes(
        elements=[el.with_changes(value=_named(el.value, c)) for el in target.elements]
    )


def _names_in_source(node) -> set[str]:
    return {n.value for n in _walk(node) if isinstance(n, cst.Name)}


def _walk(node):
    yield node
    for child in child_nodes(node):
        yield from _walk(child)


def namer_for(resolver) -> Namer:
    """A namer avoiding every name the function binds or reads, and the program's module-level names."""
    used = (
        set(resolver.locals) | set(resolver.renames.values()) | set(resolver._local_fns)
    )
    used |= set(resolver.result.scope.values) | _names_in_source(resolver.source.node)
    return Namer(used)


__all__ = ["KINDS", "CallSite", "LaxControl", "kind", "namer_for"]
