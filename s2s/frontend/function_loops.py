"""Loops over functions, and names bound to a function, read as the functions they call.

Guarantees of ``desugar(source)``:

- ``for act in SEQ:``, where ``SEQ`` is a tuple or list of functions (or of
  objects of the program's classes, read by their methods) known
  when s2s reads the code (a literal such as ``(np.tanh, np.sin)`` of
  module-level functions, or a module-level tuple or list such as
  ``ACTIVATIONS``), also as ``enumerate(SEQ)``, is written out: one copy of
  the body per function, with the loop variable replaced by that function
  (and ``enumerate``'s index assigned first). Each step calls other code, so
  there is no loop to compile; JAX's tracing writes such a loop out too. A
  body with ``break``, ``continue``, ``return``, a ``yield`` or an ``else:``
  clause, or one that binds the loop variable, stays a loop (and its error).
- ``for layer in ARCH:`` (also in ``zip``/``enumerate``), ``ARCH`` a module-level list or tuple of
  literal data whose strings differ from row to row (``[{"activation": "relu"}, {"activation":
  "sigmoid"}]``: a network's configuration), is written out the same way, the loop variable read as
  its row's literal (``layer["activation"]`` as ``"relu"``): a compiled loop holds one string for
  every step, and a helper told ``"relu"`` reads its tests with the code.
- ``for name, (logpdf, kw) in PRIORS.items():`` over a module-level table
  whose rows hold functions (a dict's ``.items()`` or ``.values()``, a list
  or tuple of tuples), the loop's target a tuple of names matching each row,
  is written out too: each name read as its value in the row, a function by
  its spelling, literal data as a literal (``logpdf(x, **{"a": 2.0})``),
  any other value as the table's item (``PRIORS["sigma"][1]``).
- after such a loop its names hold their last step's values, as in Python: the
  statements after it in its block read them (``return act(x)`` reads the last
  function) up to one that binds the name; where the function names one outside
  that block, or a statement reads it while binding it, it is assigned its last
  value there (``act = np.sin``, read through when bound once).
- a list or generator comprehension with one ``for`` over such a sequence
  and no ``if`` (``sum(np.sum(f(x)) for f in ACTIVATIONS)``) is the list
  display of its items, one per function; so is a list of lambdas over ``range`` of int literals
  (``[lambda x, i=i: np.sin((i + 1) * x) for i in range(3)]``: ``lax.switch``'s branches).
- the same for local functions (names bound once, at the function's own level,
  by a ``def`` or to a lambda) in a display: ``for f in [squash, wave]``, and
  ``heads = [relu_head, lambda h: ..., np.tanh]``, a list of functions bound
  once and never read by an attribute (``heads.append``): its reads are the
  display of names (its lambdas bound to names on lines before), so
  ``heads[1](h)``, ``lax.switch(g, heads, h)`` and loops over it call them.
- ``act = np.tanh``, a name bound once, in the function's own body, to a
  module-level function (or object of the program: ``config = CFG``): its reads are it; so is
  ``ACTIVATIONS[1]``, an item of such a sequence at a literal position, and
  ``ACTS["relu"]``, an item of a module-level dict of functions at a literal key.
- ``act = ACTS[name]``, bound once to such a dict's item at a key whose names are
  bound once (a parameter, ``cfg.activation``): its calls are ``ACTS[name](...)``;
- ``ACTS[name](x)``, a call of such a dict's item at a key computed in the
  function (a string parameter, a loop's item), is the chain ``ACTS["tanh"](x)
  if name == "tanh" else ACTS["relu"](x) if name == "relu" else
  missing_key(name)``: the key is known when the code is traced, which picks
  the call (a key the dict does not hold is Python's ``KeyError``); so is a call passed
  such an item (``layer(w, x, ACTS[cfg["act"]])``), one call per function.

New nodes keep the positions of the user's code they stand for.
"""

from __future__ import annotations

import ast
import inspect
import sys
import types

import libcst as cst

from ..cstutil import (
    _Substitute,
    int_literal,
    iter_nodes,
    literal,
    literal_key,
    names_in,
    rewrite,
)
from ..freshness import _is_namedtuple
from ..naming import Namer
from .function_args import defined_in_the_program, is_program_object
from .rewriting import (
    PositionKeeping,
    assignment,
    assignment_line,
    bindings,
    function_body,
    mentions,
    place,
    with_blocks,
    with_body,
)
from .source import FunctionSource

MAX_COPIES = 16  # a longer sequence of functions is no loop a person writes out


def missing_key(key):
    """What ``TABLE[key](...)`` of a dict of functions raises for a key it does not hold."""
    raise KeyError(key)


def _is_function(obj) -> bool:
    return (
        callable(obj)
        and not isinstance(obj, type)
        and not hasattr(obj, "__array__")
        and not isinstance(obj, types.ModuleType)
    )


def _program_object(obj) -> bool:
    """An object of a class of the program, or a NamedTuple of one that defines methods of its own
    (``Layer(w, act)`` with ``def apply(self, z)``): the methods a written-out loop's steps call.
    """
    if is_program_object(obj):
        return True
    cls = type(obj)
    return (
        _is_namedtuple(obj)
        and defined_in_the_program(cls)
        and any(inspect.isfunction(v) for v in vars(cls).values())
    )


class Positioned(PositionKeeping, _Substitute):
    """``cstutil.substitute`` that gives every node it rebuilds the position of the node it replaces."""

    def __init__(self, mapping, positions):
        PositionKeeping.__init__(self, positions)
        self.mapping = mapping

    def leave_Name(self, original, node):
        new = super().leave_Name(original, node)
        # a name written in several places: a node for each, at the place of the name it replaces
        return (
            new.deep_clone() if new is not node and isinstance(new, cst.Name) else new
        )


class _Reader:
    def __init__(self, source: FunctionSource, body: list):
        self.source = source
        self.positions = source.file.positions
        self.bindings = bindings(source.node)
        self.bound = set(self.bindings)
        self.namer = Namer(self.bound | set(source.env))
        self.added: dict = {}  # names for functions that no module-level name spells
        self.changed = False
        self.assigned_last = False  # a written-out loop's name assigned its last value
        # local functions: names bound once, at the function's own level, by a ``def`` or to a lambda
        self.local = {
            name
            for name, value in map(_defined, body)
            if name is not None and self.bindings[name] == 1
        }

    def is_function(self, node) -> bool:
        """A function known when s2s reads the code: a module-level one, or a local function."""
        if isinstance(node, cst.Name) and node.value in self.local:
            return True
        return _is_function(self.static(node))

    def static(self, node):
        """The object a module-level name or attribute chain refers to (``np.tanh``), else None."""
        if isinstance(node, cst.Name):
            # a name s2s gave a function (a lambda of a dict)
            if node.value in self.added:
                return self.added[node.value]
            if node.value in self.bound or node.value not in self.source.env:
                return None
            return self.source.env[node.value]
        if isinstance(node, cst.Attribute):
            owner = self.static(node.value)
            return None if owner is None else getattr(owner, node.attr.value, None)
        return None

    def functions(self, node) -> list | None:
        """The expressions of the functions a static sequence holds, in order (None: not one)."""
        if isinstance(node, (cst.Tuple, cst.List)):
            items = [e.value for e in node.elements]
            if all(
                not isinstance(e, cst.StarredElement) for e in node.elements
            ) and all(self.is_function(i) for i in items):
                return items
            return None
        held = self.static(node)
        if not isinstance(held, (tuple, list)) or not 0 < len(held) <= MAX_COPIES:
            return None
        # (or objects of your classes, read by their methods: ``for layer in LAYERS: x = layer.forward(x)``)
        if not all(_is_function(f) or _program_object(f) for f in held):
            return None
        return [self.spelling(f, node) for f in held]

    def written_out(self, node) -> list | None:
        """The items a loop over ``node`` is written out for: its functions (``functions``), or the rows of
        a configuration table (``configurations``); else None."""
        found = self.functions(node)
        return found if found is not None else self.configurations(node)

    def counts(self, node) -> list | None:
        """The integers of ``range(...)`` of int literals (a few), as literals; else None."""
        if not (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "range"
            and "range" not in self.bound
            and 1 <= len(node.args) <= 3
            and not any(a.keyword or a.star for a in node.args)
        ):
            return None
        bounds = [int_literal(a.value) for a in node.args]
        if None in bounds or (len(bounds) == 3 and bounds[2] == 0):
            return None
        steps = range(*bounds)
        if not 0 < len(steps) <= MAX_COPIES:
            return None
        return [
            self._at(cst.Integer(str(k)) if k >= 0 else literal(k), node) for k in steps
        ]

    def configurations(self, node) -> list | None:
        """Literals of the rows of a module-level list or tuple of literal data whose strings differ from
        row to row (``ARCH = [{"activation": "relu"}, {"activation": "sigmoid"}]``): a compiled loop holds
        one string for every step, a step written out its own (``layer["activation"]`` is "relu").
        """
        held = self.static(node)
        if not isinstance(held, (tuple, list)) or not 1 < len(held) <= MAX_COPIES:
            return None
        if not all(_is_literal_data(row) for row in held):
            return None
        texts = [
            tuple(v for v in _literal_leaves(row) if isinstance(v, str)) for row in held
        ]
        if not any(texts) or len(set(texts)) == 1:
            return None
        return [self._at(literal(row), node) for row in held]

    def _holds_objects(self, node) -> bool:
        """A module-level sequence holding objects of the program (not only functions)."""
        held = self.static(node)
        return isinstance(held, (tuple, list)) and any(
            _program_object(item) for item in held
        )

    def spelling(self, fn, like, hint=None) -> cst.BaseExpression:
        """A module-level spelling of ``fn`` (``np.tanh``, ``dense``), or a name s2s gives it (once per
        function; ``hint`` names it, a dict's key)."""
        env = self.source.env
        for name, value in self.added.items():
            if value is fn:
                return self._at(cst.Name(name), like)
        for name, value in env.items():
            if value is fn and name not in self.bound and name.isidentifier():
                return self._at(cst.Name(name), like)
        attr = getattr(fn, "__name__", "")
        for name, value in env.items():
            if (
                isinstance(value, types.ModuleType)
                and name not in self.bound
                and attr.isidentifier()
                and getattr(value, attr, None) is fn
            ):
                return self._at(cst.Attribute(cst.Name(name), cst.Name(attr)), like)
        base = like.value if isinstance(like, cst.Name) else "function"
        suffix = (
            hint if isinstance(hint, str) and hint.isidentifier() else len(self.added)
        )
        name = self.namer.fresh(f"{base}_{suffix}")
        self.added[name] = fn
        return self._at(cst.Name(name), like)

    def _at(self, node, like):
        return place(node, like, self.positions)

    # --- statements ---------------------------------------------------------------------------

    def block(self, statements) -> list:
        """``statements`` with their loops over functions written out. After a loop, Python's loop
        variables hold their last step's values: the statements after it in the block read them
        through until one binds the name (there, and where the function names it outside the block,
        the name is assigned its last value: ``aliases`` then reads a function's name through).
        """
        out, last = [], {}  # last: a written-out loop's names -> their last values
        for k, stmt in enumerate(statements):
            written = self.unrolled(stmt) if isinstance(stmt, cst.For) else None
            if written is not None:
                self.changed = True
                copies, names = written
                kept = {n: v for n, v in last.items() if n not in names}
                copies = [self._read_through(c, kept) for c in copies]
                out.extend(self.block(copies))
                last = kept
                for name, value in names.items():
                    if mentions(name, [self.source.node]) > mentions(name, statements):
                        out.append(self._assigned(name, value, stmt))
                    elif mentions(name, statements[k + 1 :]):
                        last[name] = value
                continue
            for name in [n for n in last if n in bindings(stmt)]:
                if not _overwrites(stmt, name):
                    out.append(self._assigned(name, last[name], stmt))
                del last[name]
            stmt = self._read_through(stmt, last)
            out.append(with_blocks(stmt, self.block, self.positions))
        return out

    def _read_through(self, stmt, last: dict):
        return rewrite(stmt, Positioned(last, self.positions)) if last else stmt

    def _assigned(self, name: str, value, like) -> cst.SimpleStatementLine:
        self.assigned_last = True
        return assignment_line(cst.Name(name), value, like, self.positions)

    def _zipped(self, target, sequence):
        """``(function target, function sequence, [(target, sequence), ...])`` for ``for layer, W in
        zip(LAYERS, Ws)`` with a static sequence of functions among its sequences (the first such is
        written out; ``for s, fn in zip(state, update_fns)``, optax's chain, too), else None.
        """
        if not (
            isinstance(sequence, cst.Call)
            and isinstance(sequence.func, cst.Name)
            and sequence.func.value == "zip"
            and "zip" not in self.bound
            and len(sequence.args) >= 2
            and not any(a.keyword or a.star for a in sequence.args)
            and isinstance(target, (cst.Tuple, cst.List))
            and len(target.elements) == len(sequence.args)
        ):
            return None
        names = [el.value for el in target.elements]
        # (the other sequences' targets may unpack their items: ``for (W, b), layer in zip(params, ARCH)``)
        static = [
            k
            for k, a in enumerate(sequence.args)
            if isinstance(names[k], cst.Name) and self.written_out(a.value) is not None
        ]
        if not static or any(
            isinstance(e, cst.StarredElement) for e in target.elements
        ):
            return None
        pairs = [(n, a.value) for n, a in zip(names, sequence.args)]
        name, functions = pairs.pop(static[0])
        return name, functions, pairs

    def unrolled(self, loop: cst.For) -> tuple[list, dict] | None:
        """The statements of ``loop`` written out over a static sequence of functions, and its names'
        last values (``{name: expression}``), else None."""
        if loop.orelse is not None or loop.asynchronous is not None:
            return None
        if not isinstance(loop.body, cst.IndentedBlock):
            return None
        target, sequence, index = loop.target, loop.iter, None
        if (
            isinstance(sequence, cst.Call)
            and isinstance(sequence.func, cst.Name)
            and sequence.func.value == "enumerate"
            and "enumerate" not in self.bound
            and len(sequence.args) == 1
            and not sequence.args[0].keyword
            and not sequence.args[0].star
            and isinstance(target, cst.Tuple)
            and len(target.elements) == 2
            and isinstance(target.elements[0].value, cst.Name)
        ):
            index, target = target.elements[0].value, target.elements[1].value
            sequence = sequence.args[0].value
        beside = (
            []
        )  # ``for layer, W in zip(LAYERS, Ws)``: the other sequences' targets and values
        zipped = self._zipped(target, sequence)
        if zipped is not None:
            target, sequence, beside = zipped
        if not isinstance(target, cst.Name):
            return self._table_rows(loop, target, sequence, index)
        functions = self.written_out(sequence)
        if functions is None or _jumps_or_binds(loop.body, target.value):
            return None
        if self._holds_objects(sequence) and not _read_by_members(
            loop.body, target.value
        ):
            return None  # (an object handed on whole: ``parser.get(W, layer)`` stays a loop, and its error)
        # ``zip`` stops at its shortest sequence: each other one must reach every function (an array's
        # item past its end would be clamped under XLA, a silent wrong step); its length is known when traced
        out = [
            place(
                cst.parse_statement(
                    f"assert len({cst.Module([]).code_for_node(items)}) >= {len(functions)}, "
                    f'"zip() of {len(functions)} functions or rows with a shorter sequence: s2s writes '
                    f'the loop out once per item; pass sequences as long as those"'
                ),
                loop,
                self.positions,
            )
            for _, items in beside
        ]
        for k, fn in enumerate(functions):
            if index is not None:
                out.append(
                    assignment_line(index, cst.Integer(str(k)), loop, self.positions)
                )
            for name, items in beside:  # the k-th item of each other sequence
                item = cst.Subscript(
                    items, [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))]
                )
                out.append(assignment_line(name, item, loop, self.positions))
            mapping = {target.value: fn}
            for stmt in loop.body.body:
                stmt = rewrite(stmt, Positioned(mapping, self.positions))
                if isinstance(
                    fn, (cst.Dict, cst.Tuple, cst.List)
                ):  # a configuration's row
                    stmt = rewrite(stmt, _LiteralItems(self.positions))
                out.append(stmt)
        return out, mapping

    def _table_rows(self, loop, target, sequence, index) -> tuple[list, dict] | None:
        """``for name, (logpdf, kw) in PRIORS.items():`` over a module-level table whose rows hold functions
        (a dict's items or values, a list or tuple of tuples): written out, each of the loop's names read
        as its value in the row (a function by its spelling, literal data as a literal, any other value
        as the table's item: ``PRIORS["sigma"][1]``)."""
        rows = self._rows(sequence)
        if (
            rows is None
            or index is not None
            or not any(_is_function(leaf) for _, row in rows for leaf in _leaves(row))
        ):
            return None
        names = {n.value for n in iter_nodes(target) if isinstance(n, cst.Name)}
        if any(_jumps_or_binds(loop.body, n) for n in names):
            return None
        out = []
        for path, row in rows:
            mapping = self._matched(target, row, path)
            if mapping is None:
                return None
            for stmt in loop.body.body:
                out.append(rewrite(stmt, Positioned(mapping, self.positions)))
        return out, mapping

    def _rows(self, sequence) -> list | None:
        """``[(expression of the row, value)]`` of a module-level dict's ``.items()``/``.values()``, or
        of a module-level list or tuple."""
        method = None
        if (
            isinstance(sequence, cst.Call)
            and not sequence.args
            and isinstance(sequence.func, cst.Attribute)
            and sequence.func.attr.value in ("items", "values")
        ):
            method, sequence = sequence.func.attr.value, sequence.func.value
        held = self.static(sequence)
        if isinstance(held, dict) and method is not None and len(held) <= MAX_COPIES:
            if not all(type(k) in (str, int) for k in held):
                return None
            at = lambda k: _item(sequence, literal(k))  # noqa: E731
            if method == "values":
                return [(at(k), v) for k, v in held.items()]
            return [
                (cst.Tuple([cst.Element(literal(k)), cst.Element(at(k))]), (k, v))
                for k, v in held.items()
            ]
        if (
            isinstance(held, (list, tuple))
            and method is None
            and len(held) <= MAX_COPIES
        ):
            return [(_item(sequence, literal(k)), v) for k, v in enumerate(held)]
        return None

    def _matched(self, target, value, path) -> dict | None:
        """The loop's names -> expressions for one row ``value`` (``path``: an expression reading it)."""
        if isinstance(target, cst.Name):
            return {target.value: self._spelled(value, path, target)}
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(
            value, (tuple, list)
        ):
            return None
        if len(target.elements) != len(value) or any(
            isinstance(e, cst.StarredElement) for e in target.elements
        ):
            return None
        mapping = {}
        for k, (element, item) in enumerate(zip(target.elements, value)):
            inner_path = (
                path.elements[k].value
                if isinstance(path, cst.Tuple)
                else _item(path, literal(k))
            )
            inner = self._matched(element.value, item, inner_path)
            if inner is None:
                return None
            mapping.update(inner)
        return mapping

    def _spelled(self, value, path, like) -> cst.BaseExpression:
        if _is_function(value) and not is_program_object(value):
            return self.spelling(value, like)
        if _is_literal_data(value):
            return self._at(literal(value), like)
        return self._at(path, like)

    def aliases(self, statements) -> list:
        """``act = np.tanh`` (bound once) dropped, and ``act`` read as ``np.tanh`` after it;
        ``ACTIVATIONS[1]`` read as the function it holds; ``heads = [relu_head, lambda h: ...]``, a list
        of functions bound once, read as the list of their names (its lambdas named on lines before).
        """
        out, mapping = [], {}
        for stmt in statements:
            if mapping:
                stmt = rewrite(stmt, Positioned(mapping, self.positions))
            if self._may_read_a_table(stmt):
                stmt = rewrite(stmt, _Items(self))
            alias = self._alias(stmt) or self._sequence(stmt, out)
            if alias is not None:
                mapping[alias[0]] = alias[1]
                self.changed = True
                continue
            out.append(stmt)
        return out

    def _may_read_a_table(self, stmt) -> bool:
        """Whether ``_Items`` may rewrite something in ``stmt``: it holds a list or tuple display (or a list of
        lambdas a comprehension makes), or a name
        or attribute chain that refers to a dict, list or tuple, or to ``lax.switch`` (else it is skipped:
        most statements read no table of functions, and a transformer's walk of each is slow).
        """
        if self.added:
            return True
        for node in iter_nodes(stmt):
            kind = type(node)
            if kind in (cst.List, cst.Tuple) or (
                kind is cst.ListComp and type(node.elt) is cst.Lambda
            ):
                return True
            if kind in (cst.Name, cst.Attribute):
                held = self.static(node)
                if isinstance(held, (dict, list, tuple)) or (
                    held is not None and "jax" in sys.modules and _is_switch(held)
                ):
                    return True
        return False

    def _sequence(self, stmt, out: list):
        """``(name, display of names)`` for ``name = [f, g, lambda z: ...]`` of functions, bound once and read
        only as a sequence (no ``name.append``); its lambdas bound to names on lines put in ``out``.
        """
        assign = assignment(stmt)
        if assign is None or not isinstance(assign.targets[0].target, cst.Name):
            return None
        name, value = assign.targets[0].target.value, assign.value
        if (
            self.bindings[name] != 1
            or not isinstance(value, (cst.List, cst.Tuple))
            or not 0 < len(value.elements) <= MAX_COPIES
            or any(isinstance(e, cst.StarredElement) for e in value.elements)
            or name in _attribute_owners(self.source.node)
        ):
            return None
        items = [e.value for e in value.elements]
        if not all(isinstance(i, cst.Lambda) or self.is_function(i) for i in items):
            return None
        named = []
        for k, item in enumerate(items):
            if isinstance(item, cst.Lambda):
                fresh = self.namer.fresh(f"{name}_{k}")
                out.append(assignment_line(cst.Name(fresh), item, stmt, self.positions))
                self.local.add(fresh)
                item = place(cst.Name(fresh), item, self.positions)
            named.append(cst.Element(item))
        return name, place(value.with_changes(elements=named), value, self.positions)

    def _alias(self, stmt):
        assign = assignment(stmt)
        if assign is None or not isinstance(assign.targets[0].target, cst.Name):
            return None
        name, value = assign.targets[0].target.value, assign.value
        if self.bindings[name] != 1:
            return None
        held = self.static(value)
        # (a module-level object of the program too: ``config = CFG``, an object's attribute given it)
        if not (
            _is_function(held) or is_program_object(held) or self._table_item(value)
        ):
            return None
        return name, value

    def _table_item(self, node) -> bool:
        """``ACTS[name]``: an item of a module-level dict of functions at a key whose names are bound once
        (a parameter, ``cfg.activation``), so that reading it again where it is called reads the same.
        """
        return (
            isinstance(node, cst.Subscript)
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and _function_table(self.static(node.value))
            and _plain_key(node.slice[0].slice.value)
            and all(
                self.bindings.get(n, 0) <= 1
                for n in names_in(node.slice[0].slice.value)
            )
        )


class _Items(PositionKeeping):
    """``SEQ[k]`` (a literal ``k``) of a static sequence of functions: a spelling of that function."""

    def __init__(self, reader: _Reader):
        super().__init__(reader.positions)
        self.reader = reader

    def leave_ListComp(self, original, updated):
        return self._display(original, updated)

    def leave_GeneratorExp(self, original, updated):
        return self._display(original, updated)

    def _display(self, original, updated):
        clause = updated.for_in
        if (
            clause.inner_for_in is not None
            or clause.ifs
            or clause.asynchronous is not None
            or not isinstance(clause.target, cst.Name)
        ):
            return updated
        functions = self.reader.written_out(clause.iter)
        if functions is None and isinstance(updated.elt, cst.Lambda):
            return self._captured(updated)
        if functions is None or _jumps_or_binds(updated.elt, clause.target.value):
            return updated
        self.reader.changed = True
        positions = self.reader.positions
        items = [
            rewrite(updated.elt, Positioned({clause.target.value: fn}, positions))
            for fn in functions
        ]
        return cst.List([cst.Element(item) for item in items])

    def _captured(self, updated):
        """``[lambda x, i=i: ... for i in range(3)]`` (``lax.switch``'s branches), the loop's variable read
        only as the default it gives the lambda's parameter of its name: the display of one lambda per
        count, that default written out (a lambda reading the variable itself would see its last value,
        as Python's closures do: left as it is)."""
        lam, target = updated.elt, updated.for_in.target.value
        counts = self.reader.counts(updated.for_in.iter)
        params = list(lam.params.params)
        at = [
            k
            for k, p in enumerate(params)
            if p.name.value == target
            and isinstance(p.default, cst.Name)
            and p.default.value == target
        ]
        # (the body reads the parameter; another default, read where the lambda is made, reads the loop's)
        defaults = [
            p.default for k, p in enumerate(params) if k not in at and p.default
        ]
        if counts is None or len(at) != 1 or mentions(target, defaults):
            return updated
        self.reader.changed = True
        items = []
        for count in counts:
            own = list(params)  # (each lambda its own parameters)
            own[at[0]] = own[at[0]].with_changes(default=count)
            items.append(lam.with_changes(params=lam.params.with_changes(params=own)))
        return cst.List([cst.Element(item) for item in items])

    def leave_Call(self, original, updated):
        """``ACTS[name](x)`` of a module-level dict of functions, or a call passed ``ACTS[name]``: a chain of
        the calls, by key; ``lax.switch(i, ACTS, x)`` of a module-level list of them: the list written in
        the call."""
        switched = self._switch_branches(original, updated)
        if switched is not None:
            return switched
        reads = [
            (None, updated.func)
        ] + [  # (the function called: ``at`` None; else an argument)
            (i, a.value) for i, a in enumerate(updated.args) if not a.star
        ]
        at, read = next(
            ((i, r) for i, node in reads if (r := self._table_read(node)) is not None),
            (None, None),
        )
        if read is None:
            return updated
        held, key = read
        like = original.func.value if at is None else original.args[at].value.value
        like = like if isinstance(like, cst.Name) else original

        def with_item(k, fn):
            spelled = self.reader.spelling(fn, like, k)
            if at is None:
                return updated.with_changes(func=spelled)
            args = list(updated.args)
            args[at] = args[at].with_changes(value=spelled)
            return updated.with_changes(args=args)

        self.reader.changed = True
        missing = self.reader.spelling(missing_key, like)
        chain = cst.Call(missing, [cst.Arg(key)])
        for k, fn in reversed(list(held.items())):
            test = cst.Comparison(key, [cst.ComparisonTarget(cst.Equal(), literal(k))])
            chain = cst.IfExp(test, with_item(k, fn), chain)
        return place(
            chain.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]),
            original,
            self.reader.positions,
        )

    def _table_read(self, node):
        """``(table, key)`` for ``TABLE[key]``, an item of a module-level dict of functions at a key computed
        in the function; else None."""
        if not (
            isinstance(node, cst.Subscript)
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
        ):
            return None
        held = self.reader.static(node.value)
        key = node.slice[0].slice.value
        if not _function_table(held) or not _plain_key(key):
            return None
        return held, key

    def _switch_branches(self, original, updated):
        if len(updated.args) < 2 or updated.args[1].keyword is not None:
            return None
        if "jax" not in sys.modules or not _is_switch(self.reader.static(updated.func)):
            return None
        branches = updated.args[1].value
        held = self.reader.static(branches)
        if not isinstance(held, (list, tuple)) or not held:
            return None
        if not all(_is_function(fn) for fn in held) or len(held) > MAX_COPIES:
            return None
        self.reader.changed = True
        like = original.args[1].value
        listed = cst.List([cst.Element(self.reader.spelling(fn, like)) for fn in held])
        args = [
            updated.args[0],
            updated.args[1].with_changes(value=listed),
            *updated.args[2:],
        ]
        return updated.with_changes(args=args)

    def leave_Subscript(self, original, updated):
        if len(updated.slice) != 1 or not isinstance(updated.slice[0].slice, cst.Index):
            return updated
        index = updated.slice[0].slice.value
        held = self.reader.static(updated.value)
        # ``ACTS["relu"]``, ``ACTS[cfg.activation]`` (a module-level value)
        if isinstance(held, dict):
            key = literal_key(index)
            if key is None and type(self.reader.static(index)) in (str, int):
                key = self.reader.static(index)
            if key is not None and key in held and _is_function(held[key]):
                self.reader.changed = True
                like = (
                    original.value if isinstance(original.value, cst.Name) else original
                )
                return self.reader.spelling(held[key], like, key)
            return updated
        k = int_literal(index)
        if k is None:
            return updated
        listed = self.reader.functions(updated.value)
        if isinstance(updated.value, (cst.List, cst.Tuple)) and listed is not None:
            if not -len(listed) <= k < len(listed):
                return updated
            self.reader.changed = True  # ``[relu_head, softplus_head][1]``
            return place(listed[k], original, self.reader.positions)
        if not isinstance(held, (tuple, list)) or not -len(held) <= k < len(held):
            return updated
        if not _is_function(held[k]):
            return updated
        self.reader.changed = True
        like = original.value if isinstance(original.value, cst.Name) else original
        return self.reader.spelling(held[k], like)


def _literal_leaves(value):
    """The numbers and strings of literal data (a dict's keys and values)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _literal_leaves(v)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _literal_leaves(v)
    else:
        yield value


class _LiteralItems(PositionKeeping):
    """``{"activation": "relu"}["activation"]`` (a configuration's row written out, read) as ``"relu"``."""

    def leave_Subscript(self, original, updated):
        if len(updated.slice) != 1 or not isinstance(updated.slice[0].slice, cst.Index):
            return updated
        item = _literal_item(updated.value, updated.slice[0].slice.value)
        return updated if item is None else item


def _literal_item(display, index):
    """The item of a display of literals (``{"activation": "relu"}``, ``("relu", 3)``) at a literal key,
    else None."""
    key = literal_key(index)
    if key is None or not isinstance(display, (cst.Dict, cst.Tuple, cst.List)):
        return None
    try:
        value = ast.literal_eval(cst.Module([]).code_for_node(display))
        item = value[key]
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError):
        return None
    return literal(item) if _is_literal_data(item) else None


def _item(node, key) -> cst.Subscript:
    return cst.Subscript(node, [cst.SubscriptElement(cst.Index(key))])


def _leaves(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        yield from value.values()
    else:
        yield value


def _is_literal_data(value) -> bool:
    """Numbers, strings, bools and None, and tuples, lists and dicts of them (``literal`` writes them)."""
    if type(value) in (int, float, bool, str, type(None)):
        return True
    if type(value) in (tuple, list):
        return all(_is_literal_data(v) for v in value)
    if type(value) is dict:
        return all(
            type(k) in (str, int) and _is_literal_data(v) for k, v in value.items()
        )
    return False


def _is_switch(fn) -> bool:
    import jax

    return fn is jax.lax.switch


def _function_table(held) -> bool:
    """A dict of a few functions by string or int keys (``ACTIVATIONS``)."""
    return (
        isinstance(held, dict)
        and 0 < len(held) <= MAX_COPIES
        and all(type(k) in (str, int) for k in held)
        and all(_is_function(f) for f in held.values())
    )


def _plain_key(node) -> bool:
    """A key expression read again at each test of the chain: names, attributes and subscripts of
    them (``name``, ``cfg.act``, ``acts[i]``), and ``or``/``and``/``if``-``else`` of those and literals
    (``act or "identity"``), no calls."""
    keys = (cst.Name, cst.Attribute, cst.Subscript, cst.BooleanOperation, cst.IfExp)
    return isinstance(node, keys) and not any(
        isinstance(n, cst.Call) for n in iter_nodes(node)
    )


def _defined(stmt):
    """``(name, node)`` where a statement of the function's own level defines a function: ``def name``,
    ``name = lambda ...``; else ``(None, None)``."""
    if isinstance(stmt, cst.FunctionDef):
        return stmt.name.value, stmt
    assign = assignment(stmt)
    if (
        assign is not None
        and isinstance(assign.targets[0].target, cst.Name)
        and isinstance(assign.value, cst.Lambda)
    ):
        return assign.targets[0].target.value, assign.value
    return None, None


def _attribute_owners(node) -> set[str]:
    """The names read with an attribute under ``node`` (``fs`` of ``fs.append(g)``)."""
    return {
        n.value.value
        for n in iter_nodes(node)
        if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name)
    }


def _read_by_members(body, name: str) -> bool:
    """Whether ``body`` reads ``name`` only by its attributes and methods (``layer.forward(x)``) or calls it."""
    allowed = set()
    for n in iter_nodes(body):
        if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name):
            allowed.add(id(n.value))
        elif isinstance(n, cst.Call) and isinstance(n.func, cst.Name):
            allowed.add(id(n.func))
    return all(
        id(n) in allowed
        for n in iter_nodes(body)
        if isinstance(n, cst.Name) and n.value == name
    )


def _overwrites(stmt, name: str) -> bool:
    """Whether ``stmt`` is ``name = value`` whose value does not read ``name``."""
    assign = assignment(stmt)
    return (
        assign is not None
        and any(
            isinstance(t.target, cst.Name) and t.target.value == name
            for t in assign.targets
        )
        and mentions(name, [assign.value]) == 0
    )


def _jumps_or_binds(body, name: str) -> bool:
    """Whether ``body`` jumps out (``break``, ``continue``, ``return``, ``yield``) or binds ``name``
    (a nested function's parameter too)."""
    jumps = (cst.Break, cst.Continue, cst.Return, cst.Yield)
    return any(isinstance(n, jumps) for n in iter_nodes(body)) or name in bindings(body)


def desugar(source: FunctionSource) -> FunctionSource:
    """``source`` with its loops over functions written out and its function aliases read through."""
    body = function_body(source)
    if body is None:
        return source
    reader = _Reader(source, body)
    statements = reader.block(reader.aliases(body))
    if reader.assigned_last:
        statements = reader.aliases(statements)
    if not reader.changed:
        return source
    return with_body(source, statements, env={**source.env, **reader.added})
