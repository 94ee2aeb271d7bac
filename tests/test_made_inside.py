"""``jax.vmap``/``jax.grad``/``jax.value_and_grad`` and s2s's own made inside a transformed function:
the outer transform sees through them (their generated code is a helper), against JAX.
"""

import re

import jax
import numpy as np
import pytest
from jax_checks import oracle

import s2s
from s2s.errors import UnsupportedSyntax
from tests.programs import made_inside as P

RNG = np.random.default_rng(3)
CASES = [
    (P.mean_loss, P.twin_mean_loss),
    (P.mean_loss_lambda, P.twin_mean_loss),
    (P.lambda_penalty, P.twin_lambda_penalty),
    (P.mean_loss_s2s, P.twin_mean_loss),
    (P.gradient_penalty, P.twin_gradient_penalty),
    (P.value_and_grad_inside, P.twin_value_and_grad_inside),
    (P.products_per_example, P.products_per_example),
    (P.library_functions_mapped, P.library_functions_mapped),
    (P.einsum_mean_loss, P.einsum_mean_loss),
    (P.vmap_named_with_a_dict_prefix, P.vmap_named_with_a_dict_prefix),
    (P.hvp_penalty, P.hvp_penalty),
    # local functions and lambdas, lifted with the variables they read
    (P.local_function, P.local_function),
    (P.lambda_doing_more, P.twin_lambda_doing_more),
    (P.least_squares_step, P.least_squares_step),
    (P.inner_sgd, P.inner_sgd),
    (P.aliased_local_gradient, P.aliased_local_gradient),
    (P.local_slope, P.local_slope),
    # local functions reading other local functions, and transformations composed of them
    (P.local_reading_local, P.local_reading_local),
    (P.pinn_residual, P.pinn_residual),
    (P.laplacian_of_a_local_gradient, P.laplacian_of_a_local_gradient),
    # local functions transformed in helpers they are passed to, or in functions they enclose
    (P.gram_of_a_passed_lambda, P.gram_of_a_passed_lambda),
    (P.gram_of_a_passed_def, P.gram_of_a_passed_def),
    (P.map_of_an_enclosing_function, P.map_of_an_enclosing_function),
    # ``jax.jacfwd``/``jax.jacrev``/``jax.hessian`` inside, as the transformations they are made of
    (P.jacobians_inside, P.jacobians_inside),
    (P.newton_steps, P.newton_steps),
    (P.laplacian_residual, P.laplacian_residual),
    (P.jacfwd_of_a_gradient, P.jacfwd_of_a_gradient),
    (P.per_example_picks, P.per_example_picks),
    (P.pinn_jacfwd_of_a_gradient, P.pinn_jacfwd_of_a_gradient),
    (P.pinn_derivatives_held_in_names, P.pinn_derivatives_held_in_names),
    (P.per_example_huber, P.per_example_huber),
    (P.vectorized_soft_threshold, P.vectorized_soft_threshold),
    (P.checkpointed_lambda_blocks, P.checkpointed_lambda_blocks),
    # ``jax.grad``/``jax.value_and_grad`` objects made at module level
    (P.module_level_gradients, P.module_level_gradients),
    (P.module_level_second_derivative, P.module_level_second_derivative),
    (P.hvp_of_a_module_level_gradient, P.hvp_of_a_module_level_gradient),
    (P.hvp_of_tuples_in_names, P.hvp_of_tuples_in_names),
    (P.hvp_of_a_function_with_a_default, P.hvp_of_a_function_with_a_default),
    # transformations applied by decorators on local functions, or through ``functools.partial``
    (P.decorated_local_map, P.decorated_local_map),
    (P.partial_of_vmap_applied, P.twin_mean_loss),
    (P.decorated_local_gradient, P.decorated_local_gradient),
    # ``jax.vjp``/``jax.linearize`` inside, as the ``jax.grad``/``jax.jvp`` they stand for
    (P.pullback_inside, P.pullback_inside),
    (P.linearized_inside, P.linearized_inside),
]


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("fn, twin", CASES, ids=[c[0].__name__ for c in CASES])
def test_transformations_made_inside_match_jax(fn, twin, backend):
    rng = np.random.default_rng(3)  # the same values for each case, in any order
    w, xs = rng.normal(size=(5, 2)), rng.normal(size=(4, 5))
    if backend == "xla":
        w, xs = np.float32(w), np.float32(xs)
    tol = {"rtol": 1e-9} if backend == "numpy" else {"rtol": 1e-4, "atol": 1e-5}
    with jax.enable_x64(backend == "numpy"):
        # (the value and the gradient as one compiled program: JAX run op by op compiles each op)
        want_value, want_grad = oracle(jax.value_and_grad, twin)(w, xs)
    np.testing.assert_allclose(
        s2s.transform(fn, backend=backend)(w, xs), want_value, **tol
    )
    np.testing.assert_allclose(s2s.grad(fn, backend=backend)(w, xs), want_grad, **tol)


def test_the_made_function_is_a_readable_helper():
    text = s2s.grad(P.gradient_penalty).source
    assert "def example_loss_grad_batched(x, w):" in text
    code = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert not any("jax" in line for line in code)
    assert "grads = example_loss_grad_batched(xs, w)" in text


def test_a_lifted_local_function_reads_the_enclosing_variables_as_parameters():
    text = s2s.grad(P.inner_sgd).source
    assert "def inner_loss_value_and_grad(xs, v, scale):" in text
    assert re.search(r"inner_loss_value_and_grad\(xs, w\w*, 2\.0\)", text)


@pytest.mark.parametrize(
    "fn, message",
    [
        (P.local_with_default, r"local function `f` with defaults"),
        (
            P.enclosing_variable_rebound,
            r"`score` here, which reads `w` where it is defined",
        ),
    ],
)
def test_local_functions_s2s_does_not_lift_are_located_errors(fn, message):
    with pytest.raises(UnsupportedSyntax, match=message) as info:
        s2s.grad(fn)(np.ones((5, 2)), np.ones((4, 5)))
    assert "made_inside.py" in str(info.value)
    assert "module level" in str(info.value) or "another name" in str(info.value)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_vmap_of_jvp_made_inside_matches_jax(backend):
    """``jax.jvp`` (or ``s2s.jvp``) inside: the forward-mode module, batched again by ``s2s.vmap``."""
    x, t, w = RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5)), RNG.normal(size=(5, 2))
    if backend == "xla":
        x, t, w = np.float32(x), np.float32(t), np.float32(w)
    tol = {"rtol": 1e-9} if backend == "numpy" else {"rtol": 1e-4, "atol": 1e-5}
    got = s2s.vmap(P.directional_slope, in_axes=(0, 0, None), backend=backend)(x, t, w)
    with jax.enable_x64(backend == "numpy"):
        want = oracle(jax.vmap, P.twin_directional_slope, in_axes=(0, 0, None))(x, t, w)
    np.testing.assert_allclose(got, want, **tol)
    assert "example_loss_jvp" in s2s.transform(P.directional_slope).source


def test_options_that_do_not_fit_the_lambda_are_located_errors():
    with pytest.raises(
        s2s.S2SError, match="names 2 axes for a lambda of 1 parameters"
    ) as info:
        s2s.grad(P.lambda_with_wrong_in_axes)(np.ones((5, 2)), np.ones((4, 5)))
    assert "made_inside.py" in str(info.value)


def _grads_mapped(fn, in_axes):
    return jax.vmap(jax.grad(fn), in_axes=in_axes)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_maml_second_derivatives_through_vmap_match_jax(backend):
    p = {"w": np.asarray(0.5), "b": np.asarray(0.1)}
    xs, ys = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    with jax.enable_x64(True):
        want = oracle(jax.grad, P.maml_batch_loss)(p, xs, ys)
        want_each = oracle(_grads_mapped, P.maml_task_loss, (None, 0, 0))(p, xs, ys)
        got = s2s.grad(P.maml_batch_loss, backend=backend)(p, xs, ys)
        got_each = s2s.vmap(
            s2s.grad(P.maml_task_loss, backend=backend),
            in_axes=(None, 0, 0),
            backend=backend,
        )(p, xs, ys)
    for g, w in ((got, want), (got_each, want_each)):
        for k in ("w", "b"):
            np.testing.assert_allclose(
                np.asarray(g[k]), np.asarray(w[k]), rtol=1e-6, atol=1e-9
            )


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
def test_mapping_a_function_that_maps_inside_again_maps_over_both_axes(
    backend, in_axes
):
    """``s2s.vmap`` of a function calling ``jax.vmap(f)(xs)``: ``f`` over both axes at once
    (``nested_batches``), a local function reading the enclosing one's ``w`` included.
    """
    ws = RNG.normal(size=(3, 5, 2))
    xs = RNG.normal(size=(3, 4, 5))
    args = (ws if in_axes[0] == 0 else ws[0], xs if in_axes[1] == 0 else xs[0])
    with jax.enable_x64(True):
        want = oracle(jax.vmap, P.local_function, in_axes=in_axes)(*args)
        got = s2s.vmap(P.local_function, in_axes=in_axes, backend=backend)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_gradients_of_a_vmap_made_inside_are_the_vmap_of_its_functions_gradients(
    backend,
):
    """DP-SGD's per-example gradients (``jax.vmap(jax.grad(f))`` of an ``np.dot``) differentiated again:
    the vjp (and jvp) of the inner map is its function's, mapped (``helper_versions.vjp_of_mapped_module``), so
    batched code is never differentiated (was: no second derivative of ``np.dot`` inside ``jax.vmap``).
    """
    w, xs = np.full(5, 0.3), np.linspace(-1.0, 1.0, 20).reshape(4, 5)
    with jax.enable_x64(True):
        want = oracle(jax.grad, P.clipped_step_loss)(w, xs)
        got = s2s.grad(P.clipped_step_loss, backend=backend)(w, xs)
        np.testing.assert_allclose(got, want, rtol=1e-9)
        t = np.linspace(0.1, 0.9, 5)
        _, tangent = s2s.jvp(P.clipped_step_loss, (w, xs), (t, np.zeros_like(xs)))
        np.testing.assert_allclose(tangent, want @ t, rtol=1e-9)


def test_a_refusal_inside_batched_gradient_code_points_at_the_users_line():
    """Third derivatives of ``np.dot`` inside ``jax.vmap`` are not there yet: the refusal, raised while
    s2s reads the batched gradient module again, cites the user's line that module came from.
    """
    with pytest.raises(s2s.S2SError, match=r"third derivatives of `np\.dot`") as info:
        s2s.hessian(P.clipped_step_loss)(np.ones(5), np.ones((4, 5)))
    first, line = str(info.value).splitlines()[:2]
    assert first.startswith(P.__file__) and "jnp.dot(jnp.tanh(x), w)" in line


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_gradient_through_a_map_of_a_function_that_maps_inside(backend):
    """``jax.grad`` of ``jax.vmap`` of a function calling ``jax.vmap``: the merged module
    (``nested_batches``) differentiated, its merging helpers' rules included."""

    W = RNG.normal(size=(3, 5, 2))
    xs = RNG.normal(size=(4, 5))
    with jax.enable_x64(True):
        want = oracle(jax.grad, P.maps_a_map)(W, xs)
        got = s2s.grad(P.maps_a_map, backend=backend)(W, xs)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_jacobians_inside_with_options_s2s_does_not_read_are_located_errors():
    with pytest.raises(UnsupportedSyntax, match="one int `argnums`") as info:
        s2s.grad(P.hessian_of_two_arguments)(np.ones((5, 2)), np.ones((4, 5)))
    assert "made_inside.py" in str(info.value)
