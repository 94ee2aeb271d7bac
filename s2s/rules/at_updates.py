"""Rules for JAX's ``x.at[index]`` updates that are not NumPy element writes: ``multiply``, ``min``, ``max``.

``set`` and ``add`` are ``rt.index_set`` and ``rt.index_add`` (``runtime_ops.py``,
``derivative_ops.py``); ``divide`` and ``power`` are lowered onto ``multiply``.
The derivatives are JAX's:

- ``multiply`` is linear in ``target`` (the same scatter, of ``g``); with respect
  to the values JAX defines it only where positions cannot repeat, so the
  cotangent passes ``rt.require_unique`` (an error otherwise, as JAX's);
- ``min``/``max``: the result at a position is the target's element or one of
  the values written there; its derivative is shared equally between all of
  those that equal the result (JAX's ``_scatter_extremal_jvp``): ``kept`` marks
  the target's elements that survive, ``won`` the values that equal their
  position's result, ``count`` how many share each position.

Every runtime helper these rules call has rules itself, so the derivatives
differentiate again and batch (``s2s.vmap`` of ``s2s.grad``).
"""

import numpy as xp

from s2s import runtime as rt

from .registry import batch, batch_rule, jvp, linear, nondiff, signature_of, twin, vjp


@vjp(name="rt.index_multiply")
def index_multiply(target, index, value, unique_indices=False, *, g):
    return (
        rt.index_multiply(g, index, value, unique_indices),
        None,
        rt.unbroadcast(
            rt.require_unique(g * target, index, unique_indices)[index]
            * rt.in_bounds(target, index),
            value,
        ),
    )


@jvp(index_multiply)
def index_multiply_forward(
    target, index, value, unique_indices=False, *, target_dot, value_dot
):
    return (
        rt.index_multiply(target_dot, index, value, unique_indices),
        None,
        xp.multiply(
            target,
            rt.index_add(
                rt.zeros_like_float(target),
                index,
                rt.require_unique(value_dot, index, unique_indices),
            ),
        ),
    )


# The winners are found by comparing the target and the values with each other, never with ``ans``:
# XLA may compute a target it recomputes in another fusion with other rounding, and an element no
# comparison with ``ans`` keeps would divide by a count of zero (NaN). Positions the index misses
# compare with an infinite ``best``: the target keeps them.


@vjp(name="rt.index_max")
def index_max(target, index, value, *, ans, g):
    best = rt.index_max(xp.full_like(target, -xp.inf), index, value)
    kept = xp.astype(target >= best, g.dtype)
    won = xp.astype(value >= xp.maximum(target, best)[index], g.dtype)
    count = xp.maximum(rt.index_add(kept, index, won), 1.0)
    # (a value written out of range is dropped, as JAX drops it: no cotangent, whatever ``g[index]`` reads)
    dropped = won * g[index] * rt.in_bounds(target, index)
    return g * kept / count, None, rt.unbroadcast(dropped / count[index], value)


@jvp(index_max)
def index_max_forward(target, index, value, *, ans, target_dot, value_dot):
    best = rt.index_max(xp.full_like(target, -xp.inf), index, value)
    kept = xp.astype(target >= best, ans.dtype)
    won = xp.astype(value >= xp.maximum(target, best)[index], ans.dtype)
    count = xp.maximum(rt.index_add(kept, index, won), 1.0)
    return (
        target_dot * kept / count,
        None,
        rt.index_add(xp.zeros_like(ans), index, value_dot * won / count[index]),
    )


@vjp(name="rt.index_min")
def index_min(target, index, value, *, ans, g):
    best = rt.index_min(xp.full_like(target, xp.inf), index, value)
    kept = xp.astype(target <= best, g.dtype)
    won = xp.astype(value <= xp.minimum(target, best)[index], g.dtype)
    count = xp.maximum(rt.index_add(kept, index, won), 1.0)
    dropped = won * g[index] * rt.in_bounds(target, index)
    return g * kept / count, None, rt.unbroadcast(dropped / count[index], value)


@jvp(index_min)
def index_min_forward(target, index, value, *, ans, target_dot, value_dot):
    best = rt.index_min(xp.full_like(target, xp.inf), index, value)
    kept = xp.astype(target <= best, ans.dtype)
    won = xp.astype(value <= xp.minimum(target, best)[index], ans.dtype)
    count = xp.maximum(rt.index_add(kept, index, won), 1.0)
    return (
        target_dot * kept / count,
        None,
        rt.index_add(xp.zeros_like(ans), index, value_dot * won / count[index]),
    )


@linear(name="rt.require_unique")
def require_unique(x, index, unique_indices=False, *, g):
    return rt.require_unique(g, index, unique_indices)


nondiff("an index: positions clamped into their axes", "rt.clip_index")
nondiff("a mask: which positions an index reads inside the array", "rt.in_bounds")
nondiff("a constant chosen by the dtype", "rt.default_fill")
nondiff("an index: positions moved onto a padded copy", "rt.fill_index")
nondiff("pad widths: shapes", "rt.fill_padding")

twin("batching", "rt.index_multiply", "rt.index_min", "rt.index_max")


@batch_rule("rt.require_unique")
def require_unique_batched(x, index, unique_indices=False, *, batched):
    return rt.batching.require_unique(x, index, unique_indices, batched)


@batch_rule("rt.clip_index")
def clip_index(target, index, *, batched):
    return rt.batching.clip_index(target, index, batched)


@batch_rule("rt.in_bounds")
def in_bounds(target, index, *, batched):
    return rt.batching.in_bounds(target, index, batched)


@batch_rule("rt.fill_index")
def fill_index(target, index, *, batched):
    return rt.batching.fill_index(target, index, batched)


signature_of(rt.default_fill, "rt.default_fill")
signature_of(rt.fill_padding, "rt.fill_padding")
batch("example", "rt.default_fill", "rt.fill_padding")
