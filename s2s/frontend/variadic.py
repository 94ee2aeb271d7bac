"""``*args`` and ``**kwargs``, bound as Python binds them.

A function with a ``*args`` or ``**kwargs`` parameter is transformed once per
*call shape*: how many positional arguments its ``*args`` receives and which
keywords its ``**kwargs`` receives. At one shape it is a function of named
parameters: ``def wrapper(*args, **kwargs)`` called as
``wrapper(x, w, scale=2.0)`` is transformed as
``def wrapper(args_0, args_1, kwargs_scale)``, whose body starts with
``args = (args_0, args_1)`` and ``kwargs = {"scale": kwargs_scale}``. A call
``fn(*args, **kwargs)`` inside it passes those names one by one, so it binds
to ``fn``'s parameters as Python binds it (``Expansion``).

``Specialized`` stands for a function at one shape (one object per function
and shape, so generated modules and compilations are reused); its signature
has the named parameters a call of that shape binds.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from typing import TYPE_CHECKING, NamedTuple

if (
    TYPE_CHECKING
):  # libcst is imported where nodes are made: checked-in modules run without it
    import libcst as cst

_POSITIONAL = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
)


class Shape(NamedTuple):
    """What a call passes to ``*args`` (how many) and ``**kwargs`` (which keywords, in the call's order).

    ``packed``: ``*args`` receives a sequence whose length is known only when the code runs
    (``f(x, *layers)``, ``spread.bind``); the function then takes it as one parameter of its name.
    """

    extra: int = 0
    keywords: tuple = ()
    packed: bool = False


def variable_parameters(signature: inspect.Signature) -> tuple[str | None, str | None]:
    """The names of the ``*args`` and ``**kwargs`` parameters (None where there is none)."""
    kinds = {p.kind: name for name, p in signature.parameters.items()}
    return kinds.get(inspect.Parameter.VAR_POSITIONAL), kinds.get(
        inspect.Parameter.VAR_KEYWORD
    )


def shape_of(bound: inspect.BoundArguments) -> Shape:
    """The shape of a bound call (``signature.bind(...)``)."""
    star, double = variable_parameters(bound.signature)
    return Shape(
        len(bound.arguments.get(star, ())), tuple(bound.arguments.get(double, {}))
    )


def concrete_names(
    star: str | None, double: str | None, shape: Shape
) -> tuple[list[str], list[str]]:
    """The generated parameters standing for ``*args``'s items and ``**kwargs``'s values."""
    return [f"{star}_{i}" for i in range(shape.extra)], [
        f"{double}_{key}" for key in shape.keywords
    ]


def concrete_signature(signature: inspect.Signature, shape: Shape) -> inspect.Signature:
    """The signature of named parameters that a call of ``shape`` binds as ``signature`` binds it.

    ``*args`` items are positional parameters after the named ones (which then lose their defaults: a call
    that reaches ``*args`` fills them all), ``**kwargs`` keywords keyword-only ones named by the keyword.
    """
    star, double = variable_parameters(signature)
    items, _ = concrete_names(star, double, shape)
    out = []
    for p in signature.parameters.values():
        if p.kind is p.VAR_POSITIONAL and shape.packed:
            out.append(inspect.Parameter(p.name, p.POSITIONAL_OR_KEYWORD, default=()))
        elif p.kind is p.VAR_POSITIONAL:
            out += [inspect.Parameter(n, p.POSITIONAL_OR_KEYWORD) for n in items]
        elif p.kind is p.VAR_KEYWORD:
            out += [inspect.Parameter(key, p.KEYWORD_ONLY) for key in shape.keywords]
        elif p.kind in _POSITIONAL and shape.extra:
            out.append(p.replace(default=p.empty))
        else:
            out.append(p)
    return signature.replace(parameters=out)


class Standin:
    """A user function as s2s reads it at one call (``Specialized``, ``function_args.Bound``): it keeps
    ``fn``'s names and defaults; subclasses give the signature that call binds."""

    def __init__(self, fn):
        self.fn = fn
        for attribute in ("__name__", "__qualname__", "__module__", "__doc__"):
            setattr(self, attribute, getattr(fn, attribute, None))

    @property
    def __defaults__(self):
        return self.fn.__defaults__

    @property
    def __kwdefaults__(self):
        return self.fn.__kwdefaults__


class Specialized(Standin):
    """``fn`` at one call shape: what s2s transforms when ``fn`` has ``*args`` or ``**kwargs``."""

    def __init__(self, fn, shape: Shape):
        super().__init__(fn)
        self.shape = shape

    @property
    def __signature__(self) -> inspect.Signature:
        return concrete_signature(
            inspect.signature(self.fn, follow_wrapped=False), self.shape
        )

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        if self.shape.packed:
            return f"<{self.__qualname__} called with a `*` sequence and keywords {self.shape.keywords}>"
        return f"<{self.__qualname__} called with {self.shape.extra} `*` arguments and keywords {self.shape.keywords}>"


_SPECIALIZED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def specialize(fn, shape: Shape) -> Specialized:
    """The one ``Specialized`` of ``fn`` at ``shape``."""
    by_shape = _SPECIALIZED.setdefault(fn, {})
    if shape not in by_shape:
        by_shape[shape] = Specialized(fn, shape)
    return by_shape[shape]


def at_call(fn, args, kwargs):
    """``fn`` (a function with ``*args``/``**kwargs``, or a ``functools.partial`` of one) at the shape of
    the call ``fn(*args, **kwargs)``: a partial of one is the partial of the function at the shape of the
    call it makes (``partial(loss, activation="gelu")``: ``activation`` is one of ``loss``'s ``**kwargs``),
    one object per partial and shape."""
    if isinstance(fn, functools.partial):
        inner = at_call(fn.func, (*fn.args, *args), {**fn.keywords, **kwargs})
        made = _PARTIALS.setdefault(fn, {})
        if inner not in made:
            made[inner] = functools.partial(inner, *fn.args, **fn.keywords)
        return made[inner]
    bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    return specialize(fn, shape_of(bound))


_PARTIALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Expansion(NamedTuple):
    """Inside a function at one shape: ``*args``/``**kwargs`` of its own, passed on as their named items."""

    star: str | None
    double: str | None
    items: tuple  # the names standing for ``*args``'s items (its own name where it is ``packed``)
    values: tuple  # the names standing for ``**kwargs``'s values
    keywords: tuple
    packed: bool = False
    # keys the body's first lines take out (``rng = kwargs.pop("rng", None)``), before it reads ``kwargs``,
    # and those lines' calls (by identity: a second pop of a key takes no value)
    popped: frozenset = frozenset()
    pops: frozenset = frozenset()

    @classmethod
    def of(cls, node: cst.FunctionDef, shape: Shape) -> Expansion:
        import libcst as cst

        star = (
            node.params.star_arg.name.value
            if isinstance(node.params.star_arg, cst.Param)
            else None
        )
        double = (
            node.params.star_kwarg.name.value
            if node.params.star_kwarg is not None
            else None
        )
        items, values = concrete_names(star, double, shape)
        if shape.packed and star is not None:
            items = [star]
        return cls(
            star,
            double,
            tuple(items),
            tuple(values),
            shape.keywords,
            shape.packed,
            *(_leading_pops(node, double) if double is not None else ((), ())),
        )

    def pop(self, call: cst.Call):
        """For ``kwargs.pop("k"[, default])`` among the body's first lines: ``(held, value)``, the name
        standing for ``k``'s value (``held``) or else the default expression (None: there is none); None
        for any other call."""
        key = _popped_key(call, self.double)
        if key is None or id(call) not in self.pops:
            return None
        if key in self.keywords:
            return True, self.values[self.keywords.index(key)]
        default = call.args[1].value if len(call.args) == 2 else None
        return False, default

    def prelude_names(self) -> tuple[str, ...]:
        return tuple(n for n in (self.star, self.double) if n is not None)

    def prelude(self) -> list[tuple[str, cst.BaseExpression]]:
        """``args = (args_0, ...)`` and ``kwargs = {"k": kwargs_k, ...}``: the parameters as the body reads them."""
        import libcst as cst

        out = []
        if self.star is not None and not self.packed:
            out.append(
                (self.star, cst.Tuple([cst.Element(cst.Name(n)) for n in self.items]))
            )
        if self.double is not None:
            entries = [
                cst.DictElement(cst.SimpleString(repr(k)), cst.Name(n))
                for k, n in zip(self.keywords, self.values)
                if k not in self.popped
            ]
            out.append((self.double, cst.Dict(entries)))
        return out

    def arguments(self, arg: cst.Arg) -> list[cst.Arg] | None:
        """``*args`` or ``**kwargs`` (the function's own) as the arguments they hold, else None."""
        import libcst as cst

        if not isinstance(arg.value, cst.Name):
            return None
        if arg.star == "*" and arg.value.value == self.star and not self.packed:
            return [cst.Arg(cst.Name(n)) for n in self.items]
        if arg.star == "**" and arg.value.value == self.double:
            return [
                cst.Arg(cst.Name(n), keyword=cst.Name(k))
                for k, n in zip(self.keywords, self.values)
                if k not in self.popped
            ]
        return None


def _popped_key(call, double: str) -> str | None:
    """``"k"`` for the call ``double.pop("k")`` or ``double.pop("k", default)``, else None."""
    import libcst as cst

    func = call.func if isinstance(call, cst.Call) else None
    if not (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value == double
        and func.attr.value == "pop"
        and 1 <= len(call.args) <= 2
        and all(a.keyword is None and not a.star for a in call.args)
        and isinstance(call.args[0].value, cst.SimpleString)
    ):
        return None
    key = call.args[0].value.evaluated_value
    return key if isinstance(key, str) else None


def _leading_pops(node, double: str) -> tuple[frozenset, frozenset]:
    """The keys the body's first lines pop from ``**double`` (``rng = kwargs.pop("rng", None)``, or the
    call alone), before any other line reads ``double`` (or pops a key again): what a ``**double`` after
    them no longer holds; and the ids of those calls.
    """
    import libcst as cst

    from ..cstutil import names_in

    popped, calls = set(), set()
    if not isinstance(node, cst.FunctionDef):  # a lambda: no lines
        return frozenset(), frozenset()
    for stmt in node.body.body:
        small = (
            stmt.body[0]
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            else None
        )
        value = (
            small.value
            if isinstance(small, cst.Expr)
            or (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            )
            else None
        )
        key = _popped_key(value, double) if value is not None else None
        default_reads = (
            names_in(value.args[1].value)
            if key is not None and len(value.args) == 2
            else set()
        )
        if key is not None and key not in popped and double not in default_reads:
            popped.add(key)
            calls.add(id(value))
        elif double in names_in(stmt):
            break
    return frozenset(popped), frozenset(calls)


def spread_star(node: cst.FunctionDef, shape: Shape) -> cst.FunctionDef:
    """``node`` read at ``shape`` with its ``*args`` spread out: ``len(args)`` is the number of items, and
    each list comprehension over them (one ``for`` clause over ``args`` or ``enumerate(args)``, no ``if``)
    is the list of its items, ``[f(a) for a in args]`` -> ``[f(args_0), f(args_1)]``. A definition of fixed
    ``*args`` (a ``decompose`` op at its call's shape) then has no loop over them, and its ``if`` tests on
    their number are decided.
    """
    import libcst as cst

    from ..cstutil import rewrite, substitute

    star = node.params.star_arg
    if not isinstance(star, cst.Param) or shape.packed:
        return node
    name = star.name.value
    items, _ = concrete_names(name, None, shape)

    def is_star(expr) -> bool:
        return isinstance(expr, cst.Name) and expr.value == name

    def targets(clause) -> list[dict] | None:
        """Per item, what the clause's target names stand for; None if it does not iterate ``*args``."""
        target, source = clause.target, clause.iter
        if isinstance(target, cst.Name) and is_star(source):
            return [{target.value: cst.Name(item)} for item in items]
        counted = (
            isinstance(source, cst.Call)
            and isinstance(source.func, cst.Name)
            and source.func.value == "enumerate"
            and len(source.args) == 1
            and is_star(source.args[0].value)
        )
        pair = isinstance(target, cst.Tuple) and len(target.elements) == 2
        if not (counted and pair) or not all(
            isinstance(e.value, cst.Name) for e in target.elements
        ):
            return None
        index, value = (e.value.value for e in target.elements)
        return [
            {index: cst.Integer(str(i)), value: cst.Name(item)}
            for i, item in enumerate(items)
        ]

    class Spread(cst.CSTTransformer):
        def leave_ListComp(self, original, updated):
            clause = updated.for_in
            mappings = (
                targets(clause)
                if clause.inner_for_in is None and not clause.ifs
                else None
            )
            if mappings is None:
                return updated
            return cst.List([cst.Element(substitute(updated.elt, m)) for m in mappings])

        def leave_Call(self, original, updated):
            if (
                isinstance(updated.func, cst.Name)
                and updated.func.value == "len"
                and len(updated.args) == 1
                and is_star(updated.args[0].value)
            ):
                return cst.Integer(str(len(items)))
            return updated

    return rewrite(node, Spread())
