"""How an object of your class is made, for ``local_objects``: a constructor call's arguments bound to its
``__init__``'s parameters (a ``*sequence`` argument item by item, checked as Python's call is), and an
``__init__`` read as the attribute assignments it makes.
"""

from __future__ import annotations

import inspect
from collections import Counter

import libcst as cst

from ..cstutil import iter_nodes, literal, names_in, substitute
from . import source as sources
from .rewriting import assignment, object_of


def does_nothing(stmt, cls, init) -> bool:
    """``pass``, or ``super().__init__()`` (no arguments) in the ``__init__`` of ``cls`` (or a base) whose
    next class's ``__init__`` is ``object``'s."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return False
    line = stmt.body[0]
    if isinstance(line, cst.Pass):
        return True
    if not (isinstance(line, cst.Expr) and isinstance(line.value, cst.Call)):
        return False
    call = line.value
    if call.args or cst.Module([]).code_for_node(call.func) != "super().__init__":
        return False
    owner = _owner(cls, init)
    return owner is not None and _init_from(cls, cls.__mro__.index(owner) + 1) is object


def _owner(cls, init):
    """The class of ``cls``'s MRO that defines ``init``, or None."""
    return next((c for c in cls.__mro__ if vars(c).get("__init__") is init), None)


def _init_from(cls, start: int):
    """The first class of ``cls``'s MRO from ``start`` on that defines ``__init__`` (``object`` at last)."""
    return next((c for c in cls.__mro__[start:] if "__init__" in vars(c)), object)


def split_assignments(assigned: list) -> list:
    """``self.a, self.b = a, b`` as two assignments, where the value is a tuple of as many items that do
    not read the attributes assigned (each item is computed before any is assigned)."""
    out = []
    for attrs, value in assigned:
        if (
            not isinstance(attrs, str)
            and isinstance(value, cst.Tuple)
            and len(value.elements) == len(attrs)
            and not any(isinstance(e, cst.StarredElement) for e in value.elements)
            and not any(
                isinstance(n, cst.Attribute) and n.attr.value in attrs
                for n in iter_nodes(value)
            )
        ):
            out += [(a, e.value) for a, e in zip(attrs, value.elements)]
        else:
            out.append((attrs, value))
    return out


def direct_parameters(assigned: list, params: set) -> dict:
    """``{parameter: attribute}`` for the parameters whose one read in ``__init__`` is a whole
    ``self.attribute = parameter``."""
    reads = Counter(
        n.value
        for _, value in assigned
        for n in iter_nodes(value)
        if isinstance(n, cst.Name)
    )
    return {
        value.value: attr
        for attr, value in assigned
        if isinstance(attr, str)
        and isinstance(value, cst.Name)
        and value.value in params
        and reads[value.value] == 1
    }


def init_assignments(init, cls) -> list | None:
    """``[(attribute, expression)]`` of an ``__init__`` that only assigns ``self.attribute = ...`` (a tuple
    of attributes for ``self.d, self.n = ...``) and calls a base's ``__init__`` that does (``_base_init``:
    its assignments); a ``pass``, and ``super().__init__()`` where the base's is ``object``'s, do
    nothing."""
    try:
        node = sources.load(init).node
    except Exception:
        return None
    if not isinstance(node, cst.FunctionDef) or not node.params.params:
        return None
    me = node.params.params[0].name.value
    out = []
    if not isinstance(node.body, cst.IndentedBlock):
        return None
    # a local variable of ``__init__`` (``masks = [...]`` then ``self.layers = [... masks ...]``): an
    # attribute of its own, ``self._init_masks``, which later lines read
    temporaries: dict[str, cst.Attribute] = {}
    attributes = {
        n.attr.value
        for n in iter_nodes(node.body)
        if isinstance(n, cst.Attribute)
        and isinstance(n.value, cst.Name)
        and n.value.value == me
    }
    for stmt in node.body.body:
        if temporaries:
            stmt = substitute(stmt, temporaries)
        if (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, cst.SimpleString)
            and not out
        ):
            continue  # a docstring
        if does_nothing(stmt, cls, init):
            continue
        base = _base_init(stmt, me, cls, init)
        # ``super().__init__(n)``: the base's assignments, its parameters bound
        if base is not None:
            inherited = _inherited(*base, me, cls)
            if inherited is None:
                return None
            out += inherited
            continue
        grown = _grown(stmt, me)
        if (
            grown is not None
        ):  # ``self.layers["fc1"] = Dense(W)`` after ``self.layers = OrderedDict()``
            if not _add_item(out, me, *grown, init.__globals__):
                return None
            continue
        assign = assignment(stmt)
        target = assign.targets[0].target if assign is not None else None
        parts = (
            [el.value for el in target.elements]
            if isinstance(target, (cst.Tuple, cst.List))
            else [target]
        )
        if target is not None and all(isinstance(t, cst.Name) for t in parts):
            named = [
                cst.Attribute(cst.Name(me), cst.Name(f"_init_{t.value}")) for t in parts
            ]
            if any(n.attr.value in attributes for n in named) or me in {
                t.value for t in parts
            }:
                return None
            temporaries.update({t.value: n for t, n in zip(parts, named)})
            parts = named
            attrs = tuple(n.attr.value for n in named)
            out.append((attrs if len(parts) > 1 else attrs[0], assign.value))
            continue
        if not all(
            isinstance(t, cst.Attribute)
            and isinstance(t.value, cst.Name)
            and t.value.value == me
            for t in parts
        ):
            return None
        attrs = tuple(t.attr.value for t in parts)
        out.append(
            (
                attrs if len(parts) > 1 or target is not parts[0] else attrs[0],
                assign.value,
            )
        )
    return out


def _base_init(stmt, me: str, cls, init):
    """``(the base's __init__, the call)`` for a line ``super().__init__(...)`` or ``Base.__init__(self,
    ...)`` (``Base`` a module-level name of a class ``cls`` inherits from) of ``init``, the call's
    arguments without ``self``; None for any other line or a base whose ``__init__`` is ``object``'s.
    """
    if not (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.Call)
    ):
        return None
    call = stmt.body[0].value
    func = cst.Module([]).code_for_node(call.func)
    owner = _owner(cls, init)
    if owner is None or not func.endswith(".__init__"):
        return None
    spelled = func[: -len(".__init__")]
    if spelled in ("super()", f"super({owner.__name__}, {me})"):
        start, args = cls.__mro__.index(owner) + 1, call.args
    else:
        named = init.__globals__.get(spelled)
        if not (
            named in cls.__mro__
            and call.args
            and call.args[0].keyword is None
            and not call.args[0].star
            and isinstance(call.args[0].value, cst.Name)
            and call.args[0].value.value == me
        ):
            return None
        start, args = cls.__mro__.index(named), call.args[1:]
    base = _init_from(cls, start)
    found = vars(base).get("__init__") if base is not object else None
    if not inspect.isfunction(found):
        return None
    return found, call.with_changes(args=args)


def _inherited(base_init, call, me: str, cls) -> list | None:
    """The assignments of ``base_init`` (``init_assignments``) with its parameters bound to ``call``'s
    arguments and its ``self`` read as ``me``; None where it has other lines or they cannot be bound.
    """
    assigned = init_assignments(base_init, cls)
    if assigned is None:
        return None
    signature = inspect.signature(base_init)
    read = set().union(*(names_in(value) for _, value in assigned))
    spread = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if any(p.name in read for p in spread):
        return None
    # (``**kwargs`` the assignments never read: bound to nothing, where the call passes nothing more)
    signature = signature.replace(
        parameters=[p for p in signature.parameters.values() if p not in spread]
    )
    bound = bind_arguments(signature, call, skip_first=True)
    if bound is None or any(p is None for p, _ in bound):
        return None
    params = list(signature.parameters)
    mapping = dict(bound)
    if params[0] != me:
        mapping[params[0]] = cst.Name(me)
    return [(attrs, substitute(value, mapping)) for attrs, value in assigned]


def _grown(stmt, me: str) -> tuple | None:
    """``(attribute, key node or None, item)`` for ``self.attribute[key] = item`` (a literal key) or
    ``self.attribute.append(item)``, else None."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    line = stmt.body[0]
    owner = key = item = None
    if isinstance(line, cst.Assign) and len(line.targets) == 1:
        target = line.targets[0].target
        if (
            isinstance(target, cst.Subscript)
            and len(target.slice) == 1
            and isinstance(target.slice[0].slice, cst.Index)
            and isinstance(target.slice[0].slice.value, (cst.SimpleString, cst.Integer))
        ):
            owner, key, item = target.value, target.slice[0].slice.value, line.value
    elif (
        isinstance(line, cst.Expr)
        and isinstance(line.value, cst.Call)
        and isinstance(line.value.func, cst.Attribute)
        and line.value.func.attr.value == "append"
        and len(line.value.args) == 1
        and not line.value.args[0].keyword
        and not line.value.args[0].star
    ):
        owner, item = line.value.func.value, line.value.args[0].value
    if not (
        isinstance(owner, cst.Attribute)
        and isinstance(owner.value, cst.Name)
        and owner.value.value == me
    ):
        return None
    return owner.attr.value, key, item


def _add_item(assigned: list, me: str, attribute: str, key, item, env) -> bool:
    """The item written into the display ``attribute`` was last assigned (an empty ``dict()`` or
    ``OrderedDict()`` read as ``{}``), where nothing read the attribute since; False where it cannot be.
    """
    at = next(
        (i for i in reversed(range(len(assigned))) if assigned[i][0] == attribute),
        None,
    )
    if at is None or any(
        isinstance(n, cst.Attribute)
        and isinstance(n.value, cst.Name)
        and n.value.value == me
        and n.attr.value == attribute
        for _, value in assigned[at + 1 :] + [(None, item)]
        for n in iter_nodes(value)
    ):
        return False
    held = assigned[at][1]
    if isinstance(held, cst.Call) and not held.args:
        made = object_of(held.func, env, ())
        if made is dict or getattr(made, "__qualname__", None) == "OrderedDict":
            held = cst.Dict([])
    if isinstance(held, cst.Dict) and key is not None:
        old = [e for e in held.elements if not _same_key(e, key)]
        held = held.with_changes(elements=[*old, cst.DictElement(key, item)])
    elif isinstance(held, cst.List) and key is None:
        held = held.with_changes(elements=[*held.elements, cst.Element(item)])
    else:
        return False
    assigned[at] = (attribute, held)
    return True


def _same_key(element, key) -> bool:
    return (
        isinstance(element, cst.DictElement)
        and type(element.key) is type(key)
        and getattr(element.key, "value", None) == key.value
    )


def spreadable(call: cst.Call) -> bool:
    """Whether ``bind_arguments`` reads the call's arguments: one ``*`` after the other positional
    arguments, or one ``**`` last, of a value read without a call (``*params["gru"]``, ``**params``).
    """
    stars = [i for i, a in enumerate(call.args) if a.star]
    if not stars:
        return True
    star = call.args[stars[0]]
    if len(stars) != 1 or any(isinstance(n, cst.Call) for n in iter_nodes(star.value)):
        return False
    if star.star == "**":
        return stars[0] == len(call.args) - 1
    return not any(a.keyword is None for a in call.args[stars[0] + 1 :])


def bind_arguments(
    signature, call: cst.Call, skip_first=False, spell=None
) -> list | None:
    """``[(parameter, expression)]`` for the call's arguments, literal defaults for the others (or defaults
    ``spell`` writes: a module's attribute). A ``*sequence`` argument gives the parameters it reaches its
    items (``sequence[i]``, or ``sequence[i] if len(sequence) > i else default``), and the first entry is
    then ``(None, checks)``: the asserts that raise where Python's call would (too few or too many items).
    """
    params = list(signature.parameters.values())[1 if skip_first else 0 :]
    spread = [p for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if spread:
        # ``def __init__(self, *layers)`` called with layers: a tuple of them (``Sequential(Linear(W),
        # Tanh())``), ``**kwargs`` the dict of the other keywords; with nothing for them, Python binds
        # them empty
        params = [p for p in params if p not in spread]
        named = {p.name for p in params}
        leading = sum(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params
        )
        given = [a for a in call.args if a.keyword is None]
        collects = any(p.kind is p.VAR_POSITIONAL for p in spread)
        extra = given[leading:] if collects else []
        # keywords no parameter names, for ``**kwargs`` (``Layer(W, bs, nonlin=False)``)
        spare = [
            a
            for a in call.args
            if a.keyword is not None and a.keyword.value not in named
        ]
        if (
            any(a.star for a in call.args)
            or (spare and not any(p.kind is p.VAR_KEYWORD for p in spread))
            or len(given) - len(extra) > len(params)
        ):
            return None
        call = call.with_changes(
            args=[a for a in call.args if a not in extra and a not in spare]
        )
        bound = bind_arguments(signature.replace(parameters=params), call, False, spell)
        if bound is None:
            return None
        collected = [
            (
                p.name,
                (
                    cst.Tuple([cst.Element(a.value) for a in extra])
                    if p.kind is p.VAR_POSITIONAL
                    else cst.Dict(
                        [
                            cst.DictElement(
                                cst.SimpleString(repr(a.keyword.value)), a.value
                            )
                            for a in spare
                        ]
                    )
                ),
            )
            for p in spread
        ]
        return [*bound, *collected]
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    star = next((a.value for a in call.args if a.star == "*"), None)
    double = next((a.value for a in call.args if a.star == "**"), None)
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if len(positional) > len(params):
        return None
    if double is not None:
        return _bound_by_keys(params, positional, keywords, double, spell)
    out, reached, required = [], 0, 0
    for k, p in enumerate(params):
        default = _default(p, spell)
        if k < len(positional):
            out.append((p.name, positional[k]))
        elif (
            star is not None
            and p.name not in keywords
            and reached == k - len(positional)
        ):
            item = cst.Subscript(
                star, [cst.SubscriptElement(cst.Index(cst.Integer(str(reached))))]
            )
            if default is not None:
                item = cst.IfExp(_longer(star, reached), item, default)
            else:
                required = reached + 1
            out.append((p.name, item))
            reached += 1
        elif p.name in keywords:
            out.append((p.name, keywords.pop(p.name)))
        elif default is not None:
            out.append((p.name, default))
        else:
            return None
    if keywords:
        return None
    if star is not None:
        out.insert(0, (None, _items_check(star, required, reached)))
    return out


def _bound_by_keys(params, positional, keywords, double, spell) -> list | None:
    """``bind_arguments`` with a ``**mapping`` last: each parameter the other arguments leave reads
    ``mapping["name"]`` (``mapping["name"] if "name" in mapping else default``), after a check that the
    mapping holds no other key, as Python's call checks (its keys are known when the code is traced).
    """
    out, left = [], []
    for k, p in enumerate(params):
        if k < len(positional):
            out.append((p.name, positional[k]))
        elif p.name in keywords:
            out.append((p.name, keywords.pop(p.name)))
        elif p.kind is p.POSITIONAL_ONLY:
            return None
        else:
            key = cst.SimpleString(repr(p.name))
            item = cst.Subscript(double, [cst.SubscriptElement(cst.Index(key))])
            default = _default(p, spell)
            if p.default is not inspect.Parameter.empty and default is None:
                return None
            if default is not None:
                present = cst.Comparison(key, [cst.ComparisonTarget(cst.In(), double)])
                item = cst.IfExp(present, item, default)
            out.append((p.name, item))
            left.append(p.name)
    if keywords:
        return None
    # ``len(kw) == ("a" in kw) + ("b" in kw)``: no other key (facts of the keys, known when traced)
    held = cst.Integer("0")
    for n in left:
        present = cst.Comparison(
            cst.SimpleString(repr(n)), [cst.ComparisonTarget(cst.In(), double)]
        )
        held = cst.BinaryOperation(held, cst.Add(), present)
    size = cst.Call(cst.Name("len"), [cst.Arg(double)])
    message = cst.SimpleString(
        repr(f"the `**` argument may hold only {', '.join(left)}")
    )
    check = cst.Assert(
        cst.Comparison(size, [cst.ComparisonTarget(cst.Equal(), held)]), message
    )
    return [(None, [check]), *out]


def _default(p, spell) -> cst.BaseExpression | None:
    """A parameter's default as an expression: a literal, or what ``spell`` writes; None without one."""
    if p.default is inspect.Parameter.empty:
        return None
    if type(p.default) in (int, float, bool, str, type(None)):
        return literal(p.default)
    return spell(p.default) if spell is not None else None


def _longer(sequence, i: int) -> cst.Comparison:
    """``len(sequence) > i``."""
    return cst.Comparison(
        cst.Call(cst.Name("len"), [cst.Arg(sequence)]),
        [cst.ComparisonTarget(cst.GreaterThan(), cst.Integer(str(i)))],
    )


def _items_check(sequence, required: int, most: int) -> list[cst.Assert]:
    """``assert len(sequence) == n`` (or ``>= required`` and ``<= most``), with the message Python's
    call gives: single comparisons of Python numbers, checked when the code is traced.
    """
    size = cst.Call(cst.Name("len"), [cst.Arg(sequence)])
    count = f"{most}" if required == most else f"from {required} to {most}"
    message = cst.SimpleString(repr(f"the `*` argument must hold {count} items"))
    tests = (
        [(cst.Equal(), most)]
        if required == most
        else [(cst.GreaterThanEqual(), required), (cst.LessThanEqual(), most)]
    )
    return [
        cst.Assert(
            cst.Comparison(size, [cst.ComparisonTarget(op, cst.Integer(str(n)))]),
            message,
        )
        for op, n in tests
    ]
