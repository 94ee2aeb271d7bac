"""Which results of a helper of the program are Python lists, read from its source once.

``hs, caches = run(w, xs)`` binds lists where ``run`` returns them: ``return hs, caches`` of names only ever
bound to list displays, comprehensions or ``list(...)`` (and grown by ``append``). The lowering of control
flow (``passes/control``) gives such names the kind of a list display, so NumPy functions that read them
read them as NumPy does, as one array (``np.mean(hs, axis=0)``). Anything else is unknown (None).
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import dotted, iter_nodes, own_nodes
from ..frontend import source
from .collected import LIST
from .helper_sharing import per_helper

LIST_CALLS = frozenset({"list", "sorted", "rt.append"})


@per_helper
def returned_lists(helper):
    """``LIST`` where every ``return`` of ``helper`` gives a list; a tuple (one entry per item, ``LIST`` or
    None) where every one gives a tuple display of that length; None where s2s cannot tell.
    """
    try:
        src = source.load(helper)
    except Exception:  # not a function s2s reads
        return None
    return _returned_lists(src.node) if isinstance(src.node, cst.FunctionDef) else None


def local_lists(local: ir.Function):
    """``returned_lists`` of a local function (a method of a local object, a nested ``def``), as lowered."""
    return _returned_lists(cst.parse_module(ir.to_source(local)).body[0])


def _returned_lists(function: cst.FunctionDef):
    bound: dict = {}
    returns = []
    for node in own_nodes([function.body]):
        if isinstance(node, cst.Assign):
            for t in node.targets:
                pairs = dict(_pairs(t.target, node.value))
                for n in iter_nodes(t.target):
                    if isinstance(n, cst.Name):
                        bound.setdefault(n.value, []).append(pairs.get(n))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)):
            for n in iter_nodes(node.target):
                if isinstance(n, cst.Name):
                    value = node.value if isinstance(node, cst.AnnAssign) else None
                    bound.setdefault(n.value, []).append(value)
        elif isinstance(node, cst.Return):
            returns.append(node.value)
    params = {p.name.value for p in function.params.params}

    def is_list(expr, seen=frozenset()) -> bool:
        if isinstance(expr, (cst.List, cst.ListComp)):
            return True
        if isinstance(expr, cst.Call):
            return dotted(expr.func) in LIST_CALLS
        if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, cst.Add
        ):  # ``[h0] + hs``
            return is_list(expr.left, seen) or is_list(expr.right, seen)
        if isinstance(expr, cst.Name) and expr.value not in params | seen:
            values = bound.get(expr.value)
            return bool(values) and all(
                v is not None and is_list(v, seen | {expr.value}) for v in values
            )
        return False

    def kind(expr):
        if isinstance(expr, cst.Tuple):
            return tuple(LIST if is_list(e.value) else None for e in expr.elements)
        return LIST if expr is not None and is_list(expr) else None

    kinds = {kind(r) for r in returns}
    if len(kinds) != 1:
        return None
    (found,) = kinds
    return found if found == LIST or (found and LIST in found) else None


def _pairs(target, value):
    """``(name node, value)`` for the names ``target = value`` binds to a value of their own: ``hs = []``,
    ``hs, cs = [], []``."""
    if isinstance(target, cst.Name):
        yield target, value
    elif (
        isinstance(target, (cst.Tuple, cst.List))
        and isinstance(value, (cst.Tuple, cst.List))
        and len(target.elements) == len(value.elements)
        and not any(isinstance(e, cst.StarredElement) for e in target.elements)
        and not any(isinstance(e, cst.StarredElement) for e in value.elements)
    ):
        for t, v in zip(target.elements, value.elements):
            yield from _pairs(t.value, v.value)


def list_results(helpers: dict) -> dict:
    """Helper name (as the code calls it) -> ``returned_lists`` of it, for the helpers that return lists."""
    found = {name: returned_lists(f) for name, f in (helpers or {}).items()}
    return {name: kind for name, kind in found.items() if kind is not None}
