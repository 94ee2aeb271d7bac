"""Canonical op names for the objects user code calls: ``np.sin``, ``jnp.sin``, ``math.sin``, ``from numpy import sin`` are all ``sin``.

The canonical name is the op's spelling under the generated code's ``xp``
namespace (``tanh``, ``linalg.norm``). Objects are recognised by identity, so
any import spelling resolves.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import operator
import types

import libcst as cst
import numpy

from ..freshness import LIBRARIES
from ..rules import OPS
from ..rules.registry import ALIASES

ARRAY_MODULES = ("numpy", "jax.numpy")
# s_: an index (generated code writes them)
CONSTANTS = {
    "pi",
    "e",
    "inf",
    "nan",
    "euler_gamma",
    "newaxis",
    "s_",
}
DTYPES = {
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "uint32", "bool_", "complex64", "complex128",
}  # fmt: skip
MATH_ALIASES = {"fabs": "abs", "pow": "power", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
                "atan2": "arctan2", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh"}  # fmt: skip
BUILTIN_OPS = {
    builtins.abs: "abs", builtins.pow: "power", builtins.round: "round",
    # ``functools.reduce(operator.mul, xs)``, ``tree_reduce(operator.add, sq)``
    operator.add: "add", operator.sub: "subtract", operator.mul: "multiply",
    operator.truediv: "divide", operator.pow: "power", operator.neg: "negative",
    operator.matmul: "matmul", operator.abs: "abs",
}  # fmt: skip
STATIC_BUILTINS = {
    "len",
    "int",
    "float",
    "bool",
    "tuple",
    "list",
    "dict",
    "range",
    "slice",
    "isinstance",
    "callable",
    # ``hasattr(a, "toarray")`` (scikit-learn's sparse checks): an array's type, known when traced
    "hasattr",
    # over lists built in the function, or of values (``passes/collected.py`` computes them)
    "sum",
    "max",
    "min",
    "any",
    "all",
    # of values known when the code is traced (``frontend/strings.py``): dict keys such as "W" + str(l)
    "str",
    "format",
    "repr",
}


def _modules():
    mods = [numpy]
    try:
        import jax.numpy as jnp

        mods.append(jnp)
    except ImportError:  # pragma: no cover - the numpy backend runs without JAX
        pass
    return mods


def _lookup(module, dotted: str):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


@functools.lru_cache(maxsize=1)
def _table() -> dict[int, tuple[str, object]]:
    table = {}
    names = {name: name for name in OPS} | dict(ALIASES)
    for spelling, canonical in names.items():
        for module in _modules():
            obj = _lookup(module, spelling)
            if obj is not None and not isinstance(obj, (int, float, type(None))):
                table.setdefault(id(obj), (canonical, obj))
    for spelling in dir(math):
        obj = getattr(math, spelling)
        canonical = MATH_ALIASES.get(spelling, spelling)
        if callable(obj) and canonical in OPS:
            table.setdefault(id(obj), (canonical, obj))
    for obj, canonical in BUILTIN_OPS.items():
        table[id(obj)] = (canonical, obj)
    return table


def is_array_module(obj) -> bool:
    return isinstance(obj, types.ModuleType) and (
        obj.__name__ in ("math",) or obj.__name__.split(".")[0] in ("numpy", "jax")
    )


def canonical_op(obj, path: tuple[str, ...] = ()) -> str | None:
    """The canonical op name of a callable from NumPy, jax.numpy or math, else None.

    Ops with rules are found by identity. Another array-module function (no rule
    yet: it may run off the differentiated path) is named by its spelling under
    the generated code's ``xp``, which must exist in NumPy *and* jax.numpy, one
    of them being ``obj`` itself (``np.fft.fft`` is ``fft.fft``); ``path`` is the
    attribute chain it was reached by. ``jax.lax.fori_loop``, ``np.random.normal``
    and the like have no such spelling: None.
    """
    hit = _table().get(id(obj))
    if hit is not None and hit[1] is obj:
        return hit[0]
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] not in ("numpy", "jax") or not callable(obj):
        return None
    sub = module.split(".")[1:] if module.startswith("numpy") else module.split(".")[2:]
    sub = [s for s in sub if not s.startswith("_")]
    candidates = [".".join(path[i:]) for i in range(len(path))] + [
        ".".join([*sub, getattr(obj, "__name__", "")])
    ]
    for name in candidates:
        found = [_lookup(m, name) for m in _modules()]
        if (
            len(found) == len(ARRAY_MODULES)
            and all(callable(f) for f in found)
            and any(f is obj for f in found)
        ):
            return name
    return None


def is_library(obj) -> bool:
    """Objects of NumPy, JAX, SciPy and the like, which s2s reads as ops or not at all (never as source)."""
    module = (
        getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "") or ""
    )
    return module.split(".")[0] in LIBRARIES


def scalar_type(obj) -> str | None:
    """The name of a NumPy or JAX scalar type (``np.float64``, ``jnp.int32``) under ``xp``, else None."""
    name = getattr(obj, "__name__", None)
    if name not in DTYPES:
        return None
    for module in _modules():
        if getattr(module, name, None) is obj:
            return name
    return None


def constant_spelling(module, attr: str) -> str | None:
    """``xp.pi`` for ``np.pi`` / ``math.pi``; ``None`` for ``np.newaxis``; dtypes as ``xp.float32``."""
    if attr == "newaxis":
        return "None"
    if attr in CONSTANTS or attr in DTYPES:
        return f"xp.{attr}"
    if module is math and attr == "tau":
        return "2 * xp.pi"
    return None


# bounds passed by keyword, as NumPy 2 and JAX name them (``np.clip(x, min=0)``, ``np.clip(x, a_max=1)``):
# the positions every version of both takes, a missing bound None
BOUND_KEYWORDS = {"clip": {"a_min": 1, "a_max": 2, "min": 1, "max": 2}}


def _bounds_by_position(op: str, args: list) -> list:
    slots = BOUND_KEYWORDS.get(op, {})
    keyed = [a for a in args if a.keyword is not None and a.keyword.value in slots]
    positional = [a for a in args if a.keyword is None]
    if not keyed or len(positional) != 1:
        return args
    placed = [positional[0], cst.Arg(cst.Name("None")), cst.Arg(cst.Name("None"))]
    for a in keyed:
        placed[slots[a.keyword.value]] = a.with_changes(
            keyword=None, equal=cst.MaybeSentinel.DEFAULT
        )
    return placed + [a for a in args if a.keyword is not None and a not in keyed]


def portable_arguments(op: str, args: list) -> list:
    """``args`` of a call to ``xp.<op>`` that run under NumPy and jax.numpy alike: a keyword one of them does
    not take (``np.clip(x, a_min=0)``: jax.numpy's is ``min``) becomes positional where both put that
    parameter at the same place and the arguments before it are given. Others are kept as written.
    """
    args = _bounds_by_position(op, args)
    functions = [_lookup(m, op) for m in _modules()]
    try:
        signatures = [list(inspect.signature(f).parameters.values()) for f in functions]
    # a ufunc or builtin without a signature: keywords as written
    except (
        TypeError,
        ValueError,
    ):
        return args
    positional = [a for a in args if a.keyword is None]
    keywords = {a.keyword.value: a for a in args if a.keyword is not None}
    while keywords:
        i = len(positional)
        slots = [sig[i] if i < len(sig) else None for sig in signatures]
        name = slots[0].name if slots[0] is not None else None
        portable = all(
            p is not None and p.kind is p.POSITIONAL_OR_KEYWORD for p in slots
        )
        if (
            name not in keywords
            or not portable
            or all(name in {p.name for p in sig} for sig in signatures)
        ):
            break
        positional.append(
            keywords.pop(name).with_changes(
                keyword=None, equal=cst.MaybeSentinel.DEFAULT
            )
        )
    return positional + list(keywords.values())


def named_where_reordered(op: str, function, args: list) -> list:
    """``args`` of a call of ``function`` (NumPy's or ``jax.numpy``'s ``op``) with each positional argument
    whose parameter the other library puts at another place written by name: ``jnp.histogram(a, 10, None,
    w)`` passes ``weights=w`` (NumPy's fourth parameter is ``density``). Renamed parameters at one place
    (``x1``/``x``) stay positional."""
    while isinstance(
        function, functools.partial
    ):  # its bound arguments are in ``args`` already
        function = function.func
    if function is None or not any(a.keyword is None for a in args):
        return args
    try:
        own = _positional_parameters(function)
        others = [
            [p.name for p in _positional_parameters(f)]
            for f in (_lookup(m, op) for m in _modules())
            if f is not None and f is not function
        ]
    except (TypeError, ValueError):  # no signature: as written
        return args
    out = []
    for i, arg in enumerate(args):
        param = (
            own[i] if arg.keyword is None and not arg.star and i < len(own) else None
        )
        moved = param is not None and any(
            param.name in names and names.index(param.name) != i for names in others
        )
        if moved and param.kind is param.POSITIONAL_OR_KEYWORD:
            arg = arg.with_changes(
                keyword=cst.Name(param.name), equal=cst.AssignEqual()
            )
        out.append(arg)
    return out


def _positional_parameters(function) -> tuple:
    try:
        return _positional_parameters_of(function)
    except TypeError:  # unhashable
        return _positional_parameters_of.__wrapped__(function)


@functools.lru_cache(maxsize=1024)
def _positional_parameters_of(function) -> tuple:
    """(A library function's signature is read once: a ufunc's is parsed from its text.)"""
    return tuple(
        p
        for p in inspect.signature(function).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )


# jax.numpy's parameters that take arrays (NumPy takes lists there too): `np.take(x, [1, 0])`
ARRAY_PARAMETERS = frozenset(
    {"a", "b", "x", "y", "x1", "x2", "v", "arr", "array", "A", "args", "operands", "indices", "condition", "q",
     "xp", "fp", "p", "bins", "values", "element", "test_elements", "weights", "prepend", "append", "min", "max"}
)  # fmt: skip
CONSTRUCTORS = frozenset({"array", "asarray", "asanyarray"})
# parameters holding a sequence of arrays (``np.concatenate(arrays)``, ``np.hstack(tup)``)
SEQUENCE_PARAMETERS = frozenset({"arrays", "tup"})


# parameters whose values decide a shape (``s2s/rules/joins.py`` reads them on the host): a list stays a
# Python list, which a ``jax.numpy`` array made from it inside ``jit`` would not be
SHAPE_DECIDING = {"bincount": {"x"}}


def parameter_names(op: str, args: list) -> list | None:
    """The name of the parameter of ``jax.numpy.<op>`` each of ``args`` binds (None past the signature);
    None where it has no signature."""
    found = _positional_names(op)
    if found is None:
        return None
    positional, rest = found
    return [
        (
            arg.keyword.value
            if arg.keyword is not None
            else positional[i] if i < len(positional) else rest
        )
        for i, arg in enumerate(args)
    ]


@functools.cache
def _positional_names(op: str):
    """``(positional parameter names, the ``*args`` name)`` of ``jax.numpy.<op>``, or None."""
    try:
        params = list(
            inspect.signature(_lookup(_modules()[-1], op)).parameters.values()
        )
    except (TypeError, ValueError):
        return None
    positional = [
        p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    rest = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    return positional, rest


def takes_array(op: str, name) -> bool:
    """``jax.numpy.<op>``'s parameter ``name`` takes an array, where NumPy takes a list too."""
    return (
        op not in CONSTRUCTORS
        and name in ARRAY_PARAMETERS
        and name not in SHAPE_DECIDING.get(op, ())
    )


def as_array(node) -> cst.Call:
    """``xp.asarray(node)``: a list read as NumPy reads it where a function takes an array."""
    return cst.Call(cst.parse_expression("xp.asarray"), [cst.Arg(node)])


def takes_arrays(fn, args: list) -> list:
    """Whether each of ``args`` of a call to the library function ``fn`` binds a parameter of its signature
    that takes an array (``a``, ``x``: ``ARRAY_PARAMETERS``); all False where it has no signature.
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [False] * len(args)
    positional = [
        p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    names = [
        (
            a.keyword.value
            if a.keyword is not None
            else (positional[i] if i < len(positional) else None)
        )
        for i, a in enumerate(args)
    ]
    return [n in ARRAY_PARAMETERS and not a.star for n, a in zip(names, args)]


def library_lists_as_arrays(fn, args: list) -> list:
    """``args`` of a call to a library function s2s runs (``scipy.special.logsumexp``) with each list
    (a display or a comprehension) its parameters that take arrays are given written ``xp.asarray([...])``,
    as NumPy reads it."""
    lists = (cst.List, cst.ListComp)
    if not any(isinstance(a.value, lists) for a in args):
        return args
    return [
        (
            arg.with_changes(value=as_array(arg.value))
            if takes and isinstance(arg.value, lists)
            else arg
        )
        for arg, takes in zip(args, takes_arrays(fn, args))
    ]


def lists_as_arrays(op: str, args: list) -> list:
    """``args`` of a call to ``xp.<op>`` with each list literal that jax.numpy needs as an array (NumPy takes
    either) written ``xp.asarray([...])``, as NumPy reads it; lists of shapes and axes are kept.
    """
    if op in CONSTRUCTORS or not any(
        isinstance(a.value, (cst.List, cst.Tuple)) for a in args
    ):
        return args
    names = parameter_names(op, args)
    if names is None:  # no signature: lists as written
        return args
    out = []
    for arg, name in zip(args, names):
        if isinstance(arg.value, cst.List) and takes_array(op, name):
            arg = arg.with_changes(value=as_array(arg.value))
        elif name in SEQUENCE_PARAMETERS and isinstance(
            arg.value, (cst.List, cst.Tuple)
        ):
            # ``np.concatenate([[theta0], np.exp(gaps)])``: each list in the sequence an array
            items = [
                (
                    e.with_changes(value=as_array(e.value))
                    if isinstance(e.value, cst.List)
                    else e
                )
                for e in arg.value.elements
            ]
            arg = arg.with_changes(value=arg.value.with_changes(elements=items))
        out.append(arg)
    return out
