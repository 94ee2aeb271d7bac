"""Lists that a ``for`` loop grows from a non-empty start, or whose last item the loop reads.

``control`` collects a list that starts empty and gets one ``append`` per
iteration as the loop's stacked outputs. Programs also write

    hs = [h0]
    for t in range(T):
        hs.append(np.tanh(W @ hs[-1] + U @ xs[t]))

``grow`` rewrites such a loop into that form, computing what Python computes:

    hs_before = hs
    hs_last = hs_before[-1]        # only where the loop reads hs[-1]
    hs_steps = []
    for t in range(T):
        hs_last = np.tanh(W @ hs_last + U @ xs[t])
        hs_steps.append(hs_last)
    hs = rt.join(hs_before, hs_steps)   # hs_before + hs_steps; hs = hs_steps for a list that starts empty

``hs[-1]`` in the loop is the item appended last (a value the loop carries).
Any other read of the list in the loop is left for ``control`` to refuse (the
collected items exist only after the loop), so no read sees a stale list.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import call, iter_nodes, names_in, rewrite
from ..errors import UnsupportedSyntax
from ..naming import Namer


def is_last_item(node: cst.CSTNode, name: str) -> bool:
    """Whether ``node`` is ``name[-1]``."""
    if not (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Name)
        and node.value.value == name
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
    ):
        return False
    index = node.slice[0].slice.value
    return (
        isinstance(index, cst.UnaryOperation)
        and isinstance(index.operator, cst.Minus)
        and isinstance(index.expression, cst.Integer)
        and index.expression.value == "1"
    )


class _LastItem(cst.CSTTransformer):
    """Replaces ``name[-1]`` by the name ``last``."""

    def __init__(self, name: str, last: str):
        self.name, self.last = name, last

    def leave_Subscript(self, original, updated):
        return cst.Name(self.last) if is_last_item(original, self.name) else updated


def _expressions(stmt) -> list:
    """The expressions of ``stmt`` itself (not of its nested blocks)."""
    if isinstance(stmt, (ir.Assign, ir.AugAssign, ir.Return)):
        return [stmt.value]
    if isinstance(stmt, (ir.If, ir.While)):
        return [stmt.test]
    if isinstance(stmt, ir.For):
        return [stmt.iter]
    return []


def _map(stmt, change):
    """``stmt`` with ``change`` applied to each of its expressions, nested blocks included (not ``Def``s)."""
    if isinstance(stmt, ir.Assign):
        return ir.Assign(stmt.target, change(stmt.value), stmt.origin)
    if isinstance(stmt, ir.AugAssign):
        return ir.AugAssign(stmt.target, stmt.operator, change(stmt.value), stmt.origin)
    if isinstance(stmt, ir.Return):
        return ir.Return(change(stmt.value), stmt.origin)
    if isinstance(stmt, ir.If):
        return ir.If(
            change(stmt.test),
            tuple(_map(s, change) for s in stmt.body),
            tuple(_map(s, change) for s in stmt.orelse),
            stmt.origin,
        )
    if isinstance(stmt, ir.For):
        body = tuple(_map(s, change) for s in stmt.body)
        return ir.For(stmt.target, change(stmt.iter), body, stmt.origin)
    if isinstance(stmt, ir.While):
        body = tuple(_map(s, change) for s in stmt.body)
        return ir.While(change(stmt.test), body, stmt.origin)
    return stmt


def grow_lists(
    body, append_of, reads, namer: Namer, empty=frozenset(), displays=frozenset()
) -> tuple:
    """``body`` with every loop that grows a list from a non-empty start, or reads its last item,
    rewritten as the module docstring says; ``append_of(stmt)`` finds ``L = rt.append(L, v)``,
    ``reads(stmt)`` the names a statement reads (the local functions it calls included).
    ``empty``: the names bound to ``[]`` on entry (as ``control`` tracks them); ``displays``: to
    any list display (``[h0]``). Only a list made by a display is rewritten: the join after the loop
    needs it known as a list."""
    out, empty, displays = [], set(empty), set(displays)
    for stmt in _split_list_displays(body):
        after = []
        if isinstance(stmt, ir.For):
            while (found := _growing(stmt, empty, displays, append_of)) is not None:
                before, stmt, joined = _rewritten(stmt, *found, append_of, reads, namer)
                out += before
                steps = set(ir.target_names(before[-1].target))
                empty |= steps
                displays |= steps
                after = [*joined, *after]
            loop_body = grow_lists(stmt.body, append_of, reads, namer)
            stmt = ir.For(stmt.target, stmt.iter, loop_body, stmt.origin)
        elif isinstance(stmt, ir.If):
            stmt = ir.If(
                stmt.test,
                grow_lists(stmt.body, append_of, reads, namer, empty, displays),
                grow_lists(stmt.orelse, append_of, reads, namer, empty, displays),
                stmt.origin,
            )
        elif isinstance(stmt, ir.While):
            loop_body = grow_lists(stmt.body, append_of, reads, namer)
            stmt = ir.While(stmt.test, loop_body, stmt.origin)
        for s in (stmt, *after):
            out.append(s)
            bound = _bound(s)
            empty -= bound
            displays -= bound
            if isinstance(s, ir.Assign) and isinstance(s.value, cst.List):
                displays |= bound
                if not s.value.elements:
                    empty |= bound
    return tuple(out)


def _split_list_displays(body):
    """``hs, cs = [h0], []`` as ``hs = [h0]`` and ``cs = []``, so each list is known for what it is:
    list displays only, none reading a name the statement binds (``a, b = [x], [a]`` reads the old ``a``).
    """
    for stmt in body:
        if (
            isinstance(stmt, ir.Assign)
            and isinstance(stmt.target, cst.Tuple)
            and isinstance(stmt.value, cst.Tuple)
            and len(stmt.target.elements) == len(stmt.value.elements)
            and all(isinstance(e.value, cst.Name) for e in stmt.target.elements)
            and all(isinstance(e.value, cst.List) for e in stmt.value.elements)
            and set(ir.target_names(stmt.target)).isdisjoint(
                set().union(*(names_in(e.value) for e in stmt.value.elements))
            )
        ):
            for t, v in zip(stmt.target.elements, stmt.value.elements):
                yield ir.Assign(t.value, v.value, stmt.origin)
        else:
            yield stmt


def _bound(stmt) -> set:
    """The names ``stmt`` assigns, nested blocks included."""
    return {
        n
        for s in ir.walk([stmt])
        if isinstance(s, (ir.Assign, ir.AugAssign, ir.For))
        for n in ir.target_names(s.target)
    }


def _growing(stmt, empty, displays, append_of):
    """``(name, prefix, reads_last)`` for the first list the loop appends to that needs the rewrite."""
    for s in ir.walk_branches(stmt.body):
        found = append_of(s)
        if found is None:
            continue
        name = found[0]
        reads_last = any(
            is_last_item(node, name)
            for t in ir.walk(stmt.body)
            for e in _expressions(t)
            for node in iter_nodes(e)
        )
        if name not in displays or (name in empty and not reads_last):
            continue
        return name, name not in empty, reads_last
    return None


def _rewritten(stmt, name, prefix, reads_last, append_of, reads, namer):
    """``(before, loop, after)``: the statements before the loop, the loop, and the join after it."""
    before, last, steps = (
        namer.fresh(f"{name}_before"),
        namer.fresh(f"{name}_last"),
        namer.fresh(f"{name}_steps"),
    )
    if reads_last and not prefix:
        raise UnsupportedSyntax(
            f"the loop reads `{name}[-1]`, but `{name}` is empty before the loop (Python raises IndexError)",
            stmt.origin,
            f"give `{name}` its first item before the loop (`{name} = [h0]`)",
        )
    out = [ir.Assign(cst.Name(before), cst.Name(name), stmt.origin)] if prefix else []
    if reads_last:
        out.append(
            ir.Assign(
                cst.Name(last),
                cst.parse_expression(f"{before}[-1]"),
                stmt.origin,
            )
        )
    out.append(ir.Assign(cst.Name(steps), cst.List([]), stmt.origin))
    replacer = _LastItem(name, last)

    def block(statements) -> tuple:
        """``statements`` with the appends to ``name`` (in ``if`` blocks too) made to ``steps``."""
        body = []
        for s in statements:
            found = append_of(s)
            if found is not None and found[0] == name:
                value = rewrite(found[1], replacer)
                if reads_last:
                    body.append(ir.Assign(cst.Name(last), value, s.origin))
                    value = cst.Name(last)
                body.append(
                    ir.Assign(
                        cst.Name(steps),
                        call("rt.append", cst.Name(steps), value),
                        s.origin,
                    )
                )
            elif isinstance(s, ir.If):
                test = rewrite(s.test, replacer)
                body.append(ir.If(test, block(s.body), block(s.orelse), s.origin))
            else:
                body.append(_map(s, lambda e: rewrite(e, replacer)))
        return tuple(body)

    body = block(stmt.body)
    for s in ir.walk(body):
        if name in reads(s):
            raise UnsupportedSyntax(
                f"the list `{name}` is read in the loop that grows it: s2s collects its items as the loop's "
                f"outputs, which exist only after the loop (the loop may read its last item, `{name}[-1]`)",
                s.origin,
                "keep what the loop needs in a variable of its own (a count), or preallocate an array and "
                "write into it",
            )
    loop = ir.For(stmt.target, stmt.iter, body, stmt.origin)
    joined = (  # Python's list concatenation (``rt.join``), never an elementwise ``+``
        call("rt.join", cst.Name(before), cst.Name(steps))
        if prefix
        else cst.Name(steps)
    )
    return out, loop, [ir.Assign(cst.Name(name), joined, stmt.origin)]
