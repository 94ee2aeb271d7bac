"""``print``, ``logging``, ``warnings.warn`` and ``jax.debug.print`` statements, as ``rt.debug_print``/
``rt.log``/``rt.warn`` statements.

Guarantee: each such statement of the user's function stays one statement of
the generated code, in its place (``simplify`` never drops them), and prints or
logs what Python would, at every call (``runtime/output.py``: under ``jax.jit``
through an ordered debug callback). f-strings, string literals, ``"..." % values`` and
``"...".format(...)`` of a string written out become one ``str.format`` template (printf's ``%d``
the field ``{!d}``: the value truncated to an integer first); the other arguments are its values. Output to a file,
or a ``print`` whose ``end`` is not a newline, is a located error.
"""

from __future__ import annotations

import builtins
import logging
import re
import sys
import warnings

import libcst as cst

from ..cstutil import call, literal
from ..errors import UnsupportedSyntax

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "exception": logging.ERROR,
    "critical": logging.CRITICAL,
    "fatal": logging.CRITICAL,
}


def is_output_statement(node: cst.Expr) -> bool:
    """Syntactically an output call (``print(...)``, ``x.info(...)``, ``x.log(...)``, ``x.print(...)``);
    the resolver checks what the name is."""
    func = node.value.func if isinstance(node.value, cst.Call) else None
    if isinstance(func, cst.Name):
        return func.value in ("print", "warn")
    return isinstance(func, cst.Attribute) and (
        func.attr.value in LEVELS or func.attr.value in ("log", "print")
    )


def kind_of(obj) -> tuple | None:
    """``("print",)``, ``("jax",)``, ``("warn",)`` or ``("logging", logger name or None, method name)`` for
    the object an output statement calls; None for anything else."""
    if obj is builtins.print:
        return ("print",)
    if obj is warnings.warn:
        return ("warn",)
    jax = sys.modules.get("jax")
    if jax is not None and obj is getattr(getattr(jax, "debug", None), "print", None):
        return ("jax",)
    name = getattr(obj, "__name__", None)
    if name not in LEVELS and name != "log":
        return None
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, (logging.Logger, logging.LoggerAdapter)):
        logger = owner.logger if isinstance(owner, logging.LoggerAdapter) else owner
        return ("logging", None if logger is logging.root else logger.name, name)
    if getattr(obj, "__module__", None) == "logging" and obj is getattr(
        logging, name, None
    ):
        return ("logging", None, name)
    return None


def _escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


class Template:
    """A ``str.format`` template and its values, built from ``print``'s arguments."""

    def __init__(self, resolver):
        self.resolver = resolver
        self.text, self.values = "", []

    def add(self, arg: cst.BaseExpression) -> None:
        if _string(arg) is not None:
            self.text += _escaped(_string(arg))
        elif _formats_a_string(arg) == "%":
            self._printf(arg, _string(arg.left), arg.right)
        elif _formats_a_string(arg) == "format":
            self._format_call(arg, _string(arg.func.value))
        elif isinstance(arg, cst.FormattedString):
            for part in arg.parts:
                if isinstance(part, cst.FormattedStringText):
                    self.text += _escaped(part.value)
                    continue
                self.text += "{" + (f"!{part.conversion}" if part.conversion else "")
                if part.format_spec:
                    self.text += ":" + "".join(
                        self._spec_text(p) for p in part.format_spec
                    )
                self.text += "}"
                self.values.append(self.resolver.expr(part.expression))
        else:
            self.text += "{}"
            self.values.append(self.resolver.expr(arg))

    def _printf(self, node: cst.BinaryOperation, text: str, operand) -> None:
        """``"loss %.3f at %d" % (loss, i)``: each conversion a field of the template (``%d`` of a float
        truncates it first, as printf does: the field's conversion ``!d``, ``runtime/output.py``).
        """
        elements = operand.elements if isinstance(operand, cst.Tuple) else None
        values = [operand] if elements is None else [e.value for e in elements]
        starred = elements is not None and any(
            isinstance(e, cst.StarredElement) for e in elements
        )
        fields = _printf_fields(text)
        if (
            starred
            or fields is None
            or len(values) != sum(field is not None for _, field in fields)
        ):
            self._unreadable(node, "this `%` formatting")
        values = iter(values)
        for literal_text, field in fields:
            self.text += _escaped(literal_text)
            if field is not None:
                self.text += field
                self.values.append(self.resolver.expr(next(values)))

    def _format_call(self, node: cst.Call, text: str) -> None:
        """``"loss {:.3f}".format(loss)``: its fields, the template's."""
        from .strings import format_fields  # (it reads this module)

        if any(a.star for a in node.args):
            self._unreadable(node, "`.format` of unpacked arguments")
        pieces, unread = format_fields(text, node)
        if pieces is None:
            self._unreadable(node, unread)
        for literal_text, value, spec, conversion in pieces:
            self.text += _escaped(literal_text)
            if value is None:
                continue
            if spec and "{" in spec:
                self._unreadable(node, "a computed format spec in `.format`")
            self.text += (
                "{"
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
            self.values.append(self.resolver.expr(value))

    def _unreadable(self, node, what: str):
        self.resolver.fail(
            node,
            f"{what} in an output statement",
            "write the message as an f-string: f'loss {loss:.4f} at step {i}'",
            UnsupportedSyntax,
        )

    def _spec_text(self, part) -> str:
        if isinstance(part, cst.FormattedStringText):
            return part.value
        self.resolver.fail(
            part,
            "a computed format spec in an f-string",
            "write the spec out: f'{x:.4f}'",
            UnsupportedSyntax,
        )


def _string(node) -> str | None:
    """The text of a string literal (``"a"``, ``"a" "b"``), else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _formats_a_string(node) -> str | None:
    """``"%"`` for ``"..." % values``, ``"format"`` for ``"...".format(...)`` of a string literal."""
    if (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Modulo)
        and _string(node.left) is not None
    ):
        return "%"
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "format"
        and _string(node.func.value) is not None
    ):
        return "format"
    return None


_PRINTF = re.compile(
    r"%(?P<key>\([^)]*\))?(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d*))?"
    r"[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)


def _printf_fields(text: str) -> list | None:
    """``text``'s printf conversions as ``(literal text before, str.format field)`` pairs (a last pair of
    the text after and None); None where one has no such field (``%(name)s``, ``*`` widths).
    """
    out, at = [], 0
    for m in _PRINTF.finditer(text):
        literal_text = text[at : m.start()]
        at = m.end()
        kind = m["type"]
        if kind == "%":
            out.append((literal_text + "%", None))
            continue
        if m["key"] or m["width"] == "*" or m["precision"] == "*":
            return None
        flags, width = m["flags"], m["width"] or ""
        precision = "" if m["precision"] is None else "." + (m["precision"] or "0")
        align = "<" if "-" in flags else (">" if kind in "srac" and width else "")
        zero = "0" if "0" in flags and not align and kind not in "srac" else ""
        sign = "+" if "+" in flags else (" " if " " in flags else "")
        alternate = "#" if "#" in flags else ""
        if kind in "sra":
            conversion, kind = "!" + kind, ""
        elif kind in "diu":
            conversion, kind = "!d", "d"
        else:
            conversion = "!d" if kind in "oxXc" else ""
        spec = f"{align}{sign}{alternate}{zero}{width}{precision}{kind}"
        out.append(
            (literal_text, "{" + conversion + (":" + spec if spec else "") + "}")
        )
    if "%" in text[at:]:
        return None  # a lone ``%`` Python itself refuses
    out.append((text[at:], None))
    return out


def _literal_string(resolver, arg: cst.Arg, what: str) -> str:
    value = arg.value
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)) and isinstance(
        value.evaluated_value, str
    ):
        return value.evaluated_value
    resolver.fail(
        value,
        f"{what} that is not a string literal",
        f"write {what} out",
        UnsupportedSyntax,
    )


def assertion(resolver, node: cst.Assert) -> cst.Call:
    """``rt.check(test, template, *values)`` for ``assert test, message``."""
    template = Template(resolver)
    if node.msg is not None:
        template.add(node.msg)
    return call(
        "rt.check", resolver.expr(node.test), literal(template.text), *template.values
    )


def raising(resolver, node: cst.Raise) -> cst.Call:
    """``rt.raise_(kind, template, *values)`` for ``raise kind(message)``: a built-in exception, raised where
    the code runs (as a ``return``, the path ends there)."""
    exc = node.exc
    if isinstance(exc, cst.Name):
        exc = cst.Call(exc, [])
    kind = (
        exc.func.value
        if isinstance(exc, cst.Call) and isinstance(exc.func, cst.Name)
        else None
    )
    builtin = getattr(builtins, kind, None) if kind else None
    if (
        not (isinstance(builtin, type) and issubclass(builtin, Exception))
        or len(exc.args) > 1
    ):
        resolver.fail(
            node,
            '`raise` of anything but a built-in exception with one message (`raise ValueError("...")`)',
            "raise a built-in exception (`ValueError`, `TypeError`, ...) with a message",
            UnsupportedSyntax,
        )
    if exc.args and exc.args[0].keyword is not None:
        resolver.fail(exc.args[0], "a keyword argument of an exception", "pass the message alone", UnsupportedSyntax)  # fmt: skip
    template = Template(resolver)
    if exc.args:
        template.add(exc.args[0].value)
    return call("rt.raise_", literal(kind), literal(template.text), *template.values)


def statement(resolver, node: cst.Call, kind: tuple) -> cst.Call:
    """The ``rt.debug_print``/``rt.log`` call for the output statement ``node``."""
    for a in node.args:
        if a.star:
            resolver.fail(a, f"`{a.star}` unpacking in an output call", "pass the values one by one",
                          UnsupportedSyntax)  # fmt: skip
    positional = [a for a in node.args if a.keyword is None]
    keywords = {a.keyword.value: a for a in node.args if a.keyword is not None}
    if kind[0] == "print":
        return _print(resolver, positional, keywords)
    if kind[0] == "jax":
        return _jax_print(resolver, positional, keywords)
    if kind[0] == "warn":
        return _warn(resolver, node, positional, keywords)
    return _log(resolver, node, positional, kind[1], kind[2])


def _warn(resolver, node, positional, keywords) -> cst.Call:
    """``warnings.warn(message[, category])``: ``rt.warn(category's name, template, *values)``, the
    category one of Python's warnings (``stacklevel`` is read and left: the warning names the line).
    """
    if not positional and "message" not in keywords:
        resolver.fail(node, "`warn()` without a message", "pass the message", UnsupportedSyntax)  # fmt: skip
    message = positional[0] if positional else keywords["message"]
    given = positional[1] if len(positional) > 1 else keywords.get("category")
    category = "UserWarning"
    if given is not None:
        chain = (
            resolver._chain(given.value)
            if isinstance(given.value, (cst.Name, cst.Attribute))
            else None
        )
        obj = resolver._object(chain) if chain is not None else None
        if not (
            isinstance(obj, type)
            and issubclass(obj, Warning)
            and getattr(builtins, obj.__name__, None) is obj
        ):
            resolver.fail(given, "a warning category other than one of Python's (`UserWarning`, `RuntimeWarning`, ...)",
                          "warn with a built-in category, or warn outside the function", UnsupportedSyntax)  # fmt: skip
        category = obj.__name__
    template = Template(resolver)
    template.add(message.value)
    return call("rt.warn", literal(category), literal(template.text), *template.values)


def _keyword_string(resolver, keywords: dict, name: str, default: str) -> str:
    if name not in keywords:
        return default
    return _literal_string(resolver, keywords[name], f"`{name}`")


def _print(resolver, positional, keywords) -> cst.Call:
    if "file" in keywords:
        resolver.fail(keywords["file"], "`print(..., file=...)` in a transformed function",
                      "print to standard output, or write the file outside the function", UnsupportedSyntax)  # fmt: skip
    end = _keyword_string(resolver, keywords, "end", "\n")
    if not end.endswith("\n"):
        resolver.fail(keywords["end"], "`print(..., end=...)` without a newline",
                      "print whole lines (compiled code prints each call's line at once)", UnsupportedSyntax)  # fmt: skip
    sep = _keyword_string(resolver, keywords, "sep", " ")
    template = Template(resolver)
    for i, a in enumerate(positional):
        if i:
            template.text += _escaped(sep)
        template.add(a.value)
    template.text += _escaped(end[:-1])
    return call("rt.debug_print", literal(template.text), *template.values)


def _jax_print(resolver, positional, keywords) -> cst.Call:
    fmt = _literal_string(resolver, positional[0], "the format") if positional else ""
    named = [a for k, a in keywords.items() if k != "ordered"]
    if (
        named
    ):  # ``jax.debug.print("m={m}", m=v)``: ``fmt.format(...)``'s fields, as ``print`` reads them
        template = Template(resolver)
        template._format_call(
            cst.Call(cst.Name("print"), [*positional[1:], *named]), fmt
        )
        return call("rt.debug_print", literal(template.text), *template.values)
    values = [resolver.expr(a.value) for a in positional[1:]]
    return call("rt.debug_print", literal(fmt), *values)


def _log(resolver, node, args, logger, method) -> cst.Call:
    if method == "log":
        if not args:
            resolver.fail(
                node,
                "`log()` without a level",
                "logger.log(logging.INFO, msg)",
                UnsupportedSyntax,
            )
        level, args = resolver.expr(args[0].value), args[1:]
    else:
        level = literal(LEVELS[method])
    if not args:
        resolver.fail(
            node,
            f"`{method}()` without a message",
            "pass the message",
            UnsupportedSyntax,
        )
    message, name = args[0].value, literal(logger)
    if _string(message) is None and (
        isinstance(message, cst.FormattedString) or _formats_a_string(message)
    ):
        template = Template(resolver)
        template.add(message)
        return call(
            "rt.log",
            name,
            level,
            literal(template.text),
            *template.values,
            style=literal("{"),
        )
    values = [resolver.expr(a.value) for a in args[1:]]
    return call("rt.log", name, level, resolver.expr(message), *values)
