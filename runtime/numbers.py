"""NumPy functions of numbers known when the code is traced: ``int(np.prod(x.shape[1:]))``,
``int(np.ceil(0.25 * len(losses)))``, ``int(np.sqrt(x.size))``.

``rt.numbers.prod(x.shape[1:])`` is ``np.prod`` computed by NumPy when every argument is a Python or
NumPy number (a shape, a length, a literal), so it stays a number a shape or a slice can use under
``jax.jit`` (``jax.numpy`` would trace it); a one-element result is a Python number, which JAX reads
as weakly typed, as the literal it stands for. A traced argument (a per-example size under ``vmap``)
goes to ``jax.numpy``'s namesake.
"""

from __future__ import annotations

import numpy as np

from .arrays import _is_jax
from .trees import tree_leaves

FUNCTIONS = frozenset(
    {
        "prod", "sum", "max", "min", "ceil", "floor", "trunc", "rint", "round", "sqrt", "exp", "log",
        "log2", "log10", "abs", "maximum", "minimum", "power", "floor_divide", "mod",
    }
)  # fmt: skip


def _static(name):
    def static(*args, **kwargs):
        if any(_is_jax(leaf) for leaf in tree_leaves((args, kwargs))):
            import jax.numpy as jnp

            return getattr(jnp, name)(*args, **kwargs)
        out = getattr(np, name)(*args, **kwargs)
        return out.item() if np.ndim(out) == 0 else out

    static.__name__ = name
    return static


def __getattr__(name):
    if name not in FUNCTIONS:
        raise AttributeError(f"rt.numbers has no `{name}`")
    fn = _static(name)
    globals()[name] = fn
    return fn
