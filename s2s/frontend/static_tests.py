"""Tests decided when the code is read: ``hasattr(np, "trapezoid")``, ``MODE == "gelu"``.

Version shims (``np.trapezoid(y) if hasattr(np, "trapezoid") else np.trapz(y)``) name, in the branch
the test rules out, an attribute this version of the library lacks; configuration tests
(``if ACTIVATION == "gelu": act = gelu``) pick a function by a module constant. s2s resolves every
branch it keeps, and a name bound to different functions on two branches has no one function, so
``desugar`` drops the branch Python does not take here.

Guarantee: an ``if``/``elif`` statement or a conditional expression whose test is
``hasattr(M, "name")`` (``M`` a module the function's environment names, ``hasattr`` Python's),
``xp is np`` (two names the function does not bind, holding modules), or a
comparison, ``not``, ``and``/``or`` of literals and module-level constants (a number, a string, a
bool, None, or a tuple of them: names the function does not bind), or of the function's own constants
(a name its block binds to one of those on a line of its own: ``norm = None`` where an object's
``__init__`` was written out, ``acc = None`` for a parameter a call leaves ``None``) in the lines of
that block after it, up to the first that binds it again (a test such a line holds, ``if acc is None:
acc = []``, is read before its own binding), keeps only the branch Python takes
(an ``if`` without ``else`` whose test is false: nothing). The constants are watched as any global
the function reads (``freshness``): a new value makes the module again. A local ``def`` or lambda runs
when called, after lines that may bind a constant again: its tests read only the constants its function
binds once. Every other test stays.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import operator
from collections import Counter
from dataclasses import replace

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .rewriting import (
    PositionKeeping,
    bindings,
    function_body,
    object_of,
    with_blocks,
    with_body,
)
from .source import FunctionSource

_COMPARE = {
    cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge,
    cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
    cst.Is: operator.is_, cst.IsNot: operator.is_not,
}  # fmt: skip
_CONSTANTS = (str, int, float, bool, type(None))
_UNKNOWN = object()


def _constant(node, source: FunctionSource, bound):
    """The value of a literal or of a module-level constant (a tuple of them too), else ``_UNKNOWN``."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return ast.literal_eval(node.value)
    if isinstance(node, cst.Name):
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        if node.value in bound or node.value not in source.env:
            return _UNKNOWN
        value = source.env[node.value]
        return value if type(value) in _CONSTANTS else _UNKNOWN
    if isinstance(node, (cst.Tuple, cst.List)):
        items = [_constant(e.value, source, bound) for e in node.elements]
        return _UNKNOWN if _UNKNOWN in items else tuple(items)
    return _UNKNOWN


def _compared(test, source, bound) -> bool | None:
    """A comparison of constants (``MODE == "gelu"``, ``N_LAYERS > 2``, ``KIND in ("a", "b")``), else None;
    ``NAME is None`` of any module-level object (``_ndtr is None`` after an optional import).
    """
    if (
        len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
        and isinstance(test.left, cst.Name)
        and test.left.value not in bound
        and test.left.value in source.env
    ):
        missing = source.env[test.left.value] is None
        return (
            missing if isinstance(test.comparisons[0].operator, cst.Is) else not missing
        )
    modules = _modules_compared(test, source, bound)
    if modules is not None:  # ``xp is np``: the array-API idiom's dispatch on a module
        same = modules[0] is modules[1]
        return same if isinstance(test.comparisons[0].operator, cst.Is) else not same
    left = _constant(test.left, source, bound)
    if left is _UNKNOWN:
        return None
    for target in test.comparisons:
        right = _constant(target.comparator, source, bound)
        if right is _UNKNOWN or type(target.operator) not in _COMPARE:
            return None
        try:
            holds = _COMPARE[type(target.operator)](left, right)
        except TypeError:  # (``None > 0``: Python raises it where the code runs)
            return None
        if not holds:
            return False
        left = right
    return True


def _modules_compared(test, source, bound):
    """The two modules of ``A is B`` (``is not``), each a name the function does not bind holding a
    module (``xp`` of a closure, ``XP = jnp`` at module level), else None."""
    if len(test.comparisons) != 1 or not isinstance(
        test.comparisons[0].operator, (cst.Is, cst.IsNot)
    ):
        return None
    sides = [test.left, test.comparisons[0].comparator]
    if not all(
        isinstance(n, cst.Name) and n.value not in bound and n.value in source.env
        for n in sides
    ):
        return None
    objects = [source.env[n.value] for n in sides]
    return objects if all(inspect.ismodule(o) for o in objects) else None


def _truth(test, source: FunctionSource, bound) -> bool | None:
    """The value of a test decided when the code is read (see the module), else None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _truth(test.expression, source, bound)
        return None if inner is None else not inner
    if isinstance(test, cst.Comparison):
        return _compared(test, source, bound)
    if isinstance(test, cst.BooleanOperation):
        # Python's short circuit: ``scale is None or scale > 0`` never compares None with 0
        deciding = not isinstance(
            test.operator, cst.And
        )  # (the value that decides ``or``)
        left = _truth(test.left, source, bound)
        if left is deciding:
            return deciding
        right = _truth(test.right, source, bound)
        if (
            left is None
        ):  # (``x > 0 or DEBUG``: Python runs ``x > 0`` first; a call there stays)
            calls = any(isinstance(n, cst.Call) for n in iter_nodes(test.left))
            return deciding if right is deciding and not calls else None
        return right
    if isinstance(test, cst.Name):  # ``if USE_BIAS:`` of a module-level flag
        value = _constant(test, source, bound)
        return None if value is _UNKNOWN or test.value == "None" else bool(value)
    if not (
        isinstance(test, cst.Call)
        and isinstance(test.func, cst.Name)
        and test.func.value == "hasattr"
        and "hasattr" not in bound
        and source.env.get("hasattr", builtins.hasattr) is builtins.hasattr
        and len(test.args) == 2
        and not any(a.star or a.keyword for a in test.args)
        and isinstance(test.args[1].value, cst.SimpleString)
    ):
        return None
    module = object_of(test.args[0].value, source.env, bound)
    if not inspect.ismodule(module):
        return None
    return hasattr(module, test.args[1].value.evaluated_value)


def _leaves(stmt) -> bool:
    """Whether a line returns or raises (the lines after it in its block never run)."""
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(
        stmt.body[-1], (cst.Return, cst.Raise)
    )


class _Expressions(PositionKeeping):
    def __init__(self, source, bound):
        super().__init__(source.file.positions)
        self.source, self.bound = source, bound

    def leave_IfExp(self, original, updated):
        truth = _truth(updated.test, self.source, self.bound)
        if truth is None:
            return updated
        return updated.body if truth else updated.orelse


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with the branches its tests decided when read rule out dropped (see the module)."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, (cst.If, cst.IfExp)) for n in iter_nodes(source.node)
    ):
        return source
    bound = bindings(source.node)
    positions = source.file.positions
    # what the tests read: the module's constants, and the function's own constants bound before them
    scope = {"source": source, "bound": bound}

    def block(statements):
        out = []
        for stmt in statements:
            kept = taken(stmt)
            out.extend(kept)
            if kept and kept[-1] is not stmt and _leaves(kept[-1]):
                break  # (``if hasattr(...): return ...`` taken: the lines after it never run)
        return out

    def taken(stmt, truth=None) -> list:
        if isinstance(stmt, cst.If):
            if truth is None:
                truth = _truth(stmt.test, scope["source"], scope["bound"])
            if truth is True:
                return block(stmt.body.body)
            if truth is False:
                if isinstance(stmt.orelse, cst.Else):
                    return block(stmt.orelse.body.body)
                return taken(stmt.orelse) if isinstance(stmt.orelse, cst.If) else []
        return [with_blocks(stmt, block, positions)]

    known = set()  # the function's own constants, until a line binds them again

    def forget(names):
        known.difference_update(names)
        scope["bound"] = scope["bound"] + Counter({n: bound[n] for n in names})

    statements = []
    for stmt in body:
        rebound = known & set(bindings(stmt))
        truth = None
        if rebound and isinstance(
            stmt, cst.If
        ):  # ``if acc is None: acc = []``: its test reads them first
            truth = _truth(stmt.test, scope["source"], scope["bound"])
        forget(rebound)
        held = scope["bound"], set(known)
        if _defers(
            stmt
        ):  # a body run when called, after lines that may bind them again
            forget({n for n in known if bound[n] > 1})
        kept = [
            rewrite(s, _Expressions(scope["source"], scope["bound"]))
            for s in taken(stmt, truth)
        ]
        scope["bound"], known = held[0], held[1]
        statements.extend(kept)
        if kept and kept[-1] is not stmt and _leaves(kept[-1]):
            break
        constant = _local_constant(stmt, scope["source"], scope["bound"])
        if constant is not None:
            name, value = constant
            scope["source"] = replace(
                scope["source"], env={**scope["source"].env, name: value}
            )
            scope["bound"] = scope["bound"] - Counter({name: scope["bound"][name]})
            known.add(name)
    if statements == body:
        return source
    return with_body(source, statements)


def _defers(stmt) -> bool:
    """Whether a line defines a function or a lambda (whose body reads the names when it is called)."""
    return any(
        isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
        for n in iter_nodes(stmt)
    )


def _local_constant(stmt, source: FunctionSource, bound) -> tuple | None:
    """``(name, value)`` of a line of the function's own block binding a name to a constant (a literal,
    a module constant: ``norm = None`` where an object's ``__init__`` was written out); the tests after
    it read it as a constant until a line of the block binds it again."""
    if not (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Assign)
        and len(stmt.body[0].targets) == 1
        and isinstance(stmt.body[0].targets[0].target, cst.Name)
    ):
        return None
    name = stmt.body[0].targets[0].target.value
    value = _constant(stmt.body[0].value, source, bound)
    if value is _UNKNOWN or type(value) not in _CONSTANTS:
        return None
    return name, value
