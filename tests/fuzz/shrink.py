"""Shrink a failing program: drop statements and return terms while the failure stays the same.

``shrink(program, folder, signature, run)`` tries, until nothing more goes:
removing one statement anywhere in the module (a helper, a global, a line of
the function, a whole ``if``/``for``), replacing a compound statement by its
body, and keeping a single term of a ``return a + b + c``. A candidate is kept
when ``run(candidate)`` still gives ``signature`` (the kind and cause of the
finding being shrunk: see ``signature_of``). Arguments are kept as they are.
"""

from __future__ import annotations

import ast
import copy
import dataclasses


def signature_of(outcome, kind=None):
    """(kind, key) of the worst finding (or of the first one of ``kind``)."""
    kind = kind or outcome.worst()
    for f in outcome.findings:
        if f.kind == kind:
            return kind, f.key
    return kind, outcome.note[:60]


def _bodies(tree):
    """Every statement list in the tree (module body, function bodies, branches, loop bodies)."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _candidates(source, entry):
    tree = ast.parse(source)
    n_blocks = sum(1 for _ in _bodies(tree))
    for b in range(n_blocks):
        block = list(_bodies(tree))[b]
        for i in range(len(block)):
            stmt = block[i]
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(stmt, ast.FunctionDef) and stmt.name == entry:
                continue
            # drop the statement
            t = copy.deepcopy(tree)
            tb = list(_bodies(t))[b]
            del tb[i]
            if not tb:
                tb.append(ast.Pass())
            yield t
            # a compound statement: keep its body in its place
            if isinstance(stmt, (ast.If, ast.For, ast.While)):
                t = copy.deepcopy(tree)
                tb = list(_bodies(t))[b]
                tb[i : i + 1] = copy.deepcopy(stmt.body)
                yield t
            # a return of a sum: one term
            if (
                isinstance(stmt, ast.Return)
                and isinstance(stmt.value, ast.BinOp)
                and isinstance(stmt.value.op, ast.Add)
            ):
                terms, node = [], stmt.value
                while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                    terms.append(node.right)
                    node = node.left
                terms.append(node)
                for term in terms:
                    t = copy.deepcopy(tree)
                    tb = list(_bodies(t))[b]
                    tb[i] = ast.Return(copy.deepcopy(term))
                    yield t
            # a tuple return (has_aux): keep it, but shrink its first element when it is a sum
            if (
                isinstance(stmt, ast.Assign)
                and isinstance(stmt.value, ast.BinOp)
                and isinstance(stmt.value.op, ast.Add)
            ):
                node = stmt.value
                for side in (node.left, node.right):
                    t = copy.deepcopy(tree)
                    tb = list(_bodies(t))[b]
                    tb[i] = ast.Assign(
                        copy.deepcopy(stmt.targets), copy.deepcopy(side), lineno=0
                    )
                    yield t


def shrink(program, signature, run, max_checks=400, log=None):
    """The smallest program found that ``run`` still fails with ``signature``."""
    best = program
    checks = 0
    changed = True
    while changed and checks < max_checks:
        changed = False
        for tree in _candidates(best.source, best.entry):
            try:
                source = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
            except Exception:
                continue
            if len(source) >= len(best.source):
                continue
            candidate = dataclasses.replace(best, source=source)
            checks += 1
            try:
                got = signature_of(run(candidate), signature[0])
            except Exception:
                continue
            if got == signature:
                best = candidate
                changed = True
                if log:
                    log(f"shrunk to {len(source)} characters ({checks} checks)")
                break
            if checks >= max_checks:
                break
    return best
