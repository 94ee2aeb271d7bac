"""JAX's ``x.at[index]`` updates beyond ``set`` and ``add``, and the index helpers of their options.

- ``index_multiply``, ``index_min``, ``index_max``: ``target`` with ``value`` combined into it at
  ``index`` (``*``, ``minimum``, ``maximum``), as a new array. Repeated indices combine every value
  written there, as JAX's scatters do: one scatter under JAX (``target.at[index].max(value)``), a
  ufunc's ``at`` on NumPy (``np.maximum.at``). A boolean mask with a scalar value is a ``where``,
  which compiles with a mask known only at run time.
- ``clip_index(target, index)``: ``mode="clip"``: each integer component wrapped (``-1`` is the
  last element) and clamped into its axis, as JAX's ``GatherScatterMode.CLIP``.
- ``in_bounds``, ``fill_padding``, ``fill_index``: ``mode="fill"`` reads, ``xp.where(in_bounds,
  xp.pad(target, fill_padding)[fill_index], fill)``: the read from a padded copy (out-of-bounds
  positions read the padding, where their cotangents are dropped, as JAX's fill transpose drops
  them), kept inside the array by the mask.
- ``default_fill(target)``: JAX's fill for out-of-bounds reads: NaN, or the extreme integer.
- ``require_unique(x, index, unique_indices)``: ``x`` itself, once ``index`` is known not to repeat
  (no integer arrays) or the caller promised ``unique_indices=True``: the derivative of
  ``.at[].multiply`` with respect to its factor is JAX's only then (JAX raises otherwise).
"""

import numpy as np

from .arrays import _as_element, _is_jax, namespace, number_write_mask
from .located import Refusal

_NUMPY_UFUNCS = {"multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def _parts(index) -> tuple:
    return index if isinstance(index, tuple) else (index,)


def _uses_jax(*values) -> bool:
    return any(_is_jax(v) for value in values for v in _parts(value))


def _scatter(kind, target, index, value):
    mask = number_write_mask(index, target, value)
    if mask is not None:
        xp = namespace(target, index, value)
        value = xp.asarray(value, dtype=xp.asarray(target).dtype)
        combined = {
            "multiply": target * value,
            "min": xp.minimum(target, value),
            "max": xp.maximum(target, value),
        }[kind]
        return xp.where(mask, combined, target)
    if _uses_jax(target, index, value):
        import jax.numpy as jnp

        target = jnp.asarray(target)
        return getattr(target.at[index], kind)(_as_element(jnp, value, target))
    out = np.array(target, copy=True)
    _NUMPY_UFUNCS[kind].at(out, index, value)
    return out


def index_multiply(target, index, value, unique_indices=False):
    """``target`` with its elements at ``index`` multiplied by ``value`` (``x.at[index].multiply(value)``)."""
    return _scatter("multiply", target, index, value)


def index_min(target, index, value):
    """``target`` with its elements at ``index`` replaced by their minimum with ``value`` (``.at[].min``)."""
    return _scatter("min", target, index, value)


def index_max(target, index, value):
    """``target`` with its elements at ``index`` replaced by their maximum with ``value`` (``.at[].max``)."""
    return _scatter("max", target, index, value)


def _is_integer_array(part) -> bool:
    dtype = getattr(part, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind in "iu"


def _is_bool_array(part) -> bool:
    dtype = getattr(part, "dtype", None)
    return dtype is not None and np.dtype(dtype) == np.dtype(bool)


def indexed_axes(parts, ndim, flags=None) -> list:
    """For each index component, the axis it indexes (NumPy's reading), None for ``None``, ``...``, masks;
    ``flags`` marks components with a leading batch axis (a batched mask covers one axis fewer).
    """
    flags = flags or (False,) * len(parts)
    ranks = [np.ndim(p) - int(bool(f)) for p, f in zip(parts, flags)]
    consumed = sum(
        r if _is_bool_array(p) else 1
        for p, r in zip(parts, ranks)
        if p is not None and p is not Ellipsis
    )
    axes, axis = [], 0
    for p, r in zip(parts, ranks):
        if p is None:
            axes.append(None)
        elif p is Ellipsis:
            axes.append(None)
            axis += ndim - consumed
        elif _is_bool_array(p):
            axes.append(None)
            axis += r
        else:
            axes.append(axis)
            axis += 1
    return axes


def _integer(part) -> bool:
    """A component that picks elements by position: an int, a list of ints, an integer array."""
    if isinstance(part, (bool, np.bool_)):
        return False
    return isinstance(part, (int, np.integer, list)) or _is_integer_array(part)


def _wrapped(xp, part, n):
    """A position with negative values counted from the end (``-1`` is ``n - 1``), as JAX wraps them."""
    if isinstance(part, (int, np.integer)):
        return part + n if part < 0 else part
    part = xp.asarray(part)
    return xp.where(part < 0, part + n, part)


def clip_index(target, index):
    """``index`` with each integer component wrapped and clamped into its axis: JAX's ``mode="clip"``."""
    return clipped(np.shape(target), index, namespace(target, _parts(index)))


def clipped(shape, index, xp, flags=None):
    """``clip_index`` for an array of ``shape`` (one example's, where ``flags`` mark batched components)."""
    parts = _parts(index)
    out = []
    for part, axis in zip(parts, indexed_axes(parts, len(shape), flags)):
        if axis is not None and _integer(part):
            n = shape[axis]
            part = _wrapped(xp, part, n)
            if isinstance(part, (int, np.integer)):
                part = min(max(int(part), 0), n - 1)
            else:
                part = xp.clip(part, 0, n - 1)
        out.append(part)
    return tuple(out) if isinstance(index, tuple) else out[0]


def padded(shape, index, xp, flags=None):
    """``(padding, index)`` for ``mode="fill"`` reads of an array of ``shape``: one extra element before and
    after each axis an integer component indexes, and ``index`` moved onto the padded array, with
    out-of-bounds positions on the padding."""
    parts = _parts(index)
    padding = [(0, 0)] * len(shape)
    out = []
    for part, axis in zip(parts, indexed_axes(parts, len(shape), flags)):
        if axis is not None and _integer(part):
            n = shape[axis]
            padding[axis] = (1, 1)
            part = _wrapped(xp, part, n)
            if isinstance(part, (int, np.integer)):
                part = min(max(int(part), -1), n) + 1
            else:
                part = xp.clip(part, -1, n) + 1
        out.append(part)
    return padding, tuple(out) if isinstance(index, tuple) else out[0]


def fill_padding(target, index):
    """``mode="fill"`` reads: the padding that gives ``target`` one slot before and after each axis an
    integer component of ``index`` reads (``xp.pad(target, ...)``)."""
    return padded(np.shape(target), index, namespace(target, _parts(index)))[0]


def fill_index(target, index):
    """``index`` moved onto ``target`` padded by ``fill_padding``, out-of-bounds positions on the padding,
    so their cotangents fall there and are dropped (JAX's ``mode="fill"`` transpose)."""
    return padded(np.shape(target), index, namespace(target, _parts(index)))[1]


def in_bounds(target, index):
    """Per element of ``target[index]``: whether every integer component that chose it was inside its axis
    (after wrapping negative ones), the mask of JAX's ``mode="fill"`` reads."""
    xp = namespace(target, _parts(index))
    padding, moved = padded(np.shape(target), index, xp)
    inside = xp.pad(xp.ones(np.shape(target), bool), padding, constant_values=False)
    return inside[moved]


def default_fill(target):
    """JAX's value for an out-of-bounds read under ``mode="fill"``: NaN for inexact dtypes, the smallest
    signed or largest unsigned integer, ``True`` for booleans."""
    dtype = np.dtype(
        target.dtype if hasattr(target, "dtype") else np.asarray(target).dtype
    )
    if dtype.kind in "fc":
        return np.array(np.nan, dtype)
    if dtype.kind == "i":
        return np.array(np.iinfo(dtype).min, dtype)
    if dtype.kind == "u":
        return np.array(np.iinfo(dtype).max, dtype)
    return np.array(True)


UNIQUE_REFUSAL = (
    "the derivative of `.at[...].multiply`, `.divide` or `.power` with respect to the values, at an "
    "index that holds an integer array (which may repeat positions): JAX does not define it either "
    "(`scatter_mul gradients are only implemented if unique_indices=True`)",
    "if the positions never repeat, say so: `.at[idx].multiply(v, unique_indices=True)`",
)


def may_repeat(index, batched=False) -> bool:
    """Whether ``index`` may name one position twice: it holds an integer array (a list, or an array with
    more axes than the ``batched`` one); ints, slices, ``None``, ``...`` and masks never do.
    """
    flags = batched if isinstance(batched, tuple) else (batched,) * len(_parts(index))
    return any(
        isinstance(p, list) or (_is_integer_array(p) and np.ndim(p) > int(bool(flag)))
        for p, flag in zip(_parts(index), flags)
    )


def require_unique(x, index, unique_indices=False):
    """``x`` itself, once ``index`` cannot repeat a position (or ``unique_indices`` says it does not)."""
    if not unique_indices and may_repeat(index):
        raise Refusal(*UNIQUE_REFUSAL)
    return x
