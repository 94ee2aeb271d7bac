"""JAX oracles compiled once per argument shapes, by XLA without its optimizing passes.

The op-table harnesses call JAX on every drawn example. Eagerly, JAX compiles
each primitive of a derivative on its own, per shape (hundreds of compiles for
a ``scipy.stats`` density); one unoptimized compile of the whole oracle is
several times cheaper, and runs once, so its speed does not matter.
"""

import jax
import numpy as np

OPTIONS = {
    "xla_backend_optimization_level": 0,
    "xla_llvm_disable_expensive_passes": True,
}


class Oracle:
    """``fn`` compiled for each new structure, shapes and dtypes of its arguments (all arrays or trees of them)."""

    def __init__(self, fn):
        self.jitted = jax.jit(fn)
        self.compiled = {}

    def __call__(self, *args):
        leaves, tree = jax.tree.flatten(args)
        key = (tree, tuple((np.shape(a), np.asarray(a).dtype) for a in leaves))
        if key not in self.compiled:
            self.compiled[key] = self.jitted.lower(*args).compile(OPTIONS)
        return self.compiled[key](*args)


def output_shape(fn, *args) -> tuple[int, ...]:
    """The shape of ``fn(*args)``, traced by JAX, never run."""
    return jax.eval_shape(fn, *args).shape
