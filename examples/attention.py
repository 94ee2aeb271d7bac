"""Single-head self-attention with a residual connection and layer norm.

``params`` is a dict ``{"Wq", "Wk", "Wv", "gamma", "beta"}``; ``x`` is one
sequence of shape ``(length, width)``. Run ``python examples/attention.py`` to
print the generated gradient module.
"""

import numpy as np

EPS = 1e-5


def loss(params, x, y):
    """Mean squared error of ``layer_norm(x + attention(x))`` against the target ``y``."""
    q = x @ params["Wq"]
    k = x @ params["Wk"]
    v = x @ params["Wv"]
    scores = q @ k.T / np.sqrt(x.shape[-1])
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    h = x + weights @ v
    mean = np.mean(h, axis=-1, keepdims=True)
    var = np.mean((h - mean) ** 2, axis=-1, keepdims=True)
    out = params["gamma"] * (h - mean) / np.sqrt(var + EPS) + params["beta"]
    return np.mean((out - y) ** 2)


def init(rng, width, dtype=np.float32):
    """Parameters for tokens of ``width`` features."""

    def dense():
        return (rng.standard_normal((width, width)) / np.sqrt(width)).astype(dtype)

    return {
        "Wq": dense(),
        "Wk": dense(),
        "Wv": dense(),
        "gamma": np.ones(width, dtype),
        "beta": np.zeros(width, dtype),
    }


if __name__ == "__main__":
    import s2s

    rng = np.random.default_rng(0)
    params = init(rng, 8)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    y = rng.standard_normal((5, 8)).astype(np.float32)
    loss_grad = s2s.grad(loss)
    print(loss_grad.source)
    for name, g in sorted(loss_grad(params, x, y).items()):
        print(f"{name}: |grad| = {np.linalg.norm(g):.6f}")
