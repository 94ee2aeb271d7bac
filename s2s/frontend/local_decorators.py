"""JAX's transformations applied to local functions by decorators, or through ``functools.partial``, read as
the calls they are.

Guarantees of ``desugar(source)``:

- a local ``def`` decorated with a transformation (``@jax.vmap``, ``@partial(jax.vmap, in_axes=(None, 0))``,
  ``@jax.grad``, ``@jax.value_and_grad``, with ``@jax.jit`` or ``@jax.checkpoint`` among them) is the
  undecorated ``def`` under a name of its own (``one_undecorated``), then ``one = jax.vmap(...)`` of it, the
  decorators applied innermost first, as Python applies them; the resolver reads that call as it reads any
  (``name = jax.vmap(local_fn, in_axes=...)``). A ``def`` decorated with ``@jax.jit`` or
  ``@jax.checkpoint`` alone keeps them (their math is the function's own).
- ``functools.partial(T, ...)(f)`` of such a transformation is ``T(f, ...)`` (JAX documentation's
  ``partial(jax.vmap, in_axes=...)(fn)``).

New nodes keep the positions of the code they stand for.
"""

from __future__ import annotations

import functools

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .library import transform_maker, wrapper_maker
from .rewriting import (
    PositionKeeping,
    bindings,
    function_body,
    namer_of,
    object_of,
    place,
    with_blocks,
    with_body,
    with_node,
)
from .source import FunctionSource


class _Reader:
    def __init__(self, source: FunctionSource):
        self.source, self.bound = source, bindings(source.node)

    def kind(self, node) -> str | None:
        """``"transform"`` (``jax.vmap``), ``"wrapper"`` (``jax.jit``, ``jax.checkpoint``) or None."""
        obj = object_of(node, self.source.env, self.bound)
        if obj is None:
            return None
        try:
            made = transform_maker(obj)
        except TypeError:  # (an object that does not hash: no transformation)
            made = None
        if made is not None:
            return "transform"
        return "wrapper" if wrapper_maker(obj) in ("jit", "checkpoint") else None

    def applied(self, decorator: cst.BaseExpression, fn: cst.BaseExpression):
        """The call ``decorator`` makes of ``fn`` (``jax.vmap(fn)``, ``jax.vmap(fn, in_axes=...)`` for
        ``partial(jax.vmap, in_axes=...)``), and its kind; None for another decorator.
        """
        if isinstance(decorator, cst.Call) and self._is_partial(decorator.func):
            args = decorator.args
            if not args or args[0].keyword is not None or args[0].star:
                return None
            kind = self.kind(args[0].value)
            rest = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args[1:]]
            call = cst.Call(args[0].value, [cst.Arg(fn), *rest])
            return (call, kind) if kind else None
        kind = self.kind(decorator)
        return (cst.Call(decorator, [cst.Arg(fn)]), kind) if kind else None

    def _is_partial(self, node) -> bool:
        return object_of(node, self.source.env, self.bound) is functools.partial


class _Partials(PositionKeeping):
    """``functools.partial(jax.vmap, ...)(f)`` as ``jax.vmap(f, ...)``."""

    def __init__(self, reader: _Reader):
        super().__init__(reader.source.file.positions)
        self.reader, self.changed = reader, False

    def leave_Call(self, original, updated):
        maker = updated.func
        if (
            len(updated.args) != 1
            or updated.args[0].keyword is not None
            or updated.args[0].star
            or not isinstance(maker, cst.Call)
        ):
            return updated
        applied = self.reader.applied(maker, updated.args[0].value)
        if applied is None or applied[1] != "transform":
            return updated
        self.changed = True
        return place(applied[0], original, self.positions)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its transformed local functions and partials of transformations written as calls."""
    body = function_body(source)
    if body is None:
        return source
    reader = _Reader(source)
    namer = namer_of(source)
    changed = False

    def block(statements):
        nonlocal changed
        out = []
        for stmt in statements:
            made = (
                _undecorated(stmt, reader, namer)
                if isinstance(stmt, cst.FunctionDef)
                else None
            )
            if made is None:
                out.append(with_blocks(stmt, block, source.file.positions))
                continue
            changed = True
            out.extend(made)
        return out

    new_body = block(body)
    if changed:
        source = with_body(source, new_body)
    if not any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Call)
        for n in iter_nodes(source.node)
    ):
        return source
    partials = _Partials(_Reader(source))
    new = rewrite(source.node, partials)
    return with_node(source, new) if partials.changed else source


def _undecorated(stmt: cst.FunctionDef, reader: _Reader, namer) -> list | None:
    """``[def name_undecorated(...), name = T(...)]`` for a local ``def`` whose decorators are transformations
    and wrappers, one of them a transformation; else None."""
    if not stmt.decorators:
        return None
    inner = cst.Name(namer.fresh(f"{stmt.name.value}_undecorated"))
    value, kinds = inner, []
    for decorator in reversed(stmt.decorators):  # innermost first
        applied = reader.applied(decorator.decorator, value)
        if applied is None:
            return None
        value, kind = applied
        kinds.append(kind)
    if "transform" not in kinds:
        return None
    positions = reader.source.file.positions
    plain = place(stmt.with_changes(name=inner, decorators=[]), stmt, positions)
    line = cst.SimpleStatementLine(
        [cst.Assign([cst.AssignTarget(cst.Name(stmt.name.value))], value)]
    )
    return [plain, place(line, stmt, positions)]
