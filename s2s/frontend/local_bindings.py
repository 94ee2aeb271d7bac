"""Module-level functions passed to a local function: the local function written once per function it is
passed, its parameter standing for that function.

Guarantee of ``desugar(source)``: a ``def`` at the function's own level (bound once, no ``*args`` or
``**kwargs``) called by name with an argument that names a module-level function (``layer(h, swish)``,
``layer(h, np.tanh)``, ``layer(h, ACTS["relu"])`` once ``function_loops`` spelled it) is called as a copy
of itself without that parameter (``layer_swish(h)``), written just after it, whose body reads the
function where it read the parameter. It is what ``function_args`` does for module-level helpers; a
local function s2s cannot bind so (its parameter rebound in it, the function's name shadowed in it, a
value not known to be a function) is called as written. New nodes keep the positions of the code they
stand for.
"""

from __future__ import annotations

import inspect

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .function_args import is_function
from .function_loops import Positioned
from .rewriting import (
    bindings,
    function_body,
    namer_of,
    object_of,
    place,
    with_body,
    with_node,
)
from .source import FunctionSource


def _local_defs(body, bound) -> dict:
    """The plain local ``def``s of ``body`` (bound once in the function): name -> node."""
    return {
        stmt.name.value: stmt
        for stmt in body
        if isinstance(stmt, cst.FunctionDef)
        and bound[stmt.name.value] == 1
        and not stmt.decorators
        and not isinstance(stmt.params.star_arg, cst.Param)
        and stmt.params.star_kwarg is None
        and not stmt.params.posonly_params
    }


def _function_named(node, source: FunctionSource, bound) -> object | None:
    """The module-level function a name or attribute chain names (no name of the function's), else None."""
    obj = object_of(node, source.env, bound)
    return obj if is_function(obj) and not isinstance(obj, type) else None


class _Calls(cst.CSTTransformer):
    """Calls of local functions with module-level functions as arguments, as calls of bound copies."""

    def __init__(self, source, defs, bound):
        super().__init__()
        self.source, self.defs, self.bound = source, defs, bound
        self.namer = namer_of(source)
        # (def name, ((parameter, argument code), ...)) -> (copy name, its def)
        self.copies = {}
        self.depth = 0

    def visit_FunctionDef(self, node):
        self.depth += 1  # (calls inside a local def are its own: left as written)

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def leave_Call(self, original, updated):
        if self.depth > 1 or not isinstance(updated.func, cst.Name):
            return updated
        local = self.defs.get(updated.func.value)
        if local is None or any(a.star for a in updated.args):
            return updated
        signature = inspect.Signature(
            [
                inspect.Parameter(
                    p.name.value,
                    (
                        inspect.Parameter.POSITIONAL_OR_KEYWORD
                        if p in local.params.params
                        else inspect.Parameter.KEYWORD_ONLY
                    ),
                )
                for p in (*local.params.params, *local.params.kwonly_params)
            ]
        )
        try:
            passed = signature.bind_partial(
                *[a.value for a in updated.args if a.keyword is None],
                **{a.keyword.value: a.value for a in updated.args if a.keyword},
            ).arguments
        except TypeError:
            return updated  # (Python's error where the call runs)
        inner = bindings(local)
        fixed = {
            name: value
            for name, value in passed.items()
            if _function_named(value, self.source, self.bound) is not None
            and inner[name] == 1  # only the parameter binds it
            and not any(
                isinstance(n, cst.Name) and inner[n.value] for n in iter_nodes(value)
            )
        }
        if not fixed:
            return updated
        code = cst.Module([]).code_for_node
        key = (local.name.value, tuple((k, code(v)) for k, v in sorted(fixed.items())))
        if key not in self.copies:
            self.copies[key] = self._copy(local, fixed, code)
        name = self.copies[key][0]
        kept = [a for a in updated.args if not _passes(a, passed, fixed)]
        return updated.with_changes(func=cst.Name(name), args=kept)

    def _copy(self, local, fixed, code):
        """``(name, def)``: ``local`` without the parameters in ``fixed``, which stand for their functions."""
        suffix = "_".join(code(v).split(".")[-1].strip("_") for v in fixed.values())
        name = self.namer.fresh(f"{local.name.value}_{suffix}")
        positions = self.source.file.positions
        body = rewrite(local.body, Positioned(dict(fixed), positions))
        params = local.params.with_changes(
            params=[p for p in local.params.params if p.name.value not in fixed],
            kwonly_params=[
                p for p in local.params.kwonly_params if p.name.value not in fixed
            ],
        )
        if not params.kwonly_params:
            params = params.with_changes(star_arg=cst.MaybeSentinel.DEFAULT)
        copy = local.with_changes(name=cst.Name(name), params=params, body=body)
        return name, place(copy, local, positions)


def _passes(arg, passed, fixed) -> bool:
    """Whether the call's argument ``arg`` is one passed to a parameter in ``fixed``."""
    return any(passed.get(name) is arg.value for name in fixed)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its local functions bound to the module-level functions they are passed."""
    body = function_body(source)
    if body is None or not any(isinstance(s, cst.FunctionDef) for s in body):
        return source
    bound = bindings(source.node)
    defs = _local_defs(body, bound)
    if not defs:
        return source
    calls = _Calls(source, defs, bound)
    new = rewrite(source.node, calls)
    if not calls.copies:
        return source
    written = {}
    for (local, _), (_, copy) in calls.copies.items():
        written.setdefault(local, []).append(copy)
    source = with_node(source, new)
    statements = []
    for stmt in function_body(source):
        statements.append(stmt)
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in written:
            statements.extend(written.pop(stmt.name.value))
    return with_body(source, statements)
