"""Cotangents of contractions (matmul, einsum, tensordot) for any ranks."""

import numpy as np

from .arrays import namespace, unbroadcast


def matmul_vjp_lhs(g, x1, x2):
    """Cotangent of ``x1`` in ``x1 @ x2`` (NumPy matmul semantics, 1-D operands included)."""
    xp = namespace(g, x1, x2)
    if np.ndim(x2) == 1:
        grad = xp.expand_dims(g, -1) * x2
    elif np.ndim(x1) == 1:
        grad = xp.matmul(xp.expand_dims(g, -2), xp.swapaxes(x2, -1, -2))
        grad = xp.squeeze(grad, -2)
    else:
        grad = xp.matmul(g, xp.swapaxes(x2, -1, -2))
    return unbroadcast(grad, x1)


def matmul_vjp_rhs(g, x1, x2):
    """Cotangent of ``x2`` in ``x1 @ x2`` (NumPy matmul semantics, 1-D operands included)."""
    xp = namespace(g, x1, x2)
    if np.ndim(x1) == 1:
        grad = xp.expand_dims(x1, -1) * xp.expand_dims(g, -2)
        if np.ndim(x2) == 1:
            grad = x1 * g
    elif np.ndim(x2) == 1:
        grad = xp.matmul(xp.swapaxes(x1, -1, -2), xp.expand_dims(g, -1))
        grad = xp.squeeze(grad, -1)
    else:
        grad = xp.matmul(xp.swapaxes(x1, -1, -2), g)
    return unbroadcast(grad, x2)


def _parse_subscripts(subscripts, operands):
    inputs, _, output = subscripts.replace(" ", "").partition("->")
    specs = inputs.split(",")
    if "..." in subscripts:
        ndims = [np.ndim(op) for op in operands]
        n_ell = max(nd - len(s.replace("...", "")) for s, nd in zip(specs, ndims))
        letters = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in subscripts][:n_ell]
        specs = [
            s.replace("...", "".join(letters[n_ell - (nd - len(s.replace("...", ""))) :]))
            for s, nd in zip(specs, ndims)
        ]
        if output:
            output = output.replace("...", "".join(letters))
    if not _:
        counts = {}
        for c in "".join(specs):
            counts[c] = counts.get(c, 0) + 1
        ell = "".join(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c in counts)
        output = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c.islower()))
    return specs, output


def einsum_vjp(g, subscripts, operands, index):
    """Cotangent of ``operands[index]`` in ``einsum(subscripts, *operands)``."""
    xp = namespace(g, *operands)
    specs, output = _parse_subscripts(subscripts, operands)
    target = specs[index]
    others = [op for i, op in enumerate(operands) if i != index]
    other_specs = [s for i, s in enumerate(specs) if i != index]
    # Letters of the target that appear nowhere else are summed out in the
    # forward pass; their cotangent is a broadcast, done below by ones.
    known = set(output).union(*other_specs) if other_specs else set(output)
    free = [c for c in dict.fromkeys(target) if c not in known]
    shape = np.shape(operands[index])
    ones = [xp.ones(shape[target.index(c)], dtype=g.dtype if hasattr(g, "dtype") else float) for c in free]
    unique = "".join(dict.fromkeys(target))
    spec = ",".join([output, *other_specs, *free]) + "->" + unique
    grad = xp.einsum(spec, g, *others, *ones)
    if unique != target:  # repeated letters (a diagonal): scatter back onto it
        grad = _undiagonal(xp, grad, unique, target, shape)
    return grad


def _undiagonal(xp, grad, unique, target, shape):
    eye_terms = []
    letters = list(unique)
    full = target
    for c in dict.fromkeys(target):
        positions = [i for i, t in enumerate(target) if t == c]
        for extra in positions[1:]:
            eye_terms.append((c, extra))
    spec_in = unique
    operands = [grad]
    specs = [spec_in]
    out_letters = list(target)
    fresh = iter(c for c in "abcdefghijklmnopqrstuvwxyz" if c not in target)
    for c, pos in eye_terms:
        new = next(fresh)
        out_letters[pos] = new
        operands.append(xp.eye(shape[pos], dtype=grad.dtype))
        specs.append(c + new)
    del letters, full
    return xp.einsum(",".join(specs) + "->" + "".join(out_letters), *operands)


def tensordot_vjp(g, a, b, axes, index):
    """Cotangent of ``a`` (index 0) or ``b`` (index 1) in ``tensordot(a, b, axes)``."""
    xp = namespace(g, a, b)
    na, nb = np.ndim(a), np.ndim(b)
    if isinstance(axes, int):
        a_axes, b_axes = list(range(na - axes, na)), list(range(axes))
    else:
        a_axes, b_axes = ([axes[0]] if np.ndim(axes[0]) == 0 else list(axes[0])), (
            [axes[1]] if np.ndim(axes[1]) == 0 else list(axes[1])
        )
        a_axes = [x % na for x in a_axes]
        b_axes = [x % nb for x in b_axes]
    a_free = [i for i in range(na) if i not in a_axes]
    b_free = [i for i in range(nb) if i not in b_axes]
    g_a = list(range(len(a_free)))
    g_b = list(range(len(a_free), len(a_free) + len(b_free)))
    if index == 0:
        out = xp.tensordot(g, b, (g_b, b_free))
        order = a_free + a_axes
        return xp.transpose(out, np.argsort(order))
    out = xp.tensordot(a, g, (a_free, g_a))
    order = b_axes + b_free
    return xp.transpose(out, np.argsort(order))
