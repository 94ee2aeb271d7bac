"""Rule functions as code templates: parsed once, parameters renamed into the program's variables.

``rule_template(op, mode)`` gives the assignments of the op's rule for that
mode and one expression per leading parameter of the op (``None`` where no
derivative flows); without a mode, the family's own definition. A returned
tuple, parenthesized or not, always means one entry per parameter.
``instantiate`` substitutes names.
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from dataclasses import dataclass

import libcst as cst

from .cstutil import literal, names_in, operators_on_one_line, substitute
from .errors import S2SError
from .rules.registry import op_named


@dataclass(frozen=True)
class RuleTemplate:
    """A parsed rule: assignments to run first (``statements``), then one expression per leading parameter."""

    statements: tuple[tuple[cst.BaseExpression, cst.BaseExpression], ...]
    entries: tuple[cst.BaseExpression | None, ...]

    @property
    def locals(self) -> tuple[str, ...]:
        return tuple(n for target, _ in self.statements for n in names_in(target))


@functools.cache
def rule_template(op_name: str, mode: str | None = None) -> RuleTemplate:
    """The op's rule for ``mode`` (its family's definition if None), parsed: assignments, then one entry per
    leading parameter."""
    op = op_named(op_name)
    rule = op.rule if mode is None else op.rules[mode].template
    # (an entry black wrapped inside parentheses may be emitted where none hold it)
    module = operators_on_one_line(
        cst.parse_module(textwrap.dedent(inspect.getsource(rule)))
    )
    fndef = next(n for n in module.body if isinstance(n, cst.FunctionDef))
    statements, value = [], None
    for line in fndef.body.body:
        small = (
            line.body[0]
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
            else None
        )
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and value is None:
            statements.append((small.targets[0].target, small.value))
        elif (
            isinstance(small, cst.Return) and small.value is not None and value is None
        ):
            value = small.value
        elif not (
            isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)
        ):
            raise ValueError(
                f"rule for {op_name!r}: only assignments then one `return` are allowed"
            )
    if value is None:
        raise ValueError(f"rule for {op_name!r} has no `return`")
    entries = (
        [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
    )
    entries = tuple(
        None if isinstance(e, cst.Name) and e.value == "None" else e for e in entries
    )
    return RuleTemplate(tuple(statements), entries)


def instantiate(entry: cst.BaseExpression, bindings: dict) -> cst.BaseExpression:
    """The entry with each parameter name replaced by its bound expression."""
    return substitute(entry, bindings)


def bind(op, e, origin=None) -> dict:
    """The op's parameters bound to the call's atoms (defaults as literals, ``*args`` as a tuple)."""
    try:
        bound = op.signature.bind(*e.args, **dict(e.kwargs))
    except TypeError as err:
        raise S2SError(
            f"`{e.name}` called with arguments s2s cannot bind: {err}", origin
        ) from None
    bindings = {}
    for p in op.params:
        if p not in bound.arguments:
            default = op.defaults.get(p)
            if _is_literal(
                default
            ):  # NumPy's own sentinels (``np._NoValue``) are left unbound
                bindings[p] = literal(default)
        elif op.signature.parameters[p].kind is inspect.Parameter.VAR_POSITIONAL:
            bindings[p] = cst.Tuple([cst.Element(a) for a in bound.arguments[p]])
        else:
            bindings[p] = bound.arguments[p]
    return bindings


def _is_literal(value) -> bool:
    if isinstance(value, tuple):
        return all(_is_literal(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def differentiable_arguments(op, e) -> list | None:
    """The call's arguments that derivatives flow through: those of leading parameters whose rule entry
    is not ``None`` (shape templates such as ``unbroadcast``'s ``like`` are not); None if the call does not bind.
    """
    try:
        bindings = bind(op, e)
    except S2SError:
        return None
    atoms = []
    for p, entry in zip(op.params, rule_template(op.name).entries):
        if entry is None:
            continue
        value = bindings[p]
        if op.signature.parameters[p].kind is inspect.Parameter.VAR_POSITIONAL:
            atoms.extend(el.value for el in value.elements)
        else:
            atoms.append(value)
    return atoms
