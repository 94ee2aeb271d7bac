"""Slices whose bounds a compiled loop computes (``passes/slice_masks.py``), as textbook NumPy writes them:
``U[i, i + 1:] @ x[i + 1:]``, ``A[i, k:] -= m * A[k, k:]``, ``np.sum(x[:i])``.

Each ``name`` has ``inputs_name()``; the first input is differentiated.
"""

import numpy as np


def back_substitution(U, b):
    """``U x = b`` for upper-triangular ``U``, a row at a time."""
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - U[i, i + 1 :] @ x[i + 1 :]) / U[i, i]
    return np.sum(x**3)


def gaussian_elimination(A, b):
    """Forward elimination without pivoting, then back substitution."""
    A = A.copy()
    b = b.copy()
    n = b.shape[0]
    for k in range(n - 1):
        for i in range(k + 1, n):
            m = A[i, k] / A[k, k]
            A[i, k:] -= m * A[k, k:]
            b[i] -= m * b[k]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - np.dot(A[i, i + 1 :], x[i + 1 :])) / A[i, i]
    return np.sum(x**2)


def cholesky_rows(A, y):
    """Cholesky by rows with dot products of row prefixes, then ``y^T A^-1 y`` by substitution."""
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        L[j, j] = np.sqrt(A[j, j] - np.dot(L[j, :j], L[j, :j]))
        for i in range(j + 1, n):
            L[i, j] = (A[i, j] - np.dot(L[i, :j], L[j, :j])) / L[j, j]
    z = np.zeros(n)
    for i in range(n):
        z[i] = (y[i] - L[i, :i] @ z[:i]) / L[i, i]
    return np.dot(z, z) + 2.0 * np.sum(np.log(np.diag(L)))


def prefix_statistics(x, w):
    """Reductions of a prefix and a suffix, and a write into the suffix, at every step."""
    x = x.copy()
    total = 0.0
    for i in range(x.shape[0]):
        total = total + w * np.sum(x[:i] ** 2) - np.max(x[i:]) + np.mean(np.tanh(x[i:]))
        x[i:] = x[i:] * 0.9
    return total


def worst_mean(x, scenarios, alpha=0.25):
    """The mean of the worst ``alpha`` share of losses: ``k`` from a float default (a constant, as under
    ``jax.jit``), then ``losses[-k:]``."""
    losses = np.sort(-(scenarios @ x))
    k = int(np.ceil(alpha * len(losses)))
    return losses[-k:].mean() + 0.1 * np.sum(x**2)


PROGRAMS = [
    "back_substitution",
    "gaussian_elimination",
    "cholesky_rows",
    "prefix_statistics",
    "worst_mean",
]


def inputs_back_substitution():
    r = np.random.default_rng(0)
    return np.triu(r.normal(size=(4, 4))) + 3 * np.eye(4), r.normal(size=4)


def inputs_gaussian_elimination():
    r = np.random.default_rng(1)
    return r.normal(size=(4, 4)) + 4 * np.eye(4), r.normal(size=4)


def inputs_cholesky_rows():
    r = np.random.default_rng(2)
    B = r.normal(size=(4, 4))
    return B @ B.T + 4 * np.eye(4), r.normal(size=4)


def inputs_prefix_statistics():
    return np.random.default_rng(3).normal(size=5), 0.7


def inputs_worst_mean():
    r = np.random.default_rng(4)
    return r.normal(size=3), r.normal(size=(8, 3))


def householder_columns(A):
    """Column slices below the diagonal, ``A[k:, k]``, reduced and written: a sketch of Householder QR."""
    A = A.copy()
    n = A.shape[1]
    total = 0.0
    for k in range(n):
        norm = np.sqrt(np.sum(A[k:, k] ** 2))
        total = total + norm
        A[k:, k] = A[k:, k] / norm
    return total + np.sum(A**2)


def inputs_householder_columns():
    return (np.random.default_rng(5).normal(size=(5, 3)),)


PROGRAMS += ["householder_columns"]


def gauss_seidel_compliance(b, A):
    """Gauss-Seidel sweeps under a convergence test: the sweep's residuals inside a ``while`` loop's."""
    n = len(b)
    x = np.zeros(n)
    it = 0
    res = np.inf
    while res > 1e-10 and it < 60:
        for i in range(n):
            x[i] = (b[i] - A[i, :i] @ x[:i] - A[i, i + 1 :] @ x[i + 1 :]) / A[i, i]
        res = np.linalg.norm(A @ x - b)
        it += 1
    return b @ x + 0.1 * np.sum(x**3)


def inputs_gauss_seidel_compliance():
    r = np.random.default_rng(6)
    M = r.normal(size=(4, 4))
    return r.normal(size=4), M @ M.T + 4 * np.eye(4)


PROGRAMS += ["gauss_seidel_compliance"]


def _strided_conv(x, w, stride=1, pad=1):
    """g33: offsets of a kernel, each a strided slice whose width the stride and output size give."""
    k = w.shape[0]
    xp = np.pad(x, pad)
    n_out = (x.shape[0] + 2 * pad - k) // stride + 1
    out = np.zeros(n_out)
    for i in range(k):
        out += w[i] * xp[i : i + stride * n_out : stride]
    return out


def strided_conv_per_example(w, xs):
    """The convolution of each example (a loop over them), twice strided: the width ``stride * n_out`` is
    a number every step of the backward loops knows, as the forward steps did."""
    total = 0.0
    for x in xs:
        h = np.tanh(_strided_conv(x, w))
        total += np.sum(h**2) + np.sum(_strided_conv(h, w, stride=2) ** 2)
    return total


def inputs_strided_conv_per_example():
    r = np.random.default_rng(8)
    return r.normal(size=3), r.normal(size=(2, 6))


PROGRAMS += ["strided_conv_per_example"]


def conv1d_windows_by_pairs(w, x, stride=1):
    """numpy-ml's ``conv1D_naive``: each window's bounds assigned as a pair, ``i0, i1 = i * s, i * s +
    fw``, the width read from the two names."""
    fw = w.shape[0]
    n_out = (x.shape[0] - fw) // stride + 1
    out = np.zeros(n_out)
    for i in range(n_out):
        i0, i1 = i * stride, i * stride + fw
        out[i] = np.sum(x[i0:i1] * w)
    return np.sum(np.tanh(out) ** 2)


def inputs_conv1d_windows_by_pairs():
    r = np.random.default_rng(9)
    return r.normal(size=3), r.normal(size=7)


PROGRAMS += ["conv1d_windows_by_pairs"]
