"""``jax.random`` draws in batched generated code (``s2s.vmap``): each example's draw from its own key.

A batched key (``jax.random.split(key, n)`` passed with ``in_axes=0``) gives every
example its own draws, the very values ``jax.vmap`` of the same function draws:
the draw is ``jax.vmap`` of the ``jax.random`` function over the batched operands
(``batched``: one flag per data operand, in order), its shapes and options
those of one example. This is the one place the runtime maps with JAX's
``vmap``: how a key's bits are split per example is JAX's to define.
"""

from . import draws


def _mapped(fn, operands: dict, flags, **options):
    """``fn`` mapped over the batched ``operands`` (by name, one flag each), the ``options`` the same for all."""
    import jax

    compiled = draws.traced(operands)
    names = tuple(operands)
    in_axes = tuple(0 if flag else None for flag in flags)

    def one(*values):
        return fn(**dict(zip(names, values)), **options)

    out = jax.vmap(one, in_axes=in_axes)(*operands.values())
    return draws.result(out, compiled)


def random_split(key, num, batched):
    return _mapped(draws._jax().random.split, {"key": key}, batched, num=num)


def random_fold_in(key, data, batched):
    return _mapped(draws._jax().random.fold_in, {"key": key, "data": data}, batched)


def random_normal(key, shape, dtype, batched):
    return _mapped(
        draws._jax().random.normal, {"key": key}, batched, shape=shape, dtype=dtype
    )


def random_uniform(key, shape, dtype, minval, maxval, batched):
    fn = draws._jax().random.uniform
    return _mapped(
        fn,
        {"key": key, "minval": minval, "maxval": maxval},
        batched,
        shape=shape,
        dtype=dtype,
    )


def random_bernoulli(key, p, shape, mode, batched):
    fn = draws._jax().random.bernoulli
    return _mapped(fn, {"key": key, "p": p}, batched, shape=shape, mode=mode)


def random_categorical(key, logits, axis, shape, replace, mode, batched):
    fn = draws._jax().random.categorical
    options = {"axis": axis, "shape": shape, "replace": replace, "mode": mode}
    return _mapped(fn, {"key": key, "logits": logits}, batched, **options)


def random_randint(key, shape, minval, maxval, dtype, batched):
    fn = draws._jax().random.randint
    return _mapped(
        fn,
        {"key": key, "minval": minval, "maxval": maxval},
        batched,
        shape=shape,
        dtype=dtype,
    )


def random_gumbel(key, shape, dtype, mode, batched):
    fn = draws._jax().random.gumbel
    return _mapped(fn, {"key": key}, batched, shape=shape, dtype=dtype, mode=mode)


def random_exponential(key, shape, dtype, batched):
    fn = draws._jax().random.exponential
    return _mapped(fn, {"key": key}, batched, shape=shape, dtype=dtype)


def random_laplace(key, shape, dtype, batched):
    fn = draws._jax().random.laplace
    return _mapped(fn, {"key": key}, batched, shape=shape, dtype=dtype)


def random_logistic(key, shape, dtype, batched):
    fn = draws._jax().random.logistic
    return _mapped(fn, {"key": key}, batched, shape=shape, dtype=dtype)


def random_cauchy(key, shape, dtype, batched):
    fn = draws._jax().random.cauchy
    return _mapped(fn, {"key": key}, batched, shape=shape, dtype=dtype)


def random_rademacher(key, shape, dtype, batched):
    fn = draws._jax().random.rademacher
    return _mapped(fn, {"key": key}, batched, shape=shape, dtype=dtype)


def random_truncated_normal(key, lower, upper, shape, dtype, batched):
    fn = draws._jax().random.truncated_normal
    return _mapped(
        fn,
        {"key": key, "lower": lower, "upper": upper},
        batched,
        shape=shape,
        dtype=dtype,
    )


def random_permutation(key, x, axis, independent, batched):
    fn = draws._jax().random.permutation
    return _mapped(
        fn, {"key": key, "x": x}, batched, axis=axis, independent=independent
    )


def random_choice(key, a, shape, replace, p, axis, mode, batched):
    fn = draws._jax().random.choice
    options = {"shape": shape, "replace": replace, "axis": axis, "mode": mode}
    return _mapped(fn, {"key": key, "a": a, "p": p}, batched, **options)


def random_permutation_vjp(ct, key, x, axis, independent, batched):
    fn = draws.random_permutation_vjp
    return _mapped(
        fn, {"ct": ct, "key": key, "x": x}, batched, axis=axis, independent=independent
    )


def random_choice_vjp(ct, key, a, shape, replace, p, axis, mode, batched):
    fn = draws.random_choice_vjp
    options = {"shape": shape, "replace": replace, "axis": axis, "mode": mode}
    return _mapped(fn, {"ct": ct, "key": key, "a": a, "p": p}, batched, **options)


def random_key(seed, impl, batched):
    return _mapped(draws._jax().random.key, {"seed": seed}, batched, impl=impl)


def random_prng_key(seed, impl, batched):
    return _mapped(draws._jax().random.PRNGKey, {"seed": seed}, batched, impl=impl)
