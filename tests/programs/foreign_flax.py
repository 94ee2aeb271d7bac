"""A Flax (linen) model, written the way Flax's documentation writes it: ``model.apply`` is Flax's JAX code,
called through ``rt.foreign``; the parameters are the argument differentiated."""

import flax.linen as nn
import jax.numpy as jnp
import optax


class MLP(nn.Module):
    features: int = 8

    @nn.compact
    def __call__(self, x):
        x = nn.tanh(nn.Dense(self.features)(x))
        return nn.Dense(3)(x)


model = MLP()


def loss(params, x, labels):
    logits = model.apply(params, x)
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))
