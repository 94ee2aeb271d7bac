"""Layer normalization followed by a linear read-out, with a squared-error loss.

``loss`` calls the helper ``layer_norm`` defined in the same module; s2s
differentiates through it.

Run ``python examples/layernorm.py`` to print the generated gradient module.
"""

import numpy as np

EPS = 1e-5


def layer_norm(x, gamma, beta):
    """Normalize each row of ``x`` to zero mean and unit variance, then scale and shift."""
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + EPS) + beta


def loss(params, x, y):
    """Mean squared error of ``layer_norm(x) @ W`` against ``y``; ``params = (gamma, beta, W)``."""
    gamma, beta, W = params
    h = layer_norm(x, gamma, beta)
    err = h @ W - y
    return np.mean(err**2)


def init(rng, width, n_out, dtype=np.float32):
    """``(gamma, beta, W)`` for rows of ``width`` features and ``n_out`` outputs."""
    gamma = np.ones(width, dtype) + 0.1 * rng.standard_normal(width).astype(dtype)
    beta = 0.1 * rng.standard_normal(width).astype(dtype)
    W = (rng.standard_normal((width, n_out)) / np.sqrt(width)).astype(dtype)
    return gamma, beta, W


if __name__ == "__main__":
    import s2s

    rng = np.random.default_rng(0)
    params = init(rng, 6, 3)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = rng.standard_normal((4, 3)).astype(np.float32)
    loss_grad = s2s.grad(loss)
    print(loss_grad.source)
    for name, g in zip(["gamma", "beta", "W"], loss_grad(params, x, y)):
        print(name, np.asarray(g))
