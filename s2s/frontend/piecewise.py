"""``np.piecewise(x, condlist, funclist)`` read as the ``np.where`` chain it computes.

NumPy fills an array like ``x`` piece by piece: where ``condlist[k]`` holds, ``funclist[k]`` of those
elements of ``x`` (a later condition's piece over an earlier one's), where none holds, the extra
function ``funclist`` may end with (else zero). ``desugar(source)`` writes the call as

    y = default(x) (or np.zeros_like(x));  y = np.where(c0, f0(x), y);  y = np.where(c1, f1(x), y); ...

as one expression, each function applied to the whole of ``x`` (a lambda applied where it stands, by
``called_lambdas``), which every transform reads. ``jnp.piecewise`` is the same function.

Guarantee: a call of NumPy's (or ``jax.numpy``'s) ``piecewise`` whose ``x`` is a name, whose
``condlist`` is a list or tuple display (or one condition written as one: a comparison, ``&``, ``|``,
``^`` or ``~`` of them; a name may hold a list) and whose ``funclist`` a display of
functions (names, lambdas) and numbers, of as many items as conditions or one more, with extra
arguments passed on to every function; anything else stays as it is (its located error).
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from . import source as sources
from .rewriting import PositionKeeping, bindings, object_of, place, with_node


def _piecewise_functions() -> tuple:
    import numpy

    found = [numpy.piecewise]
    try:
        import jax.numpy as jnp

        found.append(jnp.piecewise)
    except ImportError:  # pragma: no cover
        pass
    return tuple(found)


def _items(node) -> list | None:
    if isinstance(node, (cst.List, cst.Tuple)) and not any(
        isinstance(e, cst.StarredElement) for e in node.elements
    ):
        return [e.value for e in node.elements]
    return None


def _one_condition(node) -> bool:
    """A condition written in the call as one (``x < 0``, ``(x > 0) & (x < 1)``, ``~m``): not a name, which
    may hold a list of them."""
    if isinstance(node, cst.Comparison):
        return True
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor))
    return isinstance(node, cst.UnaryOperation) and isinstance(
        node.operator, cst.BitInvert
    )


def _where(np_name: cst.BaseExpression, cond, value, otherwise) -> cst.Call:
    where = cst.Attribute(np_name, cst.Name("where"))
    return cst.Call(where, [cst.Arg(cond), cst.Arg(value), cst.Arg(otherwise)])


class _Pieces(PositionKeeping):
    def __init__(self, source, bound):
        super().__init__(source.file.positions)
        self.env, self.bound = source.env, bound
        self.changed = False

    def leave_Call(self, original, updated):
        func = updated.func
        if not isinstance(func, cst.Attribute) or not any(
            object_of(func, self.env, self.bound) is f for f in _piecewise_functions()
        ):
            return updated
        args = updated.args
        positional = [a for a in args[:3] if a.keyword is None and not a.star]
        if len(positional) != 3 or not isinstance(args[0].value, cst.Name):
            return updated
        x, conds, funcs = (a.value for a in positional)
        conds = (
            _items(conds)
            if isinstance(conds, (cst.List, cst.Tuple))
            else [conds] if _one_condition(conds) else None
        )
        funcs = _items(funcs)
        if (
            conds is None
            or funcs is None
            or len(funcs) not in (len(conds), len(conds) + 1)
        ):
            return updated
        extra = list(args[3:])
        if any(a.star for a in extra):
            return updated

        def piece(f):
            if isinstance(f, (cst.Integer, cst.Float)) or (
                isinstance(f, cst.UnaryOperation)
                and isinstance(f.expression, (cst.Integer, cst.Float))
            ):
                return f
            return cst.Call(f, [cst.Arg(x), *extra])

        np_name = func.value
        zeros = cst.Call(cst.Attribute(np_name, cst.Name("zeros_like")), [cst.Arg(x)])
        value = piece(funcs[-1]) if len(funcs) > len(conds) else zeros
        for cond, f in zip(conds, funcs):
            value = _where(np_name, cond, piece(f), value)
        self.changed = True
        return place(value, original, self.positions)


def desugar(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with its ``np.piecewise`` calls written as ``np.where`` chains (see the module)."""
    node = source.node
    if not any(
        isinstance(n, cst.Attribute) and n.attr.value == "piecewise"
        for n in iter_nodes(node)
    ):
        return source
    pieces = _Pieces(source, bindings(node))
    new = rewrite(node, pieces)
    return with_node(source, new) if pieces.changed else source
