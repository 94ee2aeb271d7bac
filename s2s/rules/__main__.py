"""``python -m s2s.rules``: the computed list of ops s2s knows, by family, with their aliases;
``python -m s2s.rules --coverage`` adds, per namespace of JAX, how many of the functions JAX
differentiates s2s covers, and lists the rest (``coverage.py``).

Nothing here is maintained by hand: it reads the registry that the rule
modules fill when imported.
"""

from __future__ import annotations

import sys

from . import OPS, RUNTIME_OPS
from .foreign import FOREIGN
from .registry import ALIASES, FAMILIES
from .vocabulary import LIBRARY

DESCRIPTIONS = {
    "elementwise": "derivative from partials, reverse mode unbroadcasts",
    "linear": "the rule is the transpose",
    "multilinear": "the rule is the transpose per operand; forward mode replaces one operand at a time",
    "vjp": "explicit reverse rule, with an explicit forward rule",
    "decompose": "defined by other ops, inlined before differentiation",
    "nondiff": "no derivative flows through (gradient zero)",
    "no_derivative": "no derivative rule (JAX has none): an error on the differentiated path",
}


def coverage() -> dict[str, list[str]]:
    """Canonical op names per family."""
    table = {family: [] for family in FAMILIES}
    for name, op in sorted(OPS.items()):
        table[op.family].append(name)
    return table


def library() -> dict[str, list[str]]:
    """Library functions spelled ``rt.<name>`` in generated code, per family."""
    table = {family: [] for family in FAMILIES}
    for name in sorted(LIBRARY):
        if name.startswith("rt."):
            table.setdefault(RUNTIME_OPS[name].family, []).append(name)
    return table


def main(out=sys.stdout, argv=()) -> None:
    aliases: dict[str, list[str]] = {}
    for spelling, canonical in sorted(ALIASES.items()):
        aliases.setdefault(canonical, []).append(spelling)
    for canonical, spellings in LIBRARY.items():  # jax.lax.exp is exp
        if not canonical.startswith("rt."):
            aliases.setdefault(canonical, []).extend(spellings)
    table = coverage()
    print(
        f"{len(OPS)} ops (spell them np.NAME, jnp.NAME, math.NAME or as methods)",
        file=out,
    )
    for family in FAMILIES:
        names = table[family]
        print(f"\n{family} ({len(names)}): {DESCRIPTIONS[family]}", file=out)
        for name in names:
            extra = aliases.get(name)
            print(
                f"  {name}" + (f"  (also {', '.join(extra)})" if extra else ""),
                file=out,
            )
    found = library()
    count = sum(len(names) for names in found.values())
    print(
        f"\n{count} library functions (spelled rt.NAME in generated code; JAX's own on JAX values)",
        file=out,
    )
    for family, names in found.items():
        for name in names:
            print(f"  {name}  [{family}]  {', '.join(LIBRARY[name])}", file=out)
    print(f"\n{FOREIGN}", file=out)  # library code JAX traces: ``rules/foreign.py``
    if "--coverage" in argv:
        from .coverage import report

        report(out)


if __name__ == "__main__":
    main(argv=sys.argv[1:])
