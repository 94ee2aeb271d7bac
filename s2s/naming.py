"""Deterministic names for generated code: user names kept, new ones derived from them."""

from __future__ import annotations

import builtins
import keyword

RESERVED = (
    frozenset({"xp", "rt"}) | frozenset(dir(builtins)) | frozenset(keyword.kwlist)
)


class Namer:
    """Hands out names not used yet: ``base``, then ``base_2``, ``base_3``, ..."""

    def __init__(self, used=()):
        self.used = set(used) | RESERVED
        self._next: dict = (
            {}
        )  # base -> the suffix to try first (a function of 2,000 `_multiply`s)

    def reserve(self, name: str) -> str:
        self.used.add(name)
        return name

    def fresh(self, base: str) -> str:
        if base not in self.used:
            return self.reserve(base)
        stem, _, suffix = base.rpartition("_")
        if stem and suffix.isdigit():
            base = stem
        n = self._next.get(base, 2)
        while f"{base}_{n}" in self.used:
            n += 1
        self._next[base] = n + 1
        return self.reserve(f"{base}_{n}")


def bar(name: str) -> str:
    """The cotangent's name for a variable: ``h`` -> ``h_bar``."""
    return f"{name}_bar"


def temp(op: str) -> str:
    """The base name of a temporary holding an op's result: ``_matmul``, ``_linalg_norm``."""
    return "_" + op.replace(".", "_")
