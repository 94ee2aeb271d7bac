"""Slices of a fixed width whose start the code computes: ``x[i:i + k]``, ``x[i * b:(i + 1) * b]``.

Inside a compiled loop the index ``i`` is traced, and JAX refuses slice
bounds that are not Python ints. The width is often known, though: ``subscript``
reads each bound as a sum of products of names, ``len(...)`` and integers, subtracts, and
where the start holds a name and the difference simplifies, the slice is
``rt.window(x, start, width, axis)`` (``runtime/slicing.py``): NumPy's slice
when the start is known, ``jax.lax``'s window, checked to lie inside the
axis, when it is traced. Other index entries (``:``, an integer, a name) are
applied to the window after it, with ``:`` in the window's place.

A bound may be a name the function binds once (``y_max = y + stride * out_h``:
``img[:, y:y_max:stride]`` is a window of width ``stride * out_h``, every
``stride``-th element of it kept after). A width that reads a loop's
counter (``x[i:2 * i]``) is no window: its bounds are the compiled code's
(``passes/slice_masks.py``); another width that is traced is a located
error when the code runs. Bounds of other forms are left as they are.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from .. import ir
from ..cstutil import call, dotted, iter_nodes, names_in
from .rewriting import bindings, named_value

# the index expressions generated code and NumPy spell as subscripts of a maker
INDEX_MAKERS = ("xp.s_", "np.s_", "numpy.s_", "jnp.s_", "np.index_exp")
_Poly = Counter  # monomial (a sorted tuple of atom codes) -> integer coefficient


def _poly(node, code, defs=None, depth=0) -> _Poly | None:
    """``node`` as a sum of integer multiples of products of atoms (names, attributes, subscripts); a
    name in ``defs`` (bound once, ``y_max = y + stride * out_h``) as the expression it is bound to.
    """
    defs = defs or {}
    if isinstance(node, cst.Integer):
        return Counter({(): int(node.evaluated_value)})
    if isinstance(node, cst.Name) and node.value in defs and depth < 4:
        found = _poly(defs[node.value], code, defs, depth + 1)
        if found is not None:
            return found
    if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)) or (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "len"
        and len(node.args) == 1
        and not node.args[0].star
    ):  # (``len(x)``: a size, one atom, as ``x.shape[0]`` is)
        return Counter({(code(node),): 1})
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _poly(node.expression, code, defs, depth)
        return None if inner is None else _scaled(inner, -1)
    if isinstance(node, cst.BinaryOperation):
        left = _poly(node.left, code, defs, depth)
        right = _poly(node.right, code, defs, depth)
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


def _width(lower, upper, code, defs=None) -> cst.BaseExpression | None:
    """``upper - lower``, simplified, where ``lower`` holds a name and both are sums of products; else None."""
    low, high = _poly(lower, code, defs), _poly(upper, code, defs)
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


def _is_window(s, code, defs=None, counters=frozenset()):
    """Whether ``s`` is a slice of a width known when traced: not one that reads a loop's counter
    (``x[i:2 * i]``: bounds a compiled loop computes, ``passes/slice_masks.py``)."""
    width = (
        _width(s.lower, s.upper, code, defs)
        if isinstance(s, cst.Slice) and s.lower is not None and s.upper is not None
        else None
    )
    if width is not None and names_in(width) & counters:
        return False
    return (
        isinstance(s, cst.Slice)
        and (
            s.step is None
            or (isinstance(s.step, cst.Integer) and int(s.step.evaluated_value) > 0)
            or _computed_step(s.step, code, counters)
        )
        and s.lower is not None
        and s.upper is not None
        and _width(s.lower, s.upper, code, defs) is not None
    )


def _computed_step(step, code, counters) -> bool:
    """Whether ``step`` is a name or a sum of products of names and integers (``d + 1``, a dilation's
    step) that reads no loop's counter: a value known when traced, checked positive when the code runs.
    """
    return (
        not isinstance(step, cst.Integer)
        and _poly(step, code) is not None
        and not names_in(step) & counters
    )


def _parenthesized(node):
    """``node`` in parentheses where it is an operation (a factor of a product written around it)."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Attribute)) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _strided(width, step):
    """The extent a slice of ``width`` with ``step`` reads: to its last element, ``(width - 1) // step *
    step + 1`` (``y:y + 4:2`` reads 3 elements' span, and may end where the axis ends).
    """
    if step is None:
        return width
    step = _parenthesized(step)
    last = cst.BinaryOperation(
        cst.BinaryOperation(
            cst.BinaryOperation(
                cst.BinaryOperation(
                    width,
                    cst.Subtract(),
                    cst.Integer("1"),
                    lpar=[cst.LeftParen()],
                    rpar=[cst.RightParen()],
                ),
                cst.FloorDivide(),
                step,
            ),
            cst.Multiply(),
            step,
        ),
        cst.Add(),
        cst.Integer("1"),
    )
    return last


def _counters(node) -> frozenset:
    """The names the function's loops count with (``for i in ...`` targets, comprehensions' too)."""
    return frozenset(
        name
        for n in iter_nodes(node)
        if isinstance(n, (cst.For, cst.CompFor))
        for name in names_in(n.target)
    )


def _bound_once(node) -> dict:
    """Names the function binds once, by ``name = expression`` of names that keep their values from
    there on, to those expressions: a name read is bound at most once, or only by lines of the
    function's own block (not in a loop or branch) before the line holding the binding
    (``fw = fw * (d + 1) - d`` then, in a loop, ``i1 = i * s + fw``)."""
    counts, values, at = bindings(node, items=False), {}, {}
    settled = _settled(node)
    top = list(node.body.body) if isinstance(node, cst.FunctionDef) else [node]
    for k, stmt in enumerate(top):
        for name, value in filter(None, map(named_value, iter_nodes(stmt))):
            values[name], at[name] = value, k
    # none of the names it reads changes between the binding and a slice
    return {
        k: v
        for k, v in values.items()
        if counts[k] == 1
        and all(
            counts[n.value] <= 1 or settled.get(n.value, len(top)) < at[k]
            for n in iter_nodes(v)
            if isinstance(n, cst.Name)
        )
    }


def _settled(node) -> dict:
    """``{name: k}`` for names every binding of which is a line of the function's own block (or a
    parameter), the last one its ``k``-th statement: from the next statement on, the name keeps its value.
    """
    if not isinstance(node, cst.FunctionDef):
        return {}
    counts, last = bindings(node, items=False), {}
    own = Counter(
        p.name.value for p in iter_nodes(node.params) if isinstance(p, cst.Param)
    )
    for k, stmt in enumerate(node.body.body):
        if isinstance(stmt, cst.SimpleStatementLine):
            for name, n in bindings(stmt, items=False).items():
                own[name] += n
                last[name] = k
    return {name: k for name, k in last.items() if own[name] == counts[name]}


def _windows_of(resolver, node: cst.Subscript):
    """``(code, defs, elements, windows)``: the subscript's elements and the positions of those that are
    windows of a width known when traced."""
    code = resolver.source.file.module.code_for_node
    elements = list(node.slice)
    defs = _bound_once(resolver.source.node)
    counters = _counters(resolver.source.node)
    windows = [
        k for k, e in enumerate(elements) if _is_window(e.slice, code, defs, counters)
    ]
    return code, defs, elements, windows


def target(resolver, node: cst.Subscript) -> cst.Subscript | None:
    """An assignment target ``y[i:i + k]`` (``D[i, i:i + 3]``, ``x[:, t:t + k]``), a window of known
    width, as ``y[rt.window_positions(y, axis, i, k)]``: the window's positions, an index array that
    ``rt.index_set`` writes at (checked to lie inside the axis, as a read's window is). None where the
    target holds no window."""
    code, defs, elements, windows = _windows_of(resolver, node)
    if not windows:
        return None
    keys = [k for k, e in enumerate(elements) if isinstance(e.slice, cst.Index)]
    advanced = sorted(keys + windows)
    if (
        len(windows) > 1
        or elements[windows[0]].slice.step is not None
        or advanced != list(range(advanced[0], advanced[-1] + 1))
        or any(
            isinstance(e.slice, cst.Slice)
            and (e.slice.lower or e.slice.upper or e.slice.step)
            for k, e in enumerate(elements)
            if k not in windows
        )
    ):
        resolver.fail(
            node,
            "a write into a slice of known width at a computed start, beside other slices, keys away "
            "from it or a step (`x[i:i + 2, j:j + 2] = v`)",
            "write one window at a time, next to the integer keys (`D[i, i:i + 3] = v`), or build the "
            "values with `np.where` over the whole array",
        )
    k = windows[0]
    window = elements[k].slice
    base = resolver.expr(node.value)
    width = _width(window.lower, window.upper, code, defs)
    positions = call(
        "rt.window_positions",
        base,
        cst.Integer(str(k)),
        resolver.expr(window.lower),
        resolver.expr(width),
    )
    parts = [
        (
            e.with_changes(slice=cst.Index(positions))
            if j == k
            else e.with_changes(slice=resolver._slice(e.slice))
        )
        for j, e in enumerate(elements)
    ]
    return resolver.mark(cst.Subscript(base, parts), node)


def subscript(resolver, node: cst.Subscript) -> cst.BaseExpression | None:
    """``node`` read through ``rt.window`` where it holds slices of known width at computed starts."""
    if not any(isinstance(e.slice, cst.Slice) for e in node.slice):
        return None
    # ``xp.s_[:, a:b]``: an index, no array sliced
    if dotted(node.value) in INDEX_MAKERS:
        return None
    code, defs, elements, windows = _windows_of(resolver, node)
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
    for k in windows:  # a step the code computes: positive, as the window it reads is
        step = elements[k].slice.step
        if step is not None and not isinstance(step, cst.Integer):
            positive = cst.Comparison(
                resolver.expr(_parenthesized(step)),
                [cst.ComparisonTarget(cst.GreaterThan(), cst.Integer("0"))],
            )
            message = cst.SimpleString(
                '"a strided slice of a compiled loop takes a positive step"'
            )
            resolver._pending.append(
                ir.Assign(
                    cst.Name(ir.OUTPUT_TOKEN),
                    call("rt.check", positive, message),
                    resolver.source.origin(node),
                )
            )
    starts = [resolver.expr(elements[k].slice.lower) for k in windows]
    widths = [
        resolver.expr(
            _strided(
                _width(elements[k].slice.lower, elements[k].slice.upper, code, defs),
                elements[k].slice.step,
            )
        )
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
    # each window's axis whole, or every ``step``-th of it (``img[:, y:y_max:stride]``)
    rest = [
        (
            e.with_changes(slice=cst.Slice(None, None, step=e.slice.step))
            if k in windows
            else e
        )
        for k, e in enumerate(elements)
    ]
    if all(isinstance(e.slice, cst.Slice) and e.slice.lower is None and e.slice.upper is None
           and e.slice.step is None for e in rest):  # fmt: skip
        return resolver.mark(value, node)
    indexed = cst.Subscript(
        value, [e.with_changes(slice=resolver._slice(e.slice)) for e in rest]
    )
    return resolver.mark(indexed, node)
