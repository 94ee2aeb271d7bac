"""Programs written in JAX's own vocabulary: ``s2s.grad`` against ``jax.jit(jax.grad(f))`` of the same function.

Each workload is a function a JAX user writes (``jax.numpy``, ``jax.lax``, ...), so JAX runs the very
same source: no twin. Timing as in ``bench_grad.py`` (its ``timed``: alternating blocks, each call
ended by ``block_until_ready``, the median of the fastest block), float32, one process; a second,
separately jitted copy of JAX's gradient gives the JAX/JAX noise floor. The gradients are checked to
agree first. Each workload is a function of its own below (``WORKLOADS``):

- ``lax_scan_rnn``: a tanh RNN written by hand with ``lax.scan`` over time (the step a local ``def``
  closing over the parameters), squared error of a readout at every step; s2s lowers the
  ``lax.scan`` into its own ``rt.scan`` and differentiates that.

    python benchmarks/bench_jax_style.py [--quick] [--reps N] [--json PATH]
"""

import argparse
import json
import platform
import sys

import jax
import jax.numpy as jnp
import numpy as np
from bench_grad import check_agree, timed
from jax import lax

import s2s

DTYPE = np.float32


# --- lax.scan RNN ----------------------------------------------------------------------------


def rnn_loss(params, xs, ys):
    """An Elman RNN over ``xs`` (time, batch, input), the way the JAX docs write it."""

    def step(h, x):
        h = jnp.tanh(x @ params["Wx"] + h @ params["Wh"] + params["b"])
        return h, h @ params["Wo"]

    h0 = jnp.zeros((xs.shape[1], params["Wh"].shape[0]), xs.dtype)
    _, outputs = lax.scan(step, h0, xs)
    return jnp.mean((outputs - ys) ** 2)


def lax_scan_rnn(quick):
    """(name, function, argnums, float32 arguments) of the ``lax.scan`` RNN."""
    steps, batch, inputs, hidden = (16, 4, 8, 16) if quick else (100, 32, 64, 128)
    rng = np.random.default_rng(0)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(DTYPE)

    params = {
        "Wx": w(inputs, hidden),
        "Wh": w(hidden, hidden),
        "b": np.zeros(hidden, DTYPE),
        "Wo": w(hidden, 1),
    }
    xs = rng.standard_normal((steps, batch, inputs)).astype(DTYPE)
    ys = rng.standard_normal((steps, batch, 1)).astype(DTYPE)
    name = (
        f"lax.scan RNN (hidden {hidden}, batch {batch}, input {inputs}, {steps} steps)"
    )
    return name, rnn_loss, 0, (params, xs, ys)


WORKLOADS = [lax_scan_rnn]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small sizes and few repetitions"
    )
    parser.add_argument(
        "--reps", type=int, help="timed calls per function (default 50, 3 with --quick)"
    )
    parser.add_argument(
        "--json", metavar="PATH", help="also write the results to PATH as JSON"
    )
    opts = parser.parse_args(argv)
    reps = opts.reps or (3 if opts.quick else 50)
    rows = []
    for workload in WORKLOADS:
        name, f, argnums, args = workload(opts.quick)
        args = jax.device_put(args)
        ours = s2s.grad(f, argnums)
        theirs = jax.jit(jax.grad(f, argnums))
        check_agree(name, ours, theirs, args)
        control = jax.jit(jax.grad(lambda *a: f(*a), argnums))
        t = timed({"s2s": ours, "jax": theirs, "control": control}, args, reps)
        rows.append(
            {
                "model": name,
                "s2s_grad_ms": 1e3 * t["s2s"],
                "jax_grad_ms": 1e3 * t["jax"],
                "s2s_over_jax": t["s2s"] / t["jax"],
                "jax_over_jax": t["control"] / t["jax"],
            }
        )
    device = jax.devices()[0]
    print(
        f"{device.platform} ({device.device_kind}), jax {jax.__version__}, float32, "
        f"best of 10 block medians, {max(1, reps // 10)} calls a block"
    )
    for row in rows:
        print(
            f"{row['model']}: s2s {row['s2s_grad_ms']:.3f} ms, JAX {row['jax_grad_ms']:.3f} ms, "
            f"s2s/JAX {row['s2s_over_jax']:.2f}, JAX/JAX {row['jax_over_jax']:.2f}"
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
    return rows


if __name__ == "__main__":
    sys.exit(main() and 0)
