"""A ``jax.nn`` MLP: ``s2s.grad`` against ``jax.jit(jax.grad(...))``, float32, one process.

The model (``_nn_models.py``) is JAX code as the documentation writes it:
``jax.nn.relu`` and ``jax.nn.gelu`` hidden layers, ``jax.nn.log_softmax``
cross-entropy with ``jax.nn.one_hot`` labels. s2s resolves each ``jax.nn``
function by identity (``rt.nn.relu``, ``rt.nn.gelu`` expanded into JAX's
formula, ``log_softmax`` into its stop-gradient max form) and writes the
gradient; JAX differentiates the same function. Timed as in ``bench_grad.py``
(its ``timed``: alternating blocks, each call ended by ``block_until_ready``,
median of the fastest block); a second, separately jitted copy of JAX's
gradient gives the JAX/JAX noise floor.

    python benchmarks/bench_jax_style_nn.py [--quick] [--reps N] [--json PATH]
"""

import argparse
import itertools
import json
import platform

import _nn_models as models
import jax
import numpy as np
from bench_grad import _warmup, check_agree, timed, transform_seconds

import s2s

DTYPE = np.float32


def workloads(quick):
    """(name, loss, arguments) for each size."""
    rng = np.random.default_rng(0)
    sizes = [(32, 64)] if quick else [(128, 256), (1024, 1024)]
    for batch, width in sizes:
        dims = [784, width, width, 10]
        params = [
            (
                (rng.standard_normal((m, n)) / np.sqrt(m)).astype(DTYPE),
                np.zeros(n, DTYPE),
            )
            for m, n in itertools.pairwise(dims)
        ]
        images = rng.standard_normal((batch, 784)).astype(DTYPE)
        labels = rng.integers(0, 10, batch).astype(np.int32)
        name = f"jax.nn MLP relu/gelu, log_softmax xent (batch {batch}, width {width})"
        yield name, models.mlp_loss, (params, images, labels)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small size, few repetitions"
    )
    parser.add_argument(
        "--reps", type=int, help="timed calls per function (default 50, 3 with --quick)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    opts = parser.parse_args(argv)
    reps = opts.reps or (3 if opts.quick else 50)

    transform_seconds(_warmup)
    rows = []
    for name, f, args in workloads(opts.quick):
        transform = transform_seconds(f)
        args = jax.device_put(args)
        ours, theirs = s2s.grad(f), jax.jit(jax.grad(f))
        check_agree(name, ours, theirs, args)
        control = jax.jit(jax.grad(f))  # JAX against itself: the noise floor
        t = timed({"s2s": ours, "jax": theirs, "control": control}, args, reps)
        rows.append(
            {
                "model": name,
                "s2s_grad_ms": 1e3 * t["s2s"],
                "jax_grad_ms": 1e3 * t["jax"],
                "s2s_over_jax": t["s2s"] / t["jax"],
                "jax_over_jax": t["control"] / t["jax"],
                "transform_ms": 1e3 * transform,
            }
        )

    device = jax.devices()[0]
    print(f"{device.platform} ({device.device_kind}), jax {jax.__version__}, float32")
    for row in rows:
        print(
            f"{row['model']}: s2s {row['s2s_grad_ms']:.3f} ms, JAX {row['jax_grad_ms']:.3f} ms, "
            f"s2s/JAX {row['s2s_over_jax']:.2f}, JAX/JAX {row['jax_over_jax']:.2f}, "
            f"transform {row['transform_ms']:.0f} ms"
        )
    if opts.json:
        with open(opts.json, "w") as out:
            meta = {
                "device": f"{device.platform} ({device.device_kind})",
                "jax": jax.__version__,
                "python": platform.python_version(),
            }
            json.dump(
                {**meta, "dtype": "float32", "reps": reps, "rows": rows}, out, indent=2
            )
            out.write("\n")


if __name__ == "__main__":
    main()
