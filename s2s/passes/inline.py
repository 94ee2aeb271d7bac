"""Inline local functions, lambdas and ``decompose`` ops at their call sites.

Input and output are in normal form. Output: no calls to local functions and
no calls to ops of the ``decompose`` family (``xp.var``, ``rt.nn.gelu``: each
specialized to its constant arguments first, ``passes/specialize.py``); inlined statements cite the
call site's line, their variables keep their names where free (else get a
numbered one).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import textwrap
from dataclasses import replace

import libcst as cst

from .. import ir
from ..cstutil import int_literal, iter_nodes, literal, names_in, rewrite, substitute
from ..errors import S2SError, UnsupportedSyntax
from ..naming import Namer
from ..rules import op_named
from ..rules.vocabulary import user_spelling
from ..templates import bind
from ..transforms import simplify
from .anf import anf
from .control import control
from .dataflow import assigned, reads, substitute_reads, used_names
from .desugar import desugar
from .jumps import jumps
from .normal_form import eqn_of
from .specialize import NotConstant, constants, is_constant, specialize, tested


@functools.cache
def _definition(op_name: str, extra: int | None = None) -> ir.Function:
    """A ``decompose`` op's body, resolved (its ``if`` tests on constant parameters still in place).

    An op with ``*args`` is read at its call's shape (``extra`` items), like a user's variadic helper.
    """
    import dataclasses

    from ..frontend import comprehensions, starred
    from ..frontend.resolve import resolve
    from ..frontend.source import load
    from ..frontend.variadic import Shape, spread_star

    name = op_name.removeprefix("rt.").replace(".", "_")
    src = load(op_named(op_name).rule)
    if extra is not None:
        node = spread_star(src.node, Shape(extra))
        src = dataclasses.replace(src, node=node, shape=Shape(extra))
    return resolve(starred.desugar(comprehensions.desugar(src)), name=name).function


@functools.cache
def _decomposition(op_name: str, constants: tuple, extra: int | None) -> ir.Function:
    """The body specialized to the constant arguments its tests read, in normal form (loops over the
    items of its ``*args`` unrolled, as the pipeline unrolls them)."""
    fn = specialize(_definition(op_name, extra), dict(constants))
    return anf(control(jumps(desugar(fn))))


# parameters a decomposition may leave unread: how the library stores or checks, never what it computes
# (``dtype`` only sets a precision; ``out=`` is written by ``frontend.effects`` before)
HARMLESS = frozenset(
    {
        "out", "dtype", "copy", "inplace", "exact", "check_finite", "overwrite_a", "overwrite_b",
        "overwrite_input", "indices_are_sorted", "unique_indices", "bucket_size", "symmetrize_input",
    }
)  # fmt: skip


@functools.cache
def _unread(op_name: str) -> frozenset:
    """The parameters of a decomposition its body never reads."""
    op = op_named(op_name)
    tree = ast.parse(textwrap.dedent(inspect.getsource(op.rule)))
    body = next(n for n in tree.body if isinstance(n, ast.FunctionDef)).body
    read = {n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    return frozenset(p for p in op.params if p not in read and p not in HARMLESS)


def _refuse_ignored(op, bindings: dict, origin) -> None:
    """A value other than its default for a parameter the decomposition never reads (``np.gradient``'s
    ``edge_order=2``): a located error, never a result that ignores it."""
    for param in sorted(_unread(op.name)):
        passed = bindings.get(param)
        if passed is None:
            continue
        default = op.defaults.get(param)
        try:
            value = ast.literal_eval(ir.code(passed).strip())
        except (ValueError, SyntaxError):
            value = passed  # not a literal: never the default
        if value is default or (type(value) is type(default) and value == default):
            continue
        raise S2SError(
            f"`{user_spelling(op.name)}` with `{param}=` other than its default "
            f"({default!r}) is not supported: s2s's formula for it does not read `{param}`",
            origin,
            f"leave `{param}` out, or compute the value another way",
        )


def _callee(fn: ir.Function, value, origin=None, displays=None):
    """What the call ``value`` runs, inlined: a local function, or a decomposition specialized to its
    constant arguments (an argument naming a tuple display made before, ``cf = (c, True)`` of
    ``cho_factor``, is read as the display)."""
    if not isinstance(value, cst.Call):
        return None
    e = eqn_of(value)
    if e.kind == "call" and e.name in fn.locals:
        return fn.locals[e.name]
    op = op_named(("rt." if e.kind == "runtime" else "") + e.name)
    if e.kind in ("op", "runtime") and op is not None and op.family == "decompose":
        star = _star_parameter(op)
        try:  # arguments it does not take: an error naming the function as users spell it
            bindings = bind(op, e, origin)
        except S2SError as err:
            message = err.message.replace(f"`{e.name}`", f"`{user_spelling(op.name)}`")
            raise S2SError(message, origin) from None
        _refuse_ignored(op, bindings, origin)
        extra = None
        if (
            star is not None
        ):  # the number of arrays it is called with (none bound: a literal None)
            passed = bindings.get(star)
            extra = len(passed.elements) if isinstance(passed, cst.Tuple) else 0
        params = tested(_definition(op.name, extra))
        seen = {
            k: (displays or {}).get(v.value, v) if isinstance(v, cst.Name) else v
            for k, v in bindings.items()
        }
        try:
            return _decomposition(op.name, constants(params, seen), extra)
        except NotConstant as err:
            passed = bindings.get(err.param)
            hint = f"write `{err.param}` as a literal (True, None, ...) at the call"
            if isinstance(passed, cst.Name):
                hint += (
                    f": here it is `{passed.value}`, a variable (a helper's parameter too: s2s reads a "
                    "helper once for all its calls; give each value a call or a helper of its own)"
                )
            raise S2SError(
                f"`{user_spelling(op.name)}` needs its argument `{err.param}` as a constant: it "
                "chooses the formula",
                origin,
                hint,
            ) from None
    return None


def _star_parameter(op) -> str | None:
    """The name of the op's ``*args`` parameter, if it has one."""
    kinds = {p.kind: name for name, p in op.signature.parameters.items()}
    return kinds.get(inspect.Parameter.VAR_POSITIONAL)


def _bind(callee: ir.Function, call: cst.Call, origin):
    params = list(callee.params)
    bound = {}
    positional = [a.value for a in call.args if a.keyword is None]
    if len(positional) > len(params):
        raise S2SError(
            f"`{callee.name}` takes {len(params)} arguments, got {len(positional)}",
            origin,
        )
    for p, value in zip(params, positional):
        bound[p.name] = value
    for a in call.args:
        if a.keyword is not None:
            if a.keyword.value not in callee.param_names:
                raise S2SError(
                    f"`{callee.name}` has no parameter `{a.keyword.value}`", origin
                )
            bound[a.keyword.value] = a.value
    for p in params:
        if p.name not in bound:
            if p.default is None:
                raise S2SError(
                    f"`{callee.name}` is missing its argument `{p.name}`", origin
                )
            bound[p.name] = p.default
    return bound


class _ItemOfDisplay(cst.CSTTransformer):
    """``(c, True)[0]`` -> ``c``: a tuple argument read by a constant index (``cho_solve((c, lower), b)``);
    ``{"w": x}["w"]`` -> ``x``: a dict argument read by a constant key (``loss({"w": x})``).
    """

    def leave_Subscript(self, original, node):
        if isinstance(node.value, cst.Dict) and len(node.slice) == 1:
            return _entry_of_display(node)
        if not (isinstance(node.value, cst.Tuple) and len(node.slice) == 1):
            return node
        index = node.slice[0].slice
        key = int_literal(index.value) if isinstance(index, cst.Index) else None
        elements = node.value.elements
        if (
            key is None
            or any(isinstance(e, cst.StarredElement) for e in elements)
            or not -len(elements) <= key < len(elements)
        ):
            return node
        return elements[key].value


def _entry_of_display(node: cst.Subscript):
    """The entry of a dict display a constant key reads, else ``node``."""
    index = node.slice[0].slice
    key = _constant_key(index.value) if isinstance(index, cst.Index) else None
    elements = node.value.elements
    if key is None or not all(
        isinstance(e, cst.DictElement) and _constant_key(e.key) is not None
        for e in elements
    ):
        return node  # (a key the code computes may equal it)
    found = [e.value for e in elements if _constant_key(e.key) == key]
    return found[-1] if found else node


def _constant_key(node):
    """``("str", "w")`` or ``("int", 3)`` for a literal key, else None."""
    if isinstance(node, cst.SimpleString):
        return ("str", node.evaluated_value)
    value = int_literal(node)
    return None if value is None else ("int", value)


def _with_constants(callee: ir.Function, mapping: dict, fold=False) -> ir.Function:
    """``callee`` with its parameters that the call binds to immutable literals (``None``, ``True``, ``3``,
    ``(0, 1)``) read as those literals, so the calls it makes in turn are specialized to them (a nested
    decomposition's ``if range is None``); parameters it assigns keep their names. With ``fold`` (s2s's
    own decompositions, whose arithmetic is on numbers), what the literals make foldable is folded:
    ``var``'s ``n - ddof`` at ``ddof=0`` is ``n``."""
    rebound = assigned(callee.body)
    constant = {
        name: value
        for name, value in mapping.items()
        if name not in rebound and is_constant(value)
    }
    if not constant:
        return callee
    body = [substitute_reads(s, constant) for s in callee.body]
    if fold:
        body = [_folded(s) for s in body]
    return callee.with_body(body)


def _folded(stmt):
    if isinstance(stmt, (ir.Assign, ir.Return)):
        return replace(stmt, value=simplify.fold(stmt.value))
    return stmt


def _read_by_key(callee: ir.Function, name: str) -> bool:
    """Whether ``callee`` (its local functions included) subscripts ``name`` by other than a literal."""

    def bodies(fn):
        yield fn.body
        for stmt in ir.walk(fn.body):
            if isinstance(stmt, ir.Def):
                yield from bodies(stmt.function)

    for body in bodies(callee):
        for stmt in ir.walk(body):
            for node in iter_nodes(getattr(stmt, "value", None) or cst.Name("_")):
                if (
                    isinstance(node, cst.Subscript)
                    and isinstance(node.value, cst.Name)
                    and node.value.value == name
                    and not all(
                        isinstance(e.slice, cst.Index)
                        and _constant_key(e.slice.value) is not None
                        for e in node.slice
                    )
                ):
                    return True
    return False


def _substituted(value, mapping):
    return rewrite(substitute(value, mapping), _ItemOfDisplay())


def _default_value(node):
    return node if isinstance(node, cst.BaseExpression) else literal(node)


def inline(fn: ir.Function, namer: Namer | None = None) -> ir.Function:
    namer = namer or Namer(used_names(fn))
    out = []
    deferred = {}  # local functions that fail read alone -> the error
    # a name bound once to a tuple display so far (by inlined calls too) -> the display
    displays = {}
    rebound = _bound_more_than_once(fn.body)
    scanned = 0  # how many statements of ``out`` were looked at for displays
    for stmt in fn.body:
        for done in out[scanned:]:
            if (
                isinstance(done, ir.Assign)
                and isinstance(done.target, cst.Name)
                and isinstance(done.value, cst.Tuple)
                and done.target.value not in rebound
            ):
                displays[done.target.value] = done.value
        scanned = len(out)
        # a branch or loop body may call local functions too
        if isinstance(stmt, ir.Def):
            inner = stmt.function.with_body(stmt.function.body, locals=fn.locals)
            try:
                out.append(ir.Def(inline(inner, namer), stmt.origin))
            except S2SError as err:
                # read alone, its calls see its parameters as names; where every call of it is inlined
                # (with its literal arguments) it is not needed alone
                deferred[stmt.function.name] = err
            continue
        callee = (
            _callee(fn, stmt.value, stmt.origin, displays)
            if isinstance(stmt, ir.Assign)
            else None
        )
        if callee is None:
            out.append(stmt)
            continue
        mapping = {
            k: _default_value(v)
            for k, v in _bind(callee, stmt.value, stmt.origin).items()
        }
        for k, v in mapping.items():
            if isinstance(v, (cst.Tuple, cst.List, cst.Dict)) and _read_by_key(
                callee, k
            ):
                # a display read by a key the code computes (``params[k]`` in a loop over keys): named,
                # as every subscripted value is in normal form
                held = cst.Name(namer.fresh(f"_{k}"))
                out.append(ir.Assign(held, v, stmt.origin))
                mapping[k] = held
        # a local function sees its siblings; a decomposition (an op's body) sees none of the user's names,
        # and no variable of the callee takes a local function's name
        local = any(callee is f for f in fn.locals.values())
        seen = fn.locals if local else {}
        constant = _with_constants(callee, mapping, fold=not local)
        with _inlining(callee if local else None, stmt.origin):
            callee = inline(
                constant.with_body(constant.body, locals={**seen, **callee.locals}),
                Namer(used_names(callee) | set(seen)),
            )
        unassigned = set(callee.param_names)
        result = callee.body[-1].value
        if (
            isinstance(result, cst.Name)
            and result.value not in mapping
            and result.value in assigned(callee.body)
            and isinstance(stmt.target, cst.Name)
            and not _read_after_result(callee.body, result.value, mapping, stmt.target)
        ):
            # the callee's result takes the call site's name (not a value it reads from outside: ``lambda v:
            # w``), unless an argument reads that name and the callee reads the argument once the result is
            # bound (``m = tree_map(f, m, g)``: it reads the old ``m`` while it builds the new one)
            mapping[result.value] = stmt.target
        for inner in callee.body:
            if isinstance(inner, ir.Return):
                out.append(
                    ir.Assign(
                        stmt.target, _substituted(inner.value, mapping), stmt.origin
                    )
                )
                break
            if isinstance(inner, ir.Def):
                name = inner.function.name
                mapping.setdefault(name, cst.Name(namer.fresh(name)))
                renamed = substitute_reads(inner, mapping, apart=True)
                out.append(
                    ir.Def(
                        renamed.function.with_body(
                            renamed.function.body, name=mapping[name].value
                        ),
                        inner.origin,
                    )
                )
                continue
            value = _substituted(inner.value, mapping)
            for name in ir.target_names(inner.target):
                # a parameter assigned in the callee is a new variable, never the caller's argument
                if name not in mapping or name in unassigned:
                    mapping[name] = cst.Name(namer.fresh(name))
                    unassigned.discard(name)
            target = substitute(
                inner.target,
                {k: v for k, v in mapping.items() if isinstance(v, cst.Name)},
            )
            out.append(ir.Assign(target, value, stmt.origin))
    read = set().union(set(), *(reads(s) for s in ir.walk(out)))
    for name, err in deferred.items():
        if name in read:
            raise err
    return fn.with_body(_referenced_defs(fn, out, namer) + out, locals={})


# the local functions being written in place, innermost last, with the call that reached each: one
# reached again calls itself
_ACTIVE: list = []


@contextlib.contextmanager
def _inlining(local: ir.Function | None, origin):
    """Writing the local function ``local`` in place (None: a function of the module, whose recursion over
    static arguments ``program`` specializes): a located error where it is reached inside itself.
    """
    key = None if local is None else (local.name, local.origin)
    if key is not None and key in [k for k, _ in _ACTIVE]:
        # (where the function carries no position, the call that first reached it)
        known = [at for k, at in _ACTIVE if k == key and at is not None]
        origin = local.origin or origin or (known[0] if known else None)
        raise UnsupportedSyntax(
            f"`{local.name}` is a local function that calls itself: s2s writes local functions in place "
            "where they are called, which recursion never ends",
            origin,
            f"define `{local.name}` at module level, where s2s reads recursion over arguments known when "
            "it reads the code (a depth, a tree of tuples), or write the recursion as a loop",
        )
    if key is not None:
        _ACTIVE.append((key, origin))
    try:
        yield
    finally:
        if key is not None:
            _ACTIVE.pop()


def _read_after_result(body, result: str, mapping: dict, target: cst.Name) -> bool:
    """Whether ``body`` reads, at or after its first binding of ``result``, a parameter whose argument
    reads ``target`` (the call site's name, which ``result`` would take)."""
    params = {
        p
        for p, v in mapping.items()
        if isinstance(v, cst.CSTNode) and target.value in names_in(v)
    }
    if not params:
        return False
    first = next((i for i, s in enumerate(body) if result in assigned([s])), len(body))
    # (a block binding it, a loop or a branch, may read the argument after binding it)
    start = first if first < len(body) and ir.blocks_of(body[first]) else first + 1
    return any(params & reads(s) for s in ir.walk(list(body[start:])))


def _bound_more_than_once(body) -> set[str]:
    """Names bound by more than one statement of ``body`` (nested blocks included)."""
    seen, more = set(), set()
    for stmt in ir.walk(body):
        if isinstance(stmt, (ir.Assign, ir.For)):
            for name in ir.target_names(stmt.target):
                (more if name in seen else seen).add(name)
    return more


def _referenced_defs(fn: ir.Function, body: list, namer: Namer) -> list:
    """The local functions that ``body`` still names after inlining (handed to a call, not called), as ``Def``s.

    They stay where they are visible, so the code runs, and so activity sees
    what they read from the enclosing scope (``eqn_inputs``).
    """
    referenced = set().union(set(), *(reads(s) for s in ir.walk(body)))
    defs = []
    for name, local in fn.locals.items():
        if name in referenced:
            with _inlining(local, local.origin):
                inner = inline(
                    local.with_body(local.body, locals={**fn.locals, **local.locals}),
                    namer,
                )
            defs.append(ir.Def(inner.with_body(inner.body, name=name), local.origin))
    return defs
