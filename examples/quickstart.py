"""The README's first API example, runnable as it is: ``python examples/quickstart.py``.

s2s reads a function's source, so the function must live in a file (like
this one), not be typed at the interactive prompt.
"""

import numpy as np

import s2s


def loss(params, x, y):
    (W1, b1), (W2, b2) = params
    h = np.tanh(x @ W1 + b1)
    return np.mean((h @ W2 + b2 - y) ** 2)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    params = [
        (rng.normal(size=(3, 8)), np.zeros(8)),
        (rng.normal(size=(8, 1)), np.zeros(1)),
    ]
    x, y = rng.normal(size=(16, 3)), rng.normal(size=(16, 1))

    loss_grad = s2s.grad(loss)  # compiled through jax.jit
    grads = loss_grad(
        params, x, y
    )  # same structure as params: [(dW1, db1), (dW2, db2)]
    print(loss_grad.source)  # the generated module, as text
    print("dW1:", grads[0][0].shape, "db2:", grads[1][1])
