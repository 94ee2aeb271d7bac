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

from ..cstutil import call, dotted, int_literal, literal, names_in, rewrite, tuple_of
from ..errors import MissingRule
from ..passes.normal_form import is_static
from ..rules.registry import tangent_name
from ..templates import instantiate, rule_template
from .batch_leaves import all_batched, any_batched, leaf_axes
from .foreign import Foreign
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
        raise MissingRule(f"no forward-mode rule for {e.label()}", fwd.origin)

    def batch(self, b, op, e, bindings, target):
        raise MissingRule(f"no batching rule for {e.label()}", b.origin)

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


def _times(g, partial):
    """``g * partial``; where the partial is ``rt.selects(mask)``, ``xp.where(mask, g, 0.0)``."""
    if not (isinstance(partial, cst.Call) and dotted(partial.func) == "rt.selects"):
        return fold(cst.BinaryOperation(g, cst.Multiply(), partial))
    mask, zero = partial.args[0].value, cst.Float("0.0")
    if isinstance(mask, cst.Call) and dotted(mask.func) == "xp.logical_not":
        return call("xp.where", mask.args[0].value, zero, g)
    return call("xp.where", mask, g, zero)


class Elementwise(Family):
    name = "elementwise"

    def forward(self, fwd, op, e, bindings, target):
        template = rule_template(op.name, "forward")
        bindings = fwd.emit_locals(template, {**bindings, "ans": cst.Name(target)})
        terms = []
        for p in _leading(op, template):
            if fwd.is_active(bindings[p]):
                partial = instantiate(template.entries[op.params.index(p)], bindings)
                terms.append(_times(fwd.tangent(bindings[p]), partial))
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
        value = _times(g, entry)
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

    def batch(self, b, op, e, bindings, target):
        return batch_elementwise(b, e)


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
        raise MissingRule(f"no reverse-mode rule for {e.label()}", back.origin)


# --- batching ----------------------------------------------------------------------------
# A batch derivation gets the ``Batch`` transform, the op, the call, its parameters bound to
# atoms and the result's name, and returns ``(value, batched)``: the batched call and whether
# its result has a batch axis. It runs only when some operand is batched.


def batch_operands(e) -> list:
    """The call's arguments that are values (not literals, shapes or other static expressions)."""
    return [a for a in (*e.args, *(v for _, v in e.kwargs)) if not is_static(a)]


def _batch_rank(b, atoms) -> cst.BaseExpression:
    """The largest rank of the examples of ``atoms`` (an unbatched atom's own rank)."""
    ranks = [
        call("rt.example_ndim", a) if b.is_batched(a) else call("xp.ndim", a)
        for a in atoms
    ]
    return ranks[0] if len(ranks) == 1 else call("rt.largest_rank", *ranks)


class _Replace(cst.CSTTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def on_leave(self, original, updated):
        found = self.mapping.get(id(original))
        return found[1] if found is not None else updated


def _replaced(node, mapping: dict):
    """``node`` with each atom ``old`` replaced by ``new`` (``mapping``: id(old) -> (old, new)), in one pass."""
    return rewrite(node, _Replace(mapping)) if mapping else node


def batch_elementwise(b, e):
    """Operands as they are, each batched one lifted to the largest example rank of the others."""
    operands = batch_operands(e)
    if len(operands) < 2:
        return e.node, True
    lifted = {}
    for i, a in enumerate(operands):
        others = [o for j, o in enumerate(operands) if j != i and not o.deep_equals(a)]
        if b.is_batched(a) and others:  # (``x * x``: one atom twice needs nothing)
            lifted[id(a)] = (a, call("rt.lift", a, _batch_rank(b, others)))
    return _replaced(e.node, lifted), True


def _batch_axis_arg(b, atom, data, flattens: bool, squeezes: bool = False):
    """A per-example axis argument as an axis of the batched ``data``; None if ``data`` must be flattened."""
    if atom is None or (isinstance(atom, cst.Name) and atom.value == "None"):
        return None if flattens else call("rt.example_axes", *data)
    value = int_literal(atom)
    if value is not None:
        return cst.Integer(str(value + 1)) if value >= 0 else atom
    if isinstance(atom, cst.Tuple) and all(
        int_literal(el.value) is not None for el in atom.elements
    ):
        return tuple_of(
            *(_batch_axis_arg(b, el.value, data, False) for el in atom.elements)
        )
    # (``axis=None`` given in a variable: every axis of the largest example, as the literal reads)
    if flattens:
        return call("rt.batch_axis", atom, *data, flattens=cst.Name("True"))
    if squeezes:
        return call("rt.batch_axis", atom, *data, squeezes=cst.Name("True"))
    return call("rt.batch_axis", atom, *data)


# ops whose ``axis=None`` means "the flattened array" rather than "every axis"
FLATTEN_WITHOUT_AXIS = frozenset(
    {
        "cumsum",
        "cumprod",
        "argmax",
        "argmin",
        "argsort",
        "sort",
        "roll",
        "repeat",
        "take",
        "take_along_axis",
        "concatenate",
    }
)


def batch_broadcast(b, atom):
    """An unbatched data atom given the batch axis (elements of a list literal one by one)."""
    if isinstance(atom, (cst.List, cst.Tuple)):
        return atom.with_changes(
            elements=[
                el.with_changes(value=batch_broadcast(b, el.value))
                for el in atom.elements
            ]
        )
    if isinstance(atom, cst.Name) and atom.value in b.tapes:
        raise MissingRule(
            "no batching rule for the gradient of a `while` loop whose checkpoints another loop or "
            "branch keeps (a `while` inside a `for`, differentiated, then vmapped)",
            b.origin,
            "vmap the function and differentiate the batched one (`s2s.grad` of `s2s.vmap`), or "
            "write the inner loop as a `for` over a fixed range",
        )
    if isinstance(atom, cst.Name) and atom.value in b.step_major:
        # a loop input kept step-major (``rt.loop_first``) leaving the loop: batch-major again
        return call("rt.sequence_batch_first", atom)
    flags = b.displayed.get(atom.value) if isinstance(atom, cst.Name) else None
    if flags is not None and any_batched(flags) and not all_batched(flags):
        # a display (residuals) batched item by item: its unbatched items broadcast too
        return call(
            "rt.batch_leaves", atom, literal(leaf_axes(flags)), cst.Name(b.size)
        )
    if b.is_batched(atom) or is_static(atom):
        return atom
    return call("rt.broadcast_batch", atom, cst.Name(b.size))


class Axes(Family):
    """Derived from the parameter roles: axes shift past the batch axis, shapes get the batch size."""

    name = "axes"

    def batch(self, b, op, e, bindings, target):
        args = bound_arguments(op, e)
        data = [p for p in op.params if op.roles[p] in ("data", "index") and p in args]
        first = args[data[0]]
        along = op.name == "take_along_axis"  # its indices are per example too
        if op.name == "take" and b.is_batched(args["indices"]):
            # ``jnp.take(E, ids, axis=0)`` with ids per example: taken per example
            flags = (b.is_batched(args["a"]), True)
            given = [args.get(p, literal(op.defaults.get(p))) for p in ("axis", "mode")]
            return (
                call(
                    "rt.batching.take",
                    args["a"],
                    args["indices"],
                    *given,
                    literal(flags),
                ),
                True,
            )
        if op.name == "roll" and (
            b.is_batched(args["shift"]) or names_in(args["shift"]) & b.batched
        ):  # (a rule's shift may be a call of a shift per example: ``rt.opposite(k)``)
            return _batched_roll(b, args), True
        varying = [
            p
            for p in op.params
            if op.roles[p] == "static" and p in args and b.is_batched(args[p])
        ]
        if varying:
            raise MissingRule(
                f"no batching rule for `{e.name}` with `{varying[0]}` that differs per example: it sets "
                "how the op works, one value for every example",
                b.origin,
                f"pass `{varying[0]}` the same for every example (a value the mapped axis does not reach)",
            )
        replaced = {}
        for p in data:
            if op.roles[p] == "data" or along:
                replaced[p] = batch_broadcast(b, args[p])
            elif b.is_batched(args[p]):
                raise MissingRule(
                    f"no batching rule for `{e.name}` with indices that differ per example",
                    b.origin,
                    "index with `x[i]` or use take_along_axis",
                )
        flattens = op.name in FLATTEN_WITHOUT_AXIS
        for p in op.params_with_role("axis"):
            if op.name == "transpose":
                return (
                    call("rt.example_transpose", first, args.get(p, cst.Name("None"))),
                    True,
                )
            if op.name == "squeeze" and p not in args:
                replaced[p] = call("rt.unit_axes", first)
                continue
            given = args.get(p, literal(op.defaults.get(p)))
            # the batched operands, whose examples the axes name; then the unbatched data operands as
            # broadcast above (``reduced_like(g, w)``: ``w``'s rank is the one ``axis=None`` names)
            arrays = [a for a in batch_operands(e) if b.is_batched(a)]
            arrays += [
                replaced[q]
                for q in data
                if q in replaced
                and not isinstance(args[q], (cst.List, cst.Tuple))
                and not is_static(args[q])
                and not b.is_batched(args[q])
            ]
            axis = _batch_axis_arg(
                b, given, arrays, flattens, squeezes=op.name == "squeeze"
            )
            if axis is None:  # each example flattened, then the op along its one axis
                for q in data:
                    if q in replaced:
                        replaced[q] = _flattened(replaced[q])
                axis = cst.Integer("1")
            replaced[p] = axis
        for p in op.params_with_role("shape"):
            shape = args[p]
            replaced[p] = call("rt.batch_shape", shape, cst.Name(b.size))
            if op.name == "broadcast_to":
                replaced[data[0]] = call(
                    "rt.lift", replaced[data[0]], call("rt.shape_rank", shape)
                )
        _check_order(b, op, e, args)
        value = rebuild_all(op, e, args, replaced)
        if op.name == "roll" and "axis" not in args:  # rolled flat, back in its shape
            value = call("xp.reshape", value, call("xp.shape", first))
        return value, True


def _batched_roll(b, args):
    """``np.roll(a, shift, axis)`` with a shift per example: each example taken at its own rolled positions
    (``(arange(n) - shift) % n`` along ``axis``: ``rt.batching.take``, whose rules it has).
    """
    a, axis, batched = args["a"], args.get("axis"), b.is_batched(args["a"])
    back = None
    if axis is None or (isinstance(axis, cst.Name) and axis.value == "None"):
        # rolled flat (each example's elements in order), then in the shape each example has
        back = (
            call("xp.shape", a)
            if batched
            else call("rt.batch_shape", call("xp.shape", a), cst.Name(b.size))
        )
        a, axis = (_flattened(a) if batched else call("xp.ravel", a)), cst.Integer("0")
    length = call("rt.batching.take_length", a, axis, literal(batched))
    shifts = call("xp.reshape", args["shift"], literal((-1, 1)))
    positions = call(
        "xp.mod",
        cst.BinaryOperation(call("xp.arange", length), cst.Subtract(), shifts),
        length,
    )
    flags = literal((batched, True))
    value = call("rt.batching.take", a, positions, axis, cst.Name("None"), flags)
    return value if back is None else call("xp.reshape", value, back)


def _flattened(atom):
    """Each example of ``atom`` flattened (of each array of a list literal)."""
    if isinstance(atom, (cst.List, cst.Tuple)):
        return atom.with_changes(
            elements=[
                el.with_changes(value=_flattened(el.value)) for el in atom.elements
            ]
        )
    return call("rt.flat_examples", atom)


def _check_order(b, op, e, args):
    """A memory layout other than C order (``reshape(..., order="F")``) has no derived rule; an ``order``
    that is no layout (``argsort``'s: a structured array's fields, None when not given) is checked as such.
    """
    default = op.defaults.get("order", "C")
    if default in _LAYOUTS:
        if default != "C" or _order(args) not in (None, "C"):
            raise MissingRule(
                f"no batching rule for `{e.name}` with order other than 'C'", b.origin
            )
    elif "order" in args and not (
        isinstance(args["order"], cst.Name) and args["order"].value == "None"
    ):
        raise MissingRule(
            f"no batching rule for `{e.name}` with `order` (fields of a structured array)",
            b.origin,
        )


_LAYOUTS = frozenset({"C", "F", "A", "K"})


def _order(args):
    atom = args.get("order")
    return atom.evaluated_value if isinstance(atom, cst.SimpleString) else None


def bound_arguments(op, e) -> dict:
    """The call's own arguments by parameter (defaults left out; ``*args`` as a tuple of atoms)."""
    bound = op.signature.bind(*e.args, **dict(e.kwargs))
    out = {}
    for p, value in bound.arguments.items():
        kind = op.signature.parameters[p].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            value = tuple_of(*value)
        out[p] = value
    return out


def rebuild_all(op, e, args: dict, replaced: dict) -> cst.Call:
    """``xp.<op>(...)`` with every argument by keyword (positional-only and ``*args`` by position)."""
    params = op.signature.parameters
    positional, keywords = [], []
    for p in op.params:
        if p not in args and p not in replaced:
            continue
        value = replaced.get(p, args.get(p))
        kind = params[p].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(el.value for el in value.elements)
        elif kind is inspect.Parameter.POSITIONAL_ONLY or (
            not keywords and p in args and _passed_by_position(e, p, op)
        ):
            positional.append(value)
        else:
            keywords.append(cst.Arg(value, keyword=cst.Name(p)))
    func = (
        e.node.func
        if isinstance(e.node, cst.Call)
        else cst.parse_expression(f"xp.{op.name}")
    )
    return cst.Call(func, [cst.Arg(a) for a in positional] + keywords)


def _passed_by_position(e, p, op) -> bool:
    positional = [
        q
        for q in op.params
        if op.signature.parameters[q].kind is not inspect.Parameter.KEYWORD_ONLY
    ]
    return p in positional and positional.index(p) < len(e.args)


class Trailing(Family):
    """Ops that act on their operand's last axes and map over the leading ones: applied as they are."""

    name = "trailing"

    def batch(self, b, op, e, bindings, target):
        return e.node, True


class Query(Family):
    """``shape``, ``ndim`` and ``size`` of one example."""

    name = "query"

    def batch(self, b, op, e, bindings, target):
        return call(f"rt.example_{op.name}", e.args[0]), False


class Static(Family):
    """Results that are the same for every example (a dict's keys)."""

    name = "static"

    def batch(self, b, op, e, bindings, target):
        return e.node, False


class Example(Family):
    """A result computed from shapes only (``rt.reduced_count``): the op on the first example."""

    name = "example"

    def batch(self, b, op, e, bindings, target):
        first = {
            id(a): (a, call("rt.first_example", a))
            for a in batch_operands(e)
            if b.is_batched(a)
        }
        return _replaced(e.node, first), False


class Constructor(Family):
    """Arrays made from shapes and constants: the same for every example; a batched argument has no rule,
    but ``rt.range``'s ``indexes`` (whether a loop visits Python lists: batched, they still are).
    """

    name = "constructor"

    def batch(self, b, op, e, bindings, target):
        sizes = [*e.args, *(v for k, v in e.kwargs if k != "indexes")]
        if op.name == "rt.range" and not any(b.is_batched(a) for a in sizes):
            return e.node, False
        return super().batch(b, op, e, bindings, target)


class Sequence(Family):
    """What a loop runs over: each batched array step-major, unbatched ones broadcast first (``zip``)."""

    name = "sequence"

    def batch(self, b, op, e, bindings, target):
        mapping = {}
        for a in (*e.args, *(v for _, v in e.kwargs)):
            display = isinstance(a, (cst.Tuple, cst.List))
            if not display and (
                is_static(a)
                or not isinstance(a, cst.Name)
                or a.value in ("True", "False", "None")
            ):
                continue
            mapping[id(a)] = (a, batched_sequence(b, a))
        flags = [b.is_batched(a) for a in e.args]
        if op.name == "rt.zip" and not e.kwargs and any(flags) and not all(flags):
            b.zipped[target] = list(e.args)
        node = _replaced(e.node, mapping)
        if (
            op.name == "rt.enumerate"
        ):  # its counts get the batch axis too, as every value a step reads
            size = cst.Arg(cst.Name(b.size), keyword=cst.Name("size"))
            steps = cst.parse_expression("rt.enumerate_steps")
            return node.with_changes(func=steps, args=[*node.args, size]), True
        return node, True


def batched_sequence(b, sequence):
    """A sequence a loop runs over, batched: a display's items each with the batch axis (``for z in (x, w)``),
    an array step-major (once: a sequence made of sequences, ``enumerate(zip(xs, ys))``, is already).
    """
    if isinstance(sequence, (cst.Tuple, cst.List)):
        return _items_batched(b, sequence)
    if isinstance(sequence, cst.Name) and sequence.value in b.step_major:
        return sequence  # ``enumerate(zip(xs, ys))``: the zip's sequences are step-major already
    return call("rt.loop_first", batch_broadcast(b, sequence), cst.Name(b.size))


def _items_batched(b, display, ints=False):
    """A tuple or list display each item of which gets the batch axis, a number written in the code too:
    a loop's (``zip((0.5, 1.0), (h, y))``: the weight is a value of each example; ints stay, as they may
    be counts or sizes), or with ``ints`` an array's values (``np.asarray([theta[1], 0.5, 1])``; nested
    displays item by item)."""
    kinds = (cst.Float, cst.Integer) if ints else (cst.Float,)

    def each(node):
        number = node.expression if isinstance(node, cst.UnaryOperation) else node
        # a number, or a constant of the namespace (``np.pi``, ``np.inf``)
        constant = isinstance(number, cst.Attribute) and is_static(number)
        if isinstance(number, kinds) or constant:
            return call("rt.broadcast_batch", node, cst.Name(b.size))
        if ints and isinstance(node, (cst.List, cst.Tuple)):
            return _items_batched(b, node, ints)
        return batch_broadcast(b, node)

    return display.with_changes(
        elements=[el.with_changes(value=each(el.value)) for el in display.elements]
    )


class Container(Family):
    """Python lists and dicts of batched values: unbatched operands broadcast, the call as it is."""

    name = "container"

    def batch(self, b, op, e, bindings, target):
        mapping = {
            # (a display holding batched values: its other items given the axis too)
            id(a): (
                a,
                b._display_batched(a) if b.is_batched(a) else batch_broadcast(b, a),
            )
            for a in batch_operands(e)
            if not b.is_batched(a) or isinstance(a, (cst.List, cst.Tuple, cst.Dict))
        }
        default = bindings.get("default")
        if isinstance(default, (cst.Integer, cst.Float, cst.UnaryOperation)):
            # ``params.get("gain", 1.5)``: what an example gets where its dict lacks the key
            each = call("rt.broadcast_batch", default, cst.Name(b.size))
            mapping[id(default)] = (default, each)
        return _replaced(e.node, mapping), True


class Explicit(Family):
    """An explicit batching rule: its template, with ``batched`` flags per data operand and ``batch_size``."""

    name = "explicit"

    def batch(self, b, op, e, bindings, target):
        template = rule_template(op.name, "batch")
        bindings, flags = operand_flags(b, op, bindings)
        extra = {"batched": literal(flags), "batch_size": cst.Name(b.size)}
        bindings = b.emit_locals(template, {**bindings, **extra})
        return instantiate(template.entries[0], bindings), True


class Twin(Family):
    """The op's batched twin (``rt.batched_vjps.unbroadcast``): its arguments in order, then the flags."""

    name = "twin"

    def batch(self, b, op, e, bindings, target):
        bindings, flags = operand_flags(b, op, bindings)
        missing = [p for p in op.params if p not in bindings]
        if missing:
            raise MissingRule(
                f"no batching rule for `{e.name}` without `{missing[0]}`", b.origin
            )
        twin = op.rules["batch"].template
        return call(twin, *(bindings[p] for p in op.params), literal(flags)), True


def operand_flags(b, op, bindings) -> tuple[dict, tuple]:
    """Which data operands of a call are batched (one flag each; an index tuple's as a tuple), with list
    operands broadcast whole (a list of values is batched as one)."""
    bindings = dict(bindings)
    flags = []
    for p in op.params:
        if op.roles.get(p) not in ("data", "index"):
            continue
        atom = bindings[p]
        if op.signature.parameters[p].kind is inspect.Parameter.VAR_POSITIONAL:
            flags.extend(b.is_batched(el.value) for el in atom.elements)
        elif op.roles[p] == "index" and isinstance(atom, cst.Tuple):
            flags.append(tuple(b.is_batched(el.value) for el in atom.elements))
        elif op.roles[p] == "index" and _is_index_expression(_index_of(b, atom)):
            flags.append(_index_flags(b, _index_of(b, atom)))
        elif isinstance(atom, (cst.List, cst.Tuple)):  # a list of values: all batched
            bindings[p] = _items_batched(b, atom, ints=True)
            flags.append(True)
        elif _partly_batched(b, atom):
            # a tuple batched item by item (a loop's residuals beside its unbatched inputs): the rule
            # reads it batched whole, its other items broadcast
            bindings[p] = batch_broadcast(b, atom)
            flags.append(True)
        else:
            flags.append(b.is_batched(atom))
    return bindings, tuple(flags)


def _partly_batched(b, atom) -> bool:
    flags = b.displayed.get(atom.value) if isinstance(atom, cst.Name) else None
    return isinstance(flags, dict) and any_batched(flags) and not all_batched(flags)


def _index_of(b, atom):
    """``atom``, or the index expression a name holds (``t = xp.s_[np.arange(N), y]``, an in-place
    ``-=``'s index: ``b.indices``)."""
    if isinstance(atom, cst.Name):
        return b.indices.get(atom.value, atom)
    return atom


def _is_index_expression(atom) -> bool:
    return isinstance(atom, cst.Subscript) and dotted(atom.value) == "xp.s_"


def _index_flags(b, atom: cst.Subscript):
    """The batched flags of ``xp.s_[...]``'s components (one bool for a single slice): a slice's bounds
    must be the same for every example."""
    flags = []
    for el in atom.slice:
        part = el.slice
        if isinstance(part, cst.Index):
            flags.append(b.is_batched(part.value))
            continue
        bounds = [x for x in (part.lower, part.upper, part.step) if x is not None]
        if any(b.is_batched(x) for x in bounds):
            raise MissingRule(
                "no batching rule for a slice whose bounds differ per example",
                b.origin,
                "slice with bounds that are the same for every example, or use "
                "`jax.lax.dynamic_slice` (its starts may differ per example)",
            )
        flags.append(False)
    return flags[0] if len(flags) == 1 else tuple(flags)


class Collective(Family):
    """A collective over a named axis (``rt.psum(x, "i")``). Over this vmap's own axis it combines the
    examples (``rt.psum_examples``: the same value for every example, no batch axis); over another
    mapped axis (an outer vmap's) it is the same op, example by example."""

    name = "collective"

    def batch(self, b, op, e, bindings, target):
        names = _axis_names(bindings["axis_name"], op, b)
        kind = op.name.removeprefix("rt.")
        if b.axis_name not in names:
            return e.node, kind != "axis_index" and b.is_batched(bindings["x"])
        rest = tuple(n for n in names if n != b.axis_name)
        if kind == "axis_index":
            if rest:
                raise MissingRule(
                    "no batching rule for `axis_index` over several axes", b.origin
                )
            return call("rt.axis_index_examples", cst.Name(b.size)), True
        x = bindings["x"]
        if b.is_batched(x):
            value = call(f"rt.{kind}_examples", x)
        elif kind == "psum":  # the same value in every example: that many times it
            value = call(
                "rt.psum_examples", call("rt.broadcast_batch", x, cst.Name(b.size))
            )
        else:
            value = x
        if rest:
            value = call(op.name, value, literal(rest[0] if len(rest) == 1 else rest))
        return value, False


def _axis_names(atom, op, b) -> tuple:
    """The axis names a collective's ``axis_name`` argument lists (a string or a tuple of strings)."""
    values = (
        [el.value for el in atom.elements] if isinstance(atom, cst.Tuple) else [atom]
    )
    if not all(isinstance(v, cst.SimpleString) for v in values):
        raise MissingRule(
            f"no batching rule for `{op.name.removeprefix('rt.')}` with an axis name computed at run time",
            b.origin,
            'write the axis name as a string: `s2s.psum(x, axis_name="batch")`',
        )
    return tuple(v.evaluated_value for v in values)


FAMILIES = {
    family.name: family
    for family in (
        Elementwise(),
        Linear(),
        Multilinear(),
        Vjp(),
        Jvp(),
        Axes(),
        Trailing(),
        Query(),
        Static(),
        Constructor(),
        Example(),
        Sequence(),
        Container(),
        Explicit(),
        Twin(),
        Collective(),
        Foreign(),
    )
}
