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

    return norm_of(jnp.expand_dims(XA, -2) - jnp.expand_dims(XB, -3), metric)


def norm_of(diff, metric="euclidean"):
    """The distance each difference (its last axis) stands for under ``metric``."""
    from .arrays import namespace

    if metric not in METRICS:
        raise ValueError(f"metric {metric!r}: s2s reads {', '.join(METRICS)}")
    xp = namespace(diff)
    if metric == "cityblock":
        return xp.sum(xp.abs(diff), axis=-1)
    squared = xp.sum(diff * diff, axis=-1)
    return squared if metric == "sqeuclidean" else xp.sqrt(squared)


def pdist(X, metric="euclidean"):
    """Distances between each pair of rows of ``X`` (``i < j``), in ``scipy``'s condensed order."""
    if not uses_jax(X):
        from scipy.spatial.distance import pdist as scipy_pdist

        return scipy_pdist(X, metric=metric)
    return norm_of(X[pair_rows(X)] - X[pair_cols(X)], metric)


def squareform(X, force="no", checks=True):
    """A condensed distance vector as the symmetric matrix it stands for, or a matrix as its vector."""
    if not uses_jax(X):
        from scipy.spatial.distance import squareform as scipy_squareform

        return scipy_squareform(X, force=force, checks=checks)
    import jax.numpy as jnp

    if jnp.ndim(X) == 2:
        rows, cols = _pairs(X.shape[0])
        return X[rows, cols]
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
