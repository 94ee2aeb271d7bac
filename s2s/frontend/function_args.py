"""Functions passed to helpers, bound per call: ``mlp(params, x, act=np.tanh)`` called with ``relu``.

A helper parameter that receives a function known where the call is read —
a module-level function of the user's, a NumPy, ``jax.numpy``, ``jax.nn`` or
SciPy function, or any other module-level function, passed by name or left
to a function default — is bound to that function: the helper is read once
per such binding, with the parameter's name standing for the function in its
body. ``mlp(params, x, relu)`` calls ``mlp_relu(params, x)``, whose
``act(h)`` is ``relu(h)``; ``mlp(params, x)`` with the default ``np.tanh``
calls ``mlp_tanh(params, x)``, whose ``act(h)`` is ``xp.tanh(h)``.

``Bound`` stands for a helper with some parameters bound (one object per
helper and binding, so generated modules and compilations are reused); its
signature is the helper's without them.
"""

from __future__ import annotations

import inspect
import types
import weakref

import numpy as np

from .variadic import Standin


def is_function(obj) -> bool:
    """Whether ``obj`` is a function a helper can be bound to (not a class, an array or a callable object)."""
    return isinstance(
        obj,
        (types.FunctionType, types.BuiltinFunctionType, np.ufunc, Bound),
    ) or (callable(obj) and type(obj).__name__ == "PjitFunction")


class Bound(Standin):
    """``fn`` with the parameters in ``fixed`` (name -> function) bound: what s2s reads for such a call."""

    def __init__(self, fn, fixed: tuple):
        super().__init__(fn)
        self.fixed = fixed

    @property
    def __signature__(self) -> inspect.Signature:
        signature = inspect.signature(self.fn, follow_wrapped=False)
        names = {name for name, _ in self.fixed}
        return signature.replace(
            parameters=[p for p in signature.parameters.values() if p.name not in names]
        )

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs, **dict(self.fixed))

    def __repr__(self):
        bound = ", ".join(f"{k}={getattr(v, '__name__', v)}" for k, v in self.fixed)
        return f"<{self.__qualname__} with {bound}>"


_BOUND: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def bind(fn, fixed: dict) -> Bound:
    """The one ``Bound`` of ``fn`` with ``fixed`` (functions compared by identity)."""
    key = tuple(sorted((name, id(obj)) for name, obj in fixed.items()))
    by_binding = _BOUND.setdefault(fn, {})
    if key not in by_binding:
        by_binding[key] = Bound(fn, tuple(sorted(fixed.items())))
    return by_binding[key]


def name_of(fn, fixed: dict) -> str:
    """A readable name for ``fn`` bound to ``fixed``: the functions' names follow its own (``mlp_relu``)."""
    parts = [fn.__name__] + [getattr(fixed[name], "__name__", name) for name in fixed]
    return "_".join(p.strip("_<>") for p in parts)
