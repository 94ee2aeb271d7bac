"""Ops whose reverse rule is written out: contractions, order statistics, linear algebra."""

import numpy as xp  # noqa: F401  (rule vocabulary)

from s2s import runtime as rt
from .registry import vjp


@vjp
def matmul(x1, x2, *, g):
    return rt.matmul_vjp_lhs(g, x1, x2), rt.matmul_vjp_rhs(g, x1, x2)
