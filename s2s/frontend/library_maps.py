"""Transformations of a library function (``jax.vmap(jnp.dot)(A, B)``), read as transformations of a
lambda that calls it.

s2s transforms functions it reads from source; ``jnp.dot`` is an op, not source. ``desugar(source)``
writes the function a transformation is made of, where it is a library function (NumPy, JAX, SciPy),
as a lambda calling it with as many parameters as the transformed function is called with:

    jax.vmap(jnp.dot)(A, B)            ->  jax.vmap(lambda __s2s_a0, __s2s_a1: jnp.dot(__s2s_a0, __s2s_a1))(A, B)
    bdot = jax.vmap(jnp.dot, (0, None))    the same, where every call of ``bdot`` passes two arguments
    jax.grad(jnp.sum)(x)                   (``jax.grad``, ``jax.value_and_grad`` and s2s's alike)

Guarantee: the made function is called in place, or bound once to a name that is only called, every
call with the same number of positional arguments and no keyword or starred one; anything else stays
as it is (its located error). New nodes keep the position of the call they stand for.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .library import transform_maker
from .rewriting import (
    PositionKeeping,
    assignment,
    bindings,
    function_body,
    object_of,
    place,
    references,
    with_body,
)
from .source import FunctionSource
from .spellings import is_library


class _Maps(PositionKeeping):
    def __init__(self, source: FunctionSource, arity: dict):
        super().__init__(source.file.positions)
        self.source = source
        self.bound = bindings(source.node)
        self.arity = arity  # a name bound to a made transformation -> how many arguments its calls pass
        self.changed = False

    def made_of_library(self, node) -> bool:
        """``T(F, ...)``: a transformation maker ``T`` of a library function ``F``."""
        if not (isinstance(node, cst.Call) and node.args and not node.args[0].star):
            return False
        maker = object_of(node.func, self.source.env, self.bound)
        function = object_of(node.args[0].value, self.source.env, self.bound)
        return (
            transform_maker(maker) is not None
            and node.args[0].keyword is None
            and callable(function)
            and is_library(function)
            and transform_maker(function) is None
        )

    def with_lambda(self, made: cst.Call, count: int) -> cst.Call:
        params = [cst.Param(cst.Name(f"__s2s_a{k}")) for k in range(count)]
        body = cst.Call(made.args[0].value, [cst.Arg(p.name) for p in params])
        lam = cst.Lambda(cst.Parameters(params), body)
        first = made.args[0].with_changes(
            value=place(lam, made.args[0].value, self.positions)
        )
        self.changed = True
        return made.with_changes(args=[first, *made.args[1:]])

    def leave_Call(self, original, updated):
        if _plain(updated) and self.made_of_library(updated.func):
            return updated.with_changes(
                func=self.with_lambda(updated.func, len(updated.args))
            )
        return updated


def _plain(call: cst.Call) -> bool:
    """A call with positional arguments only, none starred."""
    return all(a.keyword is None and not a.star for a in call.args)


def _arities(statements, aliases: dict) -> dict:
    """``name -> count`` for the names of ``aliases`` (name -> the line binding it) every read of which is
    a plain call with ``count`` arguments."""
    names, counts, called = set(aliases), {}, set()
    lines = [s for s in statements if not any(s is a for a in aliases.values())]
    for stmt in lines:
        for n in iter_nodes(stmt):
            if (
                isinstance(n, cst.Call)
                and isinstance(n.func, cst.Name)
                and n.func.value in names
            ):
                called.add(id(n.func))
                counts.setdefault(n.func.value, set()).add(
                    len(n.args) if _plain(n) else None
                )
    for stmt in lines:
        for n in iter_nodes(stmt):
            if isinstance(n, cst.Name) and n.value in names and id(n) not in called:
                counts.setdefault(n.value, set()).add(None)  # read otherwise
    return {
        k: next(iter(v)) for k, v in counts.items() if len(v) == 1 and None not in v
    }


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its transformations of library functions made of lambdas calling them."""
    body = function_body(source)
    makers = [m for m in _makers() if m is not None]
    if body is None or not references(source, makers):
        return source
    maps = _Maps(source, {})
    aliases = {}
    for stmt in body:
        assign = assignment(stmt)
        if (
            assign is not None
            and isinstance(assign.targets[0].target, cst.Name)
            and maps.bound[assign.targets[0].target.value] == 1
            and maps.made_of_library(assign.value)
        ):
            aliases[assign.targets[0].target.value] = stmt
    arity = _arities(body, aliases)
    new = []
    for stmt in body:
        name = next((n for n, s in aliases.items() if s is stmt), None)
        if name is not None and name in arity:
            assign = assignment(stmt)
            value = maps.with_lambda(assign.value, arity[name])
            stmt = stmt.with_changes(
                body=[
                    assign.with_changes(
                        value=place(value, assign.value, maps.positions)
                    )
                ]
            )
        new.append(rewrite(stmt, maps))
    return with_body(source, new) if maps.changed else source


def _makers() -> list:
    """The objects ``transform_maker`` knows (what a made transformation's call reaches)."""
    import sys

    import s2s

    jax = sys.modules.get("jax")
    own = [s2s.grad, s2s.value_and_grad, s2s.vmap]
    return own + ([jax.grad, jax.value_and_grad, jax.vmap] if jax is not None else [])
