"""What s2s says about library objects it does not read: the name to show and what to write instead.

s2s reads NumPy, jax.numpy and math ops through its op table and the user's
own functions through their source; anything else from a library (``jax.lax``
control flow, JAX's transformations, random draws, SciPy) is a located error
whose hint comes from here.
"""

from __future__ import annotations

import functools
import sys

from ..runtime.foreign import library_code

CONTROL_HINT = (
    "write it as a Python `for`/`while`/`if` with the function's body inline: s2s lowers Python "
    "control flow to a compiled scan, while_loop or cond itself"
)
LIBRARY_HINTS = {
    **dict.fromkeys(
        (
            "fori_loop",
            "scan",
            "while_loop",
            "cond",
            "switch",
            "map",
            "associative_scan",
        ),
        CONTROL_HINT,
    ),
    **dict.fromkeys(
        (
            "vmap",
            "pmap",
            "grad",
            "value_and_grad",
            "jacfwd",
            "jacrev",
            "jacobian",
            "hessian",
            "jvp",
            "vjp",
            "linearize",
        ),
        "apply JAX's transformations outside the function s2s transforms (`jax.vmap(s2s.grad(f))`), "
        "or use s2s's own (`s2s.grad`, `s2s.jvp`, `s2s.hessian`, ...)",
    ),
}
RANDOM_HINT = (
    "pass a `jax.random` key as an argument and draw with it inside (`jax.random.normal(key, x.shape)`; "
    "split it with `jax.random.split(key)`), or draw outside the function and pass the values in: a NumPy "
    "draw inside a compiled function would be drawn once and kept as a constant"
)
# methods of NumPy's ``Generator``/``RandomState``: on a parameter, s2s cannot tell it is one, but the name says
DRAW_METHODS = frozenset(
    {
        "normal", "standard_normal", "uniform", "random", "random_sample", "rand", "randn",
        "integers", "randint", "choice", "permutation", "shuffle", "binomial", "poisson",
        "exponential", "gamma", "beta", "bernoulli", "multivariate_normal", "laplace", "gumbel",
    }
)  # fmt: skip
JAX_RANDOM_HINT = (
    "s2s draws with these `jax.random` functions, keys passed in as arguments: "
    "PRNGKey, key, split, fold_in, normal, uniform, bernoulli, categorical, permutation, randint, "
    "choice, truncated_normal, gumbel, exponential, laplace, logistic, cauchy, rademacher; draw others "
    "outside and pass the values in"
)


# a library function that is not JAX code (SciPy's, scikit-learn's): JAX cannot call it for s2s either
NOT_JAX_HINT = (
    "it is not JAX code, so s2s cannot call it through JAX either (as it calls optax, Flax or Equinox: "
    "`rt.foreign`): call it outside the transformed function and pass its result in, or write it with "
    "NumPy ops"
)

# a library's JAX code used as a value (``f = optax.l2_loss``): s2s calls it through JAX only where it is called
JAX_VALUE_HINT = (
    "s2s calls a library's JAX code through JAX where the code calls it (`optax.l2_loss(p, y)`), not as a "
    "value passed around: call it directly"
)


def describe(obj) -> str:
    module = getattr(obj, "__module__", None)
    public = ".".join(p for p in (module or "").split(".") if not p.startswith("_"))
    return f"from {public}" if public else f"a {type(obj).__name__} from a library"


def hint(obj) -> str:
    name = getattr(obj, "__name__", "")
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] == "jax" and "random" in module.split("."):
        return JAX_RANDOM_HINT
    if "random" in module.split(".") or "random" in name:
        return RANDOM_HINT
    if module.split(".")[0] not in ("numpy", "jax", "jaxlib", "math", "builtins"):
        return NOT_JAX_HINT if library_code(obj) is None else JAX_VALUE_HINT
    return LIBRARY_HINTS.get(
        name,
        "s2s transforms NumPy, jax.numpy and math ops (`python -m s2s.rules` lists them) and your own "
        "functions: write it with those",
    )


def wrapper_maker(obj) -> str | None:
    """``"jit"`` for ``jax.jit``, ``"checkpoint"`` for ``jax.checkpoint``/``jax.remat``, ``"partial"`` for
    ``functools.partial``: the wrappers whose meaning s2s knows (the same math, or bound arguments).
    """
    if obj is functools.partial:
        return "partial"
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    if obj is getattr(jax, "jit", None):
        return "jit"
    if obj is getattr(jax, "checkpoint", None) or obj is getattr(jax, "remat", None):
        return "checkpoint"
    return None


def transform_maker(obj):
    """The s2s transformation that ``obj`` makes when called inside transformed code with a function
    s2s can read (``s2s.vmap(g, in_axes=...)``, ``jax.grad(g)``; JAX's have the same semantics), else None.
    """
    import s2s

    # (compared by identity: an object of the user's may be unhashable, a dataclass's)
    if any(obj is own for own in (s2s.grad, s2s.value_and_grad, s2s.vmap)):
        return obj
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    spelled = (
        (jax.grad, s2s.grad),
        (jax.value_and_grad, s2s.value_and_grad),
        (jax.vmap, s2s.vmap),
    )
    return next((ours for theirs, ours in spelled if obj is theirs), None)


def is_jvp(obj) -> bool:
    """``s2s.jvp`` or ``jax.jvp``: called inside transformed code, the forward-mode module of a function
    s2s can read, called on the primals and tangents."""
    import s2s

    jax = sys.modules.get("jax")
    return obj is s2s.jvp or (jax is not None and obj is jax.jvp)
