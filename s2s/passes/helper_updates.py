"""Calls of helpers and local functions that update a parameter in place, checked where they are called.

``helper_updates`` refuses a call whose argument (or the array it views: ``normalize_(x[:3])``) a helper
updates in place (``helper_sharing.updated_in_place``: ``v /= n``, ``X[~mask] = value``, or through a
helper it hands the parameter to) when the caller reads that array afterwards: NumPy changes it, s2s's
functional code would not. A helper writing elements of its parameter handed on as a function (to
``np.apply_along_axis``) is refused there. ``local_updates`` is the same reading of a local function's
lowered code.
"""

from __future__ import annotations

import inspect

import libcst as cst

from .. import ir
from ..cstutil import iter_nodes
from ..errors import UnsupportedSyntax
from ..frontend.written_back import WritesBack
from .dataflow import element_base
from .expression_sharing import read_before_rebound, shared_with
from .helper_sharing import parameter_of, updated_in_place


def local_updates(local: ir.Function, helpers: dict) -> dict:
    """``helper_sharing.updated_in_place`` of a local function: its parameters updated in place (``v /= n``)
    before it rebinds them, or handed (or a view of them) to a helper that updates them (``partial(scale_,
    c=3.0)``'s local function), or whose elements it writes (a list handed through and back), name -> the
    update's operator."""
    found, rebound = {}, set()
    for stmt in ir.walk(local.body):
        live = set(local.param_names) - rebound
        for node in iter_nodes(getattr(stmt, "value", None) or cst.Name("_")):
            callee = (
                helpers.get(node.func.value)
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
                else None
            )
            updates = updated_in_place(callee) if callee is not None else {}
            names = list(inspect.signature(callee).parameters) if updates else []
            for k, arg in enumerate(node.args if updates else ()):
                param = parameter_of(arg, k, names)
                for name in shared_with(arg.value) & live if param in updates else ():
                    found.setdefault(name, updates[param])
        if isinstance(stmt, ir.AugAssign) and isinstance(stmt.target, cst.Name):
            name = stmt.target.value
            if name in local.param_names and name not in rebound:
                found.setdefault(name, ir.code(stmt.operator).strip())
        elif isinstance(stmt, (ir.Assign, ir.AugAssign)) and isinstance(
            stmt.target, cst.Subscript
        ):  # ``c[k] = v``: a state handed through and back (``closure_state``) written into
            name = element_base(stmt.target)
            if name in local.param_names and name not in rebound:
                found.setdefault(name, "[...] =")
        elif isinstance(stmt, (ir.Assign, ir.For)):
            rebound |= set(ir.target_names(stmt.target))
    return found


def helper_updates(
    stmt, helpers, groups, later, closures, local_fns, rebinds=False
) -> None:
    """A call of a helper that updates a parameter in place, given a name the caller reads afterwards, or
    a view of one (``normalize_(x[:3])``, ``normalize_(M[0])``: NumPy changes ``x``'s, ``M``'s elements).
    A helper that writes elements of a parameter, handed on as a value (to ``np.apply_along_axis``, a
    loop's body), is refused there: what it is called with is not checked. ``rebinds``: the caller is
    written for JAX's immutable arrays, with which a helper's ``v += b`` binds its own ``v`` anew.
    """
    _helpers_handed_on(stmt, helpers)
    for node in iter_nodes(stmt.value):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)):
            continue
        helper, local = helpers.get(node.func.value), local_fns.get(node.func.value)
        if (
            local is not None
        ):  # a local function of the caller (``def normalize_(v)`` inside it)
            updates, params = local_updates(local, helpers), list(local.param_names)
        elif helper is not None:
            updates = updated_in_place(helper)
            params = list(inspect.signature(helper).parameters) if updates else []
        else:
            continue
        if rebinds:
            updates = {p: op for p, op in updates.items() if op.startswith("[")}
        if not updates:
            continue
        for k, arg in enumerate(node.args):
            param = parameter_of(arg, k, params)
            if param not in updates:
                continue
            # the names whose memory the argument holds: itself, or what it views (``x[:3]``: ``x``); a
            # local function's state handed through and back (``closure_state``'s: ``self.W -= ...`` in a
            # method) is rebound by the call, but the other names of its array are not
            # (``layer = Affine(W)``: NumPy changes ``W`` too)
            viewed = (
                {arg.value.value}
                if isinstance(arg.value, cst.Name)
                else shared_with(arg.value)
            )
            rebound = (
                set(ir.target_names(stmt.target))
                if isinstance(stmt, ir.Assign)
                else set()
            )
            if isinstance(helper, WritesBack) and param in helper.params:
                # (the call's value assigns the argument back where it came from: ``written_back``)
                rebound |= viewed
            shared = sorted(
                n
                for name in viewed
                for n in (groups.get(name, {name}) | {name}) - rebound
                if not n.startswith("<") and read_before_rebound(n, later, closures)
            )
            state = (
                arg.keyword is not None
                and isinstance(arg.value, cst.Name)
                and arg.value.value == arg.keyword.value
                and arg.value.value in rebound
            )
            if state:
                # (a state handed through and back shares what the call's other arguments hold only as
                # far as the analysis cannot follow a local function: the arrays the caller passed in)
                own = groups.roots.get(arg.value.value, frozenset())
                shared = [
                    n
                    for n in shared
                    if any(
                        root[0] != "passed" for root in own & groups.roots.get(n, set())
                    )
                ]
            if shared and state and updates[param] == "[...] =":
                # a local function's ``buf[0] = v`` into its enclosing function's ``buf``
                other = shared[0]
                raise UnsupportedSyntax(
                    f"`{node.func.value}` writes into `{param}` (`{param}[...] = ...`), which `{other}` holds "
                    f"too: NumPy changes `{other}` as well, and it is read after the call",
                    stmt.origin,
                    f"read `{param}` where `{other}` is read, or bind `{other}` to a copy "
                    f"(`{other} = {param}.copy()`)",
                )
            if shared and state:  # a method's ``self.W -= ...``
                op, other = updates[param], shared[0]
                raise UnsupportedSyntax(
                    f"this call updates an object's attribute in place (`self.<attribute> {op} ...` in its "
                    f"method, held as `{param}`), an array `{other}` holds too: NumPy changes `{other}`, "
                    "and it is read after the call",
                    stmt.origin,
                    f"in the method, write `self.<attribute> = self.<attribute> {op[:-1]} ...` for a new "
                    f"array, or give the object a copy (`{other}.copy()`) where it is made",
                )
            if shared:
                op, given = updates[param], ir.code(arg.value)
                what = (
                    f"`{given}`"
                    if isinstance(arg.value, cst.Name)
                    else f"`{given}`, a view of `{sorted(viewed)[0]}`,"
                )
                raise UnsupportedSyntax(
                    f"`{node.func.value}` updates its parameter `{param}` in place "
                    f"(`{param}{'' if op.startswith('[') else ' '}{op} ...`), "
                    f"which holds {what} here: NumPy changes `{sorted(viewed)[0]}` too, and `{shared[0]}` is "
                    "read after the call",
                    stmt.origin,
                    (
                        f"in `{node.func.value}`, copy it first (`{param} = {param}.copy()`), or pass a copy "
                        f"(`{given}.copy()`)"
                        if op.startswith("[")
                        else f"in `{node.func.value}`, write `{param} = {param} {op[:-1]} ...` for a new "
                        f"array, or pass a copy (`{given}.copy()`)"
                    ),
                )


def _helpers_handed_on(stmt, helpers) -> None:
    """A helper that writes elements of its parameter (``v[:] = ...``), named other than as a call's
    function: a located error (its calls' arguments are not read here)."""
    value = getattr(stmt, "value", None)
    if value is None:
        return
    called = {id(n.func) for n in iter_nodes(value) if isinstance(n, cst.Call)}
    for node in iter_nodes(value):
        if not (isinstance(node, cst.Name) and node.value in helpers):
            continue
        if id(node) in called:
            continue
        updates = updated_in_place(helpers[node.value])
        written = sorted(p for p, op in updates.items() if op.startswith("["))
        if written:
            raise UnsupportedSyntax(
                f"`{node.value}` writes elements of its parameter `{written[0]}` in place, and is handed "
                "on here as a function: NumPy would change the arrays it is called with",
                stmt.origin,
                f"in `{node.value}`, copy it first (`{written[0]} = {written[0]}.copy()`) or build a new "
                "array (`np.where`, `np.concatenate`)",
            )
