import numpy as np


def f(x, y):
    t = (x, {0: y, "k": [x * 2.0, y]})
    a = t[-1]
    b = a[0]
    c = a["k"][-1]
    d = t[1]["k"][0]
    return np.sum(b * c) + np.sum(d) + np.sum(t[0])


def example(rng):
    return rng.normal(size=3), rng.normal(size=3)
