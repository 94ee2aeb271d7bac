"""The public API, with JAX's semantics: ``grad``, ``value_and_grad``, ``vjp``, and ``@transform``.

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
        self.fn = fn
        self.kind = kind
        self.argnums = _check_argnums(fn, argnums) if kind != "primal" else argnums
        self.has_aux = has_aux
        self.backend = backend
        self._signature = inspect.signature(fn)
        self._positional = all(
            p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in self._signature.parameters.values()
        )
        functools.update_wrapper(self, fn)

    @functools.cached_property
    def generated(self) -> Generated:
        return _generated(self.fn, (self.kind,), self.argnums, self.has_aux)

    @property
    def source(self) -> str:
        """The generated module's text."""
        return self.generated.text

    @functools.cached_property
    def _runner(self):
        module = loader.load_module(self.source, self.fn.__name__, self.generated.injected)
        return backends.Runner(getattr(module, self.generated.entries[self.kind]), self.backend)

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
    forward = Transformed(fun, "primal", tuple(range(n)), backend=backend)
    backward = Transformed(fun, "vjp", tuple(range(n)), backend=backend)
    args = forward._bind(primals, {})
    out = forward._runner(*args)
    if has_aux:
        out, aux = out

    def vjp_fn(ct):
        full = (ct, _zeros_like(aux)) if has_aux else ct
        return tuple(backward._runner(*args, full))[:n]

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _zeros_like(tree):
    from .runtime import tree_zeros_like

    return tree_zeros_like(tree)
