"""Arguments that hold values which are not arrays, compiled as ``equinox.filter_jit`` compiles them.

An Equinox model passed to a compiled s2s function is a pytree whose leaves are
its arrays and also its activation functions (``eqx.nn.MLP``): ``jax.jit``
cannot take a function as an argument. ``call`` compiles the function for the
array leaves only; every other leaf (a function, a string) is held fixed in the
compiled program, once per distinct set of such leaves, as Python ints, bools
and strings given as whole arguments are.
"""

from __future__ import annotations


def _held(leaf) -> bool:
    """A leaf that ``jax.jit`` cannot trace: not an array, nor a Python number."""
    return not (hasattr(leaf, "shape") or isinstance(leaf, (bool, int, float, complex)))


def _may_hold(value) -> bool:
    """Whether ``value`` may hold a leaf ``jax.jit`` cannot trace: an object other than an array, a number,
    a string or None, found in it through tuples, lists and dicts (cheaper than flattening every call).
    """
    if hasattr(value, "shape") or isinstance(value, (bool, int, float, complex, str)):
        return False
    if isinstance(value, dict):
        return any(_may_hold(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return any(_may_hold(v) for v in value)
    return value is not None


def call(runner, args, static):
    """``runner.fn(*args)`` compiled for the array leaves of the arguments not in ``static`` (their
    positions), with the held leaves and the ``static`` arguments fixed; None when no argument holds one.
    """
    if not any(_may_hold(a) for i, a in enumerate(args) if i not in static):
        return None
    import jax

    traced = [None if i in static else a for i, a in enumerate(args)]
    flat, treedef = jax.tree_util.tree_flatten(traced)
    mask = tuple(_held(leaf) for leaf in flat)
    if not any(mask):
        return None
    held = tuple(leaf for leaf, m in zip(flat, mask) if m)
    fixed = tuple(args[i] for i in static)
    key = ("held", static, fixed, treedef, mask, held)
    jitted = runner._jitted.get(key)
    if jitted is None:

        def run(dynamic):
            dynamic, kept = iter(dynamic), iter(held)
            leaves = [next(kept) if m else next(dynamic) for m in mask]
            full = jax.tree_util.tree_unflatten(treedef, leaves)
            for i, value in zip(static, fixed):
                full[i] = value
            return runner.fn(*full)

        jitted = runner._jitted[key] = jax.jit(run)
    return jitted([leaf for leaf, m in zip(flat, mask) if not m])


__all__ = ["call"]
