"""What the source-level rewrites share: the nodes they build keep the positions of the user's code.

The desugaring passes (``indexed_loops``, ``starred``, ``function_loops``,
``strings``) rewrite a function's libcst tree before ``resolve``, and errors
and the generated comments find the user's line by node. Guarantee: a node a
rewrite builds in place of another gets that node's position (unless it has
one already).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from ..cstutil import iter_nodes, literal_key
from ..naming import Namer
from .source import FunctionSource


class PositionKeeping(cst.CSTTransformer):
    """A transformer whose rebuilt nodes keep the positions of the nodes they replace."""

    def __init__(self, positions: dict):
        cst.CSTTransformer.__init__(
            self
        )  # not super(): a subclass may mix in another transformer
        self.positions = positions

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        if updated is not original and original in self.positions:
            self.positions.setdefault(updated, self.positions[original])
        return updated


class Moving(cst.CSTTransformer):
    """A transformer whose rebuilt nodes are placed by ``moved(original, updated)`` (``moved_from``: a
    node of another function's lines written in this one)."""

    def __init__(self, moved):
        super().__init__()
        self.moved = moved

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        if isinstance(updated, cst.CSTNode):
            self.moved(original, updated)
        return updated


def namer_of(source: FunctionSource) -> Namer:
    """Fresh names for a rewrite of ``source``: none its code or its module's names use."""
    return Namer(
        {n.value for n in iter_nodes(source.node) if isinstance(n, cst.Name)}
        | set(source.env)
    )


def place(node: cst.CSTNode, like: cst.CSTNode, positions: dict) -> cst.CSTNode:
    """``node`` and every node under it at the position of ``like`` (those without one of their own)."""
    if like in positions:
        for n in iter_nodes(node):
            positions.setdefault(n, positions[like])
    return node


def moved_from(there, here, like):
    """``position(original, updated)``: a node rebuilt from ``original``, a node of the file piece ``there``,
    placed in the piece ``here`` (a function's lines) where ``original`` is in the same file, else at
    ``like`` (the line that brought it, in ``here``)."""
    if here.path != there.path:
        return lambda original, updated: place(updated, like, here.positions)
    lines = there.line_offset - here.line_offset
    cols = there.col_offset - here.col_offset

    def moved(p: CodePosition) -> CodePosition:
        return CodePosition(p.line + lines, p.column + cols)

    def position(original, updated):
        found = there.positions.get(original)
        if found is not None:
            here.positions.setdefault(
                updated, CodeRange(moved(found.start), moved(found.end))
            )

    return position


def attribute_reads(node, name: str) -> set[str] | None:
    """The attributes ``node`` reads of ``name`` (``opt.init``, ``kde.bw``), where it reads ``name`` only
    so, besides the one line binding it; None where it reads it otherwise (whole, passed on).
    """
    reads = [
        n
        for n in iter_nodes(node)
        if isinstance(n, cst.Attribute)
        and isinstance(n.value, cst.Name)
        and n.value.value == name
    ]
    named = sum(  # (an attribute's name is no read of ``name``: ``c.c``)
        1
        for n in iter_nodes(node, skip={cst.Attribute: "value"})
        if isinstance(n, cst.Name) and n.value == name
    )
    return {r.attr.value for r in reads} if named == len(reads) + 1 else None


def as_written(source: FunctionSource, node) -> str:
    """``node`` as the user wrote it (``layer(x)``'s ``layer`` and ``layer.output``, not the names a
    rewrite gave them), else as it stands."""
    origin = source.origin(node)
    if origin is not None and origin.end_col > origin.col:
        return origin.text[origin.col : origin.end_col]
    return cst.Module([]).code_for_node(node)


def object_of(node, env: dict, bound) -> object | None:
    """The module-level object a name or attribute chain reaches (``np.vectorize``), None for a name
    the function binds (``bound``) and for any other expression."""
    if isinstance(node, cst.Name):
        return None if node.value in bound else env.get(node.value)
    if isinstance(node, cst.Attribute):
        owner = object_of(node.value, env, bound)
        return None if owner is None else getattr(owner, node.attr.value, None)
    return None


def references(source: FunctionSource, objects) -> bool:
    """Whether the function reads any of ``objects`` (by identity) through a name of its module or an
    attribute chain from one (``np.vectorize``, ``jax.jacfwd``): a rewrite of their calls looks no further
    where it does not."""
    wanted = {id(o) for o in objects}
    return bool(wanted & referenced_objects(source).keys())


def referenced_objects(source: FunctionSource) -> dict:
    """``{id: object}`` of the module-level objects the function's names and attribute chains reach, read
    once per function node (the rewrites that find nothing to do leave it as it is)."""
    key = (id(source.node), id(source.env))
    held = _REFERENCED.get(key)
    if held is not None and held[0] is source.node and held[1] is source.env:
        return held[2]
    bound, found = bindings(source.node), {}
    for n in iter_nodes(source.node):
        if isinstance(n, (cst.Name, cst.Attribute)):
            obj = object_of(n, source.env, bound)
            if obj is not None:
                found[id(obj)] = obj
    if len(_REFERENCED) > 512:
        _REFERENCED.clear()
    _REFERENCED[key] = (source.node, source.env, found)
    return found


_REFERENCED: dict = (
    {}
)  # ``_referenced``'s results, with the node and names they were read from


def mentions(name: str, statements) -> int:
    """How many times ``statements`` name ``name`` (not as an attribute: ``self.name`` does not count)."""
    return sum(
        1
        for stmt in statements
        for n in iter_nodes(stmt, skip={cst.Attribute: "value"})
        if isinstance(n, cst.Name) and n.value == name
    )


def function_body(source: FunctionSource) -> list | None:
    """The statements of the ``def`` ``source`` holds (None for a lambda or a one-line ``def``)."""
    node = source.node
    if isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock):
        return list(node.body.body)
    return None


def named_value(node) -> tuple[str, cst.BaseExpression] | None:
    """``(name, value)`` of an ``Assign`` node ``name = value`` (one target, a name), else None."""
    if (
        isinstance(node, cst.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0].target, cst.Name)
    ):
        return node.targets[0].target.value, node.value
    return None


def is_docstring(stmt) -> bool:
    """Whether a line is a string alone (a docstring, where it comes first)."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.SimpleString)
    )


def assignment(stmt) -> cst.Assign | None:
    """The ``target = value`` a line holds, when it holds that alone (one target)."""
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Assign)
        and len(stmt.body[0].targets) == 1
    ):
        return stmt.body[0]
    return None


def assignment_line(target, value, like, positions: dict) -> cst.SimpleStatementLine:
    """The line ``target = value``, at the position of ``like``."""
    line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)])
    return place(line, like, positions)


def bindings(node, items: bool = True) -> Counter:
    """``_bindings`` of ``node``, a function's counted once (most rewrites leave the function as it is)."""
    if not isinstance(node, cst.FunctionDef):
        return _bindings(node, items)
    held = _BINDINGS.get((id(node), items))
    if held is None or held[0] is not node:
        if len(_BINDINGS) > 64:
            _BINDINGS.clear()
        held = _BINDINGS[id(node), items] = (node, _bindings(node, items))
    return Counter(held[1])


_BINDINGS: dict = {}  # (function node id, items) -> (the node, its bindings)


def _bindings(node, items: bool = True) -> Counter:
    """How many times each name is bound anywhere under ``node``: parameters (nested functions' too),
    assignment and loop targets (not the attribute names in them), ``def`` and ``class`` names. The
    array an item target writes (``col[:, y] = v``: ``col``) counts too unless ``items`` is False (such
    a line binds no name); the names its index reads (``y``, ``np`` of ``e[np.arange(2)] = v``) do not.
    """
    bound = Counter()
    for n in iter_nodes(node):
        if isinstance(n, cst.Param):
            bound[n.name.value] += 1
        elif isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)):
            skipped = {
                id(m)
                for a in iter_nodes(n.target)
                if isinstance(a, (cst.Attribute, cst.Subscript))
                for m in (
                    (a.attr,)
                    if isinstance(a, cst.Attribute)
                    else iter_nodes(a) if not items else _index_nodes(a)
                )
            }
            for m in iter_nodes(n.target):
                if isinstance(m, cst.Name) and id(m) not in skipped:
                    bound[m.value] += 1
        elif isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            bound[n.name.value] += 1
    return bound


def own_constants(source: FunctionSource) -> dict:
    """``{name: value}`` of the names the function binds once, on a line of its own block, to a string or int
    written out (``mode = "gelu"``, an argument's literal ``held_objects`` wrote on its first line too: the
    parameter it replaces aside), where no earlier line of the block reads them."""
    body = function_body(source)
    if body is None:
        return {}
    counts = bindings(source.node)
    params = parameter_names(source.node.params)
    found, read = {}, set()
    for stmt in body:
        line = isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
        named = named_value(stmt.body[0]) if line else None
        value = None if named is None else literal_key(named[1])
        if (
            value is not None
            and named[0] not in read
            and counts[named[0]] - (named[0] in params) == 1
        ):
            found[named[0]] = value
        read |= {n.value for n in iter_nodes(stmt) if isinstance(n, cst.Name)}
    return found


def names_bound(target) -> list[str]:
    """The names an assignment or loop target binds: ``a`` and ``b`` of ``a, *b = ...``; none of
    ``obj.attr = v`` or ``x[i] = v`` (they change an object, not a name)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in names_bound(e.value)]
    if isinstance(target, cst.StarredElement):
        return names_bound(target.value)
    return []


def parameter_names(params: cst.Parameters) -> set[str]:
    """The names a ``def``'s or lambda's parameters bind (``*args`` and ``**kwargs`` too)."""
    return {
        q.name.value
        for q in [*params.posonly_params, *params.params, *params.kwonly_params]
        + [x for x in (params.star_arg, params.star_kwarg) if isinstance(x, cst.Param)]
    }


def rebinds(node, name: str) -> int:
    """How many times ``node`` binds ``name`` itself: parameters, ``def``s, assignment and loop targets
    (``name.attr = v`` and ``name.attr[i] += v`` change the object ``name`` holds: they do not count).
    """
    count = 0
    for n in iter_nodes(node):
        if isinstance(n, (cst.Param, cst.FunctionDef, cst.ClassDef)):
            count += n.name.value == name
        elif isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)):
            count += names_bound(n.target).count(name)
    return count


def _index_nodes(subscript: cst.Subscript):
    for element in subscript.slice:
        yield from iter_nodes(element)


def with_blocks(stmt, block, positions: dict):
    """A compound statement (``if``/``for``/``while``, an ``elif`` chain) with ``block`` applied to each of
    its statement lists; any other statement as it is."""
    if not isinstance(stmt, (cst.If, cst.For, cst.While)):
        return stmt
    new = stmt.with_changes(body=stmt.body.with_changes(body=block(stmt.body.body)))
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.Else):
        body = orelse.body.with_changes(body=block(orelse.body.body))
        new = new.with_changes(orelse=orelse.with_changes(body=body))
    elif isinstance(orelse, cst.If):
        new = new.with_changes(orelse=with_blocks(orelse, block, positions))
    if new is not stmt and stmt in positions:
        positions[new] = positions[stmt]
    return new


def with_body(source: FunctionSource, statements, **changes) -> FunctionSource:
    """``source`` whose function body is ``statements`` (the ``def`` keeps its position)."""
    node = source.node
    new = node.with_changes(body=node.body.with_changes(body=statements))
    if node in source.file.positions:
        source.file.positions[new] = source.file.positions[node]
    return replace(source, node=new, **changes)


def with_node(source: FunctionSource, new: cst.CSTNode) -> FunctionSource:
    """``source`` whose function is ``new`` (keeping the position of the one it replaces)."""
    if source.node in source.file.positions:
        source.file.positions.setdefault(new, source.file.positions[source.node])
    return replace(source, node=new)
