"""Calls of library code that JAX traces, resolved into ``rt.foreign(fn, *args, keywords={...})``.

The resolver hands a call here only where it would otherwise refuse it:

- a library function it has no op for (``optax.l2_loss(p, y)``), a callable
  library object held in a module global (``layer(x)``, ``layer =
  eqx.nn.Linear(...)``) or a method of one (``model.apply(params, x)``,
  ``opt.update(grads, state)``): accepted when ``runtime.foreign.library_code``
  says the code that runs is JAX code of an installed library (never ``jax``'s or
  NumPy's own: those are s2s's ops, or a located error; but a ``jax.lax`` array
  function s2s has no op for, ``lax.conv_general_dilated``, ``lax.cumlogsumexp``,
  is called so, imported by its ``jax.lax`` name). The callable becomes a
  constant of the generated module named as the user spells it (``optax_l2_loss``,
  ``model_apply``);
- a call of a parameter or a local value (``model(x)``, an Equinox model passed
  in and differentiated; ``loss_fn(p, y)`` after ``loss_fn = optax.l2_loss``):
  the callable is an operand, checked when the call runs (a function of your
  own there is a located error, never traced by JAX instead).

Keyword arguments bind to positions by the callee's signature where they can;
the others must be constants (``keywords={"train": False}``): a keyword
argument with a computed value is a located error, never a silent zero
derivative. A library's JAX callable used as a value (passed to a helper,
held in a local) is such a constant too.
"""

from __future__ import annotations

import inspect

import libcst as cst

from ..cstutil import literal
from ..errors import NameResolutionError, UnsupportedSyntax
from ..runtime.foreign import lax_function, library_code
from . import library
from .host_calls import is_host_function


def callee(resolver, node, path) -> cst.Name | None:
    """The module-level name for the library callable ``path`` reaches at ``node`` (called there, passed on as
    a value, or an operand of ``rt.foreign`` in generated code), if it is a library's JAX code; None to let
    the resolver refuse it."""
    obj = resolver._object(path)
    if library_code(obj) is None:
        return None
    return _constant(resolver, "_".join(path), obj)


def method(resolver, chain, args, node):
    """``model.apply(params, x)`` on a library object held in a module global: a foreign call, or None."""
    obj = resolver._object(chain)
    if library_code(obj) is None:
        return None
    return call(resolver, _constant(resolver, "_".join(chain), obj), args, node, obj)


def vmapped(resolver, func, args, node):
    """``jax.vmap(model)(xs)`` (or ``s2s.vmap``) of a parameter, a local value (not a local function: s2s
    reads those) or a library's JAX code, which s2s cannot read: ``rt.foreign(rt.vmap_of((None, *in_axes)), model, xs)``, mapped by ``jax.vmap``; else None.
    """
    if not isinstance(func, cst.Call) or not func.args:
        return None
    maker = library.transform_maker(resolver._callee_object(func.func))
    if getattr(maker, "__name__", None) != "vmap" or func.args[0].keyword is not None:
        return None
    target = func.args[0].value
    local = isinstance(target, cst.Name) and target.value in resolver.locals
    if (
        local and target.value in resolver._aliases
    ):  # ``jax.vmap(u_tt)`` of ``u_tt = jax.grad(u1)``
        return None
    functions = resolver._local_fns.keys() | resolver._outer_fns.keys()
    if local and target.value not in functions:  # checked when it runs
        fn = resolver.expr(target)
    else:
        obj = resolver._callee_object(target)
        if obj is None or library_code(obj) is None:
            return None
        fn = _constant(resolver, "_".join(resolver._chain(target)), obj)
    resolver._refuse_spread(node, args)
    what = resolver.source.file.module.code_for_node(func)
    options = {}
    for i, a in enumerate(func.args[1:], start=1):
        name = a.keyword.value if a.keyword is not None else VMAP_OPTIONS[i - 1]
        options[name] = resolver._static_option(a.value, func)
    if set(options) - {"in_axes", "out_axes"} or options.get("out_axes", 0) != 0:
        resolver.fail(func, f"`{what}` of library code with options other than `in_axes`",
                      "map with `in_axes` only (outputs are mapped along axis 0)", UnsupportedSyntax)  # fmt: skip
    if any(a.keyword is not None for a in args):
        resolver.fail(node, f"keyword arguments to `{what}`, which maps library code",
                      "pass the arguments positionally", UnsupportedSyntax)  # fmt: skip
    axes = options.get("in_axes", 0)
    axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,) * len(args)
    if len(axes) != len(args) or not all(a is None or type(a) is int for a in axes):
        resolver.fail(func, f"`{what}`: in_axes {options.get('in_axes', 0)!r} for {len(args)} arguments",
                      "give one axis (an int or None) per argument", UnsupportedSyntax)  # fmt: skip
    made = cst.Call(
        cst.parse_expression("rt.vmap_of"), [cst.Arg(literal((None, *axes)))]
    )
    arguments = [cst.Arg(made), cst.Arg(fn), *(cst.Arg(a.value) for a in args)]
    return resolver.mark(cst.Call(cst.parse_expression("rt.foreign"), arguments), node)


VMAP_OPTIONS = ("in_axes", "out_axes", "axis_name", "axis_size")
# defaults written out where a keyword argument moves to its position
LITERAL_TYPES = (bool, int, float, str, type(None))


def _constant(resolver, name, obj) -> cst.Name:
    unique = resolver.result.scope.name(
        name, obj, resolver.locals | set(resolver.renames.values())
    )
    resolver.result.constants[unique] = obj
    return cst.Name(unique)


def import_of(obj) -> tuple[str, str] | None:
    """``("optax", "l2_loss")`` when a library's JAX function ``obj`` is importable by its name from its module
    or a public package above it (the shortest such module): the generated module imports it, so a reader
    sees what it is and the file runs on its own. None for anything else (a library object of yours).
    """
    import sys

    name = getattr(obj, "__name__", None)
    module = getattr(obj, "__module__", None)
    if (
        not isinstance(name, str)
        or not isinstance(module, str)
        or (library_code(obj) is None and not is_host_function(obj))
    ):
        return None
    if lax_function(obj):  # ``jax.lax``'s public name
        return "jax.lax", name
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        candidate = ".".join(parts[:i])
        if any(p.startswith("_") for p in parts[1:i]) and i < len(parts):
            continue
        if getattr(sys.modules.get(candidate), name, None) is obj:
            return candidate, name
    return None


def is_callable_constant(resolver, callee) -> bool:
    """Whether ``callee`` (a resolved callee expression) names a library callable held as a constant."""
    return (
        isinstance(callee, cst.Name)
        and callee.value in resolver.result.constants
        and callable(resolver.result.constants[callee.value])
        and library_code(resolver.result.constants[callee.value]) is not None
    )


def call(resolver, fn: cst.BaseExpression, args: list, node, obj=None) -> cst.Call:
    """``rt.foreign(fn, *positional, keywords={...})`` for the resolved arguments ``args`` of ``node``;
    ``obj`` is the callable when it is known now (its signature places keyword arguments).
    """
    if obj is None and isinstance(fn, cst.Name):
        obj = resolver.result.constants.get(fn.value)
    args = jax_functions_as_themselves(resolver, args, node)
    what = resolver.source.file.module.code_for_node(node.func)
    if obj is not None and lax_function(obj):
        _refuse_your_functions(resolver, node, what)
    positional, constants = _place(resolver, obj, args, node, what)
    keywords = {}
    if constants:
        keywords["keywords"] = cst.Dict(
            [
                cst.DictElement(cst.SimpleString(repr(k)), v)
                for k, v in constants.items()
            ]
        )
    arguments = [cst.Arg(fn), *(cst.Arg(v) for v in positional)]
    arguments += [cst.Arg(v, keyword=cst.Name(k)) for k, v in keywords.items()]
    return resolver.mark(cst.Call(cst.parse_expression("rt.foreign"), arguments), node)


def _refuse_your_functions(resolver, node, what) -> None:
    """A located error for a function of your program handed to a ``jax.lax`` function (``lax.reduce_window(x,
    0.0, my_add, ...)``): JAX would run it itself, as its generic primitive, which has no derivative.
    """
    import inspect

    from .spellings import is_library

    for written in node.args:
        value = written.value
        if not isinstance(value, (cst.Name, cst.Attribute)):
            continue
        found = resolver._callee_object(value)
        if not inspect.isfunction(found) or is_library(found) or lax_function(found):
            continue
        name = resolver.source.file.module.code_for_node(value)
        resolver.fail(value, f"`{name}`, a function of your program, handed to `{what}` (JAX's code, which "
                      "would run it itself, with no derivative: s2s transforms your functions from their source)",
                      "pass JAX's own function where it takes one (`lax.add`, `lax.max`), or write the "
                      "computation with NumPy or jax.numpy ops in your function")  # fmt: skip


def jax_functions_as_themselves(resolver, args, node) -> list:
    """``args`` with each ``jax.lax`` function passed by name (``lax.add`` to ``lax.reduce_window``) the
    function itself, not s2s's op of the same name: JAX's code tells its reductions by identity.
    """
    if len(args) != len(node.args) or any(a.star for a in node.args):
        return args
    out = []
    for written, arg in zip(node.args, args):
        value = written.value
        found = (
            resolver._callee_object(value)
            if isinstance(value, (cst.Name, cst.Attribute))
            else None
        )
        if found is not None and lax_function(found):
            arg = arg.with_changes(
                value=_constant(resolver, f"lax_{found.__name__}", found)
            )
        out.append(arg)
    return out


def _place(resolver, obj, args, node, what):
    """The positional argument values and the constant keyword arguments of a foreign call.

    A keyword argument of a parameter the callee also takes by position moves there (the parameters before
    it given, or filled with their literal defaults); a constant one may stay a keyword. Any other keyword
    argument is a located error.
    """
    positional = [a.value for a in args if a.keyword is None]
    keywords = {a.keyword.value: a for a in args if a.keyword is not None}
    if not keywords:
        return positional, {}
    params = _positional_parameters(obj)
    # the last parameter by position that a computed keyword argument names: everything up to it moves
    computed = [
        params.index(k)
        for k, a in keywords.items()
        if k in params and not _is_constant(a.value)
    ]
    if computed:
        signature = inspect.signature(obj)
        for i in range(len(positional), max(computed) + 1):
            name = params[i]
            if name in keywords:
                positional.append(keywords.pop(name).value)
                continue
            default = signature.parameters[name].default
            if (
                type(default) not in LITERAL_TYPES
            ):  # ``inspect.Parameter.empty`` included
                resolver.fail(
                    node,
                    f"`{what}(...)`, a library function s2s calls through JAX, gets `{params[max(computed)]}` "
                    f"by keyword without `{name}`, which comes before it and has no literal default",
                    f"pass `{name}` too, or the arguments positionally",
                    UnsupportedSyntax,
                )
            positional.append(cst.parse_expression(repr(default)))
    for name, a in keywords.items():
        if not _is_constant(a.value):
            written = [w for w in node.args if w.keyword and w.keyword.value == name]
            resolver.fail(
                written[0] if written else node,
                f"keyword argument `{name}=` of `{what}(...)`, which s2s calls through JAX as library code, "
                "has a value computed in the function: s2s passes keyword arguments to library code as constants",
                "pass it positionally if the function takes it so, or give a literal value",
                NameResolutionError,
            )
    return positional, {name: a.value for name, a in keywords.items()}


def _positional_parameters(obj) -> list[str]:
    """The names of the parameters ``obj`` takes by position or keyword (none when its signature is unknown)."""
    if obj is None:
        return []
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = []
    for p in signature.parameters.values():
        if p.kind not in kinds:
            break
        names.append(
            p.name if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD else ""
        )
    return names


def _is_constant(node) -> bool:
    """A literal: a number, string, True/False/None, or a tuple of them."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    return isinstance(node, cst.Tuple) and all(
        _is_constant(e.value) for e in node.elements
    )
