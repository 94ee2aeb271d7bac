"""Room for the recursion that long expressions need (issue 13: an expression of 1,000 terms).

libcst and black walk expressions recursively: ``a + b + ...`` of 1,000 terms
nests 1,000 deep, past Python's default limit of 1,000 frames. ``deep(fn)``
runs ``fn`` in a thread whose C stack is large enough for ``LIMIT`` frames,
with the interpreter's recursion limit raised to ``LIMIT`` meanwhile, and
returns what it returns or raises what it raises.
"""

from __future__ import annotations

import sys
import threading

LIMIT = 50_000
STACK_BYTES = (
    512 * 1024 * 1024
)  # reserved address space; pages are touched only as frames need them


def deep(fn, *args, **kwargs):
    if (
        sys.getrecursionlimit() >= LIMIT
        or threading.current_thread().name == "s2s-deep"
    ):
        return fn(*args, **kwargs)
    outcome = {}

    def run():
        try:
            outcome["value"] = fn(*args, **kwargs)
        except BaseException as err:  # re-raised in the caller's thread
            outcome["error"] = err

    old_stack, old_limit = threading.stack_size(STACK_BYTES), sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(LIMIT)
        worker = threading.Thread(target=run, name="s2s-deep")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"].with_traceback(outcome["error"].__traceback__)
    return outcome["value"]
