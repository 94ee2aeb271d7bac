"""Arguments and results that hold values which are not arrays, compiled as ``equinox.filter_jit`` compiles them.

An Equinox model is a pytree whose leaves are its arrays and also its
activation functions (``eqx.nn.MLP``): ``jax.jit`` takes neither a function
as an argument nor one as a result. ``call`` compiles the function for the
array leaves of its arguments only; every other leaf (a function, a string) is
held fixed in the compiled program, once per distinct set of such leaves, as
Python ints, bools and strings given as whole arguments are. Results come back
with the leaves that are not arrays put back where the traced function left
them.
"""

from __future__ import annotations


def _held(leaf) -> bool:
    """A leaf that ``jax.jit`` cannot trace: not an array, nor a Python number."""
    return not (hasattr(leaf, "shape") or isinstance(leaf, (bool, int, float, complex)))


def _parameter_of(fn, args, leaf) -> str:
    """How to name the argument of ``fn`` holding ``leaf``: its parameter (a default the caller may have
    left out), else "an argument"."""
    import inspect

    import jax

    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return "an argument"
    for name, arg in zip(names, args):
        if any(x is leaf for x in jax.tree_util.tree_leaves(arg)):
            return (
                f"the argument `{name}` (or its default, where the call leaves it out)"
            )
    return "an argument"


def _check_hashable(held, fn=None, args=()) -> None:
    """A value held fixed in the compiled program must be hashable, so that another value compiles anew:
    a mutable object (a plain ``@dataclass``) could change between calls and be silently out of date.
    """
    for leaf in held:
        try:
            hash(leaf)
        except TypeError:
            kind = type(leaf).__name__
            where = _parameter_of(fn, args, leaf) if fn is not None else "an argument"
            raise TypeError(
                f"{where} holds a {kind}, which is neither an array nor a pytree of arrays, and is "
                f"mutable, so XLA cannot compile for it: register it as a pytree "
                f"(`jax.tree_util.register_dataclass`, or `@dataclass(frozen=True)` for a value "
                f"compiled in as a constant), pass its fields as arguments, or use backend='numpy'"
            ) from None


def call(runner, args, static, force=False):
    """``runner.fn(*args)`` compiled for the array leaves of the arguments not in ``static`` (their
    positions), with the held leaves and the ``static`` arguments fixed; None when no argument holds one
    (unless ``force``: a result may hold one)."""
    import jax

    traced = [None if i in static else a for i, a in enumerate(args)]
    flat, treedef = jax.tree_util.tree_flatten(traced)
    mask = tuple(_held(leaf) for leaf in flat)
    if not any(mask) and not force:
        return None
    held = tuple(leaf for leaf, m in zip(flat, mask) if m)
    _check_hashable(held, runner.fn, args)
    fixed = tuple(args[i] for i in static)
    key = ("held", static, fixed, treedef, mask, held)
    found = runner._jitted.get(key)
    if found is None:
        result = {}

        def run(dynamic):
            dynamic, kept = iter(dynamic), iter(held)
            leaves = [next(kept) if m else next(dynamic) for m in mask]
            full = jax.tree_util.tree_unflatten(treedef, leaves)
            for i, value in zip(static, fixed):
                full[i] = value
            from .backends import plain_dicts

            # (``InOrder`` dicts plain again inside, as ``Runner._traced`` gives them)
            out, out_def = jax.tree_util.tree_flatten(runner.fn(*plain_dicts(full)))
            result["structure"] = out_def
            result["held"] = [(i, x) for i, x in enumerate(out) if _held(x)]
            return [x for x in out if not _held(x)]

        found = runner._jitted[key] = (jax.jit(run), result)
    jitted, result = found
    arrays = iter(jitted([leaf for leaf, m in zip(flat, mask) if not m]))
    held_out = dict(result["held"])
    leaves = [
        held_out[i] if i in held_out else next(arrays)
        for i in range(result["structure"].num_leaves)
    ]
    return jax.tree_util.tree_unflatten(result["structure"], leaves)


__all__ = ["call"]
