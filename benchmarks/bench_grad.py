"""Gradient speed: s2s against JAX, side by side in one process, float32.

For each model this times, after warm-up, the s2s gradient (``s2s.grad(f)``,
compiled through ``jax.jit``) and ``jax.jit(jax.grad(twin))`` where ``twin`` is
the same source run with ``np`` bound to ``jax.numpy``; the jitted forward pass
gives the gradient/forward cost ratio of each. Calls run in alternating
blocks, each call ended by ``block_until_ready``; a timing is the median of
the fastest block. A
second, separately jitted copy of JAX's gradient is timed the same way: the
JAX/JAX column is this machine's noise floor, the yardstick for s2s/JAX. It
also reports how long s2s takes to write the gradient source (median of five
cold transformations, s2s's caches cleared before each).

    python benchmarks/bench_grad.py [--quick] [--reps N] [--json PATH]
"""

import argparse
import json
import platform
import statistics
import sys
import time

import jax
import numpy as np
from _twins import jax_twin, load_example

import s2s

DTYPE = np.float32


def _warmup(x):
    """A throwaway function transformed first, so library imports don't count in the first model's time."""
    return np.sum(np.tanh(x) * x)


def timed(fns, args, reps, rounds=10):
    """Seconds per call of each function in ``fns`` (a dict), after warm-up: the best block median.

    Each function runs in back-to-back blocks, so a call never follows another
    function's call (whose freed buffers and cache state would colour its
    time); ``rounds`` blocks per function alternate, in rotating order, so slow
    phases of the machine hit every function alike. The fastest block's median
    is the estimate least disturbed by the machine (timeit's advice: the
    minimum, here over medians).
    """
    for fn in fns.values():
        jax.block_until_ready(fn(*args))  # compile
        jax.block_until_ready(fn(*args))
    names = list(fns)
    blocks = {name: [] for name in fns}
    block = max(1, reps // rounds)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            # settle into this function's buffers
            jax.block_until_ready(fns[name](*args))
            times = []
            for _ in range(block):
                start = time.perf_counter()
                jax.block_until_ready(fns[name](*args))
                times.append(time.perf_counter() - start)
            blocks[name].append(statistics.median(times))
    return {name: min(medians) for name, medians in blocks.items()}


def transform_seconds(f, repeats=5):
    """Median seconds for s2s to write ``f``'s gradient source, cold each time (s2s's caches cleared)."""
    from s2s import api
    from s2s.frontend import source

    times = []
    for _ in range(repeats):
        api._CACHE.clear()
        source._parse.cache_clear()
        start = time.perf_counter()
        _ = s2s.grad(f).source
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def workloads(quick):
    """(name, function, float32 arguments on the device) for each benchmarked model."""
    rng = np.random.default_rng(0)
    batch, width = (16, 32) if quick else (256, 512)
    mlp = load_example("examples/mlp.py")
    yield (
        f"MLP 3x tanh (batch {batch}, width {width})",
        mlp.loss,
        (
            mlp.init(rng, [width, width, width, 10], DTYPE),
            *mlp.data(rng, batch, width, 10, DTYPE),
        ),
    )
    length, width = (16, 8) if quick else (256, 64)
    attention = load_example("examples/attention.py")
    x, y = (rng.standard_normal((length, width)).astype(DTYPE) for _ in range(2))
    yield (
        f"attention + layer norm (seq {length}, width {width})",
        attention.loss,
        (attention.init(rng, width, DTYPE), x, y),
    )
    n = 64 if quick else 2000
    polynomial = load_example("examples/polynomial.py")
    yield (
        f"sum(x + x*x + x*x*x) ({n}x{n})",
        polynomial.f,
        (rng.uniform(-1, 1, (n, n)).astype(DTYPE),),
    )


def check_agree(name, ours, theirs, args, atol=1e-5):
    """Exit unless ``ours(*args)`` is ``theirs(*args)``, leaf by leaf, to float32 rounding:
    ``|a - b| <= 1e-3 |b| + atol * m``, ``m`` the leaf's largest magnitude (at least 1); the message gives
    the largest difference, over ``m``. Both run with float32 matrix products at full precision: a GPU's
    default (TF32 on NVIDIA's) rounds them to about 1e-3, differently for different but equal expressions;
    the timings use the default.
    """
    with jax.default_matmul_precision("highest"):
        ours, theirs = ours(*args), theirs(*args)
    if jax.tree_util.tree_structure(ours) != jax.tree_util.tree_structure(theirs):
        sys.exit(
            f"{name}: s2s's result has structure {jax.tree_util.tree_structure(ours)}, "
            f"JAX's {jax.tree_util.tree_structure(theirs)}"
        )
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        a, b = np.asarray(a), np.asarray(b)
        scale = max(1.0, float(np.abs(b).max())) if b.size else 1.0
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-3, atol=atol * scale):
            worst = float(np.abs(a - b).max()) / scale if a.shape == b.shape else None
            sys.exit(
                f"{name}: s2s and JAX disagree (shapes {a.shape} and {b.shape}, largest difference "
                f"{worst if worst is None else f'{worst:.1e}'} of the largest magnitude); "
                "timings would be meaningless"
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes and few repetitions (smoke run)",
    )
    parser.add_argument(
        "--reps", type=int, help="timed calls per function (default 50, 3 with --quick)"
    )
    parser.add_argument(
        "--json", metavar="PATH", help="also write the results to PATH as JSON"
    )
    opts = parser.parse_args(argv)
    reps = opts.reps or (3 if opts.quick else 50)

    transform_seconds(_warmup)
    rows = []
    for name, f, args in workloads(opts.quick):
        transform = transform_seconds(f)
        args = jax.device_put(args)
        twin = jax_twin(f)
        ours, theirs = s2s.grad(f), jax.jit(jax.grad(twin))
        check_agree(name, ours, theirs, args)
        # JAX against itself: the noise floor of this machine
        control = jax.jit(jax.grad(jax_twin(f)))
        t = timed(
            {"s2s": ours, "jax": theirs, "control": control, "forward": jax.jit(twin)},
            args,
            reps,
        )
        rows.append(
            {
                "model": name,
                "s2s_grad_ms": 1e3 * t["s2s"],
                "jax_grad_ms": 1e3 * t["jax"],
                "s2s_over_jax": t["s2s"] / t["jax"],
                "jax_over_jax": t["control"] / t["jax"],
                "forward_ms": 1e3 * t["forward"],
                "s2s_grad_over_forward": t["s2s"] / t["forward"],
                "jax_grad_over_forward": t["jax"] / t["forward"],
                "transform_ms": 1e3 * transform,
            }
        )

    device = jax.devices()[0]
    header = f"{device.platform} ({device.device_kind}), jax {jax.__version__}, float32, best of 10 block medians, {max(1, reps // 10)} calls a block"
    columns = [
        ("model", "model", "{}"),
        ("s2s grad ms", "s2s_grad_ms", "{:.3f}"),
        ("JAX grad ms", "jax_grad_ms", "{:.3f}"),
        ("s2s/JAX", "s2s_over_jax", "{:.2f}"),
        ("JAX/JAX", "jax_over_jax", "{:.2f}"),
        ("forward ms", "forward_ms", "{:.3f}"),
        ("s2s grad/fwd", "s2s_grad_over_forward", "{:.2f}"),
        ("JAX grad/fwd", "jax_grad_over_forward", "{:.2f}"),
        ("transform ms", "transform_ms", "{:.1f}"),
    ]
    table = [[title for title, _, _ in columns]]
    table += [[fmt.format(row[key]) for _, key, fmt in columns] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    print(header)
    for i, line in enumerate(table):
        print(
            " | ".join(
                cell.ljust(w) if j == 0 else cell.rjust(w)
                for j, (cell, w) in enumerate(zip(line, widths))
            )
        )
        if i == 0:
            print("-+-".join("-" * w for w in widths))

    if opts.json:
        with open(opts.json, "w") as out:
            meta = {
                "device": f"{device.platform} ({device.device_kind})",
                "jax": jax.__version__,
                "python": platform.python_version(),
            }
            json.dump(
                {
                    **meta,
                    "dtype": "float32",
                    "reps": reps,
                    "quick": opts.quick,
                    "rows": rows,
                },
                out,
                indent=2,
            )
            out.write("\n")


if __name__ == "__main__":
    main()
