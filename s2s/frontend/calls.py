"""How a call resolves, one of:

- an array op, ``xp.<op>(...)``, its keywords made portable between NumPy and
  jax.numpy (``spellings.portable_arguments``); array methods as ops
  (``x.sum(0)`` is ``xp.sum(x, 0)``);
- a user function (a helper), its arguments bound as Python binds them
  (positional, keyword, keyword-only, defaults written out);
- a local function (inlined later);
- through a wrapper whose meaning s2s knows: ``jax.jit``/``jax.checkpoint``
  (the same math), ``functools.partial`` (bound arguments), also as a local
  ``step = jax.jit(update)`` or a decorator of a local function;
- an in-place write through another channel (``effects``: ``out=``,
  ``np.copyto``, ``y.sort()``, ``y.fill(v)``), as element writes.

Anything else is a located error. ``Calls`` is a part of ``resolve.Resolver``.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import types

import libcst as cst
import numpy

from .. import ir
from ..cstutil import call, dotted, iter_nodes, literal, names_in
from ..errors import S2SError, UnsupportedSyntax
from ..freshness import attributes, user_object
from ..passes.normal_form import is_static
from ..runtime.numbers import FUNCTIONS as NUMBER_FUNCTIONS
from . import (
    at_updates,
    blocks,
    call_forms,
    chains,
    combinatorics,
    effects,
    foreign,
    function_args,
    host_calls,
    identity,
    lax_control,
    lax_indexing,
    library,
    lifted,
    local_function_args,
    output,
    random_keys,
    rewriting,
    selections,
    spellings,
    spread,
    tree_calls,
    variadic,
    where_reductions,
    wrappers,
)

METHODS = {
    "sum", "mean", "prod", "max", "min", "var", "std", "cumsum", "cumprod", "argmax", "argmin",
    "reshape", "transpose", "ravel", "squeeze", "swapaxes", "dot", "clip", "round", "copy",
    "astype", "repeat", "take", "trace", "diagonal", "any", "all", "conj", "nonzero", "argsort",
    "sort",
}  # fmt: skip
# d.items() -> rt.items(d): loop inputs visited at trace time
# methods of Python strings (dict keys, names) that arrays do not have: called on values known when the
# code is traced (``k.startswith("W")`` of a key of ``params.items()``), through ``rt.str_method``
STRING_METHODS = frozenset(
    {
        "startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip", "split",
        "rsplit", "isdigit", "isalpha", "removeprefix", "removesuffix", "casefold",
    }
)  # fmt: skip
DICT_VIEWS = {
    "items",
    "keys",
    "values",
}
METHOD_ALIASES = {"flatten": "ravel", "conjugate": "conj"}
VARARG_METHODS = {"reshape", "transpose"}  # x.reshape(2, 3) means reshape(x, (2, 3))


# methods only a dict has (of those code calls on a dict it is given)
DICT_METHODS = frozenset({"get", "items", "keys", "values", "setdefault"})


@functools.lru_cache(maxsize=1024)
def _used_as_dicts(node) -> frozenset:
    """The names ``node``'s code reads as dicts: subscripted by a string (``bn_param["mode"]``), or the
    receiver of a method only a dict has (``bn_param.get("eps", 1e-5)``)."""
    found = set()
    for n in iter_nodes(node):
        if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name):
            index = n.slice[0].slice if len(n.slice) == 1 else None
            if isinstance(index, cst.Index) and isinstance(
                index.value, cst.SimpleString
            ):
                found.add(n.value.value)
        elif (
            isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and isinstance(n.func.value, cst.Name)
            and n.func.attr.value in DICT_METHODS
        ):
            found.add(n.func.value.value)
    return frozenset(found)


def xp_attr(name: str) -> cst.Attribute:
    """``xp.<name>`` for a canonical op name (dotted names nest: ``xp.linalg.norm``)."""
    node: cst.BaseExpression = cst.Name("xp")
    for part in name.split("."):
        node = cst.Attribute(node, cst.Name(part))
    return node


class Calls(lax_control.LaxControl):
    """Call resolution for ``Resolver`` (which provides ``expr``, ``value``, ``target``, ``fail``, ``mark``, ...)."""

    def _check_decorators(self, node: cst.FunctionDef):
        """A local function's decorators: ``@jax.jit`` and ``@jax.checkpoint`` (or their ``partial``) keep its math;
        any other would change what runs, which s2s cannot see."""
        for decorator in node.decorators:
            expr = decorator.decorator
            maker = library.wrapper_maker(
                self._callee_object(expr.func if isinstance(expr, cst.Call) else expr)
            )
            if maker == "partial" and expr.args:
                maker = library.wrapper_maker(self._callee_object(expr.args[0].value))
            if maker not in ("jit", "checkpoint"):
                self.fail(
                    decorator,
                    f"decorator `@{self.source.file.module.code_for_node(expr)}` on a local function: "
                    "s2s transforms the function's own code and cannot see what the decorator does",
                    "define the function without it (apply the decorator outside the transformed function)",
                    UnsupportedSyntax,
                )

    def _callee_object(self, node):
        """The live object a non-local name or attribute chain names (None for local names and other expressions)."""
        chain = (
            self._chain(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        )
        return (
            self._object(chain)
            if chain is not None and chain[0] in self.source.env
            else None
        )

    def _through_wrappers(self, func, args):
        """``jax.jit(g)(x)``, ``jax.checkpoint(g)(x)``, ``functools.partial(g, a)(x)``, a local ``h = jax.jit(g)``
        called as ``h(x)``, a module-level ``functools.partial`` object: the function that runs and its
        arguments, as Python binds them (a call's keywords override the partial's). Returns ``(func, args,
        callee)`` where ``callee`` is the resolved function when it is known already (else None).
        """
        while True:
            if isinstance(func, cst.Name) and func.value in self._aliases:
                func = self._aliases[func.value]
                continue
            maker = (
                library.wrapper_maker(self._callee_object(func.func))
                if isinstance(func, cst.Call)
                else None
            )
            if maker in ("jit", "checkpoint"):
                inner = [
                    a
                    for a in func.args
                    if a.keyword is None or a.keyword.value == "fun"
                ]
                func = inner[0].value
                continue
            if maker == "partial":
                bound = [self._arg(a) for a in func.args[1:]]
                func, args = func.args[0].value, _merge_partial(bound, args)
                continue
            by_lambda = (
                self._lifted_lambda(func, args) if isinstance(func, cst.Call) else None
            )
            # ``jax.vmap(lambda x: g(params, x))(xs)``: ``g``'s, made
            if by_lambda is not None:
                made, args = by_lambda
                made = made.at(len(args)) if _is_vmapped(made) else made
                return func, args, self.value(made, (_name_of(made),), func)
            chain = (
                lifted.transformed_chain(self, func)
                if isinstance(func, cst.Call)
                else None
            )
            if chain is not None:  # ``jax.vmap(jax.grad(u1))(ts)`` of a local ``u1``
                made, free = chain
                args = [self._arg(cst.Arg(cst.Name(v))) for v in free] + args
                made = made.at(len(args)) if _is_vmapped(made) else made
                return func, args, self.value(made, (_name_of(made),), func)
            made = self._made_transform(func) if isinstance(func, cst.Call) else None
            obj = made if made is not None else self._callee_object(func)
            if _is_vmapped(obj):  # the batched function for this call's arguments
                keywords = tuple(a.keyword.value for a in args if a.keyword is not None)
                obj = obj.at(len(args) - len(keywords), keywords)
            if made is not None or _is_vmapped(self._callee_object(func)):
                return func, args, self.value(obj, (_name_of(obj),), func)
            if isinstance(obj, functools.partial):
                fixed = [
                    cst.Arg(self.value(v, (f"{obj.func.__name__}_arg",), func))
                    for v in obj.args
                ]
                fixed += [
                    cst.Arg(self.value(v, (k,), func), keyword=cst.Name(k))
                    for k, v in obj.keywords.items()
                ]
                callee = self.value(obj.func, (obj.func.__name__,), func)
                return func, _merge_partial(fixed, args), callee
            return func, args, None

    def _jvp_call(self, node: cst.Call):
        """``jax.jvp(g, (x, w), (t, u))`` inside: the call of ``g``'s forward-mode module on the primals
        then the tangents, which returns ``(value, tangent)`` as ``jvp`` does."""
        from ..api import _transformed

        what = self.source.file.module.code_for_node(node.func)
        parts = [a for a in node.args if a.keyword is None]
        if len(parts) != 3 or len(parts) != len(node.args):
            self.fail(node, f"`{what}` inside a transformed function takes `(fun, primals, tangents)`",
                      "write `jax.jvp(g, (x,), (t,))`", UnsupportedSyntax)  # fmt: skip
        primals, tangents = parts[1].value, parts[2].value
        displays = all(
            isinstance(p, (cst.Tuple, cst.List)) for p in (primals, tangents)
        )
        if (
            not displays
        ):  # ``jvp(grad(f), primals, tangents)`` in an ``hvp`` helper: one item per parameter
            count = self._jvp_arity(parts[0].value, node, what)
            primals, tangents = (_items_of(p, count) for p in (primals, tangents))
        if len(primals.elements) != len(tangents.elements):
            self.fail(node, f"`{what}` got {len(primals.elements)} primals and {len(tangents.elements)} tangents",
                      "give one tangent per primal")  # fmt: skip
        primals = [el.value for el in primals.elements]
        tangents = [el.value for el in tangents.elements]
        lifted = (
            self._jvp_lambda(parts[0].value, primals, tangents) if displays else None
        )
        if lifted is not None:  # ``jax.jvp(lambda x_: jax.grad(f)(x_, A), (x,), (v,))``
            fun, primals, tangents, argnums = lifted
        else:
            fun = self._static_option(parts[0].value, node)
            argnums = tuple(range(len(primals)))
        try:
            made = _transformed(fun, "jvp", argnums, flat=True)
            callee = self.value(made, (_name_of(fun),), node.func)
        except S2SError as err:
            self.fail(node, err.message, err.hint, type(err))
        # ``fun(*primals)`` leaves its later parameters their defaults: the module takes them before the tangents
        defaults = [
            cst.Arg(self.value(d, (name,), node.func))
            for name, d in _defaults_after(fun, len(primals))
        ]
        args = [cst.Arg(self.expr(v)) for v in primals]
        args += defaults + [cst.Arg(self.expr(v)) for v in tangents]
        return self.mark(cst.Call(callee, args), node)

    def _jvp_arity(self, fun, node, what) -> int:
        """How many primals ``jax.jvp(fun, primals, tangents)`` passes: ``fun``'s positional parameters,
        where that is all it takes (no ``*args``, no defaults)."""
        params = None
        if not isinstance(fun, cst.Lambda):
            try:
                params = inspect.signature(
                    self._static_option(fun, node)
                ).parameters.values()
            except (TypeError, ValueError):
                params = None
        if params is None or any(
            p.kind not in _POSITIONAL or p.default is not p.empty for p in params
        ):
            self.fail(node, f"`{what}` with primals or tangents that are not a tuple written out, of a function "
                      "whose count of arguments s2s cannot read",
                      "write them as tuples in the call: `jax.jvp(g, (x, w), (t, u))`", UnsupportedSyntax)  # fmt: skip
        return len(params)

    def _jvp_lambda(self, lam, primals, tangents):
        """``jax.jvp(lambda x: g(x, A), (x0,), (v,))``, a lambda calling a function of the program (or a
        transformation made inside, ``jax.grad(f)``) with each of its parameters once and values of this
        scope: ``(g, g's arguments, tangents, argnums)`` for the forward mode of ``g`` with respect to the
        lambda's parameters; None for anything else."""
        lam, read = self._reading_lambda(lam, made=True)
        if read is None or len(read[1]) != len(primals):
            return None
        g, _, slots = read
        at = {
            k: i for k, i in enumerate(slots) if i is not None
        }  # g's position -> the lambda's
        arguments = [
            primals[at[k]] if k in at else a.value for k, a in enumerate(lam.body.args)
        ]
        argnums = tuple(sorted(at))
        return g, arguments, [tangents[at[k]] for k in argnums], argnums

    def _reading_lambda(self, node, made=False):
        """``(lam, read)``: ``node`` and ``_lambda_calling``'s reading of it, or, for a local function or a
        lambda that does more than call a function, the lambda calling it lifted (``lifted``) and its reading.
        """
        read = self._lambda_calling(node, made)
        if read is None:
            lifting = lifted.lift(self, node)
            if lifting is not None:
                node, g = lifting
                read = self._lambda_calling(node, callee=g)
        return node, read

    def _lambda_calling(self, lam, made=False, callee=None):
        """``(g, parameters, slots)`` for a lambda that calls ``g`` (a function of the program; with
        ``made``, a transformation made inside too) with each of its plain parameters once, as itself,
        and values of this scope (no keyword or ``*`` argument); ``slots[k]``: which parameter ``g``'s
        argument ``k`` is, None for a value of this scope. None for any other lambda."""
        if not isinstance(lam, cst.Lambda) or not isinstance(lam.body, cst.Call):
            return None
        params, body = [p.name.value for p in lam.params.params], lam.body
        plain = (
            not isinstance(lam.params.star_arg, (cst.Param, cst.ParamStar))
            and not lam.params.kwonly_params
            and not lam.params.posonly_params
            and lam.params.star_kwarg is None
        )
        if (
            not plain
            or any(p.default is not None for p in lam.params.params)
            or any(a.keyword is not None or a.star for a in body.args)
        ):
            return None
        g = (
            self._made_transform(body.func)
            if made
            and isinstance(body.func, cst.Call)
            and not lifted.of_local(self, body.func)  # (the lambda is lifted whole)
            else callee
        )
        g = g if g is not None else self._callee_object(body.func)
        if g is None or not callable(g):
            return None
        if spellings.is_library(g):
            return None  # ``lambda r: jnp.outer(r, v)``: a lambda of the program (lifted), not JAX's function
        slots = []
        for a in body.args:
            if isinstance(a.value, cst.Name) and a.value.value in params:
                slots.append(params.index(a.value.value))
            elif names_in(a.value) & set(params):
                return None
            else:
                slots.append(None)
        if sorted(k for k in slots if k is not None) != list(range(len(params))):
            return None
        return g, params, slots

    def _lifted_lambda(self, call: cst.Call, args: list):
        """``jax.vmap(lambda x: g(params, x))(xs)`` or ``jax.grad(lambda p: loss(p, x, y))(params)``: a lambda
        that calls a function of the program with its own parameters and values of this scope is that
        function transformed with the options moved onto its parameters (``in_axes=(None, 0)``), called
        with those values; ``(made, arguments)``, or None for any other lambda (a located error later).
        """
        maker = library.transform_maker(self._callee_object(call.func))
        lam = call.args[0].value if call.args else None
        lam, read = self._reading_lambda(lam) if maker is not None else (lam, None)
        if (
            read is None
            or any(a.keyword is not None or a.star for a in args)
            or len(args) != len(read[1])
        ):
            return None
        g, params, slots = read
        body = lam.body
        try:
            options = (
                inspect.signature(maker)
                .bind_partial(
                    None,
                    *(
                        self._static_option(a.value, call)
                        for a in call.args[1:]
                        if a.keyword is None
                    ),
                    **{
                        a.keyword.value: self._static_option(a.value, call)
                        for a in call.args[1:]
                        if a.keyword
                    },
                )
                .arguments
            )
        except TypeError as err:
            self.fail(
                call,
                f"`{self.source.file.module.code_for_node(call.func)}(...)`: {err}",
                None,
                S2SError,
            )
        options.pop(next(iter(options)))  # the function itself: ``g`` below
        what = self.source.file.module.code_for_node(call.func)
        if maker.__name__ == "vmap":
            axes = options.pop("in_axes", 0)
            per = axes if isinstance(axes, (tuple, list)) else (axes,) * len(params)
            if len(per) != len(params):
                self.fail(call, f"`{what}`: in_axes {axes!r} names {len(per)} axes for a lambda of "
                          f"{len(params)} parameters", None, S2SError)  # fmt: skip
            options["in_axes"] = tuple(None if k is None else per[k] for k in slots)
        else:  # grad, value_and_grad: ``argnums`` names the lambda's parameters
            argnums = options.pop("argnums", 0)
            wanted = (argnums,) if isinstance(argnums, int) else tuple(argnums)
            if not all(isinstance(k, int) and 0 <= k < len(params) for k in wanted):
                self.fail(call, f"`{what}`: argnums {argnums!r} for a lambda of {len(params)} parameters",
                          None, S2SError)  # fmt: skip
            moved = tuple(slots.index(k) for k in wanted)
            options["argnums"] = moved[0] if isinstance(argnums, int) else moved
        try:
            made = maker(g, **options)
        except S2SError as err:
            self.fail(call, err.message, err.hint, type(err))
        except (TypeError, ValueError) as err:
            self.fail(
                call,
                f"`{self.source.file.module.code_for_node(call.func)}(...)`: {err}",
                None,
                S2SError,
            )
        passed = [
            args[k] if k is not None else self._arg(a) for k, a in zip(slots, body.args)
        ]
        return made, passed

    def _made_transform(self, call: cst.Call):
        """``s2s.vmap(g, in_axes=(0, None))`` or ``jax.grad(g)`` called inside: the transformed function it
        makes, made now (``g`` a function of the program, the options constants), else None.
        """
        maker = library.transform_maker(self._callee_object(call.func))
        if maker is None:
            return None
        positional, keywords = [], {}
        for a in call.args:
            if a.star:
                self.fail(
                    a,
                    "argument unpacking in a transformation's options",
                    None,
                    UnsupportedSyntax,
                )
            value = self._static_option(a.value, call)
            if a.keyword is None:
                positional.append(value)
            else:
                keywords[a.keyword.value] = value
        try:
            return maker(*positional, **keywords)
        except (
            S2SError
        ) as err:  # what it cannot transform: located here, where it is made
            self.fail(call, err.message, err.hint, type(err))
        except (TypeError, ValueError) as err:
            what = self.source.file.module.code_for_node(call.func)
            self.fail(call, f"`{what}(...)`: {err}", None, S2SError)

    def _static_option(self, node, call):
        """The value of a transformation's argument inside transformed code: a function of the program,
        another transformation made inside, or a constant."""
        if isinstance(node, cst.Call):
            made = self._made_transform(node)
            if made is not None:
                return made
        alias = self._aliases.get(node.value) if isinstance(node, cst.Name) else None
        if isinstance(alias, cst.Call) and node.value not in self._reading_aliases:
            # ``u_x = jax.grad(u, argnums=1)``, then ``jax.vmap(u_x, ...)``: the transformation it holds
            self._reading_aliases.add(node.value)
            try:
                made = self._made_transform(alias)
            finally:
                self._reading_aliases.discard(node.value)
            if made is not None:
                return made
        if isinstance(node, cst.Name) and (
            node.value in self._local_fns or node.value in self.locals
        ):
            what = self.source.file.module.code_for_node(call.func)
            self.fail(node, f"`{what}` of `{node.value}`, a function or value local to this function: s2s makes "
                      "the transformed function when it reads the code", f"define `{node.value}` at module level "
                      "and pass what it reads from here as arguments", UnsupportedSyntax)  # fmt: skip
        if isinstance(node, cst.Lambda):
            self.fail(node, "a transformation of a `lambda` that does more than call one function of the "
                      "program with its parameters and values of this scope",
                      "write the lambda's work as a function at module level: `jax.vmap(lambda x: f(params, x))`",
                      UnsupportedSyntax)  # fmt: skip
        obj = self._callee_object(node)
        # ``jax.jvp(grad_f, ...)`` of ``grad_f = jax.grad(f)``: s2s.grad's
        if obj is not None:
            return wrappers.as_s2s(obj)
        if isinstance(node, cst.Name) and (
            node.value in self.params or node.value in self.source.fixed
        ):
            what = self.source.file.module.code_for_node(call.func)
            self.fail(node, f"`{what}` of `{node.value}`, a function passed in as a parameter: s2s makes the "
                      "transformed function when it reads the code, from a function of the program it can name",
                      f"pass a module-level function (`{node.value}=rbf`, not a lambda or local `def`) and the "
                      "values it reads as arguments, or transform the function where it is defined",
                      UnsupportedSyntax)  # fmt: skip
        try:
            return ast.literal_eval(self.source.file.module.code_for_node(node))
        except (ValueError, SyntaxError):
            self.fail(node, "a transformation's option computed at run time",
                      "write it as a constant (`in_axes=(0, None)`)", UnsupportedSyntax)  # fmt: skip

    def _method_call(self, chain, receiver, attr, method, args, node):
        """``receiver.attr(*args)`` of a user's object (or class): its class's function, ``self`` bound to
        the object (none for a static method), a helper."""
        static = isinstance(receiver, type) or isinstance(
            inspect.getattr_static(type(receiver), attr), staticmethod
        )
        fn = (
            method
            if static
            else function_args.bind(method, {_self_name(method): receiver})
        )
        # ``solver.step(term, y)``: bound to the functions and objects it is passed, as a helper is
        bound, args = function_args.bound_call(self, fn, args, node)
        fn = bound or fn
        name = self.helper("_".join((*chain, attr.strip("_"))), fn)
        args = self._bind_helper(self.result.helpers.get(name, fn), args, node)
        return self.mark(cst.Call(cst.Name(name), args), node)

    def effect(self, call: cst.Call, origin) -> list:
        """An expression statement that writes an array (``effects``), as element writes."""
        return effects.write(self, call, origin)

    def _take_pending(self) -> list:
        pending, self._pending = self._pending, []
        return pending

    def _numpy_draw_in_a_branch(self, node):
        """``np.random.randn(3, 3)`` in an ``if`` block (``if params is None:`` a model's own initial
        weights): ``rt.refused(...)``, the located error when the branch runs, and none when it does not
        (the branch taken is known when traced: a default left out); elsewhere None (refused here).
        """
        if not self._branches or not isinstance(node.func, (cst.Name, cst.Attribute)):
            return None
        obj = self._callee_object(node.func)
        module = getattr(obj, "__module__", None) or ""
        if not callable(obj) or not module.startswith("numpy.random"):
            return None
        what = self.source.file.module.code_for_node(node.func)
        message = f"`{what}` (a NumPy random draw) runs here: s2s does not read `numpy.random`"
        refused = call("rt.refused", literal(message), literal(library.RANDOM_HINT))
        return self.mark(refused, node)

    def _Call(self, node):
        deferred = self._numpy_draw_in_a_branch(node)
        if deferred is not None:
            return deferred
        read = tree_calls.treedef_read(self, node)
        if read is not None:  # ``treedef.unflatten(leaves)``
            return read
        if _is_builtin(self, node.func, "dict") and all(
            a.keyword is not None and not a.star for a in node.args
        ):
            # ``dict(h=h, out=out)``: the dict display it makes
            entries = [
                cst.DictElement(cst.SimpleString(repr(a.keyword.value)), a.value)
                for a in node.args
            ]
            return self.mark(self.expr(cst.Dict(entries)), node)
        if (
            _is_builtin(self, node.func, "dict")
            and len(node.args) == 1
            and not isinstance(
                node.args[0].value, (cst.Name, cst.Attribute, cst.Subscript)
            )
        ):  # ``dict(zip(keys, values))``: s2s reads ``dict(d)`` as a copy of a dict only
            self.fail(node, "`dict(...)` of pairs: s2s reads `dict(d)` as a copy of the dict `d`",
                      "write the dict display (`{k: v for k, v in zip(keys, values)}`, `{\"w\": w}`)",
                      UnsupportedSyntax)  # fmt: skip
        # ``rng = kwargs.pop("rng", None)`` among the first lines
        popped = self.expansion.pop(node) if self.expansion is not None else None
        if popped is not None:
            return self._popped(popped, node)
        # ``rt.host_call(leggauss, n)`` of generated code read again
        held = host_calls.read_again(self, node)
        if held is not None:
            return held
        made = call_forms.record(self, node)
        if made is not None:  # ``State(mu, nu)``: a NamedTuple of yours
            return made
        positions = call_forms.indices_from_shape(self, node)
        if positions is not None:  # ``K[np.diag_indices_from(K)] += noise``
            return positions
        padded = call_forms.constant_padding(self, node)
        if padded is not None:  # ``np.pad(x, w, constant_values=c)``
            return padded
        folded = call_forms.constant_builtin(self, node)
        if folded is not None:  # ``max(SIZES)`` of a module's constants
            return folded
        cast = call_forms.number_cast(self, node)
        if cast is not None:  # ``float(np.sum(x))``
            return cast
        if _is_builtin(self, node.func, "callable") and len(node.args) == 1:
            # a function of the code (a local ``def``, a lambda, one of yours): True when read; any other
            # value is asked when the code runs (an array, a number: False)
            arg = node.args[0].value
            named = isinstance(arg, cst.Name) and (
                arg.value in self._local_fns
                or arg.value in self._outer_fns
                or inspect.isfunction(self._callee_object(arg))
            )
            if named:
                return self.mark(cst.Name("True"), node)
        out = effects.out_argument(node)
        # ``np.add(a, b, out=y)``: ``y[...] = np.add(a, b)`` first, then the call's value is ``y`` (a
        # NumPy function's ``out=``, not a keyword of yours: ``record._replace(out=...)``, ``f(x, out=y)``)
        if out is not None and call_forms.array_library_call(self, node):
            array = effects.out_target(out)
            if array is None or array.value not in self.locals:
                self.fail(
                    out,
                    "`out=` must name a local array",
                    "write `y = np.add(a, b)` instead",
                    UnsupportedSyntax,
                )
            value = self._Call(
                node.with_changes(args=[a for a in node.args if a is not out])
            )
            self._pending.append(
                ir.Assign(
                    self.target(effects.whole(array)), value, self.source.origin(node)
                )
            )
            return self.expr(array)
        # ``x.at[i].set(v)``: JAX's functional index updates
        if at_updates.is_update(node):
            return at_updates.lower(self, node)
        callee = self._callee_object(node.func)
        # ``list(combinations(range(n), 3))``: the index rows, one array
        if _is_builtin(self, node.func, "list"):
            listed = combinatorics.listed(self, node)
            if listed is not None:
                return listed
        # ``itertools.combinations(points, 2)``: a zip of the rows at index arrays
        combined = combinatorics.kind_of(callee)
        if combined is not None:
            lowered = combinatorics.lower(self, node, combined)
            if lowered is not None:
                return lowered
        if (
            output.kind_of(callee) is not None
        ):  # a print or a logging call whose value is used
            self.fail(
                node,
                "an output call (`print`, `logging`) used as a value",
                "call it as a statement of its own: `logging.info(...)`, not `_ = logging.info(...)`",
                UnsupportedSyntax,
            )
        if selections.is_select(callee):  # ``np.select``: nested ``where``s
            return selections.lower(self, node)
        dtype = spellings.scalar_type(callee)
        if dtype is not None and len(node.args) == 1 and not node.args[0].keyword:
            # ``np.float64(v)``, ``np.int32(v)``: a cast, ``np.asarray(v, dtype=np.float64)`` (an integer
            # type passes no derivative: ``Transform.result_dtype``)
            cast = cst.Arg(
                cst.parse_expression(f"xp.{dtype}"), keyword=cst.Name("dtype")
            )
            return self.mark(
                cst.Call(
                    cst.parse_expression("xp.asarray"),
                    [*self._args_of(node.args[0]), cast],
                ),
                node,
            )
        if blocks.is_block(callee):  # ``np.block``: nested concatenations
            return blocks.lower(self, node)
        if chains.is_multi_dot(callee):  # ``np.linalg.multi_dot``: nested ``matmul``s
            return chains.lower(self, node)
        tree_call = tree_calls.kind(callee)
        if (
            tree_call is not None
        ):  # ``jax.tree_util.tree_map(f, params)``: a loop over the leaves
            return tree_calls.lower(self, tree_call, node)
        lax_op = lax_indexing.op_of(callee)
        if lax_op is not None:
            return lax_indexing.lower(self, node, lax_op)
        draw = random_keys.draw_of(self._callee_object(node.func))
        if draw is not None:  # ``jax.random.normal(key, shape)``
            return random_keys.lower(self, node, draw)
        func = node.func
        # ``lax.scan(step, h, xs)``: statements, and the names they bind
        if isinstance(func, (cst.Name, cst.Attribute)):
            kind = lax_control.kind(self._callee_object(func))
            if kind is not None:
                return self.lax_call(kind, node)
            if library.is_jvp(self._callee_object(func)):
                return self._jvp_call(node)
        passed = local_function_args.passed_locals(self, node)
        if passed is not None and passed[1]:
            # ``apply(lambda z: z * scale, x)``: the helper read as a local function
            return local_function_args.call(self, node, *passed)
        held = {id(a) for a in call_forms.partials_passed(self, func, node)}
        args = [
            new
            for a in node.args
            for new in ([a] if id(a) in held else self._args_of(a))
        ]
        chain = self._chain(func) if isinstance(func, cst.Attribute) else None
        is_method = isinstance(func, cst.Attribute) and (
            chain is None
            or not isinstance(self.source.env.get(chain[0]), types.ModuleType)
        )
        # a method of a library object that is an op (``norm.logpdf`` of ``from scipy.stats import norm``)
        if is_method and chain is not None and self._library_op(chain):
            is_method = False
        if is_method:
            self._refuse_spread(node, args)
        if is_method and func.attr.value in DICT_VIEWS and not args:
            return self.mark(
                cst.Call(
                    cst.parse_expression(f"rt.{func.attr.value}"),
                    [cst.Arg(self.expr(func.value))],
                ),
                node,
            )
        called = self._chain(func) if not is_method else None
        if called is not None and called[0] in self.source.env:
            receiver = self._object(called)
            method = (
                _user_method(receiver, "__call__") if user_object(receiver) else None
            )
            # ``norm(x, g)``: an object of the user's called, its ``__call__``
            if method is not None:
                return self._method_call(
                    called, receiver, "__call__", method, args, node
                )
        if is_method and chain is not None and chain[0] in self.source.env:
            receiver = self._object(chain[:-1])
            method = _user_method(receiver, func.attr.value)
            if (
                method is not None
            ):  # ``parser.get(w, "W")``: its class's function, ``self`` bound
                return self._method_call(
                    chain[:-1], receiver, func.attr.value, method, args, node
                )
            # ``self.activation(z)``: a function an object of yours holds, called as itself
            is_method = not _holds_function(receiver, func.attr.value)
            if (
                is_method
                and not hasattr(receiver, "__array_namespace__")
                and not hasattr(receiver, "__array__")
            ):
                found = foreign.method(self, chain, args, node)
                if (
                    found is not None
                ):  # ``model.apply(params, x)``: a library's JAX code, ``rt.foreign``
                    return found
                hint = (
                    library.RANDOM_HINT
                    if "random" in type(receiver).__module__
                    else "call it outside and pass the result in"
                )
                self.fail(func, f"`{'.'.join(chain)}()` calls a method of a {type(receiver).__name__}, "
                          "which s2s cannot transform", hint)  # fmt: skip
        # ``norm(0.0, 1.0).logpdf(x)``: a method of what a library object returned
        if is_method and isinstance(func.value, cst.Call):
            maker = self._callee_object(func.value.func)
            method = getattr(maker, func.attr.value, None)
            if spellings.is_library(maker) and identity.spelling(method) is not None:
                what = self.source.file.module.code_for_node(func.value.func)
                self.fail(func, f"`{what}(...).{func.attr.value}()` calls a method of a frozen distribution "
                          "(an object the library makes at run time), which s2s does not read",
                          f"pass the parameters to the function itself: `{what}.{func.attr.value}(x, ...)`")  # fmt: skip
        if (
            is_method
            and func.attr.value == "copy"
            and not args
            and isinstance(func.value, cst.Name)
            and func.value.value in _used_as_dicts(self.source.node)
        ):  # ``bn_param = bn_param.copy()`` of a dict: ``{**bn_param}`` (an array's is ``np.copy``)
            copied = cst.Dict([cst.StarredDictElement(func.value)])
            return self.expr(self.mark(copied, node))
        if is_method and func.attr.value == "get" and 1 <= len(args) <= 2:
            # ``config.get("eps", 1e-5)``: a dict's (arrays have no ``get``); ``rt.dict_get`` refuses others
            receiver = cst.Arg(self.expr(func.value))
            call = cst.Call(cst.parse_expression("rt.dict_get"), [receiver, *args])
            return self.mark(call, node)
        if is_method and func.attr.value in STRING_METHODS:
            # ``rt.str_method`` refuses any receiver that is no string (a record's own ``split``)
            receiver = cst.Arg(self.expr(func.value))
            method = cst.Arg(cst.SimpleString(f'"{func.attr.value}"'))
            call = cst.Call(
                cst.parse_expression("rt.str_method"), [receiver, method, *args]
            )
            return self.mark(call, node)
        if (
            is_method
            and func.attr.value == "_replace"
            and all(a.keyword is not None and not a.star for a in node.args)
        ):  # ``state._replace(mu=...)``: a NamedTuple with fields replaced
            names = literal(tuple(a.keyword.value for a in node.args))
            fields = [cst.Arg(self.expr(a.value)) for a in node.args]
            call = cst.Call(
                cst.parse_expression("rt.replaced"),
                [cst.Arg(self.expr(func.value)), cst.Arg(names), *fields],
            )
            return self.mark(call, node)
        if is_method and func.attr.value == "item" and not node.args:
            # ``loss.item()``: its one element, a number (``float(loss)``'s, keeping the dtype)
            call = cst.Call(
                cst.parse_expression("rt.item"), [cst.Arg(self.expr(func.value))]
            )
            return self.mark(call, node)
        if is_method:
            name = METHOD_ALIASES.get(func.attr.value, func.attr.value)
            if (
                name not in METHODS
                and not hasattr(numpy.ndarray, func.attr.value)
                and func.attr.value not in library.DRAW_METHODS
            ):
                # (as written: a comprehension's loop renames its variable, ``layer_2``)
                receiver_code = rewriting.as_written(self.source, func.value)
                message = (
                    f"`{receiver_code}.{func.attr.value}()` calls a method of an object whose type s2s "
                    "does not know when it reads the code (only arrays' methods are ops)"
                )
                hint = (
                    f"write `{func.attr.value}` as a module-level function that takes the object's "
                    f"values (`{func.attr.value}({receiver_code}.field, ...)`), or call it outside "
                    "and pass the result in"
                )
                if self._branches:
                    # (scikit-learn's ``if hasattr(a, "toarray"): ... a.toarray()``, a branch no array
                    # takes: the error where it runs, as for a random draw)
                    refused = cst.Call(
                        cst.parse_expression("rt.refused"),
                        [cst.Arg(literal(message)), cst.Arg(literal(hint))],
                    )
                    return self.mark(refused, node)
                self.fail(func, message, hint)
            if name not in METHODS:
                draw = func.attr.value in library.DRAW_METHODS
                self.fail(
                    func,
                    f"array method `.{func.attr.value}()` is not supported"
                    + (
                        " (a random draw, if this is a NumPy Generator)" if draw else ""
                    ),
                    library.RANDOM_HINT if draw else "call the NumPy function",
                )
            receiver = self.expr(func.value)
            if isinstance(receiver, cst.Call) and (
                dotted(receiver.func) or ""
            ).startswith("rt.numbers."):
                # ``np.sqrt(d).astype(x.dtype)``: NumPy gives a NumPy number, s2s a Python one
                receiver = cst.Call(xp_attr("asarray"), [cst.Arg(receiver)])
            if func.attr.value == "flatten":
                # ``z.flatten()`` is always a copy (``ravel`` may be a view): writes into it change no ``z``
                receiver = cst.Call(xp_attr("copy"), [cst.Arg(receiver)])
            positional = [a for a in args if a.keyword is None and not a.star]
            if (
                name in VARARG_METHODS
                and len(positional) > 1
                and not any(a.star for a in args)
            ):  # (``x.reshape(2, 3, order="F")``: the sizes as one shape, the keywords kept)
                shape = cst.Tuple([cst.Element(a.value) for a in positional])
                args = [cst.Arg(shape), *(a for a in args if a.keyword is not None)]
            args = spellings.lists_as_arrays(
                name, spellings.portable_arguments(name, [cst.Arg(receiver), *args])
            )
            masked = where_reductions.rewrite(name, args)  # ``x.sum(where=m)``
            return self.mark(
                masked if masked is not None else cst.Call(xp_attr(name), args), node
            )
        found = foreign.vmapped(self, func, args, node)
        if (
            found is not None
        ):  # ``jax.vmap(model)(xs)`` of a library's JAX code: ``rt.foreign``
            return found
        integer = _math_integer(self._callee_object(func))
        if (
            integer is not None
        ):  # ``math.factorial(k)`` of numbers: Python's (``rt.numbers``)
            self._refuse_spread(node, args)
            callee = cst.parse_expression(f"rt.numbers.{integer}")
            return self.mark(cst.Call(callee, args), node)
        func, args, callee = self._through_wrappers(func, args)
        # ``leggauss(n)``: NumPy's own function, run when the code is traced
        if callee is None and host_calls.runs_on_host(self, func, node):
            twin = host_calls.jax_twin(self, func)
            if (
                twin is not None
            ):  # ``scipy.linalg.expm``: JAX's own, differentiated by JAX
                name = foreign._constant(self, "jax_" + twin.__name__, twin)
                return foreign.call(self, name, args, node, twin)
            return host_calls.call(self, func, args, node)
        if (
            callee is None
            and isinstance(func, cst.Name)
            and (func.value in self._local_fns or func.value in self._outer_fns)
        ):
            if spread.has_spread(args):  # ``f(t, *args)`` of a lambda passed in
                local = self._local_fns.get(func.value) or self._outer_fns[func.value]
                args = self._spread_into_local(local, args, node)
            return self.mark(cst.Call(cst.Name(func.value), args), node)
        callee = callee or self.expr(func)
        if foreign.is_callable_constant(
            self, callee
        ):  # a library's JAX code: ``rt.foreign``
            self._refuse_spread(node, args)
            return foreign.call(self, callee, args, node)
        if not isinstance(func, (cst.Name, cst.Attribute)) and not isinstance(
            callee, (cst.Name, cst.Attribute)
        ):
            what = self.source.file.module.code_for_node(func)
            self.fail(func, f"a call of `{what}`, a function computed at run time: s2s calls functions by their names",
                      "call the function by its name: define it with `def`, or bind what makes it to a name "
                      "first (`step = make_step(params)`)", UnsupportedSyntax)  # fmt: skip
        # named at this call's shape
        if isinstance(callee, cst.Name) and callee.value in self._variadic:
            fn = self._variadic[callee.value]
            shape = None
            if spread.has_spread(args):
                args, shape = spread.bind(
                    self, fn, args, self._default_of(fn, node), node
                )
            shape = shape or variadic.shape_of(self._bound(fn, args, node))
            callee = cst.Name(self.helper(callee.value, variadic.specialize(fn, shape)))
        if isinstance(callee, cst.Name) and callee.value in self.result.helpers:
            fn = self.result.helpers[callee.value]
            if spread.has_spread(args):
                args, _ = spread.bind(self, fn, args, self._default_of(fn, node), node)
            bound, args = function_args.bound_call(self, fn, args, node)
            if bound is not None:  # ``mlp(params, x, relu)``: ``mlp`` bound to ``relu``
                callee = cst.Name(self.helper(function_args.name_of(bound), bound))
            args = self._bind_helper(self.result.helpers[callee.value], args, node)
        # a partial that no helper was bound to: resolved here, to its located error
        args = [
            cst.Arg(self.expr(a.value), keyword=a.keyword) if id(a) in held else a
            for a in args
        ]
        if isinstance(callee, cst.Name) and callee.value in self.result.constants:
            self.fail(func, f"`{callee.value}` is not callable")
        self._refuse_spread(node, args)
        if isinstance(callee, cst.Name) and callee.value in self.locals:
            # ``model(x)``: library code passed in or held in a local, checked to be such when it runs
            return foreign.call(self, callee, args, node)
        op = dotted(callee) if isinstance(callee, cst.Attribute) else None
        if (
            op == "rt.foreign"
        ):  # (generated code read again: ``lax.add`` handed to JAX's code stays itself)
            args = foreign.jax_functions_as_themselves(self, args, node)
        masked = (
            where_reductions.rewrite(op[3:], args)
            if op and op.startswith("xp.")
            else None
        )
        if (
            masked is not None
        ):  # ``np.sum(x, where=m)``: the sum of ``np.where(m, x, 0)``
            return self.mark(masked, node)
        if op is not None and op.startswith("rt.") and not any(a.star for a in args):
            # ``logsumexp([a, b, c])``: a list where SciPy takes an array
            args = spellings.library_lists_as_arrays(self._callee_object(func), args)
        if op is not None and op.startswith("xp."):
            named = spellings.named_where_reordered(
                op[3:], self._callee_object(func), args
            )
            args = spellings.lists_as_arrays(
                op[3:], spellings.portable_arguments(op[3:], named)
            )
            if (
                op[3:] in NUMBER_FUNCTIONS
                and all(is_static(a.value) for a in args)
                and any(_reads_sizes(a.value) for a in args)
            ):
                # ``np.prod(x.shape[1:])``: a number when traced (``rt.numbers``)
                callee = cst.parse_expression(f"rt.numbers.{op[3:]}")
        return self.mark(cst.Call(callee, args), node)

    def _bound(self, helper, args, node) -> inspect.BoundArguments:
        """The call's argument nodes bound to ``helper``'s parameters, as Python binds them."""
        # a wrapper: its own; a transformation's generated function: its function's (``_call_signatures``)
        signature = self._call_signatures.get(id(helper)) or inspect.signature(
            helper, follow_wrapped=not inspect.isfunction(helper)
        )
        try:
            return signature.bind(
                *[a.value for a in args if a.keyword is None],
                **{a.keyword.value: a.value for a in args if a.keyword},
            )
        except TypeError as err:
            self.fail(
                node,
                f"call to `{helper.__name__}` does not match its signature: {err}",
                None,
                S2SError,
            )

    def _args_of(self, arg) -> list:
        """A call's argument, resolved; the function's own ``*args``/``**kwargs`` (at a call shape) as what they hold."""
        if not arg.star:
            return [self._arg(arg)]
        passed = self.expansion.arguments(arg) if self.expansion is not None else None
        if passed is None:
            passed = self._constant_spread(arg)
        if (
            passed is None
        ):  # spread into a helper's parameters (``spread``), else refused
            return [cst.Arg(self.expr(arg.value), star=arg.star)]
        return passed

    def _constant_spread(self, arg: cst.Arg) -> list | None:
        """``*items``/``**options`` of a tuple, list or dict s2s reads with the code (a module constant, a
        factory's closed-over ``fun_kwargs``): one argument per item, each a read of it; else None.
        """
        value = self._constant_value(arg.value)
        if arg.star == "*" and isinstance(value, (tuple, list)):
            keys = [(cst.Integer(str(i)), None) for i in range(len(value))]
        elif (
            arg.star == "**"
            and isinstance(value, dict)
            and all(isinstance(k, str) and k.isidentifier() for k in value)
        ):
            keys = [(cst.SimpleString(repr(k)), cst.Name(k)) for k in value]
        else:
            return None
        items = value.values() if isinstance(value, dict) else value
        return [
            cst.Arg(
                (
                    literal(item)
                    if is_literal_value(item)
                    else self.expr(
                        cst.Subscript(arg.value, [cst.SubscriptElement(cst.Index(key))])
                    )
                ),
                keyword=keyword,
            )
            for (key, keyword), item in zip(keys, items)
        ]

    def _constant_value(self, node):
        """The value of ``node`` where s2s knows it when it reads the code: names of the module or closed
        over (not the function's), their attributes and items at literal keys and slices; else None.
        """
        allowed = (cst.Name, cst.Attribute, cst.Subscript, cst.SubscriptElement, cst.Index,
                   cst.Slice, cst.Integer, cst.SimpleString, cst.UnaryOperation, cst.Minus,
                   cst.Dot, cst.LeftSquareBracket, cst.RightSquareBracket, cst.Colon,
                   cst.BaseParenthesizableWhitespace, cst.LeftParen, cst.RightParen)  # fmt: skip
        nodes = list(iter_nodes(node))
        if not all(isinstance(n, allowed) for n in nodes):
            return None
        heads = {
            n.value
            for n in nodes
            if isinstance(n, cst.Name)
            and not any(isinstance(m, cst.Attribute) and m.attr is n for m in nodes)
        }
        if (
            not heads
            or heads & (self.locals | self.params)
            or not heads <= set(self.source.env)
        ):
            return None
        code = self.source.file.module.code_for_node(node)
        # (a missing attribute or key: the read's own error, where it is resolved)
        try:
            return eval(code, {name: self.source.env[name] for name in heads})
        except Exception:
            return None

    def _refuse_spread(self, node: cst.Call, args: list):
        """A located error for a ``*``/``**`` argument left in a call that is no function of the user's."""
        if not spread.has_spread(args):
            return
        at = next(a for a in node.args if a.star)
        what = self.source.file.module.code_for_node(node.func)
        held = isinstance(node.func, cst.Name) and node.func.value in self.locals
        self.fail(
            at,
            f"`{at.star}` argument unpacking in a call of `{what}`: s2s spreads `*` and `**` "
            "only into the parameters of functions it knows when it reads the code"
            + (
                f" (`{what}` holds a function known only when the code runs: a loop's item, "
                "a parameter, a table's entry)"
                if held
                else ""
            ),
            "call the function by its name, or pass the arguments one by one",
            UnsupportedSyntax,
        )

    def _popped(self, popped, node: cst.Call):
        """The value ``kwargs.pop("k"[, default])`` takes at this call shape: ``k``'s, or the default."""
        held, value = popped
        if held:
            return self.mark(cst.Name(value), node)
        if value is None:
            key = node.args[0].value.evaluated_value
            self.fail(node, f"`{self.source.file.module.code_for_node(node)}` of a keyword this call does "
                      f"not pass (`{key}`): Python raises KeyError", f"give a default: `.pop({key!r}, None)`",
                      UnsupportedSyntax)  # fmt: skip
        return self.expr(value)

    def _spread_into_local(self, local, args: list, node: cst.Call) -> list:
        """A local function's call with ``*``/``**`` arguments, named one by one (``spread.bind``)."""
        if not isinstance(local, ir.Function):
            self._refuse_spread(node, args)

        def default(name, param):  # its default, as the local function's call reads it
            return param.default

        args, packed = spread.bind(self, local, args, default, node)
        assert packed is None  # local functions take no ``*args``
        return args

    def _default_of(self, helper, node):
        """The expression of a parameter's default, as ``_bind_helper`` writes it."""

        def default(name, param):
            if is_literal_value(param.default):
                self.result.defaults[
                    (getattr(helper, "__module__", None), helper.__qualname__, name)
                ] = param.default
                return literal(param.default)
            constant = f"{helper.__name__}_{name}"  # the generated module's name for it
            try:
                return self.value(param.default, (constant,), node)
            except S2SError as err:  # named as the user wrote it
                err.message = err.message.replace(
                    f"`{constant}`",
                    f"the default of `{name}` (of `{helper.__name__}`)",
                )
                err.args = (err.message,)
                raise

        return default

    def _bind_helper(self, helper, args, node):
        """A helper call's arguments in the helper's parameter order, defaults written out."""
        bound = self._bound(helper, args, node)
        signature = bound.signature
        values = []
        for name, param in signature.parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                self.fail(
                    node,
                    f"`{helper.__name__}` takes `*{name}`/`**{name}`, which s2s does not transform",
                    "name each parameter",
                    UnsupportedSyntax,
                )
            if name in bound.arguments:
                values.append(bound.arguments[name])
            else:  # an array (or other object) default: a constant of the generated module
                values.append(self._default_of(helper, node)(name, param))
        return [cst.Arg(v) for v in values]

    def _arg(self, arg):
        return cst.Arg(self.expr(arg.value), keyword=arg.keyword)


def _is_builtin(resolver, func, name: str) -> bool:
    """Whether ``func`` names Python's builtin ``name`` (not a local or global of that name)."""
    return (
        isinstance(func, cst.Name)
        and func.value == name
        and name not in resolver.locals
        and resolver.source.env.get(name, getattr(builtins, name))
        is getattr(builtins, name)
    )


def _reads_sizes(node) -> bool:
    """Whether a static expression reads a size (``len(x)``, ``x.shape``, ``x.size``): a number known when
    traced, where literals alone (``np.exp(1.0)``) are constants as they are."""
    return any(
        (isinstance(n, cst.Call) and dotted(n.func) == "len")
        or (isinstance(n, cst.Attribute) and n.attr.value in ("shape", "size", "ndim"))
        for n in iter_nodes(node)
    )


def _user_method(receiver, attr: str):
    """The function of a user's class that ``receiver.attr(...)`` runs (an instance or static method of a
    module-level object, a static method through its class), else None (a library's object, a class
    method, an attribute holding a value).
    """
    if receiver is None or isinstance(receiver, types.ModuleType):
        return None
    if isinstance(
        receiver, type
    ):  # ``RBM.free_energy(...)``: a static method through its class
        found = inspect.getattr_static(receiver, attr, None)
        if not isinstance(found, staticmethod):
            return None
        found = found.__func__
        return (
            None
            if spellings.is_library(found) or not inspect.isfunction(found)
            else found
        )
    kind = type(receiver)
    found = inspect.getattr_static(kind, attr, None)
    if isinstance(found, staticmethod):
        found = found.__func__
    if not inspect.isfunction(found) or spellings.is_library(found):
        return None
    if attr in getattr(
        receiver, "__dict__", {}
    ):  # an instance attribute shadows the class's
        return None
    return found


def _self_name(method) -> str:
    """The name of a method's first parameter (``self``)."""
    return next(iter(inspect.signature(method).parameters))


def _is_vmapped(obj) -> bool:
    from ..vmapping import Vmapped

    return isinstance(obj, Vmapped)


def _holds_function(receiver, attr: str) -> bool:
    """Whether ``receiver`` (an object of yours) holds a function as its own attribute ``attr``: in its
    ``__dict__``, or as a NamedTuple's field (optax's ``Transform(init, update)``)."""
    return user_object(receiver) and function_args.is_function(
        attributes(receiver).get(attr)
    )


_POSITIONAL = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
)


def _items_of(node, count: int) -> cst.Tuple:
    """``node`` as a tuple display of ``count`` items: itself if it is one, else ``node[0], node[1], ...``."""
    if isinstance(node, (cst.Tuple, cst.List)):
        return node
    return cst.Tuple(
        [cst.Element(cst.Subscript(node, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))]))
         for i in range(count)]
    )  # fmt: skip


def _defaults_after(fun, count: int) -> list:
    """``(name, default)`` of ``fun``'s positional parameters after its first ``count``."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return []
    return [
        (p.name, p.default)
        for p in params[count:]
        if p.kind in _POSITIONAL and p.default is not p.empty
    ]


def _name_of(obj) -> str:
    return getattr(obj, "__name__", None) or "transformed"


def _merge_partial(fixed: list, args: list) -> list:
    """``partial(g, *fixed)(*args)``'s arguments: positional ones first the partial's, keywords the call's last."""
    positional = [a for a in fixed if a.keyword is None] + [
        a for a in args if a.keyword is None
    ]
    keywords = {a.keyword.value: a for a in fixed if a.keyword is not None}
    keywords.update({a.keyword.value: a for a in args if a.keyword is not None})
    return positional + list(keywords.values())


def _bind_like(fn, call: cst.Call, resolver, names) -> dict:
    """A call's argument nodes by ``fn``'s parameter names (``names``, in order), as Python would bind them."""
    bound = {}
    for name, arg in zip(names, [a for a in call.args if a.keyword is None]):
        bound[name] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in names or arg.keyword.value in bound:
                resolver.fail(
                    arg,
                    f"`{fn.__name__}` got an unexpected argument `{arg.keyword.value}`",
                    None,
                    S2SError,
                )
            bound[arg.keyword.value] = arg.value
    return bound


def is_literal_value(obj) -> bool:
    """A Python value generated code can spell as a literal: a bool, number, string, None, or a tuple of them."""
    # exact types: a NumPy scalar or a namedtuple would not read back as written
    if type(obj) is tuple:
        return all(type(v) in (int, float, str, bool, type(None)) for v in obj)
    return type(obj) in (bool, int, float, str, type(None))


def _math_integer(obj) -> str | None:
    """The name of ``math``'s function of integers ``obj`` is (``factorial``), else None."""
    import math

    from ..runtime.numbers import INTEGERS

    name = getattr(obj, "__name__", None)
    return name if name in INTEGERS and getattr(math, name, None) is obj else None
