"""The user module's NumPy arrays that generated code reads, as it reads them under ``jax.jit``."""

from __future__ import annotations

import numpy as np

from .arrays import _is_jax


class ConstantArray(np.ndarray):
    """A NumPy array of the user's module that generated code reads (a convolution's kernel ``K``), indexed
    by a compiled loop's counter too: ``K[i, j]`` with a traced ``i`` is ``jax.numpy``'s indexing of it (a
    NumPy array cannot be indexed by a traced value). Otherwise a NumPy array, as it was.
    """

    def __getitem__(self, index):
        leaves = index if isinstance(index, tuple) else (index,)
        if any(_is_jax(leaf) for leaf in leaves):
            import jax.numpy as jnp

            return jnp.asarray(np.asarray(self))[index]
        return np.ndarray.__getitem__(self, index)


def indexable_constant(value):
    """A module's NumPy array as a ``ConstantArray`` (any other value as it is)."""
    if type(value) is np.ndarray and value.dtype != object:
        return value.view(ConstantArray)
    return value
