"""Loops over Python lists and tuples of values, as the random control programs draw them.

Each is a program ``f(x, y, s)`` (``x``: (3,), ``y``: (2, 3), ``s``: a float) on which a transform
raised an error when it was found (tests/test_control_regressions.py). None gave a wrong answer.
"""

import numpy as np


def second_order_continue(x, y, s):
    v0 = (x - np.cos(x)) + y
    v1 = s * (y + v0) + x[1]
    for item2 in [x, x]:
        if np.mean(y[-2]) < -0.35:
            continue
        v1 = 0.9 * v1 + np.sin(x - v1[-2])
        v0 = 0.5 * v0 + np.tanh(v0)
    v3, v4 = np.tanh(v0)
    return (
        np.sum(x * 1.0)
        + np.sum(y * 2.0)
        + np.sum(v1 * 3.0)
        + np.sum(v3 * 4.0)
        + np.sum(v4 * 5.0)
    )


def second_order_enumerate_write(x, y, s):
    v0 = np.maximum(x, y[-1])
    for i2, item1 in enumerate((y, y)):
        if x[i2] > 2.5:
            continue
        v0 = 0.5 * v0 + np.cos(v0 * x)
        v0[0] = np.cos(np.sum((0.5 * i2 + 0.25) / (1.0 + v0 * v0)))
    v3 = x - -y
    return np.sum(x * 1.0) + np.sum(y * 2.0) + np.sum(v0 * 3.0) + np.sum(v3 * 4.0)


def per_example_list_in_loop(x, y, s):
    v0 = np.tanh(np.tanh(x))
    v0 = -v0 + x[1]
    for i1 in range(1):
        if (0.5 * i1 + 0.25) > 1.3:
            return np.sum(x * 2.0)
        for i3, item2 in enumerate([y]):
            v0[i3] += np.cos(np.sum(np.maximum(v0, item2[i1])))
        if np.max(x) > 2.5 or not np.mean(v0) < 2.5:
            if np.max(y[-2]) < -0.35:
                continue
        else:
            v0 = 0.9 * v0 + np.sin(np.maximum(y[i1], np.cos(y[i1])))
    v0 += np.sin(np.sin(x[2]))
    return np.sum(x * 1.0) + np.sum(y * 2.0) + np.sum(v0 * 3.0)


def per_example_params_list(ws, x):
    for w in ws:
        x = np.tanh(x @ w)
    return np.sum(x**2)


def per_example_params_pairs(params, x):
    for w, b in params:
        x = np.tanh(x @ w + b)
    return np.sum(x**2)


# --- loops that visit fewer items than a list holds (a zip stops at its shortest input) ----------
# Each once gave a silent wrong gradient under jax.jit (the per-step cotangents were read past the
# steps, which JAX clamps) and an IndexError on NumPy.


def each_item_and_the_next(ws, x):
    h = x
    for i in range(len(ws) - 1):
        h = np.tanh(h * ws[i] + ws[i + 1])
    return np.sum(h)


def zip_with_fewer_weights(ws, x):
    total = 0.0
    for a, w in zip((0.5, 2.0), ws):
        total = total + a * np.sum(np.tanh(w * x))
    return total


def pairs_of_neighbours(ws, x):
    total = 0.0
    for a, b in zip(ws, ws[1:]):  # noqa: RUF007 (as users write it)
        total = total + np.sum(np.sin(a * x) * b)
    return total


def collected_layers_of_different_sizes(Ws, x):
    """States of layers of different widths collected in a list, then summed (once an error in the
    generated code: their cotangents, one per step and shape, were not read step by step).
    """
    outs = []
    h = x
    for W in Ws:
        h = np.tanh(h @ W)
        outs.append(h)
    return sum(np.sum(o**2) for o in outs)


def neighbours_kept_in_a_name(ws, x):
    """``zip`` kept in a name and looped over once."""
    pairs = zip(ws, ws[1:])  # noqa: RUF007 (as users write it)
    total = 0.0
    for a, b in pairs:
        total = total + np.sum(np.sin(a * x) * b)
    steps = enumerate(ws)
    return total + sum(np.sum(w * x) * i for i, w in steps)
