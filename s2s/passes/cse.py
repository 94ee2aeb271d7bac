"""Common subexpressions: a pure value computed twice in one block is computed once.

Guarantee: in each flat block (the function's body, each local function's
body), an assignment ``b = e`` whose value ``e`` is pure (operators and
``xp.`` calls other than random draws) and reads the same names, spelled the
same, as an earlier ``a = e`` of that block, with none of those names (nor
``a``) bound again in between, becomes the copy ``b = a``, which ``copies``
then removes. So ``np.var``'s inlined mean and the user's own ``np.mean`` of
the same axis are one value, in the primal code and in every derivative.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import dotted, iter_nodes, names_in


def cse(fn: ir.Function, copies) -> ir.Function:
    """``fn`` with each repeated pure value read from its first name (module docstring), ``copies``
    (which drops ``b = a``) applied after each round: sharing one value can make two more alike
    (``x - mu`` and ``x - mean`` once ``mu`` is ``mean``)."""
    for _ in range(8):
        shared = []
        fn = copies(fn.with_body(_block(fn.body, shared)))
        if not shared:
            break
    return fn


def _pure(value) -> bool:
    if isinstance(value, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return False  # a copy or a literal: nothing to share
    for node in iter_nodes(value):
        if isinstance(node, (cst.Lambda, cst.Yield, cst.Await, cst.NamedExpr)):
            return False
        if isinstance(node, cst.Call):
            func = dotted(node.func) or ""
            if not func.startswith("xp.") or "random" in func:
                return False
    return True


def _block(body, shared: list) -> list:
    # a value's code -> (the name holding it, the names it reads); ``by_name``: name -> the entries that
    # read it or are held by it (each entry forgotten once any of its names is bound anew: linear time)
    seen: dict[str, tuple[str, set]] = {}
    by_name: dict[str, list] = {}
    out = []

    def forget(names):
        for name in names:
            for code, entry in by_name.pop(name, ()):
                if seen.get(code) is entry:
                    del seen[code]

    for stmt in body:
        record = None
        if isinstance(stmt, ir.Def):
            inner = stmt.function
            stmt = ir.Def(inner.with_body(_block(inner.body, shared)), stmt.origin)
            bound = {inner.name}
        elif isinstance(stmt, ir.Assign):
            bound = set(ir.target_names(stmt.target))
            if not bound:  # an element write changes a container: forget everything
                seen.clear()
                by_name.clear()
            elif isinstance(stmt.target, cst.Name) and _pure(stmt.value):
                code = cst.Module([]).code_for_node(stmt.value)
                if code in seen:
                    stmt = ir.Assign(stmt.target, cst.Name(seen[code][0]), stmt.origin)
                    shared.append(stmt)
                elif not bound & names_in(stmt.value):
                    record = code, (stmt.target.value, names_in(stmt.value))
        else:
            bound = set()
        # what this statement binds anew: values that read those names, or are held by them, are gone
        forget(bound)
        if record is not None:
            code, entry = record
            seen[code] = entry
            for name in entry[1] | {entry[0]}:
                by_name.setdefault(name, []).append((code, entry))
        out.append(stmt)
    return out
