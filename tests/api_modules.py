"""Test modules for the API tests, written to files (s2s reads source from files), with their jax.numpy twins."""

import importlib.util
import itertools
import pathlib
import sys
import tempfile
import textwrap

import jax
import numpy as np

RNG = np.random.default_rng(10)
FOLDER = pathlib.Path(tempfile.mkdtemp(prefix="s2s_api_trust_"))
_counter = itertools.count()


def write_module(text: str):
    """Write ``text`` to a new module file and import it; with its jax.numpy twin (a dict of its names)."""
    text = textwrap.dedent(text)
    name = f"api_trust_{next(_counter)}"
    path = FOLDER / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    twin = {"__name__": name + "_twin"}
    exec(
        compile(
            text.replace("import numpy as np", "import jax.numpy as np"),
            str(path),
            "exec",
        ),
        twin,
    )
    return module, twin


def assert_trees_close(got, want, rtol=1e-9, atol=1e-12):
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want), (
        got,
        want,
    )
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


X, W = RNG.normal(size=3), RNG.normal(size=3)
