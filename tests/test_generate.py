"""``s2s generate``: checked-in modules declared in ``[tool.s2s]``, their ``--check``, and the pre-commit
hook (``.pre-commit-hooks.yaml``) run by the real ``pre-commit`` in a temporary git repository.

Generation runs as a subprocess (the command imports the project's modules by their own names).
"""

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest
import yaml
from s2s.cli.main import main

import s2s

ROOT = pathlib.Path(__file__).resolve().parents[1]

FILES = {
    "model.py": """import numpy as np
from layers import dense


def loss(params, x, y):
    h = dense(params, x)
    return np.mean((h - y) ** 2)
""",
    "layers.py": """import numpy as np


def dense(params, x):
    W, b = params
    return np.tanh(x @ W + b)
""",
    "unrelated.py": "NOTE = 'not an input of any target'\n",
    "pyproject.toml": """[project]
name = "demo"

[[tool.s2s.targets]]
source = "model.py::loss"
transform = "grad"
wrt = "params"
output = "derivatives/loss_grad.py"

[[tool.s2s.targets]]
source = "model.py::loss"
transform = "vmap(grad)"
in_axes = "None,0,0"
output = "derivatives/loss_per_example.py"

[[tool.s2s.targets]]
source = "model.py::loss"
transform = "lower"
output = "derivatives/loss.py"

[[tool.s2s.targets]]
source = "model.py::loss"
transform = "hessian"
output = "derivatives/loss_hvp.py"
""",
}
OUTPUTS = (
    "derivatives/loss_grad.py",
    "derivatives/loss_per_example.py",
    "derivatives/loss.py",
    "derivatives/loss_hvp.py",
)


def s2s_command(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "s2s", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.fixture
def project(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "sub").mkdir()
    return tmp_path


def _model(project, name):
    """The project's ``model`` module under ``name``, with its own ``layers`` (each test's project differs)."""
    sys.path.insert(0, str(project))
    sys.modules.pop("layers", None)
    try:
        return _load(project / "model.py", name)
    finally:
        sys.path.remove(str(project))
        sys.modules.pop("layers", None)


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generate_check_and_the_same_bytes_from_any_folder(project):
    done = s2s_command("generate", cwd=project)
    assert done.returncode == 0, done.stderr
    first = {o: (project / o).read_bytes() for o in OUTPUTS}
    assert b"Regenerate with: s2s generate\n" in first[OUTPUTS[0]]
    assert b"Input: layers.py sha256:" in first[OUTPUTS[0]]
    # hessian: forward over the gradient, with respect to the first parameter as in JAX
    assert b"def loss_grad_jvp(params, x, y, params_dot):" in first[OUTPUTS[3]]
    assert str(project).encode() not in first[OUTPUTS[0]]  # no absolute path
    assert s2s_command("generate", "--check", cwd=project).returncode == 0

    shutil.rmtree(project / "derivatives")
    done = s2s_command("generate", cwd=project / "sub")
    assert done.returncode == 0, done.stderr
    assert {o: (project / o).read_bytes() for o in OUTPUTS} == first

    # a helper's file changed: both modules are stale; --check writes nothing
    (project / "layers.py").write_text(FILES["layers.py"] + "\n# tuned\n")
    done = s2s_command("generate", "--check", cwd=project / "sub")
    assert done.returncode == 1
    assert "stale: ../derivatives/loss_grad.py" in done.stderr
    assert {o: (project / o).read_bytes() for o in OUTPUTS} == first
    # an unrelated path selects nothing; the changed one regenerates both
    assert s2s_command("generate", "unrelated.py", cwd=project).stderr == ""
    done = s2s_command("generate", "layers.py", "--exit-non-zero-on-write", cwd=project)
    assert done.returncode == 1 and done.stderr.count("regenerated") == 4
    # an edit by hand is stale too
    grad_file = project / OUTPUTS[0]
    grad_file.write_text(grad_file.read_text().replace("W", "W ", 1) + "\n")
    assert s2s_command("generate", "--check", cwd=project).returncode == 1


def test_generated_modules_compute_what_the_api_computes(project):
    assert s2s_command("generate", cwd=project).returncode == 0
    model = _model(project, "generate_demo_model")
    rng = np.random.default_rng(0)
    params = (rng.normal(size=(3, 2)), rng.normal(size=2))
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    grad = _load(project / OUTPUTS[0], "generate_demo_grad").loss_grad
    want = s2s.grad(model.loss, backend="numpy")(params, x, y)
    for g, w in zip(grad(params, x, y), want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    batched = _load(project / OUTPUTS[1], "generate_demo_batched").loss_grad_batched
    per_example = batched(params, x, y)
    for i in range(len(x)):
        one = s2s.grad(model.loss, backend="numpy")(params, x[i], y[i])
        for g, w in zip(per_example, one):
            np.testing.assert_allclose(g[i], w, rtol=1e-12)


def test_check_of_fresh_modules_imports_nothing(project):
    assert s2s_command("generate", cwd=project).returncode == 0
    code = (
        "import sys; from s2s.cli.main import main; rc = main(['generate', '--check']); "
        "print(rc, sorted(m for m in sys.modules if m in ('libcst', 'black', 'jax', 'model', 'layers') "
        "or m.startswith(('s2s.frontend', 's2s.api', 's2s.codegen'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True
    )
    assert done.stdout.strip() == "0 []", done.stdout + done.stderr


@pytest.mark.parametrize(
    "toml, says",
    [
        ('[project]\nname = "x"\n', "no pyproject.toml with a [tool.s2s] table"),
        ("[tool.s2s]\n", "declares no targets"),
        (
            '[[tool.s2s.targets]]\nsource = "m.py::f"\ntransform = "grad"\noutput = "o.py"\nwrt_ = "x"\n',
            "unknown key 'wrt_'",
        ),
        (
            '[[tool.s2s.targets]]\nsource = "m.py::f"\ntransform = "grad(vmap)"\noutput = "o.py"\n',
            "transform 'grad(vmap)'",
        ),
    ],
)
def test_configuration_mistakes_are_one_line(tmp_path, monkeypatch, capfd, toml, says):
    (tmp_path / "pyproject.toml").write_text(toml)
    monkeypatch.chdir(tmp_path)
    assert main(["generate"]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and says in err, err


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_hook_regenerates_and_stops_the_commit(project, tmp_path_factory):
    """The hook as ``.pre-commit-hooks.yaml`` declares it, run by ``pre-commit`` on ``git commit``.

    It runs as a local ``language: system`` hook (the ``s2s`` of this environment): what a project
    gets from ``repo: <s2s>`` except that pre-commit does not install s2s into a virtualenv of its own.
    """
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    local = {**hook, "language": "system"}
    (project / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]})
    )
    env = {
        **os.environ,
        "PATH": f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre_commit_home")),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }

    def git(*args, check=True):
        return subprocess.run(
            ["git", *args],
            cwd=project,
            capture_output=True,
            text=True,
            env=env,
            check=check,
        )

    git("init", "-q")
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=project,
        env=env,
        check=True,
        capture_output=True,
    )
    assert s2s_command("generate", cwd=project).returncode == 0
    git("add", "-A")
    first = git("commit", "-qm", "model and derivatives", check=False)
    assert first.returncode == 0, first.stdout + first.stderr
    fresh = (project / OUTPUTS[0]).read_bytes()

    # editing the model: the hook regenerates, and the commit stops until the new module is added
    (project / "model.py").write_text(FILES["model.py"].replace("** 2", "** 2 * 0.5"))
    git("add", "model.py")
    stopped = git("commit", "-qm", "halve the loss", check=False)
    assert stopped.returncode != 0
    assert "regenerated derivatives/loss_grad.py" in stopped.stdout + stopped.stderr
    assert (project / OUTPUTS[0]).read_bytes() != fresh
    git("add", *OUTPUTS)
    done = git("commit", "-qm", "halve the loss", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git("status", "--porcelain").stdout == ""

    # an unrelated file: the modules are not touched
    regenerated = {o: (project / o).stat().st_mtime_ns for o in OUTPUTS}
    (project / "unrelated.py").write_text("NOTE = 'edited'\n")
    git("add", "unrelated.py")
    done = git("commit", "-qm", "unrelated", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {o: (project / o).stat().st_mtime_ns for o in OUTPUTS} == regenerated


USE = """
import inspect, json, os, sys, warnings
import numpy as np
import s2s
import model

warnings.simplefilter("always")


def read(path):
    with open(path) as f:
        return f.read()


rng = np.random.default_rng(0)
params = (rng.normal(size=(3, 2)), rng.normal(size=2))
x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
with warnings.catch_warnings(record=True) as caught:
    grads = [s2s.grad(model.loss, backend="numpy")(params, x, y) for _ in range(2)]
print(json.dumps({
    "grad": [g.tolist() for g in grads[0]],
    "compiler": sorted(m for m in ("libcst", "black") if m in sys.modules),
    "same_source": s2s.grad(model.loss).source == read("derivatives/loss_grad.py"),
    "same_lowered": s2s.transform(model.loss).source == read("derivatives/loss.py"),
    "warnings": [str(w.message) for w in caught],
    # where the gradient's code runs from: the checked-in file itself (tracebacks show what was reviewed)
    "runs_from": os.path.relpath(inspect.getsourcefile(s2s.grad(model.loss)._entry)),
}))
"""


def _use(project, script=USE, env=None):
    """What ``script`` (run in the project, in a fresh interpreter) prints as JSON."""
    import json

    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=project,
        capture_output=True,
        text=True,
        env=None if env is None else {**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_api_uses_a_fresh_checked_in_module_and_warns_once_when_stale(project):
    assert s2s_command("generate", cwd=project).returncode == 0
    fresh = _use(project)
    assert fresh["compiler"] == [] and fresh["warnings"] == []
    assert fresh["same_source"] and fresh["same_lowered"]  # s2s.grad and @s2s.transform
    assert fresh["runs_from"] == "derivatives/loss_grad.py"

    # a helper changed since: the module is made in memory from the new code, with one warning
    (project / "layers.py").write_text(FILES["layers.py"].replace("np.tanh", "np.sin"))
    stale = _use(project)
    assert stale["compiler"] == ["black", "libcst"] and not stale["same_source"]
    assert len(stale["warnings"]) == 1
    assert "derivatives/loss_grad.py is stale" in stale["warnings"][0]
    assert "run `s2s generate`" in stale["warnings"][0]
    assert (
        stale["runs_from"] != "derivatives/loss_grad.py"
    )  # made in memory: the module cache's copy
    model = _model(project, "generate_demo_model_sin")
    rng = np.random.default_rng(0)
    params = (rng.normal(size=(3, 2)), rng.normal(size=2))
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    want = s2s.grad(model.loss, backend="numpy")(params, x, y)
    for g, w in zip(stale["grad"], want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert not np.allclose(stale["grad"][0], fresh["grad"][0])


EDITED_AFTER_IMPORT = """
import subprocess, sys
import s2s, model

with open("layers.py") as f:
    text = f.read()
with open("layers.py", "w") as f:
    f.write(text.replace("np.tanh", "np.sin"))
subprocess.run([sys.executable, "-m", "s2s", "generate"], check=True, capture_output=True)
try:
    s2s.grad(model.loss).source
except s2s.S2SError as err:
    print("refused:", err)
"""


def test_a_checked_in_module_of_code_edited_after_import_is_not_used(project):
    """The module on disk is fresh for the files, but the process runs their old code: it must not be used."""
    assert s2s_command("generate", cwd=project).returncode == 0
    done = subprocess.run(
        [sys.executable, "-c", EDITED_AFTER_IMPORT],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "refused:" in done.stdout and "is not the code that runs" in done.stdout


def test_input_hashes_ignore_line_endings(tmp_path):
    """A checkout that writes ``\\r\\n`` (git's autocrlf) reads the same inputs as fresh."""
    from s2s import provenance

    (tmp_path / "unix.py").write_bytes(b"def f(x):\n    return x\n")
    (tmp_path / "windows.py").write_bytes(b"def f(x):\r\n    return x\r\n")
    assert provenance.file_hash(tmp_path / "unix.py") == provenance.file_hash(
        tmp_path / "windows.py"
    )


DEFAULTS_PROJECT = {
    "model.py": """import numpy as np


def loss(w, x, scale=2.0):
    return np.sum(np.tanh(x @ w) * scale)
""",
    "pyproject.toml": """[project]
name = "defaults"

[[tool.s2s.targets]]
source = "model.py::loss"
transform = "jvp"
output = "derivatives/loss_jvp.py"
""",
}

USE_JVP = """
import json, sys
import numpy as np
import s2s, model
rng = np.random.default_rng(0)
w, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
out = s2s.jvp(model.loss, (w, x, 2.0), (np.ones((3, 2)), np.zeros((4, 3)), 0.5), backend="numpy")
print(json.dumps({"compiler": sorted(m for m in ("libcst", "black") if m in sys.modules),
                  "out": [float(o) for o in out]}))
"""


def test_a_checked_in_jvp_module_keeps_the_defaults_and_the_api_uses_it(tmp_path):
    for name, text in DEFAULTS_PROJECT.items():
        (tmp_path / name).write_text(text)
    assert s2s_command("generate", cwd=tmp_path).returncode == 0
    text = (tmp_path / "derivatives/loss_jvp.py").read_text()
    assert "def loss_jvp(w, x, scale=2.0, *, w_dot, x_dot, scale_dot):" in text
    used = _use(tmp_path, USE_JVP)
    assert (
        used["compiler"] == []
    )  # the checked-in module ran: its tangents are passed by name
    rng = np.random.default_rng(0)
    w, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
    value = np.sum(np.tanh(x @ w) * 2.0)
    tangent = (
        np.sum((1 - np.tanh(x @ w) ** 2) * (x @ np.ones((3, 2))) * 2.0)
        + 0.5 * value / 2.0
    )
    np.testing.assert_allclose(used["out"], [value, tangent], rtol=1e-10)


SETTINGS_PROJECT = {
    "model.py": """import os
import numpy as np

SCALE = float(os.environ.get("SCALE", "1"))  # read when the module is imported


class Config:
    def __init__(self, width):
        self.width = width


CFG = Config(float(os.environ.get("WIDTH", "1")))
SETTINGS = {"layers": int(os.environ.get("LAYERS", "2")), "act": "tanh"}


def act(h, gain=float(os.environ.get("GAIN", "1"))):
    return gain * np.tanh(h)


def loss(w, x):
    h = x
    for _ in range(SETTINGS["layers"]):
        h = act(h @ w)
    return SCALE * np.sum(h**2) / CFG.width
""",
    "pyproject.toml": """[project]
name = "settings"

[[tool.s2s.targets]]
source = "model.py::loss"
transform = "grad"
output = "derivatives/loss_grad.py"
""",
}

USE_SETTINGS = """
import json, warnings
import numpy as np
import s2s, model
warnings.simplefilter("always")
w, x = np.full((2, 2), 0.3), np.ones((3, 2))
with warnings.catch_warnings(record=True) as caught:
    g = s2s.grad(model.loss, backend="numpy")(w, x)
try:
    from derivatives.loss_grad import loss_grad
    direct = loss_grad(w, x).tolist()
except s2s.S2SError as err:
    direct = str(err)
print(json.dumps({"grad": g.tolist(), "warnings": [str(w.message) for w in caught], "direct": direct}))
"""


@pytest.mark.parametrize(
    "env, changed",
    [
        ({}, None),
        ({"SCALE": "3"}, "`model.SCALE` was 1.0; it is 3.0 now"),
        # a dict is read from the module as it is now (``rt.indexable_constant(model.SETTINGS)``)
        ({"LAYERS": "3"}, None),
        ({"GAIN": "2"}, "the default of `gain` of `act` was 1.0; it is 2.0 now"),
        ({"WIDTH": "4"}, "`model.CFG.width` was 1.0; it is 4.0 now"),
    ],
)
def test_a_checked_in_module_is_not_used_when_a_value_it_baked_in_differs(
    tmp_path, env, changed
):
    """A module constant computed at import (an environment variable, a file read) was baked in when the
    module was generated: where this process's value differs, the API generates the module again (and says
    so), and the file imported directly refuses to run, naming the value; never the old value silently.
    """
    for name, text in SETTINGS_PROJECT.items():
        (tmp_path / name).write_text(text)
    assert s2s_command("generate", cwd=tmp_path).returncode == 0
    written = (tmp_path / "derivatives/loss_grad.py").read_text()
    assert 'SCALE = rt.baked(model, "SCALE", 1.0)' in written
    assert 'rt.baked_default(model.act, "gain", 1.0)' in written
    used = _use(tmp_path, USE_SETTINGS, env)
    scale = float(env.get("SCALE", "1"))
    w, x = np.full((2, 2), 0.3), np.ones((3, 2))
    layers, gain = int(env.get("LAYERS", "2")), float(env.get("GAIN", "1"))
    want = jax_grad_of_settings(w, x, scale, layers, gain) / float(
        env.get("WIDTH", "1")
    )
    np.testing.assert_allclose(used["grad"], want, rtol=1e-10)
    if changed is None:
        assert used["warnings"] == []
        np.testing.assert_allclose(used["direct"], want, rtol=1e-10)
    else:
        assert len(used["warnings"]) == 1 and changed in used["warnings"][0]
        assert "run `s2s generate`" in used["warnings"][0]
        assert "derivatives/loss_grad.py:" in used["direct"]
        assert (
            "this module was generated when " + changed.split(";")[0] in used["direct"]
        )


def jax_grad_of_settings(w, x, scale, layers, gain):
    import jax
    import jax.numpy as jnp

    def loss(w):
        h = jnp.asarray(x)
        for _ in range(layers):
            h = gain * jnp.tanh(h @ w)
        return scale * jnp.sum(h**2)

    with jax.enable_x64(True):
        return np.asarray(jax.grad(loss)(jnp.asarray(w)))
