"""Functions passed to helpers, bound per call: ``mlp(params, x, act=np.tanh)`` called with ``relu``.

A helper parameter that receives a function known where the call is read —
a module-level function of the user's, a NumPy, ``jax.numpy``, ``jax.nn`` or
SciPy function, or any other module-level function, passed by name or left
to a function default — is bound to that function: the helper is read once
per such binding, with the parameter's name standing for the function in its
body. ``mlp(params, x, relu)`` calls ``mlp_relu(params, x)``, whose
``act(h)`` is ``relu(h)``; ``mlp(params, x)`` with the default ``np.tanh``
calls ``mlp_tanh(params, x)``, whose ``act(h)`` is ``xp.tanh(h)``.

``Bound`` stands for a helper with some parameters bound (one object per
helper and binding, so generated modules and compilations are reused); its
signature is the helper's without them.
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref

import numpy as np

from . import object_layouts
from .variadic import Specialized, Standin


def is_function(obj) -> bool:
    """Whether ``obj`` is a function a helper can be bound to: a plain function, a NumPy ufunc, an op
    s2s knows (``jax.nn.relu``), or a ``functools.partial`` of one; not a class, an array or another
    callable object."""
    if obj is None or isinstance(obj, type) or not callable(obj):
        return False
    if isinstance(
        obj, (types.FunctionType, types.BuiltinFunctionType, np.ufunc, Bound)
    ):
        return True
    if isinstance(
        obj, functools.partial
    ):  # ``partial(jax.nn.leaky_relu, negative_slope=0.1)``
        return is_function(obj.func)
    from . import identity, spellings

    return callable(obj) and (
        spellings.canonical_op(obj) is not None or identity.library_op(obj) is not None
    )


def is_program_object(obj) -> bool:
    """An instance of a class of the program (``MODEL = Model(2.0)`` at module level): a helper called
    with it is bound to it, its attributes read as constants and its methods called with ``self`` bound,
    as ``MODEL.apply(w, x)`` is read. Not an array, a container, a number, nor an object of a class
    defined outside the program (the standard library's, an installed package's: a ``Logger``, a
    ``DataFrame``).
    """
    cls = type(obj)
    if (
        cls.__module__ in ("builtins", "types", "functools")
        or cls.__module__.partition(".")[0] == "s2s"  # s2s's own (a ``Default`` number)
        or isinstance(obj, (int, float, complex, str, bytes, np.ndarray))
    ):
        return False  # (before the checks that import the compiler: checked-in modules run without it)
    from .spellings import is_library

    return (
        not is_library(obj)
        and defined_in_the_program(cls)
        and not isinstance(obj, (type, Bound, types.ModuleType, np.generic))
        and not callable(getattr(cls, "__array__", None))
        and inspect.isclass(cls)
        and "__dict__" in dir(obj)
        and not is_function(obj)
    )


def defined_in_the_program(cls) -> bool:
    """Whether ``cls`` comes from a file of the program: not the standard library's, nor an installed
    package's (``site-packages``), nor a built-in module's."""
    import sys
    import sysconfig

    path = getattr(sys.modules.get(cls.__module__), "__file__", None)
    if path is None:
        return cls.__module__ == "__main__"
    installed = {
        sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
    return not any(path.startswith(folder) for folder in installed)


class Bound(Standin):
    """``fn`` with the parameters in ``fixed`` (name -> function) bound: what s2s reads for such a call."""

    def __init__(self, fn, fixed: tuple):
        super().__init__(fn)
        self.fixed = fixed

    @property
    def __signature__(self) -> inspect.Signature:
        signature = inspect.signature(self.fn, follow_wrapped=False)
        names = {name for name, _ in self.fixed}
        return signature.replace(
            parameters=[p for p in signature.parameters.values() if p.name not in names]
        )

    def __call__(self, *args, **kwargs):
        fixed = {k: v.value if isinstance(v, Constant) else v for k, v in self.fixed}
        return self.fn(*args, **kwargs, **fixed)

    def __repr__(self):
        bound = ", ".join(f"{k}={getattr(v, '__name__', v)}" for k, v in self.fixed)
        return f"<{self.__qualname__} with {bound}>"


_BOUND: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def bind(fn, fixed: dict) -> Bound:
    """The one ``Bound`` of ``fn`` with ``fixed`` (functions compared by identity, constants by value); of
    a ``Bound``, its function with both bindings (a method's ``self``, then what a call passes).
    """
    if isinstance(fn, Bound):
        fn, fixed = fn.fn, {**dict(fn.fixed), **fixed}
    key = tuple(
        sorted(
            (name, obj if isinstance(obj, Constant) else id(obj))
            for name, obj in fixed.items()
        )
    )
    by_binding = _BOUND.setdefault(fn, {})
    if key not in by_binding:
        by_binding[key] = Bound(fn, tuple(sorted(fixed.items())))
    return by_binding[key]


def name_of(bound: Bound) -> str:
    """A readable name for a bound helper: the functions' names follow its own (``mlp_relu``; an object
    by its parameter's name)."""
    parts = [bound.fn.__name__] + [
        (getattr(f, "__name__", None) or n).rpartition(".")[2] for n, f in bound.fixed
    ]  # (a module by its last name: ``norm_numpy``; a constant by its string or its parameter's name)
    return "_".join(p.strip("_<>") for p in parts)


def bound_call(resolver, fn, args: list, node) -> tuple[Bound | None, list]:
    """A call of the helper ``fn`` whose parameters receive functions known where it is read (passed by
    name, or defaults): ``fn`` bound to them, and the call's other (resolved) ``args``; ``(None, args)``
    when no parameter is bound. A local function passed to it is a located error."""
    import libcst as cst

    from ..errors import UnsupportedSyntax

    # ``*args`` too, and a method with ``self`` bound
    readable = inspect.isfunction(fn) or isinstance(fn, (Specialized, Bound))
    if not readable:
        return None, args
    signature = inspect.signature(fn, follow_wrapped=False)
    starred = [k for k, a in enumerate(node.args) if a.star]
    try:
        if (
            starred
        ):  # ``rk4_step(func, y, t, dt, *args)``: the arguments before the first ``*``
            passed = signature.bind_partial(
                *[a.value for a in node.args[: starred[0]] if a.keyword is None]
            ).arguments
        else:
            passed = signature.bind(
                *[a.value for a in node.args if a.keyword is None],
                **{a.keyword.value: a.value for a in node.args if a.keyword},
            ).arguments
    except TypeError:
        return None, args  # the helper's binding says what does not match
    local = resolver._local_fns.keys() | resolver._outer_fns.keys()
    for a in node.args:
        if isinstance(a.value, cst.Name) and a.value.value in local:
            resolver.fail(a.value, f"the local function `{a.value.value}` passed to the helper `{fn.__name__}`",
                          f"define `{a.value.value}` at module level and pass its name: s2s binds "
                          f"`{fn.__name__}` to the module-level functions it is called with", UnsupportedSyntax)  # fmt: skip
    # the parameters the function names itself (not those its ``*args``/``**kwargs`` are read as)
    own = inspect.signature(getattr(fn, "fn", fn), follow_wrapped=False).parameters
    fixed, given = {}, set()
    # (the parameters its body compares with literals or tests whole: ``mode == "same"``, ``if callback:``)
    tested = object_layouts.tested_parameters(fn) & set(own)
    for name, param in signature.parameters.items():
        if (
            name in passed
            and name not in own
            and _function_value(resolver, passed[name])
        ):
            resolver.fail(
                passed[name],
                f"a function passed to `{fn.__name__}` through its `*args` or `**kwargs` "
                f"(as `{name}`)",
                f"name the parameter in `{fn.__name__}` (`def {fn.__name__}(h, act=np.tanh, **kwargs)`): "
                "s2s binds a helper to the functions it is called with by parameter",
                UnsupportedSyntax,
            )
        constant = (
            _constant(passed.get(name, param.default))
            if name in tested
            and (name in passed or not starred)  # (a ``*`` spread may fill it)
            else None
        )
        if constant is not None:
            # ``acc=None`` then ``if acc is None: acc = []``, ``mode="same"`` then ``if mode == "same":``:
            # the test is read where the helper is
            fixed[name] = constant
            if name in passed:
                given.add(id(passed[name]))
            continue
        if name in passed:
            obj = _function_value(resolver, passed[name])
            if obj is not None:
                given.add(id(passed[name]))
        else:
            default = param.default
            obj = default if bindable(default) else None
        if obj is not None:
            fixed[name] = obj
    if not fixed:
        return None, args
    # the resolved ``args`` follow the call's own up to its first ``*`` (a spread of the caller's ``*args``
    # stands for as many as it holds): the bound ones are dropped there, or by keyword after it
    first = next((i for i, a in enumerate(node.args) if a.star), len(node.args))
    dropped = {i for i in range(first) if id(node.args[i].value) in given}
    keywords = {
        a.keyword.value
        for a in node.args[first:]
        if a.keyword is not None and id(a.value) in given
    }
    kept = [
        new
        for i, new in enumerate(args)
        if i not in dropped
        and not (
            i >= first and new.keyword is not None and new.keyword.value in keywords
        )
    ]
    return bind(fn, fixed), kept


class Constant:
    """A string, number, bool or None a helper's parameter is bound to where a call passes it written out
    (or leaves it its default), and the helper tests it: its body then starts ``name = value``.
    """

    def __init__(self, value):
        self.value = value
        self.__name__ = value if isinstance(value, str) and value.isidentifier() else ""

    def __eq__(self, other):
        return isinstance(other, Constant) and _same(self.value, other.value)

    def __hash__(self):
        return hash((type(self.value), self.value))

    def __repr__(self):
        return repr(self.value)


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


_LITERALS = (str, int, bool, type(None))


def _constant(value) -> Constant | None:
    """The ``Constant`` a literal written in a call (or a parameter's default) stands for, else None."""
    import libcst as cst

    if type(value) in _LITERALS:
        return Constant(value)
    if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
        return Constant({"None": None, "True": True, "False": False}[value.value])
    if isinstance(value, cst.SimpleString) and "f" not in value.prefix.lower():
        evaluated = value.evaluated_value
        return Constant(evaluated) if isinstance(evaluated, str) else None
    if isinstance(value, cst.Integer):
        return Constant(int(value.evaluated_value))
    return None


def _function_value(resolver, node):
    """The function a call's argument names, if it is one known there (not a local value), else None."""
    import libcst as cst

    if not isinstance(node, (cst.Name, cst.Attribute)):
        return None
    chain = resolver._chain(node)
    if chain is None or chain[0] in resolver.locals:
        return None
    obj = resolver._callee_object(node)
    return obj if bindable(obj) else None


def bindable(obj) -> bool:
    """What a helper is bound to where it is called with it: a function, an object of the program, or
    a module (the array-API idiom: ``def norm(v, xp=np)``, ``norm(v, jnp)``)."""
    return (
        is_function(obj) or is_program_object(obj) or isinstance(obj, types.ModuleType)
    )
