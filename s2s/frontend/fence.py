"""Reject what s2s cannot transform, early, at the user's line, with what to do instead.

Guarantee: after ``check`` passes, the function body holds only assignments
(to names, tuples of names, or elements of arrays ``x[i]``), augmented
assignments, ``if``/``for``/``while`` (without ``else`` on loops), ``break``,
``continue``, ``return``, ``pass``, ``list.append`` calls, the in-place writes
of ``effects`` (``out=``, ``np.copyto``, ``y.sort()``), output statements (``print``, ``logging``:
``output``; only their arguments, ``assert``'s and ``raise``'s messages may hold f-strings), ``assert`` (checked by ``rt.check``), local ``def``s and a docstring; its expressions
hold no walrus or ``await``; the signature has no ``*args``/``**kwargs`` unless the source is read at a
call shape (``variadic``). Starred arguments are the resolver's: spread into a user function's parameters
(``spread``), refused elsewhere.
"""

from __future__ import annotations

import types

import libcst as cst
import numpy

from ..cstutil import iter_nodes
from ..errors import UnsupportedSyntax
from .effects import is_effect
from .output import is_output_statement
from .source import FunctionSource

_STATEMENTS = {
    cst.Try: (
        "`try` statement",
        "move error handling outside the transformed function",
    ),
    cst.With: (
        "`with` statement",
        "move context managers outside the transformed function",
    ),
    cst.Global: ("`global` statement", "pass the value as an argument"),
    cst.Nonlocal: ("`nonlocal` statement", "return the value instead"),
    cst.Del: (
        "`del` of an item or an attribute",
        "build a new dict or list without it (a `del` of a name is dropped)",
    ),
    cst.Import: (
        "`import` inside a block of the function",
        "import at module level, or at the top of the function",
    ),
    cst.ImportFrom: (
        "`import` inside a block of the function",
        "import at module level, or at the top of the function",
    ),
    cst.ClassDef: (
        "class definition inside the function",
        "define the class at module level",
    ),
    cst.Match: ("`match` statement", "use `if`/`elif`"),
}
_EXPRESSIONS = {
    # (the others are loops: ``frontend/comprehensions``)
    cst.ListComp: (
        "list comprehension in a `while` test (or `async`)",
        "build the list on a line of its own before the loop, and again at the end of its body",
    ),
    cst.SetComp: (
        "set comprehension",
        "use a list comprehension (a set has no order s2s could keep)",
    ),
    cst.DictComp: (  # elsewhere a loop of item writes (``frontend/comprehensions``)
        "dict comprehension in a `while` test (or `async`)",
        "build the dict on a line of its own before it",
    ),
    cst.GeneratorExp: (
        "generator expression in a `while` test (or `async`)",
        "compute it on a line of its own before the loop, and again at the end of its body",
    ),
    cst.NamedExpr: ("assignment expression `:=`", "assign on its own line"),
    cst.Await: ("`await`", "transform a synchronous function"),
    cst.Yield: (
        "`yield` (a generator function)",
        "return a list of the values (or an array stacked from them) instead of generating them",
    ),
    cst.StarredElement: ("starred expression", "pass arguments one by one"),
    # f-strings are concatenations (``frontend/strings.py``); these are left
    cst.FormattedString: (
        "an f-string with `!a` or a field inside its format spec (`{x:{width}}`)",
        'write the spec out (`f"{x:8.3f}"`), or build the string with `str` and `format`',
    ),
}


class _Fence:
    def __init__(self, source: FunctionSource):
        self.source = source
        self.output_strings = (
            set()
        )  # ids of the f-strings that output statements format

    @property
    def _own_parameters(self):
        return getattr(self.source.node, "params", None)

    def fail(self, node, what, hint):
        raise UnsupportedSyntax(
            f"{what} is not supported", self.source.origin(node), hint
        )

    def check(self, node) -> None:
        kind = type(node)
        found = _STATEMENTS.get(kind) or _EXPRESSIONS.get(kind)
        formatted = (
            node.msg
            if kind is cst.Assert
            else (
                node.exc  # (an exception's message: ``output.raising`` formats it)
                if kind is cst.Raise
                else (
                    node.value
                    if kind is cst.Expr and is_output_statement(node)
                    else None
                )
            )
        )
        for inner in iter_nodes(formatted) if formatted is not None else ():
            if isinstance(inner, cst.FormattedString):
                self.output_strings.add(id(inner))
        if found is not None and id(node) not in self.output_strings:
            self.fail(node, *found)
        if kind is cst.FunctionDef and node.asynchronous:
            self.fail(node, "`async def`", "transform a synchronous function")
        variable = kind is cst.Parameters and (
            isinstance(node.star_arg, cst.Param) or node.star_kwarg is not None
        )
        if variable and (node is not self._own_parameters or self.source.shape is None):
            self.fail(node, "`*args`/`**kwargs` parameters", "name each parameter")
        if kind in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign):
            self._check_target(node.target, node)
        if kind in (cst.For, cst.While) and node.orelse is not None:
            self.fail(
                node.orelse,
                f"`else` on a `{'for' if kind is cst.For else 'while'}` loop",
                "set a flag before `break` and test it after the loop",
            )
        if kind is cst.For and node.asynchronous is not None:
            self.fail(node, "`async for`", "transform a synchronous function")
        if kind is cst.For:
            self._check_target(node.target, node)
        if (
            kind is cst.Expr
            and not _is_docstring(node)
            and not is_append(node)
            and not is_effect(node.value)
            and not is_output_statement(node)
            and not isinstance(node.value, (cst.Yield, cst.Await))
        ):
            self._global_random_state(node)
            self._method_statement(node)
            self._function_statement(node)
            self.fail(
                node,
                "an expression statement (its value is discarded)",
                "assign the value to a name, or move side effects such as print outside",
            )

    def _function_statement(self, node):
        """``update(params, grads)`` as a statement: a function called for what it changes in its
        arguments, which s2s's code (values, not memory) does not see: return them instead.
        """
        value = node.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return
        name = value.func.value
        first = value.args[0].value if value.args else None
        held = first.value if isinstance(first, cst.Name) else "the_value"
        self.fail(
            node,
            f"`{name}(...)` as an expression statement (a function called for what it changes in its "
            "arguments in place, `p[k] -= ...`, which s2s's code, computing with returned values, "
            "would lose)",
            f"make `{name}` return what it changes and assign it: "
            f"`{held} = {cst.Module([]).code_for_node(value)}`",
        )

    def _method_statement(self, node):
        """``self.loss.remember(layers)`` as a statement: a method called for what it changes in an object
        s2s does not write as names here (held by another object, passed in, made by a library).
        """
        value = node.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
            return
        from .rewriting import as_written

        written = as_written(self.source, value)
        spelled, _, _ = (
            written.partition("(")
            if "(" in written
            else (cst.Module([]).code_for_node(value.func), "", "")
        )
        owner = spelled.rpartition(".")[0] or spelled
        method = value.func.attr.value
        from .rewriting import bindings, object_of

        held = object_of(value.func.value, self.source.env, bindings(self.source.node))
        if isinstance(held, types.ModuleType):
            # ``np.put(a, idx, v)``: a library function called for what it writes into its arguments
            self.fail(
                node,
                f"`{spelled}(...)` as an expression statement: a function called for what it writes into "
                "its arguments (s2s reads `np.copyto`, `np.fill_diagonal`, `np.add.at` and `out=` so)",
                "write the element assignment it stands for (`a[idx] = v` for `np.put(a, idx, v)` of a "
                "1-D `a`), or assign what a function returns",
            )
        if owner.startswith("super(") or method.startswith("__"):
            self.fail(
                node,
                f"`{spelled}(...)`: a base class's `{method}` called for what it sets on the object, "
                "where s2s does not write the object's attributes as names",
                "s2s writes an object made in the function whose `__init__`, and the bases' it calls, "
                "only assign `self.attribute = ...`; keep its construction to that, or make the object "
                "outside the function and pass its arrays as arguments",
            )
        if hasattr(numpy.ndarray, method):
            self.fail(
                node,
                f"`{spelled}(...)` as an expression statement: an array method that changes `{owner}` "
                "in place",
                (
                    f"assign what NumPy's function returns: `{owner} = np.{method}({owner}, ...)`"
                    if hasattr(numpy, method)
                    else f"compute the new value and assign it to `{owner}`"
                ),
            )
        self.fail(
            node,
            f"`{spelled}(...)` as an expression statement (a method called for what it changes in "
            f"`{owner}`, an "
            "object whose state s2s does not follow here: held by another object, passed in, or made "
            "by a library)",
            "s2s follows the methods of an object made in the function and named there "
            "(`loss = Loss()`, then `loss.remember(layers)`); else pass what the method would store "
            "as arguments, or have it return the new value and assign it",
        )

    def _global_random_state(self, node):
        """``np.random.seed(0)`` as a statement: NumPy's global random state, which compiled code never
        reads (its own draws are refused); a located error that says so."""
        from .rewriting import bindings, object_of

        value = node.value
        if not isinstance(value, cst.Call):
            return
        obj = object_of(value.func, self.source.env, bindings(self.source.node))
        if (getattr(obj, "__module__", None) or "").startswith("numpy.random"):
            spelled = cst.Module([]).code_for_node(value.func)
            self.fail(
                node,
                f"`{spelled}(...)` inside the function (NumPy's global random state)",
                "seed outside, before calling it; for random numbers inside, pass a `jax.random` key "
                "(`jax.random.normal(key, shape)`)",
            )

    def _check_target(self, target, stmt):
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                if isinstance(el, cst.StarredElement):
                    self.fail(
                        el, "starred assignment target", "unpack each element by name"
                    )
                self._check_target(el.value, stmt)
        elif isinstance(stmt, cst.For) and not isinstance(target, cst.Name):
            self.fail(
                target,
                "a loop target other than names",
                "loop over names: `for x in xs:`",
            )
        elif isinstance(target, cst.Subscript):
            base = target
            while isinstance(base, cst.Subscript):
                base = base.value
            if not isinstance(base, cst.Name):
                flat = isinstance(base, cst.Attribute) and base.attr.value == "flat"
                array = cst.Module([]).code_for_node(base.value) if flat else ""
                self.fail(
                    stmt,
                    "an in-place write into an attribute or call result",
                    (
                        f"write into a flat copy and reshape it back: `flat = {array}.flatten()`, "
                        f"`flat[...] = ...`, `{array} = flat.reshape({array}.shape)`"
                        if flat
                        else "write into a local array variable"
                    ),
                )
        elif isinstance(target, cst.Attribute):
            attr = target.attr.value
            name = cst.Module([]).code_for_node(target.value)
            hints = {
                "shape": f"make a new array of that shape: `{name} = {name}.reshape(...)` (NumPy's "
                f"`{name}.shape = ...` reshapes the array in place, and every name holding it)",
                "dtype": f"make a new array: `{name} = {name}.astype(...)`",
            }
            self.fail(
                stmt,
                f"assignment to an attribute (`{name}.{attr} = ...`)",
                hints.get(attr, "assign to a new name instead"),
            )


def is_append(node: cst.Expr) -> bool:
    """``name.append(value)``: building a list (stacked after a loop)."""
    call = node.value
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and isinstance(call.func.value, cst.Name)
        and call.func.attr.value == "append"
        and len(call.args) == 1
        and call.args[0].keyword is None
        and not call.args[0].star
    )


def _is_docstring(node: cst.Expr) -> bool:
    return isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString))


def check(source: FunctionSource) -> None:
    """Raise ``UnsupportedSyntax`` at the first construct s2s cannot transform."""
    fence = _Fence(source)
    for node in iter_nodes(source.node):
        fence.check(node)
