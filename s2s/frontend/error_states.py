"""``with np.errstate(...):`` blocks, and other context managers that change no value, read as their
statements.

NumPy's ``errstate`` sets what a floating-point warning does inside the block
(``under="ignore"``: hmmlearn's forward pass around its ``logsumexp``); it changes
no value. Nor do ``jax.named_scope(name)`` and ``jax.profiler.TraceAnnotation(name)``
(names for profiles), ``warnings.catch_warnings()`` and ``contextlib.nullcontext()``; calls that
only set which warnings show (``warnings.simplefilter``) are dropped.
``desugar(source)`` writes such a block's statements in its place, in the
function and in its local functions. A block that turns warnings into errors
(``"raise"``, ``"call"``: an exception s2s's transforms would not raise where NumPy
does), a context manager bound to a name (``as``), or any other ``with`` stays as it
is: a located error (``fence``).
"""

from __future__ import annotations

import functools

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


_SETTING_NAMES = ("simplefilter", "filterwarnings", "resetwarnings")


class _Blocks(PositionKeeping):
    def __init__(self, source: FunctionSource):
        super().__init__(source.file.positions)
        self.env, self.bound = source.env, bindings(source.node)
        self.changed = False

    def _quiet(self, item: cst.WithItem) -> bool:
        call = item.item
        if item.asname is not None or not isinstance(call, cst.Call):
            return False
        manager = object_of(call.func, self.env, self.bound)
        if manager is not None and any(manager is m for m in _neutral_managers()):
            return True
        return manager is np.errstate and all(
            a.keyword is not None
            and isinstance(a.value, cst.SimpleString)
            and a.value.evaluated_value in QUIET
            for a in call.args
        )

    def leave_SimpleStatementLine(self, original, updated):
        """Calls that only set what warnings do (``warnings.simplefilter("ignore")``), dropped: a line of
        nothing else is ``pass``."""
        kept = [s for s in updated.body if not self._sets_warnings(s)]
        if len(kept) == len(updated.body):
            return updated
        self.changed = True
        return updated.with_changes(body=kept or [cst.Pass()])

    def _sets_warnings(self, small) -> bool:
        return (
            isinstance(small, cst.Expr)
            and isinstance(small.value, cst.Call)
            and any(
                object_of(small.value.func, self.env, self.bound) is f
                for f in _warning_settings()
            )
        )

    def leave_With(self, original, updated):
        if updated.asynchronous is not None or not all(map(self._quiet, updated.items)):
            return updated
        self.changed = True
        body = updated.body
        lines = body.body if isinstance(body, cst.IndentedBlock) else [body]
        return cst.FlattenSentinel(lines)


@functools.cache
def _neutral_managers() -> tuple:
    """Context managers that change no value: names for profiles, warnings kept as they were."""
    import contextlib
    import warnings

    import jax

    return (
        jax.named_scope,
        jax.profiler.TraceAnnotation,
        warnings.catch_warnings,
        contextlib.nullcontext,
    )


@functools.cache
def _warning_settings() -> tuple:
    """Functions called for how warnings are shown, which changes no value."""
    import warnings

    return (
        warnings.simplefilter,
        warnings.filterwarnings,
        warnings.resetwarnings,
    )


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its quiet ``np.errstate`` blocks written in place (see the module), and its calls that
    only set what warnings do dropped."""
    if not any(
        isinstance(n, cst.With)
        or (isinstance(n, cst.Name) and n.value in _SETTING_NAMES)
        for n in iter_nodes(source.node)
    ):
        return source
    blocks = _Blocks(source)
    node = rewrite(source.node, blocks)
    return with_node(source, node) if blocks.changed else source
