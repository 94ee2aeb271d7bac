"""Differential-testing campaign for s2s (issue 10: no silent wrong answer).

    python benchmarks/fuzz_trust.py --programs 10000 --seed 0
    python benchmarks/fuzz_trust.py --replay /tmp/s2s-fuzz/mismatch_123.json
    python benchmarks/fuzz_trust.py --replay /tmp/s2s-fuzz/mismatch_123.py   # a hand-edited copy

Draws programs from ``tests/fuzz/programs.py`` (seeds ``seed .. seed+N-1``),
checks each with ``tests/fuzz/check.py`` (s2s.grad / value_and_grad / jvp on
the NumPy backend, and on XLA for a fraction of the programs, against
``jax.grad``/``jax.jvp`` of the ``jax.numpy`` twin, with finite differences
vetting the twin), prints a summary (checked, skipped, refused by construct,
crashes, mismatches by cause; programs per second) and writes every failure
into ``--out`` (default /tmp/s2s-fuzz/): ``<kind>_<seed>.py`` (the program, a
header comment with the error), ``<kind>_<seed>_twin.py`` and
``<kind>_<seed>.json`` (seed, argnums, arguments code, findings).

``--replay`` takes a ``.json`` (regenerates the program from its seed unless a
``.py`` of the same name sits beside it, which is then read: edit it to shrink
a failure; edit ``_twin.py`` too when you change the program's meaning) and
prints every finding in full.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def _snapshot(folder):
    """Test the committed s2s (HEAD) rather than the working tree other engineers are editing.

    Extracts ``s2s``, ``runtime`` and ``cli`` at HEAD into ``folder/<commit>/s2s`` (the
    installed layout: ``s2s.runtime``, ``s2s.cli``) and re-runs this script with that folder
    first on ``PYTHONPATH``.
    """
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    base = Path(folder) / f"snapshot-{commit}"
    if not (base / "s2s" / "__init__.py").exists():
        # a private folder, renamed into place: processes started together may race here
        Path(folder).mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder, prefix=f"snapshot-{commit}."))
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "HEAD", "s2s", "runtime", "cli"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        (tmp / "runtime").rename(tmp / "s2s" / "runtime")
        (tmp / "cli").rename(tmp / "s2s" / "cli")
        try:
            tmp.rename(base)
        except OSError:  # another process made it first (a running one may be using it)
            shutil.rmtree(tmp)
    env = dict(
        os.environ,
        PYTHONPATH=f"{base}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        S2S_FUZZ_SNAPSHOT=commit,
    )
    argv = [a for a in sys.argv if a != "--snapshot"]
    os.execve(sys.executable, [sys.executable] + argv, env)


if "--snapshot" in sys.argv and "S2S_FUZZ_SNAPSHOT" not in os.environ:
    _snapshot("/tmp/s2s-fuzz-snapshots")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

from fuzz import check as checker  # noqa: E402
from fuzz.programs import KNOWN, Program, generate  # noqa: E402


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout("program took too long")


def run_one(program, work, xla, timeout, avoid=frozenset(), oracle="jax"):
    backends = ("numpy", "xla") if xla else ("numpy",)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        return checker.check(
            program,
            work,
            backends=backends,
            modes=checker.CAMPAIGN_MODES,
            avoid=avoid,
            oracle=oracle,
        )
    except Timeout:
        return checker.Outcome(
            "crash",
            [checker.Finding("crash", "all", f"timeout after {timeout} s", "timeout")],
        )
    except Exception as e:  # (broad on purpose) a checker bug must not end the campaign
        import traceback

        return checker.Outcome(
            "oracle",
            note="checker failed: " + "".join(traceback.format_exception(e))[-2000:],
        )
    finally:
        signal.alarm(0)


def save(program, outcome, out):
    out.mkdir(parents=True, exist_ok=True)
    kind = outcome.worst()
    stem = out / f"{kind}_{program.seed}"
    header = "".join(
        f"# {f.kind} in {f.mode}: " + f.message.replace("\n", "\n# ") + "\n"
        for f in outcome.findings
    )
    if outcome.note:
        header += (
            f"# {outcome.status}: {outcome.note}\n".replace("\n", "\n# ").rstrip("# ")
            + "\n"
        )
    Path(f"{stem}.py").write_text(program.source)
    Path(f"{stem}_twin.py").write_text(program.twin)
    Path(f"{stem}.txt").write_text(header)
    record = {
        "seed": program.seed,
        "entry": program.entry,
        "argnums": list(program.argnums),
        "args_code": program.args_code,
        "features": program.features,
        "oracle": program.oracle,
        "has_aux": program.has_aux,
        "numpy_source": program.numpy_source,
        "status": kind,
        "note": outcome.note,
        "findings": [vars(f) for f in outcome.findings],
    }
    Path(f"{stem}.json").write_text(json.dumps(record, indent=1))


def replay(path, work, timeout, shrink_it=False):
    path = Path(path)
    record = json.loads(path.with_suffix(".json").read_text())
    program = generate(record["seed"])
    source = path.with_suffix(".py")
    if source.exists():
        twin_path = source.with_name(source.stem + "_twin.py")
        program = Program(
            record["seed"],
            source.read_text(),
            record["entry"],
            record["args_code"],
            tuple(record["argnums"]),
            record.get("features", []),
            record.get("oracle", program.oracle),
            record.get("has_aux", program.has_aux),
            record.get("numpy_source", ""),
        )
        if (
            twin_path.exists()
            and twin_path.read_text() != generate(record["seed"]).twin
            and "--shrink" not in sys.argv
        ):
            # a hand-edited twin (else: made from the .py)
            program = _with_twin(program, twin_path.read_text())
    print(program.source)
    print(program.args_code)
    print("argnums", program.argnums)
    outcome = run_one(program, work, True, timeout)
    print("status:", outcome.worst(), outcome.note)
    for f in outcome.findings:
        print(f"--- {f.kind} in {f.mode} ({f.key})\n{f.message}")
    if shrink_it and outcome.findings:
        from fuzz.shrink import shrink, signature_of

        signature = signature_of(outcome)
        xla = any(
            f.mode.endswith("xla")
            for f in outcome.findings
            if (f.kind, f.key) == signature
        ) and not any(
            f.mode.endswith("numpy")
            for f in outcome.findings
            if (f.kind, f.key) == signature
        )
        # (a program's own oracle choice wins inside check)
        oracle = "fd" if program.oracle == "fd" else "jax"
        print(f"shrinking {signature} ...", flush=True)
        small = shrink(
            program,
            signature,
            lambda p: run_one(p, work, xla, timeout, oracle=oracle),
            log=lambda m: print(m, flush=True),
        )
        out = path.with_name(path.stem.removesuffix("_min") + "_min.py")
        out.write_text(small.source)
        print(f"\n=== shrunk ({out}):\n{small.source}")
        final = run_one(small, work, True, timeout, oracle=oracle)
        for f in final.findings:
            print(f"--- {f.kind} in {f.mode} ({f.key})\n{f.message[-1500:]}")


def _with_twin(program, twin_text):
    class Edited(Program):
        @property
        def twin(self):
            return twin_text

    return Edited(
        program.seed,
        program.source,
        program.entry,
        program.args_code,
        program.argnums,
        program.features,
        program.oracle,
        program.has_aux,
    )


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--programs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="only 1 is supported (one process; the machine is shared)",
    )
    ap.add_argument(
        "--xla-every",
        type=int,
        default=4,
        help="check the XLA backend on every k-th program (0: never)",
    )
    ap.add_argument(
        "--jax-every",
        type=int,
        default=4,
        help="jax.grad of the twin as the oracle on every k-th program; float64 finite differences on the others (1: always)",
    )
    ap.add_argument("--out", default="/tmp/s2s-fuzz")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per program")
    ap.add_argument(
        "--replay",
        help="a failure's .json (or its edited .py) to run again and print in full",
    )
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument(
        "--shrink",
        action="store_true",
        help="with --replay: shrink the failure (drop statements while it persists), write <stem>_min.py",
    )
    ap.add_argument(
        "--snapshot",
        action="store_true",
        help="test s2s as committed at HEAD (a copy), not the working tree",
    )
    ap.add_argument(
        "--avoid-known",
        action="store_true",
        help="steer the generator away from known open bugs (exploration only)",
    )
    opts = ap.parse_args()
    import warnings

    import numpy as np

    # overflow and 0/0 warnings of generated code at ill-defined points
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    out = Path(opts.out)
    work = out / "work"
    os.environ.setdefault("S2S_CACHE_DIR", str(out / "cache"))
    import s2s

    print(
        f"s2s from {Path(s2s.__file__).parent}"
        + (
            f" (HEAD {os.environ['S2S_FUZZ_SNAPSHOT']})"
            if "S2S_FUZZ_SNAPSHOT" in os.environ
            else ""
        ),
        flush=True,
    )
    if opts.replay:
        return replay(opts.replay, work, opts.timeout, opts.shrink)
    avoid = frozenset(KNOWN) if opts.avoid_known else frozenset()
    counts = collections.Counter()
    causes = collections.Counter()
    examples = {}
    features = collections.Counter()
    start = time.time()
    for n, seed in enumerate(range(opts.seed, opts.seed + opts.programs)):
        try:
            program = generate(seed, avoid)
        except Exception as e:  # (broad on purpose) a generator bug
            counts["generator error"] += 1
            print(f"seed {seed}: generator error {e!r}", flush=True)
            continue
        xla = opts.xla_every > 0 and n % opts.xla_every == 0
        oracle = "jax" if opts.jax_every > 0 and n % opts.jax_every == 0 else "fd"
        outcome = run_one(program, work, xla, opts.timeout, avoid, oracle)
        kind = outcome.worst()
        counts[kind] += 1
        if kind in ("ok", "refused", "unhelpful", "crash", "mismatch"):
            counts["checked"] += 1
            features.update(program.features)
        for f in outcome.findings:
            causes[(f.kind, f.key)] += 1
            examples.setdefault((f.kind, f.key), seed)
        if kind not in ("ok", "skipped"):
            save(program, outcome, out)
        if not opts.quiet and kind not in ("ok", "skipped", "refused"):
            first = outcome.findings[0].key if outcome.findings else outcome.note[:150]
            print(f"seed {seed}: {kind}: {first}", flush=True)
        if (n + 1) % 50 == 0:
            rate = (n + 1) / (time.time() - start)
            print(
                f"[{n + 1}/{opts.programs}] {rate:.2f} programs/s {dict(counts)}",
                flush=True,
            )
    elapsed = time.time() - start
    print("\n=== summary ===")
    print(
        f"programs: {opts.programs} (seeds {opts.seed}..{opts.seed + opts.programs - 1}), {elapsed:.0f} s, {opts.programs / elapsed:.2f} programs/s"
    )
    print(f"checked (well-defined, run through s2s): {counts['checked']}")
    print(
        f"  ok: {counts['ok']}, refused: {counts['refused']}, unhelpful refusals: {counts['unhelpful']}, crashes: {counts['crash']}, mismatches: {counts['mismatch']}"
    )
    print(
        f"skipped (kink or tie at the point): {counts['skipped']}, oracle/generator problems: {counts['oracle']}"
    )
    for kind in ("mismatch", "crash", "unhelpful", "refused"):
        rows = sorted(
            ((c, key) for (k, key), c in causes.items() if k == kind), reverse=True
        )
        if rows:
            print(f"\n{kind} by cause (findings, first seed):")
            for c, key in rows:
                print(f"  {c:5d}  seed {examples[(kind, key)]:6d}  {key}")
    print("\nfeatures of checked programs:", dict(features.most_common()))
    print(f"failures written to {out}/")


if __name__ == "__main__":
    main()
