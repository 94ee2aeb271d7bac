"""Factories of your own called in the function: the functions they return, written in place as local ones.

``init, update = momentum(lr)`` calls a module-level function of the program that defines functions
and returns them (an optax-style optimizer; ``head = make_head(W_out)``). What they close over
(``lr``) is a value of the function here, so they are no objects s2s could read, and a derivative
must reach through them. ``desugar(source)`` writes the factory's body in place of the line: its
parameters bound to the call's arguments, its own names renamed apart (``momentum_beta``), and each
function it returns defined under the name the line binds it to (``def update(grads, state): ...``),
which s2s reads as any local function (it reads its variables when called, as Python's closures do).

Guarantee: a line ``target = factory(args)`` in any block (``target`` a name, or a tuple of names
matching a returned tuple), ``factory`` a plain function of the program (not a library's, not
decorated, not generated; no ``*args``/``**kwargs``; defaults of the parameters the line leaves out
literal), whose body is statements and ``def``s at its own level ending in its only ``return``, of a
local ``def`` or a lambda, or a tuple of values one or more of which are (a list of them to one name:
``function_loops`` reads it as a list of local functions). Each module-level name the
factory reads is the same object where the line is and no name the function binds; it imports
nothing and declares nothing ``global``. The call's arguments are evaluated once, before the
factory's body, as Python does. The lines written keep the positions of the factory's lines when it
is in the same file (else the call's line). A factory's call that is called at once, passed to another
call (not a factory's: ``lax.scan(cell(W), h0, xs)``), or looped over (a ``for`` or a comprehension), is
bound to a name on lines before, then read so; so is any plain function of the program whose result is
called at once (``get_activation("tanh")(z)``: the function it returns, read by that name).
Any other call stays as it is (a factory reached by a
derivative is then a located error at the call: ``codegen``).
"""

from __future__ import annotations

import dataclasses
import inspect

import libcst as cst
from libcst.metadata import GlobalScope, ScopeProvider

from ..cstutil import iter_nodes, literal, own_nodes, replace_nodes, rewrite
from . import class_tables
from . import source as sources
from .class_members import _is_record, _plain_class
from .rewriting import (
    Moving,
    PositionKeeping,
    assignment,
    assignment_line,
    attribute_reads,
    bindings,
    function_body,
    moved_from,
    namer_of,
    object_of,
    place,
    referenced_objects,
    with_blocks,
    with_body,
)
from .spellings import is_library


def _plain_function(obj) -> bool:
    return (
        inspect.isfunction(obj)
        and not is_library(obj)
        and not sources.is_generated(obj)
        and not hasattr(obj, "__wrapped__")
    )


def _makes_functions(obj) -> bool:
    """A plain function of the program whose code defines functions (the only ones read further)."""
    return _plain_function(obj) and any(
        inspect.iscode(c) for c in obj.__code__.co_consts
    )


def _builds_objects(obj) -> bool:
    """A plain function of the program that names a class of the program (it may return its object)."""
    return _plain_function(obj) and any(
        _plain_class(held) or class_tables.holds_classes(held)
        for held in map(obj.__globals__.get, obj.__code__.co_names)
    )


def _is_factory(obj) -> bool:
    return (
        _makes_functions(obj) or _builds_objects(obj) or _class_method(obj) is not None
    )


def _class_method(obj):
    """The function of a class method of a plain class of the program, called on its class
    (``LinearGaussianSSM.from_params(params)``, a constructor by another name), else None.
    """
    if (
        inspect.ismethod(obj)
        and isinstance(obj.__self__, type)
        and _plain_class(obj.__self__)
        and _plain_function(obj.__func__)
    ):
        return obj.__func__
    return None


def _with_class(made: sources.FunctionSource, spelled: cst.Name):
    """A class method's source as a function: without its first parameter (``cls``), whose reads are
    the class as the calling line spells it (``cls(F=F)`` is ``LinearGaussianSSM(F=F)``).
    """
    from .function_loops import Positioned  # (it reads this module)

    node = made.node
    params = list(node.params.posonly_params) + list(node.params.params)
    if not params or params[0].default is not None:
        return None
    first = params[0].name.value
    if bindings(node.body)[first]:
        return None  # ``cls`` rebound: not the class everywhere
    body = rewrite(node.body, Positioned({first: spelled}, made.file.positions))
    stripped = node.with_changes(
        params=node.params.with_changes(
            posonly_params=node.params.posonly_params[1:],
            params=(
                node.params.params
                if node.params.posonly_params
                else node.params.params[1:]
            ),
        ),
        body=body,
        decorators=[],
    )
    if node in made.file.positions:
        made.file.positions[stripped] = made.file.positions[node]
    return dataclasses.replace(made, node=stripped)


def _made_object(made, value, before) -> bool:
    """Whether a builder's returned ``value`` is an object of a plain class of the program: ``Cls(...)``,
    or a name its body binds once, at its own level, to one (``model = Seq(layers); return model``).
    """
    if isinstance(value, cst.Name):
        values = [
            a.value
            for a in map(assignment, before)
            if a is not None
            and isinstance(a.targets[0].target, cst.Name)
            and a.targets[0].target.value == value.value
        ]
        if len(values) != 1 or bindings(made.node)[value.value] != 1:
            return False
        value = values[0]
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Subscript):  # ``activation_functions[name]()``
        table = object_of(func.value, made.env, bindings(made.node))
        return class_tables.holds_classes(table, only=True)
    return _plain_class(object_of(func, made.env, bindings(made.node)))


def _target_names(target) -> list[str] | None:
    """A name's or a tuple of names' names, else None."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and all(
        isinstance(el.value, cst.Name) and not isinstance(el, cst.StarredElement)
        for el in target.elements
    ):
        return [el.value.value for el in target.elements]
    return None


def _unpacked(target, value) -> list | None:
    """``[(name, value)]`` of an assignment whose (nested) tuple of names matches a (nested) tuple display,
    else None."""
    if isinstance(target, cst.Name):
        return [(target.value, value)]
    if not (
        isinstance(target, (cst.Tuple, cst.List))
        and isinstance(value, (cst.Tuple, cst.List))
        and len(target.elements) == len(value.elements)
    ):
        return None
    pairs = []
    for t, v in zip(target.elements, value.elements):
        if isinstance(t, cst.StarredElement) or isinstance(v, cst.StarredElement):
            return None
        inner = _unpacked(t.value, v.value)
        if inner is None:
            return None
        pairs += inner
    return pairs


def _shape(body) -> tuple[list, cst.BaseExpression] | None:
    """``(statements, returned value)`` of a factory's body: one final ``return``, no other at its level,
    nothing ``yield``ed, imported or declared ``global``; a docstring left out."""
    if not body:
        return None
    *before, last = body
    if not (
        isinstance(last, cst.SimpleStatementLine)
        and len(last.body) == 1
        and isinstance(last.body[0], cst.Return)
        and last.body[0].value is not None
    ):
        return None
    if (
        before
        and isinstance(before[0], cst.SimpleStatementLine)
        and isinstance(before[0].body[0], cst.Expr)
        and isinstance(before[0].body[0].value, cst.SimpleString)
    ):
        before = before[1:]
    banned = (cst.Return, cst.Yield, cst.Global, cst.Import, cst.ImportFrom)
    if any(isinstance(n, banned) for n in own_nodes(before)):
        return None
    if any(
        isinstance(n, (cst.Import, cst.ImportFrom, cst.Global))
        for stmt in before
        for n in iter_nodes(stmt)
    ):
        return None
    return before, last.body[0].value


def _pairs(targets: list[str], value, defs: set[str]) -> list | None:
    """``(target, returned value)`` pairs when one or more returned values are local functions."""
    if len(targets) == 1 and isinstance(value, (cst.List, cst.Tuple)):
        # ``heads = make_heads(p)`` of ``return [relu_head, lambda h: ...]``: a sequence of functions
        # (``function_loops`` reads it)
        made = [
            e.value
            for e in value.elements
            if isinstance(e.value, cst.Lambda)
            or (isinstance(e.value, cst.Name) and e.value.value in defs)
        ]
        return [(targets[0], value)] if made else None
    if len(targets) == 1 and not isinstance(value, cst.Tuple):
        pairs = [(targets[0], value)]
    elif isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(
        targets
    ):
        if any(isinstance(el, cst.StarredElement) for el in value.elements):
            return None
        pairs = list(zip(targets, (el.value for el in value.elements)))
    else:
        return None
    made = [
        v
        for _, v in pairs
        if isinstance(v, cst.Lambda) or (isinstance(v, cst.Name) and v.value in defs)
    ]
    named = [v.value for v in made if isinstance(v, cst.Name)]
    if not made or len(set(named)) != len(named):
        return None
    return pairs


def _scopes(node):
    """libcst's scopes of a function's nodes (its module-level names' reads are the global scope's), kept
    per node: a helper of the program is read again by every function that calls it."""
    held = _SCOPES_OF.get(id(node))
    if held is not None and held[0] is node:
        return held[1]
    wrapper = cst.MetadataWrapper(cst.Module(body=[node]), unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    if len(_SCOPES_OF) > 256:
        _SCOPES_OF.clear()
    # (the node is held: its id is no other's while kept)
    _SCOPES_OF[id(node)] = (node, scopes)
    return scopes


_SCOPES_OF: dict = {}


def globals_agree(made, env, bound, scopes=None, lent=None) -> bool:
    """Whether each module-level name the function ``made`` reads is the same object in ``env`` (where its
    code is written in place) and no name the function there binds. With ``lent`` (a dict), a name ``env``
    lacks agrees too, and is put there with its value (a factory of another module reading that module's
    ``GradientTransformation``: the code written in place reads it as the factory does).
    """
    scopes = scopes or _scopes(made.node)
    if _of_s2s(
        made
    ):  # (s2s's own runtime, read again in generated code: never written in place)
        lent = None
    for scope in {s for s in scopes.values() if s is not None}:
        for access in scope.accesses:
            if access.referents and not all(
                isinstance(r.scope, GlobalScope) for r in access.referents
            ):
                continue
            name = access.node.value if isinstance(access.node, cst.Name) else None
            if (
                lent is not None
                and name is not None
                and name not in bound
                and name not in env
                and name in made.env
                and lent.setdefault(name, made.env[name]) is made.env[name]
            ):
                continue
            if (
                name is None
                or name in bound
                or made.env.get(name, env) is not env.get(name, made)
            ):
                return False
    return True


def _of_s2s(made) -> bool:
    """Whether the function ``made`` (a ``FunctionSource``) is one of s2s's own modules'."""
    module = getattr(made.fn, "__module__", None) or ""
    return module == "s2s" or module.startswith("s2s.")


class _Renamer(Moving):
    """The factory's own names renamed (nodes by identity); the rebuilt nodes placed as ``position`` says."""

    def __init__(self, renamed: dict, position):
        super().__init__(position)
        self.renamed = renamed

    def leave_Name(self, original, updated):
        new = self.renamed.get(id(original))
        return updated if new is None else updated.with_changes(value=new)


class _Inliner:
    def __init__(self, source: sources.FunctionSource):
        self.source = source
        self.positions = source.file.positions
        self.bound = bindings(source.node)
        self.namer = namer_of(source)
        self.changed = False
        self.lent = {}  # names of another module its factories read (``globals_agree``)
        # a record of functions a factory returns: its name -> {field: the local function's name}
        self.fields: dict[str, dict] = {}
        # names bound once to an object of a plain class of the program (``cam = Camera(res)``)
        self.objects = {
            t for stmt in iter_nodes(source.node) for t in self._made_objects(stmt)
        }
        # how many times each helper handed an object was written in place
        self.handed: dict = {}

    def _made_objects(self, node) -> list[str]:
        """The name a line ``name = Cls(...)`` binds, ``Cls`` a plain class of the program (no record:
        records are values a helper takes as they are)."""
        assign = node if isinstance(node, cst.Assign) else None
        if (
            assign is None
            or len(assign.targets) != 1
            or not isinstance(assign.targets[0].target, cst.Name)
            or not isinstance(assign.value, cst.Call)
        ):
            return []
        cls = self._object(assign.value.func)
        name = assign.targets[0].target.value
        if not _plain_class(cls) or _is_record(cls) or self.bound[name] != 1:
            return []
        return [name]

    def _objects_handed(self, call: cst.Call) -> dict:
        """``{parameter: object name}`` where a plain function of the program is handed whole objects the
        function makes (``render(theta, cam)``), else {}."""
        helper = self._object(call.func)
        if not _plain_function(helper) or self.handed.get(helper, 0) > _MOST_HANDED:
            return {}
        if any(a.star for a in call.args):
            return {}
        try:
            names = list(inspect.signature(helper).parameters)
        except (TypeError, ValueError):
            return {}
        out = {}
        for k, arg in enumerate(call.args):
            if isinstance(arg.value, cst.Name) and arg.value.value in self.objects:
                param = (
                    arg.keyword.value
                    if arg.keyword is not None
                    else (names[k] if k < len(names) else None)
                )
                if param is not None:
                    out[param] = arg.value.value
        return out

    def _writes_in_place(self, call: cst.Call) -> bool:
        """Whether the call's callee is written in place here: a factory, or a helper handed objects."""
        return _is_factory(self._object(call.func)) or bool(self._objects_handed(call))

    def _record_fields(self, made, value, targets, defs) -> dict | None:
        """``{field: name}`` where the factory returns a NamedTuple of its functions (``return
        GradientTransformation(init, update)``) to a line binding one name the function reads only by
        those fields (``opt.init(params)``), else None."""
        if len(targets) != 1 or not isinstance(value, cst.Call):
            return None
        if not _is_record_call(made, value):
            return None
        cls = _object_in(made.env, value.func)
        values = _field_values(made, value)
        if values is None or not any(
            isinstance(v, cst.Lambda) or (isinstance(v, cst.Name) and v.value in defs)
            for v in values
        ):
            return None
        (name,) = targets
        reads = attribute_reads(self.source.node, name)
        if self.bound[name] != 1 or reads is None or not reads <= set(cls._fields):
            return None
        return {f: self.namer.fresh(f"{name}_{f}") for f in cls._fields}

    def _called_at_once(self, stmt) -> tuple[list, object]:
        """``nll_fn(X, y, noise)(theta)``, ``lax.scan(gru_cell(p), h0, xs)``, or ``for head in
        make_heads(p)`` (a loop's or a comprehension's sequence), in a line: the factory's call bound to a
        name on lines before (its body in place, as for ``nll = nll_fn(...)``), the line calling (or
        passing, or looping over) that name.
        """
        if isinstance(stmt, cst.For):  # ``for head in make_heads(p):``
            nodes = [stmt.iter]
        elif isinstance(stmt, cst.SimpleStatementLine):
            nodes = list(own_nodes([stmt]))
        else:
            return [], stmt
        before, replaced = [], {}
        scoped = {
            id(n)
            for scope in nodes
            if isinstance(scope, _SCOPES)
            for n in iter_nodes(scope)
        }  # (what reads a comprehension's or a lambda's names stays where it is)
        for node in nodes:
            made = []
            if isinstance(node, cst.CompFor):  # ``sum(f(h) for f in make_heads(p))``
                made.append(node.iter)
            if node is getattr(stmt, "iter", None):
                made.append(node)
            if isinstance(node, cst.Attribute):  # ``build(W).forward(x)``
                made.append(node.value)
            if isinstance(node, cst.Call):
                made.append(node.func)
                if not self._writes_in_place(node):
                    # (a factory's own arguments are written in place with its body: ``sgd(decay(lr))``)
                    made += [a.value for a in node.args if not a.star]
                elif node is not _line_value(stmt) and self._objects_handed(node):
                    made.append(
                        node
                    )  # ``np.sum(d.out) + reg(d)``: the helper handed ``d``, named
            for call in made:
                if not isinstance(call, cst.Call) or call in replaced:
                    continue
                factory = self._object(call.func)
                if (
                    isinstance(node, cst.Call)
                    and call is node.func
                    and id(call) not in scoped
                    and not _is_factory(factory)
                    and _plain_function(factory)
                ):  # ``get_activation("tanh")(z)``: the function it returns, named
                    name = self.namer.fresh(f"{factory.__name__}_made")
                    before.append(
                        assignment_line(cst.Name(name), call, stmt, self.positions)
                    )
                    replaced[call] = cst.Name(name)
                    continue
                if not _is_factory(factory) and (
                    id(call) in scoped or not self._objects_handed(call)
                ):
                    continue
                name = self.namer.fresh(f"{factory.__name__}_made")
                line = assignment_line(cst.Name(name), call, stmt, self.positions)
                lines = self.inlined(line)
                if lines is not None:
                    before += lines
                    replaced[call] = cst.Name(name)
        if not replaced:
            return before, stmt
        return before, place(replace_nodes(stmt, replaced), stmt, self.positions)

    def block(self, statements) -> list:
        out = []
        for stmt in statements:
            hoisted, stmt = self._called_at_once(stmt)
            if hoisted:
                out.extend(self.block(hoisted))
                self.changed = True
            inlined = self.inlined(stmt)
            if inlined is None:
                out.append(with_blocks(stmt, self.block, self.positions))
            else:  # (a factory's result passed to another: ``sgd(exponential_decay(lr, ...))``)
                out.extend(self.block(inlined))
                self.changed = True
        return out

    def _object(self, node):
        return object_of(node, self.source.env, self.bound)

    def inlined(self, stmt) -> list | None:
        """The lines that stand for ``target = factory(args)``, else None."""
        assign = assignment(stmt)
        if assign is None or not isinstance(assign.value, cst.Call):
            return None
        call, target = assign.value, assign.targets[0].target
        targets, factory = _target_names(target), self._object(call.func)
        handed = {} if _is_factory(factory) else self._objects_handed(call)
        if not _is_factory(factory) and not handed:
            return None
        method = _class_method(factory)
        if method is not None and not (
            isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Name)
        ):
            return None  # (a class method reached through a module: its class not a name here)
        try:
            made = sources.load(method or factory)
        except (
            Exception
        ):  # no source to read: the call stays (its own errors come where it is read)
            return None
        if method is not None:
            made = _with_class(made, call.func.value)
            if made is None:
                return None
        shape = _shape(function_body(made) or [])
        if shape is None or any(a.star for a in call.args):
            return None
        before, value = shape
        if targets is None:
            # ``lml, (kernel, alpha) = fit(theta, X)`` of ``return lml, (kernel, alpha)``: each name given
            # its value, when one is an object the builder makes
            pairs = _unpacked(target, value)
            if pairs is None or not (
                handed or any(_made_object(made, v, before) for _, v in pairs)
            ):
                return None
            targets, value = [t for t, _ in pairs], cst.Tuple(
                [cst.Element(v) for _, v in pairs]
            )
        defs = {s.name.value for s in before if isinstance(s, cst.FunctionDef)}
        fields = self._record_fields(made, value, targets, defs)
        if (
            fields is not None
        ):  # ``opt = sgd(lr)`` of ``return GradientTransformation(init, update)``
            targets, value = list(fields.values()), cst.Tuple(
                [cst.Element(v) for v in _field_values(made, value)]
            )
            self.fields[assign.targets[0].target.value] = fields
        elif len(targets) > 1 and _is_record_call(made, value):
            # ``init, update = scale(lr)`` of ``return GradientTransformation(init_fn, update_fn)``:
            # a NamedTuple unpacks as the tuple of its fields
            values = _field_values(made, value)
            if values is not None:
                value = cst.Tuple([cst.Element(v) for v in values])
        pairs = _pairs(targets, value, defs)
        if pairs is None and handed:
            # ``img = render(theta, cam)``: what the helper handed ``cam`` returns, its body in place
            pairs = (
                [(targets[0], value)]
                if len(targets) == 1
                else _unpacked(
                    cst.Tuple([cst.Element(cst.Name(t)) for t in targets]), value
                )
            )
        elif pairs is None and len(targets) == 1 and _made_object(made, value, before):
            pairs = [
                (targets[0], value)
            ]  # ``model = build(params)``: the object it makes
        elif pairs is None and len(targets) > 1:
            # ``kernel, alpha = fit(theta, X)`` of ``return kernel, alpha``, ``kernel = RBF(...)``
            pairs = _unpacked(
                cst.Tuple([cst.Element(cst.Name(t)) for t in targets]), value
            )
            if pairs is not None and not any(
                _made_object(made, v, before) for _, v in pairs
            ):
                pairs = None
        arguments = _arguments(factory, call)
        if pairs is None or arguments is None:
            return None
        # an object handed whole is read by its own name (no second name holds it), where the helper never
        # binds that parameter
        given = {
            p: name for p, name in handed.items() if not bindings(made.node.body)[p]
        }
        if handed and len(given) != len(handed):
            return None
        # a function or an object the factory makes and returns by name takes its target's name
        named = defs | {
            v.value
            for _, v in pairs
            if isinstance(v, cst.Name) and _made_object(made, v, before)
        }
        renamed = self._renamed(made, factory.__name__, pairs, named, given)
        if renamed is None:
            return None
        position = self._positions(made, stmt)
        renamer = _Renamer(renamed[1], position)
        names = renamed[0]
        lines = [
            assignment_line(cst.Name(names[p]), v, stmt, self.positions)
            for p, v in arguments
            if p not in given
        ]
        lines += [rewrite(s, renamer) for s in before]
        for target, v in pairs:
            if isinstance(v, cst.Name) and renamed[0].get(v.value) == target:
                continue  # the ``def`` (or the object) has the target's name
            lines.append(
                assignment_line(
                    cst.Name(target), rewrite(v, renamer), stmt, self.positions
                )
            )
        if handed:
            self.handed[factory] = self.handed.get(factory, 0) + 1
        # objects the written lines make (``cam = Camera(res)`` in a builder's body) may be handed on
        self.objects |= {
            t for line in lines for n in iter_nodes(line) for t in self._made_objects(n)
        }
        return lines

    def _renamed(
        self, made, factory: str, pairs, named, given=None
    ) -> tuple[dict, dict] | None:
        """``(name -> new name, id(node) -> new name)`` for the factory's own names: each of ``named`` it
        returns (its ``def``s, objects) named as its target, the others apart (``momentum_beta``); None
        where the factory reads a module-level name that is not the same here, or that the function
        binds."""
        scopes = _scopes(made.node)
        own = scopes[made.node.body.body[0]]
        if not globals_agree(made, self.source.env, self.bound, scopes, self.lent):
            return None
        for node in iter_nodes(made.node.body):
            if isinstance(node, cst.Nonlocal) and scopes[node].parent is not own:
                return None
        returned = {}
        for t, v in pairs:
            if isinstance(v, cst.Name) and v.value in named:
                returned.setdefault(v.value, t)
        for target in returned.values():
            self.namer.reserve(target)
        names = {}
        for a in own.assignments:
            if a.name not in names:
                names[a.name] = (
                    (given or {}).get(a.name)
                    or returned.get(a.name)
                    or self.namer.fresh(f"{factory}_{a.name}")
                )
        nodes = {}
        for a in own.assignments:
            binder = a.node
            if isinstance(binder, (cst.FunctionDef, cst.Param, cst.ClassDef)):
                binder = binder.name
            nodes[id(binder)] = names[a.name]
            for ref in a.references:
                nodes[id(ref.node)] = names[a.name]
        for node in iter_nodes(made.node.body):
            if isinstance(node, cst.Nonlocal):
                for item in node.names:
                    if item.name.value in names:
                        nodes[id(item.name)] = names[item.name.value]
        return names, nodes

    def _positions(self, made, stmt):
        """Where a node written from the factory's ``original`` goes (``rewriting.moved_from``)."""
        return moved_from(made.file, self.source.file, stmt)


# how many times one helper handed an object is written in place (a recursive one stays a call: its
# located error)
_MOST_HANDED = 32
_SCOPES = (
    cst.Lambda,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


def _line_value(stmt):
    """The value a line ``target = value`` assigns (``inlined`` writes its helper in place), else None."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, cst.Assign):
            return small.value
    return None


def _object_in(env, node):
    """The object a name or attribute chain names in ``env``, else None."""
    if isinstance(node, cst.Name):
        return env.get(node.value)
    if isinstance(node, cst.Attribute):
        owner = _object_in(env, node.value)
        return None if owner is None else getattr(owner, node.attr.value, None)
    return None


def _is_record_call(made, value) -> bool:
    """Whether ``value`` makes a NamedTuple (``GradientTransformation(init, update)``)."""
    if not isinstance(value, cst.Call):
        return False
    cls = _object_in(made.env, value.func)
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def _field_values(made, call: cst.Call) -> list | None:
    """The values a NamedTuple's construction gives its fields in order (defaults literal), else None."""
    cls = _object_in(made.env, call.func)
    if any(a.star for a in call.args):
        return None
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    values = []
    for k, field in enumerate(cls._fields):
        if k < len(positional):
            values.append(positional[k])
        elif field in keywords:
            values.append(keywords[field])
        elif field in cls._field_defaults:
            values.append(literal(cls._field_defaults[field]))
        else:
            return None
    return values


class _FieldReads(PositionKeeping):
    """``opt.init`` read as ``opt_init``: the local function standing for the record's field."""

    def __init__(self, positions, fields: dict):
        super().__init__(positions)
        self.fields = fields

    def leave_Attribute(self, original, updated):
        if isinstance(updated.value, cst.Name) and updated.value.value in self.fields:
            return cst.Name(self.fields[updated.value.value][updated.attr.value])
        return updated


def _arguments(factory, call: cst.Call) -> list | None:
    """``(parameter, expression)`` for each of the factory's parameters: the call's arguments, the
    defaults of those it leaves out (literal ones only); None where they do not bind."""
    try:
        params = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if len(positional) > len(params):
        return None
    out = []
    for k, p in enumerate(params):
        if k < len(positional) and p.kind != p.KEYWORD_ONLY:
            if p.name in keywords:
                return None
            out.append((p.name, positional[k]))
        elif p.name in keywords and p.kind != p.POSITIONAL_ONLY:
            out.append((p.name, keywords.pop(p.name)))
        elif p.default is not inspect.Parameter.empty and type(p.default) in (
            int,
            float,
            bool,
            str,
            type(None),
        ):
            out.append((p.name, literal(p.default)))
        else:
            return None
    return None if keywords else out


def desugar(source: sources.FunctionSource) -> sources.FunctionSource:
    """``source`` with its factories' calls, and its helpers' calls handed objects it makes (see the
    module), written in place."""
    body = function_body(source)
    if body is None or not (
        any(
            _is_factory(obj) or _plain_class(obj)
            for obj in referenced_objects(source).values()
        )
        or any(  # ``get_activation("tanh")(z)``: a result called at once
            isinstance(n, cst.Call) and isinstance(n.func, cst.Call)
            for n in iter_nodes(source.node)
        )
    ):
        return source
    inliner = _Inliner(source)
    statements = inliner.block(body)
    if inliner.fields:
        reads = _FieldReads(source.file.positions, inliner.fields)
        statements = [rewrite(s, reads) for s in statements]
    if not inliner.changed:
        return source
    return dataclasses.replace(
        with_body(source, statements), env={**inliner.lent, **source.env}
    )
