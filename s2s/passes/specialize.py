"""A decomposition specialized to its constant arguments: ``if`` statements on them are decided.

A ``decompose`` op's body may branch on parameters that select a formula
rather than carry data (``gelu``'s ``approximate``, ``logsumexp``'s
``b is None`` and ``return_sign``). At a call, each parameter such a test
reads is bound to its argument's Python value when the argument is a literal
(or left out: its default); any other argument is an opaque value that is
never ``None``. The output holds only the branches taken, up to the first
``return`` reached; no ``if`` is left. A test that needs an opaque value's
truth or equality raises ``NotConstant`` naming the parameter: the caller
turns it into a located error.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from .. import ir
from ..cstutil import names_in
from .dataflow import writes


@dataclass(frozen=True)
class NotConstant(Exception):
    """A test of the decomposition needs the value of ``param``, which the call does not give as a constant."""

    param: str


@dataclass(frozen=True)
class Opaque:
    """An argument that is not a literal: it is not ``None``; anything else about it is unknown."""

    param: str


class _Unknown:
    """What a test sees for an ``Opaque`` argument: identity works (``is None``); truth, comparisons,
    arithmetic and items raise ``NotConstant``."""

    def __init__(self, param: str):
        self.param = param

    def _needed(self, *_):
        raise NotConstant(self.param)

    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _needed
    __getitem__ = __mod__ = __add__ = __sub__ = __mul__ = __floordiv__ = _needed
    __hash__ = None


def tested(fn: ir.Function) -> frozenset[str]:
    """The parameters of ``fn`` that its ``if`` tests read."""
    params = set(fn.param_names)
    found = set()
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.If):
            found |= names_in(stmt.test) & params
    return frozenset(found)


def constants(params, bindings: dict) -> tuple:
    """``(param, value)`` for each of ``params``: the Python value of its argument (an atom, or the default
    the op binds) if that is a literal (``True``, ``-1``, ``"fast"``, ``None``), else ``Opaque(param)``.
    """
    out = []
    for p in sorted(params):
        node = bindings.get(p)
        if isinstance(node, cst.Tuple):  # ``(c, True)``: each element known or opaque
            value = tuple(_literal(el.value, p) for el in node.elements)
        else:
            value = _literal(node, p)
        out.append((p, value))
    return tuple(out)


def _literal(node, param):
    try:
        value = ast.literal_eval(ir.code(node))
        hash(value)
    except (ValueError, SyntaxError, TypeError, AttributeError):
        return Opaque(param)
    return value


def is_constant(node) -> bool:
    """Whether ``node`` is an immutable literal (``None``, ``True``, ``3``, ``"fast"``, ``(0, 1)``)."""
    return not isinstance(_literal(node, None), Opaque)


def specialize(fn: ir.Function, constants: dict) -> ir.Function:
    """``fn`` with every ``if`` decided by ``constants`` (parameter -> value, ``Opaque`` where unknown)."""
    body, _ = _taken(fn.body, constants, set())
    return fn.with_body(body)


def _taken(body, constants: dict, assigned: set) -> tuple[list, bool]:
    out = []
    for stmt in body:
        if isinstance(stmt, ir.If):
            read = names_in(stmt.test)
            if read & assigned:
                raise ValueError(
                    f"a decomposition tests {sorted(read & assigned)} after assigning it"
                )
            branch = stmt.body if _decide(stmt.test, constants) else stmt.orelse
            inner, returned = _taken(branch, constants, assigned)
            out.extend(inner)
            if returned:
                return out, True
            continue
        out.append(stmt)
        assigned |= writes(stmt)
        if isinstance(stmt, ir.Return):
            return out, True
    return out, False


def _unknown(value):
    if isinstance(value, Opaque):
        return _Unknown(value.param)
    if isinstance(value, tuple):
        return tuple(_unknown(v) for v in value)
    return value


def _decide(test: cst.BaseExpression, constants: dict) -> bool:
    env = {p: _unknown(v) for p, v in constants.items()}
    return bool(eval(ir.code(test), {"__builtins__": {}}, env))
