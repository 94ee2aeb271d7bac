"""``s2s generate``: regenerate the checked-in modules declared in ``pyproject.toml`` under ``[tool.s2s]``.

    [[tool.s2s.targets]]
    source = "model.py::loss"        # PATH::FUNC, relative to the project root
    transform = "grad"               # grad, value_and_grad, jvp, hessian, vmap, lower, vmap(grad), grad(grad)
    wrt = "params"                   # parameters to differentiate (grad, jvp, hessian; inside vmap(...))
    in_axes = "None,0,0"             # vmap: one per parameter, or one for all (as the CLI's --in-axes)
    out_axes = "0"                   # vmap
    output = "derivatives/loss_grad.py"

The project root is the nearest folder, from the working directory up, whose
``pyproject.toml`` has a ``[tool.s2s]`` table. A module is fresh when its
header (``s2s.provenance``) names the same target, the same s2s version and
the current hash of every input file, and its body is unedited: then nothing
is imported, neither the user's code nor the compiler. Stale modules are
generated in memory and written atomically; the bytes do not depend on the
folder the command runs in.
"""

from __future__ import annotations

import os
import sys
import tomllib
from dataclasses import dataclass

from s2s import provenance

from .main import UsageError, argnums_for, import_file, parse_axes, write_module

KINDS = {
    "grad": ("grad",),
    "value_and_grad": ("value_and_grad",),
    "jvp": ("jvp",),
    "vmap": ("batch",),
    "lower": ("primal",),
}
KEYS = {"source", "transform", "wrt", "in_axes", "out_axes", "output"}


@dataclass(frozen=True)
class Target:
    source: str  # PATH::FUNC, relative to the root
    transform: str
    output: str  # relative to the root
    wrt: str | None = None
    in_axes: str = "0"
    out_axes: str = "0"

    @property
    def path(self) -> str:
        return self.source.rpartition("::")[0]

    @property
    def chain(self) -> list[str]:
        """``vmap(grad)`` -> ``["vmap", "grad"]``; ``hessian`` is ``jvp(grad)``."""
        text, chain = self.transform.replace(" ", ""), []
        while "(" in text:
            outer, _, text = text.partition("(")
            chain.append(outer)
            text = text.removesuffix(")")
        chain.append(text)
        if chain[-1] == "hessian":
            chain[-1:] = ["jvp", "grad"]
        return chain

    def describe(self) -> str:
        """The canonical one-line description written in the module's header."""
        parts = [self.source, self.transform.replace(" ", "")]
        if self.wrt:
            parts.append(f"wrt={self.wrt}")
        if "vmap" in self.chain:
            parts += [f"in_axes={self.in_axes}", f"out_axes={self.out_axes}"]
        return " ".join(parts)


def find_root(start: str) -> tuple[str, dict]:
    """The project root at or above ``start`` and its ``[tool.s2s]`` table."""
    folder = os.path.abspath(start)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            try:
                with open(candidate, "rb") as f:
                    table = tomllib.load(f).get("tool", {}).get("s2s")
            except tomllib.TOMLDecodeError as e:
                raise UsageError(f"{candidate}: cannot read it: {e}") from None
            if table is not None:
                return folder, table
        parent = os.path.dirname(folder)
        if parent == folder:
            raise UsageError(
                "no pyproject.toml with a [tool.s2s] table here or in a folder above: "
                "declare the targets there (see `s2s generate --help`)"
            )
        folder = parent


def targets_of(table: dict) -> list[Target]:
    entries = table.get("targets")
    if not isinstance(entries, list) or not entries:
        raise UsageError(
            "[tool.s2s] declares no targets: add [[tool.s2s.targets]] tables"
        )
    found = []
    for i, entry in enumerate(entries, 1):
        where = f"[tool.s2s] target {i}"
        unknown = sorted(set(entry) - KEYS)
        if unknown:
            raise UsageError(
                f"{where}: unknown key {', '.join(map(repr, unknown))} (keys: {', '.join(sorted(KEYS))})"
            )
        for key in ("source", "transform", "output"):
            if not isinstance(entry.get(key), str):
                raise UsageError(f"{where}: `{key}` must be a string")
        wrt = entry.get("wrt")
        if isinstance(wrt, list):
            wrt = ",".join(wrt)
        values = {k: str(entry[k]) for k in ("in_axes", "out_axes") if k in entry}
        target = Target(
            entry["source"], entry["transform"], entry["output"], wrt, **values
        )
        if "::" not in target.source:
            raise UsageError(
                f"{where}: source must be PATH::FUNC, got {target.source!r}"
            )
        outer, *inner = target.chain
        if outer not in KINDS or any(k != "grad" for k in inner):
            raise UsageError(
                f"{where}: transform {target.transform!r}: expected one of {', '.join(KINDS)}, hessian, "
                "or one of them around grad (vmap(grad), grad(grad))"
            )
        found.append(target)
    return found


def _generate(target: Target, root: str):
    """The module of ``target``, through the API (the user's file is imported to read the function)."""
    import inspect

    import s2s

    path = os.path.join(root, target.path)
    if not os.path.isfile(path):
        raise UsageError(f"{target.path}: no such file (source of a [tool.s2s] target)")
    name = target.source.rpartition("::")[2]
    fn = getattr(import_file(path, name), name, None)
    if not inspect.isfunction(fn):
        raise UsageError(f"{target.path}: no function named `{name}`")
    outer, *inner = target.chain
    argnums = argnums_for(fn, target.wrt, default=None if outer == "jvp" else 0)
    for _ in inner:
        fn = s2s.grad(fn, argnums)
    options = {"target": target.describe(), "root": root, "command": "s2s generate"}
    if outer == "vmap":
        params = list(inspect.signature(fn).parameters)
        in_axes = parse_axes(target.in_axes, "in_axes")
        per = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(params)
        if len(per) != len(params):
            raise UsageError(
                f"{target.source}: in_axes names {len(per)} axes for {len(params)} parameters"
            )
        axes = (per, parse_axes(target.out_axes, "out_axes"), None, None)
        return s2s.generate(fn, KINDS[outer], axes=axes, **options)
    if outer == "lower":
        return s2s.generate(fn, KINDS[outer], **options)
    return s2s.generate(fn, KINDS[outer], argnums, **options)


def _selected(targets, root, paths) -> list[Target]:
    """The targets that any of ``paths`` is an input or the output of (all of them without paths)."""
    if not paths:
        return targets
    given = {provenance.relative(p, root) for p in paths}
    chosen = []
    for t in targets:
        inputs = provenance.inputs_of(os.path.join(root, t.output))
        if given & {t.path, t.output, *inputs}:
            chosen.append(t)
    return chosen


def run(paths, check: bool, fail_on_write: bool) -> int:
    from s2s import __version__

    root, table = find_root(os.getcwd())
    targets = targets_of(table)
    stale = [
        t
        for t in _selected(targets, root, paths)
        if not provenance.is_fresh(
            os.path.join(root, t.output), t.describe(), root, __version__
        )
    ]
    shown = {t: os.path.relpath(os.path.join(root, t.output)) for t in stale}
    if check:
        for t in stale:
            print(f"s2s: stale: {shown[t]} ({t.source} {t.transform})", file=sys.stderr)
        return 1 if stale else 0
    written = []
    for t in stale:
        generated = _generate(t, root)
        if generated.injected:
            names = ", ".join(sorted(generated.injected))
            raise UsageError(
                f"{t.source} reads module-level values that are not literals ({names}); "
                "a generated file cannot carry them: pass them as arguments"
            )
        output = os.path.join(root, t.output)
        write_module(output, generated.text, os.path.join(root, t.path))
        written.append(shown[t])
        print(f"s2s: regenerated {shown[t]}", file=sys.stderr)
    return 1 if written and fail_on_write else 0
