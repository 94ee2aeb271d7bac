"""Control flow: ``if``/``for``/``while`` become ``rt.cond``/``rt.scan``/``rt.while_loop`` over local functions.

Input: the output of ``jumps`` (no ``break``/``continue``; returns at the
ends of blocks). Output: flat bodies of ``Assign``, ``Def`` and one final
``Return``, where each ``Def`` is a branch or loop body used by the
statement right after it:

- ``if`` -> ``y, z = rt.cond(test, if_true, if_false, y, z)``. The
  operands are the variables a branch assigns that have a value before the
  ``if``; the results, those of them used afterwards. Other variables are
  read by the branches as closures. A variable assigned in one branch only,
  with no value before and used afterwards, is an error naming both lines.
  An ``if`` whose branches both return becomes ``f = rt.cond(...)``,
  ``return f``.
- ``for t in xs`` -> ``carry, ys = rt.scan(for_body, init, rt.iterate(xs))``;
  the carry holds the variables the body assigns that are read before being
  assigned in an iteration, or used after the loop. ``range``, ``enumerate``,
  ``zip`` and ``reversed`` become ``rt.range``, ... (the runtime iterates
  arrays along axis 0 as one rolled loop, and Python containers at trace
  time). A list that starts empty and gets one ``append`` per iteration
  becomes the stacked loop output ``ys`` (``np.stack(hs)`` of it is ``hs``).
- ``while test`` -> ``carry = rt.while_loop(while_cond, while_body, init)``.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import call, dotted, names_in
from ..errors import UnsupportedSyntax
from ..naming import Namer
from .dataflow import assigned, live_in, reads, stmt_live_in, used_names, writes
from .jumps import returns_on_every_path

ITERATION_HELPERS = {"range": "rt.range", "enumerate": "rt.enumerate", "zip": "rt.zip", "reversed": "rt.reversed"}


def _names(names) -> cst.BaseExpression:
    """``a`` for one name, ``(a, b)`` for several, ``()`` for none."""
    if len(names) == 1:
        return cst.Name(names[0])
    return cst.Tuple([cst.Element(cst.Name(n)) for n in names])


def _ordered(names, body) -> list[str]:
    """``names`` in the order the statements of ``body`` first bind or read them."""
    order = []
    for stmt in ir.walk(body):
        for n in (*sorted(writes(stmt)), *sorted(reads(stmt))):
            if n in names and n not in order:
                order.append(n)
    return order + sorted(set(names) - set(order))


def _first(body, predicate):
    """The origin of the first statement in ``body`` (nested included) satisfying ``predicate``."""
    for stmt in ir.walk(body):
        if predicate(stmt):
            return stmt.origin
    return None


def _line(origin) -> str:
    return f"line {origin.line}" if origin is not None else "later"


def _append_of(stmt):
    """``L`` and ``v`` of ``L = rt.append(L, v)``, else None."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.target, cst.Name) and isinstance(stmt.value, cst.Call)):
        return None
    if dotted(stmt.value.func) != "rt.append":
        return None
    lst, value = (a.value for a in stmt.value.args)
    if isinstance(lst, cst.Name) and lst.value == stmt.target.value:
        return stmt.target.value, value
    return None


class _Unstack(cst.CSTTransformer):
    """``xp.stack(hs)``, ``xp.array(hs)``, ``xp.asarray(hs)`` of a stacked loop output ``hs`` are ``hs``."""

    def __init__(self, stacked):
        self.stacked = stacked

    def leave_Call(self, original, node):
        func = dotted(node.func)
        if func not in ("xp.stack", "xp.array", "xp.asarray") or not node.args:
            return node
        first = node.args[0].value
        if not (isinstance(first, cst.Name) and first.value in self.stacked and node.args[0].keyword is None):
            return node
        rest = node.args[1:]
        if not rest:
            return first
        axis = rest[0].value if func == "xp.stack" and len(rest) == 1 and (rest[0].keyword is None or rest[0].keyword.value == "axis") else None
        if axis is not None:
            return call("xp.moveaxis", first, cst.Integer("0"), axis)
        return node


class _Lower:
    def __init__(self, fn: ir.Function, namer: Namer):
        self.fn = fn
        self.namer = namer

    # --- blocks ---------------------------------------------------------------------
    def block(self, body, defined: set, live_out: set, later=(), empty=frozenset()) -> list:
        """The lowered statements of ``body``; ``defined`` (names with a value) grows as it goes."""
        lives, live = [], set(live_out)
        for stmt in reversed(body):
            lives.append(live)
            live = stmt_live_in(stmt, live)
        lives.reverse()
        empty, stacked, out = set(empty), set(), []
        for i, (stmt, live_after) in enumerate(zip(body, lives)):
            rest = (*body[i + 1 :], *later)
            if isinstance(stmt, (ir.Assign, ir.Return)):
                if stacked:
                    stmt = _replace_value(stmt, stmt.value.visit(_Unstack(stacked)))
                out.append(stmt)
                if isinstance(stmt, ir.Assign):
                    bound = writes(stmt)
                    defined |= bound
                    stacked -= bound
                    empty -= bound
                    if isinstance(stmt.value, cst.List) and not stmt.value.elements:
                        empty |= bound
            elif isinstance(stmt, ir.If) and returns_on_every_path([stmt]):
                out += self.returning_if(stmt, defined, empty)
            elif isinstance(stmt, ir.If):
                out += self.if_(stmt, defined, live_after, rest, empty)
            elif isinstance(stmt, ir.For):
                lowered, lists = self.for_(stmt, defined, live_after, rest, empty)
                out += lowered
                stacked |= lists
                empty -= lists
            elif isinstance(stmt, ir.While):
                out += self.while_(stmt, defined, live_after, rest)
            elif isinstance(stmt, ir.Def):  # already lowered (generated code read again)
                out.append(stmt)
                defined.add(stmt.function.name)
            else:
                raise AssertionError(f"unexpected statement {type(stmt).__name__}")
        return out

    def function(self, base, params, body, defined, result, later, empty, origin, prelude=()) -> ir.Function:
        """A local function ``base(params)`` running ``body`` then returning ``result`` (None: the body returns)."""
        name = self.namer.fresh(base)
        inner = set(defined) | set(params)
        live_out = names_in(result) if result is not None else set()
        stmts = list(prelude) + self.block(body, inner, live_out, later, empty)
        if result is not None:
            stmts.append(ir.Return(result))
        return ir.Function(name, tuple(ir.Param(p) for p in params), tuple(stmts), origin)

    # --- if -------------------------------------------------------------------------
    def _operands(self, stmt, defined):
        changed = assigned(stmt.body) | assigned(stmt.orelse)
        return _ordered(changed & defined, [stmt])

    def if_(self, stmt, defined, live_after, later, empty) -> list:
        changed = assigned(stmt.body) | assigned(stmt.orelse)
        results = _ordered(changed & live_after, [stmt])
        for name in results:
            for branch, other, missing, assigning in ((stmt.body, stmt.orelse, "if", "else"), (stmt.orelse, stmt.body, "else", "if")):
                if name not in assigned(branch) and name not in defined:
                    where = _first(other, lambda s: name in writes(s))
                    use = _first(later, lambda s: name in reads(s))
                    raise UnsupportedSyntax(
                        f"`{name}` is assigned in the `{assigning}` branch ({_line(where)}) but not in the "
                        f"`{missing}` branch, and is used after the `if` ({_line(use)})",
                        use or stmt.origin,
                        f"give `{name}` a value before the `if`, or assign it in both branches",
                    )
        if not results:
            return []  # nothing the branches compute is used: the statement has no effect
        operands = self._operands(stmt, defined)
        t = self.function("if_true", operands, stmt.body, defined, _names(results), later, empty, stmt.origin)
        f = self.function("if_false", operands, stmt.orelse, defined, _names(results), later, empty, stmt.origin)
        value = call("rt.cond", stmt.test, cst.Name(t.name), cst.Name(f.name), *map(cst.Name, operands))
        defined |= set(results)
        return [ir.Def(t, stmt.origin), ir.Def(f, stmt.origin), ir.Assign(_names(results), value, stmt.origin)]

    def returning_if(self, stmt, defined, empty) -> list:
        operands = self._operands(stmt, defined)
        t = self.function("if_true", operands, stmt.body, defined, None, (), empty, stmt.origin)
        f = self.function("if_false", operands, stmt.orelse, defined, None, (), empty, stmt.origin)
        result = self.namer.fresh(self.fn.name)
        value = call("rt.cond", stmt.test, cst.Name(t.name), cst.Name(f.name), *map(cst.Name, operands))
        return [
            ir.Def(t, stmt.origin),
            ir.Def(f, stmt.origin),
            ir.Assign(cst.Name(result), value, stmt.origin),
            ir.Return(cst.Name(result)),
        ]

    # --- loops ----------------------------------------------------------------------
    def _carried(self, stmt, body, written, exposed, defined, live_after, later, kind) -> list[str]:
        carried = _ordered({n for n in written if n in exposed or n in live_after}, body)
        for name in carried:
            if name in defined:
                continue
            where = _first(body, lambda s: name in writes(s))
            if name in live_after:
                use = _first(later, lambda s: name in reads(s))
                raise UnsupportedSyntax(
                    f"`{name}` is assigned in the {kind} ({_line(where)}) and used after it ({_line(use)}), "
                    "but has no value before the loop",
                    use or stmt.origin,
                    f"give `{name}` a value before the loop (it may run zero times)",
                )
            use = _first(body, lambda s: name in reads(s))
            raise UnsupportedSyntax(
                f"`{name}` is read in the {kind} ({_line(use)}) before it is assigned ({_line(where)})",
                use or stmt.origin,
                f"give `{name}` a value before the loop",
            )
        return carried

    def _carry_param(self, carried):
        """The parameter that receives the carry, and the statement unpacking it (if several)."""
        if len(carried) == 1:
            return carried[0], []
        name = self.namer.fresh("carry")
        if not carried:
            return name, []
        return name, [ir.Assign(_names(carried), cst.Name(name))]

    def for_(self, stmt, defined, live_after, later, empty):
        targets = ir.target_names(stmt.target)
        for name in targets:
            if name in live_after:
                use = _first(later, lambda s: name in reads(s))
                raise UnsupportedSyntax(
                    f"the loop variable `{name}` is used after the loop ({_line(use)})",
                    use or stmt.origin,
                    "copy it into a variable that has a value before the loop",
                )
        lists = self._collected(stmt, empty)
        body = tuple(_Appends(lists).block(stmt.body))
        written = assigned(body) - set(targets) - set(lists)
        exposed = live_in(body, set()) - set(targets)
        carried = self._carried(stmt, body, written, exposed, defined, live_after, later, "loop")
        if not carried and not lists:
            return [], set()  # nothing the loop computes is used
        carry, unpack = self._carry_param(carried)
        if isinstance(stmt.target, cst.Name):
            item, unpack_item = stmt.target.value, []
        else:
            item = self.namer.fresh("item")
            unpack_item = [ir.Assign(stmt.target, cst.Name(item), stmt.origin)]
        ys = [lists[name] for name in lists]
        result = cst.Tuple([cst.Element(_names(carried)), cst.Element(_names(ys) if ys else cst.Name("None"))])
        inner_defined = set(defined) | set(carried) | set(targets)
        fn = self.function(
            "for_body", (carry, item), body, inner_defined, result, later, frozenset(), stmt.origin, (*unpack, *unpack_item)
        )
        xs = self.iteration(stmt.iter)
        init = _names(carried)
        value = call("rt.scan", cst.Name(fn.name), init, xs)
        outputs = cst.Tuple([cst.Element(_names(carried) if carried else cst.Name("_")), cst.Element(_names(list(lists)) if lists else cst.Name("_"))])
        defined |= set(carried) | set(lists)
        return [ir.Def(fn, stmt.origin), ir.Assign(outputs, value, stmt.origin)], set(lists)

    def _collected(self, stmt, empty) -> dict:
        """Lists that grow by one ``append`` per iteration: name -> the name of the per-step item."""
        lists = {}
        for inner in ir.walk(stmt.body):
            found = _append_of(inner)
            if found is None:
                continue
            name = found[0]
            top = [s for s in stmt.body if _append_of(s) is not None and _append_of(s)[0] == name]
            other = [s for s in ir.walk(stmt.body) if name in writes(s) and _append_of(s) is None]
            if len(top) != 1 or inner not in top or other:
                raise UnsupportedSyntax(
                    f"the list `{name}` does not grow by exactly one `append` per iteration",
                    inner.origin,
                    "append once on every iteration (not in a branch, and not with `break`), or preallocate an array and write into it",
                )
            if name not in empty:
                raise UnsupportedSyntax(
                    f"`{name}.append` in a loop needs `{name}` to start as an empty list",
                    inner.origin,
                    f"write `{name} = []` right before the loop",
                )
            lists[name] = self.namer.fresh(f"{name}_item")
        return lists

    def iteration(self, node, nested=False) -> cst.BaseExpression:
        """The sequence a ``for`` runs over, as the runtime iterates it (``rt.iterate(xs)``, ``rt.range(n)``, ...)."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ITERATION_HELPERS:
            name = node.func.value
            args = [a.with_changes(value=self.iteration(a.value, True)) if name != "range" and a.keyword is None else a for a in node.args]
            if name == "enumerate" and len(args) > 1:
                args = [args[0], args[1].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)]
            return cst.Call(cst.parse_expression(ITERATION_HELPERS[name]), args)
        if nested or isinstance(node, cst.Call) and dotted(node.func) in ("rt.items", "rt.keys", "rt.values"):
            return node  # the helpers take any sequence
        return call("rt.iterate", node)

    def while_(self, stmt, defined, live_after, later) -> list:
        for inner in ir.walk(stmt.body):
            if _append_of(inner) is not None:
                raise UnsupportedSyntax(
                    "`append` in a `while` loop (the list's length depends on data)",
                    inner.origin,
                    "use a `for` loop over a fixed range with a `break`, and preallocate an array",
                )
        written = assigned(stmt.body)
        exposed = live_in(stmt.body, set()) | (names_in(stmt.test) & written)
        carried = self._carried(stmt, stmt.body, written, exposed, defined, live_after, later, "`while` loop")
        if not carried:
            return []  # nothing the loop computes is used
        carry, unpack = self._carry_param(carried)
        inner_defined = set(defined) | set(carried)
        test = self.function("while_cond", (carry,), (), inner_defined, stmt.test, later, frozenset(), stmt.origin, unpack)
        body = self.function("while_body", (carry,), stmt.body, inner_defined, _names(carried), later, frozenset(), stmt.origin, unpack)
        value = call("rt.while_loop", cst.Name(test.name), cst.Name(body.name), _names(carried))
        defined |= set(carried)
        return [ir.Def(test, stmt.origin), ir.Def(body, stmt.origin), ir.Assign(_names(carried), value, stmt.origin)]


class _Appends:
    """A loop body with ``L = rt.append(L, v)`` turned into ``L_item = v`` for the collected lists."""

    def __init__(self, lists):
        self.lists = lists

    def block(self, body):
        out = []
        for stmt in body:
            found = _append_of(stmt)
            if found is not None and found[0] in self.lists:
                out.append(ir.Assign(cst.Name(self.lists[found[0]]), found[1], stmt.origin))
            else:
                out.append(stmt)
        return out


def _replace_value(stmt, value):
    if isinstance(stmt, ir.Assign):
        return ir.Assign(stmt.target, value, stmt.origin)
    return ir.Return(value, stmt.origin)


def control(fn: ir.Function, namer: Namer | None = None) -> ir.Function:
    namer = namer or Namer(used_names(fn))
    body = _Lower(fn, namer).block(fn.body, set(fn.param_names), set())
    locals_ = {name: control(local, namer) for name, local in fn.locals.items()}
    return fn.with_body(body, locals=locals_)
