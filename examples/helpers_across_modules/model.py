"""A two-layer regression model built from helpers in a sibling module.

Run ``python examples/helpers_across_modules/model.py`` (the script's folder is
on ``sys.path``, so ``from layers import ...`` finds ``layers.py``).
"""

import numpy as np
from layers import dense, gelu


def loss(params, x, y):
    """Mean squared error of ``dense(gelu(dense(x)))`` against ``y``; ``params = (W1, b1, W2, b2)``."""
    W1, b1, W2, b2 = params
    h = gelu(dense(x, W1, b1))
    pred = dense(h, W2, b2)
    return np.mean((pred - y) ** 2)


def init(rng, n_in, n_hidden, n_out, dtype=np.float32):
    return (
        (rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)).astype(dtype),
        np.zeros(n_hidden, dtype),
        (rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)).astype(dtype),
        np.zeros(n_out, dtype),
    )


if __name__ == "__main__":
    import s2s

    rng = np.random.default_rng(0)
    params = init(rng, 4, 8, 2)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((3, 2)).astype(np.float32)
    loss_grad = s2s.grad(loss)
    print(loss_grad.source)
    for name, g in zip(["W1", "b1", "W2", "b2"], loss_grad(params, x, y)):
        print(name, np.asarray(g).round(6))
