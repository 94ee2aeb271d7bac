"""NumPy's and SciPy's functions that s2s has no rule for, run on values Python knows.

``np.polynomial.legendre.leggauss(n)`` inside a function: JAX runs such a
NumPy call once, when it traces the function, on the concrete values it is
given; so does ``host_call``. The compiler sends a call here only where no
argument is a function, and its rules make it an error wherever a derivative
or a batch axis would have to go through it; here a traced argument (computed
by the compiled code) is a located refusal, never a guess.
"""

from __future__ import annotations

from .arrays import _is_jax
from .located import Refusal
from .trees import tree_leaves


def host_call(fn, *args, keywords=None):
    """``fn(*args, **keywords)`` on the values Python holds; a ``Refusal`` where one is traced."""
    keywords = keywords or {}
    if any(_is_traced(leaf) for leaf in tree_leaves((args, keywords))):
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
        raise Refusal(
            f"`{name}` (from {getattr(fn, '__module__', 'a library')}) has no s2s rule: it runs on values "
            "known when the code is traced, and one of its arguments is computed by the compiled code",
            "compute it outside the function and pass it in, or give it arguments known when the code is "
            "traced (literals, defaults, shapes)",
        )
    return fn(*args, **keywords)


def _is_traced(leaf) -> bool:
    if not _is_jax(leaf):
        return False
    import jax

    return isinstance(leaf, jax.core.Tracer)


__all__ = ["host_call"]
