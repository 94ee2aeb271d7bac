"""A NumPy ufunc's ``out`` argument, read as the write into ``out`` that it is.

``p = np.exp(p, p)`` (scikit-learn's in-place softmax), ``np.add(a, b, out=c)``,
``np.clip``-free ``np.maximum(x, 0, out=x)``: the ufunc computes into ``out`` and
returns it. ``desugar(source)`` writes ``out[...] = np.exp(p)`` (then ``p = out``
where the call's value is assigned to another name), so the write is an element
write, which s2s checks for memory ``out`` shares like any other.

Guarantee: a statement that is such a call, or assigns one to a name, in any
block; the ufunc NumPy's (``np.exp``, ``np.add``: a ``numpy.ufunc``), ``out``
one name given as the argument after its inputs or as ``out=name`` (or
``out=(name,)``), no ``where=``. Other keywords stay on the call. Anything else
stays as it is (its located error). New nodes keep the call's position.
"""

from __future__ import annotations

import libcst as cst
import numpy

from ..cstutil import iter_nodes
from .rewriting import (
    assignment,
    assignment_line,
    bindings,
    function_body,
    object_of,
    place,
    with_blocks,
    with_body,
)
from .source import FunctionSource


class _Writer:
    def __init__(self, source: FunctionSource):
        self.source = source
        self.positions = source.file.positions
        self.bound = bindings(source.node)
        self.changed = False

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            written = self._written(stmt)
            if written is None:
                out.append(with_blocks(stmt, self.block, self.positions))
            else:
                out.extend(written)
                self.changed = True
        return out

    def _written(self, stmt) -> list | None:
        assign = assignment(stmt)
        if assign is not None:
            call, target = assign.value, assign.targets[0].target
            if not isinstance(target, cst.Name):
                return None
        elif (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
        ):
            call, target = stmt.body[0].value, None
        else:
            return None
        split = self._split(call)
        if split is None:
            return None
        computed, into = split
        write = cst.Subscript(into, [cst.SubscriptElement(cst.Index(cst.Ellipsis()))])
        lines = [
            assignment_line(
                write, place(computed, call, self.positions), stmt, self.positions
            )
        ]
        if target is not None and target.value != into.value:
            lines.append(assignment_line(target, into, stmt, self.positions))
        return lines

    def _split(self, call) -> tuple | None:
        """``(the ufunc's call without out, out)`` for a call of a NumPy ufunc with an ``out`` name."""
        if not isinstance(call, cst.Call) or any(a.star for a in call.args):
            return None
        ufunc = object_of(call.func, self.source.env, self.bound)
        if not isinstance(ufunc, numpy.ufunc):
            return None
        positional = [a for a in call.args if a.keyword is None]
        keywords = [a for a in call.args if a.keyword is not None]
        given = [a for a in keywords if a.keyword.value == "out"]
        if any(a.keyword.value == "where" for a in keywords):
            return None
        if len(positional) == ufunc.nin + 1 and not given:
            into, inputs = positional[-1].value, positional[:-1]
        elif len(positional) == ufunc.nin and len(given) == 1:
            into, inputs = given[0].value, positional
            if isinstance(into, cst.Tuple) and len(into.elements) == 1:
                into = into.elements[0].value
        else:
            return None
        if not isinstance(into, cst.Name):
            return None
        rest = [a for a in keywords if a.keyword.value != "out"]
        args = [
            a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in (*inputs, *rest)
        ]
        return call.with_changes(args=args), into


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ufunc ``out`` arguments written as element writes (see the module)."""
    body = function_body(source)
    if body is None or (
        not any(
            isinstance(n, cst.Name) and n.value == "out"
            for n in iter_nodes(source.node)
        )
        and not _positional_outputs(source)
    ):
        return source
    writer = _Writer(source)
    statements = writer.block(body)
    return with_body(source, statements) if writer.changed else source


def _positional_outputs(source: FunctionSource) -> bool:
    """Whether a call in ``source`` may pass a ufunc more positional arguments than its inputs."""
    bound = bindings(source.node)
    for n in iter_nodes(source.node):
        if isinstance(n, cst.Call) and isinstance(n.func, (cst.Name, cst.Attribute)):
            ufunc = object_of(n.func, source.env, bound)
            if (
                isinstance(ufunc, numpy.ufunc)
                and sum(a.keyword is None for a in n.args) > ufunc.nin
            ):
                return True
    return False
