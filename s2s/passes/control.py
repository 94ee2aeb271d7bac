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
  becomes the stacked loop output ``ys``; its reads after the loop compute
  what Python computes on the list, or are errors (``passes/collected.py``).
  A list that starts with items, or whose last item the loop reads, is first
  rewritten into that form (``passes/growing.py``).
- ``while test`` -> ``carry = rt.while_loop(while_cond, while_body, init)``.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from .. import ir
from ..cstutil import call, dotted, iter_nodes, literal, names_in, substitute
from ..errors import UnsupportedSyntax
from ..naming import Namer
from ..rules.registry import op_named
from . import helper_results
from .collected import COLLECTED, LIST, Kinds, Reads, check_locals
from .dataflow import (
    assigned,
    closure_reads,
    live_in,
    reads,
    stmt_live_in,
    used_names,
    writes,
)
from .growing import grow_lists
from .jumps import returns_on_every_path
from .nested_appends import grouped

ITERATION_HELPERS = {
    "range": "rt.range",
    "enumerate": "rt.enumerate",
    "zip": "rt.zip",
    "reversed": "rt.reversed",
}


def _indexing(xs: cst.BaseExpression, loop, defined) -> cst.BaseExpression:
    """``rt.range(...)`` of a loop that indexes sequences bound before it by its counter (``ws[i]``, read or
    written) with them as ``indexes=``: a Python list among them is visited step by step when traced.
    """
    if not (
        isinstance(xs, cst.Call)
        and dotted(xs.func) == "rt.range"
        and isinstance(loop.target, cst.Name)
    ):
        return xs
    counter = loop.target.value
    parts = [
        part
        for stmt in ir.walk(loop.body)
        for part in (
            getattr(stmt, "target", None),
            getattr(stmt, "value", None),
            getattr(stmt, "test", None),
            getattr(stmt, "iter", None),
        )
        if isinstance(part, cst.CSTNode)
    ]
    indexed = sorted(
        {
            n.value.value
            for part in parts
            for n in iter_nodes(part)
            if isinstance(n, cst.Subscript)
            and isinstance(n.value, cst.Name)
            and n.value.value in defined
            and len(n.slice) == 1
            and isinstance(n.slice[0].slice, cst.Index)
            and isinstance(n.slice[0].slice.value, cst.Name)
            and n.slice[0].slice.value.value == counter
        }
    )
    if not indexed:
        return xs
    names = cst.Tuple([cst.Element(cst.Name(n)) for n in indexed])
    return xs.with_changes(args=[*xs.args, cst.Arg(names, keyword=cst.Name("indexes"))])


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


def _branches_as_lists(results, t, t_kinds: Kinds, f, f_kinds: Kinds):
    """The two branch functions of an ``if``, a branch returning as a Python list (its items:
    ``rt.unstack``) each result it collects by ``append`` where the other branch gives a list display
    (``bn_params = []``, then ``if batchnorm: bn_params = [{...} for ...]``): the value Python has on
    that path, so after the ``if`` the name is a list on both (the ``Kinds`` say so)."""
    branches = [[t, t_kinds], [f, f_kinds]]
    for n in results:
        kinds = [t_kinds.kind(n), f_kinds.kind(n)]
        if set(kinds) != {COLLECTED, LIST}:
            continue
        branch = branches[kinds.index(COLLECTED)]
        fn, after = branch
        *body, ret = fn.body
        value = substitute(ret.value, {n: call("rt.unstack", cst.Name(n))})
        branch[0] = fn.with_body([*body, ir.Return(value, ret.origin)])
        after.bind(n, LIST, None)
    return branches[0][0], branches[1][0]


def _carried_as_lists(
    fn: ir.Function, carried, before: Kinds, after: Kinds, outputs=True
):
    """``fn``, a loop's body, returning as a Python list each carried name that is one before the loop
    and a list its steps collect after the body (``params = [p - lr * g for p, g in zip(params, grads)]``):
    its items (``rt.unstack``), so the carry keeps one structure (``after`` says so). ``outputs``: the
    body returns ``(carry, outputs)`` (a ``for`` loop's), else the carry (a ``while`` loop's).
    """
    relisted = {
        n for n in carried if before.kind(n) == LIST and after.kind(n) == COLLECTED
    }
    if not relisted:
        return fn
    *body, ret = fn.body
    unstacked = {n: call("rt.unstack", cst.Name(n)) for n in relisted}
    for n in relisted:
        after.bind(n, LIST, None)
    if not outputs:
        return fn.with_body(
            [*body, ir.Return(substitute(ret.value, unstacked), ret.origin)]
        )
    carry, ys = ret.value.elements
    listed = substitute(carry.value, unstacked)
    value = ret.value.with_changes(elements=[carry.with_changes(value=listed), ys])
    return fn.with_body([*body, ir.Return(value, ret.origin)])


def _listed_before(carried, before: Kinds, after: Kinds, body, origin) -> list:
    """The lines making each carried name that a loop's steps collect anew, and that held a collected list
    before the loop too (``v = [np.zeros_like(p) for p in params]``, then ``v = [mu * vi - g ...]`` in
    the loop), a Python list of its items before the loop (``rt.unstack``), as ``before`` then says:
    items of different shapes are no array, and the carry keeps one structure
    (``_carried_as_lists`` makes the steps' lists so too). So too a name of unknown kind (a parameter)
    that the steps rebind to a list collected by a loop over it (``params = [p * 0.5 for p in params]``):
    its items are what that loop reads."""
    names = [
        n
        for n in carried
        if (
            before.kind(n) == COLLECTED
            or (before.kind(n) is None and _iterated(n, body))
        )
        and after.kind(n) == COLLECTED
        and any(  # (bound anew in the body, a comprehension's list: not written into)
            isinstance(s, ir.Assign)
            and s.origin == after.collected[n]
            and n in ir.target_names(s.target)
            and n not in names_in(s.value)
            for s in ir.walk(body)
        )
    ]
    for n in names:
        before.bind(n, LIST, None)
    return [
        ir.Assign(cst.Name(n), call("rt.unstack", cst.Name(n)), origin) for n in names
    ]


def _iterated(name: str, body) -> bool:
    """Whether a loop in ``body`` iterates over ``name`` itself (``for p in params:``)."""
    return any(
        isinstance(s, ir.For) and isinstance(s.iter, cst.Name) and s.iter.value == name
        for s in ir.walk(body)
    )


def _first(body, predicate):
    """The origin of the first statement in ``body`` (nested included) satisfying ``predicate``."""
    for stmt in ir.walk(body):
        if predicate(stmt):
            return stmt.origin
    return None


def _written_first(body, name: str, reads) -> bool:
    """Whether ``body``'s first statement (nested included) to touch ``name`` assigns it."""
    for stmt in ir.walk(body):
        if name in writes(stmt):
            return True
        if name in reads(stmt):
            return False
    return False


def _made_in(body, name: str) -> bool:
    """Whether the first of ``body``'s statements to touch ``name`` makes it a new list."""
    for s in body:
        if name in writes(s) or name in reads(s):
            return (
                isinstance(s, ir.Assign)
                and isinstance(s.target, cst.Name)
                and isinstance(s.value, cst.List)
            )
    return False


def _line(origin) -> str:
    return f"line {origin.line}" if origin is not None else "later"


def _append_of(stmt):
    """``L`` and ``v`` of ``L = rt.append(L, v)``, else None."""
    if not (
        isinstance(stmt, ir.Assign)
        and isinstance(stmt.target, cst.Name)
        and isinstance(stmt.value, cst.Call)
    ):
        return None
    if dotted(stmt.value.func) != "rt.append":
        return None
    lst, value = (a.value for a in stmt.value.args)
    if isinstance(lst, cst.Name) and lst.value == stmt.target.value:
        return stmt.target.value, value
    return None


class _Lower:
    def __init__(self, fn: ir.Function, namer: Namer, closures: dict, results: dict):
        self.fn = fn
        self.namer = namer
        self.closures = closures  # naming a local function reads what it captures
        self.results = (
            results  # helper -> which of its results are lists (``helper_results``)
        )
        self.appends: dict = {}  # collected list -> the origin of its ``append``
        self.ever_collected: dict = {}
        self.skipping: set = set()  # collected lists an `if` may skip appending to
        self.rows: set = (
            set()
        )  # collected lists whose items may be containers (tuples, dicts)
        self.exit_kinds = Kinds()
        self.always_live: set = set()  # the output token, in a function that prints
        self.unset: list = (
            []
        )  # names a `for` loop assigns before reading, read after it

    def reads(self, stmt) -> set[str]:
        return reads(stmt, self.closures)

    # --- blocks ---------------------------------------------------------------------
    def block(
        self, body, defined: set, live_out: set, later=(), empty=frozenset(), kinds=None
    ) -> list:
        """The lowered statements of ``body``; ``defined`` (names with a value) grows as it goes.

        ``kinds`` says which names hold lists collected by ``append`` (``collected``):
        their reads are rewritten to compute what Python computes on the lists.
        """
        body = grouped(body, self.namer)
        lives, live = [], set(live_out) | self.always_live
        for stmt in reversed(body):
            lives.append(live)
            live = stmt_live_in(stmt, live, self.closures) | self.always_live
        lives.reverse()
        empty, kinds, out = set(empty), (kinds or Kinds()).copy(), []
        for i, (stmt, live_after) in enumerate(zip(body, lives)):
            rest = (*body[i + 1 :], *later)
            reads_ = Reads(self.fn, kinds, stmt.origin, self.results)
            if isinstance(stmt, ir.Assign):
                pairs = _name_pairs(stmt)
                if pairs is None:
                    value, kind = reads_.value(stmt.value)
                    pairs = [(stmt.target, kind, stmt.value)]
                else:  # ``sm, sP = list(ms), list(Ps)``: each name the kind of its value
                    read = [reads_.value(v) for _, v in pairs]
                    value = stmt.value.with_changes(
                        elements=[
                            e.with_changes(value=v)
                            for e, (v, _) in zip(stmt.value.elements, read)
                        ]
                    )
                    pairs = [(t, k, v) for (t, v), (_, k) in zip(pairs, read)]
                stmt = ir.Assign(stmt.target, value, stmt.origin)
                out.append(stmt)
                bound = writes(stmt)
                defined |= bound
                empty -= bound
                for name in bound:
                    kinds.bind(name, None, stmt.origin)
                for target, kind, written in pairs:
                    if isinstance(target, cst.Name):
                        kinds.bind(
                            target.value,
                            kind,
                            stmt.origin,
                            isinstance(written, cst.Tuple),
                        )
                    elif isinstance(kind, tuple):  # ``hs, caches = run(w, xs)``
                        for t, k in zip(target.elements, kind):
                            if isinstance(t.value, cst.Name):
                                kinds.bind(t.value.value, k, stmt.origin)
                empty |= _made_empty(stmt.target, stmt.value)
            elif isinstance(stmt, ir.Return):
                out.append(ir.Return(reads_.item(stmt.value), stmt.origin))
            elif isinstance(stmt, ir.If):
                stmt = ir.If(
                    reads_.test(stmt.test), stmt.body, stmt.orelse, stmt.origin
                )
                if returns_on_every_path([stmt]):
                    out += self.returning_if(stmt, defined, empty, kinds)
                else:
                    out += self.if_(stmt, defined, live_after, rest, empty, kinds)
            elif isinstance(stmt, ir.For):
                stmt = ir.For(
                    stmt.target, reads_.iterable(stmt.iter), stmt.body, stmt.origin
                )
                lowered, lists = self.for_(
                    stmt, defined, live_after, rest, empty, kinds
                )
                out += lowered
                empty -= lists
            elif isinstance(stmt, ir.While):
                stmt = ir.While(reads_.test(stmt.test), stmt.body, stmt.origin)
                out += self.while_(stmt, defined, live_after, rest, kinds)
            # already lowered (generated code read again)
            elif isinstance(stmt, ir.Def):
                out.append(stmt)
                defined.add(stmt.function.name)
            else:
                raise AssertionError(f"unexpected statement {type(stmt).__name__}")
        self.exit_kinds = kinds  # what the names hold at the block's end (read by ``function``'s caller)
        return out

    def function(
        self,
        base,
        params,
        body,
        defined,
        result,
        later,
        empty,
        origin,
        prelude=(),
        kinds=None,
    ):
        """A local function ``base(params)`` running ``body`` then returning ``result`` (None: the body returns),
        and the ``Kinds`` of the names at the end of ``body``."""
        name = self.namer.fresh(base)
        inner = set(defined) | set(params)
        live_out = names_in(result) if result is not None else set()
        stmts = list(prelude) + self.block(body, inner, live_out, later, empty, kinds)
        if result is not None:
            stmts.append(ir.Return(result))
        return (
            ir.Function(name, tuple(ir.Param(p) for p in params), tuple(stmts), origin),
            self.exit_kinds,
        )

    # --- if -------------------------------------------------------------------------
    def _operands(self, stmt, defined):
        changed = assigned(stmt.body) | assigned(stmt.orelse)
        return _ordered(changed & defined, [stmt])

    def if_(self, stmt, defined, live_after, later, empty, kinds) -> list:
        changed = assigned(stmt.body) | assigned(stmt.orelse)
        results = _ordered(changed & live_after, [stmt])
        if not results:
            # nothing the branches compute is used: the statement has no effect
            return []
        # assigned in one branch only (``if activation == "relu": A = ...`` with no ``else``): no value
        # on the other path, as in Python; a static test picks its branch, a traced one is an error
        unset = [
            ir.Assign(
                cst.Name(name),
                call("rt.unset", literal(name), literal("branch")),
                stmt.origin,
            )
            for name in results
            if name not in defined
            and not (name in assigned(stmt.body) and name in assigned(stmt.orelse))
        ]
        defined |= {a.target.value for a in unset}
        operands = self._operands(stmt, defined)
        t, t_kinds = self.function(
            "if_true",
            operands,
            stmt.body,
            defined,
            _names(results),
            later,
            empty,
            stmt.origin,
            kinds=kinds,
        )
        f, f_kinds = self.function(
            "if_false",
            operands,
            stmt.orelse,
            defined,
            _names(results),
            later,
            empty,
            stmt.origin,
            kinds=kinds,
        )
        t, f = _branches_as_lists(results, t, t_kinds, f, f_kinds)
        value = call(
            "rt.cond",
            stmt.test,
            cst.Name(t.name),
            cst.Name(f.name),
            *map(cst.Name, operands),
        )
        defined |= set(results)
        kinds.join(results, [t_kinds, f_kinds], stmt.origin)
        return [
            *unset,
            ir.Def(t, stmt.origin),
            ir.Def(f, stmt.origin),
            ir.Assign(_names(results), value, stmt.origin),
        ]

    def returning_if(self, stmt, defined, empty, kinds) -> list:
        operands = self._operands(stmt, defined)
        t, _ = self.function(
            "if_true",
            operands,
            stmt.body,
            defined,
            None,
            (),
            empty,
            stmt.origin,
            kinds=kinds,
        )
        f, _ = self.function(
            "if_false",
            operands,
            stmt.orelse,
            defined,
            None,
            (),
            empty,
            stmt.origin,
            kinds=kinds,
        )
        result = self.namer.fresh(self.fn.name)
        value = call(
            "rt.cond",
            stmt.test,
            cst.Name(t.name),
            cst.Name(f.name),
            *map(cst.Name, operands),
        )
        return [
            ir.Def(t, stmt.origin),
            ir.Def(f, stmt.origin),
            ir.Assign(cst.Name(result), value, stmt.origin),
            ir.Return(cst.Name(result)),
        ]

    # --- loops ----------------------------------------------------------------------
    def _carried(
        self, stmt, body, written, exposed, defined, live_after, later, kind
    ) -> list[str]:
        carried = _ordered(
            {n for n in written if n in exposed or n in live_after}, body
        )
        for name in carried:
            if name in defined:
                continue
            where = _first(body, lambda s: name in writes(s))
            if name not in exposed or _written_first(body, name, self.reads):
                # assigned by every step before it is read, read after the loop; or assigned before it
                # is read by an inner loop that may run zero times (``for j in range(m)``, then ``j``
                # read after it), as Python leaves it: its value before the loop is ``rt.unset`` (a
                # ``for`` loop's first step runs on its own; a ``while`` loop's carry holds zeros of
                # the step's shape, ``runtime.control.filled``)
                self.unset.append(name)
                continue
            if name in live_after:
                use = _first(later, lambda s: name in self.reads(s))
                raise UnsupportedSyntax(
                    f"`{name}` is assigned in the {kind} ({_line(where)}) and used after it ({_line(use)}), "
                    "but has no value before the loop",
                    use or stmt.origin,
                    f"give `{name}` a value before the loop (it may run zero times)",
                )
            use = _first(body, lambda s: name in self.reads(s))
            raise UnsupportedSyntax(
                f"`{name}` is read in the {kind} ({_line(use)}) before it is assigned ({_line(where)})",
                use or stmt.origin,
                f"give `{name}` a value before the loop",
            )
        return carried

    def _kept_targets(self, stmt: ir.For, live_after) -> ir.For:
        """A loop whose variable the code after it reads (its last value, as Python keeps it: Welford's
        ``n`` after ``for n, x in enumerate(data, 1)``): the loop runs over a name of its own, the first
        statement of its body assigns the variable, which the loop then carries as any other.
        """
        kept = [n for n in ir.target_names(stmt.target) if n in live_after]
        if not kept:
            return stmt
        renamed = {n: self.namer.fresh(f"{n}_item") for n in kept}
        target = substitute(
            stmt.target, {n: cst.Name(new) for n, new in renamed.items()}
        )
        assigned_first = [
            ir.Assign(cst.Name(n), cst.Name(renamed[n]), stmt.origin) for n in kept
        ]
        return ir.For(target, stmt.iter, (*assigned_first, *stmt.body), stmt.origin)

    def _carry_param(self, carried):
        """The parameter that receives the carry, and the statement unpacking it (if several)."""
        if len(carried) == 1:
            return carried[0], []
        name = self.namer.fresh("carry")
        if not carried:
            return name, []
        return name, [ir.Assign(_names(carried), cst.Name(name))]

    def for_(self, stmt, defined, live_after, later, empty, kinds):
        stmt = self._kept_targets(stmt, live_after)
        targets = ir.target_names(stmt.target)
        lists = self._collected(stmt, empty)
        body = _Appends(lists, self.skipping).body(stmt.body, stmt.origin)
        written = assigned(body) - set(targets) - set(lists)
        exposed = live_in(body, set(), self.closures) - set(targets)
        known = len(self.unset)
        carried = self._carried(
            stmt, body, written, exposed, defined, live_after, later, "loop"
        )
        unset = [
            ir.Assign(cst.Name(n), call("rt.unset", literal(n)), stmt.origin)
            for n in self.unset[known:]
        ]
        if not carried and not lists:
            return [], set()  # nothing the loop computes is used
        carry, unpack = self._carry_param(carried)
        if isinstance(stmt.target, cst.Name):
            item, unpack_item = stmt.target.value, []
        else:
            item = self.namer.fresh("item")
            unpack_item = [ir.Assign(stmt.target, cst.Name(item), stmt.origin)]
        ys = [lists[name] for name in lists]
        result = cst.Tuple(
            [
                cst.Element(_names(carried)),
                cst.Element(_names(ys) if ys else cst.Name("None")),
            ]
        )
        inner_defined = set(defined) | set(carried) | set(targets)

        def body_function():
            inner = kinds.copy()
            for name in targets:
                inner.bind(name, None, None)
            return self.function(
                "for_body",
                (carry, item),
                body,
                inner_defined,
                result,
                later,
                frozenset(),
                stmt.origin,
                (*unpack, *unpack_item),
                inner,
            )

        fn, body_kinds = body_function()
        listed = _listed_before(carried, kinds, body_kinds, body, stmt.origin)
        if listed:  # (the body reads them as the lists they are now)
            fn, body_kinds = body_function()
        fn = _carried_as_lists(fn, carried, kinds, body_kinds)
        xs = _indexing(self.iteration(stmt.iter), stmt, defined)
        init = _names(carried)
        value = call("rt.scan", cst.Name(fn.name), init, xs)
        # a list an `if` may skip appending to: the loop's items, the skipped ones dropped after it
        steps = {
            name: self.namer.fresh(f"{name}_per_step")
            for name in lists
            if name in self.skipping or name in self.rows
        }
        outputs = cst.Tuple(
            [
                cst.Element(_names(carried) if carried else cst.Name("_")),
                cst.Element(
                    _names([steps.get(n, n) for n in lists]) if lists else cst.Name("_")
                ),
            ]
        )
        defined |= set(carried) | set(lists)
        # the carry after zero steps, or after one more
        kinds.join(carried, [kinds.copy(), body_kinds], stmt.origin)
        for name in lists:
            kinds.bind(name, COLLECTED, self.appends[name])
            if name in self.rows:
                kinds.rows.add(name)
            self.ever_collected[name] = self.appends[name]
        kept = []
        for name, step in steps.items():
            items = cst.Name(step)
            if name in self.skipping:
                items = call("rt.kept", items)
            if (
                name in self.rows
            ):  # items that may be tuples or dicts: the list item by item
                items = call("rt.rows", items)
            kept.append(ir.Assign(cst.Name(name), items, stmt.origin))
        return [
            *unset,
            *listed,
            ir.Def(fn, stmt.origin),
            ir.Assign(outputs, value, stmt.origin),
            *kept,
        ], set(lists)

    def _collected(self, stmt, empty) -> dict:
        """Lists that grow by at most one ``append`` per iteration: name -> the name of the per-step item.

        An ``append`` under an ``if`` (a comprehension's ``if`` clause) makes the list's item
        ``rt.skipped()`` on the steps it skips; ``self.skipping`` names those lists. An inner loop's
        appends to a list that this loop's body makes are the inner loop's.
        """
        lists = {}
        for inner in ir.walk(stmt.body):
            found = _append_of(inner)
            if found is None or found[0] in lists:
                continue
            name = found[0]
            appends = [
                s
                for s in ir.walk(stmt.body)
                if _append_of(s) is not None and _append_of(s)[0] == name
            ]
            other = [
                s
                for s in ir.walk(stmt.body)
                if name in writes(s) and _append_of(s) is None
            ]
            reachable = [
                s for s in ir.walk_branches(stmt.body) if any(s is a for a in appends)
            ]
            if other and (not reachable or _made_in(stmt.body, name)):
                continue  # a list of the body's own (collected by an inner loop, or grown in a row)
            if (
                len(reachable) != len(appends)
                or other
                or _appends_per_step(stmt.body, name) != 1
            ):
                raise UnsupportedSyntax(
                    f"the list `{name}` may grow by more than one `append` in an iteration",
                    inner.origin,
                    "append at most once per iteration (an `if` may skip it), not in an inner loop, "
                    "or preallocate an array and write into it",
                )
            if _appends_per_step(stmt.body, name, min) == 0:
                self.skipping.add(name)
            if name not in empty:
                raise UnsupportedSyntax(
                    f"`{name}.append` in a loop needs `{name}` to be a list made in the function "
                    "before the loop",
                    inner.origin,
                    f"write `{name} = []` (or `{name} = [first item]`) before the loop, on a line of its own",
                )
            read = _first(
                stmt.body,
                lambda s: name
                in (
                    names_in(_append_of(s)[1])
                    if any(s is a for a in appends)
                    else self.reads(s)
                ),
            )
            if read is not None:
                raise UnsupportedSyntax(
                    f"the list `{name}` is read in the loop that collects it ({_line(inner.origin)}): s2s collects its "
                    "items as the loop's outputs, which exist only after the loop",
                    read,
                    "keep what the loop needs in a variable of its own (the last item, a count), or preallocate an array and write into it",
                )
            lists[name] = self.namer.fresh(f"{name}_item")
            self.appends[name] = inner.origin
            if any(_may_hold_items(_append_of(a)[1], stmt) for a in appends):
                self.rows.add(name)
        return lists

    def iteration(self, node, nested=False) -> cst.BaseExpression:
        """The sequence a ``for`` runs over, as the runtime iterates it (``rt.iterate(xs)``, ``rt.range(n)``, ...)."""
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value in ITERATION_HELPERS
        ):
            name = node.func.value
            args = [
                (
                    a.with_changes(value=self.iteration(a.value, True))
                    if name != "range" and a.keyword is None
                    else a
                )
                for a in node.args
            ]
            if name == "enumerate" and len(args) > 1:
                args = [
                    args[0],
                    args[1].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT),
                ]
            return cst.Call(cst.parse_expression(ITERATION_HELPERS[name]), args)
        if nested or (
            isinstance(node, cst.Call)
            and dotted(node.func) in ("rt.items", "rt.keys", "rt.values", "rt.range")
        ):
            return node  # the helpers take any sequence
        return call("rt.iterate", node)

    def while_(self, stmt, defined, live_after, later, kinds) -> list:
        for inner in ir.walk(stmt.body):
            # (a list each step makes anew, a comprehension's, grows no more than the step's appends)
            if _append_of(inner) is not None and not _made_in(
                stmt.body, _append_of(inner)[0]
            ):
                raise UnsupportedSyntax(
                    "`append` in a `while` loop (the list's length depends on data)",
                    inner.origin,
                    "use a `for` loop over a fixed range with a `break`, and preallocate an array",
                )
        written = assigned(stmt.body)
        exposed = live_in(stmt.body, set(), self.closures) | (
            names_in(stmt.test) & written
        )
        known = len(self.unset)
        carried = self._carried(
            stmt,
            stmt.body,
            written,
            exposed,
            defined,
            live_after,
            later,
            "`while` loop",
        )
        unset = [
            ir.Assign(cst.Name(n), call("rt.unset", literal(n)), stmt.origin)
            for n in self.unset[known:]
        ]
        if not carried:
            return []  # nothing the loop computes is used
        carry, unpack = self._carry_param(carried)
        inner_defined = set(defined) | set(carried)

        def functions():
            test, _ = self.function(
                "while_cond",
                (carry,),
                (),
                inner_defined,
                stmt.test,
                later,
                frozenset(),
                stmt.origin,
                unpack,
                kinds,
            )
            body, body_kinds = self.function(
                "while_body",
                (carry,),
                stmt.body,
                inner_defined,
                _names(carried),
                later,
                frozenset(),
                stmt.origin,
                unpack,
                kinds,
            )
            return test, body, body_kinds

        test, body, body_kinds = functions()
        listed = _listed_before(carried, kinds, body_kinds, stmt.body, stmt.origin)
        if listed:  # (reading them as the lists they are now)
            test, body, body_kinds = functions()
        body = _carried_as_lists(body, carried, kinds, body_kinds, outputs=False)
        value = call(
            "rt.while_loop", cst.Name(test.name), cst.Name(body.name), _names(carried)
        )
        defined |= set(carried)
        kinds.join(carried, [kinds.copy(), body_kinds], stmt.origin)
        return [
            *unset,
            *listed,
            ir.Def(test, stmt.origin),
            ir.Def(body, stmt.origin),
            ir.Assign(_names(carried), value, stmt.origin),
        ]


def _may_hold_items(value, loop, seen=frozenset()) -> bool:
    """Whether an appended value may be a container (a tuple of arrays, a dict) rather than an array:
    displays are; arithmetic and ``xp`` calls are not; a name is what the loop assigns it, and a loop
    variable, an argument or a helper's result may be either."""
    if isinstance(value, (cst.Tuple, cst.List, cst.Dict)):
        return True
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
        return False
    if isinstance(value, (cst.Integer, cst.Float)):
        return False
    if isinstance(value, cst.Call):
        return not _array_valued(value)
    if isinstance(value, cst.Name) and value.value not in seen:
        sources = [
            s.value
            for s in ir.walk(loop.body)
            if isinstance(s, ir.Assign)
            and isinstance(s.target, cst.Name)
            and s.target.value == value.value
        ]
        if sources and value.value not in ir.target_names(loop.target):
            return any(_may_hold_items(v, loop, seen | {value.value}) for v in sources)
    return True


# ops of the array-valued families that return a list or tuple of arrays
_SEQUENCE_RESULTS = frozenset({"split", "nonzero", "unravel_index"})
_ARRAY_FAMILIES = frozenset(
    {"elementwise", "linear", "multilinear", "vjp", "nondiff", "no_derivative"}
)


def _array_valued(call: cst.Call) -> bool:
    """Whether an ``xp`` call returns one array: its op's family computes one (not ``np.split``'s list,
    ``np.linalg.slogdet``'s tuple, nor a decomposition's, which may be either)."""
    name = dotted(call.func) or ""
    if not name.startswith("xp."):
        return False
    op = op_named(name[3:])
    if op is None or op.family not in _ARRAY_FAMILIES:
        return False
    if name[3:] == "where":  # ``np.where(mask)``: a tuple of index arrays
        return len(call.args) == 3
    return name[3:] not in _SEQUENCE_RESULTS


def _appends_per_step(body, name, most=max) -> int:
    """The most ``append``s to ``name`` that one run of ``body`` makes (``most=min``: the fewest)."""
    count = 0
    for stmt in body:
        found = _append_of(stmt)
        if found is not None and found[0] == name:
            count += 1
        elif isinstance(stmt, ir.If):
            count += most(
                _appends_per_step(stmt.body, name, most),
                _appends_per_step(stmt.orelse, name, most),
            )
    return count


class _Appends:
    """A loop body with ``L = rt.append(L, v)`` turned into ``L_item = v`` for the collected lists
    (in ``if`` blocks too, the item ``rt.skipped()`` before them where an ``if`` may skip the append).
    """

    def __init__(self, lists, skipping):
        self.lists = lists
        self.skipping = skipping

    def body(self, body, origin):
        skipped = [
            ir.Assign(cst.Name(item), call("rt.skipped"), origin)
            for name, item in self.lists.items()
            if name in self.skipping
        ]
        return (*skipped, *self.block(body))

    def block(self, body):
        out = []
        for stmt in body:
            found = _append_of(stmt)
            if found is not None and found[0] in self.lists:
                out.append(
                    ir.Assign(cst.Name(self.lists[found[0]]), found[1], stmt.origin)
                )
            elif isinstance(stmt, ir.If):
                out.append(
                    replace(
                        stmt, body=self.block(stmt.body), orelse=self.block(stmt.orelse)
                    )
                )
            else:
                out.append(stmt)
        return tuple(out)


def control(
    fn: ir.Function,
    namer: Namer | None = None,
    enclosing: dict | None = None,
    results: dict | None = None,
) -> ir.Function:
    """``enclosing``: what the local functions of the enclosing function capture (``closure_reads``);
    ``results``: the helpers it calls whose results are lists (``helper_results.list_results``).
    """
    namer = namer or Namer(used_names(fn))
    closures = closure_reads(fn, enclosing)
    results = dict(results or {})
    for name, local in fn.locals.items():
        results.pop(name, None)
        if (kind := helper_results.local_lists(local)) is not None:
            results[name] = kind
    lower = _Lower(fn, namer, closures, results)
    body = grow_lists(fn.body, _append_of, lambda s: reads(s, closures), namer)
    if any(ir.is_output_token(n) for n in assigned(body)):
        # branches and loops that print carry the token out, so they are kept
        body = (ir.Assign(cst.Name(ir.OUTPUT_TOKEN), cst.Name("None"), None), *body)
        lower.always_live = {ir.OUTPUT_TOKEN}
    body = lower.block(body, set(fn.param_names), set())
    check_locals(fn, lower.ever_collected)
    locals_ = {
        name: control(local, namer, closures, results)
        for name, local in fn.locals.items()
    }
    return fn.with_body(body, locals=locals_)


def _made_empty(target, value) -> set[str]:
    """The names an assignment binds to new empty lists: ``xs = []``, ``t, xs = 0.0, []``."""
    if isinstance(value, cst.List) and not value.elements:
        return set(ir.target_names(target))
    if (
        isinstance(target, cst.Tuple)
        and isinstance(value, cst.Tuple)
        and len(target.elements) == len(value.elements)
    ):
        return {
            name
            for el, v in zip(target.elements, value.elements)
            for name in _made_empty(el.value, v.value)
        }
    return set()


def _name_pairs(stmt: ir.Assign) -> list | None:
    """``[(name, value), ...]`` for ``a, b = e1, e2`` (names, no starred item, as many values), else None."""
    target, value = stmt.target, stmt.value
    if not (
        isinstance(target, cst.Tuple)
        and isinstance(value, cst.Tuple)
        and len(target.elements) == len(value.elements)
        and all(
            isinstance(t.value, cst.Name) and isinstance(t, cst.Element)
            for t in target.elements
        )
        and all(isinstance(v, cst.Element) for v in value.elements)
    ):
        return None
    return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
