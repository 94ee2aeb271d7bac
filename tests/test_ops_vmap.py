"""Every op-table case under ``s2s.vmap``: random in_axes, against a Python loop over examples.

The function is the case's call over its inputs. Hypothesis draws shapes,
values and which inputs are batched (at least one); a batched input holds two
examples, the drawn value and its reversal along every axis (which stays in
the case's domain: positive, well-conditioned, ...), or for a scalar a second
value drawn from its domain. The NumPy backend runs
every draw; one draw per case also runs compiled through XLA.
"""

import importlib.util

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_table import CORE_CASES, draw_inputs, draw_values
from op_table_library import HEADER, LIBRARY_CASES

import s2s

jax.config.update("jax_enable_x64", True)  # the op table is float64, as in test_ops_e2e

_FUNCTIONS = {}
_COMPILED = set()  # cases already run through XLA once


def _function(case, folder):
    if case.id not in _FUNCTIONS:
        path = folder / f"vcase_{len(_FUNCTIONS)}.py"
        args = ", ".join(case.names)
        path.write_text(f"{HEADER}\n\ndef f({args}):\n    return {case.call}\n")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _FUNCTIONS[case.id] = module.f
    return _FUNCTIONS[case.id]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("vmap_cases")


def _examples(value, other):
    return [value, np.flip(value) if np.ndim(value) else other]


def _loop(f, args, in_axes):
    outs = [
        f(*(a if ax is None else a[i] for a, ax in zip(args, in_axes)))
        for i in range(2)
    ]
    if isinstance(outs[0], (list, tuple)):
        return [np.stack([o[k] for o in outs]) for k in range(len(outs[0]))]
    return np.stack(outs)


_VMAP_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("case", CORE_CASES, ids=lambda c: c.id)
@settings(_VMAP_SETTINGS, max_examples=2)
@given(data=st.data())
def test_op_under_vmap_matches_a_loop(case, folder, data):
    check_vmap(case, folder, data)


# library functions and compositions: each of their ops is drawn in full by its own cases
@pytest.mark.parametrize("case", LIBRARY_CASES, ids=lambda c: c.id)
@settings(_VMAP_SETTINGS, max_examples=1)
@given(data=st.data())
def test_library_op_under_vmap_matches_a_loop(case, folder, data):
    check_vmap(case, folder, data)


def check_vmap(case, folder, data):
    inputs = draw_inputs(case, data.draw)
    others = draw_values(
        case, {name: np.shape(v) for name, v in inputs.items()}, data.draw
    )
    n = len(case.names)
    mapped = data.draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
    in_axes = tuple(0 if m else None for m in mapped)
    args = [
        np.stack(_examples(inputs[name], others[name])) if m else inputs[name]
        for name, m in zip(case.names, mapped)
    ]
    f = _function(case, folder)
    want = _loop(f, args, in_axes)
    backends = ["numpy"] if case.id in _COMPILED else ["numpy", "xla"]
    _COMPILED.add(case.id)
    tol = {"rtol": max(case.rtol, 1e-9), "atol": max(case.atol, 1e-12)}
    for backend in backends:
        got = s2s.vmap(f, in_axes=in_axes, backend=backend)(*args)
        if isinstance(want, list):
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.asarray(g), w, **tol, err_msg=backend)
        else:
            np.testing.assert_allclose(np.asarray(got), want, **tol, err_msg=backend)
