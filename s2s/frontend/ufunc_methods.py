"""A ufunc's methods (``np.subtract.outer``, ``np.add.reduce``, ``np.multiply.accumulate``), read as the
NumPy functions they are.

``desugar(source)`` writes them so (``uf`` the ufunc, NumPy's or ``jax.numpy``'s):

    uf.outer(a, b)                     ->  uf(np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b)
    np.add.reduce(x, axis, keepdims=)  ->  np.sum(x, axis=axis, keepdims=...)   (axis 0 when not given)
    np.add.accumulate(x, axis)         ->  np.cumsum(x, axis=axis)              (axis 0 when not given)

``outer`` of any ufunc of two arguments; ``reduce`` of ``add``, ``multiply``, ``maximum``, ``minimum``,
``logical_and``, ``logical_or`` (``sum``, ``prod``, ``max``, ``min``, ``all``, ``any``), and of ``logaddexp``
(``scipy.special.logsumexp``); ``accumulate``
of ``add`` and ``multiply`` (``cumsum``, ``cumprod``), and of ``maximum`` and ``minimum`` (running
extremes: ``jax.lax.cummax``, ``cummin``, whose derivative reaches the element each value is). A ufunc's default axis is 0, not None: it is
written out. Other ufuncs and keywords (``dtype``, ``out``, ``initial``, ``where``) are a located error
naming the function to call instead; ``np.add.at`` is an in-place write (``frontend/effects.py``).
New nodes keep the position of the call they stand for.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst
import numpy

from ..cstutil import iter_nodes, rewrite
from ..errors import UnsupportedSyntax
from .rewriting import (
    PositionKeeping,
    bindings,
    object_of,
    place,
    with_node,
)
from .source import FunctionSource

_NP = "__s2s_numpy"  # NumPy, whatever the module imports
REDUCTIONS = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
}
ACCUMULATIONS = {
    "add": "cumsum",
    "multiply": "cumprod",
    "maximum": "lax.cummax",
    "minimum": "lax.cummin",
}
METHODS = {"reduce": REDUCTIONS, "accumulate": ACCUMULATIONS}
KEYWORDS = {"reduce": ("axis", "keepdims"), "accumulate": ("axis",)}
# what to call instead, where a function computes it
INSTEAD = {("logaddexp", "reduce"): "`scipy.special.logsumexp(x, axis=0)`"}


def _ufunc_method(obj) -> tuple[object, str] | None:
    """``(ufunc, method)`` of a bound ufunc method (``np.subtract.outer``, ``jnp.add.reduce``)."""
    owner, method = getattr(obj, "__self__", None), getattr(obj, "__name__", None)
    if method not in ("outer", "reduce", "accumulate") or owner is None:
        return None
    if isinstance(owner, numpy.ufunc) or (
        type(owner).__name__ == "ufunc" and type(owner).__module__.startswith("jax")
    ):
        return owner, method
    return None


def _np(name: str, *args: cst.BaseExpression, **keywords) -> cst.Call:
    return cst.Call(
        cst.parse_expression(f"{_NP}.{name}"),
        [cst.Arg(a) for a in args]
        + [cst.Arg(v, keyword=cst.Name(k)) for k, v in keywords.items()],
    )


class _Methods(PositionKeeping):
    def __init__(self, source: FunctionSource):
        super().__init__(source.file.positions)
        self.source = source
        self.bound = bindings(source.node)
        # the names the rewritten calls call the ufuncs by
        self.ufuncs: dict[str, object] = {}
        self.changed = False

    def _refuse(self, node, what: str, hint: str):
        raise UnsupportedSyntax(what, self.source.origin(node), hint)

    def leave_Call(self, original, updated):
        found = _ufunc_method(object_of(updated.func, self.source.env, self.bound))
        if found is None:
            return updated
        ufunc, method = found
        name = ufunc.__name__
        if any(a.star for a in updated.args):
            self._refuse(
                original,
                f"`{name}.{method}` with starred arguments",
                "pass its arguments one by one",
            )
        if method == "outer":
            new = self._outer(original, updated, ufunc)
        else:
            new = self._reduction(original, updated, name, method)
        self.changed = True
        return place(new, original, self.positions)

    def _outer(self, original, updated, ufunc) -> cst.Call:
        args = updated.args
        if len(args) != 2 or any(a.keyword is not None for a in args) or ufunc.nin != 2:
            self._refuse(
                original,
                f"`{ufunc.__name__}.outer` with other than two positional arguments",
                f"call it as `np.{ufunc.__name__}.outer(a, b)`",
            )
        a, b = (arg.value for arg in args)
        shape = cst.BinaryOperation(
            _np("shape", a),
            cst.Add(),
            cst.BinaryOperation(
                cst.Tuple([cst.Element(cst.Integer("1"))]),
                cst.Multiply(),
                _np("ndim", b),
            ),
        )
        callee = f"__s2s_ufunc_{ufunc.__name__}"
        self.ufuncs[callee] = ufunc
        return cst.Call(
            cst.Name(callee), [cst.Arg(_np("reshape", a, shape)), cst.Arg(b)]
        )

    def _reduction(self, original, updated, name: str, method: str) -> cst.Call:
        table = METHODS[method]
        special = _special() if (name, method) == ("logaddexp", "reduce") else None
        if (
            special is not None
        ):  # ``np.logaddexp.reduce(x, axis)``: ``logsumexp(x, axis)``
            self.ufuncs[_SPECIAL] = special
            table = {name: "logsumexp"}
        if name not in table:
            known = ", ".join(f"`np.{u}.{method}`" for u in table)
            self._refuse(
                original,
                f"`np.{name}.{method}`: s2s reads {known}",
                (
                    f"call {INSTEAD[name, method]}, which it is"
                    if (name, method) in INSTEAD
                    else f"write the loop (`np.{name}` of slices)"
                ),
            )
        args, allowed = updated.args, KEYWORDS[method]
        positional = [a.value for a in args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in args if a.keyword is not None}
        unknown = sorted(set(keywords) - set(allowed))
        if not positional or len(positional) > 2 or unknown:
            what = f"`{unknown[0]}`" if unknown else "these arguments"
            self._refuse(
                original,
                f"`np.{name}.{method}` with {what}",
                f"call `np.{table[name]}(x, axis=...)`, which it is",
            )
        x, *axis = positional
        keywords = {
            "axis": axis[0] if axis else keywords.get("axis", cst.Integer("0"))
        } | {k: v for k, v in keywords.items() if k != "axis"}
        call = _np(table[name], x, **keywords)
        if special is not None:
            return call.with_changes(func=cst.parse_expression(f"{_SPECIAL}.logsumexp"))
        if table[name].startswith("lax."):  # ``np.maximum.accumulate``: ``lax.cummax``
            import jax.lax

            self.ufuncs[_LAX] = jax.lax
            return call.with_changes(
                func=cst.parse_expression(f"{_LAX}.{table[name][4:]}")
            )
        return call


_SPECIAL = "__s2s_special"  # a module with ``logsumexp``: SciPy's, else jax.scipy's
_LAX = "__s2s_lax"  # ``jax.lax``, for its running extremes (``cummax``, ``cummin``)


def _special():
    try:
        import scipy.special as special
    except ImportError:  # pragma: no cover - SciPy is optional
        try:
            import jax.scipy.special as special
        except ImportError:
            return None
    return special


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its calls of ufunc methods written as the NumPy functions they are (a lambda's and a
    one-line ``def``'s too)."""
    if not any(
        isinstance(n, cst.Attribute)
        and n.attr.value in ("outer", "reduce", "accumulate")
        for n in iter_nodes(source.node)
    ):
        return source
    methods = _Methods(source)
    new = rewrite(source.node, methods)
    if not methods.changed:
        return source
    return replace(
        with_node(source, new), env={**source.env, _NP: numpy, **methods.ufuncs}
    )
