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
Called directly, these objects just run the function. A rule given by
argument (``f.defjvps(jvp_x, jvp_y)``, JAX's or s2s's) is read as the
``defjvp`` rule it stands for, which s2s writes as source: each argument's
tangent through its function, summed (``_by_argument``).
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
        self.jvps = None

    def defjvp(self, jvp):
        """Set the rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``; returns it."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """Set the rule by argument, as JAX's ``defjvps``: ``jvps[i](tangent_i, primal_out, *primals)`` is
        the output's tangent along argument ``i`` (None: none), and the output's tangent their sum.
        """
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")
        self.jvps = jvps  # (the rule they stand for is written when s2s reads a call: ``custom_rule``)

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
        jvps = getattr(obj, "jvps", None) or _jax_defjvps(obj.jvp)
        jvp = obj.jvp if jvps is None else _by_argument(obj, jvps)
        return CustomRule("jvp", obj.fun, (jvp,), nondiff)
    return CustomRule("vjp", obj.fun, (obj.fwd, obj.bwd), nondiff)


def _jax_defjvps(jvp):
    """The functions given to JAX's ``custom_jvp.defjvps`` (its rule is a closure over them), else None."""
    code = getattr(jvp, "__code__", None)
    if code is None or not jvp.__qualname__.endswith("defjvps.<locals>.jvp"):
        return None
    cells = dict(zip(code.co_freevars, jvp.__closure__ or ()))
    return tuple(cells["jvps"].cell_contents) if "jvps" in cells else None


_BY_ARGUMENT: dict = (
    {}
)  # (id of the custom function, ids of its functions) -> (the rule, what it reads)


def _by_argument(obj, jvps):
    """The ``defjvp`` rule that ``defjvps(*jvps)`` stands for, as source s2s reads (and a reader reads, in the
    generated module): each argument's tangent through its function, the tangents summed leaf by leaf.
    The function's parameters must be plain positional ones, as ``defjvps`` passes them.
    """
    import inspect

    from .runtime import loader

    key = (id(obj), tuple(map(id, jvps)))
    held = _BY_ARGUMENT.get(key)
    if held is not None and held[1] == (obj, jvps):
        return held[0]
    fun = obj.fun
    params = list(inspect.signature(fun).parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        raise TypeError(
            f"`{fun.__name__}.defjvps`: s2s reads it for plain positional parameters"
        )
    stem = fun.__name__
    own = {
        "jax",
        "jnp",
        "primals",
        "tangents",
        "primal_out",
        "tangent_out",
        f"{stem}_fun",
    }
    names = [p.name if p.name not in own else f"arg{i}" for i, p in enumerate(params)]
    rules = {
        f"{stem}_jvp_{name}": jvp for name, jvp in zip(names, jvps) if jvp is not None
    }
    primals = ", ".join(names)
    lines = [
        f"{', '.join(names)}, = primals",
        f"{', '.join(n + '_dot' for n in names)}, = tangents",
        f"primal_out = {stem}_fun({primals})",
    ]
    terms = [
        f"{rule}({name}_dot, primal_out, {primals})"
        for (rule, _), name in zip(
            rules.items(), [n for n, j in zip(names, jvps) if j is not None]
        )
    ]
    if not terms:
        lines.append("tangent_out = jax.tree_util.tree_map(jnp.zeros_like, primal_out)")
    for k, term in enumerate(terms):
        lines.append(
            f"tangent_out = {term}"
            if k == 0
            else f"tangent_out = jax.tree_util.tree_map(jnp.add, tangent_out, {term})"
        )
    lines.append("return primal_out, tangent_out")
    body = "".join(f"    {line}\n" for line in lines)
    text = (
        f'"""The jvp rule `{stem}.defjvps(...)` stands for (written by s2s): each argument\'s tangent\n'
        'through its function, summed."""\n\nimport jax\nimport jax.numpy as jnp\n\n\n'
        f"def {stem}_jvp(primals, tangents):\n{body}"
    )
    module = loader.load_module(text, f"{stem}_defjvps", {f"{stem}_fun": fun, **rules})
    rule = getattr(module, f"{stem}_jvp")
    _BY_ARGUMENT[key] = (rule, (obj, jvps))
    return rule


__all__ = ["CustomRule", "custom_jvp", "custom_rule", "custom_vjp", "stop_gradient"]
