"""``with np.errstate(...):`` blocks, read as their statements.

NumPy's ``errstate`` sets what a floating-point warning does inside the block
(``under="ignore"``: hmmlearn's forward pass around its ``logsumexp``); it changes
no value. ``desugar(source)`` writes the block's statements in its place, in the
function and in its local functions. A block that turns warnings into errors
(``"raise"``, ``"call"``: an exception s2s's transforms would not raise where NumPy
does), an ``errstate`` bound to a name (``as``), or any other ``with`` stays as it
is: a located error (``fence``).
"""

from __future__ import annotations

import libcst as cst
import numpy as np

from ..cstutil import iter_nodes, rewrite
from .rewriting import PositionKeeping, bindings, object_of, with_node
from .source import FunctionSource

QUIET = (
    "ignore",
    "warn",
    "print",
    "log",
)  # what a floating-point warning may do in the block


class _Blocks(PositionKeeping):
    def __init__(self, source: FunctionSource):
        super().__init__(source.file.positions)
        self.env, self.bound = source.env, bindings(source.node)
        self.changed = False

    def _quiet(self, item: cst.WithItem) -> bool:
        call = item.item
        return (
            item.asname is None
            and isinstance(call, cst.Call)
            and object_of(call.func, self.env, self.bound) is np.errstate
            and all(
                a.keyword is not None
                and isinstance(a.value, cst.SimpleString)
                and a.value.evaluated_value in QUIET
                for a in call.args
            )
        )

    def leave_With(self, original, updated):
        if updated.asynchronous is not None or not all(map(self._quiet, updated.items)):
            return updated
        self.changed = True
        body = updated.body
        lines = body.body if isinstance(body, cst.IndentedBlock) else [body]
        return cst.FlattenSentinel(lines)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its quiet ``np.errstate`` blocks written in place (see the module)."""
    if not any(isinstance(n, cst.With) for n in iter_nodes(source.node)):
        return source
    blocks = _Blocks(source)
    node = rewrite(source.node, blocks)
    return with_node(source, node) if blocks.changed else source
