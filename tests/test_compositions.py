"""Issue 12: JAX-style programs with ``jnp.select``, ``jnp.block``, grids between parameters, functions
passed to helpers, index-expression builders, histograms, polynomial fits and attention (``tests/programs/compositions.py``): every transform against JAX's, on both backends.
"""

import itertools

import jax
import numpy as np
import pytest
from jax_checks import (
    check_jvp,
    check_second_order,
    check_value_and_grad,
    check_vmap,
)

import s2s
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
    "features_by_index_tricks": (P.features_by_index_tricks, lambda: (RNG.normal(size=3), RNG.normal(size=5))),
    "weighted_histograms": (P.weighted_histograms, lambda: (np.array([1.1, 0.3, 0.7]), RNG.normal(size=9))),
    "histograms_in_several_dimensions": (
        P.histograms_in_several_dimensions, lambda: (np.array([1.1, 0.3, 0.7]), RNG.normal(size=9))),
    "polynomials_from_roots": (
        P.polynomials_from_roots, lambda: (np.array([1.1, 0.6, 0.3, 0.8]), RNG.normal(size=4))),
    "polynomial_fit": (P.polynomial_fit, lambda: (np.array([1.1, 0.3, 0.7]), RNG.normal(size=7))),
    "kernel_with_jitter": (P.kernel_with_jitter, lambda: (np.array([0.2, -0.3]), np.linspace(0.0, 2.0, 4))),
}  # fmt: skip


@pytest.mark.parametrize("name", CASES)
def test_gradient_and_forward_mode_match_jax(name):
    f, make = CASES[name]
    args = make()
    check_value_and_grad(f, args, argnums=0)
    check_jvp(f, args, RNG)


@pytest.mark.parametrize(
    "name",
    [
        "piecewise_loss",
        "block_system",
        "field_on_grid",
        "kernel_with_jitter",
        "polynomials_from_roots",
    ],
)
def test_hessian_matches_jax(name):
    f, make = CASES[name]
    check_second_order(f, make(), argnums=0)


# batched by the op table's cases of their functions (``tests/op_table_composed.py``), as their programs'
# other transforms are here
BATCHED_IN_THE_OP_TABLE = {
    "weighted_histograms",
    "histograms_in_several_dimensions",
    "polynomial_fit",
}


@pytest.mark.parametrize("name", [n for n in CASES if n not in BATCHED_IN_THE_OP_TABLE])
def test_vmap_of_grad_matches_jax(name):
    f, make = CASES[name]
    first, rest = make()
    if isinstance(rest, float):
        batched, axes = np.array([rest, 1.5 * rest]), (None, 0)
    else:
        batched, axes = np.stack([rest, 0.5 * rest]), (None, 0)
    check_vmap(f, (first, batched), axes, grad=0)


def _attention():
    rng = np.random.default_rng(
        5
    )  # its own: the float32 softmax's rounding is checked at these values
    params = {name: rng.normal(size=shape) for name, shape in
              {"wq": (3, 8), "wk": (3, 4), "wv": (3, 4), "wo": (8, 2)}.items()}  # fmt: skip
    return params, rng.normal(size=(2, 5, 3))


def test_attention_matches_jax_in_every_mode():
    """``jax.nn.dot_product_attention`` (causal, masked, grouped heads) as JAX's XLA formulation. JAX takes
    the softmax in float32 also in float64 mode: the results agree to float32's rounding.
    """
    params, x = _attention()
    f = P.attention_block
    check_value_and_grad(f, (params, x), argnums=0, rtol=1e-4, atol=1e-5)
    check_jvp(f, (params, x), RNG, rtol=1e-4, atol=1e-5)
    check_vmap(
        f, (params, np.stack([x, 0.5 * x])), (None, 0), grad=0, rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_positional_arguments_bind_by_the_called_librarys_own_order(backend):
    """``jnp.histogram(x, 3, None, w)`` passes weights, ``np.histogram(x, 3, None, False, w)`` too: each call
    is read by its own library's signature (one op serves both), never weights taken for density.
    """
    w, x = np.array(0.4), np.linspace(-1.0, 1.0, 7)
    got = s2s.grad(P.jax_positional_order, backend=backend)(w, x)
    np.testing.assert_allclose(got, jax.grad(P.jax_positional_order)(w, x), rtol=1e-12)
    f = P.numpy_positional_order
    want = (f(w + 1e-6, x) - f(w - 1e-6, x)) / 2e-6
    np.testing.assert_allclose(s2s.grad(f, backend=backend)(w, x), want, rtol=1e-6)


def test_positions_of_a_peak_under_every_transform():
    x = np.random.default_rng(6).normal(size=(3, 4))
    f = P.value_at_the_peak
    check_value_and_grad(f, (x,))
    check_jvp(f, (x,), RNG)
    check_vmap(f, (np.stack([x, -x]),), (0,), grad=0)


def test_maml_over_tasks_matches_jax():
    """The outer gradient of a loss mapped over tasks that takes an inner gradient through a loop over a
    list of layers (square ones too: a swapped axis would not show in the shapes)."""
    sizes = [1, 3, 3, 1]
    params = [
        (RNG.normal(size=(m, n)), 0.1 * RNG.normal(size=n))
        for m, n in itertools.pairwise(sizes)
    ]
    xs, ys = RNG.normal(size=(2, 4, 1)), RNG.normal(size=(2, 4, 1))
    check_value_and_grad(P.maml_over_tasks, (params, xs, ys), argnums=0)
    check_jvp(P.maml_over_tasks, (params, xs, ys), RNG)


def test_writes_of_shared_values_over_examples_match_jax():
    w, xs = np.array([0.3, -0.2]), RNG.normal(size=(3, 3, 2))
    check_value_and_grad(P.writes_of_shared_values_over_examples, (w, xs), argnums=0)
