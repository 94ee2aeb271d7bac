"""Library objects made in the function from constants, read as the module-level objects they equal.

``tx = optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1))`` makes an optimizer from values
written in the code: the same object at every call. ``desugar(source)`` makes it once, when s2s reads
the function, and reads ``tx`` as that object, so ``tx.init(params)`` and ``tx.update(...)`` are calls
of a library's methods, as for a module-level ``TX`` (run by JAX where the derivative reaches them).

Guarantee: a line ``name = call`` (in any block), ``call``'s function one of optax's, flax's or
equinox's, its arguments built only from literals, the module's values and such calls (no starred
argument), and ``name`` bound nowhere else in the function (nested functions included). The object is
made when the function is read, with the module's names; a call that raises there is left as it is (the
error then comes where s2s reads it). Any other line stays as it is: an optimizer made from a value of
the function (``optax.sgd(lr)``, ``lr`` a parameter) is no constant.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .rewriting import (
    PositionKeeping,
    assignment,
    bindings,
    function_body,
    namer_of,
    with_node,
)
from .source import FunctionSource

LIBRARIES = ("optax", "flax", "equinox")
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.Imaginary)


def _root(obj) -> str:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0]


class _Constants:
    def __init__(self, source: FunctionSource):
        self.env = source.env
        self.bound = bindings(source.node)

    def value(self, node):
        """The module-level object a name or attribute chain reads, else None."""
        if isinstance(node, cst.Name):
            if node.value in self.bound:
                return None
            return self.env.get(node.value)
        if isinstance(node, cst.Attribute):
            owner = self.value(node.value)
            return None if owner is None else getattr(owner, node.attr.value, None)
        return None

    def constant(self, node) -> bool:
        """Whether ``node`` is the same value at every call: literals, module values, library calls of them."""
        if isinstance(node, _LITERALS):
            return True
        if isinstance(node, (cst.Name, cst.Attribute)):
            if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
                return True
            return self.value(node) is not None
        if isinstance(node, cst.UnaryOperation):
            return self.constant(node.expression)
        if isinstance(node, cst.BinaryOperation):
            return self.constant(node.left) and self.constant(node.right)
        if isinstance(node, (cst.Tuple, cst.List)):
            return all(
                not isinstance(el, cst.StarredElement) and self.constant(el.value)
                for el in node.elements
            )
        if isinstance(node, cst.Dict):
            return all(
                isinstance(el, cst.DictElement)
                and self.constant(el.key)
                and self.constant(el.value)
                for el in node.elements
            )
        return isinstance(node, cst.Call) and self.made(node)

    def made(self, call: cst.Call) -> bool:
        """Whether ``call`` makes a library object from constants."""
        return (
            _root(self.value(call.func)) in LIBRARIES
            and not any(a.star for a in call.args)
            and all(self.constant(a.value) for a in call.args)
        )


class _Reads(PositionKeeping):
    """The lines making the objects left out, and every read of their names (not an attribute's or a
    keyword's name) as the module-level names they are read as."""

    def __init__(self, positions, lines: set, renamed: dict):
        super().__init__(positions)
        self.lines, self.renamed = lines, renamed

    def leave_Name(self, original, updated):
        new = self.renamed.get(updated.value)
        return updated if new is None else updated.with_changes(value=new)

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)

    def leave_SimpleStatementLine(self, original, updated):
        return cst.RemoveFromParent() if id(original) in self.lines else updated

    def leave_IndentedBlock(self, original, updated):
        if updated.body:
            return updated
        return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its library objects made from constants (see the module) read as module values."""
    if function_body(source) is None:
        return source
    constants = _Constants(source)
    found = {}
    for node in iter_nodes(source.node.body):
        assign = assignment(node) if isinstance(node, cst.SimpleStatementLine) else None
        if assign is None or not isinstance(assign.value, cst.Call):
            continue
        target = assign.targets[0].target
        if not (
            isinstance(target, cst.Name)
            and constants.bound[target.value] == 1
            and constants.made(assign.value)
        ):
            continue
        code = source.file.module.code_for_node(assign.value)
        try:
            found[node] = (target.value, eval(code, dict(source.env)))
        except Exception:  # the library's own error, where s2s reads the call
            continue
    if not found:
        return source
    namer = namer_of(source)
    env, renamed = dict(source.env), {}
    for name, obj in found.values():
        # the name itself, once its line is gone, unless the module holds another value by it
        held = name if name not in source.env else namer.fresh(f"{name}_made")
        if held != name:
            renamed[name] = held
        env[held] = obj
    lines = {id(line) for line in found}
    node = rewrite(source.node, _Reads(source.file.positions, lines, renamed))
    return replace(with_node(source, node), env=env)
