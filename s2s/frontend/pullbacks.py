"""``jax.vjp`` and ``jax.linearize`` inside a transformed function, as the ``jax.grad`` and ``jax.jvp`` they
stand for.

JAX's autodiff cookbook and its implicit-function example write::

    out, vjp_fn = jax.vjp(lambda a, b: jnp.tanh(a * b), x[:3], x[3:])
    ga, gb = vjp_fn(ct)
    y, f_jvp = jax.linearize(f, x)
    dy = f_jvp(t)

``vjp_fn`` and ``f_jvp`` are functions a transformation returns, which s2s cannot hold; what they
compute is a gradient and a forward derivative at the primals given, which s2s reads inside
(``jax.grad``, ``jax.jvp``). ``desugar(source)`` binds the function and each primal to a name on the
``vjp`` line, computes the value there (``out = fn(p1, p2)``) and defines ``vjp_fn_dot(q1, q2,
cotangent)``, the value at ``q1, q2`` dotted with the cotangent leaf by leaf, and writes each later call
as

    vjp_fn(ct)   ->  jax.grad(vjp_fn_dot, argnums=(0, 1))(p1, p2, ct)
    f_jvp(t)     ->  jax.jvp(fn, (p1,), (t,))[1]

``has_aux=True`` (``out, vjp_fn, aux = jax.vjp(fn, x, has_aux=True)``) reads the value's first item.

Guarantee: rewritten are the assignments, on a line of their own, of a call of JAX's own ``jax.vjp``
(``jax.linearize``) with positional primals to a tuple of names, whose function name is bound nowhere
else in the function and named only as the callee of calls with one positional argument per cotangent
(per primal, for ``linearize``) and no other; the primals are the values they had on that line, as
JAX's closure holds them. Such a function used otherwise (kept in a list, passed on, returned) is a
located error at the ``jax.vjp`` call; any other use of ``jax.vjp`` stays as it is (the located error
for JAX's transformations).
New nodes keep the position of the line or call they stand for.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from ..errors import UnsupportedSyntax
from .rewriting import (
    PositionKeeping,
    bindings,
    function_body,
    namer_of,
    object_of,
    place,
    with_node,
)
from .source import FunctionSource


@dataclasses.dataclass(frozen=True)
class _Pullback:
    kind: str  # "vjp" or "linearize"
    function: str  # the name the function is bound to
    primals: tuple  # the names the primals are bound to
    aux: bool
    dot: (
        str | None
    )  # for ``vjp``: the local function dotting the value with a cotangent


def _transform(call, env, bound):
    """``"vjp"``/``"linearize"`` for a call of JAX's own, else None."""
    try:
        import jax
    except ImportError:  # pragma: no cover
        return None
    if not isinstance(call, cst.Call):
        return None
    obj = object_of(call.func, env, bound)
    if obj is jax.vjp:
        return "vjp"
    if obj is jax.linearize:
        return "linearize"
    return None


class _Pullbacks(PositionKeeping):
    def __init__(self, source: FunctionSource, names: dict, jax_name: str):
        super().__init__(source.file.positions)
        self.source, self.names, self.jax = source, names, jax_name
        self.bound = bindings(source.node)
        self.namer = namer_of(source)
        self.made: dict = {}  # the function's name -> _Pullback

    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assign):
            return updated
        assign = updated.body[0]
        target, call = assign.targets[0].target, assign.value
        kind = _transform(call, self.source.env, self.bound)
        if kind is None or len(assign.targets) != 1:
            return updated
        aux = any(
            a.keyword is not None
            and a.keyword.value == "has_aux"
            and isinstance(a.value, cst.Name)
            and a.value.value == "True"
            for a in call.args
        )
        names = [e.value for e in getattr(target, "elements", ())]
        positional = [a for a in call.args if a.keyword is None]
        if (
            not isinstance(target, cst.Tuple)
            or len(names) != (3 if aux and kind == "vjp" else 2)
            or not all(isinstance(n, cst.Name) for n in names)
            or names[1].value not in self.names
            or any(a.star for a in call.args)
            or any(
                a.keyword is not None and a.keyword.value != "has_aux"
                for a in call.args
            )
            or (aux and kind != "vjp")
            or len(positional) < 2
        ):
            return updated
        pulled = names[1].value
        fun = self.namer.fresh(f"{pulled}_fun")
        primals = tuple(self.namer.fresh(f"{pulled}_at") for _ in positional[1:])
        function = positional[0].value
        if not isinstance(function, cst.Lambda):
            # (a library's function too, ``jnp.sin``: a lambda of this function calling it)
            qs = [cst.Name(self.namer.fresh(f"{pulled}_arg")) for _ in primals]
            function = cst.Lambda(
                cst.Parameters([cst.Param(q) for q in qs]),
                cst.Call(function, [cst.Arg(q) for q in qs]),
            )
        lines = [
            self._line(cst.Name(fun), function, original),
            *(
                self._line(cst.Name(p), a.value, original)
                for p, a in zip(primals, positional[1:])
            ),
        ]
        value = cst.Call(cst.Name(fun), [cst.Arg(cst.Name(p)) for p in primals])
        outputs = (
            cst.Tuple([cst.Element(names[0]), cst.Element(names[2])])
            if aux
            else names[0]
        )
        lines.append(self._line(outputs, value, original))
        dot = self.namer.fresh(f"{pulled}_dot") if kind == "vjp" else None
        if dot is not None:
            lines.append(self._dot(dot, fun, len(primals), aux, original))
        self.made[pulled] = _Pullback(kind, fun, primals, aux, dot)
        return cst.FlattenSentinel(lines)

    def _dot(self, name, fun, count, aux, like) -> cst.FunctionDef:
        """``def name(q1, ..., cotangent)``: the function's value (its first item with ``has_aux``) dotted
        with the cotangent, leaf by leaf (both trees flattened)."""
        params = ", ".join(f"q{k}" for k in range(count))
        flat = f"{self.jax}.flatten_util.ravel_pytree"
        value = f"{fun}({params})" + ("[0]" if aux else "")
        text = (
            f"def {name}({params}, cotangent):\n"
            f"    value_flat, _ = {flat}({value})\n"
            f"    cotangent_flat, _ = {flat}(cotangent)\n"
            f"    return {self.jax}.numpy.sum(value_flat * cotangent_flat)\n"
        )
        return place(cst.parse_statement(text), like, self.positions)

    def _line(self, target, value, like) -> cst.SimpleStatementLine:
        line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)])
        return place(line, like, self.positions)

    def _jax(self, name: str) -> cst.Attribute:
        return cst.Attribute(cst.Name(self.jax), cst.Name(name))

    def leave_Call(self, original, updated):
        if not isinstance(updated.func, cst.Name):
            return updated
        pull = self.made.get(updated.func.value)
        if pull is None:
            return updated
        args = [a.value for a in updated.args]
        primals = [cst.Name(p) for p in pull.primals]
        if pull.kind == "linearize":
            new = cst.Subscript(
                cst.Call(
                    self._jax("jvp"),
                    [
                        cst.Arg(cst.Name(pull.function)),
                        cst.Arg(_tuple(primals)),
                        cst.Arg(_tuple(args)),
                    ],
                ),
                [cst.SubscriptElement(cst.Index(cst.Integer("1")))],
            )
            return place(new, original, self.positions)
        (cotangent,) = args
        argnums = _tuple([cst.Integer(str(k)) for k in range(len(primals))])
        grad = cst.Call(
            self._jax("grad"),
            [
                cst.Arg(cst.Name(pull.dot)),
                cst.Arg(argnums, keyword=cst.Name("argnums")),
            ],
        )
        new = cst.Call(grad, [*(cst.Arg(p) for p in primals), cst.Arg(cotangent)])
        return place(new, original, self.positions)


def _tuple(items) -> cst.Tuple:
    """``(a, b)``; ``(a,)`` for one item."""
    return cst.Tuple(
        [cst.Element(v, comma=cst.Comma()) for v in items]
        if len(items) == 1
        else [cst.Element(v) for v in items]
    )


def _pulled_names(source: FunctionSource, bound) -> dict:
    """The names bound to the function ``jax.vjp``/``jax.linearize`` returns that the function names only
    as callees (see the module): name -> how many positional arguments its calls may take (None: any).
    """
    found = {}
    for n in iter_nodes(source.node):
        kind = (
            _transform(n.value, source.env, bound)
            if isinstance(n, cst.Assign)
            and isinstance(n.targets[0].target, cst.Tuple)
            and len(n.targets[0].target.elements) >= 2
            and isinstance(n.targets[0].target.elements[1].value, cst.Name)
            else None
        )
        if kind is not None:
            name = n.targets[0].target.elements[1].value.value
            primals = sum(a.keyword is None for a in n.value.args) - 1
            found[name] = (1 if kind == "vjp" else primals, kind, n.value)
    ok = {}
    for name, (count, kind, call) in found.items():
        if bound[name] != 1:
            continue
        mentions = [
            n
            for n in iter_nodes(source.node)
            if isinstance(n, cst.Name) and n.value == name
        ]
        calls = [
            c
            for c in iter_nodes(source.node)
            if isinstance(c, cst.Call)
            and isinstance(c.func, cst.Name)
            and c.func.value == name
        ]
        if len(mentions) == 1 + len(calls) and all(
            len(c.args) == count and not any(a.star or a.keyword for a in c.args)
            for c in calls
        ):
            ok[name] = count
            continue
        what = "a cotangent" if kind == "vjp" else "one tangent per primal"
        raise UnsupportedSyntax(
            f"the function `jax.{kind}` returns, `{name}`, used other than called with {what}",
            source.origin(call),
            f"call `{name}(...)` where its value is needed (s2s reads each call as the "
            f"{'gradient' if kind == 'vjp' else 'forward derivative'} it computes there); it cannot be "
            "kept, passed on or returned",
        )
    return ok


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its ``jax.vjp``/``jax.linearize`` read as gradients and forward derivatives."""
    if function_body(source) is None:
        return source
    bound = bindings(source.node)
    names = _pulled_names(source, bound)
    if not names:
        return source
    import jax
    import jax.flatten_util

    env = dict(source.env)
    jax_name = next(
        (k for k, v in env.items() if v is jax and k not in bound), None
    ) or namer_of(source).fresh("jax")
    env[jax_name] = jax
    pullbacks = _Pullbacks(dataclasses.replace(source, env=env), names, jax_name)
    new = rewrite(source.node, pullbacks)
    if not pullbacks.made:
        return source
    return dataclasses.replace(with_node(source, new), env=env)
