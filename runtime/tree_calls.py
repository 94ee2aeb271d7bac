"""The user's ``jax.tree_util`` calls: a tree's leaves in JAX's order, and a tree rebuilt from new leaves.

``jax.tree_util.tree_leaves(params)`` is ``rt.leaves(params)``, and
``jax.tree_util.tree_map(f, tree, other)`` is a loop calling ``f`` on the
leaves of ``tree`` and ``other`` side by side, whose results
``rt.unflatten_like(tree, results)`` puts back in ``tree``'s structure
(``frontend/tree_calls.py``). The order is JAX's: dict entries by sorted
key, ``None`` no leaf, a registered record's children as JAX flattens them.
Both are linear: the cotangent of ``leaves`` is the tree rebuilt from the
leaves' cotangents, and the other way round.
"""

from __future__ import annotations

import numpy as np

from .trees import _child, _children, _is_container, _rebuild, zeros_like_float


def _ordered(tree):
    """``tree``'s children in JAX's flattening order (a dict's by sorted key)."""
    children = _children(tree)
    return (
        sorted(children, key=lambda kv: kv[0]) if isinstance(tree, dict) else children
    )


def leaves(tree) -> list:
    """``jax.tree_util.tree_leaves(tree)``: the arrays and scalars of ``tree``, in JAX's order."""
    if tree is None:
        return []
    if not _is_container(tree):
        return [tree]
    return [leaf for _, child in _ordered(tree) for leaf in leaves(child)]


def leaf_paths(tree) -> list:
    """The key paths of ``tree``'s leaves, in ``leaves``' order, as JAX's
    ``tree_flatten_with_path`` gives them (``(DictKey(key='w'),)``): Python values, the same for every
    example and with no derivative."""
    import jax

    paths = [path for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]
    if len(paths) != len(leaves(tree)):
        raise TypeError(
            "tree_map_with_path of a tree whose leaves JAX counts otherwise"
        )
    return paths


def keystr(path, **options) -> str:
    """``jax.tree_util.keystr(path)``: a key path's text (``"['dense']['bias']"``), a Python string."""
    import jax

    return jax.tree_util.keystr(path, **options)


def unflatten_like(tree, new_leaves):
    """``tree``'s structure holding ``new_leaves`` (in ``leaves``' order); ``None`` stays ``None``."""
    it = iter(new_leaves)
    out = _fill(tree, it)
    if next(it, _END) is not _END:
        raise ValueError("more leaves than the tree has places for")
    return out


_END = object()


def _fill(tree, it):
    if tree is None:
        return None
    if not _is_container(tree):
        return next(it)
    filled = {key: _fill(child, it) for key, child in _ordered(tree)}
    return _rebuild(tree, [(key, filled[key]) for key, _ in _children(tree)])


def leaves_vjp(g, tree):
    """The cotangent of ``tree`` in ``leaves(tree)``: ``g``'s items in ``tree``'s structure (None: zeros)."""
    return unflatten_like(
        tree,
        [zeros_like_float(x) if d is None else d for d, x in zip(g, leaves(tree))],
    )


def unflatten_like_vjp(g, tree, new_leaves):
    """The cotangent of ``new_leaves`` in ``unflatten_like(tree, new_leaves)``: ``g``'s leaves, as a list."""
    found = _along(g, tree)
    return [zeros_like_float(x) if d is None else d for d, x in zip(found, new_leaves)]


def _along(g, tree) -> list:
    """``g``'s parts at ``tree``'s leaves, in ``leaves``' order (None where ``g`` holds none)."""
    if tree is None:
        return []
    if not _is_container(tree):
        return [g]
    return [
        part
        for key, child in _ordered(tree)
        for part in _along(None if g is None else _child(g, key), child)
    ]


def ravel(tree):
    """``jax.flatten_util.ravel_pytree(tree)[0]``: the leaves, raveled, one after another in one vector."""
    from .arrays import namespace

    parts = leaves(tree)
    if not parts:
        return np.zeros(0)
    xp = namespace(*parts)
    dtype = xp.result_type(*parts)
    return xp.concatenate([xp.ravel(xp.asarray(p, dtype=dtype)) for p in parts])


def unravel_like(tree, flat):
    """``ravel_pytree(tree)[1](flat)``: ``tree``'s structure, each leaf's place read from ``flat`` in its shape."""
    from .arrays import namespace

    xp = namespace(flat)
    out, start = [], 0
    for leaf in leaves(tree):
        size = int(np.size(leaf))
        out.append(xp.reshape(flat[start : start + size], np.shape(leaf)))
        start += size
    if start != np.shape(flat)[0]:
        raise ValueError(
            f"unravel of a vector of {np.shape(flat)[0]} values for a tree of {start}"
        )
    return unflatten_like(tree, out)


def ravel_vjp(g, tree):
    """The cotangent of ``tree`` in ``ravel(tree)``: ``g`` cut back into the leaves' shapes."""
    return unravel_like(tree, g)


def unravel_like_vjp(g, tree):
    """The cotangent of ``flat`` in ``unravel_like(tree, flat)``: ``g``'s leaves raveled into one vector
    (zeros where ``g`` holds none)."""
    return ravel(unflatten_like(tree, unflatten_like_vjp(g, tree, leaves(tree))))


__all__ = [
    "leaves",
    "leaves_vjp",
    "ravel",
    "ravel_vjp",
    "unflatten_like",
    "unflatten_like_vjp",
    "unravel_like",
    "unravel_like_vjp",
]
