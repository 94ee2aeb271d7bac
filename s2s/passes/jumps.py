"""Jumps: ``break``, ``continue`` and ``return`` become flags and structured branches.

Output guarantees:
- no ``Break`` or ``Continue``; no ``Return`` inside a loop;
- a ``Return`` is the last statement of its block, and a block ending in a
  ``Return`` is the function's body or a branch of an ``if`` that ends its
  own such block (a *returning if*: both branches return);
- every path through the function returns (else an error at the ``def``);
- after a ``break``, a ``for`` loop's variables hold the items it broke at, as in Python.

How: the statements after an ``if`` that may jump move into the branches
that fall through, so every jump ends its branch. In a loop, ``break`` sets
a flag ``_done`` that the loop tests (a ``for`` keeps all its iterations and
skips their bodies, so it stays a rolled ``scan``); ``continue`` ends the
iteration's branch; the loop binds its variables inside the branch (``for _i in
xs: if not _done: i = _i``), so they keep the items of the step that broke; ``return v`` sets ``_done`` and ``_returned`` and the
loop is followed by ``if _returned: return v`` (``v`` first kept in ``_result``
where it reads the loop's own variables: ``return i``). In a ``for`` loop that
only a ``return`` leaves, an append ending a branch the return skips runs at
the end of every step instead (``_unskipped_appends``): the list has one
length for a compiled loop, and differs from Python's only after the loop
returned, where nothing reads it.
"""

from __future__ import annotations

import copy

import libcst as cst

from .. import ir
from ..cstutil import call, dotted, literal, names_in, substitute
from ..errors import UnsupportedSyntax
from ..naming import Namer
from .dataflow import used_names


def _may_jump(body, in_loop: bool) -> bool:
    """Whether ``body`` holds a ``return``, or a ``break``/``continue`` of the enclosing loop."""
    for stmt in body:
        if isinstance(stmt, ir.Return):
            return True
        if isinstance(stmt, (ir.Break, ir.Continue)) and in_loop:
            return True
        if isinstance(stmt, ir.If) and (
            _may_jump(stmt.body, in_loop) or _may_jump(stmt.orelse, in_loop)
        ):
            return True
        if isinstance(stmt, (ir.For, ir.While)) and _may_jump(stmt.body, False):
            return True
    return False


class _Loop:
    """The flags of one loop, created when a jump first needs them."""

    def __init__(self, namer: Namer):
        self.namer = namer
        self.done: str | None = None
        self.returned: str | None = None
        self.returns: list[ir.Return] = []
        self.targets: set[str] = set()  # a ``for`` loop's own variables
        self.many_returns = (
            False  # several: ``_returned`` holds the code of the one taken (1, 2, ...)
        )
        self.breaks = False  # a ``break`` sets ``_done`` too

    def done_flag(self) -> str:
        self.done = self.done or self.namer.fresh("_done")
        return self.done

    def returned_flag(self) -> str:
        self.returned = self.returned or self.namer.fresh("_returned")
        return self.returned


def _set(name: str, value, origin) -> ir.Assign:
    return ir.Assign(cst.Name(name), literal(value), origin)


class _Jumps:
    def __init__(self, namer: Namer):
        self.namer = namer

    def block(self, stmts, loop: _Loop | None) -> tuple:
        stmts = list(stmts)
        out = []
        for k, stmt in enumerate(stmts):
            rest = stmts[k + 1 :]
            if isinstance(stmt, ir.Return):
                if loop is None:
                    return (*out, stmt)
                return (*out, *self._return_in_loop(stmt, loop))
            if isinstance(stmt, ir.Break):
                loop.breaks = True
                return (*out, _set(loop.done_flag(), True, stmt.origin))
            if isinstance(stmt, ir.Continue):
                return tuple(out)
            if isinstance(stmt, ir.If) and _may_jump([stmt], loop is not None):
                body = self.block([*stmt.body, *rest], loop)
                orelse = self.block([*stmt.orelse, *rest], loop)
                return (*out, ir.If(stmt.test, body, orelse, stmt.origin))
            if isinstance(stmt, ir.If):
                out.append(
                    ir.If(
                        stmt.test,
                        self.block(stmt.body, loop),
                        self.block(stmt.orelse, loop),
                        stmt.origin,
                    )
                )
            elif isinstance(stmt, (ir.For, ir.While)):
                inner = _Loop(self.namer)
                out.extend(self._loop(stmt, inner))
                if inner.returned:
                    return (
                        *out,
                        *self.block([self._after(inner, stmt.origin), *rest], loop),
                    )
            else:
                out.append(stmt)
        return tuple(out)

    def _return_in_loop(self, stmt: ir.Return, loop: _Loop) -> list:
        captured = []
        if names_in(stmt.value) & loop.targets:
            # ``return i`` of the loop's variable: its value now, kept in a name the loop carries out
            held = cst.Name(self.namer.fresh("_result"))
            captured.append(ir.Assign(held, stmt.value, stmt.origin))
            stmt = ir.Return(held, stmt.origin)
        loop.returns.append(stmt)
        code = len(loop.returns)
        return [
            *captured,
            _set(
                loop.returned_flag(), code if loop.many_returns else True, stmt.origin
            ),
            _set(loop.done_flag(), True, stmt.origin),
        ]

    def _after(self, loop: _Loop, origin) -> ir.If:
        """``if _returned: return v`` (one test per ``return`` when the loop has several)."""
        flag = cst.Name(loop.returned)
        chain = ()
        for code in range(len(loop.returns), 0, -1):
            ret = loop.returns[code - 1]
            test = (
                flag
                if len(loop.returns) == 1
                else cst.Comparison(
                    flag, [cst.ComparisonTarget(cst.Equal(), cst.Integer(str(code)))]
                )
            )
            chain = (ir.If(test, (ret,), chain, ret.origin),)
        return chain[0]

    def _loop(self, stmt, loop: _Loop) -> list:
        if isinstance(stmt, ir.For):
            loop.targets = set(ir.target_names(stmt.target))
        dry_run = _Loop(copy.deepcopy(self.namer))
        dry_run.targets = loop.targets
        _Jumps(dry_run.namer).block(stmt.body, dry_run)
        loop.many_returns = len(dry_run.returns) > 1
        body = self.block(stmt.body, loop)
        if loop.done is None:
            return [_replace_body(stmt, body)]
        not_done = call("rt.logical_not", cst.Name(loop.done))
        flags = [_set(loop.done, False, stmt.origin)]
        if loop.returned:
            flags.append(
                _set(loop.returned, 0 if loop.many_returns else False, stmt.origin)
            )
        if isinstance(stmt, ir.While):
            return [
                *flags,
                ir.While(
                    call("rt.logical_and", not_done, stmt.test), body, stmt.origin
                ),
            ]
        # appends a ``return`` would skip, at the end of each step (``_unskipped_appends``)
        body, appends = _unskipped_appends(body, loop)
        target = stmt.target
        if loop.breaks:
            # the loop's variables keep the items the loop broke at: bound only while it runs
            items = {n: cst.Name(self.namer.fresh(f"_{n}")) for n in loop.targets}
            target = substitute(stmt.target, items)
            body = (ir.Assign(stmt.target, target, stmt.origin), *body)
        return [
            *flags,
            ir.For(
                target,
                stmt.iter,
                (ir.If(not_done, body, (), stmt.origin), *appends),
                stmt.origin,
            ),
        ]


def _unskipped_appends(body: tuple, loop: _Loop) -> tuple[tuple, list]:
    """``(body, appends)``: a ``for`` loop whose ``_done`` only a ``return`` sets, its appends that end a
    branch the return skips (``if bad: return np.inf`` / ``else: traj.append(state)``) moved to the end of
    every step: the list grows by one each step, as a compiled loop's must, and differs from Python's
    only after the loop returned, where nothing reads it. Kept where the list is read in the loop or
    by a returned value, or the appended value is assigned in the branches (it may have none there).
    """
    if loop.breaks or not loop.returned or not body or not isinstance(body[-1], ir.If):
        return body, []
    last = body[-1]
    returned = set().union(set(), *(names_in(r.value) for r in loop.returns))
    moved = []

    def strip(block):
        """``block`` without the appends that end it (and its last ``if``'s branches)."""
        block = list(block)
        while block and _append_of(block[-1]) is not None:
            moved.insert(0, block.pop())
        if block and isinstance(block[-1], ir.If):
            tail = block[-1]
            block[-1] = ir.If(
                tail.test, strip(tail.body), strip(tail.orelse), tail.origin
            )
        return tuple(block)

    stripped = strip([last])
    if not moved:
        return body, []
    assigned = {n for s in ir.walk([last]) for n in _written(s)}
    for stmt in moved:
        name, value = _append_of(stmt)
        reads_elsewhere = any(
            name in names_in(getattr(s, "value", cst.Name("_"))) and s not in moved
            for s in ir.walk(body)
            if isinstance(s, (ir.Assign, ir.Return, ir.If, ir.AugAssign))
        )
        if reads_elsewhere or name in returned or names_in(value) & (assigned - {name}):
            return body, []
    return (*body[:-1], *stripped), moved


def _append_of(stmt):
    """``(name, value)`` of ``L = rt.append(L, value)``, else None."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.target, cst.Name)):
        return None
    value = stmt.value
    if not (
        isinstance(value, cst.Call)
        and dotted(value.func) == "rt.append"
        and len(value.args) == 2
        and isinstance(value.args[0].value, cst.Name)
        and value.args[0].value.value == stmt.target.value
    ):
        return None
    return stmt.target.value, value.args[1].value


def _written(stmt) -> set:
    target = getattr(stmt, "target", None)
    return set(ir.target_names(target)) if target is not None else set()


def _replace_body(stmt, body):
    if isinstance(stmt, ir.While):
        return ir.While(stmt.test, body, stmt.origin)
    return ir.For(stmt.target, stmt.iter, body, stmt.origin)


def returns_on_every_path(body) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ir.Return):
        return True
    return (
        isinstance(last, ir.If)
        and returns_on_every_path(last.body)
        and returns_on_every_path(last.orelse)
    )


def jumps(fn: ir.Function, namer: Namer | None = None) -> ir.Function:
    namer = namer or Namer(used_names(fn))
    body = _Jumps(namer).block(fn.body, None)
    if not returns_on_every_path(body):
        raise UnsupportedSyntax(
            f"`{fn.name}` can reach its end without a `return`",
            fn.origin,
            "return a value on every path",
        )
    locals_ = {name: jumps(local, namer) for name, local in fn.locals.items()}
    return fn.with_body(body, locals=locals_)
