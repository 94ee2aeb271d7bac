"""``list(zip(...))``, ``list(enumerate(...))``, ``list(reversed(...))`` and ``dict(zip(keys, values))``:
iterators made into a list or dict at once, read as the comprehensions they equal.

Guarantee of ``desugar(source)`` (Python's builtins only, not names that shadow them; no ``*`` or ``**``
arguments)::

    shapes = list(zip(sizes[:-1], sizes[1:]))      # [(m, n) for m, n in zip(...)]
    steps = list(enumerate(xs))                    # [(i, x) for i, x in enumerate(xs)]
    backward = list(reversed(hs))                  # [h for h in reversed(hs)]
    named = dict(zip(names, params))               # {k: v for k, v in zip(names, params)}

``tuple(...)`` of such an iterator is ``tuple`` of the list. ``comprehensions`` then reads each as the loop
it stands for, so the list holds what Python's would (a static list of numbers, or arrays, each item in its
own shape). New nodes keep the position of the call they stand for.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .builtin_calls import _is_builtin
from .rewriting import PositionKeeping, bindings, namer_of, place, with_node
from .source import FunctionSource

ITERATORS = ("zip", "enumerate", "reversed")
MADE = ("list", "tuple", "dict")


class _Listed(PositionKeeping):
    def __init__(self, source: FunctionSource, shadowed: set):
        super().__init__(source.file.positions)
        self.source, self.shadowed = source, shadowed
        self.namer = namer_of(source)
        self.changed = False

    def _builtin(self, node, names) -> str | None:
        """The builtin among ``names`` that ``node`` calls plainly (one or more positional arguments)."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)):
            return None
        name = node.func.value
        if name not in names or name in self.shadowed:
            return None
        if not _is_builtin(self.source, node.func, name):
            return None
        if not node.args or any(a.star or a.keyword for a in node.args):
            return None
        return name

    def leave_Call(self, original, updated):
        made = self._builtin(updated, MADE)
        inner = updated.args[0].value if made and len(updated.args) == 1 else None
        kind = self._builtin(inner, ITERATORS) if inner is not None else None
        if kind is None:
            return updated
        count = {"zip": len(inner.args), "enumerate": 2, "reversed": 1}[kind]
        if made == "dict" and count != 2:
            return updated
        names = [cst.Name(self.namer.fresh("item")) for _ in range(count)]
        target = names[0] if count == 1 else cst.Tuple([cst.Element(n) for n in names])
        loop = cst.CompFor(target=target, iter=inner)
        if made == "dict":
            built = cst.DictComp(names[0], names[1], loop)
        else:
            element = (
                names[0] if count == 1 else cst.Tuple([cst.Element(n) for n in names])
            )
            built = cst.ListComp(element, loop)
            if made == "tuple":
                built = cst.Call(cst.Name("tuple"), [cst.Arg(built)])
        self.changed = True
        return place(built, original, self.positions)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its lists, tuples and dicts made of ``zip``, ``enumerate`` and ``reversed`` written
    as comprehensions."""
    if not any(
        isinstance(n, cst.Name) and n.value in ITERATORS
        for n in iter_nodes(source.node.body)
    ):
        return source
    listed = _Listed(source, set(bindings(source.node)) & {*ITERATORS, *MADE})
    new = rewrite(source.node, listed)
    return with_node(source, new) if listed.changed else source
