"""The folder of generated modules the runtime imports: safe file names, bounded size, least recently used
cleaned first, never a file this process loaded."""

import os
import time

from s2s.runtime import loader


def _text(i):
    return f"VALUE = {i}\n"


def test_names_are_identifiers():
    for stem in ("<lambda>", "f.<locals>.g", "", "a-b c"):
        name = loader.module_name("x = 1\n", stem)
        assert name.isidentifier(), name
        assert name.startswith(loader.PREFIX)


def test_folder_is_bounded_and_keeps_what_this_process_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("S2S_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("S2S_CACHE_MAX_FILES", "5")
    monkeypatch.setattr(
        loader, "CLEAN_EVERY", 1
    )  # clean at every write, not every 100th
    old = []
    for i in range(4):  # written by "another process": not loaded here, and old
        path = tmp_path / f"{loader.module_name(_text(i), 'old')}.py"
        path.write_text(_text(i))
        past = time.time() - 1000 + i
        os.utime(path, (past, past))
        old.append(path)
    other = tmp_path / "notes.txt"  # not a generated module: never touched
    other.write_text("mine")
    loaded = [loader.load_module(_text(100 + i), "<lambda>") for i in range(4)]
    assert [m.VALUE for m in loaded] == [100, 101, 102, 103]
    names = sorted(p.name for p in tmp_path.glob(f"{loader.PREFIX}*.py"))
    assert len(names) == 5
    # the oldest "foreign" files went first; every module loaded here stayed
    assert [p.exists() for p in old] == [False, False, False, True]
    for module in loaded:
        assert os.path.exists(module.__file__)
    assert other.read_text() == "mine"
    # loading a cached module again marks it used
    before = os.stat(old[3]).st_mtime
    loader.load_module(_text(3), "old")
    assert os.stat(old[3]).st_mtime > before


def test_kept_modules_are_cleaned_with_the_others(tmp_path, monkeypatch):
    """The records of ``module_store`` count toward the bound, least recently used first."""
    monkeypatch.setenv("S2S_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("S2S_CACHE_MAX_FILES", "2")
    monkeypatch.setattr(loader, "CLEAN_EVERY", 1)
    kept = []
    for i in range(3):
        path = tmp_path / f"{loader.STORED}{i:024x}.json"
        path.write_text("{}")
        past = time.time() - 1000 + i
        os.utime(path, (past, past))
        kept.append(path)
    loaded = loader.load_module(_text(200), "f")
    assert [p.exists() for p in kept] == [False, False, True]
    assert os.path.exists(loaded.__file__)


def test_a_cache_folder_others_may_write_is_not_used(tmp_path, monkeypatch):
    """Modules are imported from the cache folder: the default one is used only when it is the user's own
    and no one else may write it; else the process makes a private one."""
    monkeypatch.delenv("S2S_CACHE_DIR", raising=False)
    monkeypatch.setattr(loader.tempfile, "tempdir", str(tmp_path))
    shared = tmp_path / f"s2s-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    loader._private_folder.cache_clear()
    try:
        chosen = loader.cache_dir()
        assert chosen != str(shared) and os.path.isdir(chosen)
        assert not os.stat(chosen).st_mode & 0o022
        shared.chmod(0o755)
        loader._private_folder.cache_clear()
        assert loader.cache_dir() == str(shared)
    finally:
        loader._private_folder.cache_clear()
