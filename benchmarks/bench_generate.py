"""Compiler throughput: the time to generate a gradient module, by phase, on programs written as users write them.

Every top-level function of the test suite's program modules (``tests/programs``:
control flow, objects, closures, library calls, ...) and of ``examples/`` is
transformed once (``s2s.codegen.generate``, ``grad`` of its first parameter),
in one process, from an empty module cache; functions s2s refuses are skipped
(their error is part of the time). Nothing runs through JAX: this is the
compiler alone, the part of a first call (and of the test suite) that s2s owns.

Phases are timed by wrapping the compiler's entry points; a phase's time
includes the phases it calls (``lower`` holds ``desugar`` and ``resolve``;
``build`` holds ``lower``), so the rows do not add up to the total.

    python benchmarks/bench_generate.py [--repeat N] [--profile PATH]
"""

import argparse
import collections
import cProfile
import importlib
import inspect
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

# (module, attribute) of each timed entry point
PHASES = {
    "build (read, lower, summarize)": ("s2s.program", "build"),
    "lower": ("s2s.pipeline", "lower"),
    "desugar": ("s2s.pipeline", "desugared"),
    "resolve": ("s2s.frontend.resolve", "resolve"),
    "read source (load)": ("s2s.frontend.source", "load"),
    "reverse": ("s2s.transforms.reverse", "reverse"),
    "render": ("s2s.emit.module", "render"),
    "black": ("s2s.emit.module", "_format_once"),
    "fuse": ("s2s.emit.module", "fuse"),
}


def _functions():
    """``(label, function)`` of every top-level function of the program modules and examples."""
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "examples")]
    modules = [
        f"programs.{p.stem}"
        for p in sorted((ROOT / "tests/programs").glob("[a-z]*.py"))
    ]
    modules += [p.stem for p in sorted((ROOT / "examples").glob("[a-z]*.py"))]
    for name in modules:
        try:
            module = importlib.import_module(name)
        except Exception:  # a module needing what this machine lacks
            continue
        for attr, fn in vars(module).items():
            if (
                inspect.isfunction(fn)
                and fn.__module__ == module.__name__
                and not attr.startswith("_")
                and inspect.signature(fn).parameters
            ):
                yield f"{name}.{attr}", fn


def _timed(totals, label, fn):
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[label] += time.perf_counter() - start

    return timed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="passes over the programs (fresh caches each)",
    )
    parser.add_argument(
        "--profile", help="write a cProfile of the whole run to this path"
    )
    args = parser.parse_args()

    import os
    import tempfile

    os.environ["S2S_CACHE_DIR"] = tempfile.mkdtemp(prefix="s2s-bench-")
    from s2s import codegen
    from s2s.errors import S2SError

    totals = collections.Counter()
    for label, (module, attr) in PHASES.items():
        owner = importlib.import_module(module)
        original = getattr(owner, attr)
        setattr(owner, attr, _timed(totals, label, original))
        # modules that imported the function by name call it through their own binding
        for other in list(sys.modules.values()):
            if (
                getattr(other, "__name__", "").startswith("s2s")
                and getattr(other, attr, None) is original
            ):
                setattr(other, attr, getattr(owner, attr))

    functions = list(_functions())
    profile = cProfile.Profile() if args.profile else None
    done = refused = 0
    start = time.perf_counter()
    for _ in range(args.repeat):
        from s2s.frontend import source

        source._parse.cache_clear()
        for label, fn in functions:
            if profile:
                profile.enable()
            try:
                codegen.generate(fn, ("grad",), 0)
                done += 1
            except S2SError:
                refused += 1
            except Exception as e:  # an internal error: a bug to report
                refused += 1
                print(
                    f"{label}: internal error {type(e).__name__}: {e}", file=sys.stderr
                )
            finally:
                if profile:
                    profile.disable()
    total = time.perf_counter() - start
    if profile:
        profile.dump_stats(args.profile)
    print(
        f"{len(functions)} functions x {args.repeat}: {done} generated, {refused} refused"
    )
    print(f"total {total:.2f} s, {1000 * total / (done + refused):.1f} ms per function")
    for label, seconds in sorted(totals.items(), key=lambda r: -r[1]):
        print(f"  {label:32s} {seconds:7.2f} s  {100 * seconds / total:5.1f}%")


if __name__ == "__main__":
    main()
