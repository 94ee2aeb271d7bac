"""Find a function's source: parse its file once with libcst and locate its definition.

Guarantees: ``load(fn)`` returns the ``FunctionDef`` (or a ``def`` made from a
lambda) with positions for every node, the file's path and lines, and the live
environment (globals, closure) that names in the body refer to. The function
read is the code that runs when ``fn`` is called (``wrappers.readable``), and
its text, read from the file as it is now (not as ``linecache`` last saw it),
compiles to that code (``verify``): a file edited since import is an error.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import inspect
import linecache
import os
import textwrap
from dataclasses import dataclass, replace

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..errors import Origin, S2SError
from ..runtime import loader, located
from . import function_args, object_layouts, statement_lines, variadic, verify, wrappers


@dataclass(frozen=True)
class ParsedFile:
    """A parsed piece of a file: the whole file, or the lines of one function.

    ``positions`` are relative to the parsed piece; ``line_offset`` and
    ``col_offset`` (the indentation removed) map them back into the file.
    """

    path: str
    lines: tuple[str, ...]  # every line of the file
    module: cst.Module
    positions: dict
    line_offset: int = 0
    col_offset: int = 0
    definitions: (
        tuple
    ) = ()  # ``(node, position)`` of every ``def`` and lambda, in order


@dataclass(frozen=True)
class FunctionSource:
    """A user function's definition, with what its names refer to."""

    fn: object
    name: str
    node: cst.FunctionDef | cst.Lambda
    file: ParsedFile
    env: dict
    generated: bool = (
        False  # a function of a module s2s generated (read again for higher derivatives)
    )
    shape: variadic.Shape | None = (
        None  # the call shape a function with ``*args``/``**kwargs`` is read at
    )
    # parameters bound to functions at a call (``function_args.Bound``): names of ``env``, not parameters
    fixed: tuple = ()
    # parameters holding objects of the program's classes at the call read (``held_objects.Held``):
    # (parameter, layout) pairs
    held: tuple = ()
    # (local function, parameter) pairs its enclosing function hands in and takes back
    # (``closure_state``): the function may append to them
    handed_back: frozenset = frozenset()

    def origin(self, node: cst.CSTNode) -> Origin | None:
        found = origin_in(self.file, node)
        if found is None or not self.generated:
            return found
        return replace(found, cited=_cited(self.file.path, found.line))

    @property
    def text(self) -> str:
        return self.file.module.code_for_node(self.node)


def origin_in(file: ParsedFile, node: cst.CSTNode) -> Origin | None:
    pos = file.positions.get(node)
    if pos is None:
        return None
    number = pos.start.line + file.line_offset
    line = file.lines[number - 1].rstrip("\n") if number <= len(file.lines) else ""
    col = pos.start.column + file.col_offset
    end_col = (
        pos.end.column + file.col_offset
        if pos.end.line == pos.start.line
        else len(line)
    )
    return Origin(file.path, number, col, end_col, line)


@functools.lru_cache(maxsize=1024)
def _parse(
    path: str, text: str, line_offset: int = 0, col_offset: int = 0
) -> ParsedFile:
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = dict(wrapper.resolve(PositionProvider))
    definitions = tuple(
        (n, p) for n, p in positions.items() if type(n) in (cst.FunctionDef, cst.Lambda)
    )
    return ParsedFile(
        path,
        tuple(_file_lines(path)),
        wrapper.module,
        positions,
        line_offset,
        col_offset,
        definitions,
    )


def _file_lines(path: str) -> list[str]:
    lines = linecache.getlines(path)
    if not lines:
        linecache.checkcache(path)
        lines = linecache.getlines(path)
    if not lines:
        raise S2SError(
            f"cannot read the source of {path}",
            hint="s2s reads functions from their source: define them in a file "
            "(not at the interactive prompt or in `python -c`)",
        )
    return lines


def parse_file(path: str) -> ParsedFile:
    try:
        return _parse(path, "".join(_file_lines(path)))
    except cst.ParserSyntaxError as e:
        raise S2SError(
            f"{path}:{e.raw_line}:{e.raw_column}: cannot parse: {e.message}"
        ) from None


def parse_function_lines(path: str, fn) -> ParsedFile:
    """Parse only the lines of ``fn`` (dedented); where they do not parse alone (a lambda inside a longer
    expression), the module-level statement around them; the whole file as a last resort.
    """
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return parse_file(path)
    text = "".join(lines)
    body = textwrap.dedent(text)
    indent = len(text) - len(text.lstrip(" \t")) - (len(body) - len(body.lstrip(" \t")))
    try:
        return _parse(path, body, max(start, 1) - 1, indent)
    except cst.ParserSyntaxError:
        return _parse_statement_around(path, fn.__code__.co_firstlineno)


def _parse_statement_around(path: str, line: int) -> ParsedFile:
    """Parse the lines of the module-level statement that holds ``line`` (its decorators too)."""
    lines = _file_lines(path)
    around = [s for s in _statement_spans("".join(lines)) if s[0] <= line <= s[1]]
    if not around:
        return parse_file(path)
    first, last = around[0]
    try:
        return _parse(path, "".join(lines[first - 1 : last]), first - 1)
    except cst.ParserSyntaxError:
        return parse_file(path)


@functools.lru_cache(maxsize=64)
def _statement_spans(text: str) -> tuple:
    """``(first line, last line)`` of each module-level statement of ``text``, read by Python's parser."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return ()
    return tuple(
        (
            min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]),
            s.end_lineno,
        )
        for s in body
    )


def _environment(fn) -> dict:
    env = dict(vars(__import__("builtins")))
    env.update(fn.__globals__)
    if is_generated(fn):
        import numpy

        env["xp"] = numpy  # generated code's array namespace: spelled like NumPy
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            with contextlib.suppress(ValueError):  # an empty cell: not bound yet
                env[name] = cell.cell_contents
    return env


GENERATED_PREFIX = loader.PREFIX  # the names of the modules the runtime loads


def is_generated(fn) -> bool:
    """Whether ``fn`` lives in a module s2s generated (``runtime.loader``), whose code calls ``rt`` and ``xp``."""
    return (getattr(fn, "__module__", None) or "").startswith(GENERATED_PREFIX)


def load(fn) -> FunctionSource:
    """The source of a live Python function (``def`` or ``lambda``): the code that runs when it is called,
    one statement per line (``statement_lines``).

    A function transformed by s2s (``s2s.grad(f)``) is read as the function it
    generated, so transforming it again differentiates generated code;
    ``jax.jit`` and ``jax.checkpoint`` are looked through; a decorator's wrapper
    is read as itself, never as the function it wraps (see ``wrappers``).
    The file's current text must be the code of the live function (``verify``).
    """
    from .lifted import Lifted
    from .written_back import WritesBack

    if isinstance(fn, Lifted):
        return fn.source()
    if isinstance(fn, WritesBack):
        return fn.source(load)
    if isinstance(fn, object_layouts.Held):
        return dataclasses.replace(load(fn.fn), held=fn.layouts)
    if isinstance(fn, variadic.Specialized):
        return dataclasses.replace(load(fn.fn), shape=fn.shape)
    if isinstance(fn, function_args.Bound):
        src = load(fn.fn)
        constants = {
            name: obj.value
            for name, obj in fn.fixed
            if isinstance(obj, function_args.Constant)
        }
        objects = {name: obj for name, obj in fn.fixed if name not in constants}
        node = _without_params(src, [name for name, _ in fn.fixed])
        return dataclasses.replace(
            src,
            node=_starting_with(src, node, constants),
            env={**src.env, **objects},
            fixed=tuple(objects),
        )
    fn = wrappers.readable(fn)
    code = fn.__code__
    path = inspect.getsourcefile(fn) or code.co_filename
    # read the file as it is now, not as linecache last saw it
    linecache.checkcache(path)
    module_text = "".join(_file_lines(path))
    file = parse_function_lines(path, fn)
    node = _locate(file, fn, code.co_firstlineno - file.line_offset, module_text)
    if node is None and file.line_offset:
        file = parse_file(path)
        node = _locate(file, fn, code.co_firstlineno, module_text)
    if node is None:
        raise S2SError(
            f"cannot find the definition of `{code.co_qualname}` in {path}:{code.co_firstlineno}",
            hint=f"if {path} changed since it was imported, restart Python or `importlib.reload` its module",
        )
    if not verify.matches(file, node, fn, module_text):
        raise S2SError(
            f"the text of `{code.co_qualname}` in {path}:{code.co_firstlineno} is not the code that runs: the file "
            "changed since it was imported (or the function was compiled from other text), and s2s would "
            "transform code the program never executes",
            origin_in(file, node),
            "restart Python, or `importlib.reload` the module, so that what runs is what the file says",
        )
    name = _lambda_name(file, node) if isinstance(node, cst.Lambda) else code.co_name
    node = statement_lines.written_out(node, file.positions)
    return FunctionSource(fn, name, node, file, _environment(fn), is_generated(fn))


def _without_params(src: FunctionSource, names) -> cst.CSTNode:
    """``src``'s ``def`` or ``lambda`` without the parameters ``names``: names of its environment now, which
    the desugaring passes read as the objects they are bound to (``config`` given ``Config()``).
    """
    params = src.node.params
    kept = {
        field: [p for p in getattr(params, field) if p.name.value not in names]
        for field in ("posonly_params", "params", "kwonly_params")
    }
    if not kept["kwonly_params"] and isinstance(params.star_arg, cst.ParamStar):
        kept["star_arg"] = (
            cst.MaybeSentinel.DEFAULT
        )  # (a bare ``*`` needs a keyword-only one after it)
    new = src.node.with_changes(params=params.with_changes(**kept))
    if src.node in src.file.positions:
        src.file.positions[new] = src.file.positions[src.node]
    return new


def _starting_with(src: FunctionSource, node, constants: dict) -> cst.CSTNode:
    """``node`` whose body starts with ``name = value`` for each of ``constants`` (parameters a call binds
    to a literal: ``def collect(x, acc=None)`` called without ``acc``), each line at its parameter's place.
    """
    if not constants:
        return node
    params = {p.name.value: p for p in iter_params(src.node.params)}
    lines = []
    for name, value in constants.items():
        line = cst.SimpleStatementLine(
            [
                cst.Assign(
                    [cst.AssignTarget(cst.Name(name))],
                    cst.parse_expression(repr(value)),
                )
            ]
        )
        if params[name] in src.file.positions:
            src.file.positions[line] = src.file.positions[params[name]]
        lines.append(line)
    new = node.with_changes(body=node.body.with_changes(body=[*lines, *node.body.body]))
    if node in src.file.positions:
        src.file.positions[new] = src.file.positions[node]
    return new


def iter_params(params: cst.Parameters):
    """Every named parameter of ``params``, in order."""
    return (*params.posonly_params, *params.params, *params.kwonly_params)


def _locate(file: ParsedFile, fn, line: int, module_text: str):
    name = fn.__code__.co_name
    candidates = []
    for node, pos in file.definitions:
        if name == "<lambda>" and type(node) is cst.Lambda and pos.start.line == line:
            candidates.append(node)
        elif type(node) is cst.FunctionDef and node.name.value == name:
            first = min(
                [
                    pos.start.line,
                    *(file.positions[d].start.line for d in node.decorators),
                ]
            )
            # code starts at the first decorator (each may span lines)
            if first <= line <= pos.start.line:
                candidates.append(node)
    # lambdas on one line: the one whose code this is (identical ones are one function)
    if len(candidates) > 1:
        same = [
            node for node in candidates if verify.matches(file, node, fn, module_text)
        ]
        return same[0] if same else candidates[0]
    return candidates[0] if candidates else None


def _lambda_name(file: ParsedFile, node: cst.Lambda) -> str:
    """A lambda is named after the variable it is assigned to (``f = lambda x: ...``), else ``anonymous``."""
    for candidate in file.positions:
        if (
            isinstance(candidate, cst.Assign)
            and candidate.value is node
            and len(candidate.targets) == 1
        ):
            target = candidate.targets[0].target
            if isinstance(target, cst.Name):
                return target.value
    return "anonymous"


@functools.lru_cache(maxsize=1 << 14)
def _cited(path: str, line: int) -> Origin | None:
    """The user's line that a generated module's comment about ``line`` cites (``# model.py:12  y = ...``),
    followed through generated code that cites generated code (a gradient read again for ``vmap``); None
    where there is none. A generated module's text never changes under its path (named by its hash).
    """
    if path not in loader.GENERATED:
        return None
    found = located.origin_of(path, line)
    if found.path in loader.GENERATED or not os.path.exists(found.path):
        return None
    return Origin(found.path, found.line, found.col, found.end_col, found.text)
