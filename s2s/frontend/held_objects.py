"""Objects of your classes passed in as arguments, read with their methods.

Equinox's way, and that of hand-written JAX modules: ``loss(model, x, y)`` calls ``model(x)``, whose
``__call__`` loops over ``self.layers`` and calls each; ``model`` is a pytree (a registered class or
a dataclass), so the gradient is a model of gradients. s2s reads code, not values, so it cannot know
which class's ``__call__`` ``model(x)`` runs, until a call says so: ``classes_of`` reads, from a
call's arguments, where objects of the program's classes sit (the class of each object, its
attributes, and the objects its attributes hold, in lists, tuples and dicts too). The function is
then transformed once per such layout (``Held``, one object per function and layout, like
``variadic.Specialized``).

``desugar(source)`` writes each parameter holding objects as the object made again from what it
holds, on the function's first line: ``model_object = MLP_fields(layers=[Linear_fields(w=model.layers
[0].w, b=model.layers[0].b), ...], scale=model.scale)``, where ``Linear_fields`` is a record
(``record_of``: a dataclass of the object's attributes, with its class's methods, properties and class
attributes), and reads the parameter's attributes and methods through that name (``model(x)`` is
``model_object(x)``, ``model.scale`` is ``model_object.scale``). ``local_objects`` and
``object_structures`` then write the records as names of the function, each method a local function
(``model_object_call``), as they write objects the function makes; so a method's loop over
``self.layers`` is written out per layer, and each layer's ``__call__`` is its class's.

A parameter given a string, a bool or None that the function tests (``object_layouts``) is that value
on the function's first line (``callback = None``), so that ``static_tests`` reads its tests
(``if callback: callback(x)`` is no line at all).

Guarantee: a parameter bound nowhere else in the function, holding objects of plain classes of the
program (``local_objects``'s; a ``NamedTuple`` only where its class defines methods or properties) whose
attributes the call's value shows, is read
as its record where the function reads an attribute of it or calls it (``model.w``, ``model.f(x)``,
``model(x)``), and, a list, tuple or dict of objects alone, where it reads its items (``layers[i]``, ``for layer
in layers``, ``enumerate(layers)``, ``len(layers)``); read whole (``tree_leaves(model)``), it is the
argument itself. The methods come from
the classes of the program in the object's class's bases, nearest first; a class a library defines
(``equinox.Module``) adds none. What the records cannot be written as stays as it is (its located error).
"""

from __future__ import annotations

import dataclasses
import functools

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from . import source as sources
from .rewriting import (
    PositionKeeping,
    bindings,
    function_body,
    is_docstring,
    namer_of,
    with_body,
)


@functools.lru_cache(maxsize=256)
def record_of(cls, fields: tuple):
    """A dataclass of ``fields`` standing for objects of ``cls``: its methods, properties and class
    attributes those the classes of the program in ``cls``'s bases define (nearest first).
    """
    from .class_members import _of_program
    from .function_args import defined_in_the_program

    namespace = {}
    for base in reversed(cls.__mro__):
        if base is object or not _of_program(base) or not defined_in_the_program(base):
            continue
        for key, value in vars(base).items():
            if key in fields or (key.startswith("__") and key != "__call__"):
                continue
            namespace[key] = value
    record = dataclasses.make_dataclass(
        f"{cls.__name__}_fields", list(fields), namespace=namespace, frozen=True
    )
    # (named as the class: ``type(self).__name__`` in a method reads the class's name)
    record.__module__ = cls.__module__
    record.__name__, record.__qualname__ = cls.__name__, cls.__qualname__
    return record


def _made_again(layout, value: cst.BaseExpression, env: dict) -> cst.BaseExpression:
    """The expression making ``value`` (a read of the parameter) again with records for its objects."""
    if layout is None:
        return value
    kind = layout[0]
    if kind == "constant":
        return _constant(layout[1], env)
    if kind == "object":
        _, cls, attributes = layout
        record = record_of(cls, tuple(a for a, _ in attributes))
        name = f"{cls.__name__}_fields"
        while env.get(name, record) is not record:
            name += "_"
        env[name] = record
        # what the methods read in their module, where the function's does not name it (a class of
        # another module): their local functions are written in this function
        for member in vars(record).values():
            fn = getattr(member, "fget", member)
            for read in _names_read(getattr(fn, "__code__", None)):
                if read in fn.__globals__ and read not in env:
                    env[read] = fn.__globals__[read]
        args = [
            cst.Arg(
                _made_again(inner, cst.Attribute(value, cst.Name(attr)), env),
                keyword=cst.Name(attr),
            )
            for attr, inner in attributes
        ]
        return cst.Call(cst.Name(name), args)
    if kind == "dict":
        return cst.Dict(
            [
                cst.DictElement(
                    cst.SimpleString(repr(key)) if isinstance(key, str) else cst.Integer(str(key)),
                    _made_again(inner, _item(value, key), env),
                )
                for key, inner in layout[1]
            ]
        )  # fmt: skip
    items = [
        cst.Element(_made_again(inner, _item(value, k), env))
        for k, inner in enumerate(layout[1])
    ]
    return cst.List(items) if kind == "list" else cst.Tuple(items)


def _constant(value, env: dict) -> cst.BaseExpression:
    """A string, bool or None as its literal; a function by a name of the environment bound to it."""
    if not callable(value):
        return cst.parse_expression(repr(value))
    stem = getattr(value, "__name__", "function")
    name = stem if stem.isidentifier() else "function"
    while env.get(name, value) is not value:
        name += "_"
    env[name] = value
    return cst.Name(name)


def _names_read(code) -> set:
    """The global names ``code`` and the code nested in it read."""
    if code is None:
        return set()
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names_read(const)
    return names


def _item(value, key) -> cst.Subscript:
    index = (
        cst.SimpleString(repr(key)) if isinstance(key, str) else cst.Integer(str(key))
    )
    return cst.Subscript(value, [cst.SubscriptElement(cst.Index(index))])


class _MemberReads(PositionKeeping):
    """``p.attribute`` and ``p(...)`` of the parameters ``names`` (parameter -> record's name) as the record's."""

    def __init__(self, positions, names: dict, containers: frozenset):
        super().__init__(positions)
        self.names, self.containers = names, containers

    def leave_Attribute(self, original, updated):
        if isinstance(updated.value, cst.Name) and updated.value.value in self.names:
            return updated.with_changes(value=cst.Name(self.names[updated.value.value]))
        return updated

    def leave_Call(self, original, updated):
        func = updated.func
        if isinstance(func, cst.Name) and func.value in self.names:
            return updated.with_changes(func=cst.Name(self.names[func.value]))
        if isinstance(func, cst.Name) and func.value in _ITEM_READERS:
            args = [a.with_changes(value=self._held(a.value)) for a in updated.args]
            return updated.with_changes(args=args)
        return updated

    def leave_Subscript(self, original, updated):
        return updated.with_changes(value=self._held(updated.value))

    def leave_For(self, original, updated):
        return updated.with_changes(iter=self._held(updated.iter))

    def leave_CompFor(self, original, updated):
        return updated.with_changes(iter=self._held(updated.iter))

    def _held(self, node):
        """A read of a parameter as the record standing for it, else ``node``."""
        if isinstance(node, cst.Name) and node.value in self.containers:
            return cst.Name(self.names[node.value])
        return node


# what reads a list, tuple or dict of objects item by item: its items are the records
_ITEM_READERS = frozenset(
    {"enumerate", "zip", "reversed", "len", "list", "tuple", "iter"}
)


def _read_as_object(node, param: str, container: bool) -> bool:
    """Whether ``node`` reads an attribute of ``param`` or calls it, or, a ``container`` of objects, reads
    its items (``param[i]``, ``for layer in param``, ``enumerate(param)``)."""

    def named(n):
        return isinstance(n, cst.Name) and n.value == param

    if isinstance(node, cst.Attribute) or (
        container and isinstance(node, cst.Subscript)
    ):
        return named(node.value)
    if container and isinstance(node, (cst.For, cst.CompFor)):
        return named(node.iter)
    return isinstance(node, cst.Call) and (
        named(node.func)
        or (
            container
            and isinstance(node.func, cst.Name)
            and node.func.value in _ITEM_READERS
            and any(named(a.value) for a in node.args)
        )
    )


_PYTREE_METHODS = frozenset({"tree_flatten", "tree_unflatten"})


def _calls_methods(layout) -> bool:
    """Whether the layout holds an object whose class of the program defines methods (besides a pytree's
    own), which only its record can run."""
    if layout is None or layout[0] == "constant":
        return False
    if layout[0] == "object":
        _, cls, attributes = layout
        record = record_of(cls, tuple(a for a, _ in attributes))
        own = {
            k
            for k, v in vars(record).items()
            if (callable(v) and not k.startswith("__")) or k == "__call__"
        }
        return bool(own - _PYTREE_METHODS) or any(
            _calls_methods(t) for _, t in attributes
        )
    items = layout[1]
    return any(_calls_methods(t[1] if layout[0] == "dict" else t) for t in items)


def _objects_only(layout) -> bool:
    """A list, tuple or dict whose every item is an object (``object_structures`` reads its items)."""
    items = layout[1] if layout[0] != "dict" else [t for _, t in layout[1]]
    return all(t is not None and t[0] == "object" for t in items)


def _keys_are_literals(layout) -> bool:
    """Whether the layout's dict keys are strings and ints (which the record's display spells)."""
    if layout is None or layout[0] == "constant":
        return True
    if layout[0] == "dict":
        return all(
            isinstance(k, (str, int)) and _keys_are_literals(t) for k, t in layout[1]
        )
    if layout[0] == "object":
        return all(_keys_are_literals(t) for _, t in layout[2])
    return all(_keys_are_literals(t) for t in layout[1])


def desugar(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with its parameters holding objects read through their records (see the module)."""
    if not source.held:
        return source
    body = function_body(source)
    if body is None:
        return source
    counts = bindings(source.node)
    namer = namer_of(source)
    env = dict(source.env)
    names, lines, containers = {}, [], set()
    for param, layout in source.held:
        if layout[0] == "constant":  # a string, bool or None the function tests
            line = cst.SimpleStatementLine(
                [
                    cst.Assign(
                        [cst.AssignTarget(cst.Name(param))], _constant(layout[1], env)
                    )
                ]
            )
            if source.node in source.file.positions:
                source.file.positions[line] = source.file.positions[source.node]
            lines.append(line)
            continue
        if counts[param] != 1 or not _keys_are_literals(layout):
            continue  # (rebound: the record would stand for one of its values)
        container = layout[0] != "object"
        if container and not (_objects_only(layout) and _calls_methods(layout)):
            # (objects of data alone: their attributes are read from the argument's items)
            continue
        if not any(
            _read_as_object(n, param, container) for n in iter_nodes(source.node.body)
        ):
            continue
        if container:
            containers.add(param)
        names[param] = namer.fresh(f"{param}_object")
        made = _made_again(layout, cst.Name(param), env)
        line = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(names[param]))], made)]
        )
        if source.node in source.file.positions:
            source.file.positions[line] = source.file.positions[source.node]
        lines.append(line)
    if not lines:
        return source
    reads = _MemberReads(source.file.positions, names, frozenset(containers))
    first = 1 if body and is_docstring(body[0]) else 0
    statements = [*body[:first], *lines, *(rewrite(s, reads) for s in body[first:])]
    return with_body(source, statements, env=env)
