"""Library functions by identity: the object a name reaches, not its spelling, says which op it is.

``jax.nn.relu``, ``from jax.nn import relu`` and ``nn.relu`` (``from jax import
nn``) reach one object, so they are one op: ``rt.nn.relu`` in generated code.
The table is built once from the spellings in ``s2s/rules/vocabulary.py``:
each is imported (a library that is not installed is skipped) and the object
found is keyed by ``id``, with the object kept alive in the table. A method
of a ``scipy.stats`` distribution (``norm.logpdf``) is a new bound method at
each access: it is keyed by its distribution object and its function.
"""

from __future__ import annotations

import functools
import importlib
import inspect

from ..rules.vocabulary import LIBRARY


def _reach(path: str):
    """The object at a dotted path, importing the longest module prefix; None if it cannot be found."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
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


@functools.cache
def _table() -> dict:
    table = {}
    for op, spellings in LIBRARY.items():
        for path in spellings:
            obj = _reach(path)
            if obj is not None:
                # the object is kept with its op: its id stays its own
                table.setdefault(_key(obj), (op, obj))
    return table


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
