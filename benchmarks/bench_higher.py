"""Higher-order derivatives: s2s against JAX on a small tanh MLP, side by side in one process, float32.

The model (``_higher_models.py``) is an MLP 32-128-128-10 (two tanh hidden
layers, 22,026 parameters in a dict) with a softmax cross-entropy, batch 64;
its JAX twin is the same source run with ``np`` bound to ``jax.numpy``
(``_twins.jax_twin``). Workloads:

1. Hessian-vector product of the loss with respect to the parameters, forward
   over reverse: ``s2s.jvp(s2s.grad(loss), (p, x, y), (v, 0x, 0y))`` against
   ``jax.jit(lambda p, v, x, y: jax.jvp(jax.grad(loss), (p, x, y), (v, 0x, 0y))[1])``.
   s2s is timed three ways: wrapped in ``jax.jit`` (an s2s function is a JAX
   function), as a user calls it through ``s2s.linearize(s2s.grad(loss), p, x, y)``
   (compiled once, the point fixed), and as a user calls ``s2s.jvp(g, ...)``
   directly with ``g = s2s.grad(loss)`` held, which loads its (cached) module
   again and traces and compiles it through XLA on every call;
2. ``jacrev`` of the per-example losses (a vector, 64) with respect to all
   parameters: per-example gradients, a 64 x 22,026 Jacobian;
3. ``jacrev`` and ``jacfwd`` of one example's logits (10) with respect to its
   input (32), and the ``hessian`` of one example's loss with respect to its
   input (32 x 32).

The Jacobians are timed as called (``s2s.jacrev(f)(...)``, which runs
compiled) and wrapped in ``jax.jit``, against ``jax.jit(jax.jacrev(f_jax))``
and so on. Every s2s result is checked against JAX's (``allclose``) before
timing. Timing is ``bench_grad.timed``: alternating blocks, each call ended by
``block_until_ready``, the fastest block's median; a second, separately jitted
copy of JAX's function gives the JAX/JAX noise floor. Compile times are from
cold caches (s2s's caches and ``jax.clear_caches()``), as in
``bench_control.py``: s2s writing the derivative source, ``jax.jit`` tracing
and lowering it (which loads the generated module), XLA compiling it; JAX's
trace, lower and compile alongside. Last, a few one-line status checks of
higher-order cases that fail in s2s at the time of writing (they print the
error rather than stop the run).

    python benchmarks/bench_higher.py [--quick] [--reps N] [--json PATH]
"""

import argparse
import json
import os
import platform
import statistics
import time

import _higher_models as models
import jax
import jax.numpy as jnp
import numpy as np
from _twins import jax_twin, load_example
from bench_grad import _warmup, check_agree, timed

import s2s

DTYPE = np.float32
SIZES = [32, 128, 128, 10]  # input, hidden, hidden, classes
BATCH = 64


def data():
    """Parameters (a dict), a batch ``x, y``, a direction ``v`` shaped like the parameters, all on the device."""
    rng = np.random.default_rng(0)
    params = models.init(rng, SIZES, DTYPE)
    x, y = models.data(rng, BATCH, SIZES[0], SIZES[-1], DTYPE)
    # built from `params` itself: s2s.jvp wants the tangent dict's keys in the primal's order (see status checks)
    v = {k: rng.standard_normal(a.shape).astype(DTYPE) for k, a in params.items()}
    return jax.device_put((params, x, y, v))


def _zeros_tangents(x, y):
    return jnp.zeros_like(x), jnp.zeros_like(y)


LOSS_GRAD = s2s.grad(models.loss)


def s2s_hvp(p, v, x, y):
    """Forward over reverse with s2s, every primal given a tangent (zeros for the data)."""
    return s2s.jvp(LOSS_GRAD, (p, x, y), (v, *_zeros_tangents(x, y)))[1]


def jax_hvp(p, v, x, y):
    """The same in JAX (the argument order, and the zero tangents of the data, as s2s's)."""
    return jax.jvp(
        jax.grad(jax_twin(models.loss)), (p, x, y), (v, *_zeros_tangents(x, y))
    )[1]


def workloads(params, x, y, v):
    """(name, {label: s2s callable}, JAX function to jit, arguments, cold-compile recipe) for each workload."""
    x1, y1 = x[0], y[0]
    n_params = sum(int(np.size(a)) for a in params.values())
    _, hvp_linearized = s2s.linearize(s2s.grad(models.loss), params, x, y)
    zx, zy = _zeros_tangents(x, y)
    yield (
        f"HVP of loss wrt params ({n_params} params, batch {BATCH})",
        {
            "jax.jit(s2s.jvp(s2s.grad))": jax.jit(s2s_hvp),
            "s2s.linearize(s2s.grad) f_jvp": lambda p, v, x, y: hvp_linearized(
                v, zx, zy
            ),
        },
        jax_hvp,
        (params, v, x, y),
        "hvp",
    )
    jacobians = [
        (
            f"jacrev per-example loss wrt params ({BATCH} x {n_params})",
            "jacrev",
            models.per_example_loss,
            0,
            (params, x, y),
        ),
        (
            f"jacrev logits(x[0]) wrt x[0] ({SIZES[-1]} x {SIZES[0]})",
            "jacrev",
            models.logits,
            1,
            (params, x1),
        ),
        (
            f"jacfwd logits(x[0]) wrt x[0] ({SIZES[-1]} x {SIZES[0]})",
            "jacfwd",
            models.logits,
            1,
            (params, x1),
        ),
        (
            f"hessian example loss wrt x[0] ({SIZES[0]} x {SIZES[0]})",
            "hessian",
            models.example_loss,
            0,
            (x1, params, y1),
        ),
    ]
    for name, kind, f, argnums, args in jacobians:
        ours = getattr(s2s, kind)(f, argnums=argnums)
        theirs = getattr(jax, kind)(jax_twin(f), argnums=argnums)
        yield name, {
            f"s2s.{kind}(f) as called": ours,
            f"jax.jit(s2s.{kind}(f))": jax.jit(ours),
        }, theirs, args, (kind, f, argnums)


def per_call_seconds(fn, args, calls):
    """Median seconds of ``calls`` calls of the s2s.jvp path (argument checks, then the cached compiled module), after one warm-up."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _clear_caches():
    from s2s import api
    from s2s.frontend import source

    api._CACHE.clear()
    source._parse.cache_clear()
    jax.clear_caches()


def cold_compile(recipe, theirs, args, repeats):
    """Median seconds, from cold caches: s2s transform, s2s trace+lower, s2s XLA compile, JAX trace+lower+compile."""
    times = []
    for _ in range(repeats):
        _clear_caches()
        t0 = time.perf_counter()
        if recipe == "hvp":
            grad = s2s.grad(models.loss)
            # the forward-mode module of the gradient module (writes both)
            s2s.jvp_source(grad)
            t1 = time.perf_counter()
            hvp = jax.jit(
                lambda p, v, x, y, g=grad: s2s.jvp(
                    g, (p, x, y), (v, *_zeros_tangents(x, y))
                )[1]
            )
        else:
            kind, f, argnums = recipe
            ours = getattr(s2s, kind)(f, argnums=argnums)
            # the derivative module, and the normal form it takes the output from
            _ = (
                ours.source,
                ours.primal.source,
            )
            t1 = time.perf_counter()
            hvp = jax.jit(ours)
        lowered = hvp.lower(*args)
        t2 = time.perf_counter()
        lowered.compile()
        t3 = time.perf_counter()
        jax.clear_caches()
        t4 = time.perf_counter()
        jax.jit(theirs).lower(*args).compile()
        times.append((t1 - t0, t2 - t1, t3 - t2, time.perf_counter() - t4))
    return [statistics.median(column) for column in zip(*times)]


def status_checks():
    """One line per higher-order case that s2s got wrong when this script was written: 'ok' once fixed.

    (``s2s.jvp(g, ...)`` a second time with the same ``g = s2s.grad(loss)`` failed too, with
    ``TypeError: loss_grad() takes 3 positional arguments but 6 were given``; fixed in b48a614.)
    """
    rng = np.random.default_rng(1)
    params = models.init(rng, [4, 8, 8, 3], DTYPE)
    x, y = models.data(rng, 5, 4, 3, DTYPE)
    zx, zy = np.zeros_like(x), np.zeros_like(y)
    v = {k: np.ones_like(a) for k, a in params.items()}
    mlp = load_example("examples/mlp.py")
    mlp_params = mlp.init(rng, [4, 8, 8, 3], DTYPE)
    mlp_v = [(np.ones_like(W), np.ones_like(b)) for W, b in mlp_params]

    def sorted_tangent():
        s2s.jvp(
            s2s.grad(models.loss), (params, x, y), (dict(sorted(v.items())), zx, zy)
        )

    def max_twice():
        s2s.jvp(s2s.grad(mlp.loss), (mlp_params, x, y), (mlp_v, zx, zy))

    checks = [
        (
            "s2s.jvp(s2s.grad(loss)) with the tangent dict's keys in sorted order (as jax.tree_util.tree_map builds it)",
            sorted_tangent,
        ),
        (
            "s2s.jvp(s2s.grad(examples/mlp.py loss)), whose log-softmax is shifted by np.max",
            max_twice,
        ),
    ]
    lines = []
    for what, check in checks:
        try:
            check()
            lines.append(f"ok    {what}")
        except Exception as err:
            message = " ".join(str(err).split())
            lines.append(f"FAILS {what}: {type(err).__name__}: {message[:240]}")
    return lines


def print_table(title, columns, rows):
    table = [[heading for heading, _, _ in columns]]
    table += [[fmt.format(row[key]) for _, key, fmt in columns] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    print(f"\n{title}")
    for i, line in enumerate(table):
        print(
            " | ".join(
                cell.ljust(w) if j < 2 else cell.rjust(w)
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
    jvp_calls = reps

    # library imports and backend start-up don't count
    jax.jit(s2s.grad(_warmup))(np.ones(3, DTYPE))
    params, x, y, v = data()
    speed, compile_rows = [], []
    for name, ours, theirs, args, recipe in workloads(params, x, y, v):
        jitted = jax.jit(theirs)
        for label, fn in ours.items():
            check_agree(f"{name}, {label}", fn, jitted, args)
        control = jax.jit(theirs)  # JAX against itself: the noise floor of this machine
        t = timed({**ours, "jax": jitted, "control": control}, args, reps)
        if recipe == "hvp":
            check_agree(f"{name}, s2s.jvp", s2s_hvp, jitted, args)
            t["s2s.jvp(g) each call"] = per_call_seconds(s2s_hvp, args, jvp_calls)
            labels = [*ours, "s2s.jvp(g) each call"]
        else:
            labels = list(ours)
        for label in labels:
            speed.append(
                {
                    "workload": name,
                    "s2s_call": label,
                    "s2s_ms": 1e3 * t[label],
                    "jax_ms": 1e3 * t["jax"],
                    "s2s_over_jax": t[label] / t["jax"],
                    "jax_over_jax": t["control"] / t["jax"],
                }
            )
        transform, lower, xla, jax_total = cold_compile(
            recipe, theirs, args, compile_repeats
        )
        compile_rows.append(
            {
                "workload": name,
                "s2s_call": "jax.jit(s2s...)",
                "transform_ms": 1e3 * transform,
                "trace_lower_ms": 1e3 * lower,
                "xla_compile_ms": 1e3 * xla,
                "s2s_total_ms": 1e3 * (transform + lower + xla),
                "jax_total_ms": 1e3 * jax_total,
            }
        )
    status = status_checks()

    device = jax.devices()[0]
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    print(
        f"{device.platform} ({device.device_kind}; {machine}), jax {jax.__version__}, float32"
    )
    print_table(
        f"Time per call (best of 10 block medians, {max(1, reps // 10)} calls a block; JAX = jax.jit of JAX's "
        "transform; target s2s/JAX <= 1.10)",
        [
            ("workload", "workload", "{}"),
            ("s2s call", "s2s_call", "{}"),
            ("s2s ms", "s2s_ms", "{:.3f}"),
            ("JAX ms", "jax_ms", "{:.3f}"),
            ("s2s/JAX", "s2s_over_jax", "{:.2f}"),
            ("JAX/JAX", "jax_over_jax", "{:.2f}"),
        ],
        speed,
    )
    print(
        f"(s2s.jvp(g) each call: median of {jvp_calls} calls, each checking its tangents against the primals in Python, then running the cached compiled module)"
    )
    print_table(
        f"Compile time from cold caches (median of {compile_repeats})",
        [
            ("workload", "workload", "{}"),
            ("s2s call", "s2s_call", "{}"),
            ("s2s transform ms", "transform_ms", "{:.0f}"),
            ("trace+lower ms", "trace_lower_ms", "{:.0f}"),
            ("XLA compile ms", "xla_compile_ms", "{:.0f}"),
            ("s2s total ms", "s2s_total_ms", "{:.0f}"),
            ("JAX total ms", "jax_total_ms", "{:.0f}"),
        ],
        compile_rows,
    )
    print("\nStatus checks (small sizes):")
    for line in status:
        print(f"  {line}")

    if opts.json:
        with open(opts.json, "w") as out:
            meta = {
                "device": f"{device.platform} ({device.device_kind})",
                "machine": machine,
                "jax": jax.__version__,
                "python": platform.python_version(),
            }
            results = {"speed": speed, "compile": compile_rows, "status": status}
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
