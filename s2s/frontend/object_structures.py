"""Lists and dicts of objects of your classes made in the function, written as one name per object.

``layers = [Dense(W1), Relu(), Dense(W2)]`` holds objects of different classes, as do ``layers = []``
grown by ``layers.append(Dense(W))``, a dict ``{"fc1": Dense(W1), ...}`` and an ``OrderedDict()`` filled
by ``layers["fc1"] = Dense(W1)`` (the numpy-ml and "Deep Learning from Scratch" ways to hold a
network). No array can stack such objects, and JAX's tracing reads the container as the Python list
or dict it is. ``expand(source)`` does the same when it reads the code: each object gets a name where
it is added (``layers_0 = Dense(W1)``), and the container is read as those names. A ``for`` over it
(over ``.values()``, ``.items()``, ``.keys()``, ``enumerate(...)``) is written out once per object, the
loop's names standing for the object, its key or its index; a comprehension over it is the display
of its items; ``layers[1]`` and ``layers["fc1"]`` are the object, ``len(layers)`` the count, and
``sq, cu = losses`` (as many names as the list holds) names each object.
``local_objects`` then writes each object as names of the function. A ``for`` over a static sequence (a
display, ``range`` of int literals, ``enumerate``/``zip`` of those) whose body appends objects to such a
container is written out first, its target assigned each item.

Guarantee: the container is a name bound once, at the function's own level, to a display or an empty
list or dict (``[]``, ``{}``, ``dict()``, ``OrderedDict()``; ``other = layers`` names it too), then grown
only by lines at that level (``.append(obj)``, ``[literal key] = obj``), all before its first other
read; every item is an object made by calling a class of the program (``local_objects``'s plain
classes), or a name bound once to one; the container is read only in the ways above (in local
functions too), by loops that neither jump out nor bind the loop's names. Anything else stays as it
is (its located error). A list made by one display of objects of one class, read only at the
function's own level, stays for ``object_lists`` (it keeps the loop).
"""

from __future__ import annotations

import ast

import libcst as cst

from ..cstutil import int_literal, iter_nodes, literal, rewrite
from . import source as sources
from .class_members import _plain_class
from .function_loops import MAX_COPIES, Positioned, _jumps_or_binds
from .rewriting import (
    PositionKeeping,
    assignment,
    assignment_line,
    bindings,
    function_body,
    mentions,
    namer_of,
    names_bound,
    object_of,
    place,
    referenced_objects,
    with_body,
)
from .static_sequences import Fresh, StaticSequences

_NOT_ATTRIBUTE_NAMES = {cst.Attribute: "value"}


class _Reader:
    def __init__(self, source: sources.FunctionSource):
        self.source = source
        self.positions = source.file.positions
        self.bound = bindings(source.node, items=False)
        self.namer = namer_of(source)
        self.sequences = StaticSequences(source, self.bound, MAX_COPIES)

    def rebind(self, body) -> None:
        """Count the names bound again, after ``body`` replaced the function's statements."""
        self.bound = bindings(with_body(self.source, body).node, items=False)
        self.sequences.bound = self.bound

    def _copy(self, node, mapping=None):
        if mapping:
            node = rewrite(node, Positioned(mapping, self.positions))
        return rewrite(node, Fresh(self.positions))

    def _is_class(self, node) -> bool:
        return _plain_class(object_of(node, self.source.env, self.bound))

    def is_object(self, node, objects: set) -> bool:
        """``Cls(...)`` of a plain class of the program, or a name bound once to one."""
        if isinstance(node, cst.Name):
            return node.value in objects
        return isinstance(node, cst.Call) and self._is_class(node.func)

    def objects(self, body) -> set:
        """The names bound once, at the function's own level, to an object of a class of the program."""
        found = set()
        for stmt in body:
            assign = assignment(stmt)
            if (
                assign is not None
                and isinstance(assign.targets[0].target, cst.Name)
                and self.bound[assign.targets[0].target.value] == 1
                and self.is_object(assign.value, found)
            ):
                found.add(assign.targets[0].target.value)
        return found

    def named_displays(self, body) -> tuple[list, bool]:
        """``for layer in (Dense(W), Relu())`` as ``layers = (Dense(W), Relu())`` and a loop over ``layers``;
        so is such a display zipped with other sequences (``zip(scales, [SoftSign(), Wave()])``).
        """
        out, changed = [], False
        for stmt in body:
            zipped = self._zipped_display(stmt)
            if zipped is not None:
                at, display = zipped
                name = cst.Name(self.namer.fresh("objects"))
                out.append(assignment_line(name, display, stmt, self.positions))
                args = list(stmt.iter.args)
                args[at] = args[at].with_changes(value=name)
                loop = stmt.with_changes(iter=stmt.iter.with_changes(args=args))
                out.append(place(loop, stmt, self.positions))
                changed = True
                continue
            items = (
                self.sequences.items(stmt.iter)
                if isinstance(stmt, cst.For)
                and isinstance(stmt.iter, (cst.List, cst.Tuple))
                else None
            )
            if not items or not all(self.is_object(i, set()) for i in items):
                out.append(stmt)
                continue
            base = stmt.target.value if isinstance(stmt.target, cst.Name) else "item"
            name = cst.Name(self.namer.fresh(f"{base}s"))
            out.append(assignment_line(name, stmt.iter, stmt, self.positions))
            out.append(place(stmt.with_changes(iter=name), stmt, self.positions))
            changed = True
        if changed:
            self.rebind(out)
        return out, changed

    def _zipped_display(self, stmt) -> tuple[int, cst.BaseExpression] | None:
        """``(position, display)`` of a display of objects among the sequences a loop zips, else None."""
        if not (
            isinstance(stmt, cst.For)
            and isinstance(stmt.iter, cst.Call)
            and isinstance(stmt.iter.func, cst.Name)
            and stmt.iter.func.value == "zip"
            and not any(a.keyword or a.star for a in stmt.iter.args)
        ):
            return None
        for at, arg in enumerate(stmt.iter.args):
            if isinstance(arg.value, (cst.List, cst.Tuple)):
                items = self.sequences.items(arg.value)
                if items and all(self.is_object(i, set()) for i in items):
                    return at, arg.value
        return None

    def comprehended(self, body) -> tuple[list, bool]:
        """``layers = []`` then ``for W, b in params: layers.append(Dense(W, b))`` (the loop's only line),
        nothing reading ``layers`` between, as ``layers = [Dense(W, b) for W, b in params]``: a list of
        objects of one class, which ``object_lists`` reads however long ``params`` is.
        """
        out, changed = list(body), False
        for k, stmt in enumerate(body):
            found = self.started(stmt)
            if found is None or found[1:] != ("list", []):
                continue
            name = found[0]
            loop = next(
                (j for j in range(k + 1, len(body)) if _mentions(body[j], {name})),
                None,
            )
            grown = None if loop is None else self._only_append(body[loop], name)
            if grown is None:
                continue
            # (a comprehension's names are its own: a loop's, read after it, would be gone)
            targets = names_bound(body[loop].target)
            if any(mentions(t, [body[loop]]) != mentions(t, body) for t in targets):
                continue
            clause = cst.CompFor(target=body[loop].target, iter=body[loop].iter)
            made = cst.ListComp(grown, clause)
            out[k] = None
            out[loop] = assignment_line(
                cst.Name(name), made, body[loop], self.positions
            )
            changed = True
        return [s for s in out if s is not None], changed

    def _only_append(self, stmt, name) -> cst.BaseExpression | None:
        if not (
            isinstance(stmt, cst.For)
            and stmt.orelse is None
            and stmt.asynchronous is None
            and isinstance(stmt.body, cst.IndentedBlock)
            and len(stmt.body.body) == 1
        ):
            return None
        grown = _growth(stmt.body.body[0], {name})
        if grown is None or grown[0] is not None:
            return None
        item = grown[1]
        return (
            item if isinstance(item, cst.Call) and self._is_class(item.func) else None
        )

    def unaliased(self, body) -> tuple[list, bool]:
        """``layers = [Dense(W, b) for W, b in params]`` then ``model_layers = layers`` (an object's
        attribute given the list): the second name read as the first, its line dropped.
        """
        lists, out, mapping = set(), [], {}
        for stmt in body:
            if mapping:
                stmt = rewrite(stmt, Positioned(mapping, self.positions))
            assign = assignment(stmt)
            target = None if assign is None else assign.targets[0].target
            if not isinstance(target, cst.Name) or self.bound[target.value] != 1:
                out.append(stmt)
                continue
            value = assign.value
            if isinstance(value, cst.Name) and value.value in lists:
                mapping[target.value] = value
                continue
            if isinstance(value, cst.ListComp) and self.is_object(value.elt, set()):
                lists.add(target.value)
            out.append(stmt)
        return out, bool(mapping)

    # --- building loops -----------------------------------------------------------------------

    def building_loops(self, body, containers: set) -> list:
        """``body`` with its loops over static sequences that add objects to ``containers`` written out."""
        out = []
        for stmt in body:
            items = self._building(stmt, containers)
            if items is None:
                out.append(stmt)
                continue
            for item in items:
                out.append(
                    assignment_line(stmt.target, self._copy(item), stmt, self.positions)
                )
                out += [self._copy(s) for s in stmt.body.body]
        return out

    def _building(self, stmt, containers: set) -> list | None:
        if not (
            isinstance(stmt, cst.For)
            and stmt.orelse is None
            and stmt.asynchronous is None
            and isinstance(stmt.body, cst.IndentedBlock)
            and any(_growth(s, containers) is not None for s in stmt.body.body)
        ):
            return None
        jumps = (cst.Break, cst.Continue, cst.Return, cst.Yield)
        if any(isinstance(n, jumps) for n in iter_nodes(stmt.body)):
            return None
        items = self.sequences.items(stmt.iter)
        return items if items and len(items) <= MAX_COPIES else None

    # --- containers ---------------------------------------------------------------------------

    def started(self, stmt) -> tuple[str, str, list] | None:
        """``(name, "list" or "dict", [(key, item)])`` where ``stmt`` binds a name to a display or an empty
        container (a list's keys are None)."""
        assign = assignment(stmt)
        if assign is None or not isinstance(assign.targets[0].target, cst.Name):
            return None
        name, value = assign.targets[0].target.value, assign.value
        if self.bound[name] != 1:
            return None
        if isinstance(value, (cst.List, cst.Tuple)):
            items = self.sequences.items(value)
            return None if items is None else (name, "list", [(None, i) for i in items])
        if isinstance(value, cst.Dict):
            pairs = []
            for e in value.elements:
                key = _key(e.key) if isinstance(e, cst.DictElement) else None
                if key is None:
                    return None
                pairs.append((key, e.value))
            return name, "dict", pairs
        if (
            isinstance(value, cst.Call)
            and not value.args
            and self._empty_dict(value.func)
        ):
            return name, "dict", []
        return None

    def _empty_dict(self, func) -> bool:
        if isinstance(func, cst.Name) and func.value == "dict":
            return "dict" not in self.bound and "dict" not in self.source.env
        held = object_of(func, self.source.env, self.bound)
        return getattr(held, "__qualname__", None) == "OrderedDict" and (
            getattr(held, "__module__", None) == "collections"
        )

    def expanded(self, body: list, start: int, objects: set) -> list | None:
        """``body`` with the container bound by ``body[start]`` written as names (see the module), else None."""
        name, kind, items = self.started(body[start])
        body = body[: start + 1] + self.building_loops(body[start + 1 :], {name})
        out, keys, names = body[:start], [], []

        def add(key, item, like):
            if not self.is_object(item, objects):
                return False
            if isinstance(item, cst.Call):
                label = (
                    key if isinstance(key, str) and key.isidentifier() else len(names)
                )
                fresh = self.namer.fresh(f"{name}_{label}")
                out.append(assignment_line(cst.Name(fresh), item, like, self.positions))
                item = cst.Name(fresh)
            if (
                kind == "dict" and key in keys
            ):  # a key set again: its place kept, its object replaced
                names[keys.index(key)] = item.value
            else:
                keys.append(key)
                names.append(item.value)
            return True

        for key, item in items:
            if not add(key, item, body[start]):
                return None
        for k in range(start + 1, len(body)):
            grown = _growth(body[k], {name})
            if grown is None and not _mentions(body[k], {name}):
                out.append(body[k])  # (a building loop's target assigned, written out)
                continue
            if grown is None:
                break
            key, item = grown
            if (key is None) != (kind == "list") or not add(key, item, body[k]):
                return None
        else:
            k = len(body)
        if not names:
            return None
        reads = _Reads(self, name, kind, keys, names, body)
        for stmt in body[k:]:
            alias = _alias_of(stmt, name, self.bound)
            if alias is not None:
                reads.aliases.add(alias)
                continue
            new = rewrite(stmt, reads)
            if isinstance(new, cst.FlattenSentinel):
                out += list(new.nodes)
            elif isinstance(new, cst.CSTNode):
                out.append(new)
        if any(_mentions(stmt, reads.aliases) for stmt in out):
            return None  # read some other way: the container stays (and its error)
        return out

    def one_class_list(self, body, start) -> bool:
        """A list display of objects of one class read only at the function's own level (``object_lists``)."""
        name, kind, items = self.started(body[start])
        if kind != "list" or not all(isinstance(i, cst.Call) for _, i in items):
            return False
        classes = {cst.Module([]).code_for_node(i.func) for _, i in items}
        nested = [s for s in body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        return len(classes) == 1 and not any(
            isinstance(n, cst.Name) and n.value == name
            for s in nested
            for n in iter_nodes(s)
        )


def _mentions(stmt, names: set) -> bool:
    return any(
        isinstance(n, cst.Name) and n.value in names
        for n in iter_nodes(stmt, skip=_NOT_ATTRIBUTE_NAMES)
    )


def _key(node):
    """A dict key written as a string or int literal, else None."""
    if isinstance(node, (cst.SimpleString, cst.Integer)):
        value = ast.literal_eval(node.value)
        return value if isinstance(value, (str, int)) else None
    return None


def _growth(stmt, containers: set) -> tuple | None:
    """``(None, item)`` for ``name.append(item)``, ``(key, item)`` for ``name[key] = item``, ``name`` one of
    ``containers``; else None."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    line = stmt.body[0]
    if isinstance(line, cst.Expr) and isinstance(line.value, cst.Call):
        call = line.value
        if (
            isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Name)
            and call.func.value.value in containers
            and call.func.attr.value == "append"
            and len(call.args) == 1
            and not call.args[0].keyword
            and not call.args[0].star
        ):
            return None, call.args[0].value
        return None
    assign = assignment(stmt)
    if assign is None:
        return None
    target = assign.targets[0].target
    if (
        isinstance(target, cst.Subscript)
        and isinstance(target.value, cst.Name)
        and target.value.value in containers
        and len(target.slice) == 1
        and isinstance(target.slice[0].slice, cst.Index)
    ):
        key = _key(target.slice[0].slice.value)
        return None if key is None else (key, assign.value)
    return None


def _alias_of(stmt, name: str, bound) -> str | None:
    """``other`` where ``stmt`` is ``other = name`` and binds ``other`` nowhere else."""
    assign = assignment(stmt)
    if (
        assign is not None
        and isinstance(assign.value, cst.Name)
        and assign.value.value == name
        and isinstance(assign.targets[0].target, cst.Name)
        and bound[assign.targets[0].target.value] == 1
    ):
        return assign.targets[0].target.value
    return None


class _Reads(PositionKeeping):
    """The container's reads as its objects' names (``_Reader.expanded``)."""

    def __init__(self, reader: _Reader, name, kind: str, keys: list, names: list, body):
        super().__init__(reader.positions)
        self.reader, self.kind, self.keys, self.names = reader, kind, keys, names
        self.body = body  # the function's statements, as they were before
        self.aliases = {name}
        self.scopes = (
            []
        )  # the local functions around the node visited (a loop's names are theirs)

    def visit_FunctionDef(self, node):
        self.scopes.append(node)

    def leave_FunctionDef(self, original, updated):
        self.scopes.pop()
        return updated

    def _is_container(self, node) -> bool:
        return isinstance(node, cst.Name) and node.value in self.aliases

    def leave_SimpleStatementLine(self, original, updated):
        """``sq, cu = losses`` (names, as many as the list holds): a line per name, each its object."""
        assign = assignment(updated)
        target = assign.targets[0].target if assign is not None else None
        if (
            self.kind != "list"
            or not isinstance(target, (cst.Tuple, cst.List))
            or not self._is_container(assign.value)
            or len(target.elements) != len(self.names)
            or not all(
                isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
                for e in target.elements
            )
        ):
            return updated
        return cst.FlattenSentinel(
            [
                assignment_line(e.value, cst.Name(n), original, self.positions)
                for e, n in zip(target.elements, self.names)
            ]
        )

    def _zipped_rows(self, sequence) -> tuple[list, list] | None:
        """``zip(Ws, acts)`` with the container among its sequences: each step's values (the others'
        items at the step's position) and the other sequences, which must reach every object; else None.
        """
        if not (
            isinstance(sequence, cst.Call)
            and isinstance(sequence.func, cst.Name)
            and sequence.func.value == "zip"
            and "zip" not in self.reader.bound
            and len(sequence.args) >= 2
            and not any(a.keyword or a.star for a in sequence.args)
        ):
            return None
        values = [a.value for a in sequence.args]
        at = [k for k, v in enumerate(values) if self._is_container(v)]
        if len(at) != 1 or self.kind != "list":
            return None
        others = [v for k, v in enumerate(values) if k != at[0]]
        rows = []
        for k, name in enumerate(self.names):
            row = [
                (
                    cst.Name(name)
                    if j == at[0]
                    else cst.Subscript(
                        v, [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))]
                    )
                )
                for j, v in enumerate(values)
            ]
            rows.append(tuple(row))
        return rows, others

    def _rows(self, sequence) -> list | None:
        """Each step's values for a loop or comprehension over ``sequence``, else None."""
        zipped = self._zipped_rows(sequence)
        if zipped is not None:
            return zipped[0]
        objects = [cst.Name(n) for n in self.names]
        keys = [literal(k) for k in self.keys]
        indexed = False
        if (
            isinstance(sequence, cst.Call)
            and isinstance(sequence.func, cst.Name)
            and sequence.func.value == "enumerate"
            and "enumerate" not in self.reader.bound
            and len(sequence.args) == 1
            and not sequence.args[0].keyword
            and not sequence.args[0].star
        ):
            indexed, sequence = True, sequence.args[0].value
        if isinstance(sequence, (cst.List, cst.Tuple)) and all(
            isinstance(e, cst.Element)
            and isinstance(e.value, cst.Name)
            and e.value.value in self.names
            for e in sequence.elements
        ):  # its objects picked (``for b in (blocks["enc"], blocks["dec"])``)
            rows = [e.value for e in sequence.elements]
        elif self._is_container(sequence):
            rows = objects if self.kind == "list" else keys
        elif (
            isinstance(sequence, cst.Call)
            and not sequence.args
            and isinstance(sequence.func, cst.Attribute)
            and self._is_container(sequence.func.value)
            and self.kind == "dict"
        ):
            method = sequence.func.attr.value
            if method == "values":
                rows = objects
            elif method == "keys":
                rows = keys
            elif method == "items":
                rows = [(k, o) for k, o in zip(keys, objects)]
            else:
                return None
        else:
            return None
        return [(literal(k), r) for k, r in enumerate(rows)] if indexed else rows

    @staticmethod
    def _mapping(target, row) -> dict | None:
        """The loop's names -> the expressions standing for them in one step, else None."""
        if isinstance(target, cst.Name):
            return {
                target.value: (
                    row
                    if isinstance(row, cst.CSTNode)
                    else cst.Tuple([cst.Element(r) for r in row])
                )
            }
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(row, tuple):
            if len(target.elements) != len(row):
                return None
            mapping = {}
            for element, value in zip(target.elements, row):
                inner = _Reads._mapping(element.value, value)
                if inner is None or isinstance(element, cst.StarredElement):
                    return None
                mapping.update(inner)
            return mapping
        return None

    def leave_For(self, original, updated):
        if updated.orelse is not None or updated.asynchronous is not None:
            return updated
        rows = self._rows(updated.iter)
        if rows is None or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        mappings = [self._mapping(updated.target, row) for row in rows]
        if None in mappings or any(
            _jumps_or_binds(updated.body, n) for n in mappings[0]
        ):
            return updated
        zipped = self._zipped_rows(updated.iter)
        # ``zip`` stops at its shortest sequence: each other one must reach every object
        out = [
            place(
                cst.parse_statement(
                    f"assert len({cst.Module([]).code_for_node(other)}) >= {len(self.names)}, "
                    f'"zip() of {len(self.names)} objects with a shorter sequence: s2s writes the loop '
                    f'out once per object; pass sequences as long as the objects"'
                ),
                original,
                self.positions,
            )
            for other in (zipped[1] if zipped else [])
        ]
        out += [
            self.reader._copy(stmt, mapping)
            for mapping in mappings
            for stmt in updated.body.body
        ]
        # the loop's names keep their last values where the function reads them after it
        # (``layer`` then names an object whole: ``local_objects`` leaves it, and its error)
        out += [
            assignment_line(cst.Name(n), self.reader._copy(v), original, self.positions)
            for n, v in mappings[-1].items()
            if self._read_outside(n, original)
        ]
        return cst.FlattenSentinel(out) if out else cst.RemovalSentinel.REMOVE

    def _read_outside(self, name: str, loop) -> bool:
        """Whether the function (the local function holding ``loop``, whose name it is) names ``name``
        other than in ``loop``."""
        scope = [self.scopes[-1]] if self.scopes else self.body
        return mentions(name, [loop]) < mentions(name, scope)

    def _display(self, updated, make):
        clause = updated.for_in
        if clause.inner_for_in is not None or clause.ifs or clause.asynchronous:
            return updated
        rows = self._rows(clause.iter)
        if rows is None:
            return updated
        mappings = [self._mapping(clause.target, row) for row in rows]
        if None in mappings:
            return updated
        return make(mappings)

    def leave_ListComp(self, original, updated):
        return self._display(
            updated,
            lambda ms: cst.List(
                [cst.Element(self.reader._copy(updated.elt, m)) for m in ms]
            ),
        )

    def leave_GeneratorExp(self, original, updated):
        return self.leave_ListComp(original, updated)

    def leave_DictComp(self, original, updated):
        return self._display(
            updated,
            lambda ms: cst.Dict(
                [
                    cst.DictElement(
                        self.reader._copy(updated.key, m),
                        self.reader._copy(updated.value, m),
                    )
                    for m in ms
                ]
            ),
        )

    def leave_Subscript(self, original, updated):
        if not (
            self._is_container(updated.value)
            and len(updated.slice) == 1
            and isinstance(updated.slice[0].slice, cst.Index)
        ):
            return updated
        index = updated.slice[0].slice.value
        key = int_literal(index) if self.kind == "list" else _key(index)
        if key is None:
            return updated
        if self.kind == "list":
            if not -len(self.names) <= key < len(self.names):
                return updated
            return cst.Name(self.names[key])
        if key not in self.keys:
            return updated
        return cst.Name(self.names[self.keys.index(key)])

    def leave_Call(self, original, updated):
        if (
            isinstance(updated.func, cst.Name)
            and updated.func.value == "len"
            and "len" not in self.reader.bound
            and len(updated.args) == 1
            and self._is_container(updated.args[0].value)
        ):
            return cst.Integer(str(len(self.names)))
        return updated


def expand(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with its containers of objects of your classes written as names (see the module)."""
    body = function_body(source)
    if body is None or not any(
        _plain_class(obj) for obj in referenced_objects(source).values()
    ):
        return source
    reader = _Reader(source)
    done = set()
    body, named = reader.named_displays(body)
    body, comprehended = reader.comprehended(body)
    body, unaliased = reader.unaliased(body)
    changed = named or comprehended or unaliased
    while True:
        objects = reader.objects(body)
        for start, stmt in enumerate(body):
            found = reader.started(stmt)
            if found is None or found[0] in done or reader.one_class_list(body, start):
                continue
            done.add(found[0])
            new = reader.expanded(body, start, objects)
            if new is not None:
                body, changed = new, True
                reader.rebind(body)
                break
        else:
            break
    return with_body(source, body) if changed else source
