"""Static shapes and positions of the splitting, joining, deleting and inserting ops s2s writes as compositions
(``s2s/rules/joins.py``) and of ``np.r_``/``np.c_`` items (``s2s/frontend/index_tricks.py``): each reads only
its arguments' shapes and Python values, so it runs at trace time under ``jax.jit`` and carries no
derivative. Positions the data would decide are refused with a hint, as JAX refuses them under ``jit``.
"""

from __future__ import annotations

import numpy as np

from .arrays import _is_jax, namespace
from .located import Refusal


def concatenated_item_shape(a, ndmin, trans1d) -> tuple:
    """The shape NumPy's ``r_``/``c_`` give item ``a``: ``ndmin`` dimensions at least, the added unit axes
    placed by ``trans1d`` (-1: before the item's axes; k: the item's axes start at axis k).
    """
    shape = tuple(np.shape(a))
    added = int(ndmin) - len(shape)
    if added <= 0:
        return shape
    if int(trans1d) == -1:
        return (1,) * added + shape
    first = int(trans1d)
    if first < 0:
        first += added + 1
    return (1,) * first + shape + (1,) * (added - first)


def concatenated_item(a, ndmin, trans1d):
    """An item of ``np.r_``/``np.c_``, brought to the concatenation's rank (``s2s/rules/joins.py``)."""
    from .arrays import namespace

    return namespace(a).reshape(a, concatenated_item_shape(a, ndmin, trans1d))


def _static(value, function: str, what: str):
    try:
        return np.asarray(value)
    except Exception:  # a traced value: its positions are known only when it runs
        raise Refusal(
            f"`np.{function}` with {what} computed from data",
            f"give {what} known when the function is compiled: written in it (an int, a list or a "
            "slice) or a static argument (s2s.jit(f, static_argnums=...)); backend='numpy' takes any array",
        ) from None


def split_points(ary, indices_or_sections, axis) -> list:
    """Where ``np.array_split`` cuts ``ary`` along ``axis``: the first ``n % sections`` pieces one longer."""
    if np.ndim(indices_or_sections) > 0:
        return [
            int(i) for i in _static(indices_or_sections, "array_split", "cut points")
        ]
    sections = int(indices_or_sections)
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    length = np.shape(ary)[int(axis)]
    each, extra = divmod(length, sections)
    sizes = [each + 1] * extra + [each] * (sections - extra)
    return [int(p) for p in np.cumsum(sizes)[:-1]]


def split_axis(ary, axis: int, function: str) -> int:
    """The axis ``np.hsplit`` (1, or 0 for vectors), ``np.vsplit`` (0) or ``np.dsplit`` (2) cuts along."""
    rank = np.ndim(ary)
    least = {"hsplit": 1, "vsplit": 2, "dsplit": 3}[function]
    if rank < least:
        raise ValueError(
            f"{function} only works on arrays of {least} or more dimensions"
        )
    return 0 if function == "hsplit" and rank == 1 else int(axis)


def rollaxis_destination(a, axis, start) -> int:
    """Where ``np.rollaxis(a, axis, start)`` puts ``axis``, as a ``np.moveaxis`` destination."""
    rank = np.ndim(a)
    axis = int(axis) % rank
    start = int(start)
    if start < 0:
        start += rank
    if not 0 <= start <= rank:
        raise np.exceptions.AxisError(
            f"start={start} must satisfy 0 <= start <= {rank}"
        )
    return start - 1 if axis < start else start


def flat_unless_axis(arr, axis) -> tuple:
    """``arr``'s shape, or its size alone where ``axis`` is None (``np.delete``/``np.insert`` flatten it)."""
    return (int(np.size(arr)),) if axis is None else tuple(np.shape(arr))


def axis_or_first(axis) -> int:
    return 0 if axis is None else int(axis)


def kept_positions(arr, obj, axis) -> np.ndarray:
    """The positions along ``axis`` (or of the flattened ``arr``) that ``np.delete(arr, obj, axis)`` keeps."""
    length = int(np.size(arr)) if axis is None else np.shape(arr)[int(axis)]
    keep = np.ones(length, dtype=bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        positions = _static(obj, "delete", "positions")
        if positions.dtype == np.bool_:
            keep = ~positions
        else:
            keep[positions.astype(np.intp)] = False
    return np.flatnonzero(keep)


def _insert_positions(length, obj):
    """``np.insert``'s positions (negative ones counted from the end) and whether ``obj`` was a scalar."""
    if isinstance(obj, slice):
        return np.arange(length)[obj], False
    positions = _static(obj, "insert", "positions")
    if positions.dtype == np.bool_ or not np.issubdtype(positions.dtype, np.integer):
        raise Refusal(
            "`np.insert` at positions that are not integers",
            "pass integer positions (np.flatnonzero(mask) for a mask)",
        )
    positions = positions.astype(np.intp)
    scalar = positions.ndim == 0
    positions = np.where(positions < 0, positions + length, positions).reshape(-1)
    return positions, scalar


def insert_values_layout(arr, obj, values, axis) -> tuple:
    """How ``np.insert`` shapes ``values`` for ``arr`` (already flattened where ``axis`` was None):
    ``(padded, axes, block)``: ``values`` reshaped to ``padded`` (``ndmin`` leading unit axes), transposed
    by ``axes`` (a scalar position moves the first axis to ``axis``), broadcast to ``block`` (``arr``'s
    shape with the number of new items on ``axis``)."""
    shape = tuple(np.shape(arr))
    axis = int(axis) % len(shape)
    positions, scalar = _insert_positions(shape[axis], obj)
    value_shape = tuple(np.shape(values))
    padded = (1,) * max(len(shape) - len(value_shape), 0) + value_shape
    order = list(range(len(padded)))
    if scalar:
        order.insert(axis, order.pop(0))
    moved = tuple(padded[i] for i in order)
    if scalar or len(positions) == 1:
        count = moved[axis] if len(moved) > axis else 1
    else:
        count = len(positions)
    block = shape[:axis] + (count,) + shape[axis + 1 :]
    return padded, tuple(order), block


def insert_order(arr, obj, values, axis) -> np.ndarray:
    """The positions, in ``arr`` followed by the new items along ``axis``, that ``np.insert`` takes in turn."""
    shape = tuple(np.shape(arr))
    axis = int(axis) % len(shape)
    length = shape[axis]
    positions, scalar = _insert_positions(length, obj)
    count = insert_values_layout(arr, obj, values, axis)[2][axis]
    if scalar or len(positions) == 1:
        at = int(positions[0])
        if not 0 <= at <= length:
            raise IndexError(
                f"index {at} is out of bounds for axis {axis} with size {length}"
            )
        new = np.arange(length, length + count)
        return np.concatenate([np.arange(at), new, np.arange(at, length)])
    if np.any((positions < 0) | (positions > length)):
        raise IndexError(f"index out of bounds for axis {axis} with size {length}")
    total = length + count
    placed = positions.copy()
    ranks = np.argsort(positions, kind="stable")
    placed[ranks] += np.arange(count)
    order = np.empty(total, dtype=np.intp)
    is_new = np.zeros(total, dtype=bool)
    is_new[placed] = True
    order[placed] = length + np.arange(count)
    order[~is_new] = np.arange(length)
    return order


def diagonal_positions(a, wrap) -> np.ndarray:
    """The flat positions ``np.fill_diagonal(a, val, wrap)`` writes: every step of ``a.shape[1] + 1`` (a 2-D
    ``a``; past its square part only with ``wrap``), or the main diagonal of an n-D cube.
    """
    shape = tuple(np.shape(a))
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) == 2:
        step = shape[1] + 1
        end = None if wrap else shape[1] * shape[1]
    else:
        if len(set(shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(shape[:-1]).sum())
        end = None
    return np.arange(int(np.prod(shape)))[:end:step]


def bincount_length(x, minlength, length) -> int:
    """The number of bins of ``np.bincount``: ``length`` when given, else one past the largest value of ``x``
    (at least ``minlength``), which needs ``x``'s values."""
    if length is not None:
        return int(length)
    try:
        values = np.asarray(x)
    except Exception:  # a traced value: the number of bins is known only when it runs
        if minlength and not _is_jax(minlength):
            # ``minlength`` bins, checked when the compiled code runs to hold every value (NumPy would
            # add bins past them: a compiled bincount has one size)
            from .output import _when_known

            _when_known(
                lambda top: _within(top, int(minlength)), (namespace(x).max(x),)
            )
            return int(minlength)
        raise Refusal(
            "`np.bincount` without `length=` under jit (its number of bins depends on the data)",
            "give the number of bins: `np.bincount(x, weights, minlength=n)` (checked to hold every value), "
            "or `jnp.bincount(x, weights, length=n)`",
        ) from None
    largest = int(values.max()) + 1 if values.size else 0
    return max(largest, int(minlength or 0))


def _within(top, minlength: int) -> None:
    if int(np.asarray(top)) >= minlength:
        raise ValueError(
            f"`np.bincount` with `minlength={minlength}` under jit met the value {int(np.asarray(top))}: "
            "a compiled bincount has `minlength` bins (NumPy would add more); pass `length=` with the "
            "number of bins, or run eagerly with backend='numpy'"
        )


def fill_diagonal(a, val, wrap=False, *, inplace=False):
    """``a`` with ``val`` (repeated as needed) on its diagonal, as a new array (``np.fill_diagonal``'s
    result, ``jnp.fill_diagonal(a, val, inplace=False)``)."""
    from .arrays import index_set, namespace

    xp = namespace(a, val)
    positions = diagonal_positions(a, wrap)
    values = xp.resize(xp.ravel(xp.asarray(val)), positions.shape)
    return xp.reshape(index_set(xp.ravel(a), positions, values), xp.shape(a))
