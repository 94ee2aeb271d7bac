"""Cotangents of contractions (matmul, dot, inner, einsum, tensordot) and linear algebra (norm, solve)."""

import numpy as np

from .arrays import namespace, reduced_like, unbroadcast, zeros_like_float


def matmul_vjp_lhs(g, x1, x2):
    """Cotangent of ``x1`` in ``x1 @ x2`` (NumPy matmul semantics, 1-D operands included)."""
    xp = namespace(g, x1, x2)
    if np.ndim(x2) == 1:
        grad = xp.expand_dims(g, -1) * x2
    elif np.ndim(x1) == 1:
        grad = xp.squeeze(xp.matmul(xp.expand_dims(g, -2), xp.swapaxes(x2, -1, -2)), -2)
    elif np.ndim(x1) == np.ndim(x2) == 2:
        # one contraction, no transposed copy of x2
        grad = xp.tensordot(g, x2, axes=(1, 1))
    else:
        grad = xp.matmul(g, xp.swapaxes(x2, -1, -2))
    return unbroadcast(grad, x1)


def matmul_vjp_rhs(g, x1, x2):
    """Cotangent of ``x2`` in ``x1 @ x2`` (NumPy matmul semantics, 1-D operands included)."""
    xp = namespace(g, x1, x2)
    if np.ndim(x1) == 1 and np.ndim(x2) == 1:
        grad = x1 * g
    elif np.ndim(x1) == 1:
        grad = xp.expand_dims(x1, -1) * xp.expand_dims(g, -2)
    elif np.ndim(x2) == 1:
        grad = xp.squeeze(xp.matmul(xp.swapaxes(x1, -1, -2), xp.expand_dims(g, -1)), -1)
    elif np.ndim(x1) == np.ndim(x2) == 2:
        # JAX's layout: batched (vmap), XLA fuses it
        grad = xp.transpose(xp.tensordot(g, x1, axes=(0, 0)))
    else:
        grad = xp.matmul(xp.swapaxes(x1, -1, -2), g)
    return unbroadcast(grad, x2)


def _tensordot_axes(a, b, axes):
    """``tensordot``'s ``axes`` as two lists of non-negative axes (contracted axes of ``a``, of ``b``)."""
    na, nb = np.ndim(a), np.ndim(b)
    if np.ndim(axes) == 0:
        return list(range(na - int(axes), na)), list(range(int(axes)))
    a_axes, b_axes = (
        [int(x)] if np.ndim(x) == 0 else [int(i) for i in x] for x in axes
    )
    return [x % na for x in a_axes], [x % nb for x in b_axes]


def _tensordot_vjp(g, a, b, axes, index):
    xp = namespace(g, a, b)
    na, nb = np.ndim(a), np.ndim(b)
    a_axes, b_axes = _tensordot_axes(a, b, axes)
    a_free = [i for i in range(na) if i not in a_axes]
    b_free = [i for i in range(nb) if i not in b_axes]
    g_a = list(range(len(a_free)))
    g_b = list(range(len(a_free), len(a_free) + len(b_free)))
    if index == 0:
        # axes: a_free, then b's contracted axes in b's order
        out = xp.tensordot(g, b, (g_b, b_free))
        order = a_free + [a_axes[b_axes.index(j)] for j in sorted(b_axes)]
    else:
        # axes: a's contracted axes in a's order, then b_free
        out = xp.tensordot(a, g, (a_free, g_a))
        order = [b_axes[a_axes.index(i)] for i in sorted(a_axes)] + b_free
    return xp.transpose(out, tuple(int(i) for i in np.argsort(order)))


def _scalar_product_vjp(g, a, b, index):
    """Cotangent in ``a * b`` (what dot and inner do when an operand is 0-d)."""
    return unbroadcast(g * b, a) if index == 0 else unbroadcast(g * a, b)


def _dot_axes(a, b):
    """``dot(a, b)`` as ``tensordot(a, b, axes)``; None when an operand is 0-d (a product)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return None
    return [-1], [0 if np.ndim(b) == 1 else -2]


def _inner_axes(a, b):
    """``inner(a, b)`` as ``tensordot(a, b, axes)``; None when an operand is 0-d (a product)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return None
    return [-1], [-1]


def _contraction_vjp(g, a, b, axes, index, on):
    """Cotangent of operand ``index`` in ``tensordot(a, b, axes)`` (a product if ``axes`` is None); zeros unless ``on``."""
    if not on:
        return zeros_like_float(a if index == 0 else b)
    if axes is None:
        return _scalar_product_vjp(g, a, b, index)
    return _tensordot_vjp(g, a, b, axes, index)


def _contraction_at(u, a, b, axes, index, on, like):
    """``tensordot(a, b, axes)`` (a product if ``axes`` is None) with operand ``index`` replaced by ``u``.

    Unless ``on``: zeros like ``like`` (the operands of a switched-off term
    need not fit), or shaped like the result when ``like`` is None.
    """
    xp = namespace(u, a, b)
    if not on and like is not None:
        return zeros_like_float(like)
    x0, x1 = (u, b) if index == 0 else (a, u)
    if axes is None:
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        return x0 * x1 if on else xp.zeros(shape, _float(xp, u))
    if not on:
        a_axes, b_axes = _tensordot_axes(a, b, axes)
        shape = [n for i, n in enumerate(np.shape(a)) if i not in a_axes]
        shape += [n for i, n in enumerate(np.shape(b)) if i not in b_axes]
        return xp.zeros(tuple(shape), _float(xp, u))
    return xp.tensordot(x0, x1, _tensordot_axes(a, b, axes))


def _float(xp, x):
    dtype = xp.asarray(x).dtype
    return dtype if xp.issubdtype(dtype, xp.inexact) else xp.result_type(float)


def tensordot_vjp(g, a, b, axes, index, on=1):
    """Cotangent of ``a`` (index 0) or ``b`` (index 1) in ``tensordot(a, b, axes)``; zeros of its shape unless ``on``.

    ``on`` is static: second-derivative rules switch off terms that only one ``index`` has.
    """
    return _contraction_vjp(g, a, b, axes, index, on)


def tensordot_at(u, a, b, axes, index, on=1, like=None):
    """``tensordot(a, b, axes)`` with operand ``index`` replaced by ``u`` (the transpose of ``tensordot_vjp`` in ``g``).

    Unless ``on``: zeros like ``like`` (the cotangent that ``tensordot_vjp`` took), or shaped like the result.
    """
    return _contraction_at(u, a, b, axes, index, on, like)


def dot_vjp(g, a, b, index, on=1):
    """Cotangent of ``a`` (index 0) or ``b`` (index 1) in ``dot(a, b)``; zeros of its shape unless ``on``."""
    return _contraction_vjp(g, a, b, _dot_axes(a, b), index, on)


def dot_at(u, a, b, index, on=1, like=None):
    """``dot(a, b)`` with operand ``index`` replaced by ``u`` (the transpose of ``dot_vjp`` in ``g``); unless ``on``, zeros like ``like``."""
    return _contraction_at(u, a, b, _dot_axes(a, b), index, on, like)


def inner_vjp(g, a, b, index, on=1):
    """Cotangent of ``a`` (index 0) or ``b`` (index 1) in ``inner(a, b)``; zeros of its shape unless ``on``."""
    return _contraction_vjp(g, a, b, _inner_axes(a, b), index, on)


def inner_at(u, a, b, index, on=1, like=None):
    """``inner(a, b)`` with operand ``index`` replaced by ``u`` (the transpose of ``inner_vjp`` in ``g``); unless ``on``, zeros like ``like``."""
    return _contraction_at(u, a, b, _inner_axes(a, b), index, on, like)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_subscripts(subscripts, operands):
    """Explicit input specs and output spec: ellipses replaced by fresh letters, implicit output made explicit."""
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    specs = inputs.split(",")
    if not arrow:  # implicit output: ellipsis dims, then letters seen once, sorted
        letters = [c for c in "".join(specs) if c != "."]
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    if "..." in inputs:
        ranks = [
            np.ndim(op) - len(s.replace("...", "")) for s, op in zip(specs, operands)
        ]
        fresh = [c for c in _LETTERS if c not in subscripts][: max(ranks)]
        specs = [
            s.replace("...", "".join(fresh[len(fresh) - r :]) if r else "")
            for s, r in zip(specs, ranks)
        ]
        output = output.replace("...", "".join(fresh))
    return specs, output


def einsum_vjp(g, subscripts, operands, extra=()):
    """Cotangents (a list, one per operand) of ``einsum(subscripts, *operands, *extra)``.

    Handles ellipses (with size-1 broadcasting), implicit output and repeated
    letters within an operand (diagonals, traces). ``extra`` operands are
    constants: they get no cotangent.
    """
    every = [*operands, *extra]
    specs, output = _parse_subscripts(subscripts, every)
    return [
        _einsum_operand_vjp(g, specs, output, every, i) for i in range(len(operands))
    ]


def _einsum_operand_vjp(g, specs, output, operands, index):
    xp = namespace(g, *operands)
    target = specs[index]
    shape = np.shape(operands[index])
    others = [op for i, op in enumerate(operands) if i != index]
    other_specs = [s for i, s in enumerate(specs) if i != index]
    sizes = {}
    for spec, op in zip(specs, operands):
        for c, n in zip(spec, np.shape(op)):
            sizes[c] = max(sizes.get(c, 1), n)
    # Letters found only in the target are summed out in the forward pass:
    # their cotangent is a broadcast, made by einsum with vectors of ones.
    known = set(output).union(*other_specs)
    unique = "".join(dict.fromkeys(target))
    alone = [c for c in unique if c not in known]
    ones = [xp.ones(sizes[c], dtype=g.dtype) for c in alone]
    grad = xp.einsum(
        ",".join([output, *other_specs, *alone]) + "->" + unique, g, *others, *ones
    )
    # repeated letters: write the diagonal back with identity matrices
    if unique != target:
        fresh = iter(c for c in _LETTERS if c not in "".join(specs) + output)
        out, eyes, eye_specs = [], [], []
        for pos, c in enumerate(target):
            if c in target[:pos]:
                new = next(fresh)
                eyes.append(xp.eye(sizes[c], dtype=grad.dtype))
                eye_specs.append(c + new)
                c = new
            out.append(c)
        grad = xp.einsum(
            ",".join([unique, *eye_specs]) + "->" + "".join(out), grad, *eyes
        )
    summed = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(grad)[i] != 1)
    if summed:  # size-1 dims that broadcast in the forward pass
        grad = xp.sum(grad, axis=summed, keepdims=True)
    return grad


def _sign(x):
    """``d|x|/dx`` as JAX has it: +1 at 0 (in ``x``'s float dtype)."""
    xp = namespace(x)
    return xp.where(x >= 0, 1.0, -1.0).astype(_float(xp, x))


def _share(xp, values, best, axes):
    """Indicator of ``values == best`` over ``axes``, divided by the number of ties (JAX's convention)."""
    mask = values == best
    return (mask / xp.sum(mask, axis=axes, keepdims=True)).astype(_float(xp, values))


def _initial_tie(xp, best, ord):
    """JAX computes max-based norms as ``max(..., initial=0)``: a zero maximum ties with the initial value, which takes half."""
    return xp.where(best == 0, 0.5, 1.0).astype(_float(xp, best)) if ord > 0 else 1.0


def norm_vjp(g, x, ans, ord=None, axis=None, keepdims=False):
    """Cotangent of ``x`` in ``linalg.norm(x, ord, axis, keepdims)``.

    Vector norms: ord None, 2, 1, inf, -inf, 0 and any other number; matrix
    norms: None, 'fro', 1, -1, inf, -inf, 2, -2, 'nuc' (2, -2 and 'nuc' assume
    distinct singular values). As in JAX, the 2-norm's gradient at 0 is nan.
    """
    xp = namespace(g, x, ans)
    ndim = np.ndim(x)
    axes = _normalize_norm_axes(axis, ndim, ord)
    g = reduced_like(g, x, axes, keepdims)
    best = reduced_like(ans, x, axes, keepdims)
    if ord is None or ord == "fro" or (ord == 2 and len(axes) == 1):
        return g * x / best
    if len(axes) == 1:
        if ord == 0:
            return xp.zeros_like(g * x)
        if ord in (np.inf, -np.inf):
            share = _share(xp, xp.abs(x), best, axes)
            return g * _sign(x) * share * _initial_tie(xp, best, ord)
        if ord == 1:
            return g * _sign(x)
        return g * _sign(x) * xp.abs(x) ** (ord - 1) * best ** (1 - ord)
    rows, cols = axes
    if ord in (1, -1, np.inf, -np.inf):
        summed, across = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = xp.sum(xp.abs(x), axis=summed, keepdims=True)
        return (
            g
            * _sign(x)
            * _share(xp, sums, best, (across,))
            * _initial_tie(xp, best, ord)
        )
    if ord in (2, -2, "nuc"):
        u, _, vh = xp.linalg.svd(
            xp.moveaxis(x, (rows, cols), (-2, -1)), full_matrices=False
        )
        if ord == 2:
            u, vh = u[..., :, :1], vh[..., :1, :]
        elif ord == -2:
            u, vh = u[..., :, -1:], vh[..., -1:, :]
        return g * xp.moveaxis(xp.matmul(u, vh), (-2, -1), (rows, cols))
    from .located import Refusal

    raise Refusal(
        f"the derivative of linalg.norm with ord={ord!r}",
        "use ord=None, 1, 2, np.inf, -np.inf, 'fro' or 'nuc', or write the norm out",
    )


def norm_axes(x, ord=None, axis=None):
    """The axes ``linalg.norm(x, ord, axis)`` reduces, as a tuple."""
    return _normalize_norm_axes(axis, np.ndim(x), ord)


def _normalize_norm_axes(axis, ndim, ord):
    if axis is None:
        if ord is None:
            return tuple(range(ndim))
        return (0,) if ndim == 1 else (0, 1)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % ndim for a in axes)


def _solve_cotangent(g, a, b):
    """Cotangent of ``b`` in ``linalg.solve(a, b)`` before summing broadcast dims (b 1-D: a vector)."""
    xp = namespace(g, a, b)
    at = xp.swapaxes(a, -1, -2)
    if np.ndim(b) == 1:
        return xp.linalg.solve(at, xp.expand_dims(g, -1))[..., 0]
    return xp.linalg.solve(at, g)


def solve_vjp_b(g, a, b):
    """Cotangent of ``b`` in ``x = linalg.solve(a, b)`` (NumPy 2 semantics: b is a vector iff 1-D)."""
    return unbroadcast(_solve_cotangent(g, a, b), b)


def solve_vjp_a(g, a, b, ans):
    """Cotangent of ``a`` in ``ans = linalg.solve(a, b)``: ``-solve(a.T, g) @ ans.T``."""
    xp = namespace(g, a, b, ans)
    b_bar = _solve_cotangent(g, a, b)
    if np.ndim(b) == 1:
        grad = -xp.expand_dims(b_bar, -1) * xp.expand_dims(ans, -2)
    else:
        grad = -xp.matmul(b_bar, xp.swapaxes(ans, -1, -2))
    return unbroadcast(grad, a)


def solve_jvp_a(a_dot, a, b, ans):
    """Tangent of ``ans = linalg.solve(a, b)`` for a tangent ``a_dot`` of ``a``: ``-solve(a, a_dot @ ans)``."""
    xp = namespace(a_dot, a, b, ans)
    if np.ndim(b) == 1:  # ans is a (batch of) vector(s)
        return -xp.linalg.solve(a, xp.matmul(a_dot, xp.expand_dims(ans, -1)))[..., 0]
    return -xp.linalg.solve(a, xp.matmul(a_dot, ans))


# --- second derivatives of einsum: a sum over operands, each replaced in turn, is one einsum ---------
#
# ``sum_i einsum(s, ops with op_i replaced by u_i)`` is one einsum of the pairs
# ``stack([op_i, u_i])`` (a fresh letter z_i each) and a constant selector
# ``W[z_1, ..., z_n] = 1`` where exactly one z_i is 1. So the derivatives of
# ``einsum_vjp`` are ``einsum_vjp`` and ``einsum_list`` again, on pairs.


def einsum_list(subscripts, operands, extra=()):
    """``einsum(subscripts, *operands, *extra)``: operands as a list; ``extra`` operands are constants."""
    return namespace(*operands, *extra).einsum(subscripts, *operands, *extra)


def einsum_pairs(operands, others):
    """``[stack([op, other]) for each operand]``: what ``einsum_pairs_subscripts`` contracts."""
    xp = namespace(*operands, *others)
    return [
        xp.stack([op, zeros_like_float(op) if other is None else other])
        for op, other in zip(operands, others)
    ]


def einsum_unpairs(pairs, which):
    """``[pair[which] for pair in pairs]``: the transpose of ``einsum_pairs`` for one of its arguments."""
    return [pair[which] for pair in pairs]


def einsum_pair_slot(values, which):
    """Pairs with ``values`` in slot ``which`` and zeros in the other: the transpose of ``einsum_unpairs``."""
    xp = namespace(*values)
    return [
        xp.stack([v, zeros_like_float(v)] if which == 0 else [zeros_like_float(v), v])
        for v in values
    ]


def einsum_pairs_subscripts(subscripts, operands, extra=()):
    """The subscripts of ``sum_i einsum(subscripts, ops[i := u_i], *extra)`` over ``einsum_pairs(ops, u)``, extra, selector."""
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    specs = inputs.split(",")
    # NumPy's implicit output: ellipsis dims, then the letters seen once, sorted
    if not arrow:
        letters = [c for c in inputs if c.isalpha()]
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1)
        )
    fresh = [c for c in _LETTERS if c not in subscripts][: len(operands)]
    paired = [z + spec for z, spec in zip(fresh, specs)]
    return ",".join([*paired, *specs[len(operands) :], "".join(fresh)]) + "->" + output


def einsum_selector(operands, extra=()):
    """``[*extra, W]``: ``W`` (one axis of size 2 per operand) is 1 where exactly one index is 1."""
    xp = namespace(*operands, *extra)
    n = len(operands)
    w = (np.indices((2,) * n).sum(axis=0) == 1).astype(float)
    return [*extra, xp.asarray(w, dtype=_float(xp, operands[0]))]


# --- second derivatives of linalg.norm -------------------------------------------------------


def _norm_power(ord, axes):
    """``p`` for the norms ``(sum |x|**p)**(1/p)`` (None, 'fro', 2 on vectors, other numbers on vectors but 0, 1, +-inf),
    None for the piecewise-linear ones and those computed from singular values."""
    if ord is None or ord == "fro":
        return 2.0
    if (
        len(axes) == 1
        and not isinstance(ord, str)
        and ord not in (0, 1, np.inf, -np.inf)
    ):
        return float(ord)
    return None


def _falling(start, k):
    """``start * (start - 1) * ... * (start - k + 1)``."""
    return float(np.prod([start - i for i in range(k)]))


def norm_partial(g, x, norm, ord=None, axis=None, keepdims=False, dx=0, dnorm=0):
    """A partial derivative of ``norm_vjp(g, x, norm, ...)`` for the smooth p-norms, elementwise in ``x``.

    There ``norm_vjp`` is ``g * sign(x) * |x|**(p-1) * norm**(1-p)`` (``g`` and
    ``norm`` broadcast back over the reduced axes): this is its ``dx``-th
    derivative in ``x`` (elementwise) and ``dnorm``-th in ``norm``. Zeros for
    the other ords (piecewise linear: no curvature; singular values: see
    ``norm_hvp``).
    """
    xp = namespace(g, x, norm)
    axes = _normalize_norm_axes(axis, np.ndim(x), ord)
    p = _norm_power(ord, axes)
    coefficient = 0.0 if p is None else _falling(p - 1, dx) * _falling(1 - p, dnorm)
    if coefficient == 0:
        return xp.zeros_like(x * reduced_like(g * norm, x, axes, keepdims))
    sign = _sign(x) if dx % 2 == 0 else 1.0
    best = reduced_like(norm, x, axes, keepdims)
    return (
        coefficient
        * reduced_like(g, x, axes, keepdims)
        * sign
        * xp.abs(x) ** (p - 1 - dx)
        * best ** (1 - p - dnorm)
    )


def _svd_factors_jvp(a, da):
    """``u, s, vh`` of the thin SVD of ``a`` and the tangents ``du, dv`` of ``u`` and ``v = vh^T`` (JAX's formulas)."""
    xp = namespace(a, da)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    v = xp.swapaxes(vh, -1, -2)
    k = np.shape(s)[-1]
    p = xp.swapaxes(u, -1, -2) @ da @ v
    s_row = s[..., None, :]
    eye = xp.eye(k, dtype=s.dtype)
    f = (
        1
        / (
            (s_row + xp.swapaxes(s_row, -1, -2)) * (s_row - xp.swapaxes(s_row, -1, -2))
            + eye
        )
        - eye
    )
    ps = p * s_row
    sp = xp.swapaxes(s_row, -1, -2) * p
    du = u @ (f * (ps + xp.swapaxes(ps, -1, -2)))
    dv = v @ (f * (sp + xp.swapaxes(sp, -1, -2)))
    m, n = np.shape(a)[-2:]
    if m > n:
        dav = da @ v
        du = du + (dav - u @ (xp.swapaxes(u, -1, -2) @ dav)) / s_row
    if n > m:
        dau = xp.swapaxes(da, -1, -2) @ u
        dv = dv + (dau - v @ (vh @ dau)) / s_row
    return u, v, du, dv


def norm_hvp(g, x, norm, v, ord=None, axis=None, keepdims=False):
    """The derivative of ``norm_vjp(g, x, norm, ...)`` in ``x`` (``norm`` held) along ``v``: symmetric in ``v``.

    Elementwise for the p-norms (``norm_partial``); for the matrix norms 2, -2
    and 'nuc', the Hessian of ``sum(g * linalg.norm(x, ...))`` applied to ``v``
    (distinct singular values assumed, as JAX does); zeros for the others.
    """
    xp = namespace(g, x, v)
    axes = _normalize_norm_axes(axis, np.ndim(x), ord)
    if len(axes) != 2 or ord not in (2, -2, "nuc"):
        return norm_partial(g, x, norm, ord, axis, keepdims, 1, 0) * v
    rows, cols = axes
    u, vm, du, dv = _svd_factors_jvp(
        xp.moveaxis(x, (rows, cols), (-2, -1)), xp.moveaxis(v, (rows, cols), (-2, -1))
    )
    if ord != "nuc":
        keep = slice(0, 1) if ord == 2 else slice(-1, None)
        u, vm, du, dv = (t[..., keep] for t in (u, vm, du, dv))
    d_polar = du @ xp.swapaxes(vm, -1, -2) + u @ xp.swapaxes(dv, -1, -2)
    return reduced_like(g, x, axes, keepdims) * xp.moveaxis(
        d_polar, (-2, -1), (rows, cols)
    )


def norm_svd_third(g, x, v, w, ord=None, axis=None, keepdims=False):
    """The part of ``norm_hvp(g, x, norm, v, ...)``'s derivative in ``x`` along ``w`` that ``norm_partial`` leaves out:
    zeros, but for the norms of singular values, whose third derivatives are not computed (an error).
    """
    xp = namespace(g, x, v, w)
    axes = _normalize_norm_axes(axis, np.ndim(x), ord)
    if len(axes) == 2 and ord in (2, -2, "nuc"):
        from .located import Refusal

        raise Refusal(
            f"third derivatives of linalg.norm with ord={ord!r} (singular values)",
            "s2s differentiates it twice; write the norm from np.linalg.svd for more",
        )
    return xp.zeros_like(v * w * reduced_like(g, x, axes, keepdims))


# --- second derivatives of linalg.solve: solves and products with NumPy 2's vector convention ------
#
# In ``linalg.solve(a, b)``, ``b`` is a vector (a batch of them) iff it is 1-D.
# These three helpers keep that convention (``b`` is read for its rank only)
# and are closed under differentiation: the rules of solve's cotangent
# helpers are written with them.


def _vectors(b) -> bool:
    return np.ndim(b) == 1


def solve_like(a, v, b):
    """``linalg.solve(a, v)``, ``v`` a (batch of) vector(s) iff ``b`` is 1-D."""
    xp = namespace(a, v)
    if _vectors(b):
        return xp.linalg.solve(a, xp.expand_dims(v, -1))[..., 0]
    return xp.linalg.solve(a, v)


def solve_matvec(m, v, b):
    """``m @ v``, ``v`` a (batch of) vector(s) iff ``b`` is 1-D."""
    xp = namespace(m, v)
    if _vectors(b):
        return xp.matmul(m, xp.expand_dims(v, -1))[..., 0]
    return xp.matmul(m, v)


def solve_outer(u, v, b):
    """``u @ v^T`` (``u``, ``v`` (batches of) vectors iff ``b`` is 1-D: their outer product): ``m``'s cotangent in ``m @ v``."""
    xp = namespace(u, v)
    if _vectors(b):
        return xp.expand_dims(u, -1) * xp.expand_dims(v, -2)
    return xp.matmul(u, xp.swapaxes(v, -1, -2))


# --- convolve: its transpose is a correlation of the cotangent padded to the full convolution -------


def convolve_window(n, m, mode):
    """Where ``convolve``'s ``mode`` window starts in the full convolution of lengths ``n`` and ``m``, and how
    long it is (NumPy's: 'same' is centered, as long as the longer operand)."""
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":
        return (min(n, m) - 1) // 2, max(n, m)
    if mode == "valid":
        return min(n, m) - 1, max(n, m) - min(n, m) + 1
    raise ValueError(f"convolve: mode must be 'full', 'same' or 'valid', not {mode!r}")


def convolve_padding(a, v, mode="full"):
    """The ``pad_width`` that puts the cotangent of ``convolve(a, v, mode)`` back in the full convolution."""
    n, m = int(np.shape(a)[-1]), int(np.shape(v)[-1])
    start, length = convolve_window(n, m, mode)
    return (start, n + m - 1 - start - length)
