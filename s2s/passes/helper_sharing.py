"""What a helper of the program does with the memory of its arguments, read from its source once: which
parameters it updates in place (``v += b``), and which its result may share (a parameter, a view of
one: ``x[0]``, ``x.T``; none where every return is new: ``np.mean(...)``, ``a * b``). The aliasing check
(``passes/aliasing``) reads these at the helper's calls.
"""

from __future__ import annotations

import inspect

import libcst as cst

from .. import ir
from ..cstutil import dotted, iter_nodes, own_nodes
from ..frontend import source

VIEW_OPS = {
    "reshape", "transpose", "matrix_transpose", "ravel", "squeeze", "expand_dims", "swapaxes",
    "moveaxis", "broadcast_to", "asarray", "diagonal", "real", "imag", "flip", "atleast_1d",
    "atleast_2d", "atleast_3d", "split", "array_split", "hsplit", "vsplit", "unstack",
}  # fmt: skip
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
    """The parameters a helper updates in place before rebinding them (``v += b``, ``v /= n``): name ->
    the update's operator. NumPy changes the caller's array that the parameter holds."""
    try:
        src = source.load(helper)
        params = list(inspect.signature(helper).parameters)
    except Exception:  # not a function s2s reads (its own errors come where it is read)
        return {}
    found, rebound = {}, set()
    for node in iter_nodes(src.node.body):
        if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
            name = node.target.value
            if name in params and name not in rebound:
                found.setdefault(name, ir.code(node.operator).strip())
        elif isinstance(node, (cst.AssignTarget, cst.For)):
            target = node.target
            rebound |= {n.value for n in iter_nodes(target) if isinstance(n, cst.Name)}
    return {name: found[name] for name in params if name in found}


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
            library = src.env.get(module.split(".")[0]) if module else None
            if (
                getattr(library, "__name__", "") in ("numpy", "jax.numpy")
                and "." not in module
            ):
                # a view op's result shares the memory of its first argument only
                if name not in VIEW_OPS:
                    return frozenset()
                return shares(expr.args[0].value, seen) if expr.args else None
            if (
                isinstance(expr.func, cst.Attribute) and library is None
            ):  # ``flat.reshape(n)``
                method = expr.func.attr.value
                if method == "copy":
                    return frozenset()
                return shares(expr.func.value, seen) if method in VIEW_OPS else None
            return None
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


def returns_new_arrays(helper) -> bool:
    """Whether every ``return`` of a helper gives new arrays: its result shares no memory."""
    return returned_parameters(helper) == frozenset()
