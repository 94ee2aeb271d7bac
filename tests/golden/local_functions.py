import numpy as np


def f(x, scale):
    square = lambda t: t * t

    def soft(z, beta=2.0):
        return np.log1p(np.exp(beta * z)) / beta

    return np.sum(soft(square(x) * scale))


def example(rng):
    return rng.normal(size=(4,)), 0.5
