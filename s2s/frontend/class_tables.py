"""Items of module-level tables of your classes at keys known when s2s reads the code, read as the classes.

``activation_functions = {"relu": ReLU, "sigmoid": Sigmoid}`` then, in a layer's ``__init__``,
``self.activation_func = activation_functions[name]()`` (ML-From-Scratch's layers): once the object
is written in the function (``local_objects``), ``name`` is a name bound once to the string the
constructor was given, so the item is a class s2s knows when it reads the code. ``read(source)``
writes it by the class's module-level name, ``Sigmoid()``, an object of the program that
``local_objects`` then writes as names in its next round.

Guarantee: ``TABLE[key]``, ``TABLE`` a module-level dict, list or tuple (a name the function does not
bind), ``key`` a string or int literal or a name the function binds once, at its own level, to one,
and ``TABLE[key]`` a plain class of the program that a module-level name holds, is that name. Any
other subscript stays as it is.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import literal_key, rewrite
from .class_members import _plain_class
from .rewriting import (
    PositionKeeping,
    bindings,
    function_body,
    object_of,
    own_constants,
    place,
    referenced_objects,
    with_body,
)
from .source import FunctionSource


class _Items(PositionKeeping):
    def __init__(self, source: FunctionSource, keys: dict, bound):
        super().__init__(source.file.positions)
        self.source, self.keys, self.bound = source, keys, bound
        self.changed = False

    def leave_Subscript(self, original, updated):
        if len(updated.slice) != 1 or not isinstance(updated.slice[0].slice, cst.Index):
            return updated
        table = object_of(updated.value, self.source.env, self.bound)
        if type(table) not in (dict, list, tuple):
            return updated
        index = updated.slice[0].slice.value
        key = self.keys.get(index.value) if isinstance(index, cst.Name) else None
        key = literal_key(index) if key is None else key
        try:
            item = table[key]
        except (KeyError, IndexError, TypeError):
            return updated  # (Python's own error where the code runs)
        name = self._name_of(item)
        if name is None:
            return updated
        self.changed = True
        return place(cst.Name(name), original, self.positions)

    def _name_of(self, item) -> str | None:
        if not _plain_class(item):
            return None
        return next(
            (
                n
                for n, v in self.source.env.items()
                if v is item and n not in self.bound and n.isidentifier()
            ),
            None,
        )


def read(source: FunctionSource) -> FunctionSource:
    """``source`` with its items of tables of classes at known keys written as the classes (see the module)."""
    body = function_body(source)
    if body is None or not any(map(holds_classes, referenced_objects(source).values())):
        return source
    counts = bindings(source.node)
    items = _Items(source, own_constants(source), counts)
    statements = [rewrite(s, items) for s in body]
    return with_body(source, statements) if items.changed else source


def holds_classes(table, only: bool = False) -> bool:
    """A module-level dict, list or tuple holding a class of the program (``only``: nothing else)."""
    if type(table) not in (dict, list, tuple) or not table:
        return False
    items = table.values() if type(table) is dict else table
    return (all if only else any)(map(_plain_class, items))
