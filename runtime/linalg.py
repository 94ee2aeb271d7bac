"""Cotangents of contractions (matmul, dot, inner, einsum, tensordot) and linear algebra (norm, solve)."""

import numpy as np

from .arrays import namespace, reduced_like, unbroadcast


def matmul_vjp_lhs(g, x1, x2):
    """Cotangent of ``x1`` in ``x1 @ x2`` (NumPy matmul semantics, 1-D operands included)."""
    xp = namespace(g, x1, x2)
    if np.ndim(x2) == 1:
        grad = xp.expand_dims(g, -1) * x2
    elif np.ndim(x1) == 1:
        grad = xp.squeeze(xp.matmul(xp.expand_dims(g, -2), xp.swapaxes(x2, -1, -2)), -2)
    elif np.ndim(x1) == np.ndim(x2) == 2:
        grad = xp.tensordot(g, x2, axes=(1, 1))  # one contraction, no transposed copy of x2
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
        grad = xp.tensordot(x1, g, axes=(0, 0))  # one contraction, no transposed copy of x1
    else:
        grad = xp.matmul(xp.swapaxes(x1, -1, -2), g)
    return unbroadcast(grad, x2)


def tensordot_vjp(g, a, b, axes, index):
    """Cotangent of ``a`` (index 0) or ``b`` (index 1) in ``tensordot(a, b, axes)``."""
    xp = namespace(g, a, b)
    na, nb = np.ndim(a), np.ndim(b)
    if np.ndim(axes) == 0:
        a_axes, b_axes = list(range(na - int(axes), na)), list(range(int(axes)))
    else:
        a_axes, b_axes = ([int(x)] if np.ndim(x) == 0 else [int(i) for i in x] for x in axes)
        a_axes = [x % na for x in a_axes]
        b_axes = [x % nb for x in b_axes]
    a_free = [i for i in range(na) if i not in a_axes]
    b_free = [i for i in range(nb) if i not in b_axes]
    g_a = list(range(len(a_free)))
    g_b = list(range(len(a_free), len(a_free) + len(b_free)))
    if index == 0:
        out = xp.tensordot(g, b, (g_b, b_free))  # axes: a_free, then b's contracted axes in b's order
        order = a_free + [a_axes[b_axes.index(j)] for j in sorted(b_axes)]
    else:
        out = xp.tensordot(a, g, (a_free, g_a))  # axes: a's contracted axes in a's order, then b_free
        order = [b_axes[a_axes.index(i)] for i in sorted(a_axes)] + b_free
    return xp.transpose(out, tuple(int(i) for i in np.argsort(order)))


def _scalar_product_vjp(g, a, b, index):
    """Cotangent in ``a * b`` (what dot and inner do when an operand is 0-d)."""
    return unbroadcast(g * b, a) if index == 0 else unbroadcast(g * a, b)


def dot_vjp(g, a, b, index):
    """Cotangent of ``a`` (index 0) or ``b`` (index 1) in ``dot(a, b)``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _scalar_product_vjp(g, a, b, index)
    return tensordot_vjp(g, a, b, ([-1], [0 if np.ndim(b) == 1 else -2]), index)


def inner_vjp(g, a, b, index):
    """Cotangent of ``a`` (index 0) or ``b`` (index 1) in ``inner(a, b)``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _scalar_product_vjp(g, a, b, index)
    return tensordot_vjp(g, a, b, ([-1], [-1]), index)


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
        ranks = [np.ndim(op) - len(s.replace("...", "")) for s, op in zip(specs, operands)]
        fresh = [c for c in _LETTERS if c not in subscripts][: max(ranks)]
        specs = [s.replace("...", "".join(fresh[len(fresh) - r :]) if r else "") for s, r in zip(specs, ranks)]
        output = output.replace("...", "".join(fresh))
    return specs, output


def einsum_vjp(g, subscripts, operands):
    """Cotangents (a list, one per operand) of ``einsum(subscripts, *operands)``.

    Handles ellipses (with size-1 broadcasting), implicit output and repeated
    letters within an operand (diagonals, traces).
    """
    specs, output = _parse_subscripts(subscripts, operands)
    return [_einsum_operand_vjp(g, specs, output, operands, i) for i in range(len(operands))]


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
    grad = xp.einsum(",".join([output, *other_specs, *alone]) + "->" + unique, g, *others, *ones)
    if unique != target:  # repeated letters: write the diagonal back with identity matrices
        fresh = iter(c for c in _LETTERS if c not in "".join(specs) + output)
        out, eyes, eye_specs = [], [], []
        for pos, c in enumerate(target):
            if c in target[:pos]:
                new = next(fresh)
                eyes.append(xp.eye(sizes[c], dtype=grad.dtype))
                eye_specs.append(c + new)
                c = new
            out.append(c)
        grad = xp.einsum(",".join([unique, *eye_specs]) + "->" + "".join(out), grad, *eyes)
    summed = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(grad)[i] != 1)
    if summed:  # size-1 dims that broadcast in the forward pass
        grad = xp.sum(grad, axis=summed, keepdims=True)
    return grad


def _sign(x):
    """``d|x|/dx`` as JAX has it: +1 at 0."""
    xp = namespace(x)
    return xp.where(x >= 0, 1.0, -1.0)


def _share(xp, values, best, axes):
    """Indicator of ``values == best`` over ``axes``, divided by the number of ties (JAX's convention)."""
    mask = values == best
    return mask / xp.sum(mask, axis=axes, keepdims=True)


def _initial_tie(xp, best, ord):
    """JAX computes max-based norms as ``max(..., initial=0)``: a zero maximum ties with the initial value, which takes half."""
    return xp.where(best == 0, 0.5, 1.0) if ord > 0 else 1.0


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
        return g * _sign(x) * _share(xp, sums, best, (across,)) * _initial_tie(xp, best, ord)
    if ord in (2, -2, "nuc"):
        u, _, vh = xp.linalg.svd(xp.moveaxis(x, (rows, cols), (-2, -1)), full_matrices=False)
        if ord == 2:
            u, vh = u[..., :, :1], vh[..., :1, :]
        elif ord == -2:
            u, vh = u[..., :, -1:], vh[..., -1:, :]
        return g * xp.moveaxis(xp.matmul(u, vh), (-2, -1), (rows, cols))
    raise NotImplementedError(f"derivative of linalg.norm with ord={ord!r}")


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
