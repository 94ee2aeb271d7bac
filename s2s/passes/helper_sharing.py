"""What a helper of the program does with the memory of its arguments, read from its source once: which
parameters it updates in place (``v += b``), and which its result may share (a parameter, a view of
one: ``x[0]``, ``x.T``; none where every return is new: ``np.mean(...)``, ``a * b``). The aliasing check
(``passes/aliasing``) reads these at the helper's calls.
"""

from __future__ import annotations

import inspect

import libcst as cst
import numpy as np

from .. import ir
from ..cstutil import child_nodes, dotted, iter_nodes, own_nodes
from ..frontend import source

VIEW_OPS = {
    "reshape", "transpose", "matrix_transpose", "ravel", "squeeze", "expand_dims", "swapaxes",
    "moveaxis", "broadcast_to", "asarray", "diagonal", "real", "imag", "flip", "atleast_1d",
    "atleast_2d", "atleast_3d", "split", "array_split", "hsplit", "vsplit", "unstack",
    "flipud", "fliplr", "rot90", "asanyarray", "ascontiguousarray", "asfortranarray", "require",
    "view", "broadcast_arrays", "as_strided", "sliding_window_view",
}  # fmt: skip
# ops that return their argument itself when told not to copy (``x.astype(float, copy=False)``)
_COPY_FLAGGED = {"astype", "array", "nan_to_num", "meshgrid"}


def may_view(name: str, call: cst.Call) -> bool:
    """Whether NumPy's ``name`` called as ``call`` may return a view of (or the same memory as) an
    argument: a view op; a one-operand ``einsum`` (``np.einsum("ii->i", K)`` is ``K``'s writable diagonal);
    an op given ``copy=False``."""
    if name in VIEW_OPS:
        return True
    if name == "einsum":
        return sum(not isinstance(a.value, cst.SimpleString) for a in call.args) == 1
    return name in _COPY_FLAGGED and any(
        a.keyword is not None
        and a.keyword.value == "copy"
        and not (isinstance(a.value, cst.Name) and a.value.value == "True")
        for a in call.args
    )


# expressions whose value is a new array (or number)
NEW_EXPRESSIONS = (
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.Comparison,
    cst.BooleanOperation,
)


def per_helper(analysis):
    """``analysis(helper)``, computed once per helper object (a module's functions are read again at every
    call of them otherwise); unhashable helpers are analysed each time."""
    cache: dict = {}

    def cached(helper):
        try:
            return cache[helper]
        except KeyError:
            cache[helper] = found = analysis(helper)
            return found
        except TypeError:
            return analysis(helper)

    cached.__doc__ = analysis.__doc__
    return cached


@per_helper
def updated_in_place(helper) -> dict:
    """The parameters a helper updates in place before rebinding them (``v += b``, ``v /= n``, an element
    written: ``X[~mask] = value``), or hands, or a view of, to a helper of the program that does
    (``b(v)``, ``b(v[0])``): name -> the update's operator. NumPy changes the caller's array (or dict)
    that the parameter holds. Statements are read in the order they run, a call before its line's
    assignment; a rebinding ends a parameter's updates only on a line of the function's own block (in
    a branch or a loop, another path may keep the caller's object: ``if config is None: config = {}``).
    """
    try:
        src = source.load(helper)
        params = list(inspect.signature(helper).parameters)
    except Exception:  # not a function s2s reads (its own errors come where it is read)
        return {}
    if helper in _READING:  # a recursive helper: its own writes are read where it is
        return {}
    _READING.add(helper)
    try:
        found, rebound = {}, set()
        # (a name bound in a branch or a loop may still be the caller's object on another path)
        top = {id(s) for line in _lines(src.node.body) for s in _small_of(line)}
        for stmt in _in_order(src.node.body):
            live = set(params) - rebound
            calls = (n for n in own_nodes(_header(stmt)) if isinstance(n, cst.Call))
            for call in calls:
                for name, op in _handed_to_updates(call, src.env, live).items():
                    found.setdefault(name, op)
            for name, op in _writes(stmt, live).items():
                found.setdefault(name, op)
            if id(stmt) in top:
                rebound |= _bound(stmt)
    finally:
        _READING.discard(helper)
    return {name: found[name] for name in params if name in found}


_READING: set = set()  # the helpers whose updates are being read


def written_directly(helper) -> frozenset[str]:
    """The parameters a helper updates in place by its own statements, writing an item of them at least
    (``bn_param["mean"] = m``, then ``v += b`` too: a number has no items) and never rebinds, hands to another helper that updates it, or reads in a function it
    defines: after any call, the parameter holds the object the caller passed, updated by what the
    helper's own code did to it (``frontend/written_back`` returns it)."""
    updated = updated_in_place(helper)
    if not updated:
        return frozenset()
    try:
        src = source.load(helper)
    except Exception:
        return frozenset()
    node = src.node
    if not isinstance(node, cst.FunctionDef) or any(
        isinstance(n, (cst.Yield, cst.Await)) for n in own_nodes([node.body])
    ):
        return frozenset()  # (a generator's ``return`` is no value it gives)
    found = set()
    for name in updated:
        own, handed = False, False
        for stmt in _in_order(node.body):
            # (an item written: a list, dict or array, which ``v += b`` changes in place too; a number's
            # ``v += 1`` alone rebinds the helper's own name, the caller's value unchanged)
            own = own or _writes(stmt, {name}).get(name) == "[...] ="
            calls = (n for n in own_nodes(_header(stmt)) if isinstance(n, cst.Call))
            handed = handed or any(
                _handed_to_updates(c, src.env, {name}) for c in calls
            )
        binds = sum(
            1
            for n in iter_nodes(node.body)
            if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.For, cst.NamedExpr))
            and isinstance(n.target, cst.Name)
            and n.target.value == name
            and not isinstance(n, cst.AugAssign)
        ) + sum(
            1
            for n in iter_nodes(node.body)
            if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
            and any(isinstance(m, cst.Name) and m.value == name for m in iter_nodes(n))
        )
        tuple_binds = any(
            isinstance(n, (cst.AssignTarget, cst.For))
            and isinstance(n.target, (cst.Tuple, cst.List))
            and any(
                isinstance(m, cst.Name) and m.value == name
                for m in iter_nodes(n.target)
            )
            for n in iter_nodes(node.body)
        )
        if own and not handed and not binds and not tuple_binds:
            found.add(name)
    return frozenset(found)


def _in_order(node) -> list:
    """The small statements (and ``for`` headers) under ``node`` in the order they run, nested functions
    left out."""
    out = []

    def visit(n):
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return
        if isinstance(n, cst.SimpleStatementLine):
            out.extend(n.body)
            return
        if isinstance(n, (cst.For, cst.If, cst.While)):
            out.append(n)  # its header: a ``for``'s target binds, a test may call
        for child in child_nodes(n):
            visit(child)

    visit(node)
    return out


def _lines(body) -> list:
    return list(body.body) if isinstance(body, cst.IndentedBlock) else [body]


def _small_of(line) -> list:
    """The small statements of one of a function's own lines (none for a compound statement)."""
    if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return list(line.body)
    return []


def _header(stmt):
    """What a statement runs itself: a compound statement's header only (its body comes after)."""
    if isinstance(stmt, cst.For):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, (cst.If, cst.While)):
        return [stmt.test]
    return [stmt]


def _writes(stmt, live) -> dict:
    """The parameters in ``live`` a statement updates in place: ``v += b``, ``X[...] = v``."""
    found = {}
    targets = (
        [stmt.target]
        if isinstance(stmt, cst.AugAssign)
        else [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else []
    )
    for target in targets:
        written = _element_base(target)
        if isinstance(stmt, cst.AugAssign) and isinstance(target, cst.Name):
            if target.value in live:
                found[target.value] = ir.code(stmt.operator).strip()
        elif written is not None and written in live:
            # ``X[~mask] = value`` (d2l's ``sequence_mask``), ``bn_param["mean"] = m``: its elements
            found[written] = "[...] ="
    return found


def _bound(stmt) -> set:
    """The names a statement binds (its ``for`` target, assignment targets that are names)."""
    if isinstance(stmt, cst.For):
        targets = [stmt.target]
    elif isinstance(stmt, cst.Assign):
        targets = [t.target for t in stmt.targets]
    elif isinstance(stmt, cst.AnnAssign):
        targets = [stmt.target]
    else:
        return set()
    return {
        n.value
        for t in targets
        if not isinstance(t, (cst.Subscript, cst.Attribute))
        for n in iter_nodes(t)
        if isinstance(n, cst.Name)
    }


# libraries whose functions change no argument (``out=`` and the like are read where they are written)
LIBRARIES = frozenset({"numpy", "jax", "scipy", "s2s"})


def _handed_to_updates(call: cst.Call, env: dict, live) -> dict:
    """The parameters in ``live`` that ``call`` hands (or a view of them) to a helper of the program that
    updates the matching parameter in place."""
    callee = env.get(call.func.value) if isinstance(call.func, cst.Name) else None
    library = (getattr(callee, "__module__", None) or "").partition(".")[0]
    if not inspect.isfunction(callee) or library in LIBRARIES:
        return {}
    updates = updated_in_place(callee)
    if not updates:
        return {}
    try:
        names = list(inspect.signature(callee).parameters)
    except (TypeError, ValueError):
        return {}
    found = {}
    for k, arg in enumerate(call.args):
        param, viewed = parameter_of(arg, k, names), _viewed_name(arg.value, env)
        if param in updates and viewed in live:
            found[viewed] = updates[param]
    return found


def parameter_of(arg: cst.Arg, k: int, names: list) -> str | None:
    """The parameter (of ``names``) that a call's ``k``-th argument binds; None for one past them or a
    ``*`` argument."""
    if arg.star:
        return None
    if arg.keyword is not None:
        return arg.keyword.value
    return names[k] if k < len(names) else None


def _viewed_name(node, env: dict) -> str | None:
    """The name whose memory an argument holds: itself, or what it views (``v[0]``, ``v.T``,
    ``v.reshape(...)``, ``np.reshape(v, ...)``; ``env``: the helper's globals, which tell a module).
    """
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, (cst.Subscript, cst.Attribute)):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if not may_view(node.func.attr.value, node):
                return None
            attr = node.func
            # ``v.reshape(...)`` views ``v``; ``np.reshape(v, ...)`` its first argument
            node = (
                attr.value
                if not _is_module(attr.value, env)
                else (node.args[0].value if node.args else None)
            )
        else:
            return None


def _is_module(node, env: dict) -> bool:
    return isinstance(node, cst.Name) and inspect.ismodule(env.get(node.value))


def _element_base(target) -> str | None:
    """The name ``X[i] = ...`` (``X[i][j]``) writes into, else None."""
    if not isinstance(target, cst.Subscript):
        return None
    while isinstance(target, cst.Subscript):
        target = target.value
    return target.value if isinstance(target, cst.Name) else None


@per_helper
def returned_parameters(helper) -> frozenset[str] | None:
    """The parameters of a helper whose memory its ``return``s may share (a parameter, a view of one:
    ``x[0]``, ``x.T``; ``frozenset()`` where every return is new: ``np.mean(...)``, ``a * b``, a name only
    such values are assigned to); None where s2s cannot tell (any of them, then).
    """
    try:
        src = source.load(helper)
    except Exception:  # not a function s2s reads
        return None
    if not isinstance(src.node, cst.FunctionDef):
        return None
    params = set(inspect.signature(helper).parameters)
    assigned: dict = {}
    returns = []
    for node in own_nodes([src.node.body]):
        # (a write into an element, ``a[0] = v``, or an update in place, ``a += v``, keeps ``a`` the array
        # it was: new if it was)
        if isinstance(node, cst.Assign):
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    assigned.setdefault(t.target.value, []).append(node.value)
                elif _side_by_side(t.target, node.value):
                    # ``out, cache = None, None``: each name its own item
                    for el, v in zip(t.target.elements, node.value.elements):
                        assigned.setdefault(el.value.value, []).append(v.value)
                elif not isinstance(t.target, (cst.Subscript, cst.Attribute)):
                    for n in iter_nodes(t.target):
                        if isinstance(n, cst.Name):
                            assigned.setdefault(n.value, []).append(None)
        elif isinstance(node, (cst.AnnAssign, cst.For)):
            for n in iter_nodes(node.target):
                if isinstance(n, cst.Name):
                    assigned.setdefault(n.value, []).append(None)
        elif isinstance(node, cst.Return):
            returns.append(node.value)

    def union(parts):
        parts = list(parts)
        return None if any(p is None for p in parts) else frozenset().union(*parts)

    def shares(expr, seen):
        if expr is None:
            return None
        if isinstance(expr, (*NEW_EXPRESSIONS, cst.Integer, cst.Float)):
            return frozenset()
        if isinstance(expr, (cst.Tuple, cst.List)):  # (a display holds its items)
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return None
            return union(shares(e.value, seen) for e in expr.elements)
        if isinstance(expr, cst.Dict):  # ``{"w": X.T @ r}``: its values
            if not all(isinstance(e, cst.DictElement) for e in expr.elements):
                return None
            return union(shares(e.value, seen) for e in expr.elements)
        if isinstance(
            expr, (cst.Subscript, cst.Attribute)
        ):  # a view of what its base shares
            return shares(expr.value, seen)
        if isinstance(expr, cst.Call):
            func = dotted(expr.func) or ""
            module, _, name = func.rpartition(".")
            root = module.split(".")[0]
            # (a parameter or a name the helper assigns is its own, whatever its module calls so)
            local = root in params or root in assigned
            library = src.env.get(root) if module and not local else None
            if (
                getattr(library, "__name__", "") in ("numpy", "jax.numpy")
                and "." not in module
            ):
                # a view op's result shares the memory of its first argument only
                if not may_view(name, expr):
                    return frozenset()
                if name == "einsum":  # (its subscripts come first)
                    return union([shares(a.value, seen) for a in expr.args])
                return shares(expr.args[0].value, seen) if expr.args else None
            if (
                isinstance(expr.func, cst.Attribute) and library is None
            ):  # ``flat.reshape(n)``
                method = expr.func.attr.value
                if method == "copy" or not hasattr(np.ndarray, method):
                    # (no array has ``ret.toarray()``: s2s's values raise there, returning nothing)
                    return frozenset()
                # (an array's method that makes no view makes a new array: ``x.mean(axis=0)``)
                return (
                    shares(expr.func.value, seen)
                    if may_view(method, expr)
                    else frozenset()
                )
            return None
        if isinstance(expr, cst.IfExp):  # one of its two values
            return union([shares(expr.body, seen), shares(expr.orelse, seen)])
        if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
            return frozenset()
        if isinstance(expr, cst.Name):
            own = frozenset(
                {expr.value} & params
            )  # (a parameter's own value, on some path)
            if expr.value not in assigned:
                return own if own else None
            if expr.value in seen:
                return None
            found = union(shares(v, seen | {expr.value}) for v in assigned[expr.value])
            return None if found is None else found | own
        return None

    return union(shares(r, frozenset()) for r in returns) if returns else None


def _side_by_side(target, value) -> bool:
    """``a, b = u, v``: a display of names assigned a display of as many values, none starred."""
    return (
        isinstance(target, (cst.Tuple, cst.List))
        and isinstance(value, (cst.Tuple, cst.List))
        and len(target.elements) == len(value.elements)
        and all(isinstance(e.value, cst.Name) for e in target.elements)
        and not any(isinstance(e, cst.StarredElement) for e in value.elements)
    )


def returns_new_arrays(helper) -> bool:
    """Whether every ``return`` of a helper gives new arrays: its result shares no memory."""
    return returned_parameters(helper) == frozenset()
