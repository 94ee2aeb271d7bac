"""Static shapes and constants of the grid, spacing and resizing ops s2s writes as compositions
(``s2s/rules/grids.py``): each reads only its arguments' shapes and Python values, so it runs at trace time
under ``jax.jit`` and carries no derivative.
"""

from __future__ import annotations

import math

import numpy as np

from .located import Refusal


def broadcast_shapes_of(*arrays) -> tuple:
    """The shape that ``arrays`` broadcast to (``np.broadcast_arrays``'s common shape)."""
    return tuple(np.broadcast_shapes(*(np.shape(a) for a in arrays)))


def _one_dimensional(arrays, function):
    for a in arrays:
        if np.ndim(a) != 1:
            raise Refusal(
                f"`np.{function}` of a {np.ndim(a)}-D array",
                f"pass 1-D arrays to np.{function} (np.ravel them first)",
            )


def _grid_axes(count, indexing):
    """Where each of ``count`` grid vectors lies: its own axis, the first two swapped for ``indexing='xy'``."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    axes = list(range(count))
    if indexing == "xy" and count >= 2:
        axes[0], axes[1] = 1, 0
    return axes


def meshgrid_shape(*xi, indexing="xy") -> tuple:
    """The shape of every array ``np.meshgrid(*xi, indexing=...)`` returns."""
    _one_dimensional(xi, "meshgrid")
    shape = [0] * len(xi)
    for a, axis in zip(xi, _grid_axes(len(xi), indexing)):
        shape[axis] = np.shape(a)[0]
    return tuple(shape)


def meshgrid_item_shape(k, *xi, indexing="xy") -> tuple:
    """The shape grid vector ``k`` is reshaped to: its length on its own axis, 1 on the others."""
    shape = [1] * len(xi)
    shape[_grid_axes(len(xi), indexing)[k]] = np.shape(xi[k])[0]
    return tuple(shape)


def ix_shape(k, *args) -> tuple:
    """``np.ix_``'s shape for sequence ``k`` of ``args``: its length on axis ``k``, 1 on the others."""
    _one_dimensional(args, "ix_")
    if np.dtype(getattr(args[k], "dtype", float)) == np.bool_:
        raise Refusal(
            "`np.ix_` of a boolean mask",
            "pass integer positions (np.nonzero(mask)[0] outside the transformed function)",
        )
    shape = [1] * len(args)
    shape[k] = np.shape(args[k])[0]
    return tuple(shape)


def linspace_fractions(shape, num, endpoint, axis, like=None):
    """``i / (num - 1)`` (``i / num`` without the endpoint) for ``i < num``, on ``axis`` of the result of a
    ``np.linspace`` between bounds of ``shape``, 1 on the other axes (the float dtype of ``like``).
    """
    num = int(num)
    if num < 0:
        raise ValueError(f"np.linspace: number of samples, {num}, must be non-negative")
    divisor = max((num - 1) if endpoint else num, 1)
    rank = len(shape) + 1
    placed = [1] * rank
    placed[int(axis) % rank] = num
    dtype = np.result_type(getattr(like, "dtype", float), np.float32)
    if not np.issubdtype(dtype, np.floating):
        dtype = np.float32 if dtype == np.float32 else np.float64
    return np.reshape(np.arange(num, dtype=dtype) / divisor, placed)


def linspace_step(num, endpoint) -> float:
    """The divisor of ``(stop - start)`` in ``np.linspace``'s ``retstep``; NaN for one sample with the endpoint."""
    divisor = (int(num) - 1) if endpoint else int(num)
    return float("nan") if divisor <= 0 else float(divisor)


def resize_index(a, new_shape) -> np.ndarray:
    """The flat positions of ``a`` that ``np.resize(a, new_shape)`` reads: ``a`` repeated cyclically."""
    count = math.prod(np.atleast_1d(new_shape).tolist())
    size = int(np.size(a))
    if size == 0:
        raise Refusal("`np.resize` of an empty array", "use np.zeros(new_shape)")
    return np.arange(count) % size


def gradient_axes(f, axis, *varargs) -> int:
    """The one axis ``np.gradient`` differentiates along (it then returns one array), its spacing one number."""
    if len(varargs) > 1 or any(np.ndim(h) != 0 for h in varargs):
        raise Refusal(
            "`np.gradient` with coordinate arrays or one spacing per axis",
            "pass one (uniform) spacing as a number, or difference the coordinates yourself",
        )
    if axis is None:
        if np.ndim(f) != 1:
            raise Refusal(
                f"`np.gradient` of a {np.ndim(f)}-D array over all its axes",
                "pass axis=k, one call per axis (each returns one array)",
            )
        return 0
    if isinstance(axis, (tuple, list)):
        raise Refusal(
            "`np.gradient` along several axes",
            "pass axis=k, one call per axis (each returns one array)",
        )
    return int(axis) % np.ndim(f)


def block_shape(x, axis, *operands) -> tuple:
    """``x``'s shape with the leading unit axes that bring it to its ``np.block`` list's rank: the larger
    of the list's depth (``-axis``) and its operands' ranks."""
    rank = max(-int(axis), *(np.ndim(a) for a in operands))
    return (1,) * (rank - np.ndim(x)) + tuple(np.shape(x))


def block_join(axis, *operands):
    """One level of ``np.block``: ``operands`` brought to their list's rank, joined along ``axis`` (minus the
    list's depth)."""
    from .arrays import namespace

    xp = namespace(*operands)
    return xp.concatenate(
        [xp.reshape(a, block_shape(a, axis, *operands)) for a in operands], axis=axis
    )
