"""How a call of a transformed function reaches the parameters of the code s2s generated for it.

A generated function takes every parameter of the user's function
positionally, in declaration order: positional-only, positional-or-keyword,
keyword-only (``Binding.names``). A ``Binding`` turns a call made with
Python's rules (positional or keyword arguments, keyword-only parameters,
defaults, the arguments a ``functools.partial`` holds) into that tuple, with
the values the call binds: exactly the arguments the original function would
receive, so what runs is what was transformed. ``argnums`` count, as in JAX,
among the parameters a caller can pass positionally (of the partial, for a
``functools.partial``); ``Binding.argnums`` maps them into ``names``. A
negative one counts from the last positional argument a call passes, as in
JAX (``Binding.for_call``).
"""

from __future__ import annotations

import functools
import inspect

from .runtime.backends import Default, DefaultInt

_POSITIONAL = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
)


class Binding:
    """``binding(args, kwargs)``: the argument tuple of the generated function for a call ``f(*args, **kwargs)``."""

    def __init__(
        self,
        signature: inspect.Signature,
        names: tuple,
        bind,
        fast: int = -1,
        partial: bool = False,
    ):
        self.signature = signature  # the signature callers see
        self.partial_arguments = (
            partial  # a ``functools.partial`` holds some of the arguments
        )
        self.names = names  # the target's parameters, in the generated function's order
        self._bind = bind
        self._fast = (
            fast  # positional calls with this many arguments pass through unchanged
        )
        self.positional = tuple(
            n for n, p in signature.parameters.items() if p.kind in _POSITIONAL
        )
        self.variadic = any(
            p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            for p in signature.parameters.values()
        )

    @classmethod
    def of(cls, fn) -> Binding:
        """The binding of a Python function's own signature (never the one of a function it wraps)."""
        signature = inspect.signature(fn, follow_wrapped=False)
        names = tuple(signature.parameters)
        live = [signature, fn.__defaults__, fn.__kwdefaults__]

        def bind(args, kwargs):
            # defaults reassigned since
            if fn.__defaults__ is not live[1] or fn.__kwdefaults__ is not live[2]:
                live[:] = (
                    inspect.signature(fn, follow_wrapped=False),
                    fn.__defaults__,
                    fn.__kwdefaults__,
                )
            bound = live[0].bind(*args, **kwargs)
            passed = set(bound.arguments)
            bound.apply_defaults()
            return tuple(
                (
                    _default(bound.arguments[name])
                    if name not in passed
                    else bound.arguments[name]
                )
                for name in names
            )

        plain = all(p.kind in _POSITIONAL for p in signature.parameters.values())
        return cls(signature, names, bind, len(names) if plain else -1)

    def __call__(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs and len(args) == self._fast:
            return args
        return self._bind(args, kwargs)

    def partial(self, args: tuple, keywords: dict) -> Binding:
        """The binding of ``functools.partial(f, *args, **keywords)``, for ``f`` bound by ``self``."""

        def stand_in(*a, **k):  # carries the signature for inspect's own partial logic
            raise AssertionError

        stand_in.__signature__ = self.signature
        try:
            signature = inspect.signature(
                functools.partial(stand_in, *args, **keywords)
            )
        except ValueError as err:
            raise TypeError(
                f"functools.partial does not match the function's signature: {err}"
            ) from None
        inner = self
        return Binding(
            signature,
            self.names,
            lambda a, k: inner(args + a, {**keywords, **k}),
            partial=True,
        )

    def argnums(self, argnums, api: str = "s2s.grad"):
        """JAX's ``argnums`` (an int or a tuple of ints, among positional parameters) as indices into ``names``."""
        n = len(self.positional)
        for i in (argnums,) if isinstance(argnums, int) else argnums:
            if not isinstance(i, int) or isinstance(i, bool):
                raise TypeError(
                    f"{api}: argnums must be an int or a tuple of ints, got {argnums!r}"
                )
            if not -n <= i < n:
                raise ValueError(
                    f"{api}: differentiating with respect to argnums={argnums} requires at least "
                    f"{i + 1 if i >= 0 else -i} positional arguments to be passed by the caller, but the "
                    f"function has {n} positional parameters{self._positional_names()}"
                )
        if isinstance(argnums, int):
            return self.names.index(self.positional[argnums % n])
        return tuple(self.names.index(self.positional[i % n]) for i in argnums)

    @staticmethod
    def negative(argnums) -> bool:
        return any(i < 0 for i in ((argnums,) if isinstance(argnums, int) else argnums))

    def for_call(self, argnums, count: int, api: str = "s2s.grad"):
        """``argnums`` as JAX reads them for a call passing ``count`` positional arguments: a negative one
        counts from the last argument *passed* (``argnums=-1`` with ``f(x, w)`` called as ``f(x)`` is ``x``).
        """
        one = isinstance(argnums, int)
        fixed = tuple(
            i + count if i < 0 else i for i in ((argnums,) if one else argnums)
        )
        if any(i < 0 for i in fixed):
            raise ValueError(
                f"{api}: differentiating with respect to argnums={argnums} requires at least "
                f"{-min((argnums,) if one else argnums)} positional arguments to be passed by the caller, "
                f"but got only {count} positional arguments."
            )
        return fixed[0] if one else fixed

    def positions(self, count: int) -> tuple:
        """Indices into ``names`` of the first ``count`` positional parameters (those ``jvp``/``vjp`` primals fill)."""
        return tuple(self.names.index(name) for name in self.positional[:count])

    def _positional_names(self) -> str:
        if not self.positional:
            return ""
        return " (" + ", ".join(self.positional) + ")"


__all__ = ["Binding"]


def _default(value):
    """A default the caller left out, a number: a constant of the compiled code (``Default``)."""
    if type(value) is float:
        return Default(value)
    return DefaultInt(value) if type(value) is int else value
