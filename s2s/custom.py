"""Custom derivative rules and ``stop_gradient``, with JAX's API.

``@s2s.custom_jvp`` with ``.defjvp(rule)`` and ``@s2s.custom_vjp`` with
``.defvjp(fwd, bwd)`` (both with ``nondiff_argnums``) mark a function whose
derivative s2s must take from the user's rule instead of deriving it. The
rule functions are ordinary source that s2s reads and emits into the
generated module, where the derivative code calls them by name:

- forward mode of a ``custom_jvp`` function calls the rule:
  ``y, y_dot = f_jvp((x,), (x_dot,))``;
- reverse mode of a ``custom_jvp`` function calls the rule transposed (the
  rule is linear in its tangents; s2s generates ``<rule>_vjp``, its reverse
  mode with respect to the tangents): ``(x_bar,) = f_jvp_vjp((x,), ..., (.., y_bar))``;
- reverse mode of a ``custom_vjp`` function calls ``fwd`` in the forward
  pass (``y, f_residuals = f_fwd(x)``) and ``bwd`` in the backward pass
  (``(x_bar,) = f_bwd(f_residuals, y_bar)``); forward mode is an error, as in JAX.

``jax.custom_jvp`` and ``jax.custom_vjp`` objects are read the same way.
Called directly, these objects just run the function.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


class custom_jvp:
    """A function with a user-defined forward-mode rule: ``@custom_jvp`` then ``@f.defjvp``."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        """Set the rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``; returns it."""
        self.jvp = jvp
        return jvp

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)


class custom_vjp:
    """A function with a user-defined reverse-mode rule: ``@custom_vjp`` then ``f.defvjp(fwd, bwd)``."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd):
        """Set ``fwd(*args) -> (out, residuals)`` and ``bwd(*nondiff_args, residuals, g) -> cotangents``
        (a tuple with one entry per differentiable argument)."""
        self.fwd = fwd
        self.bwd = bwd

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)


def stop_gradient(x):
    """``x`` itself, through which no derivative flows (JAX's ``lax.stop_gradient``)."""
    from .runtime import stop_gradient as run

    return run(x)


@dataclass(frozen=True)
class CustomRule:
    """What a ``custom_jvp``/``custom_vjp`` object says: its kind, function, rule functions and nondiff arguments."""

    kind: str  # "jvp" or "vjp"
    fun: object
    rules: tuple  # (jvp,) or (fwd, bwd): live functions
    nondiff_argnums: tuple

    @property
    def name(self) -> str:
        return self.fun.__name__


def custom_rule(obj) -> CustomRule | None:
    """The rule of an s2s or JAX ``custom_jvp``/``custom_vjp`` object, None for anything else.

    A custom function whose rule was never defined is an error at its first use.
    """
    kind = type(obj).__name__
    if kind not in ("custom_jvp", "custom_vjp") or not hasattr(obj, "fun"):
        return None
    nondiff = tuple(getattr(obj, "nondiff_argnums", ()) or ())
    if kind == "custom_jvp":
        return CustomRule("jvp", obj.fun, (obj.jvp,), nondiff)
    return CustomRule("vjp", obj.fun, (obj.fwd, obj.bwd), nondiff)


__all__ = ["CustomRule", "custom_jvp", "custom_rule", "custom_vjp", "stop_gradient"]
