"""Programs with Equinox models, written the way Equinox's documentation writes them.

An Equinox layer's ``__call__`` is JAX code of an installed library: s2s calls it through
``rt.foreign``. The model may be held in a module global (a constant of the generated module) or be
the argument differentiated (``s2s.grad(loss)(model, x, y)``: its cotangent is a model of gradients,
as ``equinox.filter_grad`` gives).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

import s2s

layer = eqx.nn.Linear(4, 3, key=jax.random.PRNGKey(1))


def global_layer_loss(x, y):
    return jnp.sum((jnp.tanh(layer(x)) - y) ** 2)


def example_loss(model, x, y):
    pred = model(x)
    return jnp.sum((pred - y) ** 2)


def batch_loss(model, xs, ys):
    preds = jax.vmap(model)(xs)
    return jnp.mean((preds - ys) ** 2)


def keyword_loss(model, x, y):
    return jnp.sum((model(x, key=None) - y) ** 2)


def computed_keyword_loss(model, x, key):
    return jnp.sum(model(x, key=key))


optimizer = optax.adam(1e-2)
value_and_grad = s2s.value_and_grad(batch_loss)


def train_step(model, opt_state, xs, ys):
    loss, grads = value_and_grad(model, xs, ys)
    updates, opt_state = optimizer.update(
        grads, opt_state, eqx.filter(model, eqx.is_array)
    )
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss
