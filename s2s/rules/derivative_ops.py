"""Rules for the runtime helpers that derivative code calls, so a derivative can be differentiated again.

A generated gradient calls ``rt.unbroadcast``, ``rt.reduced_like``,
``rt.matmul_vjp_lhs``, ...; ``grad(grad(f))`` and ``hessian`` transform that
code again, so each helper has rules like an op's, in the same families.
Where the runtime names a parameter ``g``, the rule calls it ``ct`` (``g`` is
the rule vocabulary's incoming cotangent); calls bind by position.
"""

import numpy as xp

from s2s import runtime as rt
from .registry import linear, multilinear, nondiff

nondiff("a constant: ones shaped like the output", "rt.grad_seed")
nondiff("zeros", "rt.zeros_like_float", "rt.tree_zeros_like")
nondiff("shape logic", "rt.reduced_count", "rt.inverse_permutation", "rt.opposite", "rt.norm_axes")
nondiff("piecewise constant: zero derivative almost everywhere", "rt.step", "rt.clip_partial")


@linear(name="rt.unbroadcast")
def unbroadcast(value, like, *, g):
    return rt.broadcast_like(g, value)


@linear(name="rt.broadcast_like")
def broadcast_like(value, like, *, g):
    return rt.unbroadcast(g, value)


@linear(name="rt.reduced_like")
def reduced_like(ct, like, axis=None, keepdims=False, *, g):
    return xp.sum(g, axis=axis, keepdims=keepdims)


@linear(name="rt.tree_add")
def tree_add(a, b, *, g):
    return g, g


@linear(name="rt.fill_like")
def fill_like(tree, leaves, *, g):
    return None, rt.fill_like_vjp(g, leaves)


@linear(name="rt.index_add")
def index_add(target, index, value, *, g):
    return g, None, rt.index_add_value_vjp(g, index, value)


@linear(name="rt.index_get_vjp")
def index_get_vjp(ct, target, index, *, g):
    return rt.index_get(g, index)


@linear(name="rt.index_set_value_vjp")
def index_set_value_vjp(ct, index, value, *, g):
    return rt.index_set(rt.zeros_like_float(ct), index, g)


@linear(name="rt.extremum_vjp")
def extremum_vjp(ct, a, ans, axis=None, keepdims=False, *, g):
    # the tie mask is piecewise constant in ``a`` and ``ans``
    return xp.sum(g * rt.extremum_vjp(xp.ones_like(ct), a, ans, axis, keepdims), axis=axis, keepdims=keepdims)


@multilinear(name="rt.matmul_vjp_lhs")
def matmul_vjp_lhs(ct, x1, x2, *, g):
    return rt.broadcast_like(xp.matmul(g, x2), ct), None, rt.matmul_vjp_rhs(ct, g, x2)


@multilinear(name="rt.matmul_vjp_rhs")
def matmul_vjp_rhs(ct, x1, x2, *, g):
    return rt.broadcast_like(xp.matmul(x1, g), ct), rt.matmul_vjp_lhs(ct, x1, g), None
