"""Data dependence between the variables of a normal-form body: which ones depend on which.

The plain question batching asks (which values vary along the mapped axis)
and, filtered to differentiable inputs, the one differentiation asks
(``activity.py``). An edge function says what an equation's result depends
on; ``every_input`` is the plain one: its arguments, keyword arguments, and
what the local functions handed to it read from the enclosing scope.

Guarantee: ``depends_on`` over-approximates. A name is in the result when
some chain of equations leads to it from a source, whatever branch or loop
the values take at run time.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import ir
from ..cstutil import names_in
from ..passes.dataflow import free_names
from ..passes.normal_form import Eqn, eqn_of

ENCLOSING = frozenset({"xp", "rt"})


def local_functions(body) -> dict:
    """The branch and loop-body functions defined in ``body``, by name."""
    return {s.function.name: s.function for s in body if isinstance(s, ir.Def)}


def every_input(e: Eqn, defs: dict) -> set[str]:
    """Every name the result of ``e`` is computed from (a local function passed stands for its closure)."""
    found = set()
    for atom in (*e.args, *(v for _, v in e.kwargs)):
        for name in names_in(atom):
            found |= free_names(defs[name]) - ENCLOSING if name in defs else {name}
    return found


def equations(body, helpers) -> list[tuple[list[str], Eqn]]:
    """The assignments of ``body`` as (target names, equation), in order."""
    stmts = [s for s in body if isinstance(s, ir.Assign)]
    return [(ir.target_names(s.target), eqn_of(s.value, helpers)) for s in stmts]


EdgeFn = Callable[[Eqn, dict], set]


def depends_on(body, sources, helpers=frozenset(), inputs: EdgeFn = every_input):
    """The variables of ``body`` computed from ``sources`` (themselves included)."""
    defs = local_functions(body)
    found = set(sources)
    for targets, e in equations(body, helpers):
        if inputs(e, defs) & found:
            found.update(targets)
    return found


def needed_by(body, sinks, helpers=frozenset(), inputs: EdgeFn = every_input):
    """The variables of ``body`` that ``sinks`` are computed from (themselves included)."""
    defs = local_functions(body)
    found = set(sinks)
    for targets, e in reversed(equations(body, helpers)):
        if found.intersection(targets):
            found |= inputs(e, defs)
    return found
