"""Reject in-place updates that NumPy would make visible through another name.

``h = x; h += 1`` changes ``x`` too in NumPy. s2s turns ``h += 1`` into
``h = h + 1``, a new array, so where another name that may share ``h``'s
memory is read afterwards, the results would differ: that is an error, at
the update's line. An element write ``h[i] = v`` (or ``h[i] += v``) is an
error as soon as ``h`` may share memory with a parameter (NumPy would change
the caller's array) or with another name read afterwards; writes into fresh
arrays (``np.zeros``, ``.copy()``, results of arithmetic) are accepted. An
item write ``c[k] = v`` into a list or dict the function made (a display,
``list(...)``, ``dict(...)``) replaces an item and writes no array: it is an
error only where another name holding the same container is read afterwards.
A write into a value the function neither received nor made (a module's
settings dict) is an error.
Names share memory through copies (``h = x``), subscripts and attributes
(views), unpacking, view-returning ops (``reshape``, ``transpose``,
``asarray``, ...) and calls of functions (which may return an argument); JAX's
functional updates (``x.at[i].set(v)``), ``jax.lax`` slices and ``jax.random``
draws return new arrays.
Control flow is read conservatively: both branches in turn, loop bodies
twice (what one iteration writes, the next may read). A local function reads
what it captures wherever it is called; an in-place write inside it into an
array it captures is an error (NumPy would change the enclosing array). Output: the input,
unchanged, when no such update exists. What an expression may share is
``expression_sharing``'s; calls of helpers that update their parameters are
checked by ``helper_updates``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import libcst as cst

from .. import ir
from ..cstutil import dotted, names_in
from ..errors import UnsupportedSyntax
from ..frontend.written_back import WritesBack
from .dataflow import closure_reads, element_base
from .expression_sharing import (
    elements_shared,
    handed_back_items,
    is_number,
    numbers_unpacked,
    read_before_rebound,
    shared_with,
    side_by_side,
)
from .helper_sharing import (
    returned_parameters,
)
from .helper_updates import helper_updates
from .row_views import LoopHead, RowViews
from .scalar_items import ItemBindings


def _bind_unpacked(target, parts, bind):
    """``a, (b, c) = t`` where ``t`` holds a literal: each name shares only its own element's memory."""
    if len(target.elements) != len(parts):
        for name in ir.target_names(target):
            bind(name, set().union(*[p for p in parts if isinstance(p, set)]))
        return
    for el, part in zip(target.elements, parts):
        if isinstance(el.value, cst.Name):
            bind(el.value.value, part if isinstance(part, set) else set())
        elif isinstance(part, list):
            _bind_unpacked(el.value, part, bind)
        else:
            for name in ir.target_names(el.value):
                bind(name, part)


def _linear(body, maybe: set | None = None, branch: bool = False) -> list:
    """The simple statements of ``body`` in an order that covers every path (loop bodies twice); ``maybe``
    collects the ids of the assignments in a branch (``if``/``else``), which may not run: after them a
    name shares what it shared before too."""
    out = []
    for stmt in body:
        # the test is read first (a ``Return`` here stands for a read)
        if isinstance(stmt, ir.If):
            out += (
                [ir.Return(stmt.test, stmt.origin)]
                + _linear(stmt.body, maybe, True)
                + _linear(stmt.orelse, maybe, True)
            )
        elif isinstance(stmt, (ir.For, ir.While)):
            # a loop variable is a view into the iterable; a head marks each pass (``row_views``)
            if isinstance(stmt, ir.For):
                heads = [
                    LoopHead(stmt.target, stmt.iter, stmt.origin, entry=entry)
                    for entry in (True, False)
                ]
            else:
                heads = [ir.Return(stmt.test, stmt.origin)] * 2
            body = _linear(stmt.body, maybe, branch)
            out += [heads[0], *body, heads[1], *body]
        elif isinstance(stmt, ir.Assign):
            parts = _pairs(stmt)
            if branch and maybe is not None:
                maybe.update(id(p) for p in parts)
            out += parts
        elif isinstance(stmt, (ir.AugAssign, ir.Return)):
            out.append(stmt)
    return out


@dataclass(frozen=True)
class Part(ir.Assign):
    """One name's assignment of ``a, b = e1, e2`` (``whole``), read as a line of its own."""

    whole: ir.Assign | None = None


def _pairs(stmt: ir.Assign) -> list:
    """``a, b = e1, e2`` as ``a = e1`` then ``b = e2`` where no value reads a name the line binds (then
    one after the other is at once: ``sm, sP = list(ms), list(Ps)``); any other line as it is.
    """
    target, value = stmt.target, stmt.value
    if not (
        isinstance(target, cst.Tuple)
        and isinstance(value, cst.Tuple)
        and len(target.elements) == len(value.elements)
        and all(isinstance(el.value, cst.Name) for el in target.elements)
        and not any(isinstance(el, cst.StarredElement) for el in value.elements)
        and not names_in(value) & set(ir.target_names(target))
    ):
        return [stmt]
    return [
        Part(t.value, v.value, stmt.origin, whole=stmt)
        for t, v in zip(target.elements, value.elements)
    ]


class Sharing:
    """Which names may share memory: each name holds a set of memory roots (the array a parameter was
    passed, one made here, a name's value before this function bound it), and two names share where their
    roots meet. ``get(name, default)`` is the names sharing with ``name`` (itself included). Not
    transitive: after ``v = a if c else b`` (or the same by an ``if``), ``v`` shares with ``a`` and with
    ``b``, and ``a`` and ``b`` still share nothing.
    """

    def __init__(self):
        self.roots: dict[str, frozenset] = {}
        self._made = 0

    def _of(self, name: str) -> frozenset:
        if (
            name not in self.roots
        ):  # a value bound before (a global, a closure's): its own root
            self.roots[name] = frozenset({("name", name)})
        return self.roots[name]

    def get(self, name: str, default=None):
        roots = self.roots.get(name)
        if roots is None:
            return default
        return {n for n, r in self.roots.items() if r & roots}

    def bind(self, name: str, sources) -> None:
        """``name`` now holds what ``sources`` hold (with ``name`` among them: what it held too); with none,
        a new array."""
        roots = frozenset().union(*(self._of(s) for s in sources))
        if not roots:
            self._made += 1
            roots = frozenset({("made", name, self._made)})
        self.roots[name] = roots

    def keep(self, name: str, kept: str) -> None:
        """``kept`` (a name no code reads) holds what ``name`` holds now, before ``name`` is bound again."""
        self.roots[kept] = self._of(name)

    def share(self, *names: str) -> None:
        """``names`` hold one array (a parameter and the caller's array it was passed)."""
        root = frozenset({("passed", names[0])})
        for n in names:
            self.roots[n] = root


def _caller(param: str) -> str:
    """The stand-in for the caller's array a parameter holds at entry (not a name code can read)."""
    return f"<argument {param}>"


def _element_write(stmt, name, others):
    caller = sorted(
        n[len("<argument ") : -1] for n in others if n.startswith("<argument ")
    )
    if caller:
        raise UnsupportedSyntax(
            f"in-place write into `{name}`, which may be the caller's `{caller[0]}` (an array, list or "
            "dict passed in: NumPy would change it for the caller too, which a transformed function "
            "cannot do)",
            stmt.origin,
            f"return the new value (`return out, {caller[0]}`) where the caller reads the change; "
            f"where it does not, copy it before writing: `{name} = {name}.copy()`",
        )


def _fresh_container(value) -> bool:
    """A list or dict the expression makes (a display, ``list(...)``, ``dict(...)``): no other name holds it."""
    if isinstance(value, (cst.List, cst.Dict)):
        return True
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value in ("list", "dict")
    )


def _container_of(value, containers) -> set[str] | None:
    """The names holding the container ``value`` is (a new one: an empty set), or None when it is none:
    ``[...]`` makes one; ``other`` and ``rt.append(other, v)`` (``other.append(v)``) are ``other``'s.
    """
    if _fresh_container(value):
        return set()
    if isinstance(value, cst.Call) and dotted(value.func) == "rt.append" and value.args:
        value = value.args[0].value
    if isinstance(value, cst.Name) and value.value in containers:
        return containers[value.value]
    return None


def _item_of(stmt, containers) -> str | None:
    """The container whose item ``c[k] = v`` replaces (a plain write into a list or dict this function made),
    else None. Replacing an item writes no array's memory (``c[k] += v`` does: it updates the item in place).
    """
    if not isinstance(stmt, ir.Assign) or not isinstance(stmt.target, cst.Subscript):
        return None
    base = stmt.target.value
    return (
        base.value if isinstance(base, cst.Name) and base.value in containers else None
    )


def _items_shared(value, fresh) -> list[set[str]] | None:
    """What each item of a list or dict display may share (``[h, h]``: ``h`` twice), else None."""
    if isinstance(value, (cst.List, cst.Tuple, cst.Dict)):
        return [shared_with(e.value, fresh) for e in value.elements]
    return None


def _holds_one_array_twice(items: list[set[str]], groups) -> bool:
    """Whether two of a container's items may be one array (an item sharing what another shares)."""
    seen: set[str] = set()
    for shared in items:
        reach = set().union(set(), *(groups.get(n, {n}) for n in shared))
        if reach & seen:
            return True
        seen |= reach
    return False


def _container_items(value, items, fresh) -> list | None:
    """The item list of the container ``value`` is: a display's own, an appended one's grown
    (``rt.append(c, v)``), or another name's (one object under two names); else None."""
    shown = _items_shared(value, fresh)
    if shown is not None:
        return shown
    if isinstance(value, cst.Call) and dotted(value.func) == "rt.append" and value.args:
        held = _container_items(value.args[0].value, items, fresh)
        if held is not None and len(value.args) > 1:
            held.append(shared_with(value.args[1].value, fresh))
        return held
    if isinstance(value, cst.Name):
        return items.get(value.value)
    return None


def _entry_write(target) -> bool:
    """``d["key"] = v``: a dict's entry bound anew (a string key: no array takes one)."""
    return (
        isinstance(target.value, cst.Name)
        and len(target.slice) == 1
        and isinstance(target.slice[0].slice, cst.Index)
        and isinstance(target.slice[0].slice.value, cst.SimpleString)
    )


def _displays_holding(name: str, displays) -> set:
    """The names bound to tuple or list displays that hold ``name``'s object, directly or in a display
    they hold (``cache = (d, x)``): an item write into ``d`` changes what they hold."""
    found, grew = set(), True
    while grew:
        grew = False
        for held, parts in displays.items():
            if held not in found and ({name} | found) & set(parts):
                found.add(held)
                grew = True
    return found


def _holds_entries(n: str, d: str, entries, displays, groups, seen=()) -> bool:
    """Whether ``n`` shares memory with the dict ``d`` only through values read from its entries: ``n``
    is one (``eps = d["eps"]``), or a display of such values and of values sharing nothing with ``d``
    (``cache = (out, eps)``). Binding an entry of ``d`` anew changes none of them."""
    if _read_from(entries.get(n), d):
        return True
    parts = displays.get(n)
    if parts is None or n in seen:
        return False
    return all(
        _holds_entries(p, d, entries, displays, groups, (*seen, n))
        or d not in groups.get(p, {p})
        for p in parts
    )


def _read_from(value, name) -> bool:
    """Whether ``value`` (what a name was bound to) is an item of ``name`` (of any name, for None):
    ``eps = p["eps"]``, ``p.get("eps", 1e-5)``."""
    if (
        isinstance(value, cst.Call)
        and dotted(value.func) == "rt.dict_get"
        and value.args
    ):
        value = value.args[0].value
    elif isinstance(value, cst.Subscript):
        value = value.value
    else:
        return False
    return isinstance(value, cst.Name) and name in (None, value.value)


def _write_through_item(stmt, name) -> None:
    """``c[k][i] = v`` or ``c[k] += v`` into a container holding one array under two items: NumPy changes
    the array every item holding it sees, which s2s's new array for one item cannot reproduce.
    """
    raise UnsupportedSyntax(
        f"in-place write into an item of `{name}`, which may hold the same array under another item "
        "(NumPy would change both)",
        stmt.origin,
        f"put a copy in `{name}` (`.copy()`) for all but one of the items holding that array, or build "
        "the new value as a new array",
    )


def _global_write(stmt, name, bound) -> None:
    """A write into a value the function neither received nor made: the module's (a settings dict)."""
    if name not in bound:
        raise UnsupportedSyntax(
            f"write into `{name}`, which the module holds (Python would change it for every later call, "
            "and s2s bakes what the function reads from its module into the generated code)",
            stmt.origin,
            f"read `{name}` only; put what changes into a dict or list the function makes",
        )


def _item_write(stmt, name, holders, later, closures) -> None:
    """``c[k] = v`` changes the container every name in ``holders`` holds: an error where one is read later."""
    shared = sorted(n for n in holders if read_before_rebound(n, later, closures))
    if shared:
        raise UnsupportedSyntax(
            f"item write into `{name}`, which is the same container as `{shared[0]}` "
            f"(Python would change `{shared[0]}` too)",
            stmt.origin,
            f"write into a new list or dict (a display of `{name}`'s items), or read `{name}` "
            f"where `{shared[0]}` is read",
        )


def _appended_list(stmt: ir.Assign) -> str | None:
    """``xs`` of ``xs = rt.append(xs, v)`` (``xs.append(v)``), else None."""
    value = stmt.value
    if (
        isinstance(stmt.target, cst.Name)
        and isinstance(value, cst.Call)
        and dotted(value.func) == "rt.append"
        and value.args
        and isinstance(value.args[0].value, cst.Name)
        and value.args[0].value.value == stmt.target.value
    ):
        return stmt.target.value
    return None


def _append_through_alias(stmt, name, holders, source, later, closures) -> None:
    """``xs.append(v)`` grows the list every other name in ``holders`` holds, and the container ``xs`` was
    read from (``source``: ``terms = report["terms"]``): an error where one of those is read later (s2s
    makes a new list; Python's other names would see the item)."""
    holders = set(holders) - {name}
    if isinstance(source, cst.Subscript) and isinstance(source.value, cst.Name):
        holders.add(source.value.value)
    shared = sorted(n for n in holders if read_before_rebound(n, later, closures))
    if shared:
        spelled = ir.code(source) if source is not None else shared[0]
        raise UnsupportedSyntax(
            f"`{name}.append` also grows `{spelled}`, the same list (Python's lists are shared), "
            f"and `{shared[0]}` is read after it",
            stmt.origin,
            f"append by the name the list is read by (`{spelled}.append(...)`), or make `{name}` a list "
            f"of its own (`{name} = list({spelled})`) where `{shared[0]}` should not change",
        )


def assigned_plain(body) -> set[str]:
    """Names ``body`` binds by assignment (an element write ``x[i] = v`` binds nothing: it writes into ``x``)."""
    return {
        n
        for s in ir.walk(body)
        if isinstance(s, (ir.Assign, ir.For))
        for n in ir.target_names(s.target)
    }


def _captured_write(local: ir.Function, enclosing: set[str]) -> None:
    """An element write or augmented update, inside a local function, into an array it captures: NumPy changes the
    enclosing function's array, which a functional rewrite of the local one cannot reproduce.
    """
    bound = set(local.param_names) | assigned_plain(local.body)
    for stmt in _linear(local.body):
        element = isinstance(stmt, (ir.Assign, ir.AugAssign)) and isinstance(
            stmt.target, cst.Subscript
        )
        if element or isinstance(stmt, ir.AugAssign):
            name = element_base(stmt.target) if element else stmt.target.value
            if name not in bound and name in enclosing:
                raise UnsupportedSyntax(
                    f"in-place {'write into' if element else 'update of'} `{name}` inside `{local.name}`, which captures "
                    f"it from the enclosing function (NumPy would change the enclosing `{name}` too)",
                    stmt.origin,
                    f"return the new value from `{local.name}` and assign it where it is called",
                )


def _repeats_items(value) -> bool:
    """``[a] * n`` (or ``n * [a, b]``) of items that may be arrays: the list holds the same objects ``n`` times."""
    if not (
        isinstance(value, cst.BinaryOperation)
        and isinstance(value.operator, cst.Multiply)
    ):
        return False
    lists = [v for v in (value.left, value.right) if isinstance(v, cst.List)]
    immutable = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)
    return any(
        not all(
            isinstance(e.value, immutable)
            or (
                isinstance(e.value, cst.Name)
                and e.value.value in ("None", "True", "False")
            )
            for e in lst.elements
        )
        for lst in lists
    )


def _repeated_write(stmt, name) -> None:
    """A write into an item of a list made by repetition: NumPy (Python) changes every repeat of it."""
    nested = isinstance(stmt.target, cst.Subscript) and isinstance(
        stmt.target.value, cst.Subscript
    )
    if nested or isinstance(stmt, ir.AugAssign):
        raise UnsupportedSyntax(
            f"in-place write into an item of `{name}`, a list made by repetition (`[a] * n`), whose items "
            "are one object (Python would change every item)",
            stmt.origin,
            f"make each item on its own: `{name} = [np.zeros(...) for _ in range(n)]`",
        )


def check(
    fn: ir.Function,
    helpers=None,
    top: bool = True,
    updated=frozenset(),
    handed_back=frozenset(),
    rebinds: bool = False,
) -> ir.Function:
    """``helpers``: the module-level functions ``fn`` calls, by the names its code calls them by. The
    result is ``fn``, with the checks items taken by an index need (``scalar_items``) in a ``top`` one (a
    local function's items stay views of their arrays). ``updated``: for a helper (a function of the
    program that another calls), the parameters its source updates in place (``updated_in_place``: each
    call of it checks that the caller does not read the array afterwards); it may write their elements
    while they hold what the caller passed (``X[~mask] = value``). ``handed_back``: ``(local function,
    parameter)`` pairs of state its local functions take and hand back (``closure_state``), whose elements
    they may write likewise (each call is checked: ``local_updates``). ``rebinds``: the function is
    written for JAX's immutable arrays (``frontend.array_semantics``): ``h += v`` binds ``h`` anew and
    changes no other name.
    """
    closures = closure_reads(fn)
    # helpers called by name -> (their parameters, those whose memory their result may share)
    fresh = {}
    # helpers that hand back the parameters they update (``written_back``): name -> (their parameters,
    # those their value may share, those handed back)
    handing = {}
    for name, f in (helpers or {}).items():
        shared = returned_parameters(f)
        if shared is not None:
            fresh[name] = (list(inspect.signature(f).parameters), shared)
        if isinstance(f, WritesBack):
            value = returned_parameters(f.fn)
            params = list(inspect.signature(f).parameters)
            handing[name] = (params, set(params) if value is None else value, f.params)
    # who may share memory with whom; a parameter starts out as the caller's array (``_caller``), and
    # stops being it when rebound to a fresh value (``m = m.copy()``)
    groups = Sharing()
    for p in fn.param_names:
        groups.share(p, _caller(p))
    # parameters still bound to what the caller passed (a helper's element writes into them are the
    # caller's to check)
    passed = set(updated)
    # names bound to tuple/list literals: what each element shares
    elements: dict[str, list] = {}

    bind = groups.bind

    # names bound to a list or dict this function made: name -> the names holding that same object
    containers: dict[str, set[str]] = {}
    repeated: set[str] = (
        set()
    )  # names bound to a list made by repetition (``[np.zeros(2)] * n``)

    # a container's items: what each may share (one list per container object, shared by its names)
    items: dict[str, list] = {}

    def forget(name):
        containers.get(name, set()).discard(name)
        containers.pop(name, None)
        items.pop(name, None)

    maybe: set[int] = set()  # assignments in a branch: ``_linear``
    body = _linear(fn.body, maybe)
    # a loop body s2s wrote (``def scan_body``) is a function, not memory
    functions = {s.function.name for s in ir.walk(fn.body) if isinstance(s, ir.Def)}
    bound = set(fn.param_names) | assigned_plain(fn.body)
    rows = RowViews(fn)
    taken = ItemBindings() if top else None  # names bound to items of arrays
    numbers: set[str] = set()  # names holding a number literal's value
    taken_from: dict[str, cst.BaseExpression] = (
        {}
    )  # ``h = box["cur"]``: h -> what it was read from
    entries: dict[str, cst.BaseExpression] = (
        {}
    )  # ``eps = p.get("eps", 1e-5)``, ``p["eps"]`` too
    displays: dict[str, list] = {}  # ``cache = (out, eps)``: the names a display holds
    for i, stmt in enumerate(body):
        if isinstance(stmt, ir.Assign) and isinstance(
            stmt.target, (cst.Name, cst.Tuple)
        ):
            passed -= set(
                ir.target_names(stmt.target)
            )  # rebound: no longer the caller's
        rows.step(stmt)
        if helpers or fn.locals:
            helper_updates(
                stmt,
                helpers or {},
                groups,
                body[i + 1 :],
                closures,
                fn.locals,
                rebinds,
            )
        element = isinstance(stmt, (ir.Assign, ir.AugAssign)) and isinstance(
            stmt.target, cst.Subscript
        )
        if element:
            _global_write(stmt, element_base(stmt.target), bound)
            if element_base(stmt.target) in repeated:
                _repeated_write(stmt, element_base(stmt.target))
        base = element_base(stmt.target) if element else None
        through_item = element and (
            isinstance(stmt, ir.AugAssign)
            or isinstance(stmt.target.value, cst.Subscript)
        )
        if (
            through_item
            and _holds_one_array_twice(items.get(base, []), groups)
            and read_before_rebound(base, body[i + 1 :], closures)
        ):
            _write_through_item(stmt, base)
        item = _item_of(stmt, containers)
        if item is not None:
            items.setdefault(item, []).append(shared_with(stmt.value, fresh) - numbers)
            holders = containers[item].union(
                *(_displays_holding(n, displays) for n in containers[item])
            ) - {item}
            _item_write(stmt, item, holders, body[i + 1 :], closures)
            # the container now also holds what the value shares
            bind(item, {item, *(shared_with(stmt.value, fresh) - numbers)})
            continue
        if (
            isinstance(stmt, ir.AugAssign)
            and isinstance(stmt.operator, cst.AddAssign)
            and stmt.target.value in containers
        ):  # ``feats += [h]`` extends a list this function made: its items are untouched
            name = stmt.target.value
            _item_write(stmt, name, containers[name] - {name}, body[i + 1 :], closures)
            bind(name, {name, *(shared_with(stmt.value, fresh) - numbers)})
            continue
        if rebinds and isinstance(stmt, ir.AugAssign) and not element:
            bind(stmt.target.value, ())  # JAX's ``h += v``: ``h = h + v``, a new array
            numbers.discard(stmt.target.value)
            continue
        if isinstance(stmt, ir.AugAssign) or element:
            name = element_base(stmt.target) if element else stmt.target.value
            others = groups.get(name, {name}) - {name} - functions
            if taken is not None:
                taken.updated(
                    name,
                    groups.get(name, {name}),
                    lambda n: (
                        n.startswith("<argument ")
                        or read_before_rebound(n, body[i + 1 :], closures)
                    )
                    and not rows.untouched(stmt.target, n),
                )
            if element:
                if name in passed:
                    others -= {
                        _caller(name)
                    }  # (checked at each call: ``updated_in_place``)
                _element_write(stmt, name, others)
                others = {n for n in others if not rows.untouched(stmt.target, n)}
                if isinstance(stmt, ir.Assign) and _entry_write(stmt.target):
                    # ``p["mean"] = m`` binds an entry anew: a value read from ``p`` keeps its memory,
                    # so does a tuple or list holding such values (``cache = (out, eps)``)
                    others = {
                        n
                        for n in others
                        if not _holds_entries(n, name, entries, displays, groups)
                    }
            shared = sorted(
                n for n in others if read_before_rebound(n, body[i + 1 :], closures)
            )
            if (
                shared
                and not element
                and taken is not None
                and all(n in containers for n in shared)
                and taken.number_updated(stmt, name, shared[0])
            ):  # (a state a list records: a number, checked when the code runs, NumPy rebinds it)
                shared = []
            if shared:
                how = (
                    "build a new array instead"
                    if element
                    else f"write `{name} = {name} {ir.code(stmt.operator).strip()[:-1]} ...` for a new array"
                )
                # a copy of what ``name`` was taken from (a view: ``v = x[0]``); of ``name`` itself where a
                # container or an object holds it (``d = {"W": W}``), or it was read out of one
                taken = taken_from.get(name)
                source = (
                    ir.code(taken)
                    if taken is not None and not names_in(taken) & set(containers)
                    else name
                )
                raise UnsupportedSyntax(
                    f"in-place {'write into' if element else 'update of'} `{name}`, which may share memory "
                    f"with `{shared[0]}` (NumPy would change `{shared[0]}` too)",
                    stmt.origin,
                    f"{how}, or copy first (`{name} = {source}.copy()`), where `{shared[0]}` should keep "
                    f"its values (these change what the code computes: NumPy changes `{shared[0]}` here); "
                    f"to change `{shared[0]}` too, update it by its own name",
                )
            if not element:
                bind(name, ())
                if not (name in numbers and is_number(stmt.value, numbers)):
                    numbers.discard(name)  # (``i += n`` of numbers holds a number)
        elif isinstance(stmt, ir.Assign):
            # a Python number is immutable: a copy of one shares nothing (``t_count = t`` of ``t = 0.0``)
            numeric = (
                [stmt.target.value]
                if isinstance(stmt.target, cst.Name) and is_number(stmt.value, numbers)
                else numbers_unpacked(stmt.target, stmt.value, numbers)
            )
            numbers.difference_update(ir.target_names(stmt.target))
            appended = _appended_list(stmt)
            if appended is not None:
                _append_through_alias(
                    stmt,
                    appended,
                    containers.get(appended, {appended}),
                    taken_from.get(appended),
                    body[i + 1 :],
                    closures,
                )
            # (in a branch, a value that shares nothing leaves the name holding what it held, if anything:
            # ``running_var = p.get(...)``, then ``running_var = m * running_var + ...`` under an ``if``)
            kept_entry = id(stmt) in maybe and not (
                shared_with(stmt.value, fresh) - numbers
            )
            for name in ir.target_names(stmt.target):
                taken_from.pop(name, None)
                # (a display holding what the name held keeps it: a name of its own, sharing what it did)
                before = f"{name}@{id(stmt)}"
                for held, parts in list(displays.items()):
                    if name in parts and held != name:
                        displays[held] = [before if q == name else q for q in parts]
                        groups.keep(name, before)
                        if name in entries:
                            entries.setdefault(before, entries[name])
                if not kept_entry:
                    entries.pop(name, None)
                kept = displays.pop(name, None)
                if kept is not None and name in names_in(stmt.value):
                    # ``holder = rt.append(holder, e)``: it still holds what it held
                    displays[name] = kept + sorted(names_in(stmt.value) - {name})
            if isinstance(stmt.target, cst.Name) and isinstance(
                stmt.value, cst.Subscript
            ):
                taken_from[stmt.target.value] = stmt.value
            if isinstance(stmt.target, cst.Name) and _read_from(stmt.value, None):
                entries[stmt.target.value] = stmt.value
            if (
                isinstance(stmt.target, cst.Name)
                and isinstance(stmt.value, (cst.Tuple, cst.List))
                and all(isinstance(el.value, cst.Name) for el in stmt.value.elements)
            ):
                displays[stmt.target.value] = [
                    el.value.value for el in stmt.value.elements
                ] + displays.get(stmt.target.value, [])
            item = taken is not None and taken.bind(
                stmt, groups, containers, maybe=id(stmt) in maybe
            )
            unpacked = (
                elements.get(stmt.value.value)
                if isinstance(stmt.value, cst.Name)
                else None
            )
            unpacked = (
                unpacked if unpacked is not None else side_by_side(stmt.value, fresh)
            )
            if unpacked is None:
                unpacked = handed_back_items(stmt.value, handing, fresh)
            # (in a branch, which may not run, a name shares what it held before too)
            binds = (lambda n, src: bind(n, {n, *src})) if id(stmt) in maybe else bind
            if isinstance(stmt.target, cst.Tuple) and unpacked is not None:
                _bind_unpacked(stmt.target, unpacked, binds)
                for name in numeric:
                    binds(name, ())
                numbers.update(numeric)
                continue
            holders = _container_of(stmt.value, containers)
            held = _container_items(stmt.value, items, fresh)
            for name in ir.target_names(stmt.target):
                shared = (
                    ()
                    if name in numeric or item
                    # (a Python number is no memory: ``flat[i : i + n]`` views ``flat`` only)
                    else shared_with(stmt.value, fresh) - numbers
                )
                binds(name, shared)
                elements.pop(name, None)
                forget(name)
                repeated.discard(name)
            numbers.update(numeric)
            if isinstance(stmt.target, cst.Name) and held is not None:
                items[stmt.target.value] = held
            if isinstance(stmt.target, cst.Name) and _repeats_items(stmt.value):
                repeated.add(stmt.target.value)
            if isinstance(stmt.target, cst.Name) and holders is not None:
                holders.add(stmt.target.value)
                containers[stmt.target.value] = holders
            if (
                isinstance(stmt.target, cst.Name)
                and elements_shared(stmt.value, fresh) is not None
            ):
                elements[stmt.target.value] = elements_shared(stmt.value, fresh)
    for local in fn.locals.values():
        _captured_write(local, bound)
        kept = frozenset(p for f, p in handed_back if f == local.name)
        check(
            local,
            helpers,
            top=False,
            updated=kept,
            handed_back=handed_back,
            rebinds=rebinds,
        )
    return fn if taken is None else taken.with_checks(fn)
