"""NumPy's index-expression builders, ``np.r_``, ``np.c_``, ``np.mgrid`` and ``np.ogrid``, as the calls they stand for.

Guarantee: a subscript of one of these objects (NumPy's or ``jax.numpy``'s,
by identity) is read as concatenations and grids of ops with rules::

    np.c_[np.ones(n), X]     ->  xp.concatenate([rt.concatenated_item(ones, 2, 0), rt.concatenated_item(X, 2, 0)], axis=-1)
    np.r_[w, 0.0, 1:4]       ->  xp.concatenate([rt.concatenated_item(w, 1, -1), ..., xp.arange(1, 4)], axis=0)
    np.mgrid[0:1:5j, 0:3]    ->  xp.stack(xp.meshgrid(xp.linspace(0, 1, 5), xp.arange(0, 3), indexing="ij"))

An item is brought to the concatenation's rank as NumPy brings it
(``ndmin`` unit axes placed by ``trans1d``: a vector is a column in ``np.c_``);
a slice is ``np.arange`` of its bounds, or ``np.linspace`` where its step is
an imaginary literal (``5j`` samples, both ends included). A directive string
(``np.r_['0,2', a, b]``) gives the axis, ``ndmin`` and ``trans1d``; the
matrix directives ``'r'`` and ``'c'`` are refused with a located error.
"""

from __future__ import annotations

import functools

import libcst as cst

from ..errors import UnsupportedSyntax
from . import spellings

# how each builder concatenates: axis, ndmin, trans1d (NumPy's ``AxisConcatenator`` defaults)
_CONCATENATORS = {"r_": (0, 1, -1), "c_": (-1, 2, 0)}
_GRIDS = ("mgrid", "ogrid")


@functools.lru_cache(maxsize=1)
def _builders() -> dict[int, str]:
    return {
        id(obj): name
        for module in spellings._modules()
        for name in (*_CONCATENATORS, *_GRIDS)
        if (obj := getattr(module, name, None)) is not None
    }


def kind_of(obj) -> str | None:
    """``"r_"``, ``"c_"``, ``"mgrid"`` or ``"ogrid"`` for NumPy's or ``jax.numpy``'s builder objects; else None."""
    return None if obj is None else _builders().get(id(obj))


def lower(resolver, node: cst.Subscript, kind: str) -> cst.BaseExpression:
    """The subscript as the ops it stands for, over resolved items."""
    items = [e.slice for e in node.slice]
    if kind in _GRIDS:
        return _grid(resolver, node, items, sparse=kind == "ogrid")
    axis, ndmin, trans1d = _CONCATENATORS[kind]
    first = items[0]
    if isinstance(first, cst.Index) and isinstance(first.value, cst.SimpleString):
        axis, ndmin, trans1d = _directive(resolver, first.value, (axis, ndmin, trans1d))
        items = items[1:]
    if not items:
        resolver.fail(node, f"`np.{kind}[]` with nothing to join", "give it arrays or slices",
                      UnsupportedSyntax)  # fmt: skip
    parts = []
    for item in items:
        value = _item(resolver, node, item, kind)
        parts.append(
            resolver.mark(
                _call("rt.concatenated_item", value, _int(ndmin), _int(trans1d)), node
            )
        )
    joined = cst.List([cst.Element(p) for p in parts])
    return resolver.mark(
        _call("xp.concatenate", joined, axis=_int(axis)),
        node,
    )


def _grid(resolver, node, items, sparse: bool) -> cst.BaseExpression:
    axes = []
    for item in items:
        if not isinstance(item, cst.Slice):
            resolver.fail(item, "an item of `np.mgrid`/`np.ogrid` that is not a slice",
                          "write each axis as start:stop:step, or start:stop:nj for n samples",
                          UnsupportedSyntax)  # fmt: skip
        axes.append(_range(resolver, node, item))
    if len(axes) == 1:
        return axes[0]
    keywords = {"indexing": cst.SimpleString('"ij"')}
    if sparse:
        return resolver.mark(
            _call("xp.meshgrid", *axes, sparse=cst.Name("True"), **keywords), node
        )
    grids = resolver.mark(_call("xp.meshgrid", *axes, **keywords), node)
    return resolver.mark(_call("xp.stack", grids), node)


def _item(resolver, node, item, kind) -> cst.BaseExpression:
    if isinstance(item, cst.Slice):
        return _range(resolver, node, item)
    if isinstance(item.value, cst.SimpleString):
        resolver.fail(item.value, f"a directive string that is not the first item of `np.{kind}[...]`",
                      "put the directive first: np.r_['0,2', a, b]", UnsupportedSyntax)  # fmt: skip
    return resolver.expr(item.value)


def _range(resolver, node, s: cst.Slice) -> cst.BaseExpression:
    """``start:stop:step`` as ``xp.arange``; with an imaginary step (``5j``), ``xp.linspace`` of that many samples."""
    start = resolver.expr(s.lower) if s.lower is not None else cst.Integer("0")
    if s.upper is None:
        resolver.fail(s, "a slice without a stop in an index-expression builder",
                      "give the stop: np.r_[0:n]", UnsupportedSyntax)  # fmt: skip
    stop = resolver.expr(s.upper)
    if isinstance(s.step, cst.Imaginary):
        count = abs(complex(s.step.value))
        return resolver.mark(_call("xp.linspace", start, stop, _int(int(count))), node)
    if s.step is None:
        return resolver.mark(_call("xp.arange", start, stop), node)
    return resolver.mark(_call("xp.arange", start, stop, resolver.expr(s.step)), node)


def _directive(resolver, string: cst.SimpleString, defaults) -> tuple[int, int, int]:
    """``'axis'``, ``'axis,ndmin'`` or ``'axis,ndmin,trans1d'``, as NumPy reads them."""
    text = string.evaluated_value
    fields = [f.strip() for f in text.split(",")]
    try:
        values = [int(f) for f in fields]
    except ValueError:
        resolver.fail(string, f"the directive {text!r} of an index-expression builder",
                      "give integers 'axis,ndmin,trans1d' (the matrix directives 'r' and 'c' make "
                      "np.matrix objects, which s2s does not transform)", UnsupportedSyntax)  # fmt: skip
    if not 1 <= len(values) <= 3:
        resolver.fail(string, f"the directive {text!r} of an index-expression builder",
                      "give one to three integers: 'axis,ndmin,trans1d'", UnsupportedSyntax)  # fmt: skip
    return (*values, *defaults[len(values) :])


def _int(value: int) -> cst.BaseExpression:
    literal = cst.Integer(str(abs(value)))
    return cst.UnaryOperation(cst.Minus(), literal) if value < 0 else literal


def _call(function: str, *args, **keywords) -> cst.Call:
    return cst.Call(
        cst.parse_expression(function),
        [cst.Arg(a) for a in args]
        + [cst.Arg(v, keyword=cst.Name(k)) for k, v in keywords.items()],
    )
