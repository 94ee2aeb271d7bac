"""Lists collected by ``append`` in a loop, read after it: each read computes what Python computes on the list, or is an error.

After ``for ...: hs.append(h)`` the lowered code holds ``hs`` as the loop's
stacked outputs (one array, the items along axis 0) where the program holds a
list of them. ``Reads`` rewrites the expressions that read such a *collected*
value (its name, a slice of it, a concatenation with it) so that they compute
what Python computes on the list, gradients included:

- reads where a list of equal-shaped items and their stacked array agree stay
  as they are: ``np.stack(hs)``, ``np.array(hs)``, ``np.asarray(hs)`` are
  ``hs`` (``np.stack(hs, axis=k)`` moves the axis); NumPy functions that take
  an array (``np.sum(hs)``, ``np.tanh(hs)``, ``W @ hs``); ``len(hs)``,
  ``hs[i]``, ``hs.shape``; ``for h in hs`` (one rolled loop), ``enumerate``,
  ``zip`` and ``reversed`` of it;
- list operations are computed on the stacked form, which stays collected:
  ``hs[a:b]``, ``hs[::-1]``; ``[h0] + hs``, ``hs + [h]`` and ``hs + gs``
  (``np.concatenate`` of the stacked parts); ``hs.append(v)`` and ``hs[i] = v``
  after the loop;
- where the list itself is read (an argument of your function, of
  ``np.concatenate``-like functions that take a sequence of arrays, of
  ``list``, an item of a container, the returned value), ``rt.unstack(hs)``
  gives the list of items;
- reads whose meaning on a list cannot be computed on the stacked form are
  errors at the user's line that say what to write: ``hs * k`` (repetition),
  ``hs + v`` where ``v`` is not known to be a list, comparisons, the truth of
  ``hs``, ``hs[i, j]``, slice writes, a name that is a list on some paths only,
  and local functions that read a collected list (``control`` reports reads
  inside the loop that collects the list).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .. import ir
from ..cstutil import call, dotted, int_literal, iter_nodes, names_in, rewrite
from ..errors import UnsupportedSyntax
from ..frontend import spellings

# the kinds of value an expression may have
COLLECTED, LIST, UNKNOWN = (
    "collected",
    "list",
    "unknown",
)
AS_ARRAY = frozenset({"xp.stack", "xp.array", "xp.asarray"})
# the library functions generated code calls through the runtime (SciPy's and JAX's, by module)
LIBRARY_OPS = ("rt.special.", "rt.stats.", "rt.nn.", "rt.linalg.", "rt.signal.")
PYTHON_REDUCTIONS = frozenset({"sum", "max", "min", "any", "all"})
SEQUENCE_OPS = frozenset(
    {
        "xp.concatenate",
        "xp.hstack",
        "xp.vstack",
        "xp.dstack",
        "xp.column_stack",
        "xp.row_stack",
        "xp.block",
        "xp.linalg.multi_dot",
    }
)
ITERATION = frozenset(
    {
        "range",
        "enumerate",
        "zip",
        "reversed",
        "rt.iterate",
        "rt.items",
        "rt.keys",
        "rt.values",
    }
)
LOGICAL = frozenset(
    {
        "xp.logical_not",
        "xp.logical_and",
        "xp.logical_or",
        "rt.logical_not",
        "rt.logical_and",
        "rt.logical_or",
    }
)


@dataclass
class Kinds:
    """What the names of a block hold at a point: collected lists (name -> the line collecting them),
    names bound to list displays, and names that are collected lists on some paths only (-> where).
    """

    collected: dict = field(default_factory=dict)
    lists: set = field(default_factory=set)
    unknown: dict = field(default_factory=dict)
    # of ``lists``, those bound to tuple displays (``bins = (3, 3)``): NumPy functions read them as tuples
    tuples: set = field(default_factory=set)
    # of ``collected``, those whose items may be containers (``rows.append([a, b])``): ``rt.rows`` gives a
    # Python list of them, so ``np.array(rows)`` is computed, not the stacked form
    rows: set = field(default_factory=set)

    def copy(self) -> Kinds:
        return Kinds(
            dict(self.collected),
            set(self.lists),
            dict(self.unknown),
            set(self.tuples),
            set(self.rows),
        )

    def kind(self, name: str):
        if name in self.collected:
            return COLLECTED
        if name in self.unknown:
            return UNKNOWN
        return LIST if name in self.lists else None

    def bind(self, name: str, kind, where, tuple_display: bool = False) -> None:
        self.collected.pop(name, None)
        self.unknown.pop(name, None)
        self.lists.discard(name)
        self.tuples.discard(name)
        self.rows.discard(name)
        if kind == LIST and tuple_display:
            self.tuples.add(name)
        if kind == COLLECTED:
            self.collected[name] = where
        elif kind == UNKNOWN:
            self.unknown[name] = where
        elif kind == LIST:
            self.lists.add(name)

    def join(self, names, paths, origin) -> None:
        """After a branch or loop: ``names`` hold, on each path, what the ``Kinds`` in ``paths`` say."""
        for name in names:
            kinds = {p.kind(name) for p in paths}
            if len(kinds) == 1:
                (kind,) = kinds
                where = next(
                    (
                        p.collected.get(name) or p.unknown.get(name)
                        for p in paths
                        if kind in (COLLECTED, UNKNOWN)
                    ),
                    None,
                )
                self.bind(name, kind, where, all(name in p.tuples for p in paths))
                if any(name in p.rows for p in paths):
                    self.rows.add(name)
            elif kinds & {COLLECTED, UNKNOWN}:
                self.bind(name, UNKNOWN, origin)
            else:
                self.bind(name, None, None)


def _line(origin) -> str:
    return f"line {origin.line}" if origin is not None else "a loop"


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


class Reads:
    """Rewrites the expressions of one statement that read collected lists (``Kinds`` of the block)."""

    def __init__(self, fn: ir.Function, kinds: Kinds, origin, results=None):
        self.fn = fn
        self.kinds = kinds
        self.origin = origin
        self.results = results or {}  # helper -> which of its results are lists

    # --- errors ---------------------------------------------------------------------------
    def fail(self, node, message, hint):
        raise UnsupportedSyntax(message, ir.origin_of(self.fn, node, self.origin), hint)

    def _describe(self, node) -> str:
        names = sorted(
            n for n in names_in(node) if self.kinds.kind(n) in (COLLECTED, UNKNOWN)
        )
        name = names[0] if names else _code(node)
        if name in self.kinds.unknown:
            return f"`{name}`"
        return f"the list `{name}` (collected by `append` at {_line(self.kinds.collected.get(name))})"

    def unknown(self, node):
        name = next(n for n in sorted(names_in(node)) if n in self.kinds.unknown)
        self.fail(
            node,
            f"`{name}` is a list collected by `append` on some paths only (it is assigned at "
            f"{_line(self.kinds.unknown[name])}), so s2s cannot tell what `{_code(node)}` means",
            f"give the new value of `{name}` a name of its own",
        )

    # --- consumers ------------------------------------------------------------------------
    def item(self, node):
        """``node`` where Python reads the list itself: ``rt.unstack`` of a collected value."""
        new, kind = self.expr(node)
        if kind == UNKNOWN:
            self.unknown(node)
        return call("rt.unstack", new) if kind == COLLECTED else new

    def array(self, node):
        """``node`` where a list and its stacked array are alike."""
        return self.expr(node)[0]

    def test(self, node):
        """A branch or loop test: the truth of a list is whether it is empty."""
        if isinstance(node, cst.Call) and dotted(node.func) in LOGICAL:
            return node.with_changes(
                args=[a.with_changes(value=self.test(a.value)) for a in node.args]
            )
        new, kind = self.expr(node)
        if kind in (COLLECTED, UNKNOWN):
            self.fail(
                node,
                f"the truth of {self._describe(node)} is whether it is empty",
                f"test `len({_code(node)}) > 0`",
            )
        return new

    def iterable(self, node):
        """A ``for`` loop's iterable: iterating a collected value visits its items, one rolled loop."""
        if isinstance(node, cst.Call) and (dotted(node.func) in ITERATION):
            return node.with_changes(
                args=[a.with_changes(value=self.iterable(a.value)) for a in node.args]
            )
        return self.expr(node)[0]

    def value(self, node):
        """The value of an assignment: the rewritten expression and its kind."""
        return self.expr(node)

    # --- expressions ------------------------------------------------------------------------
    def expr(self, node):
        """``(rewritten node, kind)``: kind is COLLECTED, LIST (a list display), UNKNOWN or None."""
        if not names_in(node) & (
            set(self.kinds.collected) | set(self.kinds.unknown) | self.kinds.lists
        ):
            # (keeps origins)
            joined = (
                rewrite(node, _Joins())
                if any(_is_join(n) or _is_repeat(n) for n in iter_nodes(node))
                else node
            )
            if any(_is_python_reduction(n) for n in iter_nodes(joined)):
                joined = rewrite(joined, _PythonReductions(self))
            if names_in(joined) & set(self.results):
                joined = rewrite(joined, _HelperLists(self))
            return joined, (
                LIST
                if all(isinstance(t, (cst.List, cst.Tuple)) for t in _terms(node))
                or _is_repeat(node)
                else self._helper_result(node)
            )
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            self.fail(
                node,
                f"`{_code(node)}` reads {self._describe(node)} in a way s2s does not support",
                "use `np.stack(...)` of the list",
            )
        return method(node)

    def _helper_result(self, node):
        """LIST (or a tuple of kinds) where ``node`` calls a helper that returns lists: ``run(w, xs)``,
        ``run(w, xs)[0]``."""
        if isinstance(node, cst.Call):
            return self.results.get(dotted(node.func))
        if isinstance(node, cst.Subscript) and len(node.slice) == 1:
            kind, index = self._helper_result(node.value), node.slice[0].slice
            if isinstance(kind, tuple) and isinstance(index, cst.Index):
                at = int_literal(index.value)
                if at is not None and -len(kind) <= at < len(kind):
                    return kind[at]
        return None

    def _Name(self, node):
        return node, self.kinds.kind(node.value)

    def _List(self, node):
        return (
            node.with_changes(
                elements=[
                    e.with_changes(value=self.item(e.value)) for e in node.elements
                ]
            ),
            LIST,
        )

    def _Tuple(self, node):  # joined by ``+`` as a list is (``args + (w,)``)
        return (
            node.with_changes(
                elements=[
                    e.with_changes(value=self.item(e.value)) for e in node.elements
                ]
            ),
            LIST,
        )

    def _Dict(self, node):
        return (
            node.with_changes(
                elements=[
                    e.with_changes(value=self.item(e.value)) for e in node.elements
                ]
            ),
            None,
        )

    def _Attribute(self, node):
        return node.with_changes(value=self.array(node.value)), None

    def _Subscript(self, node):
        base, kind = self.expr(node.value)
        elements = [e.with_changes(slice=self._index(e.slice)) for e in node.slice]
        new = node.with_changes(value=base, slice=elements)
        if kind not in (COLLECTED, UNKNOWN):
            return new, (
                LIST
                if kind == LIST
                and len(node.slice) == 1
                and isinstance(node.slice[0].slice, cst.Slice)
                else None
            )
        if len(node.slice) != 1:
            self.fail(
                node,
                f"`{_code(node)}` indexes {self._describe(node)} with a tuple",
                f"index its stacked items: `np.stack({_code(node.value)})[...]`",
            )
        if isinstance(node.slice[0].slice, cst.Slice):
            return new, kind  # a slice of a list is a list
        return new, None

    def _index(self, index):
        if isinstance(index, cst.Index):
            return index.with_changes(value=self.array(index.value))
        parts = {
            k: self.array(getattr(index, k))
            for k in ("lower", "upper", "step")
            if getattr(index, k) is not None
        }
        return index.with_changes(**parts)

    def _BinaryOperation(self, node):
        left, lk = self.expr(node.left)
        right, rk = self.expr(node.right)
        if isinstance(node.operator, cst.Add):
            if UNKNOWN in (lk, rk):
                self.unknown(node)
            if COLLECTED in (lk, rk):
                terms = _terms(node)
                return (
                    self._concatenate(node, terms, [self.expr(t) for t in terms]),
                    COLLECTED,
                )
            if lk == rk == LIST:  # Python joins the lists
                return call("rt.join", left, right), LIST
            return node.with_changes(left=left, right=right), None
        if {lk, rk} & {COLLECTED, UNKNOWN} and isinstance(node.operator, cst.Multiply):
            self.fail(
                node,
                f"`{_code(node)}` repeats {self._describe(node)} when the other operand is an integer, "
                "and s2s holds the list as one stacked array",
                "scale the items: `np.stack(...) * k`; repeat the list by joining it: `hs + hs`",
            )
        return node.with_changes(left=left, right=right), None

    def _concatenate(self, node, terms, parts):
        stacked, kinds = [], []
        for term, (new, kind) in zip(terms, parts):
            if isinstance(term, cst.List) and not term.elements and kind != COLLECTED:
                continue  # ``[] + hs``
            if kind in (COLLECTED, LIST):
                stacked.append(new)
                kinds.append(kind)
            else:
                self.fail(
                    node,
                    f"`{_code(node)}` adds to {self._describe(node)} a value `{_code(term)}` that is not known to be a list: "
                    "Python joins two lists but adds an array to each item, and s2s holds the list as one stacked array",
                    f"join lists: `... + [{_code(term)}]`; add elementwise: `np.stack(...) + {_code(term)}`",
                )
        if kinds == [COLLECTED]:
            return stacked[0]
        # stacked where the items share a shape, else the items (``runtime.collected.join_steps``)
        return call("rt.join_steps", cst.List([cst.Element(s) for s in stacked]))

    def _UnaryOperation(self, node):
        if isinstance(node.operator, cst.Not):
            return node.with_changes(expression=self.test(node.expression)), None
        return node.with_changes(expression=self.array(node.expression)), None

    def _BooleanOperation(self, node):
        return (
            node.with_changes(left=self.test(node.left), right=self.test(node.right)),
            None,
        )

    def _Comparison(self, node):
        if (
            len(node.comparisons) == 1
            and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot))
            and isinstance(node.comparisons[0].comparator, cst.Name)
            and node.comparisons[0].comparator.value == "None"
            and self.expr(node.left)[1] == COLLECTED
        ):  # a list is never None (``return outputs if outputs is not None else []``)
            is_not = isinstance(node.comparisons[0].operator, cst.IsNot)
            return cst.Name("True" if is_not else "False"), None
        for part in (node.left, *(c.comparator for c in node.comparisons)):
            if self.expr(part)[1] in (COLLECTED, UNKNOWN):
                self.fail(
                    node,
                    f"`{_code(node)}` compares {self._describe(part)}",
                    "compare its stacked items, `np.stack(...)`, or its length, `len(...)`",
                )
        comparisons = [
            c.with_changes(comparator=self.array(c.comparator))
            for c in node.comparisons
        ]
        return (
            node.with_changes(left=self.array(node.left), comparisons=comparisons),
            None,
        )

    def _IfExp(self, node):
        return (
            node.with_changes(
                test=self.test(node.test),
                body=self.item(node.body),
                orelse=self.item(node.orelse),
            ),
            None,
        )

    def _Call(self, node):
        func = dotted(node.func) or ""
        args = list(node.args)
        if func in PYTHON_REDUCTIONS:
            return self._python_reduction(node, func, args), None
        kind = None
        if args and args[0].keyword is None and not args[0].star:
            first, kind = self.expr(args[0].value)
            if kind == COLLECTED and not (
                func in ("xp.array", "xp.asarray")
                and self._rows_of_containers(args[0].value)
            ):
                special = self._collected_call(node, func, first, args)
                if special is not None:
                    return special
            if kind == UNKNOWN and func in AS_ARRAY | SEQUENCE_OPS | {
                "list",
                "xp.copy",
                "rt.append",
                "rt.index_set",
            }:
                self.unknown(args[0].value)
        if func in SEQUENCE_OPS or func == "list":
            new = [args[0].with_changes(value=self.item(args[0].value))] + [
                a.with_changes(value=self.array(a.value)) for a in args[1:]
            ]
            return node.with_changes(args=new), (LIST if func == "list" else None)
        if func.startswith("xp."):
            return node.with_changes(args=self._operands(func[3:], args)), None
        if func.startswith(
            LIBRARY_OPS
        ):  # ``logsumexp([... for s in states])``: SciPy's, of an array
            taking = _array_parameters(func, args)
            new = [
                a.with_changes(value=(self.array if takes else self.item)(a.value))
                for a, takes in zip(args, taking)
            ]
            return node.with_changes(args=new), None
        if func in ("len", "rt.stop_gradient"):
            new = node.with_changes(
                args=[a.with_changes(value=self.array(a.value)) for a in args]
            )
            # stop_gradient of a list is a list
            return new, (kind if func == "rt.stop_gradient" else None)
        return (
            node.with_changes(
                args=[a.with_changes(value=self.item(a.value)) for a in args]
            ),
            None,
        )

    def _operands(self, op, args) -> list:
        """The arguments of ``xp.<op>``, a list where it takes an array read as NumPy reads it, one array
        (``np.mean(hs, axis=0)`` of a name bound to a list display or of a helper's list:
        ``xp.asarray(hs)``). Displays written in the call are ``spellings.lists_as_arrays``'s (a tuple
        stays one: ``bins=(3, 3)``).
        """
        names = spellings.parameter_names(op, args) or [None] * len(args)
        out = []
        for arg, name in zip(args, names):
            value, kind = self.expr(arg.value)
            if (
                kind == LIST
                and not arg.star
                and not isinstance(arg.value, (cst.List, cst.Tuple))
                and not (
                    isinstance(arg.value, cst.Name)
                    and arg.value.value in self.kinds.tuples
                )
                and spellings.takes_array(op, name)
            ):
                value = spellings.as_array(value)
            out.append(arg.with_changes(value=value))
        return out

    def _python_reduction(self, node, func, args):
        """Python's ``sum``/``max``/``min`` of a list built in the function (a comprehension, a loop's
        ``append``s), of a list or tuple display, or of several values: NumPy's, on the stacked items.
        """
        if any(a.star for a in args):
            raise UnsupportedSyntax(
                f"`*` unpacking into `{func}`", self.origin, "pass the list itself"
            )
        items = [a.value for a in args if a.keyword is None]
        start = next((a.value for a in args if a.keyword is not None), None)
        if func == "sum" and len(items) == 2:
            items, start = items[:1], items[1]
        pairwise = {
            "sum": "xp.add",
            # (of numbers known when traced, Python's: ``max(1, len(x) // 2)`` stays a bound a slice can use)
            "max": "rt.numbers.maximum",
            "min": "rt.numbers.minimum",
            "any": "xp.logical_or",
            "all": "xp.logical_and",
        }[func]
        if len(items) == 1:
            first, kind = self.expr(items[0])
            display = isinstance(items[0], (cst.List, cst.Tuple)) and not any(
                isinstance(e, cst.StarredElement) for e in items[0].elements
            )
            if func in (
                "any",
                "all",
            ):  # the truth of Python values stays Python's (``rt.any``)
                value = call(f"rt.{func}", first)
            elif kind == COLLECTED:
                value = call(f"xp.{func}", first, axis=cst.Integer("0"))
            elif display and items[0].elements:
                value = self._pairwise(
                    pairwise, [self.array(e.value) for e in items[0].elements]
                )
            elif func == "sum":
                # Python's sum, item by item, of a list (or, checked when it runs, a value that is one)
                value = call("rt.total", first)
            elif (
                kind == LIST
            ):  # ``max(args)`` of a name bound to a list or tuple display
                value = call(
                    f"xp.{func}", spellings.as_array(first), axis=cst.Integer("0")
                )
            else:
                raise UnsupportedSyntax(
                    f"Python's builtin `{func}` of a value s2s does not know to be a list",
                    self.origin,
                    f"build the list in the function (`[... for w in ws]`, or a loop with `append`), "
                    f"or use np.{func}",
                )
        elif len(items) > 1 and func in ("max", "min"):
            value = self._pairwise(pairwise, [self.array(v) for v in items])
        else:
            raise UnsupportedSyntax(
                f"`{func}()` without a list", self.origin, f"pass `{func}` a list"
            )
        if start is not None:
            value = cst.BinaryOperation(self.array(start), cst.Add(), value)
        return value

    @staticmethod
    def _pairwise(func, values):
        value = values[0]
        for other in values[1:]:
            value = (
                cst.BinaryOperation(value, cst.Add(), other)
                if func == "xp.add"
                else call(func, value, other)
            )
        return value

    def _rows_of_containers(self, node) -> bool:
        return isinstance(node, cst.Name) and node.value in self.kinds.rows

    def _collected_call(self, node, func, first, args):
        """Calls whose first argument is a collected value and whose result is computed on the stacked form."""
        rest = args[1:]
        if func in AS_ARRAY and not rest:
            return first, None
        if (
            func == "xp.stack"
            and len(rest) == 1
            and (rest[0].keyword is None or rest[0].keyword.value == "axis")
        ):
            return (
                call("xp.moveaxis", first, cst.Integer("0"), self.array(rest[0].value)),
                None,
            )
        if func == "list" and not rest:  # a copy of the list: its stacked items again
            return first, COLLECTED
        if func == "xp.copy" and not rest:  # ``hs.copy()``: a list again
            return (
                node.with_changes(args=[args[0].with_changes(value=first)]),
                COLLECTED,
            )
        if func == "rt.append":  # ``hs.append(v)`` after the loop
            return call("rt.append_row", first, rest[0].value), COLLECTED
        if func == "rt.index_set":  # ``hs[i] = v``: a new item in place of one
            index = rest[0].value
            if isinstance(index, (cst.Subscript, cst.Tuple, cst.Slice)):
                self.fail(
                    node,
                    f"a write into a slice of {self._describe(args[0].value)} replaces items, and may change the list's length",
                    "build the new list from slices: `hs[:a] + [v] + hs[b:]`",
                )
            return (
                node.with_changes(
                    args=[args[0].with_changes(value=first)]
                    + [a.with_changes(value=self.array(a.value)) for a in rest]
                ),
                COLLECTED,
            )
        return None


class _Joins(cst.CSTTransformer):
    """``[a] + [b]``, two list displays joined (or a display of values joined to another value: ``_is_join``),
    as ``rt.join([a], [b])`` (its cotangent splits; an array rule for ``+`` would add the two); ``[a, b] * 2`` (either order) as ``rt.repeat_list([a, b], 2)`` (its
    cotangent adds the copies)."""

    def leave_BinaryOperation(self, original, updated):
        if _is_join(updated):
            return call("rt.join", updated.left, updated.right)
        if _is_repeat(updated):
            items, count = (
                (updated.left, updated.right)
                if _is_list(updated.left)
                else (updated.right, updated.left)
            )
            return call("rt.repeat_list", items, count)
        return updated


class _PythonReductions(cst.CSTTransformer):
    """``sum``/``max``/``min`` where no collected list is read: of a list display or of several values."""

    def __init__(self, reads):
        self.reads = reads

    def leave_Call(self, original, updated):
        if not _is_python_reduction(updated):
            return updated
        return self.reads._python_reduction(
            updated, dotted(updated.func), list(updated.args)
        )


class _HelperLists(cst.CSTTransformer):
    """NumPy functions of a helper's list where no list of the block is read: ``np.var(features(w))``."""

    def __init__(self, reads):
        self.reads = reads

    def leave_Call(self, original, updated):
        func = dotted(updated.func) or ""
        if not func.startswith("xp."):
            return updated
        return updated.with_changes(args=self.reads._operands(func[3:], updated.args))


def _is_python_reduction(node) -> bool:
    return isinstance(node, cst.Call) and dotted(node.func) in PYTHON_REDUCTIONS


def _is_join(node) -> bool:
    """``[a] + [b]``, or a list display of values other than numbers joined to any value
    (``params[:-1] + [(W, b)]``, ``args + (w,)``): Python's concatenation, which ``rt.join`` checks when it
    runs (``x + [1.0, 2.0]``, an array and numbers, stays NumPy's ``+``)."""
    if not (
        isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)
    ):
        return False
    left, right = _is_list(node.left), _is_list(node.right)
    return (
        (left and right)
        or (left and _holds_values(node.left))
        or (right and _holds_values(node.right))
    )


def _holds_values(node) -> bool:
    """A list or tuple display with an item that is not a number literal (a name, a tuple, a call)."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return True  # (``rt.join``, ``rt.repeat_list``: lists)
    return any(
        not isinstance(
            e.value.expression if isinstance(e.value, cst.UnaryOperation) else e.value,
            (cst.Integer, cst.Float),
        )
        for e in node.elements
    )


def _is_repeat(node) -> bool:
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Multiply)
        and (_is_list(node.left) != _is_list(node.right))
    )


def _is_list(node) -> bool:
    return isinstance(node, (cst.List, cst.Tuple)) or (
        isinstance(node, cst.Call)
        and dotted(node.func) in ("rt.join", "rt.repeat_list")
    )


def _terms(node):
    """The operands of a chain of ``+``: ``a + b + c`` -> ``[a, b, c]``."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def check_locals(fn: ir.Function, ever_collected: dict) -> None:
    """A local function that reads a list collected in the enclosing one is an error (it would read the stacked array)."""
    from .dataflow import free_names

    for local in fn.locals.values():
        read = sorted(free_names(local) & set(ever_collected))
        if read:
            raise UnsupportedSyntax(
                f"the local function `{local.name}` reads `{read[0]}`, a list collected by `append` at {_line(ever_collected[read[0]])}",
                local.origin,
                f"pass it the list as an argument (`{local.name}(..., {read[0]})`), or `np.stack({read[0]})`",
            )


def _array_parameters(func: str, args) -> list:
    """Whether each of ``args`` of the runtime's ``func`` (``rt.special.logsumexp``) binds a parameter that
    takes an array: a list there is read as NumPy reads it, one array."""
    from .. import runtime

    obj = runtime
    for part in func.split(".")[1:]:
        obj = getattr(obj, part, None)
    return spellings.takes_arrays(obj, args)
