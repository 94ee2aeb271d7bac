"""Loops over functions and names bound to functions (``frontend/function_loops.py``), against JAX.

Each program of ``tests/programs/function_loops.py`` is valid JAX: its gradient,
forward mode and per-example batching must be JAX's, on both backends.
"""

import jax
import numpy as np
import pytest
from jax_checks import check_jvp, check_value_and_grad, check_vmap

import s2s
from tests.programs import function_loops as P

jax.config.update("jax_enable_x64", True)

PROGRAMS = [
    P.activations_in_turn,
    P.enumerated_activations,
    P.literal_tuple_of_functions,
    P.layers_from_a_module_list,
    P.chosen_activation,
    P.last_activation,
    P.summed_over_functions,
    P.lambdas_in_a_tuple,
    P.objects_zipped_with_weights,
    P.loop_names_read_after_it,
    P.data_zipped_before_functions,
    P.namedtuple_blocks_by_method_and_field,
]


def _args(rng):
    return rng.normal(size=(2, 3)), rng.normal(size=(3, 3)) * 0.5


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_gradient_and_forward_mode_match_jax(f):
    rng = np.random.default_rng(0)
    check_value_and_grad(f, _args(rng), argnums=(0, 1))
    check_jvp(f, _args(rng), rng)


@pytest.mark.parametrize(
    "f",
    [*PROGRAMS[:2], P.objects_zipped_with_weights, P.loop_names_read_after_it],
    ids=lambda f: f.__name__,
)
def test_per_example_gradients_match_jax(f):
    x, w = _args(np.random.default_rng(1))
    check_vmap(f, (np.stack([x, -x]), w), (0, None), grad=1)


def test_the_loop_is_written_out_one_function_after_another():
    source = s2s.grad(P.enumerated_activations).source
    assert "xp.tanh(" in source and "xp.sin(" in source
    assert "rt.scan" not in source


def test_a_loop_over_functions_that_breaks_stays_a_located_error(tmp_path):
    path = tmp_path / "breaks.py"
    path.write_text(
        "import numpy as np\n\nFNS = (np.sin, np.cos)\n\n\n"
        "def f(x):\n    for g in FNS:\n        x = g(x)\n        if x[0] > 1:\n"
        "            break\n    return np.sum(x)\n"
    )
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(s2s.S2SError, match=r"breaks\.py:7"):
        s2s.grad(namespace["f"])(np.ones(2))


def test_a_module_list_of_functions_changed_in_place_is_read_again():
    # the loop was written out from the list's items: a changed item must not leave the old code running
    x, w = _args(np.random.default_rng(2))
    grad = s2s.grad(P.layers_from_a_module_list, argnums=(0, 1))
    grad(x, w)
    saved = list(P.LAYERS)
    try:
        P.LAYERS[1] = P.dense
        got = grad(x, w)
        want = jax.grad(P.layers_from_a_module_list, argnums=(0, 1))(x, w)
    finally:
        P.LAYERS[:] = saved
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_zip_of_functions_with_a_shorter_array_is_refused_not_clamped(backend):
    """Python's ``zip`` stops at two rows; the loop written out once per function checks that every other
    sequence reaches each function (under XLA the third row would be clamped to the second).
    """
    assert len(P.ACTIVATIONS) > 2
    with pytest.raises(
        AssertionError, match=r"zip\(\) of .* functions or rows with a shorter sequence"
    ):
        s2s.grad(P.zipped_with_a_shorter_array, backend=backend)(
            *_args(np.random.default_rng(0))
        )
