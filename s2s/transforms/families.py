"""Each family's derivations, in one place: how a family's rule becomes forward-mode and reverse-mode code.

A derivation gets the transform (``Forward`` or ``Backward``), the op, the
call's equation, its parameters bound to atoms, and the name of the call's
result. A forward derivation returns the result's tangent; a reverse one
passes the result's cotangent on to the arguments (``contribute``).

- ``elementwise``: the rule gives partials. Forward: the sum of each active
  operand's tangent times its partial, broadcast to the result where no
  operand is as large. Reverse: ``g * partial``, unbroadcast to the operand.
- ``linear``: the rule is the transpose. Forward: the op on the tangents.
  Reverse: the transpose applied to ``g``.
- ``multilinear``: the rule is the transpose per operand. Forward: the sum of
  the op with one operand at a time replaced by its tangent. Reverse: as linear.
- ``vjp``: the rule gives each operand's cotangent (reverse mode only).
- ``jvp``: an explicit forward rule, one tangent term per active operand.
"""

from __future__ import annotations

import inspect

import libcst as cst

from ..cstutil import call, names_in, tuple_of
from ..errors import MissingRule
from ..passes.normal_form import is_static
from ..rules.registry import tangent_name
from ..templates import instantiate, rule_template
from .simplify import fold


def _sum(terms, leafwise=False):
    """``a + b + ...``; with ``leafwise``, ``rt.tree_add`` (runtime helpers' values may be lists of arrays)."""
    value = terms[0]
    for term in terms[1:]:
        value = (
            call("rt.tree_add", value, term)
            if leafwise
            else cst.BinaryOperation(value, cst.Add(), term)
        )
    return value


def _leading(op, template) -> list[str]:
    """The op's leading parameters whose rule entry is not ``None`` (derivatives flow through them)."""
    return [p for p, entry in zip(op.params, template.entries) if entry is not None]


def rebuild(op, e, replaced: dict) -> cst.BaseExpression:
    """The op's call (or operator) again, with the arguments of the parameters in ``replaced`` swapped.

    A ``*args`` parameter is replaced by a tuple of atoms, one per argument.
    """
    params = op.signature.parameters
    positional = [
        p for p in op.params if params[p].kind is not inspect.Parameter.KEYWORD_ONLY
    ]
    args = []
    for i, a in enumerate(e.args):
        p = positional[min(i, len(positional) - 1)]
        if params[p].kind is inspect.Parameter.VAR_POSITIONAL:
            args.extend(
                [el.value for el in replaced[p].elements]
                if p in replaced
                else e.args[i:]
            )
            break
        args.append(replaced.get(p, a))
    node = e.node
    if isinstance(node, cst.BinaryOperation):
        return node.with_changes(left=args[0], right=args[1])
    if isinstance(node, cst.UnaryOperation):
        return node.with_changes(expression=args[0])
    keywords = [cst.Arg(replaced.get(k, v), keyword=cst.Name(k)) for k, v in e.kwargs]
    return node.with_changes(args=[cst.Arg(a) for a in args] + keywords)


class Family:
    """A family's derivations; a mode the family does not derive is a located error."""

    name = ""

    def forward(self, fwd, op, e, bindings, target):
        raise MissingRule(f"no forward-mode rule for `{e.name}`", fwd.origin)

    def reverse(self, back, op, e, bindings, target):
        """The cotangent of each differentiated operand, from the rule's entries applied to ``g``."""
        template = rule_template(op.name, "reverse")
        g = back.take(target)
        wanted = [  # a None entry declares a zero derivative (a shape template, a condition)
            i
            for i, entry in enumerate(template.entries)
            if entry is not None and back.is_active(bindings[op.params[i]])
        ]
        bindings = back.emit_locals(
            template, {**bindings, "ans": cst.Name(target), "g": g}
        )
        for i in wanted:
            value = instantiate(template.entries[i], bindings)
            arg = bindings[op.params[i]]
            back.contribute(arg, self.cotangent(back, op, template, bindings, i, value))

    def cotangent(self, back, op, template, bindings, i, entry):
        """Operand ``i``'s cotangent from its rule entry (the entry itself: a transpose applied to ``g``)."""
        return entry


class Elementwise(Family):
    name = "elementwise"

    def forward(self, fwd, op, e, bindings, target):
        template = rule_template(op.name, "forward")
        bindings = fwd.emit_locals(template, {**bindings, "ans": cst.Name(target)})
        terms = []
        for p in _leading(op, template):
            if fwd.is_active(bindings[p]):
                partial = instantiate(template.entries[op.params.index(p)], bindings)
                tangent = fwd.tangent(bindings[p])
                terms.append(
                    fold(cst.BinaryOperation(tangent, cst.Multiply(), partial))
                )
        value = _sum(terms)
        # a tangent that reads no operand as large as the result (``x_dot`` of ``x + c``) is broadcast to it
        read = names_in(value)
        covered = {n for n in fwd.tan if fwd.tan[n] in read} | read
        others = [a for a in (*e.args, *(v for _, v in e.kwargs)) if not is_static(a)]
        if any(not names_in(a) <= covered for a in others):
            value = call("rt.broadcast_like", fold(value), cst.Name(target))
        return value

    def cotangent(self, back, op, template, bindings, i, entry):
        """``g * partial``, unbroadcast where another operand may broadcast this one."""
        g, arg = bindings["g"], bindings[op.params[i]]
        value = cst.BinaryOperation(g, cst.Multiply(), entry)
        others = [
            bindings[p]
            for j, p in enumerate(op.params[: len(template.entries)])
            if j != i
        ]
        # an int may repeat a Python list (``ws * 2``: an error there)
        repeats = op.name == "multiply" and any(
            isinstance(o, cst.Integer) for o in others
        )
        if repeats and isinstance(arg, (cst.List, cst.Tuple)):
            raise MissingRule(
                "`*` with an int repeats a Python list on the differentiated path, and s2s differentiates "
                "arithmetic on arrays", back.origin, "write the list out (`[a, b, a, b]`), or use np.tile",
            )  # fmt: skip
        if repeats or any(not is_static(o) and not o.deep_equals(arg) for o in others):
            value = call("rt.unbroadcast", fold(value), arg)
        return value


class Linear(Family):
    name = "linear"

    def forward(self, fwd, op, e, bindings, target):
        template = rule_template(op.name, "forward")
        replaced = {p: fwd.tangent(bindings[p]) for p in _leading(op, template)}
        return rebuild(op, e, replaced)


class Multilinear(Family):
    name = "multilinear"

    def forward(self, fwd, op, e, bindings, target):
        template = rule_template(op.name, "forward")
        terms = []
        for p in _leading(op, template):
            if op.signature.parameters[p].kind is inspect.Parameter.VAR_POSITIONAL:
                elements = [el.value for el in bindings[p].elements]
                for i, el in enumerate(elements):
                    if fwd.is_active(el):
                        one = [
                            fwd.tangent(x) if j == i else x
                            for j, x in enumerate(elements)
                        ]
                        terms.append(rebuild(op, e, {p: tuple_of(*one)}))
            elif fwd.is_active(bindings[p]):
                terms.append(rebuild(op, e, {p: fwd.tangent(bindings[p])}))
        return _sum(terms, leafwise=e.kind == "runtime")


class Vjp(Family):
    name = "vjp"


class Jvp(Family):
    name = "jvp"

    def forward(self, fwd, op, e, bindings, target):
        template = rule_template(op.name, "forward")
        active = [p for p in _leading(op, template) if fwd.is_active(bindings[p])]
        tangents = {tangent_name(p): fwd.tangent(bindings[p]) for p in active}
        bindings = fwd.emit_locals(
            template, {**bindings, **tangents, "ans": cst.Name(target)}
        )
        return _sum(
            [
                instantiate(template.entries[op.params.index(p)], bindings)
                for p in active
            ],
            leafwise=e.kind == "runtime",
        )

    def reverse(self, back, op, e, bindings, target):
        raise MissingRule(f"no reverse-mode rule for `{e.name}`", back.origin)


FAMILIES = {
    family.name: family
    for family in (Elementwise(), Linear(), Multilinear(), Vjp(), Jvp())
}
