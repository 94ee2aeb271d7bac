"""Rules for ``jax.random`` draws (``runtime/draws.py``): no derivative through a key, JAX's elsewhere.

- keys and draws that depend on nothing but a key and static options
  (``split``, ``fold_in``, ``normal``, ``gumbel``, ...) and draws with integer or
  boolean values (``bernoulli``, ``categorical``, ``randint``): no derivative;
- ``uniform(key, shape, dtype, minval, maxval)`` is ``minval + u * (maxval - minval)``
  for the unit draw ``u`` of the same key: linear in the bounds;
- ``truncated_normal``: ``sqrt(2) * erfinv(a + u * (b - a))`` with ``a``, ``b`` the
  bounds' ``erf``; its partials are ``(1 - u) * exp((ans**2 - lower**2) / 2)`` and
  ``u * exp((ans**2 - upper**2) / 2)``;
- ``permutation`` and ``choice`` of an array pick its elements (linear in it);
  their transposes put the cotangent back (``*_vjp``), whose transposes are the draws.

Under ``s2s.vmap`` every draw maps over its batched operands, a batched key
giving each example its own draws (``runtime/batched_draws.py``).
"""

import numpy as xp

from s2s import runtime as rt

from .registry import jvp, linear, nondiff, signature_of, twin, vjp

_KEY = {"key": "data"}
_SHAPE = {"shape": "static", "dtype": "static"}

nondiff(
    "keys: integers that name a stream of random bits",
    "rt.random_key",
    "rt.random_prng_key",
    "rt.random_split",
    "rt.random_fold_in",
)
nondiff(
    "a draw from the key alone: nothing to differentiate",
    "rt.random_normal",
    "rt.random_gumbel",
    "rt.random_exponential",
    "rt.random_laplace",
    "rt.random_logistic",
    "rt.random_cauchy",
    "rt.random_rademacher",
)
nondiff(
    "integer or boolean values",
    "rt.random_bernoulli",
    "rt.random_categorical",
    "rt.random_randint",
)
signature_of(rt.random_key, "rt.random_key", roles={"seed": "data", "impl": "static"})
signature_of(
    rt.random_prng_key, "rt.random_prng_key", roles={"seed": "data", "impl": "static"}
)
signature_of(rt.random_split, "rt.random_split", roles={**_KEY, "num": "static"})
signature_of(rt.random_fold_in, "rt.random_fold_in", roles={**_KEY, "data": "data"})
for _name in ("normal", "exponential", "laplace", "logistic", "cauchy", "rademacher"):
    signature_of(
        getattr(rt, f"random_{_name}"), f"rt.random_{_name}", roles={**_KEY, **_SHAPE}
    )
signature_of(
    rt.random_gumbel, "rt.random_gumbel", roles={**_KEY, **_SHAPE, "mode": "static"}
)
signature_of(rt.random_bernoulli, "rt.random_bernoulli",
             roles={**_KEY, "p": "data", "shape": "static", "mode": "static"})  # fmt: skip
signature_of(rt.random_categorical, "rt.random_categorical",
             roles={**_KEY, "logits": "data", "shape": "static", "replace": "static", "mode": "static"})  # fmt: skip
signature_of(rt.random_randint, "rt.random_randint",
             roles={**_KEY, **_SHAPE, "minval": "data", "maxval": "data"})  # fmt: skip


@vjp(name="rt.random_uniform", roles={**_KEY, **_SHAPE})
def random_uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, g):
    return (
        None,
        None,
        None,
        rt.unbroadcast(g * (1 - rt.random_uniform(key, shape, dtype)), minval),
        rt.unbroadcast(g * rt.random_uniform(key, shape, dtype), maxval),
    )


@jvp(random_uniform)
def random_uniform_forward(
    key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, minval_dot, maxval_dot
):
    return (
        None,
        None,
        None,
        minval_dot * (1 - rt.random_uniform(key, shape, dtype)),
        maxval_dot * rt.random_uniform(key, shape, dtype),
    )


@vjp(name="rt.random_truncated_normal", roles={**_KEY, **_SHAPE})
def random_truncated_normal(key, lower, upper, shape=None, dtype=None, *, ans, g):
    return (
        None,
        rt.unbroadcast(
            g
            * (1 - rt.random_uniform(key, xp.shape(ans), dtype))
            * xp.exp((ans**2 - lower**2) / 2),
            lower,
        ),
        rt.unbroadcast(
            g
            * rt.random_uniform(key, xp.shape(ans), dtype)
            * xp.exp((ans**2 - upper**2) / 2),
            upper,
        ),
    )


@jvp(random_truncated_normal)
def random_truncated_normal_forward(
    key, lower, upper, shape=None, dtype=None, *, ans, lower_dot, upper_dot
):
    return (
        None,
        xp.multiply(
            lower_dot * (1 - rt.random_uniform(key, xp.shape(ans), dtype)),
            xp.exp((ans**2 - lower**2) / 2),
        ),
        xp.multiply(
            upper_dot * rt.random_uniform(key, xp.shape(ans), dtype),
            xp.exp((ans**2 - upper**2) / 2),
        ),
    )


_PERMUTATION = {**_KEY, "independent": "static"}


@linear(name="rt.random_permutation", roles=_PERMUTATION)
def random_permutation(key, x, axis=0, independent=False, *, g):
    return None, rt.random_permutation_vjp(g, key, x, axis, independent)


@linear(name="rt.random_permutation_vjp", roles={**_PERMUTATION, "x": "data"})
def random_permutation_vjp(ct, key, x, axis=0, independent=False, *, g):
    return rt.random_permutation(key, g, axis, independent)


_CHOICE = {
    **_KEY,
    "shape": "static",
    "replace": "static",
    "p": "data",
    "mode": "static",
}


@linear(name="rt.random_choice", roles=_CHOICE)
def random_choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None, *, g):
    return None, rt.random_choice_vjp(g, key, a, shape, replace, p, axis, mode)


@linear(name="rt.random_choice_vjp", roles={**_CHOICE, "a": "data"})
def random_choice_vjp(
    ct, key, a, shape=(), replace=True, p=None, axis=0, mode=None, *, g
):
    return rt.random_choice(key, g, shape, replace, p, axis, mode)


twin(
    "batched_draws",
    "rt.random_key",
    "rt.random_prng_key",
    "rt.random_split",
    "rt.random_fold_in",
    "rt.random_normal",
    "rt.random_uniform",
    "rt.random_bernoulli",
    "rt.random_categorical",
    "rt.random_randint",
    "rt.random_gumbel",
    "rt.random_exponential",
    "rt.random_laplace",
    "rt.random_logistic",
    "rt.random_cauchy",
    "rt.random_rademacher",
    "rt.random_truncated_normal",
    "rt.random_permutation",
    "rt.random_permutation_vjp",
    "rt.random_choice",
    "rt.random_choice_vjp",
)
