"""Where the ``s2s`` command writes, as users of black and ruff expect: ``-o`` files, folders and ``-``,
several targets in one call, ``--version``, ``python -m s2s``, help with the exit codes.

The command runs in-process (``s2s.cli.main.main``) except where the interpreter's own entry matters.
"""

import itertools
import os
import subprocess
import sys

import pytest
from s2s.cli.main import main

import s2s

MODEL = """import numpy as np


def loss(w, x):
    return np.sum(np.tanh(x * w) ** 2)


def score(w, x):
    return np.mean(np.sin(w) * x)
"""

_count = itertools.count()


@pytest.fixture
def model(tmp_path, monkeypatch):
    """A model file with a name no other test imports (the command imports it under its own name)."""
    name = f"cli_model_{next(_count)}"
    (tmp_path / f"{name}.py").write_text(MODEL)
    monkeypatch.chdir(tmp_path)
    yield name
    sys.modules.pop(name, None)


def run(capfd, *argv):
    code = main(list(argv))
    out, err = capfd.readouterr()
    return code, out, err


def test_one_file_with_missing_folders(model, capfd, tmp_path):
    code, out, err = run(capfd, "grad", f"{model}.py::loss", "-o", "a/b/loss_grad.py")
    assert (code, out) == (0, ""), err
    text = (tmp_path / "a/b/loss_grad.py").read_text()
    assert "def loss_grad(" in text
    # byte-identical when written again
    run(capfd, "grad", f"{model}.py::loss", "-o", "a/b/loss_grad.py")
    assert (tmp_path / "a/b/loss_grad.py").read_text() == text


def test_several_targets_into_a_folder(model, capfd, tmp_path):
    code, _, err = run(
        capfd, "grad", f"{model}.py::loss", f"{model}.py::score", "-o", "derivs/"
    )
    assert code == 0, err
    assert sorted(os.listdir(tmp_path / "derivs")) == ["loss_grad.py", "score_grad.py"]
    header = (tmp_path / "derivs/score_grad.py").read_text().splitlines()[2]
    assert header == f"Regenerate with: s2s grad {model}.py::score -o derivs/"
    # an existing folder needs no slash; vmap names its files after the batched function
    code, _, err = run(capfd, "vmap", f"{model}.py::loss", "-o", "derivs")
    assert code == 0, err
    assert (tmp_path / "derivs/loss_batched.py").exists()


def test_stdout_is_the_default_and_dash(model, capfd):
    for extra in ((), ("-o", "-")):
        code, out, _ = run(
            capfd, "jvp", f"{model}.py::loss", f"{model}.py::score", *extra
        )
        assert code == 0
        assert "def loss_jvp(" in out and "def score_jvp(" in out
        compile(out, "<stdout>", "exec")


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            ["{m}.py::loss", "{m}.py::score", "-o", "one.py"],
            "-o one.py is one file, for 2 targets",
        ),
        (["{m}.py::loss", "-o", "{m}.py"], "refusing to overwrite it"),
        (["{m}.py::loss", "-o", "{m}.py/inside.py"], "cannot write {m}.py/inside.py"),
        (
            ["{m}.py::nope"],
            "no function named `nope` (functions defined there: loss, score)",
        ),
    ],
)
def test_output_and_target_mistakes_are_one_line(model, capfd, tmp_path, argv, says):
    before = sorted(os.listdir(tmp_path))
    code, out, err = run(capfd, "grad", *[a.format(m=model) for a in argv])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and says.format(m=model) in err, err
    assert (
        sorted(os.listdir(tmp_path)) == before
    )  # nothing written, the source untouched


def test_version_and_python_dash_m(capfd):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capfd.readouterr().out == f"s2s {s2s.__version__}\n"
    done = subprocess.run(
        [sys.executable, "-m", "s2s", "grad", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    for needle in ("exit status:", "-o", "FOLDER/", "examples:"):
        assert needle in done.stdout


DECORATED = """import jax
import numpy as np


@jax.jit
def jitted(x):
    return np.sum(np.tanh(x) ** 2)


class Model:
    pass
"""


def test_any_file_name_and_decorated_targets(tmp_path, monkeypatch, capfd):
    """A file named like a standard module, one without ``.py``, and a ``@jax.jit`` function (read through,
    as the API reads it)."""
    monkeypatch.chdir(tmp_path)
    for name in ("inspect.py", f"model_{next(_count)}"):
        (tmp_path / name).write_text(DECORATED)
        code, out, err = run(capfd, "grad", f"{name}::jitted")
        assert code == 0, err
        assert "def jitted_grad(x):" in out
        stem = name.split(".")[0]
        sys.modules.pop(stem if stem != "inspect" else "s2s_cli_inspect", None)
    code, out, err = run(capfd, "grad", "inspect.py::Model")
    assert code == 2 and "`Model` is a type, not a function" in err
    sys.modules.pop("s2s_cli_inspect", None)
    # ``python -m s2s`` in that folder: the user's inspect.py does not replace the standard library's
    done = subprocess.run(
        [sys.executable, "-m", "s2s", "grad", "inspect.py::jitted"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "def jitted_grad(x):" in done.stdout
