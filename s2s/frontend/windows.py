"""Slices of a fixed width whose start the code computes: ``x[i:i + k]``, ``x[i * b:(i + 1) * b]``.

Inside a compiled loop the index ``i`` is traced, and JAX refuses slice
bounds that are not Python ints. The width is often known, though: ``subscript``
reads each bound as a sum of products of names and integers, subtracts, and
where the start holds a name and the difference simplifies, the slice is
``rt.window(x, start, width, axis)`` (``runtime/slicing.py``): NumPy's slice
when the start is known, ``jax.lax``'s window, checked to lie inside the
axis, when it is traced. Other index entries (``:``, an integer, a name) are
applied to the window after it, with ``:`` in the window's place.

A width that is itself traced (``x[i:2 * i]``) is a located error when the
code runs. A slice with a step, or bounds of other forms, is left as it is.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from ..cstutil import call

_Poly = Counter  # monomial (a sorted tuple of atom codes) -> integer coefficient


def _poly(node, code) -> _Poly | None:
    """``node`` as a sum of integer multiples of products of atoms (names, attributes, subscripts)."""
    if isinstance(node, cst.Integer):
        return Counter({(): int(node.evaluated_value)})
    if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
        return Counter({(code(node),): 1})
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _poly(node.expression, code)
        return None if inner is None else _scaled(inner, -1)
    if isinstance(node, cst.BinaryOperation):
        left, right = _poly(node.left, code), _poly(node.right, code)
        if left is None or right is None:
            return None
        if isinstance(node.operator, cst.Add):
            return _added(left, right, 1)
        if isinstance(node.operator, cst.Subtract):
            return _added(left, right, -1)
        if isinstance(node.operator, cst.Multiply):
            out = Counter()
            for ma, ca in left.items():
                for mb, cb in right.items():
                    out[tuple(sorted(ma + mb))] += ca * cb
            return out
    return None


def _scaled(p: _Poly, k: int) -> _Poly:
    return Counter({m: c * k for m, c in p.items()})


def _added(a: _Poly, b: _Poly, sign: int) -> _Poly:
    out = Counter(a)
    for m, c in b.items():
        out[m] += sign * c
    return out


def _width(lower, upper, code) -> cst.BaseExpression | None:
    """``upper - lower``, simplified, where ``lower`` holds a name and both are sums of products; else None."""
    low, high = _poly(lower, code), _poly(upper, code)
    if low is None or high is None or not any(m for m, c in low.items() if c):
        return None
    diff = {m: c for m, c in _added(high, low, -1).items() if c}
    terms = []
    for monomial, coefficient in sorted(diff.items()):
        factors = [cst.parse_expression(a) for a in monomial]
        if coefficient != 1 or not factors:
            factors.insert(0, cst.Integer(str(abs(coefficient))))
        term = factors[0]
        for f in factors[1:]:
            term = cst.BinaryOperation(term, cst.Multiply(), f)
        terms.append((coefficient < 0, term))
    if not terms:
        return cst.Integer("0")
    negative, out = terms[0]
    out = cst.UnaryOperation(cst.Minus(), out) if negative else out
    for negative, term in terms[1:]:
        out = cst.BinaryOperation(out, cst.Subtract() if negative else cst.Add(), term)
    return out


def _is_window(s, code):
    return (
        isinstance(s, cst.Slice)
        and s.step is None
        and s.lower is not None
        and s.upper is not None
        and _width(s.lower, s.upper, code) is not None
    )


def subscript(resolver, node: cst.Subscript) -> cst.BaseExpression | None:
    """``node`` read through ``rt.window`` where it holds slices of known width at computed starts."""
    code = resolver.source.file.module.code_for_node
    elements = list(node.slice)
    windows = [k for k, e in enumerate(elements) if _is_window(e.slice, code)]
    if not windows:
        return None
    plain = (cst.Index, cst.Slice)
    if any(
        not isinstance(e.slice, plain)
        or (
            isinstance(e.slice, cst.Index)
            and not isinstance(
                e.slice.value, (cst.Integer, cst.Name, cst.UnaryOperation)
            )
        )
        for e in elements
    ):
        return None  # an ellipsis, a new axis or an index array: axes s2s cannot count here
    starts = [resolver.expr(elements[k].slice.lower) for k in windows]
    widths = [
        resolver.expr(_width(elements[k].slice.lower, elements[k].slice.upper, code))
        for k in windows
    ]
    one = len(windows) == 1
    args = [
        resolver.expr(node.value),
        starts[0] if one else cst.Tuple([cst.Element(s) for s in starts]),
        widths[0] if one else cst.Tuple([cst.Element(w) for w in widths]),
    ]
    if windows != [0]:  # the first axis by default
        axes = [cst.Element(cst.Integer(str(k))) for k in windows]
        args.append(axes[0].value if one else cst.Tuple(axes))
    value = call("rt.window", *args)
    rest = [
        e.with_changes(slice=cst.Slice(None, None)) if k in windows else e
        for k, e in enumerate(elements)
    ]
    if all(isinstance(e.slice, cst.Slice) and e.slice.lower is None and e.slice.upper is None
           for e in rest):  # fmt: skip
        return resolver.mark(value, node)
    indexed = cst.Subscript(
        value, [e.with_changes(slice=resolver._slice(e.slice)) for e in rest]
    )
    return resolver.mark(indexed, node)
