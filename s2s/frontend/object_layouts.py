"""Where a call's arguments hold objects of the program's classes (read by ``held_objects``).

``classes_of`` gives the layout of the objects a value holds: each object's class, its attributes, and
the objects those hold, in lists, tuples and dicts too. ``Held`` stands for a function at calls whose
arguments hold objects laid out so (one object per function and layouts, as ``variadic.Specialized``
is per call shape); ``at_call`` makes it for a call. Nothing here imports the compiler: a call of a
transformed function reads it.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np

from .variadic import Standin

# a class layout: ``("object", cls, ((attribute, layout), ...))``, ``("list" | "tuple", (layout, ...))``,
# ``("dict", ((key, layout), ...))``, ``("constant", value)`` for an object's attribute holding a string,
# a bool, None or a function, or None for a value that holds no object of the program


_PLAIN = frozenset({float, int, bool, complex, str, bytes, type(None), np.ndarray})


def classes_of(value, depth: int = 0):
    """The layout of the objects of the program's classes ``value`` holds, or None where it holds none."""
    from .function_args import is_program_object

    kind = type(value)
    if kind in _PLAIN:
        return None
    if kind in (list, tuple) and depth < 32:
        items = tuple(classes_of(v, depth + 1) for v in value)
        return None if not any(items) else (kind.__name__, items)
    if kind is dict and depth < 32:
        items = tuple((k, classes_of(v, depth + 1)) for k, v in value.items())
        return None if not any(t for _, t in items) else ("dict", items)
    if (
        kind.__module__ in ("builtins", "numpy", "jaxlib.xla_extension")
        or hasattr(value, "__array__")
        or not is_program_object(value)
        or isinstance(value, tuple)  # (a ``NamedTuple``: a tuple, as JAX reads it)
    ):
        return None
    if dataclasses.is_dataclass(value):
        names = [f.name for f in dataclasses.fields(value)]
    else:
        names = list(vars(value))
    if not all(isinstance(n, str) and n.isidentifier() for n in names) or depth >= 32:
        return None
    attributes = tuple((n, _attribute(getattr(value, n), depth + 1)) for n in names)
    return ("object", kind, attributes)


def _attribute(value, depth: int):
    """An attribute's layout: a string, a bool, None or a function as itself (``("constant", value)``:
    what a method tests or calls, read with the code, as a pytree's static fields are), else its
    objects' layout."""
    from .function_args import is_function

    if type(value) in (str, bool, type(None)) or (
        callable(value) and is_function(value)
    ):
        return ("constant", value)
    return classes_of(value, depth)


class Held(Standin):
    """``fn`` at calls whose parameters hold objects laid out as ``layouts`` (``(parameter, layout)``)."""

    def __init__(self, fn, layouts: tuple):
        super().__init__(fn)
        self.layouts = layouts

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.fn, follow_wrapped=False)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        held = ", ".join(name for name, _ in self.layouts)
        return f"<{self.__qualname__} with objects of the program in {held}>"


_HELD: dict = {}  # (fn, layouts) -> Held


def held(fn, layouts: tuple) -> Held:
    """The one ``Held`` of ``fn`` with ``layouts``."""
    key = (fn, layouts)
    if key not in _HELD:
        if len(_HELD) > 256:
            _HELD.clear()
        _HELD[key] = Held(fn, layouts)
    return _HELD[key]


def at_call(fn, names, args):
    """``fn`` at a call whose arguments, by parameter ``names``, are ``args``: a ``Held`` where some hold
    objects of the program's classes, else ``fn`` itself."""
    if isinstance(fn, Held):
        return fn
    layouts = []
    for name, value in zip(names, args):
        layout = classes_of(value)
        if layout is not None:
            layouts.append((name, layout))
    return held(fn, tuple(layouts)) if layouts else fn
