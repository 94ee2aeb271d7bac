"""Ops whose reverse rule is written out: contractions, order statistics, products, linear algebra."""

import numpy as xp  # noqa: F401  (rule vocabulary)

from s2s import runtime as rt
from .registry import vjp


@vjp
def matmul(x1, x2, *, g):
    return rt.matmul_vjp_lhs(g, x1, x2), rt.matmul_vjp_rhs(g, x1, x2)


@vjp
def dot(a, b, out=None, *, g):
    return rt.dot_vjp(g, a, b, 0), rt.dot_vjp(g, a, b, 1)


@vjp
def vdot(a, b, *, g):
    return xp.reshape(g * b, xp.shape(a)), xp.reshape(g * a, xp.shape(b))


@vjp
def inner(a, b, *, g):
    return rt.inner_vjp(g, a, b, 0), rt.inner_vjp(g, a, b, 1)


@vjp
def outer(a, b, out=None, *, g):
    return xp.reshape(xp.dot(g, xp.ravel(b)), xp.shape(a)), xp.reshape(xp.dot(xp.ravel(a), g), xp.shape(b))


@vjp
def tensordot(a, b, axes=2, *, g):
    return rt.tensordot_vjp(g, a, b, axes, 0), rt.tensordot_vjp(g, a, b, axes, 1)


@vjp
def einsum(subscripts, *operands, optimize=False, g):
    # ``operands`` is one parameter (the sequence); its cotangent is a list.
    return None, rt.einsum_vjp(g, subscripts, operands)


@vjp
def max_(a, axis=None, out=None, keepdims=False, *, ans, g):
    return rt.extremum_vjp(g, a, ans, axis, keepdims)


@vjp
def min_(a, axis=None, out=None, keepdims=False, *, ans, g):
    return rt.extremum_vjp(g, a, ans, axis, keepdims)


@vjp
def prod(a, axis=None, dtype=None, out=None, keepdims=False, *, g):
    return rt.prod_vjp(g, a, axis, keepdims)


@vjp
def cumprod(a, axis=None, dtype=None, out=None, *, g):
    return rt.cumprod_vjp(g, a, axis)


@vjp(name="linalg.norm")
def norm(x, ord=None, axis=None, keepdims=False, *, ans, g):
    return rt.norm_vjp(g, x, ans, ord, axis, keepdims)


@vjp(name="linalg.inv")
def inv(a, *, ans, g):
    return -xp.swapaxes(ans, -1, -2) @ g @ xp.swapaxes(ans, -1, -2)


@vjp(name="linalg.solve")
def solve(a, b, *, ans, g):
    return rt.solve_vjp_a(g, a, b, ans), rt.solve_vjp_b(g, a, b)


@vjp(name="linalg.det")
def det(a, *, ans, g):
    # JAX uses a cofactor solve that stays finite for singular ``a``; this needs ``a`` invertible.
    return xp.expand_dims(g * ans, (-2, -1)) * xp.swapaxes(xp.linalg.inv(a), -1, -2)
