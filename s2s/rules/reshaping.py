"""Array-building, polynomial and interpolation functions written as compositions of ops with rules (``decompose``).

Shapes, axes and constant coefficients come from ``runtime/op_shapes.py``
helpers, which read static shapes only; the data flows through ops that have
rules in every mode (``reshape``, ``flip``, ``take``, ``matmul``, ``power``,
``pad``, ``convolve``), so each function gets its forward, reverse and
batching rules from theirs.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import batch, decompose, nondiff

# the helpers' results are shapes, axes and constants: the same for every example of a batch
_HELPERS = tuple(
    f"rt.{name}"
    for name in (
        "atleast_shape", "sorted_positions", "quantile_order", "quantile_shape", "last_length", "transposed_rows",
        "rows_shape", "diagonal_mask", "diagonal_rows", "along_axis_shape", "reduced_shape",
        "initial_padding", "poly_padding", "descending_powers", "vander_powers", "polyder_index",
        "polyder_weights", "trapezoid_axis", "special.half_steps", "interp_last",
        "interp_epsilon", "correlate_window", "reduced_size", "with_unit_axes", "positions_axis",
        "tensor_matrix_shape", "tensor_trailing_shape", "tensorinv_shape", "polyint_divisors", "polyint_constants", "polyfit_rcond", "polyfit_weight_shape",
        "poly_start", "polydiv_steps", "polydiv_quotient", "polydiv_kept", "sliding_positions", "rows_shape_along", "rows_back_shape", "rows_back_axis",
    )
)  # fmt: skip
nondiff("shape logic: static shapes, axes and constant coefficients", *_HELPERS)
batch("example", *_HELPERS)


@decompose(name="rt.sliding_window_view")
def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    # every window: a gather of ``x`` at positions its shape fixes (``runtime/stride_tricks.py``)
    return xp.take(
        xp.reshape(x, (-1,)), rt.sliding_positions(x, window_shape, axis, writeable)
    )


# ``jax.lax.top_k``: the largest entries, gathered at the positions a sort finds
nondiff("positions: integers", "rt.top_k_indices")
batch("trailing", "rt.top_k_indices")


@decompose(name="rt.top_k")
def top_k(operand, k):
    indices = rt.top_k_indices(operand, k)
    return xp.take_along_axis(operand, indices, axis=-1), indices


# ``np.apply_along_axis(f, axis, arr)``: ``jax.vmap(f)`` over rows (``frontend/numpy_maps.py``)
@decompose(name="rt.rows_along")
def rows_along(arr, axis):
    return xp.reshape(xp.moveaxis(arr, axis, -1), rt.rows_shape_along(arr, axis))


@decompose(name="rt.rows_back")
def rows_back(out, arr, axis):
    shaped = xp.reshape(out, rt.rows_back_shape(out, arr, axis))
    return xp.moveaxis(shaped, -1, rt.rows_back_axis(out, arr, axis))


@decompose
def atleast_1d(arys):
    return xp.reshape(arys, rt.atleast_shape(arys, 1))


@decompose
def atleast_2d(arys):
    return xp.reshape(arys, rt.atleast_shape(arys, 2))


@decompose
def atleast_3d(arys):
    return xp.reshape(arys, rt.atleast_shape(arys, 3))


@decompose
def fliplr(m):
    return xp.flip(m, axis=1)


@decompose
def flipud(m):
    return xp.flip(m, axis=0)


@decompose
def rot90(m, k=1, axes=(0, 1)):
    if k % 4 == 0:
        return m
    if k % 4 == 1:
        return xp.swapaxes(xp.flip(m, axes[1]), axes[0], axes[1])
    if k % 4 == 2:
        return xp.flip(xp.flip(m, axes[0]), axes[1])
    return xp.flip(xp.swapaxes(m, axes[0], axes[1]), axes[1])


@decompose
def diagonal(a, offset=0, axis1=0, axis2=1):
    # the diagonal's element of each row, picked by a 0/1 mask, then the rows where it exists
    moved = xp.moveaxis(a, (axis1, axis2), (-2, -1))
    picked = xp.sum(moved * rt.diagonal_mask(moved, offset), axis=-1)
    return xp.take(picked, rt.diagonal_rows(moved, offset), axis=-1)


@decompose
def diagflat(v, k=0):
    return xp.diag(xp.ravel(v), k)


@decompose
def append(arr, values, axis=None):
    return xp.concatenate([arr, values], axis=axis)


@decompose
def ediff1d(ary, to_end=None, to_begin=None):
    out = xp.diff(xp.ravel(ary))
    if to_begin is not None:
        out = xp.concatenate([xp.ravel(to_begin), out])
    if to_end is not None:
        out = xp.concatenate([out, xp.ravel(to_end)])
    return out


@decompose
def matvec(x1, x2):
    return xp.squeeze(xp.matmul(x1, xp.expand_dims(x2, -1)), -1)


@decompose
def vecmat(x1, x2):
    return xp.squeeze(xp.matmul(xp.expand_dims(x1, -2), x2), -2)


@decompose
def vecdot(x1, x2, axis=-1):
    return xp.sum(x1 * x2, axis=axis)


@decompose
def cumulative_sum(x, axis=None, dtype=None, include_initial=False):
    out = xp.cumsum(x, axis=axis)
    if include_initial:
        out = xp.pad(out, rt.initial_padding(x, axis))
    return out


@decompose
def cumulative_prod(x, axis=None, dtype=None, include_initial=False):
    out = xp.cumprod(x, axis=axis)
    if include_initial:
        out = xp.pad(out - 1.0, rt.initial_padding(x, axis)) + 1.0
    return out


@decompose
def polyval(p, x):
    # sum of p[k] * x ** (n - 1 - k); the power's derivative is 0 where its exponent is (no 0 ** -1)
    return xp.sum(p * xp.power(xp.expand_dims(x, -1), rt.descending_powers(p)), axis=-1)


@decompose
def polyadd(a1, a2):
    return xp.pad(a1, rt.poly_padding(a1, a2)) + xp.pad(a2, rt.poly_padding(a2, a1))


@decompose
def polysub(a1, a2):
    return xp.pad(a1, rt.poly_padding(a1, a2)) - xp.pad(a2, rt.poly_padding(a2, a1))


@decompose
def polymul(a1, a2):
    return xp.convolve(a1, a2)


@decompose
def polyder(p, m=1):
    return xp.take(p, rt.polyder_index(p, m)) * rt.polyder_weights(p, m)


@decompose
def vander(x, N=None, increasing=False):
    return xp.power(xp.expand_dims(x, -1), rt.vander_powers(x, N, increasing))


@decompose
def interp(x, xp_, fp, left=None, right=None, period=None):
    # JAX's formula: the segment of the sample points ``xp_`` (NumPy's ``xp``) each x falls in, then the
    # line through its ends; a segment of zero width takes its left value (no nan gradient)
    i = xp.clip(xp.searchsorted(xp_, x, side="right"), 1, rt.interp_last(xp_, period))
    width = xp_[i] - xp_[i - 1]
    flat = xp.abs(width) <= rt.interp_epsilon(xp_)
    slope = (fp[i] - fp[i - 1]) / xp.where(flat, 1.0, width)
    f = xp.where(flat, fp[i - 1], fp[i - 1] + (x - xp_[i - 1]) * slope)
    if left is None:
        f = xp.where(x < xp_[0], fp[0], f)
    else:
        f = xp.where(x < xp_[0], left, f)
    if right is None:
        f = xp.where(x > xp_[-1], fp[-1], f)
    else:
        f = xp.where(x > xp_[-1], right, f)
    return f


@decompose
def correlate(a, v, mode="valid"):
    # the full convolution with v reversed, then the window NumPy keeps for ``mode``
    return xp.take(xp.convolve(a, xp.flip(v)), rt.correlate_window(a, v, mode))


@decompose
def polyint(p, m=1, k=None):
    # the coefficients and the integration constants (the first one's integrated m - 1 more times),
    # each divided by the falling factorial of the power it reaches
    if k is None:
        k = rt.polyint_constants(p, m)
    joined = xp.concatenate([p, xp.broadcast_to(k, (m,))])
    return joined / rt.polyint_divisors(p, m)


@decompose
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    # JAX's: least squares on the Vandermonde matrix, its columns scaled to unit norm
    cutoff = rt.polyfit_rcond(x, rcond, full, cov)
    lhs = xp.vander(x, deg + 1)
    rhs = y
    if w is not None:
        lhs = lhs * xp.reshape(w, (-1, 1))
        rhs = rhs * xp.reshape(w, rt.polyfit_weight_shape(w, y))
    scale = xp.sqrt(xp.sum(lhs * lhs, axis=0))
    c = xp.linalg.lstsq(lhs / scale, rhs, rcond=cutoff)[0]
    return xp.transpose(xp.transpose(c) / scale)


@decompose
def poly(seq_of_zeros):
    # JAX's for a vector of roots: the coefficients of the product of (x - r), one root at a time
    coeffs = rt.poly_start(seq_of_zeros)
    for r in seq_of_zeros:
        coeffs = coeffs - r * xp.concatenate(
            [xp.zeros(1, dtype=coeffs.dtype), coeffs[:-1]]
        )
    return coeffs


@decompose
def polydiv(u, v):
    # NumPy's: the remainder without the leading coefficients the division zeroes (NumPy also drops
    # further ones that come out zero, a length that depends on the values)
    quotient, remainder = rt.polydiv(u, v)
    return quotient, remainder[rt.polydiv_kept(u, v)]


@decompose(name="rt.polydiv")
def jax_polydiv(u, v, trim_leading_zeros=False):
    # JAX's long division: at step k, the quotient's k-th coefficient is the remainder's k-th over v's
    # first, and that multiple of v (shifted under it) leaves the remainder
    picks, places, slots = rt.polydiv_steps(u, v, trim_leading_zeros)
    shifted = xp.take(xp.concatenate([v, xp.zeros(1, dtype=v.dtype)]), places)
    quotient = rt.polydiv_quotient(u, v)
    remainder = u * 1.0
    for pick, under, slot in zip(picks, shifted, slots):
        d = xp.sum(remainder * pick) / v[0]
        quotient = quotient + d * slot
        remainder = remainder - d * under
    return quotient, remainder
