"""Reads, writes and liveness of statements, compound ones and local functions included.

These are the analyses the control-flow passes declare: which names a
statement reads and binds, which names a block needs from before it
(``live_in``), and every name a function uses (for fresh naming).
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from .. import ir
from ..cstutil import names_in, substitute
from ..naming import Namer

CONSTANTS = frozenset({"True", "False", "None"})


def reads(stmt, closures=None) -> set[str]:
    """Names the statement's own expressions read (for compound statements: the test or iterable).

    ``closures`` (local function -> what it captures, from ``closure_reads``): naming a local
    function reads what it captures, since Python closures read their variables when called.
    """
    found = _own_reads(stmt)
    for fn in found & (closures or {}).keys():
        found = found | closures[fn]
    return found


def _own_reads(stmt) -> set[str]:
    if isinstance(stmt, (ir.Assign, ir.AugAssign)):
        found = names_in(stmt.value)
        if isinstance(stmt, ir.AugAssign) or not ir.target_names(stmt.target):
            # ``x += v`` and ``x[i] = v`` read ``x`` (and ``i``)
            found |= names_in(stmt.target)
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
    """Names ``fn`` reads from its enclosing scope (its own local functions' captures included)."""
    bound = set(fn.param_names) | assigned(fn.body) | fn.locals.keys()
    used = set().union(
        set(),
        *(reads(s) for s in ir.walk(fn.body)),
        *(free_names(f) for f in fn.locals.values()),
    )
    return used - bound


def closure_reads(fn: ir.Function, enclosing=None) -> dict:
    """Each local function of ``fn`` -> the names it reads from ``fn``'s scope, through the local functions it
    calls too (``enclosing``: the same map one level up, for a local function's own locals).
    """
    free = {name: set(free_names(local)) for name, local in fn.locals.items()}
    changed = True
    while changed:  # a local function calling another reads what that one captures
        changed = False
        for name, names in free.items():
            more = (
                set().union(set(), *(free[f] for f in names & free.keys() if f != name))
                - names
            )
            if more:
                names |= more
                changed = True
    outer = {
        name: names for name, names in (enclosing or {}).items() if name not in free
    }
    return {**outer, **free}


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


def substitute_reads(stmt, mapping: dict, apart: bool = False):
    """The statement with the names it reads replaced (inside a ``Def``: its free names only). With
    ``apart``, capture-avoiding: a name the substitution brings into a ``Def`` that binds it is first renamed
    there (inlining a callee's local function at an argument named like one of its variables).
    """
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
        if apart:
            brought = set().union(set(), *(names_in(v) for v in free.values()))
            if bound & brought:
                # (fresh names none the substitution replaces either: it runs on the renamed body)
                inner = _renamed_apart(inner, bound & brought, brought | set(mapping))
        body = tuple(substitute_reads(s, free, apart) for s in inner.body)
        return ir.Def(inner.with_body(body), stmt.origin)
    raise TypeError(f"substitute_reads does not take {type(stmt).__name__}")


def _renamed_apart(fn: ir.Function, names: set[str], avoid: set[str]) -> ir.Function:
    """``fn`` with the parameters, local variables and local functions ``names`` given fresh names, none
    of ``avoid``."""
    namer = Namer(avoid | used_names(fn))
    fresh = {n: cst.Name(namer.fresh(n)) for n in sorted(names)}
    params = tuple(
        replace(p, name=fresh[p.name].value) if p.name in fresh else p
        for p in fn.params
    )
    body = []
    for s in fn.body:
        if isinstance(s, ir.Assign):
            s = ir.Assign(
                substitute(s.target, fresh), substitute(s.value, fresh), s.origin
            )
        else:
            s = substitute_reads(s, fresh)
            if isinstance(s, ir.Def) and s.function.name in fresh:
                # (its reads were renamed: a local function keeps its own name, or calls read another)
                name = fresh[s.function.name].value
                s = ir.Def(s.function.with_body(s.function.body, name=name), s.origin)
        body.append(s)
    return replace(fn, params=params, body=tuple(body))


def live_in(body, live_out: set[str], closures=None) -> set[str]:
    """Names read by ``body`` before being bound in it, or live after it and not bound by it for sure
    (``closures`` as for ``reads``)."""
    live = set(live_out)
    for stmt in reversed(body):
        live = stmt_live_in(stmt, live, closures)
    return live


def stmt_live_in(stmt, live_out: set[str], closures=None) -> set[str]:
    if isinstance(stmt, ir.If):
        return (
            reads(stmt, closures)
            | live_in(stmt.body, live_out, closures)
            | live_in(stmt.orelse, live_out, closures)
        )
    if isinstance(stmt, (ir.For, ir.While)):
        # the body may run zero times, or again after itself: iterate to a fixed point
        live = set(live_out)
        while True:
            inner = live_in(stmt.body, live, closures) - (
                writes(stmt) if isinstance(stmt, ir.For) else set()
            )
            grown = live | inner | reads(stmt, closures)
            if grown == live:
                return live
            live = grown
    if isinstance(stmt, ir.Return):
        return reads(stmt, closures)
    if isinstance(stmt, (ir.Break, ir.Continue)):
        return set(live_out)
    return (live_out - writes(stmt)) | reads(stmt, closures)
