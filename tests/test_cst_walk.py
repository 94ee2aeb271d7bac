"""``cstutil.rewrite`` is ``node.visit(visitor)`` without libcst's machinery: the same calls in the same
order, the same tree, and nodes no method changed kept as they were (by identity)."""

import os

import libcst as cst
import pytest

from s2s.cstutil import _PUNCTUATION, rewrite

HERE = os.path.dirname(os.path.abspath(__file__))
# programs of every style, decorators, classes, lambdas and comprehensions among them
SOURCES = [
    os.path.join(HERE, "programs", f"{name}.py")
    for name in ("control", "made_inside", "object_structures", "closure_state")
]


def _module(path):
    with open(path) as f:
        return cst.parse_module(f.read())


class _Generic(cst.CSTTransformer):
    """Logs every node it meets (its own ``on_visit``/``on_leave``); skips lambdas; renames, removes."""

    def __init__(self):
        super().__init__()
        self.log = []

    def on_visit(self, node):
        if not isinstance(node, _PUNCTUATION):
            self.log.append(("visit", type(node).__name__))
        return not isinstance(node, cst.Lambda)

    def on_leave(self, original, updated):
        if isinstance(original, _PUNCTUATION):
            return updated
        self.log.append(("leave", type(original).__name__))
        if isinstance(updated, cst.Name) and updated.value.startswith("x"):
            return updated.with_changes(value=updated.value + "_renamed")
        if isinstance(updated, cst.SimpleStatementLine) and isinstance(
            updated.body[0], cst.Pass
        ):
            return cst.RemovalSentinel.REMOVE
        return updated


class _Methods(cst.CSTTransformer):
    """``visit_``/``leave_`` methods whose order matters: keywords before values, decorators first."""

    def __init__(self):
        super().__init__()
        self.log = []

    def visit_FunctionDef(self, node):
        self.log.append(("def", node.name.value))

    def visit_Arg(self, node):
        self.log.append(("arg", node.keyword.value if node.keyword else None))

    def visit_IfExp(self, node):
        self.log.append(("ifexp",))

    def leave_Name(self, original, updated):
        self.log.append(("name", updated.value))
        return (
            updated.with_changes(value=updated.value.upper())
            if len(updated.value) == 1
            else updated
        )

    def leave_Return(self, original, updated):
        return cst.FlattenSentinel([updated, cst.Pass()])


class _Reads(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.log = []

    def visit_Call(self, node):
        self.log.append(("call", type(node.func).__name__))

    def leave_Attribute(self, original):
        self.log.append(("attribute", original.attr.value))


@pytest.mark.parametrize("path", SOURCES, ids=os.path.basename)
@pytest.mark.parametrize("kind", [_Generic, _Methods, _Reads])
def test_rewrite_calls_what_libcst_calls_and_makes_the_same_tree(path, kind):
    module = _module(path)
    theirs, ours = kind(), kind()
    want, got = module.visit(theirs), rewrite(module, ours)
    assert ours.log == theirs.log
    assert got.code == want.code


def test_rewrite_keeps_the_nodes_nothing_changed():
    module = _module(SOURCES[0])
    assert rewrite(module, _Reads()) is module
    renamed = rewrite(module, _Generic())
    unchanged = [
        s
        for s, t in zip(module.body, renamed.body)
        if s.deep_equals(t) and not isinstance(s, cst.FunctionDef)
    ]
    assert unchanged and all(
        any(s is t for t in renamed.body) for s in unchanged
    ), "statements without a rename were rebuilt"


class _Commas(cst.CSTTransformer):
    def leave_Comma(self, original, updated):
        return updated.with_changes(whitespace_after=cst.SimpleWhitespace("  "))


def test_a_visitor_of_punctuation_goes_through_libcst():
    module = cst.parse_module("f(a, b)\n")
    assert rewrite(module, _Commas()).code == "f(a,  b)\n"
