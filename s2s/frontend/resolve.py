"""Resolve every name in a user function; turn its body into s2s's ``Function`` form.

Guarantees of the output:
- every call to an array op is spelled ``xp.<canonical>(...)`` (``np.tanh``,
  ``jnp.tanh``, ``math.tanh``, ``from numpy import tanh`` all become
  ``xp.tanh``), methods and attributes included (``x.sum(0)`` becomes
  ``xp.sum(x, 0)``, ``x.T`` becomes ``xp.transpose(x)``);
- calls to the user's own functions keep their names and are listed in
  ``helpers``; module-level constants keep their names and are listed in
  ``constants``; local ``def``s and lambdas are in ``Function.locals``;
- operators, literals, ``x.shape``-like attributes and static builtins
  (``len``, ``int``, ...) are kept as written.
"""

from __future__ import annotations

import builtins
import inspect
import types
from dataclasses import dataclass, field

import libcst as cst
import numpy as np

from .. import ir
from ..cstutil import call, dotted, int_literal, names_in, one_line
from ..custom import custom_rule
from ..errors import NameResolutionError, Origin, UnsupportedSyntax
from ..freshness import array_data, literal_data, user_object
from ..naming import Namer
from . import (
    at_updates,
    builtin_calls,
    effects,
    foreign,
    identity,
    index_tricks,
    library,
    output,
    spellings,
    tree_calls,
    variadic,
    windows,
    wrappers,
    written_back,
)
from .calls import Calls, is_literal_value, xp_attr
from .fence import is_append
from .scope import Scope
from .source import FunctionSource

STATIC_ATTRIBUTES = {"shape", "ndim", "size", "dtype"}
ATTRIBUTE_OPS = {
    "T": "transpose",
    "mT": "matrix_transpose",
    "real": "real",
    "imag": "imag",
    "flat": "ravel",  # (read: its items in C order)
}
ITERATION_BUILTINS = {"range", "enumerate", "zip", "reversed"}
_MISSING = object()  # (no builtin of that name: a global holding None is not one)
# the hint of a builtin used where s2s does not read it (``use ...``)
BUILTIN_INSTEAD = {
    name: f"`{name}(...)` where a loop or comprehension iterates it (`for ... in {name}(...):`); kept in a "
    "name, it is read when one loop iterates it and nothing it reads changes before"
    for name in ITERATION_BUILTINS
}


# what generated code calls the array namespace and the runtime
GENERATED_NAMES = (
    "xp",
    "rt",
)


@dataclass
class Resolved:
    """A resolved function and what it refers to outside itself, by module-level names from ``scope``."""

    function: ir.Function
    helpers: dict = field(default_factory=dict)  # name -> live function
    constants: dict = field(default_factory=dict)  # name -> value
    origins: dict = field(default_factory=dict)  # expression node -> Origin
    # constant name -> ``(module name, attribute)`` it was read from (a module-level name or a module's
    # attribute; not a closure's value): where a generated file checks the value it baked in
    owners: dict = field(default_factory=dict)
    # ``(module name, function qualname, parameter) -> value``: the literal defaults of helpers that calls
    # were written with (``act(h, 1.0)``)
    defaults: dict = field(default_factory=dict)
    scope: Scope = field(default_factory=lambda: Scope(dict.fromkeys(GENERATED_NAMES)))


def _guard(body, orelse):
    """The ``rt.raise_(...)`` of ``if test: raise E(message)`` (an ``if`` whose body only raises, with no
    ``else``), else None."""
    if orelse or len(body) != 1 or not isinstance(body[0], ir.Return):
        return None
    value = body[0].value
    if isinstance(value, cst.Call) and dotted(value.func) == "rt.raise_":
        return value
    return None


def _bound_names(statements) -> set[str]:
    """Names a block binds: assignment and loop targets, local ``def``s, nested blocks included."""
    names = set()
    for stmt in statements:
        if isinstance(stmt, cst.FunctionDef):
            names.add(stmt.name.value)
        elif isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        names.update(ir.target_names(t.target))
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    names.update(ir.target_names(small.target))
        else:
            if isinstance(stmt, cst.For):
                names.update(ir.target_names(stmt.target))
            for block in _blocks(stmt):
                names |= _bound_names(block)
    return names


def _lines(suite) -> list:
    """The statements of a block: an indented block's lines, or a one-line suite (``if c: x = 1``) itself."""
    return [suite] if isinstance(suite, cst.SimpleStatementSuite) else list(suite.body)


def _blocks(stmt) -> list:
    """The statement lists inside a compound statement (``elif`` chains included)."""
    blocks = [_lines(stmt.body)]
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.If):
        blocks += _blocks(orelse)
    elif orelse is not None:
        blocks.append(_lines(orelse.body))
    return blocks


def _params_of(node) -> list[cst.Param]:
    p = node.params
    return [*p.posonly_params, *p.params, *p.kwonly_params]


def _is_runtime(obj) -> bool:
    """The ``s2s.runtime`` package, which generated code calls as ``rt``."""
    return isinstance(obj, types.ModuleType) and obj.__name__ == "s2s.runtime"


def _is_namespace_line(stmt) -> bool:
    """``xp = rt.namespace(...)``: how a generated function picks its array namespace."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    return (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value == "xp"
    )


def class_constant(value) -> bool:
    """A value generated code reads as a constant: a literal, an array, data of them."""
    return (
        is_literal_value(value)
        or literal_data(value)
        or array_data(value)
        or isinstance(value, np.ndarray)
    )


def _class_constant(head, chain) -> bool:
    """Whether ``chain`` reads a constant a class of the program holds (``Layer.eps`` of ``eps = 1e-5``:
    an object's class attribute, ``local_objects``): read as a module value is, and watched so.
    """
    if not (
        isinstance(head, type) and not spellings.is_library(head) and len(chain) == 2
    ):
        return False
    return class_constant(getattr(head, chain[1], None))


class Resolver(Calls):
    """Resolves one function; in a generated module (``source.generated``) ``xp`` is the array
    namespace, ``rt.<name>`` a runtime call, and nested ``def``s (branches, loop bodies) stay where they stand.
    """

    def __init__(
        self,
        source: FunctionSource,
        enclosing: set[str] | None = None,
        result=None,
        renames=None,
        aliases=None,
        outer_fns=None,
        outer_defs=None,
    ):
        self.source = source
        self.result = result or Resolved(function=None)
        self.nested = (
            enclosing is not None
        )  # a local function, inlined where it is called
        self.locals = set(enclosing or ())
        self.origins = self.result.origins
        self._local_fns = {}
        # name -> its ``def`` or lambda, for transformations of it (``lifted``)
        self._local_defs = {}
        # ``treedef`` of ``leaves, treedef = tree_flatten(tree)`` -> the atom holding ``tree``
        self.treedefs = {}
        # element writes that ``out=`` arguments make, run before the statement holding them
        self._pending = []
        self._branches = (
            0  # how deep in ``if`` blocks (a branch that may not run) the resolver is
        )
        # local names of wrapped functions: ``h = jax.jit(g)``
        self._aliases = dict(aliases or {})
        self._reading_aliases: set = set()  # (``g = jax.grad(g)``: read once)
        node = source.node
        self.params = {p.name.value for p in _params_of(node)} - set(source.fixed)
        # placeholder name -> a function with ``*args``/``**kwargs``, named per call shape
        self._variadic = {}
        # generated functions of transformations made inside (``jax.vmap(residual)``): the signature a call
        # binds to, the user's function's with its defaults (the generated one keeps literal ones only)
        self._call_signatures = {}
        self.expansion = (
            variadic.Expansion.of(node, source.shape)
            if source.shape is not None
            else None
        )
        # ``args``, ``kwargs``
        packed = (
            set(self.expansion.prelude_names()) if self.expansion is not None else set()
        )
        if self.expansion is not None:
            self.params |= set(self.expansion.items + self.expansion.values)
        own = self.params | packed
        self._assigned = (
            set()
        )  # names the body assigns (a list it appends to must be one of them)
        if isinstance(node, cst.FunctionDef):
            rebound = self._assigned = _bound_names(_lines(node.body))
            own |= rebound
            for name in rebound & packed:
                self.fail(node.params, f"`{name}` (a `*`/`**` parameter) is assigned in the body",
                          f"give the new value another name: s2s passes `{name}` on as the arguments it received",
                          UnsupportedSyntax)  # fmt: skip
        self.locals |= own
        # the enclosing functions' local functions this one can call (unless it binds their names itself)
        self._outer_fns = {k: v for k, v in (outer_fns or {}).items() if k not in own}
        # and their definitions, to transform them here (``lifted``): name -> (the resolver of the function
        # defining it, the names that mean something else here than there)
        self._outer_defs = {
            k: (definer, shadowed | own)
            for k, (definer, shadowed) in (outer_defs or {}).items()
            if k not in own
        }
        if source.generated:
            self.locals.discard("xp")
        # the user's own variables named like generated code's ``xp``/``rt`` are renamed, never refused
        self.renames = dict(renames or {})
        namer = Namer(self.locals | set(self.renames.values()))
        for name in (
            sorted(own.intersection(GENERATED_NAMES)) if not source.generated else ()
        ):
            self.renames[name] = namer.fresh(name)

    # --- errors -------------------------------------------------------------
    def fail(self, node, message, hint=None, kind=NameResolutionError):
        raise kind(message, self.source.origin(node), hint)

    def mark(self, new, old):
        origin = self.source.origin(old)
        if origin is not None:
            self.origins[new] = origin
        return new

    # --- functions ------------------------------------------------------------
    def function(self, name: str | None = None) -> ir.Function:
        node = self.source.node
        expansion = self.expansion
        # at a call shape, ``*args``'s items follow the named positional parameters, ``**kwargs``'s values come last
        p = node.params
        fixed = set(self.source.fixed)  # bound to functions: names of the environment
        params = [
            *(
                self._param(q)
                for q in (*p.posonly_params, *p.params)
                if q.name.value not in fixed
            ),
            *(ir.Param(n) for n in (expansion.items if expansion else ())),
            *(self._param(q) for q in p.kwonly_params if q.name.value not in fixed),
            *(ir.Param(n) for n in (expansion.values if expansion else ())),
        ]
        if isinstance(node, cst.Lambda):
            value = self.expr(node.body)
            body = [
                *self._take_pending(),
                ir.Return(value, self.source.origin(node.body)),
            ]
            docstring = None
        else:
            body, docstring = self.block(_lines(node.body))
        # ``args = (args_0, ...)``, ``kwargs = {...}``: what the body reads
        if expansion is not None:
            body = [
                ir.Assign(cst.Name(n), value, self.source.origin(p))
                for n, value in expansion.prelude()
            ] + body
        local_fns = self._local_fns
        return ir.Function(
            name or self.source.name,
            tuple(params),
            tuple(body),
            self.source.origin(node),
            self.origins,
            local_fns,
            docstring,
        )

    def _param(self, param: cst.Param) -> ir.Param:
        # kept for readers of the module; a local function's default is a name bound where it is
        # defined (``local_defaults``), read at its inlined calls
        kept = param.default is not None and (
            _is_literal_node(param.default)
            or (self.nested and isinstance(param.default, cst.Name))
        )
        return ir.Param(
            self.renames.get(param.name.value, param.name.value),
            self.expr(param.default) if kept else None,
        )

    def block(self, statements, top=True):
        body, docstring = [], None
        for i, stmt in enumerate(statements):
            if self.source.generated and _is_namespace_line(stmt):
                continue
            if isinstance(stmt, cst.FunctionDef) and self.source.generated:
                body.append(
                    ir.Def(
                        self._nested(stmt.name.value, stmt), self.source.origin(stmt)
                    )
                )
                continue
            if isinstance(stmt, cst.FunctionDef):
                self._check_decorators(stmt)
                self._local(stmt.name.value, stmt)
                continue
            if isinstance(stmt, (cst.If, cst.For, cst.While)):
                compound = self.compound(stmt)
                body.extend(self._take_pending())
                body.append(compound)
                continue
            for small in stmt.body:
                if (
                    top
                    and i == 0
                    and isinstance(small, cst.Expr)
                    and isinstance(
                        small.value, (cst.SimpleString, cst.ConcatenatedString)
                    )
                ):
                    docstring = (
                        small.value.evaluated_value
                        if hasattr(small.value, "evaluated_value")
                        else None
                    )
                    continue
                out = self.statement(small, stmt)
                body.extend(self._take_pending())
                body.extend(out)
        return body, docstring

    def compound(self, stmt):
        if isinstance(stmt, cst.If):
            self._branches += 1
            try:
                if isinstance(stmt.orelse, cst.If):
                    orelse = (self.compound(stmt.orelse),)
                else:
                    orelse = (
                        tuple(self.block(_lines(stmt.orelse.body), top=False)[0])
                        if stmt.orelse
                        else ()
                    )
                body = tuple(self.block(_lines(stmt.body), top=False)[0])
            finally:
                self._branches -= 1
            guard = _guard(body, orelse)
            if guard is not None:  # ``if bad: raise E(message)``: checked, also on data
                raised = guard.args
                test = self.expr(stmt.test)
                return ir.Assign(
                    cst.Name(ir.OUTPUT_TOKEN),
                    call("rt.raise_if", test, *(a.value for a in raised)),
                    self._header(stmt, stmt.test),
                )
            return ir.If(
                self.expr(stmt.test), body, orelse, self._header(stmt, stmt.test)
            )
        body = tuple(self.block(_lines(stmt.body), top=False)[0])
        if isinstance(stmt, cst.While):
            test = self.expr(stmt.test)
            if self._pending:
                self.fail(
                    stmt.test,
                    "an `out=` argument or a `jax.lax` loop or branch in a `while` test",
                    "compute it in a variable, before the loop and again at the end of its body",
                    UnsupportedSyntax,
                )
            return ir.While(test, body, self._header(stmt, stmt.test))
        return ir.For(
            self.target(stmt.target),
            self._iterable(stmt.iter),
            body,
            self._header(stmt, stmt.iter),
        )

    def _header(self, stmt, last):
        """The origin of a compound statement's first line (``if c:``), not its whole block."""
        origin = self.source.origin(stmt)
        end = self.source.origin(last)
        if origin is None or end is None:
            return origin
        return Origin(
            origin.path,
            origin.line,
            origin.col,
            end.end_col if end.line == origin.line else len(origin.text),
            origin.text,
        )

    def _is_builtin_call(self, node, name: str) -> bool:
        """``node`` calls Python's builtin ``name`` (not a name the program binds)."""
        return (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == name
            and name not in self.locals
            and self.source.env.get(name, getattr(builtins, name))
            is getattr(builtins, name)
        )

    def _iterable(self, node):
        """A loop's iterable; ``range``, ``enumerate``, ``zip`` and ``reversed`` are kept by name."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            name = node.func.value
            if (
                name in ITERATION_BUILTINS
                and name not in self.locals
                and self.source.env.get(name, getattr(builtins, name))
                is getattr(builtins, name)
            ):
                if (
                    any(a.keyword is not None for a in node.args)
                    and name != "enumerate"
                ):
                    self.fail(
                        node,
                        f"keyword arguments to `{name}` are not supported",
                        None,
                        UnsupportedSyntax,
                    )
                for a in node.args:
                    if a.star:
                        self.fail(
                            a,
                            f"`{a.star}` argument unpacking in a call of `{name}`",
                            "pass the sequences one by one",
                            UnsupportedSyntax,
                        )
                args = [
                    (
                        self._iterable(a.value)
                        if name in ("enumerate", "zip", "reversed")
                        else self.expr(a.value)
                    )
                    for a in node.args
                ]
                kw = [
                    cst.Arg(self.expr(a.value), keyword=a.keyword)
                    for a in node.args
                    if a.keyword is not None
                ]
                pos = [cst.Arg(v) for v, a in zip(args, node.args) if a.keyword is None]
                return self.mark(cst.Call(cst.Name(name), pos + kw), node)
        return self.expr(node)

    def _nested(self, name, node) -> ir.Function:
        sub = FunctionSource(
            self.source.fn,
            name,
            node,
            self.source.file,
            self.source.env,
            self.source.generated,
            handed_back=self.source.handed_back,
        )
        return Resolver(
            sub,
            self.locals,
            self.result,
            self.renames,
            self._aliases,
            {**self._outer_fns, **self._local_fns},
            self.visible_defs(),
        ).function(name)

    def visible_defs(self) -> dict:
        """The local functions' definitions this function sees, for a function it encloses."""
        own = {n: (self, frozenset()) for n in self._local_defs}
        return {**self._outer_defs, **own}

    def _local(self, name, node):
        self._local_defs[name] = node
        self._local_fns[name] = self._nested(name, node)

    def _output(self, node: cst.Call) -> cst.Call | None:
        """``rt.debug_print(...)``/``rt.log(...)`` for a ``print``/``logging`` call, else None."""
        chain = self._chain(node.func)
        obj = self._object(chain) if chain is not None else None
        if chain == ("print",) and obj is None:
            obj = builtins.print
        kind = output.kind_of(obj)
        if kind is None:
            return None
        return self.mark(output.statement(self, node, kind), node)

    def _check_not_function(self, item) -> None:
        """An ``append`` of a local function (``predictors.append(predict)``): a list of functions made at
        run time, which s2s cannot call by their names."""
        if isinstance(item, cst.Lambda) or (
            isinstance(item, cst.Name) and item.value in self._local_fns
        ):
            self.fail(
                item,
                "a local function appended to a list (a list of functions built at run time): s2s calls "
                "functions by their names",
                f"keep what the functions compute instead (append `{ir.code(item)}(...)`, the values), or "
                "list the functions once in a display (`fs = [f, g]`), which s2s reads by their names",
                UnsupportedSyntax,
            )

    def _check_own_list(self, name: cst.Name) -> None:
        """An ``append`` grows a list this function made: s2s computes lists as values, so an append to
        a parameter's or an enclosing function's list would be lost to the code that reads it.
        """
        if (
            name.value in self._assigned
            or (self.source.name, name.value) in self.source.handed_back
        ):
            return
        fn, lst = self.source.name, name.value
        if lst in self.params:
            where, hint = (
                "a parameter",
                f"append to a new list made in `{fn}` (`{lst}_new = []`), and return it if the caller reads it",
            )
        else:
            where, hint = (
                "a list of the enclosing scope",
                f"return the value from `{fn}` and append it where `{lst}` is made",
            )
        self.fail(
            name,
            f"`{lst}.append` changes {where}, made outside `{fn}`",
            hint,
            UnsupportedSyntax,
        )

    def statement(self, small, line):
        origin = self.source.origin(line)
        if isinstance(small, cst.Pass):
            return []
        if isinstance(small, cst.Break):
            return [ir.Break(origin)]
        if isinstance(small, cst.Continue):
            return [ir.Continue(origin)]
        if isinstance(small, cst.Expr) and is_append(small):
            self._check_own_list(small.value.func.value)
            self._check_not_function(small.value.args[0].value)
            lst = self.expr(small.value.func.value)
            call = cst.Call(
                cst.parse_expression("rt.append"),
                [cst.Arg(lst), cst.Arg(self.expr(small.value.args[0].value))],
            )
            return [
                ir.Assign(cst.Name(lst.value), self.mark(call, small.value), origin)
            ]
        if isinstance(small, cst.Assert):
            checked = self.mark(output.assertion(self, small), small)
            return [ir.Assign(cst.Name(ir.OUTPUT_TOKEN), checked, origin)]
        if isinstance(small, cst.Expr) and output.is_output_statement(small):
            shown = self._output(small.value)
            if shown is not None:
                return [ir.Assign(cst.Name(ir.OUTPUT_TOKEN), shown, origin)]
            if not effects.is_effect(small.value):
                self.fail(
                    small,
                    "an output call s2s cannot identify (its value is discarded)",
                    "call `print`, `jax.debug.print`, `logging.info` or a module-level logger "
                    "(`logger = logging.getLogger(__name__)`; `logger.info(...)`)",
                    UnsupportedSyntax,
                )
        # a string on its own line (a docstring a rewrite moved, a comment as a string): no effect
        if isinstance(small, cst.Expr) and isinstance(
            small.value, (cst.SimpleString, cst.ConcatenatedString)
        ):
            return []
        # an in-place write (the fence allows no other expression statement)
        if isinstance(small, cst.Expr):
            return self.effect(small.value, origin)
        if isinstance(small, cst.Raise):
            return [ir.Return(self.mark(output.raising(self, small), small), origin)]
        if isinstance(small, cst.Return):
            if small.value is None:
                self.fail(
                    small,
                    "`return` without a value",
                    "return the value to transform",
                    UnsupportedSyntax,
                )
            return [ir.Return(self.expr(small.value), origin)]
        if isinstance(small, cst.AugAssign):
            return [
                ir.AugAssign(
                    self.target(small.target),
                    small.operator,
                    self.expr(small.value),
                    origin,
                )
            ]
        if isinstance(small, cst.AnnAssign):
            if small.value is None:
                return []
            return [
                ir.Assign(self.target(small.target), self.expr(small.value), origin)
            ]
        if isinstance(small, cst.Assign):
            raveled = tree_calls.ravel_assignment(self, small, origin)
            if raveled is not None:  # ``flat, unravel = ravel_pytree(params)``
                return raveled
            flattened = tree_calls.flatten_assignment(self, small, origin)
            if flattened is not None:  # ``leaves, treedef = tree_flatten(params)``
                return flattened
            maker = (
                self._callee_object(small.value.func)
                if isinstance(small.value, cst.Call)
                else None
            )
            # a wrapper or a transformation made here (``f = jax.vmap(g, in_axes=...)``)
            wrapped = maker is not None and (
                library.wrapper_maker(maker) or library.transform_maker(maker)
            )
            if (
                wrapped
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                # ``step = jax.jit(update)``, ``f = jax.vmap(g)``: called later
                if library.wrapper_maker(maker) != "partial":
                    self._aliases[small.targets[0].target.value] = small.value
                    return []
                # ``g = partial(h, a)``: the arguments it binds, read now, as Python reads them
                held, args = [], []
                for k, a in enumerate(small.value.args):
                    if k == 0 or not names_in(a.value) & self.locals:
                        # the function, a literal, a module-level value: the same when called
                        args.append(a)
                        continue
                    name = Namer(self.locals | set(self.renames.values())).fresh(
                        f"{small.targets[0].target.value}_arg"
                    )
                    self.locals.add(name)
                    held.append(ir.Assign(cst.Name(name), self.expr(a.value), origin))
                    args.append(a.with_changes(value=cst.Name(name)))
                self._aliases[small.targets[0].target.value] = small.value.with_changes(
                    args=args
                )
                return [*self._take_pending(), *held]
            if isinstance(small.value, cst.Lambda):
                if len(small.targets) != 1 or not isinstance(
                    small.targets[0].target, cst.Name
                ):
                    self.fail(
                        small,
                        "a lambda must be assigned to one name",
                        None,
                        UnsupportedSyntax,
                    )
                self._local(small.targets[0].target.value, small.value)
                return []
            value = self.expr(small.value)
            if len(small.targets) == 1 and self.lax_bound(
                self.target(small.targets[0].target), value
            ):
                return []
            # ``a = b = v``: one value under both names (Python binds them left to right)
            first, *others = [self.target(t.target) for t in small.targets]
            if others and not isinstance(first, cst.Name):  # ``u[0] = u[-1] = 0.0``
                held = value
                if not isinstance(value, (cst.Name, cst.Integer, cst.Float)):
                    held = cst.Name(self.lax_namer().fresh("chained"))
                    self.locals.add(held.value)
                    out = [ir.Assign(held, value, origin)]
                else:
                    out = []
                return out + [ir.Assign(t, held, origin) for t in (first, *others)]
            out = [ir.Assign(first, value, origin)]
            # ``x1 = x2 = 0.0``: a number each (no array that names share)
            number = int_literal(value) is not None or isinstance(value, cst.Float)
            for target in others:
                out.append(ir.Assign(target, value if number else first, origin))
            return out
        self.fail(
            small,
            f"`{type(small).__name__}` statement is not supported",
            None,
            UnsupportedSyntax,
        )

    def target(self, node):
        # an element write ``x[i] = v``: the desugar pass makes it functional
        if isinstance(node, cst.Subscript):
            self._written_through_a_copy(node)
            # ``y[i:i + 3] = v``: the window's positions (``frontend/windows.py``)
            return windows.target(self, node) or self._Subscript(node)
        if isinstance(node, cst.Name):
            return cst.Name(self.renames.get(node.value, node.value))
        if isinstance(node, (cst.Tuple, cst.List)):
            return cst.Tuple(
                [cst.Element(self.target(el.value)) for el in node.elements]
            )
        self.fail(node, "unsupported assignment target", None, UnsupportedSyntax)

    # --- expressions --------------------------------------------------------------
    def expr(self, node):
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            self.fail(
                node,
                f"`{type(node).__name__}` expressions are not supported",
                None,
                UnsupportedSyntax,
            )
        return method(node)

    def _literal(self, node):
        return node.deep_clone()

    _Integer = _Float = _Imaginary = _SimpleString = _ConcatenatedString = _Ellipsis = (
        _literal
    )

    def _Name(self, node):
        name = node.value
        if name in self.treedefs:
            self.fail(
                node,
                f"`{name}`, a tree structure, is used other than by `tree_unflatten`",
                f"rebuild the tree with `jax.tree_util.tree_unflatten({name}, leaves)`, or use "
                "`jax.tree_util.tree_map`",
            )
        if name in self._aliases:
            self.fail(
                node,
                f"`{name}`, a wrapped function, is used as a value",
                "call it, or call the function it wraps",
            )
        if name in self.locals or name in ("True", "False", "None"):
            return cst.Name(self.renames.get(name, name))
        if name not in self.source.env:
            if _assigned_in_source(self.source.fn, name):
                # (``if mode == "a": y = ...`` given another mode: Python's ``UnboundLocalError`` here)
                self.fail(
                    node,
                    f"`{name}` has no value here: the lines that assign it are in branches not taken "
                    "(their tests decided where the code is read: Python's UnboundLocalError)",
                    f"assign `{name}` on every path (an `else:` that raises or sets a default)",
                )
            self.fail(
                node,
                f"name `{name}` is not defined",
                "define it, or pass it as an argument",
            )
        return self.mark(self.value(self.source.env[name], (name,), node), node)

    def value(self, obj, path, node):
        """The expression for a non-local object reached by the attribute chain ``path``.

        ``np.tanh`` -> ``xp.tanh``; ``layers.dense`` or ``dense`` (a user function)
        -> ``dense``, a helper; ``np.pi`` -> ``xp.pi``; a user module's literal
        constant -> its name, a constant of the generated module.
        """
        name = path[-1]
        dotted_name = ".".join(path)
        if len(path) > 1 and _is_runtime(self.source.env.get(path[0])):
            return cst.parse_expression("rt." + ".".join(path[1:]))
        if isinstance(obj, types.ModuleType):
            return cst.Name(path[0]) if len(path) == 1 else xp_attr(".".join(path[1:]))
        # a library function by identity: ``jax.nn.relu`` -> ``rt.nn.relu``, ``jax.lax.exp`` -> ``xp.exp``;
        # it wins over its array-module name (``jnp.polydiv`` -> ``rt.polydiv``: JAX's, not NumPy's)
        spelled = identity.spelling(obj)
        if spelled is not None:
            return cst.parse_expression(spelled)
        op = spellings.canonical_op(obj, tuple(path[1:]) if len(path) > 1 else ())
        if op is not None:
            return xp_attr(op)
        rule = custom_rule(obj)
        # ``jax.nn.relu``: JAX's code, not the user's
        if rule is not None and spellings.is_library(rule.fun):
            return self.refuse_library(node, path, rule.fun)
        # a custom_jvp / custom_vjp function: a helper whose derivative is the user's rule
        if rule is not None:
            return cst.Name(self.helper(rule.name, obj))
        builtin = len(path) == 1 and getattr(builtins, name, _MISSING) is obj
        if (
            callable(obj)
            and not isinstance(obj, type)
            and not spellings.is_library(obj)
            and not builtin
        ):
            # what runs when ``obj`` is called (a decorator's wrapper is itself)
            found = wrappers.classify(obj, called=True)
            # ``df = s2s.grad(f)``: its generated code is a helper
            if isinstance(found, wrappers.Generated):
                made, obj = found.obj, found.obj.s2s_generated_function
                if not made.binding.partial_arguments and not made.binding.variadic:
                    self._call_signatures[id(obj)] = made.__signature__
            # ``jax.jit(f)``, ``jax.checkpoint(f)``, ``@s2s.transform``
            elif isinstance(found, wrappers.Through):
                return self.value(found.inner, path, node)
            elif isinstance(found, wrappers.Partial):
                self.fail(
                    node,
                    f"`{dotted_name}` is a functools.partial object, used here as a value",
                    "call it where it is used",
                )
            elif isinstance(found, wrappers.Unsupported):
                self.fail(
                    node,
                    f"`{dotted_name}` is {found.what}",
                    found.hint.replace("{api}", "s2s.grad"),
                )
        owner = self._module_of(path) if len(path) > 1 else None
        if owner is not None and spellings.is_array_module(owner):
            spelled = spellings.constant_spelling(owner, name)
            if spelled is not None:
                return cst.parse_expression(spelled)
            return self.refuse_library(node, path, obj)
        if callable(obj) and spellings.is_library(obj) and not isinstance(obj, type):
            return self.refuse_library(node, path, obj)
        if isinstance(obj, written_back.WritesBack):
            return cst.Name(self.helper(name, obj))
        if inspect.isfunction(obj):
            # a lambda: its variable's name
            return cst.Name(
                self.helper(name if obj.__name__ == "<lambda>" else obj.__name__, obj)
            )
        if (
            len(path) == 1
            and name in spellings.STATIC_BUILTINS
            and obj is getattr(builtins, name, None)
        ):
            return cst.Name(name)
        if (
            len(path) == 1 and obj is builtins.sorted
        ):  # of a dict's keys, decided when traced
            return cst.parse_expression("rt.sorted_keys")
        if len(path) == 1 and getattr(builtins, name, _MISSING) is obj:
            instead = BUILTIN_INSTEAD.get(name, "a NumPy function")
            self.fail(
                node, f"Python's builtin `{name}` is not supported", f"use {instead}"
            )
        if (
            is_literal_value(obj)
            or literal_data(obj)
            or array_data(obj)
            or isinstance(obj, complex)
            or hasattr(obj, "__array_namespace__")
            or hasattr(obj, "__array__")
            or (
                isinstance(obj, type)
                and issubclass(obj, tuple)
                and hasattr(obj, "_fields")
            )
            or _frozen_dataclass(obj)
        ):  # (a NamedTuple class: what ``rt.record`` makes, in generated code read again; a frozen
            # dataclass instance: a configuration, ``def forward(params, x, cfg=CFG)``)
            unique = self.result.scope.name(
                name, obj, self.locals | set(self.renames.values())
            )
            self.result.constants[unique] = obj
            found = self._owner(path)
            if found is not None:
                self.result.owners[unique] = found
            return cst.Name(unique)
        if owner is not None:
            self.fail(
                node,
                f"`{dotted_name}` comes from `{getattr(owner, '__name__', path[0])}`, which s2s does not read",
                "s2s transforms NumPy, jax.numpy and math ops and your own functions: write it with NumPy ops",
            )
        if isinstance(obj, type) and not spellings.is_library(obj):
            self.fail(
                node,
                f"`{dotted_name}`, a class of your program, used where s2s cannot write its objects as "
                "names of the function",
                "s2s reads an object made in the function (`layer = Dense(W, b)`) as its attributes and "
                "methods when its `__init__` only assigns `self.attribute = ...` (or calls such classes), "
                "its methods are plain `def`s (`@property` and `@staticmethod` too), and the function reads "
                "it only by attribute, method or call: not handed whole to a helper, returned, or rebound; "
                "else make it outside the function and pass its arrays as arguments",
            )
        self.fail(
            node,
            f"`{name}` refers to {type(obj).__name__} {_short_repr(obj)}, which s2s cannot transform",
            "pass it as an argument, or use a NumPy function",
        )

    def refuse_library(self, node, path, obj):
        """A library function that is not an op s2s knows: a located error, with what to write instead, unless
        it is JAX library code called right here, which becomes ``rt.foreign``'s callable (``foreign``).
        """
        found = foreign.callee(self, node, path)
        if found is not None:
            return found
        owner = self._object(path[:-1]) if len(path) > 1 else None
        where = f"comes from `{owner.__name__}`, which s2s does not read" if isinstance(owner, types.ModuleType) else (
            f"({library.describe(obj)}) is not supported"
        )  # fmt: skip
        self.fail(node, f"`{'.'.join(path)}` {where}", library.hint(obj))

    def helper(self, name: str, fn) -> str:
        """The module-level name of the user function ``fn`` (``name_2`` when another function took ``name``).

        A function with ``*args``/``**kwargs`` gets a placeholder: each call names it at its shape (``_bind_helper``).
        """
        if inspect.isfunction(fn) and any(
            variadic.variable_parameters(inspect.signature(fn, follow_wrapped=False))
        ):
            placeholder = name
            while self._variadic.get(placeholder, fn) is not fn:
                placeholder += "_"
            self._variadic[placeholder] = fn
            return placeholder
        unique = self.result.scope.name(
            name, fn, self.locals | set(self.renames.values()), function=True
        )
        self.result.helpers[unique] = fn
        return unique

    def _object(self, path):
        """The object a chain of non-local names reaches (None where an attribute is missing)."""
        obj = self.source.env.get(path[0])
        for part in path[1:]:
            obj = getattr(obj, part, None)
        return obj

    def _library_op(self, chain) -> str | None:
        """The spelling of the op a chain of names reaches from a library object (not a module), or None."""
        head = self.source.env.get(chain[0])
        if chain[0] in self.locals or head is None or not spellings.is_library(head):
            return None
        return identity.spelling(self._object(chain))

    def _owner(self, path) -> tuple[str, str] | None:
        """``(module name, attribute)`` holding the constant that ``path`` reads: a module-level name of
        the function's own module or of a module it reads, or an attribute of one (``cfg.scale``, dotted);
        None for a closure's value."""
        head = self.source.env.get(path[0])
        if isinstance(head, types.ModuleType):
            rest = list(path[1:])
            while len(rest) > 1 and isinstance(
                getattr(head, rest[0], None), types.ModuleType
            ):
                head = getattr(head, rest.pop(0))
            return head.__name__, ".".join(rest)
        fn = self.source.fn
        code = getattr(fn, "__code__", None)
        names = getattr(fn, "__globals__", None)
        if code is None or names is None or path[0] in code.co_freevars:
            return None
        if names.get(path[0], _MISSING) is not head or "__name__" not in names:
            return None
        return names["__name__"], ".".join(path)

    def _module_of(self, path):
        obj = self.source.env.get(path[0])
        for part in path[1:-1]:
            obj = getattr(obj, part, None)
        return obj

    def _chain(self, node):
        """``("np", "linalg", "norm")`` for a dotted chain of non-local names, else None."""
        parts = []
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if isinstance(node, cst.Name) and node.value not in self.locals:
            return (node.value, *reversed(parts))
        return None

    def _Attribute(self, node):
        read = tree_calls.treedef_read(self, node)
        if read is not None:  # ``treedef.num_leaves``
            return read
        chain = self._chain(node)
        head = self.source.env.get(chain[0]) if chain is not None else None
        # a module's attribute, or one of a module-level object of the user's (``parser.idxs_and_shapes``,
        # ``self.N`` in a method bound to one): its value, read when s2s reads the code, as a constant's
        if isinstance(head, types.ModuleType) or (
            chain is not None
            and chain[0] not in self.locals
            and (user_object(head) or _class_constant(head, chain))
        ):
            obj = head
            for i, part in enumerate(chain[1:], start=1):
                if not hasattr(obj, part):
                    self.fail(node, f"`{'.'.join(chain[: i + 1])}` does not exist")
                obj = getattr(obj, part)
            return self.mark(self.value(obj, chain, node), node)
        # a method of a library object s2s knows (``norm.logpdf``, ``from scipy.stats import norm``)
        spelled = self._library_op(chain) if chain is not None else None
        if spelled is not None:
            return self.mark(cst.parse_expression(spelled), node)
        base = self.expr(node.value)
        attr = node.attr.value
        if attr in STATIC_ATTRIBUTES:
            return cst.Attribute(base, cst.Name(attr))
        if attr in ATTRIBUTE_OPS:
            return self.mark(
                cst.Call(xp_attr(ATTRIBUTE_OPS[attr]), [cst.Arg(base)]), node
            )
        return self.mark(cst.Attribute(base, cst.Name(attr)), node)

    def _BinaryOperation(self, node):
        operator = one_line(node.operator)
        return self.mark(
            cst.BinaryOperation(
                self.expr(node.left),
                operator,
                self.expr(node.right),
                lpar=node.lpar,
                rpar=node.rpar,
            ),
            node,
        )

    def _UnaryOperation(self, node):
        return self.mark(
            cst.UnaryOperation(
                node.operator,
                self.expr(node.expression),
                lpar=node.lpar,
                rpar=node.rpar,
            ),
            node,
        )

    def _BooleanOperation(self, node):
        operator = one_line(node.operator)
        return self.mark(
            node.with_changes(
                left=self.expr(node.left),
                operator=operator,
                right=self.expr(node.right),
            ),
            node,
        )

    def _Comparison(self, node):
        targets = [
            c.with_changes(
                operator=one_line(c.operator), comparator=self.expr(c.comparator)
            )
            for c in node.comparisons
        ]
        return self.mark(
            node.with_changes(left=self.expr(node.left), comparisons=targets), node
        )

    def _IfExp(self, node):
        test = self.expr(node.test)
        outer, self._pending = self._pending, []
        body = self.expr(node.body)
        body_pending, self._pending = self._pending, []
        orelse = self.expr(node.orelse)
        else_pending, self._pending = self._pending, outer
        if not body_pending and not else_pending:
            return self.mark(
                node.with_changes(test=test, body=body, orelse=orelse), node
            )
        # statements a branch needs (``rt.check_call`` of ``f(**kw)``) run only when it is taken
        name = self.lax_namer().fresh("_ifexp")
        self.locals.add(name)
        origin = self.source.origin(node)
        self._pending.append(
            ir.If(
                test,
                (*body_pending, ir.Assign(cst.Name(name), body, origin)),
                (*else_pending, ir.Assign(cst.Name(name), orelse, origin)),
                origin,
            )
        )
        return cst.Name(name)

    def _written_through_a_copy(self, node):
        """``A[[0, 1]][0] = v``, ``A[A > 0][:, 1] = v``: a chained write whose inner index is an index
        array or a mask writes into the copy NumPy makes, never into ``A``: a located error.
        """
        inner = node.value
        while isinstance(inner, cst.Subscript):
            for element in inner.slice:
                index = element.slice
                if isinstance(index, cst.Index) and (
                    isinstance(index.value, (cst.List, cst.Comparison))
                    or (
                        isinstance(index.value, cst.UnaryOperation)
                        and isinstance(index.value.operator, cst.BitInvert)
                    )
                    or self._is_builtin_call(index.value, "range")
                    or self._index_constant(index.value)
                ):
                    spelled = cst.Module([]).code_for_node(inner)
                    self.fail(
                        node,
                        f"a write into `{spelled}`, which is a copy (an index array or a mask selects "
                        "a copy, not a view): NumPy's write changes nothing",
                        "index once to change the array (`A[rows, j] = v`, `A[mask, j] = v`), or drop "
                        "the line",
                        UnsupportedSyntax,
                    )
            inner = inner.value

    def _Subscript(self, node):
        # ``np.c_[a, b]``, ``np.mgrid[0:1:5j]``: the ops they stand for
        builder = index_tricks.kind_of(self._callee_object(node.value))
        if builder is not None:
            return index_tricks.lower(self, node, builder)
        if at_updates.at_reference(node) is not None:
            self.fail(
                node, "`x.at[...]` without a method call", f"write {at_updates.EXAMPLE}"
            )
        window = windows.subscript(self, node)
        if (
            window is not None
        ):  # ``x[i:i + k]``: a slice of known width at a computed start
            return window
        elements = [e.with_changes(slice=self._slice(e.slice)) for e in node.slice]
        return self.mark(cst.Subscript(self.expr(node.value), elements), node)

    def _slice(self, s):
        # ``x[[0, 2]]``, ``p[range(n), y]``, ``u[SENSORS]`` of a module-level list or array: an integer
        # (or boolean) array, as NumPy reads it: a copy, never a view
        if isinstance(s, cst.Index) and (
            isinstance(s.value, cst.List)
            or self._is_builtin_call(s.value, "range")
            or self._index_constant(s.value)
            or self._index_list(s.value)
        ):
            return cst.Index(
                self.mark(
                    cst.Call(
                        cst.parse_expression("rt.index_array"),
                        [cst.Arg(self.expr(s.value))],
                    ),
                    s.value,
                )
            )
        if isinstance(s, cst.Index):
            return cst.Index(self.expr(s.value))
        return s.with_changes(
            lower=self.expr(s.lower) if s.lower else None,
            upper=self.expr(s.upper) if s.upper else None,
            step=self.expr(s.step) if s.step else None,
        )

    def _index_list(self, node) -> bool:
        """A name of the function bound only to lists it makes (``idx = [0, 3, 3, 4]``), named as an
        index: NumPy reads the list as an integer array (JAX refuses a list)."""
        if not isinstance(node, cst.Name):
            return False
        made = self.__dict__.get("_made_lists")
        if made is None:
            made = self._made_lists = builtin_calls.made_lists(self.source.node)
        return node.value in made

    def _index_constant(self, node) -> bool:
        """A module-level list, or array of integers or booleans, named as an index."""
        if not isinstance(node, cst.Name) or node.value in self.locals:
            return False
        value = self.source.env.get(node.value)
        if isinstance(value, list):
            return all(isinstance(v, (int, bool, np.integer, np.bool_)) for v in value)
        return (
            isinstance(value, np.ndarray)
            and value.ndim > 0
            and value.dtype.kind in "biu"
        )

    def _Tuple(self, node):
        return node.with_changes(
            elements=[e.with_changes(value=self.expr(e.value)) for e in node.elements]
        )

    _List = _Tuple

    def _Dict(self, node):
        if any(isinstance(e, cst.StarredDictElement) for e in node.elements):
            return self._merged(node)
        elements = []
        for e in node.elements:
            elements.append(
                e.with_changes(key=self.expr(e.key), value=self.expr(e.value))
            )
        return node.with_changes(elements=elements)

    def _merged(self, node):
        """``{**base, "w": w, **more}``: a copy of ``base`` (``dict(base)``; ``{}`` where the display starts
        with a pair) with its entries written and other dicts merged in (``rt.dict_merge``), in lines
        before the statement (``_pending``), as Python evaluates them: left to right, later ones winning.
        """
        first, rest = node.elements[0], node.elements[1:]
        name = self.lax_namer().fresh("merged")
        self.locals.add(name)
        origin = self.source.origin(node)
        if isinstance(first, cst.StarredDictElement):
            copy = cst.Call(cst.Name("dict"), [cst.Arg(self.expr(first.value))])
        else:
            copy, rest = cst.Dict([]), node.elements
        self._pending.append(ir.Assign(cst.Name(name), copy, origin))
        for e in rest:
            if isinstance(
                e, cst.StarredDictElement
            ):  # ``{**a, **b}``: ``b``'s entries win
                merged = cst.Call(
                    cst.parse_expression("rt.dict_merge"),
                    [cst.Arg(cst.Name(name)), cst.Arg(self.expr(e.value))],
                )
                self._pending.append(ir.Assign(cst.Name(name), merged, origin))
                continue
            written = cst.Call(
                cst.parse_expression("rt.index_set"),
                [
                    cst.Arg(cst.Name(name)),
                    cst.Arg(self.expr(e.key)),
                    cst.Arg(self.expr(e.value)),
                ],
            )
            self._pending.append(ir.Assign(cst.Name(name), written, origin))
        return self.mark(cst.Name(name), node)

    def _Lambda(self, node):
        self.fail(
            node,
            "a lambda used as a value (passed on, or kept in a container)",
            "define the function with `def` at module level and pass its name; a lambda can be "
            "assigned to a name (`f = lambda x: ...`) and called in this function",
            UnsupportedSyntax,
        )


def _frozen_dataclass(obj) -> bool:
    """A frozen dataclass instance (not the class): a value that cannot change, read as a constant."""
    params = getattr(type(obj), "__dataclass_params__", None)
    return params is not None and params.frozen and not isinstance(obj, type)


def _is_literal_node(node) -> bool:
    """A default that reads the same at a generated module's top level: a literal, or a tuple of them."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(node, cst.Name) and node.value in ("True", "False", "None")
    ):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _is_literal_node(node.expression)
    return isinstance(node, cst.Tuple) and all(
        _is_literal_node(e.value) for e in node.elements
    )


def _short_repr(obj) -> str:
    text = repr(obj)
    return text if len(text) < 40 else text[:37] + "..."


def resolve(
    source: FunctionSource, name: str | None = None, scope: Scope | None = None
) -> Resolved:
    """Resolve ``source`` into a ``Function`` plus the helpers and constants it uses, named in ``scope``
    (the module-level names of the whole program; a new one by default)."""
    result = (
        Resolved(function=None)
        if scope is None
        else Resolved(function=None, scope=scope)
    )
    result.function = Resolver(source, None, result).function(name)
    return result


__all__ = ["Resolved", "resolve", "xp_attr"]


def _assigned_in_source(fn, name: str) -> bool:
    """Whether the function's own text (as written, before s2s rewrote it) assigns ``name``."""
    import ast
    import textwrap

    while hasattr(fn, "fn"):  # (a helper bound at a call, at a call shape)
        fn = fn.fn
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        for n in ast.walk(tree)
    )
