"""Rules for the runtime helpers of products and linear algebra that derivative code calls (higher orders).

See ``derivative_ops.py`` for the conventions. Here:

- ``prod`` and ``cumprod``: the products that leave out element ``j`` are the
  products of row ``j`` of ``leave_one_out(a) + eye``, so their derivatives
  are ``prod_vjp`` / ``cumprod_*`` again, on that matrix (exact at zeros);
- ``linalg.norm``: partial derivatives of the p-norms' gradient in closed
  form (``norm_partial``); for the norms of singular values, ``norm_hvp`` is
  a Hessian-vector product that is not differentiated again (an error);
- ``linalg.solve``: solves and products keeping NumPy's vector convention.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import jvp, linear, multilinear, vjp

# --- prod, cumprod: products leaving out one element are rows of leave_one_out(a) + eye ---------


@linear(name="rt.to_last")
def to_last(a, axis=None, *, g):
    return rt.from_last(g, a, axis), None


@linear(name="rt.from_last")
def from_last(t, like, axis=None, *, g):
    return rt.to_last(g, axis), None, None


@linear(name="rt.leave_one_out")
def leave_one_out(a, *, g):
    return rt.leave_one_out_vjp(g)


@linear(name="rt.leave_one_out_vjp")
def leave_one_out_vjp(w, *, g):
    return rt.leave_one_out(g)


@vjp(name="rt.prod_vjp")
def prod_vjp(ct, a, axis=None, keepdims=False, *, g):
    rows = rt.leave_one_out(rt.to_last(a, axis)) + rt.eye_last(a, axis)
    weights = rt.to_last(g * rt.reduced_like(ct, a, axis, keepdims), axis)
    return (
        xp.sum(
            g * rt.prod_vjp(xp.ones_like(ct), a, axis, keepdims),
            axis=axis,
            keepdims=keepdims,
        ),
        rt.from_last(rt.leave_one_out_vjp(rt.prod_vjp(weights, rows, -1)), a, axis),
    )


@jvp(prod_vjp)
def prod_vjp_forward(ct, a, axis=None, keepdims=False, *, ct_dot, a_dot):
    rows = rt.leave_one_out(rt.to_last(a, axis)) + rt.eye_last(a, axis)
    weights = rt.to_last(rt.reduced_like(ct, a, axis, keepdims), axis)
    return (
        rt.prod_vjp(ct_dot, a, axis, keepdims),
        rt.from_last(
            xp.sum(
                rt.prod_vjp(weights, rows, -1)
                * rt.leave_one_out(rt.to_last(a_dot, axis)),
                axis=-1,
            ),
            a,
            axis,
        ),
    )


@vjp(name="rt.cumprod_vjp")
def cumprod_vjp(ct, a, axis=None, *, g):
    rows = rt.leave_one_out(rt.to_last(a, axis)) + rt.eye_last(a, axis)
    weights = xp.triu(
        xp.expand_dims(rt.to_last(g, axis), -1)
        * xp.expand_dims(rt.to_last(ct, axis), -2)
    )
    return (
        rt.cumprod_jvp(g, a, axis),
        rt.from_last(rt.leave_one_out_vjp(rt.cumprod_vjp(weights, rows, -1)), a, axis),
    )


@jvp(cumprod_vjp)
def cumprod_vjp_forward(ct, a, axis=None, *, ct_dot, a_dot):
    rows = rt.leave_one_out(rt.to_last(a, axis)) + rt.eye_last(a, axis)
    partials_dot = xp.triu(
        rt.cumprod_jvp(rt.leave_one_out(rt.to_last(a_dot, axis)), rows, -1)
    )
    return (
        rt.cumprod_vjp(ct_dot, a, axis),
        rt.from_last(
            xp.sum(partials_dot * xp.expand_dims(rt.to_last(ct, axis), -2), axis=-1),
            a,
            axis,
        ),
    )


@vjp(name="rt.cumprod_jvp")
def cumprod_jvp(t, a, axis=None, *, g):
    rows = rt.leave_one_out(rt.to_last(a, axis)) + rt.eye_last(a, axis)
    weights = xp.triu(
        xp.expand_dims(rt.to_last(t, axis), -1)
        * xp.expand_dims(rt.to_last(g, axis), -2)
    )
    return (
        rt.cumprod_vjp(g, a, axis),
        rt.from_last(rt.leave_one_out_vjp(rt.cumprod_vjp(weights, rows, -1)), a, axis),
    )


@jvp(cumprod_jvp)
def cumprod_jvp_forward(t, a, axis=None, *, ans, t_dot, a_dot):
    rows = rt.leave_one_out(rt.to_last(a, axis)) + rt.eye_last(a, axis)
    partials_dot = xp.triu(
        rt.cumprod_jvp(rt.leave_one_out(rt.to_last(a_dot, axis)), rows, -1)
    )
    return (
        rt.cumprod_jvp(t_dot, a, axis),
        rt.from_last(
            xp.sum(partials_dot * xp.expand_dims(rt.to_last(t, axis), -1), axis=-2),
            ans,
            axis,
        ),
    )


# --- linalg.norm ---------------------------------------------------------------------------------


@vjp(name="rt.norm_vjp")
def norm_vjp(ct, x, norm, ord=None, axis=None, keepdims=False, *, g):
    axes = rt.norm_axes(x, ord, axis)
    return (
        xp.sum(
            g * rt.norm_vjp(xp.ones_like(ct), x, norm, ord, axis, keepdims),
            axis=axes,
            keepdims=keepdims,
        ),
        rt.norm_hvp(ct, x, norm, g, ord, axis, keepdims),
        xp.sum(
            rt.norm_partial(ct, x, norm, ord, axis, keepdims, 0, 1) * g,
            axis=axes,
            keepdims=keepdims,
        ),
    )


@jvp(norm_vjp)
def norm_vjp_forward(
    ct, x, norm, ord=None, axis=None, keepdims=False, *, ct_dot, x_dot, norm_dot
):
    spread = rt.reduced_like(norm_dot, x, rt.norm_axes(x, ord, axis), keepdims)
    return (
        rt.norm_vjp(ct_dot, x, norm, ord, axis, keepdims),
        rt.norm_hvp(ct, x, norm, x_dot, ord, axis, keepdims),
        rt.norm_partial(ct, x, norm, ord, axis, keepdims, 0, 1) * spread,
    )


@vjp(name="rt.norm_hvp")
def norm_hvp(ct, x, norm, v, ord=None, axis=None, keepdims=False, *, g):
    axes = rt.norm_axes(x, ord, axis)
    return (
        xp.sum(
            g * rt.norm_hvp(xp.ones_like(ct), x, norm, v, ord, axis, keepdims),
            axis=axes,
            keepdims=keepdims,
        ),
        rt.norm_partial(ct, x, norm, ord, axis, keepdims, 2, 0) * v * g
        + rt.norm_svd_third(ct, x, v, g, ord, axis, keepdims),
        xp.sum(
            rt.norm_partial(ct, x, norm, ord, axis, keepdims, 1, 1) * v * g,
            axis=axes,
            keepdims=keepdims,
        ),
        rt.norm_hvp(ct, x, norm, g, ord, axis, keepdims),
    )


@jvp(norm_hvp)
def norm_hvp_forward(
    ct,
    x,
    norm,
    v,
    ord=None,
    axis=None,
    keepdims=False,
    *,
    ct_dot,
    x_dot,
    norm_dot,
    v_dot,
):
    spread = rt.reduced_like(norm_dot, x, rt.norm_axes(x, ord, axis), keepdims)
    return (
        rt.norm_hvp(ct_dot, x, norm, v, ord, axis, keepdims),
        rt.norm_partial(ct, x, norm, ord, axis, keepdims, 2, 0) * v * x_dot
        + rt.norm_svd_third(ct, x, v, x_dot, ord, axis, keepdims),
        rt.norm_partial(ct, x, norm, ord, axis, keepdims, 1, 1) * v * spread,
        rt.norm_hvp(ct, x, norm, v_dot, ord, axis, keepdims),
    )


@vjp(name="rt.norm_partial")
def norm_partial(ct, x, norm, ord=None, axis=None, keepdims=False, dx=0, dnorm=0, *, g):
    axes = rt.norm_axes(x, ord, axis)
    return (
        xp.sum(
            g
            * rt.norm_partial(
                xp.ones_like(ct), x, norm, ord, axis, keepdims, dx, dnorm
            ),
            axis=axes,
            keepdims=keepdims,
        ),
        rt.norm_partial(ct, x, norm, ord, axis, keepdims, dx + 1, dnorm) * g,
        xp.sum(
            rt.norm_partial(ct, x, norm, ord, axis, keepdims, dx, dnorm + 1) * g,
            axis=axes,
            keepdims=keepdims,
        ),
    )


@jvp(norm_partial)
def norm_partial_forward(
    ct,
    x,
    norm,
    ord=None,
    axis=None,
    keepdims=False,
    dx=0,
    dnorm=0,
    *,
    ct_dot,
    x_dot,
    norm_dot,
):
    spread = rt.reduced_like(norm_dot, x, rt.norm_axes(x, ord, axis), keepdims)
    return (
        rt.norm_partial(ct_dot, x, norm, ord, axis, keepdims, dx, dnorm),
        rt.norm_partial(ct, x, norm, ord, axis, keepdims, dx + 1, dnorm) * x_dot,
        rt.norm_partial(ct, x, norm, ord, axis, keepdims, dx, dnorm + 1) * spread,
    )


# --- linalg.solve: solves and products with NumPy's vector convention (``b`` read for its rank) -------


@vjp(name="rt.solve_like", roles={"b": "data"})
def solve_like(a, v, b, *, ans, g):
    v_bar = rt.solve_like(xp.swapaxes(a, -1, -2), g, b)
    return (
        rt.unbroadcast(-rt.solve_outer(v_bar, ans, b), a),
        rt.unbroadcast(v_bar, v),
        None,
    )


@jvp(solve_like)
def solve_like_forward(a, v, b, *, ans, a_dot, v_dot):
    return (
        -rt.solve_like(a, rt.solve_matvec(a_dot, ans, b), b),
        rt.solve_like(a, v_dot, b),
        None,
    )


@multilinear(name="rt.solve_matvec", roles={"b": "data"})
def solve_matvec(m, v, b, *, g):
    return (
        rt.unbroadcast(rt.solve_outer(g, v, b), m),
        rt.unbroadcast(rt.solve_matvec(xp.swapaxes(m, -1, -2), g, b), v),
        None,
    )


@multilinear(name="rt.solve_outer", roles={"b": "data"})
def solve_outer(u, v, b, *, g):
    return (
        rt.unbroadcast(rt.solve_matvec(g, v, b), u),
        rt.unbroadcast(rt.solve_matvec(xp.swapaxes(g, -1, -2), u, b), v),
        None,
    )


@vjp(name="rt.solve_vjp_b", roles={"b": "data"})
def solve_vjp_b(ct, a, b, *, g):
    b_bar = rt.solve_like(xp.swapaxes(a, -1, -2), ct, b)
    ct_bar = rt.solve_like(a, rt.broadcast_like(g, b_bar), b)
    return (
        rt.unbroadcast(ct_bar, ct),
        rt.unbroadcast(-xp.swapaxes(rt.solve_outer(ct_bar, b_bar, b), -1, -2), a),
        None,
    )


@jvp(solve_vjp_b)
def solve_vjp_b_forward(ct, a, b, *, ct_dot, a_dot):
    at = xp.swapaxes(a, -1, -2)
    b_bar = rt.solve_like(at, ct, b)
    return (
        rt.solve_vjp_b(ct_dot, a, b),
        rt.unbroadcast(
            -rt.solve_like(
                at, rt.solve_matvec(xp.swapaxes(a_dot, -1, -2), b_bar, b), b
            ),
            b,
        ),
        None,
    )


@vjp(name="rt.solve_vjp_a", roles={"b": "data"})
def solve_vjp_a(ct, a, b, x, *, g):
    b_bar = rt.solve_like(xp.swapaxes(a, -1, -2), ct, b)
    ct_bar = rt.solve_like(a, -rt.solve_matvec(g, x, b), b)
    return (
        rt.unbroadcast(ct_bar, ct),
        rt.unbroadcast(-xp.swapaxes(rt.solve_outer(ct_bar, b_bar, b), -1, -2), a),
        None,
        rt.unbroadcast(-rt.solve_matvec(xp.swapaxes(g, -1, -2), b_bar, b), x),
    )


@jvp(solve_vjp_a)
def solve_vjp_a_forward(ct, a, b, x, *, ct_dot, a_dot, x_dot):
    at = xp.swapaxes(a, -1, -2)
    b_bar = rt.solve_like(at, ct, b)
    return (
        rt.solve_vjp_a(ct_dot, a, b, x),
        rt.unbroadcast(
            rt.solve_outer(
                rt.solve_like(
                    at, rt.solve_matvec(xp.swapaxes(a_dot, -1, -2), b_bar, b), b
                ),
                x,
                b,
            ),
            a,
        ),
        None,
        rt.solve_vjp_a(ct, a, b, x_dot),
    )


@vjp(name="rt.solve_jvp_a", roles={"b": "data"})
def solve_jvp_a(t, a, b, x, *, ans, g):
    product_bar = -rt.solve_like(xp.swapaxes(a, -1, -2), g, b)
    return (
        rt.unbroadcast(rt.solve_outer(product_bar, x, b), t),
        rt.unbroadcast(rt.solve_outer(product_bar, ans, b), a),
        None,
        rt.unbroadcast(rt.solve_matvec(xp.swapaxes(t, -1, -2), product_bar, b), x),
    )


@jvp(solve_jvp_a)
def solve_jvp_a_forward(t, a, b, x, *, ans, t_dot, a_dot, x_dot):
    return (
        rt.solve_jvp_a(t_dot, a, b, x),
        -rt.solve_like(a, rt.solve_matvec(a_dot, ans, b), b),
        None,
        rt.solve_jvp_a(t, a, b, x_dot),
    )
