"""Collectives over a named mapped axis: ``psum``, ``pmean``, ``pmax``, ``pmin``, ``axis_index``.

Written in a function that ``s2s.vmap(..., axis_name="i")`` (or ``s2s.pmap``)
maps, ``s2s.psum(x, "i")`` (or ``jax.lax.psum``) combines ``x`` over every
example of that axis, as JAX's do: the batching transform rewrites each call
naming its axis into the ``*_examples`` function below, which reduces over
the batch axis (axis 0) of a batched value. A collective that s2s did not
rewrite is JAX's own (``jax.vmap`` may bind its name), or JAX's ``NameError``
for an unbound axis name. ``x`` may be a tree
(a dict of gradients); the collective applies to every leaf.
"""

import sys

import numpy as np

from .arrays import namespace
from .batch_axes import tree_sum_batch, unsum_batch
from .trees import tree_map

__all__ = [
    "axis_index",
    "axis_index_examples",
    "pmax",
    "pmax_examples",
    "pmean",
    "pmean_examples",
    "pmean_examples_vjp",
    "pmin",
    "pmin_examples",
    "psum",
    "psum_examples",
]


def _outside_s2s(name, *args):
    """A collective that no s2s-mapped function rewrote: JAX's own when JAX traces the caller (``jax.vmap``
    binds the name), else JAX's error for a name that nothing binds."""
    jax = sys.modules.get("jax")
    if jax is not None:
        return getattr(jax.lax, name)(*args)
    raise NameError(f"unbound axis name: {args[-1]}")


def psum(x, axis_name):
    """The sum of ``x`` over the mapped axis ``axis_name`` (inside ``s2s.vmap``/``s2s.pmap``, or JAX's)."""
    return _outside_s2s("psum", x, axis_name)


def pmean(x, axis_name):
    """The mean of ``x`` over the mapped axis ``axis_name`` (inside ``s2s.vmap``/``s2s.pmap``, or JAX's)."""
    return _outside_s2s("pmean", x, axis_name)


def pmax(x, axis_name):
    """The maximum of ``x`` over the mapped axis ``axis_name`` (inside ``s2s.vmap``/``s2s.pmap``, or JAX's)."""
    return _outside_s2s("pmax", x, axis_name)


def pmin(x, axis_name):
    """The minimum of ``x`` over the mapped axis ``axis_name`` (inside ``s2s.vmap``/``s2s.pmap``, or JAX's)."""
    return _outside_s2s("pmin", x, axis_name)


def axis_index(axis_name):
    """This example's position along the mapped axis ``axis_name`` (inside ``s2s.vmap``/``s2s.pmap``, or JAX's)."""
    return _outside_s2s("axis_index", axis_name)


# batched ``x`` (axis 0 is the batch): the same value for every example, without a batch axis
psum_examples = tree_sum_batch


def pmean_examples(x):
    return tree_map(lambda leaf: namespace(leaf).mean(leaf, axis=0), x)


def pmean_examples_vjp(ct, like):
    """The cotangent of ``pmean_examples``: ``g`` shared out over ``like``'s examples."""
    return tree_map(lambda leaf: leaf / len(leaf), unsum_batch(ct, like))


def pmax_examples(x):
    return tree_map(lambda leaf: namespace(leaf).max(leaf, axis=0), x)


def pmin_examples(x):
    return tree_map(lambda leaf: namespace(leaf).min(leaf, axis=0), x)


def axis_index_examples(size):
    """Each example's position: ``arange(size)``, batched."""
    return np.arange(size)
