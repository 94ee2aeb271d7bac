"""Lists grown in an inner loop, collected one group per iteration of the loop around it.

``control`` collects a list that gets one ``append`` per iteration. A nested loop appends several per
outer iteration (``[np.ravel(p) for layer in params for p in layer]``, autograd's ``l2_norm``)::

    out = []                                  out = []
    for layer in params:                      out_groups = []
        for p in layer:              ->       for layer in params:
            out = rt.append(out, v)               out_group = []
                                                  for p in layer:
                                                      out_group = rt.append(out_group, v)
                                                  out_groups = rt.append(out_groups, out_group)
                                              out = rt.unstack(rt.join_steps(out_groups))

Appends in a row (``out.append(W); out.append(b)``, a generator's ``yield W; yield b``) are a group
too.

Guarantee of ``grouped(body, namer)``: a ``for`` loop of ``body`` whose appends to a list ``L`` all lie
in one loop directly in its body (not under an ``if``), or are statements in a row of its body, which reads and assigns ``L`` nowhere else,
where ``L = []`` is the statement just before it, is rewritten so: each loop collects one item per
iteration, and ``L`` is the groups' items in order (``rt.join_steps``: every group's items, whether a
group is a list, a stacked array or ``Elements``), a Python list. Anything else is left as it is, for
``control``'s errors.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import call, dotted
from ..naming import Namer
from .dataflow import reads, writes


def _append_to(stmt) -> str | None:
    """``L`` for ``L = rt.append(L, v)``."""
    if (
        isinstance(stmt, ir.Assign)
        and isinstance(stmt.target, cst.Name)
        and isinstance(stmt.value, cst.Call)
        and dotted(stmt.value.func) == "rt.append"
        and isinstance(stmt.value.args[0].value, cst.Name)
        and stmt.value.args[0].value.value == stmt.target.value
    ):
        return stmt.target.value
    return None


def _appending_span(loop: ir.For, name: str) -> tuple[int, int] | None:
    """The span ``(first, last)`` of ``loop``'s body holding every use of ``name`` in ``loop``, all of
    them appends: one inner ``for``, or several appends in a row (``out.append(W); out.append(b)``, a
    generator's two ``yield``s); None where there is no such span."""
    inner = [
        k
        for k, s in enumerate(loop.body)
        if any(name in reads(t) | writes(t) for t in ir.walk([s]))
    ]
    if not inner:
        return None
    span = loop.body[inner[0] : inner[-1] + 1]
    if len(inner) == 1 and isinstance(span[0], ir.For):
        uses = [
            s
            for s in ir.walk(span)
            if not isinstance(s, (ir.For, ir.If, ir.While))
            and name in reads(s) | writes(s)
        ]
    elif len(inner) > 1 and len(inner) == len(span):
        uses = list(span)
    else:
        return None
    if not uses or not all(_append_to(s) == name for s in uses):
        return None
    if any(name in names_read(s) for s in uses):  # ``L = rt.append(L, L[-1])``
        return None
    return inner[0], inner[-1]


def names_read(stmt) -> set[str]:
    """The names an append reads besides its list."""
    return reads(ir.Assign(stmt.target, stmt.value.args[1].value, stmt.origin))


def _renamed(body, name: str, new: str) -> tuple:
    """``body`` with its appends to ``name`` appending to ``new``."""
    out = []
    for s in body:
        if _append_to(s) == name:
            value = s.value.args[1].value
            s = ir.Assign(
                cst.Name(new), call("rt.append", cst.Name(new), value), s.origin
            )
        elif isinstance(s, ir.For):
            s = ir.For(s.target, s.iter, _renamed(s.body, name, new), s.origin)
        elif isinstance(s, ir.If):
            s = ir.If(
                s.test,
                _renamed(s.body, name, new),
                _renamed(s.orelse, name, new),
                s.origin,
            )
        elif isinstance(s, ir.While):
            s = ir.While(s.test, _renamed(s.body, name, new), s.origin)
        out.append(s)
    return tuple(out)


def _emptied(stmt) -> str | None:
    """``L`` for ``L = []``."""
    if (
        isinstance(stmt, ir.Assign)
        and isinstance(stmt.target, cst.Name)
        and isinstance(stmt.value, cst.List)
        and not stmt.value.elements
    ):
        return stmt.target.value
    return None


def grouped(body, namer: Namer) -> list:
    """``body`` with its nested loops' appends collected by groups (only its own statements)."""
    out = list(body)
    k = 1
    while k < len(out):
        loop, before = out[k], out[k - 1]
        name = _emptied(before)
        span = (
            _appending_span(loop, name) if name and isinstance(loop, ir.For) else None
        )
        if span is None:
            k += 1
            continue
        groups, group = namer.fresh(f"{name}_groups"), namer.fresh(f"{name}_group")
        first, last = span
        origin = loop.body[first].origin
        loop_body = (
            *loop.body[:first],
            ir.Assign(cst.Name(group), cst.List([]), origin),
            *_renamed(loop.body[first : last + 1], name, group),
            ir.Assign(
                cst.Name(groups),
                call("rt.append", cst.Name(groups), cst.Name(group)),
                origin,
            ),
            *loop.body[last + 1 :],
        )
        joined = call("rt.unstack", call("rt.join_steps", cst.Name(groups)))
        out[k : k + 1] = [
            ir.Assign(cst.Name(groups), cst.List([]), loop.origin),
            ir.For(loop.target, loop.iter, loop_body, loop.origin),
            ir.Assign(cst.Name(name), joined, loop.origin),
        ]
        k += 3
    return out
