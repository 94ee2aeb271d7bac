"""Reject what s2s cannot transform, early, at the user's line, with what to do instead.

Guarantee: after ``check`` passes, the function body holds only assignments
(to names or tuples of names), augmented assignments, local ``def``s,
``return``, ``pass`` and a docstring, and its expressions hold no
comprehensions, conditional expressions, starred arguments, walrus or
``await``; the signature has no ``*args``/``**kwargs``.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes
from ..errors import UnsupportedSyntax
from .source import FunctionSource

CONTROL_FLOW_HINT = (
    "control flow (if/for/while) is not lowered yet; for a branch on array values use "
    "np.where(cond, a, b), and write loops over a fixed number of steps out by hand"
)

_STATEMENTS = {
    cst.If: ("`if` statement", CONTROL_FLOW_HINT),
    cst.For: ("`for` loop", CONTROL_FLOW_HINT),
    cst.While: ("`while` loop", CONTROL_FLOW_HINT),
    cst.Try: ("`try` statement", "move error handling outside the transformed function"),
    cst.With: ("`with` statement", "move context managers outside the transformed function"),
    cst.Raise: ("`raise` statement", "check inputs outside the transformed function"),
    cst.Assert: ("`assert` statement", "check inputs outside the transformed function"),
    cst.Global: ("`global` statement", "pass the value as an argument"),
    cst.Nonlocal: ("`nonlocal` statement", "return the value instead"),
    cst.Del: ("`del` statement", "leave the name unused instead"),
    cst.Import: ("`import` inside the function", "import at module level"),
    cst.ImportFrom: ("`import` inside the function", "import at module level"),
    cst.ClassDef: ("class definition inside the function", "define the class at module level"),
    cst.Match: ("`match` statement", CONTROL_FLOW_HINT),
}
_EXPRESSIONS = {
    cst.IfExp: ("conditional expression `a if c else b`", "use np.where(c, a, b)"),
    cst.ListComp: ("list comprehension", "build the array with NumPy ops (np.stack, broadcasting)"),
    cst.SetComp: ("set comprehension", "use NumPy ops"),
    cst.DictComp: ("dict comprehension", "write the dict out, or pass it as an argument"),
    cst.GeneratorExp: ("generator expression", "use NumPy ops"),
    cst.NamedExpr: ("assignment expression `:=`", "assign on its own line"),
    cst.Await: ("`await`", "transform a synchronous function"),
    cst.Yield: ("`yield`", "return an array instead of generating values"),
    cst.StarredElement: ("starred expression", "pass arguments one by one"),
    cst.FormattedString: ("f-string", "build strings outside the transformed function"),
}


class _Fence:
    def __init__(self, source: FunctionSource):
        self.source = source

    def fail(self, node, what, hint):
        raise UnsupportedSyntax(f"{what} is not supported", self.source.origin(node), hint)

    def check(self, node) -> None:
        kind = type(node)
        found = _STATEMENTS.get(kind) or _EXPRESSIONS.get(kind)
        if found is not None:
            self.fail(node, *found)
        if kind is cst.Arg and node.star:
            self.fail(node, f"`{node.star}` argument unpacking", "pass arguments one by one")
        if kind is cst.FunctionDef and node.asynchronous:
            self.fail(node, "`async def`", "transform a synchronous function")
        if kind is cst.Parameters and (isinstance(node.star_arg, cst.Param) or node.star_kwarg is not None):
            self.fail(node, "`*args`/`**kwargs` parameters", "name each parameter")
        if kind in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign):
            self._check_target(node.target, node)
        if kind is cst.Expr and not _is_docstring(node):
            self.fail(
                node,
                "an expression statement (its value is discarded)",
                "assign the value to a name, or move side effects such as print outside",
            )

    def _check_target(self, target, stmt):
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                if isinstance(el, cst.StarredElement):
                    self.fail(el, "starred assignment target", "unpack each element by name")
                self._check_target(el.value, stmt)
        elif isinstance(target, cst.Subscript):
            self.fail(
                stmt,
                "an in-place write to an array element",
                "build a new array instead, e.g. with np.where or np.concatenate",
            )
        elif isinstance(target, cst.Attribute):
            self.fail(stmt, "assignment to an attribute", "assign to a new name instead")


def _is_docstring(node: cst.Expr) -> bool:
    return isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString))


def check(source: FunctionSource) -> None:
    """Raise ``UnsupportedSyntax`` at the first construct s2s cannot transform."""
    fence = _Fence(source)
    for node in iter_nodes(source.node):
        fence.check(node)
