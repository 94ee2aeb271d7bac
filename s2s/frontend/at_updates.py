"""JAX's functional index updates, ``x.at[index].<method>(...)``, lowered onto s2s's element writes.

=====================================  =================================================================
you write                              resolved to
=====================================  =================================================================
``x.at[i].set(v)``                     ``rt.index_set(x, i, v)`` (as ``x[i] = v`` on a copy)
``x.at[i].add(v)``                     ``rt.index_add(x, i, v)`` (repeated positions accumulate)
``x.at[i].subtract(v)``                ``rt.index_add(x, i, -v)``
``x.at[i].multiply(v)`` (``.mul``)     ``rt.index_multiply(x, i, v, unique_indices)``
``x.at[i].divide(v)``                  ``x / rt.index_multiply(xp.ones_like(x), i, v, ...)`` (JAX's own)
``x.at[i].power(v)``                   ``x ** rt.index_multiply(xp.ones_like(x), i, v, ...)`` (JAX's own)
``x.at[i].min(v)``, ``.max(v)``        ``rt.index_min(x, i, v)``, ``rt.index_max(x, i, v)``
``x.at[i].get()``                      ``x[i]``
=====================================  =================================================================

The index is read as ``x[i]`` reads it (ints, slices, arrays, masks, ``...``,
``None`` and tuples of them; ``x.at[i, 1:3]`` is ``xp.s_[i, 1:3]``). JAX's
keyword options are constants: ``mode="clip"`` clamps the index first
(``rt.clip_index``); ``get(mode="fill", fill_value=f)`` reads
``xp.where(rt.in_bounds(x, i), xp.pad(x, rt.fill_padding(x, i))[rt.fill_index(x, i)], f)``
(out-of-bounds cotangents fall on the padding and are dropped, as in JAX); ``None``,
``"promise_in_bounds"`` and ``"fill"`` leave updates as they are (out of bounds, XLA drops
them as JAX does; NumPy raises ``IndexError``); ``"drop"`` drops out-of-bounds ``add``,
``subtract``, ``multiply``, ``divide`` and ``power`` updates on both backends (their values
neutral, at clipped indices), and leaves ``set``/``min``/``max`` as they are;
``indices_are_sorted`` is a hint; ``unique_indices`` is passed on where the
derivative needs it (``multiply``). Anything else is a located error.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..errors import S2SError, UnsupportedSyntax

# the value an update by ``mode="drop"`` makes where its index is out of bounds (accumulating updates
# only: a dropped ``set``, ``min`` or ``max`` could land on an index another update writes)
NEUTRAL = {
    "add": "0.0",
    "subtract": "0.0",
    "multiply": "1.0",
    "divide": "1.0",
    "power": "1.0",
}

SCATTERS = {
    "set": "rt.index_set",
    "add": "rt.index_add",
    "subtract": "rt.index_add",
    "multiply": "rt.index_multiply",
    "mul": "rt.index_multiply",
    "divide": "rt.index_multiply",
    "power": "rt.index_multiply",
    "min": "rt.index_min",
    "max": "rt.index_max",
}
METHODS = (*SCATTERS, "get")
OPTIONS = frozenset(
    {"indices_are_sorted", "unique_indices", "mode", "wrap_negative_indices"}
)
MODES = frozenset({None, "promise_in_bounds", "clip", "drop", "fill"})
EXAMPLE = (
    "`x.at[i].set(v)`, `.add(v)`, `.multiply(v)`, `.min(v)`, `.max(v)` or `.get()`"
)


def at_reference(node) -> cst.Subscript | None:
    """``x.at[i]`` itself, for a node that is one (else None)."""
    if (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Attribute)
        and node.value.attr.value == "at"
    ):
        return node
    return None


def is_update(node: cst.Call) -> bool:
    """``x.at[i].<method>(...)``."""
    func = node.func
    return isinstance(func, cst.Attribute) and at_reference(func.value) is not None


def _call(name, *args) -> cst.Call:
    return cst.Call(cst.parse_expression(name), [cst.Arg(a) for a in args])


class AtUpdate:
    """Lowers one ``x.at[i].<method>(...)`` call for a ``Resolver`` (its ``expr``, ``fail``, ``mark``)."""

    def __init__(self, resolver, node: cst.Call):
        self.r = resolver
        self.node = node
        self.method = node.func.attr.value
        self.ref = node.func.value
        self.what = f"`.at[...].{self.method}()`"

    def fail(self, node, message, hint=None, kind=S2SError):
        self.r.fail(node, message, hint, kind)

    def lower(self) -> cst.BaseExpression:
        if self.method not in METHODS:
            hint = (
                "JAX's `.apply` has no derivative; write `x.at[i].set(f(x[i]))`"
                if self.method == "apply"
                else f"write {EXAMPLE}"
            )
            self.fail(
                self.node.func, f"`.at[...].{self.method}()` is not supported", hint
            )
        values, options = self._arguments()
        target = self.r.expr(self.ref.value.value)
        index = self._index()
        mode = options.get("mode")
        if mode == "clip":
            index = _call("rt.clip_index", target.deep_clone(), index)
        if self.method == "get":
            return self._get(target, index, mode, options)
        (value,) = values
        unique = cst.Name(str(bool(options.get("unique_indices", False))))
        func = SCATTERS[self.method]
        if self.method == "subtract":
            value = cst.UnaryOperation(cst.Minus(), value)
        if mode == "drop" and self.method in NEUTRAL:
            # out of bounds, the update adds (multiplies by) nothing, on both backends: JAX's ``drop``
            inside = _call("rt.in_bounds", target.deep_clone(), index.deep_clone())
            value = _call("xp.where", inside, value, cst.Float(NEUTRAL[self.method]))
            index = _call("rt.clip_index", target.deep_clone(), index)
        if self.method in ("divide", "power"):
            ones = _call("xp.ones_like", target.deep_clone())
            factor = _call(func, ones, index, value, unique)
            operator = cst.Divide() if self.method == "divide" else cst.Power()
            return cst.BinaryOperation(target, operator, factor)
        if func == "rt.index_multiply":
            return _call(func, target, index, value, unique)
        return _call(func, target, index, value)

    def _get(self, target, index, mode, options):
        """``x[i]``; under ``mode="fill"``, out-of-bounds positions read ``fill_value`` (JAX's default fill)."""
        read = cst.Subscript(target, [cst.SubscriptElement(cst.Index(index))])
        if mode not in ("fill", "drop"):
            return read
        fill = options.get("fill_value")
        if fill is None:
            fill = _call("rt.default_fill", target.deep_clone())
        inside = _call("rt.in_bounds", target.deep_clone(), index.deep_clone())
        padding = _call("rt.fill_padding", target.deep_clone(), index.deep_clone())
        moved = _call("rt.fill_index", target.deep_clone(), index)
        padded = _call("xp.pad", target, padding)
        read = cst.Subscript(padded, [cst.SubscriptElement(cst.Index(moved))])
        return _call("xp.where", inside, read, fill)

    def _index(self) -> cst.BaseExpression:
        """The index as a value, as ``x[...]`` reads it: the index itself, or ``xp.s_[...]``."""
        elements = [
            e.with_changes(
                slice=self.r._slice(e.slice), comma=cst.MaybeSentinel.DEFAULT
            )
            for e in self.ref.slice
        ]
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            return elements[0].slice.value
        return cst.Subscript(cst.parse_expression("xp.s_"), elements)

    def _arguments(self):
        """The values (one for an update, none for ``get``) and the keyword options, as constants."""
        positional = [a for a in self.node.args if a.keyword is None]
        if any(a.star for a in self.node.args):
            self.fail(
                self.node, f"argument unpacking in {self.what}", None, UnsupportedSyntax
            )
        wanted = 0 if self.method == "get" else 1
        if len(positional) != wanted:
            self.fail(
                self.node,
                f"{self.what} takes {'no' if not wanted else 'one'} positional argument"
                f"{'s' if not wanted else ''} (got {len(positional)})",
                f'write {EXAMPLE}; JAX\'s options are keywords (`mode="clip"`)',
            )
        values = [self.r.expr(a.value) for a in positional]
        options = {}
        allowed = OPTIONS | ({"fill_value"} if self.method == "get" else set())
        for a in self.node.args:
            if a.keyword is None:
                continue
            name = a.keyword.value
            if name not in allowed:
                self.fail(
                    a,
                    f"{self.what} with `{name}=`, which s2s does not support",
                    "JAX's options s2s reads: " + ", ".join(sorted(allowed)),
                )
            if name == "fill_value":
                options[name] = self.r.expr(a.value)
                continue
            options[name] = self._constant(a)
        mode = options.get("mode")
        if mode not in MODES:
            self.fail(
                self.node,
                f"{self.what} with mode={mode!r}",
                "JAX's modes: None, 'promise_in_bounds', 'clip', 'drop', 'fill'",
            )
        if "fill_value" in options and mode not in ("fill", "drop"):
            self.fail(self.node, f"{self.what}: `fill_value` is read only with mode='fill'",
                      "pass `mode=\"fill\"` as well")  # fmt: skip
        if options.get("wrap_negative_indices", True) is not True:
            self.fail(self.node, f"{self.what} with wrap_negative_indices=False is not supported",
                      "leave it out: negative positions count from the end, as in NumPy")  # fmt: skip
        return values, options

    def _constant(self, arg):
        """A keyword option's value, which must be known when s2s reads the code (a literal, a module
        constant, ``jax.lax.GatherScatterMode.CLIP``)."""
        node = arg.value
        obj = self.r._callee_object(node)
        if obj is not None:
            name = getattr(obj, "name", None)
            if type(obj).__name__ == "GatherScatterMode":
                return {"CLIP": "clip", "FILL_OR_DROP": "fill"}.get(
                    name, name.lower() if isinstance(name, str) else name
                )
            if isinstance(obj, (bool, str)) or obj is None:
                return obj
        try:
            return ast.literal_eval(self.r.source.file.module.code_for_node(node))
        except (ValueError, SyntaxError):
            self.fail(
                arg,
                f"{self.what}'s `{arg.keyword.value}=` is computed at run time",
                'write it as a constant, as JAX requires (`mode="clip"`, `unique_indices=True`)',
            )


def lower(resolver, node: cst.Call) -> cst.BaseExpression:
    """The lowered expression of the update ``node`` (see the table above)."""
    return resolver.mark(AtUpdate(resolver, node).lower(), node)
