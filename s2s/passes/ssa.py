"""Single assignment: every name is assigned once (parameters count as assigned).

A reassigned user variable gets a numbered name from its second assignment on
(``h``, ``h_2``, ``h_3``), so every intermediate value stays available to the
backward pass. Input and output are in normal form.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import substitute
from ..naming import Namer
from .dataflow import used_names


def _rename_target(target, current, defined, namer):
    if isinstance(target, cst.Name):
        name = target.value
        if name == "_":
            return target  # an ignored result is never read
        new = namer.fresh(name) if name in defined else name
        defined.add(new)
        defined.add(name)
        current[name] = new
        return cst.Name(new)
    return target.with_changes(
        elements=[
            e.with_changes(value=_rename_target(e.value, current, defined, namer))
            for e in target.elements
        ]
    )


def ssa(
    fn: ir.Function,
    namer: Namer | None = None,
    outer: dict | None = None,
    defined: set | None = None,
) -> ir.Function:
    """Single assignment across ``fn`` and the branch and loop-body functions inside it.

    Inside a local function, free names read the enclosing function's current
    names (``outer``); names it binds are fresh across the whole function.
    """
    namer = namer or Namer(used_names(fn))
    current = {k: v for k, v in (outer or {}).items() if k not in fn.param_names}
    defined = defined if defined is not None else set()
    defined |= set(fn.param_names)
    body = []
    # the renaming so far, kept as names are assigned (rebuilt per statement, it made long functions quadratic)
    mapping = {k: cst.Name(v) for k, v in current.items() if k != v}
    for stmt in fn.body:
        if isinstance(stmt, ir.Def):
            body.append(
                ir.Def(ssa(stmt.function, namer, current, defined), stmt.origin)
            )
            continue
        value = substitute(stmt.value, mapping)
        if isinstance(stmt, ir.Return):
            body.append(ir.Return(value, stmt.origin))
        else:
            target = _rename_target(stmt.target, current, defined, namer)
            body.append(ir.Assign(target, value, stmt.origin))
            for name in ir.target_names(stmt.target):
                if current.get(name, name) != name:
                    mapping[name] = cst.Name(current[name])
                else:
                    mapping.pop(name, None)
    return fn.with_body(body)
