"""A helper call's ``*sequence`` and ``**mapping`` arguments, bound parameter by parameter.

s2s reads ``f(x, *batch)`` before it knows how long ``batch`` is, or
``f(x, **config)`` before it knows ``config``'s keys: those are facts of the
values the code runs on. ``bind`` turns such a call into one whose arguments
are named one by one, in ``f``'s parameter order, so the call is
differentiated and batched like any other:

- a positional parameter the ``*`` reaches: ``batch[i]``, or
  ``rt.argument(batch, i, fallback)`` where the parameter has another source
  (a default, or ``**mapping``) for a shorter ``batch``;
- a parameter ``**mapping`` fills: ``config["name"]``, or
  ``rt.argument(config, "name", default)`` where it has a default;
- the helper's own ``*args``, reached by the ``*``: ``batch[i:]``, the helper
  read with its ``*args`` as one parameter (``variadic.Shape.packed``).

Before the call, ``rt.check_call`` raises Python's ``TypeError`` where the
call does not bind (too many items, a missing parameter, an unexpected
keyword), so no item is ever dropped or read twice silently. What s2s cannot
bind this way is a located error: a positional argument after the ``*``, a
``**mapping`` reaching ``**kwargs``, more than one ``*`` or ``**``.
"""

from __future__ import annotations

import inspect

import libcst as cst

from .. import ir
from ..cstutil import call
from ..errors import UnsupportedSyntax
from .variadic import Shape

_POSITIONAL = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
)


def has_spread(args: list) -> bool:
    """Whether a call's resolved arguments hold a ``*`` or ``**`` s2s has not spread yet."""
    return any(a.star for a in args)


def spelled(signature: inspect.Signature) -> tuple:
    """``fn``'s parameters as ``rt.check_call`` reads them (``"x"``, ``"x="``, ``"*args"``, ``"/"``, ...)."""
    out, only_positional, keyword_only = [], False, False
    for p in signature.parameters.values():
        if only_positional and p.kind is not p.POSITIONAL_ONLY:
            out.append("/")
            only_positional = False
        only_positional = p.kind is p.POSITIONAL_ONLY
        if p.kind is p.KEYWORD_ONLY and not keyword_only:
            out.append("*")
        keyword_only = keyword_only or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        if p.kind is p.VAR_POSITIONAL:
            out.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            out.append(f"**{p.name}")
        else:
            out.append(p.name + ("=" if p.default is not p.empty else ""))
    if only_positional:
        out.append("/")
    return tuple(out)


def signature_of(fn) -> inspect.Signature:
    """A helper's signature, or a local function's (an ``ir.Function``), as ``bind`` reads it."""
    if not isinstance(fn, ir.Function):
        return inspect.signature(fn, follow_wrapped=not inspect.isfunction(fn))
    kinds = {
        False: inspect.Parameter.POSITIONAL_OR_KEYWORD,
        True: inspect.Parameter.KEYWORD_ONLY,
    }
    return inspect.Signature(
        [
            inspect.Parameter(
                p.name,
                kinds[p.keyword_only],
                default=inspect.Parameter.empty if p.default is None else p.default,
            )
            for p in fn.params
        ]
    )


def bind(resolver, fn, args: list, default, node) -> tuple[list, Shape | None]:
    """``args`` (resolved, holding a ``*`` or ``**``) as arguments named one by one for ``fn``.

    ``fn`` is a helper or a local function (an ``ir.Function``).
    ``default(name, param)`` is the expression of a parameter's default. Returns
    the new arguments and, where the ``*`` reaches ``fn``'s ``*args``, the shape
    to read ``fn`` at (else None). The check goes to ``resolver._pending``.
    """
    signature = signature_of(fn)
    fn_name = fn.name if isinstance(fn, ir.Function) else fn.__name__
    params = list(signature.parameters.values())
    stars = [a for a in args if a.star == "*"]
    doubles = [a for a in args if a.star == "**"]

    def fail(at, message, hint):
        resolver.fail(at, message, hint, UnsupportedSyntax)

    if len(stars) > 1 or len(doubles) > 1:
        fail(node, f"a call of `{fn_name}` with more than one `*` or `**` argument",
             "join the sequences (or dicts) into one before the call")  # fmt: skip
    star = stars[0] if stars else None
    written = {
        kind: next((a for a in node.args if a.star == kind), node)
        for kind in ("*", "**")
    }
    positional = [a for a in args if a.keyword is None and not a.star]
    if star is not None and args.index(star) < max(
        (args.index(a) for a in positional), default=-1
    ):
        fail(written["*"], f"a positional argument after `*` in a call of `{fn_name}`",
             "put the positional arguments before the `*` one")  # fmt: skip
    keywords = {a.keyword.value: a for a in args if a.keyword is not None}
    sequence = _named(resolver, star.value, node) if star else None
    mapping = _named(resolver, doubles[0].value, node) if doubles else None
    rest = next((p for p in params if p.kind is p.VAR_POSITIONAL), None)
    more = next((p for p in params if p.kind is p.VAR_KEYWORD), None)
    if mapping is not None and more is not None:
        fail(written["**"], f"`**` of a dict into `{fn_name}`'s `**{more.name}`: s2s reads the keywords "
             "a function receives when it reads the call, and this dict's keys are known only when the code runs",
             "pass the keywords by name")  # fmt: skip
    named = [p for p in params if p.kind in _POSITIONAL]
    # ``combine(a, *rest)`` into ``def combine(*terms)``: the positional arguments past the named
    # parameters lead the sequence ``*terms`` receives (``[a] + rest``)
    extra = [a.value for a in positional[len(named) :]] if rest is not None else []
    if extra and sequence is not None:
        positional = positional[: len(named)]
        sequence = call("rt.join", cst.List([cst.Element(v) for v in extra]), sequence)
    out = list(positional)
    reach = (
        sequence is not None
    )  # whether the ``*`` still reaches the next positional parameter
    for i, p in enumerate(named[len(positional) :]):
        if p.name in keywords:
            reach = False  # given by keyword: the ``*`` must stop before it
            continue
        by_keyword = p.kind is not p.POSITIONAL_ONLY
        fallback = _from_mapping(mapping, p, default, reach) if by_keyword else None
        if reach:
            if fallback is None and p.default is not p.empty:
                fallback = default(p.name, p)
            item = (
                _item(sequence, i)
                if fallback is None
                else call("rt.argument", sequence, cst.Integer(str(i)), fallback)
            )
            out.append(cst.Arg(item))
        elif fallback is not None:
            out.append(cst.Arg(fallback, keyword=cst.Name(p.name)))
    shape = None
    if rest is not None and sequence is not None:
        reached = len(named) - len(positional)
        items = _items_from(sequence, reached) if reach else cst.Tuple([])
        out.append(cst.Arg(items, keyword=cst.Name(rest.name)))
        extra = tuple(k for k in keywords if k not in signature.parameters)
        shape = Shape(0, extra, packed=True)
    for p in params:
        if p.kind is p.KEYWORD_ONLY and p.name not in keywords:
            value = _from_mapping(mapping, p, default)
            if value is not None:
                out.append(cst.Arg(value, keyword=cst.Name(p.name)))
    out += keywords.values()
    check = call(
        "rt.check_call",
        cst.SimpleString(repr(fn_name)),
        cst.Tuple([cst.Element(cst.SimpleString(repr(s))) for s in spelled(signature)]),
        cst.Integer(str(len(positional))),
        sequence if sequence is not None else cst.Name("None"),
        cst.Tuple([cst.Element(cst.SimpleString(repr(k))) for k in keywords]),
        mapping if mapping is not None else cst.Name("None"),
    )
    resolver._pending.append(
        ir.Assign(cst.Name(ir.OUTPUT_TOKEN), check, resolver.source.origin(node))
    )
    return out, shape


def _named(resolver, expr, node) -> cst.BaseExpression:
    """``expr`` as a name, assigned first where it is computed (it is read once per parameter)."""
    if isinstance(expr, cst.Name):
        return expr
    name = resolver.lax_namer().fresh("arguments")
    resolver.locals.add(name)
    resolver._pending.append(
        ir.Assign(cst.Name(name), expr, resolver.source.origin(node))
    )
    return cst.Name(name)


def _item(sequence, i: int) -> cst.Subscript:
    return cst.Subscript(
        sequence, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))]
    )


def _items_from(sequence, i: int) -> cst.BaseExpression:
    if i == 0:
        return sequence
    return cst.Subscript(
        sequence, [cst.SubscriptElement(cst.Slice(cst.Integer(str(i)), None))]
    )


def _from_mapping(mapping, p, default, optional=False):
    """What ``**mapping`` gives the parameter ``p``: its entry, else ``p``'s default; None without a mapping.

    ``optional``: the entry may be missing although ``p`` has no default (the ``*`` may give ``p``).
    """
    if mapping is None:
        return None
    key = cst.SimpleString(repr(p.name))
    if p.default is not p.empty:
        return call("rt.argument", mapping, key, default(p.name, p))
    if optional:
        return call("rt.argument", mapping, key)
    return cst.Subscript(mapping, [cst.SubscriptElement(cst.Index(key))])
