"""JAX's functional index updates, ``x.at[idx].set/add/multiply/min/max/get/...``, in programs written the
way JAX's documentation writes them, checked against JAX itself: ``jax.grad``, ``jax.value_and_grad``,
``jax.jvp``, ``jax.vmap`` (indices per example too), second order, on both backends; and the
options s2s refuses, as located errors.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_checks import (
    check_finite_differences,
    check_jvp,
    check_second_order,
    check_value_and_grad,
    check_vmap,
    oracle,
)

import s2s
from s2s.errors import S2SError

# --- programs --------------------------------------------------------------------------------


def fill_buffer(x, w):
    """A loop writing rows of a buffer, then reading them back."""
    buf = jnp.zeros((4, 3))
    for i in range(4):
        buf = buf.at[i].set(jnp.tanh(x * i + w))
    total = 0.0
    for i in range(4):
        total = total + jnp.sum(buf[i] * buf[3 - i])
    return total


def histogram(weights, bins):
    """A weighted histogram by scatter-add: repeated bins accumulate."""
    counts = jnp.zeros(5)
    counts = counts.at[bins].add(weights)
    return jnp.sum(counts**2)


def segment_max(values, segments):
    """The largest value per segment (ties share the derivative, as in JAX)."""
    best = jnp.full(3, -10.0)
    best = best.at[segments].max(values)
    return jnp.sum(best * jnp.array([1.0, 2.0, 3.0]))


def segment_min(values, segments):
    worst = jnp.full(3, 10.0)
    worst = worst.at[segments].min(values)
    return jnp.sum(jnp.sin(worst))


def scaled(x, s):
    """multiply, divide and power on slices, an int and unique indices."""
    y = x.at[1:3].multiply(s)
    y = y.at[::2].divide(1.0 + s * s)
    y = y.at[0].power(2.0)
    y = y.at[jnp.array([3, 1])].mul(s, unique_indices=True)
    return jnp.sum(y**2)


def many_indices(x, v, i):
    """Negative ints, ``...``, None, tuples with slices, a boolean mask and subtract."""
    y = x.at[-1].set(v[0])
    y = y.at[..., 0].add(v[1])
    y = y.at[i, 1:3].subtract(v)
    y = y.at[None, 0, -2].multiply(v[0])
    y = y.at[y > 1.0].set(1.0)
    y = y.at[(0, 1)].max(v[1])
    return jnp.sum(y * x)


def gather_modes(x, idx):
    """Reads with JAX's index modes: clip, fill (with and without a value)."""
    a = x.at[idx].get(mode="clip")
    b = x.at[idx].get(mode="fill", fill_value=0.5)
    c = x.at[idx, 1].get(mode="fill", fill_value=-1.0)
    return jnp.sum(a * b) + jnp.sum(c**2)


def default_fill(x, idx):
    return x.at[idx].get(mode="fill"), x.at[idx].get(mode="drop")


def clipped_updates(x, idx, v):
    y = x.at[idx].set(v, mode="clip")
    y = y.at[idx + 1].add(v, mode="clip", indices_are_sorted=False)
    return jnp.sum(y**3)


def per_example_write(x, i, v):
    """One example's row ``i`` written: under vmap, ``i`` differs per example."""
    y = x.at[i].set(v * 2.0)
    y = y.at[i, 1:3].add(v[:2])
    y = y.at[(i + 1) % 4].max(v)
    y = y.at[i].multiply(v)
    return jnp.sum(y**2) + jnp.sum(y.at[i - 1].get(mode="clip"))


R = np.random.default_rng(0)


# name, function, arguments, argnums of the float arguments
def positions_updated_at_traced_places(x):
    """Integer arrays made from constants (known when traced) updated where the data says: JAX's scatter."""
    idx = jnp.arange(4).at[1].set(3)
    perm = jnp.array([2, 0, 1, 3]).at[0].set(jnp.argmax(x))
    counts = jnp.array([0, 0, 0, 0]).at[jnp.argmin(x)].add(1)
    return jnp.sum(x[idx] ** 2) + jnp.sum(x[perm] * counts)


CASES = [
    ("positions_updated_at_traced_places", positions_updated_at_traced_places, (np.array([0.5, -0.2, 0.3, 0.9]),), 0),
    ("fill_buffer", fill_buffer, (R.normal(size=3), R.normal(size=3)), (0, 1)),
    ("histogram", histogram, (R.normal(size=7), np.array([0, 1, 1, 3, 4, 4, 1])), 0),
    ("segment_max", segment_max, (np.array([1.0, 2.0, 2.0, -3.0, 0.5, 2.0]), np.array([0, 1, 1, 2, 2, 0])), 0),
    ("segment_min", segment_min, (np.array([1.0, 2.0, 1.0, -3.0, 0.5, -3.0]), np.array([0, 1, 0, 2, 2, 2])), 0),
    ("scaled", scaled, (R.normal(size=5), 0.7), (0, 1)),
    ("many_indices", many_indices, (R.normal(size=(4, 3)), R.normal(size=2), 2), (0, 1)),
    ("gather_modes", gather_modes, (R.normal(size=(4, 2)), np.array([0, 5, -1, -9, 2])), 0),
    ("clipped_updates", clipped_updates, (R.normal(size=4), np.array([0, 7, -2]), R.normal(size=3)), (0, 2)),
]  # fmt: skip
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name, f, args, argnums", CASES, ids=IDS)
def test_value_and_grad_as_jax(name, f, args, argnums):
    check_value_and_grad(f, args, argnums)


@pytest.mark.parametrize("name, f, args, argnums", CASES, ids=IDS)
def test_jvp_as_jax(name, f, args, argnums):
    check_jvp(f, args, np.random.default_rng(1))


SECOND_ORDER = [
    c for c in CASES if c[0] in ("histogram", "segment_max", "scaled", "many_indices")
]


@pytest.mark.parametrize(
    "name, f, args, argnums", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER]
)
def test_second_order_as_jax(name, f, args, argnums):
    first = argnums if isinstance(argnums, int) else argnums[0]
    check_second_order(f, args, first)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_default_fill_is_jaxs(backend):
    """Out of bounds, JAX reads NaN (the smallest integer for ints); s2s reads the same."""
    for x in (R.normal(size=(4, 2)), np.arange(8).reshape(4, 2)):
        idx = np.array([0, 5, -1, -9])
        got = s2s.transform(default_fill, backend=backend)(x, idx)
        want = default_fill(jnp.asarray(x), idx)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


PADDED_RECEIVERS = np.array(
    [1, 2, 0, 3]
)  # the last edge is padding: node 3 of 3 is out of range


def padded_message_passing(w, h):
    """A graph's messages summed at their receivers, padded as jraph pads: the padding edge's receiver is
    out of range, so JAX drops its message (``segment_sum``, ``.at[].add``, ``.max``, ``.multiply``).
    """
    messages = jnp.tanh(h[jnp.array([0, 1, 2, 0])] * w[0] + w[1])
    agg = jax.ops.segment_sum(messages, PADDED_RECEIVERS, num_segments=3)
    more = jnp.zeros(3).at[PADDED_RECEIVERS].add(messages * w[0])
    peak = jnp.zeros(3).at[PADDED_RECEIVERS].max(messages * w[1])
    gain = jnp.ones(3).at[PADDED_RECEIVERS].multiply(messages, unique_indices=True)
    return jnp.sum((agg + more + h) ** 2) + jnp.sum(peak * gain)


def test_dropped_out_of_range_updates_get_no_cotangent():
    """Under XLA, the padding edge's message is dropped, and so is its gradient (a gather that clamps
    would hand it the last node's)."""
    w, h = np.array([0.7, -0.2]), np.array([0.3, -0.5, 0.9])
    want = oracle(jax.grad, padded_message_passing, argnums=(0, 1))(w, h)
    got = s2s.grad(padded_message_passing, argnums=(0, 1))(w, h)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-5)
    # per example (the batched reverse rule's gather fills too)
    hs = R.normal(size=(3, 3))
    grad = functools.partial(jax.grad, argnums=(0, 1))
    want = oracle(jax.vmap, oracle(grad, padded_message_passing), (None, 0))(w, hs)
    got = s2s.vmap(s2s.grad(padded_message_passing, argnums=(0, 1)), in_axes=(None, 0))(
        w, hs
    )
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-5, atol=1e-6)


def _written_past_the_end(x, v, i):
    return jnp.sum(x.at[i].set(v) * jnp.arange(1.0, 5.0)) + jnp.sum(x.at[i].add(v))


def test_a_write_at_a_traced_position_past_the_end_gives_its_value_no_cotangent():
    """JAX's scatter drops ``x.at[i].set(v)`` for ``i`` past the end: ``v`` reached nothing (its cotangent
    is no clamped read of the last element's)."""
    x = np.array([0.5, -1.0, 2.0, 0.3])
    for i in (4, 1):
        want = oracle(jax.grad, _written_past_the_end, argnums=(0, 1))(x, 1.5, i)
        got = s2s.grad(_written_past_the_end, argnums=(0, 1))(x, 1.5, jnp.asarray(i))
        for g, v in zip(got, want):
            np.testing.assert_allclose(g, v, rtol=1e-6)


def _read_past_the_ends(u, M, i):
    return (
        u[i + 1] ** 3
        + jnp.sum(M[i, 1:3]) * jnp.sum(M[:, i - 9])
        + u.at[i].get() * u[i - 9]
    )


def test_a_read_at_a_traced_position_past_an_end_gives_the_clamped_element_its_cotangent():
    """JAX's ``dynamic_slice`` clamps ``u[i]`` past either end, and so does its transpose: the cotangent
    goes to the element read (never dropped, as a write's is), in grad, hessian and per example.
    """
    u, M = np.array([0.5, -1.0, 2.0, 0.3]), R.normal(size=(3, 4))
    for i in (3, 7, 1):
        i = jnp.asarray(i)
        want = oracle(jax.grad, _read_past_the_ends, argnums=(0, 1))(u, M, i)
        got = s2s.grad(_read_past_the_ends, argnums=(0, 1))(u, M, i)
        for g, v in zip(got, want):
            np.testing.assert_allclose(g, v, rtol=1e-6)
    want = oracle(jax.hessian, _read_past_the_ends)(u, M, jnp.asarray(5))
    np.testing.assert_allclose(
        s2s.hessian(_read_past_the_ends)(u, M, jnp.asarray(5)), want, rtol=1e-6
    )
    idx = np.array([0, 3, 8, -9])
    grad = functools.partial(jax.grad, argnums=(0, 1))
    want = oracle(jax.vmap, grad(_read_past_the_ends), (None, None, 0))(u, M, idx)
    got = s2s.vmap(
        s2s.grad(_read_past_the_ends, argnums=(0, 1)), in_axes=(None, None, 0)
    )(u, M, idx)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-6)


def test_per_example_writes_past_the_end_give_their_values_no_cotangent():
    u, v, idx = np.arange(1.0, 5.0), np.arange(4.0), np.array([0, 4, -1, 9])
    want = oracle(
        jax.vmap, oracle(jax.grad, _written_past_the_end, argnums=(0, 1)), (None, 0, 0)
    )(u, v, idx)
    got = s2s.vmap(
        s2s.grad(_written_past_the_end, argnums=(0, 1)), in_axes=(None, 0, 0)
    )(u, v, idx)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("name, f, args, argnums", CASES, ids=IDS)
def test_finite_differences(name, f, args, argnums):
    for argnum in (argnums,) if isinstance(argnums, int) else argnums:
        if isinstance(args[argnum], np.ndarray):
            check_finite_differences(f, args, argnum)


def test_vmap_with_per_example_indices_as_jax():
    x = R.normal(size=(4, 5))
    i = np.array([0, 2, 3, 1, 3])
    v = R.normal(size=(5, 5))
    check_vmap(per_example_write, (x, i, v), (None, 0, 0), grad=(0, 2))
    check_vmap(
        per_example_write, (R.normal(size=(5, 4, 5)), i, v), (0, 0, 0), grad=(0, 2)
    )


def test_vmap_of_scatters_as_jax():
    weights = R.normal(size=(3, 7))
    bins = np.array(
        [[0, 1, 1, 3, 4, 4, 1], [4, 4, 4, 0, 0, 1, 2], [0, 1, 2, 3, 4, 0, 0]]
    )
    check_vmap(histogram, (weights, bins), (0, 0), grad=0)
    check_vmap(histogram, (weights[0], bins), (None, 0), grad=0)
    values = np.array([[1.0, 2.0, 2.0, -3.0], [0.0, 0.0, 1.0, 1.0]])
    segments = np.array([[0, 1, 1, 2], [2, 2, 0, 0]])
    check_vmap(segment_max, (values, segments), (0, 0), grad=0)
    check_vmap(segment_min, (values, segments), (0, 0), grad=0)
    check_vmap(
        scaled, (R.normal(size=(3, 5)), np.array([0.5, 1.0, 2.0])), (0, 0), grad=(0, 1)
    )


def read_by_components(x):
    """``.at[...]`` reads with one index per axis, slices, an ellipsis, and clipped reads and writes
    past the end: each component on its own axis of every example."""
    m = x.reshape(2, 2)
    picked = m.at[1, 0].get() * 2.0 + m.at[0, 1:].get().sum() + m.at[..., 1].get().sum()
    clipped = x.at[7].get(mode="clip") + x.at[7].set(x[0] * 3, mode="clip").sum()
    return picked * clipped


def test_vmap_of_reads_by_components_as_jax():
    check_vmap(read_by_components, (R.normal(size=(3, 4)),), (0,), grad=0)


def test_the_buffer_loop_stays_rolled():
    """The `.at[i].set` loop is one `scan`, forward and backward."""
    grad = s2s.grad(fill_buffer, argnums=(0, 1))
    jaxpr = jax.make_jaxpr(grad)(R.normal(size=3), R.normal(size=3))
    assert str(jaxpr).count("scan[") == 4  # two loops, each forward and backward


def test_generated_code_reads_as_element_writes():
    source = s2s.grad(segment_max).source
    assert "rt.index_max(best, segments, values)" in source
    source = s2s.grad(histogram).source
    assert "rt.index_add(counts, bins, weights)" in source


# --- what s2s refuses -------------------------------------------------------------------------


def uses_apply(x):
    return jnp.sum(x.at[0].apply(jnp.sin))


def uses_unknown_option(x):
    return jnp.sum(x.at[0].set(1.0, out_sharding=None))


def uses_traced_mode(x, mode):
    return jnp.sum(x.at[0].get(mode=mode))


def uses_ref(x):
    ref = x.at[0]
    return jnp.sum(ref.set(1.0))


def repeats_under_multiply(x, v, idx):
    return jnp.sum(x.at[idx].multiply(v) ** 2)


def fill_without_mode(x):
    return jnp.sum(x.at[0].get(fill_value=1.0))


def no_wrap(x):
    return jnp.sum(x.at[-1].set(0.0, wrap_negative_indices=False))


REFUSED = [
    (uses_apply, "`.at[...].apply()` is not supported"),
    (uses_unknown_option, "with `out_sharding=`, which s2s does not support"),
    (uses_traced_mode, "`mode=` is computed at run time"),
    (uses_ref, "`x.at[...]` without a method call"),
    (fill_without_mode, "`fill_value` is read only with mode='fill'"),
    (no_wrap, "wrap_negative_indices=False is not supported"),
]


@pytest.mark.parametrize("f, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_refused_at_the_users_line(f, message):
    with pytest.raises(S2SError) as info:
        s2s.generate(f, ("grad",))
    assert message in info.value.message
    assert info.value.origin.path == __file__
    assert "x.at[" in info.value.origin.text


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_multiply_at_repeating_indices_is_refused_as_in_jax(backend):
    """JAX: `scatter_mul gradients are only implemented if unique_indices=True`; s2s: the same, located."""
    x, v, idx = R.normal(size=4), R.normal(size=2), np.array([1, 1])
    with pytest.raises(NotImplementedError):
        oracle(jax.grad, repeats_under_multiply, argnums=1)(jnp.asarray(x), v, idx)
    with pytest.raises(S2SError) as info:
        s2s.grad(repeats_under_multiply, argnums=1, backend=backend)(x, v, idx)
    assert "unique_indices=True" in str(info.value)
    assert "repeats_under_multiply" in str(info.value) or "x.at[idx]" in str(info.value)
    # with respect to the array itself it is linear: JAX's gradient exists, and so does s2s's
    got = s2s.grad(repeats_under_multiply, backend=backend)(x, v, idx)
    np.testing.assert_allclose(
        got, oracle(jax.grad, repeats_under_multiply)(jnp.asarray(x), v, idx)
    )


def rows_and_columns(x, i, w):
    """Reads mixing slices with a per-example index (and the same through `.at[].get()`)."""
    a = x[i, 1:3]
    b = x[1:, i]
    c = x.at[i, ::2].get()
    d = x[..., i]
    return jnp.sum(a * w[:2]) + jnp.sum(b**2) + jnp.sum(c) + jnp.sum(jnp.sin(d))


def test_vmap_of_reads_mixing_slices_and_per_example_indices():
    x, i, w = R.normal(size=(4, 4)), np.array([0, 3, 1, 2, -1]), R.normal(size=(5, 3))
    check_vmap(rows_and_columns, (x, i, w), (None, 0, 0), grad=(0, 2))
    check_vmap(
        rows_and_columns, (R.normal(size=(5, 4, 4)), i, w), (0, 0, 0), grad=(0, 2)
    )
    check_vmap(
        rows_and_columns, (R.normal(size=(5, 4, 4)), 2, w), (0, None, 0), grad=(0, 2)
    )


def superdiagonal_dropped(v, m):
    """``mode="drop"`` adds past the last column: JAX drops them, so does s2s on both backends."""
    for i in range(m.shape[0]):
        m = m.at[i, i + 1].add(v[i] * 2.0, mode="drop")
        m = m.at[i, i + 2].multiply(1.0 + v[i], mode="drop")
    return jnp.sum(m**2)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_drop_mode_updates_past_the_end_agree_with_jax(backend):
    v, m = np.arange(1.0, 5.0) * 0.3, np.eye(4) + 0.1
    with jax.enable_x64(True):
        want_value, want = jax.value_and_grad(superdiagonal_dropped)(v, jnp.asarray(m))
        got_value, got = s2s.value_and_grad(superdiagonal_dropped, backend=backend)(
            v, m
        )
    np.testing.assert_allclose(got_value, want_value, rtol=1e-9)
    np.testing.assert_allclose(got, want, rtol=1e-9)
