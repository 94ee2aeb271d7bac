"""Objects of your classes made in the function, read as their attributes and methods.

``kde = KDE(data, 0.5)`` then ``kde.logpdf(x)``: the object holds values of the function (``data``),
so it is no object s2s could read, and a derivative must reach through its attributes.
``desugar(source)`` writes the object as names of the function: each attribute a variable
(``kde_data = data``, ``kde_bw = 0.5``), each method it calls a local function reading them
(``def kde_logpdf(x): ...`` with ``self.data`` read as ``kde_data``), and ``kde.bw`` /
``kde.logpdf(x)`` as those names. An object used where it is made (``KDE(data, 0.5).logpdf(x)``,
``Scale(w).v``, ``Layer(w)(x)``) is named on a line before.

Methods that store attributes (NNFS's ``dense1.forward(X)`` setting ``self.output``, read after as
``dense1.output``) rebind the object's variables: their local functions declare them ``nonlocal``,
which ``closure_state`` threads through each call; an attribute only a method sets is ``None`` until
then. ``layer(x)`` calls the class's ``__call__`` (``layer_call``).

Guarantee: ``name = Cls(args)`` in any block, ``name`` bound nowhere else and read only as
``name.attribute``, ``name.method(...)`` or ``name(...)``; ``Cls`` a class of the program (not a
library's) whose bases are plain classes of the program (abstract ones too, ``abc.ABC``) (methods looked up as Python does, nearest
first), or a ``NamedTuple`` or a dataclass (its fields, by position or keyword, defaults literal);
its ``__init__`` (its own or a base's) only assigns ``self.attribute = expression`` of its
parameters and of the attributes it assigned before, and calls a base's ``__init__`` of that kind
(``super().__init__(scale)``, ``Base.__init__(self, w)``: its assignments, its parameters bound to the
call's arguments) (written as those assignments), or else is read
as a method like the others (``if``s, items written: ``net_init(...)`` called on the line); its methods the line's calls reach are plain
``def``s (no decorator but ``@property``: a read-only property is its getter called) that read
``self`` only as ``self.attribute`` or ``self.method(...)``. Every module-level name the methods and
``__init__`` read is the same object where the line is, and no name the function binds. Any other
class stays as it is (its located error).
"""

from __future__ import annotations

import dataclasses
import inspect
import types

import libcst as cst

from ..cstutil import iter_nodes, names_in, rewrite, substitute
from . import fluent_methods
from . import source as sources
from .class_members import (
    _assigned_attributes,
    _attribute_writes,
    _class_attributes,
    _decorator,
    _init,
    _is_record,
    _MadeDefault,
    _methods,
    _of_program,
    _plain_class,
    _properties,
    _reached,
    _with_made_defaults,
)
from .factories import globals_agree
from .fluent_methods import dropped_self_returns, returns_self, values_read
from .function_args import defined_in_the_program
from .object_init import (
    bind_arguments,
    direct_parameters,
    init_assignments,
    split_assignments,
    spreadable,
)
from .rewriting import (
    Moving,
    PositionKeeping,
    assignment,
    assignment_line,
    attribute_reads,
    bindings,
    function_body,
    is_docstring,
    mentions,
    moved_from,
    named_value,
    namer_of,
    place,
    rebinds,
    referenced_objects,
    with_blocks,
    with_body,
)


def _member(name, attr: str, properties: set) -> cst.BaseExpression:
    """The name standing for a member; a property's getter called (``p.scale`` is ``p_scale()``); a class
    attribute's reading through the class (``Layer.eps``)."""
    if isinstance(name, cst.CSTNode):
        return name.deep_clone()
    return cst.Call(cst.Name(name)) if attr in properties else cst.Name(name)


def _collected_written_out(assigned, bound):
    """``self.layers = list(layers)`` of ``*layers`` given ``(Linear(W), Tanh())`` (or of ``layers`` given a
    list display): the list of the call's items written out (``[Linear(W), Tanh()]``, which
    ``object_structures`` reads as objects), where the parameter is read only so; the parameter is then
    bound to nothing."""
    tuples = {p: v for p, v in bound if isinstance(v, (cst.Tuple, cst.List))}
    if not tuples:
        return assigned, bound

    def wrapped(value):
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value in ("list", "tuple")
            and len(value.args) == 1
            and not value.args[0].star
            and isinstance(value.args[0].value, cst.Name)
            and value.args[0].value.value in tuples
        ):
            return value.args[0].value.value
        return None

    inlined = {wrapped(value) for _, value in assigned} - {None}
    inlined -= set().union(
        *(names_in(value) for _, value in assigned if wrapped(value) is None)
    )
    out = []
    for attr, value in assigned:
        if wrapped(value) in inlined:
            kind = cst.List if value.func.value == "list" else cst.Tuple
            value = kind(
                [cst.Element(e.value) for e in tuples[wrapped(value)].elements]
            )
        out.append((attr, value))
    return out, [(p, v) for p, v in bound if p not in inlined]


class _Self(Moving):
    """A method's (or ``__init__``'s) ``self.attribute`` as its variable, ``self.method`` as its local
    function; ``self`` read any other way makes ``failed`` True."""

    def __init__(self, me: str, names: dict, moved, properties=frozenset(), cls=None):
        super().__init__(moved)
        self.me, self.names, self.failed = me, names, False
        self.properties = properties
        self.cls = cls

    def leave_Attribute(self, original, updated):
        if (
            self.cls is not None
            and updated.attr.value == "__name__"
            and self._class_of_me(updated.value)
        ):  # ``type(self).__name__`` (scikit-learn's messages): the class's name
            return cst.SimpleString(repr(self.cls.__name__))
        if self._class_of_me(
            updated
        ):  # ``self.__class__``: ``type(self)``, read as a whole above
            return cst.Call(cst.Name("type"), [cst.Arg(cst.Name(self.me))])
        if isinstance(updated.value, cst.Name) and updated.value.value == self.me:
            new = self.names.get(updated.attr.value)
            if new is None:
                self.failed = True
                return updated
            return _member(new, updated.attr.value, self.properties)
        return updated

    def _class_of_me(self, node) -> bool:
        """Whether ``node`` is ``type(self)`` or ``self.__class__``."""
        if isinstance(node, cst.Attribute):
            return (
                node.attr.value == "__class__"
                and isinstance(node.value, cst.Name)
                and node.value.value == self.me
            )
        return (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "type"
            and len(node.args) == 1
            and isinstance(node.args[0].value, cst.Name)
            and node.args[0].value.value == self.me
        )


class _Objects:
    def __init__(self, source: sources.FunctionSource):
        self.source = source
        self.positions = source.file.positions
        self.bound = bindings(source.node)
        self.namer = namer_of(source)
        # object's name -> {attribute or method: its name}; its class's properties
        self.names: dict[str, dict] = {}
        self.properties: dict[str, set] = {}
        self.changed = False
        # names of another module its classes' methods read (``globals_agree``)
        self.lent = {}

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            before, stmt = self._hoisted(stmt)
            written = self.written(stmt)
            if written is None:
                out.extend(before)
                out.append(with_blocks(stmt, self.block, self.positions))
            else:
                out.extend([*before, *written])
                self.changed = True
        return out

    def _hoisted(self, stmt) -> tuple[list, object]:
        """``Cls(args).method(...)``, ``Cls(args).attribute`` or ``Cls(args)(...)`` in a line: the object
        made on a line of its own before, by a name, where it can be written as names (then the line
        reads that name's attribute or calls the method's local function).
        """
        before = []
        while (found := self._hoisted_one(stmt)) is not None:
            lines, stmt = found
            before += lines
        return before, stmt

    def _hoisted_one(self, stmt):
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        for node in iter_nodes(stmt):
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Call):
                made, used = node.value, {node.attr.value}
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Call):
                made, used = node.func, {"__call__"}
            else:
                continue
            if self._class(made.func) is None:
                continue
            name = self.namer.fresh(made.func.value.lower())
            line = assignment_line(cst.Name(name), made, stmt, self.positions)
            written = self.written(line, used=used)
            if written is None:
                continue
            self.changed = True
            new = stmt.deep_replace(made, cst.Name(name))
            return written, place(new, stmt, self.positions)
        return None

    def _class(self, node):
        if isinstance(node, cst.Name) and node.value not in self.bound:
            cls = self.source.env.get(node.value)
            return cls if _plain_class(cls) else None
        return None

    @staticmethod
    def _fields(cls) -> list | None:
        """A record's fields, or the attributes a plain class's ``__init__`` assigns (None: not readable)."""
        if issubclass(cls, tuple):
            return list(cls._fields)
        if dataclasses.is_dataclass(cls):
            return [f.name for f in dataclasses.fields(cls)]
        init = _init(cls)
        if init is None:
            return []
        body = init_assignments(init, cls)
        if body is None:
            return None
        return [
            a
            for attrs, _ in body
            for a in ((attrs,) if isinstance(attrs, str) else attrs)
        ]

    @staticmethod
    def _set_by_methods(cls, fields, methods) -> list | None:
        """The attributes the methods assign that are not fields (``self.output`` set by ``forward``)."""
        found = []
        for m in methods:
            writes = _attribute_writes(_methods(cls)[m])
            if writes is None:
                return None
            found += [a for a in writes if a not in fields and a not in found]
        return found

    def written(self, stmt, used=None) -> list | None:
        """The lines that stand for ``name = Cls(args)``, else None (``used``: what the function reads of
        an object s2s named, which no line of the function binds)."""
        assign = assignment(stmt)
        if (
            assign is None
            or not isinstance(assign.value, cst.Call)
            or not isinstance(assign.targets[0].target, cst.Name)
        ):
            return None
        name = assign.targets[0].target.value
        call = assign.value
        cls = self._class(call.func)
        hoisted = used is not None
        if cls is None or not spreadable(call):
            return None
        if not hoisted and rebinds(self.source.node, name) != 1:
            return None
        if _assigned_in_local_functions(self.source.node, name):
            # (``kf.x = v`` in a local ``def``: the object's variable there would be the def's own)
            return None
        fields = self._fields(cls)
        # an ``__init__`` doing more than assigning attributes (an ``if``, a dict filled item by item):
        # a method too, called where the object is made
        init = _init(cls) if fields is None and not _is_record(cls) else None
        if init is not None:
            fields = []
        if fields is None:
            return None
        # attributes the methods assign are read too (``self.output``, set by ``forward``), and those the
        # function assigns (``kf.F = ...`` after ``kf = KalmanFilter(4, 2)``)
        settable = self._set_by_methods(cls, fields, _methods(cls)) or []
        settable += [
            a for a in _assigned_attributes(self.source.node, name) if a not in settable
        ]
        if init is not None:
            settable += [a for a in _attribute_writes(init) or [] if a not in settable]
        used = used if hoisted else self._used(name, cls, [*fields, *settable])
        if used is None:
            return None
        methods = _reached(cls, used)
        if methods is None or not self._same_globals(cls, methods):
            return None
        if any(
            returns_self(_methods(cls)[m]) and values_read(self.source.node, name, m)
            for m in methods
        ):  # ``return m.fit(X)``: the object itself as a value
            return None
        later = self._set_by_methods(cls, fields, methods)
        if later is not None:
            later += [
                a
                for a in _assigned_attributes(self.source.node, name)
                if a not in later and a not in fields
            ]
        if later is not None and init is not None:
            writes = _attribute_writes(init)
            later = (
                None
                if writes is None
                else [*later, *(a for a in writes if a not in later)]
            )
        if later is None:
            return None
        # objects an ``__init__`` read as a method is handed and keeps whole (``self.family = family``
        # given ``Poisson()``): the object's attribute bound before the call, as an object of its own
        handed = self._handed(init, call) if init is not None else {}
        later = [a for a in later if a not in handed]
        # a class attribute no line sets (``eps = 1e-5``, ``default_link = Log``): its value
        constants = {
            c: self._class_value(call.func, c, getattr(cls, c))
            for c in _class_attributes(cls) - {*fields, *later, *_methods(cls)}
        }
        constants = {c: v for c, v in constants.items() if v is not None}
        if not used - set(_methods(cls)) <= {*fields, *later, *handed, *constants}:
            return None
        names = {f: self.namer.fresh(f"{name}_{f}") for f in (*fields, *later, *handed)}
        names.update({m: self.namer.fresh(_method_name(name, m)) for m in methods})
        names.update(constants)
        if init is not None:
            names["__init__"] = self.namer.fresh(f"{name}_init")
            lines = [
                assignment_line(cst.Name(names[a]), arg, stmt, self.positions)
                for a, (_, arg) in handed.items()
            ]
        else:
            lines = self._made(cls, call, names, stmt)
        if lines is None:
            return None
        # an attribute a method sets has no value until it is called (reading it before is an error), or
        # the class's value until then (``total = 0.0`` in the class, ``self.total += v`` in a method)
        defaults = _class_attributes(cls)
        for a in later:
            first = (
                self._class_value(call.func, a, getattr(cls, a))
                if a in defaults
                else cst.Name("None")
            )
            if first is None:
                return None
            lines.append(
                assignment_line(cst.Name(names[a]), first, stmt, self.positions)
            )
        for method in methods:
            made = self._method(cls, method, names, stmt)
            if made is None:
                return None
            lines.append(made)
        if init is not None:
            # ``def net_init(...)`` with the attributes it sets, called at once
            kept = {p for p, _ in handed.values()}
            made = self._method(cls, "__init__", names, stmt, init, without=kept)
            if made is None:
                return None
            args = call.args
            if kept:  # the others by keyword (the handed ones are no parameters now)
                bound = bind_arguments(
                    inspect.signature(init), call, skip_first=True, spell=self._spelled
                )
                args = [
                    cst.Arg(v, keyword=cst.Name(p))
                    for p, v in bound
                    if p is not None and p not in kept
                ]
            made_call = cst.Expr(cst.Call(cst.Name(names["__init__"]), args))
            lines += [
                made,
                place(cst.SimpleStatementLine([made_call]), stmt, self.positions),
            ]
        self.names[name] = names
        self.properties[name] = _properties(cls)
        return lines

    def _used(self, name, cls, fields) -> set[str] | None:
        if fields is None:
            return None
        reads = _member_reads(self.source.node, name)
        members = set(fields) | set(_methods(cls)) | _class_attributes(cls)
        return reads if reads is not None and reads <= members else None

    def _same_globals(self, cls, methods) -> bool:
        """Whether the module-level names the methods and ``__init__`` read are the same objects here."""
        functions = [_methods(cls)[m] for m in methods]
        if _init(cls) is not None and not _is_record(cls):
            functions.append(_init(cls))
        for fn in functions:
            try:
                made = sources.load(fn)
            except Exception:  # no source to read
                return False
            if not globals_agree(made, self.source.env, self.bound, lent=self.lent):
                return False
        return True

    def _spelled(self, value):
        """A default that is no literal, spelled by a module the function names (``dtype=np.float64``:
        ``np.float64``), else None."""
        attr = getattr(value, "__name__", None)
        if not isinstance(attr, str) or not attr.isidentifier():
            return None
        for name, module in self.source.env.items():
            if (
                isinstance(module, types.ModuleType)
                and name not in self.bound
                and getattr(module, attr, None) is value
            ):
                return cst.Attribute(cst.Name(name), cst.Name(attr))
        return None

    def _class_value(self, spelled, attr: str, value):
        """A class attribute's value as the function can spell it: a constant (a number, a string, an
        array) read through the class as the line spells it (``Layer.eps``: read, and watched, as a
        module's value is), a module's function (``np.tanh``), or an object a module-level name of
        the function holds (a class of the program: ``Log``); else None."""
        from .resolve import class_constant  # (it reads this module's callers)

        if class_constant(value):
            return cst.Attribute(spelled.deep_clone(), cst.Name(attr))
        for name, held in self.source.env.items():
            if held is value and name not in self.bound and not name.startswith("__"):
                return cst.Name(name)
        return self._spelled(value)

    def _made_by(self, value):
        """A default made when the object is (a dataclass's ``field(default_factory=...)``): the body of a
        lambda of the program taking nothing (``lambda: np.zeros(2)``) that reads what the function's
        names read, or the empty list, dict or set; else None."""
        factory = value.factory
        empty = {list: cst.List([]), dict: cst.Dict([]), tuple: cst.Tuple([])}
        if factory in empty:
            return empty[factory]
        if not (inspect.isfunction(factory) and factory.__name__ == "<lambda>"):
            return None
        try:
            made = sources.load(factory)
        except Exception:  # no source to read
            return None
        node = made.node
        if (
            not isinstance(node, cst.Lambda)
            or node.params.params
            or node.params.kwonly_params
        ):
            return None
        if not globals_agree(made, self.source.env, self.bound, lent=self.lent):
            return None
        return node.body.deep_clone()

    def _made(self, cls, call, names, stmt) -> list | None:
        """The attributes' assignments for ``Cls(args)``."""
        if _is_record(cls):
            try:
                signature = _with_made_defaults(cls, inspect.signature(cls))
            except (TypeError, ValueError):
                return None
            bound = bind_arguments(
                signature,
                call,
                spell=lambda v: (
                    self._made_by(v)
                    if isinstance(v, _MadeDefault)
                    else self._spelled(v)
                ),
            )
            if bound is None:
                return None
            return [
                *self._checks(bound, stmt),
                *(
                    assignment_line(cst.Name(names[f]), v, stmt, self.positions)
                    for f, v in bound
                    if f in names
                ),
            ]
        init = _init(cls)
        if init is None:
            return [] if not call.args else None
        bound = bind_arguments(
            inspect.signature(init), call, skip_first=True, spell=self._spelled
        )
        assigned = init_assignments(init, cls)
        if bound is None or assigned is None:
            return None
        lines = self._checks(bound, stmt)
        bound = [(p, v) for p, v in bound if p is not None]
        assigned, bound = _collected_written_out(split_assignments(assigned), bound)
        # an attribute that is a parameter read nowhere else: the argument itself (``self.qkv = qkv``
        # given ``Dense(...)``: an object made in the function, which the next round writes as names)
        direct = direct_parameters(assigned, {p for p, _ in bound})
        # a parameter given ``None``, ``True`` or ``False``: that constant, so that its tests fold
        # (``self.link = link if link is not None else self.default_link()`` given no link)
        # and one given a class of the program (``Net(loss=CrossEntropy)``): that class, so that what
        # ``__init__`` makes of it (``self.loss = loss()``) is an object made in the function
        constants = {
            p: v
            for p, v in bound
            if p not in direct and (_is_constant(v) or self._program_class(v))
        }
        params = {
            p: self.namer.fresh(f"{cls.__name__}_{p}")
            for p, _ in bound
            if p not in direct and p not in constants
        }
        lines += [
            assignment_line(cst.Name(params[p]), v, stmt, self.positions)
            for p, v in bound
            if p in params
        ]
        arguments = dict(bound)
        me = next(iter(inspect.signature(init).parameters))
        for attr, value in assigned:
            if isinstance(attr, str) and attr in direct.values():
                param = next(p for p, a in direct.items() if a == attr)
                line = assignment_line(
                    cst.Name(names[attr]), arguments[param], stmt, self.positions
                )
                lines.append(line)
                continue
            rename = _Self(me, names, lambda o, u: place(u, stmt, self.positions))
            value = rewrite(value, rename)
            if rename.failed or me in names_in(value):  # ``self`` read whole
                return None
            value = rewrite(value, _Rename(params))
            if constants:
                value = rewrite(substitute(value, constants), _ConstantTests())
            target = (
                cst.Name(names[attr])
                if isinstance(attr, str)  # (``self.d, self.n = shape``: one name each)
                else cst.Tuple([cst.Element(cst.Name(names[a])) for a in attr])
            )
            lines.append(assignment_line(target, value, stmt, self.positions))
        return lines

    def _program_class(self, node) -> bool:
        """Whether ``node`` names a class of the program (a module-level name the function does not bind)."""
        value = (
            self.source.env.get(node.value)
            if isinstance(node, cst.Name) and node.value not in self.bound
            else None
        )
        return inspect.isclass(value) and defined_in_the_program(value)

    def _checks(self, bound, stmt) -> list:
        """The lines checking a ``*`` argument's items (``bind_arguments``'s ``(None, checks)``)."""
        return [
            place(cst.SimpleStatementLine([check]), stmt, self.positions)
            for p, checks in bound
            if p is None
            for check in checks
        ]

    def _handed(self, init, call) -> dict:
        """``{attribute: (parameter, argument)}`` for the objects an ``__init__`` read as a method keeps
        whole: a line of its own block ``self.attribute = parameter``, the parameter read and bound
        nowhere else in it and the attribute assigned nowhere else, given an object of the program
        made at the call (``Poisson()``) or named in the function (bound once, to one).
        """
        if any(a.star for a in call.args):
            return {}
        try:
            node = sources.load(init).node
        except Exception:  # no source to read
            return {}
        bound = bind_arguments(inspect.signature(init), call, skip_first=True)
        if not isinstance(node, cst.FunctionDef) or bound is None:
            return {}
        me = node.params.params[0].name.value
        counts = bindings(node)
        writes = _assigned_attributes(node.body, me)
        arguments = dict(bound)
        found = {}
        for stmt in node.body.body:
            kept = _kept_parameter(stmt, me)
            if kept is None:
                continue
            attr, param = kept
            if (
                counts[param] == 1
                and mentions(param, node.body.body) == 1
                and writes.count(attr) == 1
                and self._is_object(arguments.get(param))
            ):
                found[attr] = (param, arguments[param])
        return found

    def _is_object(self, value) -> bool:
        """Whether ``value`` makes an object of a plain class of the program, or names one the function
        binds once to such an object."""
        if isinstance(value, cst.Call):
            return self._class(value.func) is not None
        if isinstance(value, cst.Name) and self.bound[value.value] == 1:
            return any(
                found[0] == value.value and self._is_object(found[1])
                for found in map(named_value, iter_nodes(self.source.node))
                if found is not None and isinstance(found[1], cst.Call)
            )
        return False

    def _method(self, cls, method, names, stmt, fn=None, without=frozenset()):
        """The local function standing for ``name.method`` (``fn``: its function, if not a method's;
        ``without``: parameters an ``__init__`` is handed objects by, and their ``self.a = p`` lines).
        """
        fn = fn or _methods(cls)[method]
        try:
            made = sources.load(fn)
        except Exception:  # no source to read
            return None
        node = made.node
        if not isinstance(node, cst.FunctionDef):
            return None
        if without:
            node = _without_handed(node, without)
        decorators = [_decorator(d) for d in node.decorators]
        node = node.with_changes(decorators=())
        if decorators == ["staticmethod"]:  # a function of its arguments: as it is
            new = node.with_changes(name=cst.Name(names[method]))
            return place(new, stmt, self.positions)
        if decorators not in ([], ["property"]) or not node.params.params:
            return None
        me = node.params.params[0].name.value
        node = _aliases_read_through(node, me)
        if returns_self(fn):  # (a call that is a statement: ``fluent_methods``)
            node = dropped_self_returns(node, me)
        rename = _Self(
            me,
            names,
            moved_from(made.file, self.source.file, stmt),
            _properties(cls),
            cls,
        )
        body = rewrite(node.body, rename)
        if rename.failed or any(
            isinstance(n, cst.Name) and n.value == me for n in iter_nodes(body)
        ):
            return None
        writes = (
            _assigned_attributes(node.body, me) if without else _attribute_writes(fn)
        )
        if writes:  # ``self.output = ...``: the object's variable, rebound
            shared = cst.Nonlocal([cst.NameItem(cst.Name(names[a])) for a in writes])
            lines = list(body.body)
            first = 1 if lines and is_docstring(lines[0]) else 0
            lines.insert(first, cst.SimpleStatementLine([shared]))
            body = body.with_changes(body=lines)
        params = node.params.with_changes(params=node.params.params[1:])
        new = node.with_changes(name=cst.Name(names[method]), params=params, body=body)
        return place(new, stmt, self.positions)


def _aliases_read_through(node: cst.FunctionDef, me: str) -> cst.FunctionDef:
    """A method whose lines ``C = self.cache`` (``C`` bound once, ``self.cache`` never assigned in it: the
    same dict or list throughout) are dropped, ``C`` read as ``self.cache`` (numpy-ml's optimizers write
    ``C[name] = ...`` into their cache so)."""
    counts = bindings(
        node, items=False
    )  # (``C[name] = ...`` writes into it: no binding)
    assigned = _assigned_attributes(node.body, me)
    aliases = {}
    for stmt in node.body.body:
        assign = assignment(stmt)
        target = None if assign is None else assign.targets[0].target
        value = None if assign is None else assign.value
        if (
            isinstance(target, cst.Name)
            and counts[target.value] == 1
            and isinstance(value, cst.Attribute)
            and isinstance(value.value, cst.Name)
            and value.value.value == me
            and value.attr.value not in assigned
        ):
            aliases[target.value] = (stmt, value)
    if not aliases:
        return node
    dropped = {id(stmt) for stmt, _ in aliases.values()}
    lines = [stmt for stmt in node.body.body if id(stmt) not in dropped]
    body = substitute(
        node.body.with_changes(body=lines),
        {name: value for name, (_, value) in aliases.items()},
    )
    return node.with_changes(body=body)


def _kept_parameter(stmt, me: str) -> tuple[str, str] | None:
    """``(attribute, parameter)`` of an ``__init__``'s line ``self.attribute = parameter``, else None."""
    assign = assignment(stmt)
    target = None if assign is None else assign.targets[0].target
    if (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == me
        and isinstance(assign.value, cst.Name)
    ):
        return target.attr.value, assign.value.value
    return None


def _without_handed(node: cst.FunctionDef, params: set) -> cst.FunctionDef:
    """An ``__init__`` without the parameters ``params`` and its lines ``self.a = p`` of them."""
    me = node.params.params[0].name.value

    def keeps(stmt) -> bool:
        kept = _kept_parameter(stmt, me)
        return kept is None or kept[1] not in params

    return node.with_changes(
        params=node.params.with_changes(
            params=[p for p in node.params.params if p.name.value not in params],
            kwonly_params=[
                p for p in node.params.kwonly_params if p.name.value not in params
            ],
        ),
        body=node.body.with_changes(body=[s for s in node.body.body if keeps(s)]),
    )


def _is_constant(node) -> bool:
    return isinstance(node, cst.Name) and node.value in ("None", "True", "False")


class _ConstantTests(cst.CSTTransformer):
    """``None is not None`` and the like as ``True``/``False``; ``a if True else b`` as ``a``."""

    def leave_Comparison(self, original, updated):
        if len(updated.comparisons) != 1:
            return updated
        (target,) = updated.comparisons
        if not (_is_constant(updated.left) and _is_constant(target.comparator)):
            return updated
        same = updated.left.value == target.comparator.value
        if isinstance(target.operator, cst.Is):
            return cst.Name(str(same))
        if isinstance(target.operator, cst.IsNot):
            return cst.Name(str(not same))
        return updated

    def leave_IfExp(self, original, updated):
        if isinstance(updated.test, cst.Name) and updated.test.value in (
            "True",
            "False",
        ):
            return updated.body if updated.test.value == "True" else updated.orelse
        return updated


class _Rename(cst.CSTTransformer):
    """Names read as other names; a keyword's name and an attribute's name stay (``Scale(c=c)``)."""

    def __init__(self, names: dict):
        super().__init__()
        self.names = names

    def leave_Name(self, original, updated):
        new = self.names.get(updated.value)
        return updated if new is None else updated.with_changes(value=new)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)


def _assigned_in_local_functions(node, name: str) -> bool:
    """Whether a function defined in ``node``'s body assigns an attribute of ``name``."""
    body = node.body if isinstance(node, cst.FunctionDef) else node
    return any(
        _assigned_attributes(n.body, name)
        for n in iter_nodes(body)
        if isinstance(n, (cst.FunctionDef, cst.Lambda))
    )


def _method_name(name: str, method: str) -> str:
    """The local function's name for ``name.method`` (``name(...)`` calls ``name_call``)."""
    return f"{name}_call" if method == "__call__" else f"{name}_{method}"


def _member_reads(node, name: str) -> set[str] | None:
    """``attribute_reads``, with a call ``name(...)`` read as ``__call__``."""

    class _Calls(cst.CSTTransformer):
        called = False

        def leave_Call(self, original, updated):
            if isinstance(updated.func, cst.Name) and updated.func.value == name:
                self.called = True
                return updated.with_changes(func=cst.Name("_"))
            return updated

    calls = _Calls()
    reads = attribute_reads(rewrite(node, calls), name)
    return reads | {"__call__"} if reads is not None and calls.called else reads


class _Reads(PositionKeeping):
    """``obj.attribute`` and ``obj.method`` read as the names standing for them."""

    def __init__(self, positions, names: dict, properties: dict):
        super().__init__(positions)
        self.names, self.properties = names, properties

    def leave_Attribute(self, original, updated):
        if isinstance(updated.value, cst.Name) and updated.value.value in self.names:
            obj = updated.value.value
            return _member(
                self.names[obj][updated.attr.value],
                updated.attr.value,
                self.properties[obj],
            )
        return updated

    def leave_Call(self, original, updated):
        func = updated.func
        if isinstance(func, cst.Name) and "__call__" in self.names.get(func.value, {}):
            new = cst.Name(self.names[func.value]["__call__"])
            if original.func in self.positions:  # errors show ``layer`` as written
                self.positions.setdefault(new, self.positions[original.func])
            return updated.with_changes(func=new)
        return updated


ROUNDS = 8  # objects held by objects held by ...: this deep


def desugar(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with its objects of your classes (see the module) written as names of the function; an
    object whose ``__init__`` makes objects (``self.ln1 = LayerNorm(...)``) makes lines that name them,
    written as names in the next round, as are the objects of lists and dicts (``object_structures``).
    """
    from . import class_tables, object_structures  # (they read this module's classes)

    source = fluent_methods.desugar(source)
    for _ in range(ROUNDS):
        written = _desugar_once(
            _without_aliases(object_structures.expand(class_tables.read(source)))
        )
        if written is source:
            break
        source = written
    return source


def _without_aliases(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` without its lines ``alias = name`` of an object of the program's classes (an object
    handed to another's constructor, ``Filter(model, x0)`` keeping ``self.model = model``, leaves
    ``kf_model = model``): ``alias`` read as ``name``, the same object, where each is bound once.
    """
    from .function_loops import Positioned  # (it reads this module)

    body = function_body(source)
    if body is None:
        return source
    counts = bindings(source.node)
    objects, aliases = set(), {}
    for found in filter(None, map(named_value, iter_nodes(source.node))):
        target, value = found
        if counts[target] != 1:
            continue
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            cls = source.env.get(value.func.value)
            if value.func.value not in counts and _plain_class(cls):
                objects.add(target)
        elif isinstance(value, cst.Name):
            aliases[target] = value
    aliases = {a: v for a, v in aliases.items() if v.value in objects}
    if not aliases:
        return source
    positions = source.file.positions

    def block(statements):
        out = []
        for stmt in statements:
            assign = assignment(stmt)
            target = None if assign is None else assign.targets[0].target
            if isinstance(target, cst.Name) and target.value in aliases:
                continue
            out.append(with_blocks(stmt, block, positions))
        return out

    reads = Positioned(aliases, positions)
    return with_body(source, [rewrite(s, reads) for s in block(body)])


def _desugar_once(source: sources.FunctionSource) -> sources.FunctionSource:
    body = function_body(source)
    if body is None or not any(
        _of_program(obj) for obj in referenced_objects(source).values()
    ):
        return source
    objects = _Objects(source)
    statements = objects.block(body)
    if not objects.changed:
        return source
    reads = _Reads(source.file.positions, objects.names, objects.properties)
    written = with_body(source, [rewrite(s, reads) for s in statements])
    return dataclasses.replace(written, env={**objects.lent, **source.env})
