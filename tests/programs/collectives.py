import jax.numpy as jnp
from jax import lax

import s2s


def normalize(x):
    return x / s2s.psum(x, "batch")


def center(x):
    return x - lax.pmean(x, axis_name="batch")


def extremes(x):
    return s2s.pmax(x, "batch") - lax.pmin(x, "batch")


def position(x):
    # how many examples there are, and which one this is
    return lax.psum(1, "batch"), lax.axis_index("batch") * x


def batch_norm(x, gamma):
    mean = lax.pmean(x, "batch")
    var = lax.pmean((x - mean) ** 2, "batch")
    return gamma * (x - mean) / jnp.sqrt(var + 1e-5)


def tree_sum(params):
    # a dict of arrays: every leaf summed over the examples
    return s2s.psum({"w": params["w"] * 2.0, "b": (params["b"],)}, "batch")


def total_loss(w, x, y):
    # each example's squared error, summed over the whole batch
    err = jnp.tanh(x @ w) - y
    return lax.psum(jnp.sum(err**2), "batch")


def mean_loss(w, x, y):
    err = x @ w - y
    return s2s.pmean(jnp.sum(err**2), "batch")


def max_loss(w, x):
    return lax.pmax(jnp.sum(x * w), "batch")


def shared_scale(x):
    # a collective of a value the same for every example
    return lax.psum(jnp.ones(2), "batch") * x
