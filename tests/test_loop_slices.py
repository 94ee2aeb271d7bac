"""Slices whose bounds a compiled loop computes (``passes/slice_masks.py``, ``passes/masks.py``).

``U[i, i + 1:] @ x[i + 1:]``, ``A[i, k:] -= m * A[k, k:]``, ``np.sum(x[:i])``:
compiled, the loop's index is traced and the slice has no size known when
traced; s2s computes over the whole axis with a mask. Gradients on both
backends match float64 central differences; ``vmap``, ``vmap(grad)``,
``jvp`` and Hessians agree with loops and differences; a slice read any
other way stays the located error about its bounds.
"""

import jax
import numpy as np
import pytest

import s2s
from tests.programs import loop_slices as P
from tests.test_numpy_style import (
    check_batched,
    check_forward_and_hessian,
    check_program,
)

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("name", P.PROGRAMS)
def test_gradient_matches_finite_differences(name):
    check_program(P, name)


@pytest.mark.parametrize(
    "name",
    [
        "back_substitution",
        "gaussian_elimination",
        "prefix_statistics",
        "gauss_seidel_compliance",
        "strided_conv_per_example",
        "conv1d_windows_by_pairs",
    ],
)
def test_vmap_and_vmap_of_grad_match_a_loop(name):
    f = getattr(P, name)
    first, *rest = getattr(P, f"inputs_{name}")()
    firsts = np.stack([first, 1.1 * first, first + 0.1])
    check_batched(f, firsts, rest)


def test_jvp_and_hessian_match_differences():
    A, y = P.inputs_cholesky_rows()
    t = np.random.default_rng(7).normal(size=A.shape)
    check_forward_and_hessian(P.cholesky_rows, A, (y,), t + t.T)


def test_the_generated_code_masks_the_whole_row():
    text = s2s.generate(P.back_substitution, ("grad",)).text
    assert "window = rt.span_mask(row, i + 1, None, (i,))" in text
    code = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert not any(
        "i + 1 :]" in line for line in code
    )  # (only the comments cite the slice)


def joined(x):
    total = 0.0
    for i in range(1, x.shape[0]):
        total = total + np.sum(np.concatenate([x[:i], x[:i]]) ** 2)
    return total


def test_a_slice_read_otherwise_stays_the_located_error_about_its_bounds():
    x = np.arange(1.0, 5.0)
    with pytest.raises(
        s2s.S2SError, match="a slice whose bounds the compiled code"
    ) as info:
        s2s.grad(joined)(x)
    assert info.value.origin.path == __file__
    np.testing.assert_allclose(
        s2s.grad(joined, backend="numpy")(x),
        [4 * 3 * x[0], 4 * 2 * x[1], 4 * x[2], 0.0],
    )


def scaled_suffixes(x, s):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sum(x[i:] * s)
    return total


def test_other_values_broadcast_against_the_slice_as_numpy_does():
    x = np.arange(1.0, 5.0)
    for s in (2.0, np.array([2.0])):
        np.testing.assert_allclose(
            s2s.grad(scaled_suffixes)(x, s), 2.0 * np.arange(1, 5)
        )
        np.testing.assert_allclose(
            scaled_suffixes(x, s), s2s.jit(scaled_suffixes)(x, s)
        )


def rows_by_index_array(x, rows):
    total = 0.0
    for i in range(x.shape[1]):
        total = total + np.sum(x[rows, i:] ** 2)
    return total


def test_a_slice_beside_an_index_array_is_a_located_error():
    # s2s masks along one axis; an index array before it would move that axis
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(s2s.S2SError, match="beside an index array") as info:
        s2s.grad(rows_by_index_array)(x, np.array([0, 2]))
    assert info.value.origin.path == __file__
    assert "index with integers" in info.value.hint


def causal_scores(x):
    T = x.shape[0]
    scores = np.outer(x, x)
    mask = np.triu(np.ones((T, T)), k=1).astype(bool)
    scores[mask] = -1e9
    return np.sum(np.exp(scores))


def test_one_mask_for_every_example_under_vmap():
    # the mask (a window of the unbatched matrix, a causal mask from shapes) is the same for every
    # example; the values it selects from differ per example
    U, b = P.inputs_back_substitution()
    bs = np.stack([b, 2.0 * b, b - 1.0])
    f = P.back_substitution
    np.testing.assert_allclose(
        s2s.vmap(f, in_axes=(None, 0))(U, bs), [f(U, v) for v in bs], rtol=1e-10
    )
    grads = s2s.vmap(s2s.grad(f), in_axes=(None, 0))(U, bs)
    for g, v in zip(grads, bs):
        np.testing.assert_allclose(g, s2s.grad(f, backend="numpy")(U, v), rtol=1e-9)
    xs = np.array([[0.1, 0.2, 0.3], [0.3, -0.2, 0.5]])
    np.testing.assert_allclose(
        s2s.vmap(causal_scores)(xs), [causal_scores(x) for x in xs], rtol=1e-12
    )


def test_numbers_every_step_shares_stay_known_to_the_backward_loop():
    """``stride * n_out`` is kept by the forward loop for the backward one: under ``jax.jit`` it is still a
    Python number there (was a slice width known only at run time, a located refusal).
    """
    w, xs = P.inputs_strided_conv_per_example()
    got = jax.jit(s2s.grad(P.strided_conv_per_example))(w, xs)
    np.testing.assert_allclose(
        got, s2s.grad(P.strided_conv_per_example, backend="numpy")(w, xs), rtol=1e-9
    )
