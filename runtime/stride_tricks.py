"""NumPy's ``sliding_window_view`` on either backend: every window, gathered by constant positions.

JAX has no ``sliding_window_view``; under ``jax.jit`` the windows are a gather of ``x`` at positions
known from its shape (NumPy's own function applied to the positions ``0 .. x.size - 1``), which
``rules/reshaping.py`` decomposes into ``take`` so every transform has its rule.
"""

from __future__ import annotations

import numpy as np

from .arrays import namespace


def sliding_positions(x, window_shape, axis=None, writeable=False):
    """The flat positions in ``x`` of ``sliding_window_view(x, window_shape, axis)``'s elements.

    Windows are copies here: ``writeable=True`` (writes through the windows into ``x``) is refused.
    """
    if writeable:
        raise ValueError(
            "sliding_window_view(..., writeable=True): s2s computes windows as copies, so writes "
            "through them would not reach the array; write into the array itself"
        )
    shape = tuple(np.shape(x))
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    return np.lib.stride_tricks.sliding_window_view(
        positions, window_shape, axis
    ).copy()


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """``np.lib.stride_tricks.sliding_window_view``: NumPy's own (a read-only view) on NumPy arrays."""
    xp = namespace(x)
    if xp is np:
        return np.lib.stride_tricks.sliding_window_view(
            x, window_shape, axis, subok=subok, writeable=writeable
        )
    positions = sliding_positions(x, window_shape, axis, writeable)
    return xp.take(xp.reshape(x, (-1,)), positions)
