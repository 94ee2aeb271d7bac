"""``jax.jacfwd``, ``jax.jacrev`` and ``jax.hessian`` called inside a transformed function, read as the
``jax.vmap``, ``jax.jvp`` and ``jax.grad`` they are made of (which s2s reads, and differentiates again).

A physics-informed loss takes the Laplacian of its network (``jnp.trace(jax.hessian(u, argnums=1)(params,
x))``), a Laplace approximation the Hessian of a log density, an implicit solver the Jacobian of its
right-hand side. ``desugar(source)`` writes each such call, with ``k`` its ``argnums`` and ``a`` the
arguments (``z`` standing for ``a[k]`` in ``F(..z..)``):

    jax.jacfwd(F, k)(*a)   ->  columns: jax.vmap(lambda t: jax.jvp(lambda z: F(..z..), (a[k],), (t,))[1])
                               of the basis of ``a[k]``, moved last and shaped ``out.shape + a[k].shape``
    jax.jacrev(F, k)(*a)   ->  rows: jax.vmap(lambda c: jax.grad(lambda z: np.sum(c * F(..z..)))(a[k]))
                               of the basis of the output, shaped ``out.shape + a[k].shape``
    jax.hessian(F, k)(*a)  ->  jax.jacfwd(jax.grad(F, k), k)(*a)   (forward over reverse, as JAX's)

``F`` is any function s2s reads under those transformations (a function of the program, a local ``def``
or lambda, ``jax.grad(u)``, a name bound to one, another of these). A name bound once to ``jax.jacfwd(F)``
(``H = jax.hessian(f)``) and only called is its calls.

Guarantee: the rewritten call computes JAX's Jacobian for an array argument ``a[k]`` and an array output
(the arguments written once in it are read where the call stands); ``argnums`` an int; other options
(``has_aux``, ``holomorphic``, a tuple ``argnums``) and ``*``/``**`` arguments stay a located error.
New nodes keep the position of the call they stand for.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import call as _call
from ..cstutil import iter_nodes, rewrite, substitute
from ..errors import UnsupportedSyntax
from .rewriting import (
    PositionKeeping,
    assignment,
    bindings,
    function_body,
    object_of,
    place,
    references,
    with_body,
)
from .source import FunctionSource

# names the rewritten calls read, whatever the module imports
_NP, _VMAP, _JVP, _GRAD = "__s2s_numpy", "__s2s_vmap", "__s2s_jvp", "__s2s_grad"


def _kinds() -> dict:
    """The Jacobian makers by identity: JAX's and s2s's own spellings."""
    import jax

    import s2s

    return {
        jax.jacfwd: "jacfwd",
        jax.jacrev: "jacrev",
        jax.jacobian: "jacrev",  # (JAX's alias of jacrev)
        jax.hessian: "hessian",
        s2s.jacfwd: "jacfwd",
        s2s.jacrev: "jacrev",
        s2s.hessian: "hessian",
    }


def _lambda(param: str, body) -> cst.Lambda:
    return cst.Lambda(cst.Parameters([cst.Param(cst.Name(param))]), body)


def _subscript(value, index: int) -> cst.Subscript:
    return cst.Subscript(
        value, [cst.SubscriptElement(cst.Index(cst.Integer(str(index))))]
    )


def _tuple(*values) -> cst.Tuple:
    return cst.Tuple([cst.Element(v) for v in values])


class _Jacobians(PositionKeeping):
    def __init__(self, source: FunctionSource, aliases: dict, kinds: dict):
        super().__init__(source.file.positions)
        self.source, self.kinds, self.aliases = source, kinds, aliases
        self.bound = bindings(source.node)
        self.fresh = 0
        self.changed = False

    def maker(self, func):
        """``(kind, call)`` for a Jacobian maker's call (or a name bound to one), else None."""
        if isinstance(func, cst.Name) and func.value in self.aliases:
            func = self.aliases[func.value]
        if not isinstance(func, cst.Call):
            return None
        kind = self.kinds.get(object_of(func.func, self.source.env, self.bound))
        return None if kind is None else (kind, func)

    def _refuse(self, node, what: str):
        raise UnsupportedSyntax(
            f"{what}: s2s reads `jax.jacfwd`/`jax.jacrev`/`jax.hessian` inside a function as the `jax.vmap` "
            "of `jax.jvp`/`jax.grad` they are made of",
            self.source.origin(node),
            "call it as `jax.hessian(f, argnums=k)(x, ...)`, with one int `argnums` and positional arguments",
        )

    def _name(self, stem: str) -> str:
        self.fresh += 1
        return f"__s2s_{stem}{self.fresh}"

    def leave_Call(self, original, updated):
        found = self.maker(updated.func)
        if found is None:
            return updated
        self.changed = True
        return place(
            self.jacobian(original, *found, updated.args), original, self.positions
        )

    def jacobian(self, original, kind, made, args):
        """The expression for ``made(*args)``, ``made`` a ``kind`` maker's call."""
        if not made.args or made.args[0].keyword is not None or made.args[0].star:
            self._refuse(
                original, f"`{kind}` without the function as its first argument"
            )
        f, k = made.args[0].value, 0
        for i, a in enumerate(made.args[1:]):
            name = (
                a.keyword.value
                if a.keyword is not None
                else ("argnums" if i == 0 else None)
            )
            if name != "argnums" or not isinstance(a.value, cst.Integer):
                self._refuse(
                    original, f"`{kind}` with an option other than one int `argnums`"
                )
            k = int(a.value.value)
        if any(a.star for a in args) or k >= len(
            [a for a in args if a.keyword is None]
        ):
            self._refuse(
                original,
                f"`{kind}` called with `*`/`**` arguments, or fewer than `argnums` asks",
            )
        if kind == "hessian":
            inner = _call(_GRAD, f, argnums=cst.Integer(str(k)))
            return self.forward(inner, k, args)
        return (
            self.forward(f, k, args) if kind == "jacfwd" else self.reverse(f, k, args)
        )

    def _applied(self, f, k, args, z):
        """``f`` called with ``args``, the ``k``-th positional one replaced by the name ``z`` (a Jacobian
        maker's call in ``f`` is rewritten too)."""
        positional = [a for a in args if a.keyword is None]
        replaced = [
            a.with_changes(value=cst.Name(z)) if a is positional[k] else a for a in args
        ]
        return self._called(f, replaced)

    def _called(self, f, args):
        """``f(*args)``: a lambda's body at them, a Jacobian maker's call written out, else the call."""
        if isinstance(f, cst.Lambda):  # ``jax.jacfwd(lambda v: ...)``
            return _inlined(f, args) or cst.Call(f, args)
        call = cst.Call(f, args)
        found = self.maker(f)
        return call if found is None else self.jacobian(call, *found, args)

    def forward(self, f, k, args):
        x = [a for a in args if a.keyword is None][k].value
        t, z = self._name("t"), self._name("z")
        column = _lambda(
            t,
            _subscript(
                _call(
                    _JVP,
                    _lambda(z, self._applied(f, k, args, z)),
                    _tuple(x),
                    _tuple(cst.Name(t)),
                ),
                1,
            ),
        )
        columns = cst.Call(_call(_VMAP, column), [cst.Arg(_basis(x))])
        moved = _call(
            f"{_NP}.moveaxis",
            columns,
            cst.Integer("0"),
            cst.UnaryOperation(cst.Minus(), cst.Integer("1")),
        )
        shape = cst.BinaryOperation(
            _subscript_slice(_call(f"{_NP}.shape", moved)),
            cst.Add(),
            _call(f"{_NP}.shape", x),
        )
        return _call(f"{_NP}.reshape", moved, shape)

    def reverse(self, f, k, args):
        x = [a for a in args if a.keyword is None][k].value
        c, z = self._name("c"), self._name("z")
        out = self._applied(f, k, args, z)
        weighted = _lambda(
            z,
            _call(f"{_NP}.sum", cst.BinaryOperation(cst.Name(c), cst.Multiply(), out)),
        )
        row = _lambda(c, cst.Call(_call(_GRAD, weighted), [cst.Arg(x)]))
        value = self._called(f, list(args))
        rows = cst.Call(_call(_VMAP, row), [cst.Arg(_basis(value))])
        shape = cst.BinaryOperation(
            _call(f"{_NP}.shape", value), cst.Add(), _call(f"{_NP}.shape", x)
        )
        return _call(f"{_NP}.reshape", rows, shape)


def _inlined(lam: cst.Lambda, args) -> cst.BaseExpression | None:
    """A lambda's body with its parameters replaced by the arguments of a call of it; None when it is not
    that simple (defaults, ``*``, keywords, a lambda inside rebinding names)."""
    params = lam.params
    if (
        isinstance(params.star_arg, (cst.Param, cst.ParamStar))
        or params.kwonly_params
        or params.posonly_params
        or params.star_kwarg is not None
        or any(p.default is not None for p in params.params)
        or len(params.params) != len(args)
        or any(a.keyword is not None or a.star for a in args)
        or any(isinstance(n, cst.Lambda) for n in iter_nodes(lam.body))
    ):
        return None
    return substitute(
        lam.body, {p.name.value: a.value for p, a in zip(params.params, args)}
    )


def _basis(x) -> cst.Call:
    """The rows of the identity shaped like ``x``: ``np.eye(n, dtype=np.result_type(x))`` reshaped to
    ``(n,) + np.shape(x)`` (``x`` may be a Python number)."""
    size = _call(f"{_NP}.size", x)
    eye = _call(f"{_NP}.eye", size, dtype=_call(f"{_NP}.result_type", x))
    shape = cst.BinaryOperation(
        cst.Tuple([cst.Element(size)]), cst.Add(), _call(f"{_NP}.shape", x)
    )
    return _call(f"{_NP}.reshape", eye, shape)


def _subscript_slice(value) -> cst.Subscript:
    """``value[:-1]``."""
    return cst.Subscript(
        value,
        [
            cst.SubscriptElement(
                cst.Slice(
                    lower=None, upper=cst.UnaryOperation(cst.Minus(), cst.Integer("1"))
                )
            )
        ],
    )


def _alias(stmt, jacobians) -> tuple[str, cst.Call] | None:
    """``(H, call)`` of a line ``H = jax.hessian(f)``, ``H`` bound once, else None."""
    assign = assignment(stmt)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name):
        return None
    name = assign.targets[0].target.value
    if jacobians.bound[name] == 1 and jacobians.maker(assign.value) is not None:
        return name, assign.value
    return None


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its calls of ``jax.jacfwd``/``jax.jacrev``/``jax.hessian`` written out."""
    import sys

    body = function_body(source)
    if (
        body is None or "jax" not in sys.modules
    ):  # no maker can be called: nothing to read
        return source
    kinds = _kinds()
    if not references(source, kinds):
        return source
    jacobians = _Jacobians(source, {}, kinds)
    lines = [(s, _alias(s, jacobians)) for s in body]
    jacobians.aliases = dict(a for _, a in lines if a is not None)
    new = [rewrite(s, jacobians) for s, a in lines if a is None]
    if not jacobians.changed:
        return source
    used = {n.value for s in new for n in iter_nodes(s) if isinstance(n, cst.Name)}
    if used & jacobians.aliases.keys():
        return source  # a Jacobian function passed on, or read otherwise: the resolver's error
    import jax
    import numpy

    env = {**source.env, _NP: numpy, _VMAP: jax.vmap, _JVP: jax.jvp, _GRAD: jax.grad}
    return with_body(source, new, env=env)
