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
