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
  attached to it with ``@jvp(<the vjp function>)``: the body returns one
  tangent term per leading parameter, written with ``<param>_dot`` (the
  terms of the parameters that carry tangents are summed).
- ``nondiff``: outputs carry no derivative (comparisons, integer-valued ops,
  constructors, shapes); registered by name with a reason.
- ``decompose``: the op is defined by other ops; its body (assignments,
  ``if`` on constant parameters, ``for`` over an array's items, ending in
  ``return``) is inlined before differentiation, its loops as ``scan``s.
- ``no_derivative``: no rule at all (JAX has none either): on the
  differentiated path, an error naming the op, never a zero.

Rules are stored per mode (``Op.rules``: ``forward``, ``reverse``), each
naming the family that derives it; registrars fill them. Parameters have
roles (``Op.roles``: data, index, axis, shape, static), which say how a transform
treats an argument without knowing the op.

"Leading parameters" are the first k parameters of the signature, where k is
the length of the returned tuple (1 for a single expression). A returned
tuple, parenthesized or not, always means one entry per parameter. Rule
bodies (other than ``decompose``) are assignments followed by one ``return``;
the assignments are emitted, under fresh names, before the cotangents that
use them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

RULE_VOCABULARY = ("ans", "g", "batched", "batch_size")
FAMILIES = (
    "elementwise",
    "linear",
    "multilinear",
    "vjp",
    "nondiff",
    "decompose",
    "no_derivative",
)
DERIVATIVES = ("forward", "reverse")
MODES = (*DERIVATIVES, "batch")
ROLES = ("data", "index", "axis", "shape", "static")

# A parameter's role when its op does not declare one: its name says it (NumPy's names), else it is
# data if a rule entry differentiates it, static otherwise (a flag, an order, a dtype, a count).
_ROLE_BY_NAME = {
    **dict.fromkeys(
        ("axis", "axes", "axis1", "axis2", "source", "destination"), "axis"
    ),
    **dict.fromkeys(("shape", "newshape"), "shape"),
    "axis_name": "static",  # a collective's named axis (``rt.psum(x, "i")``)
    **dict.fromkeys(("index", "indices"), "index"),
    # operands whose rule entry may be None (no derivative flows) but whose values are arrays: under
    # batching they carry the batch axis like any other (``unbroadcast(value, like)``'s shape reference)
    **dict.fromkeys(("like", "target", "value", "ct", "x1", "x2", "a"), "data"),
}


@dataclass(frozen=True)
class Rule:
    """One mode's rule of one op: the family whose derivation applies, and the function it reads as a template.

    The derivations themselves live with their family (``s2s/transforms/families.py``):
    the same partials give an elementwise op its forward and its reverse rule.
    """

    family: str
    template: Callable | None = None


@dataclass(frozen=True)
class Op:
    """One canonical op: its name (as spelled under ``xp.``), family, parameters and rules per mode."""

    name: str
    family: str
    rule: Callable | None = (
        None  # the family's definition: partials, transpose or reverse rule
    )
    params: tuple[str, ...] = ()
    defaults: dict = field(default_factory=dict)
    reason: str = ""
    roles: Mapping[str, str] = field(
        default_factory=dict
    )  # parameter -> one of ``ROLES``
    rules: Mapping[str, Rule] = field(default_factory=dict)  # mode -> its rule
    like: Callable | None = (
        None  # an op without a rule function: what gives its signature
    )

    @functools.cached_property
    def signature(self) -> inspect.Signature | None:
        """The op's own signature (rule vocabulary removed), for binding call arguments (computed once per op)."""
        if self.rule is None and self.like is None:
            return None
        sig = inspect.signature(self.rule or self.like)
        kept = [p for name, p in sig.parameters.items() if name not in RULE_VOCABULARY]
        return sig.replace(parameters=kept)

    def params_with_role(self, role: str) -> tuple[str, ...]:
        return tuple(p for p in self.params if self.roles.get(p) == role)


OPS: dict[str, Op] = {}
# ``rt.<name>`` functions that generated code calls (element writes, loop inputs)
RUNTIME_OPS: dict[str, Op] = {}
# a registered rule function -> its op's name (``@jvp(max_)`` attaches to the op ``max_`` defined)
_OP_OF_RULE: dict[Callable, str] = {}


def op_named(name: str) -> Op | None:
    """The op ``name`` (``tanh``, ``linalg.norm``) or runtime function ``rt.<name>``, if registered."""
    return RUNTIME_OPS.get(name) if name.startswith("rt.") else OPS.get(name)


def _table(name: str) -> dict:
    return RUNTIME_OPS if name.startswith("rt.") else OPS


def _entries(fn: Callable) -> list[bool]:
    """Per leading parameter, whether the rule's ``return`` has an entry for it (not the literal ``None``)."""
    import ast
    import textwrap

    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
    value = returns[-1].value if returns else None
    items = value.elts if isinstance(value, ast.Tuple) else [value]
    return [not (isinstance(v, ast.Constant) and v.value is None) for v in items]


def _check_roles(params: tuple[str, ...], declared: dict) -> None:
    unknown = set(declared) - set(params)
    if unknown or not set(declared.values()) <= set(ROLES):
        raise ValueError(f"roles {declared!r} do not match the parameters {params!r}")


class _Roles(Mapping):
    """An op's parameter roles, worked out when first read: that parses its rule's source, which importing
    every rule module would otherwise do for hundreds of ops a program never calls."""

    def __init__(self, fn: Callable, params, declared: dict, family: str):
        self._made_from = (fn, params, declared, family)
        self._roles = None

    def _found(self) -> dict:
        if self._roles is None:
            self._roles = _roles(*self._made_from)
        return self._roles

    def __getitem__(self, param):
        return self._found()[param]

    def __iter__(self):
        return iter(self._found())

    def __len__(self):
        return len(self._found())


def _roles(fn: Callable, params: tuple[str, ...], declared: dict, family: str) -> dict:
    entries = _entries(fn) if family != "decompose" else [True]
    roles = {}
    for i, p in enumerate(params):
        default = "data" if i < len(entries) and entries[i] else "static"
        roles[p] = declared.get(p, _ROLE_BY_NAME.get(p, default))
    return roles


# the modes each family's definition serves (``vjp`` gets its forward rule from ``@jvp``)
_MODES_OF_FAMILY = {
    "elementwise": MODES,
    "linear": DERIVATIVES,
    "multilinear": DERIVATIVES,
    "vjp": ("reverse",),
    "decompose": (),
}


def _register(fn: Callable, family: str, name: str | None, roles: dict) -> Callable:
    name = name or fn.__name__.rstrip("_")
    if name in _table(name):
        raise ValueError(f"op {name!r} registered twice")
    sig = inspect.signature(fn)
    params = tuple(p for p in sig.parameters if p not in RULE_VOCABULARY)
    _check_roles(params, roles)
    defaults = {
        p.name: p.default
        for p in sig.parameters.values()
        if p.default is not inspect.Parameter.empty and p.name not in RULE_VOCABULARY
    }
    rules = {mode: Rule(family, fn) for mode in _MODES_OF_FAMILY[family]}
    _table(name)[name] = Op(
        name,
        family,
        fn,
        params,
        defaults,
        roles=_Roles(fn, params, roles, family),
        rules=MappingProxyType(rules),
    )
    _OP_OF_RULE[fn] = name
    return fn


def _family(family: str):
    def registrar(fn=None, *, name: str | None = None, roles: dict | None = None):
        if fn is None:
            return lambda f: _register(f, family, name, roles or {})
        return _register(fn, family, name, roles or {})

    registrar.__name__ = family
    registrar.__doc__ = (
        f"Register an op of the {family!r} family: its rule serves the modes the family derives "
        "(name: the function's, or ``name=``; ``roles=``: parameter roles its names do not say)."
    )
    return registrar


elementwise = _family("elementwise")
linear = _family("linear")
multilinear = _family("multilinear")
vjp = _family("vjp")
decompose = _family("decompose")


def attach(mode: str, family: str, target: Callable | str, fn: Callable) -> Callable:
    """Give the op that ``target`` (its rule function, or its name) registered an explicit ``mode`` rule."""
    key = _OP_OF_RULE.get(target) if callable(target) else target
    op = _table(key).get(key) if key else None
    if op is None:
        raise ValueError(f"{mode} rule {fn.__name__!r}: register its op first")
    if mode in op.rules:
        raise ValueError(f"op {key!r} has two {mode} rules")
    _table(key)[key] = replace(
        op, rules=MappingProxyType({**op.rules, mode: Rule(family, fn)})
    )
    return fn


def jvp(target: Callable | str):
    """Register the forward rule of a ``vjp``-family op: ``@jvp(max_)`` under ``@vjp def max_``.

    Its parameters are the op's, then keyword-only ``ans`` and ``<param>_dot``
    for the leading parameters; it returns one tangent term per leading parameter.
    """
    return lambda fn: attach("forward", "jvp", target, fn)


def batch(family: str, *names: str) -> None:
    """Give ops a batching rule that the batch family ``family`` derives from their roles and rule."""
    for name in names:
        op = _table(name).get(name)
        if op is None:
            raise ValueError(f"batching rule for {name!r}: register the op first")
        if "batch" in op.rules:
            raise ValueError(f"op {name!r} has two batching rules")
        rules = {**op.rules, "batch": Rule(family, op.rule)}
        _table(name)[name] = replace(op, rules=MappingProxyType(rules))


def signature_of(function: Callable, *names: str, roles: dict | None = None) -> None:
    """Ops without a rule function (nondiff ones) bind their calls by ``function``'s signature (NumPy's own,
    or an explicit batching rule's), with roles from the names (or ``roles=``, for those it names).
    """
    sig = inspect.signature(function)
    kept = [p for p in sig.parameters.values() if p.name not in RULE_VOCABULARY]
    params = tuple(p.name for p in kept)
    defaults = {
        p.name: p.default for p in kept if p.default is not inspect.Parameter.empty
    }
    roles = {
        p: (roles or {}).get(p, _ROLE_BY_NAME.get(p, "data" if i == 0 else "static"))
        for i, p in enumerate(params)
    }
    for name in names:
        _table(name)[name] = replace(
            _table(name)[name],
            like=function,
            params=params,
            defaults=defaults,
            roles=MappingProxyType(roles),
        )


def batch_rule(target: Callable | str):
    """Register an explicit batching rule: its parameters are the op's, then keyword-only ``batched`` (a
    tuple of bools, one per data parameter) and ``batch_size``; it returns the batched result.
    """

    def register(fn):
        attach("batch", "explicit", target, fn)
        name = target if isinstance(target, str) else _OP_OF_RULE[target]
        if _table(name)[name].rule is None and _table(name)[name].like is None:
            signature_of(fn, name)
        return fn

    return register


def twin(module: str, *names: str) -> None:
    """Give ops the batching rule of the ``twin`` family: their batched twin ``rt.<module>.<name>`` (the op's
    last name), called with the op's arguments in order and then one batched flag per data operand
    (``rt.batched_vjps.unbroadcast(value, like, batched)``)."""
    for name in names:
        attach("batch", "twin", name, f"rt.{module}.{name.split('.')[-1]}")


def tangent_name(param: str) -> str:
    """The rule vocabulary's name for a parameter's tangent: ``x`` -> ``x_dot``."""
    return f"{param}_dot"


def nondiff(reason: str, *names: str) -> None:
    """Register ops whose outputs carry no derivative, with the reason why."""
    for name in names:
        if name in _table(name):
            raise ValueError(f"op {name!r} registered twice")
        rules = {mode: Rule("nondiff") for mode in DERIVATIVES}
        _table(name)[name] = Op(
            name, "nondiff", reason=reason, rules=MappingProxyType(rules)
        )


def no_derivative(reason: str, function: Callable, *names: str) -> None:
    """Register ops that have no derivative rule at all (JAX has none either): one on the differentiated
    path is a ``MissingRule`` error, never a zero. ``function`` gives their signature; the reason is the
    one the op table shows."""
    for name in names:
        if name in _table(name):
            raise ValueError(f"op {name!r} registered twice")
        _table(name)[name] = Op(name, "no_derivative", reason=reason)
        signature_of(function, name)


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
    "radians": "deg2rad",
    "degrees": "rad2deg",
    "conjugate": "conj",
    # numpy.linalg's array-API spellings of the ops themselves
    "linalg.matmul": "matmul",
    "linalg.outer": "outer",
    "linalg.tensordot": "tensordot",
    "linalg.matrix_transpose": "matrix_transpose",
    "linalg.vecdot": "vecdot",
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
