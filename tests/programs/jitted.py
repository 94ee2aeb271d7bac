"""Functions for ``s2s.jit``: Python control flow on traced values, sizes that must be static."""

import numpy as np


def clipped_power_sum(x, n, scale=2.0):
    """A loop over a (traced or static) count and a Python ``if`` on an array value."""
    total = 0.0
    for i in range(n):
        total = total + np.sum(x**i)
    if np.sum(x) > 0:
        total = total * scale
    return total


def padded(x, n):
    """``n`` is a shape: under ``jit`` it must be static."""
    return np.concatenate([x, np.zeros(n)])


def shrink(x, *, rate):
    """A keyword-only parameter."""
    x = x.copy()
    x[x > 1.0] = 1.0  # an in-place write, as NumPy code does
    return x * rate


def varargs(*xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(x)
    return total
