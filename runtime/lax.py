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
def clamp(min, x, max):
    return np.minimum(np.maximum(x, min), max)


@library("jax.lax.integer_pow")
@quiet
def integer_pow(x, y):
    if y < 0:
        return 1 / np.power(x, -y)
    return np.power(x, y)
