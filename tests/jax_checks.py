"""Oracles for JAX-style programs: each s2s transformation against JAX's of the same function.

The programs are written with ``jax.numpy`` (as JAX's documentation writes
them), so JAX runs them as they are: ``s2s.grad(f)`` is compared with
``jax.grad(f)``, ``s2s.vmap(f)`` with ``jax.vmap(f)``, and so on, on both
backends (NumPy in float64, XLA with ``jax_enable_x64``).
"""

import jax
import jax.numpy as jnp
import numpy as np

import s2s

jax.config.update("jax_enable_x64", True)

BACKENDS = ("xla", "numpy")


def assert_tree_close(got, want, rtol=1e-9, atol=1e-9, what=""):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree, f"{what}: structure {got_tree} != {want_tree}"
    for g, w in zip(got_leaves, want_leaves):
        if jax.dtypes.issubdtype(getattr(w, "dtype", None), jax.dtypes.prng_key):
            g, w = jax.random.key_data(g), jax.random.key_data(w)
        np.testing.assert_allclose(
            np.asarray(g), np.asarray(w), rtol=rtol, atol=atol, err_msg=what
        )


def _jax_args(args):
    """Arguments as JAX takes them (NumPy arrays as JAX arrays, so ``x.at`` exists)."""
    return jax.tree_util.tree_map(
        lambda a: jnp.asarray(a) if isinstance(a, np.ndarray) else a, args
    )


_JITTED = {}


def compiled(fn, args, key=None, kwargs=None):
    """``fn(*args, **kwargs)`` under ``jax.jit``, its integer, string and ``None`` arguments static: one
    compile, where JAX run op by op compiles each primitive of a derivative on its own. The jitted function
    is kept under ``key`` (default: ``fn``), so a test run once per backend compiles once. A program that
    JAX runs only op by op (a boolean mask, Python control flow on a value: what s2s compiles and JAX
    cannot) runs so.
    """
    kwargs = kwargs or {}
    static = tuple(i for i, a in enumerate(args) if _static(a))
    names = tuple(sorted(k for k, a in kwargs.items() if _static(a)))
    jitted = _JITTED.get((key or fn, static, names))
    if jitted is None:
        jitted = jax.jit(fn, static_argnums=static, static_argnames=names)
        _JITTED[key or fn, static, names] = jitted
    try:
        return jitted(*args, **kwargs)
    except (jax.errors.JAXTypeError, jax.errors.JAXIndexError):
        return fn(*args, **kwargs)


def _static(a) -> bool:
    return a is None or isinstance(a, (bool, int, str))


def oracle(transform, fn, *options, **keywords):
    """``transform(fn, *options, **keywords)`` as ``compiled`` runs it, made once per test session.

    ``transform`` is ``jax.grad``, ``jax.hessian``, ``jax.vmap`` (``options``: in_axes), ... or
    ``jvp_of`` (called ``(primals, tangents)``).
    """
    key = (transform, fn, options, tuple(sorted(keywords.items())))
    made = transform(fn, *options, **keywords)
    return lambda *args, **kwargs: compiled(made, args, key, kwargs)


def jvp_of(fn):
    """``jax.jvp`` of ``fn`` as a function of ``(primals, tangents)``, for ``oracle``."""
    return lambda primals, tangents: jax.jvp(fn, tuple(primals), tuple(tangents))


def tangents_for(args, rng):
    """A random tangent per argument: float arrays get normal draws, integers JAX's ``float0`` zeros."""

    def one(a):
        dtype = getattr(a, "dtype", None)
        if dtype is not None and jnp.issubdtype(dtype, jnp.floating):
            return rng.normal(size=np.shape(a))
        if isinstance(a, float):
            return float(rng.normal())
        return np.zeros(np.shape(a), jax.dtypes.float0)

    return jax.tree_util.tree_map(one, args)


def check_value_and_grad(f, args, argnums=0, backends=BACKENDS, rtol=1e-9, atol=1e-9):
    want = compiled(jax.value_and_grad(f, argnums=argnums), _jax_args(args))
    for backend in backends:
        got = s2s.value_and_grad(f, argnums=argnums, backend=backend)(*args)
        assert_tree_close(got, want, rtol, atol, f"value_and_grad {backend}")


def check_jvp(f, args, rng, backends=BACKENDS, rtol=1e-9, atol=1e-9):
    tangents = tangents_for(args, rng)
    want = compiled(
        lambda p, t: jax.jvp(f, p, t), (tuple(_jax_args(args)), tuple(tangents))
    )
    for backend in backends:
        got = s2s.jvp(f, tuple(args), tuple(tangents), backend=backend)
        assert_tree_close(got, want, rtol, atol, f"jvp {backend}")


def check_vmap(f, args, in_axes, backends=BACKENDS, rtol=1e-9, atol=1e-9, grad=None):
    """``s2s.vmap(f)`` against ``jax.vmap(f)``; with ``grad`` (argnums), also of their gradients."""
    jargs = _jax_args(args)
    want = compiled(jax.vmap(f, in_axes=in_axes), jargs)
    for backend in backends:
        got = s2s.vmap(f, in_axes=in_axes, backend=backend)(*args)
        assert_tree_close(got, want, rtol, atol, f"vmap {backend}")
    if grad is None:
        return
    want = compiled(jax.vmap(jax.grad(f, argnums=grad), in_axes=in_axes), jargs)
    for backend in backends:
        per_example = s2s.vmap(
            s2s.grad(f, argnums=grad, backend=backend), in_axes=in_axes, backend=backend
        )
        assert_tree_close(
            per_example(*args), want, rtol, atol, f"vmap of grad {backend}"
        )


def check_second_order(f, args, argnums=0, backends=BACKENDS, rtol=1e-8, atol=1e-8):
    """The Hessian two ways, forward over reverse (``s2s.hessian``) and reverse over reverse
    (``s2s.jacrev`` of ``s2s.grad``: the gradient's own rules differentiated), against ``jax.hessian``.
    """
    want = compiled(jax.hessian(f, argnums=argnums), _jax_args(args))
    for backend in backends:
        got = s2s.hessian(f, argnums=argnums, backend=backend)(*args)
        assert_tree_close(got, want, rtol, atol, f"hessian {backend}")
        twice = s2s.jacrev(
            s2s.grad(f, argnums=argnums, backend=backend),
            argnums=argnums,
            backend=backend,
        )
        assert_tree_close(twice(*args), want, rtol, atol, f"jacrev of grad {backend}")


def check_finite_differences(f, args, argnum=0, eps=1e-6, rtol=1e-5, atol=1e-6):
    """``s2s.grad`` (both backends) against central differences of ``f`` in float64, along random directions."""
    rng = np.random.default_rng(7)
    x = np.asarray(args[argnum], dtype=np.float64)

    def at(value):
        moved = list(_jax_args(args))
        moved[argnum] = jnp.asarray(value)
        return float(f(*moved))

    grads = [
        np.asarray(s2s.grad(f, argnums=argnum, backend=b)(*args)) for b in BACKENDS
    ]
    for _ in range(3):
        t = rng.normal(size=np.shape(x))
        fd = (at(x + eps * t) - at(x - eps * t)) / (2 * eps)
        for g in grads:
            np.testing.assert_allclose(np.sum(g * t), fd, rtol=rtol, atol=atol)
