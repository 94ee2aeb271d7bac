"""One factor of a matrix factorization each (``s2s/rules/spectral.py`` gives their rules), and the static
checks of JAX's limits on differentiating them. All act on the last two axes and map over leading ones.
"""

import numpy as np

from .arrays import namespace
from .library import library
from .located import Refusal


def _symmetric(xp, a):
    # JAX's eigh reads the symmetric part of its input (NumPy reads one triangle): the same for symmetric a
    return (a + xp.swapaxes(a, -1, -2)) / 2


def eigh_values(a):
    xp = namespace(a)
    return xp.linalg.eigh(_symmetric(xp, a))[0]


def eigh_vectors(a):
    xp = namespace(a)
    return xp.linalg.eigh(_symmetric(xp, a))[1]


def svd_values(a):
    xp = namespace(a)
    return xp.linalg.svd(a, compute_uv=False)


def svd_u(a, full_matrices=True):
    xp = namespace(a)
    return xp.linalg.svd(a, full_matrices=full_matrices)[0]


def svd_vh(a, full_matrices=True):
    xp = namespace(a)
    return xp.linalg.svd(a, full_matrices=full_matrices)[2]


def qr_q(a, mode="reduced"):
    return namespace(a).linalg.qr(a, mode=mode)[0]


def qr_r(a, mode="reduced"):
    xp = namespace(a)
    return xp.linalg.qr(a, mode="r") if mode == "r" else xp.linalg.qr(a, mode=mode)[1]


def logabsdet(a):
    return namespace(a).linalg.slogdet(a)[1]


def slogdet_sign(a):
    return namespace(a).linalg.slogdet(a)[0]


def adjugate(a):
    """The adjugate of square matrices ``a`` (``det(a) * inv(a)`` where ``a`` is invertible), from the SVD:
    finite where ``a`` is singular. The derivative of ``det`` (``rules/spectral.py``, whose ``adjugate``
    is the same formula, differentiated)."""
    xp = namespace(a)
    u, s, vh = xp.linalg.svd(a)
    ones = xp.ones_like(s[..., :1])
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(
        xp.cumprod(xp.concatenate([ones, xp.flip(s[..., 1:], -1)], axis=-1), axis=-1),
        -1,
    )
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    scaled = xp.swapaxes(vh, -1, -2) * (before * after)[..., None, :]
    return sign[..., None, None] * xp.matmul(scaled, xp.swapaxes(u, -1, -2))


def square_eye(v):
    """The identity matrix as large as ``v``'s last axis, in ``v``'s dtype (a constant of the rules)."""
    n = np.shape(v)[-1]
    return np.eye(n, dtype=np.result_type(getattr(v, "dtype", float), np.float32))


def svd_rule_shape(like, a, full_matrices):
    """``like``'s shape (a cotangent's or tangent's, checked before the rule uses it), once ``a``'s SVD is one
    JAX differentiates: thin, or full of a square matrix."""
    m, n = np.shape(a)[-2:]
    if full_matrices and m != n:
        raise Refusal(
            f"the derivative of np.linalg.svd with full_matrices=True of a {m}x{n} matrix (JAX has none "
            "either)",
            "pass full_matrices=False: the thin factors have a derivative",
        )
    return tuple(np.shape(like))


def qr_rule_shape(like, a, mode):
    """``like``'s shape (a cotangent's or tangent's, checked before the rule uses it), once ``a``'s QR is one
    JAX differentiates: ``reduced`` (or ``r``) with m >= n."""
    m, n = np.shape(a)[-2:]
    if m < n or (mode == "complete" and m != n):
        raise Refusal(
            f"the derivative of np.linalg.qr(mode={mode!r}) of a {m}x{n} matrix (JAX has none either)",
            "it exists for mode='reduced' with at least as many rows as columns: factor the transpose",
        )
    return tuple(np.shape(like))


@library("jax.scipy.linalg.solve_triangular")
def solve_triangular(
    a,
    b,
    trans=0,
    lower=False,
    unit_diagonal=False,
    overwrite_b=False,
    check_finite=True,
):
    import scipy.linalg

    return scipy.linalg.solve_triangular(
        a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal
    )


@library("jax.scipy.linalg.cho_solve")
def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    import scipy.linalg

    return scipy.linalg.cho_solve(c_and_lower, b)


@library("jax.scipy.linalg.cho_factor")
def scipy_cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy's ``cholesky``: the upper factor unless ``lower`` (NumPy's is the lower one)."""
    return cho_factor(a, lower)[0]


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """JAX's ``cho_factor``: the factor with the other triangle zero (SciPy leaves what was there)."""
    factor = np.linalg.cholesky(a)
    return (factor if lower else np.swapaxes(factor, -1, -2)), lower
