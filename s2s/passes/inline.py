"""Inline local functions, lambdas and ``decompose`` ops at their call sites.

Input and output are in normal form. Output: no calls to local functions and
no calls to ops of the ``decompose`` family; inlined statements cite the
call site's line, their variables keep their names where free (else get a
numbered one).
"""

from __future__ import annotations

import functools

import libcst as cst

from .. import ir
from ..cstutil import literal, substitute
from ..errors import S2SError
from ..naming import Namer
from ..rules import OPS
from .anf import anf
from .dataflow import assigned, reads, substitute_reads, used_names
from .desugar import desugar
from .normal_form import eqn_of


@functools.cache
def _decomposition(op_name: str) -> ir.Function:
    from ..frontend.resolve import resolve
    from ..frontend.source import load

    resolved = resolve(load(OPS[op_name].rule), name=op_name.replace(".", "_"))
    return anf(desugar(resolved.function))


def _callee(fn: ir.Function, value):
    if not isinstance(value, cst.Call):
        return None
    e = eqn_of(value)
    if e.kind == "call" and e.name in fn.locals:
        return fn.locals[e.name]
    if e.kind == "op" and e.name in OPS and OPS[e.name].family == "decompose":
        return _decomposition(e.name)
    return None


def _bind(callee: ir.Function, call: cst.Call, origin):
    params = list(callee.params)
    bound = {}
    positional = [a.value for a in call.args if a.keyword is None]
    if len(positional) > len(params):
        raise S2SError(
            f"`{callee.name}` takes {len(params)} arguments, got {len(positional)}",
            origin,
        )
    for p, value in zip(params, positional):
        bound[p.name] = value
    for a in call.args:
        if a.keyword is not None:
            if a.keyword.value not in callee.param_names:
                raise S2SError(
                    f"`{callee.name}` has no parameter `{a.keyword.value}`", origin
                )
            bound[a.keyword.value] = a.value
    for p in params:
        if p.name not in bound:
            if p.default is None:
                raise S2SError(
                    f"`{callee.name}` is missing its argument `{p.name}`", origin
                )
            bound[p.name] = p.default
    return bound


def _default_value(node):
    return node if isinstance(node, cst.BaseExpression) else literal(node)


def inline(fn: ir.Function, namer: Namer | None = None) -> ir.Function:
    namer = namer or Namer(used_names(fn))
    out = []
    for stmt in fn.body:
        # a branch or loop body may call local functions too
        if isinstance(stmt, ir.Def):
            inner = stmt.function.with_body(stmt.function.body, locals=fn.locals)
            out.append(ir.Def(inline(inner, namer), stmt.origin))
            continue
        callee = _callee(fn, stmt.value) if isinstance(stmt, ir.Assign) else None
        if callee is None:
            out.append(stmt)
            continue
        callee = inline(
            callee.with_body(callee.body, locals={**fn.locals, **callee.locals}),
            Namer(used_names(callee)),
        )
        mapping = {
            k: _default_value(v)
            for k, v in _bind(callee, stmt.value, stmt.origin).items()
        }
        result = callee.body[-1].value
        if (
            isinstance(result, cst.Name)
            and result.value not in mapping
            and result.value in assigned(callee.body)
            and isinstance(stmt.target, cst.Name)
        ):
            # the callee's result takes the call site's name (not a value it reads from outside: ``lambda v: w``)
            mapping[result.value] = stmt.target
        for inner in callee.body:
            if isinstance(inner, ir.Return):
                out.append(
                    ir.Assign(
                        stmt.target, substitute(inner.value, mapping), stmt.origin
                    )
                )
                break
            if isinstance(inner, ir.Def):
                name = inner.function.name
                mapping.setdefault(name, cst.Name(namer.fresh(name)))
                renamed = substitute_reads(inner, mapping)
                out.append(
                    ir.Def(
                        renamed.function.with_body(
                            renamed.function.body, name=mapping[name].value
                        ),
                        inner.origin,
                    )
                )
                continue
            for name in ir.target_names(inner.target):
                if name not in mapping:
                    mapping[name] = cst.Name(namer.fresh(name))
            value = substitute(inner.value, mapping)
            target = substitute(
                inner.target,
                {k: v for k, v in mapping.items() if isinstance(v, cst.Name)},
            )
            out.append(ir.Assign(target, value, stmt.origin))
    return fn.with_body(_referenced_defs(fn, out, namer) + out, locals={})


def _referenced_defs(fn: ir.Function, body: list, namer: Namer) -> list:
    """The local functions that ``body`` still names after inlining (handed to a call, not called), as ``Def``s.

    They stay where they are visible, so the code runs, and so activity sees
    what they read from the enclosing scope (``eqn_inputs``).
    """
    referenced = set().union(set(), *(reads(s) for s in ir.walk(body)))
    defs = []
    for name, local in fn.locals.items():
        if name in referenced:
            inner = inline(
                local.with_body(local.body, locals={**fn.locals, **local.locals}), namer
            )
            defs.append(ir.Def(inner.with_body(inner.body, name=name), local.origin))
    return defs
