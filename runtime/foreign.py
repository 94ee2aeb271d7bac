"""Library code that JAX traces, called from generated code: ``rt.foreign(fn, *args, keywords=...)``.

s2s reads your functions from their source. A function of an installed library
written in JAX (an optax loss, Flax's ``model.apply``, an Equinox layer) is
not read: the generated code calls it through ``rt.foreign``, and its
derivatives are JAX's own, taken at that call:

- ``rt.foreign(fn, *args, keywords=None)`` is ``fn(*args, **keywords)``. The
  operands are ``fn`` itself (operand 0: it may be a pytree with arrays, such as
  an Equinox module passed as an argument) and ``args``; ``keywords`` holds
  compile-time constants only. On the NumPy backend it runs eagerly in JAX on
  the NumPy inputs, and its outputs come back as NumPy arrays.
- ``rt.vjp_of(wrt)``, ``rt.jvp_of(wrt)`` and ``rt.vmap_of(in_axes)`` make the
  functions the derivative and batched code call through ``rt.foreign`` again
  (``jax.vjp``, ``jax.jvp`` and ``jax.vmap`` of ``fn`` applied to its operands),
  so a derivative of a foreign call is a foreign call, and second derivatives
  come the same way. ``wrt`` lists the operands differentiated (``None``: all).

Only floating-point array leaves of a differentiated operand are differentiated
(as ``equinox.filter_vjp`` does): an integer array leaf gets a zero cotangent,
anything else (a function, None, a string held by a module) gets None.

``library_code(fn)`` is the one policy for what may be called this way: the
code that runs is a Python function of an installed package (not of ``jax``
itself, nor ``numpy``: those are s2s's own vocabulary) whose module imports
JAX. Anything else is refused with a message naming it (``Refusal``: the runner
re-raises it at the user's line).
"""

from __future__ import annotations

import functools
import inspect
import sys
import types

import numpy as np

from . import loader
from .arrays import namespace
from .located import Refusal, in_library

# the packages whose functions are s2s's vocabulary: an op with rules, or a located error, never foreign
VOCABULARY = ("jax", "jaxlib", "numpy")
_DERIVED = "__s2s_foreign_derived__"  # set on the functions ``vjp_of``/``jvp_of``/``vmap_of`` make


def foreign(fn, *args, keywords=None):
    """``fn(*args, **keywords)``, a library function JAX traces; NumPy outputs for NumPy inputs."""
    import jax

    given, fn = fn, traceable(fn)
    if fn is None:
        raise Refusal(*_refusal(given))
    eager = namespace(*args) is np and not any(
        isinstance(leaf, jax.core.Tracer)
        for leaf in jax.tree_util.tree_leaves((fn, args))
    )
    try:
        out = fn(*args, **(keywords or {}))
    except (
        jax.errors.ConcretizationTypeError,
        jax.errors.TracerArrayConversionError,
    ) as err:
        raise Refusal(
            f"`{describe(fn)}` cannot be traced by JAX ({type(err).__name__}), so s2s cannot call it "
            "inside a transformed function",
            "call it outside the function and pass its result in, or write it with NumPy ops in your own code",
        ) from err
    return _to_numpy(out, args) if eager else out


def vjp_of(wrt):
    """The function ``(fn, *args, ct, **keywords) -> cotangents`` of the operands ``(fn, *args)`` listed in
    ``wrt`` (a tuple of indices, or None for all), for the cotangent ``ct`` of ``fn(*args, **keywords)``.
    """
    return _vjp_of(None if wrt is None else tuple(wrt))


def jvp_of(wrt):
    """The function ``(fn, *args, *tangents, **keywords) -> tangent`` of ``fn(*args, **keywords)``, for one
    tangent per operand of ``(fn, *args)`` listed in ``wrt``."""
    return _jvp_of(tuple(wrt))


def vmap_of(in_axes):
    """The function ``(fn, *args, **keywords)`` that maps ``fn`` over the operands of ``(fn, *args)`` whose
    entry of ``in_axes`` is 0 (the others are shared), with the batch axis first in every output leaf.
    """
    return _vmap_of(tuple(in_axes))


@functools.cache
def _vjp_of(wrt):
    def vjp(*operands, **keywords):
        import jax

        *operands, ct = operands
        split = _Split(operands, range(len(operands)) if wrt is None else wrt)
        out = _Output(lambda *d: _apply(split.rebuild(d), keywords))
        values, pullback = jax.vjp(out, *split.diff)
        return split.cotangents(pullback(out.cotangent(values, ct)))

    return _derived(vjp, f"vjp_of({wrt!r})")


@functools.cache
def _jvp_of(wrt):
    def jvp(*operands, **keywords):
        import jax

        operands, tangents = operands[: -len(wrt)], operands[-len(wrt) :]
        split = _Split(operands, wrt)
        out = _Output(lambda *d: _apply(split.rebuild(d), keywords))
        _, dots = jax.jvp(out, split.diff, split.tangents(tangents))
        return out.tangent(dots)

    return _derived(jvp, f"jvp_of({wrt!r})")


class _Output:
    """``fn``'s output as the list of its array leaves (what JAX differentiates: a model it returns may also
    hold functions), with its structure kept to lay cotangents out and to rebuild tangents.
    """

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        import jax

        leaves, self.treedef = jax.tree_util.tree_flatten(self.fn(*args))
        self.mask = [_is_array_leaf(x) for x in leaves]
        return [x for x, keep in zip(leaves, self.mask) if keep]

    def cotangent(self, values, ct):
        """``ct``, laid out as ``fn``'s output (None at a leaf: zeros), as the array leaves' cotangents in
        the dtypes ``jax.vjp`` expects (``float0`` for integer ones)."""
        import jax
        import jax.numpy as jnp

        given = jax.tree_util.tree_leaves(ct, is_leaf=lambda x: x is None)
        if len(given) != len(self.mask):
            given = self.treedef.flatten_up_to(ct)
        given = [c for c, keep in zip(given, self.mask) if keep]
        out = []
        for value, c in zip(values, given):
            dtype = jnp.result_type(value)
            if not jnp.issubdtype(dtype, jnp.inexact):
                out.append(np.zeros(np.shape(value), jax.dtypes.float0))
            elif c is None:
                out.append(jnp.zeros(np.shape(value), dtype))
            else:
                out.append(jnp.asarray(c, dtype))
        return out

    def tangent(self, dots):
        """The output's tangent: ``fn``'s structure, None where it holds no array."""
        import jax

        dots = iter(dots)
        leaves = [_no_float0(next(dots)) if keep else None for keep in self.mask]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)


def _is_array_leaf(leaf) -> bool:
    return hasattr(leaf, "shape") or isinstance(leaf, (bool, int, float, complex))


@functools.cache
def _vmap_of(in_axes):
    mapped = tuple(i for i, axis in enumerate(in_axes) if axis is not None)

    def batched(*operands, **keywords):
        import jax

        def one(*examples):
            full = list(operands)
            for i, example in zip(mapped, examples):
                full[i] = example
            return _apply(full, keywords)

        return jax.vmap(one, in_axes=tuple(in_axes[i] for i in mapped))(
            *(operands[i] for i in mapped)
        )

    return _derived(batched, f"vmap_of({in_axes!r})")


def _derived(fn, name):
    fn.__name__ = fn.__qualname__ = name
    setattr(fn, _DERIVED, True)
    return fn


def _apply(operands, keywords):
    fn = traceable(operands[0]) or operands[0]
    return fn(*operands[1:], **keywords)


def traceable(fn):
    """What JAX traces for ``fn`` called through a parameter or a value: ``fn`` itself for a library's JAX
    code and for JAX's own functions (``jax.nn.relu``, a ``functools.partial`` of one, s2s's runtime
    spelling of one), ``jax.numpy``'s
    namesake for a NumPy function (``np.tanh``), else None (your own code: s2s reads it by its name).
    """
    if getattr(fn, _DERIVED, False) or library_code(fn) is not None:
        return fn
    code = code_of(fn)
    module = (getattr(code, "__module__", None) or "") if code else ""
    if module.split(".")[0] in ("jax", "jaxlib") or module.startswith("s2s.runtime"):
        return fn  # JAX's, or s2s's runtime's spelling of one (``rt.nn.relu``)
    module = getattr(fn, "__module__", None) or ""
    if isinstance(fn, np.ufunc) or module.split(".")[0] == "numpy":
        import jax.numpy as jnp

        same = getattr(jnp, getattr(fn, "__name__", ""), None)
        return same if callable(same) else None
    return None


def _is_float_leaf(leaf) -> bool:
    import jax.numpy as jnp

    if isinstance(leaf, float):
        return True
    dtype = getattr(leaf, "dtype", None)
    return (
        dtype is not None
        and hasattr(leaf, "shape")
        and jnp.issubdtype(dtype, jnp.inexact)
    )


class _Split:
    """The operands ``which`` of a call, flattened: their floating-point leaves (``diff``) are what JAX
    differentiates; the other leaves stay as they are."""

    def __init__(self, operands, which):
        import jax

        self.operands, self.which = operands, tuple(which)
        self.flat = []
        for i in self.which:
            leaves, treedef = jax.tree_util.tree_flatten(operands[i])
            self.flat.append((leaves, treedef, [_is_float_leaf(x) for x in leaves]))
        self.diff = [
            x for leaves, _, mask in self.flat for x, keep in zip(leaves, mask) if keep
        ]

    def rebuild(self, new):
        """The operands with the differentiated leaves replaced by ``new``."""
        import jax

        new, full = iter(new), list(self.operands)
        for i, (leaves, treedef, mask) in zip(self.which, self.flat):
            full[i] = jax.tree_util.tree_unflatten(
                treedef, [next(new) if keep else x for x, keep in zip(leaves, mask)]
            )
        return full

    def tangents(self, tangents):
        """The leaves of one tangent per operand that ``diff`` holds, in the primal leaves' dtypes."""
        import jax.numpy as jnp

        out = []
        for tangent, (leaves, treedef, mask) in zip(tangents, self.flat):
            parts = treedef.flatten_up_to(tangent)
            out += [
                jnp.asarray(t, jnp.result_type(x))
                for t, x, keep in zip(parts, leaves, mask)
                if keep
            ]
        return out

    def cotangents(self, cts):
        """Each operand's cotangent from those of ``diff`` (zeros or None at the other leaves)."""
        import jax

        cts, out = iter(cts), []
        for leaves, treedef, mask in self.flat:
            filled = [
                _no_float0(next(cts)) if keep else _zero_cotangent(x)
                for x, keep in zip(leaves, mask)
            ]
            out.append(jax.tree_util.tree_unflatten(treedef, filled))
        return tuple(out)


def _zero_cotangent(leaf):
    """The cotangent of a leaf that is not differentiated: float zeros for an integer array, else None."""
    if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        import jax.numpy as jnp

        return jnp.zeros(leaf.shape, jnp.result_type(float))
    return None


def _no_float0(value):
    """JAX's ``float0`` tangent of an integer value as float zeros (s2s's derivatives are never integers)."""
    import jax
    import jax.numpy as jnp

    if getattr(value, "dtype", None) == jax.dtypes.float0:
        return jnp.zeros(value.shape, jnp.result_type(float))
    return value


def _to_numpy(tree, args=()):
    """NumPy arrays for JAX's; an argument handed back as it is copied, so a result shares no memory with
    the caller's arrays (JAX's results never do: the aliasing check reads ``rt.foreign`` as fresh).
    """
    import jax

    given = {id(leaf) for leaf in jax.tree_util.tree_leaves(args)}

    def leaf_of(leaf):
        if isinstance(leaf, jax.Array):
            return np.asarray(leaf)
        return (
            leaf.copy() if isinstance(leaf, np.ndarray) and id(leaf) in given else leaf
        )

    return jax.tree_util.tree_map(leaf_of, tree)


# --- what may be called this way --------------------------------------------------------------


def code_of(obj):
    """The Python function that runs when ``obj`` is called (through partials, bound methods, wrappers
    such as ``jax.jit`` and ``jax.custom_jvp``, and a callable object's ``__call__``), or None.
    """
    for _ in range(16):
        if isinstance(obj, functools.partial):
            obj = obj.func
        elif inspect.ismethod(obj):
            obj = obj.__func__
        elif inspect.isfunction(obj):
            return inspect.unwrap(obj)
        elif isinstance(obj, type) or not callable(obj):
            return None
        elif callable(getattr(obj, "fun", None)) and type(obj).__module__.startswith(
            "jax"
        ):
            obj = obj.fun  # jax.custom_jvp, jax.custom_vjp
        elif getattr(obj, "__wrapped__", None) is not None:
            obj = obj.__wrapped__  # jax.jit
        else:
            call = inspect.getattr_static(type(obj), "__call__", None)
            return inspect.unwrap(call) if inspect.isfunction(call) else None
    return None


# ``jax.lax`` functions that take functions (s2s reads those it supports: ``lax_control``)
LAX_HIGHER_ORDER = frozenset(
    {
        "associative_scan", "reduce", "custom_root", "custom_linear_solve", "cond",
        "switch", "scan", "map", "while_loop", "fori_loop", "select_n", "sort", "sort_key_val", "top_k",
    }
)  # fmt: skip


def lax_function(obj) -> bool:
    """A public ``jax.lax`` array function that takes no function and that s2s has no op for
    (``conv_general_dilated``, ``cumlogsumexp``): JAX's own code, called as library code is, with JAX's
    derivatives and batching (visible in the generated code as an ``rt.foreign`` call).
    """
    name = getattr(obj, "__name__", None)
    if "jax" not in sys.modules or not isinstance(name, str):
        return False
    lax = sys.modules["jax"].lax
    return getattr(lax, name, None) is obj and name not in LAX_HIGHER_ORDER


def made_by_jax(obj) -> bool:
    """A callable a JAX API made when your code ran (``unravel`` of ``ravel_pytree(INIT)`` at module level: a
    partial of JAX's code over the tree's structure, or a closure of it) that holds no function of yours:
    JAX's code, called as library code is. JAX's public functions themselves are not (s2s's ops).
    """
    if inspect.isfunction(obj):
        # a closure made by a call (``<locals>``), not a public function behind a decorator's wrapper
        if "<locals>" not in obj.__qualname__ or hasattr(obj, "__wrapped__"):
            return False
        module, parts = obj.__module__, [c.cell_contents for c in obj.__closure__ or ()]
        if not parts:
            return False
    elif (
        callable(obj)
        and not isinstance(obj, type)
        and hasattr(obj, "__dict__")
        and not isinstance(
            getattr(obj, "__name__", None), str
        )  # (``jnp.add``, ``jax.nn.relu``: named)
    ):
        module, parts = type(obj).__module__, list(vars(obj).values())
    else:
        return False
    return (module or "").startswith("jax.") and not any(
        _holds_your_code(p, 6) for p in parts
    )


def _holds_your_code(value, depth: int) -> bool:
    """Whether ``value`` (a function, a partial, a container of them) reaches a function of your program."""
    if depth == 0:
        return True  # too deep to tell: not JAX's alone
    if inspect.isfunction(value):
        if not in_library(value.__code__.co_filename):
            return True
        cells = [c.cell_contents for c in value.__closure__ or ()]
        return any(_holds_your_code(c, depth - 1) for c in cells)
    if isinstance(value, (tuple, list)):
        return any(_holds_your_code(v, depth - 1) for v in value)
    if isinstance(value, dict):
        return any(_holds_your_code(v, depth - 1) for v in value.values())
    if callable(value) and not isinstance(value, type) and hasattr(value, "__dict__"):
        return any(_holds_your_code(v, depth - 1) for v in vars(value).values())
    return False


def jax_scipy_function(obj) -> bool:
    """A public ``jax.scipy`` function (``jax.scipy.linalg.expm``): JAX's own code, called as library code
    is, where s2s has no op for it (the resolver asks for ops first)."""
    name = getattr(obj, "__name__", None)
    if "jax.scipy" not in sys.modules or not isinstance(name, str):
        return False
    module = getattr(obj, "__module__", None) or ""
    if not module.startswith(("jax.scipy", "jax._src.scipy")):
        return False
    return any(
        getattr(found, name, None) is obj
        for key, found in list(sys.modules.items())
        if key.startswith("jax.scipy") and "._" not in key
    )


def library_code(obj) -> str | None:
    """The name of the library (``optax``, ``equinox``) whose JAX code runs when ``obj`` is called, or None:
    ``obj`` runs a Python function of an installed package outside s2s's vocabulary, whose module imports
    JAX; ``jax`` for a ``jax.lax`` array function s2s has no op for (``lax_function``) and a public
    ``jax.scipy`` function (``jax_scipy_function``).
    """
    if lax_function(obj) or jax_scipy_function(obj) or made_by_jax(obj):
        return "jax"
    code = code_of(obj)
    if code is None or not hasattr(code, "__code__"):
        return None
    return _library_of(getattr(code, "__module__", None) or "", code.__code__)


@functools.lru_cache(maxsize=1024)
def _library_of(module: str, code) -> str | None:
    top = module.split(".")[0]
    if top in VOCABULARY or not in_library(code.co_filename):
        return None
    return top if _imports_jax(module) else None


@functools.cache
def _imports_jax(name: str) -> bool:
    module = sys.modules.get(name)
    if module is None:
        return False
    for value in list(vars(module).values()):
        owner = (
            value.__name__
            if isinstance(value, types.ModuleType)
            else getattr(value, "__module__", None)
        )
        if isinstance(owner, str) and owner.split(".")[0] == "jax":
            return True
    return False


def describe(obj) -> str:
    """A readable name for a callable: ``optax.l2_loss``, ``MLP.__call__``, ``Linear``."""
    code = code_of(obj)
    called = not inspect.isfunction(obj) and not inspect.ismethod(obj)
    if code is not None and called and getattr(code, "__name__", "") == "__call__":
        return f"a {type(obj).__qualname__} (`{type(obj).__module__}.{type(obj).__qualname__}`)"
    target = code if code is not None else obj
    module = getattr(target, "__module__", None) or type(obj).__module__
    name = getattr(target, "__qualname__", None) or type(obj).__qualname__
    if module.startswith(
        loader.PREFIX
    ):  # a function of yours, copied into generated code
        return name
    parts = [p for p in module.split(".") if not p.startswith("_")]
    for k in range(1, len(parts)):  # the shortest public path: ``jax.nn.relu``
        found = sys.modules.get(".".join(parts[:k]))
        if found is not None and getattr(found, name, None) in (target, obj):
            return ".".join([*parts[:k], name])
    public = ".".join(parts)
    return f"{public}.{name}" if public else name


def _users_place(code) -> str:
    """Where a function of the user's is written: its file, or for a function s2s generated (a local
    function written into a generated module) the user's line it comes from."""
    path = code.__code__.co_filename
    if path not in loader.GENERATED:
        return path
    from .located import origin_of

    found = origin_of(path, code.__code__.co_firstlineno + 1)
    if found.path in loader.GENERATED:
        return "a function of the transformed one"
    return f"{found.path}:{found.line}"


def _refusal(obj) -> tuple[str, str]:
    """The message and hint for a callable that ``rt.foreign`` may not call (see ``library_code``)."""
    what = f"`{describe(obj)}`, called through a parameter or a value here,"
    code = code_of(obj)
    if code is None or not hasattr(code, "__code__"):
        return (
            f"{what} is no Python function s2s or JAX can read",
            "call a function by its name, or a library's JAX code",
        )
    top = (getattr(code, "__module__", None) or "").split(".")[0]
    if top in VOCABULARY:
        return (
            f"{what} is {top}'s own: s2s reads {top}'s functions as ops where they are called by name",
            f"call it by its name (`{describe(obj)}(...)`)",
        )
    if not in_library(code.__code__.co_filename):
        return (
            f"{what} is your own code ({_users_place(code)}): s2s transforms your functions from "
            "their source, and cannot know which one a parameter holds",
            "call the function by its name, or let s2s read the parameter as bound: give it the function as "
            "its default (`act=relu`), or transform `functools.partial(f, act=relu)`",
        )
    return (
        f"{what} comes from `{top}`, which does not use JAX: JAX cannot trace it",
        "call it outside the transformed function and pass its result in",
    )
