"""Room for the recursion that long expressions need (issue 13: an expression of 1,000 terms).

libcst and black walk expressions recursively: ``a + b + ...`` of 1,000 terms
nests 1,000 deep, and each level takes several frames, past Python's default
limit of 1,000. ``deep(fn)`` runs ``fn`` with the interpreter's recursion limit
raised to ``LIMIT`` (Python 3.11 keeps Python frames off the C stack), and puts
the limit back after. It runs in the caller's thread: generation reads
``functools.cached_property`` values, whose lock (Python 3.11) another thread
would wait on forever.
"""

from __future__ import annotations

import sys

LIMIT = 20_000


def deep(fn, *args, **kwargs):
    old = sys.getrecursionlimit()
    if old >= LIMIT:
        return fn(*args, **kwargs)
    sys.setrecursionlimit(LIMIT)
    try:
        return fn(*args, **kwargs)
    finally:
        sys.setrecursionlimit(old)
