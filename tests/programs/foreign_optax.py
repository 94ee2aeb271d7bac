"""Programs that call optax inside a transformed function, written the way optax's documentation writes them.

optax's functions are JAX code of an installed library: s2s calls them through ``rt.foreign`` and takes
their derivatives with JAX's own ``jax.vjp``/``jax.jvp``/``jax.vmap`` at that call.
"""

import jax.numpy as jnp
import optax

import s2s

optimizer = optax.adam(1e-2)
sgd = optax.sgd(0.1)


def classifier_loss(w, x, labels):
    logits = jnp.tanh(x @ w)
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))


def regression_loss(w, x, y):
    pred = jnp.tanh(x @ w)
    return jnp.sum(optax.l2_loss(pred, y))


def binary_loss(w, x, y):
    logits = x @ w
    return jnp.mean(optax.sigmoid_binary_cross_entropy(logits, y))


def keyword_loss(w, x, labels, y):
    """A computed keyword argument (``targets=``) goes to its position; a constant one (``axis=``) stays."""
    logits = x @ w
    xent = optax.softmax_cross_entropy_with_integer_labels(logits, labels, axis=-1)
    return jnp.mean(xent) + jnp.sum(optax.l2_loss(logits, targets=y))


def params_loss(params, x, y):
    pred = jnp.tanh(x @ params["w"] + params["b"])
    return jnp.mean(optax.l2_loss(pred, y))


loss_and_grad = s2s.value_and_grad(params_loss)


def train_step(params, opt_state, x, y):
    value, grads = loss_and_grad(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, value


def unrolled_loss(params, opt_state, x, y):
    """The loss after one optimizer step: differentiated through optax's update (a pytree in and out)."""
    grads = params_grad(params, x, y)
    updates, _ = sgd.update(grads, opt_state, params)
    return params_loss(optax.apply_updates(params, updates), x, y)


params_grad = s2s.grad(params_loss)


def schedule_loss(steps, x):
    # compares `steps` in Python: JAX cannot trace it
    lr = optax.cosine_decay_schedule(1.0, steps)
    return jnp.sum(x) * lr


def value_loss(w, x, y):
    loss_fn = optax.l2_loss  # a library function held in a local, called below
    return jnp.sum(loss_fn(x @ w, y))


def lookahead_loss(params, x, y):
    """An optimizer made in the function from constants (optax's docs write it so), then stepped once."""
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(learning_rate=0.1))
    state = tx.init(params)
    updates, _ = tx.update(params_grad(params, x, y), state, params)
    return params_loss(optax.apply_updates(params, updates), x, y)


def meta_lr_loss(lr, params, x, y):
    """An optimizer made from a value of the function: no constant (a located error)."""
    tx = optax.sgd(lr)
    updates, _ = tx.update(params_grad(params, x, y), tx.init(params), params)
    return params_loss(optax.apply_updates(params, updates), x, y)
