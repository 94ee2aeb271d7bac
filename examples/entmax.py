"""Entmax-alpha: a sparse softmax, forward by bisection in a Python loop, backward by ``custom_vjp``.

Peters, Niculae and Martins (2019), "Sparse Sequence-to-Sequence Models",
https://arxiv.org/abs/1905.05702. For ``alpha > 1``,

    entmax(z)_i = [(alpha - 1) z_i - tau]_+ ** (1 / (alpha - 1))

with the threshold ``tau`` such that the entries sum to 1. ``entmax_bisect``
finds ``tau`` by bisection, an ordinary ``for`` loop with an ``if`` in it: s2s
compiles it to one rolled ``rt.scan`` over an ``rt.cond``.

The backward pass is the paper's closed form rather than the derivative of
50 bisection steps. Differentiating ``p_i = ((alpha - 1) z_i - tau)^(1/(alpha-1))``
gives ``dp_i = s_i (dz_i - dtau / (alpha - 1))`` with ``s_i = p_i^(2 - alpha)``
on the support (0 off it), and ``sum(dp) = 0`` fixes ``dtau``, so

    d entmax / dz = diag(s) - s s^T / sum(s)

(symmetric), and the cotangent of ``z`` for a cotangent ``g`` of the output is
``s g - s (s . g) / sum(s)``. At ``alpha = 2`` (``s`` is the support's
indicator) this is sparsemax's Jacobian, and as ``alpha -> 1`` (``s = p``)
softmax's. The checks: central finite differences (float64), sparsemax at
``alpha = 2`` (the Euclidean projection onto the simplex, computed by sorting)
and softmax at ``alpha = 1.001``, values and gradients; the gradients of the
two references are s2s's own, derived from their NumPy code.

Run ``python examples/entmax.py`` (or ``... numpy``).
"""

import functools
import sys

import numpy as np

import s2s


def entmax_bisect(z, alpha, n_iter=50):
    x = (alpha - 1) * z
    x_max = np.max(x)
    tau_lo = x_max - 1  # the largest entry alone is 1: the sum is >= 1
    # every entry is <= 1/n: the sum is <= 1
    tau_hi = x_max - (1 / z.shape[0]) ** (alpha - 1)
    for _ in range(n_iter):
        tau = (tau_lo + tau_hi) / 2
        p = np.maximum(x - tau, 0) ** (1 / (alpha - 1))
        if np.sum(p) >= 1:
            tau_lo = tau
        else:
            tau_hi = tau
    p = np.maximum(x - tau_lo, 0) ** (1 / (alpha - 1))
    return p / np.sum(p)


@functools.partial(s2s.custom_vjp, nondiff_argnums=(1,))
def entmax(z, alpha):
    return entmax_bisect(z, alpha)


def entmax_fwd(z, alpha):
    p = entmax_bisect(z, alpha)
    return p, p  # the output, and the residual the backward pass reads


def entmax_bwd(alpha, p, g):
    s = np.where(p > 0, p ** (2 - alpha), 0.0)
    return (s * g - s * np.sum(s * g) / np.sum(s),)


entmax.defvjp(entmax_fwd, entmax_bwd)


def sparsemax(z):
    """The Euclidean projection of ``z`` onto the probability simplex (Martins and Astudillo, 2016)."""
    z_sorted = z[np.argsort(-z)]
    cumsum = np.cumsum(z_sorted) - 1
    support_size = np.sum(z_sorted - cumsum / np.arange(1, z.shape[0] + 1) > 0)
    tau = cumsum[support_size - 1] / support_size
    return np.maximum(z - tau, 0)


def softmax(z):
    e = np.exp(z - np.max(z))
    return e / np.sum(e)


# Scalar projections w . f(z): their gradients with respect to z are the vector-Jacobian products J^T w.
def weighted_entmax(z, w, alpha):
    return np.sum(w * entmax(z, alpha))


def weighted_sparsemax(z, w):
    return np.sum(w * sparsemax(z))


def weighted_softmax(z, w):
    return np.sum(w * softmax(z))


def finite_differences(f, z, *args, eps=1e-6):
    """Central differences of ``f(z, *args)`` with respect to ``z``."""
    return np.array(
        [
            (f(z + eps * e, *args) - f(z - eps * e, *args)) / (2 * eps)
            for e in np.eye(z.shape[0])
        ]
    )


def main(backend="xla"):
    import jax

    # float64 under XLA too, for the finite differences
    jax.config.update("jax_enable_x64", True)

    rng = np.random.default_rng(0)
    z, w = rng.standard_normal(6), rng.standard_normal(6)
    entmax_value = s2s.transform(entmax_bisect, backend=backend)
    entmax_grad = s2s.grad(weighted_entmax, backend=backend)
    sparsemax_grad = s2s.grad(weighted_sparsemax, backend=backend)
    softmax_grad = s2s.grad(weighted_softmax, backend=backend)
    for transformed in (entmax_grad, sparsemax_grad, softmax_grad):
        print(transformed.source)

    results = {}
    for alpha in (1.25, 1.5, 2.0):
        p, grad = entmax_value(z, alpha), entmax_grad(z, w, alpha)
        fd = finite_differences(weighted_entmax, z, w, alpha)  # eager NumPy, float64
        print(
            f"alpha = {alpha}: entmax {np.round(p, 4)}\n  grad {np.round(grad, 6)}\n  fd   {np.round(fd, 6)}"
        )
        np.testing.assert_allclose(np.sum(p), 1.0, rtol=1e-12)
        np.testing.assert_allclose(grad, fd, atol=1e-7)
        results[alpha] = {"p": p, "grad": grad, "fd": fd}

    # alpha = 2 is sparsemax (value and gradient)
    print("sparsemax     ", np.round(sparsemax(z), 4))
    np.testing.assert_allclose(results[2.0]["p"], sparsemax(z), atol=1e-12)
    np.testing.assert_allclose(results[2.0]["grad"], sparsemax_grad(z, w), atol=1e-10)

    # alpha -> 1 is softmax: at alpha = 1.001 they differ by O(alpha - 1)
    p, grad = entmax_value(z, 1.001), entmax_grad(z, w, 1.001)
    print("entmax(1.001) ", np.round(p, 4))
    print("softmax       ", np.round(softmax(z), 4))
    np.testing.assert_allclose(p, softmax(z), atol=1e-3)
    np.testing.assert_allclose(grad, softmax_grad(z, w), atol=1e-3)
    results[1.001] = {"p": p, "grad": grad}
    return results


if __name__ == "__main__":
    main(*sys.argv[1:])
