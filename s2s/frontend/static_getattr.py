"""``getattr`` of a module-level object by a name known when the code is read, as the attribute itself.

Configuration-driven library code picks functions by name: ``act = getattr(jax.nn, ACTIVATION)``,
``getattr(np, "tanh")``. The object and the name are the same at every call, so ``desugar(source)``
writes the call as the attribute it reads (``jax.nn.silu``), which the rest of s2s reads as any
spelled-out function.

Guarantee: a call of Python's ``getattr`` (the name not bound in the function or rebound in its
module) whose object is a module-level object (a module, a class, an object: a name or attribute chain
the function's environment holds) and whose name is a string literal, a module-level string
constant or one of the function's own (``rewriting.own_constants``: a string argument the function
passes to ``getattr`` is bound as one, ``object_layouts``), an identifier the object has, is that attribute; with a third argument and no such
attribute, it is the default. Any other ``getattr`` stays as it is (its located error). New nodes
keep the positions of the call they stand for.
"""

from __future__ import annotations

import builtins

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .rewriting import bindings, object_of, own_constants, place, with_node
from .source import FunctionSource
from .static_tests import _UNKNOWN, _constant


class _Getattrs(cst.CSTTransformer):
    def __init__(self, source: FunctionSource, bound):
        super().__init__()
        self.source, self.bound = source, bound
        self.constants = own_constants(source)
        self.changed = False

    def on_leave(self, original, updated):
        # a node rebuilt around a replaced call keeps the position of the one it was
        new = super().on_leave(original, updated)
        positions = self.source.file.positions
        if new is not original and original in positions:
            positions.setdefault(new, positions[original])
        return new

    def leave_Call(self, original, updated):
        args = updated.args
        if not (
            isinstance(updated.func, cst.Name)
            and updated.func.value == "getattr"
            and 2 <= len(args) <= 3
            and not any(a.keyword or a.star for a in args)
        ):
            return updated
        owner = object_of(args[0].value, self.source.env, self.bound)
        named = args[1].value
        if isinstance(named, cst.Name) and named.value in self.constants:
            name = self.constants[
                named.value
            ]  # ``getattr(jax.nn, activation)``, ``activation = "gelu"``
        else:
            name = _constant(named, self.source, self.bound)
        if owner is None or name is _UNKNOWN or not isinstance(name, str):
            return updated
        if name.isidentifier() and hasattr(owner, name):
            new = cst.Attribute(args[0].value, cst.Name(name))
        elif len(args) == 3:
            new = args[2].value
        else:
            return updated
        self.changed = True
        return place(new, original, self.source.file.positions)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``getattr`` calls of known objects and names (see the module) as attributes."""
    if source.env.get("getattr", builtins.getattr) is not builtins.getattr:
        return source
    bound = bindings(source.node)
    if bound["getattr"] or not any(
        isinstance(n, cst.Name) and n.value == "getattr"
        for n in iter_nodes(source.node)
    ):
        return source
    getattrs = _Getattrs(source, bound)
    node = rewrite(source.node, getattrs)
    return with_node(source, node) if getattrs.changed else source
