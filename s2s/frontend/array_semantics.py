"""Which arrays a function is written for: NumPy's, which augmented assignment updates in place, or JAX's,
which are immutable.

``h = x; h += 1`` changes ``x`` too in NumPy; with ``jax.numpy`` it binds ``h`` to a new array and ``x``
keeps its value. s2s reads a function as NumPy code (and refuses updates another name would see:
``passes.aliasing``) unless its own code reads ``jax.numpy`` and never ``numpy``: then, as under
``jax.grad``, ``h += v`` is ``h = h + v``.
"""

from __future__ import annotations

import sys
import types

from ..cstutil import names_in


def immutable_arrays(src) -> bool:
    """Whether ``src`` (a ``FunctionSource``) is written against ``jax.numpy`` only: a name its code reads
    is bound to ``jax.numpy`` (or to ``jax``, read as ``jax.numpy.<op>``), and none to ``numpy``.
    """
    jnp, np = sys.modules.get("jax.numpy"), sys.modules.get("numpy")
    modules = {
        id(value)
        for value in (src.env.get(n) for n in names_in(src.node))
        if isinstance(value, types.ModuleType)
    }
    jax = sys.modules.get("jax")
    reads_jax = jnp is not None and (id(jnp) in modules or id(jax) in modules)
    return reads_jax and id(np) not in modules
