"""Derivative rules, one module per family; importing this package fills ``OPS``."""

from .registry import ALIASES, OPS, RUNTIME_OPS, Op, FAMILIES, op_named
from . import elementwise, linear, explicit, nondiff, decompose, runtime_ops, derivative_ops, derivative_linalg  # noqa: F401  (registration)

__all__ = ["ALIASES", "OPS", "RUNTIME_OPS", "Op", "FAMILIES", "op_named"]
