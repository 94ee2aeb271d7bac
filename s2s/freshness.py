"""Whether a generated module still computes what the user's functions compute now.

A generated module bakes in what the program's functions read from outside
themselves when it was made: module constants (written into its text or
injected), the helper functions their names refer to, the modules their
dotted names go through, closure cells. ``Watch.of(functions)`` records, for
every function the program read, each global name its code refers to (nested
code included) with the object it named, the same through module attributes
(``layers.dense``, ``np.linalg.norm``), and its closure cells. ``fresh()`` is
true while every one of those still names the same object (``is``), or an
equal literal of the same type, and literal data it read (a dict or list of
numbers: configuration) still holds what it held; else the module must be
generated again.
A function read from a module s2s generated depends on that module's own
watch (``__s2s_generated__`` in its globals), so higher derivatives follow
the values the first derivative read.
"""

from __future__ import annotations

import copy
import inspect
import types

import numpy as np

# the libraries whose objects are not the user's (their functions are read by name, never as source)
LIBRARIES = (
    "numpy",
    "jax",
    "jaxlib",
    "scipy",
    "optax",
    "flax",
    "equinox",
    "torch",
    "sklearn",
    "dataclasses",  # (``dataclasses.replace``: read as the standard library's source, a located error)
)
GENERATED_KEY = "__s2s_generated__"  # in a loaded generated module's globals: the Generated it came from
_EMPTY = object()  # an empty closure cell


def _names(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


SETTINGS_SIZE = 1000  # at most this many values in literal data (a larger table is no configuration)


def _number(value) -> bool:
    """A NumPy scalar number (``np.prod(shape)``'s ``np.int64``): written as the Python number it holds."""
    return isinstance(value, (np.integer, np.floating, np.bool_))


def literal_data(obj) -> bool:
    """A dict, list or tuple of numbers, strings, bools and None (nested too, at most ``SETTINGS_SIZE``
    values): configuration a module holds, which a generated module bakes in and watches by value (it
    can change in place)."""
    return _data(obj, arrays=False)


def array_data(obj) -> bool:
    """A dict, list or tuple (nested too) of arrays, and of numbers, strings and slices: module-level
    constants such as ``TABLEAU = {"a": np.array([...])}`` or ``BASIS = [np.eye(2), ...]``, which a
    generated module receives as values, as it receives an array (a generated file cannot carry them).
    """
    return type(obj) in (dict, list, tuple) and _data(obj, arrays=True)


def _data(obj, arrays: bool) -> bool:
    """Whether ``obj`` is plain data (at most ``SETTINGS_SIZE`` values), arrays among its leaves where
    ``arrays``."""
    budget = [SETTINGS_SIZE]

    def plain(value) -> bool:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if type(value) in (bool, int, float, str, type(None)) or _number(value):
            return True
        if arrays and hasattr(value, "__array__"):
            return True
        if type(value) is slice:
            return all(plain(p) for p in (value.start, value.stop, value.step))
        if type(value) in (list, tuple):
            return all(plain(v) for v in value)
        if type(value) is dict:
            return all(_key(k) and plain(v) for k, v in value.items())
        return False

    return plain(obj)


def _key(key) -> bool:
    """A dict key a generated module can write: an int, a string, or a tuple of them (``("W", 0)``)."""
    return type(key) in (int, str) or (
        type(key) is tuple and all(type(k) in (int, str) for k in key)
    )


def _snapshot(value):
    """A copy of literal data to compare later (a container may be changed in place), else None; so is a
    list of functions (``LAYERS``, which a loop over it wrote out one function after another).
    """
    if type(value) in (dict, list, tuple) and literal_data(value):
        return copy.deepcopy(value)
    if type(value) is list and value and all(callable(v) for v in value):
        return list(value)
    if _writeable_array(value):
        return _HeldArray(value)
    if array_data(value):
        return _Held(value)
    if user_object(value) or _program_class(
        value
    ):  # ``parser.idxs_and_shapes``, ``Layer.eps``: its attributes as they were
        return _Held(value, of_object=True)
    return None


def _program_class(value) -> bool:
    """A class of the user's (not a library's): generated code may read its constants (``Layer.eps``)."""
    return (
        isinstance(value, type)
        and value.__module__.split(".")[0] not in ("builtins", "s2s", *LIBRARIES)
        and bool(class_constants(value))
    )


def class_constants(cls) -> dict:
    """The values a class and its bases hold that are no functions, classes or descriptors (``eps =
    1e-5``), nearest first: what its objects read as constants."""
    found = {}
    for c in reversed([c for c in cls.__mro__ if c is not object]):
        found.update(
            {
                k: v
                for k, v in vars(c).items()
                if not k.startswith("__")
                and not callable(v)
                and not hasattr(type(v), "__get__")
            }
        )
    return found


def user_object(value) -> bool:
    """An instance of a class of the user's (not an array, a module, a class, a function, a builtin or a
    library's object): generated code may read its attributes as constants."""
    if value is None or isinstance(value, (type, types.ModuleType)):
        return False
    if callable(value) and not _called_by_its_class(value):
        return False
    if hasattr(value, "__array__") or hasattr(value, "__array_namespace__"):
        return False
    module = type(value).__module__.split(".")[0]
    record = hasattr(value, "__dict__") or _is_namedtuple(value)
    return module not in ("builtins", *LIBRARIES) and record


def _called_by_its_class(value) -> bool:
    """An object whose class, and every class it derives from, is the user's (not s2s's, a library's: an
    ``eqx.Module`` is a library's JAX code) and defines ``__call__`` in Python (``norm(x, g)``).
    """
    call = inspect.getattr_static(type(value), "__call__", None)
    own = all(
        cls.__module__.split(".")[0] not in ("builtins", "functools", "s2s", *LIBRARIES)
        for cls in type(value).__mro__[:-1]
    )
    return own and inspect.isfunction(call) and hasattr(value, "__dict__")


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def attributes(value) -> dict:
    """A user object's attributes by name (a NamedTuple's fields; a class's constants)."""
    if isinstance(value, type):
        return class_constants(value)
    return value._asdict() if _is_namedtuple(value) else vars(value)


def _writeable_array(value) -> bool:
    """A NumPy array that can change in place (``MU[:] = X.mean(0)``, a scaler refit between epochs)."""
    return isinstance(value, np.ndarray) and value.flags.writeable


class _HeldArray:
    """A module-level NumPy array as it was: the same array holding the same values (``_Held``'s rule for
    one array, in the fewest steps: it is compared at every call)."""

    __slots__ = ("array", "then")

    def __init__(self, array):
        self.array, self.then = array, array.copy()

    def __eq__(self, value) -> bool:
        return value is self.array and _same_contents(value, self.then)

    def __ne__(self, value) -> bool:
        return not self == value


class _Held:
    """An array, a container of arrays, or a user's object, as it was: its structure, its literals by
    value, the attributes of objects in it one by one, its functions and immutable arrays by identity,
    and its NumPy arrays by identity and contents: XLA compiles the values a module-level array held
    into the code, so an array changed in place makes the module stale, as a rebound name does.
    """

    def __init__(self, value, of_object: bool = False):
        self.of_object = of_object
        self.then = self._held(attributes(value) if of_object else value, kept=True)

    @classmethod
    def _held(cls, value, depth=0, kept=False):
        """``value``'s description; ``kept``: with a copy of each NumPy array's contents (else the array)."""
        if depth > 8:
            return "same", value  # deeper than settings go: by identity
        if type(value) is dict:
            return "keyed", tuple(
                (k, cls._held(v, depth + 1, kept)) for k, v in value.items()
            )
        if type(value) in (list, tuple):
            return type(value), tuple(cls._held(v, depth + 1, kept) for v in value)
        if _writeable_array(value):
            return "array", (value, value.copy() if kept else value)
        if user_object(value):  # an object's attributes, one by one
            return type(value), (cls._held(attributes(value), depth + 1, kept),)
        if type(value) in (
            bool,
            int,
            float,
            complex,
            str,
            type(None),
            slice,
        ) or _number(value):
            return "literal", value
        return "same", value  # arrays, functions, library objects: by identity

    @classmethod
    def _same(cls, a, b) -> bool:
        if a[0] != b[0]:
            return False
        if a[0] == "same":
            return a[1] is b[1]
        if a[0] == "array":  # ``a`` now, ``b`` as it was
            return a[1][0] is b[1][0] and _same_contents(a[1][0], b[1][1])
        if a[0] == "literal":
            return type(a[1]) is type(b[1]) and bool(a[1] == b[1])
        if len(a[1]) != len(b[1]):
            return False
        if a[0] == "keyed":
            return all(
                x[0] == y[0] and cls._same(x[1], y[1]) for x, y in zip(a[1], b[1])
            )
        return all(cls._same(x, y) for x, y in zip(a[1], b[1]))

    def __eq__(self, value) -> bool:
        held = self._held(attributes(value) if self.of_object else value)
        return self._same(held, self.then)

    def __ne__(self, value) -> bool:
        return not self == value


_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _same_contents(now, then) -> bool:
    """Whether ``now`` holds what ``then`` held, bit for bit (a NaN is itself), at about 0.2 ms per
    million elements: each call of a transformed function compares the arrays its module read.
    """
    if now.shape != then.shape or now.dtype != then.dtype:
        return False
    if (
        now.size <= 4096 and now.dtype.kind != "O"
    ):  # the bytes: fewest steps for a small array
        return now.tobytes() == then.tobytes()
    bits = _BITS.get(now.dtype.itemsize) if now.dtype.kind in "biufcmM" else None
    if bits is None:  # an object array, a complex128 one: as NumPy compares their items
        return bool(np.array_equal(now, then))
    return bool(np.array_equal(now.view(bits), then.view(bits)))


def _literal_equal(a, b) -> bool:
    return (
        type(a) is type(b)
        and isinstance(a, (bool, int, float, complex, str, bytes, type(None)))
        and a == b
    )


class Watch:
    """The objects a program read through names, and where it read them."""

    def __init__(self, read: tuple, cells: tuple, depends: list, held=()):
        # read: (mapping, key, the value mapping[key] held); cells: (cell, its contents)
        self._read = read
        # literal data (a dict or list of numbers) read, as it was: it can change without being rebound;
        # so can an object a parameter is bound to (``model=MODEL``: its attributes are constants)
        self._data = tuple(
            (value, copy)
            for value in (*(v for _, _, v in read), *held)
            if (copy := _snapshot(value)) is not None
        )
        self._cells = tuple((cell, _contents(cell)) for cell in cells)
        # an array a closure holds, changed in place (``make_loss(mu)``'s ``mu``)
        self._cell_data = tuple(
            (cell, copy)
            for cell, value in self._cells
            if (copy := _snapshot(value)) is not None
        )
        self.depends = (
            depends  # the Generated objects of generated modules the program read
        )
        self.held = held

    @property
    def read(self) -> tuple:
        """``(mapping, key, value)`` for each name read: ``mapping[key]`` held ``value``."""
        return self._read

    @property
    def cells(self) -> tuple:
        """``(cell, contents)`` for each closure cell read."""
        return self._cells

    @classmethod
    def of(cls, functions, held=()) -> Watch:
        # read: (id(mapping), key) -> (mapping, key)
        read, cells, depends, seen = (
            {},
            [],
            [],
            set(),
        )

        def record(mapping, names):
            for key in sorted(names):
                if (id(mapping), key) in read:
                    continue
                read[id(mapping), key] = (mapping, key)
                value = mapping.get(key)
                # `layers.dense`, `np.linalg.norm`
                if isinstance(value, types.ModuleType) and id(value) not in seen:
                    seen.add(id(value))
                    record(vars(value), names & vars(value).keys())

        for fn in {id(f): f for f in functions}.values():
            generated = fn.__globals__.get(GENERATED_KEY)
            if generated is not None:
                depends.append(generated)
                continue
            names = _names(fn.__code__)
            record(fn.__globals__, names)
            for cell in fn.__closure__ or ():
                cells.append(cell)
                # a module reached through a closure
                if isinstance(_contents(cell), types.ModuleType):
                    record(vars(_contents(cell)), names & vars(_contents(cell)).keys())
        triples = tuple((m, k, m.get(k)) for m, k in read.values())
        return cls(triples, tuple(cells), depends, tuple(held))

    def fresh(self) -> bool:
        """Every name still names its object, and every cell holds its value (the loops run on each call)."""
        for mapping, key, value in self._read:
            if mapping.get(key) is not value:
                return self._same_literals()
        for cell, value in self._cells:
            if _contents(cell) is not value:
                return self._same_literals()
        # (the snapshot on the left: ``ndarray != held`` would compare element by element)
        if any(then != value for value, then in self._data):
            return False
        if any(then != _contents(cell) for cell, then in self._cell_data):
            return False
        return not self.depends or all(dep.fresh() for dep in self.depends)

    def _same_literals(self) -> bool:
        """Fresh if what changed are equal literals under new objects (which are recorded, so the next
        check compares identities again)."""
        read = tuple((m, k, m.get(k)) for m, k, _ in self._read)
        cells = tuple((cell, _contents(cell)) for cell, _ in self._cells)
        if not all(
            _equal(now[-1], then[-1])
            for now, then in zip(read + cells, self._read + self._cells)
        ):
            return False
        self._read, self._cells = read, cells
        return not self.depends or all(dep.fresh() for dep in self.depends)


def _equal(now, recorded) -> bool:
    return now is recorded or _literal_equal(now, recorded)


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY


__all__ = ["GENERATED_KEY", "Watch"]
