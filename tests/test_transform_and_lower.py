"""``@s2s.transform`` (run the normal form, compiled) and ``s2s lower`` (print it)."""

import importlib.util
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import s2s

jax.config.update("jax_enable_x64", True)


@s2s.transform
def layer(x, W):
    return jnp.tanh(x @ W)


@s2s.transform(backend="numpy")
def eager_layer(x, W):
    return np.tanh(x @ W)


def loss(W, x):
    return jnp.sum(layer(x, W) ** 2)


def plain_loss(W, x):
    return jnp.sum(jnp.tanh(x @ W) ** 2)


RNG = np.random.default_rng(0)
X, W = RNG.normal(size=(4, 3)), RNG.normal(size=(3, 2))


def test_decorated_function_computes_the_original():
    np.testing.assert_allclose(layer(X, W), np.tanh(X @ W))
    assert isinstance(eager_layer(X, W), np.ndarray)
    np.testing.assert_allclose(eager_layer(X, W), np.tanh(X @ W))
    assert "def layer(x, W):" in layer.source and "xp.tanh(" in layer.source


def test_decorated_function_is_a_jax_function_and_an_s2s_helper():
    np.testing.assert_allclose(jax.jit(layer)(X, W), np.tanh(X @ W))
    np.testing.assert_allclose(
        jax.grad(lambda w: jnp.sum(layer(X, w)))(W),
        jax.grad(lambda w: jnp.sum(jnp.tanh(X @ w)))(W),
    )
    np.testing.assert_allclose(s2s.grad(loss)(W, X), jax.grad(plain_loss)(W, X))
    assert "def layer_vjp(x, W, layer_bar):" in s2s.grad(loss).source


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "s2s.cli.main", *args], capture_output=True, text=True
    )


def test_lower_writes_a_runnable_normal_form(tmp_path):
    out = tmp_path / "mlp_lowered.py"
    run = _cli("lower", "examples/mlp.py::loss", "-o", str(out))
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert text.startswith('"""Normal form of `loss` from examples/mlp.py')
    assert "def forward(params, x):" in text and "def loss(params, x, y):" in text
    spec = importlib.util.spec_from_file_location("mlp_lowered", out)
    lowered = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lowered)
    sys.path.insert(0, "examples")
    try:
        import mlp
    finally:
        sys.path.remove("examples")
    rng = np.random.default_rng(1)
    params = mlp.init(rng, [5, 4, 3, 2], np.float64)
    x, y = mlp.data(rng, 6, 5, 2, np.float64)
    np.testing.assert_allclose(
        lowered.loss(params, x, y), mlp.loss(params, x, y), rtol=1e-12
    )


@pytest.mark.parametrize("command", ["lower", "grad"])
def test_dump_prints_every_pass(command):
    run = _cli(command, "examples/logistic.py::loss", "--dump")
    assert run.returncode == 0, run.stderr
    for stage in ("resolve", "desugar", "anf", "inline", "ssa", "copies"):
        assert f"# ---- after {stage} ----" in run.stderr
