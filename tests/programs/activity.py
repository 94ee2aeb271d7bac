"""Small functions whose active variables the activity tests name (``tests/test_activity.py``)."""

import numpy as np


def through_ops(w, x):
    h = np.tanh(x @ w)
    n = x.shape[0]
    mask = h > 0
    idx = np.argmax(h)
    return np.sum(h * mask) + n + idx


def closure_handed_to_a_call(w, x):
    def row(r):
        return r * w

    conditions = [
        x < 0,
        x >= 0,
    ]  # (held in a name: the op itself, not its ``np.where`` chain)
    y = np.piecewise(x, conditions, [row, row])  # (functions in a display, too)
    return np.sum(y)


def closure_handed_to_a_loop(w, xs):
    acc = 0.0
    for x in xs:
        acc = acc + np.sum(w * x)
    return acc


def helper_summary(w, x):
    y = _reduce(x, w, 0)
    return np.sum(y)


def _reduce(x, w, axis):
    return np.sum(x @ w, axis=axis)


def containers(params, x):
    W, b = params[-1]
    scale = params[0]
    return np.sum(x @ W + b) * scale
