"""Methods that end ``return self`` (scikit-learn's ``fit``, Raschka's ``AdalineGD.fit``), called for what
they change.

``m = Est(eta=0.1).fit(X, y)`` and ``m = m.fit(X, y)`` bind ``m`` to the object the method returns, which
is the object itself: ``desugar(source)`` writes them ``m = Est(eta=0.1)`` then ``m.fit(X, y)``, and
``m.fit(X, y)`` alone stays as it is, so ``local_objects`` reads ``m`` as an object made once whose
method updates its attributes. There, a fluent method's ``return self`` is a plain ``return``
(``dropped_self_returns``), where every call of it is such a statement; a call whose value is read
otherwise (``return m.fit(X, y)``) leaves the object as it is (its located error).

Guarantee: only calls of a method whose every ``return`` is ``return self`` (``returns_self``), of a class of
the program named where the line is, are rewritten; ``m = m.fit(...)`` only where ``m`` is bound once
besides, to that class's object (``m = Est(...)``).
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes
from . import source as sources
from .class_members import _methods, _plain_class, method_node
from .rewriting import (
    assignment,
    assignment_line,
    bindings,
    function_body,
    place,
    with_blocks,
    with_body,
)


def returns_self(fn) -> bool:
    """Whether the method ``fn`` returns ``self`` (its first parameter) on every ``return``, and has one."""
    node = method_node(fn)
    if node is None:
        return False
    me = node.params.params[0].name.value
    returns = [n for n in _own_nodes(node.body) if isinstance(n, cst.Return)]
    return bool(returns) and all(
        isinstance(r.value, cst.Name) and r.value.value == me for r in returns
    )


def dropped_self_returns(node: cst.FunctionDef, me: str) -> cst.FunctionDef:
    """``node`` (a fluent method) with its ``return self`` lines as ``return``."""

    class _Returns(cst.CSTTransformer):
        def leave_Return(self, original, updated):
            if isinstance(updated.value, cst.Name) and updated.value.value == me:
                return updated.with_changes(value=None)
            return updated

    return node.visit(_Returns())


def values_read(node, name: str, method: str) -> bool:
    """Whether a call ``name.method(...)`` in ``node`` is read as a value (not a statement of its own)."""
    calls = [n for n in iter_nodes(node) if _calls(n, name, method)]
    statements = {
        id(n.value)
        for n in iter_nodes(node)
        if isinstance(n, cst.Expr) and _calls(n.value, name, method)
    }
    return any(id(c) not in statements for c in calls)


def desugar(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with its fluent calls bound to names written as statements (see the module)."""
    body = function_body(source)
    if body is None:
        return source
    counts = bindings(source.node)
    made = _made_once(source, counts)
    positions = source.file.positions
    changed = False

    def block(statements):
        nonlocal changed
        out = []
        for stmt in statements:
            lines = _split(source, stmt, made, counts, positions)
            changed |= lines is not None
            out += lines if lines is not None else [with_blocks(stmt, block, positions)]
        return out

    new = block(body)
    return with_body(source, new) if changed else source


def _split(source, stmt, made, counts, positions) -> list | None:
    """``t = Cls(...).fit(...)`` -> ``t = Cls(...)``, ``t.fit(...)``; ``t = t.fit(...)`` -> ``t.fit(...)``."""
    assign = assignment(stmt)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name):
        return None
    target, value = assign.targets[0].target, assign.value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
        return None
    receiver, method = value.func.value, value.func.attr.value
    if isinstance(receiver, cst.Name) and receiver.value == target.value:
        cls = made.get(target.value)
        if cls is None or counts[target.value] != 2 or not _fluent(cls, method):
            return None
        return [_statement(value, stmt, positions)]
    if (
        isinstance(receiver, cst.Call)
        and isinstance(receiver.func, cst.Name)
        and counts[target.value] == 1
        and _fluent(_class_named(source, receiver.func.value, counts), method)
    ):
        call = value.with_changes(func=value.func.with_changes(value=target))
        return [
            assignment_line(target, receiver, stmt, positions),
            _statement(call, stmt, positions),
        ]
    return None


def _made_once(source, counts) -> dict:
    """Names bound to an object of a program's class made in the function (``m = Est(...)``): name -> class."""
    found = {}
    for node in iter_nodes(source.node):
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target, value = node.targets[0].target, node.value
            if (
                isinstance(target, cst.Name)
                and isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name)
            ):
                cls = _class_named(source, value.func.value, counts)
                if cls is not None:
                    found[target.value] = cls
    return found


def _class_named(source, name: str, counts):
    """The plain class of the program ``name`` is where the function does not bind it, else None."""
    cls = source.env.get(name)
    return cls if name not in counts and _plain_class(cls) else None


def _fluent(cls, method: str) -> bool:
    fn = _methods(cls).get(method) if cls is not None else None
    return fn is not None and returns_self(fn)


def _statement(call, like, positions):
    return place(cst.SimpleStatementLine([cst.Expr(call)]), like, positions)


def _calls(node, name: str, method: str) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == name
        and node.func.attr.value == method
    )


def _own_nodes(body):
    """The nodes of a function's body, not those of functions or classes defined in it."""
    stack = [body]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(node.children)
