"""Reverse-mode rules for ``rt.cond``, ``rt.scan`` and ``rt.while_loop``: they transform their branch and body functions.

A rule gets the ``Backward`` builder, the primal statement and its equation.
It returns the statements that replace the primal one in the forward pass
(ending with the rewritten call) and a *plan*: a function that, called when
the backward pass reaches the statement, emits its adjoint.

- ``scan``: the forward body ``<body>_fwd`` also returns the values its
  backward pass reads (residuals), stacked over the steps as ``<name>_steps``;
  the backward pass is a reverse ``scan`` of ``<body>_bwd`` over those
  residuals, carrying the carry's cotangent and the cotangents of the values
  the body reads from outside (weights), and stacking the cotangents of ``xs``.
  Values that are static or come straight from ``xs`` are recomputed, not saved.
- ``cond``: each forward branch returns its residuals, ``rt.cond_with_residuals``
  keeps both (zeros for the branch not taken when the predicate is traced); the
  backward pass is a ``cond`` on the same predicate of ``<branch>_bwd``
  functions, which return the cotangents of the operands and of the values the
  branches read from outside.
- ``while_loop``: the forward body ``<body>_fwd`` returns its residuals too,
  but the loop (``rt.while_loop_with_tape``) keeps only checkpointed carries;
  the backward loop ``rt.while_loop_reverse`` recomputes each step's residuals
  from its carry with ``<body>_fwd`` and runs ``<body>_bwd`` on them, last
  step first, carrying the carry's and the weights' cotangents.

Local functions in a forward body (an inner loop's ``<body>_fwd``) are
recomputed in the backward one, never saved.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .. import ir
from ..cstutil import call, dotted, names_in, tuple_of
from ..errors import MissingRule
from ..naming import bar
from ..passes.dataflow import free_names, reads, writes
from ..passes.normal_form import is_static
from .activity import carry_parts, varied

ENCLOSING = frozenset({"xp", "rt"})

# what a ``for`` loop runs over, made from its sequence: Python objects (``Elements``) that a compiled loop or
# branch cannot return, and cheap to make again, so a backward body recomputes them. (``rt.range`` is saved: a
# range made again from a bound that a branch returned would be a run-time range.)
LOOP_INPUTS = frozenset(
    {
        "rt.iterate",
        "rt.enumerate",
        "rt.zip",
        "rt.reversed",
        "rt.items",
        "rt.keys",
        "rt.values",
    }
)


def _tuple(items) -> cst.Tuple:
    # a nested tuple display keeps its parentheses (``return out, cache`` has none: it would be flattened)
    return tuple_of(*items)


def _pack(items) -> cst.BaseExpression:
    """One item as itself, several as a tuple."""
    return items[0] if len(items) == 1 else _tuple(items)


def _names(names) -> list[cst.Name]:
    return [cst.Name(n) for n in names]


def _function_name(e, i) -> str:
    return e.args[i].value


def _bound(stmts) -> set[str]:
    return set().union(set(), *(writes(s) for s in stmts))


def _reads(stmts) -> set[str]:
    return set().union(set(), *(reads(s) for s in stmts))


def _residuals(forward, backward, params, recomputable):
    """What the backward statements read of the forward ones: names to save, and statements to recompute.

    ``recomputable`` names are recomputed from their statements (parameters
    among them reach the backward step directly); so are local functions
    (the forward body of an inner ``while`` loop, which its backward loop calls)
    and loop inputs (``LOOP_INPUTS``: the values they are made of are saved instead).
    """
    recomputable = set(recomputable) | {
        s.function.name for s in forward if isinstance(s, ir.Def)
    }
    recomputable |= {
        n
        for s in forward
        if isinstance(s, ir.Assign)
        and isinstance(s.value, cst.Call)
        and dotted(s.value.func) in LOOP_INPUTS
        for n in ir.target_names(s.target)
    }
    bound = _bound(forward) | set(params)
    by_target = {n: s for s in forward for n in _bound([s])}
    stack = list((_reads(backward) - _bound(backward)) & bound)
    saved, recompute, seen = set(), [], set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name not in recomputable:
            saved.add(name)
            continue
        stmt = by_target.get(name)
        if stmt is not None and all(stmt is not r for r in recompute):
            recompute.append(stmt)
            stack.extend((_reads([stmt]) - _bound([stmt])) & bound)
    return sorted(saved), [s for s in forward if any(s is r for r in recompute)]


def _recomputable(forward, item: str | None = None, invariant=frozenset()) -> set[str]:
    """Names a backward step can recompute instead of saving: static values, unpackings of the step's input
    ``item``, and items read out of values from outside the loop (``invariant``): ``params["W"]`` in a loop
    body is the same array at every step, never stacked per step."""
    found = {item} if item else set()
    for stmt in forward:
        if not isinstance(stmt, ir.Assign):
            continue
        inputs = names_in(stmt.value) - ENCLOSING
        unpack = isinstance(stmt.value, cst.Name) and stmt.value.value in found
        known = inputs <= found | invariant
        access = isinstance(stmt.value, cst.Subscript) and known
        if unpack or access or (known and _index_arithmetic(stmt.value)):
            found |= set(ir.target_names(stmt.target))
    return found


# what an index is computed with (``t + 1``, ``2 * k - 1``): a matrix product or a power is no index
_INDEX_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)


def _index_arithmetic(node) -> bool:
    """Static values, and sums and products of names and numbers: ``input_size + 1`` in
    ``Hin[t, :, 1 : input_size + 1] = x`` (a slice built from it, no array, could not be stacked), or
    ``pos[i] - pos[j]`` of rows read again: cheaper to compute again in a backward step than to save per
    step."""
    if is_static(node) or isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.BinaryOperation):
        return (
            isinstance(node.operator, _INDEX_OPERATORS)
            and _index_arithmetic(node.left)
            and _index_arithmetic(node.right)
        )
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Minus) and _index_arithmetic(
            node.expression
        )
    return False


def _constant_parts(back, stmts, carry_param, carry_out, init, inputs, target):
    """``(in the body, after the loop)``: the names a loop body unpacks its carry into that never carry a
    derivative (``carry_parts``: a counter the loop carries), and the loop's results for them (in the tuple
    ``target``). Neither gets a cotangent (``k ** 0.5``'s partial at ``k = 0`` is infinite, and raises for
    a Python float), nor does a counter read after the loop."""
    none = (frozenset(), frozenset())
    if not isinstance(init, cst.Tuple):
        return none
    init_active = [bool(names_in(el.value) & back.active) for el in init.elements]
    found = carry_parts(
        stmts, carry_param, carry_out, init_active, inputs, back.helpers, back.flows
    )
    if found is None:
        return none

    def without_derivatives(names):
        return frozenset(
            el.value.value
            for i, el in enumerate(names.elements)
            if i not in found[1] and isinstance(el.value, cst.Name)
        )

    unpack = found[0]
    after = (
        without_derivatives(target)
        if isinstance(target, cst.Tuple) and len(target.elements) == len(init_active)
        else frozenset()
    )
    return without_derivatives(unpack.target), after


def _body_parts(fn: ir.Function):
    *stmts, ret = fn.body
    return stmts, ret.value


# --- scan ------------------------------------------------------------------------------


def scan(back, stmt: ir.Assign, e):
    kwargs = dict(e.kwargs)
    # a scan from the last step (a backward loop, differentiated again)
    backwards = kwargs.pop("reverse", cst.Name("False"))
    if kwargs or not (
        isinstance(backwards, cst.Name) and backwards.value in ("True", "False")
    ):
        raise MissingRule(
            "reverse mode of `rt.scan` with keyword arguments other than `reverse=True` is not supported",
            stmt.origin,
        )
    backwards = backwards.value == "True"
    body = back.defs[_function_name(e, 0)]
    init, xs = e.args[1], e.args[2]
    carry_param, item_param = body.param_names
    stmts, ret = _body_parts(body)
    carry_out, y_out = (el.value for el in ret.elements)
    carry_target, ys_target = (el.value for el in stmt.target.elements)
    outer_free = sorted(free_names(body) - ENCLOSING)
    free_active = [n for n in outer_free if n in back.active]
    xs_active = bool(names_in(xs) & back.active)
    ys_wanted = [n for n in ir.target_names(ys_target) if n != "_"]
    ys_active = any(n in back.active for n in ys_wanted)

    inputs = ([item_param] if xs_active else []) + free_active
    init_active = bool(names_in(init) & back.active)
    carry_varies = init_active or bool(
        names_in(carry_out) & varied(stmts, inputs, back.helpers, back.flows)
    )
    if carry_varies:
        inputs = [carry_param, *inputs]

    namer = back.namer
    carry_bar = namer.fresh(
        bar(carry_out.value) if isinstance(carry_out, cst.Name) else "carry_bar"
    )
    y_bar = namer.fresh(bar(y_out.value) if isinstance(y_out, cst.Name) else "ys_bar")
    seeds = [(carry_out, cst.Name(carry_bar))] if carry_varies else []
    if ys_active and not (isinstance(y_out, cst.Name) and y_out.value == "None"):
        seeds.append((y_out, cst.Name(y_bar)))

    # the carry a tuple of the carried values: its cotangent is the tuple of theirs
    packed = {carry_param: len(init.elements)} if isinstance(init, cst.Tuple) else {}
    constant, after = (
        _constant_parts(
            back, stmts, carry_param, carry_out, init, inputs[1:], carry_target
        )
        if carry_varies
        else (frozenset(), frozenset())
    )
    back.active = back.active - after
    adj = back.nested(stmts, inputs, seeds, stmt.origin, packed, constant)
    saved, recompute = _residuals(
        adj.forward,
        adj.backward,
        body.param_names,
        _recomputable(adj.forward, item_param, set(outer_free)),
    )
    steps = [namer.fresh(f"{n}_steps") for n in saved]

    # forward: the body also returns this step's residuals, stacked by the scan
    fwd_name = namer.fresh(f"{body.name}_fwd")
    fwd_ret = ir.Return(_tuple([carry_out, _tuple([y_out, _tuple(_names(saved))])]))
    fwd = ir.Function(fwd_name, body.params, (*adj.forward, fwd_ret), body.origin)
    # the stacked per-step outputs: one name when the loop's own ys are ignored (a loop of zero steps over a
    # Python sequence has no outputs to unpack, and its backward loop never reads them)
    ys_ignored = isinstance(ys_target, cst.Name) and ys_target.value == "_"
    per_step = (
        cst.Name(namer.fresh(f"{body.name}_steps")) if ys_ignored and saved else None
    )
    outputs = ys_target if ys_ignored else _tuple([ys_target, _tuple(_names(steps))])
    target = _tuple([carry_target, per_step if per_step is not None else outputs])
    value = call(
        "rt.scan",
        cst.Name(fwd_name),
        init,
        xs,
        **({"reverse": cst.Name("True")} if backwards else {}),
    )
    forward = [ir.Def(fwd, stmt.origin), ir.Assign(target, value, stmt.origin)]

    def plan(back):
        # the carry's cotangent coming in: from the scan's outputs (zeros where none reached them)
        outer_carry = _outer_cotangent(back, carry_target, init)
        outer_ys = (
            _outer_cotangent(back, ys_target)
            if len(seeds) > (1 if carry_varies else 0)
            else None
        )
        carry = _backward_carry(
            back,
            adj,
            carry_param,
            carry_bar,
            free_active,
            init,
            outer_carry,
            carry_varies,
        )
        residuals = _tuple(_names(saved))
        item_parts = [
            _tuple([cst.Name("_"), residuals]) if per_step is not None else residuals
        ]
        # the loop's own sequence also gives the backward scan its length when nothing else does (per-step outputs
        # under one name are None after zero steps over a Python sequence)
        needs_item = (
            item_param in _reads(adj.backward) | _reads(recompute)
            or xs_active
            or per_step is not None
        )
        needs_item = needs_item or not (saved or outer_ys is not None)
        if needs_item:
            item_parts.append(cst.Name(item_param))
        if outer_ys is not None:
            item_parts.append(cst.Name(y_bar))
        bwd_item = namer.fresh("step")
        prelude = [*carry.prelude, ir.Assign(_pack(item_parts), cst.Name(bwd_item))]
        x_bar = adj.cotangents.get(item_param) if xs_active else None
        bwd_ret = ir.Return(
            _tuple(
                [
                    _pack(carry.new) if carry.new else _tuple([]),
                    x_bar if x_bar is not None else cst.Name("None"),
                ]
            )
        )
        bwd_name = namer.fresh(f"{body.name}_bwd")
        bwd = ir.Function(
            bwd_name,
            (ir.Param(carry.name), ir.Param(bwd_item)),
            (*prelude, *recompute, *adj.backward, bwd_ret),
            body.origin,
        )
        xs_parts = (
            [per_step if per_step is not None else _tuple(_names(steps))]
            + ([xs] if needs_item else [])
            + ([outer_ys] if outer_ys is not None else [])
        )
        xs_bar = (
            namer.fresh(bar(xs.value) if isinstance(xs, cst.Name) else "xs_bar")
            if x_bar is not None
            else "_"
        )
        back.out.append(ir.Def(bwd, back.origin))
        # the backward loop runs the other way
        direction = {} if backwards else {"reverse": cst.Name("True")}
        value = call(
            "rt.scan",
            cst.Name(bwd_name),
            _pack(carry.init) if carry.init else _tuple([]),
            _pack(xs_parts),
            **direction,
        )
        back.emit(
            _tuple(
                [
                    _pack(_names(carry.results)) if carry.results else _tuple([]),
                    cst.Name(xs_bar),
                ]
            ),
            value,
        )
        carry.contribute(back, init)
        if x_bar is not None:
            back.contribute(xs, cst.Name(xs_bar))

    return forward, plan


def _first_name(atom, default):
    names = ir.target_names(atom) if isinstance(atom, (cst.Name, cst.Tuple)) else []
    return names[0] if len(names) == 1 else default


def _outer_cotangent(back, target, like=None) -> cst.BaseExpression:
    """The cotangent of a control-flow result ``target`` (a name or tuple of names), zeros where none reached it.

    ``like``: what the result is shaped as (a loop's initial carry), for the zeros of an ignored part of it
    (``h, _ = scan(...)``: the backward loop adds to them); else an ignored result's cotangent is None.
    """
    if isinstance(target, cst.Name):
        if target.value == "_":  # an ignored result: nothing flows back into it
            return (
                cst.Name("None") if like is None else call("rt.tree_zeros_like", like)
            )
        g = back.take(target.value)
        return g if g is not None else back.zeros(target.value)
    parts = (
        [el.value for el in like.elements]
        if isinstance(like, cst.Tuple) and len(like.elements) == len(target.elements)
        else [None] * len(target.elements)
    )
    return _tuple(
        [
            _outer_cotangent(back, el.value, part)
            for el, part in zip(target.elements, parts)
        ]
    )


# --- cond --------------------------------------------------------------------------------


def cond(back, stmt: ir.Assign, e, with_residuals=False):
    """``rt.cond``; with ``with_residuals``, ``rt.cond_with_residuals`` (a gradient's forward ``if``, differentiated
    again), whose branches return ``(out, res)`` and whose target is ``out, (res_true, res_false)``.
    """
    if e.kwargs:
        raise MissingRule(
            f"reverse mode of `rt.{e.name}` with keyword arguments is not supported",
            stmt.origin,
        )
    pred, operands = e.args[0], list(e.args[3:])
    branches = [back.defs[_function_name(e, 1)], back.defs[_function_name(e, 2)]]
    out_target = stmt.target.elements[0].value if with_residuals else stmt.target
    own = (
        [el.value.value for el in stmt.target.elements[1].value.elements]
        if with_residuals
        else [None, None]
    )
    targets = ir.target_names(out_target)
    active_ops = [i for i, op in enumerate(operands) if names_in(op) & back.active]
    free = sorted(set().union(*(free_names(b) for b in branches)) - ENCLOSING)
    free_active = [n for n in free if n in back.active]
    namer = back.namer
    out_bars = {t: namer.fresh(bar(t)) for t in [*targets, *own] if t in back.active}

    plans = []
    for branch, own_name in zip(branches, own):
        stmts, ret = _body_parts(branch)
        params = branch.param_names
        inputs = [params[i] for i in active_ops] + [
            n for n in free_active if n in free_names(branch)
        ]
        out, own_res = (
            (ret.elements[0].value, ret.elements[1].value)
            if with_residuals
            else (ret, None)
        )
        returned = (
            [out]
            if isinstance(out_target, cst.Name)
            else [el.value for el in out.elements]
        )
        seeds = [
            (atom, cst.Name(out_bars[t]))
            for atom, t in zip(returned, targets)
            if t in out_bars
        ]
        if own_name in out_bars:
            seeds.append((own_res, cst.Name(out_bars[own_name])))
        adj = back.nested(stmts, inputs, seeds, stmt.origin)
        saved, recompute = _residuals(adj.forward, adj.backward, params, set(params))
        plans.append((branch, adj, saved, recompute, out, own_res))
    # without residuals the forward pass is the primal call
    keeps = any(p[2] for p in plans)
    forward = []
    for branch, adj, saved, _, out, own_res in plans:
        kept = _tuple(_names(saved))
        result = (
            _tuple([out, _tuple([own_res, kept]) if with_residuals else kept])
            if keeps
            else branch.body[-1].value
        )
        name = namer.fresh(f"{branch.name}_fwd")
        forward.append(
            ir.Def(
                ir.Function(
                    name,
                    branch.params,
                    (*adj.forward, ir.Return(result)),
                    branch.origin,
                ),
                stmt.origin,
            )
        )
    residuals = (
        [namer.fresh(f"res_{label}") for label in ("true", "false")] if keeps else []
    )
    func = "rt.cond_with_residuals" if keeps or with_residuals else "rt.cond"
    value = call(func, pred, *(cst.Name(d.function.name) for d in forward), *operands)
    if not keeps:
        forward.append(ir.Assign(stmt.target, value, stmt.origin))
    elif not with_residuals:
        forward.append(
            ir.Assign(
                _tuple([stmt.target, _tuple(_names(residuals))]), value, stmt.origin
            )
        )
    else:  # each branch's own residuals and the ones kept for its backward branch, None for the branch not taken
        pairs = [namer.fresh(f"{n}_pair") for n in own]
        forward.append(
            ir.Assign(_tuple([out_target, _tuple(_names(pairs))]), value, stmt.origin)
        )
        for own_name, pair, res in zip(own, pairs, residuals):
            forward.append(
                ir.Assign(
                    _tuple(_names([own_name, res])),
                    call("rt.unpair", cst.Name(pair)),
                    stmt.origin,
                )
            )

    def plan(back):
        for t, name in out_bars.items():
            g = back.take(t)
            back.emit(cst.Name(name), g if g is not None else back.zeros(t))
        wanted = [("op", i) for i in active_ops] + [("free", n) for n in free_active]
        bwds = []
        for (branch, adj, saved, recompute, _, _), res in zip(
            plans, residuals or [None, None]
        ):
            params = branch.param_names
            results = []
            for kind, key in wanted:
                name = params[key] if kind == "op" else key
                g = adj.cotangents.get(name)
                results.append(
                    g
                    if g is not None
                    else back.zeros(operands[key].value if kind == "op" else key)
                )
            prelude = [ir.Assign(_tuple(_names(saved)), cst.Name(res))] if saved else []
            body = (
                *prelude,
                *recompute,
                *adj.backward,
                ir.Return(_pack(results) if results else _tuple([])),
            )
            fn = ir.Function(
                namer.fresh(f"{branch.name}_bwd"), branch.params, body, branch.origin
            )
            bwds.append(fn)
            back.out.append(ir.Def(fn, back.origin))
        value = call("rt.cond", pred, *(cst.Name(f.name) for f in bwds), *operands)
        atoms = [
            operands[key] if kind == "op" else cst.Name(key) for kind, key in wanted
        ]
        if len(atoms) == 1:
            back.contribute(atoms[0], value)
        elif atoms:
            back.contribute_many(atoms, value)

    return forward, plan


def cond_with_residuals(back, stmt: ir.Assign, e):
    return cond(back, stmt, e, with_residuals=True)


def _unsupported_twice(back, stmt: ir.Assign, e):
    raise MissingRule(
        "reverse mode through the reverse of a `while` loop (the gradient of a gradient) is not supported",
        stmt.origin,
        "take second derivatives of functions with `while` loops forward over reverse: s2s.hessian, or s2s.jvp of s2s.grad",
    )


def while_loop(back, stmt: ir.Assign, e):
    """A ``while`` loop: the forward loop keeps a tape of checkpointed carries, the backward loop recomputes.

    The trip count is known only at run time, so residuals are not stacked
    per step: ``rt.while_loop_reverse`` recomputes each step's residuals from
    its carry (``runtime/checkpoints.py`` gives the memory and time cost).
    """
    if e.kwargs:
        raise MissingRule(
            "reverse mode of `rt.while_loop` with keyword arguments is not supported",
            stmt.origin,
        )
    test, body = _function_name(e, 0), back.defs[_function_name(e, 1)]
    init = e.args[2]
    (carry_param,) = body.param_names
    stmts, carry_out = _body_parts(body)
    free_active = [n for n in sorted(free_names(body) - ENCLOSING) if n in back.active]
    namer = back.namer
    carry_bar = namer.fresh(
        bar(carry_out.value) if isinstance(carry_out, cst.Name) else "carry_bar"
    )

    constant, after = _constant_parts(
        back, stmts, carry_param, carry_out, init, free_active, stmt.target
    )
    back.active = back.active - after
    adj = back.nested(
        stmts,
        [carry_param, *free_active],
        [(carry_out, cst.Name(carry_bar))],
        stmt.origin,
        constant=constant,
    )
    saved, recompute = _residuals(
        adj.forward, adj.backward, body.param_names, _recomputable(adj.forward)
    )

    # forward: the body also returns the residuals its backward step reads; the loop keeps a tape of carries
    fwd_name = namer.fresh(f"{body.name}_fwd")
    fwd_ret = ir.Return(_tuple([carry_out, _tuple(_names(saved))]))
    fwd = ir.Function(fwd_name, body.params, (*adj.forward, fwd_ret), body.origin)
    tape = namer.fresh(f"{_first_name(stmt.target, 'while')}_tape")
    value = call("rt.while_loop_with_tape", cst.Name(test), cst.Name(fwd_name), init)
    forward = [
        ir.Def(fwd, stmt.origin),
        ir.Assign(_tuple([stmt.target, cst.Name(tape)]), value, stmt.origin),
    ]

    def plan(back):
        carry = _backward_carry(
            back,
            adj,
            carry_param,
            carry_bar,
            free_active,
            init,
            _outer_cotangent(back, stmt.target),
        )
        residuals = namer.fresh("residuals")
        prelude = [
            *carry.prelude,
            *([ir.Assign(_tuple(_names(saved)), cst.Name(residuals))] if saved else []),
        ]
        bwd_name = namer.fresh(f"{body.name}_bwd")
        bwd_body = (*prelude, *recompute, *adj.backward, ir.Return(_pack(carry.new)))
        bwd = ir.Function(
            bwd_name, (ir.Param(carry.name), ir.Param(residuals)), bwd_body, body.origin
        )
        back.out.append(ir.Def(bwd, back.origin))
        value = call(
            "rt.while_loop_reverse",
            cst.Name(fwd_name),
            cst.Name(bwd_name),
            _pack(carry.init),
            cst.Name(tape),
        )
        back.emit(_pack(_names(carry.results)), value)
        carry.contribute(back, init)

    return forward, plan


@dataclass
class _BackwardCarry:
    """The carry of a backward loop: the loop carry's cotangent (when it varies) and one accumulator per weight.

    ``name`` is the backward body's carry parameter, ``prelude`` unpacks it into
    ``params``; ``new`` is what the body returns as the next carry, ``init``
    what the loop starts from, ``results`` the names of its totals.
    """

    varies: bool
    accumulate: list
    params: list
    name: str
    prelude: list
    new: list
    init: list
    results: list

    def contribute(self, back, loop_init) -> None:
        """After the backward loop: its totals flow to the loop's ``init`` and to the weights."""
        if self.varies:
            back.contribute(loop_init, cst.Name(self.results[0]))
        for weight, total in zip(
            self.accumulate, self.results[1:] if self.varies else self.results
        ):
            back.add(weight, cst.Name(total))


def _backward_carry(
    back, adj, carry_param, carry_bar, free_active, loop_init, outer_carry, varies=True
) -> _BackwardCarry:
    namer = back.namer
    accumulate = [n for n in free_active if adj.cotangents.get(n) is not None]
    accumulators = [namer.fresh(bar(n)) for n in accumulate]
    params = ([carry_bar] if varies else []) + accumulators
    name = namer.fresh("carry_bar") if len(params) != 1 else params[0]
    prelude = (
        [ir.Assign(_tuple(_names(params)), cst.Name(name))] if len(params) > 1 else []
    )
    carry_in_bar = adj.cotangents.get(carry_param) if varies else None
    if varies and carry_in_bar is None:
        carry_in_bar = call("rt.tree_zeros_like", cst.Name(carry_bar))
    arrays = back.arrays | adj.arrays
    new = ([carry_in_bar] if varies else []) + [
        _accumulated(acc, adj.cotangents[n], n in arrays)
        for acc, n in zip(accumulators, accumulate)
    ]
    init = ([outer_carry] if varies else []) + [
        back.zeros(n, arrays) for n in accumulate
    ]
    results = ([namer.fresh(bar(_first_name(loop_init, "init")))] if varies else []) + [
        namer.fresh(bar(n)) for n in accumulate
    ]
    return _BackwardCarry(varies, accumulate, params, name, prelude, new, init, results)


def _accumulated(acc: str, cotangent, is_array: bool) -> cst.BaseExpression:
    """``acc + cotangent`` (``rt.tree_add`` where the value may be a container)."""
    if is_array:
        return cst.BinaryOperation(cst.Name(acc), cst.Add(), cotangent)
    return call("rt.tree_add", cst.Name(acc), cotangent)


RULES = {
    "scan": scan,
    "cond": cond,
    "cond_with_residuals": cond_with_residuals,
    "while_loop": while_loop,
    "while_loop_with_tape": _unsupported_twice,
    "while_loop_reverse": _unsupported_twice,
}
