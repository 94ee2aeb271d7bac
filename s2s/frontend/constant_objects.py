"""Objects of your classes made from constants in the function, made once when s2s reads the code.

``grid = Grid()`` (a dataclass whose ``__post_init__`` computes ``dx`` and the cell centres) then
``solve(u0, grid, nu)``: the object depends on nothing the function computes, so it is what a module-level
``GRID = Grid()`` would be. ``desugar(source)`` makes it when it reads the code and reads the name as
that object (a constant of the function's module namespace), which helpers are bound to and whose
attributes are constants, as for module-level objects (``function_args``).

Guarantee: a line ``name = Cls(args)`` at the function's own level, ``Cls`` a class of the program
(``local_objects``'s plain classes), every argument a literal (numbers, strings, ``None``, tuples of
them), ``name`` bound once and never given an attribute (``name.x = ...``), read whole somewhere (passed
to a function, returned: else ``local_objects`` writes it as names) or a dataclass with a
``__post_init__`` (its fields are what that computes), and no ``__init__`` or
``__post_init__`` of the class or its bases naming a random draw. An object its constructor cannot make
stays as it is (its located error).
"""

from __future__ import annotations

import ast
import dataclasses

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .class_members import _assigned_attributes, _plain_class
from .function_loops import Positioned
from .rewriting import (
    assignment,
    function_body,
    namer_of,
    object_of,
    rebinds,
    referenced_objects,
    with_body,
)
from .source import FunctionSource


def _literal(node):
    try:
        return True, ast.literal_eval(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError, TypeError):
        return False, None


def _draws(cls) -> bool:
    """Whether the constructors of ``cls`` (and its bases) name a random draw."""
    for c in cls.__mro__:
        for member in ("__init__", "__post_init__"):
            code = getattr(vars(c).get(member), "__code__", None)
            if code is not None and any("random" in n for n in code.co_names):
                return True
    return False


def _made(cls, call: cst.Call):
    """The object ``call`` makes, its arguments literals; else None."""
    args, kwargs = [], {}
    for a in call.args:
        ok, value = _literal(a.value)
        if not ok or a.star:
            return None
        if a.keyword is None:
            args.append(value)
        else:
            kwargs[a.keyword.value] = value
    try:
        return cls(*args, **kwargs)
    except (
        Exception
    ):  # its constructor's own error is the one Python gives where it runs
        return None


def _computes_after_init(env, func) -> bool:
    """Whether the class called is a dataclass with a ``__post_init__`` (``total = width * depth``), whose
    fields ``local_objects`` could not write from the call alone."""
    cls = object_of(func, env, set())
    return dataclasses.is_dataclass(cls) and hasattr(cls, "__post_init__")


def _read_whole(node, name: str) -> bool:
    """Whether the function reads ``name`` other than as ``name.attribute`` (besides binding it)."""
    owners = {id(n.value) for n in iter_nodes(node) if isinstance(n, cst.Attribute)}
    names = [
        n
        for n in iter_nodes(node, skip={cst.Attribute: "value"})
        if isinstance(n, cst.Name) and n.value == name
    ]
    return sum(id(n) not in owners for n in names) > 1


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its objects made from constants made once (see the module)."""
    body = function_body(source)
    if body is None or not any(
        _plain_class(obj) for obj in referenced_objects(source).values()
    ):
        return source
    namer = namer_of(source)
    out, mapping, added = [], {}, {}
    for stmt in body:
        assign = assignment(stmt)
        target = None if assign is None else assign.targets[0].target
        if (
            isinstance(target, cst.Name)
            and isinstance(assign.value, cst.Call)
            and rebinds(source.node, target.value) == 1
            and not _assigned_attributes(source.node, target.value)
            and (
                _read_whole(source.node, target.value)
                or _computes_after_init(source.env, assign.value.func)
            )
        ):
            cls = object_of(assign.value.func, source.env, set())
            if _plain_class(cls) and not _draws(cls):
                made = _made(cls, assign.value)
                if made is not None:
                    held = namer.fresh(f"{target.value}_made")
                    added[held] = made
                    mapping[target.value] = cst.Name(held)
                    continue
        out.append(
            rewrite(stmt, Positioned(mapping, source.file.positions))
            if mapping
            else stmt
        )
    if not added:
        return source
    return with_body(source, out, env={**source.env, **added})
