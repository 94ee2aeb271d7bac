"""Lists of objects of your classes made in the function, read as lists of their attributes' tuples.

``layers = [Dense(W, b, act) for (W, b), act in zip(params, acts)]`` (or a display ``[Dense(...), ...]``
of one class), then ``for layer in layers: x = layer(x)`` and ``sum(layer.l2() for layer in layers)``: a
numpy-ml or NNFS-style network held as a list of layer objects. ``desugar(source)`` writes each object as
the tuple of its attributes, made by a local function standing for the class (``def Dense_new(W, b,
activation=None)``: ``__init__``'s assignments, returning ``(self_W, self_b, self_activation)``), so the
list is a list of tuples, which every transform reads; each method a loop calls is a local function of
those attributes and its own parameters (``def Dense_call(self_W, self_b, self_activation, x)``, with
``self.W`` read as ``self_W`` and ``self.l2()`` as ``Dense_l2(self_W, ...)``), and a loop over the list
unpacks the tuple (``for layer_W, layer_b, layer_activation in layers``).

Guarantee: the list's name bound once, read only as the iterable of ``for`` loops and comprehensions
(by a name each, read in them only as ``layer.attribute``, ``layer.method(...)`` or ``layer(...)``) and by
``len``; every item made by calling one class of the program (plain, or a ``NamedTuple``/dataclass) whose
``__init__`` only assigns ``self.attribute = expression``, whose methods the loops reach read ``self``
only as ``self.attribute`` or ``self.method(...)`` and assign no attribute, and whose module-level names
are the same objects here. Anything else stays as it is (its located error). The local functions keep
the positions of the class's lines.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass

import libcst as cst

from ..cstutil import iter_nodes, literal, rewrite
from . import source as sources
from .class_members import (
    _attribute_writes,
    _init,
    _is_record,
    _methods,
    _plain_class,
    _properties,
    _reached,
)
from .factories import globals_agree
from .local_objects import _Objects
from .object_init import _base_init, init_assignments
from .rewriting import (
    Moving,
    PositionKeeping,
    bindings,
    function_body,
    is_docstring,
    moved_from,
    named_value,
    namer_of,
    place,
    with_body,
)


@dataclass
class _Kind:
    """What the items of one list are: their class, attributes (the tuple's order) and local functions."""

    cls: type
    fields: list
    functions: (
        dict  # method name (``__new__`` the constructor) -> the local function's name
    )
    properties: set


class _Members(cst.CSTTransformer):
    """``obj.attribute`` as ``names[attribute]``, ``obj.method(...)``/``obj(...)`` as the method's local
    function called with the attributes first; ``obj`` read any other way sets ``failed``.
    """

    def __init__(self, obj: str, names: dict, kind: _Kind):
        super().__init__()
        self.obj, self.names, self.kind, self.failed = obj, names, kind, False

    def _attributes(self) -> list:
        return [cst.Arg(cst.Name(self.names[f])) for f in self.kind.fields]

    def _is_obj(self, node) -> bool:
        return isinstance(node, cst.Name) and node.value == self.obj

    def leave_Call(self, original, updated):
        func = updated.func
        if self._is_obj(func):
            method = "__call__"
        elif isinstance(func, cst.Attribute) and self._is_obj(func.value):
            method = func.attr.value
        else:
            return updated
        name = self.kind.functions.get(method)
        if name is None:
            return updated  # (a field holding a function: ``leave_Attribute`` names it)
        return cst.Call(cst.Name(name), [*self._attributes(), *updated.args])

    def leave_Attribute(self, original, updated):
        if not self._is_obj(updated.value):
            return updated
        attr = updated.attr.value
        if attr in self.kind.properties and attr in self.kind.functions:
            return cst.Call(cst.Name(self.kind.functions[attr]), self._attributes())
        if attr in self.names:
            return cst.Name(self.names[attr])
        if (
            attr in self.kind.functions
        ):  # a method read as a value, not called: left for ``failed``
            return updated
        self.failed = True
        return updated


def _iterated(node) -> str | None:
    """``layers`` for a loop over ``layers``, ``layers[1:]``, ``layers[:-1]`` or ``reversed(layers)``."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "reversed"
        and len(node.args) == 1
        and not node.args[0].star
        and not node.args[0].keyword
    ):
        node = node.args[0].value
    if (
        isinstance(node, cst.Subscript)
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Slice)
    ):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _indexed(node) -> str | None:
    """``layers`` for ``layers[k]`` (one index, no slice)."""
    if (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Name)
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
        and node.slice[0].slice.star is None
    ):
        return node.value.value
    return None


def _still_read(node, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in iter_nodes(node))


def _writes_member(node, name: str) -> bool:
    """Whether ``node`` assigns an attribute of ``name`` (``layer.W -= lr * g``: the object in the list
    changes, which a tuple read out of it would not)."""
    for n in iter_nodes(node):
        targets = (
            [t.target for t in n.targets]
            if isinstance(n, cst.Assign)
            else [n.target] if isinstance(n, (cst.AugAssign, cst.AnnAssign)) else []
        )
        for t in targets:
            for part in iter_nodes(t):
                if (
                    isinstance(part, cst.Attribute)
                    and isinstance(part.value, cst.Name)
                    and part.value.value == name
                ):
                    return True
    return False


class _Lists(PositionKeeping):
    """Loops and comprehensions over the lists rewritten (``failed``: a loop's name read whole)."""

    def __init__(self, lists: dict, namer, positions):
        super().__init__(positions)
        self.lists, self.namer = lists, namer
        self.failed: set = set()
        # an item's method read, not called: id -> its list
        self.methods_read: dict = {}

    def refused(self) -> set:
        """The lists read whole somewhere: they stay as they are."""
        return self.failed | set(self.methods_read.values())

    def _unpacked(self, target, kind):
        """``(names, tuple target)`` for a loop's name over a list of ``kind``."""
        var = target.value
        names = {f: self.namer.fresh(f"{var}_{f}") for f in kind.fields}
        return names, cst.Tuple([cst.Element(cst.Name(names[f])) for f in kind.fields])

    def _over(self, iterable, target):
        listed = _iterated(iterable)
        if listed in self.lists and isinstance(target, cst.Name):
            return listed
        return None

    def _item_members(self, node):
        """``(kind, field -> expression)`` for ``layers[k]``, an item of a list rewritten, else None."""
        listed = _indexed(node)
        if listed not in self.lists:
            return None
        kind = self.lists[listed]
        return kind, {
            f: cst.Subscript(
                node, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))]
            )
            for i, f in enumerate(kind.fields)
        }

    def leave_Call(self, original, updated):
        """``layers[-1](x)``, ``layers[0].method(x)``: the method's local function, given the item's fields."""
        func = updated.func
        obj, method = (
            (func.value, func.attr.value)
            if isinstance(func, cst.Attribute)
            else (func, "__call__")
        )
        found = self._item_members(obj)
        if found is None:
            return updated
        self.methods_read.pop(id(func), None)
        kind, fields = found
        name = kind.functions.get(method)
        if name is None:
            return updated
        args = [cst.Arg(fields[f]) for f in kind.fields]
        return place(
            cst.Call(cst.Name(name), [*args, *updated.args]), original, self.positions
        )

    def leave_Attribute(self, original, updated):
        """``layers[-1].W``: the item's field."""
        found = self._item_members(updated.value)
        if found is None:
            return updated
        kind, fields = found
        attr = updated.attr.value
        if attr in kind.properties and attr in kind.functions:
            args = [cst.Arg(fields[f]) for f in kind.fields]
            return cst.Call(cst.Name(kind.functions[attr]), args)
        if attr in fields and attr not in kind.functions:
            return place(fields[attr], original, self.positions)
        # a method: ``leave_Call`` of its call takes it, else the item is read whole
        self.methods_read[id(updated)] = _indexed(updated.value)
        return updated

    def leave_For(self, original, updated):
        listed = self._over(updated.iter, updated.target)
        if listed is None:
            return updated
        kind = self.lists[listed]
        names, target = self._unpacked(updated.target, kind)
        members = _Members(updated.target.value, names, kind)
        body = place(rewrite(updated.body, members), original, self.positions)
        if (
            members.failed
            or _still_read(body, updated.target.value)
            or _writes_member(updated.body, updated.target.value)
        ):
            self.failed.add(listed)
        return updated.with_changes(target=target, body=body)

    def _comprehension(self, updated):
        clause = updated.for_in
        while clause is not None:
            listed = self._over(clause.iter, clause.target)
            if listed is not None:
                kind = self.lists[listed]
                names, target = self._unpacked(clause.target, kind)
                members = _Members(clause.target.value, names, kind)
                renamed = place(rewrite(updated, members), updated, self.positions)
                if members.failed:
                    self.failed.add(listed)
                return self._retarget(renamed, clause.target.value, target, listed)
            clause = clause.inner_for_in
        return updated

    def _retarget(self, comp, var, target, listed):
        """``comp`` with the clause binding ``var`` binding ``target`` instead."""

        class _Target(cst.CSTTransformer):
            def leave_CompFor(self, original, updated):
                if isinstance(updated.target, cst.Name) and updated.target.value == var:
                    return updated.with_changes(target=target)
                return updated

        out = rewrite(comp, _Target())
        if _still_read(out, var):
            self.failed.add(listed)
        return out

    leave_ListComp = leave_GeneratorExp = leave_SetComp = leave_DictComp = (
        lambda self, original, updated: self._comprehension(updated)
    )


class _Finder:
    """The lists of objects a function makes: name -> (class, the items' calls)."""

    def __init__(self, source: sources.FunctionSource):
        self.source = source
        self.bound = bindings(source.node)

    def _class(self, node):
        if isinstance(node, cst.Name) and node.value not in self.bound:
            cls = self.source.env.get(node.value)
            return cls if _plain_class(cls) else None
        return None

    def items(self, value) -> list | None:
        """The constructor calls making a list's items (one class), else None."""
        if isinstance(value, cst.ListComp):
            calls = [value.elt]
        elif isinstance(value, cst.List) and value.elements:
            calls = [el.value for el in value.elements]
            if any(isinstance(el, cst.StarredElement) for el in value.elements):
                return None
        else:
            return None
        if not all(isinstance(c, cst.Call) for c in calls):
            return None
        classes = {self._class(c.func) for c in calls}
        if len(classes) != 1 or None in classes:
            return None
        return calls

    def found(self) -> dict:
        out = {}
        for node in iter_nodes(self.source.node):
            if named_value(node) is None:
                continue
            name = node.targets[0].target.value
            calls = self.items(node.value)
            if calls is None or self.bound[name] != 1 or not self._only_iterated(name):
                continue
            out[name] = (self._class(calls[0].func), node)
        return out

    def _only_iterated(self, name: str) -> bool:
        """Whether ``name`` is read only as a loop's or a comprehension's iterable (whole, a slice of it,
        ``reversed``), by ``len``, or by an item's members (``layers[-1](x)``, ``layers[0].W``).
        """
        reads = sum(
            1
            for n in iter_nodes(self.source.node)
            if isinstance(n, cst.Name) and n.value == name
        )
        allowed = 1  # its assignment
        for n in iter_nodes(self.source.node):
            if isinstance(n, (cst.For, cst.CompFor)):
                allowed += _iterated(n.iter) == name
            elif isinstance(n, (cst.Call, cst.Attribute)):
                obj = n.func if isinstance(n, cst.Call) else n.value
                if isinstance(n, cst.Call) and isinstance(obj, cst.Attribute):
                    continue  # (``layers[0].method(x)``: counted as the attribute)
                allowed += _indexed(obj) == name
            if (
                isinstance(n, cst.Call)
                and isinstance(n.func, cst.Name)
                and n.func.value == "len"
                and len(n.args) == 1
                and isinstance(n.args[0].value, cst.Name)
                and n.args[0].value.value == name
            ):
                allowed += 1
        return reads == allowed


def _members_read(source) -> set:
    """Every attribute name the function reads (what a loop over a list may read of its items), and
    ``__call__``."""
    return {
        n.attr.value for n in iter_nodes(source.node) if isinstance(n, cst.Attribute)
    } | {"__call__"}


class _Made:
    """The local functions standing for a class: its constructor and the methods the loops reach."""

    def __init__(self, source, namer, like, lent):
        self.source, self.namer, self.like = source, namer, like
        self.lent = lent  # names of another module the methods read (``globals_agree``)

    def kind(self, cls) -> tuple[_Kind, list] | None:
        fields = _Objects._fields(cls)
        if fields is None:
            return None
        methods = _methods(cls)
        reached = _reached(cls, _members_read(self.source) & set(methods))
        if reached is None or any(_attribute_writes(methods[m]) for m in reached):
            return None
        functions = {"__new__": self.namer.fresh(f"{cls.__name__}_new")}
        for m in reached:
            stem = "call" if m == "__call__" else m
            functions[m] = self.namer.fresh(f"{cls.__name__}_{stem}")
        kind = _Kind(cls, fields, functions, _properties(cls))
        defs = [self.constructor(kind)]
        defs += [self.method(kind, m, methods[m]) for m in reached]
        if any(d is None for d in defs):
            return None
        return kind, defs

    def _read(self, fn):
        try:
            made = sources.load(fn)
        except Exception:  # no source to read
            return None
        bound = bindings(self.source.node)
        if not isinstance(made.node, cst.FunctionDef) or not globals_agree(
            made, self.source.env, bound, lent=self.lent
        ):
            return None
        return made

    def _self_names(self, kind) -> dict:
        return {f: f"self_{f}" for f in kind.fields}

    def _params(self, kind) -> list:
        return [cst.Param(cst.Name(n)) for n in self._self_names(kind).values()]

    def constructor(self, kind):
        """``def Cls_new(<__init__'s parameters>)``: its assignments, returning the attributes' tuple."""
        names = self._self_names(kind)
        returned = cst.Tuple([cst.Element(cst.Name(names[f])) for f in kind.fields])
        if _is_record(kind.cls):
            try:
                signature = inspect.signature(kind.cls)
            except (TypeError, ValueError):
                return None
            params = []
            for p in signature.parameters.values():
                if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                    return None
                if p.default is p.empty:
                    params.append(cst.Param(cst.Name(p.name)))
                elif type(p.default) in (int, float, bool, str, type(None)):
                    params.append(
                        cst.Param(cst.Name(p.name), default=literal(p.default))
                    )
                else:
                    return None
            returned = cst.Tuple([cst.Element(cst.Name(f)) for f in kind.fields])
            body = [cst.SimpleStatementLine([cst.Return(returned)])]
            node = cst.FunctionDef(
                cst.Name(kind.functions["__new__"]),
                cst.Parameters(params),
                cst.IndentedBlock(body),
            )
            return place(node, self.like, self.source.file.positions)
        init = _init(kind.cls)
        if init is None:
            node = cst.FunctionDef(
                cst.Name(kind.functions["__new__"]),
                cst.Parameters([]),
                cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(returned)])]),
            )
            return place(node, self.like, self.source.file.positions)
        made = self._read(init)
        if made is None:
            return None
        node = made.node
        me = node.params.params[0].name.value
        reads = _SelfReads(
            me, names, kind, moved_from(made.file, self.source.file, self.like)
        )
        body = node.body
        if any(_base_init(s, me, kind.cls, init) for s in body.body):
            # ``super().__init__(scale)``: the assignments of the bases' ``__init__``s written in
            body = self._assignments(kind.cls, init, me, body)
            if body is None:
                return None
        body = rewrite(body, reads)
        if reads.failed or _still_read(body, me):
            return None
        lines = [s for s in body.body if not is_docstring(s)]
        lines.append(cst.SimpleStatementLine([cst.Return(returned)]))
        params = node.params.with_changes(params=node.params.params[1:])
        new = node.with_changes(
            name=cst.Name(kind.functions["__new__"]),
            params=params,
            body=body.with_changes(body=lines),
            decorators=(),
        )
        return place(new, self.like, self.source.file.positions)

    def _assignments(self, cls, init, me: str, body):
        """``body`` as the lines ``self.attribute = expression`` its ``__init__`` and the bases' it calls
        assign (``object_init.init_assignments``), else None."""
        assigned = init_assignments(init, cls)
        if assigned is None:
            return None
        lines = []
        for attrs, value in assigned:
            parts = [
                cst.Attribute(cst.Name(me), cst.Name(a))
                for a in (attrs if isinstance(attrs, tuple) else (attrs,))
            ]
            target = (
                parts[0]
                if len(parts) == 1
                else cst.Tuple([cst.Element(p) for p in parts])
            )
            line = cst.SimpleStatementLine(
                [cst.Assign([cst.AssignTarget(target)], value)]
            )
            lines.append(place(line, self.like, self.source.file.positions))
        return body.with_changes(body=lines)

    def method(self, kind, name, fn):
        """``def Cls_method(self_<field>..., <the method's parameters>)``."""
        made = self._read(fn)
        if made is None:
            return None
        node = made.node
        decorators = [
            cst.Module([]).code_for_node(d.decorator) for d in node.decorators
        ]
        if decorators not in ([], ["property"]) or not node.params.params:
            return None
        me = node.params.params[0].name.value
        names = self._self_names(kind)
        reads = _SelfReads(
            me, names, kind, moved_from(made.file, self.source.file, self.like)
        )
        body = rewrite(node.body, reads)
        if reads.failed or _still_read(body, me):
            return None
        params = node.params.with_changes(
            params=[*self._params(kind), *node.params.params[1:]]
        )
        new = node.with_changes(
            name=cst.Name(kind.functions[name]), params=params, body=body, decorators=()
        )
        return place(new, self.like, self.source.file.positions)


class _SelfReads(Moving, _Members):
    """A method's ``self.attribute`` and ``self.method(...)`` (its nodes placed by ``moved``)."""

    def __init__(self, me, names, kind, moved):
        _Members.__init__(self, me, names, kind)
        self.moved = moved

    def leave_Assign(self, original, updated):
        # ``__init__``'s ``self.W = W``: the attribute's name bound
        targets = []
        for t in updated.targets:
            if isinstance(t.target, cst.Attribute) and self._is_obj(t.target.value):
                name = self.names.get(t.target.attr.value)
                if name is None:
                    self.failed = True
                    return updated
                t = t.with_changes(target=cst.Name(name))
            targets.append(t)
        return updated.with_changes(targets=targets)


def desugar(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with its lists of objects (see the module) written as lists of tuples."""
    body = function_body(source)
    if body is None:
        return source
    found = _Finder(source).found()
    if not found:
        return source
    namer = namer_of(source)
    kinds, defs, lent = {}, [], {}
    for name, (cls, assign) in found.items():
        made = _Made(source, namer, assign, lent).kind(cls)
        if made is not None:
            kinds[name], new_defs = made
            defs += new_defs
    while kinds:
        lists = _Lists(kinds, namer, source.file.positions)
        new = [rewrite(s, lists) for s in body]
        if not lists.refused():
            break
        for name in lists.refused():  # read otherwise: it stays as it is (its error)
            kinds.pop(name)
    if not kinds:
        return source
    new = [rewrite(s, _Items(kinds, source.file.positions)) for s in new]
    defs = [d for name, kind in kinds.items() for d in _defs_of(kind, defs)]
    first = 1 if new and is_docstring(new[0]) else 0
    written = with_body(source, [*new[:first], *defs, *new[first:]])
    return dataclasses.replace(written, env={**lent, **source.env})


def _defs_of(kind, defs) -> list:
    names = set(kind.functions.values())
    return [d for d in defs if d.name.value in names]


class _Items(PositionKeeping):
    """Each list's items: ``Cls(args)`` calls of its constructor's local function."""

    def __init__(self, kinds, positions):
        super().__init__(positions)
        self.kinds = kinds

    def leave_Assign(self, original, updated):
        target = updated.targets[0].target if len(updated.targets) == 1 else None
        if not isinstance(target, cst.Name) or target.value not in self.kinds:
            return updated
        new = cst.Name(self.kinds[target.value].functions["__new__"])
        value = updated.value
        if isinstance(value, cst.ListComp):
            value = value.with_changes(elt=value.elt.with_changes(func=new))
        else:
            value = value.with_changes(
                elements=[
                    el.with_changes(value=el.value.with_changes(func=new))
                    for el in value.elements
                ]
            )
        return updated.with_changes(value=value)
