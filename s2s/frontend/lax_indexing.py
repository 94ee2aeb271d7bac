"""``jax.lax``'s indexing ops, resolved by identity (``lax.dynamic_slice``, ``jax.lax.dynamic_slice`` and
``from jax.lax import dynamic_slice`` are one object) and lowered onto s2s's ops and runtime helpers:

=============================================================  ==================================================
you write                                                      resolved to
=============================================================  ==================================================
``lax.select(pred, a, b)``                                     ``xp.where(pred, a, b)``
``lax.dynamic_slice(x, (i, j), (2, 3))``                       ``rt.dynamic_slice(x, (i, j), (2, 3))``
``lax.dynamic_update_slice(x, u, (i, j))``                     ``rt.dynamic_update_slice(x, u, (i, j))``
``lax.dynamic_slice_in_dim(x, i, size, axis)``                 ``rt.dynamic_slice(x, (i,), (size,), (axis,))``
``lax.dynamic_index_in_dim(x, i, axis, keepdims)``             the same with size 1 (``xp.squeeze`` without keepdims)
``lax.index_in_dim(x, i, axis, keepdims)``                     the same
``lax.dynamic_update_slice_in_dim(x, u, i, axis)``             ``rt.dynamic_update_slice(x, u, (i,), (axis,))``
``lax.dynamic_update_index_in_dim(x, u, i, axis)``             the same (``u`` may lack the axis)
=============================================================  ==================================================

Starts are wrapped if negative and clamped so the window fits, as JAX does
(``runtime/slicing.py``). Sizes, axes and ``keepdims`` are constants; only
``allow_negative_indices=True`` (the default) is read.
"""

from __future__ import annotations

import ast
import inspect
import sys

import libcst as cst

from ..errors import S2SError


def _select(pred, on_true, on_false): ...
def _dynamic_slice(
    operand, start_indices, slice_sizes, *, allow_negative_indices=True
): ...
def _dynamic_update_slice(
    operand, update, start_indices, *, allow_negative_indices=True
): ...
def _dynamic_slice_in_dim(
    operand, start_index, slice_size=1, axis=0, *, allow_negative_indices=True
): ...
def _dynamic_index_in_dim(
    operand, index, axis=0, keepdims=True, *, allow_negative_indices=True
): ...
def _index_in_dim(operand, index, axis=0, keepdims=True): ...
def _dynamic_update_slice_in_dim(
    operand, update, start_index, axis, *, allow_negative_indices=True
): ...
def _dynamic_update_index_in_dim(
    operand, update, index, axis, *, allow_negative_indices=True
): ...


# JAX's name -> the signature its call is bound by
SIGNATURES = {
    "select": _select,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "dynamic_slice_in_dim": _dynamic_slice_in_dim,
    "dynamic_index_in_dim": _dynamic_index_in_dim,
    "index_in_dim": _index_in_dim,
    "dynamic_update_slice_in_dim": _dynamic_update_slice_in_dim,
    "dynamic_update_index_in_dim": _dynamic_update_index_in_dim,
}  # fmt: skip


def op_of(obj) -> str | None:
    """The name of the ``jax.lax`` indexing op ``obj`` is (by identity), else None."""
    jax = sys.modules.get("jax")
    if jax is None or obj is None:
        return None
    for name in SIGNATURES:
        if getattr(jax.lax, name, None) is obj:
            return name
    return None


def _call(name, *args) -> cst.Call:
    return cst.Call(cst.parse_expression(name), [cst.Arg(a) for a in args])


def _one(value) -> cst.Tuple:
    return cst.Tuple([cst.Element(value)])


def lower(resolver, node: cst.Call, name: str) -> cst.BaseExpression:
    """The lowered call of the ``jax.lax`` op ``name`` (see the table above)."""
    what = f"`lax.{name}`"
    if any(a.star for a in node.args):
        resolver.fail(
            node,
            f"argument unpacking in a call of {what}",
            "pass the arguments one by one",
        )
    try:
        bound = inspect.signature(SIGNATURES[name]).bind(
            *[a.value for a in node.args if a.keyword is None],
            **{a.keyword.value: a.value for a in node.args if a.keyword is not None},
        )
    except TypeError as err:
        resolver.fail(
            node,
            f"call of {what} does not match JAX's signature: {err}",
            None,
            S2SError,
        )
    args = dict(bound.arguments)
    if (
        "allow_negative_indices" in args
        and _constant(resolver, args["allow_negative_indices"], what) is not True
    ):
        resolver.fail(node, f"{what} with allow_negative_indices=False is not supported",
                      "leave it out: a negative start counts from the end of its axis")  # fmt: skip
    keepdims = (
        _constant(resolver, args["keepdims"], what) if "keepdims" in args else True
    )

    def value(key, default=None):
        if key not in args:
            return cst.Integer(str(default))
        node_ = args[key]
        if isinstance(node_, cst.List):  # ``[i, 0]``: the same starts as ``(i, 0)``
            node_ = cst.Tuple(list(node_.elements))
        return resolver.expr(node_)

    if name == "select":
        return resolver.mark(
            _call("xp.where", value("pred"), value("on_true"), value("on_false")), node
        )
    if name == "dynamic_slice":
        out = _call(
            "rt.dynamic_slice",
            value("operand"),
            value("start_indices"),
            value("slice_sizes"),
        )
    elif name == "dynamic_update_slice":
        out = _call(
            "rt.dynamic_update_slice",
            value("operand"),
            value("update"),
            value("start_indices"),
        )
    elif name == "dynamic_slice_in_dim":
        axis = value("axis", 0)
        out = _call("rt.dynamic_slice", value("operand"), _one(value("start_index")),
                    _one(value("slice_size", 1)), _one(axis))  # fmt: skip
    elif name in ("dynamic_index_in_dim", "index_in_dim"):
        axis = value("axis", 0)
        out = _call("rt.dynamic_slice", value("operand"), _one(value("index")),
                    _one(cst.Integer("1")), _one(axis))  # fmt: skip
        if not keepdims:
            out = _call("xp.squeeze", out, axis.deep_clone())
    else:  # dynamic_update_slice_in_dim, dynamic_update_index_in_dim
        start = "start_index" if name == "dynamic_update_slice_in_dim" else "index"
        out = _call("rt.dynamic_update_slice", value("operand"), value("update"),
                    _one(value(start)), _one(value("axis")))  # fmt: skip
    return resolver.mark(out, node)


def _constant(resolver, node, what):
    try:
        return ast.literal_eval(resolver.source.file.module.code_for_node(node))
    except (ValueError, SyntaxError):
        resolver.fail(node, f"{what}'s option `{resolver.source.file.module.code_for_node(node)}` is computed "
                      "at run time", "write it as a constant (`keepdims=False`)")  # fmt: skip
