"""Positions of nonzeros used only to index, read as the boolean masks they stand for.

``zero_idx = np.nonzero(endog == 0)[0]`` then ``llf[zero_idx] = np.log(w[zero_idx] + ...)``
(statsmodels' zero-inflated models): the positions' count depends on the data, which no compiled
program can hold, but indexing by them selects what the mask selects, in the same order. So
``desugar(source)`` writes ``zero_idx = rt.nonzero_mask(endog == 0)`` (``m != 0``, s2s's runtime under
a name of the function's own; a located error for an ``m`` of more than one axis, where positions and
mask differ), and every ``x[zero_idx]``
reads and writes by the mask, which compiles (``passes/masks``) and batches.

Guarantee: ``name = np.nonzero(m)[0]``, ``np.where(m)[0]``, ``np.flatnonzero(m)``, ``np.argwhere(m)[:, 0]``
or ``np.argwhere(m).ravel()`` (``.flatten()``) (NumPy's or ``jax.numpy``'s), in any block, ``name`` bound
once and read only as the one index of a subscript (``x[name]``, ``x[name] = v``); and those calls
written as the one index of a subscript (``np.sum(x[np.flatnonzero(x > 0)])``). Anything else
(``len(name)``, ``name + 1``) stays as it is (its located error under XLA). New nodes keep the call's
position.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, replace_nodes
from .rewriting import (
    assignment,
    assignment_line,
    bindings,
    function_body,
    mentions,
    namer_of,
    object_of,
    place,
    with_blocks,
    with_body,
)
from .source import FunctionSource
from .spellings import canonical_op

# the functions giving positions of nonzeros, and how their positions are read: the first item (``[0]``),
# the call itself, or the first column (``[:, 0]``, ``.ravel()``)
_POSITIONS = {
    "nonzero": "first",
    "where": "first",
    "flatnonzero": "call",
    "argwhere": "column",
}


class _Reader:
    def __init__(self, source: FunctionSource):
        self.source = source
        self.positions = source.file.positions
        self.bound = bindings(source.node)
        self.indexes = _index_reads(source.node)
        self.namer = namer_of(source)
        self.runtime = None
        self.changed = False

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            masked = self._masked(stmt)
            if masked is None:
                stmt = with_blocks(stmt, self.block, self.positions)
                out.append(self._indexed_in_place(stmt))
            else:
                out.extend(masked)
                self.changed = True
        return out

    def _mask(self, found) -> cst.Call:
        if self.runtime is None:  # s2s's runtime, under a name of the function's own
            self.runtime = self.namer.fresh("s2s_runtime")
        helper = cst.Attribute(cst.Name(self.runtime), cst.Name("nonzero_mask"))
        return cst.Call(helper, [cst.Arg(found)])

    def _indexed_in_place(self, stmt):
        """``x[np.flatnonzero(m)]`` in a simple statement's own nodes: ``x[mask]``."""
        if not isinstance(stmt, cst.SimpleStatementLine):
            return stmt
        replaced = {}
        for node in iter_nodes(stmt):
            if (
                isinstance(node, cst.Subscript)
                and len(node.slice) == 1
                and isinstance(node.slice[0].slice, cst.Index)
            ):
                index = node.slice[0].slice.value
                found = self._positions_of(index)
                if found is not None:
                    replaced[index] = place(self._mask(found), index, self.positions)
        if not replaced:
            return stmt
        self.changed = True
        return place(replace_nodes(stmt, replaced), stmt, self.positions)

    def _masked(self, stmt) -> list | None:
        assign = assignment(stmt)
        if assign is None or not isinstance(assign.targets[0].target, cst.Name):
            return None
        name = assign.targets[0].target.value
        found = self._positions_of(assign.value)
        if (
            found is None
            or self.bound[name] != 1
            or mentions(name, [self.source.node]) != 1 + self.indexes.get(name, 0)
        ):
            return None
        return [
            assignment_line(cst.Name(name), self._mask(found), stmt, self.positions)
        ]

    def _positions_of(self, value):
        """``m`` of ``np.nonzero(m)[0]``, ``np.where(m)[0]``, ``np.flatnonzero(m)``, ``np.argwhere(m)[:, 0]``
        or ``np.argwhere(m).ravel()``, else None."""
        read, call = _read_of(value)
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and len(call.args) == 1
            and call.args[0].keyword is None
            and not call.args[0].star
        ):
            return None
        name = call.func.attr.value
        if _POSITIONS.get(name) != read:
            return None
        if canonical_op(object_of(call.func, self.source.env, self.bound)) != name:
            return None  # (NumPy's or jax.numpy's function, by identity)
        return call.args[0].value


def _is_int(node, value: str) -> bool:
    return isinstance(node, cst.Integer) and node.value == value


def _read_of(value) -> tuple[str, cst.BaseExpression]:
    """How ``value`` reads a call's result (``_POSITIONS``), and the call."""
    if isinstance(value, cst.Subscript):
        items = [item.slice for item in value.slice]
        if (
            len(items) == 1
            and isinstance(items[0], cst.Index)
            and _is_int(items[0].value, "0")
        ):
            return "first", value.value
        if (
            len(items) == 2
            and isinstance(items[0], cst.Slice)
            and items[0].lower is None
            and items[0].upper is None
            and items[0].step is None
            and isinstance(items[1], cst.Index)
            and _is_int(items[1].value, "0")
        ):
            return "column", value.value
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in ("ravel", "flatten")
        and not value.args
    ):
        return "column", value.func.value
    return "call", value


def _index_reads(node) -> dict:
    """How many times each name is the one index of a subscript (``x[name]``)."""
    counts: dict = {}
    for n in iter_nodes(node):
        if (
            isinstance(n, cst.Subscript)
            and len(n.slice) == 1
            and isinstance(n.slice[0].slice, cst.Index)
            and isinstance(n.slice[0].slice.value, cst.Name)
        ):
            key = n.slice[0].slice.value.value
            counts[key] = counts.get(key, 0) + 1
    return counts


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its positions of nonzeros used only to index read as masks (see the module)."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.Attribute) and n.attr.value in _POSITIONS
        for n in iter_nodes(source.node)
    ):
        return source
    reader = _Reader(source)
    statements = reader.block(body)
    if not reader.changed:
        return source
    from .. import runtime

    return with_body(source, statements, env={**source.env, reader.runtime: runtime})
