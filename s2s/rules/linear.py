"""Linear ops: each body is the transpose, applied to the cotangent ``g``.

Forward mode applies the op itself to the tangent. Ops taking a sequence
(concatenate, stack, hstack, vstack) return a list of cotangents; ``split``
gets its cotangent ``g`` as a list (None for unused pieces).
"""

import numpy as xp

from s2s import runtime as rt

from .registry import linear


@linear
def sum_(a, axis=None, dtype=None, out=None, keepdims=False, *, g):
    return rt.reduced_like(g, a, axis, keepdims)


@linear
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, g):
    return rt.reduced_like(g, a, axis, keepdims) / rt.reduced_count(a, axis)


@linear
def cumsum(a, axis=None, dtype=None, out=None, *, g):
    return xp.reshape(xp.flip(xp.cumsum(xp.flip(g, axis), axis), axis), xp.shape(a))


@linear
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None, *, g):
    return xp.moveaxis(
        xp.expand_dims(g, (-2, -1))
        * xp.eye(xp.shape(a)[axis1], xp.shape(a)[axis2], offset),
        (-2, -1),
        (axis1, axis2),
    )


@linear
def copy(a, order="K", subok=False, *, g):
    return g


@linear
def reshape(a, shape=None, order="C", *, g):
    return xp.reshape(g, xp.shape(a), order=order)


@linear
def ravel(a, order="C", *, g):
    return xp.reshape(g, xp.shape(a), order=order)


@linear
def squeeze(a, axis=None, *, g):
    return xp.reshape(g, xp.shape(a))


@linear
def expand_dims(a, axis, *, g):
    return xp.reshape(g, xp.shape(a))


@linear
def transpose(a, axes=None, *, g):
    return xp.transpose(g, rt.inverse_permutation(axes, xp.ndim(a)))


@linear
def matrix_transpose(x, *, g):
    return xp.matrix_transpose(g)


@linear
def swapaxes(a, axis1, axis2, *, g):
    return xp.swapaxes(g, axis1, axis2)


@linear
def moveaxis(a, source, destination, *, g):
    return xp.moveaxis(g, destination, source)


@linear
def broadcast_to(array, shape, subok=False, *, g):
    return rt.unbroadcast(g, array)


@linear
def flip(m, axis=None, *, g):
    return xp.flip(g, axis)


@linear
def roll(a, shift, axis=None, *, g):
    return xp.roll(g, rt.opposite(shift), axis)


@linear
def triu(m, k=0, *, g):
    return xp.triu(g, k)


@linear
def tril(m, k=0, *, g):
    return xp.tril(g, k)


@linear
def diag(v, k=0, *, g):
    return rt.diag_vjp(g, v, k)


@linear
def concatenate(arrays, axis=0, *, g):
    return rt.concatenate_vjp(g, arrays, axis)


@linear
def stack(arrays, axis=0, *, g):
    return rt.unstack(g, axis)


@linear
def hstack(tup, *, g):
    return rt.hstack_vjp(g, tup)


@linear
def vstack(tup, *, g):
    return rt.vstack_vjp(g, tup)


@linear
def column_stack(tup, *, g):
    return rt.column_stack_vjp(g, tup)


@linear
def dstack(tup, *, g):
    return rt.dstack_vjp(g, tup)


@linear
def split(ary, indices_or_sections, axis=0, *, g):
    return rt.split_vjp(g, ary, indices_or_sections, axis)


@linear
def tile(A, reps, *, g):
    return rt.tile_vjp(g, A, reps)


@linear
def repeat(a, repeats, axis=None, *, g):
    return rt.repeat_vjp(g, a, repeats, axis)


@linear
def pad(array, pad_width, mode="constant", *, g):
    # Linear only with zero padding: constant_values is not a parameter, so pad(x, c, constant_values=1) does not bind.
    return rt.pad_vjp(g, array, pad_width, mode)


@linear
def take(a, indices, axis=None, out=None, mode=None, *, g):
    return rt.take_vjp(
        g, a, rt.take_indices(indices, rt.take_length(a, axis), mode), axis
    )


@linear
def take_along_axis(arr, indices, axis=-1, *, g):
    return rt.take_along_axis_vjp(g, arr, indices, axis)


# Constructors that carry data: linear in it (np.array([a, b]) differentiates through a and b).


@linear
def asarray(a, dtype=None, *, g):
    return rt.array_vjp(g, a)


@linear
def array(object, dtype=None, *, g):
    return rt.array_vjp(g, object)


@linear
def full(shape, fill_value, dtype=None, *, g):
    return None, rt.unbroadcast(g, fill_value)


@linear
def full_like(a, fill_value, dtype=None, *, g):
    return None, rt.unbroadcast(g, fill_value)


@linear
def real(val, *, g):
    # of real values (s2s refuses complex inputs): the identity
    return g


@linear
def conj(x, *, g):
    return g
