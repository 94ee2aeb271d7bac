"""A ``jax.nn`` MLP for ``bench_jax_style_nn.py``, written as the JAX documentation writes it.

The same function is what s2s reads and what ``jax.grad`` differentiates: it is
already JAX code (``jax.nn`` activations, ``jax.numpy``).
"""

import jax
import jax.numpy as jnp


def mlp_loss(params, images, labels):
    """ReLU and GELU hidden layers, log-softmax cross-entropy against integer labels."""
    (w1, b1), (w2, b2), (w3, b3) = params
    h = jax.nn.relu(images @ w1 + b1)
    h = jax.nn.gelu(h @ w2 + b2)
    logits = h @ w3 + b3
    logp = jax.nn.log_softmax(logits, axis=-1)
    targets = jax.nn.one_hot(labels, logits.shape[-1])
    return -jnp.mean(jnp.sum(targets * logp, axis=-1))
