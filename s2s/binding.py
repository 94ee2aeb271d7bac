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
        held: dict | None = None,
    ):
        self.signature = signature  # the signature callers see
        # parameters the target holds bound to the function or object they receive (``holding``)
        self.held = held or {}
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

    def holding(self, held: dict) -> Binding:
        """This binding for the target with the parameters in ``held`` bound to the functions or objects they
        hold (``function_args.Bound``): calls pass them on no more, and may pass only those very objects (a
        call passing another one is a ``TypeError`` saying how to transform the function for it).
        """
        inner, kept = self, tuple(n for n in self.names if n not in held)
        positions = {name: self.names.index(name) for name in held}

        def bind(args, kwargs):
            values = inner(args, kwargs)
            for name, i in positions.items():
                if values[i] is not held[name] and not isinstance(values[i], _Placed):
                    raise _rebound(name, held[name], values[i])
            return tuple(v for n, v in zip(inner.names, values) if n not in held)

        # ``f(x, w)`` of ``def f(x, w, act=np.tanh)``: the held parameters are left to their defaults
        trailing = self._fast == len(self.names) and self.names[: len(kept)] == kept
        return Binding(
            self.signature,
            kept,
            bind,
            len(kept) if trailing else -1,
            self.partial_arguments,
            {**self.held, **held},
        )

    def placement(self, npositional: int, keywords) -> tuple:
        """Where each parameter of ``names`` takes its value from, for a call passing ``npositional``
        positional arguments and these keywords: the argument's position, its keyword, or None (a default, or
        an argument a ``functools.partial`` holds)."""
        values = self(
            tuple(_Placed(i) for i in range(npositional)),
            {k: _Placed(k) for k in keywords},
        )
        return tuple(v.at if isinstance(v, _Placed) else None for v in values)

    def placed_call(self) -> tuple:
        """The values of ``names`` for a call passing only the parameters that have no default (each a
        ``_Placed`` probe): the defaults, and what a ``functools.partial`` holds, appear as themselves.
        """
        args, kwargs = [], {}
        for name, p in self.signature.parameters.items():
            if p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.kind is p.POSITIONAL_ONLY:
                args.append(_Placed(name))
            else:
                kwargs[name] = _Placed(name)
        values = self(tuple(args), kwargs)
        return tuple(None if isinstance(v, _Placed) else v for v in values)

    def _index(self, name: str, api: str) -> int:
        """The position in ``names`` of the caller's parameter ``name``."""
        if name in self.held:
            raise TypeError(
                f"{api}: `{name}` holds {_described(self.held[name])}, which s2s reads as part of the "
                "function: it has no derivative or batch axis of its own"
            )
        return self.names.index(name)

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
            return self._index(self.positional[argnums % n], api)
        return tuple(self._index(self.positional[i % n], api) for i in argnums)

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
        return tuple(self._index(name, "s2s") for name in self.positional[:count])

    def _positional_names(self) -> str:
        if not self.positional:
            return ""
        return " (" + ", ".join(self.positional) + ")"


__all__ = ["Binding"]


class _Placed:
    """A probe standing for one argument of a call (``Binding.placement``, ``Binding.placed_call``)."""

    __slots__ = ("at",)

    def __init__(self, at):
        self.at = at


def _described(obj) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return f"`{name}`" if name else f"a `{type(obj).__name__}` object"


def _rebound(name: str, held, given) -> TypeError:
    return TypeError(
        f"`{name}` was read as {_described(held)} when s2s transformed the function, and this call passes "
        f"{_described(given)}: s2s reads the function or object a parameter holds as part of the code it "
        f"generates. Transform `functools.partial(f, {name}=...)` for calls with another one"
    )


def _default(value):
    """A default the caller left out, a number: a constant of the compiled code (``Default``)."""
    if type(value) is float:
        return Default(value)
    return DefaultInt(value) if type(value) is int else value
