"""Batching rules: which batch family derives each op's rule under ``s2s.vmap``, and the explicit ones.

Batch families (their derivations live with the others in ``s2s/transforms/families.py``):

- ``elementwise``: the op applied as is, operands whose examples may differ
  in rank lifted first (``rt.lift``); elementwise-family ops get it when
  registered, nondiff elementwise ops (comparisons, rounding) here;
- ``axes``: derived from the parameter roles: per-example axes shift past
  the batch axis, ``axis=None`` names every axis of an example (or, for ops
  that flatten then, each example flattened), shapes get the batch size in
  front, unbatched data operands are broadcast;
- ``trailing``: ops that act on the last axes and map over leading ones
  (``linalg.inv``, ``triu``, ``astype``): applied as is;
- ``query``: ``shape``, ``ndim``, ``size`` of one example;
- ``constructor``: the result is the same for every example (its arguments
  are shapes and constants); a batched argument is an error;
- ``sequence``: what a loop runs over: batched arrays step-major (``rt.loop_first``);
- ``container``: Python-level list building; unbatched operands broadcast;
- ``static``: the result is the same for every example (a dict's keys);
- ``example``: a result computed from shapes only, the same for every example
  (``rt.reduced_count``): the op on the first example;
- ``explicit``: the rule below, a template like the derivative rules, with
  ``batched`` (one flag per data parameter) and ``batch_size``.
"""

import numpy as np
import numpy as xp

from s2s import runtime as rt

from . import (  # noqa: F401  (the ops given batching rules here, registered first)
    batch_ops,
    derivative_linalg,
    derivative_ops,
    elementwise,
    explicit,
    linear,
    nondiff,
    runtime_ops,
)
from .registry import batch, batch_rule, signature_of

batch(
    "elementwise",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "logical_xor",
    "isnan",
    "isfinite",
    "isinf",
    "sign",
    "floor",
    "ceil",
    "round",
    "trunc",
    "rint",
    "floor_divide",
    "rt.logical_not",
    "rt.logical_and",
    "rt.logical_or",
    "rt.step",
    "rt.clip_partial",
)

signature_of(np.argmax, "argmax")
signature_of(np.argmin, "argmin")
signature_of(np.argsort, "argsort")
signature_of(np.all, "all")
signature_of(np.any, "any")
signature_of(np.count_nonzero, "count_nonzero")
batch(
    "axes",
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "cumsum",
    "cumprod",
    "flip",
    "expand_dims",
    "squeeze",
    "moveaxis",
    "swapaxes",
    "concatenate",
    "stack",
    "split",
    "roll",
    "repeat",
    "take",
    "take_along_axis",
    "trace",
    "transpose",
    "broadcast_to",
    "argmax",
    "argmin",
    "argsort",
    "sort",
    "all",
    "any",
    "count_nonzero",
)
batch(
    "trailing",
    "matrix_transpose",
    "linalg.inv",
    "linalg.det",
    "linalg.cholesky",
    "tril",
    "triu",
    "astype",
    "copy",
    "zeros_like",
    "ones_like",
    "empty_like",
    "rt.stop_gradient",
)
batch("query", "shape", "ndim", "size")
batch(
    "constructor",
    "zeros",
    "ones",
    "empty",
    "arange",
    "linspace",
    "eye",
    "identity",
    "rt.range",
)
batch("sequence", "rt.iterate", "rt.zip", "rt.reversed")
batch("container", "rt.append", "rt.join", "rt.items", "rt.values")
batch("container", "rt.tree_add")


@batch_rule("rt.fill_like")
def fill_like(tree, leaves, *, batched, batch_size):
    return rt.fill_examples(tree, leaves, batched[0], batch_size)


batch("trailing", "rt.zeros_like_float", "rt.tree_zeros_like")
# casts and products along the last axis: applied as they are
batch("trailing", "rt.astype_jvp", "rt.leave_one_out", "rt.leave_one_out_vjp")
batch("example", "rt.eye_last")
batch("axes", "rt.reduced_like", "rt.extremum_vjp")
batch("example", "rt.reduced_count")
batch("static", "rt.inverse_permutation", "rt.opposite")
batch("static", "rt.keys")


@batch_rule("matmul")
def matmul(x1, x2, *, batched):
    return rt.batching.matmul(x1, x2, batched)


@batch_rule("dot")
def dot(a, b, out=None, *, batched):
    return rt.batching.dot(a, b, batched)


@batch_rule("vdot")
def vdot(a, b, *, batched):
    return rt.batching.vdot(a, b, batched)


@batch_rule("inner")
def inner(a, b, *, batched):
    return rt.batching.inner(a, b, batched)


@batch_rule("outer")
def outer(a, b, out=None, *, batched):
    return rt.batching.outer(a, b, batched)


@batch_rule("tensordot")
def tensordot(a, b, axes=2, *, batched):
    return rt.batching.tensordot(a, b, axes, batched)


@batch_rule("einsum")
def einsum(subscripts, *operands, optimize=False, batched):
    return rt.batching.einsum(subscripts, *operands, batched=batched)


@batch_rule("linalg.solve")
def solve(a, b, *, batched):
    return rt.batching.solve(a, b, batched)


@batch_rule("linalg.norm")
def norm(x, ord=None, axis=None, keepdims=False, *, batched):
    return rt.batching.norm(x, ord, axis, keepdims)


@batch_rule("ravel")
def ravel(a, order="C", *, batched, batch_size):
    return xp.reshape(a, (batch_size, -1), order=order)


@batch_rule("rt.index_set")
def index_set(target, index, value, *, batched):
    return rt.batching.index_set(target, index, value, batched)


@batch_rule("rt.index_get")
def index_get(target, index, *, batched):
    return rt.batching.getitem(target, index, batched)


# --- what gradient code calls: per-example gradients (``vmap`` of ``grad``) ------------------


@batch_rule("rt.grad_seed")
def grad_seed(out, *, batched):
    return rt.batched_vjps.grad_seed(out)


@batch_rule("rt.unbroadcast")
def unbroadcast(value, like, *, batched):
    return rt.batched_vjps.unbroadcast(value, like, batched)


@batch_rule("rt.broadcast_like")
def broadcast_like(value, like, *, batched):
    return rt.batched_vjps.broadcast_like(value, like, batched)


@batch_rule("rt.matmul_vjp_lhs")
def matmul_vjp_lhs(ct, x1, x2, *, batched):
    return rt.batched_vjps.matmul_vjp_lhs(ct, x1, x2, batched)


@batch_rule("rt.matmul_vjp_rhs")
def matmul_vjp_rhs(ct, x1, x2, *, batched):
    return rt.batched_vjps.matmul_vjp_rhs(ct, x1, x2, batched)


@batch_rule("rt.index_add")
def index_add(target, index, value, *, batched):
    return rt.batching.index_add(target, index, value, batched)


@batch_rule("rt.index_get_vjp")
def index_get_vjp(ct, target, index, *, batched):
    return rt.batched_vjps.index_get_vjp(ct, target, index, batched)


@batch_rule("rt.index_set_value_vjp")
def index_set_value_vjp(ct, index, value, *, batched):
    return rt.batched_vjps.index_set_value_vjp(ct, index, value, batched)


@batch_rule("rt.dot_vjp")
def dot_vjp(ct, a, b, index, on=1, *, batched):
    return rt.batched_vjps.dot_vjp(ct, a, b, index, on, batched)


@batch_rule("rt.inner_vjp")
def inner_vjp(ct, a, b, index, on=1, *, batched):
    return rt.batched_vjps.inner_vjp(ct, a, b, index, on, batched)


@batch_rule("rt.tensordot_vjp")
def tensordot_vjp(ct, a, b, axes, index, on=1, *, batched):
    return rt.batched_vjps.tensordot_vjp(ct, a, b, axes, index, on, batched)


@batch_rule("rt.enumerate")
def enumerate_(xs, start=0, *, batched, batch_size):
    return rt.enumerate_steps(xs, start, batch_size)


# --- ops whose meaning depends on an example's rank --------------------------------------


@batch_rule("reshape")
def reshape(a, shape=None, order="C", *, batched):
    return rt.batched_ops.reshape(a, shape, order)


@batch_rule("asarray")
def asarray(a, dtype=None, *, batched):
    return rt.batched_ops.asarray(a, dtype)


@batch_rule("array")
def array(object, dtype=None, *, batched):
    return rt.batched_ops.asarray(object, dtype)


@batch_rule("full")
def full(shape, fill_value, dtype=None, *, batched, batch_size):
    return rt.batched_ops.full(shape, fill_value, dtype, batch_size)


@batch_rule("full_like")
def full_like(a, fill_value, dtype=None, *, batched, batch_size):
    return rt.batched_ops.full_like(a, fill_value, dtype, batched, batch_size)


@batch_rule("tile")
def tile(A, reps, *, batched):
    return rt.batched_ops.tile(A, reps)


@batch_rule("hstack")
def hstack(tup, *, batched):
    return rt.batched_ops.hstack(tup)


@batch_rule("vstack")
def vstack(tup, *, batched):
    return rt.batched_ops.vstack(tup)


@batch_rule("pad")
def pad(array, pad_width, mode="constant", *, batched):
    return xp.pad(array, rt.batched_ops.pad_width(pad_width, array), mode=mode)


@batch_rule("diag")
def diag(v, k=0, *, batched):
    return rt.batched_ops.diag(v, k)


# --- loop inputs' cotangents (gradients of ``for`` loops) ------------------------------------


@batch_rule("rt.sequence_vjp")
def sequence_vjp(ct, xs, *, batched):
    return rt.batched_loops.sequence_vjp(ct, xs, batched)


@batch_rule("rt.sequence_vjp_transpose")
def sequence_vjp_transpose(u, like, xs, *, batched):
    return rt.batched_loops.sequence_vjp_transpose(u, like, xs, batched)


@batch_rule("rt.enumerate_vjp")
def enumerate_vjp(ct, xs, *, batched):
    return rt.batched_loops.enumerate_vjp(ct, xs, batched)


@batch_rule("rt.enumerate_vjp_transpose")
def enumerate_vjp_transpose(u, like, xs, *, batched):
    return rt.batched_loops.enumerate_vjp_transpose(u, like, xs, batched)


@batch_rule("rt.enumerate_jvp")
def enumerate_jvp(tangents, start=0, *, batched, batch_size):
    return rt.batched_loops.enumerate_jvp(tangents, start, batched, batch_size)


@batch_rule("rt.zip_vjp")
def zip_vjp(ct, sequences, *, batched):
    return rt.batched_loops.zip_vjp(ct, sequences, batched)


@batch_rule("rt.zip_vjp_transpose")
def zip_vjp_transpose(u, like, sequences, *, batched):
    return rt.batched_loops.zip_vjp_transpose(u, like, sequences, batched)


@batch_rule("rt.reversed_vjp")
def reversed_vjp(ct, xs, *, batched):
    return rt.batched_loops.reversed_vjp(ct, xs, batched)


@batch_rule("rt.reversed_vjp_transpose")
def reversed_vjp_transpose(u, like, xs, *, batched):
    return rt.batched_loops.reversed_vjp_transpose(u, like, xs, batched)


@batch_rule("rt.items_vjp")
def items_vjp(ct, d, *, batched):
    return rt.batched_loops.items_vjp(ct, d, batched)


@batch_rule("rt.items_vjp_transpose")
def items_vjp_transpose(u, like, d, *, batched):
    return rt.batched_loops.items_vjp_transpose(u, like, d, batched)


@batch_rule("rt.values_vjp")
def values_vjp(ct, d, *, batched):
    return rt.batched_loops.values_vjp(ct, d, batched)


@batch_rule("rt.values_vjp_transpose")
def values_vjp_transpose(u, like, d, *, batched):
    return rt.batched_loops.values_vjp_transpose(u, like, d, batched)


# --- linalg.solve's helpers: NumPy's vector convention read from one example of ``b`` -------------


@batch_rule("rt.solve_like")
def solve_like(a, v, b, *, batched):
    return rt.batched_vjps.solve_like(a, v, b, batched)


@batch_rule("rt.solve_matvec")
def solve_matvec(m, v, b, *, batched):
    return rt.batched_vjps.solve_matvec(m, v, b, batched)


@batch_rule("rt.solve_outer")
def solve_outer(u, v, b, *, batched):
    return rt.batched_vjps.solve_outer(u, v, b, batched)


@batch_rule("rt.solve_vjp_a")
def solve_vjp_a(ct, a, b, x, *, batched):
    return rt.batched_vjps.solve_vjp_a(ct, a, b, x, batched)


@batch_rule("rt.solve_vjp_b")
def solve_vjp_b(ct, a, b, *, batched):
    return rt.batched_vjps.solve_vjp_b(ct, a, b, batched)


@batch_rule("rt.solve_jvp_a")
def solve_jvp_a(t, a, b, x, *, batched):
    return rt.batched_vjps.solve_jvp_a(t, a, b, x, batched)


# --- gathers' cotangents ---------------------------------------------------------------------------


@batch_rule("rt.take_vjp")
def take_vjp(ct, a, indices, axis=None, *, batched):
    return rt.batched_vjps.take_vjp(ct, a, indices, axis, batched)


@batch_rule("rt.take_along_axis_vjp")
def take_along_axis_vjp(ct, arr, indices, axis=-1, *, batched):
    return rt.batched_vjps.take_along_axis_vjp(ct, arr, indices, axis, batched)


# --- cotangents of products and reductions: axes shift past the batch axis ------------------------

batch("axes", "rt.prod_vjp", "rt.norm_vjp", "rt.unstack", "rt.split_vjp")
batch("example", "rt.norm_axes")  # an example's axes: ops that read them shift them
batch("example", "rt.convolve_padding", "rt.kron_shape", "rt.diff_weights")


@batch_rule("rt.cumprod_vjp")
def cumprod_vjp(ct, a, axis=None, *, batched):
    return rt.batched_vjps.cumprod_vjp(ct, a, axis, batched)


@batch_rule("rt.cumprod_jvp")
def cumprod_jvp(t, a, axis=None, *, batched):
    return rt.batched_vjps.cumprod_jvp(t, a, axis, batched)


@batch_rule("rt.einsum_vjp")
def einsum_vjp(ct, subscripts, operands, extra=(), *, batched):
    return rt.batched_vjps.einsum_vjp(ct, subscripts, operands, extra, batched)


# --- cotangents of shape ops and casts: an example's shape decides how ``g`` is cut ---------------


@batch_rule("rt.concatenate_vjp")
def concatenate_vjp(ct, arrays, axis=0, *, batched):
    return rt.batched_shape_vjps.concatenate_vjp(ct, arrays, axis, batched)


@batch_rule("rt.hstack_vjp")
def hstack_vjp(ct, tup, *, batched):
    return rt.batched_shape_vjps.hstack_vjp(ct, tup, batched)


@batch_rule("rt.vstack_vjp")
def vstack_vjp(ct, tup, *, batched):
    return rt.batched_shape_vjps.vstack_vjp(ct, tup, batched)


@batch_rule("rt.tile_vjp")
def tile_vjp(ct, A, reps, *, batched):
    return rt.batched_shape_vjps.tile_vjp(ct, A, reps, batched)


@batch_rule("rt.repeat_vjp")
def repeat_vjp(ct, a, repeats, axis=None, *, batched):
    return rt.batched_shape_vjps.repeat_vjp(ct, a, repeats, axis, batched)


@batch_rule("rt.pad_vjp")
def pad_vjp(ct, array, pad_width, mode="constant", *, batched):
    return rt.batched_shape_vjps.pad_vjp(ct, array, pad_width, mode, batched)


@batch_rule("rt.diag_vjp")
def diag_vjp(ct, v, k=0, *, batched):
    return rt.batched_shape_vjps.diag_vjp(ct, v, k, batched)


@batch_rule("rt.array_vjp")
def array_vjp(ct, data, *, batched):
    return rt.batched_shape_vjps.array_vjp(ct, data, batched)


@batch_rule("rt.astype_vjp")
def astype_vjp(ct, x, dtype, *, batched):
    return rt.batched_shape_vjps.astype_vjp(ct, x, dtype, batched)


@batch_rule("convolve")
def convolve(a, v, mode="full", *, batched):
    return rt.batched_ops.convolve(a, v, mode, batched)
