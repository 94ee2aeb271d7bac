"""Inlining local functions: a callee's names never overwrite its caller's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import s2s


def reassigns_its_parameter(x):
    def g(a):
        a = a * 2
        return a + 1

    return np.sum(g(x) * x)


def reassigns_through_a_lambda(x):
    scale = lambda a: a * 3  # a lambda held in a variable, as users write it
    y = scale(x)
    return np.sum(y * x)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_local_function_that_reassigns_its_parameter_leaves_the_callers_value(
    backend,
):
    """``g(x)`` rebinding its own ``a`` once overwrote the caller's ``x``: the gradient was [2, 10, 18]."""
    x = np.array([0.0, 1.0, 2.0])
    got = s2s.grad(reassigns_its_parameter, backend=backend)(x)
    np.testing.assert_allclose(np.asarray(got), 4 * x + 1)  # d/dx sum((2x + 1) x)
    got = s2s.grad(reassigns_through_a_lambda, backend=backend)(x)
    np.testing.assert_allclose(np.asarray(got), 6 * x)


def histogram_of_a_local_helper(w, x):
    def counts(z, bounds=None, exact=False):
        # literal arguments reach the calls inside: ``jnp.histogram``'s own ``if range is None`` and
        # ``jax.nn.gelu``'s ``approximate`` are decided per call
        weights = jax.nn.gelu(z, approximate=exact)
        return jnp.histogram(z, bins=3, range=bounds, weights=weights)[0]

    return jnp.sum(counts(x * w) ** 2) + jnp.sum(counts(x * w, (-1.0, 1.0), True) ** 2)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_literal_arguments_of_a_local_function_decide_the_decompositions_it_calls(
    backend,
):
    w, x = np.array(0.7), np.linspace(-1.0, 1.0, 5)
    got = s2s.value_and_grad(histogram_of_a_local_helper, backend=backend)(w, x)
    want = jax.value_and_grad(histogram_of_a_local_helper)(w, x)
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), want[1], rtol=1e-6)
