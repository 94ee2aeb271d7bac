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
- ``twin``: the op's batched twin in the runtime (``rt.batched_vjps.unbroadcast``),
  called with the op's arguments and one batched flag per data operand;
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
from .registry import batch, batch_rule, signature_of, twin

batch(
    "elementwise",
    *nondiff.COMPARISONS,
    *nondiff.LOGICAL,
    *nondiff.BITWISE,
    "isnan",
    "isfinite",
    "isinf",
    "signbit",
    "isneginf",
    "isposinf",
    "isclose",
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
    "rt.selects",
)

signature_of(np.searchsorted, "searchsorted", roles={"v": "data"})
signature_of(np.digitize, "digitize", roles={"x": "data", "bins": "data"})


@batch_rule("digitize")
def digitize(x, bins, right=False, *, batched):
    return rt.batching.digitize(x, bins, right, batched)


@batch_rule("searchsorted")
def searchsorted(a, v, side="left", sorter=None, *, batched):
    return rt.batching.searchsorted(a, v, side, batched)


signature_of(np.unravel_index, "unravel_index", roles={"indices": "data"})
signature_of(np.ravel_multi_index, "ravel_multi_index", roles={"multi_index": "data"})
batch("elementwise", "unravel_index", "ravel_multi_index")
batch("elementwise", "real", "conj", "nextafter", "spacing")
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
batch("static", "finfo", "iinfo", "result_type")
batch(
    "constructor",
    "zeros",
    "ones",
    "empty",
    "arange",
    "eye",
    "identity",
    "rt.range",
)
batch(
    "sequence",
    "rt.iterate",
    "rt.zip",
    "rt.reversed",
    "rt.as_list",
    "rt.as_tuple",
    "rt.enumerate",  # (as ``rt.enumerate_steps``, its counts batched too)
)
batch("container", "rt.append", "rt.join", "rt.items", "rt.values", "rt.as_dict")
batch("container", "rt.dict_merge", "rt.entries")
batch("container", "rt.repeat_list", "rt.repeat_list_vjp")
batch("container", "rt.tree_add", "rt.unpair")
batch("container", "rt.record_fields", "rt.record_like")


@batch_rule("rt.as_float")
def as_float(v, *, batched, batch_size):
    return rt.batched_as_float(v, batch_size)


@batch_rule("rt.item")
def item(v, *, batched, batch_size):
    return rt.batched_item(v, batch_size)


@batch_rule("rt.nonzero_mask")
def nonzero_mask(m, *, batched, batch_size):
    return rt.batched_nonzero_mask(m, batched, batch_size)


@batch_rule("rt.as_bool")
def as_bool(v, *, batched, batch_size):
    return rt.batched_as_bool(v, batch_size)


@batch_rule("rt.as_int")
def as_int(v, *, batched, batch_size):
    return rt.batched_as_int(v, batch_size)


@batch_rule("rt.record")
def record(cls, *fields, batched, batch_size):
    return rt.batched_record(cls, fields, batched, batch_size)


batch(
    "container",
    "rt.replaced",
    "rt.replaced_vjp",
    "rt.replaced_fields_vjp",
    "rt.replaced_fields_into",
)


@batch_rule("rt.fill_like")
def fill_like(tree, leaves, *, batched, batch_size):
    return rt.fill_examples(tree, leaves, batched[0], batch_size)


@batch_rule("rt.fill_like_vjp")
def fill_like_vjp(ct, leaves, *, batched, batch_size):
    return rt.fill_examples_vjp(ct, leaves, batched[0], batch_size)


batch("trailing", "rt.zeros_like_float", "rt.tree_zeros_like")
# casts and products along the last axis: applied as they are
batch("trailing", "rt.astype_jvp", "rt.leave_one_out", "rt.leave_one_out_vjp")
batch("example", "rt.eye_last")
batch("axes", "rt.reduced_like", "rt.extremum_vjp", "rt.to_last", "rt.from_last")
batch("example", "rt.reduced_count")
batch("example", "rt.take_length")
batch(
    "trailing", "rt.take_indices"
)  # elementwise in the indices, of one example's length
batch("static", "rt.inverse_permutation", "rt.written_dtype", "rt.integer_valued")
batch("elementwise", "rt.opposite")  # (a shift per example: their opposites)
batch(
    "static", "rt.combination_indices", "rt.permutation_indices", "rt.product_indices"
)
batch(
    "static", "rt.keys", "rt.sorted_keys", "rt.str_method", "rt.leaf_paths", "rt.keystr"
)
# output statements print every example (the batched values, as they are)
batch(
    "static",
    "rt.debug_print",
    "rt.log",
    "rt.warn",
    "rt.check",
    "rt.unset",
    "rt.skipped",
)
signature_of(
    rt.item_is_copy,
    "rt.item_is_copy",
    roles={"base": "data", "count": "static", "item": "data"},
)
signature_of(rt.is_number, "rt.is_number", roles={"value": "data"})
batch("example", "rt.item_is_copy", "rt.is_number")  # (an example's axes and item)
batch("static", "rt.raise_", "rt.raise_if", "rt.refused")
# (a ``*`` sequence's length and a ``**`` mapping's keys: an example's)
signature_of(
    rt.check_call,
    "rt.check_call",
    roles={
        "name": "static",
        "parameters": "static",
        "positional": "static",
        "sequence": "data",
        "keywords": "static",
        "mapping": "data",
    },
)
batch("example", "rt.check_call")
batch("container", "rt.kept_vjp")


@batch_rule("rt.total")
def total(items, *, batched, batch_size):
    return rt.batched_total(items, batch_size)


@batch_rule("rt.total_vjp")
def total_vjp(ct, items, *, batched, batch_size):
    return rt.batched_total_vjp(ct, items, batched, batch_size)


@batch_rule("rt.kept")
def kept(ys, *, batched, batch_size):
    return rt.kept(ys, batch_size)


batch("container", "rt.dict_get", "rt.dict_get_vjp", "rt.dict_default_vjp")


# ``*p`` of a container, or of an array (its rows: axis 1 of a batched one)
@batch_rule("rt.argument")
def argument(source, key, default=None, *, batched, batch_size):
    return rt.batched_argument(source, key, default, batched, batch_size)


@batch_rule("rt.argument_vjp")
def argument_vjp(ct, source, key, *, batched, batch_size):
    return rt.batched_argument_vjp(ct, source, key, batched, batch_size)


@batch_rule("rt.argument_default_vjp")
def argument_default_vjp(ct, source, key, default=None, *, batched, batch_size):
    return rt.batched_argument_default_vjp(
        ct, source, key, default, batched, batch_size
    )


batch(
    "container",
    "rt.leaves",
    "rt.leaves_vjp",
    "rt.unflatten_like",
    "rt.unflatten_like_vjp",
)
twin(
    "batched_trees",
    "rt.ravel",
    "rt.ravel_vjp",
    "rt.unravel_like",
    "rt.unravel_like_vjp",
)
batch("axes", "rt.join_steps", "rt.join_steps_vjp", "rt.rows", "rt.rows_vjp")
batch("axes", "rt.append_row", "rt.append_row_first", "rt.append_row_last")


twin(
    "batching",
    "matmul",
    "vdot",
    "inner",
    "tensordot",
    "linalg.solve",
    "rt.index_add",
    "rt.index_read_add",
)


@batch_rule("rt.index_set")
def index_set(target, index, value, *, batched, batch_size):
    return rt.batching.index_set(target, index, value, batched, batch_size)


@batch_rule("dot")
def dot(a, b, out=None, *, batched):
    return rt.batching.dot(a, b, batched)


@batch_rule("outer")
def outer(a, b, out=None, *, batched):
    return rt.batching.outer(a, b, batched)


@batch_rule("einsum")
def einsum(subscripts, *operands, optimize=False, batched):
    return rt.batching.einsum(subscripts, batched, *operands)


@batch_rule("linalg.norm")
def norm(x, ord=None, axis=None, keepdims=False, *, batched):
    return rt.batching.norm(x, ord, axis, keepdims)


@batch_rule("ravel")
def ravel(a, order="C", *, batched, batch_size):
    return xp.reshape(a, (batch_size, -1), order=order)


@batch_rule("rt.zero_at")
def zero_at(g_, index, like=None, *, batched):
    return rt.batching.zero_at(g_, index, batched, like)


@batch_rule("rt.index_get")
def index_get(target, index, *, batched):
    return rt.batching.index_get(target, index, batched)


# --- what gradient code calls: per-example gradients (``vmap`` of ``grad``) ------------------


@batch_rule("rt.grad_seed")
def grad_seed(out, *, batched):
    return rt.batched_vjps.grad_seed(out)


signature_of(rt.leading_mask, "rt.leading_mask", roles={"mask": "data", "x": "data"})
signature_of(
    rt.unit_axes_mask, "rt.unit_axes_mask", roles={"mask": "data", "x": "data"}
)
signature_of(rt.selected_fill, "rt.selected_fill", roles={"x": "data", "kept": "data"})
signature_of(
    rt.span_mask,
    "rt.span_mask",
    roles={"x": "data", "start": "data", "stop": "data", "keys": "data"},
)
signature_of(
    rt.contracted_selection,
    "rt.contracted_selection",
    roles={"mask": "data", "x": "data", "rows": "static"},
)
twin("batched_ops", "rt.selection", "rt.selection_vjp")
signature_of(
    rt.selection_mask, "rt.selection_mask", roles={"index": "data", "x": "data"}
)
signature_of(
    rt.selection_length, "rt.selection_length", roles={"index": "data", "x": "data"}
)


batch("example", "rt.mask_axes", "rt.selection_axes")  # (an example's mask)
signature_of(rt.selected_size, "rt.selected_size", roles={"kept": "data", "v": "data"})


@batch_rule("rt.selected_size")
def selected_size(kept, v, *, batched, batch_size):
    return rt.batched_ops.selected_size(kept, v, batched, batch_size)


@batch_rule("rt.selection_mask")
def selection_mask(index, x, *, batched, batch_size):
    return rt.batched_ops.selection_mask(index, x, batched, batch_size)


@batch_rule("rt.selection_length")
def selection_length(index, x, *, batched, batch_size):
    return rt.batched_ops.selection_length(index, x, batched, batch_size)


twin(
    "batched_ops",
    "rt.leading_mask",
    "rt.unit_axes_mask",
    "rt.selected_fill",
    "rt.span_mask",
    "rt.contracted_selection",
)
twin(
    "batched_vjps",
    "rt.unbroadcast",
    "rt.broadcast_like",
    "rt.matmul_vjp_lhs",
    "rt.matmul_vjp_rhs",
    "rt.index_get_vjp",
    "rt.index_set_value_vjp",
    "rt.index_add_value_vjp",
    "rt.index_read_add_value_vjp",
    "rt.dot_vjp",
    "rt.inner_vjp",
    "rt.tensordot_vjp",
    "rt.dot_at",
    "rt.inner_at",
    "rt.tensordot_at",
    "rt.solve_like",
    "rt.solve_matvec",
    "rt.solve_outer",
    "rt.solve_vjp_a",
    "rt.solve_vjp_b",
    "rt.solve_jvp_a",
    "rt.take_vjp",
    "rt.take_along_axis_vjp",
    "rt.cumprod_vjp",
    "rt.cumprod_jvp",
    "rt.einsum_vjp",
)


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


@batch_rule("column_stack")
def column_stack(tup, *, batched):
    return rt.batched_ops.column_stack(tup)


@batch_rule("dstack")
def dstack(tup, *, batched):
    return rt.batched_ops.dstack(tup)


@batch_rule("pad")
def pad(array, pad_width, mode="constant", *, batched):
    return xp.pad(array, rt.batched_ops.pad_width(pad_width, array), mode=mode)


@batch_rule("diag")
def diag(v, k=0, *, batched):
    return rt.batched_ops.diag(v, k)


# --- loop inputs' cotangents (gradients of ``for`` loops) ------------------------------------


twin(
    "batched_loops",
    "rt.sequence_vjp",
    "rt.sequence_vjp_transpose",
    "rt.enumerate_vjp",
    "rt.enumerate_vjp_transpose",
    "rt.zip_vjp",
    "rt.zip_vjp_transpose",
    "rt.reversed_vjp",
    "rt.reversed_vjp_transpose",
    "rt.items_vjp",
    "rt.items_vjp_transpose",
    "rt.values_vjp",
    "rt.values_vjp_transpose",
    "rt.sequence_like",
    "rt.sequence_like_transpose",
)


@batch_rule("rt.enumerate_jvp")
def enumerate_jvp(tangents, start=0, *, batched, batch_size):
    return rt.batched_loops.enumerate_jvp(tangents, start, batched, batch_size)


# --- linalg.solve's helpers: NumPy's vector convention read from one example of ``b`` -------------


# --- gathers' cotangents ---------------------------------------------------------------------------


# --- cotangents of products and reductions: axes shift past the batch axis ------------------------

batch(
    "axes",
    "rt.prod_vjp",
    "rt.norm_vjp",
    "rt.norm_hvp",
    "rt.norm_partial",
    "rt.norm_svd_third",
    "rt.unstack",
    "rt.restack",
    "rt.split_vjp",
)
batch("example", "rt.norm_axes")  # an example's axes: ops that read them shift them
batch(
    "example",
    "rt.convolve_padding",
    "rt.kron_shape",
    "rt.diff_weights",
    "rt.diff_edge_shape",
    "rt.pad_border",
)


# --- cotangents of shape ops and casts: an example's shape decides how ``g`` is cut ---------------


twin(
    "batched_shape_vjps",
    "rt.concatenate_vjp",
    "rt.hstack_vjp",
    "rt.vstack_vjp",
    "rt.column_stack_vjp",
    "rt.dstack_vjp",
    "rt.tile_vjp",
    "rt.repeat_vjp",
    "rt.pad_vjp",
    "rt.diag_vjp",
    "rt.array_vjp",
    "rt.astype_vjp",
)


twin("batched_ops", "convolve")
