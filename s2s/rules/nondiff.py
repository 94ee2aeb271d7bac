"""Ops whose outputs carry no derivative."""

from .registry import nondiff

nondiff("comparison", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
nondiff("constructor: its value does not depend on differentiable inputs", "zeros", "ones", "zeros_like", "ones_like")
