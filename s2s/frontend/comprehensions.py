"""List and dict comprehensions and generator expressions, as the loops they stand for.

Guarantee: ``desugar(source)`` gives the same function with each list
comprehension and generator expression (outside lambdas and local ``def``s)
replaced by a list built just before its statement::

    total = sum(np.sum(w**2) for w in params)

is read as::

    _comprehension = []
    for w in params:
        _comprehension.append(np.sum(w**2))
    total = sum(_comprehension)

which the rest of s2s handles as any list collected by ``append`` in a loop
(``passes/collected.py``: ``np.stack`` of it, ``sum`` of it, a loop over it).
A dict comprehension ``{k: f(v) for k, v in d.items()}`` is a dict filled by
item writes (``_comprehension[k] = f(v)``) in the same loop.
Each ``for`` clause is one loop; a comprehension variable that the function
uses elsewhere is renamed so that it cannot clobber it. New nodes take the
comprehension's position, so comments and errors cite the user's line.
``if`` clauses are ``if`` statements around the ``append`` (or item write).
A list filtered so is kept when its conditions are known as the code is traced
(``[W for W in params if W.ndim == 2]``: ``passes/control.py`` collects the
items of the steps that append); on data it is an error when traced, as the
list's length would depend on the values. ``sum`` of a comprehension with
``if`` clauses is the total its loop adds up (``_total = _total + item`` under
the ``if``s), so its conditions may be data too. Comprehensions in a ``while``
test, and ``async`` ones, are left for the fence to report.
"""

from __future__ import annotations

import builtins
from dataclasses import replace

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .source import FunctionSource

LIST_NAME = "_comprehension"


def _names_in(node) -> set[str]:
    return {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}


def _clauses(comp) -> list:
    """A comprehension's ``for`` clauses, outermost first."""
    clauses, clause = [], comp.for_in
    while clause is not None:
        clauses.append(clause)
        clause = clause.inner_for_in
    return clauses


def _supported(comp) -> bool:
    """No ``async``."""
    return all(c.asynchronous is None for c in _clauses(comp))


class _Renamer(cst.CSTTransformer):
    """Names renamed (not attribute names, keywords or parameters)."""

    def __init__(self, renames: dict):
        self.renames = renames

    def visit_Attribute(self, node):
        return False  # the attribute name stays; the object is renamed on leaving

    def leave_Attribute(self, original, updated):
        return updated.with_changes(value=rewrite(original.value, self))

    def leave_Name(self, original, updated):
        return updated.with_changes(
            value=self.renames.get(updated.value, updated.value)
        )

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)


class _Hoist:
    def __init__(self, source: FunctionSource):
        self.source = source
        self.positions = source.file.positions
        self.taken = _names_in(source.node)
        self.changed = False

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def placed(self, new, like):
        """``new`` at the position of ``like`` (the comprehension)."""
        if like in self.positions:
            self.positions[new] = self.positions[like]
        return new

    # --- statements ------------------------------------------------------------------
    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            out.extend(self.statement(stmt))
        return out

    def statement(self, stmt) -> list:
        if isinstance(stmt, cst.SimpleStatementLine):
            before, new = self.hoist(stmt)
            return [*before, new]
        if isinstance(stmt, cst.FunctionDef) and isinstance(
            stmt.body, cst.IndentedBlock
        ):  # a local function's comprehensions: its loops too
            return [
                stmt.with_changes(
                    body=stmt.body.with_changes(body=self.block(stmt.body.body))
                )
            ]
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return [stmt]
        if isinstance(stmt, cst.If):
            before, test = self.hoist(stmt.test)
            return [*before, self.if_(stmt.with_changes(test=test))]
        if isinstance(stmt, cst.For):
            before, iter_ = self.hoist(stmt.iter)
            body = stmt.body.with_changes(body=self.block(stmt.body.body))
            return [*before, stmt.with_changes(iter=iter_, body=body)]
        if isinstance(
            stmt, cst.While
        ):  # its test runs on every iteration: left as it is
            return [
                stmt.with_changes(
                    body=stmt.body.with_changes(body=self.block(stmt.body.body))
                )
            ]
        return [stmt]

    def if_(self, stmt: cst.If) -> cst.If:
        body = stmt.body.with_changes(body=self.block(stmt.body.body))
        orelse = stmt.orelse
        if isinstance(orelse, cst.Else):
            orelse = orelse.with_changes(
                body=orelse.body.with_changes(body=self.block(orelse.body.body))
            )
        elif isinstance(orelse, cst.If):
            before, test = self.hoist(orelse.test)
            if (
                before
            ):  # an `elif` test with a comprehension: an `else` holding the hoisted loop, then the `if`
                inner = self.if_(orelse.with_changes(test=test))
                orelse = cst.Else(cst.IndentedBlock([*before, inner]))
            else:
                orelse = self.if_(orelse)
        return stmt.with_changes(body=body, orelse=orelse)

    # --- expressions -----------------------------------------------------------------
    def hoist(self, node):
        """``(statements to run first, node without comprehensions)``."""
        before = []

        class Replace(cst.CSTTransformer):
            def visit_Lambda(self, node):
                return False

            def visit_ListComp(self, node):
                return False

            def visit_GeneratorExp(self, node):
                return False

            def leave_ListComp(inner, original, updated):
                return self.comprehension(original, before)

            def leave_GeneratorExp(inner, original, updated):
                return self.comprehension(original, before)

            def visit_DictComp(self, node):
                return False

            def leave_DictComp(inner, original, updated):
                return self.comprehension(original, before)

            def visit_Call(inner, node):
                # a filtered ``sum`` is its loop's total (its comprehension is no list)
                return not self._filtered_sum(node)

            def leave_Call(inner, original, updated):
                if self._filtered_sum(original):
                    return self.filtered_sum(original, before)
                return updated

        new = rewrite(node, Replace())
        self._carry_positions(node, new)
        return before, new

    def _carry_positions(self, old, new) -> None:
        """Nodes the rewrite rebuilt take the positions of the nodes they replace."""
        if old is new:
            return
        if new not in self.positions and old in self.positions:
            self.positions[new] = self.positions[old]
        if type(old) is not type(new):
            return
        for a, b in zip(old.children, new.children):
            self._carry_positions(a, b)

    def comprehension(self, comp, before: list):
        if not _supported(comp):
            return comp
        self.changed = True
        name = self.fresh(LIST_NAME)
        rename = self._renaming(comp)
        if isinstance(comp, cst.DictComp):  # ``name[key] = value``
            subscript = cst.Subscript(
                cst.Name(name), [cst.SubscriptElement(cst.Index(rename(comp.key)))]
            )
            small = cst.Assign([cst.AssignTarget(subscript)], rename(comp.value))
        else:  # ``name.append(elt)``
            append = cst.Attribute(cst.Name(name), cst.Name("append"))
            small = cst.Expr(cst.Call(append, [cst.Arg(rename(comp.elt))]))
        empty = cst.Dict([]) if isinstance(comp, cst.DictComp) else cst.List([])
        before.extend(self._loops(comp, name, empty, small, rename))
        return cst.Name(name)

    def _filtered_sum(self, call: cst.Call) -> bool:
        """``sum(<generator or list comprehension with an if clause>[, start])``, Python's builtin ``sum``."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "sum"):
            return False
        if self.source.env.get("sum", builtins.sum) is not builtins.sum:
            return False
        args = call.args
        if not 1 <= len(args) <= 2 or any(a.star for a in args) or args[0].keyword:
            return False
        if len(args) == 2 and args[1].keyword and args[1].keyword.value != "start":
            return False
        comp = args[0].value
        if not isinstance(comp, (cst.GeneratorExp, cst.ListComp)):
            return False
        clauses = _clauses(comp)
        return all(c.asynchronous is None for c in clauses) and any(
            c.ifs for c in clauses
        )

    def filtered_sum(self, call: cst.Call, before: list):
        """``sum(f(x) for x in xs if c(x))`` as the total its loop adds up: the items the conditions keep, one
        ``+`` each (Python's ``sum``: from ``start``, 0 by default). The conditions are ``if`` statements:
        on shapes, dict keys and other static facts they are decided when the code runs.
        """
        self.changed = True
        comp = call.args[0].value
        name = self.fresh("_total")
        rename = self._renaming(comp)
        start = call.args[1].value if len(call.args) == 2 else cst.Integer("0")
        total = cst.BinaryOperation(cst.Name(name), cst.Add(), rename(comp.elt))
        small = cst.Assign([cst.AssignTarget(cst.Name(name))], total)
        before.extend(self._loops(comp, name, start, small, rename))
        return cst.Name(name)

    def _renaming(self, comp):
        """Renames a comprehension's variables that the function uses elsewhere (so they cannot clobber them)."""
        renames = {}
        for clause in _clauses(comp):
            for target in _names_in(clause.target):
                if self._used_outside(target, comp):
                    renames[target] = self.fresh(target)
        if not renames:
            return lambda n: n

        def rename(node):
            new = rewrite(node, _Renamer(renames))
            self._carry_positions(node, new)  # errors in it cite the user's line
            return new

        return rename

    def _loops(self, comp, name: str, initial, small, rename) -> list:
        """``name = initial``, then the comprehension's loops (its conditions as ``if``s) around ``small``."""
        append = self.placed(cst.SimpleStatementLine([small]), comp)
        inner = self.statement(
            append
        )  # comprehensions in the element: built on each iteration
        # a comprehension in the first iterable (``sum(f(y) for y in (g(x) for x in xs))``): built first
        first, outer = self.hoist(_clauses(comp)[0].iter)
        for k, clause in reversed(list(enumerate(_clauses(comp)))):
            # its conditions around what it runs, the first outermost
            for condition in reversed(clause.ifs):
                test = rename(condition.test)
                inner = [self.placed(cst.If(test, cst.IndentedBlock(inner)), comp)]
            # the first iterable runs in the enclosing scope; the others see the comprehension's names
            iterable = outer if k == 0 else rename(clause.iter)
            inner = [
                self.placed(
                    cst.For(rename(clause.target), iterable, cst.IndentedBlock(inner)),
                    comp,
                )
            ]
        start = self.placed(
            cst.SimpleStatementLine(
                [cst.Assign([cst.AssignTarget(cst.Name(name))], initial)]
            ),
            comp,
        )
        return [*first, start, *inner]

    def _used_outside(self, name: str, comp) -> bool:
        inside = sum(
            1 for n in iter_nodes(comp) if isinstance(n, cst.Name) and n.value == name
        )
        total = sum(
            1
            for n in iter_nodes(self.source.node)
            if isinstance(n, cst.Name) and n.value == name
        )
        return total > inside


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its comprehensions as loops (itself when it has none)."""
    node = source.node
    if not isinstance(node, cst.FunctionDef) or not any(
        isinstance(n, (cst.ListComp, cst.GeneratorExp, cst.DictComp))
        for n in iter_nodes(node)
    ):
        return source
    hoist = _Hoist(source)
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        new_body = body.with_changes(body=hoist.block(body.body))
    else:  # `def f(x): return [...]` on one line
        new_body = cst.IndentedBlock(hoist.block([body]))
    if not hoist.changed:
        return source
    new = node.with_changes(body=new_body)
    hoist.placed(new, node)
    return replace(source, node=new)
