"""``.at[]``-heavy loops written in JAX's style: ``s2s.grad`` against ``jax.jit(jax.grad(f))``, float32.

The workload (``buffer_loss``) is a recurrent cell whose states are written row
by row into a buffer with ``h = h.at[t].set(state)`` in a Python ``for`` loop,
then read back pairwise (``h[t] * h[T - 1 - t]``) in a second loop; it is the
same source for both: JAX traces the Python loops (unrolled, ``T`` copies),
s2s lowers each to one rolled ``scan`` whose buffer updates are in-place
``dynamic_update_slice``s. Two ``lax.scan`` versions are timed alongside:
the same algorithm (the buffer carried through the scan, ``buffer_loss_carry``:
s2s's rolled loops are this program) and the one a JAX expert writes instead
(the states stacked as the scan's outputs, ``buffer_loss_scan``: no buffer, so
no per-step buffer writes in the backward pass). A second row times the scatter-add and segment-max
by ``.at[idx].add`` / ``.at[idx].max`` (``segment_loss``). A separately jitted
copy of JAX's gradient gives the JAX/JAX noise floor. Timing as in
``bench_grad.py`` (its ``timed``: alternating blocks, ``block_until_ready``,
median of the fastest block).

    python benchmarks/bench_jax_style_at.py [--quick] [--reps N] [--json PATH]
"""

import argparse
import json
import platform

import jax
import jax.numpy as jnp
import numpy as np
from bench_grad import check_agree, timed, transform_seconds

import s2s

DTYPE = np.float32


def buffer_loss(W, U, x):
    steps, batch = x.shape[0], x.shape[1]
    h = jnp.zeros((steps, batch, W.shape[1]), x.dtype)
    state = jnp.zeros((batch, W.shape[1]), x.dtype)
    for t in range(steps):
        state = jnp.tanh(x[t] @ W + state @ U)
        h = h.at[t].set(state)
    total = 0.0
    for t in range(steps):
        total = total + jnp.sum(h[t] * h[steps - 1 - t])
    return total / steps


def buffer_loss_carry(W, U, x):
    """``buffer_loss``'s algorithm with ``lax.scan`` by hand: the buffer carried, written with ``.at[t].set``."""

    def write(carry, t):
        state, h = carry
        state = jnp.tanh(x[t] @ W + state @ U)
        return (state, h.at[t].set(state)), None

    steps, batch = x.shape[0], x.shape[1]
    init = (
        jnp.zeros((batch, W.shape[1]), x.dtype),
        jnp.zeros((steps, batch, W.shape[1]), x.dtype),
    )
    (_, h), _ = jax.lax.scan(write, init, jnp.arange(steps))

    def read(total, t):
        return total + jnp.sum(h[t] * h[steps - 1 - t]), None

    total, _ = jax.lax.scan(read, jnp.zeros((), x.dtype), jnp.arange(steps))
    return total / steps


def buffer_loss_scan(W, U, x):
    """``buffer_loss`` as a JAX expert writes it: ``lax.scan`` stacks the states, one pass reads them."""

    def step(state, xt):
        state = jnp.tanh(xt @ W + state @ U)
        return state, state

    steps = x.shape[0]
    _, h = jax.lax.scan(step, jnp.zeros((x.shape[1], W.shape[1]), x.dtype), x)
    return jnp.sum(h * h[::-1]) / steps


def segment_loss(w, x, segments):
    scores = jnp.tanh(x @ w)
    sums = jnp.zeros((64, scores.shape[1]), scores.dtype).at[segments].add(scores)
    best = jnp.full((64, scores.shape[1]), -2.0, scores.dtype).at[segments].max(scores)
    return jnp.sum(sums**2) + jnp.sum(best)


BY_HAND = {
    "scan_carry": "jax.grad of lax.scan carrying the buffer (the same algorithm)",
    "scan_ys": "jax.grad of lax.scan stacking the states (no buffer: another algorithm)",
}


def workloads(quick):
    rng = np.random.default_rng(0)
    steps, batch, width = (8, 4, 8) if quick else (64, 32, 128)

    def n(*shape, scale=1.0):
        return (scale * rng.standard_normal(shape)).astype(DTYPE)

    yield (
        f"RNN states into a buffer, `.at[t].set` (T={steps}, batch {batch}, width {width})",
        buffer_loss,
        (
            n(width, width, scale=0.1),
            n(width, width, scale=0.1),
            n(steps, batch, width),
        ),
        (0, 1),
        {"scan_carry": buffer_loss_carry, "scan_ys": buffer_loss_scan},
    )
    rows, width = (64, 8) if quick else (4096, 64)
    yield (
        f"scatter-add and segment max, `.at[idx].add/.max` ({rows} rows, width {width}, 64 segments)",
        segment_loss,
        (n(width, width, scale=0.1), n(rows, width), rng.integers(0, 64, rows)),
        0,
        {},
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument(
        "--reps", type=int, help="timed calls per function (default 100)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    opts = parser.parse_args(argv)
    reps = opts.reps or (3 if opts.quick else 100)

    rows = []
    for name, f, args, argnums, by_hand in workloads(opts.quick):
        transform = transform_seconds(f)
        args = jax.device_put(args)
        ours = s2s.grad(f, argnums=argnums)
        theirs = jax.jit(jax.grad(f, argnums=argnums))
        check_agree(name, ours, theirs, args)
        control = jax.jit(jax.grad(f, argnums=argnums))
        fns = {"s2s": ours, "jax": theirs, "control": control}
        for (
            key,
            written,
        ) in by_hand.items():  # the same work written with lax.scan by hand
            fns[key] = jax.jit(jax.grad(written, argnums=argnums))
            check_agree(name, ours, fns[key], args)
        t = timed(fns, args, reps)
        row = {
            "model": name,
            "s2s_grad_ms": 1e3 * t["s2s"],
            "jax_grad_ms": 1e3 * t["jax"],
            "s2s_over_jax": t["s2s"] / t["jax"],
            "jax_over_jax": t["control"] / t["jax"],
            "transform_ms": 1e3 * transform,
        }
        for key in by_hand:
            row[f"{key}_grad_ms"] = 1e3 * t[key]
            row[f"s2s_over_{key}"] = t["s2s"] / t[key]
        rows.append(row)
    device = jax.devices()[0]
    print(f"{device.platform} ({device.device_kind}), jax {jax.__version__}, float32")
    for row in rows:
        print(
            f"{row['model']}: s2s {row['s2s_grad_ms']:.3f} ms, JAX {row['jax_grad_ms']:.3f} ms, "
            f"s2s/JAX {row['s2s_over_jax']:.2f}, JAX/JAX {row['jax_over_jax']:.2f}, "
            f"transform {row['transform_ms']:.0f} ms"
        )
        for key, what in BY_HAND.items():
            if f"{key}_grad_ms" in row:
                print(
                    f"    {what}: {row[f'{key}_grad_ms']:.3f} ms, s2s/it {row[f's2s_over_{key}']:.2f}"
                )
    if opts.json:
        with open(opts.json, "w") as out:
            meta = {
                "device": f"{device.platform} ({device.device_kind})",
                "jax": jax.__version__,
                "python": platform.python_version(),
            }
            json.dump({**meta, "reps": reps, "rows": rows}, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
