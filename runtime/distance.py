"""``rt.distance``: ``scipy.spatial.distance`` functions, as ``rt.distance.<name>``.

The compiler expands each into ops before any transform (``s2s/rules/distance.py``),
so generated code never calls these; they run as written: SciPy's on NumPy values,
the same ops on JAX values (JAX has no ``scipy.spatial``).
"""

from __future__ import annotations

from .library import uses_jax

METRICS = ("sqeuclidean", "euclidean", "cityblock")


def cdist(XA, XB, metric="euclidean"):
    """Distances between each row of ``XA`` and each row of ``XB``."""
    if not uses_jax(XA, XB):
        from scipy.spatial.distance import cdist as scipy_cdist

        return scipy_cdist(XA, XB, metric=metric)
    import jax.numpy as jnp

    if metric not in METRICS:
        raise ValueError(f"cdist: metric {metric!r} (s2s reads {', '.join(METRICS)})")
    diff = jnp.expand_dims(XA, -2) - jnp.expand_dims(XB, -3)
    if metric == "cityblock":
        return jnp.sum(jnp.abs(diff), axis=-1)
    squared = jnp.sum(diff * diff, axis=-1)
    return squared if metric == "sqeuclidean" else jnp.sqrt(squared)
