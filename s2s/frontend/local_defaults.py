"""Defaults of local functions and lambdas, evaluated where Python evaluates them: at the ``def``.

``scaled = lambda z, s=scale: s * z`` (or ``def step(h, lr=rate):``) inside a function reads ``scale``
when the lambda is made, not when it is called. ``desugar(source)`` writes that out: the line
``scaled_s = scale`` just before the definition, and the default ``s=scaled_s``, a name bound once per
definition, which the call sites (inlined) read. Literal defaults stay as they are. New nodes keep the
positions of the user's code they stand for.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes
from ..naming import Namer
from .rewriting import assignment, assignment_line, place, with_body
from .source import FunctionSource


def _literal(node) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    return isinstance(node, cst.Tuple) and all(_literal(e.value) for e in node.elements)


def _defined(stmt) -> tuple[str, cst.FunctionDef | cst.Lambda] | None:
    """``(name, function)`` for a local ``def`` or a lambda assigned to one name."""
    if isinstance(stmt, cst.FunctionDef):
        return stmt.name.value, stmt
    node = assignment(stmt)
    if (
        node is not None
        and isinstance(node.value, cst.Lambda)
        and isinstance(node.targets[0].target, cst.Name)
    ):
        return node.targets[0].target.value, node.value
    return None


def _parameters(params: cst.Parameters) -> list:
    return [*params.posonly_params, *params.params, *params.kwonly_params]


class _Rewriter:
    def __init__(self, source: FunctionSource, namer: Namer):
        self.positions = source.file.positions
        self.namer = namer

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            defined = _defined(stmt)
            if defined is not None:
                before, stmt = self.defaults(stmt, *defined)
                out.extend(before)
            if isinstance(stmt, cst.FunctionDef) and isinstance(
                stmt.body, cst.IndentedBlock
            ):
                body = stmt.body.with_changes(body=self.block(stmt.body.body))
                stmt = place(stmt.with_changes(body=body), stmt, self.positions)
            elif isinstance(stmt, (cst.If, cst.For, cst.While)):
                stmt = self.compound(stmt)
            out.append(stmt)
        return out

    def compound(self, stmt):
        new = stmt
        if isinstance(stmt.body, cst.IndentedBlock):
            new = new.with_changes(
                body=stmt.body.with_changes(body=self.block(stmt.body.body))
            )
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            new = new.with_changes(orelse=self.compound(orelse))
        elif orelse is not None and isinstance(orelse.body, cst.IndentedBlock):
            body = orelse.body.with_changes(body=self.block(orelse.body.body))
            new = new.with_changes(orelse=orelse.with_changes(body=body))
        if stmt in self.positions:
            self.positions.setdefault(new, self.positions[stmt])
        return new

    def defaults(self, stmt, name: str, fn) -> tuple[list, object]:
        """The lines binding ``fn``'s non-literal defaults, and ``stmt`` with ``fn`` reading them."""
        before, renamed = [], {}
        for p in _parameters(fn.params):
            if p.default is None or _literal(p.default):
                continue
            held = cst.Name(self.namer.fresh(f"{name}_{p.name.value}"))
            before.append(assignment_line(held, p.default, stmt, self.positions))
            renamed[p.name.value] = held
        if not renamed:
            return [], stmt

        def read(params):
            return [
                (
                    q.with_changes(default=renamed[q.name.value])
                    if q.name.value in renamed
                    else q
                )
                for q in params
            ]

        params = fn.params.with_changes(
            posonly_params=read(fn.params.posonly_params),
            params=read(fn.params.params),
            kwonly_params=read(fn.params.kwonly_params),
        )
        new_fn = place(fn.with_changes(params=params), fn, self.positions)
        if isinstance(stmt, cst.FunctionDef):
            return before, new_fn
        line = stmt.with_changes(body=[stmt.body[0].with_changes(value=new_fn)])
        return before, place(line, stmt, self.positions)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its local functions' non-literal defaults bound where they are defined."""
    node = source.node
    if not isinstance(node, cst.FunctionDef) or not any(
        isinstance(n, cst.Param) and n.default is not None and not _literal(n.default)
        for n in iter_nodes(node.body)
    ):
        return source
    names = {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}
    rewriter = _Rewriter(source, Namer(names | set(source.env)))
    return with_body(source, rewriter.block(list(node.body.body)))
