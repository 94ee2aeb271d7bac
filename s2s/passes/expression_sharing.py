"""What memory an expression's value may share with the names it reads, for the aliasing check.

``shared_with(value)`` gives the names whose arrays the value may be (a copy ``h = x``, a view: a
subscript by basic indices, an attribute, a view op's array, a call that may return an argument); a value
NumPy always makes new (arithmetic, a reduction, an index array's read, the runtime's numeric functions,
JAX's functional updates) shares nothing. ``read_before_rebound`` says whether later statements read a
name before binding it again.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import dotted, names_in
from .helper_sharing import NEW_EXPRESSIONS, may_view

# runtime functions that return new arrays: JAX's functional updates (``x.at[i].set(v)``), ``jax.lax``'s
# slices and updates, ``jax.random`` draws
# the runtime's numeric functions (``jax.scipy.stats.norm.logpdf``, ``jax.nn.relu``, draws): new arrays
FRESH_RUNTIME_MODULES = ("rt.random_", "rt.stats.", "rt.special.", "rt.nn.")
FRESH_RUNTIME = frozenset(
    {
        "rt.scan",  # ``jax.lax.scan``/``map`` (``frontend/lax_control``): new arrays, as JAX's
        "rt.index_set",
        "rt.index_add",
        "rt.index_multiply",
        "rt.index_min",
        "rt.index_max",
        "rt.dynamic_slice",
        "rt.check",  # an assert's check (``frontend``): no array, only a truth value checked
        "rt.debug_print",
        "rt.warn",
        "rt.dynamic_update_slice",
        "rt.foreign",  # JAX's results (``runtime.foreign``: an argument handed back is copied)
        "rt.refused",  # raises where it runs: it returns nothing
    }
)


# attributes that describe an array rather than view it, and builtins that give Python numbers or new
# values (``sum`` starts from ``0 +``: never one of its items)
METADATA = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes"})
NUMBERS = frozenset({"range", "len", "int", "float", "bool", "sum"})
# each returns a Python number (a new 0-d array, traced)
_NUMBER_CALLS = frozenset(
    {"len", "int", "float", "bool", "rt.as_int", "rt.as_float", "rt.length"}
)


def shared_with(value, fresh=frozenset()) -> set[str]:
    """Names whose memory the value may share; ``fresh``: functions called by name that return new arrays."""
    if isinstance(value, NEW_EXPRESSIONS):
        return set()
    # ``x[i]`` and ``x.T`` may view ``x``, never ``i``; ``x.shape[0]`` is a number; ``x[[0, 2]]`` copies
    if isinstance(value, cst.Subscript):
        return set() if _advanced(value) else shared_with(value.value, fresh)
    if isinstance(value, cst.Attribute):
        return (
            set() if value.attr.value in METADATA else shared_with(value.value, fresh)
        )
    if isinstance(value, (cst.Tuple, cst.List)):
        return set().union(
            set(), *(shared_with(e.value, fresh) for e in value.elements)
        )
    # its values and spreads (keys are strings and numbers)
    if isinstance(value, cst.Dict):
        return set().union(
            set(), *(shared_with(e.value, fresh) for e in value.elements)
        )
    if isinstance(value, cst.IfExp):  # one of the two values; the test is only read
        return shared_with(value.body, fresh) | shared_with(value.orelse, fresh)
    if isinstance(value, cst.Call):
        func = dotted(value.func) or ""
        if func.startswith("xp.") and not may_view(func[3:], value):
            return set()
        if (
            func == "xp.einsum"
        ):  # a one-operand einsum views its operand (its subscripts come first)
            return set().union(
                set(), *(shared_with(a.value, fresh) for a in value.args)
            )
        if func in FRESH_RUNTIME or func.startswith(FRESH_RUNTIME_MODULES):
            return set()
        if func.startswith("xp.") and not func.startswith("xp.atleast_") and value.args:
            # a view op views its array, not its shape or axes (``np.reshape(X, (-1, shape[-1]))``)
            return shared_with(value.args[0].value, fresh)
        if func.startswith(
            ("rt.", "xp.")
        ):  # (a view op, ``rt.append(c, v)``): what its arguments share
            return set().union(
                set(), *(shared_with(a.value, fresh) for a in value.args)
            )
        if isinstance(value.func, cst.Name) and value.func.value in NUMBERS:
            return set()
        # the function called (a helper, `zip`) is not memory; its arguments may be (``range(n)`` is not)
        if isinstance(value.func, cst.Name):
            return set().union(
                set(),
                *(shared_with(a, fresh) for a in _sharing_arguments(value, fresh)),
            )
    return names_in(value) - {"xp", "rt"}


# what an index array is made by: indexing by one copies (NumPy's advanced indexing)
INDEX_ARRAYS = frozenset({"rt.index_array", "xp.arange"})


def _advanced(subscript: cst.Subscript) -> bool:
    """Whether an index is an array s2s knows (a list, ``range``, a module-level array: ``rt.index_array``;
    ``np.arange(n)``, ``np.array([0, 2])``): NumPy's advanced indexing, whose result is a copy.
    """
    return any(
        isinstance(e.slice, cst.Index) and _index_array(e.slice.value)
        for e in subscript.slice
    )


def _index_array(node) -> bool:
    if not isinstance(node, cst.Call):
        return False
    func = dotted(node.func)
    if func in ("xp.array", "xp.asarray"):  # ``np.array([0, 2])``
        return bool(node.args) and isinstance(node.args[0].value, (cst.List, cst.Tuple))
    return func in INDEX_ARRAYS


def is_number(value, numbers) -> bool:
    """A number literal (``0.0``, ``-1``), a name in ``numbers`` (holding one), a builtin's number
    (``int(np.prod(shape))``, ``len(xs)``), or arithmetic of numbers (``i + n``)."""
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    if isinstance(value, cst.Name):
        return value.value in numbers
    if isinstance(value, cst.Call):
        return dotted(value.func) in _NUMBER_CALLS
    if isinstance(value, cst.BinaryOperation):
        return is_number(value.left, numbers) and is_number(value.right, numbers)
    return isinstance(value, (cst.Integer, cst.Float))


def numbers_unpacked(target, value, numbers) -> list[str]:
    """The names ``k, t = 0, 0.0`` binds to numbers (read before any is bound)."""
    if not (
        isinstance(target, cst.Tuple)
        and isinstance(value, cst.Tuple)
        and len(value.elements) == len(target.elements)
    ):
        return []
    return [
        el.value.value
        for el, v in zip(target.elements, value.elements)
        if isinstance(el.value, cst.Name) and is_number(v.value, numbers)
    ]


def _sharing_arguments(call: cst.Call, fresh) -> list:
    """The arguments of a call by name whose memory its result may share: those passed to the parameters
    the helper returns views of (``fresh``: name -> (parameters, those)), else all of them.
    """
    known = fresh.get(call.func.value) if isinstance(fresh, dict) else None
    values = [a.value for a in call.args]
    if known is None or any(a.star for a in call.args):
        return values
    params, shared = known
    return [
        a.value
        for k, a in enumerate(call.args)
        if (a.keyword.value if a.keyword else (params[k] if k < len(params) else None))
        in shared
    ]


def elements_shared(value, fresh=frozenset()):
    """Per-element sharing of a tuple or list literal (for exact unpacking later), else None."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return [
            elements_shared(e.value, fresh) or shared_with(e.value, fresh)
            for e in value.elements
        ]
    return None


def side_by_side(value, fresh=frozenset()):
    """What each item of a ``zip(a, b)`` or ``enumerate(a)`` step shares (a loop's tuple target), else None."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
        return None
    if any(a.star or a.keyword is not None for a in value.args):
        return None
    if value.func.value == "zip":
        return [shared_with(a.value, fresh) for a in value.args]
    if value.func.value == "enumerate" and len(value.args) == 1:
        return [set(), shared_with(value.args[0].value, fresh)]
    return None


def handed_back_items(value, handing, fresh=frozenset()):
    """What each item of a call of a helper that hands back the parameters it updates shares (``(*params,
    value)``: ``frontend/written_back``), for a tuple target; else None. ``handing``: name -> (its
    parameters, those its value may share, those handed back)."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
        return None
    known = handing.get(value.func.value)
    if known is None or any(a.star for a in value.args):
        return None
    params, shared, handed = known
    by_param = {
        (
            a.keyword.value if a.keyword else params[k] if k < len(params) else None
        ): a.value
        for k, a in enumerate(value.args)
    }
    items = [
        shared_with(by_param[p], fresh) if p in by_param else set() for p in handed
    ]
    value_shares = set().union(
        set(), *(shared_with(v, fresh) for p, v in by_param.items() if p in shared)
    )
    return [*items, value_shares]


def read_before_rebound(name: str, later, closures=None) -> bool:
    """Whether ``name`` is read by the statements ``later`` before one assigns it anew; a local function
    they call or name reads what it captures (``closures``: local function -> the names it reads from outside).
    """
    for stmt in later:
        read = names_in(stmt.value)
        for fn in read & (closures or {}).keys():
            read = read | closures[fn]
        if name in read:
            return True
        in_place = isinstance(stmt, ir.AugAssign) or (
            isinstance(stmt, ir.Assign) and isinstance(stmt.target, cst.Subscript)
        )
        # ``w *= 2``, ``w[i] = v``: NumPy reads and writes ``w``'s memory
        if in_place and name in names_in(stmt.target):
            return True
        if isinstance(stmt, ir.Assign) and name in ir.target_names(stmt.target):
            return False
    return False
