"""s2s: source-to-source differentiation of NumPy programs, compiled through XLA.

import s2s
df = s2s.grad(loss)          # same semantics as jax.grad
df(params, x, y)             # runs compiled by XLA
print(df.source)             # the generated gradient module

The public names are imported on first use (PEP 562): generated modules run
``from s2s import runtime as rt``, and that import must not load the compiler
(libcst, black) or JAX. ``tests/test_standalone_runtime.py`` checks it in a
fresh interpreter.
"""

import importlib

__version__ = "0.1.0"

# public name -> the module (relative to this package) that defines it
_PUBLIC = {
    "Transformed": ".api",
    "grad": ".api",
    "jvp": ".api",
    "jvp_source": ".api",
    "linearize": ".api",
    "transform": ".api",
    "value_and_grad": ".api",
    "vjp": ".api",
    "check_grads": ".checking",
    "generate": ".codegen",
    "custom_jvp": ".custom",
    "custom_vjp": ".custom",
    "stop_gradient": ".custom",
    "S2SError": ".errors",
    "hessian": ".jacobians",
    "jacfwd": ".jacobians",
    "jacrev": ".jacobians",
    "jit": ".jit",
    "data_parallel": ".parallel",
    "pmap": ".parallel",
    "axis_index": ".runtime.collectives",
    "pmax": ".runtime.collectives",
    "pmean": ".runtime.collectives",
    "pmin": ".runtime.collectives",
    "psum": ".runtime.collectives",
    "vmap": ".vmapping",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 's2s' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # looked up once
    return value


def __dir__():
    return sorted({*globals(), *_PUBLIC})
