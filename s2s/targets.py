"""The ``[tool.s2s]`` targets of a project: which modules ``s2s generate`` writes, and from what.

    [[tool.s2s.targets]]
    source = "model.py::loss"        # PATH::FUNC, relative to the project root
    transform = "grad"               # grad, value_and_grad, jvp, hessian, vmap, lower, vmap(grad), grad(grad)
    wrt = "params"                   # parameters to differentiate (grad, jvp, hessian; inside vmap(...))
    in_axes = "None,0,0"             # vmap: one per parameter, or one for all (as the CLI's --in-axes)
    out_axes = "0"                   # vmap
    output = "derivatives/loss_grad.py"

The project root is the nearest folder, at or above a given one, whose
``pyproject.toml`` has a ``[tool.s2s]`` table. Standard library only: the
check of checked-in modules and their use by the API import no compiler.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass


class ConfigError(ValueError):
    """A mistake in ``[tool.s2s]``, or no such table."""


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
                raise ConfigError(f"{candidate}: cannot read it: {e}") from None
            if table is not None:
                return folder, table
        parent = os.path.dirname(folder)
        if parent == folder:
            raise ConfigError(
                "no pyproject.toml with a [tool.s2s] table here or in a folder above: "
                "declare the targets there (see `s2s generate --help`)"
            )
        folder = parent


def targets_of(table: dict) -> list[Target]:
    entries = table.get("targets")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(
            "[tool.s2s] declares no targets: add [[tool.s2s.targets]] tables"
        )
    found = []
    for i, entry in enumerate(entries, 1):
        where = f"[tool.s2s] target {i}"
        unknown = sorted(set(entry) - KEYS)
        if unknown:
            raise ConfigError(
                f"{where}: unknown key {', '.join(map(repr, unknown))} (keys: {', '.join(sorted(KEYS))})"
            )
        for key in ("source", "transform", "output"):
            if not isinstance(entry.get(key), str):
                raise ConfigError(f"{where}: `{key}` must be a string")
        wrt = entry.get("wrt")
        if isinstance(wrt, list):
            wrt = ",".join(wrt)
        values = {k: str(entry[k]) for k in ("in_axes", "out_axes") if k in entry}
        target = Target(
            entry["source"], entry["transform"], entry["output"], wrt, **values
        )
        if "::" not in target.source:
            raise ConfigError(
                f"{where}: source must be PATH::FUNC, got {target.source!r}"
            )
        outer, *inner = target.chain
        if outer not in KINDS or any(k != "grad" for k in inner):
            raise ConfigError(
                f"{where}: transform {target.transform!r}: expected one of {', '.join(KINDS)}, hessian, "
                "or one of them around grad (vmap(grad), grad(grad))"
            )
        found.append(target)
    return found
