"""Test-session settings that must be in place before JAX starts its CPU backend.

XLA compiles for the tests at backend optimization level 0 (as JAX's own
``jax_disable_most_optimizations`` does): thousands of small programs are
compiled once and run once, and LLVM's optimizations are most of each compile
(a scan + fori_loop + vmap(grad) program: 267 ms -> 191 ms; this file's suite
time roughly halves with it). The programs and their results are the same; the
tests compare them with tolerances. Adding ``--xla_cpu_use_fusion_emitters=false``
would make compiles cheaper again, but the pair miscompiles the JVP of
``jax.random.truncated_normal`` run op by op in jax 0.10 (a zero tangent), so
it is not used. Flags already set in ``XLA_FLAGS`` come after this one and win.
Benchmarks do not import this file: they measure XLA as users run it.
"""

import os

FAST_COMPILES = "--xla_backend_optimization_level=0"

os.environ["XLA_FLAGS"] = f"{FAST_COMPILES} {os.environ.get('XLA_FLAGS', '')}".strip()
