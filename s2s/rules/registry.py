"""The op table: one entry per canonical op, registered by family.

A rule is an ordinary, runnable Python function written with NumPy imported as
``xp`` (and the runtime as ``rt``). The compiler reads its source once as a
template and renames its parameters into the program's variables, so emitted
code reads like hand-written NumPy. Rule files never touch libcst.

Vocabulary of a rule's parameters: the op's own parameters (NumPy's names and
defaults, in NumPy's order), then, keyword-only after ``*``, ``ans`` for the
op's output and ``g`` for the incoming cotangent, where the body uses them::

    @elementwise
    def tanh(x, *, ans):
        return 1 - ans**2

Families:

- ``elementwise``: the body returns the partial derivative of ``ans`` with
  respect to each leading parameter (a tuple when several; ``None`` where no
  derivative flows). Reverse mode is ``unbroadcast(g * partial, arg)``.
- ``linear``: the op is linear in its leading parameters; the body returns the
  transpose applied to ``g`` (one entry per leading parameter, ``None`` where
  no derivative flows). Forward mode applies the op itself to the tangent.
- ``multilinear``: the op is linear in each leading parameter separately
  (a product: ``matmul``, ``einsum``); the body returns the transpose for each
  one, as ``vjp`` does. Forward mode sums the op applied with one parameter at
  a time replaced by its tangent.
- ``vjp``: explicit reverse rule, the body returns the cotangent of each
  leading parameter (``None`` where none flows). Its forward rule is
  registered next to it with ``@jvp``: the body returns one tangent term per
  leading parameter, written with ``<param>_dot`` (the terms of the
  parameters that carry tangents are summed).
- ``nondiff``: outputs carry no derivative (comparisons, integer-valued ops,
  constructors, shapes); registered by name with a reason.
- ``decompose``: the op is defined by other ops; its body (any number of
  statements ending in ``return``) is inlined before differentiation.

"Leading parameters" are the first k parameters of the signature, where k is
the length of the returned tuple (1 for a single expression). A returned
tuple, parenthesized or not, always means one entry per parameter. Rule
bodies (other than ``decompose``) are assignments followed by one ``return``;
the assignments are emitted, under fresh names, before the cotangents that
use them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, replace

RULE_VOCABULARY = ("ans", "g")
FAMILIES = ("elementwise", "linear", "multilinear", "vjp", "nondiff", "decompose")


@dataclass(frozen=True)
class Op:
    """One canonical op: its name (as spelled under ``xp.``), family and rule."""

    name: str
    family: str
    rule: Callable | None = None
    params: tuple[str, ...] = ()
    defaults: dict = field(default_factory=dict)
    reason: str = ""
    jvp: Callable | None = None  # the explicit forward rule of a ``vjp``-family op

    @property
    def signature(self) -> inspect.Signature | None:
        """The op's own signature (rule vocabulary removed), for binding call arguments."""
        if self.rule is None:
            return None
        sig = inspect.signature(self.rule)
        kept = [p for name, p in sig.parameters.items() if name not in RULE_VOCABULARY]
        return sig.replace(parameters=kept)


OPS: dict[str, Op] = {}
# ``rt.<name>`` functions that generated code calls (element writes, loop inputs)
RUNTIME_OPS: dict[str, Op] = {}


def op_named(name: str) -> Op | None:
    """The op ``name`` (``tanh``, ``linalg.norm``) or runtime function ``rt.<name>``, if registered."""
    return RUNTIME_OPS.get(name) if name.startswith("rt.") else OPS.get(name)


def _table(name: str) -> dict:
    return RUNTIME_OPS if name.startswith("rt.") else OPS


def _register(fn: Callable, family: str, name: str | None = None) -> Callable:
    name = name or fn.__name__.rstrip("_")
    if name in _table(name):
        raise ValueError(f"op {name!r} registered twice")
    sig = inspect.signature(fn)
    params = tuple(p for p in sig.parameters if p not in RULE_VOCABULARY)
    defaults = {
        p.name: p.default
        for p in sig.parameters.values()
        if p.default is not inspect.Parameter.empty and p.name not in RULE_VOCABULARY
    }
    _table(name)[name] = Op(name, family, fn, params, defaults)
    return fn


def _family(family: str):
    def decorator(fn=None, *, name: str | None = None):
        if fn is None:
            return lambda f: _register(f, family, name)
        return _register(fn, family, name)

    decorator.__name__ = family
    decorator.__doc__ = f"Register a rule of the {family!r} family (name: the function's, or ``name=``)."
    return decorator


elementwise = _family("elementwise")
linear = _family("linear")
multilinear = _family("multilinear")
vjp = _family("vjp")
decompose = _family("decompose")


def jvp(fn=None, *, name: str | None = None):
    """Register the forward rule of a ``vjp``-family op registered before (name: the function's, or ``name=``).

    Its parameters are the op's, then keyword-only ``ans`` and ``<param>_dot``
    for the leading parameters; it returns one tangent term per leading parameter.
    """
    if fn is None:
        return lambda f: jvp(f, name=name)
    key = name or fn.__name__.rstrip("_")
    op = _table(key).get(key)
    if op is None or op.family != "vjp":
        raise ValueError(f"@jvp for {key!r}: register its reverse rule with @vjp first")
    if op.jvp is not None:
        raise ValueError(f"op {key!r} has two forward rules")
    _table(key)[key] = replace(op, jvp=fn)
    return fn


def tangent_name(param: str) -> str:
    """The rule vocabulary's name for a parameter's tangent: ``x`` -> ``x_dot``."""
    return f"{param}_dot"


def nondiff(reason: str, *names: str) -> None:
    """Register ops whose outputs carry no derivative, with the reason why."""
    for name in names:
        if name in _table(name):
            raise ValueError(f"op {name!r} registered twice")
        _table(name)[name] = Op(name, "nondiff", reason=reason)


# Other spellings of canonical ops, for the resolver: alias -> canonical name.
# NumPy 2: absolute, pow, concat, asin, acos, atan, atan2, asinh, acosh, atanh,
# permute_dims, true_divide and mod are the very objects of their canonical op
# (np.abs.__name__ is "absolute": identify by identity, not by __name__);
# amax, amin, around, fabs and fix are distinct functions. In jax.numpy every
# alias is a distinct function (and jax.numpy has no fix).
ALIASES = {
    "amax": "max",
    "amin": "min",
    "absolute": "abs",
    "fabs": "abs",
    "pow": "power",
    "concat": "concatenate",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "atan2": "arctan2",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "around": "round",
    "fix": "trunc",
    "permute_dims": "transpose",
    "true_divide": "divide",
    "mod": "remainder",
}


# Ops whose result is a list of arrays (their cotangent is a list too).
LIST_OUTPUTS = frozenset(
    {
        "split",
        "array_split",
        "hsplit",
        "vsplit",
        "dsplit",
        "unstack",
        "broadcast_arrays",
        "meshgrid",
    }
)
