"""Rules for the runtime helpers that derivative code calls, so a derivative can be differentiated again.

A generated gradient calls ``rt.unbroadcast``, ``rt.reduced_like``,
``rt.matmul_vjp_lhs``, ...; ``grad(grad(f))`` and ``hessian`` transform that
code again, so each helper has rules like an op's, in the same families.
Where the runtime names a parameter ``g`` (or ``ans``), the rule calls it
``ct`` (or another name): ``g`` and ``ans`` are the rule vocabulary's; calls
bind by position.

Most helpers are linear in their first argument and read the others for
shapes only (``None`` entries): their rules are transposes, usually the
original op. The others are written so that their rules call helpers that
have rules too, so derivatives of any order exist:

- contractions (``dot_vjp``, ``inner_vjp``, ``tensordot_vjp``) are bilinear
  in the cotangent and the *other* operand; which operand that is depends on
  the static ``index``, so terms that only one ``index`` has are switched off
  by a static ``on`` argument (``on * index`` folds to 0 or 1);
- ``einsum_vjp``: a sum over operands, each replaced in turn, is one einsum
  of stacked pairs (``runtime/linalg.py``);
- products and linear algebra (prod, cumprod, norm, solve): ``derivative_linalg.py``.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import jvp, linear, multilinear, nondiff, vjp

nondiff("a constant: ones shaped like the output", "rt.grad_seed")
nondiff(
    "a mask: which elements a selection keeps (passes/masks.py)",
    "rt.leading_mask",
    "rt.unit_axes_mask",
    "rt.span_mask",
    "rt.contracted_selection",
    "rt.selection_mask",
)
nondiff("a count of the selected elements", "rt.selection_length")
nondiff("the axes a mask covers", "rt.mask_axes", "rt.selection_axes")
nondiff("a count of the selected elements", "rt.selected_size")
nondiff(
    "a value the masked-away elements hold: no derivative reaches it",
    "rt.selected_fill",
)
nondiff("zeros", "rt.zeros_like_float", "rt.tree_zeros_like")
nondiff(
    "shape logic",
    "rt.reduced_count",
    "rt.inverse_permutation",
    "rt.opposite",
    "rt.norm_axes",
    "rt.convolve_padding",
    "rt.kron_shape",
    "rt.diff_edge_shape",
)
nondiff("a constant: the coefficients of differences", "rt.diff_weights")
nondiff("a constant: where a pad's border constants land", "rt.pad_border")
nondiff(
    "piecewise constant: zero derivative almost everywhere",
    "rt.step",
    "rt.clip_partial",
    "rt.selects",
)
nondiff("positions and lengths: integers", "rt.take_indices", "rt.take_length")
nondiff(
    "constants shaped like their arguments",
    "rt.eye_last",
    "rt.einsum_pairs_subscripts",
    "rt.einsum_selector",
)
nondiff(
    "zeros, or an error: third derivatives of the norms of singular values are not computed",
    "rt.norm_svd_third",
)


@linear(name="rt.unbroadcast")
def unbroadcast(value, like, *, g):
    return rt.broadcast_like(g, value)


@linear(name="rt.broadcast_like")
def broadcast_like(value, like, *, g):
    return rt.unbroadcast(g, value)


@linear(name="rt.reduced_like")
def reduced_like(ct, like, axis=None, keepdims=False, *, g):
    return xp.sum(g, axis=axis, keepdims=keepdims)


@linear(name="rt.tree_add")
def tree_add(a, b, *, g):
    return g, g


@linear(name="rt.fill_like", roles={"tree": "data"})
def fill_like(tree, leaves, *, g):
    return None, rt.fill_like_vjp(g, leaves)


@linear(name="rt.unpair")
def unpair(pair, *, g):
    return g


@linear(name="rt.index_add")
def index_add(target, index, value, *, g):
    return g, None, rt.index_add_value_vjp(g, index, value)


@linear(name="rt.index_read_add")
def index_read_add(target, index, value, *, g):
    return g, None, rt.index_read_add_value_vjp(g, index, value)


@linear(name="rt.index_get_vjp")
def index_get_vjp(ct, target, index, *, g):
    return rt.index_get(g, index)


@linear(name="rt.index_set_value_vjp", roles={"target": "data"})
def index_set_value_vjp(ct, index, value, target=None, *, g):
    return rt.index_set(rt.zeros_like_float(ct), index, g)


@linear(name="rt.extremum_vjp", roles={"a": "data", "best": "data"})
def extremum_vjp(ct, a, best, axis=None, keepdims=False, *, g):
    # the tie mask is piecewise constant in ``a`` and ``best`` (the runtime's ``ans``; here ``ans`` is the vocabulary's)
    return xp.sum(
        g * rt.extremum_vjp(xp.ones_like(ct), a, best, axis, keepdims),
        axis=axis,
        keepdims=keepdims,
    )


@multilinear(name="rt.matmul_vjp_lhs")
def matmul_vjp_lhs(ct, x1, x2, *, g):
    return rt.broadcast_like(xp.matmul(g, x2), ct), None, rt.matmul_vjp_rhs(ct, g, x2)


@multilinear(name="rt.matmul_vjp_rhs")
def matmul_vjp_rhs(ct, x1, x2, *, g):
    return rt.broadcast_like(xp.matmul(x1, g), ct), rt.matmul_vjp_lhs(ct, x1, g), None


# --- transposes of shape ops' cotangents: the op itself ----------------------------------------


@linear(name="rt.index_add_value_vjp")
def index_add_value_vjp(ct, index, value, *, g):
    return rt.index_add(rt.tree_zeros_like(ct), index, g), None, None


@linear(name="rt.index_read_add_value_vjp")
def index_read_add_value_vjp(ct, index, value, *, g):
    return rt.index_read_add(rt.tree_zeros_like(ct), index, g), None, None


@linear(name="rt.fill_like_vjp")
def fill_like_vjp(ct, leaves, *, g):
    return rt.fill_like(ct, g), None


# ``fill_like`` under vmap (a gradient of batched code: MAML's per-task inner step, differentiated)
@linear(name="rt.fill_examples", roles={"tree": "data"})
def fill_examples(tree, leaves, tree_batched, size, *, g):
    return None, rt.fill_examples_vjp(g, leaves, True, size), None, None


@linear(name="rt.fill_examples_vjp")
def fill_examples_vjp(ct, leaves, ct_batched, size, *, g):
    return rt.fill_examples(ct, g, True, size), None, None, None


@linear(name="rt.concatenate_vjp", roles={"arrays": "data"})
def concatenate_vjp(ct, arrays, axis=0, *, g):
    return xp.concatenate(g, axis=axis), None, None


@linear(name="rt.unstack")
def unstack(ct, axis=0, *, g):
    return rt.restack(g, axis), None


@linear(name="rt.restack")
def restack(items, axis=0, *, g):
    return rt.unstack(g, axis), None


@linear(name="rt.hstack_vjp", roles={"tup": "data"})
def hstack_vjp(ct, tup, *, g):
    return xp.hstack(g), None


@linear(name="rt.vstack_vjp", roles={"tup": "data"})
def vstack_vjp(ct, tup, *, g):
    return xp.vstack(g), None


@linear(name="rt.column_stack_vjp", roles={"tup": "data"})
def column_stack_vjp(ct, tup, *, g):
    return xp.column_stack(g), None


@linear(name="rt.dstack_vjp", roles={"tup": "data"})
def dstack_vjp(ct, tup, *, g):
    return xp.dstack(g), None


@linear(name="rt.split_vjp", roles={"ary": "data"})
def split_vjp(ct, ary, indices_or_sections, axis=0, *, g):
    return xp.split(g, indices_or_sections, axis=axis), None, None, None


@linear(name="rt.tile_vjp", roles={"A": "data"})
def tile_vjp(ct, A, reps, *, g):
    return xp.tile(g, reps), None, None


@linear(name="rt.repeat_vjp")
def repeat_vjp(ct, a, repeats, axis=None, *, g):
    return xp.repeat(g, repeats, axis=axis), None, None, None


@linear(name="rt.pad_vjp", roles={"array": "data"})
def pad_vjp(ct, array, pad_width, mode="constant", *, g):
    return xp.pad(g, pad_width, mode=mode), None, None, None


@linear(name="rt.diag_vjp", roles={"v": "data"})
def diag_vjp(ct, v, k=0, *, g):
    return xp.diag(g, k), None, None


@linear(name="rt.take_vjp")
def take_vjp(ct, a, indices, axis=None, *, g):
    return xp.take(g, indices, axis=axis), None, None, None


@linear(name="rt.take_along_axis_vjp", roles={"arr": "data"})
def take_along_axis_vjp(ct, arr, indices, axis=-1, *, g):
    return xp.take_along_axis(g, indices, axis=axis), None, None, None


@linear(name="rt.astype_vjp", roles={"x": "data"})
def astype_vjp(ct, x, dtype, *, g):
    return rt.astype_jvp(g, dtype), None, None


@linear(name="rt.astype_jvp")
def astype_jvp(tangent, dtype, *, g):
    return rt.astype_vjp(g, tangent, dtype), None


@linear(name="rt.array_vjp", roles={"data": "data"})
def array_vjp(ct, data, *, g):
    return xp.asarray(g), None


# --- contractions: bilinear in the cotangent and the other operand -----------------------------
# (``index`` says which operand: 0 or 1, a Python int, not an array index; under ``vmap`` it takes no
# batched flag, so the flags are the operands' and ``like``'s)


@vjp(name="rt.dot_vjp", roles={"index": "static"})
def dot_vjp(ct, a, b, index, on=1, *, g):
    return (
        rt.dot_at(g, a, b, index, on, ct),
        rt.dot_vjp(ct, a, g, 0, on * index),
        rt.dot_vjp(ct, g, b, 1, on * (1 - index)),
    )


@jvp(dot_vjp)
def dot_vjp_forward(ct, a, b, index, on=1, *, ct_dot, a_dot, b_dot):
    return (
        rt.dot_vjp(ct_dot, a, b, index, on),
        rt.dot_vjp(ct, a_dot, b, index, on * index),
        rt.dot_vjp(ct, a, b_dot, index, on * (1 - index)),
    )


@vjp(name="rt.dot_at", roles={"index": "static"})
def dot_at(u, a, b, index, on=1, like=None, *, g):
    return (
        rt.dot_vjp(g, a, b, index, on),
        rt.dot_vjp(g, a, u, 0, on * index),
        rt.dot_vjp(g, u, b, 1, on * (1 - index)),
    )


@jvp(dot_at)
def dot_at_forward(u, a, b, index, on=1, like=None, *, u_dot, a_dot, b_dot):
    return (
        rt.dot_at(u_dot, a, b, index, on, like),
        rt.dot_at(u, a_dot, b, index, on * index, like),
        rt.dot_at(u, a, b_dot, index, on * (1 - index), like),
    )


@vjp(name="rt.inner_vjp", roles={"index": "static"})
def inner_vjp(ct, a, b, index, on=1, *, g):
    return (
        rt.inner_at(g, a, b, index, on, ct),
        rt.inner_vjp(ct, a, g, 0, on * index),
        rt.inner_vjp(ct, g, b, 1, on * (1 - index)),
    )


@jvp(inner_vjp)
def inner_vjp_forward(ct, a, b, index, on=1, *, ct_dot, a_dot, b_dot):
    return (
        rt.inner_vjp(ct_dot, a, b, index, on),
        rt.inner_vjp(ct, a_dot, b, index, on * index),
        rt.inner_vjp(ct, a, b_dot, index, on * (1 - index)),
    )


@vjp(name="rt.inner_at", roles={"index": "static"})
def inner_at(u, a, b, index, on=1, like=None, *, g):
    return (
        rt.inner_vjp(g, a, b, index, on),
        rt.inner_vjp(g, a, u, 0, on * index),
        rt.inner_vjp(g, u, b, 1, on * (1 - index)),
    )


@jvp(inner_at)
def inner_at_forward(u, a, b, index, on=1, like=None, *, u_dot, a_dot, b_dot):
    return (
        rt.inner_at(u_dot, a, b, index, on, like),
        rt.inner_at(u, a_dot, b, index, on * index, like),
        rt.inner_at(u, a, b_dot, index, on * (1 - index), like),
    )


@vjp(name="rt.tensordot_vjp", roles={"index": "static"})
def tensordot_vjp(ct, a, b, axes, index, on=1, *, g):
    return (
        rt.tensordot_at(g, a, b, axes, index, on, ct),
        rt.tensordot_vjp(ct, a, g, axes, 0, on * index),
        rt.tensordot_vjp(ct, g, b, axes, 1, on * (1 - index)),
    )


@jvp(tensordot_vjp)
def tensordot_vjp_forward(ct, a, b, axes, index, on=1, *, ct_dot, a_dot, b_dot):
    return (
        rt.tensordot_vjp(ct_dot, a, b, axes, index, on),
        rt.tensordot_vjp(ct, a_dot, b, axes, index, on * index),
        rt.tensordot_vjp(ct, a, b_dot, axes, index, on * (1 - index)),
    )


@vjp(name="rt.tensordot_at", roles={"index": "static"})
def tensordot_at(u, a, b, axes, index, on=1, like=None, *, g):
    return (
        rt.tensordot_vjp(g, a, b, axes, index, on),
        rt.tensordot_vjp(g, a, u, axes, 0, on * index),
        rt.tensordot_vjp(g, u, b, axes, 1, on * (1 - index)),
    )


@jvp(tensordot_at)
def tensordot_at_forward(u, a, b, axes, index, on=1, like=None, *, u_dot, a_dot, b_dot):
    return (
        rt.tensordot_at(u_dot, a, b, axes, index, on, like),
        rt.tensordot_at(u, a_dot, b, axes, index, on * index, like),
        rt.tensordot_at(u, a, b_dot, axes, index, on * (1 - index), like),
    )


# --- einsum: sums over replaced operands are einsums of stacked pairs --------------------------


@vjp(name="rt.einsum_vjp")
def einsum_vjp(ct, subscripts, operands, extra=(), *, g):
    paired = rt.einsum_pairs_subscripts(subscripts, operands, extra)
    constants = rt.einsum_selector(operands, extra)
    return (
        rt.einsum_list(paired, rt.einsum_pairs(operands, g), constants),
        None,
        rt.einsum_unpairs(
            rt.einsum_vjp(ct, paired, rt.einsum_pairs(operands, g), constants), 0
        ),
    )


@jvp(einsum_vjp)
def einsum_vjp_forward(ct, subscripts, operands, extra=(), *, ct_dot, operands_dot):
    paired = rt.einsum_pairs_subscripts(subscripts, operands, extra)
    constants = rt.einsum_selector(operands, extra)
    return (
        rt.einsum_vjp(ct_dot, subscripts, operands, extra),
        None,
        rt.einsum_unpairs(
            rt.einsum_vjp(
                ct, paired, rt.einsum_pairs(operands, operands_dot), constants
            ),
            0,
        ),
    )


@vjp(name="rt.einsum_list")
def einsum_list(subscripts, operands, extra=(), *, g):
    return None, rt.einsum_vjp(g, subscripts, operands, extra)


@jvp(einsum_list)
def einsum_list_forward(subscripts, operands, extra=(), *, operands_dot):
    paired = rt.einsum_pairs_subscripts(subscripts, operands, extra)
    return None, rt.einsum_list(
        paired,
        rt.einsum_pairs(operands, operands_dot),
        rt.einsum_selector(operands, extra),
    )


@linear(name="rt.einsum_pairs")
def einsum_pairs(operands, others, *, g):
    return rt.einsum_unpairs(g, 0), rt.einsum_unpairs(g, 1)


@linear(name="rt.einsum_unpairs")
def einsum_unpairs(pairs, which, *, g):
    return rt.einsum_pair_slot(g, which), None


@linear(name="rt.einsum_pair_slot")
def einsum_pair_slot(values, which, *, g):
    return rt.einsum_unpairs(g, which), None


# --- loop inputs: the cotangents of ``rt.iterate``, ``enumerate``, ... are restructurings -------


@linear(name="rt.sequence_vjp", roles={"xs": "data"})
def sequence_vjp(ct, xs, *, g):
    return rt.sequence_vjp_transpose(g, ct, xs), None


@linear(name="rt.sequence_vjp_transpose", roles={"xs": "data"})
def sequence_vjp_transpose(u, like, xs, *, g):
    return rt.sequence_vjp(g, xs), None, None


@linear(name="rt.enumerate_vjp", roles={"xs": "data"})
def enumerate_vjp(ct, xs, *, g):
    return rt.enumerate_vjp_transpose(g, ct, xs), None


@linear(name="rt.enumerate_vjp_transpose", roles={"xs": "data"})
def enumerate_vjp_transpose(u, like, xs, *, g):
    return rt.enumerate_vjp(g, xs), None, None


@linear(name="rt.enumerate_jvp")
def enumerate_jvp(tangents, start=0, *, g):
    return rt.enumerate_vjp(g, tangents), None


@linear(name="rt.zip_vjp", roles={"sequences": "data"})
def zip_vjp(ct, sequences, *, g):
    return rt.zip_vjp_transpose(g, ct, sequences), None


@linear(name="rt.zip_vjp_transpose", roles={"sequences": "data"})
def zip_vjp_transpose(u, like, sequences, *, g):
    return rt.zip_vjp(g, sequences), None, None


@linear(name="rt.reversed_vjp", roles={"xs": "data"})
def reversed_vjp(ct, xs, *, g):
    return rt.reversed_vjp_transpose(g, ct, xs), None


@linear(name="rt.reversed_vjp_transpose", roles={"xs": "data"})
def reversed_vjp_transpose(u, like, xs, *, g):
    return rt.reversed_vjp(g, xs), None, None


@linear(name="rt.items_vjp", roles={"d": "data"})
def items_vjp(ct, d, *, g):
    return rt.items_vjp_transpose(g, ct, d), None


@linear(name="rt.items_vjp_transpose", roles={"d": "data"})
def items_vjp_transpose(u, like, d, *, g):
    return rt.items_vjp(g, d), None, None


@linear(name="rt.values_vjp", roles={"d": "data"})
def values_vjp(ct, d, *, g):
    return rt.values_vjp_transpose(g, ct, d), None


@linear(name="rt.values_vjp_transpose", roles={"d": "data"})
def values_vjp_transpose(u, like, d, *, g):
    return rt.values_vjp(g, d), None, None
