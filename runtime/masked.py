"""What masked selections compile to (``s2s/passes/masks.py``, ``slice_masks.py``): a mask against the
array it selects from (``leading_mask``, and ``unit_axes_mask`` for a selection given unit axes), the
positions a slice with computed bounds keeps (``span_mask``), a product's operand (``contracted_selection``)
and the value a dropped element holds (``selected_fill``)."""

import numpy as np

from .arrays import namespace
from .located import Refusal


def leading_mask(mask, x):
    """``mask`` as booleans with a unit axis for each axis of ``x`` past its own: ``x[mask]`` selects along
    the mask's (leading) axes, ``where(leading_mask(mask, x), x, fill)`` keeps the same elements.
    """
    xp = namespace(mask, x)
    kept = xp.asarray(mask) != 0
    _check_mask(np.shape(kept), np.shape(x))
    extra = np.ndim(x) - np.ndim(kept)
    return xp.reshape(kept, (*np.shape(kept), *(1,) * extra)) if extra > 0 else kept


def span_mask(x, start, stop, keys=()):
    """Booleans along ``x``'s leading axis: the positions ``x[start:stop]`` keeps, by Python's rules for a
    slice (``None`` for an end, a negative bound counted from the end, bounds clipped to the axis). The
    mask a slice whose bounds a compiled loop computes selects by (``passes/slice_masks.py``), along the
    line ``x`` that its ``keys`` picked (``U[i, :]`` for ``U[i, i + 1:]``): integers, checked here.
    """
    _check_keys(keys, 0)
    n = np.shape(x)[0]
    xp = namespace(*(v for v in (x, start, stop) if v is not None))
    positions = xp.arange(n)
    low = 0 if start is None else _slice_bound(xp, start, n)
    high = n if stop is None else _slice_bound(xp, stop, n)
    return (positions >= low) & (positions < high)


def contracted_selection(mask, x, rows: bool):
    """``leading_mask(mask, x)`` for an operand of a product of two selections by ``mask``
    (``x[mask] @ y[mask]``), whose selected axis the product must contract: ``x`` 1-D, or with ``rows``
    (the right operand of ``@``/``np.dot``) 2-D, its rows."""
    if not (np.ndim(x) == 1 or (rows and np.ndim(x) == 2)):
        from .located import ValueRefusal

        raise ValueRefusal(
            "a product of two selections by one mask, or two slices whose bounds a compiled loop computes, "
            "must contract the selected axis (`a[m] @ b[m]` with `a` 1-D, `A[m].T @ B[m]`): here an "
            f"operand of {np.ndim(x)} axes keeps it",
            "multiply the whole arrays with the dropped rows zeroed: "
            "`np.where(m[:, None], A, 0.0) @ B`",
        )
    return leading_mask(mask, x)


def unit_axes_mask(mask, x):
    """``leading_mask(mask, x)`` for a selection given unit axes (``x[mask][:, None]``), reduced whole
    (``passes/masks.py``): the mask selects along one axis, as the whole array's unit axes stand.
    """
    if np.ndim(mask) != 1:
        from .located import ValueRefusal

        raise ValueRefusal(
            f"a selection by a mask of {np.ndim(mask)} axes given unit axes (`x[mask][:, None]`): s2s "
            "computes a selection that feeds a reduction over the whole array, which has the mask's axes",
            "compute over the whole array and reduce with the mask given the same axes: "
            "`np.sum(np.where(mask[..., None], values, 0.0))`",
        )
    return leading_mask(mask, x)


def _check_keys(keys, batched: int) -> None:
    """The keys beside a slice that s2s masks are integers (``batched``: with a batch axis): an index
    array would move the sliced axis."""
    for key in keys:
        dtype = getattr(key, "dtype", None)
        integral = isinstance(key, int) or (
            dtype is not None and np.dtype(dtype).kind in "iu"
        )
        if not integral or np.ndim(key) > batched:
            raise Refusal(
                "a slice whose bounds a compiled loop computes, beside an index array or a non-integer "
                "key (`x[idx, i:]`): s2s computes it over its whole axis, which an index array would move",
                "index with integers beside it (a loop over the rows `idx` picks), or slice with bounds "
                "known when the code is traced",
            )


def _slice_bound(xp, bound, n):
    return xp.clip(xp.where(bound < 0, bound + n, bound), 0, n)


def _check_mask(mask_shape, shape):
    """NumPy's rule for ``x[mask]``: the mask's shape is that of ``x``'s leading axes."""
    if tuple(mask_shape) != tuple(shape[: len(mask_shape)]):
        raise IndexError(
            f"boolean index of shape {tuple(mask_shape)} does not match the indexed array's "
            f"shape {tuple(shape)}"
        )


def selected_fill(x, kept):
    """A value of ``x`` where ``kept`` is true (its first such element; 0 if none): what the elements a
    selection drops hold while elementwise ops run over the whole array (``passes/masks.py``), so those ops
    see values of their domain; the result is masked away, so no derivative flows through it.
    """
    xp = namespace(x, kept)
    full = xp.broadcast_to(kept, np.shape(x))
    flat = xp.reshape(full, (-1,))
    first = xp.argmax(flat)
    value = xp.reshape(xp.asarray(x), (-1,))[first] if np.size(x) else xp.zeros(())
    return xp.where(flat[first], value, xp.zeros_like(value))
