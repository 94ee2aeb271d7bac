"""Per-example third derivatives through contractions (``s2s.vmap`` of ``s2s.grad`` of a second
derivative: a PINN's ``u_xx`` differentiated in its weights), against a loop of the unbatched ones.

The contraction helpers' ``index`` (which operand) takes no batched flag: a flag for it once shifted
``like``'s, and a zero term took the wrong shape, a silent wrong gradient (corpus P, W1).
"""

import jax
import numpy as np
import pytest

import s2s

jax.config.update("jax_enable_x64", True)

C = np.array([0.5, -1.2])


def dot_layer(W, x):
    return np.sum(np.dot(W, np.tanh(x * C)) ** 2)


def inner_layer(W, x):
    return np.sum(np.inner(W, np.tanh(x * C)) ** 2)


def tensordot_layer(W, x):
    return np.sum(np.tanh(np.tensordot(W, np.tanh(x * C), axes=1)) ** 2)


def two_dot_layers(W, x):
    h = np.tanh(np.dot(W, np.array([x, 1.0])))
    return np.sum(np.tanh(np.dot(W.T, h)))


@pytest.mark.parametrize("backend", ("numpy", "xla"))
@pytest.mark.parametrize(
    "u",
    [dot_layer, inner_layer, tensordot_layer, two_dot_layers],
    ids=lambda f: f.__name__,
)
def test_per_example_third_derivatives_match_a_loop(u, backend):
    rng = np.random.default_rng(0)
    W, xs = rng.normal(size=(2, 2)), rng.uniform(size=4)
    u_xx = s2s.grad(s2s.grad(u, argnums=1), argnums=1)
    third = s2s.grad(u_xx)
    got = s2s.vmap(third, in_axes=(None, 0), backend=backend)(W, xs)
    want = np.stack([s2s.grad(u_xx, backend="numpy")(W, x) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-8)
    # and the loop itself against central differences of u_xx in W
    eps, x = 1e-5, xs[0]
    fd = np.zeros_like(W)
    for i in np.ndindex(W.shape):
        e = np.zeros_like(W)
        e[i] = eps
        fd[i] = (u_xx(W + e, x) - u_xx(W - e, x)) / (2 * eps)
    np.testing.assert_allclose(want[0], fd, rtol=1e-5, atol=1e-7)


def mlp_u(params, x):
    act = jax.numpy.array([x, 1.0])
    for W, b in params:
        act = jax.numpy.tanh(jax.numpy.dot(W, act) + b)
    return jax.numpy.sum(act)


def pinn_slope_loss(params, xs):
    return jax.numpy.sum(
        jax.vmap(jax.grad(mlp_u, argnums=1), in_axes=(None, 0))(params, xs) ** 2
    )


def pinn_curvature_loss(params, xs):
    u_xx = jax.grad(jax.grad(mlp_u, argnums=1), argnums=1)
    return jax.numpy.sum(jax.vmap(u_xx, in_axes=(None, 0))(params, xs) ** 2)


@pytest.mark.parametrize("backend", ("numpy", "xla"))
@pytest.mark.parametrize("loss", [pinn_slope_loss, pinn_curvature_loss])
def test_a_pinn_over_layers_of_different_widths_matches_jax(loss, backend):
    """``s2s.grad`` of a ``jax.vmap`` of ``jax.grad`` through a loop over ``(W, b)`` layers of different
    shapes: the loop's residuals are batched beside its unbatched layers; a rule given that tuple whole
    once read it all batched (``rt.fill_examples``), a shape error in the item cotangents (corpus P).
    """
    rng = np.random.default_rng(0)
    params = [
        (rng.normal(size=(3, 2)), rng.normal(size=3)),
        (rng.normal(size=(2, 3)), rng.normal(size=2)),
    ]
    xs = rng.uniform(size=4)
    got = s2s.grad(loss, backend=backend)(params, xs)
    want = jax.grad(loss)(params, xs)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-12)
