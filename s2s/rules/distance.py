"""``scipy.spatial.distance``'s ``cdist``, ``pdist`` and ``squareform``, spelled ``rt.distance.<name>``: ``decompose``
ops written with ops that have rules (the rows' differences broadcast against each other, reduced over the last axis), so s2s
differentiates what the formula says: ``"euclidean"``'s square root has no derivative at a zero distance
(``cdist(X, X)``'s diagonal), as JAX's ``sqrt`` has none; ``pdist`` gathers each pair's rows (no row with
itself), and ``squareform`` writes a condensed vector into the upper triangle and adds its transpose. The
positions are functions of the shape (the same for every example under ``vmap``). Another metric is the
located error where the call runs.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import batch, decompose, nondiff


@decompose(name="rt.distance.norm_of")
def norm_of(diff, metric="euclidean"):
    # the metric of each difference (its last axis)
    if metric == "cityblock":
        return xp.sum(xp.abs(diff), axis=-1)
    if metric == "sqeuclidean":
        return xp.sum(diff * diff, axis=-1)
    if metric == "euclidean":
        return xp.sqrt(xp.sum(diff * diff, axis=-1))
    return rt.refused(
        "a `scipy.spatial.distance` metric s2s does not read",
        "use metric='sqeuclidean', 'euclidean' or 'cityblock', or write the distance with NumPy",
    )


@decompose(name="rt.distance.cdist")
def cdist(XA, XB, metric="euclidean"):
    diff = xp.expand_dims(XA, -2) - xp.expand_dims(XB, -3)
    return rt.distance.norm_of(diff, metric)


@decompose(name="rt.distance.pdist")
def pdist(X, metric="euclidean"):
    # each pair's rows gathered (no row with itself: ``"euclidean"``'s square root never sees a zero it made)
    rows = xp.take(X, rt.distance.pair_rows(X), axis=0)
    return rt.distance.norm_of(
        rows - xp.take(X, rt.distance.pair_cols(X), axis=0), metric
    )


@decompose(name="rt.distance.squareform")
def squareform(X, force="no", checks=True):
    # a condensed vector (``rt.distance.square_shape`` refuses a matrix) into the upper triangle, mirrored
    rows = rt.distance.square_rows(X)
    cols = rt.distance.square_cols(X)
    upper = rt.index_add(xp.zeros(rt.distance.square_shape(X)), (rows, cols), X)
    return upper + xp.transpose(upper)


nondiff(
    "positions and sizes of a shape: integers",
    "rt.distance.pair_rows",
    "rt.distance.pair_cols",
    "rt.distance.square_shape",
    "rt.distance.square_rows",
    "rt.distance.square_cols",
)
batch(
    "example",
    "rt.distance.pair_rows",
    "rt.distance.pair_cols",
    "rt.distance.square_shape",
    "rt.distance.square_rows",
    "rt.distance.square_cols",
)
