"""Coverage is computed: every target op is registered, tested, and its rule is a well-formed template."""

import ast
import builtins
import functools
import inspect
import textwrap

import jax.numpy as jnp
import numpy as np
import pytest
from op_table import CASES

from s2s import runtime as rt
from s2s.frontend.spellings import CONSTANTS, DTYPES
from s2s.rules import ALIASES, FAMILIES, OPS
from s2s.rules.registry import DERIVATIVES, ROLES, RULE_VOCABULARY

TARGET = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "negative",
    "abs",
    "sign",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "arctan2",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "maximum",
    "minimum",
    "where",
    "clip",
    "logaddexp",
    "hypot",
    "floor",
    "ceil",
    "round",
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "var",
    "std",
    "cumsum",
    "cumprod",
    "dot",
    "matmul",
    "vdot",
    "inner",
    "outer",
    "einsum",
    "tensordot",
    "trace",
    "linalg.norm",
    "linalg.inv",
    "linalg.solve",
    "linalg.det",
    "reshape",
    "ravel",
    "transpose",
    "swapaxes",
    "moveaxis",
    "squeeze",
    "expand_dims",
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "split",
    "tile",
    "repeat",
    "broadcast_to",
    "flip",
    "roll",
    "pad",
    "diag",
    "triu",
    "tril",
    "take",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "full",
    "arange",
    "linspace",
    "eye",
    "array",
    "asarray",
    "positive",
    "floor_divide",
    "remainder",
    "copy",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "isnan",
    "isfinite",
    "argmax",
    "argmin",
    "argsort",
    "shape",
    "ndim",
    "size",
]

# Leading parameters that receive a cotangent (default 1).
ARITY = {
    **dict.fromkeys(
        [
            "add",
            "subtract",
            "multiply",
            "divide",
            "power",
            "arctan2",
            "maximum",
            "minimum",
        ],
        2,
    ),
    **dict.fromkeys(
        ["logaddexp", "hypot", "remainder", "dot", "matmul", "vdot", "inner", "outer"],
        2,
    ),
    **dict.fromkeys(
        [
            "logaddexp2",
            "float_power",
            "fmod",
            "fmax",
            "fmin",
            "copysign",
            "heaviside",
            "ldexp",
        ],
        2,
    ),
    **dict.fromkeys(
        ["tensordot", "einsum", "linalg.solve", "full", "full_like", "convolve"], 2
    ),
    **dict.fromkeys(["where", "clip"], 3),
}


def canonical(name):
    return ALIASES.get(name, name)


def rule_tree(op):
    return ast.parse(textwrap.dedent(inspect.getsource(op.rule))).body[0]


RULED = sorted(name for name, op in OPS.items() if op.rule is not None)


@pytest.mark.parametrize("name", TARGET)
def test_target_op_is_registered(name):
    op = OPS.get(canonical(name))
    assert op is not None, f"{name} is not registered"
    assert op.family in FAMILIES
    assert (op.rule is None) == (op.family in ("nondiff", "no_derivative"))
    if op.family == "nondiff":
        assert op.reason


# ops a case of the op table cannot state, each tested elsewhere
UNTABLED = {
    # its number of bins is read from its values: JAX needs ``length=`` under ``jit``, NumPy takes none
    # (``tests/programs/numpy_style.py::pieces_and_grids``)
    "bincount",
    # SciPy leaves the other triangle of the factor as the input had it, JAX zeroes it: the table's NumPy
    # oracle cannot be compared; its cases go through ``cho_solve`` (``op_table_composed``) and
    # ``tests/test_linalg_functions.py`` (against JAX)
    "rt.cho_factor",
}


def test_every_differentiable_op_has_a_case():
    tested = {canonical(case.func_name) for case in CASES}
    assert {case.op for case in CASES} == tested, "a case's op does not match its call"
    missing = sorted(
        name
        for name, op in OPS.items()
        if op.family not in ("nondiff", "no_derivative")
        and name not in tested
        and name not in UNTABLED
    )
    assert not missing, f"ops without a case in the op table: {missing}"


def test_aliases_name_registered_ops():
    for alias, name in ALIASES.items():
        assert name in OPS and alias not in OPS, alias


def _exists(module, dotted):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return True


@pytest.mark.parametrize("name", RULED)
def test_rule_is_a_template(name):
    """One ``return`` (decompose: assignments, ``if`` on its constant parameters, then return), entries as the
    op's arity, only the vocabulary."""
    op = OPS[name]
    fn = rule_tree(op)
    *assigns, last = fn.body
    assert isinstance(last, ast.Return) and last.value is not None
    if op.family != "decompose":
        assert not assigns, f"{name}: the body must be a single return"
        value = last.value
        entries = len(value.elts) if isinstance(value, ast.Tuple) else 1
        assert entries == ARITY.get(name, 1), f"{name}: {entries} entries"
        params = list(op.signature.parameters)
        assert entries <= len(params)
    else:
        # an ``if`` chooses a formula by a constant parameter (``passes/specialize.py`` decides it at the call)
        statements = [
            n for a in assigns for n in ast.walk(a) if isinstance(n, ast.stmt)
        ]
        # (a ``for`` over an array's items is a ``scan``, with rules in every mode: ``poly``, ``rt.polydiv``)
        assert all(
            isinstance(n, (ast.Assign, ast.If, ast.For, ast.Return)) for n in statements
        )
        assert (
            "ans" not in op.params and "g" not in inspect.signature(op.rule).parameters
        )
    args = fn.args
    for vocab in RULE_VOCABULARY:
        if vocab in {a.arg for a in args.args + args.posonlyargs}:
            pytest.fail(f"{name}: {vocab} must be keyword-only")
    allowed = {a.arg for a in args.args + args.kwonlyargs + args.posonlyargs}
    allowed |= {args.vararg.arg} if args.vararg else set()
    # ``*args`` read at a call's number of items: ``len`` of them, comprehensions over ``enumerate`` of them,
    # a ``tuple`` of such a comprehension (``np.ix_``'s arrays: NumPy returns a tuple)
    allowed |= {"len", "enumerate", "tuple"} if args.vararg else set()
    allowed |= {
        n.id
        for c in ast.walk(fn)
        if isinstance(c, ast.comprehension)
        for n in ast.walk(c.target)
        if isinstance(n, ast.Name)
    }
    allowed |= {
        n.id
        for a in assigns
        for n in ast.walk(a)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    # decorators are not part of the template
    body = ast.Module(body=fn.body, type_ignores=[])
    used = {
        n.id
        for n in ast.walk(body)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    free = used - allowed - {"xp", "rt"}
    assert not free, f"{name}: names outside the rule vocabulary: {free}"
    assert not free & set(dir(builtins)) - {"len", "enumerate"}
    for node in ast.walk(body):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "rt"
        ):
            assert hasattr(rt, node.attr), f"{name}: rt.{node.attr} does not exist"
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "xp"
        ):
            dotted = node.attr
            assert _exists(np, dotted) and _exists(
                jnp, dotted
            ), f"{name}: xp.{dotted} not in numpy and jax.numpy"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            inner = node.value
            if isinstance(inner.value, ast.Name) and inner.value.id == "xp":
                dotted = f"{inner.attr}.{node.attr}"
                assert _exists(np, dotted) and _exists(
                    jnp, dotted
                ), f"{name}: xp.{dotted} missing"


@pytest.mark.parametrize("name", RULED)
def test_rule_parameters_are_numpys(name):
    """The rule's parameters are NumPy's own names, in NumPy's order (the leading ones at least)."""
    op = OPS[name]
    func = np
    for part in name.split("."):
        func = getattr(func, part)
    try:
        numpy_params = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):  # ufuncs: positional x1, x2 / x
        numpy_params = ["x1", "x2"][: func.nin] if func.nin > 1 else ["x"]
    ours = list(op.signature.parameters)
    # einsum(*operands): subscripts first
    if numpy_params and numpy_params[0] == "operands":
        numpy_params = ["subscripts", "operands"]
    prefix = [p for p in numpy_params if p not in ("out", "kwargs")][
        : op_arity(op, ours)
    ]
    assert ours[: len(prefix)] == prefix, f"{name}: {ours} vs NumPy {numpy_params}"


def op_arity(op, ours):
    return max(ARITY.get(op.name, 1), 1)


# --- runtime helpers that derivative code calls: each has rules, so derivatives differentiate again ---

from pathlib import Path  # noqa: E402

from s2s.rules import RUNTIME_OPS  # noqa: E402
from s2s.transforms import control_rules, forward_control  # noqa: E402

ALL_RULES = [
    (name, op)
    for table in (OPS, RUNTIME_OPS)
    for name, op in sorted(table.items())
    if op.rule is not None
]


def _attributes_of(fn, module):
    """``<module>.<name>`` read in the function's source (``xp.linalg.solve`` gives ``linalg.solve``)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    names = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == module
        ):
            names.add(node.attr)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            inner = node.value
            if isinstance(inner.value, ast.Name) and inner.value.id == module:
                names.add(f"{inner.attr}.{node.attr}")
    return {n for n in names if not any(other.startswith(n + ".") for other in names)}


def _templates(op):
    """The distinct functions an op's rules read as templates (its family's definition first)."""
    found = [op.rule]
    for mode in DERIVATIVES:
        rule = op.rules.get(mode)
        if rule is None:
            continue
        if rule.template is not None and rule.template not in found:
            found.append(rule.template)
    return found


def _rule_functions():
    for _, op in ALL_RULES:
        yield from _templates(op)


def _emitted_by_transforms():
    """``rt.<name>`` written as string constants in the transforms (``call("rt.unbroadcast", ...)``)."""
    folder = Path(control_rules.__file__).parent
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("batch"):  # what batched code calls: tests/test_vmap.py
            continue
        tree = ast.parse(path.read_text())
        batching = [  # the batch derivations in families.py
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and "batch" in n.name
        ]
        skipped = {id(c) for f in batching for c in ast.walk(f)}
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.startswith("rt.")
            ) and node.value[3:].isidentifier():
                yield node.value[3:]


CALLED_BY_DERIVATIVES = sorted(
    set().union(*(_attributes_of(fn, "rt") for fn in _rule_functions()))
    | set(_emitted_by_transforms())
)
CONTROL = set(control_rules.RULES) | set(forward_control.RULES)


@pytest.mark.parametrize("name", CALLED_BY_DERIVATIVES)
def test_runtime_helper_of_derivative_code_has_rules(name):
    """Every ``rt.<name>`` a rule body or a transform emits has rules (both modes) or a nondiff reason."""
    # rt.cond, rt.scan, ...: the control-flow rules transform their functions
    if name in CONTROL:
        assert name in control_rules.RULES and name in forward_control.RULES, name
        return
    op = RUNTIME_OPS.get(f"rt.{name}")
    assert op is not None, f"rt.{name} is called by derivative code but has no rule"
    if op.family == "decompose":
        return  # inlined before differentiation: the ops of its body have rules
    if op.family in ("nondiff", "no_derivative"):
        # no_derivative: JAX's own partial, evaluated (``rt.special.jax_partial``): differentiating it
        # again is an error naming it, never a zero
        assert op.reason
    else:
        assert op.rule is not None
        missing = [mode for mode in DERIVATIVES if mode not in op.rules]
        assert not missing, f"rt.{name} has no {missing} rule"


def test_ops_in_rule_bodies_have_rules():
    """``xp.<op>`` in any rule body is an op of the table (with rules or a nondiff reason): rules differentiate again."""
    used = set().union(*(_attributes_of(fn, "xp") for fn in _rule_functions()))
    # (``xp.pi``, ``xp.inf``: constants, ``xp.float32``: a dtype; not ops)
    missing = sorted(
        n for n in used if canonical(n) not in OPS and n not in CONSTANTS | DTYPES
    )
    assert not missing, f"ops in rule bodies without rules: {missing}"


@pytest.mark.parametrize("name", sorted(RUNTIME_OPS))
def test_runtime_rule_binds_like_its_function(name):
    """A runtime helper's rule has the helper's positional parameters (names may differ: ``g`` -> ``ct``) and defaults."""
    op = RUNTIME_OPS[name]
    if op.rule is None:
        return
    fn = functools.reduce(getattr, name.removeprefix("rt.").split("."), rt)
    theirs = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind is not p.VAR_KEYWORD
    ]
    ours = list(op.signature.parameters.values())
    assert len(ours) == len(
        theirs
    ), f"{name}: {[p.name for p in ours]} vs {[p.name for p in theirs]}"
    for mine, other in zip(ours, theirs):
        assert mine.kind == other.kind, f"{name}: {mine.name}"
        assert mine.default == other.default, f"{name}: default of {mine.name}"
    for fn_rule in _templates(op):
        if fn_rule is not None:
            params = inspect.signature(fn_rule).parameters
            for vocab in RULE_VOCABULARY:
                assert (
                    vocab not in params
                    or params[vocab].kind is inspect.Parameter.KEYWORD_ONLY
                ), f"{name}: {vocab}"


@pytest.mark.parametrize("name", [name for name, _ in ALL_RULES])
def test_every_parameter_has_a_role(name):
    """Ops declare what each parameter is (data, index, axis, shape, static): batching derives rules from it."""
    op = OPS.get(name) or RUNTIME_OPS[name]
    assert set(op.roles) == set(op.params), name
    assert set(op.roles.values()) <= set(ROLES), name
    assert op.params_with_role("data") or op.family == "decompose", name


def test_roles_follow_numpy_names_and_rule_entries():
    assert OPS["sum"].roles == {
        "a": "data",
        "axis": "axis",
        "dtype": "static",
        "out": "static",
        "keepdims": "static",
    }
    assert OPS["reshape"].roles["shape"] == "shape"
    assert OPS["einsum"].roles["subscripts"] == "static"
    assert RUNTIME_OPS["rt.index_set"].roles == {
        "target": "data",
        "index": "index",
        "value": "data",
    }
