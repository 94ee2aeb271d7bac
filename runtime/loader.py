"""Load generated modules from real files, so tracebacks and pdb show generated lines.

``GENERATED`` maps the path of every module loaded here to its text, so that
errors raised in generated code can be traced back to the user's lines
(``located``), even if the cached file is later removed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import re
import sys
import tempfile

GENERATED: dict[str, str] = {}  # path of each loaded generated module -> its text
# the base name of each loaded generated module -> the first path loaded with it
NAMED: dict[str, str] = {}


def cache_dir() -> str:
    """Where generated modules are written: ``$S2S_CACHE_DIR``, else a folder of this user's in the temp dir
    that no one else can write (modules are imported from it), else one made for this process.
    """
    chosen = os.environ.get("S2S_CACHE_DIR")
    if chosen:
        os.makedirs(chosen, exist_ok=True)
        return chosen
    return _private_folder()


@functools.cache
def _private_folder() -> str:
    """``<temp dir>/s2s-<uid>`` when it is this user's folder and no one else may write it."""
    path = os.path.join(tempfile.gettempdir(), f"s2s-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    stat = os.lstat(path)
    if (
        os.path.isdir(path)
        and not os.path.islink(path)
        and stat.st_uid == os.getuid()
        and not stat.st_mode & 0o022
    ):
        return path
    # another's, or others may write it: a folder of this process's own
    return tempfile.mkdtemp(prefix=f"s2s-{os.getuid()}-")


def write_atomic(path: str, text: str, suffix: str = ".py") -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: readers never see half a file."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".s2s-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


MAX_FILES = (
    1000  # generated modules kept in the cache folder (``$S2S_CACHE_MAX_FILES``)
)
PREFIX = "s2s_generated_"
STORED = "s2s_stored_"  # a generated module kept for later processes, with what it was made from (``module_store``)


def module_name(text: str, stem: str) -> str:
    """A Python identifier for generated ``text`` made from ``stem`` (``<lambda>`` becomes ``lambda``)."""
    safe = re.sub(r"\W+", "_", stem).strip("_") or "function"
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{PREFIX}{safe[:60]}_{digest}"


def positional(fn):
    """``fn`` called with every argument positionally: a generated jvp whose primals keep their defaults
    takes its tangents by keyword (``def f_jvp(x, scale=2.0, *, x_dot)``), and s2s passes them in order.
    """
    code = fn.__code__
    if not code.co_kwonlyargcount:
        return fn
    count = code.co_argcount
    keywords = code.co_varnames[count : count + code.co_kwonlyargcount]

    @functools.wraps(fn)
    def in_order(*args):
        return fn(*args[:count], **dict(zip(keywords, args[count:])))

    return in_order


def load_module(text: str, stem: str, injected=None, path: str | None = None):
    """Import generated source ``text`` from a file named after ``stem`` and its hash in the cache folder, or
    from ``path``, a checked-in file that holds ``text`` (its compiled form is cached next to it, as Python
    caches any module's)."""
    name = module_name(text, stem)
    if path is None:
        folder = cache_dir()
        path = os.path.join(folder, name + ".py")
        if os.path.exists(path):
            os.utime(path)  # recently used: the last to be cleaned
        else:
            write_atomic(path, text)
            clean(folder)
    GENERATED[path] = text
    NAMED.setdefault(os.path.basename(path), path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(injected or {})
    spec.loader.exec_module(module)
    sys.modules.setdefault(name, module)
    return module


_writes = [
    0
]  # modules this process wrote: the folder is cleaned at the first, then every ``CLEAN_EVERY``
CLEAN_EVERY = 100


def clean(folder: str) -> None:
    """Keep the cache folder to ``MAX_FILES`` generated modules and stored ones: the least recently used go
    first, never one this process has loaded (its tracebacks read the file). Other processes may clean it at
    the same time.
    """
    _writes[0] += 1
    if (_writes[0] - 1) % CLEAN_EVERY:
        return
    limit = int(os.environ.get("S2S_CACHE_MAX_FILES") or MAX_FILES)
    used = []
    with os.scandir(folder) as entries:
        for e in entries:
            if (e.name.startswith(PREFIX) and e.name.endswith(".py")) or (
                e.name.startswith(STORED) and e.name.endswith(".json")
            ):
                with contextlib.suppress(
                    OSError
                ):  # removed by another process meanwhile
                    used.append((e.stat().st_mtime, e.path))
    if len(used) <= limit:
        return
    used.sort()
    for _, path in used[: len(used) - limit]:
        if path not in GENERATED:
            with contextlib.suppress(OSError):
                os.unlink(path)
