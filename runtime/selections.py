"""Selections ``x[key]`` by a key whose kind only the traced value tells: a mask, or positions.

``passes/masks.py`` rewrites a selection by a comparison (``x[x > 0]``) that only feeds reductions into
masked reductions, which compile. A key the function is *given* (``np.mean(err[mask])``, ``mask`` an
argument) may be a boolean mask, whose selection's size depends on its values, or integer positions,
whose selection has a static shape: its dtype is known when the code is traced, not when s2s reads it.
These helpers decide then:

- ``selection(x, key)``: a mask keeps ``x``'s shape, the dropped elements holding a kept value
  (``selected_fill``); positions gather ``x[key]`` as NumPy does;
- ``selection_mask(key, x)``: which elements a reduction keeps: the mask with unit axes past its own
  (``leading_mask``), or ``True`` for positions (every gathered element);
- ``selection_length(key, x)``: ``len(x[key])``.

Each reduction of the selection reduces ``where(selection_mask(key, x), v, identity)``: the mask's
selected elements, or all the gathered ones, the same value and derivative either way.
"""

from __future__ import annotations

import numpy as np

from .arrays import _is_jax, index_add, namespace
from .masked import leading_mask, selected_fill


def is_mask_key(index, batched=False) -> bool:
    """A boolean array (or a list of booleans): ``x[index]`` keeps the elements where it holds
    (``batched``: ``index`` has a batch axis in front)."""
    if isinstance(index, list):
        index = np.asarray(index)
    dtype = getattr(index, "dtype", None)
    return dtype is not None and dtype == np.dtype(bool) and np.ndim(index) > batched


def selection(x, index, fill=True):
    """``x[index]``: gathered for positions; for a mask, ``x`` whole, a kept value where the mask drops
    (``fill``; else 0). Linear in ``x``."""
    xp = namespace(x, index)
    if not is_mask_key(index):
        return (xp.asarray(x) if _is_jax(index) else x)[index]
    kept = leading_mask(index, x)
    dropped = selected_fill(x, kept) if fill else xp.zeros((), xp.result_type(x))
    return xp.where(kept, x, dropped)


def selection_vjp(ct, x, index):
    """The cotangent of ``x`` in ``selection(x, index)``: ``ct`` where a mask holds, or added at the
    positions (repeated positions accumulate)."""
    if not is_mask_key(index):
        from .trees import tree_zeros_like

        return index_add(tree_zeros_like(x), index, ct)
    xp = namespace(ct, index)
    return xp.where(leading_mask(index, x), ct, xp.zeros((), xp.result_type(ct)))


def selection_mask(index, x):
    """The elements of ``selection(x, index)`` a reduction keeps: a mask's (``leading_mask``), or all."""
    return leading_mask(index, x) if is_mask_key(index) else np.True_


def selection_length(index, x):
    """``len(x[index])``: a mask's count of true elements, or the positions' leading length."""
    if is_mask_key(index):
        return namespace(index).count_nonzero(index)
    if _is_jax(index):
        return np.shape(index)[0] if np.ndim(index) else np.shape(x)[1]
    if isinstance(x, (dict, list, tuple)):
        return len(x[index])
    return len(np.broadcast_to(np.False_, np.shape(x))[index])


def mask_axes(mask):
    """The axes of an array that ``mask`` covers (``x[mask]`` collapses them into its axis 0)."""
    return tuple(range(np.ndim(mask)))


def selection_axes(index):
    """``mask_axes`` of a key the function is given: a mask's axes, or positions' axis 0."""
    return mask_axes(index) if is_mask_key(index) else (0,)


def selected_size(kept, v):
    """``s.size`` of a selection held whole (``v``, ``kept`` where selected): its kept elements."""
    xp = namespace(kept, v)
    return xp.count_nonzero(xp.broadcast_to(kept, np.shape(v)))
