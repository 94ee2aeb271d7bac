"""Factories of the program called in the function: their closures close over its values (issue 13).

The optax and stax way of writing optimizers and layers: a function that defines functions and returns
them, called where the derivative reaches its arguments. Each is also plain jax.numpy-compatible code,
so ``jax.grad`` of the same function is the oracle.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.tree_util import tree_map


def make_head(W_out):
    """A closure over one parameter."""

    def head(h):
        return h @ W_out

    return head


def head_loss(W, W_out, X):
    head = make_head(W_out)
    return jnp.mean(head(jnp.tanh(X @ W)) ** 2)


class MomentumState(NamedTuple):
    velocity: dict


def momentum(learning_rate, beta=0.9):
    """optax's shape: ``init`` and ``update`` closing over the learning rate."""

    def init(params):
        return MomentumState(velocity=tree_map(jnp.zeros_like, params))

    def update(grads, state, params=None):
        v = tree_map(lambda m, g: beta * m + g, state.velocity, grads)
        updates = tree_map(lambda m: -learning_rate * m, v)
        return updates, MomentumState(velocity=v)

    return init, update


def fit_loss(params, x, y):
    pred = jnp.tanh(x @ params["w"] + params["b"])
    return jnp.mean((pred - y) ** 2)


def fit_grads(params, x, y):
    """The inner gradient, written out (a helper the meta-loss calls)."""
    pred = jnp.tanh(x @ params["w"] + params["b"])
    d = 2.0 * (pred - y) * (1.0 - pred**2) / pred.size
    return {"w": x.T @ d, "b": jnp.sum(d, axis=0)}


def meta_loss(lr, params, x, y):
    """The loss after a few momentum steps, as a function of the learning rate."""
    init, update = momentum(lr)
    state = init(params)
    for _ in range(3):
        updates, state = update(fit_grads(params, x, y), state, params)
        params = tree_map(lambda p, u: p + u, params, updates)
    return fit_loss(params, x, y)


def make_leaky(alpha, scale=1.0):
    """Statements before the return, a lambda returned, a literal default."""
    slope = alpha * scale
    return lambda z: jnp.where(z > 0, z, slope * z)


def two_made(w, x):
    """One factory called twice: each call's names kept apart."""
    small = make_leaky(0.1 * w[0])
    big = make_leaky(w[1], scale=2.0)
    return jnp.sum(small(x * w[2]) + big(x - w[2]))


def made_in_a_loop(w, x):
    """A factory called in a loop, each step closing over that step's value."""
    total = 0.0
    for k in range(3):
        act = make_leaky(w[k])
        total = total + jnp.sum(act(x * (k + 1.0)))
    return total


def make_affine(scale, shift):
    """Two closures, one calling the other; the pair returned the other way round."""

    def forward(z):
        return scale * z + shift

    def twice(z):
        return forward(forward(z))

    return twice, forward


def swapped_pair(w, x):
    g, f = make_affine(w[0], w[1])
    return jnp.sum(jnp.tanh(g(x)) + f(x) ** 2)


class GradientTransformation(NamedTuple):
    """optax's record of an optimizer's two functions."""

    init: object
    update: object


def exponential_decay(init_value, rate, steps):
    """A schedule: a function of the step count (optax's shape)."""

    def schedule(count):
        return init_value * rate ** (count / steps)

    return schedule


def sgd_with_trace(learning_rate, momentum=0.9):
    """A record of closures; the learning rate a number or a schedule (``callable``)."""

    def init(params):
        return (jnp.zeros_like(params), 0)

    def update(grads, state):
        trace, count = state
        lr = learning_rate(count) if callable(learning_rate) else learning_rate
        trace = grads + momentum * trace
        return -lr * trace, (trace, count + 1)

    return GradientTransformation(init, update)


def record_meta_loss(log_lr, w):
    """``opt = sgd(schedule)``, read only by its fields (``opt.init``, ``opt.update``)."""
    opt = sgd_with_trace(exponential_decay(jnp.exp(log_lr), 0.5, 4), momentum=0.8)
    state = opt.init(w)
    for _ in range(3):
        step, state = opt.update(2.0 * w + jnp.sin(w), state)
        w = w + step
    fixed = sgd_with_trace(0.05)
    step, _ = fixed.update(w, fixed.init(w))
    return jnp.sum((w + step) ** 2)


def record_unpacked(log_lr, w):
    """``init, update = sgd(lr)`` of ``return GradientTransformation(init, update)``: the record
    unpacked into its two functions."""
    init, update = sgd_with_trace(jnp.exp(log_lr), momentum=0.5)
    state = init(w)
    for _ in range(2):
        step, state = update(jnp.cos(w), state)
        w = w + step
    return jnp.sum(w**2)


def rnn_cell(W):
    def step(h, x):
        h = jnp.tanh(W @ h + x)
        return h, h

    return step


def relaxation(k, anchor):
    def body(i, state):
        return state + 0.1 * (k * (anchor - state) - state**3)

    return body


def scanned_with_a_made_step(W, xs):
    """The step a factory makes, passed straight to ``lax.scan``/``lax.fori_loop`` (a JAX idiom)."""
    _, hs = jax.lax.scan(rnn_cell(W), jnp.zeros(2), xs)
    settled = jax.lax.fori_loop(0, 3, relaxation(jnp.sum(W), hs[-1]), hs[0])
    return jnp.sum(hs**2) + jnp.sum(settled)


def make_heads(p):
    """Heads closing over the parameters, returned as a list (a local ``def`` and a lambda)."""

    def relu_head(h):
        return jnp.dot(jax.nn.relu(h), p["v"][0])

    def softplus_head(h):
        return jnp.dot(jax.nn.softplus(h), p["v"][1])

    return [relu_head, softplus_head, lambda h: jnp.dot(jnp.sin(h), p["v"][2])]


def switched_heads(p, x, group):
    """j10: a list of functions a factory makes, read as ``lax.switch``'s branches (straight from the
    call and through a name), by a literal index, unpacked, and in a loop and a generator.
    """
    h = p["W"] @ x
    heads = make_heads(p)
    first, second, third = make_heads(p)
    total = jax.lax.switch(group, make_heads(p), h) + jax.lax.switch(
        group, heads, 0.5 * h
    )
    total = total + heads[1](h) + third(h) - first(h) * second(h)
    for head in make_heads(p):
        total = total + 0.1 * head(h)
    return total + sum(head(h**2) for head in heads)
