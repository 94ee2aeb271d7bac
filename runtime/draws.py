"""``jax.random`` in generated code: keys passed in as arguments, draws made by JAX itself.

Every draw calls the ``jax.random`` function of the same name with the same
arguments, so its values are JAX's, bit for bit. Under ``jax.jit`` (the XLA
backend) they compile into the program, fresh for every key. On the NumPy
backend they run eagerly through JAX and come back as NumPy arrays (typed keys
from ``jax.random.key`` stay JAX key arrays: NumPy has no such dtype).

Draws carry no derivative with respect to the key. Where a draw is a
differentiable function of an argument, the rules say so
(``s2s/rules/random_draws.py``): ``uniform``'s ``minval``/``maxval``,
``truncated_normal``'s bounds, and ``permutation``/``choice`` of an array
(they pick its elements: linear in it; ``*_vjp`` below put the cotangent back).
"""

import numpy as np


def _jax():
    import jax

    return jax


def traced(*values) -> bool:
    """Whether any leaf of ``values`` is a JAX tracer: the draw is compiled (else the NumPy backend)."""
    jax = _jax()
    return any(
        isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(values)
    )


def is_key(value) -> bool:
    """A typed key array (``jax.random.key(0)``), which NumPy cannot hold."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or not type(value).__module__.startswith(("jax", "jaxlib")):
        return False
    jax = _jax()
    return jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def result(value, compiled: bool):
    """A draw's value for the backend: JAX's under ``jax.jit``, else a NumPy array (keys stay JAX's)."""
    if compiled or is_key(value) or traced(value):
        return value
    return np.asarray(value)


def _draw(name, *args, **kwargs):
    out = getattr(_jax().random, name)(*args, **kwargs)
    return result(out, traced(args, kwargs))


def random_key(seed, impl=None):
    """``jax.random.key(seed)``: a typed key."""
    return _draw("key", seed, impl=impl)


def random_prng_key(seed, impl=None):
    """``jax.random.PRNGKey(seed)``: a raw ``uint32`` key."""
    return _draw("PRNGKey", seed, impl=impl)


def random_split(key, num=2):
    return _draw("split", key, num)


def random_fold_in(key, data):
    return _draw("fold_in", key, data)


def random_normal(key, shape=(), dtype=None):
    return _draw("normal", key, shape, dtype)


def random_uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    return _draw("uniform", key, shape, dtype, minval, maxval)


def random_bernoulli(key, p=0.5, shape=None, mode="low"):
    return _draw("bernoulli", key, p, shape, mode)


def random_categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    return _draw("categorical", key, logits, axis, shape, replace, mode)


def random_randint(key, shape, minval, maxval, dtype=None):
    return _draw("randint", key, shape, minval, maxval, dtype)


def random_gumbel(key, shape=(), dtype=None, mode=None):
    return _draw("gumbel", key, shape, dtype, mode)


def random_exponential(key, shape=(), dtype=None):
    return _draw("exponential", key, shape, dtype)


def random_laplace(key, shape=(), dtype=None):
    return _draw("laplace", key, shape, dtype)


def random_logistic(key, shape=(), dtype=None):
    return _draw("logistic", key, shape, dtype)


def random_cauchy(key, shape=(), dtype=None):
    return _draw("cauchy", key, shape, dtype)


def random_rademacher(key, shape=(), dtype=None):
    return _draw("rademacher", key, shape, dtype)


def random_truncated_normal(key, lower, upper, shape=None, dtype=None):
    return _draw("truncated_normal", key, lower, upper, shape, dtype)


def random_permutation(key, x, axis=0, independent=False):
    """``jax.random.permutation(key, x, axis, independent)``: a permutation of ``x`` (of ``arange(x)`` for an
    int), the same for any ``x`` of one shape."""
    return _draw("permutation", key, x, axis, independent)


def random_choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """``jax.random.choice``: elements of ``a`` along ``axis`` (of ``arange(a)`` for an int)."""
    return _draw("choice", key, a, shape, replace, p, axis, mode)


def _xp(*values):
    from .arrays import namespace

    return namespace(*values)


def random_permutation_vjp(ct, key, x, axis=0, independent=False):
    """The cotangent of ``x`` in ``random_permutation(key, x, axis, independent)``: ``ct`` put back where each
    element came from (the permutation's inverse)."""
    jax = _jax()
    compiled = traced(ct, key, x)
    shape = np.shape(x)
    axis = axis % len(shape)
    if len(shape) == 1 or not independent:
        order = jax.random.permutation(key, shape[axis])
        inverse = jax.numpy.argsort(order)
        inverse = result(inverse, compiled)
        return _xp(ct, inverse).take(ct, inverse, axis=axis)
    positions = jax.lax.broadcasted_iota(np.int32, shape, axis)
    order = jax.random.permutation(key, positions, axis, independent=True)
    inverse = result(jax.numpy.argsort(order, axis=axis), compiled)
    return _xp(ct, inverse).take_along_axis(ct, inverse, axis=axis)


def random_choice_vjp(ct, key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """The cotangent of the array ``a`` in ``random_choice(key, a, ...)``: ``ct`` added at each chosen place."""
    from .rulesupport import take_vjp

    n = np.shape(a)[axis]
    index = _draw("choice", key, n, shape, replace, p, 0, mode)
    index = result(index, traced(ct, key, a, p))
    return take_vjp(ct, a, index, axis)
