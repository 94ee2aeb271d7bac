"""What a class of the program holds, read when the code is (for ``local_objects`` and its kin).

Guarantees: ``_plain_class`` says whether objects of a class can be written as names (a class of the
program, a record, or a class whose bases are plain classes of the program); ``_members`` looks names
up as Python does (the nearest definition wins); ``_methods``, ``_properties``, ``_class_attributes``
and ``_init`` split those members into methods (static ones as their functions, read-only properties
as their getters), properties, values every object shares (``eps = 1e-5``) and the ``__init__`` that
runs; ``_with_made_defaults`` gives a dataclass's ``default_factory`` fields a default that stands for
the factory; ``_attribute_writes`` and ``_assigned_attributes`` read which attributes code assigns;
``_reached`` orders the methods calls reach. Nothing here rewrites code.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect

import libcst as cst

from ..cstutil import iter_nodes
from . import source as sources
from .spellings import is_library


def _plain_class(cls) -> bool:
    """A class of the program: a record, or a class whose bases are plain classes of the program too."""
    if not _of_program(cls):
        return False
    if _is_record(cls):
        return True
    return all(
        _of_program(base)
        and not _is_record(base)
        and type(base)
        in (type, abc.ABCMeta)  # (an abstract base's methods: overridden)
        for base in _bases(cls)
    )


def _of_program(cls) -> bool:
    return (
        isinstance(cls, type) and not is_library(cls) and cls.__module__ != "builtins"
    )


def _bases(cls) -> tuple:
    """The classes ``cls`` inherits from, nearest first, without ``object`` (and ``abc.ABC``)."""
    return tuple(c for c in cls.__mro__[1:] if c not in (object, abc.ABC))


def _members(cls) -> dict:
    """What ``cls`` and its bases define, as Python looks it up (the nearest definition wins)."""
    found = {}
    for c in reversed((cls, *_bases(cls))):
        found.update(vars(c))
    return found


def _is_record(cls) -> bool:
    """A ``NamedTuple``, or a dataclass of its fields alone (a ``__post_init__`` computes more)."""
    return (issubclass(cls, tuple) and hasattr(cls, "_fields")) or (
        dataclasses.is_dataclass(cls)
        and cls.__bases__ == (object,)
        and not hasattr(cls, "__post_init__")
    )


def _methods(cls) -> dict:
    """The class's methods (its bases' too, and ``__call__``), static methods (their functions) and
    read-only properties (their getters)."""
    return {
        k: v.fget if isinstance(v, property) else _function_of(v)
        for k, v in _members(cls).items()
        if (inspect.isfunction(v) and (not k.startswith("__") or k == "__call__"))
        or (isinstance(v, property) and v.fset is None and inspect.isfunction(v.fget))
        or (isinstance(v, staticmethod) and inspect.isfunction(v.__func__))
    }


@dataclasses.dataclass(frozen=True)
class _MadeDefault:
    """A dataclass field's ``default_factory``, standing for its default in the signature."""

    factory: object


def _with_made_defaults(cls, signature: inspect.Signature) -> inspect.Signature:
    """A dataclass's signature with each ``field(default_factory=f)`` default a ``_MadeDefault(f)``."""
    if not dataclasses.is_dataclass(cls):
        return signature
    factories = {
        f.name: f.default_factory
        for f in dataclasses.fields(cls)
        if f.default_factory is not dataclasses.MISSING
    }
    return signature.replace(
        parameters=[
            (
                p.replace(default=_MadeDefault(factories[p.name]))
                if p.name in factories
                else p
            )
            for p in signature.parameters.values()
        ]
    )


def _function_of(member):
    return member.__func__ if isinstance(member, staticmethod) else member


def _properties(cls) -> set:
    return {k for k, v in _members(cls).items() if isinstance(v, property)}


def _init(cls):
    """The ``__init__`` ``cls`` runs (its own, or its nearest base's), or None."""
    init = _members(cls).get("__init__")
    return init if inspect.isfunction(init) else None


def method_node(fn) -> cst.FunctionDef | None:
    """The ``def`` of a method with a first parameter (``self``), else None (no readable source)."""
    try:
        node = sources.load(fn).node
    except Exception:  # no source to read
        return None
    if not isinstance(node, cst.FunctionDef) or not node.params.params:
        return None
    return node


def _attribute_writes(fn) -> list[str] | None:
    """The attributes a method assigns (``self.output = ...``), in order; None without readable source."""
    node = method_node(fn)
    if node is None:
        return None
    if any(_decorator(d) == "staticmethod" for d in node.decorators):
        return []  # no ``self``
    return _assigned_attributes(node.body, node.params.params[0].name.value)


def _decorator(decorator: cst.Decorator) -> str:
    return cst.Module([]).code_for_node(decorator.decorator)


def _class_attributes(cls) -> set:
    """The attributes ``cls`` (or a base) defines that are values, not methods, properties or
    descriptors (``eps = 1e-5``, ``default_link = Log``): the same for every object of the class.
    """
    return {
        k
        for k, v in _members(cls).items()
        if not k.startswith("__")
        and not inspect.isfunction(v)
        and not isinstance(v, (property, classmethod))
        and not (isinstance(v, staticmethod) and inspect.isfunction(v.__func__))
        and (not hasattr(type(v), "__get__") or isinstance(v, staticmethod))
    }


def _assigned_attributes(node, name: str) -> list[str]:
    """The attributes of ``name`` that ``node`` assigns (``kf.F = ...``, ``kf.R *= 2``, a loop's target;
    not ``kf.H[0, 0] = 1``, which writes into the array the attribute holds), in order.
    """
    found = []
    for n in iter_nodes(node):
        if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.For)):
            for t in _target_parts(n.target):
                if (
                    isinstance(t, cst.Attribute)
                    and isinstance(t.value, cst.Name)
                    and t.value.value == name
                    and t.attr.value not in found
                ):
                    found.append(t.attr.value)
    return found


def _target_parts(target) -> list:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [p for e in target.elements for p in _target_parts(e.value)]
    return [target]


def _reached(cls, used) -> list | None:
    """The methods ``used`` calls reach, those they call through ``self`` too, each after the ones it calls
    (a local function is defined before the ones calling it)."""
    methods = _methods(cls)
    order, seen = [], set()

    def visit(m):
        if m in seen:
            return
        seen.add(m)
        for n in methods[m].__code__.co_names:
            if n in methods:
                visit(n)
        order.append(m)

    for m in sorted(used):
        if m in methods:
            visit(m)
    return order
