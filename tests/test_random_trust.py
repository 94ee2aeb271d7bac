"""Issue 10, no silent wrong answer: random programs in users' style give JAX's result or a located error.

A fixed set of seeds of the generator in ``tests/fuzz/programs.py`` (pytrees
read with constant paths, closures and factories, helpers with every parameter
kind, NumPy keyword calls, in-place writes, moderate control flow; see its
docstring), each checked by ``tests/fuzz/check.py``: ``s2s.grad``,
``s2s.value_and_grad`` and ``s2s.jvp`` against float64 central finite
differences of the NumPy program, and, for every fifth seed, against
``jax.grad``/``jax.jvp``/``jax.vjp`` of the ``jax.numpy`` twin on both backends
(``s2s.vjp`` too). Programs whose NumPy semantics the twin cannot express
(writes through views) always use finite differences of the NumPy program.

A program may be refused with an ``s2s.S2SError`` that names a line of its
file; it may not crash (any other exception, or an error raised by the
generated code) and it may not compute a wrong number. The long campaign is
``python benchmarks/fuzz_trust.py --programs 10000``.
"""

import jax
import pytest
from fuzz import check
from fuzz.programs import generate

jax.config.update("jax_enable_x64", True)

SEEDS = range(30)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("trust_programs")


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_is_right_or_refused(folder, seed):
    program = generate(seed)
    full = seed % 5 == 0
    outcome = check.check(
        program,
        folder,
        backends=("numpy", "xla") if full else ("numpy",),
        oracle="jax" if full else "fd",
    )
    report = "\n\n".join(
        f"{f.kind} in {f.mode}:\n{f.message}" for f in outcome.findings
    )
    assert (
        outcome.status != "oracle"
    ), f"generator problem (not s2s): {outcome.note}\n{program.source}"
    bad = [f for f in outcome.findings if f.kind in ("mismatch", "crash", "unhelpful")]
    assert (
        not bad
    ), f"seed {seed}: {outcome.worst()}\n{program.source}\nargs:\n{program.args_code}argnums={program.argnums}\n\n{report}"
