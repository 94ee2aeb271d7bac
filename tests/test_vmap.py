"""``s2s.vmap``: batched modules checked against a Python loop over examples (and ``jax.vmap`` where it runs)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import s2s
from tests.programs import vmap as P

RNG = np.random.default_rng(3)
B = 3


def arr(*shape):
    return RNG.normal(size=shape)


def _example(value, axis, i):
    if axis is None:
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(_example(v, axis, i) for v in value)
    return np.take(value, i, axis=axis)


def loop(fn, args, in_axes, out_axes=0):
    """The oracle: ``fn`` on each example, results stacked along ``out_axes``."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    size = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = [fn(*(_example(a, ax, i) for a, ax in zip(args, axes))) for i in range(size)]
    if isinstance(outs[0], tuple):
        return tuple(
            np.stack(
                [o[k] for o in outs],
                axis=out_axes[k] if isinstance(out_axes, tuple) else out_axes,
            )
            for k in range(len(outs[0]))
        )
    return np.stack(outs, axis=out_axes)


def assert_close(got, want, backend):
    tol = (
        dict(rtol=1e-9, atol=1e-9) if backend == "numpy" else dict(rtol=2e-4, atol=2e-4)
    )
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w, backend)
        return
    np.testing.assert_allclose(np.asarray(got), want, **tol)


CASES = [
    (P.affine, lambda: (arr(B, 4), arr(4, 2), arr(2)), (0, None, None)),
    (P.affine, lambda: (arr(4, B), arr(4, 2), arr(2)), (1, None, None)),
    (P.affine, lambda: (arr(B, 5, 4), arr(B, 4, 2), arr(2)), (0, 0, None)),
    (P.scaled, lambda: (arr(B), arr(4)), (0, None)),
    (P.scaled, lambda: (arr(B), arr(B, 4)), 0),
    (P.softmax, lambda: (arr(B, 5),), 0),
    (P.normalize_rows, lambda: (arr(B, 2, 4),), 0),
    (P.normalize_rows, lambda: (arr(2, 4, B),), -1),
    (P.shapes, lambda: (arr(B, 2, 3),), 0),
    (P.pieces, lambda: (arr(B, 4, 2),), 0),
    (P.relu_if, lambda: (arr(B, 3),), 0),
    (P.newton_sqrt, lambda: (np.abs(arr(B)) * 10 + 0.5,), 0),
    (P.rows, lambda: (arr(B, 4, 2),), 0),
    (
        P.rnn,
        lambda: (arr(B, 5, 2), arr(3), arr(3, 3), arr(2, 3)),
        (0, None, None, None),
    ),
    (
        P.rnn,
        lambda: (arr(5, 2), arr(B, 3), arr(3, 3), arr(2, 3)),
        (None, 0, None, None),
    ),
    (P.write, lambda: (arr(B, 4),), 0),
    (P.gather, lambda: (arr(B, 5), np.array([0, 3, 3])), (0, None)),
    (P.gather, lambda: (arr(5), RNG.integers(0, 5, size=(B, 2))), (None, 0)),
    (P.with_helper, lambda: (arr(B, 4), arr(4, 3), arr(3, 2)), (0, None, None)),
    (P.transposes, lambda: (arr(B, 3, 2),), 0),
    (P.stack_and_cat, lambda: (arr(B, 3), arr(3)), (0, None)),
    (P.cumulative, lambda: (arr(B, 4),), 0),
    (P.argbest, lambda: (arr(B, 4),), 0),
    (P.count_steps, lambda: (np.abs(arr(B)) * 20,), 0),
    (
        P.zip_over_mixed_items,
        lambda: (arr(B, 2, 3), arr(2, 3), arr(2, 3)),
        (0, None, None),
    ),
    (
        P.zip_over_mixed_items,
        lambda: (arr(2, 3), arr(2, 3), arr(B, 2, 3)),
        (None, None, 0),
    ),
    (P.scipy_style, lambda: (arr(2), arr(5), arr(B, 5)), (None, None, 0)),
    (P.scipy_style, lambda: (arr(B, 2), arr(5), arr(5)), (0, None, None)),
]


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize(
    "fn, make, in_axes",
    CASES,
    ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)],
)
def test_vmap_matches_a_loop_over_examples(fn, make, in_axes, backend):
    args = make()
    if backend == "xla":
        args = tuple(
            np.asarray(a, np.float32) if a.dtype.kind == "f" else a for a in args
        )
    got = s2s.vmap(fn, in_axes=in_axes, backend=backend)(*args)
    assert_close(got, loop(fn, args, in_axes), backend)


def test_batched_module_is_readable_source_without_jax_vmap():
    text = s2s.vmap(P.affine, in_axes=(0, None, None)).source
    assert "def affine_batched(x, w, b):" in text
    code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert not any("vmap(" in line or "jax" in line for line in code)
    assert "rt.batching.matmul(x, w, (True, False))" in text


def test_control_flow_on_batched_values_compiles_where_jax_vmap_cannot():
    """A Python ``while``/``if`` on a batched value: per-example trip counts and branches."""
    a = np.array([0.5, 4.0, 100.0], np.float32)
    got = s2s.vmap(P.newton_sqrt)(a)
    np.testing.assert_allclose(np.asarray(got), np.sqrt(a), rtol=1e-5)
    steps = s2s.vmap(P.count_steps, backend="numpy")(np.array([0.5, 3.0, 40.0]))
    np.testing.assert_array_equal(steps, [0, 2, 6])
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.vmap(_jax_newton)(jnp.asarray(a))  # JAX's own vmap cannot batch it


def _jax_newton(a):
    x = a
    while jnp.abs(x * x - a) > 1e-6:
        x = 0.5 * (x + a / x)
    return x


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_out_axes(backend):
    x = arr(B, 4).astype(np.float32)
    s, y = s2s.vmap(P.pair, out_axes=(0, 1), backend=backend)(x)
    assert_close((s, y), loop(P.pair, (x,), 0, (0, 1)), backend)
    moved = s2s.vmap(P.softmax, out_axes=1, backend=backend)(x)
    assert_close(moved, loop(P.softmax, (x,), 0, 1), backend)


def test_jax_errors():
    x = arr(B, 4)
    with pytest.raises(ValueError, match="inconsistent sizes"):
        s2s.vmap(P.scaled, backend="numpy")(arr(3), arr(4, 4))
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1, len\\(args\\)=2"):
        s2s.vmap(P.scaled, in_axes=(0,))(arr(3), arr(4))
    with pytest.raises(s2s.S2SError, match="out_axes is None"):
        s2s.vmap(P.softmax, out_axes=None)(x)
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        s2s.vmap(P.softmax, in_axes="0")


def test_keyword_arguments_are_mapped_over_axis_0_like_jax():
    x, v = arr(B), arr(B, 4)
    got = s2s.vmap(P.scaled, in_axes=(0,), backend="numpy")(x, v=v)
    assert_close(got, loop(P.scaled, (x, v), 0), "numpy")


@pytest.mark.parametrize("out_axes", [(0,), {"a": 0}, [0, 1]])
def test_out_axes_that_are_no_prefix_of_the_output_are_jax_errors(out_axes):
    with pytest.raises(
        ValueError, match="must be a tree prefix of the corresponding value"
    ):
        s2s.vmap(P.softmax, out_axes=out_axes, backend="numpy")(np.ones((3, 2)))


def test_out_axes_for_more_outputs_than_returned_is_an_error_at_the_return():
    with pytest.raises(s2s.S2SError, match="does not match the 2 outputs"):
        s2s.vmap(P.pair, out_axes=(0, 1, 0), backend="numpy")(np.ones((3, 2)))


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_per_example_gradients_of_a_function_taking_star_args(backend):
    """``vmap(grad(fun))`` of scipy's ``fun(p, *args)``: specialized at the call's shape (was a TypeError)."""
    p, t, ys = arr(2), arr(5), arr(B, 5)
    got = s2s.vmap(s2s.grad(P.scipy_style), in_axes=(None, None, 0), backend=backend)(
        p, t, ys
    )
    want = np.stack([s2s.grad(P.scipy_style, backend="numpy")(p, t, y) for y in ys])
    assert_close(got, want, backend)
