"""``s2s generate``: regenerate the checked-in modules declared in ``pyproject.toml`` under ``[tool.s2s]``
(``s2s.targets``).

A module is fresh when its header (``s2s.provenance``) names the same target,
the same s2s version and the current hash of every input file, and its body
is unedited: then nothing is imported, neither the user's code nor the
compiler. Stale modules are generated in memory and written atomically; the
bytes do not depend on the folder the command runs in.
"""

from __future__ import annotations

import os
import sys

from s2s import provenance
from s2s.targets import KINDS, ConfigError, Target, find_root, targets_of

from .main import UsageError, argnums_for, import_file, parse_axes, write_module


def _generate(target: Target, root: str):
    """The module of ``target``, through the API (the user's file is imported to read the function)."""
    import inspect

    import s2s

    path = os.path.join(root, target.path)
    if not os.path.isfile(path):
        raise UsageError(f"{target.path}: no such file (source of a [tool.s2s] target)")
    name = target.source.rpartition("::")[2]
    fn = getattr(import_file(path, name), name, None)
    if not callable(fn) or isinstance(
        fn, type
    ):  # read through decorators, as the API reads it
        raise UsageError(f"{target.path}: no function named `{name}`")
    outer, *inner = target.chain
    # JAX's defaults: jvp along every parameter; grad (hessian's too) with respect to the first
    every = outer == "jvp" and not inner
    argnums = argnums_for(fn, target.wrt, default=None if every else 0)
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
    from s2s import __version__, checked_in, module_store

    # this command writes the checked-in modules from the sources: it never reads them, nor kept ones
    checked_in.ENABLED = module_store.ENABLED = False
    try:
        root, table = find_root(os.getcwd())
        targets = targets_of(table)
    except ConfigError as e:
        raise UsageError(str(e)) from None
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
                f"{t.source} reads values that are neither literals nor a module's by name ({names}), "
                "which a generated file cannot carry or import: pass them as arguments"
            )
        output = os.path.join(root, t.output)
        write_module(output, generated.text, os.path.join(root, t.path))
        written.append(shown[t])
        print(f"s2s: regenerated {shown[t]}", file=sys.stderr)
    return 1 if written and fail_on_write else 0
