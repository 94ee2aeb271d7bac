"""Static shapes, axes and constants of the ops s2s writes as compositions (``s2s/rules/reshaping.py``,
``s2s/rules/statistics.py``): each reads only its arguments' shapes and Python values, so it runs at trace
time under ``jax.jit`` and carries no derivative.
"""

import numpy as np

from .located import Refusal


def _ndim(a):
    return np.ndim(a)


def atleast_shape(a, rank):
    """``np.atleast_1d/2d/3d``'s shape for ``a``: 1-D ``(N,)`` is ``(1, N)`` then ``(1, N, 1)``, 2-D gets a last axis."""
    shape = tuple(np.shape(a))
    if len(shape) >= rank:
        return shape
    if rank == 3 and len(shape) == 2:
        return (*shape, 1)
    if rank == 3:
        return (1, *(shape or (1,)), 1)
    return (1,) * (rank - len(shape)) + shape


def quantile_order(r, q):
    """The transpose that puts the trailing axes of ``q`` (``take``'s output) first, as NumPy lays quantiles out."""
    lead, rank = _ndim(r) - _ndim(q), _ndim(r)
    return (*range(lead, rank), *range(lead))


def quantile_shape(a, q, axis, keepdims, method="linear"):
    """The shape of ``np.quantile(a, q, axis, keepdims=...)``; only the ``linear`` method is written as a composition."""
    if method not in ("linear", "midpoint") or (
        method == "midpoint" and np.any(np.asarray(q) != 0.5)
    ):
        raise Refusal(
            f"quantile method {method!r}",
            "s2s differentiates the 'linear' method (NumPy's default) and 'midpoint' for medians",
        )
    shape = tuple(np.shape(a))
    axes = (
        range(len(shape)) if axis is None else np.atleast_1d(axis) % max(len(shape), 1)
    )
    axes = {int(i) for i in axes}
    if keepdims:
        kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    else:
        kept = tuple(n for i, n in enumerate(shape) if i not in axes)
    return (*np.shape(q), *kept)


def sorted_positions(a, q):
    """``0, 1, ..., n - 1`` for ``a``'s last axis, as floats, with a unit axis for each axis of ``q``."""
    n = np.shape(a)[-1]
    return np.arange(n, dtype=float).reshape((n,) + (1,) * _ndim(q))


def last_length(a):
    """The length of ``a``'s last axis, as a float (a constant of interpolation weights)."""
    return float(np.shape(a)[-1])


def transposed_rows(m, rowvar):
    """The axes of the transpose that makes variables rows (``np.cov``'s ``rowvar=False`` on a 2-D array)."""
    return (1, 0) if _ndim(m) == 2 and not rowvar else tuple(range(_ndim(m)))


def rows_shape(m):
    """``np.cov``'s observations as a 2-D array: a 1-D ``m`` is one variable, a row."""
    shape = tuple(np.shape(m))
    return shape if len(shape) == 2 else (1, *shape)


def diagonal_mask(a, offset):
    """Ones where the last two axes' index pair is on diagonal ``offset``, zeros elsewhere (``a``'s dtype)."""
    n, m = np.shape(a)[-2:]
    return np.eye(
        n, m, offset, dtype=np.result_type(getattr(a, "dtype", float), np.float32)
    )


def diagonal_rows(a, offset):
    """The rows of the last two axes whose element on diagonal ``offset`` exists."""
    n, m = np.shape(a)[-2:]
    first = max(-offset, 0)
    length = max(min(n - first, m - max(offset, 0)), 0)
    return np.arange(first, first + length)


def along_axis_shape(a, weights, axis):
    """``np.average``'s weights shape: 1-D weights lie along ``axis`` of ``a``; weights shaped like ``a`` stay."""
    if _ndim(weights) == _ndim(a):
        return tuple(np.shape(weights))
    if axis is None or _ndim(weights) != 1:
        raise TypeError(
            "np.average: weights differ in shape from `a` and need `axis` (1-D weights along one axis)"
        )
    shape = [1] * _ndim(a)
    shape[int(axis) % _ndim(a)] = np.shape(weights)[0]
    return tuple(shape)


def reduced_shape(a, axis, keepdims):
    """The shape of a reduction of ``a`` over ``axis`` (None: all), with or without the reduced axes kept."""
    shape = tuple(np.shape(a))
    axes = (
        range(len(shape)) if axis is None else np.atleast_1d(axis) % max(len(shape), 1)
    )
    axes = {int(i) for i in axes}
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def initial_padding(a, axis):
    """``pad`` widths that put one leading zero along ``axis`` (``include_initial=True``)."""
    widths = [(0, 0)] * max(_ndim(a), 1)
    widths[0 if axis is None else int(axis) % _ndim(a)] = (1, 0)
    return tuple(widths)


def poly_padding(a, b):
    """``pad`` widths that bring the coefficients ``a`` to ``b``'s length (leading zeros: high powers)."""
    return ((max(np.shape(b)[-1] - np.shape(a)[-1], 0), 0),)


def descending_powers(p, dtype=None):
    """The exponents of ``np.polyval``'s terms: ``len(p) - 1`` down to 0, as floats."""
    return np.arange(np.shape(p)[-1] - 1, -1, -1, dtype=float)


def vander_powers(x, n, increasing):
    """The exponents of ``np.vander``'s columns."""
    n = np.shape(x)[-1] if n is None else int(n)
    powers = np.arange(n, dtype=float)
    return powers if increasing else powers[::-1]


def polyder_index(p, m):
    """The coefficients of ``p`` that survive ``m`` derivatives (all but the last ``m``)."""
    return np.arange(max(np.shape(p)[-1] - int(m), 0))


def polyder_weights(p, m):
    """The factor of each surviving coefficient after ``m`` derivatives: a falling factorial of its power."""
    n = np.shape(p)[-1]
    powers = np.arange(n - 1, int(m) - 1, -1, dtype=float)
    weights = np.ones_like(powers)
    for k in range(int(m)):
        weights *= powers - k
    return weights


def trapezoid_axis(x, axis):
    """The axis of sample points ``x`` that ``np.trapezoid`` integrates along: a 1-D ``x`` has only one."""
    return -1 if _ndim(x) == 1 else axis


def interp_last(xp_, period=None):
    """The last segment index of ``np.interp``'s sample points (``period`` is not written as a composition)."""
    if period is not None:
        raise Refusal(
            "np.interp with `period`",
            "wrap x and the sample points into one period yourself (x % period), then call np.interp",
        )
    return np.shape(xp_)[-1] - 1


def interp_epsilon(xp_):
    """JAX's width below which a segment of ``np.interp`` is flat: the spacing of the dtype's epsilon."""
    dtype = np.result_type(getattr(xp_, "dtype", float), np.float32)
    return float(np.spacing(np.finfo(dtype).eps))


def correlate_window(a, v, mode):
    """The indices of ``np.correlate(a, v, mode)`` in the full convolution of ``a`` with ``v`` reversed."""
    n, m = np.shape(a)[-1], np.shape(v)[-1]
    if mode == "full":
        return np.arange(n + m - 1)
    if mode == "valid":
        return np.arange(min(n, m) - 1, max(n, m))
    if mode == "same":
        start = (m - 1) // 2 if n >= m else n // 2
        return np.arange(start, start + max(n, m))
    raise ValueError(f"mode must be 'valid', 'same' or 'full', got {mode!r}")


def reduced_size(a, axis, where=None):
    """How many elements a reduction of ``a`` over ``axis`` (None: all) combines, as a float."""
    if where is not None:
        raise Refusal("`where=` of a reduction", "mask the values with np.where first")
    shape = np.shape(a)
    axes = (
        range(len(shape)) if axis is None else np.atleast_1d(axis) % max(len(shape), 1)
    )
    return float(np.prod([shape[int(i)] for i in axes]))


def with_unit_axes(a, q) -> tuple:
    """``a``'s shape with a unit axis for each axis of ``q`` (quantiles per slice, one per ``q``)."""
    return (*np.shape(a), *(1,) * _ndim(q))


def positions_axis(q) -> int:
    """The axis of sorted positions once ``with_unit_axes`` put ``q``'s axes after it."""
    return -1 - _ndim(q)


def tensor_matrix_shape(a, ind, axes=None) -> tuple:
    """``a`` as a matrix: its first ``ind`` axes as rows, the others as columns (``tensorsolve``, ``tensorinv``)."""
    if axes is not None:
        raise Refusal(
            "`np.linalg.tensorsolve` with `axes`",
            "move those axes of `a` to the end first (np.moveaxis), then call it without `axes`",
        )
    shape = np.shape(a)
    return (int(np.prod(shape[:ind], dtype=int)), int(np.prod(shape[ind:], dtype=int)))


def tensor_trailing_shape(a, ind) -> tuple:
    """The axes of ``a`` after its first ``ind``: ``tensorsolve``'s solution shape."""
    return tuple(np.shape(a)[ind:])


def tensorinv_shape(a, ind) -> tuple:
    """``tensorinv``'s shape: ``a``'s trailing axes, then its first ``ind``."""
    shape = tuple(np.shape(a))
    return shape[ind:] + shape[:ind]


def polyint_divisors(p, m) -> np.ndarray:
    """What ``np.polyint(p, m)`` divides its coefficients and constants by: the falling factorials of the
    powers they reach, ``m`` integrations of ``x ** e`` being ``x ** (e + m) / ((e + 1) ... (e + m))``.
    """
    m = int(m)
    length = np.shape(p)[-1] + m
    powers = np.arange(length - 1, -1, -1, dtype=float)
    divisors = np.ones(length)
    for i in range(m):
        divisors *= np.maximum(powers - i, 1.0)
    return divisors


def polyint_constants(p, m) -> np.ndarray:
    """``np.polyint``'s integration constants when none are given: ``m`` zeros."""
    return np.zeros(
        int(m), dtype=np.result_type(getattr(p, "dtype", float), np.float32)
    )


def bins_are_edges(bins) -> bool:
    """Whether ``np.histogram``'s ``bins`` are the edges themselves (an array), not their number."""
    return np.ndim(bins) == 1


def bin_count(bins) -> int:
    """The number of bins: ``bins`` itself, or one less than the number of edges given."""
    if np.ndim(bins) == 1:
        return int(np.shape(bins)[0]) - 1
    if np.ndim(bins) != 0 or isinstance(bins, str):
        raise Refusal(
            f"`np.histogram` with bins={bins!r}",
            "pass the number of bins (an int) or the bin edges (a 1-D array)",
        )
    return int(bins)


def polyfit_rcond(x, rcond, full, cov) -> float:
    """``np.polyfit``'s cutoff of small singular values: ``len(x)`` float epsilons unless given."""
    if full or cov:
        raise Refusal(
            "`np.polyfit` with full=True or cov=True",
            "call it for the coefficients alone; compute residuals or covariances from them",
        )
    if rcond is not None:
        return float(rcond)
    dtype = np.result_type(getattr(x, "dtype", float), np.float32)
    return len(x) * float(np.finfo(dtype).eps)


def polyfit_weight_shape(w, y) -> tuple:
    """The weights' shape against ``y``'s: a column for several right-hand sides."""
    return (np.shape(w)[0], 1) if np.ndim(y) == 2 else (np.shape(w)[0],)


def common_bin_count(bins, sample) -> int:
    """``np.histogramdd``'s number of bins along every axis: one int (or equal ints, one per axis)."""
    dims = int(np.shape(sample)[1])
    counts = [bins] * dims if np.ndim(bins) == 0 else list(bins)
    if len(counts) != dims:
        raise ValueError(
            "The dimension of bins must be equal to the dimension of the sample x."
        )
    if any(np.ndim(c) != 0 for c in counts) or len({int(c) for c in counts}) != 1:
        raise Refusal(
            "`np.histogramdd`/`np.histogram2d` with bin edges, or different numbers of bins per axis",
            "pass one number of bins for every axis (bins=10) and the bounds as range=",
        )
    return int(counts[0])


def bin_strides(count, sample) -> np.ndarray:
    """The flat position of a step along each axis of a ``count``-per-axis histogram (C order)."""
    dims = int(np.shape(sample)[1])
    return count ** np.arange(dims - 1, -1, -1)


def bin_grid_shape(count, sample) -> tuple:
    return (int(count),) * int(np.shape(sample)[1])


def bin_grid_axes(count, sample) -> tuple:
    """For every flat bin of the histogram, the axis and the bin along it: ``(axes, bins)``, each of shape
    ``(count**D, D)``, which pick each bin's widths from a ``(D, count)`` array."""
    dims = int(np.shape(sample)[1])
    grid = np.indices((int(count),) * dims).reshape(dims, -1).T
    return np.broadcast_to(np.arange(dims), grid.shape), grid


def histogram_bounds(range_, sample):
    """The given lower and upper bounds per axis (``(D,)`` each), or zeros where ``range`` is None."""
    dims = int(np.shape(sample)[1])
    if range_ is None:
        return np.zeros(dims), np.zeros(dims)
    pairs = np.asarray(range_, dtype=float)
    if pairs.shape != (dims, 2):
        raise Refusal(
            f"`np.histogramdd` with range={range_!r}",
            f"give one (low, high) pair for each of the {dims} axes",
        )
    return pairs[:, 0], pairs[:, 1]


def poly_start(seq_of_zeros) -> np.ndarray:
    """The coefficients of the empty product for ``np.poly``'s roots: ``[1, 0, ..., 0]``, one per degree."""
    if np.ndim(seq_of_zeros) != 1:
        raise Refusal(
            f"`np.poly` of a {np.ndim(seq_of_zeros)}-D array",
            "pass the roots as a vector (a matrix's characteristic polynomial needs its eigenvalues, "
            "which are complex: s2s refuses complex numbers)",
        )
    start = np.zeros(np.shape(seq_of_zeros)[0] + 1, dtype=_float_dtype(seq_of_zeros))
    start[0] = 1.0
    return start


def _float_dtype(a):
    return np.result_type(getattr(a, "dtype", float), np.float32)


def polydiv_steps(u, v, trim_leading_zeros=False) -> tuple:
    """``np.polydiv``'s elimination steps as constants: ``(picks, places, slots)``: row ``k`` of ``picks``
    picks the remainder's ``k``-th coefficient; of ``places``, the positions (in ``v`` followed by one zero)
    that put ``v`` under it; of ``slots``, where the quotient's ``k``-th coefficient goes.
    """
    if trim_leading_zeros:
        raise Refusal(
            "`jnp.polydiv` with trim_leading_zeros=True (the remainder's length depends on its values)",
            "leave trim_leading_zeros False; the remainder's leading coefficients are then zeros",
        )
    m, n = np.shape(u)[0] - 1, np.shape(v)[0] - 1
    steps = max(m - n + 1, 0)
    dtype = np.result_type(_float_dtype(u), _float_dtype(v))
    picks = np.eye(steps, m + 1, dtype=dtype)
    places = np.full((steps, m + 1), n + 1)
    for k in range(steps):
        places[k, k : k + n + 1] = np.arange(n + 1)
    slots = np.eye(steps, max(m - n + 1, 1), dtype=dtype)
    return picks, places, slots


def polydiv_quotient(u, v) -> np.ndarray:
    """The quotient's coefficients before any step: zeros (one coefficient at least)."""
    m, n = np.shape(u)[0] - 1, np.shape(v)[0] - 1
    return np.zeros(
        max(m - n + 1, 1), dtype=np.result_type(_float_dtype(u), _float_dtype(v))
    )


def polydiv_kept(u, v) -> slice:
    """The part of the remainder ``np.polydiv`` returns: past the coefficients the steps zero."""
    steps = np.shape(u)[0] - np.shape(v)[0] + 1
    return slice(steps, None) if steps > 0 else slice(None)


def polydiv(u, v, trim_leading_zeros=False):
    """``jnp.polydiv``: quotient and remainder, the remainder as long as ``u`` (its leading coefficients zero);
    JAX's own on JAX values."""
    from .trees import uses_jax

    if uses_jax([u, v], []):
        import jax.numpy as jnp

        return jnp.polydiv(u, v, trim_leading_zeros=trim_leading_zeros)
    picks, places, slots = polydiv_steps(u, v, trim_leading_zeros)
    u, v = np.asarray(u), np.asarray(v)
    shifted = np.concatenate([v, np.zeros(1, v.dtype)])[places]
    quotient, remainder = polydiv_quotient(u, v), u * 1.0
    for pick, under, slot in zip(picks, shifted, slots):
        d = np.sum(remainder * pick) / v[0]
        quotient, remainder = quotient + d * slot, remainder - d * under
    return quotient, remainder


def top_k_indices(operand, k):
    """``jax.lax.top_k``'s indices: the positions of the ``k`` largest entries along the last axis, largest
    first (of equal entries, the first one first)."""
    from .arrays import namespace

    xp = namespace(operand)
    order = xp.argsort(-xp.asarray(operand), axis=-1, stable=True)
    return order[..., :k]


def top_k(operand, k):
    """``jax.lax.top_k(operand, k)``: the ``k`` largest entries along the last axis and their indices."""
    from .arrays import namespace

    indices = top_k_indices(operand, k)
    return namespace(operand).take_along_axis(operand, indices, axis=-1), indices
