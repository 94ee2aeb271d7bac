"""Start-up: time to the first gradient from a cold Python process, s2s against JAX, side by side.

Each measurement is a fresh interpreter that imports what it needs, builds
the model's inputs and computes one gradient (``block_until_ready``), timed
from the interpreter's start (its ``-X importtime``-free wall clock, measured
by this script around the subprocess). Three ways:

- ``jax``: ``jax.jit(jax.grad(twin))``, ``twin`` the model's source with ``np``
  bound to ``jax.numpy``;
- ``s2s first run``: ``s2s.grad(loss)`` with an empty module cache, as on a
  user's first run (reads the source, generates the module, compiles);
- ``s2s later runs``: the same call when an earlier run of the program left
  its module in the cache folder (``s2s.module_store``): nothing is
  transformed, libcst and black are not imported;
- ``s2s checked-in``: the same call in a project whose ``pyproject.toml``
  declares the gradient as a ``[tool.s2s]`` target, with the module written by
  ``s2s generate``, and an empty module cache.

Runs alternate (jax, s2s first run, later runs, checked-in, jax, ...); a
figure is the median of ``--runs``. Ratios are to JAX's median. JAX's own
persistent compilation cache is off, as it is by default, for every row.

    python benchmarks/bench_startup.py [--runs N] [--json PATH]
"""

import argparse
import json
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

INPUTS = """
import numpy as np
rng = np.random.default_rng(0)
sizes = [64, 128, 128, 10]
params = [(rng.standard_normal((m, n)).astype(np.float32) * 0.1, np.zeros(n, np.float32))
          for m, n in zip(sizes[:-1], sizes[1:])]
x = rng.standard_normal((32, 64)).astype(np.float32)
y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
"""

PROGRAMS = {
    "jax": INPUTS
    + """
import os, sys, jax
sys.path.insert(0, {benchmarks!r})
from _twins import jax_twin, load_example
twin = jax_twin(load_example(os.path.abspath("mlp.py")).loss)
jax.block_until_ready(jax.jit(jax.grad(twin))(params, x, y))
""",
    "s2s": INPUTS
    + """
import jax, s2s
import mlp
jax.block_until_ready(s2s.grad(mlp.loss)(params, x, y))
""",
}
PROGRAMS["s2s first run"] = PROGRAMS.pop("s2s")
PROGRAMS["s2s later runs"] = PROGRAMS["s2s first run"]
PROGRAMS["s2s checked-in"] = PROGRAMS["s2s first run"]
KEEPS_CACHE = {"s2s later runs"}  # the others start from an empty module cache

PYPROJECT = """[project]
name = "startup"

[[tool.s2s.targets]]
source = "mlp.py::loss"
transform = "grad"
output = "derivatives/loss_grad.py"
"""


def project(folder: pathlib.Path, checked_in: bool) -> pathlib.Path:
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "mlp.py", folder / "mlp.py")
    if checked_in:
        (folder / "pyproject.toml").write_text(PYPROJECT)
        subprocess.run(
            [sys.executable, "-m", "s2s", "generate"], cwd=folder, check=True
        )
    return folder


def seconds(code: str, cwd: pathlib.Path, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, check=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        folders = {
            "jax": project(tmp / "jax", False),
            "s2s first run": project(tmp / "s2s", False),
            "s2s later runs": project(tmp / "later", False),
            "s2s checked-in": project(tmp / "checked_in", True),
        }
        env = dict(os.environ)
        # Python caches compiled modules (.pyc), as it does for every installed package: a setting that
        # stops it would make s2s's own modules compile from source on every start, and JAX's not
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        times = {name: [] for name in PROGRAMS}
        for run in range(
            args.runs + 1
        ):  # the first round is not timed: it writes the caches
            for name, code in PROGRAMS.items():
                cache = tmp / "cache" / name.replace(" ", "_")
                if name not in KEEPS_CACHE:
                    shutil.rmtree(cache, ignore_errors=True)
                source = code.format(benchmarks=str(ROOT / "benchmarks"))
                elapsed = seconds(
                    source, folders[name], {**env, "S2S_CACHE_DIR": str(cache)}
                )
                if run:
                    times[name].append(elapsed)
    base = statistics.median(times["jax"])
    rows = {
        name: {
            "median_s": statistics.median(t),
            "ratio_to_jax": statistics.median(t) / base,
        }
        for name, t in times.items()
    }
    print(
        f"time to the first gradient, cold process ({platform.machine()}, {args.runs} runs each)"
    )
    for name, row in rows.items():
        print(f"  {name:16} {row['median_s']:6.2f} s   {row['ratio_to_jax']:.2f}x JAX")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
