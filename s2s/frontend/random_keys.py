"""``jax.random`` with keys passed in: each function, found by identity (``jax.random.normal``, ``from jax
import random; random.normal``, ``from jax.random import normal``), becomes the runtime draw of the same
name with the same arguments: ``jax.random.normal(k, (3,))`` is ``rt.random_normal(k, (3,))``.

The runtime calls JAX's function (``runtime/draws.py``), so values are JAX's;
the rules (``s2s/rules/random_draws.py``) give no derivative through keys and
JAX's through ``uniform``'s bounds, ``truncated_normal``'s, and the arrays
``permutation`` and ``choice`` pick from. Other ``jax.random`` functions, and
``out_sharding=``, are located errors.
"""

from __future__ import annotations

import inspect
import sys

import libcst as cst

from ..errors import S2SError

# JAX's name -> the runtime function generated code calls
DRAWS = {
    "PRNGKey": "random_prng_key",
    "key": "random_key",
    "split": "random_split",
    "fold_in": "random_fold_in",
    "normal": "random_normal",
    "uniform": "random_uniform",
    "bernoulli": "random_bernoulli",
    "categorical": "random_categorical",
    "permutation": "random_permutation",
    "randint": "random_randint",
    "choice": "random_choice",
    "truncated_normal": "random_truncated_normal",
    "gumbel": "random_gumbel",
    "exponential": "random_exponential",
    "laplace": "random_laplace",
    "logistic": "random_logistic",
    "cauchy": "random_cauchy",
    "rademacher": "random_rademacher",
}
SUPPORTED = ", ".join(f"`{n}`" for n in DRAWS)


def draw_of(obj) -> str | None:
    """The ``jax.random`` function ``obj`` is (by identity) among those s2s draws with, else None."""
    jax = sys.modules.get("jax")
    if jax is None or obj is None:
        return None
    for name in DRAWS:
        if getattr(jax.random, name, None) is obj:
            return name
    return None


def lower(resolver, node: cst.Call, name: str) -> cst.BaseExpression:
    """``rt.random_<name>(...)`` with the call's arguments as written, checked against JAX's signature."""
    from s2s import runtime as rt

    what = f"`jax.random.{name}`"
    if any(a.star for a in node.args):
        resolver.fail(
            node,
            f"argument unpacking in a call of {what}",
            "pass the arguments one by one",
        )
    for a in node.args:
        if a.keyword is not None and a.keyword.value == "out_sharding":
            resolver.fail(a, f"{what} with `out_sharding=`, which s2s does not support",
                          "leave it out (shard the result outside the transformed function)")  # fmt: skip
    function = getattr(rt, DRAWS[name])
    try:
        inspect.signature(function).bind(
            *[a.value for a in node.args if a.keyword is None],
            **{a.keyword.value: a.value for a in node.args if a.keyword is not None},
        )
    except TypeError as err:
        resolver.fail(
            node,
            f"call of {what} does not match JAX's signature: {err}",
            None,
            S2SError,
        )
    args = [resolver._arg(a) for a in node.args]
    return resolver.mark(
        cst.Call(cst.parse_expression(f"rt.{DRAWS[name]}"), args), node
    )
