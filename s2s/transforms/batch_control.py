"""Batching rules for ``rt.cond``, ``rt.scan`` and ``rt.while_loop``: their functions are batched too.

A rule gets the ``Batch`` transform, the primal statement and its equation,
and emits the batched functions (``<fn>_batched``) and the call that replaces
the statement. Which parts of a loop's carry are batched is a fixed point:
a carry that starts unbatched becomes batched when a step mixes a batched
value into it (the initial value is then broadcast).

- ``cond`` with a predicate that is the same for every example: ``rt.cond``
  of the batched branches, whose results are broadcast alike. With a
  predicate that differs per example: both branches run, written inline, and
  ``rt.batching.select`` keeps each example's own. A gradient's forward
  ``cond_with_residuals`` alike: the outputs selected, both branches'
  residuals kept (each backward branch reads its own).
- ``scan``: the body on batched carries and step inputs (a batched sequence
  is step-major, ``rt.loop_first``); the stacked outputs are turned back to
  batch-major (``rt.batch_first``). Outputs that are a tuple display (a
  gradient's residuals) keep their batching leaf by leaf: ``rt.batch_first``
  takes their flags, the names bound to them are marked alike (``displayed``
  for a tuple of its own), and a loop over them (the backward loop) unpacks
  each leaf with its own flag, so a test on the loop's index stays the same
  for every example and only the branch taken runs.
- ``while_loop``: with a test that differs per example, the loop runs while
  any example is live (``rt.batching.any_example``), and each step keeps the
  carry of the examples that have finished (``select``), so every example
  stops after its own number of steps. An elementwise test is run again at
  the start of each step, as JAX does (XLA fuses it there); any other test
  runs once a step and the loop carries its result.
"""

from __future__ import annotations

import builtins
from dataclasses import replace

import libcst as cst

from .. import ir
from ..cstutil import call, literal, names_in, substitute, tuple_of
from ..passes.dataflow import assigned, free_names, reads
from ..passes.normal_form import eqn_of, is_static
from ..rules.registry import op_named
from .activity import array_evidence, diff_names
from .batch_leaves import (
    all_batched,
    any_batched,
    broadcast_leaves,
    held_flags,
    leaf_flags,
    mask,
    unpacked_flags,
)
from .dependence import local_functions
from .families import batched_sequence

ENCLOSING = frozenset({"xp", "rt"})
# batch families whose results are the same for every example, whatever their operands
_UNBATCHED = frozenset({"query", "static", "constructor"})


# attributes of an array that are facts of one example's shape and type, the same for every example
EXAMPLE_FACTS = frozenset({"shape", "ndim", "size", "dtype"})


def batch_inputs(e, defs) -> set[str]:
    """What an equation's result is batched by: its value operands and its functions' closures."""
    if e.kind in ("op", "runtime"):
        op = op_named(("rt." if e.kind == "runtime" else "") + e.name)
        rule = op.rules.get("batch") if op is not None else None
        if rule is not None and rule.family in _UNBATCHED:
            return set()
    if e.kind == "attribute" and e.name in EXAMPLE_FACTS:
        return set()  # ``x.shape``: one example's, the same for every example
    found = set()
    for atom in (*e.args, *(v for _, v in e.kwargs)):
        if isinstance(atom, cst.Name) and atom.value in defs:
            found |= free_names(defs[atom.value]) - ENCLOSING
        else:
            found |= diff_names(atom)
    # ``w[idx]``: an index that differs per example selects per example
    if e.kind == "getitem":
        found |= set().union(*(names_in(el) for el in e.node.slice)) - ENCLOSING
    return found


def _parts(fn: ir.Function):
    *stmts, ret = fn.body
    return list(stmts), ret.value


def _free_batched(b, functions) -> set[str]:
    return set().union(*(free_names(f) for f in functions)) & b.batched


def _varies(b, fn, sources, out) -> bool:
    """Whether ``out`` (an atom of ``fn``'s body) is batched when ``sources`` are."""
    stmts, _ = _parts(fn)
    return bool(diff_names(out) & _batched_by(b, stmts, sources))


def _batched_by(b, stmts, sources) -> set[str]:
    """The names of ``stmts`` batched when ``sources`` are: ``depends_on`` by ``batch_inputs``, item by
    item for a ``cond`` taken for all examples whose results are unpacked (``_done, x = rt.cond(...)``:
    a ``break``'s flag stays one bool beside a batched ``x``)."""
    defs = local_functions(stmts)
    found = set(sources)
    for stmt in stmts:
        if not isinstance(stmt, ir.Assign):
            continue
        targets, e = ir.target_names(stmt.target), eqn_of(stmt.value, b.helpers)
        items = (
            _item_flags(b, e, defs, found, stmt.target)
            if e.kind == "runtime" and e.name in _CONDS
            else None
        )
        if items is not None:
            outputs = _outputs_target(e, stmt.target)
            found.update(
                el.value.value
                for el, batched in zip(outputs.elements, items)
                if batched
            )
            if batch_inputs(e, defs) & found:  # a gradient's residuals, as a whole
                found.update(set(targets) - set(ir.target_names(outputs)))
        elif batch_inputs(e, defs) & found:
            found.update(targets)
    return found


_CONDS = ("cond", "cond_with_residuals")


def _outputs_target(e, target):
    """The part of a ``cond``'s target that its outputs are bound to: all of it, or for
    ``cond_with_residuals`` (``out, (res_true, res_false) = ...``) its first item."""
    if e.name != "cond_with_residuals":
        return target
    if _residual_names(target) is None:
        return None
    return target.elements[0].value


def _branch_outputs(e, value):
    """A branch's result for the outputs: all of it, or ``out`` of a forward branch's ``(out, res)``."""
    if e.name != "cond_with_residuals":
        return value
    return value.elements[0].value if _pair_of_tuple(value) else None


def _item_flags(b, e, defs, found: set, target) -> list | None:
    """Per name of a tuple ``target`` of ``rt.cond(pred, if_true, if_false, *operands)`` (the outputs'
    tuple of ``rt.cond_with_residuals``), whether a branch makes it batched given the batched names
    ``found``; None where ``pred`` is batched or the branches' results are no tuple displays of the
    target's length."""
    pred, branches, operands = e.args[0], e.args[1:3], e.args[3:]
    target = _outputs_target(e, target)
    if (
        not isinstance(target, cst.Tuple)
        or not all(isinstance(el.value, cst.Name) for el in target.elements)
        or diff_names(pred) & found
        or not all(isinstance(f, cst.Name) and f.value in defs for f in branches)
    ):
        return None
    flags = [False] * len(target.elements)
    for f in branches:
        branch = defs[f.value]
        value = _branch_outputs(e, _parts(branch)[1])
        if not (isinstance(value, cst.Tuple) and len(value.elements) == len(flags)):
            return None
        params = branch.param_names
        inputs = (free_names(branch) - ENCLOSING) & found | {
            params[i] for i, op in enumerate(operands) if diff_names(op) & found
        }
        batched = _batched_by(b, _parts(branch)[0], inputs)  # (once per branch)
        flags = [
            was or bool(diff_names(el.value) & batched)
            for was, el in zip(flags, value.elements)
        ]
    return flags


def _batched_fn(
    b, fn: ir.Function, batched: set, result, first=None, displayed=None
) -> ir.Def:
    """``<fn>_batched``: ``fn``'s body batched, returning ``result(inner, value)`` (``first``: one of its
    statements that reads only a parameter, kept as it is and moved first, the rest batched given
    ``batched``; ``displayed``: parameters that are tuples, with their items' flags)."""
    stmts, value = _parts(fn)
    body = [s for s in stmts if s is not first]
    inner = b.nested(body, batched, fn.param_names, displayed)
    inner.origin = fn.body[-1].origin or b.origin  # what the result's rule cites
    name = b.namer.fresh(f"{fn.name}_batched")
    kept = (first,) if first is not None else ()
    body = (*kept, *inner.out, ir.Return(result(inner, value)))
    return ir.Def(ir.Function(name, fn.params, body, fn.origin), b.origin)


def _carry_items(b, fn, param, init, out, others) -> list | None:
    """Which items of a loop's carry are batched, where the carry is a tuple (``init`` and the step's
    result ``out`` tuple displays, the step unpacking ``param`` first: ``xs, hs, loss = carry``) and its
    items differ: a fixed point item by item (a dict of one-hot rows beside a hidden state that differs
    per example stays one dict). None where the carry is batched or not as a whole."""
    stmts, _ = _parts(fn)
    unpack = stmts[0] if stmts else None
    if not (
        isinstance(init, cst.Tuple)
        and isinstance(out, cst.Tuple)
        and len(init.elements) == len(out.elements)
        and isinstance(unpack, ir.Assign)
        and isinstance(unpack.value, cst.Name)
        and unpack.value.value == param
        and isinstance(unpack.target, cst.Tuple)
        and len(unpack.target.elements) == len(init.elements)
        and all(isinstance(el.value, cst.Name) for el in unpack.target.elements)
    ):
        return None
    names = [el.value.value for el in unpack.target.elements]
    flags = [b.is_batched(el.value) for el in init.elements]
    while True:
        sources = others | {n for n, f in zip(names, flags) if f}
        now = [
            f or _varies(b, fn, sources, el.value) for f, el in zip(flags, out.elements)
        ]
        if now == flags:
            break
        flags = now
    return flags if any(flags) and not all(flags) else None


def _fixed_point(b, fn, param, batched: bool, others: set, out) -> bool:
    """Whether a loop carry ``param`` is batched: it starts ``batched`` and a step may make it so."""
    while True:
        sources = others | ({param} if batched else set())
        now = batched or _varies(b, fn, sources, out)
        if now == batched:
            return batched
        batched = now


def cond(b, stmt: ir.Assign, e):
    pred, operands = e.args[0], list(e.args[3:])
    branches = [b.defs[e.args[1].value], b.defs[e.args[2].value]]
    # ``if args:`` of a tuple display: its length, the same for every example
    container = isinstance(pred, cst.Name) and pred.value in b.displayed
    pred_batched = b.is_batched(pred) and not container
    free = _free_batched(b, branches)

    def inputs(branch):
        params = branch.param_names
        return free | {params[i] for i, op in enumerate(operands) if b.is_batched(op)}

    out_batched = pred_batched or any(
        _varies(b, br, inputs(br), _parts(br)[1]) for br in branches
    )
    # one branch taken for all examples, results unpacked: each item batched where a branch makes it so
    # (``squeeze = True`` beside ``x = x[None]`` under ``if x.ndim == 2:`` stays one bool)
    items = (
        _item_flags(b, e, b.defs, b.batched, stmt.target)
        if out_batched and not pred_batched
        else None
    )
    items = items if items is not None and not all(items) else None

    residuals = e.name == "cond_with_residuals" and not pred_batched
    flags = []  # per branch, whether each of its residuals is batched

    def outputs(inner, value):
        if items is None:
            return _branch_result(inner, value) if out_batched else value
        return value.with_changes(
            elements=[
                (
                    el.with_changes(value=_branch_result(inner, el.value))
                    if batched
                    else el
                )
                for el, batched in zip(value.elements, items)
            ]
        )

    def result(inner, value):
        if residuals and _pair_of_tuple(value):
            # ``(out, residuals)``: each residual keeps its own batching (a pad width, a key: none)
            out, res = (el.value for el in value.elements)
            flags.append(
                [
                    (
                        inner.displayed.get(el.value.value, inner.is_batched(el.value))
                        if isinstance(el.value, cst.Name)
                        else inner.is_batched(el.value)
                    )
                    for el in res.elements
                ]
            )
            return value.with_changes(
                elements=[
                    value.elements[0].with_changes(value=outputs(inner, out)),
                    value.elements[1],
                ]
            )
        return outputs(inner, value)

    if not pred_batched:
        defs = [_batched_fn(b, br, inputs(br), result) for br in branches]
        b.out.extend(defs)
        names = [cst.Name(d.function.name) for d in defs]
        # a gradient's forward branches: the residuals of the branch not taken are zeros, not None
        name = (
            "rt.batching.cond_with_residuals"
            if e.name == "cond_with_residuals"
            else "rt.cond"
        )
        b.emit(stmt.target, call(name, pred, *names, *operands))
        if items is not None:
            for el, batched in zip(_outputs_target(e, stmt.target).elements, items):
                b.mark(el.value, batched)
        held = _residual_names(stmt.target)
        if items is not None and not residuals:
            return
        if residuals and len(flags) == 2 and held is not None:
            if items is None:
                b.mark(stmt.target.elements[0].value, out_batched)
            for holder, own in zip(held, flags):
                b.displayed[holder.value] = dict(enumerate(own))
                b.mark(holder, any_batched(b.displayed[holder.value]))
            return
    else:  # both branches run, inline; each example keeps its own branch's result
        negated = cst.Name(b.namer.fresh("else_taken"))
        b.emit(negated, call("xp.logical_not", pred))
        b.mark(negated, True)
        taken = [
            _inline(b, br, operands, guard)
            for br, guard in zip(branches, (pred, negated))
        ]
        # ``cond_with_residuals``: ``(out, res)`` each, out selected, both residuals kept
        if e.name == "cond_with_residuals":
            (t_out, t_res), (f_out, f_res) = (
                (el.value for el in t.elements) for t in taken
            )
            value = tuple_of(
                call("rt.batching.select", pred, t_out, f_out), tuple_of(t_res, f_res)
            )
        else:
            value = call("rt.batching.select", pred, *taken)
        b.emit(stmt.target, value)
    b.mark(stmt.target, out_batched)


def _pair_of_tuple(value) -> bool:
    """``(out, (r1, r2, ...))``: a gradient's forward branch's result."""
    return (
        isinstance(value, cst.Tuple)
        and len(value.elements) == 2
        and isinstance(value.elements[1].value, cst.Tuple)
    )


def _residual_names(target):
    """``(res_true, res_false)`` of the target ``out, (res_true, res_false)``, else None."""
    if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
        return None
    pair = target.elements[1].value
    if not isinstance(pair, cst.Tuple) or len(pair.elements) != 2:
        return None
    names = [el.value for el in pair.elements]
    return names if all(isinstance(n, cst.Name) for n in names) else None


def _branch_result(inner, value):
    """A branch's result with the batch axis, its numbers and constants too (``return 1e10``, ``return
    np.inf`` beside a branch whose result differs per example: both branches of a ``cond`` give values of
    one shape)."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return value.with_changes(
            elements=[
                el.with_changes(value=_branch_result(inner, el.value))
                for el in value.elements
            ]
        )
    number = value.expression if isinstance(value, cst.UnaryOperation) else value
    # a number, or a constant of the namespace (``return np.inf``)
    constant = isinstance(number, cst.Attribute) and is_static(number)
    if (
        isinstance(number, (cst.Integer, cst.Float))
        or (isinstance(number, cst.Name) and number.value in ("True", "False"))
        or constant
    ):
        return call("rt.broadcast_batch", value, cst.Name(inner.size))
    return inner.broadcast(value)


def _inline(b, fn: ir.Function, operands, taken) -> cst.BaseExpression:
    """``fn``'s body batched and emitted in place, reading its operands and the values it closes over
    through ``rt.batching.guard`` (``taken``: which examples take this branch), so an example that does
    not take it computes on another's values and no nan reaches a derivative; its result, with the
    batch axis."""
    # a builtin function read (``len``) is no value; an unbatched value would be guarded as it is
    builtin = {
        n
        for n in free_names(fn)
        if hasattr(builtins, n) and not b.is_batched(cst.Name(n))
    }
    reads = sorted(free_names(fn) - ENCLOSING - set(b.defs) - set(b.helpers) - builtin)
    fresh = {p: cst.Name(b.namer.fresh(p)) for p in (*fn.param_names, *reads)}
    stmts, value = _parts(fn)
    stmts, value = _renamed(stmts, fresh), substitute(value, fresh)
    for name, op in zip(fresh.values(), (*operands, *map(cst.Name, reads))):
        flag = b.is_batched(op)
        b.emit(name, call("rt.batching.guard", op, taken, cst.Name(str(not flag))))
        b.mark(name, flag)
    b.defs.update(local_functions(stmts))  # its own branches and loop bodies
    b.arrays |= array_evidence(stmts, b.helpers)
    for s in stmts:
        b.visit(s)
    return b.broadcast(value)


def _renamed(stmts, mapping: dict) -> list:
    """Statements reading ``mapping``'s names under their new names (not where a local function's own
    parameter shadows one)."""
    out = []
    for s in stmts:
        if isinstance(s, ir.Def):
            params = s.function.param_names
            inner = {k: v for k, v in mapping.items() if k not in params}
            body = _renamed(s.function.body, inner)
            out.append(replace(s, function=s.function.with_body(body)))
        elif isinstance(s, (ir.Assign, ir.Return)):
            out.append(replace(s, value=substitute(s.value, mapping)))
        else:
            out.append(s)
    return out


def scan(b, stmt: ir.Assign, e):
    body = b.defs[e.args[0].value]
    init = e.args[1]
    xs = e.args[2] if len(e.args) > 2 else None
    carry_param, item_param = body.param_names
    _, ret = _parts(body)
    carry_out, y_out = (el.value for el in ret.elements)
    carry_target, ys_target = (el.value for el in stmt.target.elements)
    others = _free_batched(b, [body])
    if xs is not None and b.is_batched(xs):
        others = others | {item_param}
    carry = _fixed_point(b, body, carry_param, b.is_batched(init), others, carry_out)
    sequences = _sequences(b, xs)
    split = _split_items(b, body, sequences)
    # (a body that unpacks its sequences' items first keeps its carry whole)
    items = (
        _carry_items(b, body, carry_param, init, carry_out, others)
        if carry and split is None
        else None
    )
    sources = others | ({carry_param} if carry else set())
    if items is not None:  # the step's unpacked items as batched as they are
        unpacked = body.body[0].target.elements
        sources = others | {el.value.value for el, f in zip(unpacked, items) if f}
    ys = _varies(b, body, sources, y_out)
    leaves = (
        {}
    )  # the steps' outputs, a tuple display: each leaf's own batching (``_leaf_flags``)

    def result(inner, value):
        new_carry, y = (el.value for el in value.elements)
        if items is not None:
            new_carry = tuple_of(
                *(
                    _branch_result(inner, el.value) if f else el.value
                    for el, f in zip(new_carry.elements, items)
                )
            )
        elif carry:
            new_carry = inner.broadcast(new_carry)
        if ys and isinstance(y, cst.Tuple):
            flags = leaf_flags(inner, y)
            if not all_batched(flags):  # a residual the same for every example stays so
                leaves["flags"] = flags
                return tuple_of(new_carry, broadcast_leaves(inner, y, flags))
        return tuple_of(new_carry, inner.broadcast(y) if ys else y)

    if split is None:
        displayed = None
        if items is not None:  # the carry a tuple whose items keep their own batching
            sources = sources | {carry_param}
            displayed = {carry_param: dict(enumerate(items))}
        d = _batched_fn(b, body, sources, result, displayed=displayed)
        steps_in = _step_major(b, xs) if xs is not None and b.is_batched(xs) else xs
    else:  # each sequence keeps its own batching: a shared ``range`` stays shared
        unpack, batched_names, held = split
        b.displayed.update(held)  # (what the body's batched statements read of them)
        d = _batched_fn(
            b, body, (sources - {item_param}) | batched_names, result, first=unpack
        )
        if isinstance(xs, cst.Tuple):
            steps_in = tuple_of(*(_steps_of(b, a, held_flags(b, a)) for a in sequences))
        else:  # (as ``families.Sequence`` zips them)
            steps_in = cst.Name(b.namer.fresh("zip"))
            own = [batched_sequence(b, a) if b.is_batched(a) else a for a in sequences]
            b.emit(steps_in, call("rt.zip", *own))
    b.out.append(d)
    if items is not None:
        start = tuple_of(
            *(
                _branch_result(b, el.value) if f else el.value
                for el, f in zip(init.elements, items)
            )
        )
    else:
        start = _carry_start(b, init) if carry else init
    args = [cst.Name(d.function.name), start] + ([steps_in] if xs is not None else [])
    value = call("rt.scan", *args, **dict(e.kwargs))
    ignored = isinstance(ys_target, cst.Name) and ys_target.value == "_"
    if not ys or ignored:
        b.emit(stmt.target, value)
    else:  # stacked step by step: (steps, batch, ...); batched values are (batch, steps, ...)
        steps = cst.Name(b.namer.fresh("steps"))
        b.emit(tuple_of(carry_target, steps), value)
        flags = leaves.get("flags")
        given = [] if flags is None else [literal(mask(flags))]
        b.emit(ys_target, call("rt.batch_first", steps, *given))
        if (
            flags is not None
        ):  # each name the steps' outputs are bound to, as batched as they are
            b.mark(carry_target, carry)
            batched, held = set(), {}
            unpacked_flags(ys_target, flags, batched, held)
            b.displayed.update(held)
            for name in set(ir.target_names(ys_target)) - {"_"}:
                b.mark(cst.Name(name), name in batched)
            _mark_carry(b, carry_target, carry, items)
            return
    _mark_carry(b, carry_target, carry, items)
    b.mark(ys_target, ys)


def _mark_carry(b, target, carry: bool, items: list | None) -> None:
    """A loop's final carry as batched as the carry was (item by item where ``items`` says so)."""
    if items is None:
        b.mark(target, carry)
    elif isinstance(target, cst.Tuple) and len(target.elements) == len(items):
        for el, f in zip(target.elements, items):
            b.mark(el.value, f)
    else:
        b.mark(target, True)
        if isinstance(target, cst.Name):
            b.displayed[target.value] = dict(enumerate(items))


def _sequences(b, xs) -> list | None:
    """The sequences a scan runs over side by side: a tuple display's items, or those of a ``zip`` of
    sequences some batched and some not (``b.zipped``); else None."""
    if isinstance(xs, cst.Tuple):
        return [el.value for el in xs.elements]
    if isinstance(xs, cst.Name) and xs.value in b.zipped:
        return b.zipped[xs.value]
    return None


def _split_items(b, body, sequences):
    """``(unpack, batched names)`` when a scan runs over sequences side by side, some batched and some not,
    and its body reads its item once, to unpack it into one target per sequence (``(res, i) = item``): each part is
    then batched as its sequence is (a shared ``range`` of loop indices stays shared, so slices by it
    keep bounds the same for every example). None otherwise (the item batched as a whole).
    """
    if sequences is None:
        return None
    # (a gradient's residuals stacked leaf by leaf: ``b.displayed`` holds each leaf's flag)
    flags = [held_flags(b, a) for a in sequences]
    if not any(isinstance(f, dict) for f in flags) and (all(flags) or not any(flags)):
        return None
    item = body.param_names[1]
    stmts, value = _parts(body)
    readers = [s for s in stmts if item in reads(s)]
    first = readers[0] if len(readers) == 1 else None
    unpacks = (
        isinstance(first, ir.Assign)
        and isinstance(first.value, cst.Name)
        and isinstance(first.target, cst.Tuple)
        and len(first.target.elements) == len(flags)
    )
    if not unpacks or item in names_in(value):
        return None
    batched, held = set(), {}
    for el, flag in zip(first.target.elements, flags):
        unpacked_flags(el.value, flag, batched, held)
    return first, batched, held


def _steps_of(b, sequence, flags):
    """A scan's sequence, step-major, leaf by leaf as ``flags`` say: an unbatched leaf as it is."""
    if isinstance(flags, dict) and isinstance(sequence, cst.Tuple):
        return sequence.with_changes(
            elements=[
                el.with_changes(value=_steps_of(b, el.value, flags[k]))
                for k, el in enumerate(sequence.elements)
            ]
        )
    return _step_major(b, sequence) if any_batched(flags) else sequence


def _step_major(b, xs):
    """A scan's batched sequence with the step axis first: batched loop inputs are already; other batched
    values (the per-step residuals a gradient's forward loop stacked) are moved; unbatched ones (a loop
    input the same for every example beside batched residuals too) broadcast.
    """
    if isinstance(xs, cst.Tuple):
        return xs.with_changes(
            elements=[
                el.with_changes(value=_step_major(b, el.value)) for el in xs.elements
            ]
        )
    if isinstance(xs, cst.Name) and xs.value in b.step_major and b.is_batched(xs):
        return xs
    flags = held_flags(b, xs)
    if isinstance(flags, dict):  # leaf by leaf, as ``rt.batch_first`` stacked them
        return call("rt.steps_first", xs, literal(mask(flags)))
    return call("rt.steps_first", b.broadcast(xs))


def _carry_start(b, init):
    """A batched loop's starting carry: ``init`` broadcast, and where it holds number literals
    (``(x, 0)``, directly or through the name of that display, at any depth of displays), those too
    (``rt.batch_scalars``).
    """
    start = b.broadcast(init)
    display = init
    if isinstance(init, cst.Name):
        display = next(
            (
                s.value
                for s in reversed(b.out)
                if isinstance(s, ir.Assign)
                and isinstance(s.target, cst.Name)
                and s.target.value == init.value
            ),
            None,
        )
    if _holds_numbers(display):
        return call("rt.batch_scalars", start, cst.Name(b.size))
    return start


def _holds_numbers(display) -> bool:
    """Whether a display holds a literal, at any depth of displays (``[{"scale": 1.0, "w": w}]``)."""
    if not isinstance(display, (cst.Tuple, cst.List, cst.Dict)):
        return False
    return any(
        is_static(el.value) or _holds_numbers(el.value)
        for el in display.elements
        if isinstance(el, (cst.Element, cst.DictElement))
    )


def while_loop(b, stmt: ir.Assign, e):
    test, body, init = b.defs[e.args[0].value], b.defs[e.args[1].value], e.args[2]
    (carry_param,) = body.param_names
    (test_param,) = test.param_names
    _, carry_out = _parts(body)
    _, passed = _parts(test)
    free = _free_batched(b, [test, body])
    carry = _fixed_point(b, body, carry_param, b.is_batched(init), free, carry_out)
    per_example = _varies(b, test, free | ({test_param} if carry else set()), passed)
    carry = carry or per_example  # finished examples keep their carry: it is batched
    sources = free | ({carry_param} if carry else set())
    test_sources = free | ({test_param} if carry else set())
    start = _carry_start(b, init) if carry else init
    if per_example and _elementwise(b, test):
        _while_retested(b, stmt, test, body, start, sources | test_sources)
        return
    if per_example:
        _while_per_example(b, stmt, test, body, start, sources | test_sources)
        return
    test_def = _batched_fn(b, test, test_sources, lambda inner, v: v)
    body_def = _batched_fn(
        b, body, sources, lambda inner, v: inner.broadcast(v) if carry else v
    )
    b.out.extend([test_def, body_def])
    value = call(
        "rt.while_loop",
        cst.Name(test_def.function.name),
        cst.Name(body_def.function.name),
        start,
    )
    b.emit(stmt.target, value)
    b.mark(stmt.target, carry)


def _elementwise(b, test: ir.Function) -> bool:
    """Whether a loop's test is elementwise ops only: running it twice a step costs less than carrying
    its result, since XLA fuses it into the loop's test and into the step."""
    stmts, _ = _parts(test)
    for s in stmts:
        e = eqn_of(s.value, b.helpers) if isinstance(s, ir.Assign) else None
        if e is None or e.kind not in ("op", "copy"):
            return False
        op = op_named(e.name) if e.kind == "op" else None
        rule = op.rules.get("batch") if op is not None else None
        if e.kind == "op" and (rule is None or rule.family != "elementwise"):
            return False
    return True


def _test_on(b, test: ir.Function, carry: cst.Name):
    """The test's statements on ``carry``, their names fresh in this scope, and the value they test."""
    test_stmts, passed = _parts(test)
    fresh = {n: cst.Name(b.namer.fresh(n)) for n in sorted(assigned(test_stmts))}
    fresh[test.param_names[0]] = carry
    renamed = [
        (
            replace(
                t, target=substitute(t.target, fresh), value=substitute(t.value, fresh)
            )
            if isinstance(t, ir.Assign)
            else _renamed([t], fresh)[0]
        )
        for t in test_stmts
    ]
    return renamed, substitute(passed, fresh)


def _while_retested(b, stmt, test, body, start, sources):
    """A ``while`` whose elementwise test differs per example, as JAX batches one: the loop runs while
    any example passes the test, and each step tests them again and moves only those (``select``).
    """
    (carry_param,) = body.param_names
    carry = cst.Name(carry_param)
    test_def = _batched_fn(
        b,
        test,
        sources | set(test.param_names),
        lambda inner, v: call("rt.batching.any_example", v),
    )
    test_stmts, live = _test_on(b, test, carry)
    body_stmts, carry_out = _parts(body)
    tested = b.nested(test_stmts, sources | {carry_param})
    step = b.nested(body_stmts, sources | {carry_param})
    moved = call("rt.batching.select", live, step.broadcast(carry_out), carry)
    name = b.namer.fresh(f"{body.name}_batched")
    stmts = (*tested.out, *step.out, ir.Return(moved))
    body_def = ir.Def(body.with_body(stmts, name=name), b.origin)
    b.out.extend([test_def, body_def])
    value = call(
        "rt.while_loop",
        cst.Name(test_def.function.name),
        cst.Name(body_def.function.name),
        start,
    )
    b.emit(stmt.target, value)
    b.mark(stmt.target, True)


def _while_per_example(b, stmt, test, body, start, sources):
    """A ``while`` whose test differs per example and is more than elementwise ops: the loop carries
    which examples are live, runs while any is, and each step moves only those (``select``), then
    tests them again: the test runs once a step, and each example stops after its own number of steps.
    """
    (carry_param,) = body.param_names
    (test_param,) = test.param_names
    test_stmts, passed = _parts(test)
    body_stmts, carry_out = _parts(body)
    state, live = cst.Name(b.namer.fresh("state")), cst.Name(b.namer.fresh("live"))
    # before the loop: which examples take a first step (the test's names fresh in this scope)
    begin = cst.Name(b.namer.fresh(carry_param))
    b.emit(begin, start)
    b.mark(begin, True)
    renamed, starts_live = _test_on(b, test, begin)
    first = b.nested(renamed, sources | {begin.value})
    b.out.extend(first.out)
    # the test: any example live
    cond_name = b.namer.fresh(f"{test.name}_batched")
    cond_body = (
        ir.Assign(tuple_of(cst.Name("_"), live), state),
        ir.Return(call("rt.batching.any_example", live)),
    )
    cond_def = ir.Def(
        ir.Function(
            cond_name,
            (replace(test.params[0], name=state.value),),
            cond_body,
            test.origin,
        ),
        b.origin,
    )
    # a step: the live examples move, then are tested again
    unpack = ir.Assign(tuple_of(cst.Name(carry_param), live), state)
    step = b.nested(body_stmts, sources | {carry_param, live.value})
    moved = cst.Name(b.namer.fresh(carry_param))
    kept = call(
        "rt.batching.select", live, step.broadcast(carry_out), cst.Name(carry_param)
    )
    retest = b.nested(
        _renamed(test_stmts, {test_param: moved}), sources | {moved.value}
    )
    body_name = b.namer.fresh(f"{body.name}_batched")
    body_stmts_out = (
        unpack,
        *step.out,
        ir.Assign(moved, kept),
        *retest.out,
        ir.Return(tuple_of(moved, substitute(passed, {test_param: moved}))),
    )
    body_def = ir.Def(
        ir.Function(
            body_name,
            (replace(body.params[0], name=state.value),),
            body_stmts_out,
            body.origin,
        ),
        b.origin,
    )
    b.out.extend([cond_def, body_def])
    value = call(
        "rt.while_loop",
        cst.Name(cond_name),
        cst.Name(body_name),
        tuple_of(begin, starts_live),
    )
    b.emit(tuple_of(stmt.target, cst.Name("_")), value)
    b.mark(stmt.target, True)


def while_loop_with_tape(b, stmt: ir.Assign, e):
    """A gradient's forward ``while`` (the body returns ``(carry, residuals)``, the call ``(carry, tape)``):
    as ``while_loop``; with a per-example test, each step's body also returns which examples were live,
    for the backward loop (``while_loop_reverse``) to move only those."""
    test, body, init = b.defs[e.args[0].value], b.defs[e.args[1].value], e.args[2]
    (carry_param,) = body.param_names
    (test_param,) = test.param_names
    carry_out = _parts(body)[1].elements[0].value
    _, passed = _parts(test)
    free = _free_batched(b, [test, body])
    carry = _fixed_point(b, body, carry_param, b.is_batched(init), free, carry_out)
    per_example = _varies(b, test, free | ({test_param} if carry else set()), passed)
    carry = carry or per_example
    test_sources = free | ({test_param} if carry else set())

    def test_result(inner, value):
        return call("rt.batching.any_example", value) if per_example else value

    test_def = _batched_fn(b, test, test_sources, test_result)
    body_def = _taped_body(b, test, body, carry, per_example)
    b.out.extend([test_def, body_def])
    b.taped[body.name] = (body_def.function.name, b, test, carry, per_example)
    start = _carry_start(b, init) if carry else init
    value = call(
        "rt.while_loop_with_tape",
        cst.Name(test_def.function.name),
        cst.Name(body_def.function.name),
        start,
    )
    b.emit(stmt.target, value)
    carry_target, tape = (el.value for el in stmt.target.elements)
    b.mark(carry_target, carry)
    b.mark(tape, carry)
    b.tapes.add(tape.value)


def _taped_body(b, test, body, carry: bool, per_example: bool) -> ir.Def:
    """The batched body of a gradient's forward ``while``: ``(carry, residuals)``; with a per-example test,
    ``(carry kept where finished, (live, residuals))``."""
    (carry_param,) = body.param_names
    (test_param,) = test.param_names
    body_stmts, returned = _parts(body)
    carry_out, residuals = (el.value for el in returned.elements)
    free = _free_batched(b, [test, body])
    sources = free | ({carry_param} if carry else set())
    if not per_example:

        def result(inner, value):
            new, res = (el.value for el in value.elements)
            return tuple_of(
                inner.broadcast(new) if carry else new, inner.broadcast(res)
            )

        return _batched_fn(b, body, sources, result)
    test_sources = free | {test_param}
    alias = (
        [ir.Assign(cst.Name(test_param), cst.Name(carry_param))]
        if test_param != carry_param
        else []
    )
    test_stmts, passed = _parts(test)
    live = b.nested([*alias, *test_stmts], sources | test_sources)
    step = b.nested(body_stmts, sources)
    kept = call(
        "rt.batching.select", passed, step.broadcast(carry_out), cst.Name(carry_param)
    )
    value = tuple_of(kept, tuple_of(passed, step.broadcast(residuals)))
    name = b.namer.fresh(f"{body.name}_batched")
    stmts = (*live.out, *step.out, ir.Return(value))
    return ir.Def(ir.Function(name, body.params, stmts, body.origin), b.origin)


def while_loop_reverse(b, stmt: ir.Assign, e):
    """The backward ``while`` of a gradient: the batched backward body on the batched forward body's
    recomputed residuals; where the forward test was per example, a step moves only the cotangents of
    the examples that step moved (``select``), so each example runs back through its own steps.
    """
    body_fwd, body_bwd, carry_bar, tape = e.args
    bwd = b.defs[body_bwd.value]
    bar_param, res_param = bwd.param_names
    stmts, out = _parts(bwd)
    if body_fwd.value not in b.taped:
        # the forward loop reads nothing batched: the same steps, residuals and tape for every example
        batched_fwd, per_example = body_fwd.value, False
        sources = _free_batched(b, [bwd]) | {bar_param}
    else:
        batched_fwd, where, test, carry, per_example = b.taped[body_fwd.value]
        # the backward pass may have written its own copy of the forward body: batch that one here
        if not b.sees(where):
            fwd = _taped_body(b, test, b.defs[body_fwd.value], carry, per_example)
            b.out.append(fwd)
            batched_fwd = fwd.function.name
        sources = _free_batched(b, [bwd]) | {bar_param, res_param}
    if per_example:
        packed, live = b.namer.fresh("live_and_residuals"), b.namer.fresh("live")
        unpack = ir.Assign(
            tuple_of(cst.Name(live), cst.Name(res_param)), cst.Name(packed)
        )
        step = b.nested(stmts, sources)
        moved = call(
            "rt.batching.select",
            cst.Name(live),
            step.broadcast(out),
            cst.Name(bar_param),
        )
        params = (bwd.params[0], replace(bwd.params[1], name=packed))
        name = b.namer.fresh(f"{bwd.name}_batched")
        body = (unpack, *step.out, ir.Return(moved))
        bwd_def = ir.Def(ir.Function(name, params, body, bwd.origin), b.origin)
    else:
        bwd_def = _batched_fn(b, bwd, sources, lambda inner, v: inner.broadcast(v))
    b.out.append(bwd_def)
    value = call(
        "rt.while_loop_reverse",
        cst.Name(batched_fwd),
        cst.Name(bwd_def.function.name),
        b.broadcast(carry_bar),
        tape,
    )
    b.emit(stmt.target, value)
    b.mark(stmt.target, True)


RULES = {
    "cond": cond,
    "cond_with_residuals": cond,  # a gradient's forward branches: ``(outputs, residuals)`` each
    "scan": scan,
    "while_loop": while_loop,
    "while_loop_with_tape": while_loop_with_tape,
    "while_loop_reverse": while_loop_reverse,
}
