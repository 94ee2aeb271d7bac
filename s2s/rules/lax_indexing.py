"""Rules for ``jax.lax``'s dynamic slices (``rt.dynamic_slice``, ``rt.dynamic_update_slice``) and ``rt.window``.

Both are linear: a window's transpose writes the cotangent into zeros at the
same (clamped) place, and an update's splits the cotangent between the array
outside the window and the update inside it (``dynamic_update_slice_vjp``, the
window in the update's shape, whose own transpose is a write into zeros).
The start indices are an index (``start_indices``: no derivative; batched per
example by ``runtime/batched_slicing.py``), sizes and axes static.
"""

from s2s import runtime as rt

from .registry import linear, nondiff, signature_of, twin

_ROLES = {"start_indices": "index", "axes": "static"}


@linear(name="rt.dynamic_slice", roles={**_ROLES, "slice_sizes": "static"})
def dynamic_slice(operand, start_indices, slice_sizes, axes=None, *, g):
    return rt.dynamic_update_slice(rt.zeros_like_float(operand), g, start_indices, axes)


@linear(name="rt.dynamic_update_slice", roles=_ROLES)
def dynamic_update_slice(operand, update, start_indices, axes=None, *, g):
    return (
        rt.dynamic_update_slice(g, rt.zeros_like_float(update), start_indices, axes),
        rt.dynamic_update_slice_vjp(g, update, start_indices, axes),
    )


@linear(name="rt.dynamic_update_slice_vjp", roles={**_ROLES, "update": "data"})
def dynamic_update_slice_vjp(ct, update, start_indices, axes=None, *, g):
    return rt.dynamic_update_slice(rt.zeros_like_float(ct), g, start_indices, axes)


# ``x[i:i + k]`` with ``i`` computed by the code (``frontend/windows.py``): NumPy's slice, a ``jax.lax``
# window when the start is traced
@linear(name="rt.window", roles={**_ROLES, "slice_sizes": "static"})
def window(operand, start_indices, slice_sizes, axes=0, *, g):
    return rt.window_vjp(g, operand, start_indices, slice_sizes, axes)


@linear(
    name="rt.window_vjp", roles={**_ROLES, "operand": "data", "slice_sizes": "static"}
)
def window_vjp(ct, operand, start_indices, slice_sizes, axes=0, *, g):
    return rt.window(g, start_indices, slice_sizes, axes)


# ``y[i:i + k] = v`` (``frontend/windows.py``): the positions a write into a window lands at, an index
nondiff("an index: the positions of a window a write lands at", "rt.window_positions")
signature_of(
    rt.window_positions,
    "rt.window_positions",
    roles={"operand": "data", "axis": "static", "start": "data", "size": "static"},
)

twin(
    "batched_slicing",
    "rt.window_positions",
    "rt.dynamic_slice",
    "rt.dynamic_update_slice",
    "rt.dynamic_update_slice_vjp",
    "rt.window",
    "rt.window_vjp",
)
