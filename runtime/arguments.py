"""A call's ``*sequence`` and ``**mapping`` arguments, whose length and keys are known when the code runs.

``f(x, *batch)`` with ``def f(x, inputs, targets=None)`` is generated as
``f(x, batch[0], rt.argument(batch, 1, None))`` after a check that ``batch``
fits ``f``'s parameters as Python would bind it (``check_call``). Each
parameter then receives one value, so the call is differentiated like any
other: ``argument``'s cotangent goes to the item or entry that was passed, or
to the default where there was none.
"""

from __future__ import annotations

import inspect

_KINDS = {
    "*": inspect.Parameter.VAR_POSITIONAL,
    "**": inspect.Parameter.VAR_KEYWORD,
}


def _signature(parameters: tuple) -> inspect.Signature:
    """A signature from its parameters as ``check_call`` spells them.

    ``"x"`` (required), ``"x="`` (with a default), ``"*args"``, ``"**kwargs"``,
    ``"/"`` after positional-only ones and ``"*"`` before keyword-only ones.
    """
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    out = []
    for spelled in parameters:
        if spelled == "/":
            out = [p.replace(kind=inspect.Parameter.POSITIONAL_ONLY) for p in out]
            continue
        if spelled == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        stars = len(spelled) - len(spelled.lstrip("*"))
        if stars:
            out.append(inspect.Parameter(spelled[stars:], _KINDS["*" * stars]))
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        name, has_default = spelled.rstrip("="), spelled.endswith("=")
        default = None if has_default else inspect.Parameter.empty
        out.append(inspect.Parameter(name, kind, default=default))
    return inspect.Signature(out)


def check_call(name, parameters, positional, sequence, keywords, mapping):
    """Python's ``TypeError`` where ``name(<positional>, *sequence, <keywords>, **mapping)`` does not bind.

    ``positional`` counts the arguments before the ``*``, ``keywords`` names the
    explicit keyword arguments; ``sequence`` and ``mapping`` are None where the
    call has no ``*`` or ``**``. The lengths and keys are Python facts, known
    when the code is traced.
    """
    if hasattr(sequence, "shape"):
        from .located import Refusal

        raise Refusal(
            f"`*` of an array in a call of `{name}` (Python would pass its rows)",
            "pass the rows by index: `f(x[0], x[1])`, or a list",
        )
    given = [None] * positional + [None] * (0 if sequence is None else len(sequence))
    named = dict.fromkeys(keywords)
    for key in {} if mapping is None else mapping:
        if key in named:
            raise TypeError(
                f"{name}() got multiple values for keyword argument '{key}'"
            )
        named[key] = None
    try:
        _signature(parameters).bind(*given, **named)
    except TypeError as err:
        raise TypeError(f"{name}(): {err}") from None


def _holds(source, key) -> bool:
    if isinstance(source, dict):
        return key in source
    return 0 <= key < len(source)


def argument(source, key, default=None):
    """What a parameter receives from ``*source`` (``key`` an index) or ``**source`` (``key`` a name), else ``default``."""
    return source[key] if _holds(source, key) else default


def argument_vjp(g, source, key):
    """The cotangent of ``source`` in ``argument(source, key, default)``: ``g`` at ``key`` where it holds it."""
    from .trees import fill_like, tree_zeros_like

    return (
        fill_like(source, {(key,): g})
        if _holds(source, key)
        else tree_zeros_like(source)
    )


def argument_default_vjp(g, source, key, default=None):
    """The cotangent of ``default`` in ``argument(source, key, default)``: ``g`` where ``source`` lacks ``key``."""
    from .trees import tree_zeros_like

    return tree_zeros_like(default) if _holds(source, key) else g


__all__ = ["argument", "argument_default_vjp", "argument_vjp", "check_call"]
