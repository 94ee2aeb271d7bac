"""One statement per line, every block indented, ``if``s as statements: the shape of code every rewrite reads.

``m = Plain(3.0); return m.forward(x)`` and ``if c: a = 1; b = 2`` are the same program as the lines
written out one by one, but a rewrite that looks for ``name = Cls(args)`` or ``acc = []`` on a line of
its own, or reads a block's lines, would not find them. ``written_out(node, positions)`` returns a
``def`` whose ``;``-joined statements are lines of their own and whose one-line suites (``def f(x):
return x``, ``for v in xs: s += v``) are indented blocks, in every nested ``def`` and class too;
a conditional expression evaluated for what its arms do (numpy-ml's ``d["Z"].append(Z) if "Z" in d
else None``) is the ``if`` statement it stands for, an arm that is a constant doing nothing.

Guarantee: the statements are the same, in the same order, with the same comments; every statement
and line built keeps the position of the statement it holds (a block: its suite's), and every node
rebuilt around them the position of the node it replaces, so errors still point at the user's column. A ``def`` with nothing to write out is returned as it is.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite


def written_out(node: cst.CSTNode, positions: dict) -> cst.CSTNode:
    """``node`` (a ``def`` or a ``lambda``) with one statement per line and every block indented."""
    if isinstance(node, cst.Lambda) or not any(
        isinstance(n, cst.SimpleStatementSuite) or _joined(n) or _chosen(n)
        for n in iter_nodes(node)
    ):
        return node
    return rewrite(node, _WriteOut(positions))


class _WriteOut(cst.CSTTransformer):
    def __init__(self, positions: dict):
        super().__init__()
        self.positions = positions

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        if updated is not original:
            self._keep(original, updated)
        return updated

    def leave_IndentedBlock(self, original, updated):
        body = self._lines(updated.body)
        return updated if body is None else updated.with_changes(body=body)

    def leave_SimpleStatementSuite(self, original, updated):
        line = cst.SimpleStatementLine(
            list(updated.body), trailing_whitespace=updated.trailing_whitespace
        )
        block = cst.IndentedBlock(self._lines([line]) or [line])
        self._keep(original, block)
        self._keep(original, line)
        return block

    def _lines(self, body) -> list | None:
        """``body``'s statements, each ``;``-joined line split into lines and each conditional expression
        as a statement an ``if``; None where there is none."""
        if not any(_joined(s) or _chosen(s) for s in body):
            return None
        lines = []
        for stmt in body:
            for line in self._split(stmt) if _joined(stmt) else [stmt]:
                lines.append(self._branches(line) if _chosen(line) else line)
        return lines

    def _branches(self, line: cst.SimpleStatementLine) -> cst.If:
        """``a() if c else b()`` as a statement (numpy-ml's ``d["Z"].append(Z) if "Z" in d else None``):
        ``if c: a()`` ``else: b()``, an arm that is a constant doing nothing."""
        chosen = line.body[0].value

        def block(arm) -> cst.IndentedBlock:
            if isinstance(arm, (cst.Integer, cst.Float, cst.SimpleString)) or (
                isinstance(arm, cst.Name) and arm.value in ("None", "True", "False")
            ):
                stmt = cst.SimpleStatementLine([cst.Pass()])
            else:
                stmt = cst.SimpleStatementLine([cst.Expr(arm)])
                if isinstance(arm, cst.IfExp):
                    stmt = self._branches(stmt)
            self._keep(arm, stmt)
            return cst.IndentedBlock([stmt])

        new = cst.If(
            chosen.test,
            block(chosen.body),
            cst.Else(block(chosen.orelse)),
            leading_lines=line.leading_lines,
        )
        self._keep(line, new)
        return new

    def _split(self, line: cst.SimpleStatementLine) -> list:
        last = len(line.body) - 1
        lines = []
        for i, small in enumerate(line.body):
            alone = small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            self._keep(small, alone)
            new = cst.SimpleStatementLine(
                [alone],
                leading_lines=line.leading_lines if i == 0 else (),
                trailing_whitespace=(
                    line.trailing_whitespace if i == last else cst.TrailingWhitespace()
                ),
            )
            self._keep(small, new)
            lines.append(new)
        return lines

    def _keep(self, original, new) -> None:
        if original in self.positions:
            self.positions.setdefault(new, self.positions[original])


def _chosen(stmt) -> bool:
    """A line that is a conditional expression evaluated for what its arms do."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.IfExp)
    )


def _joined(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) > 1
