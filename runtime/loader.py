"""Load generated modules from real files, so tracebacks and pdb show generated lines.

``GENERATED`` maps the path of every module loaded here to its text, so that
errors raised in generated code can be traced back to the user's lines
(``located``), even if the cached file is later removed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile

GENERATED: dict[str, str] = {}  # path of each loaded generated module -> its text


def cache_dir() -> str:
    """Where generated modules are written: ``$S2S_CACHE_DIR``, else a folder in the temp dir."""
    path = os.environ.get("S2S_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), f"s2s-{os.getuid()}"
    )
    os.makedirs(path, exist_ok=True)
    return path


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: readers never see half a file."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".s2s-", suffix=".py")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_module(text: str, stem: str, injected=None):
    """Import generated source ``text`` from a file named after ``stem`` and its hash."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    name = f"s2s_generated_{stem}_{digest}"
    path = os.path.join(cache_dir(), name + ".py")
    if not os.path.exists(path):
        write_atomic(path, text)
    GENERATED[path] = text
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(injected or {})
    spec.loader.exec_module(module)
    sys.modules.setdefault(name, module)
    return module
