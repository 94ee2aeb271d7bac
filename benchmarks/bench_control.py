"""Loops: s2s gradients of Python ``for`` loops against hand-written ``jax.lax.scan``, float32, one process.

Two models (``_control_models.py``), each written twice: plain NumPy with a
Python ``for`` loop, which s2s lowers to ``rt.scan`` and differentiates, and
the ``jax.lax.scan`` version a JAX user would write by hand:

- a tanh RNN over time (hidden 128, batch 32, input 64, 100 steps), squared
  error against a target at every step, gradient with respect to W, U, b;
- an explicit Euler integrator (1000 steps, 4096 states: 1024 systems of 4
  coupled by a shared 4x4 matrix), dy/dt = tanh(y @ A + c) - k * y, squared
  error of the end state, gradient with respect to A, c, k;
- the same integrator written as ``while t < t_end`` with ``t_end`` a traced
  value: a data-dependent loop that ``jax.grad`` cannot differentiate, so its
  JAX baseline is the ``lax.scan`` with the step count known. s2s keeps
  checkpoints of the carry (``runtime/checkpoints.py``): its memory stays flat
  at 10x the steps, where the scan's grows tenfold.

It reports, after checking that the two gradients agree:

1. speed: ``s2s.grad(f, argnums=...)`` against
   ``jax.jit(jax.grad(f_lax, argnums=...))``, timed as in ``bench_grad.py``
   (its ``timed``: alternating blocks, each call ended by
   ``block_until_ready``, median of the fastest block); a second, separately
   jitted copy of JAX's gradient gives the JAX/JAX noise floor;
2. memory: the compiled gradients' ``memory_analysis()`` (temporaries, and
   peak = arguments + outputs + temporaries - aliased) at 1x and 10x the
   steps (compiled, not run), s2s compiled as ``jax.jit(s2s.grad(f))``;
3. compile time from cold caches (s2s's caches and ``jax.clear_caches()``,
   median of several): s2s writing the gradient source, then ``jax.jit``
   tracing and lowering it (which loads the generated module) and XLA
   compiling it; JAX's ``jax.jit(jax.grad(f_lax))`` trace, lower and compile
   alongside.

    python benchmarks/bench_control.py [--quick] [--reps N] [--json PATH]
"""

import argparse
import json
import platform
import statistics
import time

import _control_models as models
import jax
import numpy as np
from bench_grad import _warmup, check_agree, timed

import s2s

DTYPE = np.float32


def workloads(steps_scale=1):
    """(name, f, f_lax, argnums, static argnums, arguments) for each model, with ``steps_scale`` times the steps."""
    rng = np.random.default_rng(0)
    hidden, batch, inputs, length = 128, 32, 64, 100 * steps_scale
    normal = lambda *shape: rng.standard_normal(shape).astype(DTYPE)
    rnn_args = (
        normal(hidden, hidden) / np.sqrt(hidden, dtype=DTYPE),
        normal(inputs, hidden) / np.sqrt(inputs, dtype=DTYPE),
        np.zeros(hidden, DTYPE),
        np.zeros((batch, hidden), DTYPE),
        normal(length, batch, inputs),
        rng.uniform(-0.5, 0.5, (length, batch, hidden)).astype(DTYPE),
    )
    name = f"RNN tanh (hidden {hidden}, batch {batch}, {length} steps)"
    yield name, models.rnn_loss, models.rnn_loss_lax, (0, 1, 2), (), rnn_args
    systems, size, steps = 1024, 4, 1000 * steps_scale
    ode_args = (
        normal(size, size),
        normal(size) * DTYPE(0.1),
        rng.uniform(0.5, 1.5, (systems, size)).astype(DTYPE),
        normal(systems, size),
        normal(systems, size) * DTYPE(0.5),
        0.01,
        steps,
    )
    name = f"Euler ODE ({systems * size} states, {steps} steps)"
    yield name, models.ode_loss, models.ode_loss_lax, (0, 1, 2), (6,), ode_args
    # the same integrator as `while t < t_end` (checkpointed); JAX's baseline is the scan with the steps known
    while_args = (*ode_args[:6], np.asarray((steps - 0.5) * 0.01, DTYPE))
    name = f"Euler ODE as while loop ({systems * size} states, {steps} steps)"
    yield name, models.ode_while_loss, _with_steps(steps), (0, 1, 2), (), while_args


def _with_steps(steps):
    """The JAX baseline of the ``while`` integrator: ``lax.scan`` with the step count fixed."""

    def ode_while_loss_lax(A, c, k, y0, target, dt, t_end):
        return models.ode_loss_lax(A, c, k, y0, target, dt, steps)

    return ode_while_loss_lax


def on_device(args):
    """Array arguments on the device; Python scalars stay (``dt`` traced, ``steps`` a compile-time constant)."""
    return tuple(jax.device_put(a) if isinstance(a, np.ndarray) else a for a in args)


def memory(compiled):
    """(temporary bytes, peak bytes) of a compiled executable."""
    m = compiled.memory_analysis()
    peak = (
        m.argument_size_in_bytes
        + m.output_size_in_bytes
        + m.temp_size_in_bytes
        - m.alias_size_in_bytes
    )
    return m.temp_size_in_bytes, peak


def cold_compile(f, f_lax, argnums, static, args, repeats):
    """Median seconds, from cold caches: s2s transform, s2s trace+lower, s2s XLA compile, JAX trace+lower+compile."""
    from s2s import api
    from s2s.frontend import source

    times = []
    for _ in range(repeats):
        api._CACHE.clear()
        source._parse.cache_clear()
        jax.clear_caches()
        t0 = time.perf_counter()
        ours = s2s.grad(f, argnums=argnums)
        _ = ours.source  # writes the gradient module
        t1 = time.perf_counter()
        lowered = jax.jit(ours, static_argnums=static).lower(*args)
        t2 = time.perf_counter()
        lowered.compile()
        t3 = time.perf_counter()
        jax.clear_caches()
        t4 = time.perf_counter()
        jax.jit(jax.grad(f_lax, argnums=argnums), static_argnums=static).lower(
            *args
        ).compile()
        times.append((t1 - t0, t2 - t1, t3 - t2, time.perf_counter() - t4))
    return [statistics.median(column) for column in zip(*times)]


def print_table(title, columns, rows):
    table = [[heading for heading, _, _ in columns]]
    table += [[fmt.format(row[key]) for _, key, fmt in columns] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    print(f"\n{title}")
    for i, line in enumerate(table):
        print(
            " | ".join(
                cell.ljust(w) if j == 0 else cell.rjust(w)
                for j, (cell, w) in enumerate(zip(line, widths))
            )
        )
        if i == 0:
            print("-+-".join("-" * w for w in widths))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="few repetitions (smoke run); the sizes stay",
    )
    parser.add_argument(
        "--reps", type=int, help="timed calls per function (default 50, 3 with --quick)"
    )
    parser.add_argument(
        "--json", metavar="PATH", help="also write the results to PATH as JSON"
    )
    opts = parser.parse_args(argv)
    reps = opts.reps or (3 if opts.quick else 50)
    compile_repeats = 1 if opts.quick else 3

    # library imports and backend start-up don't count
    jax.jit(s2s.grad(_warmup))(np.ones(3, DTYPE))
    speed, mem, compile_rows = [], [], []
    for (name, f, f_lax, argnums, static, args), (name_10x, *_, args_10x) in zip(
        workloads(), workloads(10)
    ):
        args = on_device(args)
        ours = s2s.grad(f, argnums=argnums)
        theirs = jax.jit(jax.grad(f_lax, argnums=argnums), static_argnums=static)
        check_agree(name, ours, theirs, args, atol=1e-4)
        # JAX against itself: the noise floor
        control = jax.jit(jax.grad(f_lax, argnums=argnums), static_argnums=static)
        t = timed({"s2s": ours, "jax": theirs, "control": control}, args, reps)
        speed.append(
            {
                "model": name,
                "s2s_grad_ms": 1e3 * t["s2s"],
                "jax_grad_ms": 1e3 * t["jax"],
                "s2s_over_jax": t["s2s"] / t["jax"],
                "jax_over_jax": t["control"] / t["jax"],
            }
        )
        for label, a in ((name, args), (name_10x, args_10x)):
            s2s_temp, s2s_peak = memory(
                jax.jit(ours, static_argnums=static).lower(*a).compile()
            )
            jax_temp, jax_peak = memory(theirs.lower(*a).compile())
            mem.append(
                {
                    "model": label,
                    "s2s_temp_bytes": s2s_temp,
                    "jax_temp_bytes": jax_temp,
                    "s2s_peak_bytes": s2s_peak,
                    "jax_peak_bytes": jax_peak,
                    "s2s_over_jax": s2s_peak / jax_peak,
                }
            )
        transform, lower, xla, jax_total = cold_compile(
            f, f_lax, argnums, static, args, compile_repeats
        )
        compile_rows.append(
            {
                "model": name,
                "transform_ms": 1e3 * transform,
                "trace_lower_ms": 1e3 * lower,
                "xla_compile_ms": 1e3 * xla,
                "s2s_total_ms": 1e3 * (transform + lower + xla),
                "jax_total_ms": 1e3 * jax_total,
            }
        )

    device = jax.devices()[0]
    print(f"{device.platform} ({device.device_kind}), jax {jax.__version__}, float32")
    print_table(
        f"Gradient time (best of 10 block medians, {max(1, reps // 10)} calls a block; target s2s/JAX <= 1.10)",
        [
            ("model", "model", "{}"),
            ("s2s grad ms", "s2s_grad_ms", "{:.3f}"),
            ("JAX scan grad ms", "jax_grad_ms", "{:.3f}"),
            ("s2s/JAX", "s2s_over_jax", "{:.2f}"),
            ("JAX/JAX", "jax_over_jax", "{:.2f}"),
        ],
        speed,
    )
    print_table(
        "Gradient memory (compiled memory_analysis, MB; peak = arguments + outputs + temporaries - aliased)",
        [
            ("model", "model", "{}"),
            ("s2s temp MB", "s2s_temp_bytes", "{:.1f}"),
            ("JAX temp MB", "jax_temp_bytes", "{:.1f}"),
            ("s2s peak MB", "s2s_peak_bytes", "{:.1f}"),
            ("JAX peak MB", "jax_peak_bytes", "{:.1f}"),
            ("s2s/JAX", "s2s_over_jax", "{:.2f}"),
        ],
        [
            {k: v / 1e6 if k.endswith("bytes") else v for k, v in row.items()}
            for row in mem
        ],
    )
    print_table(
        f"Compile time from cold caches (median of {compile_repeats}; target s2s total < 2000 ms)",
        [
            ("model", "model", "{}"),
            ("s2s transform ms", "transform_ms", "{:.0f}"),
            ("trace+lower ms", "trace_lower_ms", "{:.0f}"),
            ("XLA compile ms", "xla_compile_ms", "{:.0f}"),
            ("s2s total ms", "s2s_total_ms", "{:.0f}"),
            ("JAX total ms", "jax_total_ms", "{:.0f}"),
        ],
        compile_rows,
    )

    if opts.json:
        with open(opts.json, "w") as out:
            meta = {
                "device": f"{device.platform} ({device.device_kind})",
                "jax": jax.__version__,
                "python": platform.python_version(),
            }
            results = {"speed": speed, "memory": mem, "compile": compile_rows}
            json.dump(
                {
                    **meta,
                    "dtype": "float32",
                    "reps": reps,
                    "quick": opts.quick,
                    **results,
                },
                out,
                indent=2,
            )
            out.write("\n")


if __name__ == "__main__":
    main()
