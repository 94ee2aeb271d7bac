"""``jax.numpy`` as compiled code calls it, with index arithmetic on known integers kept known.

NumPy code computes sizes, offsets and split points with NumPy's functions of integers it knows
(``np.cumsum(sizes)``, ``np.prod(shape)``, ``np.arange(n)``), then slices, splits and reshapes with
them. ``jax.numpy`` would trace those values under ``jax.jit``, and a traced value cannot be a slice's
bound or a shape. ``namespace`` gives compiled code this twin of ``jax.numpy`` instead, which differs
in one way: a function called with integers and booleans only (and options: strings, dtypes, None),
every one known when the code is traced (Python's, NumPy's), that gives integers or booleans, is
computed by NumPy, so its value stays known as it is on the NumPy backend. Any other call (a traced
argument, a float, a float result) is ``jax.numpy``'s, unchanged. Every other attribute is
``jax.numpy``'s own.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from .trees import tree_leaves, uses_jax

# functions that make arrays of a given shape: their arguments are integers, their values rarely are;
# left to ``jax.numpy`` without trying NumPy first (a large buffer is not computed twice)
_MAKERS = frozenset(
    {
        "zeros", "ones", "empty", "full", "eye", "identity", "tri", "linspace", "logspace",
        "geomspace", "zeros_like", "ones_like", "empty_like", "full_like",
    }
)  # fmt: skip


def _known_integer(leaf) -> bool:
    if isinstance(leaf, (bool, int, np.bool_, np.integer)):
        return True
    return isinstance(leaf, np.ndarray) and leaf.dtype.kind in "biu"


def _option(leaf) -> bool:
    return leaf is None or isinstance(leaf, (str, type, np.dtype))


def _integers_only(out) -> bool:
    leaves = tree_leaves(out)
    return bool(leaves) and all(np.asarray(leaf).dtype.kind in "biu" for leaf in leaves)


class KnownIntegers(np.ndarray):
    """NumPy's integers computed while tracing: an item or slice is NumPy's (a bound, a split point), but an
    index a compiled loop's counter or other traced value gives is ``jax.numpy``'s (NumPy cannot read it).
    """

    def __getitem__(self, index):
        if uses_jax(index):
            import jax.numpy as jnp

            return jnp.asarray(self.view(np.ndarray))[index]
        return super().__getitem__(index)


def _known(out):
    """NumPy's result, its arrays ``KnownIntegers``."""
    if type(out) is np.ndarray:
        return out.view(KnownIntegers)
    if type(out) in (tuple, list):
        return type(out)(_known(o) for o in out)
    return out


# sorts JAX makes stable by default (ties keep their order), as NumPy's stable kind does
_STABLE = frozenset({"sort", "argsort"})


def _folded(name, jax_fn):
    numpy_fn = getattr(np, name)
    if name in _STABLE:
        numpy_fn = functools.partial(numpy_fn, kind="stable")

    def fn(*args, **kwargs):
        leaves = tree_leaves((args, kwargs))
        known = [leaf for leaf in leaves if not _option(leaf)]
        if known and all(_known_integer(leaf) for leaf in known):
            try:
                out = numpy_fn(*args, **kwargs)
            except (
                Exception
            ):  # a call NumPy spells otherwise: jax.numpy's, which reports its own errors
                out = None
            if out is not None and _integers_only(out):
                python = all(type(leaf) in (int, bool) for leaf in known)
                # (of Python's numbers a Python number, weakly typed as the literal it stands for)
                if python and isinstance(out, np.generic):
                    return out.item()
                return _known(out)
        return jax_fn(*args, **kwargs)

    fn.__name__ = name
    fn.__wrapped__ = jax_fn
    return fn


class _FoldedUfunc:
    """A ``jax.numpy`` ufunc (``maximum``, ``add``) called as above; its methods (``.at``, ``.reduce``) are its own."""

    def __init__(self, name, ufunc):
        self._call = _folded(name, ufunc)
        self._ufunc = ufunc

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, attr):
        return getattr(self._ufunc, attr)


class _Namespace(types.ModuleType):
    """The twin: ``jax.numpy``'s attributes, its functions folded on known integers (made on first use)."""

    def __getattr__(self, name):
        import jax.numpy as jnp

        value = getattr(jnp, name)
        if name not in _MAKERS and hasattr(np, name) and not name.startswith("_"):
            if type(value).__name__ == "ufunc":
                value = _FoldedUfunc(name, value)
            elif callable(value) and not isinstance(value, type):
                value = _folded(name, value)
        setattr(self, name, value)
        return value


jnp = _Namespace("s2s.runtime.jax_numpy", __doc__)
