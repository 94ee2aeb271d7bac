"""Generated modules kept across processes (``s2s.module_store``): a later run of a program reads the module an
earlier run made, without the compiler, and only while everything it was made from is as it was.

Each run is a fresh interpreter in a project folder, sharing one module cache folder; the oracle for a run
that reads a kept module is the same run generating from scratch (an empty cache folder).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from s2s import module_store

MODEL = """import os

import numpy as np
from layers import dense

SCALE = float(os.environ.get("SCALE", "1.0"))
POWERS = [int(p) for p in os.environ.get("POWERS", "2").split(",")]


def loss(params, x, y, eps=SCALE):
    h = dense(params, x)
    total = 0.0
    for p in POWERS:
        total = total + np.mean(np.abs(h - y) ** p)
    return SCALE * total + eps * np.sum(params[0] ** 2)
"""

LAYERS = """import numpy as np


def dense(params, x):
    W, b = params
    return np.tanh(x @ W + b)
"""

RUN = """
import json, sys
import numpy as np
import s2s
import model

rng = np.random.default_rng(0)
params = (rng.normal(size=(3, 2)), rng.normal(size=2))
x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
backend = sys.argv[1]
grad = s2s.grad(getattr(model, sys.argv[2]), backend=backend)
g = grad(params, x, y)
print(json.dumps({
    "grad": [np.asarray(a).tolist() for a in g],
    "compiler": sorted(m for m in ("libcst", "black") if m in sys.modules),
    "source": grad.source,
}))
"""


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "model.py").write_text(MODEL)
    (folder / "layers.py").write_text(LAYERS)
    return folder


def run(project, cache, backend="numpy", function="loss", **env):
    """What one run of the program in a fresh interpreter computes, and whether it imported the compiler."""
    done = subprocess.run(
        [sys.executable, "-c", RUN, backend, function],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "S2S_CACHE_DIR": str(cache), **env},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def stored(cache):
    return sorted(p.name for p in cache.glob("s2s_stored_*.json"))


def assert_same_gradient(a, b):
    for x, y in zip(a["grad"], b["grad"]):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_a_later_run_reads_the_module_an_earlier_run_made(project, tmp_path):
    cache = tmp_path / "cache"
    first = run(project, cache, backend="xla")
    assert first["compiler"] == ["black", "libcst"]
    assert len(stored(cache)) == 1
    later = run(project, cache, backend="xla")
    assert later["compiler"] == []  # neither libcst nor black
    assert later["source"] == first["source"]
    assert_same_gradient(later, first)
    # the NumPy backend runs the same module
    assert run(project, cache)["compiler"] == []


CHANGES = {
    "a module constant computed at import": ({"SCALE": "3.0"}, None),
    "module-level configuration data": ({"POWERS": "2,4"}, None),
    "a helper's file": ({}, ("layers.py", "np.tanh", "np.sin")),
    "the function's own file": ({}, ("model.py", "np.abs(h - y)", "np.abs(h + y)")),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_kept_module_is_not_used_once_what_it_was_made_from_changed(
    project, tmp_path, change
):
    env, edit = CHANGES[change]
    cache = tmp_path / "cache"
    before = run(project, cache)
    if edit is not None:
        name, old, new = edit
        text = (project / name).read_text()
        assert old in text
        (project / name).write_text(text.replace(old, new))
    after = run(project, cache, **env)
    assert after["compiler"] == ["black", "libcst"]  # made again, from what is here now
    assert not np.allclose(after["grad"][0], before["grad"][0])
    assert_same_gradient(after, run(project, tmp_path / "empty", **env))
    # and what it made is kept in turn
    assert run(project, cache, **env)["compiler"] == []


def test_a_program_that_reads_a_users_object_is_not_kept(project, tmp_path):
    (project / "model.py").write_text(MODEL + """

class Settings:
    def __init__(self):
        self.scale = float(os.environ.get("SCALE", "1.0"))


SETTINGS = Settings()


def loss_with_settings(params, x, y):
    return SETTINGS.scale * np.sum(dense(params, x) * y)
""")
    cache = tmp_path / "cache"
    first = run(project, cache, function="loss_with_settings")
    assert stored(cache) == []
    later = run(project, cache, function="loss_with_settings", SCALE="2.0")
    assert later["compiler"] == ["black", "libcst"]
    np.testing.assert_allclose(
        np.asarray(later["grad"][0]), 2.0 * np.asarray(first["grad"][0]), rtol=1e-12
    )


def test_an_unreadable_kept_module_is_made_again(project, tmp_path):
    cache = tmp_path / "cache"
    first = run(project, cache)
    (name,) = stored(cache)
    (cache / name).write_text('{"text": "def loss_grad(')
    again = run(project, cache)
    assert again["compiler"] == ["black", "libcst"]
    assert_same_gradient(again, first)


def test_values_are_described_by_what_another_process_can_check():
    describe = module_store.describe
    assert describe(2.0) != describe(2)  # a float is not an int
    assert describe([1, (2, "a")]) == describe([1, (2, "a")])
    assert describe(np.exp) == ["ufunc", "exp"]
    assert describe(np)[0] == "module"
    assert describe(np.arange(3.0)) != describe(np.arange(3.0) + 1)
    for value in (object(), lambda: x, np.arange(10**6, dtype=np.float64)):
        with pytest.raises(module_store.Unportable):
            describe(value)
    x = 1  # (the lambda's closure cell)


SAME_TEXT = """
import json, sys
from s2s import api, codegen, module_store
from programs import numpy_style as P

kept = []
SPREAD = P.PROGRAMS[:: max(1, len(P.PROGRAMS) // 30)]  # (about 30 programs, spread over the file)
for name in SPREAD:
    fn = getattr(P, name)
    request = (fn, ("grad",), 0, False)
    found = module_store.find(*request)
    if sys.argv[1] == "first":
        assert found is None, name
        try:
            api._generated(*request)
        except Exception:
            continue  # (a program s2s refuses by design keeps nothing)
    elif found is not None:
        assert found.text == codegen.generate(fn, ("grad",)).text, name
        assert found.fresh(), name
        kept.append(name)
print(json.dumps({"kept": kept, "programs": len(SPREAD)}))
"""


def test_a_kept_module_is_the_module_generating_it_again_would_make(tmp_path):
    """Over about 30 NumPy-style test programs spread over the file: what a later process reads back is, byte for byte,
    what it would generate; most programs are kept."""
    tests = os.path.dirname(os.path.abspath(__file__))

    def run(which):
        done = subprocess.run(
            [sys.executable, "-c", SAME_TEXT, which],
            cwd=tests,
            capture_output=True,
            text=True,
            env={**os.environ, "S2S_CACHE_DIR": str(tmp_path)},
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    run("first")
    later = run("later")
    assert len(later["kept"]) >= 0.8 * later["programs"], later


def test_a_library_wrapper_named_after_a_function_of_the_file_is_not_an_edit(
    tmp_path, monkeypatch
):
    """``@jnp.vectorize`` leaves, under the function's name, JAX's wrapper (``functools.wraps``: its module
    and qualified name are yours, its code JAX's): the file still holds the code that runs.
    """
    import importlib

    from s2s import checked_in

    path = tmp_path / "wrapped_model.py"
    path.write_text(
        "import jax.numpy as jnp\n\n\n@jnp.vectorize\ndef g(x):\n    return x * 2.0\n\n\n"
        "def f(x):\n    return jnp.sum(g(x))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("wrapped_model")
    assert checked_in.runs_the_file(str(path))
    path.write_text(path.read_text().replace("x * 2.0", "x * 3.0"))
    assert not checked_in.runs_the_file(str(path))
