"""Local functions that change their enclosing function's lists or rebind its names, read as functions
that take those values and hand them back.

In Python a local function shares its enclosing function's variables::

    outs = []
    def layer(W, h):
        h = np.tanh(h @ W)
        outs.append(h)        # loss's list
        return h
    for W in params:
        h = layer(W, h)

s2s computes lists as values, so ``desugar(source)`` makes the sharing explicit. A function that
appends one item per call (one ``append`` in its own top-level statements, before any ``return``, the
list read nowhere else in it) returns the item, which the caller appends: ``layer`` ends with
``outs_item = h; return h, outs_item`` and ``h = layer(W, h)`` becomes ``h, outs_item = layer(W, h)``
then ``outs.append(outs_item)``, the one ``append`` per iteration that a compiled loop collects. Any
other function takes the list as a keyword-only parameter and hands it back: ``return (value, outs)``,
called as ``h, outs = layer(W, h, outs=outs)`` (a list grown through such a call is a Python value,
which a compiled loop cannot carry: that stays an error). Likewise a name a local function declares
``nonlocal`` (a counter, a running total): the declaration is dropped and the name threaded.

Guarantees:

- threaded through a local function: the names it appends to (``append``, ``extend``) that an
  enclosing function made (assigned, not received as a parameter: the caller's list stays refused by
  the resolver), and the ``nonlocal`` names it binds; also those of the local functions it calls
  (siblings, its own local functions), at any depth;
- every call of such a function is rewritten where it stands: a call statement, an assignment of the
  call, or a call inside a simple statement that reads none of the threaded names elsewhere (its value
  is computed on the line before). Anything else is a located error naming the function and the name it
  changes (the function passed as a value or called in a lambda, a loop or ``if`` test, a conditional or
  short-circuit expression, or where a local function of the same name binds it), never a change lost;
- ``FunctionSource.handed_back`` names the parameters threaded this way, whose appends the resolver
  accepts (the caller takes them back).

New nodes keep the positions of the user's code they stand for.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from .. import ir
from ..cstutil import child_nodes, replace_nodes
from ..errors import UnsupportedSyntax
from ..naming import Namer
from .rewriting import as_written, parameter_names, place, with_node
from .source import FunctionSource

GROWING = ("append", "extend")
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def _lines(suite) -> list:
    return [suite] if isinstance(suite, cst.SimpleStatementSuite) else list(suite.body)


def _blocks(stmt) -> list:
    """The statement lists directly inside a compound statement (``elif`` chains included)."""
    if not isinstance(stmt, (cst.If, cst.For, cst.While)):
        return []
    blocks = [_lines(stmt.body)]
    orelse = stmt.orelse
    if isinstance(orelse, cst.If):
        blocks += _blocks(orelse)
    elif orelse is not None:
        blocks.append(_lines(orelse.body))
    return blocks


def _statements(body):
    """Every statement of a function's own scope, nested blocks included (not local functions' bodies)."""
    for stmt in body:
        yield stmt
        for block in _blocks(stmt):
            yield from _statements(block)


def _small(body):
    for stmt in _statements(body):
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from stmt.body


def _own_nodes(node):
    """The nodes under ``node`` outside the local functions, lambdas and classes it holds."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if n is not node and isinstance(n, _SCOPES):
            continue
        stack.extend(reversed(child_nodes(n)))


def _written_into(small) -> list:
    """The names whose items the statement writes (``c[k] = v``, ``c[i]["mode"] = m``, ``c[k] += v``)."""
    targets = (
        [t.target for t in small.targets]
        if isinstance(small, cst.Assign)
        else [small.target] if isinstance(small, cst.AugAssign) else []
    )
    found = []
    for t in targets:
        if not isinstance(t, cst.Subscript):
            continue
        while isinstance(t, cst.Subscript):
            t = t.value
        if isinstance(t, cst.Name):
            found.append(t.value)
    return found


def _growing(small) -> str | None:
    """``outs`` for the statement ``outs.append(v)`` (or ``extend``)."""
    call = small.value if isinstance(small, cst.Expr) else None
    if (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and isinstance(call.func.value, cst.Name)
        and call.func.attr.value in GROWING
    ):
        return call.func.value.value
    return None


@dataclass
class _Scope:
    """A function's scope as written: what it binds, changes and calls."""

    node: cst.FunctionDef
    params: set
    bound: set  # assigned in the body (``nonlocal`` names excluded), local ``def``s included
    declared: set  # ``nonlocal`` names
    grown: set  # names appended to, or whose items it writes (``c[k] = v``)
    called: set  # names called
    once: set  # names appended to by one top-level ``append`` before any ``return``, read nowhere else
    mentioned: set  # every name its code holds, local functions' included
    children: dict = field(default_factory=dict)  # local ``def``s by name
    # name -> "grown"/"rebound": the free names it changes
    changes: dict = field(default_factory=dict)
    visible: dict = field(
        default_factory=dict
    )  # the local functions it can call, by name
    threaded: list = field(
        default_factory=list
    )  # ``_Thread``s: what it hands back, in order

    @property
    def locals(self) -> set:
        return self.params | self.bound

    @classmethod
    def of(cls, node: cst.FunctionDef) -> _Scope:
        body = _lines(node.body)
        p = node.params
        params = parameter_names(p)
        declared = {
            n.name.value
            for small in _small(body)
            if isinstance(small, cst.Nonlocal)
            for n in small.names
        }
        bound = set()
        for stmt in _statements(body):
            if isinstance(stmt, cst.FunctionDef):
                bound.add(stmt.name.value)
            if isinstance(stmt, cst.For):
                bound.update(ir.target_names(stmt.target))
        for small in _small(body):
            if isinstance(small, cst.Assign):
                for t in small.targets:
                    bound.update(ir.target_names(t.target))
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                bound.update(ir.target_names(small.target))
        grown = {n for n in map(_growing, _small(body)) if n is not None}
        grown.update(n for small in _small(body) for n in _written_into(small))
        called = {
            n.func.value
            for n in _own_nodes(node.body)
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
        }
        mentioned = [n.value for n in _all_nodes(node.body) if isinstance(n, cst.Name)]
        scope = cls(
            node, params, bound - declared, declared, grown, called,
            _appended_once(body, mentioned), set(mentioned),
        )  # fmt: skip
        for stmt in _statements(body):
            if isinstance(stmt, cst.FunctionDef):
                scope.children[stmt.name.value] = cls.of(stmt)
        return scope


def _appended_once(body, mentioned: list) -> set:
    """The names ``body`` appends to exactly once, in a top-level statement no ``return`` comes before,
    and names nowhere else."""
    once, returned = set(), False
    for stmt in body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            name = _growing(small)
            if (
                name is not None
                and not returned
                and small.value.func.attr.value == "append"
                and mentioned.count(name) == 1
            ):
                once.add(name)
        returned = returned or any(
            isinstance(n, (cst.Return, cst.Nonlocal)) for n in _own_nodes(stmt)
        )
    return once


@dataclass(frozen=True)
class _Thread:
    """A name a local function changes: its ``item`` (the one value it appends, returned) or, with
    ``item`` None, the name's value itself (taken and handed back; only handed back where ``taken`` is
    False: the function assigns it before anything reads it, a method's output ``self.K = ...``).
    """

    name: str
    item: str | None = None
    taken: bool = True


def _find_changes(root: _Scope) -> None:
    """Each local function's ``visible`` functions and ``changes``: the free names it appends to or
    rebinds, itself or through the local functions it calls (its own, its siblings, its enclosing
    functions')."""
    scopes = []

    def walk(scope, visible):
        scope.visible = {
            k: v for k, v in visible.items() if k not in scope.locals
        } | scope.children
        for child in scope.children.values():
            scopes.append(child)
            walk(child, scope.visible)

    walk(root, {})
    for fn in scopes:
        fn.changes = dict.fromkeys(fn.grown - fn.locals, "grown")
        fn.changes |= dict.fromkeys(fn.declared, "rebound")
    changed = True
    while changed:
        changed = False
        for fn in scopes:
            for callee in [*_callees(fn), *fn.children.values()]:
                for n, kind in callee.changes.items():
                    if n not in fn.locals and n not in fn.changes:
                        fn.changes[n] = kind
                        changed = True


def _callees(fn: _Scope) -> list:
    """The local functions ``fn`` calls by name."""
    return [fn.visible[n] for n in sorted(fn.called) if n in fn.visible]


def _choose(scope: _Scope, inherited: set, namer: Namer) -> None:
    """Each local function's ``threaded`` names: its changes that this scope (or one around it) owns.

    ``inherited``: names threaded into ``scope`` itself. A list this scope received as a parameter
    is the caller's: left to the resolver's error.
    """
    owned_lists = (scope.bound - scope.params) | inherited
    owned = scope.locals | inherited
    for child in scope.children.values():
        child.threaded = [
            (
                _Thread(n, namer.fresh(f"{n}_item"))
                if _one_item(child, n)
                else _Thread(n, taken=not _written_first(child, n, kind))
            )
            for n, kind in sorted(child.changes.items())
            if n in (owned_lists if kind == "grown" else owned)
        ]
        _choose(child, {t.name for t in child.threaded}, namer)


def _written_first(fn: _Scope, name: str, kind: str) -> bool:
    """Whether ``fn`` rebinds ``name`` on a line of its own level before anything could read it: no line
    before names it, returns or calls a local function, and the line's value does not read it.
    """
    if kind != "rebound" or name not in fn.declared:
        return False
    for stmt in _lines(fn.node.body):
        small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else None
        if (
            small is not None
            and len(small) == 1
            and isinstance(small[0], cst.Assign)
            and name in ir.target_names(small[0].targets[-1].target)
            and not any(n.value == name for n in _names(small[0].value))
        ):
            return True
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, cst.Nonlocal) for s in stmt.body
        ):
            continue  # the declarations
        if any(
            (isinstance(n, cst.Name) and n.value == name)
            or isinstance(n, cst.Return)
            or (
                isinstance(n, cst.Call)
                and isinstance(n.func, cst.Name)
                and n.func.value in fn.visible
            )
            for n in _all_nodes(stmt)
        ):
            return False
    return False


def _names(node):
    return (n for n in _all_nodes(node) if isinstance(n, cst.Name))


def _one_item(fn: _Scope, name: str) -> bool:
    """Whether ``fn`` appends exactly one item to ``name`` per call, and no function it calls names it."""
    return name in fn.once and not any(name in f.mentioned for f in _callees(fn))


class _Rewriter:
    def __init__(self, source: FunctionSource, namer: Namer):
        self.source, self.namer = source, namer
        self.positions = source.file.positions
        self.handed_back: set = set()

    def fail(self, node, what, hint):
        raise UnsupportedSyntax(what, self.source.origin(node), hint)

    # --- a scope ------------------------------------------------------------------------------

    def function(self, scope: _Scope, visible: dict, threaded: list) -> cst.FunctionDef:
        """``scope``'s def with its calls rewritten; with ``threaded`` names, taken and handed back."""
        node = scope.node
        own = {name: child.threaded for name, child in scope.children.items()}
        # a function of an enclosing scope, called here: its names must be the same variables here
        inner = {k: v for k, v in visible.items() if k not in scope.locals}
        self.scope, self.inherited = scope, set(inner)
        calls = {**inner, **own}
        body = self.block(_lines(node.body), scope, calls, threaded)
        if threaded:
            self.handed_back.update((node.name.value, t.name) for t in threaded)
            if (
                not body
                or not isinstance(body[-1], cst.SimpleStatementLine)
                or not any(
                    isinstance(s, (cst.Return, cst.Raise)) for s in body[-1].body
                )
            ):
                body.append(
                    self._at(
                        cst.SimpleStatementLine([self._return(None, threaded)]), node
                    )
                )
            params = node.params.with_changes(
                kwonly_params=[
                    *node.params.kwonly_params,
                    *(
                        cst.Param(cst.Name(t.name))
                        for t in threaded
                        if t.item is None and t.taken
                    ),
                ],
            )
            if params.kwonly_params and not isinstance(params.star_arg, cst.Param):
                params = params.with_changes(star_arg=cst.ParamStar())
            node = node.with_changes(params=params)
        suite = node.body
        if isinstance(suite, cst.SimpleStatementSuite):  # ``def h(y): return 2 * y``
            return node.with_changes(
                body=suite if body == [suite] else cst.IndentedBlock(body)
            )
        return node.with_changes(body=suite.with_changes(body=body))

    def block(self, statements, scope, calls, threaded) -> list:
        out = []
        for stmt in statements:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value in scope.children:
                child = scope.children[stmt.name.value]
                saved = self.scope, self.inherited
                new = self.function(child, calls, child.threaded)
                self.scope, self.inherited = saved
                out.append(self._at(new, stmt))
            elif isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                out.extend(self.line(stmt, calls, threaded))
            else:
                self._no_calls_in_head(stmt, calls)
                out.append(self._compound(stmt, scope, calls, threaded))
        return out

    def _compound(self, stmt, scope, calls, threaded):
        def rewritten(suite):
            if isinstance(suite, cst.SimpleStatementSuite):
                lines = self.line(suite, calls, threaded)
                if len(lines) == 1 and lines[0] is suite:
                    return suite
                return cst.IndentedBlock(lines)
            return suite.with_changes(
                body=self.block(list(suite.body), scope, calls, threaded)
            )

        new = stmt.with_changes(body=rewritten(stmt.body))
        orelse = getattr(stmt, "orelse", None)  # (a ``with`` block has none)
        if isinstance(orelse, cst.If):
            new = new.with_changes(
                orelse=self._compound(orelse, scope, calls, threaded)
            )
        elif orelse is not None:
            new = new.with_changes(
                orelse=orelse.with_changes(body=rewritten(orelse.body))
            )
        return self._at(new, stmt)

    def _no_calls_in_head(self, stmt, calls):
        if isinstance(stmt, (cst.If, cst.While)):
            heads = [stmt.test]
        elif isinstance(stmt, cst.For):
            heads = [stmt.iter]
        elif isinstance(stmt, cst.With):
            heads = [item.item for item in stmt.items]
        else:  # ``try``: its blocks are the resolver's located error
            heads = [stmt]
        orelse = getattr(stmt, "orelse", None)
        while isinstance(orelse, cst.If):
            heads.append(orelse.test)
            orelse = orelse.orelse
        for head in heads:
            for n in _own_nodes(head):
                if isinstance(n, cst.Name) and calls.get(n.value):
                    self._refuse(n, calls, "called in a loop or `if` test")

    # --- a line -------------------------------------------------------------------------------

    def line(self, stmt, calls, threaded) -> list:
        if not calls and not threaded:
            return [stmt]
        smalls = []
        for small in stmt.body:
            if isinstance(small, cst.Nonlocal) and all(
                n.name.value in {t.name for t in threaded} for n in small.names
            ):
                continue
            smalls.extend(self.small(small, calls, threaded))
        if smalls == list(stmt.body):
            return [stmt]
        return [self._at(cst.SimpleStatementLine([s]), stmt) for s in smalls]

    def small(self, small, calls, threaded) -> list:
        """``small`` with its threaded calls computed before it (their items appended after each)."""
        appended = _growing(small)
        for t in threaded:
            if t.item is not None and appended == t.name:  # the one item, handed back
                return [
                    self._at(
                        cst.Assign(
                            [cst.AssignTarget(cst.Name(t.item))],
                            small.value.args[0].value,
                        ),
                        small,
                    )
                ]
        value = getattr(small, "value", None)
        if (
            isinstance(small, cst.Expr)
            and isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value in calls
        ):  # a call statement: its value discarded, what it changes kept
            return self._threaded_call(cst.Name(self._discard()), value, calls)
        found = [
            n
            for n in _own_nodes(small)
            if isinstance(n, cst.Name) and calls.get(n.value)
        ]
        before = []
        if found:
            whole = (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name)
                and value.func.value in calls
                and len(found) == 1
            )
            if whole and isinstance(small, cst.Assign) and len(small.targets) == 1:
                return self._threaded_call(small.targets[0].target, value, calls)
            before, small = self._hoisted(small, found, calls)
        if threaded and isinstance(small, cst.Return):
            small = self._at(self._return(small.value, threaded), small)
        return [*before, small]

    def _hoisted(self, small, found, calls):
        """The calls in ``small`` computed on lines before it, ``small`` reading their values."""
        callees = {id(n) for n in found}
        calls_here = [
            n
            for n in _own_nodes(small)
            if isinstance(n, cst.Call)
            and isinstance(n.func, cst.Name)
            and id(n.func) in callees
        ]
        as_callee = {id(c.func) for c in calls_here}
        for n in found:
            if id(n) not in as_callee:
                self._refuse(
                    n,
                    calls,
                    "used as a value (only its calls can hand the change back)",
                )
        self._plain_evaluation(small, calls_here, calls)
        before, values = [], {}
        for call in sorted(
            calls_here, key=lambda c: -_depth(small, c)
        ):  # inner calls first
            name = cst.Name(self.namer.fresh(f"{call.func.value}_value"))
            call_now = replace_nodes(call, values)
            before.extend(self._threaded_call(name, call_now, calls))
            values[call] = name
        return before, replace_nodes(small, values)

    def _plain_evaluation(self, small, calls_here, calls):
        """Refuse a call that runs conditionally, or a statement that reads a threaded name elsewhere."""
        inside = set()
        for n in _own_nodes(small):
            if isinstance(n, (cst.IfExp, cst.BooleanOperation)):
                for call in calls_here:
                    if call is not n and any(call is m for m in _own_nodes(n)):
                        self._refuse(
                            call,
                            calls,
                            "called in a conditional expression (`a if c else b`, `and`, `or`)",
                        )
        for call in calls_here:
            inside.update(id(m) for m in _own_nodes(call))
        names = {t.name for call in calls_here for t in calls[call.func.value]}
        for n in _own_nodes(small):
            if isinstance(n, cst.Name) and n.value in names and id(n) not in inside:
                func = as_written(self.source, calls_here[0].func)
                self.fail(
                    n,
                    f"`{func}` changes `{as_written(self.source, n)}`, which this line also reads: "
                    "which value it sees depends on the order Python evaluates the line in",
                    f"call `{func}` on a line of its own before this one",
                )

    def _threaded_call(self, target, call, calls) -> list:
        """``target, outs = f(..., outs=outs)``; ``target, outs_item = f(...)`` then ``outs.append(outs_item)``."""
        threads = calls[call.func.value]
        if not threads:
            return [
                place(
                    cst.Assign([cst.AssignTarget(target)], call), call, self.positions
                )
            ]
        for n in (t.name for t in threads):
            if n in self.scope.locals and call.func.value in self.inherited:
                self.fail(
                    call,
                    f"`{call.func.value}` changes `{n}` of an enclosing function, "
                    f"and `{self.scope.node.name.value}` binds a `{n}` of its own",
                    f"rename the `{n}` that `{self.scope.node.name.value}` binds",
                )
        values = [t.name for t in threads if t.item is None and t.taken]
        args = [
            *call.args,
            *(cst.Arg(cst.Name(n), keyword=cst.Name(n)) for n in values),
        ]
        if args and call.args:
            args[len(call.args) - 1] = call.args[-1].with_changes(
                comma=cst.MaybeSentinel.DEFAULT
            )
        new = call.with_changes(args=args)
        if isinstance(target, cst.Tuple) and not target.lpar:
            target = target.with_changes(
                lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
            )
        targets = cst.Tuple(
            [cst.Element(target), *(cst.Element(_returned(t)) for t in threads)]
        )
        appends = [
            cst.Expr(
                cst.Call(
                    cst.Attribute(cst.Name(t.name), cst.Name("append")),
                    [cst.Arg(cst.Name(t.item))],
                )
            )
            for t in threads
            if t.item is not None
        ]
        return [
            place(s, call, self.positions)
            for s in [cst.Assign([cst.AssignTarget(targets)], new), *appends]
        ]

    def _return(self, value, threaded) -> cst.Return:
        value = value if value is not None else cst.Name("None")
        if isinstance(value, cst.Tuple) and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.Return(
            cst.Tuple(
                [cst.Element(value), *(cst.Element(_returned(t)) for t in threaded)]
            )
        )

    def _discard(self) -> str:
        return self.namer.fresh("_")

    def _refuse(self, node, calls, how):
        name = node.value if isinstance(node, cst.Name) else node.func.value
        changed = ", ".join(f"`{t.name}`" for t in calls[name])
        self.fail(
            node,
            f"`{name}` changes {changed} of its enclosing function and is {how}",
            f"call `{name}` on a line of its own (`value = {name}(...)`), so the change is kept",
        )

    def _at(self, node, like):
        if like in self.positions:
            self.positions.setdefault(node, self.positions[like])
        return node


def _returned(t: _Thread) -> cst.Name:
    return cst.Name(t.item if t.item is not None else t.name)


def _depth(root, target) -> int:
    depth = 0
    stack = [(root, 0)]
    while stack:
        n, d = stack.pop()
        if n is target:
            depth = d
        stack.extend((c, d + 1) for c in child_nodes(n))
    return depth


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with the state its local functions share with it threaded through their calls."""
    node = source.node
    if not isinstance(node, cst.FunctionDef) or not any(
        isinstance(n, cst.FunctionDef) for n in _own_nodes(node.body)
    ):
        return source
    scope = _Scope.of(node)
    _find_changes(scope)
    names = {n.value for n in _all_nodes(node) if isinstance(n, cst.Name)}
    namer = Namer(names | set(source.env))
    _choose(scope, set(), namer)
    rewriter = _Rewriter(source, namer)
    new = rewriter.function(scope, {}, [])
    source = with_node(source, new)
    return replace(
        source, handed_back=source.handed_back | frozenset(rewriter.handed_back)
    )


def _all_nodes(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(child_nodes(n))
