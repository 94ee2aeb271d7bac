"""The top-level names of one generated module, shared by every function of a program.

A user program may reach two different objects under one name: two closures
from one factory (``g1 = make(2.0)``, ``g2 = make(3.0)``, both named ``g``),
``dense`` from two modules, a constant ``s`` captured with two values. The
generated module holds each object once, under a name of its own:

- the same object (a function by identity, a constant by type and value) always
  gets the same name;
- a different object under a taken name gets a numbered one (``g_2``), never a
  name the function that refers to it uses for something else.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def same_value(a, b) -> bool:
    """One constant: the same object, or equal values of one type (arrays compare by identity only)."""
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


@dataclass
class Scope:
    """Module-level names handed out so far: ``values[name]`` is the object the name stands for."""

    values: dict = field(default_factory=dict)
    # the user's name -> the module-level names given for it
    spellings: dict = field(default_factory=dict)

    def name(
        self, preferred: str, value, avoid=frozenset(), function: bool = False
    ) -> str:
        """The module-level name of ``value``, which the user calls ``preferred`` (a helper when ``function``,
        else a constant); ``avoid`` holds the names the referring function binds itself.
        """
        same = (lambda a, b: a is b) if function else same_value
        for candidate in self.spellings.get(preferred, ()):
            if candidate not in avoid and same(self.values[candidate], value):
                return candidate
        candidate, n = preferred, 2
        while candidate in self.values or candidate in avoid:
            candidate, n = f"{preferred}_{n}", n + 1
        self.values[candidate] = value
        self.spellings.setdefault(preferred, []).append(candidate)
        return candidate


__all__ = ["Scope", "same_value"]
