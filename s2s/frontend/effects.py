"""NumPy's writes through other channels, spelled as the element writes the rest of s2s handles.

- ``np.multiply(a, b, out=y)``, a statement or inside an expression, is
  ``y[...] = np.multiply(a, b)`` just before its statement, and the call's
  value is ``y`` (``out=(y,)`` too);
- ``np.copyto(y, v)`` is ``y[...] = v``; with ``where=w``, ``y[...] = np.where(w, v, y)``;
- ``np.fill_diagonal(y, v)`` is ``y[...] = rt.fill_diagonal(y, v)`` (``s2s/rules/joins.py``);
- ``y.sort(...)`` is ``y[...] = np.sort(y, ...)``; ``y.fill(v)`` is ``y[...] = v``;
- ``np.add.at(y, idx, v)`` (repeated indices accumulate) is ``y[...] = rt.index_add(y, idx, v)``, and
  likewise ``subtract`` (``-v`` added), ``multiply``, ``maximum`` and ``minimum`` (``rt.index_multiply``,
  ``rt.index_max``, ``rt.index_min``: the ``.at[]`` updates' scatters).

An element write becomes ``y = rt.index_set(y, ..., v)`` in ``desugar``, and
the aliasing check applies as to any in-place write: writing into a parameter
(the caller's array) or into memory another name still shares is a located
error. No write is ever dropped: the fence refuses every other expression
statement (``y.partition(k)``, ``y.put(...)``, ``print(y)``, ...).
"""

from __future__ import annotations

import libcst as cst
import numpy

from .. import ir
from ..errors import UnsupportedSyntax

IN_PLACE_METHODS = ("sort", "fill")
# NumPy functions that write their first argument, by the name the fence knows them by (``calls.effect``
# checks each by identity)
IN_PLACE_FUNCTIONS = ("copyto", "fill_diagonal")
# ``np.add.at(a, idx, v)``: the ufuncs whose unbuffered ``at`` is a scatter of the ``.at[]`` family
UFUNCS_AT = ("add", "subtract", "multiply", "maximum", "minimum")


def whole(target: cst.BaseExpression) -> cst.Subscript:
    """``y[...]``: every element of ``y``."""
    return cst.Subscript(target, [cst.SubscriptElement(cst.Index(cst.Ellipsis()))])


def out_argument(call: cst.Call) -> cst.Arg | None:
    """The ``out=`` argument of a call, if it has one."""
    return next(
        (a for a in call.args if a.keyword is not None and a.keyword.value == "out"),
        None,
    )


def out_target(arg: cst.Arg) -> cst.BaseExpression | None:
    """The array an ``out=`` argument names: ``y`` in ``out=y`` or ``out=(y,)``."""
    value = arg.value
    if isinstance(value, cst.Tuple) and len(value.elements) == 1:
        value = value.elements[0].value
    return value if isinstance(value, cst.Name) else None


def in_place_method(call: cst.Call) -> str | None:
    """``sort`` for ``y.sort(...)`` (``y`` a name), likewise ``fill``; else None."""
    func = call.func
    if (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.attr.value in IN_PLACE_METHODS
    ):
        return func.attr.value
    return None


def is_effect(call: cst.BaseExpression) -> bool:
    """An expression statement that writes an array: kept by the fence, spelled as an element write by resolve."""
    if not isinstance(call, cst.Call):
        return False
    func = call.func
    named = (
        func.attr.value
        if isinstance(func, cst.Attribute)
        else getattr(func, "value", None)
    )
    ufunc_at = (
        named == "at"
        and isinstance(func.value, cst.Attribute)
        and func.value.attr.value in UFUNCS_AT
    )
    return (
        out_argument(call) is not None
        or in_place_method(call) is not None
        or named in IN_PLACE_FUNCTIONS
        or ufunc_at
    )


def write(resolver, call: cst.Call, origin) -> list:
    """An expression statement that writes an array, as element writes (``y[...] = ...``): the IR statements."""
    from .calls import _bind_like, xp_attr

    method = in_place_method(call)
    if method is not None and call.func.value.value in resolver.locals:
        array = call.func.value
        if method == "fill":
            value = resolver.expr(call.args[0].value)
        else:
            value = resolver.mark(
                cst.Call(
                    xp_attr("sort"),
                    [cst.Arg(resolver.expr(array)), *map(resolver._arg, call.args)],
                ),
                call,
            )
        return [ir.Assign(resolver.target(whole(array)), value, origin)]
    chain = resolver._chain(call.func)
    scatter = _ufunc_at(resolver._object(chain) if chain is not None else None)
    if (
        scatter is not None
    ):  # ``np.add.at(counts, idx, 1.0)``: a scatter into the whole array
        bound = _bind_like(numpy.add.at, call, resolver, ("a", "indices", "b"))
        if "b" not in bound:
            resolver.fail(call, "a ufunc's `at` without values", "pass the values: `np.add.at(a, idx, v)`",
                      UnsupportedSyntax)  # fmt: skip
        array = bound["a"]
        index = resolver._slice(cst.Index(bound["indices"])).value
        values = resolver.expr(bound["b"])
        if scatter == "subtract":
            values = cst.UnaryOperation(cst.Minus(), values)
        op = {"add": "index_add", "subtract": "index_add", "multiply": "index_multiply",
              "maximum": "index_max", "minimum": "index_min"}[scatter]  # fmt: skip
        value = cst.Call(
            cst.parse_expression(f"rt.{op}"),
            [cst.Arg(resolver.expr(array)), cst.Arg(index), cst.Arg(values)],
        )
        return [
            ir.Assign(resolver.target(whole(array)), resolver.mark(value, call), origin)
        ]
    if chain is not None and resolver._object(chain) is numpy.fill_diagonal:
        bound = _bind_like(numpy.fill_diagonal, call, resolver, ("a", "val", "wrap"))
        args = [
            cst.Arg(resolver.expr(bound[p])) for p in ("a", "val", "wrap") if p in bound
        ]
        value = cst.Call(cst.parse_expression("rt.fill_diagonal"), args)
        return [
            ir.Assign(
                resolver.target(whole(bound["a"])),
                resolver.mark(value, call),
                origin,
            )
        ]
    if chain is not None and resolver._object(chain) is numpy.copyto:
        bound = _bind_like(
            numpy.copyto, call, resolver, ("dst", "src", "casting", "where")
        )
        dst, src = bound["dst"], resolver.expr(bound["src"])
        if "where" in bound:
            src = cst.Call(
                xp_attr("where"),
                [
                    cst.Arg(resolver.expr(bound["where"])),
                    cst.Arg(src),
                    cst.Arg(resolver.expr(dst)),
                ],
            )
        return [
            ir.Assign(resolver.target(whole(dst)), resolver.mark(src, call), origin)
        ]
    if out_argument(call) is None:
        resolver.fail(
            call,
            "an expression statement (its value is discarded)",
            "assign the value to a name",
            UnsupportedSyntax,
        )
    # the write is pending; the value, the ``out`` array itself, is not needed
    resolver.expr(call)
    return []


def _ufunc_at(obj) -> str | None:
    """``"add"`` for ``np.add.at`` (likewise ``UFUNCS_AT``), else None."""
    ufunc = getattr(obj, "__self__", None)
    if getattr(obj, "__name__", None) != "at" or not isinstance(ufunc, numpy.ufunc):
        return None
    name = ufunc.__name__
    return name if name in UFUNCS_AT and getattr(numpy, name) is ufunc else None


__all__ = [
    "IN_PLACE_FUNCTIONS",
    "IN_PLACE_METHODS",
    "in_place_method",
    "is_effect",
    "out_argument",
    "out_target",
    "whole",
]
