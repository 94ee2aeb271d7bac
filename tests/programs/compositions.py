"""JAX-style programs using the functions s2s reads as compositions: ``jnp.select`` (nested ``where``),
``jnp.block`` (joined levels), grids and samples (``meshgrid``, ``linspace`` between parameters), and
functions passed to helpers. Written as JAX's documentation writes them; ``tests/test_compositions.py``
checks every transform against JAX's.
"""

import jax
import jax.numpy as jnp
import numpy as np


def piecewise_loss(w, x):
    """A piecewise-defined activation by ``jnp.select``, the first true condition picking its branch."""
    z = x @ w
    act = jnp.select(
        [z < -1.0, z < 1.0],
        [-1.0 - 0.1 * (z + 1.0), z],
        default=1.0 + jnp.log1p(z - 1.0),
    )
    return jnp.sum(act**2)


def block_system(a, b):
    """A saddle-point matrix assembled by ``jnp.block`` and solved."""
    n = a.shape[0]
    m = jnp.block(
        [[a @ a.T + n * jnp.eye(n), b[:, None]], [b[None, :], jnp.zeros((1, 1))]]
    )
    rhs = jnp.concatenate([jnp.ones(n), jnp.zeros(1)])
    return jnp.sum(jnp.linalg.solve(m, rhs) ** 2)


def field_on_grid(k, t_end):
    """A field sampled on a ``meshgrid`` of ``linspace``s, one of them ending at a parameter."""
    xs = jnp.linspace(0.0, 1.0, 5)
    ts = jnp.linspace(0.0, t_end, 4)
    X, T = jnp.meshgrid(xs, ts, indexing="ij")
    u = jnp.sin(k[0] * X) * jnp.exp(-k[1] * T)
    return jnp.trapezoid(jnp.trapezoid(u**2, ts, axis=1), xs)


def layer(params, x, act=jax.nn.relu):
    W, b = params
    return act(x @ W + b)


def mlp_activations(params, x):
    """Activations passed to a helper: the default, ``jnp.tanh`` and ``jax.nn.gelu``."""
    h = layer(params[0], x)
    h = layer(params[1], h, jnp.tanh)
    return jnp.sum(layer(params[2], h, act=jax.nn.gelu) ** 2)


def features_by_index_tricks(w, x):
    """Design matrices by ``jnp.c_``/``jnp.r_``, a ``jnp.mgrid`` of evaluation points, ``multi_dot``."""
    design = jnp.c_[jnp.ones(x.shape[0]), x, x**2]
    coefs = jnp.r_[w, 0.5]
    gx, gy = jnp.mgrid[0:1:4j, 0:2]
    chain = jnp.linalg.multi_dot([design.T, design, coefs[:3]])
    return (
        jnp.sum((design @ coefs[:3]) ** 2)
        + jnp.sum(chain * coefs[1:])
        + jnp.sum(jnp.sin(w[0] * gx + w[1] * gy))
    )


def attention_block(params, x):
    """A causal self-attention block with grouped key heads, as a transformer tutorial writes it."""
    B, T, _ = x.shape
    q = (x @ params["wq"]).reshape(B, T, 4, 2)
    k = (x @ params["wk"]).reshape(B, T, 2, 2)
    v = (x @ params["wv"]).reshape(B, T, 2, 2)
    h = jax.nn.dot_product_attention(q, k, v, is_causal=True).reshape(B, T, 8)
    keep = jnp.arange(T) < T - 1
    padded = jax.nn.dot_product_attention(
        q[0], k[0], v[0], mask=keep[None, None, :], scale=0.3
    )
    return jnp.sum(jnp.tanh(h @ params["wo"])) + jnp.sum(padded**2)


def weighted_histograms(w, x):
    """Histograms whose weights, range and values carry the parameters (counts are JAX's)."""
    counts, edges = jnp.histogram(x * w[0], bins=4, weights=jnp.exp(w[1] * x))
    dens, _ = jnp.histogram(
        x, bins=3, range=(-1.0, 1.0), density=True, weights=w[2] + x**2
    )
    given = jnp.histogram_bin_edges(x * w[1], bins=jnp.array([-3.0, 0.0, 3.0]))
    return (
        jnp.sum(counts**2)
        + jnp.sum(edges * w[2])
        + jnp.sum(dens * w[0])
        + jnp.sum(given)
    )


def polynomial_fit(w, x):
    """Least-squares polynomials through curves of the parameters, one weighted with two right-hand sides."""
    y = jnp.sin(w[0] * x) + w[1] * x**2
    c = jnp.polyfit(x, y, 2)
    c2 = jnp.polyfit(x, jnp.stack([y, y**2], axis=1), 1, w=jnp.abs(x) + w[2])
    return jnp.sum(c**2) + jnp.sum(jnp.tanh(c2))


def kernel_with_jitter(log_scale, x):
    """A kernel matrix whose diagonal ``jnp.fill_diagonal`` replaces (``inplace=False``, JAX's spelling)."""
    K = jnp.exp(
        log_scale[0] - 0.5 * (x[:, None] - x[None, :]) ** 2 / jnp.exp(log_scale[1])
    )
    K = jnp.fill_diagonal(K, jnp.diag(K) + 0.1, inplace=False)
    return jnp.linalg.slogdet(K)[1] + jnp.sum(jnp.linalg.solve(K, x))


def histograms_in_several_dimensions(w, x):
    """``histogram2d`` and ``histogramdd``: weighted, with bounds given, as densities (volumes carry ``w``)."""
    h, ex, ey = jnp.histogram2d(
        x * w[0], jnp.sin(x) + w[1], bins=3, weights=jnp.exp(w[2] * x)
    )
    d, _ = jnp.histogramdd(jnp.stack([x, x**2, w[1] * x], axis=1), bins=2, density=True)
    bounds = [(-1.0, 1.0), (0.0, 2.0)]
    r, _ = jnp.histogramdd(
        jnp.stack([x, x**2], axis=1), bins=(3, 3), range=bounds, weights=w[0] + x
    )
    return jnp.sum(h**2) + jnp.sum(ex * ey) * w[2] + jnp.sum(d * w[0]) + jnp.sum(r**2)


def jax_positional_order(w, x):
    """``jax.numpy``'s positional order where NumPy's differs: ``weights`` fourth, ``shape`` third."""
    counts, _ = jnp.histogram(x, 3, None, jnp.exp(w * x))
    return jnp.sum(counts**2) + jnp.sum(jnp.zeros_like(x, None, (2,)) + w)


def numpy_positional_order(w, x):
    """NumPy's positional order: ``density`` fourth, ``weights`` fifth."""
    counts, _ = np.histogram(x, 3, None, False, np.exp(w * x))
    return np.sum(counts**2)


def polynomials_from_roots(w, x):
    """``jnp.poly`` of roots that carry the parameters, divided by ``jnp.polydiv``."""
    c = jnp.poly(w * x)
    q, r = jnp.polydiv(jnp.concatenate([c, w[:1]]), jnp.array([1.0, 0.5]) * w[1])
    return jnp.sum(c**2) + jnp.sum(q * w[0]) + jnp.sum(r**2)


def value_at_the_peak(x):
    """``unravel_index`` of an ``argmax`` and ``ravel_multi_index`` back (positions: no derivative)."""
    i, j = jnp.unravel_index(jnp.argmax(x), x.shape)
    flat = jnp.ravel_multi_index((i, j), x.shape, mode="clip")
    return x[i, j] * 2.0 + jnp.ravel(x)[flat]


def _maml_net(params, x):
    for W, b in params[:-1]:
        x = jnp.tanh(x @ W + b)
    W, b = params[-1]
    return x @ W + b


def _maml_mse(params, x, y):
    return jnp.mean((_maml_net(params, x) - y) ** 2)


def _adapted_task_loss(params, x, y):
    grads = jax.grad(_maml_mse)(params, x, y)
    params = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return _maml_mse(params, x, y)


def maml_over_tasks(params, xs, ys):
    """MAML as the JAX tutorials write it: an inner SGD step by ``jax.grad`` of a loop over the layers,
    mapped over tasks by ``jax.vmap`` (h02: missing rules for the batched loop helpers, and the cotangent
    of the list of layers swapped its matrices' axes)."""
    return jnp.mean(jax.vmap(_adapted_task_loss, in_axes=(None, 0, 0))(params, xs, ys))


def _shared_writes(w, x):
    h = x.at[0].add(w * 2.0)
    h = h.at[1].set(w[0] * 3.0)
    return jnp.sum(jnp.tanh(h) ** 2)


def writes_of_shared_values_over_examples(w, xs):
    """``.at[].add``/``.set`` of values every example shares into per-example arrays, mapped by
    ``jax.vmap`` and differentiated: the shared values' cotangents sum over the examples.
    """
    return jnp.mean(jax.vmap(_shared_writes, in_axes=(None, 0))(w, xs))
