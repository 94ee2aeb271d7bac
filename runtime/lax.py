"""``rt.lax``: the ``jax.lax`` elementwise ops that NumPy has no function for; JAX's own on JAX values.

(``lax.exp``, ``lax.max``, ``lax.select``, ... are spelled ``xp.exp``,
``xp.maximum``, ``xp.where`` in generated code: NumPy has them.)
"""

from __future__ import annotations

import numpy as np

from .library import library, quiet


@library("jax.lax.rsqrt")
@quiet
def rsqrt(x):
    return 1 / np.sqrt(x)


@library("jax.lax.clamp")
def _clamp(min, x, max):
    return np.minimum(np.maximum(x, min), max)


def clamp(min, x, max):
    """``lax.clamp``; array operands of different shapes are broadcast to one first.

    A batched module passes a per-example bound next to a shared operand (or
    the other way round); JAX's batching rule for ``clamp`` broadcasts them too.
    """
    shapes = [np.shape(v) for v in (min, x, max)]
    arrays = [s for s in shapes if s]
    if any(s != arrays[0] for s in arrays):
        from .arrays import namespace

        xp = namespace(min, x, max)
        full = np.broadcast_shapes(*shapes)
        min, x, max = (
            xp.broadcast_to(v, full) if np.shape(v) else v for v in (min, x, max)
        )
    return _clamp(min, x, max)


@library("jax.lax.integer_pow")
@quiet
def integer_pow(x, y):
    if y < 0:
        return 1 / np.power(x, -y)
    return np.power(x, y)


def _accumulated(ufunc, x, axis, reverse):
    x = np.asarray(x)
    if reverse:
        return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
    return ufunc.accumulate(x, axis=axis)


@library("jax.lax.cummax")
def _cummax(operand, axis=0, reverse=False):
    return _accumulated(np.maximum, operand, axis, reverse)


@library("jax.lax.cummin")
def _cummin(operand, axis=0, reverse=False):
    return _accumulated(np.minimum, operand, axis, reverse)


def cummax(operand, axis=0, reverse=False):
    """``lax.cummax``: the largest value so far along ``axis`` (from the end with ``reverse``); ``axis``
    may count from the end, as ``np.maximum.accumulate``'s does."""
    return _cummax(operand, int(axis) % max(np.ndim(operand), 1), reverse)


def cummin(operand, axis=0, reverse=False):
    """``lax.cummin``: the smallest value so far along ``axis`` (see ``cummax``)."""
    return _cummin(operand, int(axis) % max(np.ndim(operand), 1), reverse)
