"""``import`` statements at the top of a function's body, read as the module-level names they bind.

    def loss(x):
        from scipy.special import logsumexp     ->  ``logsumexp`` read as the module's own name
        import numpy.linalg as la                   ``la`` likewise
        return logsumexp(la.norm(x, axis=-1))

So is ``xp = jnp`` (the array-API idiom), a name bound once to a module the function's module holds.
An import binds a module or one of its objects, the same at every call: ``desugar(source)`` runs it
when it reads the function (as the call would, the module's package for a relative one) and drops
the statement, the names it binds added to the names the function reads from its module. An import
elsewhere (in a branch or loop), ``from m import *``, a name the function binds again, and an
import that fails stay a located error (``fence``), with what to do instead.
"""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import replace

import libcst as cst

from ..cstutil import dotted
from ..errors import UnsupportedSyntax
from .rewriting import assignment, bindings, function_body, object_of, with_body
from .source import FunctionSource


def _bound_names(stmt: cst.SimpleStatementLine, package: str | None, fail):
    """``{name: object}`` the import statements of one line bind, or None if it holds anything else."""
    found = {}
    for small in stmt.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                path = dotted(alias.name)
                module = _imported(path, package, small, fail)
                if alias.asname is not None:
                    found[alias.asname.name.value] = module
                else:  # ``import a.b`` binds ``a``
                    top = path.split(".")[0]
                    found[top] = importlib.import_module(top)
        elif isinstance(small, cst.ImportFrom):
            if isinstance(small.names, cst.ImportStar):
                fail(small, "`from ... import *` inside the function")
            dots = "." * len(small.relative)
            path = dots + (dotted(small.module) if small.module is not None else "")
            module = _imported(path, package, small, fail)
            for alias in small.names:
                name = alias.name.value
                if hasattr(module, name):
                    value = getattr(module, name)
                else:  # a submodule not imported yet
                    separator = "" if path.endswith(".") else "."
                    value = _imported(f"{path}{separator}{name}", package, None)
                if value is None:
                    fail(
                        small,
                        f"`{name}` imported from `{path}`, which has none",
                        "check the name: Python's own import fails too",
                    )
                local = alias.asname.name.value if alias.asname is not None else name
                found[local] = value
        else:
            return None
    return found


def _imported(path: str, package: str | None, node, fail=None):
    """The module ``path`` names; a located error where it cannot be imported (None without ``fail``)."""
    try:
        return importlib.import_module(path, package if path.startswith(".") else None)
    except ImportError as e:
        if fail is None:
            return None
        fail(
            node,
            f"an `import` inside the function that fails ({e})",
            "check the module's name: Python's own import fails too",
        )


def _module_alias(stmt, env: dict, assigned) -> dict | None:
    """``{name: module}`` for ``xp = jnp`` (the array-API idiom: a name bound once to a module the
    function's module holds), else None."""
    assign = assignment(stmt)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name):
        return None
    name = assign.targets[0].target.value
    value = object_of(assign.value, env, assigned)
    if not isinstance(value, types.ModuleType) or assigned[name] != 1:
        return None
    return {name: value}


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` without the imports and module aliases at the top of its body, their names read from
    its module."""
    body = function_body(source)
    assigned = bindings(source.node)
    if body is None or not any(
        (
            isinstance(s, cst.SimpleStatementLine)
            and any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in s.body)
        )
        or _module_alias(s, source.env, assigned)
        for s in body
    ):
        return source

    def fail(node, what, hint="import at module level, or at the top of the function"):
        raise UnsupportedSyntax(what, source.origin(node), hint)

    module = sys.modules.get(getattr(source.fn, "__module__", None) or "")
    package = getattr(module, "__package__", None)
    env, kept = dict(source.env), []
    for stmt in body:
        names = (
            _bound_names(stmt, package, fail)
            if isinstance(stmt, cst.SimpleStatementLine)
            else None
        )
        alias = _module_alias(stmt, env, assigned)
        if alias is not None:
            env.update(alias)
            continue
        if names is None:
            kept.append(stmt)
            continue
        again = sorted(n for n in names if assigned[n])
        if again:
            fail(stmt, f"`{again[0]}` imported inside the function and bound again")
        env.update(names)
    return replace(with_body(source, kept), env=env)
