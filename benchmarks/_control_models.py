"""Loops for ``bench_control.py``: each model as plain NumPy with a Python ``for`` (what s2s reads) and as
the ``jax.lax.scan`` version a JAX user would write by hand (the baseline), computing the same loss.
"""

import jax
import jax.numpy as jnp
import numpy as np


def rnn_loss(W, U, b, h0, xs, ys):
    """Tanh RNN over time, mean squared error of the hidden state against a target at every step."""
    h = h0
    loss = 0.0
    for x, y in zip(xs, ys):
        h = np.tanh(h @ W + x @ U + b)
        loss = loss + np.mean((h - y) ** 2)
    return loss / xs.shape[0]


def rnn_loss_lax(W, U, b, h0, xs, ys):
    def step(carry, xy):
        h, loss = carry
        x, y = xy
        h = jnp.tanh(h @ W + x @ U + b)
        return (h, loss + jnp.mean((h - y) ** 2)), None

    (_, loss), _ = jax.lax.scan(step, (h0, jnp.zeros((), h0.dtype)), (xs, ys))
    return loss / xs.shape[0]


def ode_loss(A, c, k, y0, target, dt, steps):
    """Explicit Euler on dy/dt = tanh(y @ A + c) - k * y (many small coupled systems), error of the end state."""
    y = y0
    for i in range(steps):
        y = y + dt * (np.tanh(y @ A + c) - k * y)
    return np.mean((y - target) ** 2)


def ode_loss_lax(A, c, k, y0, target, dt, steps):
    def step(y, _):
        return y + dt * (jnp.tanh(y @ A + c) - k * y), None

    y, _ = jax.lax.scan(step, y0, None, length=steps)
    return jnp.mean((y - target) ** 2)


def ode_while_loss(A, c, k, y0, target, dt, t_end):
    """The same Euler integrator, run until the time ``t_end`` (a traced value): a data-dependent ``while``."""
    y = y0
    t = 0.0
    while t < t_end:
        y = y + dt * (np.tanh(y @ A + c) - k * y)
        t = t + dt
    return np.mean((y - target) ** 2)
