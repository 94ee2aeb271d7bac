"""Per-example functions as people write them, for ``s2s.vmap`` (checked against a Python loop)."""

import jax
import jax.numpy as jnp
import numpy as np


def affine(x, w, b):
    return np.tanh(x @ w + b)


def scaled(alpha, v):
    # a per-example scalar times a shared vector: the examples' ranks differ
    return alpha * v + np.sin(alpha)


def softmax(z):
    e = np.exp(z - np.max(z))
    return e / np.sum(e)


def normalize_rows(m):
    mu = np.mean(m, axis=1, keepdims=True)
    sd = np.std(m, axis=-1, keepdims=True)
    return (m - mu) / (sd + 1e-3)


def shapes(x):
    n = x.shape[0]
    flat = np.reshape(x, (-1,))
    return np.sum(flat) / n + len(x) + x.ndim


def pieces(x):
    first = x[0]
    tail = x[1:]
    return first * 2.0 + np.sum(tail, axis=0) + x[-1, ...]


def relu_if(x):
    s = np.sum(x)
    if s > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def newton_sqrt(a):
    x = a
    while np.abs(x * x - a) > 1e-4 * a:  # relative: float32 reaches it too
        x = 0.5 * (x + a / x)
    return x


def rows(x):
    total = 0.0
    for row in x:
        total = total + np.sum(row**2)
    return total


def rnn(xs, h0, wh, wx):
    h = h0
    for x in xs:
        h = np.tanh(h @ wh + x @ wx)
    return h


def write(x):
    y = np.zeros(3)
    y[0] = np.sum(x)
    y[1:] = x[:2] * 2.0
    return y


def gather(x, idx):
    return x[idx]


def helper_layer(a, w):
    return np.maximum(a @ w, 0.0)


def with_helper(x, w1, w2):
    return np.sum(helper_layer(helper_layer(x, w1), w2))


def transposes(m):
    return m.T @ m + np.transpose(m) @ m


def stack_and_cat(x, y):
    s = np.stack([x, y], axis=0)
    c = np.concatenate([x, y])
    return np.sum(s, axis=1) + c[:2]


def cumulative(x):
    return np.cumsum(x) + np.flip(x)


def argbest(x):
    return np.argmax(x) + np.argmin(x, axis=0)


def count_steps(a):
    n = 0
    x = a
    while x > 1.0:
        x = x / 2.0
        n = n + 1
    return n


def pair(x):
    return np.sum(x), x * 2.0


# --- losses for per-example gradients (vmap of grad) ------------------------------------


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.mean((out - y) ** 2)


def cross_entropy(w, x, label):
    z = x @ w
    z = z - np.max(z)
    return np.log(np.sum(np.exp(z))) - z[label]


def hinge_if(w, x):
    s = np.dot(w, x)
    if s > 0:
        r = s**2
    else:
        r = -s
    return r + np.sum(w[1:] * x[:-1])


def clipped_steps(w, x):
    total = 0.0
    for xi in x:
        total = total + np.maximum(np.inner(w, xi), 0.0)
    return total


def layer_if(x, w, b):
    h = np.tanh(x @ w + b)
    if np.sum(h) > 0:
        out = h * 2.0
    else:
        out = -h
    return np.sum(out**2)


def safe_sqrt(x, w):
    # the untaken branch is nan for negative x: reverse mode of the batched code must not see it
    if x > 0:
        y = np.sqrt(x) * w
    else:
        y = 0.0 * w
    return y


def batched_safe_sqrt_loss(xs, w):
    return np.sum(batched_safe_sqrt(xs, w))


import s2s  # noqa: E402  (the batched function the loss above calls)

batched_safe_sqrt = s2s.vmap(safe_sqrt, in_axes=(0, None))


def distance(x, y):
    # a per-pair distance with a data-dependent branch: vmap of vmap gives the pairwise matrix
    d = x - y
    sq = np.sum(d * d)
    if sq > 1.0:
        return np.sqrt(sq)
    return sq


def twin_distance(x, y):
    import jax.numpy as jnp

    d = x - y
    sq = jnp.sum(d * d)
    return jnp.where(sq > 1.0, jnp.sqrt(sq), sq)


def halving_in_loop(x, ys):
    # a `while` inside a `for`: its gradient's checkpoints are kept by the enclosing loop
    total = 0.0
    for y in ys:
        z = x * y
        while np.sum(z * z) > 1.0:
            z = 0.5 * z
        total = total + np.sum(z)
    return total


def squashed(w, x):
    # a vector output with a per-example branch: vmap of jacrev/jacfwd gives per-example Jacobians
    h = np.tanh(x @ w)
    if np.sum(h) > 0:
        h = 2.0 * h
    return h**2


def twin_squashed(w, x):
    import jax.numpy as jnp

    h = jnp.tanh(x @ w)
    h = jnp.where(jnp.sum(h) > 0, 2.0 * h, h)
    return h**2


def squashed_loss(w, x):
    return np.sum(squashed(w, x))


def twin_squashed_loss(w, x):
    import jax.numpy as jnp

    return jnp.sum(twin_squashed(w, x))


SCALE = 2.0


def scaled_distance(x, y):
    # reads a module global: rebinding it makes s2s generate the module again
    return distance(x, y) * SCALE


def _swish(z):
    return z / (1.0 + np.exp(-z))


def layers_by_activation_name(params, x, act="swish"):
    """A branch on a string in a loop over layers whose keys the loop computes: the backward branch not
    taken gets zeros for its residuals (its string keys as they are) under ``vmap`` of ``grad``.
    """
    h = x
    for l in range(1, 3):
        if act == "sine":
            h = np.sin(h @ params[f"W{l}"])
        else:
            h = _swish(h @ params[f"W{l}"])
        h = h + params[f"b{l}"]
    return np.sum(h**2)


def padded_same(w, x, padding="same"):
    """A pad width from a shape inside a branch on a string: under ``vmap`` of ``grad`` the width is one
    residual of the branch that no example changes, beside residuals that differ per example.
    """
    K = w.shape[0]
    h = np.tanh(x * w[0])
    if padding == "same":
        h = np.pad(h, ((K // 2, K // 2), (0, 0)))
    return np.sum(h**2 * np.arange(1.0, h.shape[0] + 1.0)[:, None])


def ar1_nll(theta, y):
    """An AR(1) likelihood with guards returning early, nested: each guard's residuals, some a number of
    the data's shape, some per example."""
    mu, sigma, rho = theta[0], theta[1], theta[2]
    if sigma <= 0:
        return 1e10
    if abs(rho) >= 1:
        return 1e10
    resid = y[1:] - mu - rho * (y[:-1] - mu)
    n = len(resid)
    var0 = sigma**2 / (1 - rho**2)
    nll0 = 0.5 * np.log(2 * np.pi * var0) + 0.5 * (y[0] - mu) ** 2 / var0
    return nll0 + n * np.log(sigma) + 0.5 * np.sum(resid**2) / sigma**2


def _scaled(x, scale=1.0):
    return np.tanh(x * scale)


def _shifted(x, shift=0.0, scale=1.0):
    return np.sin(x + shift) * scale


TERMS = {"scaled": _scaled, "shifted": _shifted}


def terms_by_name(settings, x):
    """A dict of functions called by key with each key's own keywords, in a loop over a dict (a GP's sum
    of kernels): the call for one key cannot run with another's keywords."""
    return sum(np.sum(TERMS[name](x, **kw)) for name, kw in settings.items())


def zip_over_mixed_items(a, x, y):
    """A loop over a tuple some items of which are batched and some not: each step's item batched."""
    out = np.tanh(a)
    pairs = zip((0.5, 0.75, 1.0), (out, x, y))
    total = np.zeros(x.shape)
    for w, z in pairs:
        total = total + w * np.tanh(z)
    return np.sum(total)


def _residuals(p, t, y):
    return p[0] * np.exp(-p[1] * t) - y


def scipy_style(p, *args):
    """scipy.optimize's ``fun(p, *args)``: the data passed on by ``*args``, unpacked too."""
    t, y = args
    r = _residuals(p, *args)
    return 0.5 * r @ r + 0.01 * np.sum(t)


def _clipped(g, max_norm):
    """DP-SGD's per-example clipping of a tree of gradients by its global norm."""
    norm = jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in jax.tree_util.tree_leaves(g)))
    return jax.tree.map(
        lambda leaf: leaf * jnp.minimum(1.0, max_norm / (norm + 1e-6)), g
    )


def clipped_total(grads, max_norm):
    """An inner ``jax.vmap`` over a tree (a dict of per-example gradients), mapped again from outside."""
    clipped = jax.vmap(_clipped, in_axes=(0, None))(grads, max_norm)
    return jnp.sum(clipped["w"]) + jnp.sum(clipped["b"] ** 2)


def summed_clipped_totals(grads, max_norm):
    return jnp.sum(s2s.vmap(clipped_total, in_axes=(0, None))(grads, max_norm))


def _rbf(a, b, w):
    return jnp.exp(-jnp.sum((a - b) ** 2) * w[0]) + w[1] * jnp.dot(a, b)


def gp_kernel_matrix(w, X, Y):
    """A GP's marginal likelihood term: the kernel matrix by a ``vmap`` of a ``vmap`` of lambdas."""
    K = jax.vmap(lambda x: jax.vmap(lambda y: _rbf(x, y, w))(X))(X)
    return jnp.sum(jnp.linalg.solve(K + 3.0 * jnp.eye(X.shape[0]), X[:, 0]))


def _softplus(x):
    return jnp.logaddexp(x, 0.0)


def _ard(a, b, w):
    """An ARD kernel whose length scales go through a helper of the parameters (not mapped)."""
    d = (a - b) / _softplus(w)
    return jnp.exp(-0.5 * jnp.dot(d, d))


def ard_kernel_matrix(w, X, Y):
    """m08: the kernel's helper is lowered where the outer map maps the inner one again."""
    K = jax.vmap(lambda x: jax.vmap(lambda y: _ard(x, y, w))(X))(X)
    return jnp.sum(jnp.linalg.solve(K + 3.0 * jnp.eye(X.shape[0]), X[:, 0]))


def cross_kernel_matrix(w, X, Y):
    """Between two sets, with in_axes and out_axes: the inner map over ``X``'s rows put on axis 1."""
    K = jax.vmap(
        jax.vmap(_rbf, in_axes=(0, None, None)), in_axes=(None, 0, None), out_axes=1
    )(X, Y, w)
    return jnp.sum(jnp.sin(K) * jnp.arange(K.size).reshape(K.shape))


def _squared_error(w, b, x, y):
    return (jnp.tanh(x @ w + b) - y) ** 2


def mean_of_a_mapped_loss(w, b, X, Y):
    """The JAX tutorial's batched predictions: a per-example loss mapped inside the loss."""
    return jnp.mean(jax.vmap(_squared_error, in_axes=(None, None, 0, 0))(w, b, X, Y))


def three_outputs_with_aux(x):
    """A vector-valued function (the autodiff cookbook's), its first output's square as an auxiliary value."""
    y = np.array([np.sin(x[0]) * x[1], x[1] ** 3 + x[2], np.exp(x[0] - x[2])])
    return y, y[0] ** 2
