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


def _tree_map(fn, tree):
    return {k: fn(v) for k, v in tree.items()}


def rebinds_the_tree_it_maps(params, x):
    m = {k: v * x[0] for k, v in params.items()}
    m = _tree_map(
        lambda v: 2.0 * v, m
    )  # the result takes the name of the tree the helper reads
    total = np.sum(params["w"])
    for k in m:
        total = total + np.sum(m[k] ** 2)
    return total


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_result_named_like_an_argument_it_reads_is_built_apart(backend):
    """``m = tree_map(lambda v: ..., m)``, the helper read as a local function: its dict was built under
    the name ``m`` while it still read ``m`` (it iterated the new, empty dict: value and gradient were
    wrong with no error)."""
    params, x = {"w": np.array([0.3, -1.2, 0.8])}, np.array([0.5, 2.0, -1.0])
    value, grad = s2s.value_and_grad(rebinds_the_tree_it_maps, backend=backend)(
        params, x
    )
    np.testing.assert_allclose(value, rebinds_the_tree_it_maps(params, x), rtol=1e-6)
    w = params["w"]
    np.testing.assert_allclose(grad["w"], 1 + 8 * x[0] ** 2 * w, rtol=1e-6)


def branches_of_a_helper_inlined_twice(x, codes):
    def activate(z, code):
        if code > 1.5:
            return np.maximum(z, 0)
        elif code > 0.5:
            return np.tanh(z)
        return z

    def network(z):
        for code in codes[:-1]:
            z = activate(z, code)
        return activate(z, codes[-1])

    return np.sum(network(x) ** 2)


def _twin_branches(x, codes):
    funcs = [lambda z: z, jnp.tanh, lambda z: jnp.maximum(z, 0)]
    for code in codes:
        x = funcs[int(code)](x)
    return jnp.sum(x**2)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("codes", [[2.0, 1.0], [1.0, 2.0], [2.0, 0.0]])
def test_a_helpers_branches_keep_their_own_names_when_inlined_into_another_helper(
    backend, codes
):
    """``activate``'s ``elif`` branches (local functions inside a branch function) were renamed apart
    without their ``def``s: their calls read the enclosing ``if_true_3``, the ``relu`` branch, so a last
    ``tanh`` layer was a ``relu``: a wrong gradient with no error."""
    x = np.array([-0.5, 0.3, 1.2])
    got = s2s.grad(branches_of_a_helper_inlined_twice, backend=backend)(
        x, np.array(codes)
    )
    np.testing.assert_allclose(
        np.asarray(got), jax.grad(_twin_branches)(x, codes), rtol=1e-6
    )
