"""What a callable handed to s2s is, so that what s2s transforms is what the caller runs.

``classify(obj)`` tells, by type and code identity (never by names a user
object could share), which of these ``obj`` is:

- ``Plain(fn)``: a Python function. Its *own* code runs, so its own code is
  read: the wrapper of a ``functools.wraps`` decorator is read as the wrapper
  (its ``__wrapped__`` is never followed);
- ``Generated(obj)``: a function s2s transformed (``s2s.grad(f)``), read as
  the module it generated (``obj.s2s_generated_function``);
- ``Custom(obj)``: an s2s or JAX ``custom_jvp``/``custom_vjp`` function,
  read with its rule;
- ``Through(inner, what)``: ``jax.jit``, ``jax.checkpoint``/``jax.remat``,
  ``functools.lru_cache`` or ``@s2s.transform`` of ``inner``: the same math as ``inner``;
- ``Partial(func, args, keywords)``: ``functools.partial``;
- ``Unsupported(what, hint)``: anything else: ``jax.vmap``, ``jax.grad`` and
  JAX's other transformations, ``np.vectorize``, library functions, bound
  methods, objects with ``__call__``, builtins.

``target(obj, api)`` follows ``Through`` and ``Partial`` down to a Plain,
Generated or Custom target and returns it with the ``Binding`` that maps a
call of ``obj`` onto the target's parameters; anything unsupported on the way
is an ``S2SError`` naming the wrapper and what to do instead.
``readable(obj)`` is the plain function whose source a transformation reads.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import linecache
import os
import sys
import types
from typing import NamedTuple

import numpy

from ..binding import Binding
from ..errors import Origin, S2SError
from ..freshness import user_object
from . import function_args, variadic


# records (NamedTuples: cheaper to define than dataclasses, and this module is on every start-up's path)
class Plain(NamedTuple):
    fn: types.FunctionType
    library: str | None = (
        None  # "numpy", "jax", "s2s", ... for a function of a library rather than of the program
    )


class Generated(NamedTuple):
    obj: object  # an ``s2s.api.Transformed`` (not the primal kind)


class Custom(NamedTuple):
    obj: object


class Through(NamedTuple):
    inner: object
    what: str


class Partial(NamedTuple):
    func: object
    args: tuple
    keywords: dict


class Unsupported(NamedTuple):
    what: str
    hint: str


def _probe(x):  # what JAX's wrappers are recognized by: their code, applied to this
    return x


@functools.cache
def _jax_kinds(jax) -> tuple[type, dict]:
    """``jax.jit``'s type and, by the codes of their wrapper functions, JAX's function transformations."""
    kinds = {}
    for name in (
        "vmap",
        "grad",
        "value_and_grad",
        "jacrev",
        "jacfwd",
        "hessian",
        "pmap",
        "checkpoint",
    ):
        transform = getattr(jax, name, None)
        if transform is not None:
            kinds.setdefault(_fingerprint(transform(_probe)), f"jax.{name}")
    return type(jax.jit(_probe)), kinds


# JAX's transformations s2s makes itself when a function made by them is called inside transformed code:
# the options s2s takes, and those that must hold their defaults (else the function is refused)
_OPTIONS = {
    "jax.vmap": (("in_axes", "out_axes", "axis_name", "axis_size"), {"spmd_axis_name": None}),
    "jax.grad": (("argnums", "has_aux"), {"holomorphic": False, "allow_int": False}),
    "jax.value_and_grad": (("argnums", "has_aux"), {"holomorphic": False, "allow_int": False}),
}  # fmt: skip
# a function JAX made -> s2s's transformation of its function, made once
_made: dict = {}


def _options(obj, kind: str) -> dict | None:
    """The options the ``jax.vmap``/``jax.grad``/``jax.value_and_grad`` function ``obj`` was made with, read
    from the closures of JAX's wrappers (a few levels deep), where s2s takes them all; else None (another
    JAX version, an option s2s does not take)."""
    names, defaults = _OPTIONS[kind]
    seen, todo = set(), [(obj, 0)]
    while todo:
        fn, depth = todo.pop()
        if id(fn) in seen or depth > 3:
            continue
        seen.add(id(fn))
        held = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        values = {}
        for k, cell in held.items():
            with contextlib.suppress(ValueError):  # an empty cell
                values[k] = cell.cell_contents
        if set(names) <= values.keys():
            if any(values.get(k, v) != v for k, v in defaults.items()):
                return None
            found = {k: values[k] for k in names}
            if "axis_name" in found and not isinstance(
                found["axis_name"], (str, type(None))
            ):
                found["axis_name"] = None  # JAX's "no name" sentinel
            return found
        todo += [(v, depth + 1) for v in values.values() if inspect.isfunction(v)]
    return None


def as_s2s(obj):
    """s2s's transformation for a function ``jax.grad``/``jax.value_and_grad``/``jax.vmap`` made (its options
    read from JAX's wrapper), handed to a transformation inside transformed code; else ``obj`` itself.
    """
    jax = sys.modules.get("jax")
    if jax is None or not inspect.isfunction(obj):
        return obj
    kind = _jax_kinds(jax)[1].get(_fingerprint(obj))
    options = _options(obj, kind) if kind in _OPTIONS else None
    return obj if options is None else _as_s2s(obj, kind, options)


def _as_s2s(obj, kind, options):
    """s2s's transformation of the function inside ``obj`` (made by JAX's ``kind``) with its options."""
    import s2s

    if obj not in _made:
        maker = {
            "jax.vmap": s2s.vmap,
            "jax.grad": s2s.grad,
            "jax.value_and_grad": s2s.value_and_grad,
        }
        # (``jax.grad(jax.grad(u))`` made at module level: the inner one s2s's too)
        _made[obj] = maker[kind](as_s2s(obj.__wrapped__), **options)
    return _made[obj]


def _fingerprint(fn) -> tuple:
    """The code of ``fn``, and of the function it wraps when that one is JAX's too (``api_boundary`` wrappers)."""
    codes = [fn.__code__]
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        inner = cell.cell_contents if name == "fun" else None
        if inspect.isfunction(inner) and _library_of(inner.__code__) == "jax":
            codes.append(inner.__code__)
    return tuple(codes)


@functools.lru_cache(maxsize=8)
def _library_dirs(imported: frozenset) -> dict:
    """Folders of the libraries among ``imported`` and of numpy and s2s (its package and its runtime)."""
    from .. import runtime

    files = {
        "numpy": numpy.__file__,
        "s2s": os.path.dirname(__file__),
        "s2s.runtime": runtime.__file__,
    }
    files.update(
        {
            name: sys.modules[name].__file__
            for name in imported
            if getattr(sys.modules[name], "__file__", None)
        }
    )
    return {name: os.path.dirname(path) + os.sep for name, path in files.items()}


_OWNER = {"jaxlib": "jax", "s2s.runtime": "s2s"}


def _library_of(code) -> str | None:
    """The library (``numpy``, ``jax``, ``s2s``, ...) whose files define ``code``, None for user code."""
    path = os.path.abspath(code.co_filename)
    imported = frozenset(
        name for name in ("jax", "jaxlib", "scipy") if name in sys.modules
    )
    for name, folder in _library_dirs(imported).items():
        if path.startswith(folder):
            return _OWNER.get(name, name)
    return None


def _name(obj) -> str:
    return (
        getattr(obj, "__qualname__", None)
        or getattr(obj, "__name__", None)
        or type(obj).__name__
    )


def classify(obj, called=False):
    """What ``obj`` is, as one of ``Plain``, ``Generated``, ``Custom``, ``Through``, ``Partial``, ``Unsupported``.

    ``called``: ``obj`` is called by code s2s transforms (a module-level ``jax.vmap`` of a function, the
    JAX tutorial's ``batched_predict``, is then ``s2s.vmap`` of it). Handed to the API itself, a
    ``jax.vmap`` stays an error whose hint says to map the transformed function instead.
    """
    from .. import custom
    from ..api import Transformed
    from ..jacobians import Jacobian
    from ..nested_vmap import NestedVmapped
    from ..vmapping import Vmapped

    if isinstance(obj, Transformed):
        return (
            Through(obj.fn, "@s2s.transform")
            if obj.kind == "primal"
            else Generated(obj)
        )
    if isinstance(obj, (custom.custom_jvp, custom.custom_vjp)):
        return Custom(obj)
    if isinstance(obj, Vmapped):
        return Generated(obj.at())
    if isinstance(
        obj, NestedVmapped
    ):  # (the GP kernel matrix: ``vmap(vmap(k, (None, 0)), (0, None))``)
        return Generated(obj.at())
    if isinstance(obj, Jacobian):
        return Unsupported(
            f"s2s.{obj.kind} of `{_name(obj.fun)}`, which s2s does not transform again",
            "differentiate `s2s.grad(f)` instead (`s2s.jacfwd(s2s.grad(f))` is the Hessian), or use s2s.hessian",
        )
    if isinstance(obj, functools.partial):
        return Partial(obj.func, obj.args, dict(obj.keywords))
    if isinstance(obj, functools._lru_cache_wrapper):
        # ``@functools.lru_cache``/``@functools.cache``: a cache changes no value the function computes
        return Through(obj.__wrapped__, "functools.lru_cache")
    jax = sys.modules.get("jax")
    if jax is not None:
        jit_type, kinds = _jax_kinds(jax)
        if isinstance(obj, (jax.custom_jvp, jax.custom_vjp)):
            return Custom(obj)
        if isinstance(obj, jit_type):
            return Through(obj.__wrapped__, "jax.jit")
        if inspect.isfunction(obj) and _fingerprint(obj) in kinds:
            kind = kinds[_fingerprint(obj)]
            if kind == "jax.checkpoint":
                return Through(obj.__wrapped__, kind)
            options = _options(obj, kind) if called and kind in _OPTIONS else None
            if options is not None:
                # ``batched = jax.vmap(predict, in_axes=(None, 0))``, ``grad_loss = jax.grad(loss)``: s2s's
                return classify(_as_s2s(obj, kind, options))
            inner = _name(obj.__wrapped__)
            return Unsupported(
                f"`{kind}({inner})`: s2s reads the source of `{inner}` and cannot see what {kind} does to it",
                f"transform the inner function and apply {kind} outside: `{kind}({{api}}({inner}))`"
                + (
                    ", or compose s2s's own transformations"
                    if kind != "jax.vmap" and kind != "jax.pmap"
                    else ""
                ),
            )
    if inspect.isfunction(obj):
        return Plain(obj, _library_of(obj.__code__))
    if isinstance(obj, variadic.Standin):
        return Plain(obj, _library_of(obj.fn.__code__))
    if isinstance(obj, numpy.vectorize):
        return Unsupported(
            f"np.vectorize of `{_name(obj.pyfunc)}`: s2s cannot see what np.vectorize does to it",
            "write the function with array operations, or apply np.vectorize outside the transformed function",
        )
    if inspect.ismethod(obj) and _own_method(obj):
        # ``s2s.grad(model.loss)``: the class's function with ``self`` bound to the object
        from .function_args import bind

        self_name = next(iter(inspect.signature(obj.__func__).parameters))
        return classify(bind(obj.__func__, {self_name: obj.__self__}), called)
    if callable(obj) and user_object(obj):
        # ``s2s.grad(model)``: its class's ``__call__``, ``self`` bound
        return classify(obj.__call__, called)
    if inspect.ismethod(obj):
        return Unsupported(
            f"bound method `{_name(obj.__func__)}` of a {type(obj.__self__).__name__} object",
            "transform a function that takes the arrays it needs as arguments",
        )
    if isinstance(obj, type):
        return Unsupported(f"class `{_name(obj)}`", "transform a function")
    if inspect.isbuiltin(obj) or inspect.isroutine(obj) or isinstance(obj, numpy.ufunc):
        return Unsupported(
            f"`{_name(obj)}`, a builtin or compiled function (not one defined in Python source)",
            "transform a function of your own that calls it",
        )
    return Unsupported(
        f"a {type(obj).__name__} object: s2s transforms Python functions defined in source",
        getattr(  # (``s2s.vjp``'s function says how it is mapped)
            obj,
            "S2S_HINT",
            "transform a function (`def`) that does what its `__call__` does",
        ),
    )


def _own_method(method) -> bool:
    """A method of a user's object (its attributes read as constants) defined in Python by its class."""
    return (
        inspect.isfunction(method.__func__)
        and _library_of(method.__func__.__code__) is None
        and user_object(method.__self__)
    )


def _origin(obj) -> Origin | None:
    """The definition line of the user function inside a wrapper, if there is one, for the error's location."""
    inner = (
        inspect.unwrap(obj)
        if hasattr(obj, "__wrapped__")
        else getattr(obj, "pyfunc", getattr(obj, "__func__", obj))
    )
    code = getattr(inner, "__code__", None)
    if code is None or _library_of(code) is not None:
        return None
    text = linecache.getline(code.co_filename, code.co_firstlineno)
    if not text:
        return None
    col = len(text) - len(text.lstrip())
    return Origin(
        code.co_filename,
        code.co_firstlineno,
        col,
        len(text.rstrip()),
        text.rstrip("\n"),
    )


def unsupported(obj, found: Unsupported, api: str | None) -> S2SError:
    """The error for ``obj``: handed to the API function ``api``, or (None) called inside transformed code."""
    if api is None:
        hint = "call a function defined in source instead, or apply the wrapper outside the function s2s transforms"
        return S2SError(f"s2s cannot read {found.what}", _origin(obj), hint)
    return S2SError(
        f"{api} cannot transform {found.what}",
        _origin(obj),
        found.hint.replace("{api}", api),
    )


def target(obj, api: str = "s2s"):
    """``(target, binding)``: the Plain function, Transformed or custom function that runs when ``obj`` is called,
    and how a call of ``obj`` binds to the target's parameters."""
    if not callable(obj):
        raise TypeError(f"{api}: expected a callable value, got {obj!r}")
    partials = []
    found = classify(obj)
    while isinstance(found, (Through, Partial)):
        if isinstance(found, Partial):
            partials.append(found)
            found = classify(found.func)
        else:
            found = classify(found.inner)
    if isinstance(found, Plain) and found.library is not None:
        name = found.fn.__name__
        found = Unsupported(
            f"`{_name(found.fn)}`, a function of {found.library}, not of your program",
            f"transform a function of your own that calls it: `def f(x): return {name}(x)`",
        )
    if isinstance(found, Unsupported):
        raise unsupported(obj, found, api)
    if isinstance(found, Generated):
        binding, fn = found.obj.binding, found.obj
    else:
        fn = found.fn if isinstance(found, Plain) else found.obj
        binding = Binding.of(fn.fun if isinstance(found, Custom) else fn)
    for p in reversed(partials):
        binding = binding.partial(p.args, p.keywords)
    if isinstance(found, Plain) and not binding.variadic:
        held = _held_functions(binding)
        if (
            held
        ):  # ``def loss(w, x, act=np.tanh, model=MODEL)``: read with ``act`` and ``model`` bound
            fn, binding = function_args.bind(fn, held), binding.holding(held)
    return fn, binding


def _held_functions(binding) -> dict:
    """The parameters that a call leaving them out binds to a function, an object of the program or a
    module (a default, ``xp=jnp``, or what a ``functools.partial`` holds): s2s reads them as it reads a
    helper given them.
    """
    held = {}
    for name, value in zip(binding.names, binding.placed_call()):
        if function_args.bindable(value):
            held[name] = value
    return held


def describe(obj) -> str:
    """A short name for ``obj`` in messages: ``f``, ``jax.jit(f)``, ``functools.partial(f, ...)``."""
    found = classify(obj) if callable(obj) else None
    if isinstance(found, Through):
        return f"{found.what.lstrip('@')}({describe(found.inner)})"
    if isinstance(found, Partial):
        return f"functools.partial({describe(found.func)}, ...)"
    return _name(obj)


def readable(obj):
    """The plain function whose source s2s reads for ``obj`` (a transformed function: the function it generated)."""
    found = classify(obj)
    while not isinstance(found, Plain):
        if isinstance(found, Generated):
            found = classify(found.obj.s2s_generated_function)
        elif isinstance(found, Through):
            found = classify(found.inner)
        elif isinstance(found, Custom):
            found = classify(found.obj.fun)
        elif isinstance(found, Partial):
            what = f"`functools.partial` of `{_name(found.func)}`"
            raise S2SError(
                f"s2s cannot read {what} as a function definition",
                _origin(found.func),
                "call the function itself",
            )
        else:
            raise unsupported(obj, found, None)
    return found.fn


__all__ = [
    "Custom",
    "Generated",
    "Partial",
    "Plain",
    "Through",
    "Unsupported",
    "classify",
    "describe",
    "readable",
    "target",
]
