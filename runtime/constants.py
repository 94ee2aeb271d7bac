"""The user module's values that a generated file reads: its NumPy arrays, as they are read under
``jax.jit``, and the literals it baked in, checked against the module (``baked``)."""

from __future__ import annotations

import sys

import numpy as np

from .arrays import _is_jax
from .located import Location, S2SError


class ConstantArray(np.ndarray):
    """A NumPy array of the user's module that generated code reads (a convolution's kernel ``K``), indexed
    by a compiled loop's counter too: ``K[i, j]`` with a traced ``i`` is ``jax.numpy``'s indexing of it (a
    NumPy array cannot be indexed by a traced value). Otherwise a NumPy array, as it was.
    """

    def __getitem__(self, index):
        leaves = index if isinstance(index, tuple) else (index,)
        if any(_is_jax(leaf) for leaf in leaves):
            import jax.numpy as jnp

            return jnp.asarray(np.asarray(self))[index]
        return np.ndarray.__getitem__(self, index)


def indexable_constant(value):
    """A module's NumPy array as a ``ConstantArray`` (any other value as it is)."""
    if type(value) is np.ndarray and value.dtype != object:
        return value.view(ConstantArray)
    return value


class BakedValueChanged(S2SError):
    """A generated file's baked-in literal is no longer what the module it was read from holds."""


MISSING = object()


def baked(module, attribute: str, value):
    """``value``, the literal a generated file was written with for ``module.attribute`` (dotted: an
    attribute of a module-level object, ``cfg.scale``), once the module
    is seen to hold it still: a value the module computes when imported (``SCALE =
    float(os.environ["SCALE"])``) may differ in this process, and the file would compute with the old one.
    Otherwise a ``BakedValueChanged`` at the file's line.
    """
    live = attribute_of(module, attribute)
    if not same_literal(live, value):
        _changed(f"`{module.__name__}.{attribute}`", value, live)
    return value


def attribute_of(obj, dotted: str):
    """``obj.a.b`` for ``dotted`` "a.b", or ``MISSING`` where one is not there."""
    for part in dotted.split("."):
        obj = getattr(obj, part, MISSING)
        if obj is MISSING:
            break
    return obj


def _changed(what: str, value, live):
    frame = sys._getframe(2)  # the generated file's line
    path, line = frame.f_code.co_filename, frame.f_lineno
    import linecache

    text = linecache.getline(path, line).rstrip("\n")
    now = "no longer defined" if live is MISSING else f"{live!r} now"
    raise BakedValueChanged(
        f"this module was generated when {what} was {value!r}; it is {now}, and the module computes "
        "with the value it was written with",
        Location(path, line, 0, len(text), text),
        "write it again (`s2s generate`, or the command in its header); a value that changes between "
        "runs is better passed as an argument",
    )


def baked_default(fn, parameter: str, value) -> None:
    """Check that ``fn``'s parameter still defaults to ``value``, the literal a generated file's calls of
    it were written with (a default computed when the module is imported may differ in this process):
    otherwise a ``BakedValueChanged`` at the file's line."""
    import inspect

    found = inspect.signature(fn).parameters.get(parameter)
    live = MISSING if found is None else found.default
    if not same_literal(live, value):
        _changed(f"the default of `{parameter}` of `{fn.__qualname__}`", value, live)


def same_literal(a, b) -> bool:
    """Whether two literals (numbers, strings, bools, None, slices, and lists, tuples and dicts of them)
    are the same value of the same kind: ``1 != 1.0 != True`` here, a NumPy scalar is the Python number it
    holds, NaN is NaN, and a dict's key order counts (a loop over it was written out in that order).
    """
    containers = (list, tuple, dict)
    if type(a) in containers or type(b) in containers:
        if type(a) is not type(b) or len(a) != len(b):
            return False
        if type(a) is dict:
            return list(a) == list(b) and all(same_literal(a[k], b[k]) for k in a)
        return all(same_literal(x, y) for x, y in zip(a, b))
    a = a.item() if isinstance(a, np.generic) else a
    b = b.item() if isinstance(b, np.generic) else b
    if type(a) is not type(b):
        return False
    return a == b or (a != a and b != b)
