"""Helpers that update an argument in place, called where the caller reads it after: the update handed back.

CS231n's ``batchnorm_forward(x, gamma, beta, bn_param)`` ends with ``bn_param["running_mean"] =
running_mean``: NumPy changes the caller's dict, and ``FullyConnectedNet.loss`` passes
``self.bn_params[i - 1]``, a dict its list holds. s2s computes values, so the helper's writes would stay
inside it; ``desugar(source)`` makes them explicit. The call becomes one of ``WritesBack(helper,
params)``, the helper whose every ``return v`` is ``return bn_param, v``, and the caller assigns what it
hands back where the argument came from (the value last: ``bn_param = helper(bn_param)`` keeps it)::

    out, cache = batchnorm_forward(x, g, b, bn_params[i - 1])
    # becomes
    bn_params[i - 1], (out, cache) = batchnorm_forward_written_back(x, g, b, bn_params[i - 1])

Guarantee: rewritten are the calls, on a line of their own (``target = helper(...)`` or
``helper(...)``), of a function of the program whose own statements update a parameter in place
(``helper_sharing.written_directly``: never rebound, never handed on to another helper that updates it)
when the argument for it is a name the function binds that is not its parameter (the caller's object,
or a module's, stays an error), or an item of one by constant keys or names (``bn_params[i - 1]``), and that name
is read by another line of the function. What else holds the argument's object (``p =
bn_params[0]`` read after the call) is checked where the call is (``helper_updates``), as for any
helper that updates its parameter. Other calls stay as they are.
"""

from __future__ import annotations

import dataclasses
import inspect

import libcst as cst

from ..cstutil import iter_nodes, rewrite
from .rewriting import (
    PositionKeeping,
    bindings,
    function_body,
    mentions,
    namer_of,
    parameter_names,
    place,
    rebinds,
    with_node,
)
from .source import FunctionSource
from .variadic import Standin


class WritesBack(Standin):
    """``fn`` returning ``(*params, value)``: the parameters it updated in place, and its value."""

    def __init__(self, fn, params: tuple):
        super().__init__(fn)
        self.params = params

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.fn, follow_wrapped=False)

    def __call__(self, *args, **kwargs):
        bound = self.__signature__.bind(*args, **kwargs)
        value = self.fn(*args, **kwargs)
        return (*(bound.arguments[p] for p in self.params), value)

    def __repr__(self):
        return f"<{self.__qualname__} handing back {', '.join(self.params)}>"

    def source(self, load) -> FunctionSource:
        """``load(fn)`` with every ``return v`` of its own ``return (*params, v)`` (and one at its end)."""
        src = load(self.fn)
        node = src.node
        handed = [cst.Element(cst.Name(p)) for p in self.params]
        body = rewrite(node.body, _Returns(handed, src.file.positions))
        lines = list(body.body)
        if (
            not lines
            or not isinstance(lines[-1], cst.SimpleStatementLine)
            or not any(isinstance(s, (cst.Return, cst.Raise)) for s in lines[-1].body)
        ):
            end = cst.SimpleStatementLine(
                [cst.Return(cst.Tuple([*handed, cst.Element(cst.Name("None"))]))]
            )
            lines.append(place(end, node, src.file.positions))
        if not _has_docstring(
            lines
        ):  # (what a reviewer of the generated module reads first)
            names = ", ".join(f"`{p}`" for p in self.params)
            note = f"`{self.fn.__name__}`, handing back {names}, which it changes in place."
            lines.insert(
                0,
                cst.SimpleStatementLine([cst.Expr(cst.SimpleString(f'"""{note}"""'))]),
            )
        new = node.with_changes(body=body.with_changes(body=lines))
        place(new, node, src.file.positions)
        return dataclasses.replace(src, node=new)


def _has_docstring(lines) -> bool:
    first = lines[0] if lines else None
    return (
        isinstance(first, cst.SimpleStatementLine)
        and isinstance(first.body[0], cst.Expr)
        and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


class _Returns(PositionKeeping):
    """A function body's own ``return v`` as ``return (*handed, v)``."""

    def __init__(self, handed, positions):
        super().__init__(positions)
        self.handed = handed

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def leave_Return(self, original, updated):
        value = updated.value or cst.Name("None")
        if isinstance(value, cst.Tuple) and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated.with_changes(value=cst.Tuple([*self.handed, cst.Element(value)]))


def _place_name(node) -> str | None:
    """The name an argument that can be assigned back to is or is an item of (``bn_params[i - 1]``)."""
    while isinstance(node, cst.Subscript):
        for element in node.slice:
            index = element.slice
            if not isinstance(index, cst.Index) or any(
                isinstance(n, (cst.Call, cst.NamedExpr, cst.Await, cst.Yield))
                for n in iter_nodes(index.value)
            ):
                return None
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


class _Calls(PositionKeeping):
    def __init__(self, source: FunctionSource):
        super().__init__(source.file.positions)
        self.source = source
        self.bound = bindings(source.node)
        self.scopes: list = []  # the parameters of the ``def``s around the line
        self.namer = namer_of(source)
        self.env = dict(source.env)
        self.made: dict = {}  # (helper, params) -> the name of its ``WritesBack``

    def visit_FunctionDef(self, node) -> bool:
        self.scopes.append(parameter_names(node.params))
        return True

    def leave_FunctionDef(self, original, updated):
        self.scopes.pop()
        return updated

    def visit_Lambda(self, node) -> bool:
        return False

    def _handed(self, call: cst.Call, stmt) -> list | None:
        """``[(parameter, argument)]`` of the updated parameters this call hands back, or None."""
        from ..passes.helper_sharing import written_directly

        if (
            not isinstance(call.func, cst.Name)
            or call.func.value not in self.env
            or call.func.value in self.bound
        ):
            return None
        fn = self.env[call.func.value]
        if not inspect.isfunction(fn) or any(a.star for a in call.args):
            return None
        written = written_directly(fn)
        if not written:
            return None
        try:
            bound = inspect.signature(fn).bind_partial(
                *(a.value for a in call.args if a.keyword is None),
                **{a.keyword.value: a.value for a in call.args if a.keyword},
            )
        except TypeError:
            return None
        handed = []
        for name, arg in bound.arguments.items():
            base = _place_name(arg) if name in written else None
            if base is None or base in self.scopes[-1] or base not in self.bound:
                continue  # (a parameter's object is its caller's; a module's, the module's)
            reads = mentions(base, [self.source.node]) - rebinds(self.source.node, base)
            if reads > mentions(base, [stmt]):
                handed.append((name, arg))
        return handed or None

    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) != 1:
            return updated
        small = updated.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            call, target = small.value, small.targets[0].target
        elif isinstance(small, cst.Expr):
            call, target = small.value, None
        else:
            return updated
        if not isinstance(call, cst.Call):
            return updated
        handed = self._handed(call, original)
        if handed is None:
            return updated
        fn = self.env[call.func.value]
        params = tuple(p for p, _ in handed)
        name = self.made.get((fn, params))
        if name is None:
            name = self.namer.fresh(f"{call.func.value}_written_back")
            self.made[fn, params] = name
            self.env[name] = WritesBack(fn, params)
        if target is None:
            target = cst.Name(self.namer.fresh("_"))
        elif isinstance(target, cst.Tuple) and not target.lpar:
            target = target.with_changes(
                lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
            )
        # the arguments first: the value is assigned last (``bn_param = helper(bn_param)``)
        targets = cst.Tuple(
            [*(cst.Element(arg.deep_clone()) for _, arg in handed), cst.Element(target)]
        )
        assign = cst.Assign(
            [cst.AssignTarget(targets)],
            call.with_changes(func=cst.Name(name)),
        )
        return place(updated.with_changes(body=[assign]), original, self.positions)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with the calls of helpers that update an argument it reads after handing it back."""
    if function_body(source) is None or not any(
        isinstance(n, cst.Call) for n in iter_nodes(source.node)
    ):
        return source
    calls = _Calls(source)
    new = rewrite(source.node, calls)
    if not calls.made:
        return source
    return dataclasses.replace(with_node(source, new), env=calls.env)
