"""Errors located at the user's source line, including errors raised while generated code runs.

``S2SError`` is the one error class s2s raises for problems in the user's
program (the compiler's errors are subclasses of it; ``s2s.S2SError`` is this
class). It renders as ``file:line:col: error: ...``, the source line, a caret
under it and a hint.

``locate(err)`` maps an exception raised inside a generated module (see
``loader``) back to the user's line: it walks the traceback to the innermost
frame in a generated module, takes the nearest ``# model.py:12  h = ...``
comment above that statement (following generated modules that cite other
generated modules, as higher derivatives do) and finds the user's file by
checking the cited line's text. It returns a ``GeneratedCodeError`` that is
also an instance of the original exception's class, or ``None`` for errors it
must leave alone: errors without a generated frame, errors raised in the
user's own code that generated code called, s2s errors, and errors the runtime
raises on purpose with JAX's messages (those get the user's line as a note).
"""

from __future__ import annotations

import ast
import dis
import functools
import linecache
import os
import re
import sys
import sysconfig
from dataclasses import dataclass

from . import loader


@dataclass(frozen=True)
class Location:
    """A line of a source file: path, 1-based line, 0-based columns of the span, and the line's text."""

    path: str
    line: int
    col: int
    end_col: int
    text: str


class S2SError(Exception):
    """An error in the user's program or request, rendered as one readable message.

    Rendered form::

        model.py:12:9: error: no derivative rule for `np.fft.fft`
            y = np.fft.fft(x)
                ^^^^^^^^^^^^^
        hint: ...
    """

    def __init__(self, message: str, origin=None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.origin = origin  # anything with path, line, col, end_col and text (a Location, an Origin)
        self.hint = hint

    def render(self) -> str:
        lines = []
        if self.origin is None:
            lines.append(f"error: {self.message}")
        else:
            o = getattr(self.origin, "cited", None) or self.origin
            lines.append(f"{o.path}:{o.line}:{o.col + 1}: error: {self.message}")
            stripped = o.text.lstrip()
            indent = len(o.text) - len(stripped)
            lines.append("    " + stripped.rstrip())
            width = max(1, min(o.end_col, len(o.text.rstrip())) - o.col)
            lines.append("    " + " " * max(0, o.col - indent) + "^" * width)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class Refusal(TypeError):
    """Raised by the runtime for a construct s2s refuses once values show what it is (``ws + vs`` of two lists):
    re-raised at the user's line as a ``GeneratedCodeError`` with this message and ``hint``.
    """

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


def refuse_traced_item(container, index):
    """A Python list or dict written at a position or key a compiled loop computes (``hs[t] = h``;
    min-char-rnn's dict): a ``Refusal``."""
    import jax

    if not isinstance(index, jax.core.Tracer):
        return
    if isinstance(container, dict):
        raise Refusal(
            "a dict written at a key the compiled code computes (`hs[t] = ...` in a compiled loop): a "
            "dict's keys are Python values, which a compiled loop's counter is not",
            "append one item per step to a list made before the loop (`hs.append(h)`, the previous "
            "one `hs[-1]`), or write into a preallocated array (`hs = np.zeros((T, d))`)",
        )
    raise Refusal(
        "a Python list written at a position the compiled code computes (`hs[t] = ...` in a compiled "
        "loop): each item of a list is a value of its own, which the compiled loop cannot pick by a "
        "traced position",
        "append one item per step to a list made before the loop (s2s collects its items), or write "
        "into a preallocated array (`hs = np.zeros((T, d))`)",
    )


class ValueRefusal(ValueError):
    """``Refusal`` for a value s2s cannot compute in the form it takes (a per-example selection of no
    fixed shape): re-raised at the user's line with this message and ``hint``."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


class GeneratedCodeError(S2SError):
    """An exception raised while generated code ran, at the user's line; the original is its ``__cause__``.

    Each instance's class also derives from the original exception's class, so
    ``except TypeError`` (or ``except jax.errors.ConcretizationTypeError``) still catches it.
    """


COMPILE_TIME = "this needs a value known at compile time"
CONCRETE = {  # JAX's errors for values that are traced (unknown) under jax.jit: what needed one, what to do
    "NonConcreteBooleanIndexError": (
        "boolean-mask indexing (`x[mask]`), whose result's size depends on the mask's values",
        "use a fixed-size alternative such as np.where(mask, x, 0), or run eagerly with backend='numpy'",
    ),
    "TracerBoolConversionError": (
        "the truth value of an array (`bool(...)`, `and`/`or`/`not`, a condition)",
        "pass it as a Python bool (Python ints and bools are compile-time constants), use np.where(c, x, y), "
        "or run eagerly with backend='numpy'",
    ),
    "TracerIntegerConversionError": (
        "a Python int from an array (`int(...)`, a `range` bound, an index)",
        "pass it as a Python int (Python ints are compile-time constants); where a Python list or tuple is "
        "indexed by a compiled loop's counter (`ext[s]` in `for s in range(S)`), make it an array first "
        "(`ext = np.array(ext)`); or run eagerly with backend='numpy'",
    ),
    "TracerArrayConversionError": (
        "a NumPy array from a traced array (`np.asarray` of it, or a non-NumPy function called on it)",
        "keep the computation in the array namespace of the inputs, or run eagerly with backend='numpy'",
    ),
    "ConcretizationTypeError": (
        "a concrete value of an array (`int(...)`, `float(...)`, or a result whose shape depends on values, "
        "like `np.nonzero`, one-argument `np.where` or `np.unique`)",
        "pass it as a Python int (Python ints are compile-time constants), use a fixed-size alternative such as "
        "np.where(c, x, 0), or run eagerly with backend='numpy'",
    ),
}
# JAX's ``TypeError`` for a shape made of traced values (``np.zeros(int(np.sum(x)))``)
TRACED_SHAPE = "Shapes must be 1D sequences of concrete values of integer type"
# JAX's ``IndexError`` for a slice whose bounds are traced (``x[i + 1:]`` in a compiled loop)
# a per-step output of a loop over a traced ``range`` (``checkpoints.TapeLeaf``) read as a value
COLLECTED = (
    "a loop over `range` with bounds known only at run time (a traced count under `jax.jit`) cannot "
    "collect per-step outputs: the list's length would depend on data",
    "make the count a Python int (a static argument, or a default the caller leaves out), loop over a "
    "fixed range and stop early with `break`, or write into a preallocated array",
)
TRACED_SLICE = "Slice entries must be static integers"
SLICE_BOUNDS = (
    f"{COMPILE_TIME}: a slice whose bounds the compiled code computes (`x[i + 1:]` with `i` a compiled "
    "loop's index or a value), so the slice's size would depend on values, but it is traced under jax.jit",
    "slice with a width known when traced (`x[i:i + k]`, k a constant), mask instead of slicing "
    "(`np.where(np.arange(n) > i, x, 0.0)`), or run eagerly with backend='numpy'",
)
RECURSION = (
    "a recursion that does not end: a function that calls itself under a test on array values "
    "recurses forever when compiled (both branches of a compiled `if` are traced)",
    "recurse on a Python int argument (known at compile time), write the recursion as a `while` loop "
    "(s2s compiles `while` on array values), or run eagerly with backend='numpy'",
)
# jax.numpy's refusal of a Python list where NumPy reads one array (``np.mean(ws)`` of a list argument)
LIST_ARGUMENT = re.compile(
    r"(\w+) requires ndarray or scalar arguments, got <class '(list|tuple)'>"
)


def _list_argument(match) -> tuple[str, str]:
    return (
        f"a Python {match[2]} given to a NumPy function (jax.numpy's `{match[1]}` refused it): NumPy reads "
        f"it as one array, jax.numpy (under jax.jit) takes arrays only, and s2s could not tell that this "
        f"value is a {match[2]}",
        "make it one array where it is made or read: `np.asarray(...)` of it (`np.stack` of arrays of one "
        "shape), or pass an array",
    )


NOTE = "s2s: raised at "
_COMMENT = re.compile(r"# (\S+):(\d+)  (.*)$")


def locate(err: BaseException) -> Exception | None:
    """``err`` as a ``GeneratedCodeError`` at the user's line, or ``None`` to re-raise it unchanged."""
    if isinstance(err, S2SError) or not isinstance(err, Exception):
        return None
    frames = _frames(err.__traceback__)
    inner = [
        i
        for i, (frame, _, _) in enumerate(frames)
        if frame.f_code.co_filename in loader.GENERATED
    ]
    if not inner:
        return None
    frame, lineno, _ = frames[inner[-1]]
    deeper = frames[inner[-1] + 1 :]
    if any(_is_users(f) for f, _, _ in deeper):
        return None  # raised by the user's own code, which generated code called
    where = origin_of(frame.f_code.co_filename, lineno)
    if isinstance(err, (Refusal, ValueRefusal)):
        return _located(err, str(err), err.hint, where)
    if deeper and _is_runtime(deeper[-1][0]) and _raises(*deeper[-1][::2]):
        # the runtime's own error (JAX's message, as JAX raises it): keep it as it is
        _note(err, where)
        return None
    name = type(err).__name__
    if isinstance(err, TypeError) and TRACED_SHAPE in str(err):
        message, hint = (
            f"{COMPILE_TIME}: a shape from an array's value (`int(...)` of it, a size computed from "
            "data), but it is traced under jax.jit",
            CONCRETE["ConcretizationTypeError"][1],
        )
    elif isinstance(err, TypeError) and (found := LIST_ARGUMENT.search(str(err))):
        message, hint = _list_argument(found)
    elif isinstance(err, IndexError) and TRACED_SLICE in str(err):
        message, hint = SLICE_BOUNDS
    elif "TapeLeaf" in str(err):
        message, hint = COLLECTED
    elif name in CONCRETE and type(err).__module__.startswith("jax"):
        code = frame.f_code
        message, hint = _compile_time(err, code.co_varnames[: code.co_argcount])
    elif isinstance(err, RecursionError):
        message, hint = RECURSION
    else:
        first = str(err).strip().splitlines()
        message = f"{name}: {first[0]}" if first else name
        hint = "the original error is chained above"
    generated = f"{os.path.basename(frame.f_code.co_filename)}:{lineno}"
    hint += f"; raised by the generated code at {generated} (`.source` shows it)"
    return _located(err, message, hint, where)


def failed_check(err: BaseException) -> Exception | None:
    """A check of values known only when the compiled code runs (an ``assert`` on data, a window's bounds)
    that failed there: its own exception at the user's line, where JAX reports ``err`` (its runtime error
    quoting the check's traceback); else None."""
    from .output import FAILED

    if not FAILED or "callback" not in str(err).lower():
        return None
    check, (path, lineno) = FAILED.pop()
    FAILED.clear()
    first = str(check).strip().splitlines()
    message = f"{type(check).__name__}: {first[0]}" if first else type(check).__name__
    generated = f"{os.path.basename(path)}:{lineno}"
    hint = getattr(check, "hint", None) or "the check's own traceback is above"
    hint += (
        f"; checked when the compiled code ran, by the generated code at {generated}"
    )
    return _located(check, message, hint, origin_of(path, lineno))


def _located(err, message, hint, where) -> GeneratedCodeError:
    """``err`` as a ``GeneratedCodeError`` (of ``err``'s class too) at the user's ``where``."""
    cls = _located_class(type(err))
    located = cls.__new__(cls, message)
    located.message, located.origin, located.hint = message, where, hint
    return located


def _compile_time(err, params=()) -> tuple[str, str]:
    """The message and hint for JAX's error about a value that is traced, from what JAX's message says
    (naming the argument it depends on where that is a parameter of the generated function: the user's).
    """
    what, hint = CONCRETE[type(err).__name__]
    text = str(err)
    if match := re.search(r"The problem arose with the `(\w+)` function", text):
        what = f"`{match[1]}(...)` of an array"
    elif match := re.search(r"(?:size argument|first argument) of jnp\.(\w+)", text):
        op = (
            "`nonzero` (or one-argument `where`)"
            if match[1] == "nonzero"
            else f"`{match[1]}`"
        )
        what = f"{op}, whose result's size depends on the array's values"
    match = re.search(r"depends on the value of the argument (\w+)", text)
    if match and match[1] in params:
        what += f" (it depends on the argument `{match[1]}`)"
    return f"{COMPILE_TIME}: {what}, but it is traced under jax.jit", hint


def _frames(tb) -> list:
    """``(frame, line, last instruction)`` for each entry of a traceback, outermost first."""
    out = []
    while tb is not None:
        out.append((tb.tb_frame, tb.tb_lineno, tb.tb_lasti))
        tb = tb.tb_next
    return out


def origin_of(path: str, lineno: int) -> Location:
    """The user's line that generated line ``lineno`` of ``path`` comes from (the generated line itself if none)."""
    text = loader.GENERATED[path]
    lines = text.splitlines()
    cited = _comment_above(text, lineno)
    if cited is None:
        line = lines[lineno - 1] if lineno <= len(lines) else ""
        return _span(path, lineno, line)
    name, number, source = cited
    if name in loader.NAMED:  # generated from generated code: follow the cited module
        return origin_of(loader.NAMED[name], number)
    return _find_source(name, number, source)


@functools.lru_cache(maxsize=64)
def _statements(text: str) -> list:
    """``(first line, last line, column)`` of every statement of a generated module."""
    return [
        (n.lineno, n.end_lineno, n.col_offset)
        for n in ast.walk(ast.parse(text))
        if isinstance(n, ast.stmt)
    ]


def _comment_above(text: str, lineno: int):
    """``(file name, line, source text)`` from the nearest origin comment above the statement at ``lineno``."""
    spans = [s for s in _statements(text) if s[0] <= lineno <= s[1]]
    if not spans:
        return None
    first, last, col = min(spans, key=lambda s: s[1] - s[0])
    lines = text.splitlines()
    for line in reversed(lines[: first - 1]):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if not stripped or indent > col:
            continue  # blank, or inside a nested block
        if indent < col:
            break  # the enclosing block's header: no comment above this statement
        match = _COMMENT.fullmatch(stripped)
        if match:
            return match.group(1), int(match.group(2)), match.group(3)
    # a block's first statements (a branch unpacking what the forward pass kept): the block's first comment
    for line in lines[last:]:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if not stripped or indent > col:
            continue
        if indent < col:
            return None
        match = _COMMENT.fullmatch(stripped)
        if match:
            return match.group(1), int(match.group(2)), match.group(3)
    return None


def _find_source(name: str, number: int, source: str) -> Location:
    """The file named ``name`` (a base name) whose line ``number`` reads ``source``: loaded modules, files read."""
    found = {
        os.path.realpath(f): f
        for f in _files_named(name)
        if linecache.getline(f, number).strip() == source.strip()
    }
    if len(found) == 1:
        path = next(iter(found.values()))
        return _span(path, number, linecache.getline(path, number).rstrip("\n"))
    # not found, or ambiguous: as the comment cites it
    return _span(name, number, source)


def _files_named(name: str) -> list:
    """The loaded modules' and read files' paths whose base name is ``name`` (an index of them, brought up
    to date with the modules loaded and files read since it last was: a second derivative cites thousands
    of lines).
    """
    size = (len(sys.modules), len(linecache.cache))
    if _FILES["size"] != size:
        read, modules, by_name = _FILES["read"], _FILES["modules"], _FILES["by_name"]
        files = [f for f in linecache.cache if f not in read]
        read.update(linecache.cache)
        for key, module in list(sys.modules.items()):
            if (
                modules.get(key) is not module
            ):  # new, or another module under a name seen before
                modules[key] = module
                files.append(getattr(module, "__file__", None))
        for f in files:
            if isinstance(f, str) and f not in by_name.get(os.path.basename(f), ()):
                by_name.setdefault(os.path.basename(f), []).append(f)
        _FILES["size"] = size
    return _FILES["by_name"].get(name, [])


_FILES: dict = {
    "size": None,  # the counts of modules and read files the index was last brought up to
    "read": set(),  # the read files' paths it holds
    "modules": {},  # the modules whose paths it holds, by name
    "by_name": {},  # base name -> paths
}


def _span(path: str, number: int, line: str) -> Location:
    stripped = line.strip()
    col = len(line) - len(line.lstrip())
    return Location(path, number, col, col + len(stripped), line)


_LIBRARIES = tuple(
    os.path.realpath(p) + os.sep
    for p in {
        sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)
_RUNTIME = os.path.dirname(os.path.realpath(__file__)) + os.sep


def _is_runtime(frame) -> bool:
    return os.path.realpath(frame.f_code.co_filename).startswith(_RUNTIME)


def in_library(path: str) -> bool:
    """Whether ``path`` is Python's own code (the standard library, ``<frozen ...>``) or an installed package's."""
    return path.startswith("<") or os.path.realpath(path).startswith(_LIBRARIES)


def _is_users(frame) -> bool:
    """A frame of the user's code: not s2s's runtime, not generated, not a library or Python itself."""
    path = frame.f_code.co_filename
    return not (path in loader.GENERATED or _is_runtime(frame) or in_library(path))


def _raises(frame, lasti: int) -> bool:
    """Whether ``frame`` stopped at a ``raise`` statement of its own (rather than in a call that raised)."""
    code = frame.f_code.co_code
    return 0 <= lasti < len(code) and dis.opname[code[lasti]] in (
        "RAISE_VARARGS",
        "RERAISE",
    )


def _note(err: BaseException, where: Location) -> None:
    notes = getattr(err, "__notes__", [])
    if not any(n.startswith(NOTE) for n in notes):
        err.add_note(
            f"{NOTE}{where.path}:{where.line}:{where.col + 1}: {where.text.strip()}"
        )


@functools.cache
def _located_class(original: type) -> type:
    """``GeneratedCodeError`` that is also an ``original`` (or the nearest base of it Python can combine)."""
    for base in original.__mro__:
        if not issubclass(base, Exception):
            break
        try:
            return type(
                f"GeneratedCodeError({base.__qualname__})",
                (GeneratedCodeError, base),
                {"__module__": __name__},
            )
        except TypeError:  # an instance layout Python cannot combine with Exception's
            continue
    return GeneratedCodeError
