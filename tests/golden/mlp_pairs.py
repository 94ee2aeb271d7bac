import numpy as np


def f(params, x):
    (W1, b1), (W2, b2) = params
    h = np.tanh(x @ W1 + b1)
    return np.mean((h @ W2 + b2) ** 2)


def example(rng):
    params = [(rng.normal(size=(3, 4)), rng.normal(size=4)), (rng.normal(size=(4, 2)), rng.normal(size=2))]
    return params, rng.normal(size=(5, 3))
