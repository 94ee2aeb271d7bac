"""Python's ``float(v)`` and ``int(v)`` of a value that may be traced.

A value known when the code runs eagerly (or traced, but concrete: a shape, a length) is Python's
number, as Python computes it. A traced one (under ``jax.jit``, a per-example value under ``vmap``)
cannot become a Python number: it is the one-element array it holds, as a 0-d array of the float or
int dtype, so ``if float(np.sum(x)) > 0:`` compiles to a ``cond`` and ``x[int(np.argmax(x))]`` to an
index read. An array of more than one element is Python's ``TypeError`` either way.
"""

from __future__ import annotations

import numpy as np

from .arrays import _is_jax, namespace


def _single(v, kind: str):
    size = int(np.prod(np.shape(v)))
    if size != 1:
        raise TypeError(
            f"{kind}() of an array of {size} elements: only an array of one element is a number"
        )
    xp = namespace(v)
    return xp.reshape(xp.asarray(v), ())


def as_float(v):
    """``float(v)``."""
    if not _is_jax(v):
        return float(v)
    x = _single(v, "float")
    xp = namespace(x)
    return xp.asarray(x, xp.result_type(x, float))


def as_int(v):
    """``int(v)`` (toward zero, as Python's)."""
    if not _is_jax(v):
        return int(v)
    x = _single(v, "int")
    xp = namespace(x)
    return (
        xp.trunc(x).astype(int)
        if xp.issubdtype(x.dtype, xp.floating)
        else x.astype(int)
    )


def as_bool(v):
    """``bool(v)``: Python's for Python values and NumPy arrays (an array of more than one element is
    NumPy's error); traced, its one element's truth as a boolean array."""
    if not _is_jax(v):
        return bool(v)
    return _single(v, "bool") != 0


def item(v):
    """``v.item()``: the one element of ``v``, a Python number; traced, a 0-d array of ``v``'s dtype."""
    if not _is_jax(v):
        return np.asarray(v).item()
    return _single(v, "item")


def batched_item(v, size):
    """``v.item()`` of each example (``v`` batched along axis 0): a vector of the batch."""
    xp = namespace(v)
    x = xp.reshape(xp.asarray(v), (size, -1))
    if x.shape[1] != 1:
        raise ValueError("item() of an array of more than one element per example")
    return x[:, 0]


def batched_as_float(v, size):
    """``float(v)`` of each example (``v`` batched along axis 0): a vector of the batch."""
    xp = namespace(v)
    x = xp.reshape(xp.asarray(v), (size, -1))
    if x.shape[1] != 1:
        raise TypeError("float() of an array of more than one element per example")
    return xp.asarray(x[:, 0], xp.result_type(x, float))


def batched_as_bool(v, size):
    """``bool(v)`` of each example."""
    xp = namespace(v)
    x = xp.reshape(xp.asarray(v), (size, -1))
    if x.shape[1] != 1:
        raise TypeError("bool() of an array of more than one element per example")
    return x[:, 0] != 0


def batched_as_int(v, size):
    """``int(v)`` of each example."""
    xp = namespace(v)
    x = xp.reshape(xp.asarray(v), (size, -1))
    if x.shape[1] != 1:
        raise TypeError("int() of an array of more than one element per example")
    x = x[:, 0]
    return (
        xp.trunc(x).astype(int)
        if xp.issubdtype(x.dtype, xp.floating)
        else x.astype(int)
    )
