"""L2-regularized logistic regression: the example whose gradient fits on one screen.

Run ``python examples/logistic.py`` to print the generated gradient module.
"""

import numpy as np


def loss(w, b, x, y, l2=0.01):
    """Mean binary cross-entropy of ``sigmoid(x @ w + b)`` against labels ``y`` in {0, 1}, plus ``l2 * |w|^2``."""
    z = x @ w + b
    # log(1 + exp(z)) - y * z, written to stay finite for large |z|
    nll = np.logaddexp(0.0, z) - y * z
    return np.mean(nll) + l2 * np.sum(w * w)


if __name__ == "__main__":
    import s2s

    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 3))
    y = (rng.random(6) > 0.5).astype(np.float64)
    w = rng.standard_normal(3)
    loss_grad = s2s.grad(loss, argnums=(0, 1))
    print(loss_grad.source)
    dw, db = loss_grad(w, 0.0, x, y)
    print("dw =", dw)
    print("db =", db)
