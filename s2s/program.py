"""A program: the user's function and every helper it calls, lowered, with derivative-flow summaries.

Helpers are the user's own functions (same module or imported); each is
lowered once and later gets its own generated derivative, mirroring the
user's structure. ``flows[h][i]`` says whether a derivative flows from
parameter ``i`` of helper ``h`` to its output.
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass, field

from . import ir
from .errors import S2SError
from .frontend import source
from .pipeline import lower
from .transforms.activity import activity, diff_names


@dataclass
class Program:
    main: ir.Function
    helpers: dict = field(default_factory=dict)  # name -> lowered Function, callees first
    constants: dict = field(default_factory=dict)
    flows: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)  # FunctionSource of main and helpers

    @property
    def digest(self) -> str:
        """A hash of every function's source text (the input of the transformation)."""
        h = hashlib.sha256()
        for src in self.sources:
            h.update(src.name.encode() + b"\0" + src.text.encode() + b"\0")
        return h.hexdigest()[:16]


def build(fn) -> Program:
    program = Program(main=None)
    visiting: list[str] = []
    seen: dict = {}  # helper name -> live function

    def visit(live_fn, name=None):
        src = source.load(live_fn)
        resolved = lower(src, name)
        program.sources.append(src)
        for key, value in resolved.constants.items():
            if key in program.constants and not _same(program.constants[key], value):
                raise S2SError(
                    f"two modules give `{key}` different values; the generated module can hold one",
                    src.origin(src.node),
                    f"rename one of them, or pass `{key}` as an argument",
                )
            program.constants[key] = value
        for helper_name, helper in sorted(resolved.helpers.items()):
            if helper_name in seen and seen[helper_name] is not helper:
                raise S2SError(
                    f"two different functions named `{helper_name}` are called; the generated module can hold one",
                    src.origin(src.node),
                    "rename one of them",
                )
            seen[helper_name] = helper
            if helper_name in program.helpers or helper_name in visiting or helper_name == src.name:
                continue  # done, or recursive: its summary is being computed (see below)
            visiting.append(helper_name)
            program.flows[helper_name] = (False,) * len(inspect.signature(helper).parameters)
            lowered = visit(helper, helper_name)
            visiting.pop()
            program.helpers[helper_name] = lowered
            _summarize(helper_name, lowered, program)
        return resolved.function

    program.main = visit(fn)
    return program


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):  # arrays: compare by identity only
        return False


def _summarize(name: str, fn: ir.Function, program: Program) -> None:
    """``program.flows[name]``: a fixed point, so a recursive helper's calls to itself count too.

    The summary starts with no flow at all and only ever grows, so this ends
    after at most one round per parameter.
    """
    while True:
        flows = _flows(fn, program)
        if flows == program.flows[name]:
            return
        program.flows[name] = tuple(a or b for a, b in zip(flows, program.flows[name]))


def _flows(fn: ir.Function, program: Program) -> tuple[bool, ...]:
    out = fn.body[-1].value
    active = activity(fn.body, fn.param_names, diff_names(out), frozenset(program.helpers), program.flows)
    return tuple(p in active or p in diff_names(out) for p in fn.param_names)
