"""``take`` at indices that differ per example (``jnp.take(E, ids, axis=0)`` under ``jax.vmap``, the
embedding lookup): ``s2s.vmap`` and its compositions with ``grad`` and ``jvp``, both backends, against
JAX's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import s2s

jax.config.update("jax_enable_x64", True)

BACKENDS = ("numpy", "xla")
TABLE = np.arange(24.0).reshape(4, 6) / 10 - 1.0
IDS = np.array([[0, 3, 1], [2, 2, 0]])


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10)


def lookup_rows(E, ids):
    return jnp.sum(jnp.tanh(jnp.take(E, ids, axis=0)) ** 2)


def lookup_columns(E, ids):
    return jnp.sum(jnp.sin(jnp.take(E, ids, axis=-1)))


def lookup_flat(E, ids):
    return jnp.sum(jnp.take(E, ids) ** 3)


def lookup_wrapped(E, ids):
    return jnp.sum(jnp.take(E, ids + 3, axis=0, mode="wrap") * 2.0)


CASES = [lookup_rows, lookup_columns, lookup_flat, lookup_wrapped]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_per_example_indices_into_a_shared_table(f, backend):
    axes = (None, 0)
    _close(
        s2s.vmap(f, in_axes=axes, backend=backend)(TABLE, IDS),
        jax.vmap(f, in_axes=axes)(TABLE, IDS),
    )
    # per-example gradients, and the gradient of the batch's mean
    _close(
        s2s.vmap(s2s.grad(f), in_axes=axes, backend=backend)(TABLE, IDS),
        jax.vmap(jax.grad(f), in_axes=axes)(TABLE, IDS),
    )
    mean = lambda E, ids: jnp.mean(jax.vmap(f, in_axes=axes)(E, ids))
    _close(s2s.grad(mean, backend=backend)(TABLE, IDS), jax.grad(mean)(TABLE, IDS))
    t = np.cos(TABLE)
    _close(
        s2s.vmap(
            lambda E, i: s2s.jvp(f, (E, i), (t, np.zeros_like(i)))[1], in_axes=axes
        )(TABLE, IDS),
        jax.vmap(lambda E, i: jax.jvp(lambda E: f(E, i), (E,), (t,))[1], in_axes=axes)(
            TABLE, IDS
        ),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_example_indices_into_per_example_tables(backend):
    tables = np.stack([TABLE, 2 * TABLE])
    _close(
        s2s.vmap(lookup_columns, backend=backend)(tables, IDS),
        jax.vmap(lookup_columns)(tables, IDS),
    )
    _close(
        s2s.vmap(s2s.grad(lookup_rows), backend=backend)(tables, IDS),
        jax.vmap(jax.grad(lookup_rows))(tables, IDS),
    )


def test_numpy_take_out_of_range_raises_as_numpy_does():
    with pytest.raises(Exception, match="out of bounds"):
        s2s.vmap(
            lambda E, i: np.sum(np.take(E, i, axis=0)),
            in_axes=(None, 0),
            backend="numpy",
        )(TABLE, IDS + 4)
