"""JAX twins of example models: the same source, run with ``np`` bound to ``jax.numpy``.

The examples are ordinary NumPy modules (``import numpy as np``). Tests and
benchmarks need the same functions written against ``jax.numpy`` to hand to
``jax.grad``/``jax.jit``, and they must not drift from the NumPy version. So
``jax_twin(fn)`` re-executes the source of ``fn``'s module in a fresh
namespace, rebinds every NumPy reference in it to ``jax.numpy`` and every
function imported from another user module to that module's twin, and returns
the function of the same name.

``load_example(path)`` imports an example file by path (its folder put on
``sys.path`` first, so sibling imports such as ``from layers import dense``
resolve), registered in ``sys.modules`` so ``inspect`` can find its source.
"""

import functools
import importlib.util
import inspect
import os
import sys
import sysconfig
import types

import numpy

_LIBRARY_DIRS = tuple(
    os.path.realpath(p)
    for p in {
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
    }
)


def _is_user_module(module):
    """True for modules written by the user (not the standard library, NumPy or site-packages)."""
    path = getattr(module, "__file__", None)
    if path is None:
        return False
    path = os.path.realpath(path)
    return not path.startswith(_LIBRARY_DIRS) and "site-packages" not in path


def _to_jax(value):
    """The ``jax.numpy`` counterpart of a NumPy module or function, else ``value`` itself (or its twin)."""
    import jax.numpy as jnp

    if value is numpy:
        return jnp
    if isinstance(value, types.ModuleType):
        return value
    if callable(value) and (getattr(value, "__module__", "") or "").startswith("numpy"):
        return getattr(jnp, value.__name__, value)
    if isinstance(value, types.FunctionType):
        module = sys.modules.get(value.__module__)
        if module is not None and _is_user_module(module):
            return getattr(_twin_module(module), value.__name__)
    return value


@functools.cache
def _twin_module(module):
    source = inspect.getsource(module)
    namespace = {
        "__name__": module.__name__ + "__jax_twin",
        "__file__": module.__file__,
    }
    exec(compile(source, module.__file__, "exec"), namespace)
    for name, value in list(namespace.items()):
        if not name.startswith("__"):
            namespace[name] = _to_jax(value)
    return types.SimpleNamespace(**namespace)


def jax_twin(fn):
    """``fn`` as if its module had been written with ``import jax.numpy as np``."""
    module = sys.modules[fn.__module__]
    return getattr(_twin_module(module), fn.__name__)


def load_example(path):
    """Import the example module at ``path`` (relative paths are taken from the repository root)."""
    path = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, path))
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = os.path.splitext(os.path.basename(path))[0]
    module = sys.modules.get(name)
    if module is not None and os.path.realpath(
        getattr(module, "__file__", "")
    ) == os.path.realpath(path):
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
