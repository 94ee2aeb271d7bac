"""``rt.lax``: the ``jax.lax`` elementwise ops that NumPy has no function for; JAX's own on JAX values.

(``lax.exp``, ``lax.max``, ``lax.select``, ... are spelled ``xp.exp``,
``xp.maximum``, ``xp.where`` in generated code: NumPy has them.)
"""

from __future__ import annotations

import numpy as np

from .library import library, quiet


@library("jax.lax.rsqrt")
@quiet
def rsqrt(x):
    return 1 / np.sqrt(x)


@library("jax.lax.clamp")
def _clamp(min, x, max):
    return np.minimum(np.maximum(x, min), max)


def clamp(min, x, max):
    """``lax.clamp``; array operands of different shapes are broadcast to one first.

    A batched module passes a per-example bound next to a shared operand (or
    the other way round); JAX's batching rule for ``clamp`` broadcasts them too.
    """
    shapes = [np.shape(v) for v in (min, x, max)]
    arrays = [s for s in shapes if s]
    if any(s != arrays[0] for s in arrays):
        from .arrays import namespace

        xp = namespace(min, x, max)
        full = np.broadcast_shapes(*shapes)
        min, x, max = (
            xp.broadcast_to(v, full) if np.shape(v) else v for v in (min, x, max)
        )
    return _clamp(min, x, max)


@library("jax.lax.integer_pow")
@quiet
def integer_pow(x, y):
    if y < 0:
        return 1 / np.power(x, -y)
    return np.power(x, y)
