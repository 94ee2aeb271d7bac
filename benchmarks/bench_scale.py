"""Transform time against program size: one expression of N terms, and a function of N statements.

Issue 13 asks for 1,000 terms and 2,000 statements to transform without
recursion errors, in time roughly linear in their size. Each program is
written to a file of its own and transformed once (``s2s.generate`` of its
gradient, in one process); the ms per term (or
statement) column should stay about flat as the size doubles.

    python benchmarks/bench_scale.py [--quick]
"""

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import s2s


def _terms(n: int) -> str:
    terms = " + ".join(f"x[{i % 7}] * x[{(i + 1) % 7}]" for i in range(n))
    return f"import numpy as np\n\n\ndef f(x):\n    return {terms}\n"


def _statements(n: int) -> str:
    lines = ["import numpy as np", "", "", "def f(x):", "    h = x"]
    lines += [
        f"    h = np.tanh(h * {1 + (i % 5) * 0.1:.1f}) + x[{i % 3}]" for i in range(n)
    ]
    return "\n".join([*lines, "    return np.sum(h)", ""])


def _seconds(text: str, folder: Path, name: str) -> float:
    path = folder / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    start = time.perf_counter()
    s2s.generate(module.f, ("grad",))
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    opts = parser.parse_args(argv)
    sizes = {
        "terms": (100, 200) if opts.quick else (250, 500, 1000),
        "statements": (100, 200) if opts.quick else (500, 1000, 2000),
    }
    makers = {"terms": _terms, "statements": _statements}
    print(
        f"python {sys.version.split()[0]}, s2s.generate(f, ('grad',)), each program once"
    )
    print(f"{'program':<22} | {'seconds':>8} | {'ms per unit':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, ns in sizes.items():
            for n in ns:
                seconds = _seconds(makers[kind](n), Path(tmp), f"{kind}_{n}")
                print(
                    f"{n:>6} {kind:<15} | {seconds:>8.2f} | {1000 * seconds / n:>11.2f}"
                )


if __name__ == "__main__":
    main()
