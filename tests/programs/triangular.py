"""Loops whose range an enclosing loop's index bounds (``passes/bounded_ranges.py``, ``rt.range(within=)``),
as textbook NumPy writes them: pairs ``j > i``, triangular factorizations, substitutions.

Each ``name`` has ``inputs_name()``; the first input is differentiated.
"""

import numpy as np


def pair_energy(pos, charges):
    """Softened Coulomb energy over the pairs ``i < j``."""
    n = pos.shape[0]
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r = pos[i] - pos[j]
            energy += charges[i] * charges[j] / np.sqrt(np.dot(r, r) + 0.1)
    return energy


def cholesky_logdet(A, y):
    """Cholesky-Banachiewicz by hand, then ``log det A`` and a solve by forward substitution."""
    n = A.shape[0]
    L = np.zeros_like(A)
    for i in range(n):
        for j in range(i + 1):
            s = 0.0
            for k in range(j):
                s += L[i, k] * L[j, k]
            if i == j:
                L[i, j] = np.sqrt(A[i, i] - s)
            else:
                L[i, j] = (A[i, j] - s) / L[j, j]
    z = np.zeros(n)
    for i in range(n):
        t = y[i]
        for k in range(i):
            t = t - L[i, k] * z[k]
        z[i] = t / L[i, i]
    return 2.0 * np.sum(np.log(np.diag(L))) + np.dot(z, z)


def back_substitution(U, b):
    """``U x = b`` for upper-triangular ``U``, last row first."""
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s = s - U[i, j] * x[j]
        x[i] = s / U[i, i]
    return np.sum(x**2)


def gram_schmidt_loss(W, X):
    """Classical Gram-Schmidt on the columns of ``W``, then a reconstruction error."""
    Q = np.zeros_like(W)
    for j in range(W.shape[1]):
        v = W[:, j].copy()
        for i in range(j):
            v -= np.dot(Q[:, i], W[:, j]) * Q[:, i]
        Q[:, j] = v / np.linalg.norm(v)
    R = X - (X @ Q) @ Q.T
    return np.mean(R**2)


def lower_triangle_products(X):
    """``enumerate`` over the rows, an inner loop up to the row's number, by steps of 2."""
    total = 0.0
    for i, row in enumerate(X):
        for j in range(0, i, 2):
            total += row[j] * X[j, i]
    return total


def shrinking_windows(x, w):
    """The inner count set through a name: ``m = n - i``."""
    n = x.shape[0]
    total = 0.0
    for i in range(n):
        m = n - i
        acc = 0.0
        for j in range(m):
            acc = acc + w * x[j] * x[j + i]
        total = total + np.tanh(acc)
    return total


PROGRAMS = [
    "pair_energy",
    "cholesky_logdet",
    "back_substitution",
    "gram_schmidt_loss",
    "lower_triangle_products",
    "shrinking_windows",
]


def inputs_pair_energy():
    r = np.random.default_rng(0)
    return r.normal(size=(5, 3)), r.uniform(0.5, 1.5, size=5)


def inputs_cholesky_logdet():
    r = np.random.default_rng(1)
    B = r.normal(size=(4, 4))
    return B @ B.T + 4 * np.eye(4), r.normal(size=4)


def inputs_back_substitution():
    r = np.random.default_rng(2)
    return np.triu(r.normal(size=(4, 4))) + 3 * np.eye(4), r.normal(size=4)


def inputs_gram_schmidt_loss():
    r = np.random.default_rng(3)
    return r.normal(size=(5, 3)), r.normal(size=(6, 5))


def inputs_lower_triangle_products():
    return (np.random.default_rng(4).normal(size=(5, 5)),)


def inputs_shrinking_windows():
    return np.random.default_rng(5).normal(size=5), 0.7
