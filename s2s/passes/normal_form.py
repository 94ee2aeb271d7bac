"""The normal form that differentiation reads, and a checker for it.

In normal form every assignment's value is one of:
- an *atom*: a name, a literal, a tuple/list/dict of atoms, or a *static*
  expression (built from literals, ``.shape``/``.ndim``/``.size``/``.dtype``,
  ``len``, and arithmetic on those), which carries no derivative;
- one operation applied to atoms: an operator, a call ``xp.<op>(...)``, a
  call of a helper or builtin, a subscript ``a[...]`` or an attribute
  ``a.field``.
``Eqn`` names what an assignment computes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import libcst as cst

from ..cstutil import dotted
from ..rules.registry import ALIASES
from ..runtime.numbers import FUNCTIONS as NUMPY_OF_NUMBERS

BINARY_OPS = {
    cst.Add: "add", cst.Subtract: "subtract", cst.Multiply: "multiply", cst.Divide: "divide",
    cst.Power: "power", cst.MatrixMultiply: "matmul", cst.FloorDivide: "floor_divide",
    cst.Modulo: "remainder", cst.BitAnd: "bitwise_and", cst.BitOr: "bitwise_or",
    cst.BitXor: "bitwise_xor", cst.LeftShift: "left_shift", cst.RightShift: "right_shift",
}  # fmt: skip
UNARY_OPS = {
    cst.Minus: "negative",
    cst.Plus: "positive",
    cst.BitInvert: "invert",
    cst.Not: "logical_not",
}
COMPARISON_OPS = {
    cst.LessThan: "less", cst.LessThanEqual: "less_equal", cst.GreaterThan: "greater",
    cst.GreaterThanEqual: "greater_equal", cst.Equal: "equal", cst.NotEqual: "not_equal",
    cst.Is: "is", cst.IsNot: "is_not", cst.In: "in", cst.NotIn: "not_in",
}  # fmt: skip
STATIC_ATTRIBUTES = {"shape", "ndim", "size", "dtype"}
STATIC_CALLS = {
    "len",
    "int",
    "float",
    "bool",
    "tuple",
    "list",
    "dict",
    "range",
    "slice",
    "isinstance",
    "hasattr",
    "str",
    "format",
    "repr",
}
# builtins of a value's shape or type, not of its values
TYPE_QUERIES = frozenset({"len", "isinstance", "hasattr", "callable"})
# Python's ``list(xs)`` and ``tuple(xs)``: the runtime ops whose rules they take
SEQUENCE_BUILTINS = {"list": "as_list", "tuple": "as_tuple", "dict": "as_dict"}
XP_CONSTANTS = {
    "xp.pi",
    "xp.e",
    "xp.inf",
    "xp.nan",
    "xp.euler_gamma",
    "xp.newaxis",
    "xp.s_",
}
XP_DTYPES = {
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint32",
    "bool_", "complex64", "complex128",
}  # fmt: skip
LITERALS = (
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.Ellipsis,
)


@functools.lru_cache(
    maxsize=1 << 16
)  # nodes hash by identity; a long chain is asked at every level
def is_static(node) -> bool:
    """True for expressions that carry no derivative and need no temporaries."""
    if isinstance(node, LITERALS):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.Attribute):
        if node.attr.value in STATIC_ATTRIBUTES:
            return is_atom(node.value)
        name = dotted(node) or ""
        return name in XP_CONSTANTS or (
            name.startswith("xp.") and name[3:] in XP_DTYPES
        )
    if isinstance(node, cst.Subscript):
        return is_static(node.value) and all(_static_slice(e.slice) for e in node.slice)
    if isinstance(node, cst.BinaryOperation):
        return is_static(node.left) and is_static(node.right)
    if isinstance(node, cst.UnaryOperation):
        return is_static(node.expression)
    if isinstance(node, cst.Call):
        func = dotted(node.func)
        if func in TYPE_QUERIES:
            # a length is a shape, ``isinstance``/``hasattr`` a type's: static whatever the value
            return all(is_atom(a.value) for a in node.args)
        if func.startswith(
            "rt.numbers."
        ):  # NumPy's function of numbers (``rt.numbers``)
            return all(is_static(a.value) for a in node.args)
        return func in STATIC_CALLS and all(is_static(a.value) for a in node.args)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(is_static(e.value) for e in node.elements)
    return False


def _static_slice(s) -> bool:
    if isinstance(s, cst.Index):
        return is_static(s.value)
    return all(p is None or is_static(p) for p in (s.lower, s.upper, s.step))


def is_atom(node) -> bool:
    """Names, literals, static expressions, and containers of atoms."""
    if isinstance(node, cst.Name) or is_static(node):
        return True
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(
            isinstance(e, cst.Element) and is_atom(e.value) for e in node.elements
        )
    if isinstance(node, cst.Dict):
        return all(is_atom(e.key) and is_atom(e.value) for e in node.elements)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    # an index: ``xp.s_[i, 1:]``
    if isinstance(node, cst.Subscript) and dotted(node.value) == "xp.s_":
        return all(is_index_atom(e.slice) for e in node.slice)
    return False


def is_index_atom(s) -> bool:
    if isinstance(s, cst.Index):
        return is_atom(s.value)
    return all(p is None or is_atom(p) for p in (s.lower, s.upper, s.step))


@dataclass(frozen=True)
class Eqn:
    """What one normal-form assignment computes.

    ``kind`` is ``op`` (an array op: operator or ``xp.<name>`` call),
    ``helper`` (a user function), ``call`` (a local function or builtin),
    ``getitem``, ``attribute``, ``copy`` (an atom) or ``runtime``.
    """

    kind: str
    name: str
    args: tuple = ()
    kwargs: tuple = ()
    node: cst.BaseExpression | None = None

    def label(self) -> str:
        """How errors name what this computes, quoted: the op, or a library function ``rt.host_call`` runs."""
        if self.kind == "runtime" and self.name == "host_call" and self.args:
            function = cst.Module([]).code_for_node(self.args[0])
            return f"`{function}` (run by `rt.host_call`)"
        return f"`{self.name}`" if self.kind != "runtime" else f"`rt.{self.name}`"


def eqn_of(
    value: cst.BaseExpression, helpers=frozenset(), local_fns=frozenset()
) -> Eqn:
    if is_atom(value):
        return Eqn("copy", "copy", (value,), (), value)
    if isinstance(value, cst.BinaryOperation):
        return Eqn(
            "op", BINARY_OPS[type(value.operator)], (value.left, value.right), (), value
        )
    if isinstance(value, cst.UnaryOperation):
        return Eqn(
            "op", UNARY_OPS[type(value.operator)], (value.expression,), (), value
        )
    if isinstance(value, cst.Comparison) and len(value.comparisons) == 1:
        c = value.comparisons[0]
        return Eqn(
            "op",
            COMPARISON_OPS[type(c.operator)],
            (value.left, c.comparator),
            (),
            value,
        )
    if isinstance(value, cst.BooleanOperation):
        return Eqn("op", "logical_" + ("and" if isinstance(value.operator, cst.And) else "or"),
                   (value.left, value.right), (), value)  # fmt: skip
    if isinstance(value, cst.Subscript):
        return Eqn("getitem", "getitem", (value.value,), (), value)
    if isinstance(value, cst.Attribute):
        return Eqn("attribute", value.attr.value, (value.value,), (), value)
    if isinstance(value, cst.Call):
        args = tuple(a.value for a in value.args if a.keyword is None)
        kwargs = tuple(
            (a.keyword.value, a.value) for a in value.args if a.keyword is not None
        )
        func = dotted(value.func) or ""
        if func.startswith("xp."):
            return Eqn("op", func[3:], args, kwargs, value)
        if func.startswith("rt.numbers.") and func[11:] in NUMPY_OF_NUMBERS:
            # NumPy's function of numbers known when traced, jax.numpy's of traced values: the op's rules
            return Eqn("op", ALIASES.get(func[11:], func[11:]), args, kwargs, value)
        if func.startswith("rt."):
            return Eqn("runtime", func[3:], args, kwargs, value)
        if func in helpers:
            return Eqn("helper", func, args, kwargs, value)
        if func in SEQUENCE_BUILTINS and len(args) == 1 and not kwargs:
            # ``list(params)``: the runtime op with rules (the call is written as Python's)
            return Eqn("runtime", SEQUENCE_BUILTINS[func], args, kwargs, value)
        return Eqn("call", func, args, kwargs, value)
    raise ValueError(f"not in normal form: {type(value).__name__}")


CONTROL_CALLS = frozenset({
    "rt.cond", "rt.scan", "rt.while_loop", "rt.cond_with_residuals", "rt.while_loop_with_tape", "rt.while_loop_reverse",
})  # fmt: skip


def is_control_call(value) -> bool:
    """``rt.cond(...)``, ``rt.scan(...)`` or ``rt.while_loop(...)``: may unpack straight into a tuple target."""
    return isinstance(value, cst.Call) and dotted(value.func) in CONTROL_CALLS


def op_label(value: cst.BaseExpression) -> str:
    """A short name for what an expression computes, used to name its temporary."""
    try:
        e = eqn_of(value)
    except (ValueError, KeyError):
        return "t"
    if e.kind == "runtime" and e.name == "foreign" and isinstance(e.args[0], cst.Name):
        return e.args[0].value.strip(
            "_"
        )  # ``rt.foreign(l2_loss, ...)``: named after the function
    return {"copy": "t", "attribute": e.name}.get(e.kind, e.name)


def check(fn) -> None:
    """Raise AssertionError unless ``fn`` (an ``ir.Function``) is in normal form."""
    from .. import ir

    for stmt in fn.body:
        assert not isinstance(stmt, ir.AugAssign), "augmented assignment left"
        if isinstance(stmt, ir.Return):
            assert is_atom(stmt.value), "return of a non-atom"
            continue
        e = eqn_of(stmt.value)
        for a in (*e.args, *(v for _, v in e.kwargs)):
            assert is_atom(a), f"argument not an atom: {type(a).__name__}"
        if e.kind == "getitem":
            assert all(
                is_index_atom(el.slice) for el in stmt.value.slice
            ), "index not atomic"
