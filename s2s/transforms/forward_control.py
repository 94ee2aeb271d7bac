"""Forward-mode rules for ``rt.cond``, ``rt.scan`` and ``rt.while_loop``: their functions carry tangents too.

A rule gets the ``Forward`` builder, the primal statement and its equation,
and emits the statements that replace it: local ``<fn>_jvp`` functions, then
the same control call on them, whose results are the primal results and
their tangents. Values the functions read from the enclosing scope keep
their tangents there too (closures).

- ``cond``: each branch ``<branch>_jvp`` takes the operands and the tangents
  of the active ones, and returns ``(outputs, output tangents)``.
- ``scan``: the body takes ``(carry, carry_dot)`` and ``(x, x_dot)`` pairs
  (where they carry tangents) and returns ``((carry, carry_dot), (y, y_dot))``;
  the scan's inputs and outputs are pairs alike. ``reverse=`` passes through.
- ``while_loop``: the loop runs on ``(carry, carry_dot)``; the test reads the carry.

Reverse-mode code is transformed the same way (forward over reverse):
``cond_with_residuals`` branches return pairs for their outputs and for their
residuals (``rt.unpair`` splits those, None for the branch not taken);
``while_loop_with_tape`` keeps a tape of pairs under the tape's own name (its
tangent is None), and ``while_loop_reverse`` runs its step on pairs over it.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import call, names_in, tuple_of
from ..errors import MissingRule
from ..passes.dataflow import free_names
from ..passes.dataflow import reads as names_in_statement
from ..rules.registry import tangent_name
from .activity import carry_parts, varied

ENCLOSING = frozenset({"xp", "rt"})


def _tuple(items) -> cst.Tuple:
    return tuple_of(*items)


def _parts(fn: ir.Function):
    *stmts, ret = fn.body
    return stmts, ret.value


def _free_tangents(fwd, functions) -> dict:
    """Tangents of the values the local ``functions`` read from the enclosing scope, where they have one."""
    free = set().union(*(free_names(f) for f in functions)) - ENCLOSING
    return {n: fwd.tan[n] for n in sorted(free) if n in fwd.tan}


class _Paired:
    """Builds one ``<fn>_jvp``: parameters that are pairs get unpacked, the body gets its tangents."""

    def __init__(self, fwd, fn: ir.Function, free: dict):
        self.fwd = fwd
        self.fn = fn
        self.params: list[ir.Param] = []
        self.prelude: list[ir.Assign] = []
        self.inputs = dict(free)

    def param(self, name: str, paired: bool) -> None:
        """Parameter ``name``: itself, or a ``(name, name_dot)`` pair unpacked first."""
        if not paired:
            self.params.append(ir.Param(name))
            return
        namer = self.fwd.namer
        pair = namer.fresh(f"{name}_pair")
        self.inputs[name] = namer.fresh(tangent_name(name))
        self.params.append(ir.Param(pair))
        self.prelude.append(
            ir.Assign(
                _tuple([cst.Name(name), cst.Name(self.inputs[name])]), cst.Name(pair)
            )
        )

    def tangent_param(self, name: str) -> None:
        """A separate parameter for ``name``'s tangent."""
        self.inputs[name] = self.fwd.namer.fresh(tangent_name(name))
        self.params.append(ir.Param(self.inputs[name]))

    def build(self, outputs, result) -> ir.Def:
        """The function: ``result(inner)`` is its return value, given the inner forward builder."""
        stmts, _ = _parts(self.fn)
        inner = self.fwd.nested(stmts, self.inputs, outputs)
        name = self.fwd.namer.fresh(f"{self.fn.name}_jvp")
        body = (*self.prelude, *inner.out, ir.Return(result(inner)))
        return ir.Def(
            ir.Function(name, tuple(self.params), body, self.fn.origin), self.fwd.origin
        )


def _pair(value, tangent) -> cst.Tuple:
    return _tuple([value, tangent])


def _elements(inner, atom, n: int) -> list:
    """The ``n`` elements of the tuple ``atom``: its items, or names it is unpacked into (with their tangents)."""
    if isinstance(atom, cst.Tuple):
        return [el.value for el in atom.elements]
    names = [inner.namer.fresh(f"{atom.value}_{i}") for i in range(n)]
    if atom.value in inner.active:
        inner.active = inner.active | set(names)
    inner.visit(ir.Assign(_tuple([cst.Name(m) for m in names]), atom, inner.origin))
    return [cst.Name(m) for m in names]


def _pairs(inner, atom, split: bool):
    """``(atom, atom_dot)``; with ``split``, a pair for each of the two elements of ``atom``."""
    if not split:
        return _pair(atom, inner.tangent(atom))
    return _tuple([_pair(p, inner.tangent(p)) for p in _elements(inner, atom, 2)])


def cond(fwd, stmt: ir.Assign, e, residuals=False):
    """``rt.cond`` (and, with ``residuals``, ``rt.cond_with_residuals``, whose branches return ``(out, res)``)."""
    if e.kwargs:
        raise MissingRule(
            f"forward mode of `rt.{e.name}` with keyword arguments is not supported",
            stmt.origin,
        )
    pred, operands = e.args[0], list(e.args[3:])
    branches = [fwd.defs[e.args[1].value], fwd.defs[e.args[2].value]]
    active = [i for i, op in enumerate(operands) if fwd.is_active(op)]
    free = _free_tangents(fwd, branches)
    defs = []
    for branch in branches:
        paired = _Paired(fwd, branch, free)
        for name in branch.param_names:
            paired.param(name, False)
        for i in active:
            paired.tangent_param(branch.param_names[i])
        _, ret = _parts(branch)
        defs.append(
            paired.build([ret], lambda inner, ret=ret: _pairs(inner, ret, residuals))
        )
    fwd.out.extend(defs)
    tangents = [fwd.tangent(operands[i]) for i in active]
    value = call(
        f"rt.{e.name}",
        pred,
        *(cst.Name(d.function.name) for d in defs),
        *operands,
        *tangents,
    )
    if not residuals:
        fwd.emit(_pair(stmt.target, fwd.tangent_target(stmt.target)), value)
        return
    # each branch's residuals come as a (value, tangent) pair, None for the branch not taken (rt.unpair)
    out, (res_true, res_false) = stmt.target.elements[0].value, (
        el.value for el in stmt.target.elements[1].value.elements
    )
    pairs = [
        cst.Name(fwd.namer.fresh(f"{r.value}_pair")) for r in (res_true, res_false)
    ]
    fwd.emit(_tuple([_pair(out, fwd.tangent_target(out)), _tuple(pairs)]), value)
    for res, pair in zip((res_true, res_false), pairs):
        fwd.emit(_pair(res, fwd.tangent_target(res)), call("rt.unpair", pair))


def cond_with_residuals(fwd, stmt: ir.Assign, e):
    cond(fwd, stmt, e, residuals=True)


def _split_item(fwd, body: ir.Function, xs):
    """``(body, parts)`` for a scan over a tuple display some of whose elements carry no tangent (a
    backward loop's ``(steps, _range)``: its counter is an integer) that the body unpacks at once
    (``(a, b), k = step``): the unpacking as one line per element (``(a, b) = step_0``, ``k = step_1``), so
    the elements without tangents stay without (a zero tangent for a counter gives ``0 * log(x)``, nan
    for a negative ``x``, in a power's rule); ``parts`` the elements' names. Else ``(body, None)``.
    """
    item_param = body.param_names[1]
    if not (
        isinstance(xs, cst.Tuple)
        and fwd.is_active(xs)
        and not all(fwd.is_active(el.value) for el in xs.elements)
    ):
        return body, None
    stmts, _ = _parts(body)
    uses = [s for s in ir.walk(stmts) if item_param in names_in_statement(s)]
    unpack = uses[0] if len(uses) == 1 else None
    if not (
        any(unpack is s for s in stmts)
        and isinstance(unpack, ir.Assign)
        and isinstance(unpack.value, cst.Name)
        and unpack.value.value == item_param
        and isinstance(unpack.target, cst.Tuple)
        and len(unpack.target.elements) == len(xs.elements)
    ):
        return body, None
    parts = [fwd.namer.fresh(f"{item_param}_{i}") for i in range(len(xs.elements))]
    lines = [
        ir.Assign(el.value, cst.Name(part), unpack.origin)
        for el, part in zip(unpack.target.elements, parts)
        if ir.target_names(el.value)  # (``()``: an empty element binds nothing)
    ]
    at = next(i for i, s in enumerate(body.body) if s is unpack)
    return body.with_body([*body.body[:at], *lines, *body.body[at + 1 :]]), parts


def scan(fwd, stmt: ir.Assign, e):
    body = fwd.defs[e.args[0].value]
    init = e.args[1]
    xs = e.args[2] if len(e.args) > 2 else None
    body, parts = _split_item(fwd, body, xs)
    # (split: which of the items' elements carry tangents)
    active = [fwd.is_active(el.value) for el in xs.elements] if parts else None
    carry_param, item_param = body.param_names
    stmts, ret = _parts(body)
    carry_out, y_out = (el.value for el in ret.elements)
    carry_target, ys_target = (el.value for el in stmt.target.elements)
    free = _free_tangents(fwd, [body])
    xs_active = xs is not None and fwd.is_active(xs)

    if parts is None:
        inputs = ([item_param] if xs_active else []) + list(free)
    else:
        inputs = [p for p, a in zip(parts, active) if a] + list(free)
    carry_varies = fwd.is_active(init) or bool(
        names_in(carry_out) & varied(stmts, inputs, fwd.helpers, fwd.flows)
    )
    ys_active = any(n in fwd.active for n in ir.target_names(ys_target))
    split = (
        _carry_parts(fwd, body, carry_param, carry_out, init, inputs)
        if carry_varies
        else None
    )

    if split is None:
        paired = _Paired(fwd, body, free)
        paired.param(carry_param, carry_varies)
    else:  # parts of the carry that never carry a tangent (a counter): none in the body
        body, unpack, carry_active = split
        paired = _Paired(fwd, body, free)
        _unpacked_carry(paired, carry_param, unpack, carry_active)
        every = frozenset(range(len(unpack.target.elements)))
        _without_tangents(fwd, carry_target, every - set(carry_active))
    if parts is None:
        paired.param(item_param, xs_active)
    else:  # each element its own pair, or itself where it carries no tangent
        paired.params.append(ir.Param(item_param))
        pairs = [
            fwd.namer.fresh(f"{p}_pair") if a else p for p, a in zip(parts, active)
        ]
        paired.prelude.append(
            ir.Assign(_tuple([cst.Name(p) for p in pairs]), cst.Name(item_param))
        )
        for part, pair, a in zip(parts, pairs, active):
            if a:
                paired.inputs[part] = fwd.namer.fresh(tangent_name(part))
                tangent = cst.Name(paired.inputs[part])
                paired.prelude.append(
                    ir.Assign(_tuple([cst.Name(part), tangent]), cst.Name(pair))
                )

    def result(inner):
        carry = (
            _pair(carry_out, inner.tangent(carry_out)) if carry_varies else carry_out
        )
        y = _pair(y_out, inner.tangent(y_out)) if ys_active else y_out
        return _tuple([carry, y])

    d = paired.build([carry_out, y_out] if ys_active else [carry_out], result)
    fwd.out.append(d)
    args = [
        cst.Name(d.function.name),
        _pair(init, fwd.tangent(init)) if carry_varies else init,
    ]
    if parts is not None:
        args.append(
            _tuple(
                [
                    _pair(el.value, fwd.tangent(el.value)) if a else el.value
                    for el, a in zip(xs.elements, active)
                ]
            )
        )
    elif xs is not None:
        args.append(_pair(xs, fwd.tangent(xs)) if xs_active else xs)
    value = call("rt.scan", *args, **dict(e.kwargs))
    carry = (
        _pair(carry_target, fwd.tangent_target(carry_target))
        if carry_varies
        else carry_target
    )
    ys = _pair(ys_target, fwd.tangent_target(ys_target)) if ys_active else ys_target
    fwd.emit(_tuple([carry, ys]), value)


def _test_on_pairs(fwd, test: str) -> ir.Def:
    """``def <test>_jvp(pair)``: the loop test's own lines, on the carry of a (carry, tangent) pair (no call
    of the test: a function that only calls a local one has nothing a batching rule could read).
    """
    namer = fwd.namer
    pair = namer.fresh("carry_pair")
    tested = fwd.defs[test]
    (carry,) = tested.param_names
    body = (
        ir.Assign(_tuple([cst.Name(carry), cst.Name("_")]), cst.Name(pair)),
        *tested.body,
    )
    return ir.Def(
        ir.Function(
            namer.fresh(f"{test}_jvp"), (ir.Param(pair),), body, fwd.defs[test].origin
        ),
        fwd.origin,
    )


def _carry_parts(fwd, body: ir.Function, carry_param: str, carry_out, init, inputs):
    """``(body, unpacking, active)`` where parts of the loop's carry never carry a tangent
    (``activity.carry_parts``): the body without its unpacking of the carry, that unpacking, the indices
    of the parts with tangents. Their slots in the carry's tangent stay (zeros, once a step ran), but the
    body gives those names none: a zero tangent times an infinite partial (``np.sqrt(k)`` at ``k = 0``)
    would be nan. Else None.
    """
    if not isinstance(init, cst.Tuple):
        return None
    stmts, _ = _parts(body)
    init_active = [fwd.is_active(el.value) for el in init.elements]
    found = carry_parts(
        stmts, carry_param, carry_out, init_active, inputs, fwd.helpers, fwd.flows
    )
    if found is None:
        return None
    unpack, active = found
    rest = [s for s in body.body[:-1] if s is not unpack]
    return body.with_body([*rest, body.body[-1]]), unpack, sorted(active)


def _unpacked_carry(paired: _Paired, carry_param: str, unpack, active) -> None:
    """The carry's pair unpacked, then the carry and its tangent into their parts: those in ``active``
    are tangents of the body's names, the others are not read (``_``)."""
    paired.param(carry_param, True)
    tangents = [
        paired.fwd.namer.fresh(tangent_name(el.value.value)) if i in active else "_"
        for i, el in enumerate(unpack.target.elements)
    ]
    paired.prelude += [
        unpack,
        ir.Assign(
            _tuple([cst.Name(t) for t in tangents]),
            cst.Name(paired.inputs[carry_param]),
            unpack.origin,
        ),
    ]
    for i in active:
        paired.inputs[unpack.target.elements[i].value.value] = tangents[i]


def _body_on_pairs(fwd, name: str, tape: bool, init=None) -> tuple[str, frozenset]:
    """The loop body ``name`` on (carry, tangent) pairs (made once per scope; with ``tape``, residuals come as
    a pair too; ``init``: the carry the loop starts from, whose parts without tangents stay so), and the
    indices of the carry's parts that never carry a tangent.
    """
    if name not in fwd.paired:
        constant = frozenset()
        body = fwd.defs[name]
        (carry_param,) = body.param_names
        _, ret = _parts(body)
        carry_out = ret.elements[0].value if tape else ret
        free = _free_tangents(fwd, [body])
        split = _carry_parts(fwd, body, carry_param, carry_out, init, free)
        if split is None:
            paired = _Paired(fwd, body, free)
            paired.param(carry_param, True)
        else:
            body, unpack, active = split
            paired = _Paired(fwd, body, free)
            _unpacked_carry(paired, carry_param, unpack, active)
            constant = frozenset(range(len(unpack.target.elements))) - set(active)
        d = paired.build([ret], lambda inner: _pairs(inner, ret, tape))
        fwd.out.append(d)
        fwd.paired[name] = (d.function.name, constant)
    return fwd.paired[name]


def _without_tangents(fwd, target, constant) -> None:
    """The loop's results for the carry's parts that never carry a tangent: inactive after it too (a
    counter read after the loop, ``np.sqrt(k)`` at ``k = 0``, would meet a zero tangent).
    """
    if constant and isinstance(target, cst.Tuple):
        fwd.active = fwd.active - {
            el.value.value
            for i, el in enumerate(target.elements)
            if i in constant and isinstance(el.value, cst.Name)
        }


def while_loop(fwd, stmt: ir.Assign, e, tape=False):
    """``rt.while_loop`` (and, with ``tape``, ``rt.while_loop_with_tape``, whose body returns ``(carry, res)``):
    the loop runs on (carry, tangent) pairs; a tape keeps pairs too, for ``while_loop_reverse``'s rule.
    """
    if e.kwargs:
        raise MissingRule(
            f"forward mode of `rt.{e.name}` with keyword arguments is not supported",
            stmt.origin,
        )
    test, body, init = e.args[0].value, e.args[1].value, e.args[2]
    test_fn = _test_on_pairs(fwd, test)
    fwd.out.append(test_fn)
    body_fn, constant = _body_on_pairs(fwd, body, tape, init)
    carry_target = stmt.target.elements[0].value if tape else stmt.target
    _without_tangents(fwd, carry_target, constant)
    value = call(
        f"rt.{e.name}",
        cst.Name(test_fn.function.name),
        cst.Name(body_fn),
        _pair(init, fwd.tangent(init)),
    )
    if not tape:
        fwd.emit(_pair(stmt.target, fwd.tangent_target(stmt.target)), value)
        return
    carry, tape_name = (el.value for el in stmt.target.elements)
    # the tape holds pairs itself: it has no separate tangent
    fwd.tan[tape_name.value] = "None"
    fwd.emit(_tuple([_pair(carry, fwd.tangent_target(carry)), tape_name]), value)


def while_loop_with_tape(fwd, stmt: ir.Assign, e):
    while_loop(fwd, stmt, e, tape=True)


def while_loop_reverse(fwd, stmt: ir.Assign, e):
    """The backward loop of a ``while``, over a tape of (carry, tangent) pairs: its step runs on pairs."""
    body_fwd, body_bwd, carry_bar, tape = e.args
    # a tape made in forward mode holds (carry, tangent) pairs
    if tape.value not in fwd.tan:
        raise MissingRule(
            "forward mode of `rt.while_loop_reverse` over a tape made without tangents",
            stmt.origin,
        )
    # the forward body, recomputed in the backward step
    body_fwd_on_pairs, _ = _body_on_pairs(fwd, body_fwd.value, tape=True)
    bwd = fwd.defs[body_bwd.value]
    paired = _Paired(fwd, bwd, _free_tangents(fwd, [bwd]))
    for name in bwd.param_names:
        paired.param(name, True)
    _, ret = _parts(bwd)
    d = paired.build([ret], lambda inner: _pair(ret, inner.tangent(ret)))
    fwd.out.append(d)
    value = call(
        "rt.while_loop_reverse",
        cst.Name(body_fwd_on_pairs),
        cst.Name(d.function.name),
        _pair(carry_bar, fwd.tangent(carry_bar)),
        tape,
    )
    fwd.emit(_pair(stmt.target, fwd.tangent_target(stmt.target)), value)


RULES = {
    "cond": cond,
    "cond_with_residuals": cond_with_residuals,
    "scan": scan,
    "while_loop": while_loop,
    "while_loop_with_tape": while_loop_with_tape,
    "while_loop_reverse": while_loop_reverse,
}
