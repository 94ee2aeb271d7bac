"""Test-session settings that must be in place before JAX starts its CPU backend.

Thousands of small programs are compiled once and run once, and compiling is
most of what many tests do, so XLA compiles them cheaply:

- without its CPU fusion emitters (the older elemental emitter generates the
  same programs): a scan + fori_loop + vmap(grad) program compiles in
  177-206 ms instead of 267-328 ms;
- at backend optimization level 0, without LLVM's expensive passes:
  ``tests/test_random_keys.py`` and ``tests/test_lax_control.py`` take 132 s
  instead of 173 s;
- as one LLVM module rather than split for parallel code generation (the
  programs are small, and the two test workers fill the cores): XLA's compile
  time in ``tests/test_rules.py`` and ``tests/test_lax_control.py`` 40 s
  instead of 47 s, 344 s instead of 399 s over the whole suite.

The results are the same programs' results; the tests compare them with
tolerances. At level 0, XLA miscompiles the JVP of
``jax.random.truncated_normal`` run by JAX op by op (a zero tangent), never
jit-compiled: so every JAX oracle runs under ``jax.jit`` (``jax_checks``,
``oracles``), as JAX users run it. An oracle that XLA got wrong fails its test
against s2s's NumPy backend; it cannot make one pass. So does ``jax.jit(jax.vmap(jax.grad(f)))`` of ``f`` reducing
``jnp.max(X, axis=1)`` of a matrix: ``inf`` in one example's gradient at level 0 without the fusion
emitters (JAX's own and s2s's alike; right with XLA's defaults). Flags already set in
``XLA_FLAGS`` come after these and win. Benchmarks do not import this file:
they measure XLA as users run it.

Each test process keeps generated modules in a folder of its own
(``S2S_CACHE_DIR``), removed when it ends: what one test worker generated is
not handed to another (``s2s.module_store``), so a test's run does not depend
on which tests ran before it in other processes. The tests of that store run
their programs in subprocesses that share a folder.

A test process holds millions of objects (libcst trees, JAX's caches), and
Python's cyclic garbage collector, at its default thresholds, walks them
thousands of times: 26 s of the 165 s ``tests/test_numpy_style.py`` takes in
one process. Collected less often (``GC_THRESHOLDS``), 9 s, with the same
peak memory.

JAX lowers each program into an MLIR context of its own, and making one (loading
its dialects) takes about 3 ms: 7% of the suite's time, with over 14,000 programs
compiled. The test processes lower into one context, made again every
``LOWERINGS_PER_CONTEXT`` programs so that what a context keeps (its types and
constants) stays small: ``tests/test_lax_control.py`` takes 64-68 s instead of
71-72 s in one process. The programs are the same; only where their IR lives
changes. Where JAX no longer has ``make_ir_context``, each lowering makes its own.
"""

import atexit
import gc
import os
import shutil
import tempfile

FAST_COMPILES = (
    "--xla_cpu_use_fusion_emitters=false "
    "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true "
    "--xla_cpu_parallel_codegen_split_count=1"
)

os.environ["XLA_FLAGS"] = f"{FAST_COMPILES} {os.environ.get('XLA_FLAGS', '')}".strip()

os.environ["S2S_CACHE_DIR"] = tempfile.mkdtemp(prefix="s2s-tests-")
atexit.register(shutil.rmtree, os.environ["S2S_CACHE_DIR"], True)

GC_THRESHOLDS = (50_000, 20, 1000)
gc.set_threshold(*GC_THRESHOLDS)

LOWERINGS_PER_CONTEXT = 256


def _share_mlir_contexts():
    from jax._src.interpreters import mlir

    make = getattr(mlir, "make_ir_context", None)
    if make is None:
        return
    current = {"context": None, "uses": 0}

    def shared_context():
        if current["context"] is None or current["uses"] >= LOWERINGS_PER_CONTEXT:
            current["context"], current["uses"] = make(), 0
        current["uses"] += 1
        return current["context"]

    mlir.make_ir_context = shared_context


_share_mlir_contexts()
