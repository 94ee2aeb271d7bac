"""``rt.ravel`` and ``rt.unravel_like`` in batched generated code (``s2s.vmap``): one vector per example.

Conventions as in ``batching.py`` (batch axis 0, ``batched`` flags per data
operand; a batched tree has the batch axis on every leaf). Each example's
leaves are raveled and joined along axis 1; a vector of each example's values
is cut back into the leaves' example shapes.
"""

import numpy as np

from .arrays import namespace
from .batch_axes import broadcast_batch
from .tree_calls import leaves, unflatten_like


def _example_shapes(tree, batched) -> list:
    return [np.shape(leaf)[1:] if batched else np.shape(leaf) for leaf in leaves(tree)]


def ravel(tree, batched):
    """Per-example ``rt.ravel(tree_i)``: ``(batch, total size)``."""
    parts = leaves(tree)
    xp = namespace(*parts)
    dtype = xp.result_type(*parts)
    return xp.concatenate(
        [xp.reshape(xp.asarray(p, dtype=dtype), (np.shape(p)[0], -1)) for p in parts],
        axis=1,
    )


def _cut(flat, shapes, tree):
    xp = namespace(flat)
    out, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape, dtype=int))
        out.append(
            xp.reshape(flat[:, start : start + size], (np.shape(flat)[0], *shape))
        )
        start += size
    return unflatten_like(tree, out)


def ravel_vjp(g, tree, batched):
    """Per-example ``rt.ravel_vjp(g_i, tree_i)``."""
    if not batched[0]:
        g = broadcast_batch(g, np.shape(leaves(tree)[0])[0])
    return _cut(g, _example_shapes(tree, batched[1]), tree)


def unravel_like(tree, flat, batched):
    """Per-example ``rt.unravel_like(tree_i, flat_i)``."""
    t_flag, f_flag = bool(batched[0]), bool(batched[1])
    if not f_flag:
        flat = broadcast_batch(flat, np.shape(leaves(tree)[0])[0])
    return _cut(flat, _example_shapes(tree, t_flag), tree)


def unravel_like_vjp(g, tree, batched):
    """Per-example ``rt.unravel_like_vjp(g_i, tree_i)``: each example's cotangents raveled."""
    return ravel(g, (True,))
