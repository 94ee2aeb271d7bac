"""Matrix factorizations and the ``numpy.linalg`` functions built on them; matrix powers; ``scipy.linalg``'s
triangular solves.

A factorization with several outputs (``eigh``, ``svd``, ``qr``, ``slogdet``)
is a composition of one-output ops, one per factor (``rt.eigh_values``,
``rt.eigh_vectors``, ...), each with JAX's forward rule and its transpose as
the reverse rule, written with ops that have rules (so second derivatives
exist). All act on the last two axes and map over leading ones. As in JAX,
``eigh`` differentiates the symmetric part of its input, ``svd`` needs
``full_matrices=False`` unless the matrix is square, and ``qr`` needs
``m >= n`` in ``reduced`` mode; eigenvector and singular-vector derivatives
are infinite where eigenvalues (singular values) repeat.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import batch, decompose, jvp, nondiff, vjp

# --- eigh: a = v diag(w) v^T for the symmetric part of a; F[i, j] = 1 / (w[j] - w[i]), 0 on the diagonal


@vjp(name="rt.eigh_values")
def eigh_values(a, *, ans, g):
    v = rt.eigh_vectors(a)
    full = xp.matmul(v * xp.expand_dims(g, -2), xp.matrix_transpose(v))
    return 0.5 * (full + xp.matrix_transpose(full))


@jvp(eigh_values)
def eigh_values_forward(a, *, ans, a_dot):
    v = rt.eigh_vectors(a)
    symmetric = 0.5 * (a_dot + xp.matrix_transpose(a_dot))
    return xp.sum(v * xp.matmul(symmetric, v), axis=-2)


@vjp(name="rt.eigh_vectors")
def eigh_vectors(a, *, ans, g):
    w = rt.eigh_values(a)
    eye = rt.square_eye(w)
    gaps = xp.reciprocal(eye + xp.expand_dims(w, -2) - xp.expand_dims(w, -1)) - eye
    inner = gaps * xp.matmul(xp.matrix_transpose(ans), g)
    full = xp.matmul(ans, xp.matmul(inner, xp.matrix_transpose(ans)))
    return 0.5 * (full + xp.matrix_transpose(full))


@jvp(eigh_vectors)
def eigh_vectors_forward(a, *, ans, a_dot):
    w = rt.eigh_values(a)
    eye = rt.square_eye(w)
    gaps = xp.reciprocal(eye + xp.expand_dims(w, -2) - xp.expand_dims(w, -1)) - eye
    symmetric = 0.5 * (a_dot + xp.matrix_transpose(a_dot))
    rotated = xp.matmul(xp.matrix_transpose(ans), xp.matmul(symmetric, ans))
    return xp.matmul(ans, gaps * rotated)


@decompose(name="linalg.eigh")
def eigh(a, UPLO="L", symmetrize_input=True):
    return rt.eigh_values(a), rt.eigh_vectors(a)


@decompose(name="linalg.eigvalsh")
def eigvalsh(a, UPLO="L", symmetrize_input=True):
    return rt.eigh_values(a)


# --- svd (thin): a = u diag(s) vh; F[i, j] = 1 / (s[j]**2 - s[i]**2), 0 on the diagonal


@vjp(name="rt.svd_values")
def svd_values(a, *, ans, g):
    return xp.matmul(rt.svd_u(a, False) * xp.expand_dims(g, -2), rt.svd_vh(a, False))


@jvp(svd_values)
def svd_values_forward(a, *, ans, a_dot):
    u = rt.svd_u(a, False)
    v = xp.matrix_transpose(rt.svd_vh(a, False))
    return xp.sum(u * xp.matmul(a_dot, v), axis=-2)


@vjp(name="rt.svd_u")
def svd_u(a, full_matrices=True, *, ans, g):
    checked = xp.reshape(g, rt.svd_rule_shape(g, a, full_matrices))
    s = rt.svd_values(a)
    vh = rt.svd_vh(a, False)
    eye = rt.square_eye(s)
    gaps = (
        xp.reciprocal(
            eye + xp.square(xp.expand_dims(s, -2)) - xp.square(xp.expand_dims(s, -1))
        )
        - eye
    )
    x = gaps * xp.matmul(xp.matrix_transpose(ans), checked)
    core = xp.matmul(
        ans, xp.matmul((x + xp.matrix_transpose(x)) * xp.expand_dims(s, -2), vh)
    )
    # the part of the cotangent outside u's columns (a tall a): zero when u is square
    outside = checked - xp.matmul(ans, xp.matmul(xp.matrix_transpose(ans), checked))
    total = core + xp.matmul(outside / xp.expand_dims(s, -2), vh)
    return total


@jvp(svd_u)
def svd_u_forward(a, full_matrices=True, *, ans, a_dot):
    checked_dot = xp.reshape(a_dot, rt.svd_rule_shape(a_dot, a, full_matrices))
    s = rt.svd_values(a)
    v = xp.matrix_transpose(rt.svd_vh(a, False))
    eye = rt.square_eye(s)
    gaps = (
        xp.reciprocal(
            eye + xp.square(xp.expand_dims(s, -2)) - xp.square(xp.expand_dims(s, -1))
        )
        - eye
    )
    a_dot_v = xp.matmul(checked_dot, v)
    scaled = xp.matmul(xp.matrix_transpose(ans), a_dot_v) * xp.expand_dims(s, -2)
    inside = xp.matmul(ans, gaps * (scaled + xp.matrix_transpose(scaled)))
    outside = a_dot_v - xp.matmul(ans, xp.matmul(xp.matrix_transpose(ans), a_dot_v))
    total = inside + outside / xp.expand_dims(s, -2)
    return total


@vjp(name="rt.svd_vh")
def svd_vh(a, full_matrices=True, *, ans, g):
    checked = xp.reshape(g, rt.svd_rule_shape(g, a, full_matrices))
    s = rt.svd_values(a)
    u = rt.svd_u(a, False)
    eye = rt.square_eye(s)
    gaps = (
        xp.reciprocal(
            eye + xp.square(xp.expand_dims(s, -2)) - xp.square(xp.expand_dims(s, -1))
        )
        - eye
    )
    y = gaps * xp.matmul(ans, xp.matrix_transpose(checked))
    core = xp.matmul(
        u, xp.matmul(xp.expand_dims(s, -1) * (y + xp.matrix_transpose(y)), ans)
    )
    # the part of the cotangent outside vh's rows (a wide a): zero when vh is square
    outside = checked - xp.matmul(xp.matmul(checked, xp.matrix_transpose(ans)), ans)
    total = core + xp.matmul(u / xp.expand_dims(s, -2), outside)
    return total


@jvp(svd_vh)
def svd_vh_forward(a, full_matrices=True, *, ans, a_dot):
    checked_dot = xp.reshape(a_dot, rt.svd_rule_shape(a_dot, a, full_matrices))
    s = rt.svd_values(a)
    u = rt.svd_u(a, False)
    v = xp.matrix_transpose(ans)
    eye = rt.square_eye(s)
    gaps = (
        xp.reciprocal(
            eye + xp.square(xp.expand_dims(s, -2)) - xp.square(xp.expand_dims(s, -1))
        )
        - eye
    )
    a_dot_t_u = xp.matmul(xp.matrix_transpose(checked_dot), u)
    scaled = xp.expand_dims(s, -1) * xp.matmul(
        xp.matrix_transpose(u), xp.matmul(checked_dot, v)
    )
    inside = xp.matmul(v, gaps * (scaled + xp.matrix_transpose(scaled)))
    outside = a_dot_t_u - xp.matmul(v, xp.matmul(ans, a_dot_t_u))
    total = xp.matrix_transpose(inside + outside / xp.expand_dims(s, -2))
    return total


@decompose(name="linalg.svd")
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    if not compute_uv:
        return rt.svd_values(a)
    return rt.svd_u(a, full_matrices), rt.svd_values(a), rt.svd_vh(a, full_matrices)


@decompose(name="linalg.svdvals")
def svdvals(x):
    return rt.svd_values(x)


# --- qr (reduced, m >= n): C = q^T a_dot r^-1, do = tril(C, -1) - its transpose; W in the reverse rules


@vjp(name="rt.qr_q")
def qr_q(a, mode="reduced", *, ans, g):
    checked = xp.reshape(g, rt.qr_rule_shape(g, a, mode))
    r = rt.qr_r(a, mode)
    w = xp.matmul(xp.matrix_transpose(ans), checked)
    inner = checked + xp.matmul(ans, xp.tril(w - xp.matrix_transpose(w), -1) - w)
    total = xp.matrix_transpose(xp.linalg.solve(r, xp.matrix_transpose(inner)))
    return total


@jvp(qr_q)
def qr_q_forward(a, mode="reduced", *, ans, a_dot):
    checked_dot = xp.reshape(a_dot, rt.qr_rule_shape(a_dot, a, mode))
    r = rt.qr_r(a, mode)
    b = xp.matrix_transpose(
        xp.linalg.solve(xp.matrix_transpose(r), xp.matrix_transpose(checked_dot))
    )
    c = xp.matmul(xp.matrix_transpose(ans), b)
    skew = xp.tril(c, -1) - xp.matrix_transpose(xp.tril(c, -1))
    return xp.matmul(ans, skew - c) + b


@vjp(name="rt.qr_r")
def qr_r(a, mode="reduced", *, ans, g):
    checked = xp.reshape(g, rt.qr_rule_shape(g, a, mode))
    q = rt.qr_q(a, mode)
    w = -xp.matmul(checked, xp.matrix_transpose(ans))
    inner = xp.matmul(q, xp.tril(w - xp.matrix_transpose(w), -1) - w)
    total = xp.matrix_transpose(xp.linalg.solve(ans, xp.matrix_transpose(inner)))
    return total


@jvp(qr_r)
def qr_r_forward(a, mode="reduced", *, ans, a_dot):
    checked_dot = xp.reshape(a_dot, rt.qr_rule_shape(a_dot, a, mode))
    q = rt.qr_q(a, mode)
    b = xp.matrix_transpose(
        xp.linalg.solve(xp.matrix_transpose(ans), xp.matrix_transpose(checked_dot))
    )
    c = xp.matmul(xp.matrix_transpose(q), b)
    skew = xp.tril(c, -1) - xp.matrix_transpose(xp.tril(c, -1))
    return xp.matmul(c - skew, ans)


@decompose(name="linalg.qr")
def qr(a, mode="reduced"):
    if mode == "r":
        return rt.qr_r(a, mode)
    return rt.qr_q(a, mode), rt.qr_r(a, mode)


# --- determinants, pseudo-inverse, least squares


@vjp(name="rt.logabsdet")
def logabsdet(a, *, ans, g):
    return xp.expand_dims(g, (-2, -1)) * xp.matrix_transpose(xp.linalg.inv(a))


@jvp(logabsdet)
def logabsdet_forward(a, *, ans, a_dot):
    return xp.trace(xp.linalg.solve(a, a_dot), axis1=-2, axis2=-1)


nondiff("the sign of a determinant: piecewise constant", "rt.slogdet_sign")
nondiff("integer-valued", "linalg.matrix_rank")
nondiff(
    "constants and static checks of the rules",
    "rt.square_eye",
    "rt.svd_rule_shape",
    "rt.qr_rule_shape",
)
batch("example", "rt.square_eye", "rt.svd_rule_shape", "rt.qr_rule_shape")


@decompose(name="linalg.slogdet")
def slogdet(a):
    return rt.slogdet_sign(a), rt.logabsdet(a)


@decompose(name="rt.adjugate")
def adjugate(a):
    # adj(a) = det(vh) vh^T diag(prod of the other singular values) det(u) u^T, finite where a is singular
    s = rt.svd_values(a)
    ones = xp.ones_like(s[..., :1])
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(
        xp.cumprod(
            xp.concatenate([ones, xp.flip(s[..., 1:], axis=-1)], axis=-1), axis=-1
        ),
        axis=-1,
    )
    u, vh = rt.svd_u(a, True), rt.svd_vh(a, True)
    sign = rt.slogdet_sign(u) * rt.slogdet_sign(vh)
    scaled = xp.matrix_transpose(vh) * xp.expand_dims(before * after, -2)
    return xp.expand_dims(sign, (-2, -1)) * xp.matmul(scaled, xp.matrix_transpose(u))


@vjp(name="linalg.pinv")
def pinv(a, rcond=None, hermitian=False, *, rtol=None, ans, g):
    # d pinv = -P da P + P P^T da^T (I - A P) + (I - P A) da^T P^T P, transposed
    return (
        -xp.matmul(xp.matrix_transpose(ans), xp.matmul(g, xp.matrix_transpose(ans)))
        + xp.matmul(
            xp.matrix_transpose(g)
            - xp.matmul(a, xp.matmul(ans, xp.matrix_transpose(g))),
            xp.matmul(ans, xp.matrix_transpose(ans)),
        )
        + xp.matmul(
            xp.matmul(xp.matrix_transpose(ans), ans),
            xp.matrix_transpose(g)
            - xp.matmul(xp.matmul(xp.matrix_transpose(g), ans), a),
        )
    )


@jvp(pinv)
def pinv_forward(a, rcond=None, hermitian=False, *, rtol=None, ans, a_dot):
    p_t = xp.matrix_transpose(ans)
    a_dot_t = xp.matrix_transpose(a_dot)
    first = -xp.matmul(ans, xp.matmul(a_dot, ans))
    second = xp.matmul(
        xp.matmul(ans, p_t), a_dot_t - xp.matmul(xp.matmul(a_dot_t, a), ans)
    )
    third = xp.matmul(
        a_dot_t - xp.matmul(ans, xp.matmul(a, a_dot_t)), xp.matmul(p_t, ans)
    )
    return first + second + third


@decompose(name="linalg.lstsq")
def lstsq(a, b, rcond=None):
    # the cutoff of small singular values, relative to the largest, as lstsq's own
    x = xp.matmul(xp.linalg.pinv(a, rcond), b)
    # one per column of ``b``: shape (1,) for a vector, as NumPy's and JAX's
    residuals = xp.reshape(xp.sum(xp.square(b - xp.matmul(a, x)), axis=0), (-1,))
    return x, residuals, xp.linalg.matrix_rank(a), rt.svd_values(a)


@decompose(name="linalg.cond")
def cond(x, p=None):
    if p is None:
        s = rt.svd_values(x)
        return s[..., 0] / s[..., -1]
    return xp.linalg.norm(x, p, axis=(-2, -1)) * xp.linalg.norm(
        xp.linalg.inv(x), p, axis=(-2, -1)
    )


# --- matrix_power: the derivative of X -> X**n in direction G is the upper-right block of
# [[X, G], [0, X]] ** n (any integer n); its transpose is the same at X^T


@vjp(name="linalg.matrix_power")
def matrix_power(a, n, *, ans, g):
    return xp.split(
        xp.split(
            xp.linalg.matrix_power(
                xp.concatenate(
                    [
                        xp.concatenate([xp.matrix_transpose(a), g], axis=-1),
                        xp.concatenate(
                            [xp.zeros_like(a), xp.matrix_transpose(a)], axis=-1
                        ),
                    ],
                    axis=-2,
                ),
                n,
            ),
            2,
            axis=-2,
        )[0],
        2,
        axis=-1,
    )[1]


@jvp(matrix_power)
def matrix_power_forward(a, n, *, ans, a_dot):
    block = xp.concatenate(
        [
            xp.concatenate([a, a_dot], axis=-1),
            xp.concatenate([xp.zeros_like(a), a], axis=-1),
        ],
        axis=-2,
    )
    return xp.split(
        xp.split(xp.linalg.matrix_power(block, n), 2, axis=-2)[0], 2, axis=-1
    )[1]


# --- scipy.linalg's triangular solves: ``solve`` of the triangle (its derivative stays in the triangle, as JAX's)


@decompose(name="rt.solve_triangular")
def solve_triangular(
    a,
    b,
    trans=0,
    lower=False,
    unit_diagonal=False,
    overwrite_b=False,
    check_finite=True,
):
    if lower:
        triangle = xp.tril(a)
        if unit_diagonal:
            triangle = xp.tril(a, -1) + rt.square_eye(a)
    else:
        triangle = xp.triu(a)
        if unit_diagonal:
            triangle = xp.triu(a, 1) + rt.square_eye(a)
    if trans == 1 or trans == "T":
        triangle = xp.matrix_transpose(triangle)
    return xp.linalg.solve(triangle, b)


@decompose(name="rt.scipy_cholesky")
def scipy_cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    # scipy's factor is the upper one unless ``lower`` (NumPy's is the lower one)
    factor = xp.linalg.cholesky(a)
    if not lower:
        factor = xp.matrix_transpose(factor)
    return factor


@decompose(name="rt.cho_factor")
def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    # the Cholesky factor on the side ``lower`` says, and the flag (JAX's: the other triangle zero)
    factor = xp.linalg.cholesky(a)
    if not lower:
        factor = xp.matrix_transpose(factor)
    return factor, lower


@decompose(name="rt.cho_solve")
def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    # the factor's triangle times its transpose, on the side the flag says (a literal, or a value: both)
    if c_and_lower[1] is True:
        gram = xp.matmul(
            xp.tril(c_and_lower[0]), xp.matrix_transpose(xp.tril(c_and_lower[0]))
        )
    elif c_and_lower[1] is False:
        gram = xp.matmul(
            xp.matrix_transpose(xp.triu(c_and_lower[0])), xp.triu(c_and_lower[0])
        )
    else:
        lower = xp.matmul(
            xp.tril(c_and_lower[0]), xp.matrix_transpose(xp.tril(c_and_lower[0]))
        )
        upper = xp.matmul(
            xp.matrix_transpose(xp.triu(c_and_lower[0])), xp.triu(c_and_lower[0])
        )
        gram = xp.where(c_and_lower[1], lower, upper)
    return xp.linalg.solve(gram, b)


batch(
    "trailing",
    "rt.eigh_values",
    "rt.eigh_vectors",
    "rt.svd_values",
    "rt.svd_u",
    "rt.svd_vh",
    "rt.qr_q",
    "rt.qr_r",
    "rt.logabsdet",
    "rt.slogdet_sign",
    "linalg.pinv",
    "linalg.matrix_rank",
    "linalg.matrix_power",
)
