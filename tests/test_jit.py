"""``s2s.jit``: JAX's ``jit`` semantics (static and donated arguments, traced Python numbers) on s2s's
lowered code, where Python ``if``/``for`` on traced values and in-place writes compile.

The oracle is the function itself run by NumPy, and ``jax.jit`` where JAX can run it.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import s2s
from s2s.errors import S2SError
from tests.programs import jitted as P

X = np.array([0.5, -0.25, 1.5])


def test_python_control_flow_on_traced_values_compiles():
    f = s2s.jit(P.clipped_power_sum)
    for x in (X, -X):
        np.testing.assert_allclose(f(x, 3), P.clipped_power_sum(x, 3), rtol=1e-6)
    with pytest.raises(
        (jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError)
    ):
        jax.jit(P.clipped_power_sum)(X, 3)


def test_static_arguments_by_number_name_and_keyword():
    for f in (
        s2s.jit(P.padded, static_argnums=1),
        s2s.jit(P.padded, static_argnums=-1),
        s2s.jit(P.padded, static_argnames="n"),
    ):
        np.testing.assert_allclose(f(X, 2), P.padded(X, 2))
        np.testing.assert_allclose(f(X, n=1), P.padded(X, 1))
    # a new static value compiles again, as in JAX
    f = s2s.jit(P.padded, static_argnums=(1,))
    assert f(X, 2).shape == (5,) and f(X, 4).shape == (7,)
    assert f._runner.jitted()._cache_size() == 2


def test_python_numbers_are_traced_unless_static():
    # as with jax.jit: a size passed to a traced parameter is not concrete; s2s names the user's line
    with pytest.raises(TypeError, match="a shape from an array's value") as info:
        s2s.jit(P.padded)(X, 2)
    assert "jitted.py:18" in str(info.value)
    with pytest.raises(TypeError, match="JitTracer"):
        jax.jit(P.padded)(X, 2)


def test_keyword_only_parameters_and_in_place_writes():
    f = s2s.jit(P.shrink)
    np.testing.assert_allclose(f(X, rate=3.0), P.shrink(X.copy(), rate=3.0))
    g = s2s.jit(P.shrink, static_argnames="rate")
    np.testing.assert_allclose(g(X, rate=0.5), P.shrink(X.copy(), rate=0.5))


def test_donated_arguments():
    f = s2s.jit(P.shrink, donate_argnums=0)
    x = jnp.asarray(X)
    np.testing.assert_allclose(f(x, rate=2.0), P.shrink(X.copy(), rate=2.0))


def test_decorator_forms_lowering_and_source():
    f = s2s.jit(P.clipped_power_sum, static_argnums=1)
    assert "def clipped_power_sum(" in f.source
    text = f.lower(X, 2).as_text()
    assert "func.func" in text and "stablehlo" in text
    shown = f._repr_markdown_()
    assert "```python" in shown and "def clipped_power_sum(" in shown
    decorated = s2s.jit(static_argnames="n")(P.padded)
    np.testing.assert_allclose(decorated(X, n=1), P.padded(X, 1))
    assert repr(s2s.jit(P.padded)) == "<s2s.jit of padded>"


def test_composes_with_grad():
    f = s2s.jit(P.clipped_power_sum, static_argnums=1)
    got = s2s.grad(f)(X, 3)
    want = s2s.grad(P.clipped_power_sum, backend="numpy")(X, 3)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "options, error, says",
    [
        ({"static_argnums": 1.5}, TypeError, "static_argnums must be ints"),
        ({"static_argnums": 2}, ValueError, "takes 2 positional arguments"),
        ({"static_argnames": "m"}, ValueError, "not a parameter of `padded`"),
        (
            {"static_argnums": 0, "donate_argnums": 0},
            ValueError,
            "cannot be donated",
        ),
    ],
)
def test_bad_options(options, error, says):
    with pytest.raises(error, match=says):
        s2s.jit(P.padded, **options)


def test_varargs_with_static_arguments_is_refused():
    with pytest.raises(S2SError, match=r"\*args"):
        s2s.jit(P.varargs, static_argnums=0)
    np.testing.assert_allclose(s2s.jit(P.varargs)(X, X), 2 * np.sum(X))
