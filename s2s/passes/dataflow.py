"""Reads, writes and liveness of statements, compound ones and local functions included.

These are the analyses the control-flow passes declare: which names a
statement reads and binds, which names a block needs from before it
(``live_in``), and every name a function uses (for fresh naming).
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import names_in, substitute

CONSTANTS = frozenset({"True", "False", "None"})


def reads(stmt) -> set[str]:
    """Names the statement's own expressions read (for compound statements: the test or iterable)."""
    if isinstance(stmt, (ir.Assign, ir.AugAssign)):
        found = names_in(stmt.value)
        if isinstance(stmt, ir.AugAssign) or not ir.target_names(stmt.target):
            found |= names_in(stmt.target)  # ``x += v`` and ``x[i] = v`` read ``x`` (and ``i``)
        return found - CONSTANTS
    if isinstance(stmt, ir.Return):
        return names_in(stmt.value) - CONSTANTS
    if isinstance(stmt, (ir.If, ir.While)):
        return names_in(stmt.test) - CONSTANTS
    if isinstance(stmt, ir.For):
        return names_in(stmt.iter) - CONSTANTS
    if isinstance(stmt, ir.Def):
        return free_names(stmt.function)
    return set()


def writes(stmt) -> set[str]:
    """Names the statement itself binds (not those bound inside its blocks)."""
    if isinstance(stmt, (ir.Assign, ir.AugAssign)):
        return set(ir.target_names(stmt.target)) or {element_base(stmt.target)}
    if isinstance(stmt, ir.For):
        return set(ir.target_names(stmt.target))
    if isinstance(stmt, ir.Def):
        return {stmt.function.name}
    return set()


def element_base(target) -> str:
    """The array an element write ``x[i][j] = v`` writes into: ``x``."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return target.value


def assigned(body) -> set[str]:
    """Every name bound anywhere in ``body`` (nested blocks included, local functions' insides not)."""
    return set().union(set(), *(writes(s) for s in ir.walk(body)))


def free_names(fn: ir.Function) -> set[str]:
    """Names ``fn`` reads from its enclosing scope."""
    bound = set(fn.param_names) | assigned(fn.body)
    used = set().union(set(), *(reads(s) for s in ir.walk(fn.body)))
    return used - bound


def used_names(fn: ir.Function) -> set[str]:
    """Every name anywhere in ``fn``: parameters, reads, writes, local functions and their insides."""
    names = set(fn.param_names)
    for stmt in ir.walk(fn.body):
        names |= reads(stmt) | writes(stmt)
        if isinstance(stmt, ir.Def):
            names |= used_names(stmt.function)
    for name, local in fn.locals.items():
        names |= {name} | used_names(local)
    return names


def substitute_reads(stmt, mapping: dict):
    """The statement with the names it reads replaced (inside a ``Def``: its free names only)."""
    if not mapping:
        return stmt
    if isinstance(stmt, ir.Assign):
        return ir.Assign(stmt.target, substitute(stmt.value, mapping), stmt.origin)
    if isinstance(stmt, ir.Return):
        return ir.Return(substitute(stmt.value, mapping), stmt.origin)
    if isinstance(stmt, ir.Def):
        inner = stmt.function
        bound = set(inner.param_names) | assigned(inner.body)
        free = {k: v for k, v in mapping.items() if k not in bound}
        body = tuple(substitute_reads(s, free) for s in inner.body)
        return ir.Def(inner.with_body(body), stmt.origin)
    raise TypeError(f"substitute_reads does not take {type(stmt).__name__}")


def live_in(body, live_out: set[str]) -> set[str]:
    """Names read by ``body`` before being bound in it, or live after it and not bound by it for sure."""
    live = set(live_out)
    for stmt in reversed(body):
        live = stmt_live_in(stmt, live)
    return live


def stmt_live_in(stmt, live_out: set[str]) -> set[str]:
    if isinstance(stmt, ir.If):
        return reads(stmt) | live_in(stmt.body, live_out) | live_in(stmt.orelse, live_out)
    if isinstance(stmt, (ir.For, ir.While)):
        # the body may run zero times, or again after itself: iterate to a fixed point
        live = set(live_out)
        while True:
            inner = live_in(stmt.body, live) - (writes(stmt) if isinstance(stmt, ir.For) else set())
            grown = live | inner | reads(stmt)
            if grown == live:
                return live
            live = grown
    if isinstance(stmt, ir.Return):
        return reads(stmt)
    if isinstance(stmt, (ir.Break, ir.Continue)):
        return set(live_out)
    return (live_out - writes(stmt)) | reads(stmt)
