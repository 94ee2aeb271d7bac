"""Grids, spaced samples, resizing and differences written as compositions of ops with rules (``decompose``):
``broadcast_arrays``, ``meshgrid``, ``ix_``, ``linspace``, ``logspace``, ``geomspace``, ``resize``,
``gradient``, ``unwrap`` and ``unstack``.

Shapes and constants come from ``runtime/grids.py`` helpers, which read
static shapes only; the data flows through ``reshape``, ``broadcast_to``,
``take`` and arithmetic, so each function gets its forward, reverse and
batching rules from theirs. ``linspace``'s samples are JAX's
``start * (1 - t) + stop * t``: derivatives flow to both bounds.
Ops with ``*args`` are read at their call's number of arrays, each
comprehension over them written out item by item (``frontend/variadic.py``).
"""

import numpy as xp

from s2s import runtime as rt

from .registry import batch, decompose, nondiff

_HELPERS = tuple(
    f"rt.{name}"
    for name in (
        "broadcast_shapes_of", "meshgrid_shape", "meshgrid_item_shape", "ix_shape", "linspace_fractions",
        "linspace_step", "resize_index", "gradient_axes", "block_shape",
    )
)  # fmt: skip
nondiff("shape logic: static shapes, axes and constant coefficients", *_HELPERS)
batch("example", *_HELPERS)


@decompose
def broadcast_arrays(*args):
    shape = rt.broadcast_shapes_of(*args)
    return [xp.broadcast_to(a, shape) for a in args]


@decompose
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if sparse:
        return [
            xp.reshape(x, rt.meshgrid_item_shape(k, *xi, indexing=indexing))
            for k, x in enumerate(xi)
        ]
    shape = rt.meshgrid_shape(*xi, indexing=indexing)
    return [
        xp.broadcast_to(
            xp.reshape(x, rt.meshgrid_item_shape(k, *xi, indexing=indexing)), shape
        )
        for k, x in enumerate(xi)
    ]


@decompose(name="ix_")
def ix_(*args):
    # a tuple, as NumPy's: ``L[np.ix_(Y, Y)]`` indexes by its arrays (a list would be one index array)
    return tuple([xp.reshape(a, rt.ix_shape(k, *args)) for k, a in enumerate(args)])


@decompose
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    shape = rt.broadcast_shapes_of(start, stop)
    t = rt.linspace_fractions(shape, num, endpoint, axis, start)
    low = xp.expand_dims(xp.broadcast_to(start, shape), axis)
    high = xp.expand_dims(xp.broadcast_to(stop, shape), axis)
    samples = low * (1.0 - t) + high * t
    if dtype is not None:
        samples = xp.astype(samples, dtype)
    if retstep:
        return samples, (stop - start) / rt.linspace_step(num, endpoint)
    return samples


@decompose
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    samples = xp.power(
        base, xp.linspace(start, stop, num, endpoint=endpoint, axis=axis)
    )
    if dtype is not None:
        samples = xp.astype(samples, dtype)
    return samples


@decompose
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    # JAX's: powers of ten between the bounds' logarithms, their signs kept (bounds of one sign)
    exponents = xp.linspace(
        xp.log10(xp.abs(start)),
        xp.log10(xp.abs(stop)),
        num,
        endpoint=endpoint,
        axis=axis,
    )
    samples = xp.sign(xp.expand_dims(start, axis)) * xp.power(10.0, exponents)
    if dtype is not None:
        samples = xp.astype(samples, dtype)
    return samples


@decompose
def resize(a, new_shape):
    return xp.reshape(xp.take(xp.ravel(a), rt.resize_index(a, new_shape)), new_shape)


@decompose
def gradient(f, *varargs, axis=None, edge_order=1):
    # JAX's: central differences inside, one-sided ones at both ends (edge_order 1), along one axis
    along = rt.gradient_axes(f, axis, *varargs)
    moved = xp.moveaxis(f, along, -1)
    first = moved[..., 1:2] - moved[..., 0:1]
    inner = (moved[..., 2:] - moved[..., :-2]) * 0.5
    last = moved[..., -1:] - moved[..., -2:-1]
    out = xp.moveaxis(xp.concatenate([first, inner, last], axis=-1), -1, along)
    if len(varargs) == 0:
        return out
    return out / varargs[0]


@decompose
def unwrap(p, discont=None, axis=-1, period=6.283185307179586):
    # JAX's: the jumps of more than ``discont`` corrected by whole periods; the corrections are piecewise
    # constant, so the derivative passes through unchanged
    half = period / 2
    if discont is None:
        discont = half
    dd = xp.diff(p, axis=axis)
    ddmod = xp.remainder(dd + half, period) - half
    ddmod = xp.where(xp.logical_and(ddmod == -half, dd > 0), half, ddmod)
    correction = xp.where(xp.abs(dd) < discont, 0.0, ddmod - dd)
    moved = xp.moveaxis(p, axis, -1)
    steps = xp.moveaxis(xp.cumsum(correction, axis=axis), axis, -1)
    out = xp.concatenate([moved[..., :1], moved[..., 1:] + steps], axis=-1)
    return xp.moveaxis(out, -1, axis)


@decompose
def unstack(x, axis=0):
    return rt.unstack(x, axis)


@decompose(name="rt.block_join")
def block_join(axis, *operands):
    # one level of ``np.block`` (``frontend/blocks.py``, ``axis`` minus its depth): the operands brought
    # to the list's rank, joined
    return xp.concatenate(
        [xp.reshape(a, rt.block_shape(a, axis, *operands)) for a in operands],
        axis=axis,
    )
