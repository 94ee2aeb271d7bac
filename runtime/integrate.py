"""``scipy.integrate``'s functions on arrays, on either backend (``rt.cumulative_trapezoid``)."""

from __future__ import annotations

from .arrays import namespace
from .op_shapes import trapezoid_axis


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """SciPy's cumulative trapezoid rule: the integral of ``y`` from its first sample to each later one."""
    xp = namespace(y, x)
    values = xp.moveaxis(xp.asarray(y), axis, -1)
    if x is None:
        widths = dx
    else:
        widths = xp.diff(
            xp.moveaxis(xp.asarray(x), trapezoid_axis(x, axis), -1), axis=-1
        )
    out = xp.cumsum(widths * (values[..., 1:] + values[..., :-1]) / 2.0, axis=-1)
    if initial is not None:
        out = xp.concatenate([xp.zeros_like(values[..., :1]) + initial, out], axis=-1)
    return xp.moveaxis(out, -1, axis)


__all__ = ["cumulative_trapezoid"]
