"""``s2s.jit``: JAX's ``jax.jit``, on s2s's normal form of the function.

The function is lowered first, so Python ``if``/``for``/``while`` on array
values and NumPy-style in-place writes compile; then the generated function
runs under ``jax.jit`` with the static and donated arguments the caller named,
and nothing else static: a Python number passed to a traced parameter is
traced, as in JAX (``s2s.grad``'s own compilation makes ints static).
``.source`` is the generated module, ``.lower(*args)`` JAX's lowering.
"""

from __future__ import annotations

import functools

from .api import Transformed
from .errors import S2SError
from .runtime import backends


def _ints(value, what: str) -> tuple[int, ...]:
    if value is None:
        return ()
    items = (value,) if not isinstance(value, (tuple, list)) else tuple(value)
    for i in items:
        if not isinstance(i, int) or isinstance(i, bool):
            raise TypeError(f"s2s.jit: {what} must be ints, got {value!r}")
    return items


def _strs(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = (value,) if not isinstance(value, (tuple, list)) else tuple(value)
    for s in items:
        if not isinstance(s, str):
            raise TypeError(f"s2s.jit: {what} must be strings, got {value!r}")
    return items


class Jitted(Transformed):
    """A function lowered by s2s and compiled by ``jax.jit`` with JAX's static and donated arguments."""

    def __init__(
        self,
        fun,
        static_argnums=None,
        static_argnames=None,
        donate_argnums=None,
        donate_argnames=None,
    ):
        super().__init__(fun, "primal", api="s2s.jit")
        asked = {
            "static": (
                _ints(static_argnums, "static_argnums"),
                _strs(static_argnames, "static_argnames"),
            ),
            "donate": (
                _ints(donate_argnums, "donate_argnums"),
                _strs(donate_argnames, "donate_argnames"),
            ),
        }
        if self.binding.variadic and any(n or s for n, s in asked.values()):
            raise S2SError(
                "s2s.jit: static or donated arguments of a function that takes `*args`/`**kwargs`: s2s "
                "generates its code for each call's shape, and cannot say which parameter an index names",
                hint="give the function named parameters, or jit a function that calls it",
            )
        static = self._positions(*asked["static"], "static")
        donate = self._positions(*asked["donate"], "donate")
        if set(static) & set(donate):
            raise ValueError(
                "s2s.jit: a static argument cannot be donated (it is not an array): "
                f"{', '.join(self.binding.names[i] for i in sorted(set(static) & set(donate)))}"
            )
        self.static, self.donate = static, donate

    def _positions(self, argnums, argnames, what) -> tuple[int, ...]:
        """Indices into the generated function's parameters of the ones named by ``argnums`` and ``argnames``."""
        positional, names = self.binding.positional, self.binding.names
        found = set()
        for i in argnums:
            if not -len(positional) <= i < len(positional):
                raise ValueError(
                    f"s2s.jit: {what}_argnums={argnums} names argument {i}, but "
                    f"`{self.__name__}` takes {len(positional)} positional arguments"
                )
            found.add(names.index(positional[i]))
        for name in argnames:
            if name not in names:
                raise ValueError(
                    f"s2s.jit: {what}_argnames names {name!r}, which is not a parameter of "
                    f"`{self.__name__}` (its parameters: {', '.join(names)})"
                )
            found.add(names.index(name))
        return tuple(sorted(found))

    @functools.cached_property
    def _runner(self):
        return backends.Runner(self._function, "xla", self.static, self.donate)

    def lower(self, *args, **kwargs):
        """JAX's ``Lowered`` for this call: ``.as_text()`` is its StableHLO, ``.compile()`` compiles it."""
        bound = self.binding(args, kwargs)
        defaults = [i for i, a in enumerate(bound) if isinstance(a, backends.DEFAULTS)]
        return self._current_runner().jitted(defaults).lower(*bound)

    def __repr__(self):
        return f"<s2s.jit of {self.__name__}>"


def jit(
    fun=None,
    *,
    static_argnums=None,
    static_argnames=None,
    donate_argnums=None,
    donate_argnames=None,
):
    """``fun`` lowered by s2s and compiled by ``jax.jit`` (JAX's ``jit``; usable as ``@s2s.jit`` too).

    ``static_argnums``/``static_argnames`` are compile-time constants (hashable;
    a new value compiles again), ``donate_argnums``/``donate_argnames`` donate
    their buffers to the result; every other argument is traced, Python
    numbers included. Unlike ``jax.jit``, Python ``if``/``while`` on traced
    values compile (s2s lowers them to ``cond``/``while_loop`` first).
    """
    options = {
        "static_argnums": static_argnums,
        "static_argnames": static_argnames,
        "donate_argnums": donate_argnums,
        "donate_argnames": donate_argnames,
    }
    if fun is None:
        return lambda f: Jitted(f, **options)
    return Jitted(fun, **options)
