"""Lists built front first in a loop: ``returns.insert(0, G)`` (discounted returns, walked backwards).

``desugar(source)`` rewrites a ``for`` loop whose body (its own statements and ``if`` blocks, not inner
loops) calls ``L.insert(0, v)`` as a statement, where ``L`` is a name the function binds to a list it
makes (``builtin_calls.made_lists``; ``returns = np.array(returns)`` after the loop may rebind it) and
the loop reads or changes ``L`` nowhere else::

    for r in reversed(rewards):              L_prepended = []
        G = r + gamma * G           ->        for r in reversed(rewards):
        returns.insert(0, G)                      G = r + gamma * G
                                                  L_prepended.append(G)
                                              returns = L_prepended[::-1] + returns

the items in the order Python's inserts leave them, before what ``L`` held. Any other ``insert`` stays
as it is (a located error). New nodes keep the positions of the user's code they stand for.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from ..naming import Namer
from .builtin_calls import append_line, made_lists
from .rewriting import PositionKeeping, assignment_line, place, with_node
from .source import FunctionSource


def _prepended(stmt) -> tuple[str, cst.BaseExpression] | None:
    """``(L, v)`` for the line ``L.insert(0, v)``."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    expr = stmt.body[0]
    call = expr.value if isinstance(expr, cst.Expr) else None
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and isinstance(call.func.value, cst.Name)
        and call.func.attr.value == "insert"
        and len(call.args) == 2
        and all(a.keyword is None and not a.star for a in call.args)
        and isinstance(call.args[0].value, cst.Integer)
        and call.args[0].value.value == "0"
    ):
        return None
    return call.func.value.value, call.args[1].value


def _own_statements(block):
    """The statements of a loop's body, its ``if`` blocks' too (not inner loops' or functions')."""
    for stmt in block:
        yield stmt
        if isinstance(stmt, cst.If):
            yield from _own_statements(stmt.body.body)
            orelse = stmt.orelse
            while isinstance(orelse, cst.If):
                yield from _own_statements(orelse.body.body)
                orelse = orelse.orelse
            if orelse is not None:
                yield from _own_statements(orelse.body.body)


class _Prepends(PositionKeeping):
    def __init__(self, source: FunctionSource, namer: Namer, lists: set):
        super().__init__(source.file.positions)
        self.namer, self.lists = namer, lists

    def leave_IndentedBlock(self, original, updated):
        out = []
        for stmt in updated.body:
            out.extend(self._loop(stmt) if isinstance(stmt, cst.For) else [stmt])
        return updated.with_changes(body=out)

    def _loop(self, loop: cst.For) -> list:
        found = [p for p in map(_prepended, _own_statements(loop.body.body)) if p]
        names = {name for name, _ in found} & self.lists
        inserts = {id(s) for s in _own_statements(loop.body.body) if _prepended(s)}
        for name in sorted(names):
            uses = [
                n
                for s in loop.body.body
                for n in iter_nodes(s)
                if isinstance(n, cst.Name) and n.value == name
            ]
            if len(uses) != sum(1 for p in found if p[0] == name):
                names.discard(name)  # read or changed otherwise in the loop: as written
        if not names:
            return [loop]
        fresh = {name: self.namer.fresh(f"{name}_prepended") for name in sorted(names)}

        class Appends(cst.CSTTransformer):
            def leave_SimpleStatementLine(self, original, updated):
                found = _prepended(original) if id(original) in inserts else None
                if found is None or found[0] not in fresh:
                    return updated
                return append_line(cst.Name(fresh[found[0]]), found[1])

        new_loop = rewrite(loop, Appends())
        place(new_loop, loop, self.positions)
        before = [
            assignment_line(cst.Name(f), cst.List([]), loop, self.positions)
            for f in fresh.values()
        ]
        after = [  # the collected items reversed, in front of what the list held
            assignment_line(
                cst.Name(name),
                cst.parse_expression(f"{f}[::-1] + {name}"),
                loop,
                self.positions,
            )
            for name, f in fresh.items()
        ]
        return [*before, new_loop, *after]


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its lists built by ``insert(0, v)`` in loops collected, then reversed."""
    node = source.node
    if not isinstance(node, cst.FunctionDef) or not any(
        isinstance(n, cst.Name) and n.value == "insert" for n in iter_nodes(node)
    ):
        return source
    lists = made_lists(node, rebound=True)
    names = {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}
    new = rewrite(node, _Prepends(source, Namer(names | set(source.env)), lists))
    return with_node(source, new)
