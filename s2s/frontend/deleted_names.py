"""``del`` of names and ``global`` declarations of names only read, read as nothing: ``del params``
(optax's "this argument is unused") and ``global SCALE`` (where the function never binds ``SCALE``: its
reads are the module's either way) are dropped.

Guarantee of ``desugar(source)``: each ``global`` statement none of whose names the function binds,
deletes or imports (anywhere in it) is a ``pass``; each ``del a`` / ``del a, b`` whose targets are all
plain names is a ``pass`` at its position. In a program that runs, every read of a deleted name comes after the name is
bound again (otherwise Python raises ``NameError``), so no value the function computes changes. A
``del`` of an item or an attribute (``del xs[0]``, ``del d["k"]``, ``del self.w``) is left to
``list_methods`` (items of lists the function makes) and otherwise to ``fence``'s located error.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .rewriting import bindings, with_node
from .source import FunctionSource


def _names_only(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return True
    return isinstance(target, (cst.Tuple, cst.List)) and all(
        _names_only(el.value) for el in target.elements
    )


class _DeletedNames(cst.CSTTransformer):
    def __init__(self, bound):
        super().__init__()
        self.bound = bound
        self.changed = False

    def leave_Del(self, original, updated):
        return self._dropped(updated, _names_only(updated.target))

    def leave_Global(self, original, updated):
        read_only = not any(n.name.value in self.bound for n in updated.names)
        return self._dropped(updated, read_only)

    def _dropped(self, statement, drop: bool):
        self.changed |= drop
        return cst.Pass() if drop else statement


def _bound(node) -> set:
    """The names ``node`` binds, deletes or imports anywhere in it."""
    found = set(bindings(node))
    for n in iter_nodes(node):
        if isinstance(n, cst.Del):
            found |= {m.value for m in iter_nodes(n.target) if isinstance(m, cst.Name)}
        elif isinstance(n, (cst.Import, cst.ImportFrom)) and not isinstance(
            n.names, cst.ImportStar
        ):
            for alias in n.names:
                name = alias.asname.name if alias.asname else alias.name
                if isinstance(name, cst.Name):
                    found.add(name.value)
    return found


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``del`` of names and its ``global`` of names only read as ``pass`` (itself
    when it has none)."""
    node = source.node
    if not any(
        (isinstance(n, cst.Del) and _names_only(n.target)) or isinstance(n, cst.Global)
        for n in iter_nodes(node)
    ):
        return source
    dropping = _DeletedNames(_bound(node))
    new = rewrite(node, dropping)
    return with_node(source, new) if dropping.changed else source
