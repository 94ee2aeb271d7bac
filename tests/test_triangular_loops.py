"""Loops whose range an enclosing loop's index bounds (``passes/bounded_ranges.py``, ``runtime/bounded.py``).

``for j in range(i + 1, n)`` in ``for i in range(n)``: compiled, the inner
loop runs over the span of all its values and skips the steps outside its
own range. Gradients on both backends match float64 central differences;
``vmap``, ``vmap(grad)``, ``jvp`` and Hessians agree with loops and
differences; what such a loop cannot do (collect per-step values) is a
located error.
"""

import jax
import numpy as np
import pytest

import s2s
from tests.programs import triangular as P
from tests.test_numpy_style import (
    check_batched,
    check_forward_and_hessian,
    check_program,
)

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("name", P.PROGRAMS)
def test_gradient_matches_finite_differences(name):
    check_program(P, name)


@pytest.mark.parametrize(
    "name", ["pair_energy", "cholesky_logdet", "shrinking_windows"]
)
def test_vmap_and_vmap_of_grad_match_a_loop(name):
    f = getattr(P, name)
    first, *rest = getattr(P, f"inputs_{name}")()
    if name == "cholesky_logdet":  # symmetric positive definite examples
        firsts = np.stack([first, first + np.eye(len(first)), 2.0 * first])
    else:
        firsts = np.stack([first, 0.5 * first, -first])
    check_batched(f, firsts, rest)


def test_jvp_and_hessian_match_differences():
    A, y = P.inputs_cholesky_logdet()
    t = np.random.default_rng(7).normal(size=A.shape)
    check_forward_and_hessian(P.cholesky_logdet, A, (y,), t + t.T)


def test_the_span_is_written_in_the_generated_code():
    text = s2s.generate(P.pair_energy, ("grad",)).text
    assert "rt.range(i + 1, n, within=(1, n), indexes=(charges, pos))" in text


def collects_rows(x):
    n = x.shape[0]
    total = 0.0
    for i in range(n):
        row = []
        for j in range(i):
            row.append(x[j] * x[i])
        total = total + sum(row)
    return total


def test_a_bounded_loop_that_collects_values_is_a_located_error():
    x = np.arange(1.0, 5.0)
    with pytest.raises(s2s.S2SError, match="cannot collect per-step outputs") as info:
        s2s.grad(collects_rows)(x)
    assert info.value.origin.path == __file__
    assert "preallocated" in info.value.hint
    # eagerly, the list is a Python list: d/dx_k of sum_{j<i} x_j x_i is sum_{i>k} x_i + sum_{j<k} x_j
    want = [x[k + 1 :].sum() + x[:k].sum() for k in range(len(x))]
    np.testing.assert_allclose(s2s.grad(collects_rows, backend="numpy")(x), want)
