"""A lambda or local function passed to a module-level function of the user's: the helper read as a local
function of the caller, its function parameter standing for the one passed.

``apply_twice(lambda z: np.tanh(z) * scale, x)`` closes over ``scale``, a
value of the caller that no module-level function can see, so the helper
cannot be bound to it as to a module-level function (``function_args``).
Instead ``call`` reads ``apply_twice``'s own code again as a local function
of the caller (named ``apply_twice_local``), with its parameter ``f``
renamed to the caller's local function (a lambda gets a local name of its
own first), and calls that: the ``inline`` pass then puts both bodies in
place, where the lambda sees the caller's ``scale``. The helper's other
names keep Python's meaning: its globals are its module's, its variables
its own (the resolver sees none of the caller's; constants it names avoid
the caller's names, and ``inline`` renames its variables that clash).

A local function the helper also reaches by another of its own names (the
same name as one of its globals) is a located error, as is one passed to a
helper with ``*args``/``**kwargs``.
"""

from __future__ import annotations

import inspect
from dataclasses import replace

import libcst as cst

from ..cstutil import names_in, rewrite
from ..errors import UnsupportedSyntax
from . import spellings, variadic
from .function_args import Bound
from .function_loops import Positioned


def passed_locals(resolver, node: cst.Call) -> tuple | None:
    """``(helper, {parameter: the argument})`` for the arguments of a call of a user's module-level function
    that are lambdas or local functions (``helper``: the function, at the call's shape where it takes
    ``*args``/``**kwargs``); None for any other call."""
    if not isinstance(node.func, (cst.Name, cst.Attribute)) or any(
        a.star for a in node.args
    ):
        return None
    fn = resolver._callee_object(node.func)
    if not inspect.isfunction(fn) or spellings.is_library(fn):
        return None
    local = resolver._local_fns.keys() | resolver._outer_fns.keys()

    def is_local(value) -> bool:
        return isinstance(value, cst.Lambda) or (
            isinstance(value, cst.Name) and value.value in local
        )

    if not any(is_local(a.value) for a in node.args):
        return None
    signature = inspect.signature(fn, follow_wrapped=False)
    try:
        passed = signature.bind(
            *[a.value for a in node.args if a.keyword is None],
            **{a.keyword.value: a.value for a in node.args if a.keyword},
        ).arguments
    except TypeError:
        return None  # the helper's binding says what does not match
    star, double = variadic.variable_parameters(signature)
    if star is not None or double is not None:
        # ``tree_map(fn, tree, *rest)``: read at this call's shape, ``*rest``'s items named one by one
        if any(
            is_local(v)
            for v in (*passed.get(star, ()), *passed.get(double, {}).values())
        ):
            resolver.fail(node, f"a local function passed to `{fn.__name__}` in its `*`/`**` parameters",
                          "pass it to a named parameter, or define it at module level and pass its name",
                          UnsupportedSyntax)  # fmt: skip
        bound = signature.bind(
            *[a.value for a in node.args if a.keyword is None],
            **{a.keyword.value: a.value for a in node.args if a.keyword},
        )
        fn = variadic.specialize(fn, variadic.shape_of(bound))
    return fn, {name: value for name, value in passed.items() if is_local(value)}


def call(resolver, node: cst.Call, fn, functions: dict) -> cst.Call:
    """The call of ``node``'s helper ``fn`` read as a local function, ``functions`` (parameter -> argument)
    bound."""
    from .resolve import Resolver
    from .source import load

    namer = resolver.lax_namer()
    names = {}
    for param, value in functions.items():
        if isinstance(value, cst.Lambda):
            name = namer.fresh(param)
            resolver.locals.add(name)
            resolver._local(name, value)
            value = cst.Name(name)
        names[param] = value.value
    src = load(fn)
    taken = names_in(src.node)
    for param, name in names.items():
        if name != param and (name in taken or name in src.env):
            resolver.fail(node, f"the local function `{name}` passed to `{fn.__name__}`, which has a name "
                          f"`{name}` of its own", "give the local function another name", UnsupportedSyntax)  # fmt: skip
    # the parameters that receive the functions renamed to them, and bound to them (no parameters)
    renamed = rewrite(
        src.node,
        Positioned({p: cst.Name(n) for p, n in names.items()}, src.file.positions),
    )
    src = _desugared(
        replace(
            src,
            node=renamed,
            env={**src.env, **dict.fromkeys(names.values())},
            fixed=tuple(names.values()),
        )
    )
    # constants and helpers it names avoid the caller's names (``inline`` puts its body among them)
    caller = resolver.locals | set(resolver.renames.values())
    visible = {**resolver._outer_fns, **resolver._local_fns}
    # the passed functions' definitions, for transformations of them in the helper: there, every name
    # the helper mentions means the helper's own
    defs = resolver.visible_defs()
    passed_defs = {
        n: (defs[n][0], defs[n][1] | taken) for n in names.values() if n in defs
    }
    local_name = namer.fresh(f"{fn.__name__}_local")
    resolver.locals.add(local_name)
    reading = fn.fn if isinstance(fn, variadic.Specialized) else fn
    if (
        reading in _READING
    ):  # ``walk(f, tree)`` calling itself with ``f``: one local copy per level, forever
        resolver.fail(node, f"`{fn.__name__}` calls itself with the local function it was passed",
                      "define the function at module level and pass its name", UnsupportedSyntax)  # fmt: skip
    _READING.add(reading)
    try:
        resolver._local_fns[local_name] = Resolver(
            src,
            set(),
            resolver.result,
            {n: n for n in caller},
            {},
            {name: visible[name] for name in names.values()},
            passed_defs,
        ).function(local_name)
    finally:
        _READING.discard(reading)
    bound = Bound(fn, tuple((param, None) for param in names))
    others = [resolver._arg(a) for a in node.args if a.value not in functions.values()]
    return resolver.mark(
        cst.Call(cst.Name(local_name), resolver._bind_helper(bound, others, node)), node
    )


_READING: set = set()  # the helpers being read as local functions now


def _desugared(src):
    from ..pipeline import desugared

    return desugared(src)
