"""``rt.ops``: what generated code calls for ``jax.ops``' segment reductions; JAX's own on JAX values, NumPy
otherwise. s2s differentiates them as the ``.at[]`` scatters they are (``s2s/rules/segments.py``).
"""

from __future__ import annotations

import numpy as np

from .library import library
from .located import Refusal

_NUM_SEGMENTS = (
    "a segment reduction without `num_segments=` under jax.jit: the number of segments would depend on "
    "the ids' values",
    "pass `num_segments=` (a Python int), or run eagerly with backend='numpy'",
)


def segment_full(data, segment_ids, num_segments, fill):
    """The empty result of a segment reduction: ``(num_segments, *data.shape[1:])`` of ``fill``, in the
    data's dtype (``num_segments`` None: one past the largest id, which must then be known).
    """
    from .arrays import _is_jax, namespace

    if num_segments is None:
        if _is_jax(segment_ids):
            import jax

            if isinstance(segment_ids, jax.core.Tracer):
                raise Refusal(*_NUM_SEGMENTS)
        num_segments = (
            int(np.max(np.asarray(segment_ids))) + 1 if np.size(segment_ids) else 0
        )
    xp = namespace(data)
    dtype = xp.result_type(data)
    return xp.full((int(num_segments), *np.shape(data)[1:]), fill, dtype=dtype)


def _at(name, data, segment_ids, num_segments, fill):
    out = segment_full(data, segment_ids, num_segments, fill)
    getattr(np, name).at(out, np.asarray(segment_ids), data)
    return out


@library("jax.ops.segment_sum")
def segment_sum(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    return _at("add", np.asarray(data), segment_ids, num_segments, 0)


@library("jax.ops.segment_max")
def segment_max(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    return _at("maximum", np.asarray(data), segment_ids, num_segments, -np.inf)


@library("jax.ops.segment_min")
def segment_min(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    return _at("minimum", np.asarray(data), segment_ids, num_segments, np.inf)
