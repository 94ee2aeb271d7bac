"""Ops whose rules are written out: contractions (multilinear), order statistics, products, linear algebra.

Multilinear ops list the transpose for each operand; forward mode is derived.
The others (``vjp``) give their forward rule next to the reverse one
(``@jvp``, one tangent term per leading parameter). Reductions whose output
element depends on one slice of the input (max, min, prod, norm) take
their forward rule from the reverse one: the partials (the cotangent for
``g = 1``) times the tangent, summed over the reduced axes.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import jvp, multilinear, vjp


@multilinear
def matmul(x1, x2, *, g):
    return rt.matmul_vjp_lhs(g, x1, x2), rt.matmul_vjp_rhs(g, x1, x2)


@multilinear
def dot(a, b, out=None, *, g):
    return rt.dot_vjp(g, a, b, 0), rt.dot_vjp(g, a, b, 1)


@multilinear
def vdot(a, b, *, g):
    return xp.reshape(g * b, xp.shape(a)), xp.reshape(g * a, xp.shape(b))


@multilinear
def inner(a, b, *, g):
    return rt.inner_vjp(g, a, b, 0), rt.inner_vjp(g, a, b, 1)


@multilinear
def outer(a, b, out=None, *, g):
    return xp.reshape(xp.dot(g, xp.ravel(b)), xp.shape(a)), xp.reshape(
        xp.dot(xp.ravel(a), g), xp.shape(b)
    )


@multilinear
def tensordot(a, b, axes=2, *, g):
    return rt.tensordot_vjp(g, a, b, axes, 0), rt.tensordot_vjp(g, a, b, axes, 1)


@multilinear
def einsum(subscripts, *operands, optimize=False, g):
    # ``operands`` is one parameter (the sequence); its cotangent is a list.
    return None, rt.einsum_vjp(g, subscripts, operands)


@vjp
def astype(x, dtype, /, *, copy=True, device=None, g):
    # JAX's semantics: a cast to an integer or bool type passes no derivative (zeros, not a truncated cotangent).
    return rt.astype_vjp(g, x, dtype)


@jvp(astype)
def astype_forward(x, dtype, /, *, copy=True, device=None, x_dot):
    return rt.astype_jvp(x_dot, dtype)


@vjp
def max_(a, axis=None, out=None, keepdims=False, *, ans, g):
    return rt.extremum_vjp(g, a, ans, axis, keepdims)


@jvp(max_)
def max_forward(a, axis=None, out=None, keepdims=False, *, ans, a_dot):
    return xp.sum(
        rt.extremum_vjp(xp.ones_like(ans), a, ans, axis, keepdims) * a_dot,
        axis=axis,
        keepdims=keepdims,
    )


@vjp
def min_(a, axis=None, out=None, keepdims=False, *, ans, g):
    return rt.extremum_vjp(g, a, ans, axis, keepdims)


@jvp(min_)
def min_forward(a, axis=None, out=None, keepdims=False, *, ans, a_dot):
    return xp.sum(
        rt.extremum_vjp(xp.ones_like(ans), a, ans, axis, keepdims) * a_dot,
        axis=axis,
        keepdims=keepdims,
    )


@vjp
def prod(a, axis=None, dtype=None, out=None, keepdims=False, *, g):
    return rt.prod_vjp(g, a, axis, keepdims)


@jvp(prod)
def prod_forward(a, axis=None, dtype=None, out=None, keepdims=False, *, ans, a_dot):
    return xp.sum(
        rt.prod_vjp(xp.ones_like(ans), a, axis, keepdims) * a_dot,
        axis=axis,
        keepdims=keepdims,
    )


@vjp
def cumprod(a, axis=None, dtype=None, out=None, *, g):
    return rt.cumprod_vjp(g, a, axis)


@jvp(cumprod)
def cumprod_forward(a, axis=None, dtype=None, out=None, *, a_dot):
    return rt.cumprod_jvp(a_dot, a, axis)


@vjp(name="linalg.norm")
def norm(x, ord=None, axis=None, keepdims=False, *, ans, g):
    return rt.norm_vjp(g, x, ans, ord, axis, keepdims)


@jvp(norm)
def norm_forward(x, ord=None, axis=None, keepdims=False, *, ans, x_dot):
    return xp.sum(
        rt.norm_vjp(xp.ones_like(ans), x, ans, ord, axis, keepdims) * x_dot,
        axis=rt.norm_axes(x, ord, axis),
        keepdims=keepdims,
    )


@vjp(name="linalg.inv")
def inv(a, *, ans, g):
    return -xp.swapaxes(ans, -1, -2) @ g @ xp.swapaxes(ans, -1, -2)


@jvp(inv)
def inv_forward(a, *, ans, a_dot):
    return -ans @ a_dot @ ans


@vjp(name="linalg.solve")
def solve(a, b, *, ans, g):
    return rt.solve_vjp_a(g, a, b, ans), rt.solve_vjp_b(g, a, b)


@jvp(solve)
def solve_forward(a, b, *, ans, a_dot, b_dot):
    return rt.solve_jvp_a(a_dot, a, b, ans), xp.linalg.solve(a, b_dot)


@vjp(name="linalg.det")
def det(a, *, ans, g):
    # the adjugate, finite for singular ``a`` too (a zero matrix, a degenerate triangle), as JAX's rule
    return xp.expand_dims(g, (-2, -1)) * xp.matrix_transpose(rt.adjugate(a))


@jvp(det)
def det_forward(a, *, ans, a_dot):
    return xp.trace(xp.matmul(rt.adjugate(a), a_dot), axis1=-2, axis2=-1)


@vjp
def sort(a, axis=-1, kind=None, order=None, *, g):
    # each element's cotangent is that of the place it was sorted to (stable: ties in order, as JAX)
    return xp.reshape(
        xp.take_along_axis(
            g,
            xp.argsort(xp.argsort(a, axis=axis, stable=True), axis=axis, stable=True),
            axis=axis,
        ),
        xp.shape(a),
    )


@jvp(sort)
def sort_forward(a, axis=-1, kind=None, order=None, *, a_dot):
    return xp.take_along_axis(a_dot, xp.argsort(a, axis=axis, stable=True), axis=axis)


@vjp(name="linalg.cholesky")
def cholesky(a, *, ans, g):
    # JAX's rule, whose input is symmetrized first: sym(L^-T phi(L^T g) L^-1), phi the lower triangle with
    # the diagonal halved (``(tril(x) + tril(x, -1)) / 2``); the sum with its transpose written out
    return (
        0.25
        * xp.matrix_transpose(xp.linalg.inv(ans))
        @ (
            xp.tril(xp.matrix_transpose(ans) @ g)
            + xp.tril(xp.matrix_transpose(ans) @ g, -1)
            + xp.triu(xp.matrix_transpose(g) @ ans)
            + xp.triu(xp.matrix_transpose(g) @ ans, 1)
        )
        @ xp.linalg.inv(ans)
    )


@jvp(cholesky)
def cholesky_forward(a, *, ans, a_dot):
    # L phi(L^-1 sym(a_dot) L^-T)
    inverse = xp.linalg.inv(ans)
    y = inverse @ (a_dot + xp.matrix_transpose(a_dot)) @ xp.matrix_transpose(inverse)
    return 0.25 * (ans @ (xp.tril(y) + xp.tril(y, -1)))


@multilinear
def convolve(a, v, mode="full", *, g):
    # the transpose of a convolution is a correlation (a convolution with the other operand flipped) of the
    # cotangent padded back to the full convolution's length
    return (
        xp.convolve(xp.pad(g, rt.convolve_padding(a, v, mode)), xp.flip(v), "valid"),
        xp.convolve(xp.pad(g, rt.convolve_padding(a, v, mode)), xp.flip(a), "valid"),
    )
