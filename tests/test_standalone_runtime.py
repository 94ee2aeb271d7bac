"""Generated modules are standalone: running one imports the runtime, never the compiler.

A module written by ``s2s grad`` is run in a fresh interpreter on NumPy
arrays; afterwards no compiler module (``s2s.api``, ``s2s.frontend``, ...),
no libcst, no black and no JAX may have been imported, and the gradient must
be the one the API computes.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np

import s2s

ROOT = pathlib.Path(__file__).resolve().parents[1]

CHECK = """
import importlib.util, json, sys
import numpy as np
spec = importlib.util.spec_from_file_location("loss_grad", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
w = np.linspace(-1.0, 1.0, 3)
x = np.linspace(0.5, 2.0, 6).reshape(2, 3)
g = module.loss_grad(w, x)
compiler = sorted(
    m for m in sys.modules
    if m in ("libcst", "black", "jax") or (m.startswith("s2s.") and not m.startswith("s2s.runtime"))
)
print(json.dumps({"grad": g.tolist(), "imported": compiler}))
"""

MODEL = """import numpy as np


def loss(w, x):
    h = np.tanh(x @ w)
    if np.sum(h) > 0:
        h = h * 2.0
    return np.mean(h**2)
"""


def test_generated_module_runs_without_the_compiler(tmp_path):
    (tmp_path / "standalone_model.py").write_text(MODEL)
    out = tmp_path / "loss_grad.py"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    subprocess.run(
        [sys.executable, "-m", "s2s", "grad", "standalone_model.py::loss", "-o", out],
        cwd=tmp_path,
        check=True,
        env=env,
        capture_output=True,
    )
    run = subprocess.run(
        [sys.executable, "-c", CHECK, out],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    found = json.loads(run.stdout)
    assert found["imported"] == [], found["imported"]

    sys.path.insert(0, str(tmp_path))
    try:
        import standalone_model
    finally:
        sys.path.remove(str(tmp_path))
    w = np.linspace(-1.0, 1.0, 3)
    x = np.linspace(0.5, 2.0, 6).reshape(2, 3)
    want = s2s.grad(standalone_model.loss, backend="numpy")(w, x)
    np.testing.assert_allclose(found["grad"], want, rtol=1e-12)


def test_importing_the_runtime_loads_nothing_of_the_compiler():
    code = (
        "import sys; from s2s import runtime; import s2s; v = s2s.__version__; "
        "print(sorted(m for m in sys.modules if m in ('libcst', 'black', 'jax') "
        "or (m.startswith('s2s.') and not m.startswith('s2s.runtime'))))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == "[]", run.stdout


def test_public_names_load_on_first_use():
    assert set(s2s.__all__) <= set(dir(s2s))
    for name in s2s.__all__:
        assert getattr(s2s, name) is not None, name
    try:
        s2s.no_such_name  # noqa: B018
    except AttributeError as err:
        assert "no_such_name" in str(err)
    else:
        raise AssertionError("s2s.no_such_name did not raise AttributeError")


def test_every_runtime_name_is_what_its_submodule_defines():
    """After every submodule is imported (as the compiler imports some), ``rt.<name>`` is still the function:
    a submodule of the same name (``runtime.foreign``) must not stand in for it."""
    import importlib

    from s2s import runtime

    for module in {*runtime._DEFINED_IN.values(), *runtime.SUBMODULES}:
        importlib.import_module(f"s2s.runtime.{module}")
    for name, module in runtime._DEFINED_IN.items():
        defined = getattr(importlib.import_module(f"s2s.runtime.{module}"), name)
        assert getattr(runtime, name) is defined, name
    for module in runtime.SUBMODULES:
        assert getattr(runtime, module).__name__ == f"s2s.runtime.{module}"
