"""The function form that passes and transforms share.

A ``Function`` is a name, parameters and a list of statements; each statement
holds libcst expressions and the ``Origin`` of the user's source it came
from. Until the ``control`` pass, statements may be compound (``If``, ``For``,
``While``, with ``Break``/``Continue`` inside loops, ``Return`` anywhere);
after it, bodies are flat: ``Assign``, ``Def`` (a branch or loop-body
function, itself flat) and one final ``Return``. ``to_cst`` prints any stage
back as ordinary Python, so the output of every pass is runnable (with
``xp`` and ``rt`` in scope).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from .errors import Origin

# what output statements (``print``, ``logging``) assign: a None that control flow carries, so a
# branch or loop that prints is never dropped as computing nothing (``passes.control``, ``simplify``)
OUTPUT_TOKEN = "_printed"


def is_output_token(name: str) -> bool:
    """``_printed`` and its renamings (``_printed_2``)."""
    return name == OUTPUT_TOKEN or name.startswith(OUTPUT_TOKEN + "_")


@dataclass(frozen=True)
class Assign:
    """``target = value``; ``target`` is a Name or a (nested) Tuple of Names."""

    target: cst.BaseExpression
    value: cst.BaseExpression
    origin: Origin | None = None


@dataclass(frozen=True)
class AugAssign:
    """``target <op>= value`` (removed by the desugar pass)."""

    target: cst.Name
    operator: cst.BaseAugOp
    value: cst.BaseExpression
    origin: Origin | None = None


@dataclass(frozen=True)
class Return:
    value: cst.BaseExpression
    origin: Origin | None = None


@dataclass(frozen=True)
class If:
    test: cst.BaseExpression
    body: tuple
    orelse: tuple
    origin: Origin | None = None


@dataclass(frozen=True)
class For:
    """``for target in iter``; ``target`` is a Name or a (nested) Tuple of Names."""

    target: cst.BaseExpression
    iter: cst.BaseExpression
    body: tuple
    origin: Origin | None = None


@dataclass(frozen=True)
class While:
    test: cst.BaseExpression
    body: tuple
    origin: Origin | None = None


@dataclass(frozen=True)
class Break:
    origin: Origin | None = None


@dataclass(frozen=True)
class Continue:
    origin: Origin | None = None


@dataclass(frozen=True)
class Def:
    """A local function made by s2s (a branch of a ``cond``, the body of a loop), printed where it stands."""

    function: Function
    origin: Origin | None = None


Stmt = Assign | AugAssign | Return | If | For | While | Break | Continue | Def


@dataclass(frozen=True)
class Param:
    name: str
    default: cst.BaseExpression | None = None
    # after a ``*``: a generated jvp's tangents, when a primal before them keeps its default
    keyword_only: bool = False


@dataclass(frozen=True)
class Function:
    """A function in s2s's form.

    ``origins`` maps expression nodes (by identity) to the user's source span
    they came from, so passes that split expressions keep precise locations.
    ``locals`` holds local functions and lambdas, by name, until inlined.
    ``docstring`` is emitted as the function's docstring.
    """

    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    origin: Origin | None = None
    origins: dict = field(default_factory=dict, compare=False)
    locals: dict = field(default_factory=dict, compare=False)
    docstring: str | None = None

    def with_body(self, body, **changes) -> Function:
        return replace(self, body=tuple(body), **changes)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


def blocks_of(stmt) -> tuple:
    """The statement lists nested directly in a compound statement."""
    if isinstance(stmt, If):
        return (stmt.body, stmt.orelse)
    if isinstance(stmt, (For, While)):
        return (stmt.body,)
    return ()


def walk(body):
    """Every statement of ``body``, nested blocks included (not inside ``Def``s), in source order."""
    for stmt in body:
        yield stmt
        for block in blocks_of(stmt):
            yield from walk(block)


def walk_branches(body):
    """The statements of ``body``, nested ``if`` blocks included, not those inside nested loops."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, If):
            yield from walk_branches(stmt.body)
            yield from walk_branches(stmt.orelse)


def target_names(target) -> list[str]:
    """Names bound by an assignment target (a Name or nested Tuple of Names)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in target_names(el.value)]
    return []


def origin_of(fn: Function, node: cst.CSTNode, default: Origin | None) -> Origin | None:
    """The user's source span of ``node``, or ``default`` when the node was made by s2s."""
    return fn.origins.get(node, default)


# --- printing -------------------------------------------------------------

_EMPTY_MODULE = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """Source text of a node."""
    return _EMPTY_MODULE.code_for_node(node)


def comment_for(origin: Origin) -> str:
    return f"# {origin.short}  {origin.text.strip()}"


def _shown(origin: Origin | None) -> Origin | None:
    """The line a comment cites: the user's own, also for code s2s generated from its generated code
    (``hessian``, ``vmap(grad)``), whose comments name the user's line that the read module cited.
    """
    return origin.cited or origin if origin is not None else None


def comment_group(stmt):
    """The statements of one comment block share this: the user's line they come from, and their phase."""
    shown = _shown(stmt.origin)
    return (shown.path, shown.line, stmt.origin.phase) if shown else None


def _block(body, comments) -> cst.IndentedBlock:
    lines = body_to_cst(body, comments)
    return cst.IndentedBlock(body=lines or [cst.SimpleStatementLine([cst.Pass()])])


def stmt_to_cst(stmt: Stmt, comments: bool = True) -> cst.BaseStatement:
    if isinstance(stmt, If):
        orelse = cst.Else(_block(stmt.orelse, comments)) if stmt.orelse else None
        return cst.If(stmt.test, _block(stmt.body, comments), orelse)
    if isinstance(stmt, For):
        return cst.For(stmt.target, stmt.iter, _block(stmt.body, comments))
    if isinstance(stmt, While):
        return cst.While(stmt.test, _block(stmt.body, comments))
    if isinstance(stmt, Break):
        return cst.SimpleStatementLine(body=[cst.Break()])
    if isinstance(stmt, Continue):
        return cst.SimpleStatementLine(body=[cst.Continue()])
    if isinstance(stmt, Def):
        return to_cst(stmt.function, comments)
    if isinstance(stmt, Assign):
        small = cst.Assign(targets=[cst.AssignTarget(stmt.target)], value=stmt.value)
    elif isinstance(stmt, AugAssign):
        small = cst.AugAssign(
            target=stmt.target, operator=stmt.operator, value=stmt.value
        )
    else:
        small = cst.Return(value=stmt.value)
    return cst.SimpleStatementLine(body=[small])


def body_to_cst(
    body, comments: bool = True, prelude=()
) -> list[cst.SimpleStatementLine]:
    """Statements as CST lines; a comment citing the user's line heads each block from one line."""
    lines = list(prelude)
    last = None
    for stmt in body:
        line = stmt_to_cst(stmt, comments)
        shown = _shown(stmt.origin)
        key = comment_group(stmt)
        if isinstance(stmt, Def):
            key = None  # a nested def carries its own comments; the next statement cites its line again
            if lines:
                line = line.with_changes(leading_lines=[cst.EmptyLine()])
        elif comments and stmt.origin is not None and key != last:
            leading = [cst.EmptyLine(comment=cst.Comment(comment_for(shown)))]
            if lines:
                leading.insert(0, cst.EmptyLine())
            line = line.with_changes(leading_lines=leading)
        last = key
        lines.append(line)
    return lines


def params_to_cst(params) -> cst.Parameters:
    """Parameters as generated code is called: positionally, each with its default where Python allows one
    (only when every later positional parameter has a default too: ``def h(a, *, d=2.0, e)`` gives
    ``h(a, d, e)``), then the keyword-only ones after a ``*`` with their defaults.
    """
    positional = [p for p in params if not p.keyword_only]
    keep, later_all_defaulted = [], True
    for p in reversed(positional):
        later_all_defaulted = later_all_defaulted and p.default is not None
        keep.append(later_all_defaulted)
    keep.reverse()
    keyword_only = [_param(p, True) for p in params if p.keyword_only]
    return cst.Parameters(
        params=[_param(p, default) for p, default in zip(positional, keep)],
        star_arg=cst.ParamStar() if keyword_only else cst.MaybeSentinel.DEFAULT,
        kwonly_params=keyword_only,
    )


def _param(p: Param, with_default: bool) -> cst.Param:
    default = p.default if with_default else None
    return cst.Param(
        cst.Name(p.name),
        default=default,
        equal=(
            cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""),
                whitespace_after=cst.SimpleWhitespace(""),
            )
            if default is not None
            else cst.MaybeSentinel.DEFAULT
        ),
    )


def to_cst(fn: Function, comments: bool = True, prelude=()) -> cst.FunctionDef:
    """The function as a ``def``; local functions not yet inlined print as nested ``def``s."""
    nested = [to_cst(local, comments) for local in fn.locals.values()]
    lines = nested + body_to_cst(fn.body, comments, prelude)
    if fn.docstring:
        doc = cst.SimpleStatementLine(
            body=[cst.Expr(cst.SimpleString(_docstring_literal(fn.docstring)))]
        )
        lines.insert(0, doc)
    return cst.FunctionDef(
        name=cst.Name(fn.name),
        params=params_to_cst(fn.params),
        body=cst.IndentedBlock(body=lines),
    )


def _docstring_literal(text: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return f'"""{text}"""'


def to_source(fn: Function, comments: bool = True) -> str:
    """The function as Python source (unformatted)."""
    return cst.Module(body=[to_cst(fn, comments)]).code
