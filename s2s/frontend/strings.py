"""Strings built from loop indices, as NumPy model code names its parameters (``params["W" + str(l)]``).

Guarantees of ``desugar(source)``:

- an f-string outside ``print``/``logging``/``assert``/``raise`` messages is the
  concatenation it stands for: ``f"W{l}"`` is ``"W" + str(l)``,
  ``f"W{l:02d}"`` is ``"W" + format(l, "02d")``, ``{l!r}`` is ``repr(l)``; so is
  ``"W{}".format(l)`` of a string written out (its fields positional, numbered or named);
  ``str``, ``format`` and ``repr`` of a value are Python's, computed when the
  code is traced (the value must be known then: a loop index, a length, a
  shape);
- a ``for`` loop over ``range(...)`` whose index is turned into a string in
  its body (``str(l)``, ``"W%d" % l``), or made part of a key (a tuple beside a string: ``("weights", i)``),
  iterates ``list(range(...))``: its steps run one by one when the
  code is traced, each with its index as a Python int, since each reads other
  entries of a dict (as JAX's tracing runs a Python loop). Its bounds must be
  known then (``len(params) // 2`` is; a traced value is a located error).
  ``for i, h in enumerate(hs):`` whose index keys a dict the function makes
  (``norms[i] = ...``, a dict comprehension's ``{i: ... for i, h in
  enumerate(hs)}``) is ``for i in list(range(len(hs))): h = hs[i]`` (``hs`` a
  name). ``desugar`` runs again after ``comprehensions``, for their loops.

New nodes keep the positions of the user's code they stand for.
"""

from __future__ import annotations

import builtins
import string

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .output import is_output_statement
from .rewriting import PositionKeeping, place, with_node
from .source import FunctionSource


class _Strings(PositionKeeping):
    def __init__(self, source: FunctionSource):
        super().__init__(source.file.positions)
        env = source.env
        self.builtin = {
            name: env.get(name, getattr(builtins, name)) is getattr(builtins, name)
            for name in ("str", "range", "list", "format", "repr")
        }
        self.changed = False
        self.sides = set()  # ids of the strings written side by side with another
        node = source.node
        # names bound to dicts the function makes (``xs, hs = {}, {}`` too): a loop index that keys them is
        # a Python value
        self.dicts = {
            name
            for n in iter_nodes(node.body)
            if isinstance(n, cst.Assign)
            for t in n.targets
            for name, value in _side_by_side(t.target, n.value)
            if _makes_a_dict(value)
        }

    # output statements format their f-strings themselves (``frontend/output.py``)
    def visit_Expr(self, node):
        return not is_output_statement(node)

    def visit_Assert(self, node):
        return False

    def visit_Raise(self, node):  # (an exception's message: a template, as an assert's)
        return False

    def visit_ConcatenatedString(self, node):
        self.sides.update((id(node.left), id(node.right)))

    def leave_ConcatenatedString(self, original, updated):
        """``f"{a};" " more"`` (literals written side by side): a sum, where an f-string in it is one."""
        if id(original) in self.sides:  # (inside another: converted there)
            return updated
        converted = self._converted(updated)
        if converted is None:
            return updated
        return place(converted, original, self.positions)

    def leave_FormattedString(self, original, updated):
        if id(original) in self.sides:
            return updated  # (a side of literals written side by side: converted there)
        converted = self._converted(updated)
        return (
            updated if converted is None else place(converted, original, self.positions)
        )

    def _converted(self, updated):
        """An f-string (or literals written side by side, one an f-string) as the concatenation of its
        parts (None: left as it is)."""
        if isinstance(updated, cst.ConcatenatedString):
            sides = [self._converted(side) for side in (updated.left, updated.right)]
            if sides == [None, None]:
                return None
            left, right = (n or o for n, o in zip(sides, (updated.left, updated.right)))
            return cst.BinaryOperation(
                left, cst.Add(), right, lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
            )
        if not isinstance(updated, cst.FormattedString):
            return None
        if not self.builtin["str"] or "b" in updated.start.lower():
            return None
        # ``start`` is the prefix and the opening quotes (``f"``, ``rf'''``)
        prefix = "".join(c for c in updated.start.lower() if c.isalpha()).replace(
            "f", ""
        )
        quote = updated.end
        parts = []
        for part in updated.parts:
            if isinstance(part, cst.FormattedStringText):
                text = part.value.replace("{{", "{").replace("}}", "}")
                parts.append(cst.SimpleString(f"{prefix}{quote}{text}{quote}"))
            else:
                field = _field(part, self.builtin)
                if field is None:
                    return None  # a nested field in the spec, ``!a``: the fence says so
                parts.append(field)
        self.changed = True
        if not parts:
            return cst.SimpleString(f"{prefix}{quote}{quote}")
        value = parts[0]
        for part in parts[1:]:
            value = cst.BinaryOperation(value, cst.Add(), part)
        return value

    def leave_Call(self, original, updated):
        """``"got {}, want {:.2f}".format(a, b)`` of a string written out: the concatenation it stands for,
        as an f-string's (``"got " + str(a) + ...``)."""
        func = updated.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "format"
            and isinstance(func.value, cst.SimpleString)
            and "b" not in func.value.prefix.lower()
            and not any(a.star for a in updated.args)
            and self.builtin["str"]
        ):
            return updated
        pieces, _ = format_fields(func.value.evaluated_value, updated)
        if pieces is None:  # (Python's own error where the code runs: as written)
            return updated
        parts = []
        for text, value, spec, conversion in pieces:
            if text:
                parts.append(cst.SimpleString(repr(text)))
            if value is None:
                continue
            braces = cst.FormattedStringExpression(
                value,
                conversion=conversion,
                format_spec=[cst.FormattedStringText(spec)] if spec else None,
            )
            if spec and "{" in spec:
                return updated
            converted = _field(braces, self.builtin)
            if converted is None:
                return updated
            parts.append(converted)
        self.changed = True
        value = parts[0] if parts else cst.SimpleString("''")
        for part in parts[1:]:
            value = cst.BinaryOperation(value, cst.Add(), part)
        return place(
            value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]),
            original,
            self.positions,
        )

    def leave_For(self, original, updated):
        loop = updated.iter
        listed = self._enumerated(updated)
        if listed is not None:
            return listed
        if not (
            isinstance(updated.target, cst.Name)
            and isinstance(loop, cst.Call)
            and isinstance(loop.func, cst.Name)
            and loop.func.value == "range"
            and self.builtin["range"]
            and self.builtin["list"]
            and (
                _formats(updated.body, updated.target.value)
                or _keys(updated.body, updated.target.value, self.dicts)
            )
        ):
            return updated
        self.changed = True
        listed = cst.Call(cst.Name("list"), [cst.Arg(loop)])
        return updated.with_changes(iter=place(listed, loop, self.positions))

    def _enumerated(self, loop: cst.For) -> cst.For | None:
        """``for i in list(range(len(xs))): x = xs[i]`` for ``for i, x in enumerate(xs):`` whose index keys
        a dict (``xs`` a name); None for any other loop."""
        it, target = loop.iter, loop.target
        if not (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Name)
            and it.func.value == "enumerate"
            and self.builtin["range"]
            and self.builtin["list"]
            and len(it.args) == 1
            and isinstance(it.args[0].value, cst.Name)
            and isinstance(target, cst.Tuple)
            and len(target.elements) == 2
            and all(isinstance(e.value, cst.Name) for e in target.elements)
            and isinstance(loop.body, cst.IndentedBlock)
        ):
            return None
        index, item = (e.value for e in target.elements)
        if not _keys(loop.body, index.value, self.dicts):
            return None
        self.changed = True
        seq = it.args[0].value
        length = cst.Call(cst.Name("len"), [cst.Arg(seq)])
        indices = cst.Call(
            cst.Name("list"),
            [cst.Arg(cst.Call(cst.Name("range"), [cst.Arg(length)]))],
        )
        read = cst.SimpleStatementLine(
            [
                cst.Assign(
                    [cst.AssignTarget(item)],
                    cst.Subscript(seq, [cst.SubscriptElement(cst.Index(index))]),
                )
            ]
        )
        body = loop.body.with_changes(body=[read, *loop.body.body])
        new = loop.with_changes(target=index, iter=indices, body=body)
        return place(new, loop, self.positions)


def format_fields(template: str, call: cst.Call):
    """``(pieces, None)``: ``template.format(...)``'s pieces as ``call`` fills them, each ``(literal text
    before, the argument's expression or None, spec, conversion)``; ``(None, what)`` where a field reads
    no argument of the call (``{0.x}``, ``{a[0]}``, a missing one: ``what`` names it) or the template
    does not parse."""
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    named = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None, "this `.format` template"
    pieces, auto = [], 0
    for text, field, spec, conversion in parsed:
        if field is None:
            pieces.append((text, None, spec, conversion))
            continue
        if field == "" and auto < len(positional):
            value, auto = positional[auto], auto + 1
        elif field.isdigit() and int(field) < len(positional):
            value = positional[int(field)]
        elif field in named:
            value = named[field]
        else:
            return None, f"the field `{{{field}}}` of this `.format`"
        pieces.append((text, value, spec, conversion))
    return pieces, None


def _side_by_side(target, value):
    """``(name, value)`` pairs of ``name = value`` and of ``a, b = x, y`` (tuple or list displays)."""
    if isinstance(target, cst.Name):
        return [(target.value, value)]
    if (
        isinstance(target, (cst.Tuple, cst.List))
        and isinstance(value, (cst.Tuple, cst.List))
        and len(target.elements) == len(value.elements)
    ):
        return [
            pair
            for t, v in zip(target.elements, value.elements)
            for pair in _side_by_side(t.value, v.value)
        ]
    return []


def _makes_a_dict(value) -> bool:
    """``{...}``, a dict comprehension, or ``dict(...)``."""
    return isinstance(value, (cst.Dict, cst.DictComp)) or (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "dict"
    )


def _field(part: cst.FormattedStringExpression, builtin: dict):
    """``str(x)`` for ``{x}``, ``format(x, "02d")`` for ``{x:02d}``, ``repr(x)`` for ``{x!r}``; None for a
    spec with fields of its own (``{x:{width}}``) or ``!a``."""
    value = part.expression
    if part.conversion is not None:
        if (
            part.conversion not in ("r", "s")
            or not builtin[_CONVERSIONS[part.conversion]]
        ):
            return None
        value = cst.Call(cst.Name(_CONVERSIONS[part.conversion]), [cst.Arg(value)])
    if part.format_spec is None:
        return (
            value
            if part.conversion is not None
            else cst.Call(cst.Name("str"), [cst.Arg(value)])
        )
    if not builtin["format"] or not all(
        isinstance(p, cst.FormattedStringText) for p in part.format_spec
    ):
        return None
    spec = "".join(p.value for p in part.format_spec)
    return cst.Call(
        cst.Name("format"), [cst.Arg(value), cst.Arg(cst.SimpleString(repr(spec)))]
    )


_CONVERSIONS = {"r": "repr", "s": "str"}


def _keys(body, name: str, dicts=frozenset()) -> bool:
    """Whether ``body`` makes ``name`` part of a key: a tuple display holding it beside a string
    (``parser.get(w, ("weights", i))``, ``params[("W", i)]``), never an array index, or a key of one of
    the ``dicts`` the function makes (``norms[i] = ...``)."""
    for node in iter_nodes(body):
        if (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and node.value.value in dicts
            and any(
                isinstance(n, cst.Name) and n.value == name
                for n in iter_nodes(node.slice[0])
            )
        ):
            return True
        if isinstance(node, cst.Tuple):
            values = [e.value for e in node.elements]
            if any(isinstance(v, cst.SimpleString) for v in values) and any(
                isinstance(v, cst.Name) and v.value == name for v in values
            ):
                return True
    return False


def _formats(body, name: str) -> bool:
    """Whether ``body`` turns ``name`` into a string (``str``, ``format`` or ``repr`` of an expression
    reading it, or ``"W%d" % i``)."""
    for node in iter_nodes(body):
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, cst.Modulo)
            and isinstance(node.left, cst.SimpleString)
            and any(
                isinstance(n, cst.Name) and n.value == name
                for n in iter_nodes(node.right)
            )
        ):
            return True
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value in ("str", "format", "repr")
            and any(
                isinstance(n, cst.Name) and n.value == name
                for a in node.args
                for n in iter_nodes(a.value)
            )
        ):
            return True
    return False


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its f-strings as concatenations and its string-naming ``range`` loops listed."""
    node = source.node
    if not isinstance(node, cst.FunctionDef):
        return source
    # f-strings, and loops whose index may be made a string
    if not any(
        isinstance(n, (cst.FormattedString, cst.For))
        or (isinstance(n, cst.Attribute) and n.attr.value == "format")
        for n in iter_nodes(node.body)
    ):
        return source
    strings = _Strings(source)
    new = rewrite(node, strings)
    return with_node(source, new) if strings.changed else source
