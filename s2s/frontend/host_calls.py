"""Calls of NumPy's and SciPy's functions that s2s has no op for, run when the code is traced.

``x, w = np.polynomial.legendre.leggauss(n)`` inside a function: JAX runs such
a NumPy call on the concrete values it is given, once, when it traces the
function. ``call`` writes it as ``rt.host_call(leggauss, n)``, which does the
same; the generated module imports the function by its public name.

Guarantee: a call goes here only where the callee is a plain function of
``numpy`` or ``scipy`` that s2s knows as no op (nor a random draw, nor a
``jax.numpy`` function), and no argument is a function (a callback could
read differentiated values unseen). Its rules make it a located error on the
differentiated or batched path (``no_derivative``, no batching rule), and the
runtime refuses a traced argument: it is never a silent constant.
"""

from __future__ import annotations

import inspect
import types

import libcst as cst

from .identity import spelling
from .spellings import canonical_op

HOST_LIBRARIES = ("numpy", "scipy")


def is_host_function(obj) -> bool:
    """A plain function (or ufunc) of NumPy or SciPy, no random draw, no class."""
    if isinstance(obj, type) or not callable(obj):
        return False
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", "") or ""
    parts = module.split(".")
    return (
        parts[0] in HOST_LIBRARIES
        and "random" not in parts
        and "random" not in name
        and (inspect.isfunction(obj) or inspect.isbuiltin(obj) or _is_ufunc(obj))
    )


def _is_ufunc(obj) -> bool:
    import numpy

    return isinstance(obj, numpy.ufunc)


def runs_on_host(resolver, func, node: cst.Call) -> bool:
    """Whether ``node`` calls such a function (``func`` its callee, a name or attribute chain)."""
    chain = (
        resolver._chain(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
    )
    if chain is None or chain[0] not in resolver.source.env:
        return False
    obj = resolver._object(chain)
    if isinstance(obj, types.ModuleType) or not is_host_function(obj):
        return False
    if spelling(obj) is not None or canonical_op(obj, tuple(chain[1:])) is not None:
        return False
    # (a variable holding a function is refused when the code runs: ``rt.host_call``)
    return not any(resolver._is_function(a.value) for a in node.args)


def jax_twin(resolver, func):
    """``jax.scipy``'s function of the same public path as the SciPy function ``func`` names
    (``scipy.linalg.expm`` -> ``jax.scipy.linalg.expm``), which JAX differentiates and batches; else None.
    """
    import importlib
    import sys

    obj = resolver._object(resolver._chain(func))
    name = getattr(obj, "__name__", None)
    if name is None or not (getattr(obj, "__module__", None) or "").startswith("scipy"):
        return None
    public = sorted(
        module
        for module, found in list(sys.modules.items())
        if module.startswith("scipy.")
        and not any(part.startswith("_") for part in module.split("."))
        and getattr(found, name, None) is obj
    )
    for module in sorted(public, key=len):
        try:
            twin = getattr(importlib.import_module(f"jax.{module}"), name, None)
        except ImportError:
            continue
        if callable(twin):
            return twin
    return None


def read_again(resolver, node: cst.Call) -> cst.Call | None:
    """``rt.host_call(leggauss, n)`` in generated code read again (``vmap`` of a gradient): the function
    a constant again, the other arguments resolved; None for any other call."""
    chain = resolver._chain(node.func) if isinstance(node.func, cst.Attribute) else None
    if chain is None or chain[1:] != ("host_call",) or not node.args:
        return None
    runtime = resolver.source.env.get(chain[0])
    if getattr(runtime, "__name__", None) != "s2s.runtime":
        return None
    first = node.args[0].value
    fn = resolver._callee_object(first) if isinstance(first, cst.Name) else None
    if not is_host_function(fn):
        return None
    name = _constant(resolver, first.value, fn)
    rest = [resolver._arg(a) for a in node.args[1:]]
    return resolver.mark(node.with_changes(args=[cst.Arg(cst.Name(name)), *rest]), node)


def _constant(resolver, name: str, fn) -> str:
    """The generated module's name for the library function ``fn``."""
    unique = resolver.result.scope.name(
        name, fn, resolver.locals | set(resolver.renames.values())
    )
    resolver.result.constants[unique] = fn
    return unique


def call(resolver, func, args: list, node: cst.Call) -> cst.Call:
    """``rt.host_call(fn, *positional, keywords={...})`` for the resolved arguments ``args``."""
    chain = resolver._chain(func)
    obj = resolver._object(chain)
    resolver._refuse_spread(node, args)
    name = _constant(resolver, chain[-1], obj)
    positional = [cst.Arg(a.value) for a in args if a.keyword is None]
    keywords = [
        cst.DictElement(cst.SimpleString(repr(a.keyword.value)), a.value)
        for a in args
        if a.keyword is not None
    ]
    extra = (
        [cst.Arg(cst.Dict(keywords), keyword=cst.Name("keywords"))] if keywords else []
    )
    return resolver.mark(
        cst.Call(
            cst.parse_expression("rt.host_call"),
            [cst.Arg(cst.Name(name)), *positional, *extra],
        ),
        node,
    )
