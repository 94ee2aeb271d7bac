import numpy as np


def f(x, w):
    h = x * w
    h += 1.0
    h = np.sin(h) * h
    h *= 2
    return np.sum(h)


def example(rng):
    return rng.normal(size=(3,)), rng.normal(size=(2, 3))
