"""``scipy.spatial.distance.cdist``, spelled ``rt.distance.cdist``: a ``decompose`` op written with ops that
have rules (the rows' differences broadcast against each other, reduced over the last axis), so s2s
differentiates what the formula says: ``"euclidean"``'s square root has no derivative at a zero distance
(``cdist(X, X)``'s diagonal), as JAX's ``sqrt`` has none. Another metric is the located error where the call
runs.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import decompose


@decompose(name="rt.distance.cdist")
def cdist(XA, XB, metric="euclidean"):
    diff = xp.expand_dims(XA, -2) - xp.expand_dims(XB, -3)
    if metric == "cityblock":
        return xp.sum(xp.abs(diff), axis=-1)
    if metric == "sqeuclidean":
        return xp.sum(diff * diff, axis=-1)
    if metric == "euclidean":
        return xp.sqrt(xp.sum(diff * diff, axis=-1))
    return rt.refused(
        "`cdist` with a metric s2s does not read",
        "use metric='sqeuclidean', 'euclidean' or 'cityblock', or write the distance with NumPy",
    )
