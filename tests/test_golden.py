"""Golden text per pass: each input under tests/golden/ is lowered stage by stage and its gradient
module generated; the text must match ``<name>.expected`` (regenerate with ``S2S_UPDATE_GOLDEN=1``).

Every stage's output is also executed: it must compute what the user's function computes.
"""

import importlib.util
import os
import pathlib

import numpy as np
import pytest

import s2s
from s2s import ir, runtime
from s2s.frontend.source import load
from s2s.pipeline import lower

GOLDEN = pathlib.Path(__file__).parent / "golden"
INPUTS = sorted(p for p in GOLDEN.glob("*.py"))


def _import(path):
    spec = importlib.util.spec_from_file_location(f"golden_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stages(fn):
    stages = []
    lower(load(fn), on_stage=lambda stage, f: stages.append((stage, ir.to_source(f))))
    return stages


def _render(module):
    parts = [f"# ---- after {stage} ----\n{text}" for stage, text in _stages(module.f)]
    parts.append("# ---- grad module ----\n" + s2s.generate(module.f, ("grad",)).text)
    return "\n".join(parts)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_golden_text(path):
    module = _import(path)
    expected = path.with_suffix(".expected")
    text = _render(module)
    if os.environ.get("S2S_UPDATE_GOLDEN"):
        expected.write_text(text)
    assert (
        expected.exists()
    ), f"no golden file {expected.name}: run with S2S_UPDATE_GOLDEN=1"
    assert text == expected.read_text()


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_every_stage_computes_the_same_value(path):
    module = _import(path)
    args = module.example(np.random.default_rng(0))
    want = module.f(*args)
    program = s2s.generate(module.f, ("primal",)).program
    scope = {"rt": runtime, **program.constants}
    for name, helper in program.helpers.items():  # helpers, already lowered
        exec(
            ir.to_source(helper).replace("):\n", "):\n    xp = rt.namespace()\n", 1),
            scope,
        )
    for stage, text in _stages(module.f):
        namespace = dict(scope)
        body = text.replace("):\n", "):\n    xp = rt.namespace()\n", 1)  # NumPy
        exec(compile(body, f"<{path.stem} after {stage}>", "exec"), namespace)
        got = namespace["f"](*args)
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"after {stage}")


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_generated_modules_are_stable_and_deterministic(path):
    import black

    from s2s.frontend import source

    module = _import(path)
    first = s2s.generate(module.f, ("grad", "value_and_grad", "vjp")).text
    source._parse.cache_clear()
    assert s2s.generate(module.f, ("grad", "value_and_grad", "vjp")).text == first
    assert black.format_str(first, mode=black.Mode()) == first
    compile(first, path.name, "exec")


EXAMPLES = pathlib.Path(__file__).parent.parent / "examples"
EXAMPLE_FUNCTIONS = [
    ("mlp.py", "loss"),
    ("attention.py", "loss"),
    ("layernorm.py", "loss"),
    ("logistic.py", "loss"),
    ("polynomial.py", "f"),
]


@pytest.mark.parametrize(
    "filename, name", EXAMPLE_FUNCTIONS, ids=[f for f, _ in EXAMPLE_FUNCTIONS]
)
def test_example_modules_are_black_fixed_points(filename, name):
    import black

    fn = getattr(_import(EXAMPLES / filename), name)
    text = s2s.generate(fn, ("grad", "value_and_grad", "vjp")).text
    assert black.format_str(text, mode=black.Mode()) == text
