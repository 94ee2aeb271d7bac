"""The versions of the program's helpers a generated module calls, beyond their normal forms.

- ``requested(requests, make)``: the versions transformed code asked for (each may ask for more).
- ``batched_helper_maker``: how a batch transform batches a helper: an inner ``vmap``'s module (and its
  vjp) over both axes at once (``nested_batches``), any other helper over the arguments it maps.
- ``vjp_of_mapped_module`` / ``jvp_of_mapped_module``: the derivatives of an inner ``vmap``'s module,
  where its batched code has none, are its function's derivatives mapped over the same axes (the
  cotangents of the arguments the map shares summed over the examples); batched code that has
  derivatives is differentiated as it is.
- ``check_not_factory``: a factory's call is no helper to transform.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from . import ir, nested_batches
from .cstutil import call, dotted, iter_nodes, tuple_of
from .errors import MissingRule, UnsupportedSyntax
from .naming import Namer
from .passes.dataflow import used_names
from .pipeline import PASSES
from .program import Program
from .transforms.batch import batch
from .transforms.forward import forward
from .transforms.reverse import Mode, index, reverse
from .transforms.simplify import simplify
from .transforms.skeleton import HelperRequests


def requested(requests, make, made=None) -> list:
    """The helper versions that transformed code asked for (each may ask for more), in the order asked:
    ``make(helper name, which arguments)`` builds one. ``made`` holds the requests built by earlier
    calls (several entries of one module share helper versions), and grows."""
    made = set() if made is None else made
    out = []
    while len(made) < len(requests.names):
        for key, fn_name in list(requests.names.items()):
            if key in made:
                continue
            made.add(key)
            out.append(simplify(replace(make(*key), name=fn_name)))
    return out


def batched_helper_maker(program: Program, requests, axis_name, ctx: dict):
    """How a batch transform makes the batched version of a helper its code calls (``requests``): an inner
    ``vmap``'s module and the vjp of one over both axes at once (``nested_batches``), any other helper
    batched over the arguments the flags mark."""

    def batched_helper(name, flags):
        if name in program.batched_of:  # an inner ``vmap``: both axes at once
            fun, spec = program.batched_of[name]
            inner = program.lowered(fun)
            origin = requests.origins[name, flags]
            return nested_batches.merged(
                program.helpers[name], inner, spec, flags, requests, origin
            )
        if (
            name in program.vjp_of_batched
        ):  # its vjp: the vjp of ``fun``, over both axes
            fun, spec, which = program.vjp_of_batched[name]
            origin = requests.origins[name, flags]
            inner_vjp = _helper_derivative_of(
                program, program.lowered(fun), which, "vjp", ctx
            )
            return nested_batches.merged_vjp(
                program.helpers[name],
                inner_vjp,
                spec,
                which,
                flags,
                requests,
                origin,
            )
        _check_not_batched(program.helpers[name], requests.origins[name, flags])
        check_not_factory(program.helpers[name], requests.origins[name, flags])
        # a tuple flag: a sequence of known length, an axis per item
        mapped = tuple(
            (
                tuple(0 if i else None for i in f)
                if isinstance(f, tuple)
                else 0 if f else None
            )
            for f in flags
        )
        return batch(
            program.helpers[name],
            mapped,
            requests=requests,
            axis_name=axis_name,
            **ctx,
        )

    return batched_helper


def vjp_of_mapped_module(
    program: Program, name: str, which: tuple, requests, origin, ctx: dict
) -> ir.Function | None:
    """The vjp of the helper ``name`` where it is an inner ``vmap``'s module of a function ``fun``
    (``jax.vmap(residual, in_axes=(None, 0, 0))`` inside): the vjp of ``fun`` itself, mapped over the same
    axes and the output's cotangent, the cotangent of an argument the map shares summed over the examples::

        def residual_batched_vjp(params, t, x, bar):
            bars = residual_vjp_batched(params, t, x, bar)
            return rt.sum_unbatched(bars, False)

    (so batched code is never differentiated: derivatives of the function's own code are, and batched).
    None where the map has options this does not cover (an axis other than 0 or None, several outputs
    or out_axes other than 0, an axis name, an axis size): the batched module is differentiated then.
    """
    found = _mappable(program, name, origin)
    if found is None or (
        not _reaches_custom(program, found[0])
        and _derivative_reads(program, name, which, ctx, "vjp")
    ):
        return None
    fun, in_axes = found
    helper = program.helpers[name]
    inner_vjp = _helper_derivative_of(program, _called(program, fun), which, "vjp", ctx)
    flags = tuple(a == 0 for a in in_axes) + (True,)
    params = [p.name for p in helper.params]
    bar = Namer(set(params)).fresh(f"{name}_bar")
    call_args = [cst.Name(p) for p in (*params, bar)]
    bars = cst.Name(Namer(set(params) | {bar}).fresh("bars"))
    body = [
        ir.Assign(
            bars, call(requests.name(inner_vjp, flags, origin), *call_args), origin
        )
    ]
    parts = [bars] if len(which) == 1 else [index(bars, k) for k in range(len(which))]
    results = [
        call("rt.sum_unbatched", part, cst.Name(str(in_axes[i] == 0)))
        for i, part in zip(which, parts)
    ]
    body.append(
        ir.Return(results[0] if len(results) == 1 else tuple_of(*results), origin)
    )
    doc = f"Cotangents of `{name}`'s arguments: `{inner_vjp}` mapped over its examples."
    return ir.Function(
        f"{name}_vjp",
        (*helper.params, ir.Param(bar)),
        tuple(body),
        helper.origin,
        docstring=doc,
    )


def _mappable(program: Program, name: str, origin=None):
    """``(fun, in_axes)`` of an inner ``vmap``'s module ``name`` whose derivatives are its function's
    mapped (axes 0 or None per argument, one output at axis 0, no axis name or size), else None; a
    located error where they are not but ``fun`` reaches a custom rule (``_reaches_custom``), which
    differentiating the batched code would lose.
    """
    if name not in program.batched_of:
        return None
    fun, (in_axes, out_axes, axis_size, axis_name) = program.batched_of[name]
    if in_axes is None or isinstance(in_axes, int):  # one axis for every argument
        in_axes = (in_axes,) * len(program.helpers[name].params)
    if (
        axis_name is not None
        or axis_size is not None
        or out_axes != 0
        or not isinstance(in_axes, tuple)
        or len(in_axes) != len(program.helpers[name].params)
        or any(a not in (0, None) for a in in_axes)
    ):
        if _reaches_custom(program, fun):
            raise UnsupportedSyntax(
                "a function with a custom_jvp/custom_vjp rule under `jax.vmap` with options other than "
                "axes 0 or None and one output at axis 0, differentiated: s2s would differentiate the "
                "batched code and lose the rule",
                origin,
                "map over axis 0 (move the axis first: `jnp.moveaxis(x, k, 0)`) with one output, "
                "without axis_name or axis_size",
            )
        return None
    return fun, in_axes


def _called(program: Program, fun) -> str:
    """The helper whose derivative is ``fun``'s: ``fun``'s own, or where ``fun`` has a custom rule, a
    function calling it (``gradscale_called``): its rule applies at calls (``jax.vmap(gradscale)``).
    """
    name = program.lowered(fun)
    if name not in program.custom:
        return name
    helper = program.helpers[name]
    called = f"{name}_called"
    if called not in program.helpers:
        params = tuple(ir.Param(p.name) for p in helper.params)
        out = cst.Name(f"{name}_out")
        body = (
            ir.Assign(
                out, call(name, *(cst.Name(p.name) for p in params)), helper.origin
            ),
            ir.Return(out, helper.origin),
        )
        program.helpers[called] = ir.Function(called, params, body, helper.origin)
        program.flows[called] = program.flows[name]
    return called


def _reaches_custom(program: Program, fun) -> bool:
    """Whether the function ``fun`` (an inner ``vmap`` maps it) or a helper it reaches has a custom rule:
    its derivative is the rule's, never that of the batched code (which is the primal's, batched).
    """
    pending, seen = [program.lowered(fun)], set()
    while pending:
        name = pending.pop()
        if name in program.custom:
            return True
        if name in seen or name not in program.helpers:
            continue
        seen.add(name)
        pending += sorted(used_names(program.helpers[name]) & program.helpers.keys())
    return False


def _derivative_reads(
    program: Program, name: str, at: tuple, ctx: dict, kind: str
) -> bool:
    """Whether the batched module ``name``'s own code has a ``kind`` derivative for the arguments ``at``
    (every op and helper it reaches has rules: made here and dropped). Where it has, it is differentiated
    as it is; where it has not (a batched op without second-derivative rules), the derivative of the
    function it maps is mapped instead (``vjp_of_mapped_module``)."""
    requests = HelperRequests(kind, program.helpers.keys())
    requests.name(name, at)
    try:
        requested(requests, _derivative_of(program, requests, kind, ctx))
    except MissingRule:
        return False
    return True


def jvp_of_mapped_module(
    program: Program, name: str, wrt: tuple, requests, origin, ctx: dict
) -> ir.Function | None:
    """The jvp of an inner ``vmap``'s module (``_mappable``): its function's jvp mapped over the same axes,
    each tangent as its primal; None where ``_mappable`` is."""
    found = _mappable(program, name, origin)
    if found is None or (
        not _reaches_custom(program, found[0])
        and _derivative_reads(program, name, wrt, ctx, "jvp")
    ):
        return None
    fun, in_axes = found
    inner_jvp = _helper_derivative_of(program, _called(program, fun), wrt, "jvp", ctx)
    flags = tuple(a == 0 for a in in_axes)
    helper = program.helpers[name]
    namer = Namer({p.name for p in helper.params})
    tangents = [ir.Param(namer.fresh(f"{helper.params[i].name}_dot")) for i in wrt]
    params = (*helper.params, *tangents)
    value = call(
        requests.name(inner_jvp, flags + tuple(flags[i] for i in wrt), origin),
        *(cst.Name(p.name) for p in params),
    )
    doc = f"`{name}` and its tangent: `{inner_jvp}` mapped over its examples."
    return ir.Function(
        f"{name}_jvp",
        params,
        (ir.Return(value, origin),),
        helper.origin,
        docstring=doc,
    )


def _derivative_of(program: Program, requests, kind: str, ctx: dict):
    """``make(helper, at)``: the ``kind`` derivative ("jvp", "vjp") of the program's function ``helper``
    for the arguments at ``at``, asking ``requests`` for those of the functions it calls.
    """

    def make(helper, at):
        if kind == "jvp":
            return forward(
                program.helpers[helper], Mode("jvp", at), requests=requests, **ctx
            )
        mode = Mode("vjp", at[0] if len(at) == 1 else at)
        return reverse(program.helpers[helper], mode, requests=requests, **ctx)

    return make


def _kept(program: Program, requests, make) -> None:
    """The functions ``requests`` asks for, made and kept among the program's helpers in normal form (as
    generated code read again is), for the batch transform to read."""
    for made in requested(requests, make):
        for _, run in PASSES:
            made = run(made)
        program.helpers.setdefault(made.name, made)
        program.flows.setdefault(made.name, (True,) * len(made.params))


def _helper_derivative_of(
    program: Program, name: str, at: tuple, kind: str, ctx: dict
) -> str:
    """The name of the ``kind`` derivative ("jvp", "vjp") of the program's function ``name`` for the
    arguments at ``at``, made (with those of the functions it calls) and kept among the program's
    helpers, so that a batch transform can map it."""
    made = program.helper_jvps if kind == "jvp" else program.helper_vjps
    if (name, at) in made:
        return made[name, at]
    requests = HelperRequests(kind, program.helpers.keys())
    made[name, at] = requests.name(name, at)
    _kept(program, requests, _derivative_of(program, requests, kind, ctx))
    if kind == "vjp":
        for (helper, which), made_name in requests.names.items():
            if helper in program.batched_of:
                # the vjp of a batched module: mapped again over both axes
                program.vjp_of_batched.setdefault(
                    made_name, (*program.batched_of[helper], which)
                )
    return made[name, at]


def _check_not_batched(helper, origin) -> None:
    """A helper that is batched code already (``jax.vmap(f)(xs)`` inside a function ``s2s.vmap`` maps again)
    is refused at the call that maps it again: s2s has no batching rules for batched code's runtime.
    """
    for stmt in ir.walk(helper.body):
        value = getattr(stmt, "value", None)
        if isinstance(value, cst.Call) and dotted(value.func) == "rt.batch_size":
            # (a call s2s wrote, of a lifted function, has no place of its own: the inner map's line)
            origin = origin or stmt.origin
            raise MissingRule(
                "a function mapped by `jax.vmap`/`s2s.vmap` inside, called where `s2s.vmap` maps again: "
                "s2s does not batch batched code",
                origin,
                "write the inner function over the whole batch with array operations (`xs @ w` for "
                "`jax.vmap(lambda x: x @ w)(xs)`), or map only once",
            )


def check_not_factory(helper, origin) -> None:
    """A helper that returns a function it defines (a factory: ``update = scaler(lr)``), called where a
    derivative or a batch axis reaches its arguments, is refused at that call: the function it returns
    closes over them, and s2s has no derivative or batched form of a function value."""
    out = helper.body[-1].value if helper.body else None
    local = {s.function.name for s in helper.body if isinstance(s, ir.Def)}
    returned = (
        {n.value for n in iter_nodes(out) if isinstance(n, cst.Name)} if out else set()
    )
    if returned & local:
        raise MissingRule(
            f"`{helper.name}` returns a function that reads its arguments (a closure), and a derivative "
            "or a batch axis reaches them here: s2s transforms functions it can read at their calls, not "
            "function values made at run time",
            origin,
            f"return the functions themselves (`return update`, `return init, update`: s2s then writes "
            f"`{helper.name}` in place where a line binds its result, if it takes no `*args`/`**kwargs`), "
            f"or define the returned function where it is called and pass what it reads from "
            f"`{helper.name}` as arguments",
        )
