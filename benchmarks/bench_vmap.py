"""Batching speed: ``s2s.vmap`` against ``jax.jit(jax.vmap(...))``, side by side in one process, float32.

Workloads (issue 11's table): per-example gradients of a 3-layer MLP
(``s2s.vmap(s2s.grad(loss))`` against ``jax.jit(jax.vmap(jax.grad(loss)))``),
attention vmapped over sequences, and Newton's square root with per-example
trip counts (a Python ``while`` for s2s; ``jax.vmap`` of the same loop as
``lax.while_loop`` for JAX, which cannot batch the Python loop), and the gradient of a batch's
mean loss whose per-example function has a data-dependent ``if`` (``s2s.grad`` of a function
calling an ``s2s.vmap`` object; JAX: the same with ``jnp.where``). Timing as in
``bench_grad.py`` (alternating blocks, best block median); the JAX/JAX column
is this machine's noise floor. Also: the peak memory of the compiled
per-example gradient (``memory_analysis()``) against JAX's, and the seconds
from cold caches to the first result.

On the CPU, calls run synchronously (``jax_cpu_enable_async_dispatch`` off)
unless ``--async-dispatch`` is given: a call of tens of microseconds (Newton)
otherwise lands, at random and often for whole blocks, on either side of a
thread hand-off of about 20 µs, which swamps the difference being measured.
Synchronous calls also count s2s's own call path in full, where asynchronous
ones could hide it behind the computation.

    python benchmarks/bench_vmap.py [--quick] [--reps N] [--json PATH] [--async-dispatch]
"""

import argparse
import json
import platform
import time

import _vmap_models as models
import jax
import jax.numpy as jnp
import numpy as np
from _twins import jax_twin
from bench_grad import check_agree, timed

import s2s

DTYPE = np.float32


def _jax_newton(a):
    def test(x):
        return jnp.abs(x * x - a) > 1e-5 * a

    return jax.lax.while_loop(test, lambda x: 0.5 * (x + a / x), a)


def _jax_robust_loss(w, x, y):
    def example(x, y):
        err = jnp.tanh(x @ w) - y
        sq = jnp.sum(err * err)
        return jnp.where(sq > 1.0, jnp.sqrt(sq), 0.5 * sq + 0.5)

    return jnp.mean(jax.vmap(example)(x, y))


def workloads(quick):
    """(name, s2s function, JAX function, float32 arguments)."""
    rng = np.random.default_rng(0)

    def r(*shape):
        return rng.standard_normal(shape).astype(DTYPE) * 0.3

    batch, width = (16, 32) if quick else (128, 256)
    params = [(r(width, width), r(width)) for _ in range(2)] + [(r(width, 10), r(10))]
    twin = jax_twin(models.mlp_loss)
    yield (
        f"per-example gradients, 3-layer MLP (batch {batch}, width {width})",
        s2s.vmap(s2s.grad(models.mlp_loss), in_axes=(None, 0, 0)),
        jax.jit(jax.vmap(jax.grad(twin), in_axes=(None, 0, 0))),
        (params, r(batch, width), r(batch, 10)),
    )
    sequences, length, width = (4, 8, 16) if quick else (32, 128, 64)
    twin = jax_twin(models.attention)
    yield (
        f"attention over {sequences} sequences (length {length}, width {width})",
        s2s.vmap(models.attention, in_axes=(0, None, None, None)),
        jax.jit(jax.vmap(twin, in_axes=(0, None, None, None))),
        (
            r(sequences, length, width),
            r(width, width),
            r(width, width),
            r(width, width),
        ),
    )
    n = 64 if quick else 4096
    a = np.exp(rng.uniform(-3, 6, n)).astype(DTYPE)  # 0.05 .. 400: trip counts differ
    yield (
        f"Newton sqrt, per-example trip counts ({n} examples)",
        s2s.vmap(models.newton_sqrt),
        jax.jit(jax.vmap(_jax_newton)),
        (a,),
    )

    batch, width = (16, 32) if quick else (256, 256)
    yield (
        f"gradient of a batched loss with a per-example `if` (batch {batch}, width {width})",
        s2s.grad(models.robust_loss),
        jax.jit(jax.grad(_jax_robust_loss)),
        (r(width, 16), r(batch, width), r(batch, 16)),
    )


def _peak_bytes(fn, args):
    compiled = jax.jit(fn).lower(*args).compile()
    analysis = compiled.memory_analysis()
    if analysis is None:
        return None
    return (
        analysis.temp_size_in_bytes
        + analysis.argument_size_in_bytes
        + analysis.output_size_in_bytes
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument(
        "--reps", type=int, help="timed calls per function (default 50)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--async-dispatch",
        action="store_true",
        help="keep JAX's asynchronous dispatch on the CPU (noisier for short calls)",
    )
    opts = parser.parse_args(argv)
    if jax.default_backend() == "cpu" and not opts.async_dispatch:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    reps = opts.reps or (3 if opts.quick else 50)
    rows = []
    for name, ours, theirs, args in workloads(opts.quick):
        args = jax.device_put(args)
        start = time.perf_counter()
        jax.block_until_ready(ours(*args))
        cold = time.perf_counter() - start
        check_agree(name, ours, theirs, args)
        again = jax.jit(
            theirs.__wrapped__ if hasattr(theirs, "__wrapped__") else theirs
        )
        t = timed({"s2s": ours, "jax": theirs, "jax again": again}, args, reps)
        row = {
            "workload": name,
            "s2s_ms": t["s2s"] * 1e3,
            "jax_ms": t["jax"] * 1e3,
            "s2s/jax": t["s2s"] / t["jax"],
            "jax/jax": t["jax again"] / t["jax"],
            "cold_s": cold,
        }
        if "gradients" in name:
            generated = ours.at(
                3
            )._function  # the compiled module's entry, jitted below
            row["peak_bytes_s2s"] = _peak_bytes(generated, args)
            row["peak_bytes_jax"] = _peak_bytes(theirs, args)
        rows.append(row)
        print(
            f"{name}: s2s {row['s2s_ms']:.3f} ms, jax {row['jax_ms']:.3f} ms, "
            f"s2s/jax {row['s2s/jax']:.2f} (jax/jax {row['jax/jax']:.2f}), cold {cold:.2f} s"
            + (
                f", peak memory s2s {row['peak_bytes_s2s']} B / jax {row['peak_bytes_jax']} B"
                if "peak_bytes_s2s" in row
                else ""
            ),
            flush=True,
        )
    if opts.json:
        with open(opts.json, "w") as out:
            json.dump(
                {
                    "machine": platform.platform(),
                    # a CPU setting (newer JAX versions drop it where the CPU is not the backend)
                    "async_dispatch": getattr(
                        jax.config, "jax_cpu_enable_async_dispatch", None
                    ),
                    "rows": rows,
                },
                out,
                indent=1,
            )


if __name__ == "__main__":
    main()
