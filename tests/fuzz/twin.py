"""The JAX twin: a drawn NumPy module rewritten for ``jax.numpy`` (the oracle).

``jax_twin`` turns in-place writes into ``.at[...]`` updates and adapts the few
spellings jax.numpy reads differently (``np.clip`` keywords, list indices);
``to_jnp`` gives the same program in the JAX-docs dialect (``jnp.``).
"""

from __future__ import annotations

import ast
from typing import ClassVar


class _Twin(ast.NodeTransformer):
    """NumPy source to jax.numpy: ``a[i] op= v`` -> ``a = a.at[i].set/add/multiply(...)``, ``np.clip`` keywords."""

    OPS: ClassVar = {
        ast.Add: "add",
        ast.Sub: "add",
        ast.Mult: "multiply",
        ast.Div: "divide",
    }

    @staticmethod
    def _array(node):
        return ast.Call(
            ast.Attribute(ast.Name("np", ast.Load()), "array", ast.Load()), [node], []
        )

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.slice, ast.List):  # jax.numpy indexes with arrays, not lists
            node.slice = self._array(node.slice)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == "math"
            and node.attr in ("exp", "sqrt", "tanh", "log", "sin", "cos")
        ):
            # math on a traced scalar: jax.numpy in the twin
            node.value = ast.Name("np", ast.Load())
        return node

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name == "numpy" and alias.asname == "np":
                alias.name = "jax.numpy"
            elif alias.name == "numpy.linalg":
                alias.name = "jax.numpy.linalg"
        return node

    def visit_ImportFrom(self, node):
        if node.module == "scipy.special":
            node.module = "jax.scipy.special"
        return node

    def _at(self, target, method, value):
        array = ast.Call(
            ast.Attribute(ast.Name("np", ast.Load()), "asarray", ast.Load()),
            [_load(target.value)],
            [],
        )
        at = ast.Attribute(
            ast.Subscript(
                ast.Attribute(array, "at", ast.Load()), target.slice, ast.Load()
            ),
            method,
            ast.Load(),
        )
        return ast.Assign([_store(target.value)], ast.Call(at, [value], []))

    def __init__(self, dicts=frozenset()):
        self.dicts = (
            dicts  # names bound to dict displays: their items are written as Python's
        )

    def _of_a_dict(self, target) -> bool:
        return isinstance(target.value, ast.Name) and target.value.id in self.dicts

    def visit_Assign(self, node):
        self.generic_visit(node)
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript)
            and not _is_key(node.targets[0].slice)
            and not self._of_a_dict(node.targets[0])
        ):
            return ast.copy_location(self._at(node.targets[0], "set", node.value), node)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if (
            isinstance(node.target, ast.Subscript)
            and not _is_key(node.target.slice)
            and not self._of_a_dict(node.target)
        ):
            value = node.value
            if isinstance(node.op, ast.Sub):
                value = ast.UnaryOp(ast.USub(), value)
            return ast.copy_location(
                self._at(node.target, self.OPS[type(node.op)], value), node
            )
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if ast.unparse(node.func) == "np.clip":
            for kw in node.keywords:
                kw.arg = {"a_min": "min", "a_max": "max"}.get(kw.arg, kw.arg)
            if len(node.args) > 1:
                node.keywords = [
                    ast.keyword(k, a) for k, a in zip(["min", "max"], node.args[1:])
                ] + node.keywords
                node.args = node.args[:1]
        if ast.unparse(node.func) == "np.take":
            node.args = [
                self._array(a) if isinstance(a, ast.List) else a for a in node.args
            ]
        if ast.unparse(node.func) in ("np.prod", "np.cumsum") and node.args:
            # of a shape or a list of sizes: jax.numpy takes arrays only
            node.args[0] = self._array(node.args[0])
        return node


def _load(node):
    node = ast.parse(ast.unparse(node), mode="eval").body
    return node


def _store(node):
    node = _load(node)
    node.ctx = ast.Store()
    return node


def to_jnp(source: str) -> str:
    """The program in the JAX-docs dialect: ``jnp.`` spellings, ``.at[...]`` updates (its own twin)."""
    text = jax_twin(source)
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "jax.numpy" and alias.asname == "np":
                    alias.asname = "jnp"
        if isinstance(node, ast.Name) and node.id == "np":
            node.id = "jnp"
    return ast.unparse(tree) + "\n"


def jax_twin(source: str) -> str:
    tree = ast.parse(source)
    # (and lists: ``ws[i] = ws[i] - lr * g`` writes an item of a Python list, as in JAX code)
    dicts = {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and isinstance(n.value, (ast.Dict, ast.List, ast.ListComp))
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    tree = _Twin(frozenset(dicts)).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _is_key(index) -> bool:
    """A string index: a write into a dict, which JAX code writes as NumPy code does."""
    return isinstance(index, ast.Constant) and isinstance(index.value, str)
