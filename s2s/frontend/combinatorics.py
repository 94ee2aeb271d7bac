"""``itertools.combinations``, ``permutations`` and ``product`` of arrays, read as zips of gathered rows.

Guarantee of ``lower(resolver, node)``: a call of ``itertools.combinations(xs,
r)`` or ``itertools.permutations(xs, r)`` (``r`` an integer literal) or
``itertools.product(xs, ys, ...)``, each sequence an array or ``range(n)``, is
``zip(xs[i0], xs[i1], ...)``, the positions ``(i0, i1, ...) =
rt.combination_indices(len(xs), r)`` (``rt.permutation_indices``,
``rt.product_indices``) being index arrays in itertools' order: for
``range(n)``, the positions themselves. Iterated by a loop or a comprehension,
``for a, b in itertools.combinations(points, 2)`` is then a loop of fixed length
over pairs of rows, which compiles (one ``scan``), differentiates (gathers)
and batches. Other calls of these functions are ``None`` here (read as any
library call). ``list(...)`` of one (``listed``) is the tuples as the rows of one array.
``np.ndindex(n, m, ...)`` of extents (what ``index_grids`` writes) is ``product``
of their ranges.
"""

from __future__ import annotations

import itertools

import libcst as cst
import numpy as np

from ..cstutil import call, int_literal, iter_nodes, rewrite

NDINDEX = "np.ndindex"

KINDS = {
    itertools.combinations: "rt.combination_indices",
    itertools.permutations: "rt.permutation_indices",
    itertools.product: "rt.product_indices",
    np.ndindex: NDINDEX,  # of extents (``index_grids``): ``product`` of their ranges
}


def kind_of(obj) -> str | None:
    """The index function for an ``itertools`` function, else None."""
    return next((kind for fn, kind in KINDS.items() if obj is fn), None)


def lower(resolver, node: cst.Call, kind: str) -> cst.BaseExpression | None:
    """``zip`` of the sequences at the positions ``kind`` makes (resolved), or None where the call has
    another form (a keyword, a ``*`` argument, a computed ``r``)."""
    if any(a.star or a.keyword for a in node.args):
        return None
    args = [a.value for a in node.args]
    if kind == NDINDEX:
        kind, args = "rt.product_indices", [call("range", a) for a in args]
    if kind == "rt.product_indices":
        sequences = args
        if not sequences:
            return None
    else:
        if len(args) != 2 or int_literal(args[1]) is None:
            return None
        sequences = [args[0]] * int_literal(args[1])
    # each sequence resolved once: ``(count, items)``, a range's items its positions themselves
    resolved = {id(s): _resolved(resolver, s) for s in sequences}
    if kind == "rt.product_indices":
        indices = call(kind, *(resolved[id(s)][0] for s in sequences))
    else:
        indices = call(kind, resolved[id(args[0])][0], resolver.expr(args[1]))
    picked = []
    for k, s in enumerate(sequences):
        positions = cst.Subscript(indices, [_element(k)])
        items = resolved[id(s)][1]
        index = cst.SubscriptElement(cst.Index(positions))
        picked.append(positions if items is None else cst.Subscript(items, [index]))
    return resolver.mark(cst.Call(cst.Name("zip"), [cst.Arg(p) for p in picked]), node)


def listed(resolver, node: cst.Call) -> cst.BaseExpression | None:
    """``list(combinations(xs, r))`` (or ``permutations``, ``product``): the tuples as the rows of one array,
    ``xp.stack((xs[i0], xs[i1], ...), axis=1)`` (for ``range(n)``, the positions themselves), which
    ``np.array(...)``, ``len``, indexing and unpacking read as the list's; None for any other call.
    """
    if len(node.args) != 1 or node.args[0].star or node.args[0].keyword:
        return None
    inner = node.args[0].value
    kind = (
        kind_of(resolver._callee_object(inner.func))
        if isinstance(inner, cst.Call)
        else None
    )
    zipped = lower(resolver, inner, kind) if kind is not None else None
    if zipped is None:
        return None
    rows = cst.Tuple([cst.Element(a.value) for a in zipped.args])
    stacked = cst.Call(
        cst.parse_expression("xp.stack"),
        [cst.Arg(rows), cst.Arg(cst.Integer("1"), keyword=cst.Name("axis"))],
    )
    return resolver.mark(stacked, node)


def _element(k: int) -> cst.SubscriptElement:
    return cst.SubscriptElement(cst.Index(cst.Integer(str(k))))


def _resolved(resolver, sequence):
    """``(count, items)`` of a sequence, resolved: ``range(n)``'s count and no items (its positions are
    its items), an array's ``len`` and the array."""
    count = _range_count(sequence)
    if count is not None:
        return resolver.expr(count), None
    items = resolver.expr(sequence)
    return cst.Call(cst.Name("len"), [cst.Arg(items)]), items


def _range_count(node):
    """``n`` for ``range(n)``, else None."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "range"
        and len(node.args) == 1
        and not node.args[0].star
        and node.args[0].keyword is None
    ):
        return node.args[0].value
    return None


def pairwise(source):
    """``source`` with ``itertools.pairwise(xs)`` (``xs`` a name) written as ``zip(xs, xs[1:])``, the pairs
    of consecutive items Python's gives (a loop over them is one over two sequences)."""
    from .rewriting import PositionKeeping, bindings, object_of, with_node

    node = source.node
    if not any(
        isinstance(n, cst.Name) and n.value == "pairwise" for n in iter_nodes(node)
    ):
        return source
    bound = bindings(node)

    class _Pairs(PositionKeeping):
        changed = False

        def leave_Call(self, original, updated):
            if not (
                object_of(updated.func, source.env, bound) is itertools.pairwise
                and len(updated.args) == 1
                and not updated.args[0].star
                and updated.args[0].keyword is None
                and isinstance(updated.args[0].value, cst.Name)
            ):
                return updated
            self.changed = True
            xs = updated.args[0].value
            tail = cst.Subscript(
                xs, [cst.SubscriptElement(cst.Slice(cst.Integer("1"), None))]
            )
            return cst.Call(cst.Name("zip"), [cst.Arg(xs), cst.Arg(tail)])

    pairs = _Pairs(source.file.positions)
    new = rewrite(node, pairs)
    return with_node(source, new) if pairs.changed else source
