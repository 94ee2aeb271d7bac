"""``jax.lax``'s indexing ops (``select``, ``dynamic_slice``, ``dynamic_update_slice`` and their ``_in_dim``
forms, ``index_in_dim``) in JAX-style programs, checked against JAX in every mode on both backends:
starts that run past the end are clamped (and negative ones wrapped) exactly as JAX does.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.lax import dynamic_slice
from jax_checks import (
    check_finite_differences,
    check_jvp,
    check_second_order,
    check_value_and_grad,
    check_vmap,
)

import s2s
from s2s.errors import S2SError


def sliding_window(signal, kernel):
    """A 1-D convolution by hand: a window of the signal per output, in a Python loop."""
    k = kernel.shape[0]
    out = jnp.zeros(signal.shape[0] - k + 1)
    for i in range(signal.shape[0] - k + 1):
        window = lax.dynamic_slice(signal, (i,), (k,))
        out = out.at[i].set(jnp.sum(window * kernel))
    return jnp.sum(jnp.tanh(out))


def rows_written(x, w):
    """Rows computed one at a time and written with `dynamic_update_index_in_dim` (a scan's output by hand)."""
    out = jnp.zeros((x.shape[0], w.shape[1]))
    for t in range(x.shape[0]):
        row = jnp.tanh(lax.dynamic_index_in_dim(x, t, keepdims=False) @ w)
        out = lax.dynamic_update_index_in_dim(out, row, t, 0)
    return jnp.sum(out**2)


def patches(image, filt, i, j):
    """2-D windows at traced starts, some past the edge (clamped), one written back."""
    a = dynamic_slice(image, (i, j), (2, 3))
    b = jax.lax.dynamic_slice(image, [i - 1, -2], [3, 2])
    c = lax.dynamic_slice_in_dim(image, j + 10, 2, axis=1)
    d = lax.dynamic_update_slice(image, a * filt, (j, i))
    e = lax.dynamic_update_slice_in_dim(d, c * 2.0, -1, axis=1)
    f = lax.index_in_dim(e, 1, axis=1, keepdims=True)
    g = lax.dynamic_index_in_dim(e, i + 2, axis=1)
    return (
        jnp.sum(a * filt)
        + jnp.sum(b**2)
        + jnp.sum(c)
        + jnp.sum(jnp.sin(e))
        + jnp.sum(f * g)
    )


def selected(x, y):
    """`lax.select` of two branches on a predicate."""
    return jnp.sum(lax.select(x > y, x * y, jnp.cos(y)))


def two_windows_one_clamped(x, s):
    """XLA's CPU compiler put the cotangent of the clamped window one place off (the starts are clamped
    before `jax.lax` sees them)."""
    a = lax.dynamic_slice(x, (s + 4,), (2,))
    b = lax.dynamic_slice(x, (s + 1,), (2,))
    return a[0] + 10 * b[0]


R = np.random.default_rng(3)

CASES = [
    ("sliding_window", sliding_window, (R.normal(size=8), R.normal(size=3)), (0, 1)),
    ("rows_written", rows_written, (R.normal(size=(4, 3)), 0.5 * R.normal(size=(3, 2))), (0, 1)),
    ("patches_inside", patches, (R.normal(size=(4, 5)), R.normal(size=(2, 3)), 1, 2), (0, 1)),
    ("patches_past_the_edge", patches, (R.normal(size=(4, 5)), R.normal(size=(2, 3)), 3, -7), (0, 1)),
    ("selected", selected, (R.normal(size=5), R.normal(size=5)), (0, 1)),
    ("two_windows_one_clamped", two_windows_one_clamped, (np.arange(6.0), np.array(2)), (0,)),
]  # fmt: skip
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name, f, args, argnums", CASES, ids=IDS)
def test_value_and_grad_as_jax(name, f, args, argnums):
    check_value_and_grad(f, args, argnums)


@pytest.mark.parametrize("name, f, args, argnums", CASES, ids=IDS)
def test_jvp_as_jax(name, f, args, argnums):
    check_jvp(f, args, np.random.default_rng(4))


@pytest.mark.parametrize("name, f, args, argnums", CASES, ids=IDS)
def test_second_order_as_jax(name, f, args, argnums):
    check_second_order(f, args, argnums[0])


@pytest.mark.parametrize("name, f, args, argnums", CASES, ids=IDS)
def test_finite_differences(name, f, args, argnums):
    for argnum in argnums:
        check_finite_differences(f, args, argnum)


def test_vmap_with_per_example_starts_as_jax():
    """Starts that differ per example (and past the edge) gather each example's own window."""
    image, filt = R.normal(size=(4, 5)), R.normal(size=(2, 3))
    i, j = np.array([0, 3, 1, 2, -1]), np.array([2, -7, 4, 0, 1])
    check_vmap(patches, (image, filt, i, j), (None, None, 0, 0), grad=(0, 1))
    images = R.normal(size=(5, 4, 5))
    check_vmap(patches, (images, filt, i, j), (0, None, 0, 0), grad=(0, 1))
    check_vmap(patches, (images, filt, 1, 2), (0, None, None, None), grad=(0, 1))
    check_vmap(patches, (image, filt, i, 2), (None, None, 0, None), grad=(0, 1))


def test_vmap_of_loops_as_jax():
    check_vmap(
        sliding_window,
        (R.normal(size=(3, 8)), R.normal(size=3)),
        (0, None),
        grad=(0, 1),
    )
    check_vmap(
        rows_written,
        (R.normal(size=(3, 4, 3)), R.normal(size=(3, 2))),
        (0, None),
        grad=1,
    )
    check_vmap(
        selected, (R.normal(size=(3, 5)), R.normal(size=5)), (0, None), grad=(0, 1)
    )


def test_sliding_window_is_one_loop():
    grad = s2s.grad(sliding_window, argnums=(0, 1))
    jaxpr = str(jax.make_jaxpr(grad)(R.normal(size=40), R.normal(size=3)))
    assert jaxpr.count("scan[") == 2 and "dynamic_slice" in jaxpr


def test_generated_code_names_the_window():
    source = s2s.grad(sliding_window, argnums=(0, 1)).source
    assert "rt.dynamic_slice(signal, (i,), (k,))" in source


# --- what s2s refuses -------------------------------------------------------------------------


def no_negative(x, i):
    return jnp.sum(lax.dynamic_slice(x, (i,), (2,), allow_negative_indices=False))


def keepdims_at_run_time(x, i, flag):
    return jnp.sum(lax.dynamic_index_in_dim(x, i, 0, flag))


def wrong_arguments(x, i):
    return jnp.sum(lax.dynamic_slice(x, (i,)))


REFUSED = [
    (no_negative, "allow_negative_indices=False is not supported"),
    (keepdims_at_run_time, "is computed at run time"),
    (wrong_arguments, "does not match JAX's signature"),
]


@pytest.mark.parametrize("f, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_refused_at_the_users_line(f, message):
    with pytest.raises(S2SError) as info:
        s2s.generate(f, ("grad",))
    assert message in info.value.message
    assert info.value.origin.path == __file__
    assert "lax." in info.value.origin.text
