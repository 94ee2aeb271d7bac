"""``numpy.linalg``'s array-API functions (NumPy 2, ``jax.numpy.linalg``) as compositions of ops with rules.

They act on the last axes where their NumPy namesakes act on the first
(``linalg.trace`` and ``linalg.diagonal`` on the last two, ``linalg.cross``
on the last), or spell a norm by its kind (``vector_norm``, ``matrix_norm``).
"""

import numpy as xp

from s2s import runtime as rt

from .registry import decompose


@decompose(name="linalg.trace")
def trace(x, offset=0, dtype=None):
    return xp.trace(x, offset, axis1=-2, axis2=-1)


@decompose(name="linalg.diagonal")
def diagonal(x, offset=0):
    return xp.diagonal(x, offset, axis1=-2, axis2=-1)


@decompose(name="linalg.cross")
def cross(x1, x2, axis=-1):
    return xp.cross(x1, x2, axis=axis)


@decompose(name="linalg.vector_norm")
def vector_norm(x, axis=None, keepdims=False, ord=2):
    norm = xp.linalg.norm(rt.to_last(x, axis), ord, axis=-1)
    return xp.reshape(norm, rt.reduced_shape(x, axis, keepdims))


@decompose(name="linalg.matrix_norm")
def matrix_norm(x, keepdims=False, ord="fro"):
    return xp.linalg.norm(x, ord, axis=(-2, -1), keepdims=keepdims)


@decompose(name="linalg.tensorsolve")
def tensorsolve(a, b, axes=None):
    # ``a`` as a square matrix: ``b``'s axes against the others (JAX's)
    matrix = xp.reshape(a, rt.tensor_matrix_shape(a, xp.ndim(b), axes))
    solved = xp.linalg.solve(matrix, xp.reshape(b, (-1,)))
    return xp.reshape(solved, rt.tensor_trailing_shape(a, xp.ndim(b)))


@decompose(name="linalg.tensorinv")
def tensorinv(a, ind=2):
    inverse = xp.linalg.inv(xp.reshape(a, rt.tensor_matrix_shape(a, ind)))
    return xp.reshape(inverse, rt.tensorinv_shape(a, ind))
