"""Python's in-place list changes, on lists the function makes, read as the new lists they make.

A list the function makes (bound only to list displays, comprehensions and ``list(...)``:
``builtin_calls.made_lists``) that no other name can come to hold is a value: changing it in place is
binding its name to the changed list. ``desugar(source)`` writes (``k`` an int literal; ``a``, ``b``
int literals or left out, no step):

    xs.reverse()                    ->  xs = xs[::-1]
    xs.sort(key=f, reverse=r)       ->  xs = sorted(xs, key=f, reverse=r)
    xs.clear()                      ->  xs = []
    xs.insert(i, v)                 ->  xs = xs[:i] + [v] + xs[i:]
    v = xs.pop()    (or a line)     ->  v = xs[-1]  then  xs = xs[:-1]
    v = xs.pop(k)   (or a line)     ->  v = xs[k]   then  xs = xs[:k] + xs[k + 1:]
    del xs[k]                       ->  xs = xs[:k] + xs[k + 1:]
    del xs[a:b]                     ->  xs = xs[:a] + xs[b:]
    xs[a:b] = v                     ->  xs = xs[:a] + list(v) + xs[b:]

Guarantee: only lines of the function's own blocks (not of functions it defines), of a list whose
every read cannot hand it to another name (``_unshared``: indexed, its methods called, iterated, compared,
given to a builtin or a library function, which copy it or read it), so no other name sees the list
change; slices whose bounds are both written and could cross (``xs[3:1] = v``, an insertion in
Python) stay as they are. Other lines stay as they are (their errors).
New lines keep the position of the line they stand for.
"""

from __future__ import annotations

import builtins
import types

import libcst as cst

from ..cstutil import (
    child_nodes,
    int_literal,
    iter_nodes,
    literal,
    names_in,
    replace_nodes,
)
from .builtin_calls import made_lists
from .rewriting import (
    assignment_line,
    bindings,
    function_body,
    namer_of,
    object_of,
    place,
    with_blocks,
    with_body,
)
from .source import FunctionSource

_METHODS = ("reverse", "sort", "clear", "insert", "pop")
# builtins that read a list without keeping it
_READERS = frozenset(
    {"len", "sum", "sorted", "list", "tuple", "min", "max", "any", "all", "print"}
)
# builtins whose iterator keeps the list (it sees later changes): read only as a loop's sequence
_LAZY = frozenset({"enumerate", "zip", "reversed", "map", "iter"})
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def _index(k: int, lst: cst.Name) -> cst.Subscript:
    return cst.Subscript(lst, [cst.SubscriptElement(cst.Index(literal(k)))])


def _slice(
    lst: cst.Name, lower: int | None, upper: int | None, step: int | None = None
) -> cst.Subscript:
    bounds = [None if k is None else literal(k) for k in (lower, upper, step)]
    return cst.Subscript(lst, [cst.SubscriptElement(cst.Slice(*bounds))])


def _crossing(lower: int | None, upper: int | None) -> bool:
    """Whether slice bounds may cross (Python then reads ``upper`` as ``lower``)."""
    if lower is None or upper is None:
        return False
    return (lower < 0) != (upper < 0) or lower > upper


class _Lists:
    def __init__(self, source: FunctionSource, lists: set):
        self.source = source
        self.positions = source.file.positions
        self.bound = bindings(source.node)
        self.lists = lists
        self.namer = namer_of(source)
        self.runtime = None  # s2s's runtime, under a name of the function's own
        self.changed = False

    def _joined(self, *parts) -> cst.BaseExpression:
        """Python's concatenation of lists: ``+`` where a part is a list display (``xs[:i] + [v]``, which s2s
        reads as a join), else the runtime's ``join`` (``xs[:k] + xs[k + 1:]`` could be arrays added).
        """
        out = parts[0]
        for part in parts[1:]:
            if isinstance(out, cst.List) or isinstance(part, cst.List):
                out = cst.BinaryOperation(out, cst.Add(), part)
                continue
            if self.runtime is None:
                self.runtime = self.namer.fresh("s2s_runtime")
            join = cst.Attribute(cst.Name(self.runtime), cst.Name("join"))
            out = cst.Call(join, [cst.Arg(out), cst.Arg(part)])
        return out

    def _without(self, lst: cst.Name, k: int) -> cst.BaseExpression:
        """``xs`` without its item ``k`` (``xs[:k] + xs[k + 1:]``; ``xs[1:]``, ``xs[:-1]`` at the ends)."""
        if k == -1:
            return _slice(lst, None, -1)
        if k == 0:
            return _slice(lst, 1, None)
        return self._joined(_slice(lst, None, k), _slice(lst, k + 1, None))

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            written = (
                self._written(stmt)
                if isinstance(stmt, cst.SimpleStatementLine)
                else None
            )
            if written is None and isinstance(stmt, cst.For):
                # a loop over a list it changes sees the changes (Python iterates the list object):
                # those changes stay as they are (their located error)
                iterated = names_in(stmt.iter) & self.lists
                self.lists -= iterated
                out.append(with_blocks(stmt, self.block, self.positions))
                self.lists |= iterated
            elif written is None:
                out.append(with_blocks(stmt, self.block, self.positions))
            else:
                out.extend(written)
                self.changed = True
        return out

    def _line(self, target, value, stmt):
        return assignment_line(
            target, place(value, stmt, self.positions), stmt, self.positions
        )

    def _written(self, stmt) -> list | None:
        if len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        if isinstance(small, cst.Expr):
            return self._method(small.value, None, stmt) or self._popped_inside(stmt)
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target = small.targets[0].target
            if isinstance(target, cst.Name):
                return self._method(small.value, target, stmt) or self._popped_inside(
                    stmt
                )
            if isinstance(target, cst.Subscript):
                return self._slice_written(target, small.value, stmt)
            return None
        if isinstance(small, cst.Del) and isinstance(small.target, cst.Subscript):
            return self._deleted(small.target, stmt)
        return self._popped_inside(stmt)

    def _popped_inside(self, stmt) -> list | None:
        """``total = total + stack.pop() * w`` (a line reading the list only by that ``pop``): the item
        taken on a line before, then the line reading it."""
        calls = [
            n
            for n in iter_nodes(stmt)
            if isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and n.func.attr.value == "pop"
            and self._list(n.func.value) is not None
        ]
        if len(calls) != 1 or any(
            isinstance(n, (*_SCOPES, cst.IfExp, cst.BooleanOperation))
            for n in iter_nodes(stmt)
        ):  # (a pop a condition may skip stays where it is)
            return None
        call = calls[0]
        lst = call.func.value
        if (
            sum(
                isinstance(n, cst.Name) and n.value == lst.value
                for n in iter_nodes(stmt)
            )
            != 1
        ):
            return None
        taken = cst.Name(self.namer.fresh(f"{lst.value}_popped"))
        lines = self._method(call, taken, stmt)
        if lines is None:
            return None
        rest = place(replace_nodes(stmt, {call: taken}), stmt, self.positions)
        return lines + [rest]

    def _list(self, node) -> cst.Name | None:
        return node if isinstance(node, cst.Name) and node.value in self.lists else None

    def _method(self, call, target, stmt) -> list | None:
        """``xs.reverse()``, ``xs.sort(...)``, ``xs.clear()``, ``xs.insert(i, v)``, ``[v =] xs.pop([k])``."""
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return None
        lst, method = self._list(call.func.value), call.func.attr.value
        if lst is None or method not in _METHODS or any(a.star for a in call.args):
            return None
        args, keywords = call.args, [a for a in call.args if a.keyword is not None]
        if method == "pop":
            if keywords or len(args) > 1:
                return None
            k = -1 if not args else int_literal(args[0].value)
            if k is None:
                return None
            lines = (
                [self._line(target, _index(k, lst), stmt)] if target is not None else []
            )
            return lines + [self._line(lst, self._without(lst, k), stmt)]
        if target is not None:
            return None  # (``None`` bound to a name: left as Python writes it)
        if method == "reverse" and not args:
            value = _slice(lst, None, None, -1)
        elif method == "clear" and not args:
            value = cst.List([])
        elif method == "sort" and len(keywords) == len(args):
            value = cst.Call(cst.Name("sorted"), [cst.Arg(lst), *args])
        elif method == "insert" and len(args) == 2 and not keywords:
            at, item = args[0].value, args[1].value
            upper = cst.Subscript(
                lst, [cst.SubscriptElement(cst.Slice(lower=None, upper=at))]
            )
            lower = cst.Subscript(
                lst, [cst.SubscriptElement(cst.Slice(lower=at, upper=None))]
            )
            value = self._joined(upper, cst.List([cst.Element(item)]), lower)
        else:
            return None
        return [self._line(lst, value, stmt)]

    def _bounds(self, subscript) -> tuple | None:
        """``(lower, upper)`` of ``xs[a:b]`` (int literals or None), or ``(k,)`` of ``xs[k]``, else None."""
        if len(subscript.slice) != 1:
            return None
        item = subscript.slice[0].slice
        if isinstance(item, cst.Index):
            k = int_literal(item.value)
            return None if k is None else (k,)
        if item.step is not None:
            return None
        lower, upper = int_literal(item.lower), int_literal(item.upper)
        if (item.lower is not None and lower is None) or (
            item.upper is not None and upper is None
        ):
            return None
        return None if _crossing(lower, upper) else (lower, upper)

    def _slice_written(self, target, value, stmt) -> list | None:
        """``xs[a:b] = v``."""
        lst, bounds = self._list(target.value), self._bounds(target)
        if lst is None or bounds is None or len(bounds) != 2:
            return None
        lower, upper = bounds
        parts = [_slice(lst, None, lower)] if lower is not None else []
        parts.append(
            value
            if isinstance(value, cst.List)
            else cst.Call(cst.Name("list"), [cst.Arg(value)])
        )
        if upper is not None:
            parts.append(_slice(lst, upper, None))
        return [self._line(lst, self._joined(*parts), stmt)]

    def _deleted(self, target, stmt) -> list | None:
        """``del xs[k]``, ``del xs[a:b]``."""
        lst, bounds = self._list(target.value), self._bounds(target)
        if lst is None or bounds is None:
            return None
        if len(bounds) == 1:
            return [self._line(lst, self._without(lst, bounds[0]), stmt)]
        lower, upper = bounds
        parts = ([_slice(lst, None, lower)] if lower is not None else []) + (
            [_slice(lst, upper, None)] if upper is not None else []
        )
        return [self._line(lst, self._joined(*parts) if parts else cst.List([]), stmt)]


def _unshared(body, name: str) -> bool:
    """Whether every read of the list ``name`` keeps it to itself (see the module; its calls are checked
    by ``_reading_calls_only``), and no function the body defines binds that name."""
    stack = [(child, None) for child in body]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, _SCOPES) and bindings(node)[name]:
            return False
        if (
            isinstance(node, cst.Name)
            and node.value == name
            and not _keeps_to_itself(node, parent)
        ):
            return False
        stack.extend((child, node) for child in child_nodes(node))
    return True


def _keeps_to_itself(node, parent) -> bool:
    """Whether the name ``node`` under ``parent`` reads (or binds) its list without handing it on."""
    if isinstance(parent, (cst.Subscript, cst.Attribute)):
        return parent.value is node or getattr(parent, "attr", None) is node
    if isinstance(parent, (cst.For, cst.CompFor, cst.AssignTarget)):
        # iterated, or bound (``made_lists`` keeps names bound to lists only)
        return True
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
        return True
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)):
        return parent.test is node  # (its truth: ``while stack:``)
    if isinstance(parent, cst.UnaryOperation):
        return isinstance(parent.operator, cst.Not)
    if isinstance(parent, cst.AugAssign):
        return parent.target is node
    return isinstance(parent, cst.Arg)  # (its call: ``_reading_calls_only``)


def _reading_calls_only(source: FunctionSource, body, name: str) -> bool:
    """Whether every call given the list ``name`` as an argument is a builtin that reads it (an iterator of
    it only as a loop's sequence, whose loop ``_Lists`` leaves its changes to) or a library function
    (NumPy's, JAX's: they copy what they keep)."""
    bound = bindings(source.node)
    looped = {
        id(n.iter)
        for stmt in body
        for n in iter_nodes(stmt)
        if isinstance(n, (cst.For, cst.CompFor))
    }
    for stmt in body:
        for node in iter_nodes(stmt):
            if not isinstance(node, cst.Call) or not any(
                isinstance(a.value, cst.Name) and a.value.value == name
                for a in node.args
            ):
                continue
            func = node.func
            builtin = isinstance(func, cst.Name) and source.env.get(
                func.value, getattr(builtins, func.value, None)
            ) is getattr(builtins, func.value, None)
            if builtin and (
                func.value in _READERS or (func.value in _LAZY and id(node) in looped)
            ):
                continue
            obj = object_of(func, source.env, bound)
            module = getattr(obj, "__module__", None) or ""
            if not isinstance(obj, types.ModuleType) and module.split(".")[0] in (
                "numpy",
                "jax",
                "scipy",
            ):
                continue
            return False
    return True


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its in-place changes of lists it makes written as the lists they make (see the module)."""
    body = function_body(source)
    if body is None:
        return source
    changing = {
        n.value
        for node in iter_nodes(source.node)
        for n in (
            (node.func.value,)
            if isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _METHODS
            else (
                (node.target.value,)
                if isinstance(node, cst.Del) and isinstance(node.target, cst.Subscript)
                else (
                    (node.targets[0].target.value,)
                    if isinstance(node, cst.Assign)
                    and isinstance(node.targets[0].target, cst.Subscript)
                    and any(
                        isinstance(e.slice, cst.Slice)
                        for e in node.targets[0].target.slice
                    )
                    else ()
                )
            )
        )
        if isinstance(n, cst.Name)
    }
    if not changing:
        return source
    lists = {
        name
        for name in made_lists(source.node) & changing
        if _unshared(body, name) and _reading_calls_only(source, body, name)
    }
    if not lists:
        return source
    rewriter = _Lists(source, lists)
    statements = rewriter.block(body)
    if not rewriter.changed:
        return source
    if rewriter.runtime is None:
        return with_body(source, statements)
    from .. import runtime

    return with_body(source, statements, env={**source.env, rewriter.runtime: runtime})
