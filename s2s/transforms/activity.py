"""Activity analysis: which variables carry derivatives from the inputs to the outputs.

A variable is *varied* if it depends differentiably on a differentiated input,
*useful* if a differentiated output depends differentiably on it, and *active*
if both. Only active variables get cotangents.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import names_in
from ..passes.normal_form import Eqn, eqn_of, is_static
from ..rules import OPS

CONSTANT_NAMES = ("True", "False", "None")


def diff_names(atom) -> set[str]:
    """Names whose values flow differentiably through an atom (static parts excluded)."""
    if isinstance(atom, cst.Name):
        return set() if atom.value in CONSTANT_NAMES else {atom.value}
    if is_static(atom):
        return set()
    if isinstance(atom, (cst.Tuple, cst.List)):
        return set().union(*(diff_names(e.value) for e in atom.elements)) if atom.elements else set()
    if isinstance(atom, cst.Dict):
        return set().union(*(diff_names(e.value) for e in atom.elements)) if atom.elements else set()
    return set()


def target_names(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    return [n for el in target.elements for n in target_names(el.value)]


def eqn_inputs(e: Eqn, flows=None) -> set[str]:
    """Names an equation's output depends on differentiably.

    ``flows`` maps helper names to the tuple of their parameters' flags (does a
    derivative flow from that parameter to the output).
    """
    if e.kind == "op":
        op = OPS.get(e.name)
        if op is not None and op.family == "nondiff":
            return set()
        return set().union(set(), *(diff_names(a) for a in e.args), *(diff_names(v) for _, v in e.kwargs))
    if e.kind == "helper":
        flags = (flows or {}).get(e.name)
        args = e.args
        return set().union(set(), *(diff_names(a) for i, a in enumerate(args) if flags is None or (i < len(flags) and flags[i])))
    if e.kind in ("getitem", "attribute", "copy"):
        return diff_names(e.args[0])
    return set().union(set(), *(names_in(a) for a in e.args))


def activity(fn: ir.Function, wrt, outputs, helpers=frozenset(), flows=None) -> set[str]:
    """The active variables of ``fn`` for derivatives of ``outputs`` wrt ``wrt``."""
    stmts = [s for s in fn.body if isinstance(s, ir.Assign)]
    eqns = [(target_names(s.target), eqn_of(s.value, helpers)) for s in stmts]
    varied = set(wrt)
    for targets, e in eqns:
        if eqn_inputs(e, flows) & varied:
            varied.update(targets)
    useful = set(outputs)
    for targets, e in reversed(eqns):
        if useful.intersection(targets):
            useful |= eqn_inputs(e, flows)
    return varied & useful
