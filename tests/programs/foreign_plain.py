"""What s2s does not call through JAX: a library that is not JAX code, and your own code through a parameter."""

import jax.numpy as jnp
import scipy.optimize


def rosen_loss(w):
    return scipy.optimize.rosen(w) + jnp.sum(w)


def call_param(f, x):
    return jnp.sum(f(x))


def own(x):
    return x * 2.0
