"""``del`` of names, read as nothing: ``del params`` (optax's "this argument is unused") is dropped.

Guarantee of ``desugar(source)``: each ``del a`` / ``del a, b`` whose targets are all plain names is a
``pass`` at its position. In a program that runs, every read of a deleted name comes after the name is
bound again (otherwise Python raises ``NameError``), so no value the function computes changes. A
``del`` of an item or an attribute (``del xs[0]``, ``del d["k"]``, ``del self.w``) is left to
``list_methods`` (items of lists the function makes) and otherwise to ``fence``'s located error.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes
from .rewriting import with_node
from .source import FunctionSource


def _names_only(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return True
    return isinstance(target, (cst.Tuple, cst.List)) and all(
        _names_only(el.value) for el in target.elements
    )


class _DeletedNames(cst.CSTTransformer):
    def leave_Del(self, original, updated):
        return cst.Pass() if _names_only(updated.target) else updated


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``del`` of names as ``pass`` (itself when it has none)."""
    node = source.node
    if not any(
        isinstance(n, cst.Del) and _names_only(n.target) for n in iter_nodes(node)
    ):
        return source
    return with_node(source, node.visit(_DeletedNames()))
