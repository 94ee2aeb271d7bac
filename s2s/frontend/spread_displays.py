"""``*`` arguments whose items the code shows, written out: ``np.einsum("ir,jr->ij", *factors)``.

A call's ``*sequence`` argument is bound when the code runs; where the sequence is a display written
in the call (``f(*(a, b))``) or a name the function binds once, to a display, and changes nowhere
(``factors = (A, B)`` then ``np.einsum(spec, *factors)``), its items are known when the code is read,
and the call is the call with them one by one (``np.einsum(spec, factors[0], factors[1])``), which
every transform reads, whatever the function called (a NumPy function's ``*operands`` too).

Guarantee: only ``*`` arguments of those two kinds change (a display without ``*`` items; the name
bound by one line ``name = display``, read nowhere as a method's receiver nor written item by item,
nor bound in a nested function); the call keeps its other arguments and their order.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from . import source as sources
from .rewriting import PositionKeeping, bindings, named_value, with_node


def _items(display) -> list | None:
    """The items of a tuple or list display without ``*`` items, else None."""
    if not isinstance(display, (cst.Tuple, cst.List)):
        return None
    if any(isinstance(e, cst.StarredElement) for e in display.elements):
        return None
    return [e.value for e in display.elements]


def _unchanged_displays(node) -> dict:
    """Names bound once in the function, to a display, whose sequence nothing changes: name -> length."""
    counts = bindings(node)
    found = {}
    for n in iter_nodes(node):
        named = named_value(n)
        if named is not None and counts[named[0]] == 1:
            items = _items(named[1])
            if items is not None:
                found[named[0]] = len(items)
    for n in iter_nodes(
        node
    ):  # (``factors.append(C)``: its length is the code's to change)
        if (
            isinstance(n, cst.Attribute)
            and isinstance(n.value, cst.Name)
            and n.value.value in found
        ):
            del found[n.value.value]
    return found


class _Spread(PositionKeeping):
    def __init__(self, positions, lengths: dict):
        super().__init__(positions)
        self.lengths = lengths
        self.changed = False

    def leave_Call(self, original, updated):
        if not any(a.star == "*" for a in updated.args):
            return updated
        args = []
        for arg in updated.args:
            items = _items(arg.value) if arg.star == "*" else None
            if (
                arg.star == "*"
                and items is None
                and isinstance(arg.value, cst.Name)
                and arg.value.value in self.lengths
            ):
                items = [
                    cst.Subscript(
                        arg.value,
                        [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))],
                    )
                    for i in range(self.lengths[arg.value.value])
                ]
            if items is None:
                args.append(arg)
                continue
            self.changed = True
            args += [cst.Arg(item) for item in items]
        return updated.with_changes(args=args)


def desugar(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with the ``*`` arguments whose items it shows written out (see the module)."""
    node = source.node
    if not any(isinstance(n, cst.Arg) and n.star == "*" for n in iter_nodes(node)):
        return source
    spread = _Spread(source.file.positions, _unchanged_displays(node))
    new = rewrite(node, spread)
    return with_node(source, new) if spread.changed else source
