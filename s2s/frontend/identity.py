"""Library functions by identity: the object a name reaches, not its spelling, says which op it is.

``jax.nn.relu``, ``from jax.nn import relu`` and ``nn.relu`` (``from jax import
nn``) reach one object, so they are one op: ``rt.nn.relu`` in generated code.
The table is built from the spellings in ``s2s/rules/vocabulary.py``, from
the modules already imported (nothing is imported for it: an object of a
module nobody imported cannot reach s2s), again whenever another of them has
been imported; the object found is keyed by ``id`` and kept alive in the table. A method
of a ``scipy.stats`` distribution (``norm.logpdf``) is a new bound method at
each access: it is keyed by its distribution object and its function.
"""

from __future__ import annotations

import functools
import inspect
import sys

from ..rules.vocabulary import LIBRARY


def _reach(path: str):
    """The object at a dotted path from a module already imported (None if there is none, or no such
    attribute): user code can only hold objects of modules that are loaded, so nothing is imported here.
    """
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        obj = sys.modules.get(".".join(parts[:i]))
        if obj is None:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj
    return None


def _key(obj):
    if inspect.ismethod(obj):
        return ("method", id(obj.__self__), obj.__func__)
    return ("object", id(obj))


@functools.lru_cache(maxsize=8)
def _table_of(loaded: frozenset) -> dict:
    table = {}
    for op, spellings in LIBRARY.items():
        for path in spellings:
            obj = _reach(path)
            if obj is not None:
                # the object is kept with its op: its id stays its own
                table.setdefault(_key(obj), (op, obj))
    return table


def _table() -> dict:
    """The table for the library modules loaded now (built again when another one is imported)."""
    return _table_of(frozenset(m for m in _MODULES if m in sys.modules))


_MODULES = frozenset(
    ".".join(path.split(".")[:i])
    for spellings in LIBRARY.values()
    for path in spellings
    for i in range(1, path.count(".") + 1)
)


def library_op(obj) -> str | None:
    """The op that the library object ``obj`` is (``rt.nn.relu``, ``exp``), or None."""
    hit = _table().get(_key(obj))
    return hit[0] if hit is not None else None


def spelling(obj) -> str | None:
    """How generated code calls the library object ``obj``: ``rt.nn.relu``, ``xp.exp``; None if not one s2s knows."""
    op = library_op(obj)
    if op is None:
        return None
    return op if op.startswith("rt.") else f"xp.{op}"
