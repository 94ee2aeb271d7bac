"""What s2s does not call through JAX: a library that is not JAX code, and your own code through a parameter."""

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
import scipy.optimize


def rosen_loss(w):
    return scipy.optimize.rosen(w) + jnp.sum(w)


def call_param(f, x):
    return jnp.sum(f(x))


def own(x):
    return x * 2.0


def matrix_exponential(theta, t):
    """``scipy.linalg.expm`` (and JAX's own ``jax.scipy.linalg.expm``, ``jax.scipy.special.hyp1f1``): JAX's
    functions s2s has no op for, called through JAX."""
    Q = np.array([[-1.0, 1.0], [0.5, -0.5]]) * theta[0] + np.eye(2) * theta[1]
    P = scipy.linalg.expm(Q * t)
    R = jax.scipy.linalg.expm(Q * 0.5)
    return np.sum(P * R) + np.sum(jax.scipy.special.hyp1f1(1.0, 2.0, theta))
