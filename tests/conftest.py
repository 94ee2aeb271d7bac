"""Test-session settings that must be in place before JAX starts its CPU backend.

XLA compiles for the tests without its backend optimizations and without the
fusion emitters: thousands of small programs are compiled once and run once,
and these two flags make each compile two to three times cheaper (measured on
a scan + fori_loop + vmap(grad) program: 267 ms -> 111 ms). The results are the
same programs' results; the tests compare them with tolerances. Flags a user
has already set in ``XLA_FLAGS`` come after these and win. Benchmarks do not
import this file: they measure XLA as users run it.
"""

import os

FAST_COMPILES = "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"

os.environ["XLA_FLAGS"] = f"{FAST_COMPILES} {os.environ.get('XLA_FLAGS', '')}".strip()
