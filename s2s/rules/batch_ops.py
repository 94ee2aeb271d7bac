"""Derivative rules for the runtime helpers that batched code calls, so batched code is differentiated again
(``s2s.grad`` of ``s2s.vmap``). Registered as ``rt.<name>``; the vocabulary is the ops'.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import (
    batch,
    decompose,
    jvp,
    linear,
    multilinear,
    no_derivative,
    nondiff,
    vjp,
)

nondiff(
    "sizes, ranks and axes of examples: integers",
    "rt.batch_size",
    "rt.example_ndim",
    "rt.largest_rank",
    "rt.example_shape",
    "rt.example_size",
    "rt.example_len",
    "rt.example_axes",
    "rt.batch_axis",
    "rt.batch_shape",
    "rt.shape_rank",
    "rt.unit_axes",
)
# (in derivative code mapped again, an axis of one example: ``batching.softmax``'s cotangent)
batch("example", "rt.batch_axis")


@linear(name="rt.lift")
def lift(x, rank, *, g):
    return xp.reshape(g, xp.shape(x)), None


@linear(name="rt.flat_examples")
def flat_examples(x, *, g):
    return xp.reshape(g, xp.shape(x))


@linear(name="rt.broadcast_batch")
def broadcast_batch(value, size, *, g):
    return rt.tree_sum_batch(g), None


@linear(name="rt.batch_leaves")
def batch_leaves(value, axes, size, kept=False, *, g):
    return rt.batch_leaves_vjp(g, axes, kept), None, None, None


@linear(name="rt.batch_leaves_vjp")
def batch_leaves_vjp(ct, axes, kept=False, *, g):
    return rt.batch_leaves(g, axes, rt.batch_size_of(ct, axes, kept), kept), None, None


@linear(name="rt.unbatch_leaves")
def unbatch_leaves(value, axes, *, g):
    return rt.rebatch_leaves(g, axes), None


@linear(name="rt.rebatch_leaves")
def rebatch_leaves(ct, axes, *, g):
    return rt.unbatch_leaves(g, axes), None


@linear(name="rt.example_transpose")
def example_transpose(x, axes=None, *, g):
    return (
        rt.example_transpose(g, rt.inverse_permutation(axes, rt.example_ndim(x))),
        None,
    )


@linear(name="rt.loop_first", roles={"size": "static"})
def loop_first(xs, size=None, *, g):
    return rt.loop_first_vjp(g, xs), None


@linear(name="rt.loop_first_vjp", roles={"xs": "data"})
def loop_first_vjp(ct, xs, *, g):
    return rt.loop_first_vjp(g, xs), None


@linear(name="rt.batch_first", roles={"flags": "static"})
def batch_first(ys, flags=True, *, g):
    # (leaf by leaf, as the steps' outputs were: swapping the same leaves again undoes it)
    return rt.batch_first(g, flags), None


@linear(name="rt.steps_first", roles={"flags": "static"})
def steps_first(ys, flags=True, *, g):
    # (its inverse, ``batch_first``, is the same swap)
    return rt.batch_first(g, flags), None


@linear(name="rt.example_item")
def example_item(x, key, *, g):
    return rt.example_item_vjp(g, x, key), None


@linear(name="rt.unpack_examples")
def unpack_examples(x, count, *, g):
    return rt.pack_examples(g, x), None


@linear(name="rt.pack_examples")
def pack_examples(parts, like, *, g):
    return rt.unpack_examples(g, len(parts)), None


@linear(name="rt.tree_sum_batch")
def tree_sum_batch(ct, *, g):
    return rt.unsum_batch(g, ct)


@linear(name="rt.unsum_batch")
def unsum_batch(ct, like, *, g):
    return rt.tree_sum_batch(g), None


@linear(name="rt.example_item_vjp")
def example_item_vjp(ct, x, key, *, g):
    return rt.example_item(g, key), None, None


@linear(name="rt.sum_unbatched")
def sum_unbatched(x, flag, *, g):
    return rt.broadcast_like(g, x), None


@multilinear(name="rt.batched_ops.convolve")
def batched_convolve(a, v, mode, flags, *, g):
    # per example, the transpose of a convolution is a correlation of the cotangent padded back to the full
    # convolution's length (``explicit.convolve``), summed over the batch for an operand that is shared
    padded = xp.pad(g, rt.batched_ops.last_axis_padding(g, a, v, mode))
    return (
        rt.sum_unbatched(
            rt.batched_ops.convolve(padded, xp.flip(v, -1), "valid", (True, flags[1])),
            flags[0],
        ),
        rt.sum_unbatched(
            rt.batched_ops.convolve(padded, xp.flip(a, -1), "valid", (True, flags[0])),
            flags[1],
        ),
        None,
        None,
    )


nondiff("a pad width: ints", "rt.batched_ops.last_axis_padding")
nondiff("whether any example is live: a truth value", "rt.batching.any_example")
nondiff("a batch size: an int", "rt.batch_size_of")
nondiff("a length: an int", "rt.batching.take_length")


# Products of batched code: the per-example cotangent (``rt.batched_vjps``), summed over the
# batch for an operand that is the same for every example.
@multilinear(name="rt.batching.matmul")
def batching_matmul(a, b, flags, *, g):
    return (
        rt.sum_unbatched(
            rt.batched_vjps.matmul_vjp_lhs(g, a, b, (True, *flags)), flags[0]
        ),
        rt.sum_unbatched(
            rt.batched_vjps.matmul_vjp_rhs(g, a, b, (True, *flags)), flags[1]
        ),
        None,
    )


@multilinear(name="rt.batching.einsum")
def batching_einsum(subscripts, flags, *operands, g):
    # ``operands`` is one parameter (the sequence); its cotangent is a list.
    return (
        None,
        None,
        rt.batched_vjps.batching_einsum_vjp(g, subscripts, operands, flags),
    )


no_derivative(
    "not yet: second derivatives of `np.einsum` inside `jax.vmap`",
    rt.batched_vjps.batching_einsum_vjp,
    "rt.batched_vjps.batching_einsum_vjp",
)


# per-example products and norms written with the ops they are made of, so that every derivative mode
# (and its derivatives) reads them
@decompose(name="rt.batching.outer")
def batching_outer(a, b, flags):
    left = xp.reshape(a, rt.batching.flat_shape(a, flags[0]))
    right = xp.reshape(b, rt.batching.flat_shape(b, flags[1]))
    return xp.expand_dims(left, -1) * xp.expand_dims(right, -2)


@decompose(name="rt.batching.norm")
def batching_norm(x, ord=None, axis=None, keepdims=False):
    if axis is None and ord is None:
        flat = xp.linalg.norm(xp.reshape(x, rt.batching.flat_shape(x, True)), axis=-1)
        if keepdims:
            return xp.reshape(flat, rt.batching.kept_shape(x))
        return flat
    axes = rt.batching.norm_axes(x, axis)
    return xp.linalg.norm(x, ord=ord, axis=axes, keepdims=keepdims)


nondiff(
    "shape logic",
    "rt.batching.flat_shape",
    "rt.batching.kept_shape",
    "rt.batching.norm_axes",
)
batch(
    "example",
    "rt.batching.flat_shape",
    "rt.batching.kept_shape",
    "rt.batching.norm_axes",
)


@multilinear(name="rt.batching.dot")
def batching_dot(a, b, flags, *, g):
    return (
        rt.sum_unbatched(
            rt.batched_vjps.dot_vjp(g, a, b, 0, 1, (True, *flags)), flags[0]
        ),
        rt.sum_unbatched(
            rt.batched_vjps.dot_vjp(g, a, b, 1, 1, (True, *flags)), flags[1]
        ),
        None,
    )


no_derivative(
    "not yet: second derivatives of `take` at indices that differ per example inside `jax.vmap`",
    rt.batched_vjps.take_vjp,
    "rt.batched_vjps.take_vjp",
)
no_derivative(
    "not yet: second derivatives of `np.dot` inside `jax.vmap`",
    rt.batched_vjps.dot_vjp,
    "rt.batched_vjps.dot_vjp",
)
no_derivative(
    "not yet: second derivatives of `np.inner` inside `jax.vmap`",
    rt.batched_vjps.inner_vjp,
    "rt.batched_vjps.inner_vjp",
)
no_derivative(
    "not yet: third derivatives of `np.dot` inside `jax.vmap`",
    rt.batched_vjps.dot_at,
    "rt.batched_vjps.dot_at",
)
no_derivative(
    "not yet: third derivatives of `np.inner` inside `jax.vmap`",
    rt.batched_vjps.inner_at,
    "rt.batched_vjps.inner_at",
)
no_derivative(
    "not yet: third derivatives of `np.tensordot` inside `jax.vmap`",
    rt.batched_vjps.tensordot_at,
    "rt.batched_vjps.tensordot_at",
)


# ``jnp.linalg.solve`` per example: the per-example cotangents of the batched derivative code (an operand
# the same for every example gets them summed), the tangent as ``linalg.solve``'s
@vjp(name="rt.batching.solve")
def batching_solve(a, b, flags, *, ans, g):
    return (
        rt.sum_unbatched(
            rt.batched_vjps.solve_vjp_a(g, a, b, ans, (True, flags[0], flags[1], True)),
            flags[0],
        ),
        rt.sum_unbatched(
            rt.batched_vjps.solve_vjp_b(g, a, b, (True, flags[0], flags[1])), flags[1]
        ),
        None,
    )


@jvp(batching_solve)
def batching_solve_jvp(a, b, flags, *, ans, a_dot, b_dot):
    return (
        rt.batched_vjps.solve_jvp_a(
            a_dot, a, b, ans, (flags[0], flags[0], flags[1], True)
        ),
        rt.batching.solve(a, b_dot, flags),
    )


no_derivative(
    "not yet: second derivatives of `np.linalg.solve` inside `jax.vmap`",
    rt.batched_vjps.solve_vjp_a,
    "rt.batched_vjps.solve_vjp_a",
)
no_derivative(
    "not yet: second derivatives of `np.linalg.solve` inside `jax.vmap`",
    rt.batched_vjps.solve_vjp_b,
    "rt.batched_vjps.solve_vjp_b",
)
no_derivative(
    "not yet: second derivatives of `np.linalg.solve` inside `jax.vmap`",
    rt.batched_vjps.solve_jvp_a,
    "rt.batched_vjps.solve_jvp_a",
)


@multilinear(name="rt.batching.inner")
def batching_inner(a, b, flags, *, g):
    return (
        rt.sum_unbatched(
            rt.batched_vjps.inner_vjp(g, a, b, 0, 1, (True, *flags)), flags[0]
        ),
        rt.sum_unbatched(
            rt.batched_vjps.inner_vjp(g, a, b, 1, 1, (True, *flags)), flags[1]
        ),
        None,
    )


@linear(name="rt.batching.guard", roles={"pred": "data"})
def batching_guard(x, pred, shared_by_all, *, g):
    return rt.batching.guard_vjp(g, pred, shared_by_all), None, None


@linear(name="rt.batching.guard_vjp", roles={"pred": "data"})
def batching_guard_vjp(ct, pred, shared_by_all, *, g):
    return rt.batching.guard_vjp(g, pred, shared_by_all), None, None


@linear(name="rt.batching.select")
def batching_select(pred, on_true, on_false, *, g):
    return (
        None,
        rt.batching.select(pred, g, rt.tree_zeros_like(g)),
        rt.batching.select(pred, rt.tree_zeros_like(g), g),
    )


# What the rules above call, differentiated again (their own per-example formulas, as in
# derivative_ops.py, each cotangent summed over the batch for an operand shared by every example).
@linear(name="rt.batched_vjps.unbroadcast")
def batched_unbroadcast(value, like, flags, *, g):
    return (
        rt.sum_unbatched(
            rt.batched_vjps.broadcast_like(g, value, (True, flags[0])), flags[0]
        ),
        None,
        None,
    )


@linear(name="rt.batched_vjps.broadcast_like")
def batched_broadcast_like(value, like, flags, *, g):
    return (
        rt.sum_unbatched(
            rt.batched_vjps.unbroadcast(g, value, (True, flags[0])), flags[0]
        ),
        None,
        None,
    )


nondiff("a constant: ones shaped like the output", "rt.batched_vjps.grad_seed")


no_derivative(
    "not yet: third derivatives of element writes inside `jax.vmap`",
    rt.batched_vjps.index_add_value_vjp,
    "rt.batched_vjps.index_add_value_vjp",
)
no_derivative(
    "not yet: third derivatives of element reads at traced positions inside `jax.vmap`",
    rt.batched_vjps.index_read_add_value_vjp,
    "rt.batched_vjps.index_read_add_value_vjp",
)
no_derivative(
    "not yet: third derivatives of element writes inside `jax.vmap`",
    rt.batched_vjps.index_set_value_vjp,
    "rt.batched_vjps.index_set_value_vjp",
)
no_derivative(
    "not yet: third derivatives of element writes inside `jax.vmap`",
    rt.batching.zero_at,
    "rt.batching.zero_at",
)


@linear(name="rt.batching.index_add", roles={"index": "static"})
def batched_index_add(target, index, value, flags, *, g):
    return (
        rt.sum_unbatched(g, flags[0]),
        None,
        rt.sum_unbatched(
            rt.batched_vjps.index_add_value_vjp(
                g, index, value, (True, flags[1], flags[2])
            ),
            flags[2],
        ),
        None,
    )


@linear(name="rt.batching.index_read_add", roles={"index": "static"})
def batched_index_read_add(target, index, value, flags, *, g):
    return (
        rt.sum_unbatched(g, flags[0]),
        None,
        rt.sum_unbatched(
            rt.batched_vjps.index_read_add_value_vjp(
                g, index, value, (True, flags[1], flags[2])
            ),
            flags[2],
        ),
        None,
    )


@linear(name="rt.batching.index_set", roles={"index": "static", "size": "static"})
def batched_index_set(target, index, value, flags, size=None, *, g):
    return (
        rt.sum_unbatched(rt.batching.zero_at(g, index, (True, flags[1])), flags[0]),
        None,
        rt.sum_unbatched(
            rt.batched_vjps.index_set_value_vjp(
                g, index, value, target, (True, flags[1], flags[2], flags[0])
            ),
            flags[2],
        ),
        None,
        None,
    )


# A loop input's batched cotangent helpers (``rt.batched_loops``, ``twin`` of ``rt.sequence_vjp`` and
# the others) differentiated again: each is linear in its first operand, its transpose the other's
# batched twin (the cotangent of an operand shared by every example summed over the batch).


@linear(name="rt.batched_loops.sequence_vjp", roles={"xs": "data"})
def batched_sequence_vjp(ct, xs, flags, *, g):
    back = rt.batched_loops.sequence_vjp_transpose(
        g, ct, xs, (True, flags[0], flags[1])
    )
    return rt.sum_unbatched(back, flags[0]), None, None


@linear(
    name="rt.batched_loops.sequence_vjp_transpose", roles={"like": "data", "xs": "data"}
)
def batched_sequence_vjp_transpose(u, like, xs, flags, *, g):
    forth = rt.batched_loops.sequence_vjp(g, xs, (True, flags[2]))
    return rt.sum_unbatched(forth, flags[0]), None, None, None


@linear(name="rt.batched_loops.enumerate_vjp", roles={"xs": "data"})
def batched_enumerate_vjp(ct, xs, flags, *, g):
    back = rt.batched_loops.enumerate_vjp_transpose(
        g, ct, xs, (True, flags[0], flags[1])
    )
    return rt.sum_unbatched(back, flags[0]), None, None


@linear(
    name="rt.batched_loops.enumerate_vjp_transpose",
    roles={"like": "data", "xs": "data"},
)
def batched_enumerate_vjp_transpose(u, like, xs, flags, *, g):
    forth = rt.batched_loops.enumerate_vjp(g, xs, (True, flags[2]))
    return rt.sum_unbatched(forth, flags[0]), None, None, None


@linear(name="rt.batched_loops.zip_vjp", roles={"sequences": "data"})
def batched_zip_vjp(ct, sequences, flags, *, g):
    back = rt.batched_loops.zip_vjp_transpose(
        g, ct, sequences, (True, flags[0], flags[1])
    )
    return rt.sum_unbatched(back, flags[0]), None, None


@linear(
    name="rt.batched_loops.zip_vjp_transpose",
    roles={"like": "data", "sequences": "data"},
)
def batched_zip_vjp_transpose(u, like, sequences, flags, *, g):
    forth = rt.batched_loops.zip_vjp(g, sequences, (True, flags[2]))
    return rt.sum_unbatched(forth, flags[0]), None, None, None


@linear(name="rt.batched_loops.reversed_vjp", roles={"xs": "data"})
def batched_reversed_vjp(ct, xs, flags, *, g):
    back = rt.batched_loops.reversed_vjp_transpose(
        g, ct, xs, (True, flags[0], flags[1])
    )
    return rt.sum_unbatched(back, flags[0]), None, None


@linear(
    name="rt.batched_loops.reversed_vjp_transpose", roles={"like": "data", "xs": "data"}
)
def batched_reversed_vjp_transpose(u, like, xs, flags, *, g):
    forth = rt.batched_loops.reversed_vjp(g, xs, (True, flags[2]))
    return rt.sum_unbatched(forth, flags[0]), None, None, None


@linear(name="rt.batched_loops.items_vjp", roles={"d": "data"})
def batched_items_vjp(ct, d, flags, *, g):
    back = rt.batched_loops.items_vjp_transpose(g, ct, d, (True, flags[0], flags[1]))
    return rt.sum_unbatched(back, flags[0]), None, None


@linear(
    name="rt.batched_loops.items_vjp_transpose", roles={"like": "data", "d": "data"}
)
def batched_items_vjp_transpose(u, like, d, flags, *, g):
    forth = rt.batched_loops.items_vjp(g, d, (True, flags[2]))
    return rt.sum_unbatched(forth, flags[0]), None, None, None


@linear(name="rt.batched_loops.values_vjp", roles={"d": "data"})
def batched_values_vjp(ct, d, flags, *, g):
    back = rt.batched_loops.values_vjp_transpose(g, ct, d, (True, flags[0], flags[1]))
    return rt.sum_unbatched(back, flags[0]), None, None


@linear(
    name="rt.batched_loops.values_vjp_transpose", roles={"like": "data", "d": "data"}
)
def batched_values_vjp_transpose(u, like, d, flags, *, g):
    forth = rt.batched_loops.values_vjp(g, d, (True, flags[2]))
    return rt.sum_unbatched(forth, flags[0]), None, None, None


@multilinear(name="rt.batched_vjps.matmul_vjp_lhs")
def batched_matmul_vjp_lhs(ct, x1, x2, flags, *, g):
    return (
        rt.sum_unbatched(
            rt.batched_vjps.broadcast_like(
                rt.batching.matmul(g, x2, (True, flags[2])), ct, (True, flags[0])
            ),
            flags[0],
        ),
        None,
        rt.sum_unbatched(
            rt.batched_vjps.matmul_vjp_rhs(ct, g, x2, (flags[0], True, flags[2])),
            flags[2],
        ),
        None,
    )


@multilinear(name="rt.batched_vjps.matmul_vjp_rhs")
def batched_matmul_vjp_rhs(ct, x1, x2, flags, *, g):
    return (
        rt.sum_unbatched(
            rt.batched_vjps.broadcast_like(
                rt.batching.matmul(x1, g, (flags[1], True)), ct, (True, flags[0])
            ),
            flags[0],
        ),
        rt.sum_unbatched(
            rt.batched_vjps.matmul_vjp_lhs(ct, x1, g, (flags[0], flags[1], True)),
            flags[1],
        ),
        None,
        None,
    )


# ``jnp.array([t, x])`` differentiated twice, per example, and again (a PINN's residual under ``grad``)


@linear(name="rt.batched_shape_vjps.array_vjp", roles={"data": "data"})
def batched_array_vjp(ct, data, flags, *, g):
    return rt.batched_shape_vjps.array_vjp_transpose(g, ct, data, flags), None, None


@linear(
    name="rt.batched_shape_vjps.array_vjp_transpose",
    roles={"like": "data", "data": "data"},
)
def batched_array_vjp_transpose(ct, like, data, flags, *, g):
    return rt.batched_shape_vjps.array_vjp(g, data, flags), None, None, None


@linear(name="rt.batched_ops.asarray", roles={"data": "data"})
def batched_asarray(data, dtype=None, *, g):
    return rt.batched_shape_vjps.array_vjp(g, data, (True, True)), None


@linear(name="rt.batched_ops.diag", roles={"k": "static"})
def batched_diag(v, k=0, *, g):
    return rt.batched_shape_vjps.diag_vjp(g, v, k, (True, True)), None


@linear(
    name="rt.batched_shape_vjps.diag_vjp",
    roles={"v": "data", "k": "static", "flags": "static"},
)
def batched_diag_vjp(ct, v, k, flags, *, g):
    return rt.sum_unbatched(rt.batched_ops.diag(g, k), flags[0]), None, None, None


@linear(name="rt.batched_ops.reshape", roles={"shape": "static", "order": "static"})
def batched_reshape(a, shape, order="C", *, g):
    return rt.batched_ops.reshape(g, rt.example_shape(a), order), None, None


# ``take`` at indices that differ per example, differentiated again: the cotangent added back per
# example, summed over the batch where ``a`` is shared by every example
@linear(
    name="rt.batching.take",
    roles={"indices": "index", "axis": "static", "mode": "static", "flags": "static"},
)
def batched_take(a, indices, axis, mode, flags, *, g):
    at = rt.take_indices(indices, rt.batching.take_length(a, axis, flags[0]), mode)
    back = rt.batched_vjps.take_vjp(g, a, at, axis, (True, flags[0], True))
    return rt.sum_unbatched(back, flags[0]), None, None, None, None


# an item per example (``q_values(p, s)[a]`` under ``jax.vmap``), differentiated again: the cotangent
# scattered back per example, summed over the batch where ``x`` is shared by every example
@linear(name="rt.batching.getitem", roles={"index": "static"})
def batched_getitem(x, index, flags, *, g):
    back = rt.batching.index_add(
        rt.tree_zeros_like(x), index, g, (flags[0], flags[1], True)
    )
    return rt.sum_unbatched(back, flags[0]), None, None


# a key the caller passes, per example (``table[i]`` of an index mapped by ``jax.vmap``), differentiated
@linear(name="rt.batched_ops.selection", roles={"index": "static"})
def batched_selection(x, index, fill, flags, *, g):
    back = rt.batched_ops.selection_vjp(g, x, index, (True, flags[0], flags[1]))
    return rt.sum_unbatched(back, flags[0]), None, None, None


@linear(name="rt.batched_ops.selection_vjp", roles={"x": "data", "index": "static"})
def batched_selection_vjp(ct, x, index, flags, *, g):
    forth = rt.batched_ops.selection(g, index, False, (True, flags[2]))
    return rt.sum_unbatched(forth, flags[0]), None, None, None
