"""Statistics written as compositions of ops with rules (``decompose``): the NaN-ignoring reductions,
weighted averages, quantiles, covariances, the trapezoid rule and histograms.

Each is JAX's own formula, so derivatives agree with ``jax.grad`` at ties
and NaNs too: a NaN is replaced *before* any arithmetic that would carry it
into a derivative (``where(isnan(a), 0, a - mean)``, not ``where(isnan(a), 0,
(a - mean) ** 2)``); a quantile interpolates the two sorted values around
``q * (n - 1)``, so its derivative goes to those two elements, split by the
interpolation weight.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import batch, decompose, nondiff

# the helpers' results are bin numbers and flags: the same for every example of a batch
_HELPERS = tuple(
    f"rt.{name}"
    for name in (
        "bins_are_edges", "bin_count", "common_bin_count", "bin_strides", "bin_grid_shape", "bin_grid_axes",
        "histogram_bounds",
    )
)  # fmt: skip
nondiff("shape logic: static numbers of bins", *_HELPERS)
batch("example", *_HELPERS)


@decompose
def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    return xp.sum(xp.where(xp.isnan(a), 0.0, a), axis=axis, keepdims=keepdims)


@decompose
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    count = xp.sum(xp.logical_not(xp.isnan(a)), axis=axis, keepdims=keepdims)
    return xp.nansum(a, axis=axis, keepdims=keepdims) / count


@decompose
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    # JAX: nan (with no gradient) where fewer than ddof + 1 values are not NaN
    centered = xp.where(xp.isnan(a), 0.0, a - xp.nanmean(a, axis=axis, keepdims=True))
    count = xp.sum(xp.logical_not(xp.isnan(a)), axis=axis, keepdims=keepdims) - ddof
    total = xp.sum(xp.square(centered), axis=axis, keepdims=keepdims)
    return xp.where(count <= 0, xp.nan, total) / xp.where(count <= 0, 1, count)


@decompose
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return xp.sqrt(xp.nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims))


@decompose
def nanmax(a, axis=None, out=None, keepdims=False):
    # JAX: a slice of NaNs only is NaN, with no gradient
    extreme = xp.max(xp.where(xp.isnan(a), -xp.inf, a), axis=axis, keepdims=keepdims)
    return xp.where(xp.all(xp.isnan(a), axis=axis, keepdims=keepdims), xp.nan, extreme)


@decompose
def nanmin(a, axis=None, out=None, keepdims=False):
    # JAX: a slice of NaNs only is NaN, with no gradient
    extreme = xp.min(xp.where(xp.isnan(a), xp.inf, a), axis=axis, keepdims=keepdims)
    return xp.where(xp.all(xp.isnan(a), axis=axis, keepdims=keepdims), xp.nan, extreme)


@decompose
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    return xp.prod(xp.where(xp.isnan(a), 1.0, a), axis=axis, keepdims=keepdims)


@decompose
def nancumsum(a, axis=None, dtype=None, out=None):
    return xp.cumsum(xp.where(xp.isnan(a), 0.0, a), axis=axis)


@decompose
def nancumprod(a, axis=None, dtype=None, out=None):
    return xp.cumprod(xp.where(xp.isnan(a), 1.0, a), axis=axis)


@decompose
def ptp(a, axis=None, out=None, keepdims=False):
    return xp.max(a, axis=axis, keepdims=keepdims) - xp.min(
        a, axis=axis, keepdims=keepdims
    )


@decompose
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        total = xp.sum(xp.ones_like(a), axis=axis, keepdims=keepdims)
        mean = xp.mean(a, axis=axis, keepdims=keepdims)
    else:
        w = xp.reshape(weights, rt.along_axis_shape(a, weights, axis))
        total = xp.sum(xp.broadcast_to(w, xp.shape(a)), axis=axis, keepdims=keepdims)
        mean = xp.sum(a * w, axis=axis, keepdims=keepdims) / total
    if returned:
        return mean, xp.broadcast_to(total, xp.shape(mean))
    return mean


@decompose
def quantile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    # the sorted values at floor(q * (n - 1)) and the next one, interpolated (NumPy's default method),
    # picked by a product with their weights (so q may differ per example under vmap)
    shape = rt.quantile_shape(a, q, axis, keepdims, method)
    ordered = xp.sort(rt.to_last(a, axis), axis=-1)
    position = q * (rt.last_length(ordered) - 1.0)
    low = xp.floor(position)
    high = xp.minimum(low + 1.0, rt.last_length(ordered) - 1.0)
    index = rt.sorted_positions(ordered, q)
    weights = (index == low) * (1.0 - (position - low)) + (index == high) * (
        position - low
    )
    values = xp.matmul(ordered, weights)
    return xp.reshape(xp.transpose(values, rt.quantile_order(values, q)), shape)


@decompose
def percentile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    return xp.quantile(a, q / 100.0, axis=axis, method=method, keepdims=keepdims)


@decompose
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return xp.quantile(a, 0.5, axis=axis, keepdims=keepdims)


@decompose
def cov(
    m,
    y=None,
    rowvar=True,
    bias=False,
    ddof=None,
    fweights=None,
    aweights=None,
    dtype=None,
):
    rows = xp.transpose(m, rt.transposed_rows(m, rowvar))
    rows = xp.reshape(rows, rt.rows_shape(rows))
    if y is not None:
        more = xp.transpose(y, rt.transposed_rows(y, rowvar))
        rows = xp.concatenate([rows, xp.reshape(more, rt.rows_shape(more))], axis=0)
    if ddof is None:
        if bias:
            ddof = 0
        else:
            ddof = 1
    if fweights is None and aweights is None:
        centered = rows - xp.mean(rows, axis=1, keepdims=True)
        products = xp.matmul(centered, xp.transpose(centered))
        return xp.squeeze(products / (rt.last_length(rows) - ddof))
    # NumPy's weights: frequencies and reliabilities, multiplied where both are given
    if aweights is None:
        weights = fweights
    elif fweights is None:
        weights = aweights
    else:
        weights = fweights * aweights
    total = xp.sum(weights)
    centered = rows - xp.sum(rows * weights, axis=1, keepdims=True) / total
    products = xp.matmul(centered * weights, xp.transpose(centered))
    if aweights is None:
        factor = total - ddof
    else:
        factor = total - ddof * xp.sum(weights * aweights) / total
    return xp.squeeze(products / factor)


@decompose
def corrcoef(x, y=None, rowvar=True, dtype=None):
    if y is None:
        c = xp.cov(x, rowvar=rowvar)
    else:
        c = xp.cov(x, y, rowvar=rowvar)
    deviation = xp.sqrt(xp.diag(c))
    c = c / xp.expand_dims(deviation, 1) / xp.expand_dims(deviation, 0)
    return xp.clip(c, -1.0, 1.0)


@decompose
def trapezoid(y, x=None, dx=1.0, axis=-1):
    values = xp.moveaxis(y, axis, -1)
    if x is None:
        widths = dx
    else:
        widths = xp.diff(xp.moveaxis(x, rt.trapezoid_axis(x, axis), -1), axis=-1)
    return xp.sum(widths * (values[..., 1:] + values[..., :-1]), axis=-1) / 2.0


@decompose(name="rt.cumulative_trapezoid")
def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    values = xp.moveaxis(y, axis, -1)
    if x is None:
        widths = dx
    else:
        widths = xp.diff(xp.moveaxis(x, rt.trapezoid_axis(x, axis), -1), axis=-1)
    out = xp.cumsum(widths * (values[..., 1:] + values[..., :-1]) / 2.0, axis=-1)
    if initial is not None:
        out = xp.concatenate([xp.zeros_like(values[..., :1]) + initial, out], axis=-1)
    return xp.moveaxis(out, -1, axis)


@decompose
def nanquantile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    # NaNs sort last: each slice interpolates among its own values, q * (count - 1) apart; a slice of
    # NaNs only is NaN (JAX's)
    shape = rt.quantile_shape(a, q, axis, keepdims, method)
    ordered = xp.sort(rt.to_last(a, axis), axis=-1)
    present = xp.logical_not(xp.isnan(ordered))
    count = xp.sum(present, axis=-1, keepdims=True)
    count = xp.reshape(count, rt.with_unit_axes(count, q))
    values = xp.reshape(xp.where(present, ordered, 0.0), rt.with_unit_axes(ordered, q))
    position = q * (count - 1.0)
    low = xp.floor(position)
    high = xp.minimum(low + 1.0, count - 1.0)
    index = rt.sorted_positions(ordered, q)
    weights = (index == low) * (1.0 - (position - low)) + (index == high) * (
        position - low
    )
    empty = xp.where(count > 0, 0.0, xp.nan)
    picked = xp.sum(values * weights + empty, axis=rt.positions_axis(q))
    return xp.reshape(xp.transpose(picked, rt.quantile_order(picked, q)), shape)


@decompose
def nanpercentile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    return xp.nanquantile(a, q / 100.0, axis=axis, method=method, keepdims=keepdims)


@decompose
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return xp.nanquantile(a, 0.5, axis=axis, keepdims=keepdims)


@decompose
def histogram_bin_edges(a, bins=10, range=None, weights=None):
    # JAX's: ``bins`` evenly spaced intervals between the values' extremes (or ``range``), an empty
    # interval widened by a half on both sides; edges given as an array are returned as they are
    if range is None:
        low = xp.min(a)
        high = xp.max(a)
    else:
        low = range[0]
        high = range[1]
    empty = high - low == 0
    low = xp.where(empty, low - 0.5, low)
    high = xp.where(empty, high + 0.5, high)
    spaced = xp.linspace(low, high, rt.bin_count(bins) + 1)
    return xp.where(rt.bins_are_edges(bins), bins, spaced)


@decompose
def histogram(a, bins=10, range=None, density=None, weights=None):
    # JAX's: each value's bin by ``searchsorted`` (the last edge closes the last bin); the counts, or the
    # weights' sums, by an index update whose two extra slots take the values outside the edges
    values = xp.ravel(a)
    edges = xp.histogram_bin_edges(values, bins, range)
    place = xp.searchsorted(edges, values, side="right")
    place = xp.where(values == edges[-1], rt.bin_count(edges), place)
    slots = xp.zeros(rt.bin_count(edges) + 2, dtype=values.dtype)
    if weights is None:
        counts = rt.index_add(slots, place, 1.0)[1:-1]
    else:
        counts = rt.index_add(slots, place, xp.ravel(weights))[1:-1]
    if density:
        counts = counts / xp.diff(edges) / xp.sum(counts)
    return counts, edges


@decompose
def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    # JAX's, for one number of bins on every axis: each axis's edges as ``histogram_bin_edges``'s, each
    # sample's bin along it by counting the edges at or below it (``searchsorted(side="right")``), the
    # samples outside the edges left out; the counts, or the weights' sums, by an index update
    count = rt.common_bin_count(bins, sample)
    if range is None:
        low = xp.min(sample, axis=0)
        high = xp.max(sample, axis=0)
    else:
        low, high = rt.histogram_bounds(range, sample)
    empty = high - low == 0
    low = xp.where(empty, low - 0.5, low)
    high = xp.where(empty, high + 0.5, high)
    edges = xp.linspace(low, high, count + 1, axis=1)
    place = xp.sum(sample[:, :, None] >= edges[None, :, :], axis=-1)
    place = xp.where(sample == edges[:, -1], place - 1, place)
    inside = xp.all(xp.logical_and(place >= 1, place <= count), axis=1)
    flat = xp.where(
        inside, xp.sum((place - 1) * rt.bin_strides(count, sample), axis=1), 0
    )
    if weights is None:
        mass = xp.where(inside, 1.0, 0.0)
    else:
        mass = xp.where(inside, weights, 0.0)
    slots = xp.zeros(rt.bin_grid_shape(count, sample), dtype=sample.dtype)
    hist = xp.reshape(
        rt.index_add(xp.ravel(slots), flat, mass), rt.bin_grid_shape(count, sample)
    )
    if density:
        axes, along = rt.bin_grid_axes(count, sample)
        volume = xp.prod(xp.diff(edges, axis=1)[axes, along], axis=1)
        hist = (
            hist / xp.sum(hist) / xp.reshape(volume, rt.bin_grid_shape(count, sample))
        )
    return hist, xp.unstack(edges)


@decompose
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    # (NumPy's order of parameters, here as for ``histogram`` and ``histogramdd``: JAX swaps the last two)
    hist, edges = xp.histogramdd(
        xp.stack([x, y], axis=1), bins, range, density=density, weights=weights
    )
    return hist, edges[0], edges[1]
