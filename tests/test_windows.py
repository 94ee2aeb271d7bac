"""``x[i:i + k]`` at a start a compiled loop computes (``frontend/windows.py``, ``rt.window``).

Gradients on both backends match float64 central differences; batched,
forward and second-order transforms agree with loops and differences. A
window that would leave its axis, where NumPy would return a shorter slice,
is an error under XLA and NumPy's own slice on the NumPy backend.
"""

import jax
import numpy as np
import pytest

import s2s
from tests.programs import windows as P
from tests.test_numpy_style import check_batched, check_program

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("name", P.PROGRAMS)
def test_gradient_matches_finite_differences(name):
    check_program(P, name)


def test_windows_under_vmap_jvp_and_hessian():
    w, x, y = P.inputs_minibatch_losses()
    f = P.minibatch_losses
    xs = np.stack([x, -x, 0.5 * x])
    np.testing.assert_allclose(
        s2s.vmap(f, in_axes=(None, 0, None))(w, xs, y),
        [f(w, x_, y) for x_ in xs],
        rtol=1e-10,
    )
    grads = s2s.vmap(s2s.grad(f), in_axes=(None, 0, None))(w, xs, y)
    for g, x_ in zip(grads, xs):
        np.testing.assert_allclose(
            g, s2s.grad(f, backend="numpy")(w, x_, y), rtol=1e-10
        )
    t = np.ones_like(w)
    eps = 1e-6
    want = (f(w + eps * t, x, y) - f(w - eps * t, x, y)) / (2 * eps)
    np.testing.assert_allclose(
        s2s.jvp(f, (w, x, y), (t, 0 * x, 0 * y))[1], want, rtol=1e-6
    )
    h = s2s.hessian(f)(w, x, y)
    g = s2s.grad(f, backend="numpy")
    fd = (g(w + eps * t, x, y) - g(w - eps * t, x, y)) / (2 * eps)
    np.testing.assert_allclose(np.tensordot(h, t, axes=2), fd, rtol=1e-5, atol=1e-8)


def test_a_dilated_window_under_vmap_and_jvp():
    W, x = P.inputs_dilated_conv()
    xs = np.stack([x, -x, 0.5 * x])
    check_batched(lambda x_, W_: P.dilated_conv(W_, x_), xs, (W,))
    t = np.ones_like(W)
    eps = 1e-6
    f = P.dilated_conv
    want = (f(W + eps * t, x) - f(W - eps * t, x)) / (2 * eps)
    np.testing.assert_allclose(s2s.jvp(f, (W, x), (t, 0 * x))[1], want, rtol=1e-6)


def test_a_window_per_example_under_vmap():
    kernel, signal = P.inputs_conv1d_valid()
    signals = np.stack([signal, signal[::-1]])
    got = s2s.vmap(s2s.grad(P.conv1d_valid), in_axes=(None, 0))(kernel, signals)
    for g, s in zip(got, signals):
        np.testing.assert_allclose(
            g, s2s.grad(P.conv1d_valid, backend="numpy")(kernel, s), rtol=1e-10
        )


def test_a_window_past_the_end_is_an_error_under_xla_and_numpys_slice_on_numpy():
    rng = np.random.default_rng(5)
    w, x = rng.normal(size=2), rng.normal(size=(10, 2))
    np.testing.assert_allclose(
        s2s.grad(P.last_batch_short, backend="numpy")(w, x), x.sum(axis=0), rtol=1e-12
    )
    with pytest.raises(
        IndexError, match=r"the slice \[8:12\] of an axis of length 10"
    ) as info:
        jax.block_until_ready(s2s.grad(P.last_batch_short)(w, x))
    # checked when the compiled code ran, and still at the user's line with a hint that works
    assert isinstance(info.value, s2s.S2SError)
    assert info.value.origin.path == P.__file__
    assert "n - n % size" in info.value.hint


def test_a_width_that_reads_the_loops_counter_is_a_located_error_where_no_mask_takes_it():
    # ``x[i:2 * i] @ w``: no window (its width is traced), and a product that keeps the sliced axis is
    # no masked reduction (``passes/masks.py``): the error about bounds the compiled code computes
    rng = np.random.default_rng(6)
    w, x = rng.normal(size=2), rng.normal(size=(6, 2))
    with pytest.raises(
        s2s.S2SError, match="a slice whose bounds the compiled code computes"
    ) as err:
        s2s.grad(P.traced_width)(w, x)
    assert "windows.py:" in str(err.value)
    assert "mask instead of slicing" in err.value.hint


def test_a_list_sliced_at_a_compiled_loops_index_is_a_located_error_under_xla():
    params, x = P.inputs_list_slice_at_a_name()
    f = P.list_slice_in_a_compiled_loop
    got = s2s.grad(f, backend="numpy")(params, x)
    eps, k = 1e-6, 1
    direction = np.ones((3, 3))
    moved = [
        [p + s * eps * direction if n == k else p for n, p in enumerate(params)]
        for s in (1, -1)
    ]
    np.testing.assert_allclose(
        np.sum(got[k] * direction),
        (f(moved[0], x) - f(moved[1], x)) / (2 * eps),
        rtol=1e-6,
    )
    with pytest.raises(
        s2s.S2SError, match=r"a slice `items\[i:i \+ k\]` of a Python list"
    ) as err:
        s2s.grad(f)(params, x)
    assert "windows.py:" in str(err.value) and "hint:" in str(err.value)


@pytest.mark.parametrize("name", ["banded_operator", "overlap_add"])
def test_writes_into_windows_under_vmap_and_jvp(name):
    f = getattr(P, name)
    first, second = getattr(P, f"inputs_{name}")()
    firsts = np.stack([first, -first, 0.5 * first])
    np.testing.assert_allclose(
        s2s.vmap(f, in_axes=(0, None))(firsts, second),
        [f(x, second) for x in firsts],
        rtol=1e-10,
    )
    grads = s2s.vmap(s2s.grad(f), in_axes=(0, None))(firsts, second)
    for g, x in zip(grads, firsts):
        np.testing.assert_allclose(
            g, s2s.grad(f, backend="numpy")(x, second), rtol=1e-9, atol=1e-12
        )
    t = np.random.default_rng(3).normal(size=first.shape)
    eps = 1e-6
    want = (f(first + eps * t, second) - f(first - eps * t, second)) / (2 * eps)
    np.testing.assert_allclose(
        s2s.jvp(f, (first, second), (t, 0.0 * second))[1], want, rtol=1e-6
    )


def two_windows_written(x):
    img = np.zeros((4, 4))
    for i in range(3):
        img[i : i + 2, i : i + 2] = x[i]
    return np.sum(img)


def test_a_write_into_two_windows_at_once_is_a_located_error():
    with pytest.raises(
        s2s.S2SError, match="a write into a slice of known width"
    ) as info:
        s2s.grad(two_windows_written)(np.ones(3))
    assert info.value.origin.path == __file__


def test_lagged_copies_compile_in_every_transform():
    """``series[n_lags - lag:len(series) - lag]`` in a compiled loop, differentiated in the series too, under
    ``jax.jit``: was the refusal of a slice whose bounds the compiled code computes."""
    coef, series = P.inputs_lag_features()
    got = jax.jit(s2s.grad(P.lag_features, argnums=1))(coef, series)
    want = s2s.grad(P.lag_features, argnums=1, backend="numpy")(coef, series)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    batch = np.stack([series, 0.5 * series])
    np.testing.assert_allclose(
        s2s.vmap(P.lag_features, in_axes=(None, 0))(coef, batch),
        [P.lag_features(coef, s) for s in batch],
        rtol=1e-10,
    )
