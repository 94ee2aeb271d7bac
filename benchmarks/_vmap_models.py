"""Per-example functions for ``bench_vmap.py``, written as NumPy users write them."""

import numpy as np

import s2s


def mlp_loss(params, x, y):
    """One example's squared error through a 3-layer tanh MLP."""
    (w1, b1), (w2, b2), (w3, b3) = params
    h = np.tanh(x @ w1 + b1)
    h = np.tanh(h @ w2 + b2)
    out = h @ w3 + b3
    return np.mean((out - y) ** 2)


def attention(x, wq, wk, wv):
    """Single-head self-attention over one sequence ``x`` (length, width)."""
    q, k, v = x @ wq, x @ wk, x @ wv
    scores = q @ k.T / np.sqrt(x.shape[-1])
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    return weights @ v


def newton_sqrt(a):
    """Newton's iteration for sqrt(a), to a relative tolerance: each example takes its own steps."""
    x = a
    while np.abs(x * x - a) > 1e-5 * a:
        x = 0.5 * (x + a / x)
    return x


def robust_example_loss(x, w, y):
    """One example's loss: squared error, linear beyond a radius (a data-dependent Python ``if``)."""
    err = np.tanh(x @ w) - y
    sq = np.sum(err * err)
    if sq > 1.0:
        loss = np.sqrt(sq)
    else:
        loss = 0.5 * sq + 0.5
    return loss


batched_robust_loss = s2s.vmap(robust_example_loss, in_axes=(0, None, 0))


def robust_loss(w, x, y):
    """The batch's mean loss through the batched per-example function (``s2s.grad`` of ``s2s.vmap``)."""
    return np.mean(batched_robust_loss(x, w, y))
