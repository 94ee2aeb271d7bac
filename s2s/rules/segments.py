"""``jax.ops`` segment reductions, as the ``.at[]`` scatters into a filled array that they are: their
derivatives, batching and forward mode are the scatters' (``at_updates.py``). ``num_segments`` must be
given (a Python int), as under ``jax.jit``; an empty segment holds the reduction's identity.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import decompose


@decompose(name="rt.ops.segment_sum")
def segment_sum(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    empty = xp.zeros((num_segments,) + data.shape[1:], data.dtype)
    return rt.index_add(empty, segment_ids, data)


@decompose(name="rt.ops.segment_max")
def segment_max(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    empty = xp.zeros((num_segments,) + data.shape[1:], data.dtype) - xp.inf
    return rt.index_max(empty, segment_ids, data)


@decompose(name="rt.ops.segment_min")
def segment_min(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    empty = xp.zeros((num_segments,) + data.shape[1:], data.dtype) + xp.inf
    return rt.index_min(empty, segment_ids, data)
