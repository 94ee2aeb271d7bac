"""JAX oracles, compiled once per argument shapes (``jax.jit``), never run op by op.

The op-table harnesses call JAX on every drawn example. Eagerly, JAX compiles
each primitive of a derivative on its own, per shape (hundreds of compiles for
a ``scipy.stats`` density); one compile of the whole oracle is several times
cheaper (``conftest`` compiles it without XLA's optimizing passes).
"""

import jax


def Oracle(fn):
    """``fn`` under ``jax.jit``: compiled for each new structure, shapes and dtypes of its arguments."""
    return jax.jit(fn)


def output_shape(fn, *args) -> tuple[int, ...]:
    """The shape of ``fn(*args)``, traced by JAX, never run."""
    return jax.eval_shape(fn, *args).shape
