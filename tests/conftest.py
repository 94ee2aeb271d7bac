"""Test-session settings that must be in place before JAX starts its CPU backend.

XLA compiles for the tests without its CPU fusion emitters (the older
elemental emitter generates the same programs): thousands of small programs
are compiled once and run once, and compiling is most of what many tests do.
A scan + fori_loop + vmap(grad) program compiles in 177-206 ms instead of
267-328 ms; tests/test_vmap_users.py takes 45 s instead of 62 s. The results
are the same programs' results; the tests compare them with tolerances.

Not used, measured: ``--xla_backend_optimization_level=0`` alone saves less
(the whole suite 1534 s -> 1296 s), and together with this flag it miscompiles
the JVP of ``jax.random.truncated_normal`` run op by op in jax 0.10 (a zero
tangent). The op-table oracles (``oracles.OPTIONS``) still compile at level 0
under this flag: turning the fusion emitters back on for them cost 150 s of
the suite, and an oracle XLA got wrong fails its test against s2s's NumPy
backend, it cannot make one pass (the jit'd JVP above is right either way).
Flags already set in ``XLA_FLAGS`` come after this one and win.
Benchmarks do not import this file: they measure XLA as users run it.
"""

import os

FAST_COMPILES = "--xla_cpu_use_fusion_emitters=false"

os.environ["XLA_FLAGS"] = f"{FAST_COMPILES} {os.environ.get('XLA_FLAGS', '')}".strip()
