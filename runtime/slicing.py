"""``jax.lax``'s dynamic slices: a window of fixed size at positions known only at run time.

As in JAX, a negative start counts from the end of its axis, and every start
is then clamped so that the window fits (``0 <= start <= n - size``): a window
never wraps or shrinks. Under JAX these call ``jax.lax.dynamic_slice`` and
``jax.lax.dynamic_update_slice``; on NumPy, basic slicing on a copy.

``axes`` names the axes the starts (and sizes) are for, the others whole
(``lax.dynamic_slice_in_dim``); ``None`` is every axis, in order. An update
with fewer axes than the array is a window of size 1 along each named axis
(``lax.dynamic_update_index_in_dim``).
"""

import numpy as np

from .arrays import _is_jax


def named_axes(ndim, count, axes, what):
    if axes is None:
        if count != ndim:
            raise ValueError(
                f"{what}: length of slice indices must match number of operand dimensions "
                f"({count} vs {ndim})"
            )
        return tuple(range(ndim))
    axes = tuple(a % ndim for a in ((axes,) if np.ndim(axes) == 0 else axes))
    if len(axes) != count:
        raise ValueError(f"{what}: {count} start indices for {len(axes)} axes")
    return axes


def starts_of(start_indices) -> list:
    """The start indices one by one (a sequence of scalars, or a 1-D array of them)."""
    if isinstance(start_indices, (tuple, list)):
        return list(start_indices)
    if np.ndim(start_indices) != 1:
        raise ValueError(
            f"Slice indices must be a 1D sequence, got {np.shape(start_indices)}"
        )
    return [start_indices[k] for k in range(np.shape(start_indices)[0])]


def clamped_start(start, n, size):
    """JAX's start of a window of ``size`` on an axis of ``n``: wrapped if negative, then clamped to fit."""
    if isinstance(start, (int, np.integer)):
        start = int(start) + n if start < 0 else int(start)
        return min(max(start, 0), n - size)
    from .arrays import namespace

    xp = namespace(start)
    start = xp.where(start < 0, start + n, start)
    return xp.clip(start, 0, n - size)


def _window(shape, starts, sizes, axes):
    """Per axis of ``shape``: ``(start, size)`` of the window (whole axes where ``axes`` names none)."""
    window = [(0, n) for n in shape]
    for axis, start, size in zip(axes, starts, sizes):
        size = int(size)
        if not 0 <= size <= shape[axis]:
            raise TypeError(
                f"slice size {size} does not fit axis {axis} of size {shape[axis]}"
            )
        window[axis] = (start, size)
    return window


def _jax_starts(jnp, window, shape):
    """Start indices for ``jax.lax``, wrapped and clamped here as above (one dtype for all). ``jax.lax``
    would clamp them too, but XLA's CPU compiler has put an update past a clamped start (jaxlib 0.10.2:
    two ``dynamic_update_slice``s of zeros, one clamped, added), so none reaches it out of range.
    """
    starts = [
        clamped_start(jnp.asarray(s), n, size) for (s, size), n in zip(window, shape)
    ]
    dtype = jnp.result_type(*starts)
    return [s.astype(dtype) for s in starts]


def dynamic_slice(operand, start_indices, slice_sizes, axes=None):
    """``operand``'s window of ``slice_sizes`` at ``start_indices`` (``jax.lax.dynamic_slice``)."""
    shape = np.shape(operand)
    starts = starts_of(start_indices)
    axes = named_axes(len(shape), len(starts), axes, "dynamic_slice")
    sizes = tuple(slice_sizes) if np.ndim(slice_sizes) else (slice_sizes,)
    window = _window(shape, starts, sizes, axes)
    if _is_jax(operand) or any(_is_jax(s) for s in starts):
        import jax
        import jax.numpy as jnp

        return jax.lax.dynamic_slice(
            jnp.asarray(operand),
            _jax_starts(jnp, window, shape),
            [size for _, size in window],
        )
    cut = tuple(
        slice(clamped_start(s, n, size), clamped_start(s, n, size) + size)
        for (s, size), n in zip(window, shape)
    )
    return np.asarray(operand)[cut]


def window_shape(shape, ndim, axes) -> tuple:
    """The shape of the window an update of ``shape`` fills: an axis of size 1 back per named axis it lacks."""
    shape = list(shape)
    missing = ndim - len(shape)
    if missing == 0:
        return tuple(shape)
    if missing != len(axes):
        raise TypeError(
            f"dynamic_update_slice: update of rank {len(shape)} for an operand of rank {ndim}"
        )
    for axis in sorted(axes):
        shape.insert(axis, 1)
    return tuple(shape)


def dynamic_update_slice(operand, update, start_indices, axes=None):
    """``operand`` with ``update`` written over its window at ``start_indices`` (a new array)."""
    shape = np.shape(operand)
    starts = starts_of(start_indices)
    axes = named_axes(len(shape), len(starts), axes, "dynamic_update_slice")
    full = window_shape(np.shape(update), len(shape), axes)
    window = _window(shape, starts, [full[a] for a in axes], axes)
    if any(size != full[k] for k, (_, size) in enumerate(window)):
        raise TypeError(
            f"dynamic_update_slice: update of shape {np.shape(update)} for the window "
            f"{[size for _, size in window]} of an operand of shape {shape}"
        )
    if _is_jax(operand) or _is_jax(update) or any(_is_jax(s) for s in starts):
        import jax
        import jax.numpy as jnp

        operand = jnp.asarray(operand)
        update = jnp.reshape(jnp.asarray(update), full)
        if update.dtype != operand.dtype:
            update = update.astype(operand.dtype)
        return jax.lax.dynamic_update_slice(
            operand, update, _jax_starts(jnp, window, shape)
        )
    out = np.array(operand, copy=True)
    cut = tuple(
        slice(clamped_start(s, n, size), clamped_start(s, n, size) + size)
        for (s, size), n in zip(window, shape)
    )
    out[cut] = np.reshape(update, full)
    return out


def dynamic_update_slice_vjp(ct, update, start_indices, axes=None):
    """The cotangent of ``update`` in ``dynamic_update_slice(operand, update, ...)``: ``ct``'s window,
    in ``update``'s shape."""
    shape = np.shape(ct)
    starts = starts_of(start_indices)
    axes = named_axes(len(shape), len(starts), axes, "dynamic_update_slice")
    full = window_shape(np.shape(update), len(shape), axes)
    window = dynamic_slice(ct, starts, [full[a] for a in axes], axes)
    from .arrays import namespace

    return namespace(window).reshape(window, np.shape(update))


def _slices(ndim, starts, sizes, axes) -> tuple:
    """NumPy's ``[start:start + size]`` along each named axis, ``:`` along the others."""
    cut = [slice(None)] * ndim
    for axis, start, size in zip(axes, starts, sizes):
        cut[axis] = slice(start, start + size)
    return tuple(cut)


def _window_parts(operand, start_indices, slice_sizes, axes, lead=0):
    """Starts, sizes (ints) and axes of a ``window`` call; ``lead`` batch axes before the example's."""
    starts = (
        list(start_indices)
        if isinstance(start_indices, (tuple, list))
        else [start_indices]
    )
    sizes = (
        list(slice_sizes) if isinstance(slice_sizes, (tuple, list)) else [slice_sizes]
    )
    try:
        sizes = [int(z) for z in sizes]
    except Exception:  # a traced width (JAX's concretization error)
        from .located import Refusal

        raise Refusal(
            "a slice `x[i:i + k]` whose width `k` is known only when the compiled code runs",
            "make the width a number known when the code is traced (a literal, a shape, a constant)",
        ) from None
    ndim = np.ndim(operand) - lead
    named = named_axes(ndim, len(starts), axes, "slice")
    return starts, sizes, named


def _fits(shape, starts, sizes, axes) -> None:
    """Python's error where a window computed while the code runs would leave its axis (NumPy would cut it
    short, or count a negative start from the end: a compiled window has one size and never wraps).
    """
    for axis, start, size in zip(axes, starts, sizes):
        start = np.asarray(start)
        if np.any(start < 0) or np.any(start + size > shape[axis]):
            bad = int(
                np.ravel(start)[
                    np.argmax(np.ravel((start < 0) | (start + size > shape[axis])))
                ]
            )
            err = IndexError(
                f"the slice [{bad}:{bad + size}] of an axis of length {shape[axis]}: a slice whose start "
                "the compiled code computes must lie inside the axis (NumPy would return a shorter one)"
            )
            err.hint = (
                "make the last window as long as the others (a batch size that divides the length: "
                "`for i in range(0, n - n % size, size)`), or run eagerly with backend='numpy'"
            )
            raise err


def _checked(shape, starts, sizes, axes) -> None:
    from .output import _when_known

    _when_known(lambda *known: _fits(shape, known, sizes, axes), tuple(starts))


def _is_sequence(operand) -> bool:
    return (
        isinstance(operand, (list, tuple, str)) or type(operand).__name__ == "Elements"
    )


def _sequence_slice(start, size) -> slice:
    """The slice of a Python list's items ``[start:start + size]``; its start must be known now."""
    if _is_jax(start) or _is_jax(size) or isinstance(start, (tuple, list)):
        from .located import Refusal

        raise Refusal(
            "a slice `items[i:i + k]` of a Python list at a start known only when the compiled code runs",
            "loop over the list itself (`for a, b in zip(items, items[1:])`), or stack it into an array",
        )
    return slice(start, start + size)


def window(operand, start_indices, slice_sizes, axes=0):
    """``operand[start:start + size]`` along each of ``axes``: a slice of known width whose start the code
    computes (``x[i:i + k]`` with ``i`` a compiled loop's index, ``frontend/windows.py``).

    Starts known now are NumPy's slicing as written. Traced ones cut ``jax.lax``'s window, after a check,
    when the compiled code runs, that it lies inside the axis (where NumPy's would differ).
    """
    if _is_sequence(operand):  # a Python list's items: Python's slice
        return operand[_sequence_slice(start_indices, slice_sizes)]
    starts, sizes, named = _window_parts(operand, start_indices, slice_sizes, axes)
    if not any(_is_jax(s) for s in starts):
        return operand[_slices(np.ndim(operand), starts, sizes, named)]
    _checked(np.shape(operand), starts, sizes, named)
    return dynamic_slice(operand, starts, sizes, named)


def window_positions(operand, axis: int, start, size):
    """The positions ``start, ..., start + size - 1`` along ``axis`` of ``operand``: where a write into
    ``operand[..., start:start + size]`` lands (``frontend/windows.py``), as an index array. A start known
    now is NumPy's slice; a traced one is checked, when the compiled code runs, to keep the window inside
    the axis (NumPy's slice would be shorter there).
    """
    if not _is_jax(start):
        return slice(int(start), int(start) + int(size))
    _checked(np.shape(operand), [start], [int(size)], [axis])
    import jax.numpy as jnp

    return start + jnp.arange(int(size))


def window_vjp(g, operand, start_indices, slice_sizes, axes=0):
    """The cotangent of ``operand`` in ``window(operand, ...)``: ``g`` in zeros, at the window."""
    from .arrays import index_add, zeros_like_float

    if _is_sequence(operand):
        from .trees import tree_zeros_like

        index = _sequence_slice(start_indices, slice_sizes)
        return index_add(tree_zeros_like(operand), index, g)
    starts, sizes, named = _window_parts(operand, start_indices, slice_sizes, axes)
    zeros = zeros_like_float(operand)
    if not any(_is_jax(s) for s in starts):
        return index_add(zeros, _slices(np.ndim(operand), starts, sizes, named), g)
    return dynamic_update_slice(zeros, g, starts, named)
