"""The ``s2s`` command line, run as a subprocess: generated files import and compute ``jax.grad``'s gradient.

Errors must be one readable message (``file:line:col: error: ...`` where a line
is known), a non-zero exit code and no Python traceback.
"""

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_twins = _load("_s2s_twins", ROOT / "benchmarks" / "_twins.py")


def s2s(*args, cwd=ROOT, stdin=None):
    """Run ``python -m s2s.cli.main ARGS`` (with ``stdin`` as its input) and return the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "s2s.cli.main", *map(str, args)],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_clean_error(result, *needles):
    """A failed run: non-zero exit, no traceback, and stderr naming each of ``needles``."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def assert_close(actual, expected):
    assert jax.tree_util.tree_structure(actual) == jax.tree_util.tree_structure(
        expected
    )
    for a, e in zip(
        jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected)
    ):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-7, atol=1e-10)


def mlp_inputs():
    mlp = _twins.load_example("examples/mlp.py")
    rng = np.random.default_rng(0)
    return mlp, (
        mlp.init(rng, [5, 7, 6, 3], np.float64),
        *mlp.data(rng, 4, 5, 3, np.float64),
    )


def test_grad_prints_a_module():
    result = s2s("grad", "examples/mlp.py::loss", "--wrt", "params")
    assert result.returncode == 0, result.stderr
    assert "def loss_grad(params, x, y):" in result.stdout
    compile(result.stdout, "loss_grad.py", "exec")


def test_output_is_deterministic():
    first = s2s("grad", "examples/mlp.py::loss", "--wrt", "params")
    second = s2s("grad", "examples/mlp.py::loss", "--wrt", "params")
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout


def test_grad_written_to_file_imports_and_matches_jax(tmp_path):
    out = tmp_path / "mlp_grad.py"
    result = s2s("grad", "examples/mlp.py::loss", "--wrt", "params", "-o", out)
    assert result.returncode == 0, result.stderr
    generated = _load("mlp_grad", out)
    mlp, args = mlp_inputs()
    assert_close(generated.loss_grad(*args), jax.grad(_twins.jax_twin(mlp.loss))(*args))


def test_wrt_several_parameters_returns_a_tuple(tmp_path):
    out = tmp_path / "logistic_grad.py"
    result = s2s("grad", "examples/logistic.py::loss", "--wrt", "w,b", "-o", out)
    assert result.returncode == 0, result.stderr
    generated = _load("logistic_grad", out)
    logistic = _twins.load_example("examples/logistic.py")
    rng = np.random.default_rng(0)
    args = (
        rng.standard_normal(3),
        0.25,
        rng.standard_normal((6, 3)),
        (rng.random(6) > 0.5) * 1.0,
    )
    actual = generated.loss_grad(*args)
    assert isinstance(actual, tuple) and len(actual) == 2
    assert_close(
        actual, jax.grad(_twins.jax_twin(logistic.loss), argnums=(0, 1))(*args)
    )


def test_wrt_defaults_to_the_first_parameter(tmp_path):
    out = tmp_path / "f_grad.py"
    result = s2s("grad", "examples/polynomial.py::f", "-o", out)
    assert result.returncode == 0, result.stderr
    x = np.linspace(-2.0, 2.0, 7)
    np.testing.assert_allclose(
        _load("f_grad", out).f_grad(x), 1 + 2 * x + 3 * x**2, rtol=1e-12
    )


def test_jvp_writes_forward_mode(tmp_path):
    out = tmp_path / "mlp_jvp.py"
    result = s2s("jvp", "examples/mlp.py::loss", "--wrt", "params", "-o", out)
    assert result.returncode == 0, result.stderr
    mlp, args = mlp_inputs()
    tangent = jax.tree_util.tree_map(lambda a: np.cos(a), args[0])
    value, tangent_out = _load("mlp_jvp", out).loss_jvp(*args, tangent)
    want = jax.jvp(
        lambda p: _twins.jax_twin(mlp.loss)(p, *args[1:]), (args[0],), (tangent,)
    )
    assert_close((value, tangent_out), want)


DEFAULTS = """import numpy as np


def f(x, w, scale=2.0, steps=3):
    h = x
    for _ in range(steps):
        h = np.tanh(h * w) * scale
    return np.sum(h**2)
"""


def test_jvp_and_hessian_modules_keep_the_parameter_defaults(tmp_path):
    # tangents come after a `*`, so the primals keep the signature the user wrote
    (tmp_path / "model.py").write_text(DEFAULTS)
    for command in (
        ["jvp", "model.py::f", "--wrt", "x,w"],
        ["hessian", "model.py::f", "--wrt", "w"],
    ):
        result = s2s(*command, "-o", f"{command[0]}.py", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    jvp, hvp = _load("f_jvp", tmp_path / "jvp.py"), _load(
        "f_hvp", tmp_path / "hessian.py"
    )
    assert (
        "def f_jvp(x, w, scale=2.0, steps=3, *, x_dot, w_dot):"
        in (tmp_path / "jvp.py").read_text()
    )
    twin = _twins.jax_twin(_twins.load_example(str(tmp_path / "model.py")).f)
    rng = np.random.default_rng(0)
    x, w, v = rng.standard_normal((3, 4))
    assert_close(jvp.f_jvp(x, w, x_dot=v, w_dot=v), jax.jvp(twin, (x, w), (v, v)))
    _, hv = hvp.f_grad_jvp(x, w, scale=1.5, w_dot=v)
    assert_close(hv, jax.hessian(twin, 1)(x, w, 1.5) @ v)


def test_grad_order_three_transforms_generated_code(tmp_path):
    out = tmp_path / "tanh3.py"
    result = s2s("grad", "examples/tanh_derivatives.py::f", "--order", "3", "-o", out)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "def f_grad_grad_grad(x):" in text
    assert "from its code for `f` from examples/tanh_derivatives.py." in text
    t = np.tanh(0.5)
    np.testing.assert_allclose(
        _load("tanh3", out).f_grad_grad_grad(0.5),
        -2 * (1 - t**2) * (1 - 3 * t**2),
        rtol=1e-12,
    )


def test_grad_order_above_one_needs_one_parameter():
    assert_clean_error(
        s2s("grad", "examples/logistic.py::loss", "--wrt", "w,b", "--order", "2"),
        "one --wrt parameter",
    )


def test_hessian_writes_hessian_vector_products(tmp_path):
    out = tmp_path / "poly_hvp.py"
    result = s2s("hessian", "examples/polynomial.py::f", "-o", out)
    assert result.returncode == 0, result.stderr
    x, v = np.linspace(-2.0, 2.0, 5), np.linspace(1.0, 0.5, 5)
    gradient, hvp = _load("poly_hvp", out).f_grad_jvp(x, v)
    np.testing.assert_allclose(gradient, 1 + 2 * x + 3 * x**2, rtol=1e-12)
    np.testing.assert_allclose(hvp, (2 + 6 * x) * v, rtol=1e-12)


def test_helpers_in_a_sibling_module(tmp_path):
    out = tmp_path / "model_grad.py"
    result = s2s("grad", "examples/helpers_across_modules/model.py::loss", "-o", out)
    assert result.returncode == 0, result.stderr
    model = _twins.load_example("examples/helpers_across_modules/model.py")
    rng = np.random.default_rng(0)
    args = (
        model.init(rng, 4, 7, 2, np.float64),
        rng.standard_normal((3, 4)),
        rng.standard_normal((3, 2)),
    )
    assert_close(
        _load("model_grad", out).loss_grad(*args),
        jax.grad(_twins.jax_twin(model.loss))(*args),
    )


def test_console_script_help():
    script = pathlib.Path(sys.executable).with_name("s2s")
    script = str(script) if script.exists() else shutil.which("s2s")
    assert script, "the `s2s` console script is not installed next to this Python"
    result = subprocess.run(
        [script, "--help"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "grad" in result.stdout


def test_module_help():
    result = s2s("--help")
    assert result.returncode == 0, result.stderr
    assert "grad" in result.stdout


def test_missing_file():
    assert_clean_error(
        s2s("grad", "examples/no_such_model.py::loss"), "no_such_model.py"
    )


def test_unknown_function():
    assert_clean_error(
        s2s("grad", "examples/mlp.py::no_such_function"), "no_such_function"
    )


def test_unknown_wrt_parameter():
    assert_clean_error(
        s2s("grad", "examples/mlp.py::loss", "--wrt", "weights"), "weights"
    )


def test_unsupported_syntax_points_at_the_users_line(tmp_path):
    source = "import numpy as np\n\n\ndef loss(x):\n    try:\n        return np.sum(x)\n    except ValueError:\n        return 0.0\n"
    (tmp_path / "bad.py").write_text(source)
    result = s2s("grad", "bad.py::loss", cwd=tmp_path)
    assert_clean_error(result, "bad.py")
    match = re.search(
        r"^(\S*bad\.py):(\d+):(\d+): error: .+$", result.stderr, re.MULTILINE
    )
    assert match, result.stderr
    assert int(match.group(2)) == 5, result.stderr  # the `try` line
    lines = result.stderr.splitlines()
    assert any(
        line.strip() == "try:" for line in lines
    ), result.stderr  # the source line ...
    assert any(
        re.fullmatch(r"\s*\^+\s*", line) for line in lines
    ), result.stderr  # ... and a caret under it


def test_readme_sample_is_real_output():
    """The generated code shown in README.md is what the CLI prints today.

    Regenerate it with ``S2S_UPDATE_GOLDEN=1`` (the switch the golden tests use).
    """
    path = ROOT / "README.md"
    readme = path.read_text()
    pattern = (
        r"(<!-- sample: generated by s2s (grad [^>]*?) -->\n```python\n)(.*?)(```\n)"
    )
    match = re.search(pattern, readme, re.DOTALL)
    assert match, "README.md has no generated sample"
    result = s2s(*match.group(2).split())
    assert result.returncode == 0, result.stderr
    actual = result.stdout.rstrip("\n") + "\n"
    if os.environ.get("S2S_UPDATE_GOLDEN"):
        path.write_text(readme[: match.start(3)] + actual + readme[match.end(3) :])
        return
    assert (
        match.group(3) == actual
    ), "README.md's sample is stale: run with S2S_UPDATE_GOLDEN=1"


# --- the user's module runs at import: its output, exits, errors and input ----------------------

NOISY = """import os
import sys

import numpy as np

print("printed at import")
os.system("echo echoed by a child process")


def f(x):
    return np.sum(np.tanh(x))


if __name__ == "__main__":
    print("the main block ran")
    sys.exit(3)
"""


def test_prints_at_import_go_to_stderr_and_stdout_is_the_module(tmp_path):
    source = tmp_path / "noisy.py"
    source.write_text(NOISY)
    noisy = s2s("grad", "noisy.py::f", cwd=tmp_path)
    assert noisy.returncode == 0, noisy.stderr
    compile(noisy.stdout, "f_grad.py", "exec")
    assert (
        "printed at import" in noisy.stderr
        and "echoed by a child process" in noisy.stderr
    )
    # imported under its own name, not __main__
    assert "the main block ran" not in noisy.stdout + noisy.stderr
    # the source is never touched
    assert source.read_text() == NOISY and not (tmp_path / "__pycache__").exists()
    source.write_text(
        NOISY.replace(
            'print("printed at import")', '# print("printed at import")'
        ).replace("os.system(", "# os.system(")
    )
    quiet = s2s("grad", "noisy.py::f", cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert noisy.stdout == quiet.stdout


def one_error_line(result, name: str, line: int):
    """A clean failure whose stderr has exactly one ``error:`` line, at ``name:line``; returns it."""
    assert_clean_error(result, name)
    assert result.stdout == ""
    (message,) = [n for n in result.stderr.splitlines() if "error:" in n]
    assert re.match(rf"{re.escape(name)}:{line}:\d+: error: ", message), result.stderr
    return message


def test_sys_exit_at_import_is_an_error(tmp_path):
    for exit_call in ("sys.exit(0)", "exit()", "raise SystemExit"):
        (tmp_path / "exits.py").write_text(
            f"import sys\n\n\ndef f(x):\n    return x * x\n\n\n{exit_call}\n"
        )
        message = one_error_line(
            s2s("grad", "exits.py::f", cwd=tmp_path), "exits.py", 8
        )
        assert "exited" in message and "SystemExit" in message


def test_exception_at_import_names_the_file_and_line(tmp_path):
    (tmp_path / "broken.py").write_text(
        "import numpy as np\n\nSCALE = 1 / 0\n\n\ndef f(x):\n    return np.sum(x)\n"
    )
    result = s2s("grad", "broken.py::f", cwd=tmp_path)
    message = one_error_line(result, "broken.py", 3)
    assert "ZeroDivisionError: division by zero" in message
    assert "SCALE = 1 / 0" in result.stderr


def test_input_at_import_does_not_wait(tmp_path):
    (tmp_path / "asks.py").write_text(
        'n = int(input("n? "))\n\n\ndef f(x):\n    return x * n\n'
    )
    # s2s's own input is not the module's
    result = s2s("grad", "asks.py::f", cwd=tmp_path, stdin="5\n")
    one_error_line(result, "asks.py", 1)
    assert "nothing on stdin" in result.stderr


def test_a_file_named_like_a_module_s2s_imports_works(tmp_path):
    """``models/inspect.py`` is imported under another name: the standard library's ``inspect`` stays."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "inspect.py").write_text("def f(x):\n    return x * x\n")
    result = s2s("grad", "models/inspect.py::f", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "def f_grad(x):" in result.stdout
    assert "Gradient of `f` from models/inspect.py" in result.stdout


def test_vmap_writes_a_batched_module(tmp_path):
    out = tmp_path / "mlp_batched.py"
    result = s2s("vmap", "examples/mlp.py::loss", "--in-axes", "None,0,0", "-o", out)
    assert result.returncode == 0, result.stderr
    assert (
        "Regenerate with: s2s vmap examples/mlp.py::loss --in-axes None,0,0"
        in out.read_text()
    )
    generated = _load("mlp_batched", out)
    mlp, (params, x, y) = mlp_inputs()
    xs, ys = np.stack([x, x[::-1]]), np.stack([y, y * 2.0])
    want = np.array([mlp.loss(params, xs[i], ys[i]) for i in range(2)])
    np.testing.assert_allclose(generated.loss_batched(params, xs, ys), want, rtol=1e-12)


def test_vmap_bad_axes_are_usage_errors():
    assert_clean_error(
        s2s("vmap", "examples/mlp.py::loss", "--in-axes", "0,0"),
        "--in-axes names 2 axes",
    )
    assert_clean_error(
        s2s("vmap", "examples/mlp.py::loss", "--in-axes", "zero"),
        "expected ints or None",
    )


def test_vmap_axis_name_turns_collectives_into_reductions_over_examples(tmp_path):
    out = tmp_path / "normalize_batched.py"
    result = s2s(
        "vmap",
        "tests/programs/collectives.py::normalize",
        "--in-axes",
        "0",
        "--axis-name",
        "batch",
        "-o",
        out,
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "--axis-name batch" in text and "rt.psum_examples(x)" in text
    xs = np.arange(1.0, 7.0).reshape(3, 2)
    got = _load("normalize_batched", out).normalize_batched(xs)
    np.testing.assert_allclose(got, xs / xs.sum(axis=0), rtol=1e-12)


MODEL_WITH_ARRAYS = """\
import numpy as np

TRANSITION = np.array([[1.0, 0.5], [0.0, 1.0]])
KERNEL = np.array([0.25, 0.5, 0.25])


def loss(state, ys):
    total = 0.0
    for t in range(ys.shape[0]):
        state = TRANSITION @ state
        smooth = 0.0
        for k in range(3):
            smooth = smooth + KERNEL[k] * np.tanh(state[0] + k)
        total = total + (smooth - ys[t]) ** 2
    return total
"""


def test_a_generated_file_reads_your_modules_arrays_from_it(tmp_path):
    """Module-level arrays (``KERNEL[k]`` indexed by a compiled loop's counter too) are read from the source
    module by name: ``import arrays_model`` and ``KERNEL = rt.indexable_constant(arrays_model.KERNEL)``
    (was an error: a generated file could not carry them)."""
    (tmp_path / "arrays_model.py").write_text(MODEL_WITH_ARRAYS)
    result = s2s(
        "grad", "arrays_model.py::loss", "-o", "arrays_model_grad.py", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "arrays_model_grad.py").read_text()
    assert "import arrays_model\n" in text
    assert "KERNEL = rt.indexable_constant(arrays_model.KERNEL)" in text
    check = (
        "import numpy as np, jax; jax.config.update('jax_enable_x64', True)\n"
        "import arrays_model, arrays_model_grad\n"
        "s, ys = np.array([0.3, -0.2]), np.array([0.1, 0.4, -0.3, 0.2])\n"
        "g = np.asarray(arrays_model_grad.loss_grad(s, ys))\n"
        "e = 1e-6\n"
        "fd = [(arrays_model.loss(s + e * d, ys) - arrays_model.loss(s - e * d, ys)) / (2 * e)"
        " for d in np.eye(2)]\n"
        "np.testing.assert_allclose(g, fd, rtol=1e-6)\n"
        "print('ok')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", check],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
