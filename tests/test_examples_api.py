"""End to end through the API: the example models' gradients against ``jax.grad`` of their JAX twins.

Every example in ``examples/`` is differentiated by ``s2s.grad`` (compiled, the
default), by ``s2s.grad(..., backend="numpy")`` (eager), and under an outer
``jax.jit``; the oracle is ``jax.grad`` of the same source with ``np`` bound to
``jax.numpy`` (``benchmarks/_twins.py``). Float64 throughout, small shapes.
"""

import dataclasses
import importlib.util
import pathlib
import re
from collections.abc import Callable

import jax
import numpy as np
import pytest

import s2s

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load_twins():
    spec = importlib.util.spec_from_file_location(
        "_s2s_twins", ROOT / "benchmarks" / "_twins.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_twins = _load_twins()
jax_twin, load_example = _twins.jax_twin, _twins.load_example


def assert_trees_close(actual, expected, rtol=1e-7, atol=1e-10):
    """Same container structure, and leafwise the same shape, dtype and values."""
    assert jax.tree_util.tree_structure(actual) == jax.tree_util.tree_structure(
        expected
    )
    for a, e in zip(
        jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected)
    ):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape
        assert a.dtype == e.dtype
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


@dataclasses.dataclass
class Case:
    path: str
    name: str
    inputs: Callable  # rng -> tuple of arguments (float64)
    argnums: int | tuple = 0

    @property
    def module(self):
        return load_example(self.path)

    @property
    def fn(self):
        return getattr(self.module, self.name)

    def args(self, seed=0):
        return self.inputs(self.module, np.random.default_rng(seed))


def _mlp(m, rng):
    return (m.init(rng, [5, 7, 6, 3], np.float64), *m.data(rng, 4, 5, 3, np.float64))


def _attention(m, rng):
    params = m.init(rng, 6, np.float64)
    params["gamma"] = params["gamma"] + 0.1 * rng.standard_normal(6)
    params["beta"] = 0.1 * rng.standard_normal(6)
    return params, rng.standard_normal((5, 6)), rng.standard_normal((5, 6))


def _layernorm(m, rng):
    return (
        m.init(rng, 6, 3, np.float64),
        rng.standard_normal((4, 6)),
        rng.standard_normal((4, 3)),
    )


def _helpers(m, rng):
    return (
        m.init(rng, 4, 7, 2, np.float64),
        rng.standard_normal((3, 4)),
        rng.standard_normal((3, 2)),
    )


def _logistic(m, rng):
    x = rng.standard_normal((6, 3))
    y = (rng.random(6) > 0.5).astype(np.float64)
    return rng.standard_normal(3), 0.25, x, y


def _polynomial(m, rng):
    return (rng.standard_normal((3, 4)),)


CASES = {
    "mlp": Case("examples/mlp.py", "loss", _mlp),
    "attention": Case("examples/attention.py", "loss", _attention),
    "layernorm": Case("examples/layernorm.py", "loss", _layernorm),
    "helpers_across_modules": Case(
        "examples/helpers_across_modules/model.py", "loss", _helpers
    ),
    "logistic": Case("examples/logistic.py", "loss", _logistic, argnums=(0, 1)),
    "polynomial": Case("examples/polynomial.py", "f", _polynomial),
}
cases = pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())


def oracle_grad(case, *args, **kwargs):
    return jax.grad(jax_twin(case.fn), argnums=case.argnums, **kwargs)(*args)


@cases
def test_grad_matches_jax(case):
    args = case.args()
    actual = s2s.grad(case.fn, argnums=case.argnums)(*args)
    assert_trees_close(actual, oracle_grad(case, *args))


@cases
def test_numpy_backend_runs_eagerly_and_matches_jax(case):
    args = case.args()
    actual = s2s.grad(case.fn, argnums=case.argnums, backend="numpy")(*args)
    assert_trees_close(actual, oracle_grad(case, *args))
    for leaf in jax.tree_util.tree_leaves(actual):
        assert isinstance(leaf, (np.ndarray, np.generic, float)), type(leaf)


@cases
def test_jax_jit_of_s2s_grad(case):
    args = case.args()
    actual = jax.jit(s2s.grad(case.fn, argnums=case.argnums))(*args)
    assert_trees_close(actual, oracle_grad(case, *args))


@cases
def test_generated_source_is_deterministic_and_compiles(case):
    first = s2s.grad(case.fn, argnums=case.argnums).source
    second = s2s.grad(case.fn, argnums=case.argnums).source
    assert first == second
    assert f"def {case.name}_grad(" in first
    compile(first, f"<{case.name}_grad>", "exec")


def test_generated_source_reads_like_the_design():
    source = s2s.grad(CASES["mlp"].fn).source
    assert "from s2s import runtime as rt" in source
    assert re.search(r"def loss_grad\(params, x, y\):", source)
    assert "rt.namespace(params, x, y)" in source
    # Derivative code is annotated with the user's line it comes from.
    assert re.search(r"# mlp\.py:\d+\s+h1 = np\.tanh\(x @ W1 \+ b1\)", source), source


def test_value_and_grad_mlp():
    case = CASES["mlp"]
    args = case.args()
    value, grads = s2s.value_and_grad(case.fn)(*args)
    expected_value, expected_grads = jax.value_and_grad(jax_twin(case.fn))(*args)
    assert_trees_close(value, expected_value)
    assert_trees_close(grads, expected_grads)


def test_has_aux_mlp():
    module = CASES["mlp"].module
    args = CASES["mlp"].args()
    twin = jax_twin(module.loss_and_accuracy)

    grads, accuracy = s2s.grad(module.loss_and_accuracy, has_aux=True)(*args)
    expected_grads, expected_accuracy = jax.grad(twin, has_aux=True)(*args)
    assert_trees_close(grads, expected_grads)
    np.testing.assert_allclose(np.asarray(accuracy), np.asarray(expected_accuracy))

    (value, accuracy), grads = s2s.value_and_grad(
        module.loss_and_accuracy, has_aux=True
    )(*args)
    (expected_value, _), _ = jax.value_and_grad(twin, has_aux=True)(*args)
    assert_trees_close(value, expected_value)
    np.testing.assert_allclose(np.asarray(accuracy), np.asarray(expected_accuracy))
    assert_trees_close(grads, expected_grads)


def test_argnums_tuple_layernorm_params_and_input():
    case = CASES["layernorm"]
    args = case.args()
    actual = s2s.grad(case.fn, argnums=(0, 1))(*args)
    assert isinstance(actual, tuple) and len(actual) == 2
    assert_trees_close(actual, jax.grad(jax_twin(case.fn), argnums=(0, 1))(*args))


def test_grad_wrt_input_attention():
    case = CASES["attention"]
    args = case.args()
    actual = s2s.grad(case.fn, argnums=1)(*args)
    assert_trees_close(actual, jax.grad(jax_twin(case.fn), argnums=1)(*args))


def test_vjp_mlp():
    case = CASES["mlp"]
    args = case.args()
    out, vjp_fn = s2s.vjp(case.fn, *args)
    expected_out, expected_vjp_fn = jax.vjp(jax_twin(case.fn), *args)
    assert_trees_close(out, expected_out)
    assert_trees_close(vjp_fn(np.float64(1.5)), expected_vjp_fn(np.float64(1.5)))


def test_float32_gradients_stay_float32():
    module = CASES["mlp"].module
    rng = np.random.default_rng(1)
    params = module.init(rng, [5, 7, 6, 3], np.float32)
    x, y = module.data(rng, 4, 5, 3, np.float32)
    actual = s2s.grad(module.loss)(params, x, y)
    expected = jax.grad(jax_twin(module.loss))(params, x, y)
    assert_trees_close(actual, expected, rtol=1e-4, atol=1e-6)
