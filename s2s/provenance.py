"""The provenance header of a checked-in generated module, written by ``s2s generate`` and read by its check.

A module generated for a ``[tool.s2s]`` target says, in its docstring, what
it was made from, relative to the project root, so that the text is the same
whichever folder the command runs in::

    Regenerate with: s2s generate
    Target: model.py::loss grad wrt=params
    Input: layers.py sha256:0f3c...
    Input: model.py sha256:9a41...
    s2s version: 0.1.0
    Module hash: sha256:77d0...

``Input`` lines hash every file the module's code was read from (the target's
file and the modules its helpers come from); ``Module hash`` hashes the text
after the docstring, so an edit by hand is noticed too. ``is_fresh`` decides
from these lines alone, reading files and hashing them: it imports neither
the user's code nor the compiler. This module imports only the standard library.
"""

from __future__ import annotations

import hashlib
import os

COMMAND = "s2s generate"
_PLACEHOLDER = "sha256:" + "?" * 16


def file_hash(path: str) -> str:
    """The file's hash, line endings normalized (a checkout that writes ``\\r\\n`` reads as fresh)."""
    with open(path, "rb") as f:
        data = f.read().replace(b"\r\n", b"\n")
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def relative(path: str, root: str) -> str:
    """``path`` relative to the project ``root``, with ``/`` separators."""
    return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")


def header_lines(target: str, inputs, root: str, version: str) -> list[str]:
    """The provenance lines for a module of ``target`` made from the files ``inputs``."""
    lines = [f"Regenerate with: {COMMAND}", f"Target: {target}"]
    for path in sorted({relative(p, root) for p in inputs}):
        lines.append(f"Input: {path} {file_hash(os.path.join(root, path))}")
    lines += [f"s2s version: {version}", f"Module hash: {_PLACEHOLDER}"]
    return lines


def _body(text: str) -> str | None:
    """The text after the module docstring (None if it has none)."""
    if not text.startswith('"""'):
        return None
    end = text.find('"""', 3)
    return None if end < 0 else text[end + 3 :]


def _body_hash(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()[:16]


def seal(text: str) -> str:
    """``text`` with its ``Module hash`` placeholder replaced by the hash of what follows the docstring."""
    digest = _body_hash(_body(text))
    return text.replace(f"Module hash: {_PLACEHOLDER}", f"Module hash: {digest}", 1)


def read(text: str) -> dict:
    """The provenance lines of a generated module: target, inputs (path -> hash), version, module hash."""
    found = {"inputs": {}}
    end = text.find('"""', 3) if text.startswith('"""') else -1
    for line in text[:end].splitlines() if end > 0 else ():
        key, _, value = line.partition(": ")
        if key == "Target":
            found["target"] = value
        elif key == "Input":
            path, _, digest = value.rpartition(" ")
            found["inputs"][path] = digest
        elif key == "s2s version":
            found["version"] = value
        elif key == "Module hash":
            found["module"] = value
    return found


def is_fresh(output: str, target: str, root: str, version: str) -> bool:
    """Whether the module at ``output`` was generated for ``target`` from the current input files, by this
    version of s2s, and not edited since."""
    try:
        with open(output, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return False
    found = read(text)
    if (
        found.get("target") != target
        or found.get("version") != version
        or not found["inputs"]
    ):
        return False
    body = _body(text)
    if body is None or found.get("module") != _body_hash(body):
        return False
    for path, digest in found["inputs"].items():
        full = os.path.join(root, path)
        if not os.path.isfile(full) or file_hash(full) != digest:
            return False
    return True


def inputs_of(output: str) -> list[str]:
    """The input files (relative to the root) that the module at ``output`` says it was made from."""
    try:
        with open(output, encoding="utf-8") as f:
            return list(read(f.read())["inputs"])
    except OSError:
        return []
