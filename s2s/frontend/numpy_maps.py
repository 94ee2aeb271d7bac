"""NumPy's functions that map a Python function over elements or rows, read as ``jax.vmap``.

``np.vectorize(huber)(r, delta)`` calls ``huber`` on each element of the broadcast arguments (Python
``if``s on them included), and ``np.apply_along_axis(f, 1, X)`` calls ``f`` on each row: both are a
``vmap``, which compiles (NumPy's own loop in Python does not). ``desugar(source)`` writes them so:

    np.vectorize(f)(a, b)         ->  np.reshape(jax.vmap(f)(np.ravel(np.broadcast_to(a, S)),
                                                          np.ravel(np.broadcast_to(b, S))), S)
                                      with S = np.broadcast_shapes(np.shape(a), np.shape(b))
    np.apply_along_axis(f, k, X)  ->  rt.rows_back(jax.vmap(f)(rt.rows_along(X, k)), X, k)

``f`` is any function s2s reads under ``jax.vmap`` (a function of the program, a lambda, a local
``def``); ``apply_along_axis``'s extra arguments are passed to each call (``lambda row: f(row, *args)``).

Guarantee: ``np.vectorize(f)(...)`` (or ``jnp.vectorize(f)(...)``) called in place, or a name bound once to ``np.vectorize(f)``
(``g = np.vectorize(f)`` in the function, or a module-level ``@np.vectorize`` function) and only
called, with positional arguments, ``f`` returning one value; ``doc``, ``cache`` and ``otypes`` of
floats are read as NumPy does (they do not change values); other ``otypes``, ``excluded`` and
``signature`` stay a located error. ``np.apply_along_axis(f, axis, arr, *args)`` with ``axis`` an int and ``f`` returning a
number or a 1-D array. New nodes keep the position of the call they stand for.
"""

from __future__ import annotations

import sys

import libcst as cst
import numpy

from ..cstutil import iter_nodes, rewrite
from ..errors import UnsupportedSyntax
from .rewriting import (
    PositionKeeping,
    assignment,
    bindings,
    function_body,
    object_of,
    place,
    referenced_objects,
    references,
    with_body,
)
from .source import FunctionSource

# names the rewritten calls read: NumPy and ``jax.vmap`` whatever the module imports
_NP, _VMAP = "__s2s_numpy", "__s2s_vmap"
_ROWS_ALONG, _ROWS_BACK = "__s2s_rows_along", "__s2s_rows_back"
_IGNORED = ("otypes", "doc", "cache")


def _vectorizes() -> tuple:
    """``np.vectorize``, and ``jnp.vectorize`` where ``jax.numpy`` is imported (the same map of a function
    over elements)."""
    jnp = sys.modules.get("jax.numpy")
    return (numpy.vectorize,) + ((jnp.vectorize,) if jnp is not None else ())


def _jax_vectorized(obj) -> tuple | None:
    """``(pyfunc, excluded, signature)`` of a function ``jnp.vectorize`` made (its wrapper closes over
    them), else None."""
    code = getattr(obj, "__code__", None)
    if code is None or code.co_qualname != "vectorize.<locals>.wrapped":
        return None  # (``functools.wraps`` gave the wrapper the function's own names)
    if not code.co_filename.replace("\\", "/").endswith("jax/_src/numpy/vectorize.py"):
        return None
    cells = dict(
        zip(code.co_freevars, (c.cell_contents for c in obj.__closure__ or ()))
    )
    if "pyfunc" not in cells:
        return None
    return cells["pyfunc"], cells.get("excluded"), cells.get("signature")


def _is_vectorize(obj) -> bool:
    return any(obj is v for v in _vectorizes())


def _call(func: str, *args) -> cst.Call:
    return cst.Call(cst.parse_expression(func), [cst.Arg(a) for a in args])


def _np(name: str, *args) -> cst.Call:
    return _call(f"{_NP}.{name}", *args)


class _Maps(PositionKeeping):
    def __init__(self, source: FunctionSource, aliases: dict):
        super().__init__(source.file.positions)
        self.source = source
        self.bound = bindings(source.node)
        self.aliases = aliases  # a local name bound to ``np.vectorize(f)`` -> that call
        self.functions = {}  # names given to ``@np.vectorize`` functions' own functions
        self.changed = False

    def _object(self, node):
        return object_of(node, self.source.env, self.bound)

    def _mapped(self, func) -> cst.BaseExpression | None:
        """The function a vectorized callee maps (``f`` of ``np.vectorize(f)``), else None."""
        if isinstance(func, cst.Name) and func.value in self.aliases:
            func = self.aliases[func.value]
        if isinstance(func, cst.Call) and _is_vectorize(self._object(func.func)):
            return self._options(func)
        obj = self._object(func)
        jax_options = _jax_vectorized(obj)
        if jax_options is not None:  # ``@jnp.vectorize`` at module level
            pyfunc, excluded, signature = jax_options
            if excluded or signature is not None:
                self._refuse(func, "`jnp.vectorize` with `excluded` or `signature`")
            name = f"__s2s_vectorized_{len(self.functions)}"
            self.functions[name] = pyfunc
            return cst.Name(name)
        if isinstance(obj, numpy.vectorize):  # ``@np.vectorize`` at module level
            if obj.excluded or obj.signature is not None:
                self._refuse(func, "`np.vectorize` with `excluded` or `signature`")
            if obj.otypes and not all(c in "efdg" for c in obj.otypes):
                self._refuse(func, "`np.vectorize` with `otypes` other than floats")
            name = f"__s2s_vectorized_{len(self.functions)}"
            self.functions[name] = obj.pyfunc
            return cst.Name(name)
        return None

    def _options(self, made: cst.Call):
        if not made.args or made.args[0].keyword is not None or made.args[0].star:
            self._refuse(
                made, "`np.vectorize` without the function as its first argument"
            )
        for a in made.args[1:]:
            if a.keyword is None or a.keyword.value not in _IGNORED:
                what = (
                    a.keyword.value if a.keyword is not None else "a positional option"
                )
                self._refuse(made, f"`np.vectorize` with `{what}`")
            if a.keyword.value == "otypes" and not self._float_types(a.value):
                # (``otypes=[int]`` casts each result: a value s2s's float results would not match)
                self._refuse(made, "`np.vectorize` with `otypes` other than floats")
        return made.args[0].value

    def _float_types(self, node) -> bool:
        """Whether ``otypes`` lists float types only (``[float]``, ``"d"``, ``[np.float64]``)."""
        if isinstance(node, cst.SimpleString):
            return all(c in "efdg" for c in node.evaluated_value)
        if not isinstance(node, (cst.List, cst.Tuple)):
            return False
        for el in node.elements:
            value = el.value
            if isinstance(value, cst.Name) and value.value == "float":
                continue
            kind = (
                value.evaluated_value
                if isinstance(value, cst.SimpleString)
                else self._object(value)
            )
            try:
                if kind is None or numpy.dtype(kind).kind != "f":
                    return False
            except TypeError:
                return False
        return True

    def _refuse(self, node, what: str):
        raise UnsupportedSyntax(
            f"{what}: s2s reads `np.vectorize(f)(...)` as `jax.vmap` of `f` over every element",
            self.source.origin(node),
            "call `np.vectorize(f)` with the function alone, and pass every argument positionally",
        )

    def leave_Call(self, original, updated):
        mapped = self._mapped(updated.func)
        if mapped is not None:
            return self._vectorized(original, mapped, updated.args)
        if self._object(updated.func) is numpy.apply_along_axis:
            return self._along_axis(original, updated)
        return updated

    def _vectorized(self, original, f, args):
        if not args or any(a.keyword is not None or a.star for a in args):
            self._refuse(
                original,
                "a call of a `np.vectorize` function with keyword or starred arguments",
            )
        values = [a.value for a in args]
        shape = _np("broadcast_shapes", *(_np("shape", v) for v in values))
        flat = [_np("ravel", _np("broadcast_to", v, shape)) for v in values]
        mapped = cst.Call(_call(_VMAP, f), [cst.Arg(v) for v in flat])
        self.changed = True
        return place(_np("reshape", mapped, shape), original, self.positions)

    def _along_axis(self, original, updated):
        args = updated.args
        if len(args) < 3 or any(a.keyword is not None or a.star for a in args):
            raise UnsupportedSyntax(
                "`np.apply_along_axis` with keyword or starred arguments",
                self.source.origin(original),
                "call it as `np.apply_along_axis(f, axis, arr, *extra)`",
            )
        f, axis, arr = (a.value for a in args[:3])
        extra = [a.value for a in args[3:]]
        if extra:  # each call gets the extra arguments: ``lambda row: f(row, *extra)``
            row = cst.Name("__s2s_row")
            body = cst.Call(f, [cst.Arg(row), *(cst.Arg(v) for v in extra)])
            f = cst.Lambda(cst.Parameters([cst.Param(row)]), body)
        rows = _call(_ROWS_ALONG, arr, axis)
        mapped = cst.Call(_call(_VMAP, f), [cst.Arg(rows)])
        self.changed = True
        back = _call(_ROWS_BACK, mapped, arr, axis)
        return place(back, original, self.positions)


def _alias(stmt, maps) -> tuple[str, cst.Call] | None:
    """``(g, call)`` of a line ``g = np.vectorize(f)``, ``g`` bound once, else None."""
    assign = assignment(stmt)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name):
        return None
    name, value = assign.targets[0].target.value, assign.value
    if (
        isinstance(value, cst.Call)
        and maps.bound[name] == 1
        and _is_vectorize(maps._object(value.func))
    ):
        return name, value
    return None


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``np.vectorize`` and ``np.apply_along_axis`` calls written as ``jax.vmap``."""
    body = function_body(source)
    if body is None or not (
        references(source, (*_vectorizes(), numpy.apply_along_axis))
        or any(
            isinstance(v, numpy.vectorize) or _jax_vectorized(v) is not None
            for v in referenced_objects(source).values()
        )
    ):
        return source
    maps = _Maps(source, {})
    lines = [(s, _alias(s, maps)) for s in body]
    maps.aliases = dict(a for _, a in lines if a is not None)
    new = [rewrite(s, maps) for s, a in lines if a is None]
    if not maps.changed:
        return source
    used = {n.value for s in new for n in iter_nodes(s) if isinstance(n, cst.Name)}
    if used & maps.aliases.keys():
        return source  # a vectorized function passed on, or read otherwise: NumPy's own error
    import jax  # (only for code that maps: the compiler does not import JAX otherwise)

    from ..runtime import maps as rows

    env = {
        **source.env,
        _NP: numpy,
        _VMAP: jax.vmap,
        _ROWS_ALONG: rows.rows_along,
        _ROWS_BACK: rows.rows_back,
        **maps.functions,
    }
    return with_body(source, new, env=env)
