"""Fuse temporaries read once back into the expression that reads them, for the reader.

The passes keep one operation per statement (``_matmul = x @ W1``,
``_add = _matmul + b1``, ``h1 = xp.tanh(_add)``); where a temporary is read
only once, by a later statement under the same comment (the same user line,
the same phase), the generated module writes ``h1 = xp.tanh(x @ W1 + b1)``,
as a person would. Guarantees:

- only s2s's temporaries (``_``-prefixed names) and their cotangents (``_add_bar``) go; the user's
  names and their cotangents (``h1_bar``: the reader follows the chain rule through them) and every
  value read twice, or read by a branch or loop body, stay;
- values are pure, and nothing between the two statements rebinds a name
  the moved expression reads, so every expression computes what it did;
- a statement grows to at most ``WIDTH`` characters (black then keeps it on
  one line), and a comment still heads the code of its user line.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import libcst as cst

from .. import ir
from ..cstutil import _FREE, _paren_binary, iter_nodes, paren, substitute
from ..passes.dataflow import reads, writes

WIDTH = 88  # black's line length: a fused statement stays on one line


def fuse(fn: ir.Function, indent: int = 4) -> ir.Function:
    """``fn`` with its once-read temporaries fused into their readers (module docstring); its body
    starts at column ``indent``."""
    return fn.with_body(_fused(fn.body, _read_counts(fn.body), indent))


def _read_counts(body) -> Counter:
    """How many times each name is read in ``body``, local functions' bodies included."""
    counts = Counter()
    for stmt in body:
        if isinstance(stmt, ir.Def):
            counts.update(_read_counts(stmt.function.body))
            continue
        for node in _expressions(stmt):
            counts.update(
                n.value for n in iter_nodes(node, _FREE) if type(n) is cst.Name
            )
    return counts


def _expressions(stmt):
    if isinstance(stmt, ir.Assign):
        return (
            (stmt.value,) if ir.target_names(stmt.target) else (stmt.value, stmt.target)
        )
    if isinstance(stmt, ir.Return):
        return (stmt.value,)
    return ()


def _fused(body, counts: Counter, indent: int) -> list:
    body = [
        ir.Def(fuse(s.function, indent + 4), s.origin) if isinstance(s, ir.Def) else s
        for s in body
    ]
    for i in range(len(body) - 2, -1, -1):
        j = _reader(body, i, counts)
        if j is None:
            continue
        temporary, reader = body[i], body[j]
        value = _doubled(
            substitute(reader.value, {temporary.target.value: temporary.value})
        )
        fused = replace(reader, value=value)
        if indent + len(_code(ir.stmt_to_cst(fused, comments=False))) > WIDTH:
            continue
        body[j] = fused
        del body[i]
    return body


def _code(line: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(line).strip()


def _reader(body, i: int, counts: Counter) -> int | None:
    """The index of the statement that alone reads what ``body[i]`` binds, if it may be fused there:
    a temporary read once, or a derivative's first terms read by the statement adding the next ones
    (``x_bar = a`` then ``x_bar = x_bar + b``: ``x_bar = a + b``)."""
    stmt = body[i]
    if not (
        isinstance(stmt, ir.Assign)
        and isinstance(stmt.target, cst.Name)
        and not ir.is_output_token(stmt.target.value)
        and not isinstance(stmt.value, (cst.Tuple, cst.List, cst.Dict))
    ):
        return None
    name, moved = stmt.target.value, reads(stmt) | {stmt.target.value}
    temporary = name.startswith("_") and counts[name] == 1
    if not temporary and not name.endswith(("_bar", "_dot")):
        return None
    for j in range(i + 1, len(body)):
        later = body[j]
        if name in reads(later):
            # read by the value of an assignment or return of the same user line (not by an element
            # write's index, not by a local function)
            fusable = (
                isinstance(later, ir.Return)
                or (isinstance(later, ir.Assign) and ir.target_names(later.target))
            ) and ir.comment_group(later) == ir.comment_group(stmt)
            accumulated = (
                isinstance(later, ir.Assign)
                and isinstance(later.target, cst.Name)
                and later.target.value == name
                and _reads_once(later.value, name)
            )
            return j if fusable and (temporary or accumulated) else None
        if writes(later) & moved:
            return None
    return None


def _reads_once(value, name: str) -> bool:
    return (
        sum(type(n) is cst.Name and n.value == name for n in iter_nodes(value, _FREE))
        == 1
    )


def _doubled(value):
    """``a + e + e`` -> ``a + 2 * e``: a derivative's equal terms (``w * w`` gives two) added once."""
    if not (
        isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)
    ):
        return value
    left, last = value.left, value.right
    first = left.right if _is_sum(left) else left
    if not _bare(first).deep_equals(_bare(last)):
        return value
    twice = cst.BinaryOperation(cst.Integer("2"), cst.Multiply(), paren(_bare(last)))
    return _paren_binary(left.with_changes(right=twice) if _is_sum(left) else twice)


def _is_sum(node) -> bool:
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)


def _bare(node):
    return node.with_changes(lpar=(), rpar=()) if getattr(node, "lpar", None) else node
