import numpy as np


def f(W, xs):
    h = np.zeros(W.shape[0])
    hs = []
    for x in xs:
        h = np.tanh(W @ h + x)
        if h.sum() > 0:
            h = h * 0.5
        hs.append(h)
    out = np.stack(hs)
    out[0] = 0.0
    return np.sum(out**2)


def example(rng):
    return rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 3))
