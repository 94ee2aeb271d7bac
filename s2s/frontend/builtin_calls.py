"""Python's ``map``, the transpose ``zip(*rows)`` and ``list.extend``, read as the loops they stand for.

Guarantees of ``desugar(source)`` (builtin ``map`` and ``zip`` only, not names that shadow them):

- ``map(f, xs)`` (and ``map(f, xs, ys)``) where it is read (an argument, a
  loop's iterable; not kept in a name, where it is an iterator) is the generator expression
  ``(f(x) for x in xs)`` (``(f(x, y) for x, y in zip(xs, ys))``), which
  ``comprehensions`` then reads as a loop: ``sum(map(f, params))``,
  ``list(map(np.tanh, hs))`` and ``for y in map(f, xs):`` work as the
  comprehension does. A lambda ``f`` is applied where it stands: its body with
  the item in place of its parameter (``map(lambda p: np.sum(p**2), ps)`` is
  ``(np.sum(p**2) for p in ps)``). Over tuple or list displays it is the tuple of
  the applied items (``w, x = map(jnp.asarray, (w, x))``, unpacked at once).
- ``sorted(d.items())`` (``d`` a name) is ``[(k, d[k]) for k in sorted(d)]``: a dict's keys are unique,
  so its items sort by them alone (``sorted`` of a dict's keys is Python's, when the code is traced).
- ``a, b = zip(*rows)`` (or ``list(zip(*rows))``), a list of pairs unpacked into its columns, is
  ``a = tuple(row[0] for row in rows)`` and ``b = tuple(row[1] for row in
  rows)`` (``rows`` computed once, into a name of its own, where it is no
  name).
- ``for a, b in zip(*pairs):`` is ``a_column, b_column = pairs`` then ``for a, b in zip(a_column,
  b_column):`` (``transposed_loops``, run after ``comprehensions``, so comprehensions' loops too): the
  loop's names say how many sequences ``pairs`` holds, and unpacking it raises Python's ``ValueError``
  where it holds another number. ``zip(*pairs)`` iterated into one name is a located error.
- ``xs.extend(v)``, a statement (``xs`` a name), is ``for item in v: xs.append(item)``, and
  ``xs.extend([a, b])`` is ``xs.append(a)`` then ``xs.append(b)``: appends, which the resolver reads as
  any (``extended``, run after ``closure_state``, which reads ``extend`` as growing the list). So is
  ``xs += [a, b]`` of a name bound only to lists the function makes (``list_methods`` reads such a
  list's other in-place changes).

New nodes keep the positions of the user's code they stand for.
"""

from __future__ import annotations

import builtins

import libcst as cst

from ..cstutil import dotted, iter_nodes, rewrite
from ..errors import UnsupportedSyntax
from ..naming import Namer
from .function_loops import Positioned
from .rewriting import (
    PositionKeeping,
    assignment,
    assignment_line,
    bindings,
    function_body,
    place,
    with_blocks,
    with_body,
    with_node,
)
from .source import FunctionSource


def _is_builtin(source: FunctionSource, node, name: str) -> bool:
    return (
        isinstance(node, cst.Name)
        and node.value == name
        and source.env.get(name, getattr(builtins, name)) is getattr(builtins, name)
    )


def _displayed(sequences) -> list | None:
    """The items of sequences written as tuple or list displays of one length (no ``*``), else None."""
    shown = []
    for s in sequences:
        if not isinstance(s, (cst.Tuple, cst.List)) or any(
            isinstance(e, cst.StarredElement) for e in s.elements
        ):
            return None
        shown.append([e.value for e in s.elements])
    return shown if len({len(items) for items in shown}) == 1 else None


class _Maps(PositionKeeping):
    """``map(f, xs)`` as ``(f(x) for x in xs)``."""

    def __init__(self, source: FunctionSource, namer: Namer, bound: set):
        super().__init__(source.file.positions)
        self.source, self.namer, self.bound = source, namer, bound
        self.changed = False
        self.kept = set()

    def _sorted_items(self, call):
        if "sorted" in self.bound:
            return None
        return _sorted_items_of(self.source, call, self.namer)

    def visit_Assign(self, node):
        # ``ys = map(f, xs)`` kept in a name is an iterator, which a second read finds empty: not a list
        # (``iterators`` reads it where one loop iterates it); unpacked at once, it is read
        if any(isinstance(t.target, cst.Name) for t in node.targets):
            self.kept.add(id(node.value))

    def leave_Call(self, original, updated):
        if id(original) in self.kept:
            return updated
        items = self._sorted_items(updated)
        if items is not None:
            self.changed = True
            return place(items, original, self.positions)
        if not _is_builtin(self.source, updated.func, "map") or len(updated.args) < 2:
            return updated
        if self.bound & {"map", "zip"} or any(
            a.star or a.keyword for a in updated.args
        ):
            return updated
        fn, *sequences = (a.value for a in updated.args)
        shown = _displayed(sequences)
        if (
            shown is not None
        ):  # ``map(jnp.asarray, (w, x))``: each item applied where it stands
            applied = [self._applied(fn, list(row)) for row in zip(*shown)]
            if all(a is not None for a in applied):
                self.changed = True
                return place(
                    cst.Tuple([cst.Element(a) for a in applied]),
                    original,
                    self.positions,
                )
        items = [cst.Name(self.namer.fresh("item")) for _ in sequences]
        element = self._applied(fn, items)
        if element is None:
            return updated
        if len(items) == 1:
            target, iterable = items[0], sequences[0]
        else:
            target = cst.Tuple([cst.Element(i) for i in items])
            iterable = cst.Call(cst.Name("zip"), [cst.Arg(s) for s in sequences])
        self.changed = True
        generator = cst.GeneratorExp(element, cst.CompFor(target=target, iter=iterable))
        return place(generator, original, self.positions)

    def _applied(self, fn, items):
        """``fn`` applied to ``items``: a lambda's body with them in place of its parameters."""
        if not isinstance(fn, cst.Lambda):
            return cst.Call(fn, [cst.Arg(i) for i in items])
        params = fn.params
        if (
            isinstance(params.star_arg, (cst.Param, cst.ParamStar))
            or params.kwonly_params
            or params.posonly_params
            or params.star_kwarg is not None
            or len(params.params) != len(items)
            or any(p.default is not None for p in params.params)
        ):
            return None
        # the lambda's own names must not meet the loop's (its body holds no binding of its own but these)
        mapping = {p.name.value: item for p, item in zip(params.params, items)}
        return rewrite(fn.body, Positioned(mapping, self.positions))


def _transposed(source: FunctionSource, stmt, namer: Namer) -> list | None:
    """``a, b = zip(*rows)`` as a column per name; None for any other statement."""
    node = assignment(stmt)
    if node is None or not isinstance(node.targets[0].target, (cst.Tuple, cst.List)):
        return None
    value = node.value
    if (
        isinstance(value, cst.Call)
        and any(_is_builtin(source, value.func, f) for f in ("list", "tuple"))
        and len(value.args) == 1
        and not value.args[0].star
        and not value.args[0].keyword
    ):  # ``a, b = list(zip(*rows))``: the same columns
        value = value.args[0].value
    if not (
        isinstance(value, cst.Call)
        and _is_builtin(source, value.func, "zip")
        and len(value.args) == 1
        and value.args[0].star == "*"
    ):
        return None
    targets = node.targets[0].target.elements
    if any(isinstance(t, cst.StarredElement) for t in targets):
        return None
    positions = source.file.positions
    out = []
    rows = value.args[0].value
    if not isinstance(rows, cst.Name):
        name = cst.Name(namer.fresh("rows"))
        out.append(assignment_line(name, rows, stmt, positions))
        rows = name
    for k, target in enumerate(targets):
        row = cst.Name(namer.fresh("row"))
        column = cst.Subscript(
            row, [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))]
        )
        items = cst.GeneratorExp(column, cst.CompFor(target=row, iter=rows))
        column_of = cst.Call(cst.Name("tuple"), [cst.Arg(items)])
        out.append(assignment_line(target.value, column_of, stmt, positions))
    return out


def _zip_of_starred(node, source: FunctionSource) -> cst.BaseExpression | None:
    """``pairs`` for ``zip(*pairs)`` (the builtin ``zip``, one starred argument), else None."""
    if (
        isinstance(node, cst.Call)
        and _is_builtin(source, node.func, "zip")
        and len(node.args) == 1
        and node.args[0].star == "*"
    ):
        return node.args[0].value
    return None


def _sorted_items_of(source, call: cst.Call, namer: Namer):
    """``sorted(d.items())`` (``d`` a name; ``reverse=`` too) as ``[(k, d[k]) for k in sorted(d)]``: a
    dict's keys are unique, so its items sort by them alone; else None."""
    if not (
        _is_builtin(source, call.func, "sorted")
        and call.args
        and call.args[0].keyword is None
        and not call.args[0].star
        and all(
            a.keyword is not None and a.keyword.value == "reverse"
            for a in call.args[1:]
        )
    ):
        return None
    items = call.args[0].value
    if not (
        isinstance(items, cst.Call)
        and not items.args
        and isinstance(items.func, cst.Attribute)
        and items.func.attr.value == "items"
        and isinstance(items.func.value, cst.Name)
    ):
        return None
    table = items.func.value
    key = cst.Name(namer.fresh("key"))
    keys = call.with_changes(args=[cst.Arg(table), *call.args[1:]])
    pair = cst.Tuple(
        [
            cst.Element(key),
            cst.Element(cst.Subscript(table, [cst.SubscriptElement(cst.Index(key))])),
        ]
    )
    return cst.ListComp(pair, cst.CompFor(target=key, iter=keys))


class _TransposedLoops(PositionKeeping):
    """``for a, b in zip(*pairs):`` over columns unpacked by name on the line before."""

    def __init__(self, source: FunctionSource, namer: Namer):
        super().__init__(source.file.positions)
        self.source, self.namer = source, namer

    def leave_For(self, original, updated):
        pairs = _zip_of_starred(updated.iter, self.source)
        if pairs is None:
            return updated
        target = updated.target
        if not isinstance(target, (cst.Tuple, cst.List)) or any(
            isinstance(e, cst.StarredElement) for e in target.elements
        ):
            raise UnsupportedSyntax(
                "`zip(*...)` iterated into one name: s2s needs the number of sequences it zips",
                self.source.origin(original.iter),
                "unpack each item by name (`for a, b in zip(*pairs):`), or zip the sequences "
                "themselves (`zip(first, second)`)",
            )
        columns = [
            cst.Name(self.namer.fresh(f"{_base(e.value)}_column"))
            for e in target.elements
        ]
        unpack = assignment_line(
            cst.Tuple([cst.Element(c) for c in columns]),
            pairs,
            original,
            self.positions,
        )
        loop = updated.with_changes(
            iter=updated.iter.with_changes(args=[cst.Arg(c) for c in columns])
        )
        return cst.FlattenSentinel([unpack, place(loop, original, self.positions)])


def _base(target) -> str:
    return target.value if isinstance(target, cst.Name) else "item"


def transposed_loops(source: FunctionSource) -> FunctionSource:
    """``source`` with its loops over ``zip(*pairs)`` reading ``pairs``' columns by name."""
    node = source.node
    if not any(_zip_of_starred(n, source) is not None for n in iter_nodes(node)):
        return source
    names = {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}
    namer = Namer(names | set(source.env))
    return with_node(source, rewrite(node, _TransposedLoops(source, namer)))


def append_line(lst: cst.Name, item) -> cst.SimpleStatementLine:
    call = cst.Call(cst.Attribute(lst, cst.Name("append")), [cst.Arg(item)])
    return cst.SimpleStatementLine([cst.Expr(call)])


def _method_line(line, method: str) -> cst.Call | None:
    """The call of the line ``name.method(...)`` (a statement of its own), else None."""
    call = line.body[0].value if isinstance(line.body[0], cst.Expr) else None
    if (
        len(line.body) == 1
        and isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and isinstance(call.func.value, cst.Name)
        and call.func.attr.value == method
    ):
        return call
    return None


class _Extends(PositionKeeping):
    """Appends for the line ``xs.extend(v)``."""

    def __init__(self, positions: dict, namer: Namer, lists: set, joined: set):
        super().__init__(positions)
        self.namer, self.lists, self.joined = namer, lists, joined

    def leave_SimpleStatementLine(self, original, updated):
        grown = updated.body[0] if len(updated.body) == 1 else None
        joined = _joined_to(grown)
        if joined is not None and joined[0].value in self.joined:
            # ``states = states + [s]`` of a list no other name holds: ``states.append(s)``
            lines = [append_line(joined[0], item) for item in joined[1]]
            lines = [place(line, original, self.positions) for line in lines]
            return cst.FlattenSentinel(lines) if lines else cst.RemovalSentinel.REMOVE
        if (
            isinstance(grown, cst.AugAssign)
            and isinstance(grown.operator, cst.AddAssign)
            and isinstance(grown.target, cst.Name)
            and grown.target.value in self.lists
            and isinstance(grown.value, (cst.List, cst.Tuple))
            and not any(isinstance(e, cst.StarredElement) for e in grown.value.elements)
        ):  # ``feats += [h]`` of a list: ``feats.append(h)``
            lines = [append_line(grown.target, e.value) for e in grown.value.elements]
            lines = [place(line, original, self.positions) for line in lines]
            return cst.FlattenSentinel(lines) if lines else cst.RemovalSentinel.REMOVE
        call = _method_line(updated, "extend")
        if not (
            call is not None
            and len(call.args) == 1
            and call.args[0].keyword is None
            and not call.args[0].star
        ):
            return updated
        lst, items = call.func.value, call.args[0].value
        if isinstance(items, (cst.List, cst.Tuple)) and not any(
            isinstance(e, cst.StarredElement) for e in items.elements
        ):
            lines = [append_line(lst, e.value) for e in items.elements]
        else:
            item = cst.Name(self.namer.fresh("item"))
            body = cst.IndentedBlock([append_line(lst, item)])
            lines = [cst.For(item, items, body)]
        lines = [place(line, original, self.positions) for line in lines]
        return cst.FlattenSentinel(lines) if lines else cst.RemovalSentinel.REMOVE


def made_lists(node, rebound=False) -> set:
    """Names bound only to lists the function makes (displays, comprehensions, ``list(...)``), and
    extended by ``+=``; with ``rebound``, names bound to such a list at least once."""
    made, other = set(), set()
    for n in iter_nodes(node):
        if isinstance(n, cst.Assign):
            makes = isinstance(n.value, (cst.List, cst.ListComp)) or (
                isinstance(n.value, cst.Call)
                and isinstance(n.value.func, cst.Name)
                and n.value.func.value == "list"
            )
            for t in n.targets:
                if isinstance(t.target, (cst.Subscript, cst.Attribute)):
                    continue  # (an item written: the name still holds its list)
                (made if makes and isinstance(t.target, cst.Name) else other).update(
                    m.value for m in iter_nodes(t.target) if isinstance(m, cst.Name)
                )
        elif isinstance(n, (cst.For, cst.AnnAssign, cst.Param)):
            other.update(
                m.value
                for m in iter_nodes(getattr(n, "target", None) or n.name)
                if isinstance(m, cst.Name)
            )
        elif isinstance(n, cst.AugAssign) and not isinstance(n.operator, cst.AddAssign):
            other.update(
                m.value for m in iter_nodes(n.target) if isinstance(m, cst.Name)
            )
    return made if rebound else made - other


def _joined_to(stmt) -> tuple | None:
    """``(xs, items)`` for the statement ``xs = xs + [a, b]`` (a list display, no ``*``), else None."""
    if not (
        isinstance(stmt, cst.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0].target, cst.Name)
        and isinstance(stmt.value, cst.BinaryOperation)
        and isinstance(stmt.value.operator, cst.Add)
        and isinstance(stmt.value.left, cst.Name)
        and stmt.value.left.value == stmt.targets[0].target.value
        and isinstance(stmt.value.right, cst.List)
        and not any(
            isinstance(e, cst.StarredElement) for e in stmt.value.right.elements
        )
    ):
        return None
    return stmt.value.left, [e.value for e in stmt.value.right.elements]


# calls that read a list without holding on to it (an iterator would: only where a loop consumes it)
_READERS = ("len", "sum", "max", "min", "list", "tuple", "sorted")
_ITERATORS = ("enumerate", "zip", "reversed")


def _grown_by_joins(node) -> set:
    """Names bound to a list the function makes and rebound only as ``xs = xs + [a]``, where no other name
    can hold the list (each read of ``xs`` indexes it, measures it, iterates it, passes it to a NumPy or
    builtin function that reads it, or joins it): ``xs.append(a)`` then computes the same.
    """
    joins = {}  # name -> the Name nodes read by its joins
    for n in iter_nodes(node):
        joined = _joined_to(n)
        if joined is not None:
            joins.setdefault(joined[0].value, set()).add(id(n.value.left))
    if not joins:
        return set()
    candidates = set(joins) & made_lists(_without_joins(node))
    candidates -= {
        m.name.value
        for n in iter_nodes(node)
        if isinstance(n, (cst.Global, cst.Nonlocal))
        for m in n.names
    }
    if not candidates:
        return set()
    allowed, stores = set(), set()
    for n in iter_nodes(node):
        if isinstance(n, cst.Assign):
            stores.update(id(t.target) for t in n.targets)
        elif isinstance(n, (cst.Subscript, cst.Return)):
            # (a list returned: the caller holds the final one)
            allowed.add(id(n.value))
        elif isinstance(n, (cst.For, cst.CompFor)):
            allowed.add(id(n.iter))
            if isinstance(n.iter, cst.Call) and dotted(n.iter.func) in _ITERATORS:
                allowed.update(id(a.value) for a in n.iter.args if not a.star)
        elif isinstance(n, cst.Attribute) and n.attr.value == "append":
            allowed.add(id(n.value))
        elif isinstance(n, cst.Call):
            func = dotted(n.func) or ""
            if func in _READERS or func.split(".")[0] in ("np", "jnp", "numpy"):
                allowed.update(id(a.value) for a in n.args if not a.star)
    for name in list(candidates):
        for n in iter_nodes(node):
            if (
                isinstance(n, cst.Name)
                and n.value == name
                and id(n) not in stores | allowed | joins[name]
            ):
                candidates.discard(name)
                break
    return candidates


def _without_joins(node):
    """``node`` without its ``xs = xs + [a]`` lines (which ``made_lists`` would count as other bindings)."""

    class Drop(cst.CSTTransformer):
        def leave_SimpleStatementLine(self, original, updated):
            if len(updated.body) == 1 and _joined_to(updated.body[0]) is not None:
                return cst.RemovalSentinel.REMOVE
            return updated

    return rewrite(node, Drop())


def extended(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``xs.extend(v)`` lines, ``xs += [a, b]`` of a list, and ``xs = xs + [a]`` of a list
    no other name holds (``_grown_by_joins``), written as appends."""
    names = {n.value for n in iter_nodes(source.node) if isinstance(n, cst.Name)}
    lists = made_lists(source.node)
    grown = any(
        isinstance(n, cst.AugAssign)
        and isinstance(n.target, cst.Name)
        and n.target.value in lists
        for n in iter_nodes(source.node)
    )
    joined = _grown_by_joins(source.node)
    if "extend" not in names and not grown and not joined:
        return source
    namer = Namer(names | set(source.env))
    rewriter = _Extends(source.file.positions, namer, lists, joined)
    return with_node(source, rewrite(source.node, rewriter))


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``map`` calls as generator expressions and ``zip(*rows)`` unpackings as columns."""
    node = source.node
    body = function_body(source)
    if body is None or not any(
        isinstance(n, cst.Name) and n.value in ("map", "zip", "sorted")
        for n in iter_nodes(node.body)
    ):
        return source
    names = {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}
    namer = Namer(names | set(source.env))
    shadowed = {"map", "zip", "sorted"} & set(
        bindings(node)
    )  # a local ``map``/``zip``/``sorted`` is no builtin
    changed = False

    def block(statements):
        nonlocal changed
        out = []
        for stmt in statements:
            columns = (
                _transposed(source, stmt, namer) if "zip" not in shadowed else None
            )
            if columns is not None:
                changed = True
                out.extend(columns)
                continue
            out.append(with_blocks(stmt, block, source.file.positions))
        return out

    new_body = block(body)
    if changed:
        source = with_body(source, new_body)
    maps = _Maps(source, namer, shadowed)
    new = rewrite(source.node, maps)
    return with_node(source, new) if maps.changed else source
