"""Calls the resolver reads as other forms: records, number casts, NumPy's ``out=``, partials passed on.

- ``State(mu, nu)``, a call of a NamedTuple class, is ``rt.record(State, mu, nu)`` (its fields by position
  or keyword, defaults filled in, in the class's order);
- ``float(v)``/``int(v)`` of a value that may be traced is ``rt.as_float``/``rt.as_int``
  (``runtime/scalars.py``), of a static one Python's;
- ``max(SIZES)``, ``sorted(LEVELS)``, ``len(NAMES)``: Python's builtin of module-level constants that hold
  numbers and strings (a list, a tuple) is its value, computed when the code is read (the constants are
  watched as any: a new value makes the module again);
- ``np.pad(x, w, constant_values=c)`` is ``np.pad(x, w) + c * rt.pad_border(x, w)`` (a constant mask of the
  border), a term per side (and axis) for ``(before, after)`` values: linear in the values, which may be
  data;
- ``np.diag_indices_from(K)`` (``tril_``/``triu_indices_from``) is the same function of ``K``'s shape
  (``np.diag_indices(np.shape(K)[0], np.ndim(K))``), known when the code is traced;
- ``out=`` is NumPy's output argument only in calls of NumPy's and JAX's functions and array methods;
- a module-level ``functools.partial`` passed to a function of yours is held unresolved, for
  ``function_args`` to bind the function to it.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect

import libcst as cst
import numpy

from ..cstutil import dotted, rewrite
from ..errors import UnsupportedSyntax
from ..passes.normal_form import is_static
from ..runtime.numbers import FUNCTIONS as NUMBER_FUNCTIONS
from . import function_args, spellings


def constant_padding(resolver, node: cst.Call):
    """``np.pad(x, w, constant_values=c)`` (mode "constant") as zero padding plus the values times constant
    masks of the border (``runtime.decompositions.pad_border``), else None."""
    callee = resolver._callee_object(node.func)
    if not any(callee is pad for pad in _PADS) or any(a.star for a in node.args):
        return None  # (by identity: a callable object of a library may not hash)
    keyword = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    positional = [a.value for a in node.args if a.keyword is None]
    mode = keyword.get("mode", positional[2] if len(positional) > 2 else None)
    # the array and the widths, by position or keyword (``np.pad(x, pad_width=w, ...)``)
    operands = [
        keyword.get(name, positional[k] if len(positional) > k else None)
        for k, name in enumerate(("array", "pad_width"))
    ]
    if "constant_values" not in keyword or None in operands:
        return None
    if mode is not None and not (
        isinstance(mode, cst.SimpleString) and mode.evaluated_value == "constant"
    ):
        return None
    terms = _border_terms(keyword["constant_values"])
    if terms is None:
        resolver.fail(
            node,
            "`np.pad` with `constant_values` that are not written out (a number, a `(before, after)` "
            "pair, or a pair per axis)",
            "write the values in the call: `constant_values=(0.0, 1.0)`",
            UnsupportedSyntax,
        )
    plain = node.with_changes(
        args=[
            a
            for a in node.args
            if not (a.keyword is not None and a.keyword.value == "constant_values")
        ]
    )
    value = resolver.expr(plain)
    array, width = (resolver.expr(p) for p in operands)
    for term, side, axis in terms:
        mask = cst.Call(
            cst.parse_expression("rt.pad_border"),
            [cst.Arg(array), cst.Arg(width)]
            + [cst.Arg(cst.parse_expression(repr(v))) for v in (side, axis)],
        )
        value_of = resolver.expr(term)
        if not isinstance(term, (cst.Integer, cst.Float, cst.UnaryOperation)):
            # one number: a value holding a pair (``c = (0.0, 5.0)``) is an error, never broadcast
            value_of = cst.Call(
                cst.parse_expression("xp.reshape"),
                [cst.Arg(value_of), cst.Arg(cst.Tuple([]))],
            )
        product = cst.BinaryOperation(value_of, cst.Multiply(), mask)
        value = cst.BinaryOperation(value, cst.Add(), product)
    return resolver.mark(value, node)


# ``np.diag_indices_from(a)`` and its kin: the positions of ``a``'s shape, as the functions of sizes
_FROM_SHAPE = {
    "diag_indices_from": "diag_indices",
    "tril_indices_from": "tril_indices",
    "triu_indices_from": "triu_indices",
}


def indices_from_shape(resolver, node: cst.Call):
    """``np.diag_indices_from(K)`` as ``np.diag_indices(np.shape(K)[0], np.ndim(K))`` (``tril``/``triu``:
    ``np.tril_indices(np.shape(K)[-2], k, np.shape(K)[-1])``): a function of ``K``'s shape, which is known
    when the code is traced (and the same for every example), where ``K`` itself may be traced; else None.
    """
    func = node.func
    if not (
        isinstance(func, cst.Attribute)
        and func.attr.value in _FROM_SHAPE
        and resolver._callee_object(func) is getattr(numpy, func.attr.value)
        and node.args
        and node.args[0].keyword is None
        and not any(a.star for a in node.args)
    ):
        return None
    module, a = func.value, node.args[0].value
    shape = cst.Call(cst.Attribute(module, cst.Name("shape")), [cst.Arg(a)])

    def size(k):
        return cst.Subscript(shape, [cst.SubscriptElement(cst.Index(cst.Integer(k)))])

    if func.attr.value == "diag_indices_from":
        if len(node.args) != 1:
            return None
        ndim = cst.Call(cst.Attribute(module, cst.Name("ndim")), [cst.Arg(a)])
        args = [cst.Arg(size("0")), cst.Arg(ndim)]
    else:
        k = [arg.value for arg in node.args[1:]]
        if len(k) > 1 or any(
            arg.keyword and arg.keyword.value != "k" for arg in node.args[1:]
        ):
            return None
        neg2 = cst.UnaryOperation(cst.Minus(), cst.Integer("2"))
        neg1 = cst.UnaryOperation(cst.Minus(), cst.Integer("1"))
        rows = cst.Subscript(shape, [cst.SubscriptElement(cst.Index(neg2))])
        cols = cst.Subscript(shape, [cst.SubscriptElement(cst.Index(neg1))])
        args = [cst.Arg(rows), cst.Arg(k[0] if k else cst.Integer("0")), cst.Arg(cols)]
    new = cst.Call(func.with_changes(attr=cst.Name(_FROM_SHAPE[func.attr.value])), args)
    return resolver.expr(new)


_PADS = [numpy.pad]
try:
    import jax.numpy as _jnp

    _PADS.append(_jnp.pad)
except ImportError:  # pragma: no cover - the numpy backend runs without JAX
    pass


def _border_terms(values) -> list | None:
    """``(value, side, axis)`` for each constant a pad writes: a number (both sides of every axis), a
    ``(before, after)`` pair, or a pair (or one value) per axis; literal zeros left out. None for a form
    not written out."""

    def items(node):
        return (
            [e.value for e in node.elements]
            if isinstance(node, (cst.Tuple, cst.List))
            and not any(isinstance(e, cst.StarredElement) for e in node.elements)
            else None
        )

    top = items(values)
    if top is None:
        terms = [(values, None, None)]
    elif len(top) == 1 and items(top[0]) is None:
        terms = [(top[0], None, None)]
    elif len(top) == 2 and all(items(v) is None for v in top):
        terms = [(top[0], 0, None), (top[1], 1, None)]
    elif all(items(v) is not None and len(items(v)) in (1, 2) for v in top):
        terms = []
        for axis, pair in enumerate(top):
            sides = items(pair)
            if len(sides) == 1:
                terms.append((sides[0], None, axis))
            else:
                terms += [(sides[0], 0, axis), (sides[1], 1, axis)]
    else:
        return None
    zero = ("0", "0.0", "0.", "-0.0")
    return [
        t
        for t in terms
        if not (isinstance(t[0], (cst.Integer, cst.Float)) and t[0].value in zero)
    ]


# builtins whose value, of constants, is a constant
FOLDED_BUILTINS = ("max", "min", "sorted", "sum", "len", "any", "all", "abs", "round")


def constant_builtin(resolver, node: cst.Call):
    """The literal that Python's builtin computes of module-level constants (``max(SIZES)``), else None."""
    from .calls import _is_builtin, is_literal_value

    name = next(
        (b for b in FOLDED_BUILTINS if _is_builtin(resolver, node.func, b)), None
    )
    if name is None or not node.args or any(a.star for a in node.args):
        return None
    if (
        name == "len" and len(node.args) == 1
    ):  # ``len(ACTIVATIONS)``: whatever its items are
        held = _held_sequence(resolver, node.args[0].value)
        if held is not None:
            return resolver.mark(cst.Integer(str(len(held))), node)
    args, keywords = [], {}
    for a in node.args:
        value = _constant(resolver, a.value)
        if value is _NOT_CONSTANT:
            return None
        if a.keyword is None:
            args.append(value)
        elif a.keyword.value == "reverse" and name == "sorted":
            keywords["reverse"] = value
        else:
            return None  # (``key=``: a function)
    if not any(isinstance(v, (list, tuple)) for v in args):
        return None  # of numbers written in the code: read as any call
    try:
        value = getattr(builtins, name)(*args, **keywords)
    except (TypeError, ValueError):
        return None  # Python's error, where the code runs
    if is_literal_value(value):
        return resolver.mark(cst.parse_expression(repr(value)), node)
    if type(value) is list and all(is_literal_value(v) for v in value):
        return resolver.mark(cst.parse_expression(repr(value)), node)
    return None


_NOT_CONSTANT = object()


def _held_sequence(resolver, node):
    """The module-level tuple, list or dict a name or attribute chain names (of functions, objects, ...), else None."""
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return None
    value = resolver._callee_object(node)
    return value if type(value) in (list, tuple, dict) else None


def _constant(resolver, node):
    """The value of a literal, or of a module-level constant of numbers and strings, else ``_NOT_CONSTANT``."""
    from .calls import is_literal_value

    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)) and (
        not isinstance(node, cst.Name) or node.value in ("True", "False", "None")
    ):
        try:
            return ast.literal_eval(cst.Module([]).code_for_node(node))
        except ValueError:
            return _NOT_CONSTANT
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return _NOT_CONSTANT
    value = resolver._callee_object(node)
    if is_literal_value(value):
        return value
    if type(value) in (list, tuple) and all(
        type(v) in (int, float, bool, str) for v in value
    ):
        return value
    return _NOT_CONSTANT


def number_cast(resolver, node: cst.Call):
    """``rt.as_float(v)`` for ``float(v)`` of a value that may be traced (``int`` and ``bool`` likewise),
    Python's builtin of a static one; None for any other call."""
    from .calls import _is_builtin

    for name in ("float", "int", "bool"):
        if (
            _is_builtin(resolver, node.func, name)
            and len(node.args) == 1
            and node.args[0].keyword is None
            and not node.args[0].star
        ):
            value = resolver.expr(node.args[0].value)
            if is_static(value):  # ``int(x.shape[0] / 2)``: Python's, when traced
                return resolver.mark(cst.Call(cst.Name(name), [cst.Arg(value)]), node)
            # ``int(np.ceil(alpha * n))``, ``int(np.prod(shape))`` of a Python tuple: its NumPy functions are
            # NumPy's on numbers known when traced, jax.numpy's on traced values (``rt.numbers``; transforms
            # read them as the ops: a batched value keeps its examples)
            value = rewrite(value, _NumberFunctions(NUMBER_FUNCTIONS))
            call = cst.Call(cst.parse_expression(f"rt.as_{name}"), [cst.Arg(value)])
            return resolver.mark(call, node)
    return None


class _NumberFunctions(cst.CSTTransformer):
    """``xp.ceil(...)`` -> ``rt.numbers.ceil(...)`` (NumPy's on numbers, ``jax.numpy``'s on traced values),
    for the functions named in ``names``."""

    def __init__(self, names):
        super().__init__()
        self.names = names

    def leave_Call(self, original, updated):
        func = dotted(updated.func) or ""
        if func.startswith("xp.") and func[3:] in self.names:
            return updated.with_changes(
                func=cst.parse_expression(f"rt.numbers.{func[3:]}")
            )
        return updated


def record(resolver, node: cst.Call):
    """``rt.record(State, mu, nu)`` for a call of a NamedTuple class (fields by position or keyword,
    defaults filled in, in the class's order), else None."""
    func = node.func
    cls = (
        resolver._callee_object(func)
        if isinstance(func, (cst.Name, cst.Attribute))
        else None
    )
    if not (
        isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")
    ):
        return None
    if any(a.star for a in node.args):
        resolver.fail(node, f"`*`/`**` in a call of the NamedTuple `{cls.__name__}`",
                  "pass its fields one by one", UnsupportedSyntax)  # fmt: skip
    fields, given = list(cls._fields), {}
    positional = [a for a in node.args if a.keyword is None]
    if len(positional) > len(fields):
        resolver.fail(node, f"`{cls.__name__}` takes {len(fields)} fields, got {len(positional)}",
                  f"pass one value per field: {', '.join(fields)}", UnsupportedSyntax)  # fmt: skip
    for name, a in zip(fields, positional):
        given[name] = resolver.expr(a.value)
    for a in node.args:
        if a.keyword is None:
            continue
        if a.keyword.value not in fields or a.keyword.value in given:
            resolver.fail(a, f"`{cls.__name__}` got an unexpected or repeated field `{a.keyword.value}`",
                      f"its fields are {', '.join(fields)}", UnsupportedSyntax)  # fmt: skip
        given[a.keyword.value] = resolver.expr(a.value)
    for name in fields:
        if name not in given:
            if name not in cls._field_defaults:
                resolver.fail(node, f"`{cls.__name__}` is missing its field `{name}`",
                          f"pass `{name}=...`", UnsupportedSyntax)  # fmt: skip
            given[name] = resolver.value(cls._field_defaults[name], (name,), node)
    unique = resolver.result.scope.name(
        cls.__name__, cls, resolver.locals | set(resolver.renames.values())
    )
    resolver.result.constants[unique] = cls
    args = [cst.Arg(cst.Name(unique)), *(cst.Arg(given[n]) for n in fields)]
    return resolver.mark(cst.Call(cst.parse_expression("rt.record"), args), node)


def array_library_call(resolver, node: cst.Call) -> bool:
    """Whether ``node`` calls a function of NumPy's or JAX's (``np.add``, ``np.cumsum``), or an
    array's method: the calls whose ``out=`` is NumPy's output argument."""
    func = node.func
    if not isinstance(func, (cst.Name, cst.Attribute)):
        return False
    obj = resolver._callee_object(func)
    if obj is None:  # a method of a local value: an array's (``h.cumsum(out=y)``)
        return isinstance(func, cst.Attribute) and hasattr(
            numpy.ndarray, func.attr.value
        )
    module = getattr(obj, "__module__", None) or ""
    return isinstance(obj, numpy.ufunc) or module.split(".")[0] in ("numpy", "jax")


def partials_passed(resolver, func, node: cst.Call) -> list:
    """The arguments of a call of a function of yours that name module-level ``functools.partial``
    objects of functions (``mlp(w, x, leaky)``) or objects of your classes (``predict(MODEL, w, x)``):
    ``function_args`` binds the helper to them, so they are resolved only where it does not.
    """
    fn = (
        resolver._callee_object(func)
        if isinstance(func, (cst.Name, cst.Attribute))
        else None
    )
    if inspect.ismethod(fn) and function_args.is_program_object(fn.__self__):
        fn = fn.__func__  # ``solver.step(term, y)`` of an object of yours
    if not inspect.isfunction(fn) or spellings.is_library(fn):
        return []
    return [
        a
        for a in node.args
        if not a.star
        and isinstance(a.value, (cst.Name, cst.Attribute))
        and _bindable(resolver._callee_object(a.value))
    ]


def _bindable(obj) -> bool:
    if isinstance(obj, functools.partial):
        return function_args.is_function(obj)
    return function_args.is_program_object(obj)
