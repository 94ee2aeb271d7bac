"""``*sequence`` and ``**mapping`` arguments to the user's functions (``frontend/spread.py``).

Gradients on both backends match float64 central differences; values match
the NumPy function. A call that does not bind raises Python's ``TypeError``
when the code runs; what s2s cannot spread is a located error at the ``*``.
"""

import re

import jax
import numpy as np
import pytest

import s2s
from s2s.errors import S2SError
from tests.programs import spread_calls as P
from tests.test_numpy_style import check_program

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("name", P.PROGRAMS)
def test_gradient_matches_finite_differences(name):
    check_program(P, name)


def test_spread_calls_batch_and_push_tangents():
    params, x = P._inputs()
    xs = np.stack([x, 2 * x, -x])
    for f in (
        P.layers_spread_into_star_parameter,
        P.positional_items_before_the_spread,
        P.star_and_double_star,
        P.keyword_popped_before_passing_on,
    ):
        got = s2s.vmap(f, in_axes=(None, 0))(params, xs)
        np.testing.assert_allclose(got, [f(params, x_) for x_ in xs], rtol=1e-10)
        tangents = [np.ones_like(p) for p in params]
        _, out = s2s.jvp(f, (params, x), (tangents, np.zeros_like(x)))
        eps = 1e-6
        moved = [
            [p + sign * eps * t for p, t in zip(params, tangents)] for sign in (1, -1)
        ]
        want = (f(moved[0], x) - f(moved[1], x)) / (2 * eps)
        np.testing.assert_allclose(out, want, rtol=1e-6)


@pytest.mark.parametrize(
    "name, message",
    [
        ("too_many_items", "_dense(): too many positional arguments"),
        (
            "unexpected_setting",
            "_scaled(): got an unexpected keyword argument 'offset'",
        ),
        ("twice_given", "_dense(): multiple values for argument 'w'"),
        ("too_many_items_for_a_lambda", "(): too many positional arguments"),
    ],
)
@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_a_call_that_does_not_bind_is_pythons_type_error(name, message, backend):
    f = getattr(P, name)
    with pytest.raises(TypeError):
        f(*P._inputs())  # Python's own error, for reference
    with pytest.raises(TypeError, match=re.escape(message)) as err:
        s2s.grad(f, backend=backend)(*P._inputs())
    assert any("spread_calls.py:" in note for note in err.value.__notes__)


@pytest.mark.parametrize(
    "name, construct",
    [
        (
            "settings_into_double_star",
            "`**` of a dict into `_kwargs_sink`'s `**options`",
        ),
        ("spread_into_an_op", "`*` argument unpacking in a call of `np.zeros`"),
        ("popped_twice", "`kwargs.pop()` calls a method of an object"),
        (
            "popped_without_a_default",
            '`kwargs.pop("key")` of a keyword this call does not pass (`key`)',
        ),
    ],
)
def test_what_s2s_cannot_spread_is_a_located_error(name, construct):
    f = getattr(P, name)
    args = (np.ones(3), {"scale": 2.0}) if name.startswith("settings") else (1.0, (3,))
    with pytest.raises(S2SError) as err:
        s2s.grad(f)(*args)
    text = str(err.value)
    assert construct in text, text
    assert "spread_calls.py:" in text and "^" in text and "hint:" in text
