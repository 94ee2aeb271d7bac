import numpy as np


def f(x, w):
    y = x
    n = 0
    while np.sum(y * y) < 10.0 and n < 20:
        y = np.sin(y) * w + y
        n = n + 1
    return np.sum(y)


def example(rng):
    return rng.normal(size=3) * 0.5, rng.normal(size=3) * 0.2 + 1.0
