"""Generator functions as the lists they generate: ``yield v`` appends ``v`` to a list the function returns.

A helper such as ``def batches(X, y, k): for i in ...: yield X[i:i + k], y[i:i + k]`` is read by the
loops, comprehensions and builtins (``sum``, ``list``, ``zip``) that consume it; s2s runs it whole
instead: ``desugar(source)`` rewrites every generator function in ``source`` (the function itself and
the functions defined in it) so that it starts with ``yielded = []``, ``yield v`` is
``yielded.append(v)``, ``yield from vs`` is ``yielded.extend(vs)``, and a bare ``return`` (and the end)
returns ``yielded``. The consumer sees the same values in the same order.

Guarantee: a generator whose list would differ from what Python generates is a located error, never
rewritten: one that yields inside a ``while`` loop (it may never end, where its consumer stops early),
``x = yield v`` (a value sent in), and ``return v`` (a value only ``yield from`` reads).
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import child_nodes, iter_nodes, rewrite
from ..errors import UnsupportedSyntax
from ..naming import Namer
from .rewriting import PositionKeeping, place, with_node
from .source import FunctionSource

_FUNCTIONS = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def _own_yields(body) -> bool:
    """Whether ``body`` yields, outside the functions and classes defined in it."""
    return _first_own_yield(body) is not None


def _first_own_yield(body) -> cst.Yield | None:
    """The first ``yield`` of ``body``, outside the functions and classes defined in it."""
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Yield):
            return node
        if node is not body and isinstance(node, _FUNCTIONS):
            continue
        stack.extend(reversed(child_nodes(node)))
    return None


def _returns(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(
        stmt.body[-1], cst.Return
    )


class _Yields(PositionKeeping):
    """One generator's body, its ``yield`` statements appending to ``held`` and its returns returning it."""

    def __init__(self, source: FunctionSource, held: str):
        super().__init__(source.file.positions)
        self.source, self.held = source, held

    def fail(self, node, what: str, hint: str):
        raise UnsupportedSyntax(what, self.source.origin(node), hint)

    def visit_FunctionDef(self, node) -> bool:
        return False  # its own yields and returns (converted already, inside out)

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_While(self, node) -> bool:
        if _own_yields(node.body):
            self.fail(
                node,
                "a generator that yields inside a `while` loop is not supported",
                "s2s runs a generator to its end before its values are read; loop a known number of "
                "times (`for i in range(n)`), or return the list of values",
            )
        return True

    def visit_Yield(self, node) -> bool:
        self.fail(
            node,
            "`yield` used as a value (a generator that is sent values) is not supported",
            "yield on a line of its own (`yield v`), or return the list of values",
        )

    def leave_Expr(self, original, updated):
        value = original.value
        if not isinstance(value, cst.Yield):
            return updated
        if isinstance(value.value, cst.From):
            method, item = "extend", value.value.item
        else:
            method, item = "append", value.value or cst.Name("None")
        call = cst.Call(
            cst.Attribute(cst.Name(self.held), cst.Name(method)), [cst.Arg(item)]
        )
        return place(updated.with_changes(value=call), original, self.positions)

    def visit_Expr(self, node) -> bool:
        # the yield of a statement ``yield v`` is the statement's; its operand may hold others
        if not isinstance(node.value, cst.Yield):
            return True
        inner = node.value.value
        operand = inner.item if isinstance(inner, cst.From) else inner
        for n in iter_nodes(operand) if operand is not None else ():
            if isinstance(n, cst.Yield):
                self.visit_Yield(n)
        return False

    def leave_Return(self, original, updated):
        if original.value is not None:
            self.fail(
                original,
                "`return` with a value in a generator is not supported",
                "yield the value before a bare `return`",
            )
        new = updated.with_changes(
            value=cst.Name(self.held), whitespace_after_return=cst.SimpleWhitespace(" ")
        )
        return place(new, original, self.positions)


class _Generators(PositionKeeping):
    """Every generator function in a tree, inside out, as a function returning the list it generates."""

    def __init__(self, source: FunctionSource, namer: Namer):
        super().__init__(source.file.positions)
        self.source, self.namer = source, namer

    def leave_FunctionDef(self, original, updated):
        if not isinstance(updated.body, cst.IndentedBlock) or not _own_yields(
            updated.body
        ):
            return updated
        held = self.namer.fresh("yielded")
        rewriter = _Yields(self.source, held)
        statements = [rewrite(s, rewriter) for s in updated.body.body]
        start = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(held))], cst.List([]))]
        )
        lines = [start]
        if not _returns(statements[-1]):
            lines.append(cst.SimpleStatementLine([cst.Return(cst.Name(held))]))
        for line in lines:
            place(line, original, self.positions)
        body = updated.body.with_changes(body=[start, *statements, *lines[1:]])
        return place(updated.with_changes(body=body), original, self.positions)


def check_entry(source: FunctionSource) -> None:
    """A located error where the function transformed is itself a generator: its call returns a generator
    object, which no transform takes (``jax.grad`` refuses it too), not the list ``desugar`` makes.
    """
    node = source.node
    first = _first_own_yield(node.body) if isinstance(node, cst.FunctionDef) else None
    if first is None:
        return
    raise UnsupportedSyntax(
        f"`{source.name}` is a generator function (it has `yield`): calling it returns a generator, "
        "not arrays a transform can take",
        source.origin(first),
        f"transform a function that consumes it and returns arrays: `def loss(x): return "
        f"sum({source.name}(x))` (or `np.stack(list({source.name}(x)))`)",
    )


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its generator functions returning the lists of what they yield."""
    node = source.node
    if not any(isinstance(n, cst.Yield) for n in iter_nodes(node)):
        return source
    names = {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}
    new = rewrite(node, _Generators(source, Namer(names | set(source.env))))
    return with_node(source, new)
