"""Activity analysis: which variables carry derivatives from the inputs to the outputs.

Activity is data dependence (``dependence.py``) along differentiable inputs
only. A variable is *varied* if it depends differentiably on a differentiated input,
*useful* if a differentiated output depends differentiably on it, and *active*
if both. Only active variables get cotangents (or tangents).

What an equation depends on (``eqn_inputs``):
- an op with a rule: the arguments its rule differentiates (an ``axis`` or a
  shape carries nothing); a ``nondiff`` op: nothing;
- any other call (an op without a rule, an unknown function): every argument;
- a user function: the arguments its flow summary says reach its result;
- a local function handed to a call (``rt.scan(body, ...)``, or any other
  call): what it reads from the enclosing scope (its closure);
- reads (``p[0]``, ``p.w``) and copies: the container read.
Static expressions (literals, ``.shape``, ``len``) and Python's builtins of integers, strings and bools
(``range``, ``str``: ``INTEGER_VALUED``) carry nothing.

The analysis over-approximates: a name is active when some path may carry a
derivative. The *closed world* check (``check_closed_world``) then makes
every active statement something s2s can differentiate, or a located error:
never a silent zero.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..cstutil import dotted, iter_nodes, names_in
from ..errors import MissingRule, S2SError
from ..passes.dataflow import free_names
from ..passes.normal_form import Eqn, eqn_of, is_static
from ..rules import OPS
from ..rules.nondiff import BITWISE
from ..rules.registry import LIST_OUTPUTS, op_named
from ..rules.vocabulary import ARRAY_FUNCTIONS
from ..templates import bind, differentiable_arguments
from .dependence import depends_on, needed_by

CONSTANT_NAMES = ("True", "False", "None")
# Python's builtins whose values are integers, strings or bools: no derivative reaches them, whatever
# their arguments hold (``range(1, num_layers)`` of a count a function returned beside arrays)
INTEGER_VALUED = frozenset(
    {
        "range",
        "len",
        "str",
        "repr",
        "format",
        "bool",
        "isinstance",
        "hasattr",
        "callable",
    }
)


def diff_names(atom) -> set[str]:
    """Names whose values flow differentiably through an atom (static parts excluded)."""
    if isinstance(atom, cst.Name):
        return set() if atom.value in CONSTANT_NAMES else {atom.value}
    if is_static(atom):
        return set()
    if isinstance(atom, (cst.Tuple, cst.List)):
        return (
            set().union(*(diff_names(e.value) for e in atom.elements))
            if atom.elements
            else set()
        )
    if isinstance(atom, cst.Dict):
        return (
            set().union(*(diff_names(e.value) for e in atom.elements))
            if atom.elements
            else set()
        )
    return set()


def compound_reads(atom) -> set[str]:
    """Names an operand that is no atom reads (a pass left a call in it: ``xp.transpose(z)``), which a
    derivative rule would not reach: its transform refuses them (an internal error, never a zero).
    """
    if isinstance(atom, (cst.Name, cst.Tuple, cst.List, cst.Dict)) or is_static(atom):
        return set()
    return {n for n in names_in(atom) if n not in CONSTANT_NAMES}


def eqn_inputs(e: Eqn, flows=None, defs=None, through_nondiff=False) -> set[str]:
    """Names an equation's output depends on differentiably (``through_nondiff``: a ``nondiff`` op's output
    on all its arguments, as for real values only their derivative is zero).

    ``flows`` maps helper names to the tuple of their parameters' flags (does a
    derivative flow from that parameter to the output); ``defs`` maps the names
    of local functions (branches, loop bodies, functions handed to a call) to
    their ``Function``. A local function passed as an argument stands for what
    it reads from the enclosing scope: a ``rt.cond``/``scan``/``while_loop``
    depends on its operands and on its functions' free names, and so does any
    other call handed a function (which then needs a rule, or is an error).
    """

    def local_functions(atom) -> list[str]:
        """The local functions an argument hands over: itself, or items of a display (``[f, g]``)."""
        if not defs:
            return []
        if isinstance(atom, cst.Name):
            return [atom.value] if atom.value in defs else []
        if isinstance(atom, (cst.Tuple, cst.List, cst.Dict)):
            return [f for el in atom.elements for f in local_functions(el.value)]
        return []

    def closures(atoms) -> set[str]:
        return set().union(
            set(),
            *(
                free_names(defs[f]) - {"xp", "rt"}
                for a in atoms
                for f in local_functions(a)
            ),
        )

    def inputs(atom) -> set[str]:
        if local_functions(atom):  # (a display may hold data beside functions)
            return closures([atom]) | (diff_names(atom) - set(defs))
        return diff_names(atom)

    every = (*e.args, *(v for _, v in e.kwargs))
    if e.kind in ("runtime", "op"):
        op = op_named(("rt." if e.kind == "runtime" else "") + e.name)
        if (
            op is not None
            and op.family == "nondiff"
            and not through_nondiff
            and e.name not in BITWISE
        ):
            return closures(every)
        if op is not None and op.rule is not None and op.family != "decompose":
            atoms = differentiable_arguments(op, e)
            if atoms is not None:
                return set().union(closures(every), *(diff_names(a) for a in atoms))
    if e.kind in ("runtime", "op"):
        return set().union(set(), *(inputs(a) for a in every))
    if e.kind == "helper":
        flags = (flows or {}).get(e.name)
        flowing = [
            a
            for i, a in enumerate(e.args)
            if flags is None or (i < len(flags) and flags[i])
        ]
        return set().union(closures(every), *(diff_names(a) for a in flowing))
    if e.kind in ("getitem", "attribute", "copy"):
        return diff_names(e.args[0])
    if e.kind == "call" and e.name in INTEGER_VALUED:
        return set()
    return set().union(
        set(), *(names_in(a) for a in e.args), *(inputs(a) for a in every)
    )


def varied(body, wrt, helpers=frozenset(), flows=None) -> set[str]:
    """Variables of ``body`` that depend differentiably on ``wrt``."""
    return depends_on(body, wrt, helpers, lambda e, defs: eqn_inputs(e, flows, defs))


def activity(body, wrt, outputs, helpers=frozenset(), flows=None) -> set[str]:
    """The active variables of the statements ``body`` for derivatives of ``outputs`` wrt ``wrt``."""
    useful = needed_by(
        body, outputs, helpers, lambda e, defs: eqn_inputs(e, flows, defs)
    )
    return varied(body, wrt, helpers, flows) & useful


def carry_parts(
    stmts, carry_param: str, carry_out, init_active, inputs, helpers, flows
):
    """``(unpacking, active)`` for a loop body ``stmts`` that unpacks its carry at once into names
    (``t, k = carry``): the unpacking statement and the indices of the parts that may carry a derivative,
    a fixed point over the body: those whose initial value does (``init_active``, one flag per part), and
    those whose new value (in the tuple ``carry_out``) reads them or the body's other ``inputs``. The others
    (a counter ``k += 1``) never do: a derivative rule's partial in them may be infinite (``k ** 0.5`` at
    ``k = 0``). None where the body does not unpack its carry so or every part may carry one.
    """
    if not (
        isinstance(carry_out, cst.Tuple) and len(carry_out.elements) == len(init_active)
    ):
        return None
    unpack = next(
        (
            s
            for s in stmts
            if isinstance(s, ir.Assign)
            and isinstance(s.value, cst.Name)
            and s.value.value == carry_param
        ),
        None,
    )
    if not (
        unpack is not None
        and isinstance(unpack.target, cst.Tuple)
        and len(unpack.target.elements) == len(init_active)
        and all(isinstance(el.value, cst.Name) for el in unpack.target.elements)
    ):
        return None
    parts = [el.value.value for el in unpack.target.elements]
    rest = [s for s in stmts if s is not unpack]
    active = {i for i, a in enumerate(init_active) if a}
    while True:  # (the carry itself read elsewhere, a residual: varied with any part)
        sources = [parts[i] for i in active] + list(inputs)
        changed = varied(
            rest, sources + ([carry_param] if active else []), helpers, flows
        )
        grown = active | {
            i for i, el in enumerate(carry_out.elements) if names_in(el.value) & changed
        }
        if grown == active:
            break
        active = grown
    return None if len(active) == len(parts) else (unpack, active)


# ops that also take a Python list of arrays (``np.stack(hs)``): what they are passed is no evidence of an array
SEQUENCE_TAKING = frozenset(
    {
        "stack",
        "concatenate",
        "hstack",
        "vstack",
        "dstack",
        "column_stack",
        "row_stack",
        "block",
        "array",
        "asarray",
        "linalg.multi_dot",
    }
)


def array_evidence(body, helpers) -> set[str]:
    """Variables known to be float arrays: results of differentiable array ops, names passed to them, names
    indexed by tuples. (Comparisons and other ops without derivatives also take ints and flags, whose zero
    cotangents must still be floats: those get ``rt.tree_zeros_like``.)"""
    known = set()
    for stmt in body:
        if not isinstance(stmt, ir.Assign):
            continue
        e = eqn_of(stmt.value, helpers)
        op = OPS.get(e.name) if e.kind == "op" else None
        # runtime ops also take containers, except library functions of arrays (``rt.nn.relu``)
        if e.kind == "runtime" and f"rt.{e.name}" in ARRAY_FUNCTIONS:
            op = op_named(f"rt.{e.name}")
        if op is not None and op.family != "nondiff":
            if e.name not in LIST_OUTPUTS:
                known.update(ir.target_names(stmt.target))
            if e.name not in SEQUENCE_TAKING:
                known.update(
                    a.value
                    for a in (*e.args, *(v for _, v in e.kwargs))
                    if isinstance(a, cst.Name)
                )
        # x[i, j] indexes an array
        elif e.kind == "getitem" and len(stmt.value.slice) > 1:
            known.add(e.args[0].value)
    return known


RULE_HINT = "see `python -m s2s.rules` for the ops s2s differentiates; keep this op off the differentiated path"
# ops whose values are complex: s2s differentiates real arrays (``_check_real``)
COMPLEX_HINT = (
    "s2s differentiates real arrays, and `{op}` gives complex values: write the transform with real "
    "matrices (`np.cos(np.outer(k, n) * 2 * np.pi / N) @ x` and its `sin` twin for `np.fft.rfft`), or keep "
    "it off the differentiated path"
)


def rule_hint(name: str) -> str:
    """The hint for an op without a rule: a complex-valued transform's own, else the op table's."""
    return COMPLEX_HINT.format(op=name) if name.startswith("fft.") else RULE_HINT


COMPLEX_DTYPES = frozenset(
    {"xp.complex64", "xp.complex128", "xp.complex_", "xp.csingle", "xp.cdouble"}
)


def check_closed_world(
    body, active, helpers, control=frozenset(), wrt=(), outputs=(), flows=None
) -> None:
    """Raise at the first active statement (in source order) that s2s cannot differentiate.

    Each active statement must be an op with a rule (a ``nondiff`` one included),
    a user function (``helpers``), a runtime helper with a rule, or a control
    call whose mode has a rule (``control``: ``cond``, ``scan``, ``while_loop``
    and what reverse mode makes of them). Complex numbers (``1j``, complex
    dtypes) on the differentiated path are refused: s2s's rules are written
    for real numbers. So they are on a path from ``wrt`` to ``outputs`` through a
    ``nondiff`` op, whose zero derivative holds for real values only
    (``np.sign(z)``). (``np.angle`` and ``np.imag`` have rules, zero for real
    values, so a complex value they are given is on the differentiated path.)
    """
    _check_real_through_nondiff(body, active, helpers, wrt, outputs, flows)
    _check_roles(body, helpers, wrt, flows)
    complex_names = _complex_constants(body, active)
    for stmt in body:
        if not isinstance(stmt, ir.Assign) or not active.intersection(
            ir.target_names(stmt.target)
        ):
            continue
        _check_real(stmt, complex_names)
        e = eqn_of(stmt.value, helpers)
        _check_bitwise(stmt, e)
        if e.kind == "runtime" and e.name in control:
            continue
        if e.kind == "runtime" and isinstance(stmt.target, cst.Name):
            op = op_named("rt." + e.name)
            missing = op is None or op.rule is None
        elif isinstance(stmt.target, cst.Name):
            missing = e.kind == "call" or (
                e.kind == "op" and (e.name not in OPS or OPS[e.name].rule is None)
            )
        else:
            missing = False
        if missing:
            what = e.name if e.kind != "runtime" else f"rt.{e.name}"
            op = op_named(what if e.kind != "op" else e.name)
            why = f": {op.reason}" if op is not None and op.reason else ""
            raise MissingRule(
                f"no derivative rule for {e.label()}{why}",
                stmt.origin,
                rule_hint(e.name),
            )


def _is_complex(node) -> bool:
    return isinstance(node, cst.Imaginary) or (
        isinstance(node, cst.Attribute) and dotted(node) in COMPLEX_DTYPES
    )


def _check_real(stmt, complex_names=None) -> None:
    """A complex number (``1j``, a complex dtype, a name ``_complex_constants`` holds) in ``stmt``: a
    located error."""
    made = [n for n in names_in(stmt.value) if n in (complex_names or {})]
    if made or any(_is_complex(node) for node in iter_nodes(stmt.value)):
        where = complex_names[made[0]] if made else None
        raise S2SError(
            "a complex number on the differentiated path: s2s differentiates real-valued code"
            + (
                f" (`{made[0]}` holds a complex value, made at {where.short})"
                if where is not None
                else ""
            ),
            stmt.origin,
            "keep the real and imaginary parts as two real arrays (`np.cos(t)` and `np.sin(t)` for "
            "`np.exp(1j * t)`; a DFT as its `cos` and `sin` matrices)",
        )


# ops of complex values whose results are real: a complex constant read through them is not complex
_REAL_RESULTS = frozenset(
    {
        "abs",
        "absolute",
        "real",
        "imag",
        "angle",
        "isreal",
        "iscomplex",
        "isnan",
        "isinf",
    }
    | {"isfinite", "equal", "not_equal", "shape", "ndim", "size", "len"}
)


def _complex_constants(body, active) -> dict:
    """The names off the differentiated path that hold complex values made in the function (``M =
    np.exp(-2j * np.pi * k * n / N)``, and what is computed from them), each with the origin of the
    statement that made it complex: an op of one with a differentiated value would be differentiated
    with rules written for real numbers."""
    found: dict = {}
    for stmt in body:
        if not isinstance(stmt, ir.Assign):
            continue
        targets = ir.target_names(stmt.target)
        if active.intersection(targets):
            continue
        read = next((found[n] for n in names_in(stmt.value) if n in found), None)
        if read is None and any(_is_complex(node) for node in iter_nodes(stmt.value)):
            read = stmt.origin
        if read is None or eqn_of(stmt.value, {}).name in _REAL_RESULTS:
            continue
        found.update(dict.fromkeys(targets, read))
    return found


# NumPy's bitwise ops (``&``, ``|``, ``^``, ``~``, shifts: ``rules/nondiff.BITWISE``) take integers and
# booleans, which carry no derivative, so an operand that carries one is something else (a dict merged by
# ``|``); they pass dependence on, so ``check_closed_world`` finds them


def _check_bitwise(stmt, e) -> None:
    """A bitwise op of a value that carries a derivative (``p | q``): a located error, not a silent zero."""
    if e.kind == "op" and e.name in BITWISE:
        raise S2SError(
            f"`{e.name}` (`|`, `&`, `^`, `~` or a shift) of a value that carries a derivative: "
            "NumPy's bitwise ops take integers and booleans, which carry none, and s2s cannot "
            "tell what this operand is (a dict merged with `|`?)",
            stmt.origin,
            "merge dicts with `{**p, **q}` (s2s reads `p | {...}` with a dict display as that "
            "merge too); for an integer array computed from the inputs, wrap it in "
            "`jax.lax.stop_gradient(...)`",
        )


# parameters that take integers (an axis, a shape): a value that carries a derivative there is
# something s2s misread (``xp.sum(x ** 2)`` of a local ``xp`` it took for an array), never a zero
_INTEGER_ROLES = ("axis", "shape")


def _check_roles(body, helpers, wrt, flows) -> None:
    """An op's axis or shape argument that carries a derivative from ``wrt``: a located error."""
    if not wrt:
        return
    # values arithmetic made (``_power = x ** 2``): surely numbers (a name a tuple or a zip unpacks may
    # hold an integer beside them); the dependence on ``wrt`` is computed only where one is an axis
    computed = {
        stmt.target.value
        for stmt in body
        if isinstance(stmt, ir.Assign)
        and isinstance(stmt.target, cst.Name)
        and isinstance(stmt.value, (cst.BinaryOperation, cst.UnaryOperation))
    } - _rebound(body)
    suspects = [
        (stmt, e, role, param, diff_names(atom) & computed)
        for stmt, e, role, param, atom in _integer_arguments(body, helpers)
        if diff_names(atom) & computed
    ]
    if not suspects:
        return
    varied = depends_on(body, wrt, helpers, lambda e, defs: eqn_inputs(e, flows, defs))
    for stmt, e, role, param, names in suspects:
        if names & varied:
            raise S2SError(
                f"{e.label()} is given a value that carries a derivative as its "
                f"`{param}` ({role}), which takes integers: s2s reads "
                "this call otherwise than you meant (a local name bound to a module, `xp = jnp`, "
                "read as an array?)",
                stmt.origin,
                "call the array module by its own name (`jnp.sum(...)`), or pass integers "
                f"as `{param}`",
            )


def _integer_arguments(body, helpers):
    """``(stmt, eqn, role, parameter, argument)`` for each argument an op takes as an axis or a shape."""
    for stmt in body:
        if not isinstance(stmt, ir.Assign):
            continue
        e = eqn_of(stmt.value, helpers)
        if e.kind not in ("op", "runtime"):
            continue
        op = op_named(("rt." if e.kind == "runtime" else "") + e.name)
        if op is None or not any(r in _INTEGER_ROLES for r in op.roles.values()):
            continue
        try:
            bindings = bind(op, e)
        except S2SError:
            continue
        for param, atom in bindings.items():
            if op.roles.get(param) in _INTEGER_ROLES:
                yield stmt, e, op.roles[param], param, atom


def _rebound(body) -> set[str]:
    """Names ``body`` assigns more than once."""
    seen, again = set(), set()
    for stmt in body:
        for name in ir.target_names(stmt.target) if isinstance(stmt, ir.Assign) else ():
            (again if name in seen else seen).add(name)
    return again


def _check_real_through_nondiff(body, active, helpers, wrt, outputs, flows) -> None:
    """A complex number (``1j``, a complex dtype) in a statement on a path from ``wrt`` to ``outputs``
    through ``nondiff`` ops: a located error."""
    suspects = [
        stmt
        for stmt in body
        if isinstance(stmt, ir.Assign)
        and not active.intersection(ir.target_names(stmt.target))
        and any(_is_complex(node) for node in iter_nodes(stmt.value))
    ]
    if not suspects or not wrt or not outputs:
        return

    def edges(e, defs):
        return eqn_inputs(e, flows, defs, through_nondiff=True)

    reaching = depends_on(body, wrt, helpers, edges) & needed_by(
        body, outputs, helpers, edges
    )
    for stmt in suspects:
        if reaching.intersection(ir.target_names(stmt.target)):
            _check_real(stmt)
