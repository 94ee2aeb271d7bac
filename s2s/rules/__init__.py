"""Derivative rules, one module per family; importing this package fills ``OPS``."""

from . import (  # noqa: F401  (each module registers its family's rules)
    at_updates,
    batch_ops,
    batching,
    collectives,
    decompose,
    derivative_linalg,
    derivative_ops,
    distance,
    elementwise,
    explicit,
    foreign,
    grids,
    joins,
    lax_indexing,
    linalg_api,
    linear,
    nn,
    nondiff,
    random_draws,
    reshaping,
    runtime_ops,
    segments,
    special,
    spectral,
    statistics,
    stats,
)
from .registry import ALIASES, FAMILIES, OPS, RUNTIME_OPS, Op, op_named

__all__ = ["ALIASES", "FAMILIES", "OPS", "RUNTIME_OPS", "Op", "op_named"]
