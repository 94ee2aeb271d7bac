"""Derivative rules, one module per family; importing this package fills ``OPS``."""

from .registry import ALIASES, OPS, Op, FAMILIES
from . import elementwise, linear, explicit, nondiff, decompose  # noqa: F401  (registration)

__all__ = ["ALIASES", "OPS", "Op", "FAMILIES"]
