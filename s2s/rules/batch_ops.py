"""Derivative rules for the runtime helpers that batched code calls, so batched code is differentiated again
(``s2s.grad`` of ``s2s.vmap``). Registered as ``rt.<name>``; the vocabulary is the ops'.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import linear, nondiff

nondiff(
    "sizes, ranks and axes of examples: integers",
    "rt.batch_size",
    "rt.example_ndim",
    "rt.example_shape",
    "rt.example_size",
    "rt.example_len",
    "rt.example_axes",
    "rt.batch_axis",
    "rt.batch_shape",
    "rt.shape_rank",
    "rt.unit_axes",
)


@linear(name="rt.lift")
def lift(x, rank, *, g):
    return xp.reshape(g, xp.shape(x)), None


@linear(name="rt.flat_examples")
def flat_examples(x, *, g):
    return xp.reshape(g, xp.shape(x))


@linear(name="rt.broadcast_batch")
def broadcast_batch(value, size, *, g):
    return rt.tree_sum_batch(g), None


@linear(name="rt.example_transpose")
def example_transpose(x, axes=None, *, g):
    return (
        rt.example_transpose(g, rt.inverse_permutation(axes, rt.example_ndim(x))),
        None,
    )


@linear(name="rt.loop_first")
def loop_first(xs, *, g):
    return rt.batch_first(g)


@linear(name="rt.batch_first")
def batch_first(ys, *, g):
    return rt.loop_first(g)


@linear(name="rt.example_item")
def example_item(x, key, *, g):
    return rt.example_item_vjp(g, x, key), None


@linear(name="rt.tree_sum_batch")
def tree_sum_batch(ct, *, g):
    return rt.unsum_batch(g, ct)


@linear(name="rt.unsum_batch")
def unsum_batch(ct, like, *, g):
    return rt.tree_sum_batch(g), None


@linear(name="rt.example_item_vjp")
def example_item_vjp(ct, x, key, *, g):
    return rt.example_item(g, key), None, None
