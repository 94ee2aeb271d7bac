"""Use a checked-in module (``s2s generate``'s) for an API request, without transforming anything.

``find(fn, kind, argnums, has_aux)`` looks for the ``[tool.s2s]`` target of
the project ``fn``'s file is in that asks for the same transformation of
``fn``: ``s2s.grad(f, argnums)`` is a ``grad`` target whose ``wrt`` names
those parameters, ``value_and_grad`` and ``jvp`` alike, and ``@s2s.transform``
a ``lower`` target. When its module is fresh (``provenance.is_fresh``: the
same target, s2s version and input hashes, body unedited), its text is used
as it is, and neither libcst nor black is imported. When it is stale, the
caller generates the module in memory, and this warns once per file that
``s2s generate`` would write it again. ``s2s generate`` itself never reads
checked-in modules (``ENABLED``): it writes them.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
import os
import re
import sys
import types
import warnings

from . import provenance
from .generated import Generated
from .runtime.constants import MISSING, attribute_of, same_literal
from .targets import ConfigError, Target, find_root, targets_of

ENABLED = True
_KINDS = {
    "grad": "grad",
    "value_and_grad": "value_and_grad",
    "jvp": "jvp",
    "primal": "lower",
}
_WARNED: set[str] = set()
_DEF = re.compile(r"^def (\w+)\(", re.MULTILINE)


@functools.lru_cache(maxsize=64)
def _project(folder: str):
    """``(root, targets)`` of the project ``folder`` is in; None without one, or with a ``[tool.s2s]``
    that ``s2s generate`` would refuse (it says why; the API transforms the function as usual).
    """
    try:
        root, table = find_root(folder)
        return root, targets_of(table)
    except ConfigError:
        return None


def _argnums(fn, wrt, default) -> tuple | int | None:
    """The argnums a target's ``wrt`` names (the CLI's reading of ``--wrt``)."""
    params = list(inspect.signature(fn).parameters)
    if not wrt:
        return default if default is not None else tuple(range(len(params)))
    names = [w.strip() for w in wrt.split(",")]
    if any(n not in params for n in names):
        return None
    nums = tuple(params.index(n) for n in names)
    return nums[0] if len(nums) == 1 else nums


def find(fn, kind: str, argnums, has_aux: bool) -> Generated | None:
    """The checked-in module for this request, if one is declared and fresh (see the module's docstring)."""
    wanted = _KINDS.get(kind)
    if not ENABLED or wanted is None or has_aux or not inspect.isfunction(fn):
        return None
    if fn.__qualname__ != fn.__name__:
        return None  # a nested function or a method: not a target
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        return None
    project = path and _project(os.path.dirname(os.path.abspath(path)))
    if not project:
        return None
    root, targets = project
    source = f"{provenance.relative(path, root)}::{fn.__name__}"
    for target in targets:
        if target.source != source or target.chain != [wanted]:
            continue
        default = None if wanted == "jvp" else 0
        if wanted != "lower" and _argnums(fn, target.wrt, default) != argnums:
            continue
        return _read(target, root, kind)
    return None


def _outside_s2s() -> int:
    """The ``stacklevel`` of the first caller outside s2s (the user's line that asked for the module)."""
    ours = (
        os.path.dirname(os.path.abspath(__file__)) + os.sep,  # the compiler
        os.path.dirname(os.path.abspath(functools.__file__)) + os.sep + "functools.py",
    )
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        ours
    ):
        frame, level = frame.f_back, level + 1
    return level


def _read(target: Target, root: str, kind: str) -> Generated | None:
    from . import __version__

    output = os.path.join(root, target.output)
    if not provenance.is_fresh(output, target.describe(), root, __version__):
        _warn_stale(
            output,
            "is stale (its inputs, its target or s2s changed since it was written, or it was edited)",
        )
        return None
    with open(output, encoding="utf-8") as f:
        text = f.read()
    changed = _changed_literal(text)
    if changed is not None:
        _warn_stale(output, f"was written when {changed}")
        return None
    inputs = provenance.read(text)["inputs"]
    if not all(runs_the_file(os.path.join(root, p)) for p in inputs):
        return None  # made from files that are not the code running here: generated as usual (which says so)
    # the entry function is the module's last (codegen writes callees first)
    entries = _DEF.findall(text)
    return Generated(text, {kind: entries[-1]}, path=output) if entries else None


def _warn_stale(output: str, why: str) -> None:
    """Say once per file that it was not used, and why."""
    if output not in _WARNED:
        _WARNED.add(output)
        warnings.warn(
            f"{os.path.relpath(output)} {why}: s2s generated the module in memory; run `s2s generate` "
            "to write it again",
            stacklevel=_outside_s2s(),
        )


def _changed_literal(text: str) -> str | None:
    """What changed of the literals the file baked in (``rt.baked(model, "SCALE", 1.0)``): "`model.SCALE`
    was 1.0; it is 3.0 now" for the first its module holds no longer, else None. Read with Python's own
    parser (no libcst)."""
    if "rt.baked" not in text:
        return None
    for node in ast.parse(text).body:
        call = node.value if isinstance(node, (ast.Assign, ast.Expr)) else None
        kind = ast.unparse(call.func) if isinstance(call, ast.Call) else None
        if kind not in ("rt.baked", "rt.baked_default"):
            continue
        owner, name = ast.unparse(call.args[0]), call.args[1].value
        value = ast.literal_eval(call.args[2])
        if kind == "rt.baked":
            what, live = f"`{owner}.{name}`", _live(owner, name)
        else:
            module, _, function = owner.rpartition(".")
            what, live = f"the default of `{name}` of `{function}`", MISSING
            with contextlib.suppress(TypeError, ValueError):
                parameter = inspect.signature(_live(module, function)).parameters
                live = parameter[name].default if name in parameter else MISSING
        if not same_literal(live, value):
            now = "undefined" if live is MISSING else f"{live!r}"
            return f"{what} was {value!r}; it is {now} now"
    return None


def _live(module_name: str, attribute: str):
    """``module.attribute`` as this process holds it (the module imported, as the generated file would)."""
    try:
        return attribute_of(importlib.import_module(module_name), attribute)
    except ImportError:
        return MISSING


def runs_the_file(path: str) -> bool:
    """Whether every function of the imported module read from ``path`` (if it is imported) is the code the
    file holds now: a file edited after it was imported is not what runs, and the module made from it would
    compute something else. Python's own compiler checks it (no libcst)."""
    full = os.path.abspath(path)
    base = os.path.basename(full)
    live = [
        m
        for m in list(sys.modules.values())
        if isinstance(getattr(m, "__file__", None), str)
        and m.__file__.endswith(base)  # (few are: the path of those only)
        and os.path.abspath(m.__file__) == full
    ]
    if not live:
        return True  # not imported: nothing of it runs here
    try:
        with open(full, encoding="utf-8") as f:
            compiled = compile(f.read(), full, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return False
    defined, stack = {}, [compiled]
    while stack:
        for const in stack.pop().co_consts:
            if isinstance(const, types.CodeType):
                defined[(const.co_qualname, const.co_firstlineno)] = const
                stack.append(const)
    for module in live:
        for value in vars(module).values():
            if inspect.isfunction(value) and value.__module__ == module.__name__:
                # (a library's wrapper named after your function, ``@jnp.vectorize``: the function it wraps)
                code = inspect.unwrap(value).__code__
                if os.path.abspath(code.co_filename) != full:
                    continue
                found = defined.get((code.co_qualname, code.co_firstlineno))
                if found is None or not _same_code(found, code):
                    return False
    return True


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    if a.co_code != b.co_code or a.co_names != b.co_names:
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType):
            if not (isinstance(y, types.CodeType) and _same_code(x, y)):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True
