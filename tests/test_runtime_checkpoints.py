"""The checkpointed ``while`` loop of the runtime: exact gradients for every trip count, whatever the slots.

``while_loop_with_tape`` keeps carries in a fixed number of slots (doubling the
stride when they fill) and ``while_loop_reverse`` recomputes from them. With 4
slots, trip counts up to 4 keep every carry, up to 16 recompute each segment
once, and longer ones recompute inside segments too: every regime must give
the gradient of the same loop unrolled by JAX.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from s2s.runtime import checkpoints

jax.config.update("jax_enable_x64", True)

W = 0.7


def body(carry):
    x, k = carry
    return (jnp.sin(x) * W + 0.5 * x, k + 1), (x,)


def body_bwd(carry_bar, residuals):
    x_bar, k_bar = carry_bar
    (x,) = residuals
    return (x_bar * (jnp.cos(x) * W + 0.5), k_bar)


def taped_gradient(x0, n):
    (x, _), tape = checkpoints.while_loop_with_tape(lambda c: c[1] < n, body, (x0, 0))
    x_bar, _ = checkpoints.while_loop_reverse(
        body, body_bwd, (jnp.ones_like(x), jnp.zeros(())), tape
    )
    return x, x_bar


def unrolled(x0, n):
    return jax.lax.fori_loop(0, n, lambda _, x: body((x, 0))[0][0], x0)


@pytest.fixture(scope="module")
def four_slots():
    saved = checkpoints.MAX_SLOTS
    checkpoints.MAX_SLOTS = 4
    yield jax.jit(taped_gradient)
    checkpoints.MAX_SLOTS = saved


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 8, 15, 16, 17, 33, 64, 100])
def test_compiled_tape_gives_the_exact_gradient(four_slots, n):
    x0 = jnp.array([0.3, -1.2, 2.0])
    x, x_bar = four_slots(x0, n)
    np.testing.assert_allclose(x, unrolled(x0, n), rtol=1e-12)
    expected = jax.grad(lambda v: jnp.sum(unrolled(v, n)))(x0)
    np.testing.assert_allclose(x_bar, expected, rtol=1e-10)


def test_eager_tape_keeps_every_carry():
    x0 = np.array([0.3, -1.2, 2.0])
    (x, _), tape = checkpoints.while_loop_with_tape(
        lambda c: c[1] < 6,
        lambda c: (((np.sin(c[0]) * W + 0.5 * c[0]), c[1] + 1), (c[0],)),
        (x0, 0),
    )
    assert len(tape) == 6 and tape[0][1] == 0
    x_bar, _ = checkpoints.while_loop_reverse(
        lambda c: (None, (c[0],)),
        lambda bar, res: (bar[0] * (np.cos(res[0]) * W + 0.5), bar[1]),
        (np.ones(3), 0.0),
        tape,
    )
    np.testing.assert_allclose(
        x_bar, jax.grad(lambda v: jnp.sum(unrolled(v, 6)))(jnp.asarray(x0)), rtol=1e-12
    )


def test_slots_fit_the_memory_budget(monkeypatch):
    monkeypatch.setattr(checkpoints, "CHECKPOINT_BYTES", 2**20)
    monkeypatch.setattr(checkpoints, "MAX_SLOTS", 1024)
    # 4 kB: two buffers of 128 slots fit in 1 MiB
    carry = (jnp.zeros((1000,), jnp.float32),)
    assert checkpoints._slots(carry) == 128
    assert checkpoints._slots((jnp.zeros((4,)),)) == 1024
