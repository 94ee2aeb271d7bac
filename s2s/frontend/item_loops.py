"""Loops that write into the items they visit, as loops that write through the sequence.

CS231n's ``for bn_param in self.bn_params: bn_param["mode"] = mode`` changes the dicts the list holds:
the loop variable is each item itself, not a copy. s2s reads a write into a name as a new value bound
to that name, which would leave the list as it was; ``desugar(source)`` writes the loop as

    for i in range(len(bn_params)):
        bn_params[i]["mode"] = mode

where every read and write of the item goes through the sequence, as Python's does. What that write
may change (an array's memory, a container another name holds) is then ``aliasing``'s to check.

Guarantee: a ``for p in ps:`` (or ``for i, p in enumerate(ps):``, the builtin: ``for i in range(len(ps))``),
``ps`` a name, whose
body writes into ``p`` by an index (``p[k] = v``, ``p[k] += v``, ``p[k][j] = v``), binds neither ``p``
nor ``ps``, and does not name ``ps`` (the sequence stays the one it visits), where ``p`` is named nowhere
else in the function but in the steps of loops binding it (``for p in ps:`` again) and in comprehensions
and lambdas binding their own ``p`` (no read after the loop sees its last item), is rewritten so; every
other loop is left as it is. Python's item writes reach the same items, in the same order. New nodes
keep the loop's position (the item's reads: the name's they replace).
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import child_nodes, iter_nodes, replace_nodes, rewrite
from .builtin_calls import _is_builtin
from .rewriting import PositionKeeping, namer_of, place, rebinds, with_node
from .source import FunctionSource

_BINDING_SCOPES = (
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
    cst.Lambda,
)


def _binds(scope: cst.CSTNode, name: str) -> bool:
    """Whether a comprehension's targets or a lambda's parameters bind ``name``."""
    if isinstance(scope, cst.Lambda):
        heads = [scope.params]
    else:
        heads, clause = [], scope.for_in
        while clause is not None:
            heads.append(clause.target)
            clause = clause.inner_for_in
    return any(
        isinstance(n, cst.Name) and n.value == name
        for h in heads
        for n in iter_nodes(h)
    )


def _free(node: cst.CSTNode, name: str, loops: bool = False) -> list:
    """The ``Name`` nodes of ``name`` under ``node`` that read the function's ``name`` (not those of a
    comprehension or lambda that binds its own; not attribute names or keywords). ``loops``: nor those in
    the target and body of a ``for`` binding ``name`` (each step binds it before its body reads it).
    """
    found, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            if n.value == name:
                found.append(n)
            continue
        if isinstance(n, _BINDING_SCOPES) and _binds(n, name):
            continue
        if loops and isinstance(n, cst.For) and _loop_binds(n, name):
            stack.append(n.iter)
            if n.orelse is not None:
                stack.append(n.orelse)
            continue
        if isinstance(n, cst.Attribute):
            stack.append(n.value)
            continue
        if isinstance(n, cst.Arg):
            stack.append(n.value)
            continue
        stack.extend(child_nodes(n))
    return found


def _loop_binds(loop: cst.For, name: str) -> bool:
    """Whether ``loop``'s target is ``name`` or a tuple holding it (``for i, name in ...``)."""
    t = loop.target
    elements = [e.value for e in t.elements] if isinstance(t, cst.Tuple) else [t]
    return any(isinstance(e, cst.Name) and e.value == name for e in elements)


def _written(body, name: str) -> bool:
    """Whether ``body`` writes into ``name`` by an index (``name[k] = v``, ``name[k][j] += v``)."""
    for n in iter_nodes(body):
        targets = (
            [t.target for t in n.targets]
            if isinstance(n, cst.Assign)
            else [n.target] if isinstance(n, cst.AugAssign) else []
        )
        for t in targets:
            while isinstance(t, cst.Subscript):
                t = t.value
                if isinstance(t, cst.Name) and t.value == name:
                    return True
    return False


def _bound(body, name: str) -> bool:
    """Whether ``body`` binds ``name`` (``rebinds``, or a ``:=``; ``name[k] = v`` does not)."""
    return rebinds(body, name) > 0 or any(
        isinstance(n, cst.NamedExpr) and n.target.value == name
        for n in iter_nodes(body)
    )


class _ThroughTheSequence(PositionKeeping):
    def __init__(self, source: FunctionSource):
        super().__init__(source.file.positions)
        self.source = source
        self.namer = namer_of(source)
        self.changed = False

    def _loop(self, loop: cst.For):
        """``(item, sequence, index)`` names of a loop this pass rewrites (index None: make one)."""
        target, it = loop.target, loop.iter
        index = None
        if (
            isinstance(target, cst.Tuple)
            and len(target.elements) == 2
            and all(isinstance(e.value, cst.Name) for e in target.elements)
            and isinstance(it, cst.Call)
            and isinstance(it.func, cst.Name)
            and it.func.value == "enumerate"
            and len(it.args) == 1
            and not it.args[0].star
            and not it.args[0].keyword
            and _is_builtin(self.source, it.func, "enumerate")
        ):
            index, target = target.elements[0].value.value, target.elements[1].value
            it = it.args[0].value
        if not (isinstance(target, cst.Name) and isinstance(it, cst.Name)):
            return None
        item, seq = target.value, it.value
        body = loop.body
        if item == seq or index in (item, seq) or not _written(body, item):
            return None
        if _bound(body, item) or _bound(body, seq) or _free(body, seq):
            return None
        if index is not None and _bound(body, index):
            return None
        # ``item`` is read in the steps of loops binding it only (this one's, others')
        if _free(self.source.node, item, loops=True):
            return None
        return item, seq, index

    def leave_For(self, original, updated):
        found = self._loop(original)
        if found is None:
            return updated
        item, seq, index = found
        counter = index or self.namer.fresh("i")
        read = {
            n: place(
                cst.Subscript(
                    cst.Name(seq), [cst.SubscriptElement(cst.Index(cst.Name(counter)))]
                ),
                n,
                self.positions,
            )
            for n in _free(original.body, item)
        }
        body = replace_nodes(updated.body, read)
        head = cst.parse_expression(f"range(len({seq}))")
        self.changed = True
        return place(
            updated.with_changes(target=cst.Name(counter), iter=head, body=body),
            original,
            self.positions,
        )


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its loops that write into their items writing through their sequences."""
    node = source.node
    if not any(isinstance(n, cst.For) for n in iter_nodes(node)):
        return source
    rewriter = _ThroughTheSequence(source)
    new = rewrite(node, rewriter)
    return with_node(source, new) if rewriter.changed else source
