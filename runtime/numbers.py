"""NumPy functions of numbers known when the code is traced: ``int(np.prod(x.shape[1:]))``,
``int(np.ceil(0.25 * len(losses)))``, ``int(np.sqrt(x.size))``; and of a display of them:
``np.split(flat, np.cumsum([4, 3]))`` (split points as a parameter vector's unflattening reads them).

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
        "cumsum", "cumprod", "diff",
    }
)  # fmt: skip


def _static(name):
    def static(*args, **kwargs):
        if any(_is_jax(leaf) for leaf in tree_leaves((args, kwargs))):
            import jax.numpy as jnp

            return getattr(jnp, name)(*args, **kwargs)
        out = getattr(np, name)(*args, **kwargs)
        python = all(type(leaf) in (int, float, bool) for leaf in tree_leaves(args))
        # (of Python's numbers, Python's number; of NumPy's values, NumPy's, in their dtype)
        return out.item() if np.ndim(out) == 0 and python else out

    static.__name__ = name
    return static


# ``math``'s functions of integers (``math.factorial(k)``, ``math.comb(n, k)``): Python's, of the numbers
# known when the code is traced (a loop's counter over a fixed range, a shape)
INTEGERS = frozenset({"factorial", "comb", "perm", "gcd", "lcm", "isqrt"})


def _integer(name):
    import math

    def integer(*args):
        if any(_is_jax(leaf) for leaf in tree_leaves(args)):
            return _TRACED[name](*args)  # (a compiled loop's counter)
        return getattr(math, name)(*(int(a) for a in args))

    integer.__name__ = name
    return integer


def _traced_factorial(n):
    """``math.factorial`` of a traced integer: a table's entry (exact as a float up to 170!)."""
    import math

    import jax.numpy as jnp

    table = jnp.asarray([float(math.factorial(k)) for k in range(171)])
    return table[jnp.clip(jnp.asarray(n, int), 0, 170)]


def _traced_ratio(top, *bottom):
    """``top! / (b1! b2! ...)`` of traced integers, rounded (``comb``, ``perm``)."""
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    logs = gammaln(jnp.asarray(top, float) + 1) - sum(
        gammaln(jnp.asarray(b, float) + 1) for b in bottom
    )
    return jnp.round(jnp.exp(logs))


def _traced_isqrt(n):
    import jax.numpy as jnp

    return jnp.floor(jnp.sqrt(jnp.asarray(n, float))).astype(int)


def _traced_gcd_lcm(name):
    def fn(a, b):
        import jax.numpy as jnp

        return getattr(jnp, name)(jnp.asarray(a, int), jnp.asarray(b, int))

    return fn


_TRACED = {
    "factorial": _traced_factorial,
    "comb": lambda n, k: _traced_ratio(n, k, n - k),
    "perm": lambda n, k: _traced_ratio(n, n - k),
    "isqrt": _traced_isqrt,
    "gcd": _traced_gcd_lcm("gcd"),
    "lcm": _traced_gcd_lcm("lcm"),
}


def __getattr__(name):
    if name in INTEGERS:
        fn = _integer(name)
    elif name in FUNCTIONS:
        fn = _static(name)
    else:
        raise AttributeError(f"rt.numbers has no `{name}`")
    globals()[name] = fn
    return fn
