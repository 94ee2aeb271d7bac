"""Factories called in the function (``frontend/factories``): every transform, both backends, against JAX.

``init, update = momentum(lr)`` and ``head = make_head(W_out)`` close over values a derivative or a
batch axis reaches; s2s writes the factory's body in place, its returned functions as local ones.
"""

import jax
import numpy as np
import pytest
from jax_checks import jvp_of, oracle
from programs import factories as P

import s2s

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(13)
BACKENDS = ("numpy", "xla")


def _params():
    return {"w": 0.3 * RNG.normal(size=(3, 2)), "b": np.zeros(2)}


X9 = RNG.normal(size=(9, 3))

# name -> (arguments, argnums)
CASES = {
    "head_loss": (
        (RNG.normal(size=(3, 4)), RNG.normal(size=(4, 1)), RNG.normal(size=(5, 3))),
        (0, 1),
    ),
    "meta_loss": ((0.3, _params(), X9, np.tanh(X9[:, :2])), (0, 1)),
    "two_made": ((RNG.normal(size=3), RNG.normal(size=4)), 0),
    "switched_heads": (
        (
            {"W": RNG.normal(size=(4, 3)), "v": RNG.normal(size=(3, 4))},
            RNG.normal(size=3),
            2,
        ),
        0,
    ),
    "made_in_a_loop": ((RNG.normal(size=3), RNG.normal(size=4)), 0),
    "swapped_pair": ((RNG.normal(size=2) * 0.5, RNG.normal(size=4)), 0),
    "record_meta_loss": ((-1.0, RNG.normal(size=3)), (0, 1)),
    "record_unpacked": ((-1.0, RNG.normal(size=3)), (0, 1)),
    "scanned_with_a_made_step": (
        (0.5 * RNG.normal(size=(2, 2)), RNG.normal(size=(3, 2))),
        (0, 1),
    ),
}


def _zero_tangent(a):
    """A zero tangent of ``a``: JAX's ``float0`` for an integer (``lax.switch``'s index)."""
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        return np.zeros(np.shape(a), dtype=jax.dtypes.float0)
    return np.zeros_like(a)


def _close(got, want):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_and_jvp_of_a_factorys_closures(name, backend):
    f = getattr(P, name)
    args, argnums = CASES[name]
    _close(
        s2s.value_and_grad(f, argnums, backend=backend)(*args),
        oracle(jax.value_and_grad, f, argnums)(*args),
    )
    tangents = tuple(
        (
            jax.tree.map(np.ones_like, a)
            if k in np.atleast_1d(argnums)
            else jax.tree.map(_zero_tangent, a)
        )
        for k, a in enumerate(args)
    )
    _close(
        s2s.jvp(f, args, tangents, backend=backend), oracle(jvp_of, f)(args, tangents)
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_example_gradients_through_a_factorys_closures(backend):
    w, x = RNG.normal(size=(4, 3)), RNG.normal(size=4)
    for f in (P.two_made, P.made_in_a_loop):
        got = s2s.vmap(s2s.grad(f), in_axes=(0, None), backend=backend)(w, x)
        _close(got, oracle(jax.vmap, jax.grad(f), (0, None))(w, x))
        got = s2s.vmap(f, in_axes=(0, None), backend=backend)(w, x)
        _close(got, oracle(jax.vmap, f, (0, None))(w, x))


def test_the_factorys_lines_are_written_in_place_with_their_names_kept_apart():
    source = s2s.transform(P.two_made).source
    # each call's parameters bound to its arguments, under names of their own
    assert "make_leaky_alpha_2 = w[1]" in source
    assert "make_leaky_scale_2 = 2.0" in source
    # the factory's own line, cited where it is in its file
    line = P.make_leaky.__code__.co_firstlineno + 2
    assert f"factories.py:{line}  slope = alpha * scale" in source
    assert "make_leaky_slope_2 = make_leaky_alpha_2 * make_leaky_scale_2" in source


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_example_meta_gradients_through_a_record_of_closures(backend):
    log_lrs, w = np.array([-1.0, -0.5, -2.0]), RNG.normal(size=3)
    got = s2s.vmap(s2s.grad(P.record_meta_loss), in_axes=(0, None), backend=backend)(
        log_lrs, w
    )
    _close(got, oracle(jax.vmap, jax.grad(P.record_meta_loss), (0, None))(log_lrs, w))
