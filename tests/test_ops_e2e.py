"""Every op-table case through the whole compiler: source file -> generated derivative -> run.

The function is ``np.sum(<call> * ct)`` over the case's inputs; its gradient with
respect to every input must match ``jax.grad`` of the same function written with
``jax.numpy`` (float64) and, where the op is smooth there, central finite
differences along a random direction. Forward mode: ``s2s.jvp`` of the call
itself against ``jax.jvp`` along random tangents. Hypothesis draws shapes and
values; the NumPy backend runs each draw eagerly, and a case's first draw also
runs compiled through XLA, against the same oracle (one JAX compile serves both
backends).
"""

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_table import CORE_CASES, draw_inputs
from op_table_library import HEADER, LIBRARY_CASES, namespace
from oracles import Oracle, output_shape

import s2s

jax.config.update("jax_enable_x64", True)

_MODULES = {}


def _module_function(path, args, body):
    """``def f(args): return body`` written to ``path`` and imported (s2s reads functions from source files)."""
    path.write_text(f"{HEADER}\n\ndef f({args}):\n    return {body}\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


class Functions:
    """A case's function as a real module (s2s reads source), its jax.numpy twin, and oracles made of the twin."""

    def __init__(self, case, path):
        args = ", ".join(case.names)
        self.f = _module_function(path, f"{args}, ct", f"np.sum({case.call} * ct)")
        twin = eval(f"lambda {args}, ct: np.sum({case.call} * ct)", namespace(jnp))
        self.call = eval(f"lambda {args}: {case.call}", namespace(jnp))
        self.argnums = tuple(range(len(case.names)))
        self.grad = Oracle(jax.grad(twin, self.argnums))
        # finite differences of the function itself: a call that spells JAX runs compiled, not op by op
        self.value = Oracle(twin) if case.call.startswith("jax.") else self.f


def _functions(case, folder) -> Functions:
    if case.id not in _MODULES:
        _MODULES[case.id] = Functions(case, folder / f"case_{len(_MODULES)}.py")
    return _MODULES[case.id]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("op_cases")


def _args(fns, case, inputs, rng):
    values = [inputs[n] for n in case.names]
    return (*values, rng.normal(size=output_shape(fns.call, *values)))


def _check(case, got, want, backend):
    for name, g, w in zip(case.names, got, want):
        np.testing.assert_allclose(
            g,
            w,
            rtol=max(case.rtol, 1e-6),
            atol=max(case.atol, 1e-8),
            err_msg=f"d/d{name}, {backend}",
        )


NUMPY_DRAWS = settings(
    deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


_COMPILED = set()  # (test, case) pairs whose first draw already ran through XLA


def _backends(test, case):
    """Both backends for a case's first draw, then NumPy only (an XLA compile per draw is the slow part)."""
    if (test, case.id) in _COMPILED:
        return ["numpy"]
    _COMPILED.add((test, case.id))
    return ["numpy", "xla"]


@pytest.mark.parametrize("case", CORE_CASES, ids=lambda c: c.id)
@settings(NUMPY_DRAWS, max_examples=2)
@given(data=st.data())
def test_gradient_matches_jax(case, folder, data):
    _check_gradient(case, folder, data)


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=lambda c: c.id)
@settings(NUMPY_DRAWS, max_examples=1)
@given(data=st.data())
def test_library_gradient_matches_jax(case, folder, data):
    _check_gradient(case, folder, data)


def _check_gradient(case, folder, data):
    fns = _functions(case, folder)
    args = _args(
        fns, case, draw_inputs(case, data.draw), np.random.default_rng(len(case.id))
    )
    want = fns.grad(*args)
    for backend in _backends("grad", case):
        got = s2s.grad(fns.f, fns.argnums, backend=backend)(*args)
        _check(case, [np.asarray(g) for g in got], want, backend)
        if case.fd and backend == "numpy":
            _check_finite_differences(fns.value, args, got, np.random.default_rng(1))


def _check_finite_differences(f, args, grads, rng, eps=1e-6):
    """The gradient's directional derivative against central differences in float64."""
    n = len(grads)
    direction = [rng.normal(size=np.shape(a)) for a in args[:n]]
    plus = [a + eps * d for a, d in zip(args[:n], direction)]
    minus = [a - eps * d for a, d in zip(args[:n], direction)]
    numeric = (f(*plus, *args[n:]) - f(*minus, *args[n:])) / (2 * eps)
    analytic = sum(np.sum(g * d) for g, d in zip(grads, direction))
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


_CALLS = {}


def _call_functions(case, folder):
    """The case's call itself (no reduction), as a module function, and ``jax.jvp`` of its jax.numpy twin."""
    if case.id not in _CALLS:
        args = ", ".join(case.names)
        f = _module_function(folder / f"call_{len(_CALLS)}.py", args, case.call)
        twin = eval(f"lambda {args}: {case.call}", namespace(jnp))
        _CALLS[case.id] = (f, Oracle(lambda p, t: jax.jvp(twin, p, t)))
    return _CALLS[case.id]


def _check_jvp(case, folder, data):
    f, oracle = _call_functions(case, folder)
    inputs = draw_inputs(case, data.draw)
    primals = tuple(inputs[n] for n in case.names)
    rng = np.random.default_rng(len(case.id))
    tangents = tuple(rng.normal(size=np.shape(p)) for p in primals)
    want, want_dot = oracle(primals, tangents)
    tol = dict(rtol=max(case.rtol, 1e-6), atol=max(case.atol, 1e-8))
    for backend in _backends("jvp", case):
        out, out_dot = s2s.jvp(f, primals, tangents, backend=backend)
        np.testing.assert_allclose(out, want, **tol, err_msg=f"value, {backend}")
        np.testing.assert_allclose(
            out_dot, want_dot, **tol, err_msg=f"tangent, {backend}"
        )
        assert np.shape(out_dot) == np.shape(want_dot)


@pytest.mark.parametrize("case", CORE_CASES, ids=lambda c: c.id)
@settings(NUMPY_DRAWS, max_examples=2)
@given(data=st.data())
def test_jvp_matches_jax(case, folder, data):
    _check_jvp(case, folder, data)


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=lambda c: c.id)
@settings(NUMPY_DRAWS, max_examples=1)
@given(data=st.data())
def test_library_jvp_matches_jax(case, folder, data):
    _check_jvp(case, folder, data)
