"""Loops whose first steps change the carry's shape (``total = 0`` then rows), or run before the body reads
traced values: gradients, forward mode and per-example gradients on both backends against JAX's
(``jax.grad`` follows the Python loop as NumPy does), and the loop stays compiled after its first steps.
"""

import jax
import numpy as np
import pytest

import s2s
from tests.programs import peeled_loops as P

jax.config.update("jax_enable_x64", True)

BACKENDS = ("numpy", "xla")
XS = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
CASES = {
    "running_sum": (P.running_sum, (XS,)),
    "clenshaw": (P.clenshaw, (np.linspace(-1, 1, 3), np.array([1.0, 0.5, 0.25, 0.1]))),
    # two steps, both run on their own (the carry settles only after them)
    "clenshaw_short": (P.clenshaw, (np.linspace(-1, 1, 3), np.array([1.0, 0.5, 0.25]))),
    "reversed_decay": (P.reversed_decay, (XS, np.array([0.3, -0.7, 1.1]))),
    # every step on its own (three items), and two on their own before the others rolled
    "clenshaw_upward_short": (
        P.clenshaw_upward,
        (np.linspace(-1, 1, 3), np.array([1.0, 0.5, 0.25])),
    ),
    "clenshaw_upward": (
        P.clenshaw_upward,
        (np.linspace(-1, 1, 3), np.linspace(0.1, 1, 6)),
    ),
    "bisect": (P.bisect, (np.asarray(2.0),)),
    "collected_before_update": (P.collected_before_update, (XS,)),
    "backtracking_descent": (
        P.backtracking_descent,
        (np.array([-0.5, 0.8, 0.3]), np.asarray(0.7)),
    ),
    "shrinking_lattice": (P.shrinking_lattice, (np.asarray(0.2),)),
}


def _close(got, want):
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_gradient_and_tangent_equal_jax(name, backend):
    f, args = CASES[name]
    argnums = tuple(range(len(args)))
    _close(s2s.grad(f, argnums, backend=backend)(*args), jax.grad(f, argnums)(*args))
    tangents = tuple(np.ones_like(a) for a in args)
    _close(s2s.jvp(f, args, tangents, backend=backend), jax.jvp(f, args, tangents))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["running_sum", "clenshaw", "bisect"])
def test_per_example_gradients_equal_a_loop(name, backend):
    f, args = CASES[name]
    batch = tuple(np.stack([a, 1.5 * a]) for a in args)
    got = s2s.vmap(s2s.grad(f), backend=backend)(*batch)
    want = np.stack([jax.grad(f)(*(b[i] for b in batch)) for i in range(2)])
    _close(got, want)


def test_the_loop_after_its_first_steps_is_one_rolled_scan():
    text = str(jax.make_jaxpr(s2s.grad(P.running_sum))(np.ones((50, 3))))
    assert text.count("scan[") <= 2 and text.count("tanh") < 10, text


def test_a_carry_shrinking_at_every_step_is_a_located_error_under_xla():
    with pytest.raises(s2s.S2SError, match="keep changing the shape") as info:
        s2s.grad(P.binomial_backward_induction)(0.7)
    assert info.value.origin is not None
    assert "backend='numpy'" in info.value.hint
    # NumPy's loop runs it: V[0] = 1 + s + ... + s**6
    got = s2s.grad(P.binomial_backward_induction, backend="numpy")(0.7)
    np.testing.assert_allclose(got, sum(k * 0.7 ** (k - 1) for k in range(1, 7)))
