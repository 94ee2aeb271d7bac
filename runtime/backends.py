"""Run generated functions: compiled through XLA by ``jax.jit`` (cached per shapes and dtypes), or eagerly on NumPy.

An exception raised inside generated code (a shape mismatch, a value JAX
needs at compile time) comes out as ``located.GeneratedCodeError`` at the
user's line, with the original chained as its cause (see ``located.locate``).
"""

from __future__ import annotations

import numpy as np

from . import held
from .draws import is_key
from .iteration import as_lists
from .located import failed_check, locate
from .trees import _children, _is_record, _rebuild

BACKENDS = ("xla", "numpy")


class Default(float):
    """A float parameter's default value that the caller left out: a constant of the compiled code, as
    under ``jax.jit``, which traces only what the caller passes (a float passed is traced).
    """


class DefaultInt(int):
    """An int parameter's default value that the caller left out: a constant also under ``s2s.jit``."""


DEFAULTS = (Default, DefaultInt)


def _is_static(value) -> bool:
    """Python ints, bools, strings and None (and tuples of them), and defaults the caller left out, are
    compile-time constants."""
    if isinstance(value, tuple):
        return all(_is_static(v) for v in value)
    return isinstance(
        value, (bool, int, str, type(None), *DEFAULTS)
    ) and not isinstance(value, np.generic)


def _to_numpy(tree):
    """JAX arrays in ``tree`` become NumPy arrays (the NumPy backend calls JAX only for ``jax.random`` draws)."""
    if isinstance(tree, dict):
        return {k: _to_numpy(v) for k, v in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(_to_numpy(v) for v in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(_to_numpy(v) for v in tree)
    if _is_record(tree):
        return _rebuild(tree, [(k, _to_numpy(v)) for k, v in _children(tree)])
    if (
        type(tree).__module__.startswith(("jax", "jaxlib"))
        and not callable(tree)
        and not is_key(tree)
    ):
        return np.asarray(tree)  # (a typed key stays JAX's: NumPy has no key dtype)
    return tree


class InOrder(dict):
    """A dict argument whose keys are not sorted, kept in the caller's order: ``jax.jit`` rebuilds a plain
    dict with its keys sorted, and a loop over ``params.items()`` would visit the layers in another order
    under XLA than on NumPy. Registered with JAX (on first use) as a pytree in insertion order.
    """


_in_order_registered: list = []


def in_order(tree):
    """``tree`` with its dicts whose keys are not sorted as ``InOrder`` (the same object where none is)."""
    if isinstance(tree, dict) and not isinstance(tree, InOrder):
        items = {k: in_order(v) for k, v in tree.items()}
        try:
            unsorted = list(tree) != sorted(tree)
        except TypeError:  # keys of mixed types: JAX cannot sort them either
            unsorted = False
        if unsorted and type(tree) is dict:
            _register_in_order()
            return InOrder(items)
        if any(items[k] is not v for k, v in tree.items()):
            return type(tree)(items)
        return tree
    if isinstance(tree, list) or (
        isinstance(tree, tuple) and not hasattr(tree, "_fields")
    ):
        items = [in_order(v) for v in tree]
        if any(a is not b for a, b in zip(items, tree)):
            return type(tree)(items)
    return tree


def plain_dicts(tree):
    """``tree`` with its ``InOrder`` dicts as plain ones, in their order (the same object where none is)."""
    if isinstance(tree, dict):
        items = {k: plain_dicts(v) for k, v in tree.items()}
        if isinstance(tree, InOrder):
            return items
        changed = any(items[k] is not v for k, v in tree.items())
        return type(tree)(items) if changed else tree
    if isinstance(tree, (tuple, list)):
        items = [plain_dicts(v) for v in tree]
        if all(a is b for a, b in zip(items, tree)):
            return tree
        if hasattr(tree, "_fields"):
            return type(tree)(*items)
        return type(tree)(items)
    return tree


def _register_in_order():
    if not _in_order_registered:
        import jax

        jax.tree_util.register_pytree_node(
            InOrder,
            lambda d: (list(d.values()), tuple(d)),
            lambda keys, values: InOrder(zip(keys, values)),
        )
        _in_order_registered.append(True)


class Runner:
    """Calls one generated function on a backend; for XLA, one ``jax.jit`` per static-argument pattern.

    By default Python ints, bools, strings and None are static (``_is_static``).
    With ``static`` (positions), exactly those arguments are, as ``jax.jit``'s
    ``static_argnums`` makes them, and ``donate`` positions are donated
    (``s2s.jit``).
    """

    def __init__(self, fn, backend: str = "xla", static=None, donate=()):
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        self.fn = fn
        self.backend = backend
        self._jitted = {}
        self._holds = False  # an argument held a leaf jax.jit cannot take (``held``)
        self._fixed = None if static is None else (tuple(static), tuple(donate))

    def jitted(self, defaults=()):
        """The ``jax.jit`` of the function with the fixed static and donated positions (``s2s.jit``), and
        the positions of ``defaults`` the caller left out, constants as under ``jax.jit``.
        """
        static, donate = self._fixed
        static = tuple(sorted({*static, *defaults}))
        found = self._jitted.get((static, donate))
        if found is None:
            import jax

            found = self._jitted[static, donate] = jax.jit(
                self._traced, static_argnums=static, donate_argnums=donate
            )
        return found

    def _traced(self, *args):
        """The function as ``jax.jit`` traces it: ``InOrder`` arguments are plain dicts again inside, in
        the caller's order (a library's ``tree_map`` over them and a dict it makes see one type). A list
        held item by item (``Elements``) is returned as the Python list it stands for.
        """
        return as_lists(self.fn(*plain_dicts(args)))

    def __call__(self, *args):
        try:
            if self.backend == "numpy":
                return as_lists(self.fn(*(_to_numpy(a) for a in args)))
            # arrays only: nothing static, the common case
            if self._fixed is None and all(hasattr(a, "shape") for a in args):
                jitted = self._jitted.get(())
                if jitted is not None:
                    return jitted(*args)
            ordered = tuple(in_order(a) for a in args)
            if any(o is not a for o, a in zip(ordered, args)):
                return plain_dicts(self._compiled(ordered))
            return self._compiled(args)
        except (
            Exception
        ) as err:  # raised in generated code: at the user's line (else unchanged)
            located = locate(err) or failed_check(err)
            if located is None:
                raise
            raise located.with_traceback(err.__traceback__) from err

    def _compiled(self, args):
        """The call compiled through ``jax.jit`` (static arguments and held leaves as ``__call__`` says)."""
        if self._fixed is not None:
            defaults = [i for i, a in enumerate(args) if isinstance(a, DEFAULTS)]
            return self.jitted(defaults)(*args)
        static = tuple(i for i, a in enumerate(args) if _is_static(a))
        if self._holds:
            return held.call(self, args, static, force=True)
        jitted = self._jitted.get(static)
        if jitted is None:
            import jax

            jitted = self._jitted[static] = jax.jit(self._traced, static_argnums=static)
        try:
            return jitted(*args)
        except TypeError:
            # a model holding functions (Equinox's activation), in or out: compiled for its arrays
            found = held.call(self, args, static, force=True)
            self._holds = True
            return found
