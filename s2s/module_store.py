"""Generated modules kept across processes: a later run of the same program reads its module back instead of
generating it again (neither libcst nor black is imported), while nothing it was made from has changed.

``keep(fn, kinds, argnums, has_aux, generated)`` stores a module that s2s just generated for a request, in
the module cache folder (``loader.cache_dir``), when everything it was made from can be checked by another
process (else it keeps nothing; the next process generates the module as usual):

- the values injected into it are literal data (``[2, 4]``, ``{"depth": 3}``, kept as text): other values
  (arrays, objects) exist only in the process that made them;
- its inputs are files: the source file of every function s2s read, kept with its hash;
- every value it read (``freshness.Watch``: each global name its functions' code refers to, attributes of
  the modules they name, closure cells) is *portable* (``describe``): a literal or literal data, a module,
  a function or class by module, qualified name, file and line, and the function's defaults, a library
  object by where it is defined, a NumPy array by dtype, shape and the hash of its bytes; a program that
  read a user's object, a partial, a function with a closure (other than the transformed function's own
  cells) or another generated module is not kept.

``find(fn, kinds, argnums, has_aux)`` hands the module back when the request is the same (the function's
file, qualified name, first line and code, the transformation, ``argnums``, ``has_aux``), s2s is the same
(its version, and the size and time of each of its source files), the input files hash as they did and
hold the code that runs (``checked_in.runs_the_file``), and every value read describes as it did. Its
``Watch`` is made from the live values, so the module is checked before each call as a generated one is.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import sys
import types

import numpy as np

from . import checked_in, provenance
from .freshness import Watch
from .generated import Generated
from .runtime import loader

ENABLED = True  # ``s2s generate`` makes every module from the sources
# a larger module-level array is not hashed at each start: its program is not kept
ARRAY_BYTES = 1 << 20
# a global name a module does not define (a builtin's name, an attribute's)
_ABSENT = object()


class Unportable(Exception):
    """A value that another process cannot be checked to hold."""


def describe(value, depth: int = 0):
    """What another process compares to decide that ``value`` is the value this one read (JSON: lists, strings,
    numbers); ``Unportable`` when there is no such description."""
    if depth > 8:
        raise Unportable
    kind = type(value)
    if value is _ABSENT:
        return ["absent"]
    if kind in (bool, int, float, str, type(None), complex) or isinstance(
        value, (np.integer, np.floating, np.bool_)
    ):
        return ["literal", kind.__qualname__, repr(value)]
    if kind in (tuple, list):
        return [kind.__name__, [describe(v, depth + 1) for v in value]]
    if kind is dict:
        return [
            "dict",
            [[describe(k), describe(v, depth + 1)] for k, v in value.items()],
        ]
    if kind is slice:
        return ["slice", describe((value.start, value.stop, value.step))]
    if isinstance(value, types.ModuleType):
        return ["module", value.__name__]
    if isinstance(value, types.FunctionType):
        if value.__closure__:
            raise Unportable  # its cells are another process's values
        code = value.__code__
        return [
            "function",
            value.__module__,
            value.__qualname__,
            code.co_filename,
            code.co_firstlineno,
            describe(value.__defaults__, depth + 1),
            describe(value.__kwdefaults__, depth + 1),
        ]
    if isinstance(value, type):
        data = {
            k: describe(v, depth + 1)
            for k, v in vars(value).items()
            if not k.startswith("__") and _plain(v)
        }
        return ["class", value.__module__, value.__qualname__, sorted(data.items())]
    if (
        kind is np.ndarray
        and value.dtype.kind in "biufc"
        and value.nbytes <= ARRAY_BYTES
    ):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return ["array", value.dtype.str, list(value.shape), digest]
    return _library_object(value)


def _plain(value) -> bool:
    """A class attribute that is data (a literal, or a container of them), which a program may read as a constant."""
    return type(value) in (bool, int, float, str, type(None), tuple, list, dict)


def _library_object(value):
    """A library's function or object (``np.exp``, ``jnp.sum``, ``jax.nn.relu``) by where it is defined: the
    module named by its ``__module__`` holds it under its qualified name; a ufunc by its name.
    """
    kind = type(value).__qualname__
    if isinstance(value, np.ufunc):
        return ["ufunc", value.__name__]
    module = getattr(value, "__module__", None)
    name = getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(name, str) and module in sys.modules:
        held = sys.modules[module]
        for part in name.split("."):
            held = getattr(held, part, _ABSENT)
        if held is value:
            return ["object", kind, module, name]
    raise Unportable


@functools.cache
def _compiler() -> str:
    """What s2s is: its version, the size and modification time of each of its source files (an edited
    checkout is another compiler), and the versions of Python, NumPy and JAX it ran with.
    """
    from . import __version__, runtime

    h = hashlib.sha256(f"{__version__} {sys.version} {np.__version__}".encode())
    jax = sys.modules.get("jax")
    h.update(str(getattr(jax, "__version__", None)).encode())
    for folder in (os.path.dirname(__file__), os.path.dirname(runtime.__file__)):
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(f for f in files if f.endswith(".py")):
                stat = os.stat(os.path.join(root, name))
                h.update(f"{name} {stat.st_size} {stat.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _path(fn, kinds, argnums, has_aux) -> str | None:
    """The stored file for this request (None: the function is not one a later process can name)."""
    if not ENABLED or type(fn) is not types.FunctionType:
        return None
    code = fn.__code__
    try:
        request = [
            _compiler(),
            os.path.abspath(code.co_filename),
            fn.__qualname__,
            code.co_firstlineno,
            _code_digest(code),  # (two lambdas on one line)
            list(kinds),
            describe(getattr(argnums, "spec", argnums)),
            has_aux,
        ]
    except Unportable:
        return None
    digest = hashlib.sha256(json.dumps(request).encode()).hexdigest()[:24]
    return os.path.join(loader.cache_dir(), f"{loader.STORED}{digest}.json")


def _code_digest(code: types.CodeType) -> str:
    """A hash of what a function's code does: its instructions, names and constants (nested code too)."""
    h = hashlib.sha256(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            h.update(_code_digest(const).encode())
        else:  # (a frozenset's order changes with the process's hash seed)
            text = sorted(map(repr, const)) if type(const) is frozenset else const
            h.update(f"{type(const).__qualname__}:{text!r}".encode())
    return h.hexdigest()


def _module_of(mapping) -> str | None:
    """The name of the module whose namespace ``mapping`` is (None: not an imported module's)."""
    name = mapping.get("__name__")
    module = sys.modules.get(name) if isinstance(name, str) else None
    return name if module is not None and vars(module) is mapping else None


def _reads(fn, watch: Watch) -> dict:
    """The portable record of what a program read (``Unportable`` if some of it is not)."""
    reads = []
    for mapping, key, _ in watch.read:
        module = _module_of(mapping)
        if module is None:
            raise Unportable
        reads.append([module, key, describe(mapping.get(key, _ABSENT))])
    own = {id(c) for c in fn.__closure__ or ()}
    if watch.depends or watch.held or any(id(c) not in own for c, _ in watch.cells):
        raise Unportable
    return {
        "reads": reads,
        "cells": [describe(_contents(c)) for c in fn.__closure__ or ()],
        "defaults": describe((fn.__defaults__, fn.__kwdefaults__)),
    }


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _ABSENT


def keep(fn, kinds, argnums, has_aux, generated: Generated) -> None:
    """Store ``generated`` (just made for this request) for later processes, when it can be checked there."""
    path = _path(fn, kinds, argnums, has_aux)
    program = generated.program
    if path is None or program is None or generated.watch is None:
        return
    injected = {k: repr(v) for k, v in generated.injected.items()}
    if not all(_reads_back(v, injected[k]) for k, v in generated.injected.items()):
        return
    if any(src.generated for src in program.sources):
        return
    files = sorted({os.path.abspath(src.file.path) for src in program.sources})
    if os.path.abspath(fn.__code__.co_filename) not in files or not all(
        os.path.isfile(f) for f in files
    ):
        return
    try:
        record = _reads(fn, generated.watch)
    except Unportable:
        return
    record.update(
        text=generated.text,
        entries=generated.entries,
        injected=injected,
        inputs={f: provenance.file_hash(f) for f in files},
    )
    # (a folder that cannot be written: nothing is kept)
    with contextlib.suppress(OSError):
        loader.write_atomic(path, json.dumps(record), suffix=".json")
        loader.clean(os.path.dirname(path))


def find(fn, kinds, argnums, has_aux) -> Generated | None:
    """The module stored for this request, if everything it was made from is as it was (see the docstring)."""
    path = _path(fn, kinds, argnums, has_aux)
    try:
        with open(path, encoding="utf-8") as f:
            return _checked(fn, path, json.load(f))
    except (TypeError, OSError, ValueError, KeyError, AttributeError):
        return None  # none kept, or not a record this s2s writes: generated as usual


def _checked(fn, path: str, record: dict) -> Generated | None:
    """The module ``record`` holds, if everything it was made from is as it was."""
    for file, digest in record["inputs"].items():
        if not os.path.isfile(file) or provenance.file_hash(file) != digest:
            return None
        if not checked_in.runs_the_file(file):
            return None
    live = []
    for module, key, then in record["reads"]:
        mapping = vars(sys.modules[module]) if module in sys.modules else None
        if mapping is None or _described(mapping.get(key, _ABSENT)) != then:
            return None
        live.append((mapping, key, mapping.get(key)))
    cells = fn.__closure__ or ()
    if [_described(_contents(c)) for c in cells] != record["cells"]:
        return None
    if _described((fn.__defaults__, fn.__kwdefaults__)) != record["defaults"]:
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: the last to be cleaned
    watch = Watch(tuple(live), tuple(cells), [])
    injected = {k: ast.literal_eval(v) for k, v in record["injected"].items()}
    return Generated(record["text"], record["entries"], injected, watch=watch)


def _reads_back(value, text: str) -> bool:
    """Whether ``text`` (``repr(value)``) is Python literal data that reads back as ``value``: the same types,
    the same values."""
    try:
        return describe(ast.literal_eval(text)) == describe(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError, Unportable):
        return False


def _described(value):
    """``describe(value)`` as JSON reads it back, or None where it has none."""
    try:
        return json.loads(json.dumps(describe(value)))
    except Unportable:
        return None
