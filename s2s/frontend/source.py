"""Find a function's source: parse its file once with libcst and locate its definition.

Guarantees: ``load(fn)`` returns the ``FunctionDef`` (or a ``def`` made from a
lambda) with positions for every node, the file's path and lines, and the live
environment (globals, closure) that names in the body refer to.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import linecache
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..errors import Origin, S2SError, UnsupportedSyntax


@dataclass(frozen=True)
class ParsedFile:
    path: str
    text: str
    lines: tuple[str, ...]
    module: cst.Module
    positions: dict

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass(frozen=True)
class FunctionSource:
    """A user function's definition, with what its names refer to."""

    fn: object
    name: str
    node: cst.FunctionDef | cst.Lambda
    file: ParsedFile
    env: dict

    def origin(self, node: cst.CSTNode) -> Origin | None:
        return origin_in(self.file, node)

    @property
    def text(self) -> str:
        return self.file.module.code_for_node(self.node)


def origin_in(file: ParsedFile, node: cst.CSTNode) -> Origin | None:
    pos = file.positions.get(node)
    if pos is None:
        return None
    line = file.lines[pos.start.line - 1] if pos.start.line <= len(file.lines) else ""
    end_col = pos.end.column if pos.end.line == pos.start.line else len(line.rstrip("\n"))
    return Origin(file.path, pos.start.line, pos.start.column, end_col, line.rstrip("\n"))


@functools.lru_cache(maxsize=64)
def _parse(path: str, text: str) -> ParsedFile:
    try:
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    except cst.ParserSyntaxError as e:
        raise S2SError(f"{path}:{e.raw_line}:{e.raw_column}: cannot parse: {e.message}") from None
    positions = dict(wrapper.resolve(PositionProvider))
    return ParsedFile(path, text, tuple(text.splitlines()), wrapper.module, positions)


def parse_file(path: str) -> ParsedFile:
    lines = linecache.getlines(path)
    if not lines:
        linecache.checkcache(path)
        lines = linecache.getlines(path)
    if not lines:
        raise S2SError(f"cannot read the source of {path}")
    return _parse(path, "".join(lines))


def _environment(fn) -> dict:
    env = dict(vars(__import__("builtins")))
    env.update(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    return env


def load(fn) -> FunctionSource:
    """The source of a live Python function (``def`` or ``lambda``)."""
    fn = inspect.unwrap(fn)
    if not inspect.isfunction(fn):
        raise S2SError(
            f"s2s transforms Python functions defined in source; got {type(fn).__name__} {fn!r}"
        )
    path = inspect.getsourcefile(fn) or fn.__code__.co_filename
    file = parse_file(path)
    line = fn.__code__.co_firstlineno
    node = _locate(file, fn.__name__, line)
    if node is None:
        raise S2SError(f"cannot find the definition of `{fn.__name__}` in {path}:{line}")
    return FunctionSource(fn, fn.__name__, node, file, _environment(fn))


def _locate(file: ParsedFile, name: str, line: int):
    candidates = []
    for node, pos in file.positions.items():
        if name == "<lambda>" and isinstance(node, cst.Lambda) and pos.start.line == line:
            candidates.append(node)
        elif isinstance(node, cst.FunctionDef) and node.name.value == name:
            first = pos.start.line - len(node.decorators)
            if first <= line <= pos.start.line + len(node.decorators):
                candidates.append(node)
    if len(candidates) > 1 and name == "<lambda>":
        origin = origin_in(file, candidates[0])
        raise UnsupportedSyntax(
            "several lambdas on one line: s2s cannot tell which one to transform",
            origin,
            "define the function with `def`, or put each lambda on its own line",
        )
    return candidates[0] if candidates else None
