"""The ``jax.numpy`` twin compiled code calls (``runtime/known_integers.py``): NumPy's on known integers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from s2s.runtime.known_integers import jnp as twin

from s2s import runtime as rt


def test_compiled_code_gets_the_twin():
    assert rt.namespace(jnp.ones(2)) is twin
    assert rt.namespace(np.ones(2), 3) is np


@pytest.mark.parametrize(
    "call, want",
    [
        (lambda: twin.prod((2, 3)), 6),
        (lambda: twin.cumsum([4, 3, 1])[:-1], np.array([4, 7])),
        (lambda: twin.arange(3) * 2, np.array([0, 2, 4])),
        (lambda: twin.maximum(2, np.array([1, 5])), np.array([2, 5])),
        (lambda: twin.nonzero(np.array([0, 3, 0, 1]))[0], np.array([1, 3])),
        # ties in their order, as JAX's stable sort keeps them
        (
            lambda: twin.argsort(np.tile([1, 0, 1], 12)),
            jnp.argsort(np.tile([1, 0, 1], 12)),
        ),
    ],
)
def test_integers_known_when_traced_stay_known(call, want):
    """Under ``jax.jit``, integers computed from known integers are NumPy's: a slice or split can use them."""
    seen = []

    @jax.jit
    def f(x):
        out = call()
        seen.append(out)
        return x

    f(jnp.ones(1))
    assert not isinstance(seen[0], jax.core.Tracer)
    np.testing.assert_array_equal(seen[0], want)
    if isinstance(want, int):
        assert type(seen[0]) is int  # a Python number, weakly typed as the literal


def test_floats_makers_and_traced_values_are_jax_numpy():
    @jax.jit
    def f(x):
        made = (
            twin.sqrt(4.0),
            twin.zeros(3),
            twin.mean(np.array([1, 2])),
            twin.cumsum(x),
        )
        assert all(isinstance(v, jax.core.Tracer) for v in made[1:])
        return made[3]

    np.testing.assert_array_equal(f(jnp.array([1, 2])), [1, 3])


def test_attributes_are_jax_numpy_own():
    assert (
        twin.float32 is jnp.float32 and twin.linalg is jnp.linalg and twin.pi == np.pi
    )
    out = twin.add.at(jnp.zeros(3), np.array([0, 0]), 1.0, inplace=False)
    np.testing.assert_array_equal(out, [2.0, 0.0, 0.0])
