"""Two batch axes as one: an inner ``vmap`` (``jax.vmap(f)(xs)``, ``np.vectorize``) inside a function that
``s2s.vmap`` maps again runs ``f``'s batched module once over ``outer * inner`` examples.

``merged_examples(x, outer, inner, b1, b2)`` gives an argument the merged batch axis in front: ``x``
has the outer batch axis 0 when ``outer``, and the inner mapped axis ``inner`` of each example (None:
not mapped by the inner ``vmap``); one it lacks is broadcast. ``split_examples(y, b1, b2, out_axes)``
cuts each output's merged axis back into the outer axis (0) and the inner one, put at ``out_axes``
(None: the inner ``vmap``'s output is the same for each inner example, the first is kept). Both are
linear; ``*_vjp`` are their transposes (a broadcast's transpose sums).
"""

from __future__ import annotations

import numpy as np

from .arrays import namespace
from .trees import _child, _children, _is_container, _rebuild, tree_map


def _inner_axis(inner: int, outer: bool, ndim: int) -> int:
    """The inner mapped axis of an array of ``ndim`` axes (past the outer batch axis when ``outer``)."""
    rank = ndim - 1 if outer else ndim
    return inner % rank + (1 if outer else 0)


def merged_examples(x, outer, inner, b1, b2):
    """``x`` with ``(b1, b2)`` in front (outer, inner), merged into one axis of ``b1 * b2`` examples; each
    leaf of a tree (a dict of per-example gradients) so."""
    return tree_map(lambda leaf: _merged(leaf, outer, inner, b1, b2), x)


def _merged(x, outer, inner, b1, b2):
    xp = namespace(x)
    x = xp.asarray(x)
    if inner is not None:
        x = xp.moveaxis(x, _inner_axis(inner, outer, np.ndim(x)), 1 if outer else 0)
    if not outer:
        x = xp.broadcast_to(x[None], (b1, *np.shape(x)))
    if inner is None:
        x = xp.broadcast_to(x[:, None], (b1, b2, *np.shape(x)[1:]))
    return xp.reshape(x, (b1 * b2, *np.shape(x)[2:]))


def _leafwise(fn, g, x):
    """``fn(leaf, like)`` for each leaf of ``g`` and the leaf of ``x`` at its place (``None`` kept)."""
    if g is None:
        return None
    if _is_container(g):
        return _rebuild(
            g, [(k, _leafwise(fn, v, _child(x, k))) for k, v in _children(g)]
        )
    return fn(g, x)


def merged_examples_vjp(g, x, outer, inner, b1, b2):
    """The transpose of ``merged_examples``: ``g`` of the merged examples back to ``x``'s layout."""
    return _leafwise(
        lambda leaf, like: _merged_vjp(leaf, np.ndim(like), outer, inner, b1, b2), g, x
    )


def _merged_vjp(g, ndim, outer, inner, b1, b2):
    """``g`` of the merged examples back to the layout of an argument of ``ndim`` axes (the outer batch
    axis 0 among them when ``outer``; summed away when not)."""
    xp = namespace(g)
    g = xp.reshape(g, (b1, b2, *np.shape(g)[1:]))
    if inner is None:
        g = xp.sum(g, axis=1)
    if not outer:
        g = xp.sum(g, axis=0)
    if inner is not None:
        g = xp.moveaxis(g, 1 if outer else 0, _inner_axis(inner, outer, ndim))
    return g


def _split(y, b1, b2, axis):
    xp = namespace(y)
    y = xp.reshape(y, (b1, b2, *np.shape(y)[1:]))
    if axis is None:
        return y[:, 0]
    return xp.moveaxis(y, 1, axis % (np.ndim(y) - 1) + 1)


def _split_vjp(g, b1, b2, axis):
    xp = namespace(g)
    if axis is None:
        zeros = xp.zeros((b1, b2 - 1, *np.shape(g)[1:]), xp.result_type(g))
        whole = xp.concatenate([g[:, None], zeros], axis=1)
    else:
        whole = xp.moveaxis(g, axis % (np.ndim(g) - 1) + 1, 1)
    return xp.reshape(whole, (b1 * b2, *np.shape(whole)[2:]))


def _per_output(fn, y, out_axes):
    """``fn(leaf, axis)`` over ``y``'s leaves, ``out_axes`` an int or None for all, or a tuple with one
    per output of a tuple ``y``."""
    if isinstance(out_axes, tuple) and isinstance(y, (tuple, list)):
        return type(y)(
            tree_map(lambda leaf, a=a: fn(leaf, a), item)
            for item, a in zip(y, out_axes)
        )
    return tree_map(lambda leaf: fn(leaf, out_axes), y)


def split_examples(y, b1, b2, out_axes):
    """Each output's merged axis cut into the outer batch axis (0) and the inner one (at ``out_axes``)."""
    return _per_output(lambda leaf, axis: _split(leaf, b1, b2, axis), y, out_axes)


def split_examples_vjp(g, b1, b2, out_axes):
    """The transpose of ``split_examples``."""
    return _per_output(lambda leaf, axis: _split_vjp(leaf, b1, b2, axis), g, out_axes)


def outer_cotangent(g, x, outer, inner, b1, b2):
    """The cotangent of an argument ``x`` of a vjp mapped again, per outer example: ``g`` holds one per
    merged example (``b1 * b2``); each outer example's is the sum over its inner examples (``x`` not
    mapped by the inner ``vmap``), or those stacked where the inner ``vmap`` maps ``x`` (its axis
    ``inner`` of an example). ``x`` has the outer batch axis 0 when ``outer``. Each leaf of a tree so.
    """
    # (``merged_examples_vjp`` of ``x`` as if the outer ``vmap`` mapped it: its outer axis kept)
    return _leafwise(
        lambda leaf, like: _merged_vjp(
            leaf, np.ndim(like) + (0 if outer else 1), True, inner, b1, b2
        ),
        g,
        x,
    )
