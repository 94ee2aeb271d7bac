"""A call's ``*sequence`` and ``**mapping`` arguments, whose length and keys are known when the code runs.

``f(x, *batch)`` with ``def f(x, inputs, targets=None)`` is generated as
``f(x, batch[0], rt.argument(batch, 1, None))`` after a check that ``batch``
fits ``f``'s parameters as Python would bind it (``check_call``). Each
parameter then receives one value, so the call is differentiated like any
other: ``argument``'s cotangent goes to the item or entry that was passed, or
to the default where there was none. ``*p`` of an array passes its rows, as
Python does (``model(t, *p)``, scipy's ``curve_fit`` convention); under
``vmap`` each example's rows (``batched_argument``).
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
    if hasattr(sequence, "shape") and not sequence.shape:
        raise TypeError(
            f"{name}() argument after * must be an iterable, not a 0-d array"
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


def _is_array(source) -> bool:
    return hasattr(source, "shape") and not isinstance(source, (list, tuple, dict))


def _holds(source, key, batched=False) -> bool:
    if isinstance(source, dict):
        return key in source
    length = source.shape[1] if batched and _is_array(source) else len(source)
    return 0 <= key < length


def argument(source, key, default=None):
    """What a parameter receives from ``*source`` (``key`` an index) or ``**source`` (``key`` a name), else ``default``."""
    return source[key] if _holds(source, key) else default


def argument_vjp(g, source, key):
    """The cotangent of ``source`` in ``argument(source, key, default)``: ``g`` at ``key`` where it holds it."""
    from .trees import fill_like, tree_zeros_like

    if not _holds(source, key):
        return tree_zeros_like(source)
    if _is_array(source):  # a row of an array
        from .arrays import index_add

        return index_add(tree_zeros_like(source), key, g)
    return fill_like(source, {(key,): g})


def argument_default_vjp(g, source, key, default=None):
    """The cotangent of ``default`` in ``argument(source, key, default)``: ``g`` where ``source`` lacks ``key``."""
    from .trees import tree_zeros_like

    return tree_zeros_like(default) if _holds(source, key) else g


def _each(value, is_batched, size):
    from .batch_axes import broadcast_batch

    return value if is_batched or value is None else broadcast_batch(value, size)


def batched_argument(source, key, default, batched, size):
    """``argument`` per example: an array's rows along axis 1; a container's items (their leaves
    batched) as they are."""
    source_b, default_b = batched
    if _is_array(source) and source_b:
        return (
            source[:, key]
            if _holds(source, key, True)
            else _each(default, default_b, size)
        )
    return argument(_each(source, source_b, size), key, _each(default, default_b, size))


def batched_argument_vjp(g, source, key, batched, size):
    """``argument_vjp`` per example."""
    g_b, source_b = batched
    if _is_array(source) and source_b:
        from .arrays import index_add
        from .trees import tree_zeros_like

        zeros = tree_zeros_like(source)
        if not _holds(source, key, True):
            return zeros
        return index_add(zeros, (slice(None), key), _each(g, g_b, size))
    return argument_vjp(_each(g, g_b, size), _each(source, source_b, size), key)


def batched_argument_default_vjp(g, source, key, default, batched, size):
    """``argument_default_vjp`` per example."""
    g_b, source_b, default_b = batched
    if _is_array(source) and source_b:
        from .trees import tree_zeros_like

        held = _holds(source, key, True)
        return (
            _each(tree_zeros_like(default), False, size)
            if held
            else _each(g, g_b, size)
        )
    return argument_default_vjp(
        _each(g, g_b, size),
        _each(source, source_b, size),
        key,
        _each(default, default_b, size),
    )


__all__ = [
    "argument",
    "argument_default_vjp",
    "argument_vjp",
    "batched_argument",
    "batched_argument_default_vjp",
    "batched_argument_vjp",
    "check_call",
]
