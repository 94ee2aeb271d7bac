"""Assemble a generated module: header, imports, constants, functions; black-formatted.

Guarantees: deterministic to the byte for the same input; imports only the
runtime (``from s2s import runtime as rt``) and the library functions that
``rt.foreign`` calls (``from optax import l2_loss as optax_l2_loss``); every function starts with
``xp = rt.namespace(<its parameters>)``; stable under re-formatting.
"""

from __future__ import annotations

import black
import libcst as cst

from .. import ir
from ..cstutil import literal
from .fuse import fuse

_MODE = black.Mode(line_length=88, target_versions={black.TargetVersion.PY311})

# ``black.format_str`` formats a second time whenever the first pass changed the
# text (its workaround for trailing commas), which for generated code is always:
# that doubles the cost of a transformation. One pass suffices here; the tests
# check that its output is a fixed point of ``black.format_str``.
_format_once = getattr(black, "_format_str_once", black.format_str)


def namespace_line(fn: ir.Function) -> cst.SimpleStatementLine:
    args = [cst.Arg(cst.Name(p)) for p in fn.param_names]
    value = cst.Call(cst.Attribute(cst.Name("rt"), cst.Name("namespace")), args)
    return cst.SimpleStatementLine(
        [cst.Assign([cst.AssignTarget(cst.Name("xp"))], value)]
    )


def render(
    header: str,
    functions,
    constants=None,
    imports=None,
    fused=True,
    reads=None,
    baked=None,
    baked_defaults=None,
) -> str:
    """Module text for generated ``functions`` (``ir.Function``), formatted by black; ``imports`` maps a
    module-level name to the ``(module, name)`` it is imported from (a library function ``rt.foreign`` calls),
    ``reads`` one to the ``(module, attribute)`` of your module it reads (``F = rt.indexable_constant(model.F)``).
    ``baked`` one of ``constants`` to the ``(module, attribute)`` it was read from: checked on import
    (``SCALE = rt.baked(model, "SCALE", 1.0)``), as are ``baked_defaults``, ``(module, function,
    parameter) -> value`` (``rt.baked_default(model.act, "gain", 1.0)``). ``fused``: temporaries read once written into their
    readers (``fuse``); ``s2s lower`` shows the normal form itself.
    """
    parts = [f'"""{header}"""', "", "from s2s import runtime as rt"]
    baked, baked_defaults = baked or {}, baked_defaults or {}
    modules = {m for m, _ in (*(reads or {}).values(), *baked.values())}
    modules |= {m for m, _, _ in baked_defaults}
    parts += [f"import {m}" for m in sorted(modules)]
    for alias, (module, name) in sorted((imports or {}).items()):
        parts.append(
            f"from {module} import {name}" + (f" as {alias}" if alias != name else "")
        )
    parts.append("")
    for name, value in sorted((constants or {}).items()):
        spelled = ir.code(literal(value))
        if name in baked:
            module, attribute = baked[name]
            spelled = f"rt.baked({module}, {attribute!r}, {spelled})"
        parts.append(f"{name} = {spelled}")
    for (module, function, parameter), value in sorted(baked_defaults.items()):
        spelled = ir.code(literal(value))
        parts.append(f"rt.baked_default({module}.{function}, {parameter!r}, {spelled})")
    for name, (module, attribute) in sorted((reads or {}).items()):
        parts.append(f"{name} = rt.indexable_constant({module}.{attribute})")
    parts.append("")
    for fn in functions:
        fndef = ir.to_cst(fuse(fn) if fused else fn, prelude=[namespace_line(fn)])
        parts.append(cst.Module(body=[fndef]).code)
    text = "\n".join(parts)
    return _format_once(text, mode=_MODE)
