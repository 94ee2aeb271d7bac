"""Models for ``bench_higher.py``: a small tanh MLP in plain NumPy (what s2s reads); ``_twins.jax_twin`` gives its
``jax.numpy`` twin.

Two hidden tanh layers and a softmax cross-entropy, parameters a dict of
arrays. Unlike ``examples/mlp.py`` the log-softmax is not shifted by
``np.max`` of the logits (small weights keep the logits small), so the loss
is smooth and its second derivatives are the whole story.
"""

import itertools

import numpy as np


def logits(params, x):
    """The MLP's logits for a batch ``x`` (or one example ``x`` of shape ``(inputs,)``)."""
    h1 = np.tanh(x @ params["W1"] + params["b1"])
    h2 = np.tanh(h1 @ params["W2"] + params["b2"])
    return h2 @ params["W3"] + params["b3"]


def loss(params, x, y):
    """Mean softmax cross-entropy of the logits against one-hot ``y``."""
    z = logits(params, x)
    log_probs = z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
    return -np.mean(np.sum(y * log_probs, axis=-1))


def per_example_loss(params, x, y):
    """The cross-entropy of each example of the batch: a vector, shape ``(batch,)``."""
    z = logits(params, x)
    log_probs = z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
    return -np.sum(y * log_probs, axis=-1)


def example_loss(x, params, y):
    """The cross-entropy of one example ``x`` (shape ``(inputs,)``), input first: a scalar function of ``x``."""
    z = logits(params, x)
    return np.log(np.sum(np.exp(z))) - np.sum(y * z)


def init(rng, sizes, dtype=np.float32):
    """Parameters for layer widths ``sizes`` (input first): ``{"W1", "b1", ..., "W3", "b3"}``."""
    params = {}
    for i, (m, n) in enumerate(itertools.pairwise(sizes), start=1):
        params[f"W{i}"] = (rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype)
        params[f"b{i}"] = (0.1 * rng.standard_normal(n)).astype(dtype)
    return params


def data(rng, batch, n_in, n_classes, dtype=np.float32):
    """A random batch: inputs ``x`` and one-hot labels ``y``."""
    x = rng.standard_normal((batch, n_in)).astype(dtype)
    y = np.eye(n_classes, dtype=dtype)[rng.integers(0, n_classes, batch)]
    return x, y
