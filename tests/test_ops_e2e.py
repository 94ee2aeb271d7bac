"""Every op-table case through the whole compiler: source file -> generated derivative -> run.

The function is ``np.sum(<call> * ct)`` over the case's inputs; its gradient with
respect to every input must match ``jax.grad`` of the same function written with
``jax.numpy`` (float64) and, where the op is smooth there, central finite
differences along a random direction. Forward mode: ``s2s.jvp`` of the call
itself against ``jax.jvp`` along random tangents. Hypothesis draws shapes and
values; the NumPy backend runs each draw eagerly, and a case's first draw also
runs compiled through XLA: s2s's gradient and jvp as one program, JAX's as
another (one JAX compile serves both modes and both backends).
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
        self.argnums = tuple(range(len(case.names)))
        self.grad = jax.grad(twin, self.argnums)
        # finite differences of the function itself: a call that spells JAX runs compiled, not op by op
        self.value = Oracle(twin) if case.call.startswith("jax.") else self.f


def _functions(case, folder) -> Functions:
    if case.id not in _MODULES:
        _MODULES[case.id] = Functions(case, folder / f"case_{len(_MODULES)}.py")
    return _MODULES[case.id]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("op_cases")


class CallFunctions:
    """The case's call itself (no reduction) as a module function, and ``jax.jvp`` of its jax.numpy twin."""

    def __init__(self, case, path):
        args = ", ".join(case.names)
        self.f = _module_function(path, args, case.call)
        self.twin = eval(f"lambda {args}: {case.call}", namespace(jnp))
        self.rng = np.random.default_rng(len(case.id))

    def jvp(self, primals, tangents):
        return jax.jvp(self.twin, primals, tangents)

    def shape(self, primals):
        return output_shape(self.twin, *primals)

    def tangents(self, primals):
        return tuple(self.rng.normal(size=np.shape(p)) for p in primals)


_CALLS = {}


def _call_functions(case, folder) -> CallFunctions:
    if case.id not in _CALLS:
        _CALLS[case.id] = CallFunctions(case, folder / f"call_{len(_CALLS)}.py")
    return _CALLS[case.id]


NUMPY_DRAWS = settings(
    deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.mark.parametrize("case", CORE_CASES, ids=lambda c: c.id)
@settings(NUMPY_DRAWS, max_examples=2)
@given(data=st.data())
def test_derivatives_match_jax(case, folder, data):
    check_derivatives(case, folder, data)


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=lambda c: c.id)
@settings(NUMPY_DRAWS, max_examples=1)
@given(data=st.data())
def test_library_derivatives_match_jax(case, folder, data):
    check_derivatives(case, folder, data)


_COMPILED = set()  # cases whose first draw already ran through XLA
_ORACLES = {}  # case id -> JAX's grad and jvp of it, one compiled program


def check_derivatives(case, folder, data):
    """The gradient of ``np.sum(call * ct)`` and the jvp of the call, on one draw, against JAX's.

    A case's first draw runs both backends: XLA compiles s2s's gradient and jvp as one program, and JAX's
    ``grad`` and ``jvp`` as another (a compile per program is the slow part); later draws run NumPy only,
    against JAX's ``grad`` and ``jvp`` still compiled as one program (for their new shapes).
    """
    fns, calls = _functions(case, folder), _call_functions(case, folder)
    if case.id not in _ORACLES:
        _ORACLES[case.id] = Oracle(lambda a, p, t: (fns.grad(*a), calls.jvp(p, t)))
    inputs = draw_inputs(case, data.draw)
    primals = tuple(inputs[n] for n in case.names)
    args = (
        *primals,
        np.random.default_rng(len(case.id)).normal(size=calls.shape(primals)),
    )
    tangents = calls.tangents(primals)
    compiled = case.id not in _COMPILED
    _COMPILED.add(case.id)
    want_grad, want_jvp = _ORACLES[case.id](args, primals, tangents)
    if compiled:
        got = jax.jit(
            lambda a, p, t: (
                s2s.grad(fns.f, fns.argnums, backend="xla")(*a),
                s2s.jvp(calls.f, p, t, backend="xla"),
            )
        )(args, primals, tangents)
        _check_gradient(case, got[0], want_grad, "xla")
        _check_jvp(case, got[1], want_jvp, "xla")
    got_grad = s2s.grad(fns.f, fns.argnums, backend="numpy")(*args)
    _check_gradient(case, got_grad, want_grad, "numpy")
    if case.fd:
        _check_finite_differences(fns.value, args, got_grad, np.random.default_rng(1))
    _check_jvp(
        case, s2s.jvp(calls.f, primals, tangents, backend="numpy"), want_jvp, "numpy"
    )


def _check_gradient(case, got, want, backend):
    for name, g, w in zip(case.names, got, want):
        np.testing.assert_allclose(
            np.asarray(g),
            w,
            rtol=max(case.rtol, 1e-6),
            atol=max(case.atol, 1e-8),
            err_msg=f"d/d{name}, {backend}",
        )


def _check_jvp(case, got, want, backend):
    (out, out_dot), (want_out, want_dot) = got, want
    tol = dict(rtol=max(case.rtol, 1e-6), atol=max(case.atol, 1e-8))
    np.testing.assert_allclose(out, want_out, **tol, err_msg=f"value, {backend}")
    np.testing.assert_allclose(out_dot, want_dot, **tol, err_msg=f"tangent, {backend}")
    assert np.shape(out_dot) == np.shape(want_dot)


def _check_finite_differences(f, args, grads, rng, eps=1e-6):
    """The gradient's directional derivative against central differences in float64."""
    n = len(grads)
    direction = [rng.normal(size=np.shape(a)) for a in args[:n]]
    plus = [a + eps * d for a, d in zip(args[:n], direction)]
    minus = [a - eps * d for a, d in zip(args[:n], direction)]
    numeric = (f(*plus, *args[n:]) - f(*minus, *args[n:])) / (2 * eps)
    analytic = sum(np.sum(g * d) for g, d in zip(grads, direction))
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)
