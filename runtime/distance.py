"""``rt.distance``: ``scipy.spatial.distance``'s ``cdist``, ``pdist`` and ``squareform``, as ``rt.distance.<name>``, and the
positions they read (functions of a shape: ``pair_rows``, ``square_shape``, ...).

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


def pdist(X, metric="euclidean"):
    """Distances between each pair of rows of ``X`` (``i < j``), in ``scipy``'s condensed order."""
    if not uses_jax(X):
        from scipy.spatial.distance import pdist as scipy_pdist

        return scipy_pdist(X, metric=metric)
    full = cdist(X, X, metric) if metric != "euclidean" else None
    rows, cols = pair_rows(X), pair_cols(X)
    if full is not None:
        return full[rows, cols]
    import jax.numpy as jnp

    diff = (
        X[rows] - X[cols]
    )  # (no zero distance of a row with itself under the square root)
    return jnp.sqrt(jnp.sum(diff * diff, axis=-1))


def squareform(X, force="no", checks=True):
    """A condensed distance vector as the symmetric matrix it stands for, or a matrix as its vector."""
    if not uses_jax(X):
        from scipy.spatial.distance import squareform as scipy_squareform

        return scipy_squareform(X, force=force, checks=checks)
    import jax.numpy as jnp

    if jnp.ndim(X) == 2:
        return X[square_rows(X), square_cols(X)]
    upper = (
        jnp.zeros(square_shape(X), X.dtype).at[square_rows(X), square_cols(X)].add(X)
    )
    return upper + upper.T


def _pairs(n: int):
    import numpy as np

    return np.triu_indices(n, k=1)


def pair_rows(X):
    """The first row of each pair ``pdist`` reads (``X``'s shape only)."""
    return _pairs(X.shape[0])[0]


def pair_cols(X):
    """The second row of each pair ``pdist`` reads."""
    return _pairs(X.shape[0])[1]


def square_shape(X) -> tuple:
    """The ``(n, n)`` a condensed vector of ``n * (n - 1) / 2`` distances stands for."""
    import math

    if len(X.shape) != 1:
        from .located import Refusal

        raise Refusal(
            "`squareform` of a matrix (to its condensed vector)",
            "index its upper triangle: `D[np.triu_indices(len(D), k=1)]`",
        )
    m = X.shape[0]
    n = round((1 + math.sqrt(1 + 8 * m)) / 2)
    if n * (n - 1) // 2 != m:
        raise ValueError(
            "squareform: a condensed distance vector holds n * (n - 1) / 2 entries"
        )
    return (n, n)


def square_rows(X):
    """Where each entry of a condensed vector sits in the square matrix (its row)."""
    return _pairs(square_shape(X)[0])[0]


def square_cols(X):
    """... and its column."""
    return _pairs(square_shape(X)[0])[1]
