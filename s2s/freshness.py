"""Whether a generated module still computes what the user's functions compute now.

A generated module bakes in what the program's functions read from outside
themselves when it was made: module constants (written into its text or
injected), the helper functions their names refer to, the modules their
dotted names go through, closure cells. ``Watch.of(functions)`` records, for
every function the program read, each global name its code refers to (nested
code included) with the object it named, the same through module attributes
(``layers.dense``, ``np.linalg.norm``), and its closure cells. ``fresh()`` is
true while every one of those still names the same object (``is``), or an
equal literal of the same type; else the module must be generated again.
A function read from a module s2s generated depends on that module's own
watch (``__s2s_generated__`` in its globals), so higher derivatives follow
the values the first derivative read.
"""

from __future__ import annotations

import operator
import types

GENERATED_KEY = "__s2s_generated__"  # in a loaded generated module's globals: the Generated it came from
_EMPTY = object()  # an empty closure cell


def _names(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _literal_equal(a, b) -> bool:
    return type(a) is type(b) and isinstance(a, (bool, int, float, complex, str, bytes, type(None))) and a == b


class Watch:
    """The objects a program read through names, and where it read them."""

    def __init__(self, entries: list, cells: list, depends: list):
        self._entries = entries  # [mapping, keys, values]: values[i] is what mapping[keys[i]] was
        self._cells = cells  # [cell, value]
        self.depends = depends  # watches (Generated objects) of generated modules the program read

    @classmethod
    def of(cls, functions) -> Watch:
        entries, cells, depends, seen = {}, [], [], set()

        def record(mapping, names):
            keys = tuple(sorted(names))
            entry = entries.setdefault(id(mapping), [mapping, (), ()])
            new = tuple(k for k in keys if k not in entry[1])
            entry[1] += new
            entry[2] += tuple(mapping.get(k) for k in new)
            for value in (mapping.get(k) for k in new):
                if isinstance(value, types.ModuleType) and id(value) not in seen:
                    seen.add(id(value))
                    record(vars(value), names & vars(value).keys())

        for fn in {id(f): f for f in functions}.values():
            generated = fn.__globals__.get(GENERATED_KEY)
            if generated is not None:
                depends.append(generated)
                continue
            record(fn.__globals__, _names(fn.__code__))
            for cell in fn.__closure__ or ():
                cells.append([cell, _contents(cell)])
        return cls(list(entries.values()), cells, depends)

    def fresh(self) -> bool:
        is_ = operator.is_
        for entry in self._entries:
            mapping, keys, values = entry
            if not all(map(is_, map(mapping.get, keys), values)) and not _settle(entry, tuple(map(mapping.get, keys))):
                return False
        for entry in self._cells:
            if _contents(entry[0]) is not entry[1] and not _settle(entry, _contents(entry[0])):
                return False
        for dep in self.depends:
            if not dep.fresh():
                return False
        return True


def _settle(entry: list, now):
    """True if ``now`` (the values read again) equals what ``entry`` recorded, as literals of the same types;
    then ``entry`` records ``now``, so that identities match again next time."""
    recorded = entry[-1]
    pairs = zip(now, recorded) if isinstance(now, tuple) else ((now, recorded),)
    if not all(a is b or _literal_equal(a, b) for a, b in pairs):
        return False
    entry[-1] = now
    return True


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY


__all__ = ["Watch", "GENERATED_KEY"]
