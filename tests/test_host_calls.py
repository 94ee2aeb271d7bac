"""NumPy's and SciPy's functions without an s2s op, run when the code is traced (``frontend/host_calls.py``).

Gradients on both backends against float64 central differences, ``jvp``, ``vmap`` and ``vmap`` of the
gradient against loops; on the differentiated or batched path, a located error naming the function;
a traced argument under XLA, or a function argument, a located refusal; generated files import the function.
"""

import jax
import numpy as np
import pytest

import s2s
from s2s.errors import S2SError
from tests.programs import host_calls as P
from tests.test_numpy_style import (
    check_batched,
    check_forward_and_hessian,
    check_program,
)

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("name", P.PROGRAMS)
def test_gradient_matches_finite_differences(name):
    check_program(P, name)


@pytest.mark.parametrize("name", P.PROGRAMS)
def test_batches_and_pushes_tangents(name):
    f = getattr(P, name)
    (theta,) = getattr(P, f"inputs_{name}")()
    check_batched(f, np.stack([theta, 1.2 * theta, theta + 0.1]), ())
    check_forward_and_hessian(f, theta, (), np.array([1.0, -0.5]))


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap"])
def test_on_the_differentiated_or_batched_path_it_is_a_located_error(transform):
    theta = np.array([0.3, -0.2, 0.5])
    f = P.on_the_differentiated_path
    run = {
        "grad": lambda: s2s.grad(f)(theta),
        "jvp": lambda: s2s.jvp(f, (theta,), (theta,)),
        "vmap": lambda: s2s.vmap(f)(np.stack([theta, theta])),
    }[transform]
    with pytest.raises(
        S2SError, match=r"rule for `polyval` \(run by `rt\.host_call`\)"
    ) as info:
        run()
    assert (
        info.value.origin.line
        == P.on_the_differentiated_path.__code__.co_firstlineno + 2
    )


def test_a_traced_argument_is_a_located_refusal_and_a_known_one_runs():
    theta = np.array([0.4, 0.1])
    with pytest.raises(
        S2SError, match="one of its arguments is computed by the compiled code"
    ):
        s2s.grad(P.count_from_data)(theta, np.int64(4))
    got = s2s.grad(P.count_from_data)(theta, 4)  # a Python int: known when traced
    eps = 1e-6
    want = (
        P.count_from_data(theta + [eps, 0], 4) - P.count_from_data(theta - [eps, 0], 4)
    ) / (2 * eps)
    np.testing.assert_allclose(got[0], want, rtol=1e-7)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_a_function_argument_is_refused(backend):
    with pytest.raises(
        S2SError, match=r"`scipy\.integrate\.quad` comes from `scipy\.integrate`"
    ):
        s2s.grad(P.given_a_function, backend=backend)(np.ones(2))


def test_the_generated_module_imports_the_function():
    text = s2s.generate(P.truncated_moment, ("grad",)).text
    assert "from numpy.polynomial.legendre import leggauss" in text
    assert "rt.host_call(leggauss, 6)" in text
