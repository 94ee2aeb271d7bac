import jax.numpy as jnp
from jax import lax


def f(x, w):
    def step(h, v):
        h = jnp.tanh(w * h + v)
        return h, h * h

    h, hs = lax.scan(step, jnp.zeros_like(w), x)
    total = lax.fori_loop(0, 3, lambda i, t: t * 0.5 + jnp.sum(h) * i, 0.0)
    y = lax.cond(total > 0, lambda a: jnp.sum(a), lambda a: jnp.sum(a**2), hs)
    return y + total


def example(rng):
    return rng.normal(size=(4, 3)) * 0.5, rng.normal(size=3)
