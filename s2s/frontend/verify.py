"""Is the text s2s found for a function the code of the live function? (A file edited after import is not.)

``matches(file, node, fn)`` compiles the located definition's current text in
a context that reproduces the original's: the definition's lines exactly as in
the file (decorators included, indentation and string contents untouched), on
the same line numbers, inside the enclosing ``def``s and ``class``es that its
code's qualified name records (an enclosing ``def`` binds the function's free
variables, a ``class`` gives methods their name mangling and ``__class__``),
with the ``__future__`` flags of the original, below ``import`` statements
binding the names the file imports at module level (CPython compiles
``np.sum(x)`` differently when ``np`` is imported). It then compares the code
objects recursively: bytecode, constants (nested code objects compared the
same way), names, variable names, free and cell variables, argument counts
and flags. Line tables are not compared: moving a function does not change
what it computes. Defaults written as literals must equal the live
function's. Results are cached per code object and text.
"""

from __future__ import annotations
import __future__

import ast
import functools
import types

import libcst as cst

_FUTURE_FLAGS = functools.reduce(
    lambda a, b: a | b,
    (getattr(__future__, f).compiler_flag for f in __future__.all_feature_names),
    0,
)
_CO_NESTED = 0x10  # depends on where the definition sits, not on what it computes


def matches(file, node, fn, module_text: str) -> bool:
    """Whether ``node`` (a ``FunctionDef`` or ``Lambda`` of the parsed ``file``) compiles to ``fn.__code__``.

    ``module_text`` is the whole file's current text (for the names it imports).
    """
    text, first_line, col = _text(file, node)
    imports = _imported_names(module_text)
    same = _matches(
        fn.__code__, text, first_line, col, isinstance(node, cst.Lambda), imports
    )
    return same and _same_defaults(file.module, node.params, fn)


def _same_defaults(module: cst.Module, params: cst.Parameters, fn) -> bool:
    """Defaults are evaluated where the function is defined, not in its code: those written as literals
    must be the live function's (their count too)."""
    positional = [
        p.default
        for p in (*params.posonly_params, *params.params)
        if p.default is not None
    ]
    live = fn.__defaults__ or ()
    keyword = {
        p.name.value: p.default for p in params.kwonly_params if p.default is not None
    }
    live_keyword = fn.__kwdefaults__ or {}
    if len(positional) != len(live) or keyword.keys() != live_keyword.keys():
        return False
    pairs = [*zip(positional, live), *((keyword[k], live_keyword[k]) for k in keyword)]
    for node, value in pairs:
        try:
            written = ast.literal_eval(module.code_for_node(node))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue  # not a literal: evaluated when the file ran, not comparable here
        if isinstance(written, (list, dict, set)) and type(value) is type(written):
            continue  # a mutable default, changed in place by calls (``trace=[]``): still that default
        if not _same_const(written, value):
            return False
    return True


@functools.lru_cache(maxsize=64)
def _imported_names(module_text: str) -> tuple:
    """The names that ``import`` statements bind in the module's own scope (not in functions or classes)."""
    try:
        tree = ast.parse(module_text)
    except SyntaxError:
        return ()
    names, stack = set(), list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(
                (a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"
            )
        elif not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            stack.extend(
                n
                for n in ast.iter_child_nodes(node)
                if isinstance(n, (ast.stmt, ast.excepthandler, ast.match_case))
            )
    return tuple(sorted(names))


def _text(file, node) -> tuple[str, int, int]:
    """The node's text as the file has it now, its first line (the first decorator's) and its column."""
    pos = file.positions[node]
    start, end = pos.start.line + file.line_offset, pos.end.line + file.line_offset
    if isinstance(node, cst.FunctionDef) and node.decorators:
        start = min(
            start,
            *(file.positions[d].start.line + file.line_offset for d in node.decorators),
        )
    lines = list(file.lines[start - 1 : end])
    if not isinstance(node, cst.Lambda):
        return (
            "".join(lines),
            start,
            len(lines[0]) - len(lines[0].lstrip()) if lines else 0,
        )
    lines[-1] = lines[-1][: pos.end.column + file.col_offset]
    lines[0] = lines[0][pos.start.column + file.col_offset :]
    return "".join(lines), start, pos.start.column + file.col_offset


@functools.lru_cache(maxsize=1024)
def _matches(
    code: types.CodeType,
    text: str,
    first_line: int,
    col: int,
    is_lambda: bool,
    imports: tuple,
) -> bool:
    source = _in_context(code, text, first_line, col, is_lambda, imports)
    try:
        module = compile(
            source,
            code.co_filename,
            "exec",
            flags=code.co_flags & _FUTURE_FLAGS,
            dont_inherit=True,
        )
    except SyntaxError:
        return False
    found = [c for c in _codes(module) if c.co_name == code.co_name]  # outermost first
    found = [c for c in found if c.co_qualname == code.co_qualname] or found
    return len(found) >= 1 and _same(found[0], code)


def _in_context(
    code, text: str, first_line: int, col: int, is_lambda: bool, imports: tuple
) -> str:
    """``text`` inside the enclosing ``def``s and ``class``es of ``code.co_qualname``, starting on ``first_line``
    (or as near as the ``import`` line and the headers allow)."""
    parts = code.co_qualname.split(".")
    headers, free = [], [v for v in code.co_freevars if v != "__class__"]
    scopes = [
        (part, parts[i + 1] == "<locals>")
        for i, part in enumerate(parts[:-1])
        if part != "<locals>"
    ]
    last_def = max((i for i, (_, is_def) in enumerate(scopes) if is_def), default=None)
    # free variables but no enclosing def recorded: give them one
    if free and last_def is None:
        scopes.insert(0, ("_s2s_enclosing", True))
        last_def = 0
    if "__class__" in code.co_freevars and not any(not is_def for _, is_def in scopes):
        scopes.append(("_s2s_class", False))
    for i, (name, is_def) in enumerate(scopes):
        name = name if name.isidentifier() else "_s2s_enclosing"
        params = ", ".join(free) if i == last_def else ""
        headers.append(
            " " * i + (f"def {name}({params}):" if is_def else f"class {name}:")
        )
    if not is_lambda and col > 0 and not headers:
        # an indented definition at module level (under `if`, `try`, ...)
        headers.append("if 1:")
    depth = len(headers)
    if is_lambda:
        text = " " * depth + "(" + text + ")\n"
    elif col < depth:
        text = "".join(
            " " * depth + line if line.strip() else line
            for line in text.splitlines(True)
        )
    if imports:
        headers.insert(0, "import " + ", ".join(imports))
        depth += 1
    padding = "\n" * max(0, first_line - 1 - depth)
    return (
        padding
        + "".join(h + "\n" for h in headers)
        + text
        + ("" if text.endswith("\n") else "\n")
    )


def _codes(code):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _codes(const)


def _same(a: types.CodeType, b: types.CodeType) -> bool:
    if (
        a.co_code != b.co_code
        or a.co_names != b.co_names
        or a.co_varnames != b.co_varnames
        or a.co_freevars != b.co_freevars
        or a.co_cellvars != b.co_cellvars
        or (a.co_argcount, a.co_posonlyargcount, a.co_kwonlyargcount)
        != (b.co_argcount, b.co_posonlyargcount, b.co_kwonlyargcount)
        or (a.co_flags | _CO_NESTED) != (b.co_flags | _CO_NESTED)
        or a.co_name != b.co_name
        or len(a.co_consts) != len(b.co_consts)
    ):
        return False
    return all(_same_const(x, y) for x, y in zip(a.co_consts, b.co_consts))


def _same_const(x, y) -> bool:
    if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
        return (
            isinstance(x, types.CodeType)
            and isinstance(y, types.CodeType)
            and _same(x, y)
        )
    if type(x) is not type(y):
        return False
    if isinstance(x, (tuple, frozenset)):
        xs, ys = (
            (x, y)
            if isinstance(x, tuple)
            else (sorted(x, key=repr), sorted(y, key=repr))
        )
        return len(xs) == len(ys) and all(_same_const(a, b) for a, b in zip(xs, ys))
    if isinstance(x, (float, complex)):
        return repr(x) == repr(y)  # -0.0 is not 0.0; nan is nan
    return x == y


__all__ = ["matches"]
