"""Lists made of placeholders and filled by a loop at its counter, as the lists the loop collects.

Backward recursions (a Riccati sweep's gains, a smoother's gains) preallocate a list and fill it::

    gains = [None] * N
    for k in reversed(range(N)):
        ...
        gains[k] = K

A compiled loop can neither write a Python list at a traced position nor carry a list whose items
turn from placeholders into arrays. But each step writes the item of its own counter, once, and reads
none: ``desugar(source)`` writes the loop as collecting its values (``gains_items.append(K)``), and
the list after it as those items in the order of their positions (``gains = gains_items[::-1]`` for a
loop over ``reversed(range(N))``), which ``passes/collected.py`` reads as any collected list.

Guarantee: a line ``name = [value] * n`` (or ``n * [value]``) at a block's own level, followed at the
same level, with no statement between naming ``name``, by a ``for`` (no ``else``) over ``range(n)``
or ``reversed(range(n))`` (``n`` written the same, naming nothing the loop binds), whose target is
a name the body does not bind, whose body holds at its own level one ``name[target] = v`` line and
names ``name`` nowhere else, and holds no ``break``, ``continue``, ``return`` or ``yield``; no local
function or lambda of the function names ``name`` (a call could read the list half filled). Every item
is then written by the loop, and the list it leaves is the one Python's would hold. Any other list
stays as it is. New nodes keep the positions of the lines they stand for.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, names_in, own_nodes
from .rewriting import (
    assignment,
    assignment_line,
    bindings,
    function_body,
    mentions,
    namer_of,
    place,
    with_blocks,
    with_body,
)
from .source import FunctionSource
from .static_sequences import is_range_call

_JUMPS = (cst.Break, cst.Continue, cst.Return, cst.Yield)


def _placeholders(stmt):
    """``(name, n)`` of a line ``name = [value] * n`` (or ``n * [value]``), else None."""
    assign = assignment(stmt)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name):
        return None
    value = assign.value
    if not (
        isinstance(value, cst.BinaryOperation)
        and isinstance(value.operator, cst.Multiply)
    ):
        return None
    for display, n in ((value.left, value.right), (value.right, value.left)):
        if isinstance(display, cst.List) and len(display.elements) == 1:
            return assign.targets[0].target.value, n
    return None


def _sweep(loop, n, bound) -> bool | None:
    """Whether the ``for`` loop runs over ``reversed(range(n))`` (True) or ``range(n)`` (False), else None."""
    it = loop.iter
    backward = (
        isinstance(it, cst.Call)
        and isinstance(it.func, cst.Name)
        and it.func.value == "reversed"
        and "reversed" not in bound
        and len(it.args) == 1
        and not it.args[0].keyword
    )
    if backward:
        it = it.args[0].value
    if not (is_range_call(it, bound) and len(it.args) == 1):
        return None
    return backward if it.args[0].value.deep_equals(n) else None


def _write_at(stmt, name: str, counter: str):
    """The value ``v`` of a line ``name[counter] = v``, else None."""
    assign = assignment(stmt)
    target = assign.targets[0].target if assign is not None else None
    if (
        isinstance(target, cst.Subscript)
        and isinstance(target.value, cst.Name)
        and target.value.value == name
        and len(target.slice) == 1
        and isinstance(target.slice[0].slice, cst.Index)
        and isinstance(target.slice[0].slice.value, cst.Name)
        and target.slice[0].slice.value.value == counter
    ):
        return assign.value
    return None


class _Rewriter:
    def __init__(self, source: FunctionSource):
        self.positions = source.file.positions
        self.namer = namer_of(source)
        self.bound = bindings(source.node)
        self.changed = False
        # names a local function or lambda reads: a call in the loop could read the list half filled
        self.captured = {
            n.value
            for scope in iter_nodes(source.node)
            if isinstance(scope, (cst.FunctionDef, cst.Lambda))
            and scope is not source.node
            for n in iter_nodes(scope)
            if isinstance(n, cst.Name)
        }

    def block(self, statements) -> list:
        statements = [with_blocks(s, self.block, self.positions) for s in statements]
        out, k = [], 0
        while k < len(statements):
            filled = self.filled(statements, k)
            if filled is None:
                out.append(statements[k])
                k += 1
                continue
            lines, k = filled
            out.extend(lines)
        return out

    def filled(self, statements, k):
        """``(lines, next index)`` for a list of placeholders at ``k`` and the loop filling it, else None."""
        found = _placeholders(statements[k])
        if found is None:
            return None
        name, n = found
        j = next(
            (
                i
                for i in range(k + 1, len(statements))
                if mentions(name, [statements[i]])
            ),
            None,
        )
        loop = statements[j] if j is not None else None
        if not (
            isinstance(loop, cst.For)
            and loop.orelse is None
            and isinstance(loop.target, cst.Name)
        ):
            return None
        counter, body = loop.target.value, list(loop.body.body)
        backward = _sweep(loop, n, self.bound)
        writes = [s for s in body if _write_at(s, name, counter) is not None]
        if (
            backward is None
            or name in self.captured
            or len(writes) != 1
            or mentions(name, body) != 1
            or counter in bindings(loop.body)
            or names_in(n) & set(bindings(loop))
            or any(isinstance(node, _JUMPS) for node in own_nodes(body))
        ):
            return None
        items = cst.Name(self.namer.fresh(f"{name}_items"))
        write = writes[0]
        append = place(
            cst.SimpleStatementLine(
                [
                    cst.Expr(
                        cst.Call(
                            cst.Attribute(items, cst.Name("append")),
                            [cst.Arg(_write_at(write, name, counter))],
                        )
                    )
                ]
            ),
            write,
            self.positions,
        )
        new_body = [append if s is write else s for s in body]
        new_loop = loop.with_changes(body=loop.body.with_changes(body=new_body))
        if loop in self.positions:
            self.positions[new_loop] = self.positions[loop]
        ordered = (
            cst.Subscript(
                items,
                [cst.SubscriptElement(cst.parse_expression("_[::-1]").slice[0].slice)],
            )
            if backward
            else items
        )
        self.changed = True
        return (
            [
                assignment_line(items, cst.List([]), statements[k], self.positions),
                *statements[k + 1 : j],
                new_loop,
                assignment_line(cst.Name(name), ordered, loop, self.positions),
            ],
            j + 1,
        )


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its lists of placeholders filled by a loop (see the module) collected instead."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.List) and len(n.elements) == 1
        for n in iter_nodes(source.node)
    ):
        return source
    rewriter = _Rewriter(source)
    statements = rewriter.block(body)
    return with_body(source, statements) if rewriter.changed else source
