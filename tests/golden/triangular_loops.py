import numpy as np


def f(pos, w):
    n = pos.shape[0]
    energy = 0.0
    for i in range(n - 1, -1, -1):
        m = i + 1
        for j in range(m, n):
            energy += w * np.sum((pos[i] - pos[j]) ** 2)
    return energy


def example(rng):
    return rng.normal(size=(4, 2)), 0.5
