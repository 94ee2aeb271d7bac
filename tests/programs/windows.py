"""Slices of a fixed width at a start the code computes (``frontend/windows.py``), as people write them.

Inside a loop s2s compiles, the loop's index is traced; these slices compile
as windows. Each ``name`` has ``inputs_name()``; the first input is
differentiated.
"""

import numpy as np


def minibatch_losses(w, x, y):
    """Batches of 4 rows, the start a multiple of the batch size."""
    total = 0.0
    for i in range(0, 12, 4):
        xb, yb = x[i : i + 4], y[i : i + 4]
        total = total + np.mean((np.tanh(xb @ w) - yb) ** 2)
    return total


def batches_by_count(w, x, y):
    """``x[b * size:(b + 1) * size]``, the batch's number times its size."""
    size = 3
    total = 0.0
    for b in range(x.shape[0] // size):
        total = total + np.sum(
            (x[b * size : (b + 1) * size] @ w - y[b * size : (b + 1) * size]) ** 2
        )
    return total


def conv1d_valid(kernel, signal):
    """A convolution written with windows: ``signal[t:t + k] @ kernel``."""
    k = kernel.shape[0]
    out = np.zeros(signal.shape[0] - k + 1)
    for t in range(signal.shape[0] - k + 1):
        out[t] = signal[t : t + k] @ kernel
    return np.sum(np.tanh(out) ** 2)


def patches_2d(w, image):
    """2x2 patches of an image, on both axes, and a column window (``image[:, j:j + 2]``)."""
    total = 0.0
    for i in range(image.shape[0] - 1):
        for j in range(image.shape[1] - 1):
            total = total + np.sum(image[i : i + 2, j : j + 2] * w) ** 2
    for j in range(image.shape[1] - 1):
        total = total + np.sum(image[:, j : j + 2][0] * w[0])
    return total


def window_then_index(w, x, y):
    """``x[i:i + 2, 0]``: an index after the window."""
    total = 0.0
    for i in range(x.shape[0] - 1):
        total = total + np.sum(x[i : i + 2, 0] * w[:2]) * y[i, 0]
    return total


def inputs_minibatch_losses():
    rng = np.random.default_rng(0)
    return rng.normal(size=(3, 2)), rng.normal(size=(12, 3)), rng.normal(size=(12, 2))


def inputs_batches_by_count():
    rng = np.random.default_rng(1)
    return rng.normal(size=(3, 2)), rng.normal(size=(9, 3)), rng.normal(size=(9, 2))


def inputs_conv1d_valid():
    rng = np.random.default_rng(2)
    return rng.normal(size=3), rng.normal(size=10)


def inputs_patches_2d():
    rng = np.random.default_rng(3)
    return rng.normal(size=(2, 2)), rng.normal(size=(4, 5))


def inputs_window_then_index():
    rng = np.random.default_rng(4)
    return rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=(5, 3))


def lag_features(coef, series, n_lags=3):
    """h40: lagged copies ``series[n_lags - lag:len(series) - lag]``, both bounds moving with the loop's
    counter, the width ``len(series) - n_lags`` a number (the counter cancels); the gradient's backward
    loop reads that width as the forward one computed it."""
    cols = []
    for lag in range(1, n_lags + 1):
        cols.append(series[n_lags - lag : len(series) - lag])
    X = np.stack(cols, axis=1)
    return np.sum((X @ coef - series[n_lags:]) ** 2)


def inputs_lag_features():
    return np.array([0.2, 0.3, 0.5]), np.sin(np.arange(8.0))


PROGRAMS = [
    "minibatch_losses",
    "batches_by_count",
    "conv1d_valid",
    "patches_2d",
    "window_then_index",
    "lag_features",
]


def last_batch_short(w, x):
    """NumPy cuts the last batch short (10 rows in batches of 4): a compiled window cannot."""
    total = 0.0
    for i in range(0, 10, 4):
        total = total + np.sum(x[i : i + 4] @ w)
    return total


def traced_width(w, x):
    total = 0.0
    for i in range(1, 3):
        total = total + np.sum(x[i : 2 * i] @ w)
    return total


def list_slice_at_a_name(params, x):
    """A Python list sliced at a start held in a name: Python's slice of its items."""
    i = 1
    total = 0.0
    for W in params[i : i + 2]:
        total = total + np.sum(np.tanh(x @ W))
    return total


def inputs_list_slice_at_a_name():
    rng = np.random.default_rng(7)
    return [rng.normal(size=(3, 3)) for _ in range(3)], rng.normal(size=(2, 3))


PROGRAMS += ["list_slice_at_a_name"]


def list_slice_in_a_compiled_loop(params, x):
    total = 0.0
    for i in range(2):
        pair = params[i : i + 2]
        total = total + np.sum(x @ pair[0]) * np.sum(pair[1])
    return total


def banded_operator(x, w):
    """A banded matrix written a window per row, ``D[i, i:i + 3] = stencil``: a write into a window."""
    n = x.shape[0]
    D = np.zeros((n - 2, n))
    for i in range(n - 2):
        D[i, i : i + 3] = w * np.array([1.0, -2.0, 1.0])
    return np.sum((D @ x) ** 2)


def overlap_add(x, kernel):
    """Overlap-add, ``y[i:i + k] += x[i] * kernel``: an update of a window."""
    k = kernel.shape[0]
    y = np.zeros(x.shape[0] + k - 1)
    for i in range(x.shape[0]):
        y[i : i + k] += x[i] * kernel
    return np.sum(np.tanh(y) ** 2)


def inputs_banded_operator():
    return np.random.default_rng(12).normal(size=6), 0.7


def inputs_overlap_add():
    r = np.random.default_rng(13)
    return r.normal(size=5), r.normal(size=3)


PROGRAMS += ["banded_operator", "overlap_add"]


def _dilated_conv(X, W, stride, dilation=0):
    """numpy-ml's ``conv1D`` with dilation: the filter's width grown where it is known, then a window per
    output read with the dilation's step (``X[i0:i1:(d + 1)]``, the step a helper's argument).
    """
    s, d = stride, dilation
    fw = W.shape[0]
    fw = fw * (d + 1) - d  # effective filter width with dilation
    l_out = int((X.shape[0] - fw) / s + 1)
    Z = np.zeros(l_out)
    for i in range(l_out):
        i0, i1 = i * s, (i * s) + fw
        window = X[i0 : i1 : (d + 1)]
        Z[i] = np.sum(window * W)
    return Z


def dilated_conv(W, x):
    return np.sum(np.tanh(_dilated_conv(x, W, 2, dilation=1)) ** 2)


def inputs_dilated_conv():
    r = np.random.default_rng(14)
    return r.normal(size=3), r.normal(size=11)


PROGRAMS += ["dilated_conv"]
