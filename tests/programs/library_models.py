"""Models written the way the JAX documentation and SciPy users write them, with ``jax.nn``,
``jax.scipy`` and ``scipy`` functions: checked against JAX in ``tests/test_library_ops.py``.

Functions that call ``scipy`` are checked against their JAX twins (``scipy`` bound to
``jax.scipy``, NumPy to ``jax.numpy``).
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.nn import relu
from jax.scipy.special import logsumexp
from jax.scipy.stats import norm as jnorm
from scipy.special import expit, xlogy
from scipy.stats import norm

# --- an MLP classifier (the MNIST tutorial's shape) ----------------------------------------------


def predict(params, images):
    activations = images
    for w, b in params[:-1]:
        outputs = jnp.dot(activations, w) + b
        activations = relu(outputs)
    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def mlp_loss(params, images, targets):
    preds = predict(params, images)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def xent_loss(params, images, targets):
    # log_softmax cross-entropy with integer labels turned into one-hot rows
    (w1, b1), (w2, b2) = params
    h = jax.nn.relu(images @ w1 + b1)
    logp = jax.nn.log_softmax(h @ w2 + b2)
    labels = jax.nn.one_hot(targets, 3)
    return -jnp.mean(jnp.sum(labels * logp, axis=-1))


# --- a Gaussian negative log-likelihood ------------------------------------------------------


def gaussian_nll(mu, log_sigma, x):
    return -jnp.sum(jax.scipy.stats.norm.logpdf(x, mu, jnp.exp(log_sigma)))


def heteroscedastic_nll(params, x, y):
    w, v = params
    mean = x @ w
    scale = jax.nn.softplus(x @ v) + 1e-3
    return -jnp.mean(jnorm.logpdf(y, loc=mean, scale=scale))


# --- Bayesian logistic regression with SciPy -------------------------------------------------


def log_posterior(w, X, y, prior_scale):
    p = expit(X @ w)
    log_lik = np.sum(xlogy(y, p) + xlogy(1 - y, 1 - p))
    log_prior = np.sum(norm.logpdf(w, 0.0, prior_scale))
    return log_lik + log_prior


# --- a softplus / gelu network ---------------------------------------------------------------


def smooth_net(params, x):
    w1, w2, w3 = params
    h = jax.nn.softplus(x @ w1)
    h = jax.nn.gelu(h @ w2)
    h = jax.nn.gelu(h, approximate=False)
    return jnp.sum(jax.nn.silu(h @ w3) ** 2)


# --- logsumexp with weights and signs ------------------------------------------------------------


def signed_lse(a, b):
    value, sign = logsumexp(a, axis=-1, b=b, return_sign=True)
    return jnp.sum(sign * jnp.exp(value)) + jnp.sum(logsumexp(a, b=jnp.abs(b)))


# --- attention-style softmax and layer normalisation ---------------------------------------------


def attention(q, k, v):
    weights = jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1)
    out = jax.nn.standardize(weights @ v, axis=-1)
    return jnp.sum(jax.nn.glu(out, axis=-1) ** 2)
