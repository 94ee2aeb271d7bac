"""A batched module mapped again: ``jax.vmap(f)(xs)`` (or ``np.vectorize``, ``np.apply_along_axis``)
inside a function that ``s2s.vmap`` maps, as one batched module of ``f`` over both axes at once.

Batching batched code would need batching rules for the runtime that batched code calls. Mapping ``f``
over an inner axis and again over an outer one is mapping it over both (``nested_vmap.py`` does so for
``s2s.vmap(s2s.vmap(f))``): ``merged(...)`` writes the helper's version for the outer call as

    outer_size = rt.batch_size((w, 0))                 # the outer batch axis: 0
    inner_size = rt.batch_size((xs, 0))                # the inner vmap's axes
    w_merged = rt.merged_examples(w, True, None, outer_size, inner_size)
    xs_merged = rt.merged_examples(xs, False, 0, outer_size, inner_size)
    merged_out = f_batched(w_merged, xs_merged)        # f over outer_size * inner_size examples
    return rt.split_examples(merged_out, outer_size, inner_size, 0)

an argument mapped by one of the two broadcast along the other, one mapped by neither passed as it
is. The merging helpers are linear with rules in every derivative mode, so such code is
differentiated again like any other. Supported: the inner ``vmap``'s ``in_axes`` one int or None per
argument, ``out_axes`` an int, None or a tuple of them, no ``axis_name``; anything else is the
located error ``batch_again_refused`` gives.
"""

from __future__ import annotations

import libcst as cst

from . import ir
from .cstutil import call, literal, tuple_of
from .errors import MissingRule
from .naming import Namer
from .passes.dataflow import used_names


def _flat(axes) -> bool:
    if axes is None or isinstance(axes, int):
        return True
    return isinstance(axes, tuple) and all(
        a is None or isinstance(a, int) for a in axes
    )


def batch_again_refused(origin, why: str) -> MissingRule:
    return MissingRule(
        "a function mapped by `jax.vmap`/`s2s.vmap` inside (or by `np.vectorize`), called where "
        f"`s2s.vmap` maps again, {why}",
        origin,
        "write the inner function over the whole batch with array operations (`xs @ w` for "
        "`jax.vmap(lambda x: x @ w)(xs)`), or map only once",
    )


def _sizes(helper: ir.Function, spec, params, names, flags, origin):
    """``(namer, outer size, inner size, their lines)`` of a function mapped again: the outer batch axis is
    axis 0 of the arguments ``flags`` marks (of ``names``), the inner one the inner ``vmap``'s ``in_axes``
    of ``params`` (shifted past the outer axis); the inner ``vmap``'s options s2s cannot merge refused.
    """
    in_axes, _, axis_size, axis_name = spec
    if axis_name is not None:
        raise batch_again_refused(
            origin, "with an `axis_name` (a collective over one of the two axes)"
        )
    if len(in_axes) != len(params) or not all(
        a is None or isinstance(a, int) for a in in_axes
    ):
        raise batch_again_refused(
            origin, f"with in_axes {in_axes!r} (one int or None per argument)"
        )
    namer = Namer(used_names(helper))
    outer, size = cst.Name(namer.fresh("outer_size")), cst.Name(
        namer.fresh("inner_size")
    )
    mapped = (tuple_of(cst.Name(p), literal(0)) for p, f in zip(names, flags) if f)
    body = [ir.Assign(outer, call("rt.batch_size", *mapped), origin)]
    inner_pairs = [
        tuple_of(cst.Name(p), literal(a + 1 if f and a >= 0 else a))
        for p, f, a in zip(params, flags, in_axes)
        if a is not None
    ]
    if not inner_pairs and axis_size is None:
        raise batch_again_refused(origin, "mapping no argument (its size is unknown)")
    sized = {} if axis_size is None else {"axis_size": literal(axis_size)}
    body.append(ir.Assign(size, call("rt.batch_size", *inner_pairs, **sized), origin))
    return namer, outer, size, body


def merged(
    helper: ir.Function, inner: str, spec, flags, requests, origin
) -> ir.Function:
    """``helper`` (the batched module of the program's function ``inner``, mapped with ``spec``: in_axes,
    out_axes, axis_size, axis_name) mapped again over axis 0 of the arguments ``flags`` marks.
    """
    in_axes, out_axes, _, _ = spec
    params = [p.name for p in helper.params]
    if not _flat(out_axes):
        raise batch_again_refused(origin, f"with out_axes {out_axes!r}")
    namer, outer, size, body = _sizes(helper, spec, params, params, flags, origin)
    arguments = []
    for p, f, a in zip(params, flags, in_axes):
        if not f and a is None:
            arguments.append(cst.Name(p))
            continue
        name = cst.Name(namer.fresh(f"{p}_merged"))
        body.append(
            ir.Assign(
                name,
                call(
                    "rt.merged_examples",
                    cst.Name(p),
                    literal(bool(f)),
                    literal(a),
                    outer,
                    size,
                ),
                origin,
            )
        )
        arguments.append(name)
    mapped = tuple(bool(f) or a is not None for f, a in zip(flags, in_axes))
    out = cst.Name(namer.fresh("merged_out"))
    body.append(
        ir.Assign(out, call(requests.name(inner, mapped, origin), *arguments), origin)
    )
    result = cst.Name(namer.fresh("split"))
    body.append(
        ir.Assign(
            result,
            call("rt.split_examples", out, outer, size, literal(out_axes)),
            origin,
        )
    )
    body.append(ir.Return(result, origin))
    doc = f"`{helper.name}` mapped again: `{inner}` over both batch axes at once."
    return ir.Function(
        helper.name, helper.params, tuple(body), helper.origin, docstring=doc
    )


def merged_vjp(
    helper: ir.Function, inner_vjp: str, spec, which: tuple, flags, requests, origin
) -> ir.Function:
    """``helper`` (the vjp, for the arguments at ``which``, of the batched module of a function mapped with
    ``spec``) mapped again over axis 0 of the arguments ``flags`` marks: ``inner_vjp`` (the function's own
    vjp) over the merged examples, each cotangent of an argument at ``which`` summed back per outer example::

        w_merged = rt.merged_examples(w, False, None, outer_size, inner_size)   # its cotangent per example
        xs_merged = rt.merged_examples(xs, True, 0, outer_size, inner_size)
        bar_merged = rt.merged_examples(bar, True, 0, outer_size, inner_size)
        w_bar = f_vjp_batched(w_merged, xs_merged, bar_merged)
        return rt.outer_cotangent(w_bar, w, False, None, outer_size, inner_size)
    """
    in_axes, out_axes, _, _ = spec
    *params, bar = [p.name for p in helper.params]
    if not (out_axes is None or isinstance(out_axes, int)):
        raise batch_again_refused(origin, f"with out_axes {out_axes!r} (one output)")
    names = [*params, bar]
    namer, outer, size, body = _sizes(helper, spec, params, names, flags, origin)
    arguments, mapped = [], []
    # (the output's cotangent has the inner axis where the inner ``vmap`` put its output)
    for k, (p, f, a) in enumerate(zip(names, flags, (*in_axes, out_axes))):
        if not f and a is None and k not in which:
            arguments.append(cst.Name(p))
            mapped.append(False)
            continue
        name = cst.Name(namer.fresh(f"{p}_merged"))
        merge = call(
            "rt.merged_examples", cst.Name(p), literal(bool(f)), literal(a), outer, size
        )
        body.append(ir.Assign(name, merge, origin))
        arguments.append(name)
        mapped.append(True)
    out = cst.Name(namer.fresh("merged_bars"))
    body.append(
        ir.Assign(
            out,
            call(requests.name(inner_vjp, tuple(mapped), origin), *arguments),
            origin,
        )
    )
    bars = [out] if len(which) == 1 else []
    for k in range(len(which)) if len(which) > 1 else ():
        bars.append(cst.Subscript(out, [cst.SubscriptElement(cst.Index(literal(k)))]))
    results = [
        call(
            "rt.outer_cotangent",
            b,
            cst.Name(params[i]),
            literal(bool(flags[i])),
            literal(in_axes[i]),
            outer,
            size,
        )
        for i, b in zip(which, bars)
    ]
    body.append(
        ir.Return(results[0] if len(results) == 1 else tuple_of(*results), origin)
    )
    doc = f"`{helper.name}` mapped again: `{inner_vjp}` over both batch axes at once."
    return ir.Function(
        helper.name, helper.params, tuple(body), helper.origin, docstring=doc
    )
