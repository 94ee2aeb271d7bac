"""The classic autodiff examples (``examples/sum_of_squares.py``, ``stop_gradient.py``,
``tanh_derivatives.py``, ``log1pexp.py``, ``entmax.py``), run as documentation.

Each example's ``main(backend)`` prints the generated source it uses and asserts
its own checks; here it runs on both backends (compiled through XLA, and eager
NumPy) with its output captured, and the key numbers it returns are asserted
again, so a weakened check in an example still fails here.
"""

import importlib.util
import pathlib
import re
import sys

import jax
import numpy as np
import pytest

import s2s

jax.config.update("jax_enable_x64", True)

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
backends = pytest.mark.parametrize("backend", ["xla", "numpy"])


def load(name):
    """Import ``examples/<name>.py`` by path, registered in ``sys.modules`` so s2s can read its source."""
    module_name = f"_s2s_example_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            module_name, EXAMPLES / f"{name}.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def run(name, backend, capsys):
    """``main(backend)`` of the example, its output captured: (results, printed text)."""
    results = load(name).main(backend)
    return results, capsys.readouterr().out


@backends
def test_sum_of_squares(backend, capsys):
    results, out = run("sum_of_squares", backend, capsys)
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, 2.5, 2.0])
    np.testing.assert_allclose(results["grad"], 2 * x)
    np.testing.assert_allclose(results["sse_grad"][0], 2 * (x - y))
    np.testing.assert_allclose(results["sse_grad"][1], -2 * (x - y))
    assert "def sum_of_squares_grad(x):" in out
    assert "def sum_squared_error_grad(x, y):" in out
    # has_aux: the aux output comes back with the value
    assert "return ((_mean, predictions), w_bar)" in out


@backends
def test_stop_gradient(backend, capsys):
    results, out = run("stop_gradient", backend, capsys)
    np.testing.assert_array_equal(results["dx"], [4.0, 5.0, 6.0])
    assert np.all(np.asarray(results["dy"]) == 0)
    # no cotangent flows to y: its gradient is zeros, built directly
    assert not re.search(r"\by_bar\b", out)
    assert "return (x_bar, rt.tree_zeros_like(y))" in out


@backends
def test_tanh_derivatives(backend, capsys):
    results, out = run("tanh_derivatives", backend, capsys)
    t = np.tanh(0.5)
    expected = (1 - t**2, -2 * t * (1 - t**2), (1 - t**2) * (6 * t**2 - 2))
    # float64 here
    np.testing.assert_allclose(results["derivatives"], expected, rtol=1e-12)
    assert "def f_grad_grad_grad(x):" in out


@backends
def test_log1pexp_custom_rule_is_finite_where_the_plain_gradient_is_nan(
    backend, capsys
):
    results, out = run("log1pexp", backend, capsys)
    assert np.asarray(results["custom"]).dtype == np.float32
    assert results["custom"] == 1.0
    assert np.isnan(results["plain"])
    assert "log1pexp_jvp_vjp(" in out  # the gradient calls the user's rule, transposed


@backends
def test_entmax(backend, capsys):
    example = load("entmax")
    results, out = run("entmax", backend, capsys)
    rng = np.random.default_rng(0)
    z, w = rng.standard_normal(6), rng.standard_normal(6)
    for alpha in (1.25, 1.5, 2.0):
        np.testing.assert_allclose(
            results[alpha]["grad"], results[alpha]["fd"], atol=1e-7
        )
        np.testing.assert_allclose(np.sum(results[alpha]["p"]), 1.0, rtol=1e-12)
    assert np.sum(results[2.0]["p"] == 0) >= 1  # sparse
    np.testing.assert_allclose(results[2.0]["p"], example.sparsemax(z), atol=1e-12)
    support = (results[2.0]["p"] > 0).astype(np.float64)
    sparsemax_jacobian = np.diag(support) - np.outer(support, support) / np.sum(support)
    np.testing.assert_allclose(results[2.0]["grad"], sparsemax_jacobian @ w, atol=1e-10)
    softmax = np.exp(z) / np.sum(np.exp(z))
    np.testing.assert_allclose(results[1.001]["p"], softmax, atol=1e-3)
    np.testing.assert_allclose(
        results[1.001]["grad"],
        (np.diag(softmax) - np.outer(softmax, softmax)) @ w,
        atol=1e-3,
    )
    # the gradient runs the user's forward and backward rules; the bisection is one loop in the source
    assert (
        "entmax_fwd(z, alpha)" in out
        and "entmax_bwd(alpha, entmax_residuals, _entmax_bar)" in out
    )
    assert out.count("rt.scan(for_body, ") == 1


def test_entmax_bisection_compiles_to_one_rolled_scan():
    example = load("entmax")
    z, w = np.linspace(-1.0, 1.0, 5), np.ones(5)
    jaxpr = str(jax.make_jaxpr(s2s.grad(example.weighted_entmax))(z, w, 1.5))
    assert jaxpr.count("scan[") == 1 and "length=50" in jaxpr


def test_readme_api_example_runs_as_pasted(tmp_path):
    """The README's first API example, pasted into a file and run, prints the gradient module."""
    import re
    import subprocess

    readme = (EXAMPLES.parent / "README.md").read_text()
    api = readme[readme.index("## API") :]
    code = re.search(r"```python\n(.*?)```", api, re.DOTALL).group(1)
    assert "params = " in code and "x, y = " in code
    (tmp_path / "pasted.py").write_text(code)
    done = subprocess.run(
        [sys.executable, "pasted.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "def loss_grad(params, x, y):" in done.stdout
    shipped = subprocess.run(
        [sys.executable, EXAMPLES / "quickstart.py"], capture_output=True, text=True
    )
    assert shipped.returncode == 0, shipped.stderr
    assert "def loss_grad(params, x, y):" in shipped.stdout
