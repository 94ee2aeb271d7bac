"""Local functions transformed where they are defined: ``jax.grad(inner)(W)``, ``jax.vmap(per)(xs)``,
``jax.value_and_grad(lambda w: np.sum((X @ w - y) ** 2))(w)``.

A transformation needs a function of its own, but ``inner`` is a ``def`` (or a
lambda) of the enclosing function that reads the enclosing function's
variables. It is lifted: ``Lifted`` stands for ``inner`` with every variable of
the enclosing function it reads made a parameter in front of its own, and the
transformation call becomes one of that function with those variables passed
where the call stands, which is what Python's closure reads there.
``lift(resolver, node)`` gives ``(lam, lifted)``: ``lam`` the lambda
``lambda w: inner(X, y, w)`` that the transformations of lambdas read
(``Calls._lambda_calling``), or None for a node that is not a local function.

A local function of an enclosing function, or one passed to a helper that
transforms it (``def gram(k, X): return jax.vmap(jax.vmap(k, ...), ...)(X, X)``
called as ``gram(lambda a, b: rbf(a, b, ls), X)``), is lifted where it is
defined, and the variables it reads there are passed by name where the
transformation stands; a name that means something else there (bound by the
function, or mentioned by the helper) is a located error.

Guarantees: the lifted function's body is the local function's own (its
positions are the user's lines, for errors); the local functions and wrapped
functions it reads are written in its body first; one that assigns a variable
of the enclosing scope (``nonlocal``) is a located error.
"""

from __future__ import annotations

import dataclasses
import inspect

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from ..cstutil import iter_nodes, names_in
from ..errors import S2SError, UnsupportedSyntax
from .source import FunctionSource
from .variadic import Standin


class Lifted(Standin):
    """A local function with the enclosing variables it reads as leading parameters: what s2s transforms.

    Its ``fn`` is the enclosing function, whose names, globals and cells freshness checks watch.
    """

    __defaults__ = __kwdefaults__ = None

    def __init__(
        self, outer: FunctionSource, name: str, node, free: tuple, moved: dict
    ):
        super().__init__(outer.fn)
        self.outer, self.free = outer, free
        self.__name__ = name
        self.__qualname__ = f"{outer.name}.<locals>.{name}"
        self.__code__ = outer.fn.__code__
        self.__globals__ = outer.fn.__globals__
        self.__closure__ = outer.fn.__closure__
        params = node.params
        lifted = params.with_changes(
            params=[cst.Param(cst.Name(v)) for v in free] + list(params.params)
        )
        self.node = node.with_changes(params=lifted)
        if isinstance(self.node, cst.FunctionDef):
            self.node = self.node.with_changes(decorators=())
        positions = {**outer.file.positions, **moved}
        if node in positions:
            positions[self.node] = positions[node]
        self.file = dataclasses.replace(outer.file, positions=positions)
        self.__signature__ = inspect.Signature(
            [
                inspect.Parameter(v, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for v in free
            ]
            + [
                inspect.Parameter(p.name.value, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for p in params.params
            ]
        )

    def source(self) -> FunctionSource:
        return FunctionSource(
            self,
            self.__name__,
            self.node,
            self.file,
            self.outer.env,
            self.outer.generated,
        )

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"`{self.__qualname__}` stands for a local function lifted by s2s: only its transformations run"
        )

    def __repr__(self):
        return f"<local function {self.__qualname__} reading {', '.join(self.free) or 'nothing'}>"


def lift(resolver, node):
    """``(lam, lifted)`` for ``node`` a local function's name or a lambda written in place, else None.

    A local function of an enclosing function (or one passed to a helper read as a local function,
    ``gram(k, X)``) is lifted where it is defined, the variables it reads passed from here, where they
    are the same names (``_readable``).
    """
    if (
        isinstance(node, cst.Name)
        and node.value not in resolver._local_defs
        and node.value in resolver._outer_defs
    ):
        definer, _ = resolver._outer_defs[node.value]
        lam, lifted = lift(definer, node)
        _readable(resolver, node.value, lifted.free, node)
        return lam, lifted
    if isinstance(node, cst.Name) and node.value in resolver._local_defs:
        name, local = node.value, resolver._local_defs[node.value]
    elif isinstance(node, cst.Lambda):
        name, local = "anonymous", node
    else:
        return None
    local = _keyword_defaults_read(local)
    params = local.params
    if (
        params.posonly_params
        or params.kwonly_params
        or isinstance(params.star_arg, (cst.Param, cst.ParamStar))
        or params.star_kwarg is not None
        or any(p.default is not None for p in params.params)
    ):
        resolver.fail(local.params, f"a transformed local function `{name}` with defaults, `*` or keyword-only "
                      "parameters", "give it parameters without defaults and pass every argument where it is called, or define it at "
                      "module level", UnsupportedSyntax)  # fmt: skip
    local, moved = _with_definitions(resolver, name, local)
    free = _free_names(resolver, name, local)
    lifted = Lifted(resolver.source, name, local, free, moved)
    own = [p.name.value for p in params.params]
    call = cst.Call(
        cst.Name(name),
        [cst.Arg(cst.Name(v)) for v in (*free, *own)],
    )
    lam = cst.Lambda(cst.Parameters(params=[cst.Param(cst.Name(v)) for v in own]), call)
    return lam, lifted


def _keyword_defaults_read(local):
    """A local ``def`` whose keyword-only parameters all have defaults (``functools.partial(convolve,
    w=w)``'s ``def convolve_partial(x, *, w=w)``: ``partials``), transformed and called with its positional
    arguments: those parameters bound to their defaults first in its body, no parameters of its own (a
    call giving one by keyword is then a located error, where it is bound)."""
    params = local.params
    if (
        not isinstance(local, cst.FunctionDef)
        or not params.kwonly_params
        or not all(p.default is not None for p in params.kwonly_params)
        or params.star_kwarg is not None
        or isinstance(params.star_arg, cst.Param)
    ):
        return local
    lines = [
        cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(p.name)], p.default)])
        for p in params.kwonly_params
        if not (isinstance(p.default, cst.Name) and p.default.value == p.name.value)
    ]  # (``w=w``: the enclosing ``w``, read as it is)
    return local.with_changes(
        params=params.with_changes(
            kwonly_params=(), star_arg=cst.MaybeSentinel.DEFAULT
        ),
        body=local.body.with_changes(body=[*lines, *local.body.body]),
    )


def _with_definitions(resolver, name, local):
    """``(local, moved)``: ``local`` with the definitions of the enclosing functions' local functions and
    wrapped functions it reads (``u_x = jax.grad(u, argnums=1)``, ``def u1(t): ...``; and those they read)
    written first in its body: a lifted function is a function of its own, and reads them as its own. A
    lambda that needs them is written as a ``def``. ``moved``: the positions of definitions parsed in
    another piece of the file (a helper's caller's)."""
    needed, todo = {}, [local]  # name -> its definition
    moved = {}  # the positions of definitions parsed elsewhere in the file
    while todo:
        for n in sorted(names_in(todo.pop()), key=str):
            if n == name or n in needed:
                continue
            if n in resolver._aliases or n in resolver._local_defs:
                needed[n] = _definition(resolver, n)
            elif (
                n in resolver._outer_defs
            ):  # an enclosing function's, or one passed to a helper
                needed[n] = _outer_definition(resolver, n, local, moved)
            else:
                continue
            todo.append(needed[n])
    if not needed:
        return local, {}
    positions = {**resolver.source.file.positions, **moved}

    def where(n):
        node = needed[
            n
        ]  # a ``def``, or ``n = <lambda or wrapped function>``: where its value is
        pos = positions.get(
            node if isinstance(node, cst.FunctionDef) else node.body[0].value
        )
        return (pos.start.line, pos.start.column) if pos is not None else (0, 0)

    lines = [needed[n] for n in sorted(needed, key=where)]
    if isinstance(local, cst.Lambda):
        returned = cst.Return(local.body)
        line = cst.SimpleStatementLine([returned])
        if local.body in positions:  # the lambda's body is where its ``return`` is
            moved.update(dict.fromkeys((returned, line), positions[local.body]))
        local = cst.FunctionDef(cst.Name(name), local.params, cst.IndentedBlock([line]))
    return (
        local.with_changes(
            body=local.body.with_changes(body=[*lines, *local.body.body])
        ),
        moved,
    )


def _definition(resolver, n):
    """The statement defining the enclosing function's local function or wrapped function ``n``."""
    node = resolver._local_defs.get(n)
    if isinstance(node, cst.FunctionDef):
        return node
    value = node if node is not None else resolver._aliases[n]
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(n))], value)])


def _outer_definition(resolver, n, local, positions: dict):
    """The definition of ``n``, a local function of an enclosing function (or of a helper's caller), to
    write in a lifted function of ``resolver``'s, the variables it reads readable here; its nodes'
    positions in ``resolver``'s file added to ``positions``. A global it reads that means something else
    here (a helper in another module) is a located error."""
    definer, _ = resolver._outer_defs[n]
    definition = definer._local_defs[n]
    free = _free_names(definer, n, definition)
    there, here = definer.source.env, resolver.source.env
    differ = sorted(
        g
        for g in names_in(definition) - {n, *free}
        if there.get(g, _NONE) is not here.get(g, _NONE)
    )
    if differ:
        resolver.fail(local, f"a transformed function here reads `{n}`, a local function of the caller, whose "
                      f"`{differ[0]}` means something else here", f"define `{n}` at module level and pass what "
                      "it reads as arguments, or define this helper in the caller's module",
                      UnsupportedSyntax)  # fmt: skip
    _readable(resolver, n, free, local)
    statement = _definition(definer, n)
    positions.update(_moved(definer.source.file, resolver.source.file, statement))
    return statement


_NONE = object()


def _moved(there, here, node) -> dict:
    """The positions of ``node``'s nodes, parsed in ``there``, as positions in ``here`` (the same file's
    lines, parsed from another line or indentation)."""
    lines = there.line_offset - here.line_offset
    cols = there.col_offset - here.col_offset

    def moved(p):
        return CodePosition(p.line + lines, p.column + cols)

    return {
        n: CodeRange(moved(there.positions[n].start), moved(there.positions[n].end))
        for n in iter_nodes(node)
        if n in there.positions
    }


def _readable(resolver, n, free, node):
    """Make the enclosing variables ``free`` that the local function ``n`` reads readable in ``resolver``'s
    function by their names; a located error where a name means something else here (the function, or
    one between it and ``n``'s, binds it; a helper mentions it)."""
    _, shadowed = resolver._outer_defs[n]
    clash = sorted(set(free) & shadowed)
    if clash:
        resolver.fail(node, f"a transformation of `{n}` here, which reads `{clash[0]}` where it is defined, "
                      f"where `{clash[0]}` names something else", f"give one of the two `{clash[0]}`s another "
                      f"name, or pass `{clash[0]}` to `{n}` as an argument", UnsupportedSyntax)  # fmt: skip
    resolver.locals |= set(free)


def _free_names(resolver, name, local) -> tuple:
    """The enclosing function's variables that ``local`` reads, in the order it first reads them."""
    from .resolve import _bound_names, _lines

    own = {p.name.value for p in local.params.params}
    if isinstance(local, cst.FunctionDef):
        own |= _bound_names(_lines(local.body))
        for stmt in iter_nodes(local.body):
            if isinstance(stmt, cst.Nonlocal):
                resolver.fail(stmt, f"`nonlocal` in the transformed local function `{name}`",
                              "return the new value instead", UnsupportedSyntax)  # fmt: skip
    read = names_in(local.body if isinstance(local, cst.Lambda) else local)
    functions = (
        resolver._local_fns.keys()
        | resolver._outer_fns.keys()
        | resolver._aliases.keys()
    )
    free = []
    for n in sorted(read - own, key=_first_use(local).get):
        if n in functions and n != name:
            resolver.fail(local, f"the transformed local function `{name}` reads `{n}`, a function of the "
                          "enclosing one", f"define `{name}` and `{n}` at module level and pass what they "
                          "read as arguments", UnsupportedSyntax)  # fmt: skip
        if n in resolver.locals and n != name:
            free.append(n)
    return tuple(free)


def _first_use(local) -> dict:
    """Name -> where it is first read in ``local`` (so the lifted parameters follow the code's order)."""
    order = {}
    for n in iter_nodes(local):
        if type(n) is cst.Name and n.value not in order:
            order[n.value] = len(order)
    return order


def of_local(resolver, node) -> bool:
    """Whether ``node`` is transformations (or a name bound to them) of a local function or a lambda."""
    from . import library

    while True:
        if isinstance(node, cst.Name) and node.value in resolver._aliases:
            node = resolver._aliases[node.value]
        elif isinstance(node, cst.Call) and node.args:
            if library.transform_maker(resolver._callee_object(node.func)) is None:
                return False
            node = node.args[0].value
        else:
            return isinstance(node, cst.Lambda) or (
                isinstance(node, cst.Name)
                and (
                    node.value in resolver._local_defs
                    or node.value in resolver._outer_defs
                )
            )


def transformed_chain(resolver, node, seen=frozenset()):
    """``jax.vmap(jax.grad(u1))`` or ``jax.grad(jax.grad(u1))`` of a local function ``u1`` (or a lambda, or a
    name a wrapped function of them is assigned to, ``u_tt = jax.grad(jax.grad(u1))``): ``(made, free)``,
    the transformations made of ``u1`` lifted, with their options moved past the enclosing variables it
    reads (``free``, passed first: ``argnums`` count on, ``in_axes`` are None for them); None when the
    innermost function is not local (a function of the program: ``Calls._made_transform``'s).
    """
    from . import library

    if isinstance(node, cst.Name) and node.value in resolver._aliases:
        if (
            node.value in seen
        ):  # ``g = jax.grad(g)``: a name rebound to a transform of itself
            return None
        return transformed_chain(
            resolver, resolver._aliases[node.value], seen | {node.value}
        )
    if not isinstance(node, cst.Call):
        lifting = lift(resolver, node)
        return None if lifting is None else (lifting[1], lifting[1].free)
    maker = library.transform_maker(resolver._callee_object(node.func))
    if maker is None or not node.args or node.args[0].keyword or node.args[0].star:
        return None
    inner = transformed_chain(resolver, node.args[0].value, seen)
    if inner is None:
        return None
    g, free = inner
    what = resolver.source.file.module.code_for_node(node.func)
    options = {
        (a.keyword.value if a.keyword else k): resolver._static_option(a.value, node)
        for k, a in enumerate(node.args[1:], 1)
    }
    try:
        names = list(inspect.signature(maker).parameters)
        options = {
            (names[k] if isinstance(k, int) else k): v for k, v in options.items()
        }
        own = len(inspect.signature(g).parameters) - len(free)
        if maker.__name__ == "vmap":
            axes = options.get("in_axes", 0)
            per = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,) * own
            options["in_axes"] = (None,) * len(free) + per
        else:  # grad, value_and_grad: ``argnums`` count the lifted function's own parameters
            argnums = options.get("argnums", 0)
            options["argnums"] = (
                argnums + len(free)
                if isinstance(argnums, int)
                else tuple(k + len(free) for k in argnums)
            )
        return maker(g, **options), free
    except S2SError as err:
        resolver.fail(node, err.message, err.hint, type(err))
    except (TypeError, ValueError, IndexError) as err:
        resolver.fail(node, f"`{what}(...)`: {err}", None, S2SError)
