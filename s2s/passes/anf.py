"""A-normal form: one operation per assignment, its arguments atoms.

Output: see ``normal_form`` (``check`` verifies it); a tuple target unpacks
a name. Nested operations get
temporaries named after their op (``_matmul``, ``_sum``); each temporary's
statement keeps the origin of the sub-expression it computes, so later errors
point at the exact call. Static expressions (shapes, literals) stay nested.
"""

from __future__ import annotations

import libcst as cst

from .. import ir
from ..naming import Namer, temp
from .dataflow import used_names
from .normal_form import is_atom, is_control_call, is_index_atom, op_label


class _Flattener:
    def __init__(self, fn: ir.Function, namer: Namer):
        self.fn = fn
        self.namer = namer
        self.out: list[ir.Stmt] = []

    def atom(self, node, origin):
        """An atom computing ``node``; emits statements for what it needs."""
        if is_atom(node) and not isinstance(node, (cst.Tuple, cst.List, cst.Dict)):
            return node
        if isinstance(node, (cst.Tuple, cst.List)):
            return node.with_changes(
                elements=[
                    e.with_changes(value=self.atom(e.value, origin))
                    for e in node.elements
                ]
            )
        if isinstance(node, cst.Dict):
            return node.with_changes(
                elements=[
                    e.with_changes(
                        key=self.atom(e.key, origin), value=self.atom(e.value, origin)
                    )
                    for e in node.elements
                ]
            )
        value = self.op(node, origin)
        name = self.namer.fresh(temp(op_label(value)))
        self.out.append(
            ir.Assign(cst.Name(name), value, ir.origin_of(self.fn, node, origin))
        )
        return cst.Name(name)

    def op(self, node, origin):
        """``node`` with each argument made an atom."""
        here = ir.origin_of(self.fn, node, origin)
        a = lambda child: self.atom(child, here)  # noqa: E731
        if isinstance(node, cst.BinaryOperation):
            new = node.with_changes(
                left=a(node.left), right=a(node.right), lpar=[], rpar=[]
            )
        elif isinstance(node, cst.UnaryOperation):
            new = node.with_changes(expression=a(node.expression), lpar=[], rpar=[])
        elif isinstance(node, cst.BooleanOperation):
            new = node.with_changes(
                left=a(node.left), right=a(node.right), lpar=[], rpar=[]
            )
        elif isinstance(node, cst.Comparison):
            new = node.with_changes(
                left=a(node.left),
                comparisons=[
                    c.with_changes(comparator=a(c.comparator)) for c in node.comparisons
                ],
                lpar=[],
                rpar=[],
            )
        elif isinstance(node, cst.Call):
            new = node.with_changes(
                args=[arg.with_changes(value=a(arg.value)) for arg in node.args]
            )
        elif isinstance(node, cst.Subscript):
            base = a(node.value)
            if isinstance(base, (cst.Tuple, cst.List, cst.Dict)):
                # ``[h0, h1][:i]``: the display named, as every subscripted value is
                name = self.namer.fresh(temp(type(base).__name__.lower()))
                self.out.append(ir.Assign(cst.Name(name), base, here))
                base = cst.Name(name)
            new = node.with_changes(
                value=base,
                slice=[
                    e.with_changes(slice=self._slice(e.slice, here)) for e in node.slice
                ],
            )
        elif isinstance(node, cst.Attribute):
            new = node.with_changes(value=a(node.value))
        elif is_atom(node):
            return self.atom(node, origin)
        else:
            raise NotImplementedError(type(node).__name__)
        if here is not None:
            self.fn.origins[new] = here
        return new

    def _slice(self, s, origin):
        if is_index_atom(s):
            return s
        if isinstance(s, cst.Index):
            return cst.Index(self.atom(s.value, origin))
        return s.with_changes(
            lower=self.atom(s.lower, origin) if s.lower else None,
            upper=self.atom(s.upper, origin) if s.upper else None,
            step=self.atom(s.step, origin) if s.step else None,
        )


def anf(
    fn: ir.Function, namer: Namer | None = None, nested: bool = False
) -> ir.Function:
    """``fn`` in normal form; ``nested`` for a branch or loop body (its result is not named after it)."""
    namer = namer or Namer(used_names(fn))
    flat = _Flattener(fn, namer)
    for stmt in fn.body:
        if isinstance(stmt, ir.Def):
            flat.out.append(ir.Def(anf(stmt.function, namer, nested=True), stmt.origin))
        elif isinstance(stmt, ir.Return):
            value = stmt.value
            if not is_atom(value) and not isinstance(
                value, (cst.Tuple, cst.List, cst.Dict)
            ):
                # the returned value is named after the function
                result = namer.fresh(temp(op_label(value)) if nested else fn.name)
                flat.out.append(
                    ir.Assign(
                        cst.Name(result), flat.op(value, stmt.origin), stmt.origin
                    )
                )
                value = cst.Name(result)
            flat.out.append(ir.Return(flat.atom(value, stmt.origin), stmt.origin))
        else:
            if is_atom(stmt.value) or isinstance(
                stmt.value, (cst.Tuple, cst.List, cst.Dict)
            ):
                value = flat.atom(stmt.value, stmt.origin)
            elif isinstance(stmt.target, cst.Tuple) and not is_control_call(stmt.value):
                # unpacking reads a named value
                value = flat.atom(stmt.value, stmt.origin)
            else:
                value = flat.op(stmt.value, stmt.origin)
            flat.out.append(
                ir.Assign(stmt.target, value, ir.origin_of(fn, stmt.value, stmt.origin))
            )
    locals_ = {name: anf(local, namer) for name, local in fn.locals.items()}
    return fn.with_body(flat.out, locals=locals_)
