"""Local functions that change their enclosing function's lists and names (``frontend/closure_state.py``).

Gradients on both backends match float64 central differences and values match
NumPy's; ``vmap`` matches a Python loop and ``jvp`` central differences. What
cannot hand its change back is a located error naming the function and the
name it changes.
"""

import jax
import numpy as np
import pytest

import s2s
from s2s.errors import S2SError
from tests.programs import closure_state as P
from tests.test_numpy_style import check_program

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("name", P.PROGRAMS)
def test_gradient_matches_finite_differences(name):
    check_program(P, name)


@pytest.mark.parametrize(
    "name",
    ["per_step_losses_in_a_compiled_loop", "a_counter_and_a_total_declared_nonlocal"],
)
def test_batched_and_forward_mode(name):
    f = getattr(P, name)
    first, xs = getattr(P, f"inputs_{name}")()
    batch = np.stack([xs, 2 * xs, -xs])
    got = s2s.vmap(f, in_axes=(None, 0))(first, batch)
    np.testing.assert_allclose(got, [f(first, b) for b in batch], rtol=1e-10)
    tangent = np.ones_like(first)
    _, out = s2s.jvp(f, (first, xs), (tangent, np.zeros_like(xs)))
    eps = 1e-6
    want = (f(first + eps * tangent, xs) - f(first - eps * tangent, xs)) / (2 * eps)
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_one_item_per_call_is_collected_by_a_compiled_loop():
    source = s2s.grad(P.per_step_losses_in_a_compiled_loop).source
    assert "rt.scan(" in source  # the loop stays rolled
    assert "losses_item" in source


def test_a_list_grown_through_a_call_in_a_compiled_loop_is_a_located_error():
    w, xs = P.inputs_a_list_read_inside_the_helper()
    with pytest.raises(S2SError, match="a Python list that grows in the loop") as err:
        s2s.grad(P.a_list_read_inside_the_helper)(w, xs)
    assert err.value.origin.path == P.__file__
    got = s2s.grad(P.a_list_read_inside_the_helper, backend="numpy")(w, xs)
    eps, f = 1e-6, P.a_list_read_inside_the_helper
    want = [(f(w + eps * e, xs) - f(w - eps * e, xs)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "name, construct",
    [
        (
            "passed_as_a_value",
            "`keep` changes `seen` of its enclosing function and is used as a value",
        ),
        ("read_on_the_same_line", "`push` changes `acc`, which this line also reads"),
        (
            "in_a_conditional_expression",
            "`push` changes `acc` of its enclosing function and is called in a conditional",
        ),
    ],
)
def test_what_cannot_hand_its_change_back_is_a_located_error(name, construct):
    x = np.ones((2, 3)) if name == "passed_as_a_value" else np.ones(3)
    with pytest.raises(S2SError) as err:
        s2s.grad(getattr(P, name))(np.ones(3), x)
    text = str(err.value)
    assert construct in text, text
    assert "closure_state.py:" in text and "^" in text and "hint:" in text
