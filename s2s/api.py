"""The public API, with JAX's semantics: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``linearize``, ``@transform``.

Each transformed function is generated once (from source), loaded from a
real file, and run compiled through XLA with ``jax.jit`` (cached per shapes
and dtypes; Python ints, bools and strings are compile-time constants), or
eagerly on NumPy with ``backend="numpy"``. It is itself a valid JAX function:
``jax.jit(s2s.grad(f))`` works.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from .codegen import Generated, generate
from .runtime import backends, loader
from .runtime.trees import tree_leaves


def _check_argnums(fn, argnums):
    n = len(inspect.signature(fn).parameters)
    for i in (argnums,) if isinstance(argnums, int) else argnums:
        if not isinstance(i, int) or not -n <= i < n:
            raise ValueError(
                f"differentiating with respect to argnums={argnums} requires at least "
                f"{(i + 1) if isinstance(i, int) else '?'} positional arguments to be passed by the caller, "
                f"but `{fn.__name__}` has {n} parameters."
            )
    if isinstance(argnums, int):
        return argnums % n
    return tuple(i % n for i in argnums)


def _check_float_inputs(args, argnums):
    for i in (argnums,) if isinstance(argnums, int) else argnums:
        for leaf in tree_leaves(args[i]):
            if isinstance(leaf, float):
                continue
            dtype = getattr(leaf, "dtype", None)  # (a NumPy dtype is falsy: no `or` here)
            if dtype is None:
                dtype = np.asarray(leaf).dtype
            if dtype.kind not in "fc":
                raise TypeError(
                    "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                    f"np.inexact), but got {dtype.name}. If you want to use Boolean- or integer-valued "
                    "inputs, use vjp or set allow_int to True."
                )


@functools.lru_cache(maxsize=256)
def _generated(fn, kinds, argnums, has_aux) -> Generated:
    return generate(fn, kinds, argnums, has_aux)


class Transformed:
    """A function transformed by s2s: call it like the original; ``.source`` is the generated module."""

    def __init__(self, fn, kind, argnums=0, has_aux=False, backend="xla"):
        functools.update_wrapper(self, fn, updated=())  # not ``fn.__dict__``: a Transformed ``fn`` caches its own module there
        self.fn = fn
        self.kind = kind
        self.argnums = _check_argnums(fn, argnums) if kind != "primal" else argnums
        self.has_aux = has_aux
        self.backend = backend
        self._signature = inspect.signature(fn)
        self._positional = all(
            p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in self._signature.parameters.values()
        )

    @functools.cached_property
    def generated(self) -> Generated:
        return _generated(self.fn, (self.kind,), self.argnums, self.has_aux)

    @property
    def source(self) -> str:
        """The generated module's text."""
        return self.generated.text

    @functools.cached_property
    def _function(self):
        module = loader.load_module(self.source, self.fn.__name__, self.generated.injected)
        return getattr(module, self.generated.entries[self.kind])

    @property
    def s2s_generated_function(self):
        """The generated function that transforming this again reads (None for ``@transform``: the user's own is read)."""
        return None if self.kind == "primal" else self._function

    @functools.cached_property
    def _runner(self):
        return backends.Runner(self._function, self.backend)

    def _bind(self, args, kwargs):
        if not kwargs and self._positional and len(args) == len(self._signature.parameters):
            return args  # the common case, without inspect's binding
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args

    def __call__(self, *args, **kwargs):
        args = self._bind(args, kwargs)
        if self.kind in ("grad", "value_and_grad"):
            _check_float_inputs(args, self.argnums)
        return self._runner(*args)

    def __repr__(self):
        return f"<s2s.{self.kind} of {self.fn.__qualname__}>"


def transform(fun=None, *, backend="xla"):
    """Decorator: run ``fun`` as s2s's normal form of it, compiled through XLA (``.source`` shows it).

    Usable bare (``@s2s.transform``) or with options (``@s2s.transform(backend="numpy")``).
    The result composes with ``s2s.grad`` and the rest, and with ``jax.jit`` and ``jax.grad``.
    """
    if fun is None:
        return lambda f: Transformed(f, "primal", backend=backend)
    return Transformed(fun, "primal", backend=backend)


def grad(fun, argnums=0, has_aux=False, *, backend="xla") -> Transformed:
    """Gradient of a scalar-valued ``fun`` with respect to argument(s) ``argnums`` (JAX's ``grad``)."""
    return Transformed(fun, "grad", argnums, has_aux, backend)


def value_and_grad(fun, argnums=0, has_aux=False, *, backend="xla") -> Transformed:
    """``fun``'s value and gradient together (JAX's ``value_and_grad``)."""
    return Transformed(fun, "value_and_grad", argnums, has_aux, backend)


def vjp(fun, *primals, has_aux=False, backend="xla"):
    """``(out, vjp_fn)``, where ``vjp_fn(ct)`` gives one cotangent per primal (JAX's ``vjp``)."""
    n = len(primals)
    forward = _transformed(fun, "primal", tuple(range(n)), backend=backend)
    backward = _transformed(fun, "vjp", tuple(range(n)), backend=backend)
    args = forward._bind(primals, {})
    out = forward._runner(*args)
    if has_aux:
        out, aux = out

    def vjp_fn(ct):
        full = (ct, _zeros_like(aux)) if has_aux else ct
        return tuple(backward._runner(*args, full))[:n]

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


@functools.lru_cache(maxsize=256)
def _transformed(fun, kind, argnums, has_aux=False, backend="xla") -> Transformed:
    """One ``Transformed`` per request, so repeated ``jvp``/``vjp``/``linearize`` calls reuse its compilation."""
    return Transformed(fun, kind, argnums, has_aux, backend)


def jvp(fun, primals, tangents, has_aux=False, *, backend="xla"):
    """``(out, out_tangent)``: ``fun``'s value at ``primals`` and its derivative along ``tangents`` (JAX's ``jvp``).

    With ``has_aux=True``, ``fun`` returns ``(out, aux)`` and this returns
    ``(out, out_tangent, aux)``. The forward-mode module is ``s2s.jvp_source(fun)``.
    """
    for what, value in (("primal", primals), ("tangent", tangents)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(
                f"{what} arguments to s2s.jvp must be a tuple or list, found {type(value).__name__}: "
                f"pass `({what}s,)` for a single argument"
            )
    if len(primals) != len(tangents):
        raise TypeError(f"s2s.jvp got {len(primals)} primals and {len(tangents)} tangents: give one tangent per primal")
    transformed = _transformed(fun, "jvp", tuple(range(len(primals))), has_aux, backend)
    args = transformed._bind(tuple(primals), {})
    tangents = [_checked_tangent(i, p, t) for i, (p, t) in enumerate(zip(primals, tangents))]
    return tuple(transformed._runner(*args, *tangents))


def linearize(fun, *primals, backend="xla"):
    """``(out, f_jvp)``: ``fun``'s value and its linear map ``f_jvp(*tangents)`` at ``primals`` (JAX's ``linearize``).

    ``f_jvp`` runs the forward-mode module compiled, with the primals fixed: it
    computes the primal values again with each tangent (JAX keeps them instead).
    """
    transformed = _transformed(fun, "jvp", tuple(range(len(primals))), backend=backend)
    args = transformed._bind(tuple(primals), {})
    out = _transformed(fun, "primal", 0, backend=backend)(*args)
    n = len(args)
    # only the tangent is returned, so the compiled function drops what only the value needs
    runner = backends.Runner(lambda *a: transformed._function(*a)[1], backend)

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise TypeError(f"the linearized function takes {len(primals)} tangents, got {len(tangents)}")
        checked = [_checked_tangent(i, p, t) for i, (p, t) in enumerate(zip(primals, tangents))]
        return runner(*args[:n], *checked)

    return out, f_jvp


def jvp_source(fun, has_aux=False) -> str:
    """The generated forward-mode module of ``fun`` (tangents for every parameter)."""
    return Transformed(fun, "jvp", tuple(range(len(inspect.signature(fun).parameters))), has_aux).source


def _dtype(value):
    dtype = getattr(value, "dtype", None)
    return np.asarray(value).dtype if dtype is None else np.dtype(dtype)


def _checked_tangent(index, primal, tangent):
    """``tangent`` after JAX's checks against its primal (structure, shapes, dtypes); float0 becomes zeros."""
    from .runtime.trees import tree_map

    p_leaves, t_leaves = list(_sorted_leaves(primal)), list(_sorted_leaves(tangent))
    if _structure(primal) != _structure(tangent):
        raise TypeError(
            f"primal and tangent {index} of s2s.jvp must have the same structure; "
            f"the primal is {_structure(primal)} but the tangent is {_structure(tangent)}"
        )
    for p, t in zip(p_leaves, t_leaves):
        if np.shape(p) != np.shape(t):
            raise ValueError(
                f"s2s.jvp called with different primal and tangent shapes: primal {index} has shape "
                f"{np.shape(p)} but its tangent has shape {np.shape(t)}"
            )
        p_type, t_type = _dtype(p), _dtype(t)
        if p_type.kind in "fc":
            if t_type != p_type and not isinstance(p, (float, complex)):
                raise TypeError(
                    f"primal and tangent {index} of s2s.jvp do not match: the tangent of a {p_type.name} "
                    f"primal must be {p_type.name}, got {t_type.name}"
                )
        elif t_type.name != "float0" and t_type.kind != "V":
            raise TypeError(
                f"primal {index} of s2s.jvp is {p_type.name}: its tangent must have dtype float0 "
                f"(np.zeros(shape, dtype=jax.dtypes.float0)), got {t_type.name}"
            )
    return tree_map(lambda t: np.zeros(np.shape(t)) if _dtype(t).kind == "V" else t, tangent)


def _sorted_leaves(tree):
    """Leaves in JAX's order: dict keys sorted (two dicts with the same keys in another order match)."""
    if isinstance(tree, dict):
        for k in sorted(tree, key=repr):
            yield from _sorted_leaves(tree[k])
    elif isinstance(tree, (tuple, list)):
        for v in tree:
            yield from _sorted_leaves(v)
    elif tree is not None:
        yield tree


def _structure(tree) -> str:
    """A readable description of a tree's containers (leaves as ``*``; dict keys sorted, as JAX's pytrees)."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_structure(tree[k])}" for k in sorted(tree, key=repr)) + "}"
    if isinstance(tree, (tuple, list)):
        inner = ", ".join(_structure(v) for v in tree)
        return f"({inner},)" if isinstance(tree, tuple) and len(tree) == 1 else (f"({inner})" if isinstance(tree, tuple) else f"[{inner}]")
    return "None" if tree is None else "*"


def _zeros_like(tree):
    from .runtime import tree_zeros_like

    return tree_zeros_like(tree)
