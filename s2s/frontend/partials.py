"""``functools.partial`` objects made in the function, read as the local functions they stand for.

``grad_U = functools.partial(grad_potential, prec=prec)`` binds ``prec``, a value of the function, so it
is no module-level object s2s could read when it reads the code. ``desugar(source)`` writes the line
as the local function it makes, ``def grad_U(q, *, prec=prec): return grad_potential(q, prec=prec)``
(a call may give a bound keyword again, as a partial's may), whose calls
``inline`` puts in place and which may be passed to a helper of yours like any local function
(``local_function_args``).

Guarantee: a line ``name = functools.partial(func, *args, **keywords)`` (``partial`` by any spelling
of it, JAX's ``jax.tree_util.Partial`` too), ``name`` bound nowhere else, ``func`` a module-level function of the program (not a
library's) without ``*args``/``**kwargs``, with no starred argument in the line, and whose
parameters left unbound have no default or a literal one. The bound values are read when the
local function runs, which is right while ``name``'s arguments are bound once, at the ``def``:
the names the line reads are assigned nowhere after it. A ``partial(func, ...)`` call inside a line's
expressions, outside lambdas and comprehensions (an argument: ``odeint(partial(field, theta=theta),
y0)``, or another partial's: ``partial(sum_kernel, k1=partial(rbf, lengthscale=ell))``), is the same
local function, defined on a line just before. Lines in ``if``/``for``/``while`` blocks too. Any other
``partial`` stays as it is.
New nodes keep the positions of the user's code they stand for.
"""

from __future__ import annotations

import functools
import inspect
import sys

import libcst as cst

from ..cstutil import child_nodes, iter_nodes, literal, names_in, replace_nodes
from .rewriting import (
    assignment,
    bindings,
    function_body,
    namer_of,
    object_of,
    place,
    with_blocks,
    with_body,
)
from .source import FunctionSource


def _literal_value(value) -> bool:
    return type(value) in (int, float, str, bool, type(None))


def _param(p: inspect.Parameter) -> cst.Param:
    """``p`` as written in a ``def`` (its literal default kept)."""
    default = None if p.default is inspect.Parameter.empty else literal(p.default)
    return cst.Param(cst.Name(p.name), default=default)


def _outside_scopes(stmt):
    """The nodes of ``stmt`` outside lambdas and comprehensions (whose names are their own), outermost
    first."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(reversed(child_nodes(node)))


_SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _partial(obj) -> bool:
    """``functools.partial``, or JAX's ``jax.tree_util.Partial`` (a partial that is a pytree)."""
    if obj is functools.partial:
        return True
    tree_util = sys.modules.get("jax.tree_util")
    return tree_util is not None and obj is getattr(tree_util, "Partial", None)


class _Rewriter:
    def __init__(self, source: FunctionSource):
        self.source = source
        self.namer = namer_of(source)
        self.positions = source.file.positions
        self.bound = bindings(source.node)
        self.changed = False
        # the function's local functions (its ``def``s, and those made here): s2s binds helpers to them
        self.functions = {
            n.name.value
            for n in iter_nodes(source.node)
            if isinstance(n, cst.FunctionDef) and n is not source.node
        }

    def block(self, statements) -> list:
        out = []
        for k, stmt in enumerate(statements):
            before, stmt = self.nested(stmt, statements[k + 1 :])
            out.extend(before)
            made = self.made(stmt, statements[k + 1 :])
            if made is None:
                before, stmt = self.hoisted(stmt, statements[k + 1 :])
                out.extend(before)
                stmt = with_blocks(stmt, self.block, self.positions)
            out.append(made if made is not None else stmt)
        return out

    def hoisted(self, stmt, later) -> tuple[list, object]:
        """``partial(func, ...)`` calls inside a line's expressions (``odeint(partial(field, theta=theta),
        y0)``), each written as a local function on a line before it: ``(defs, line)``.
        """
        if not isinstance(stmt, cst.SimpleStatementLine):
            return [], stmt
        defs, replaced = [], {}
        for node in _outside_scopes(stmt):
            if not (isinstance(node, cst.Call) and _partial(self._object(node.func))):
                continue
            base = getattr(node.args[0].value, "value", "fn") if node.args else "fn"
            name = self.namer.fresh(f"{base}_partial")
            made = self.function(name, node, stmt, later)
            if made is not None:
                defs.append(made)
                replaced[node] = cst.Name(name)
        if not replaced:
            return [], stmt
        return defs, place(replace_nodes(stmt, replaced), stmt, self.positions)

    def nested(self, stmt, later) -> tuple[list, object]:
        """``partial(func, ...)`` calls among another partial's arguments (``partial(sum_kernel,
        k1=partial(rbf, lengthscale=ell))``), innermost first, each written as a local function on a line
        before the statement: ``(defs, line)``."""
        defs = []
        while isinstance(stmt, cst.SimpleStatementLine):
            inner = next(
                (
                    q
                    for p in self._partials(stmt)
                    for a in p.args[1:]
                    for q in self._partials(a.value)
                    if not any(self._partials(b.value) for b in q.args[1:])
                ),
                None,
            )
            if inner is None:
                break
            base = getattr(inner.args[0].value, "value", "fn")
            name = self.namer.fresh(f"{base}_partial")
            made = self.function(name, inner, stmt, later)
            if made is None:
                break
            defs.append(made)
            stmt = place(
                replace_nodes(stmt, {inner: cst.Name(name)}), stmt, self.positions
            )
        return defs, stmt

    def _partials(self, node) -> list:
        """The ``partial(...)`` calls in ``node`` outside lambdas and comprehensions, outermost first."""
        return [
            n
            for n in _outside_scopes(node)
            if isinstance(n, cst.Call) and _partial(self._object(n.func))
        ]

    def _object(self, node):
        return object_of(node, self.source.env, self.bound)

    def made(self, stmt, later):
        """The ``def`` for ``name = partial(func, ...)``, else None."""
        assign = assignment(stmt)
        if assign is None or not isinstance(assign.targets[0].target, cst.Name):
            return None
        name, value = assign.targets[0].target.value, assign.value
        if not (
            isinstance(value, cst.Call)
            and _partial(self._object(value.func))
            and self.bound[name] == 1
        ):
            return None
        return self.function(name, value, stmt, later)

    def function(self, name: str, value: cst.Call, stmt, later):
        """The local ``def name`` that the call ``partial(func, ...)`` in ``stmt`` makes, else None."""
        if not value.args or any(a.star for a in value.args):
            return None
        func = self._object(value.args[0].value)
        if not inspect.isfunction(func) or func.__module__.split(".")[0] in (
            "numpy",
            "jax",
            "scipy",
        ):
            return None
        read = names_in(value)
        if any(
            read & set(bindings(s)) for s in later
        ):  # a bound value rebound after the line
            return None
        params = list(inspect.signature(func).parameters.values())
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            return None
        positional = [a for a in value.args[1:] if a.keyword is None]
        keywords = {a.keyword.value: a for a in value.args[1:] if a.keyword is not None}
        rest = [p for p in params[len(positional) :] if p.name not in keywords]
        if any(
            p.default is not inspect.Parameter.empty and not _literal_value(p.default)
            for p in rest
        ):
            return None
        new_params = [_param(p) for p in rest if p.kind != p.KEYWORD_ONLY]
        # a keyword the partial binds, a call may give again (``g(v, w=w1)``): a keyword-only parameter
        # whose default is the bound value (read at the call: nothing rebinds what it reads after the line)
        # (a module-level object, a function, stays bound in the call: s2s binds helpers to those)
        given = {
            k: a
            for k, a in keywords.items()
            if self._object(a.value) is None
            and not (isinstance(a.value, cst.Name) and a.value.value in self.functions)
        }
        kwonly = [_param(p) for p in rest if p.kind == p.KEYWORD_ONLY] + [
            cst.Param(cst.Name(k), default=a.value) for k, a in given.items()
        ]
        # the parameters left, by keyword (a keyword the partial binds may come before them)
        args = [
            *(cst.Arg(a.value) for a in positional),
            *(cst.Arg(cst.Name(p.name)) for p in rest if p.kind == p.POSITIONAL_ONLY),
            *(
                (
                    cst.Arg(cst.Name(k), keyword=cst.Name(k))
                    if k in given
                    else a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                )
                for k, a in keywords.items()
            ),
            *(
                cst.Arg(cst.Name(p.name), keyword=cst.Name(p.name))
                for p in rest
                if p.kind != p.POSITIONAL_ONLY
            ),
        ]
        body = cst.IndentedBlock(
            [cst.SimpleStatementLine([cst.Return(cst.Call(value.args[0].value, args))])]
        )
        parameters = cst.Parameters(
            params=new_params,
            kwonly_params=kwonly,
            star_arg=cst.ParamStar() if kwonly else cst.MaybeSentinel.DEFAULT,
        )
        self.changed = True
        self.functions.add(name)
        return place(
            cst.FunctionDef(cst.Name(name), parameters, body), stmt, self.positions
        )


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``partial`` lines (see the module) written as local functions."""
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.Name) and n.value in ("partial", "Partial")
        for n in iter_nodes(source.node)
    ):
        return source
    rewriter = _Rewriter(source)
    statements = rewriter.block(body)
    return with_body(source, statements) if rewriter.changed else source
