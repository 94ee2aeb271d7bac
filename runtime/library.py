"""How the runtime's library functions (``rt.nn``, ``rt.special``, ``rt.lax``, ``rt.stats``) run on each backend.

Generated code spells a library function the user called (``jax.nn.relu``,
``scipy.special.gammaln``, ``jax.scipy.stats.norm.logpdf``) as one runtime
function (``rt.nn.relu``, ``rt.special.gammaln``, ...). Each is written as its
NumPy implementation under ``@library("jax.nn.relu")``: on JAX values (arrays
or tracers, under ``jax.jit``) the call goes to JAX's own function, so the
compiled numerics are JAX's; on NumPy values it runs the NumPy implementation.

NumPy implementations are exact NumPy formulas (JAX's own formula where JAX
has one), or ``scipy.special`` where no closed form exists (``gammaln``,
``digamma``, ``erfinv``, ...). SciPy is not a dependency of s2s: without it,
those few run JAX's function in float64 on the host and convert back
(``scipy_special``).
"""

from __future__ import annotations

import functools
import importlib

import numpy as np

from .trees import uses_jax


@functools.cache
def _object(path: str):
    """The object at a dotted path (``jax.nn.relu``), importing its module."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(path)


def library(jax_path: str):
    """Decorate a NumPy implementation: on JAX values, call JAX's function at ``jax_path`` instead."""

    def wrap(numpy_impl):
        @functools.wraps(numpy_impl)
        def run(*args, **kwargs):
            if uses_jax(args, list(kwargs.values())):
                return _object(jax_path)(*args, **kwargs)
            return numpy_impl(*args, **kwargs)

        return run

    return wrap


def scipy_special(name: str, *args):
    """``scipy.special.<name>(*args)`` on NumPy values; without SciPy, JAX's function in float64, converted back."""
    try:
        import scipy.special
    except ImportError:
        return _through_jax(f"jax.scipy.special.{name}", *args)
    return getattr(scipy.special, name)(*args)


def _through_jax(path: str, *args):
    """JAX's function on the host in float64 (``jax.enable_x64``), the result as NumPy in the inputs' dtype."""
    import jax

    arrays = [np.asarray(a) for a in args]
    dtype = np.result_type(*(a.dtype for a in arrays), 1.0)
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays]
    with jax.enable_x64(True):
        out = _object(path)(*wide)
    return np.asarray(out).astype(dtype)


def quiet(fn):
    """Run ``fn`` without NumPy's floating-point warnings (``log(0)``, ``exp(1000)``): JAX gives none."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return run
