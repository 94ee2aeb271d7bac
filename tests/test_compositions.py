"""Issue 12: JAX-style programs with ``jnp.select``, ``jnp.block``, grids between parameters and functions
passed to helpers (``tests/programs/compositions.py``): every transform against JAX's, on both backends.
"""

import itertools

import numpy as np
import pytest
from jax_checks import (
    check_jvp,
    check_second_order,
    check_value_and_grad,
    check_vmap,
)

from tests.programs import compositions as P

RNG = np.random.default_rng(12)


def _mlp():
    sizes = [3, 4, 4, 2]
    return [
        (RNG.normal(size=(m, n)) / np.sqrt(m), 0.1 * RNG.normal(size=n))
        for m, n in itertools.pairwise(sizes)
    ]


CASES = {
    "piecewise_loss": (P.piecewise_loss, lambda: (RNG.normal(size=(3, 2)), 2.0 * RNG.normal(size=(6, 3)))),
    "block_system": (P.block_system, lambda: (RNG.normal(size=(3, 3)), RNG.normal(size=3))),
    "field_on_grid": (P.field_on_grid, lambda: (np.array([1.3, 0.7]), 2.0)),
    "mlp_activations": (P.mlp_activations, lambda: (_mlp(), RNG.normal(size=(5, 3)))),
}  # fmt: skip


@pytest.mark.parametrize("name", CASES)
def test_gradient_and_forward_mode_match_jax(name):
    f, make = CASES[name]
    args = make()
    check_value_and_grad(f, args, argnums=0)
    check_jvp(f, args, RNG)


@pytest.mark.parametrize("name", ["piecewise_loss", "block_system", "field_on_grid"])
def test_hessian_matches_jax(name):
    f, make = CASES[name]
    check_second_order(f, make(), argnums=0)


@pytest.mark.parametrize("name", CASES)
def test_vmap_of_grad_matches_jax(name):
    f, make = CASES[name]
    first, rest = make()
    if isinstance(rest, float):
        batched, axes = np.array([rest, 1.5 * rest]), (None, 0)
    else:
        batched, axes = np.stack([rest, 0.5 * rest]), (None, 0)
    check_vmap(f, (first, batched), axes, grad=0)
