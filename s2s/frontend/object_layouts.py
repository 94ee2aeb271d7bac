"""Where a call's arguments hold objects of the program's classes (read by ``held_objects``).

``classes_of`` gives the layout of the objects a value holds: each object's class, its attributes, and
the objects those hold, in lists, tuples and dicts too. ``Held`` stands for a function at calls whose
arguments hold objects laid out so (one object per function and layouts, as ``variadic.Specialized``
is per call shape); ``at_call`` makes it for a call, where the arguments hold such objects, or give a
string, a bool or None to a parameter the function tests (``callback=None`` then ``if callback:``: the
test is read with the code). Nothing here imports the compiler: a call of a transformed function reads it.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys

import numpy as np

from .variadic import Standin

# a class layout: ``("object", cls, ((attribute, layout), ...))``, ``("list" | "tuple", (layout, ...))``,
# ``("dict", ((key, layout), ...))``, ``("constant", value)`` for an object's attribute holding a string,
# a bool, None or a function, or None for a value that holds no object of the program


_PLAIN = frozenset({float, int, bool, complex, str, bytes, type(None), np.ndarray})


def classes_of(value, depth: int = 0):
    """The layout of the objects of the program's classes ``value`` holds, or None where it holds none."""
    from .function_args import defined_in_the_program, is_program_object

    kind = type(value)
    if kind in _PLAIN:
        return None
    if kind in (list, tuple) and depth < 32:
        items = tuple(classes_of(v, depth + 1) for v in value)
        return None if not any(items) else (kind.__name__, items)
    if kind is dict and depth < 32:
        items = tuple((k, classes_of(v, depth + 1)) for k, v in value.items())
        return None if not any(t for _, t in items) else ("dict", items)
    # a ``NamedTuple`` is a tuple, as JAX reads it; an object where its class gives it methods
    named = (
        isinstance(value, tuple)
        and _named_with_methods(kind)
        and defined_in_the_program(kind)
    )
    if (
        kind.__module__ in ("builtins", "numpy", "jaxlib.xla_extension")
        or hasattr(value, "__array__")
        or not (named or (is_program_object(value) and not isinstance(value, tuple)))
    ):
        return None
    if isinstance(value, tuple):
        names = list(kind._fields)
    elif dataclasses.is_dataclass(value):
        names = [f.name for f in dataclasses.fields(value)]
    else:
        names = list(vars(value))
    if not all(isinstance(n, str) and n.isidentifier() for n in names) or depth >= 32:
        return None
    static = _static_attributes(value, names)
    attributes = tuple(
        (
            n,
            (
                ("constant", getattr(value, n))
                if n in static
                else _attribute(getattr(value, n), depth + 1)
            ),
        )
        for n in names
    )
    return ("object", kind, attributes)


def _named_with_methods(kind) -> bool:
    """Whether ``kind`` is a ``NamedTuple`` class whose body defines methods or properties
    (``def apply(self, x)``), which a call reads as an object's."""
    return hasattr(kind, "_fields") and any(
        not name.startswith("_")
        and (inspect.isfunction(member) or isinstance(member, property))
        for name, member in vars(kind).items()
    )


def _static_attributes(value, names) -> set:
    """The attributes of a registered pytree object that its flattening keeps out of its children (the aux
    data: ``Box(a, c)`` flattening to ``(a,), (c,)``), numbers and strings: read with the code, as JAX's
    transformations read them (no derivative belongs there)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return set()
    try:
        leaves = jax.tree_util.tree_leaves(value)
    except Exception:  # (a class whose flattening fails: its own error where it runs)
        return set()
    if len(leaves) == 1 and leaves[0] is value:
        return set()  # (not a registered pytree: every attribute is data)
    held = {id(leaf) for leaf in leaves}
    return {
        n
        for n in names
        if type(getattr(value, n)) in (int, float, str, bool)
        and id(getattr(value, n)) not in held
    }


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
    layouts, tested = [], None
    for name, value in zip(names, args):
        if type(value) in (str, bool, type(None)):
            # ``callback=None`` then ``if callback: callback(x)``: the test read with the code
            tested = tested if tested is not None else tested_parameters(fn)
            if name in tested:
                layouts.append((name, ("constant", value)))
            continue
        layout = classes_of(value)
        if layout is not None:
            layouts.append((name, layout))
    return held(fn, tuple(layouts)) if layouts else fn


_TESTED: dict = {}  # code object -> the parameters its function tests


def tested_parameters(fn) -> frozenset:
    """The parameters ``fn``'s body tests: compares with literals (``mode == "train"``, ``acc is None``),
    tests whole (``if callback:``) or names an attribute by (``getattr(jax.nn, activation)``), read with
    Python's ``ast`` (no compiler import)."""
    inner = fn
    while isinstance(inner, Standin):
        inner = inner.fn
    code = getattr(inner, "__code__", None)
    if code is None:
        return frozenset()
    found = _TESTED.get(code)
    if found is None:
        found = _TESTED[code] = _tested_in(inner, code)
    return found


def _tested_in(fn, code) -> frozenset:
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    params = set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])

    def param(node):
        return node.id if isinstance(node, ast.Name) and node.id in params else None

    def literal(node):
        return isinstance(node, ast.Constant) and type(node.value) in (
            str,
            bool,
            int,
            type(None),
        )

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = [param(o) for o in operands if param(o)]
            if len(named) == 1 and all(param(o) or literal(o) for o in operands):
                found.add(named[0])
        elif isinstance(node, (ast.If, ast.While, ast.IfExp)) and param(node.test):
            found.add(node.test.id)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            if param(node.operand):
                found.add(node.operand.id)
        elif isinstance(node, ast.BoolOp):
            found.update(p for p in map(param, node.values) if p)
        elif (  # ``getattr(jax.nn, activation)``: the attribute it names
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and param(node.args[1])
        ):
            found.add(node.args[1].id)
    return frozenset(found)
