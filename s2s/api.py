"""The public API, with JAX's semantics: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``linearize``, ``@transform``.

Each transformed function is generated once (from source), loaded from a
real file, and run compiled through XLA with ``jax.jit`` (cached per shapes
and dtypes; Python ints, bools and strings are compile-time constants), or
eagerly on NumPy with ``backend="numpy"``. It is itself a valid JAX function:
``jax.jit(s2s.grad(f))`` works.

What runs is what is transformed: calls bind with Python's rules for the
function handed in (``binding``); wrappers are transformed by their meaning
or refused by name (``frontend.wrappers``); a module whose baked-in globals
changed is generated again before the next call (``freshness``); complex
inputs to a derivative are refused with a TypeError.
"""

from __future__ import annotations

import functools
from collections import OrderedDict

import numpy as np

from . import checked_in, module_store
from .binding import Binding
from .display import ShowsSource
from .dtypes import (
    check_float_inputs,
    check_real,
    check_real_derivatives,
    dtype_of,
    in_primal_dtypes,
)
from .errors import S2SError
from .freshness import GENERATED_KEY
from .frontend import object_layouts, variadic, wrappers
from .generated import Generated
from .runtime import backends, loader
from .runtime.trees import _children, _is_record, tree_leaves, tree_map

# (target, kinds, argnums, has_aux) -> Generated, most recently used last
_CACHE: OrderedDict = OrderedDict()


def _made_from(target):
    """What a module generated for ``target`` is made from: the function itself, or for a transformed one the
    request whose generated code is read (the ``vjp`` a Hessian pushes tangents through is one request,
    whichever backend each of its ``Transformed`` runs on)."""
    generated = isinstance(target, Transformed) and target.kind != "primal"
    if generated and target._variadic is None:
        return (_made_from(target.target), target.kind, target.argnums, target.has_aux)
    return target


def _generated(target, kinds, argnums, has_aux) -> Generated:
    """The generated module for this request: a fresh checked-in one (``checked_in``), else one an earlier
    process made from what is still here (``module_store``), else made here (and kept for later processes);
    made again when a value it baked in has changed since."""
    key = (_made_from(target), kinds, argnums, has_aux)
    found = _CACHE.get(key)
    if found is None and len(kinds) == 1:
        found = checked_in.find(target, kinds[0], argnums, has_aux)
    if found is None:
        found = module_store.find(target, kinds, argnums, has_aux)
    if found is None or not found.fresh():
        from .codegen import generate

        if kinds == ("batch",):  # ``argnums`` holds the axes: a ``vmapping.Axes``
            found = generate(target, kinds, axes=argnums.spec)
        else:
            found = generate(target, kinds, argnums, has_aux)
        module_store.keep(target, kinds, argnums, has_aux, found)
    _CACHE[key] = found
    _CACHE.move_to_end(key)
    while len(_CACHE) > 256:
        _CACHE.popitem(last=False)
    return found


class Transformed(ShowsSource):
    """A function transformed by s2s: call it like the original; ``.source`` is the generated module.

    Calls bind with the original's signature (``functools.partial`` arguments
    included) and pass every parameter positionally to the generated function.
    Before each call, the module is checked against the values it baked in
    (``Generated.fresh``) and generated again if one of them has changed.
    """

    def __init__(
        self,
        fn,
        kind,
        argnums=0,
        has_aux=False,
        backend="xla",
        *,
        flat=False,
        api=None,
        allow_int=False,
    ):
        api = api or "s2s." + ("transform" if kind == "primal" else kind)
        self.target, self.binding = wrappers.target(fn, api)
        # not ``fn.__dict__``: a Transformed ``fn`` caches its own module there
        functools.update_wrapper(self, fn, updated=())
        # a derivative is not the function it came from: nothing may unwrap it into ``fn``
        if kind != "primal":
            del self.__wrapped__
        self.__signature__ = self.binding.signature
        self.fn = fn
        self.kind = kind
        self.has_aux = has_aux
        self.backend = backend
        # integer and boolean leaves among the differentiated arguments: float0 gradients, as JAX's
        self.allow_int = allow_int
        # ``*args``/``**kwargs``: transformed at each call's shape (``frontend.variadic``), with these argnums
        self._variadic = argnums if self.binding.variadic else None
        if (
            self._variadic is not None
            and self.binding.partial_arguments
            and not isinstance(fn, functools.partial)
        ):  # (a partial behind a wrapper: its arguments are not at hand)
            raise S2SError(
                f"{api}: a wrapped functools.partial of `{getattr(self.target, '__name__', 'a function')}`, "
                "which takes `*args`/`**kwargs`: s2s names them at each call's shape",
                hint="transform the partial itself (without the wrapper), or the function with every argument",
            )
        # argnums as given: ``flat`` ones already index the generated function's parameters (s2s's own internal
        # requests), a primal has none, a variadic function's are read at each call's shape
        as_given = flat or kind == "primal" or self._variadic is not None
        self.argnums = argnums if as_given else self.binding.argnums(argnums, api)
        self._negative = (
            None if as_given or not Binding.negative(argnums) else (argnums, api)
        )

    def at(self, *args, **kwargs) -> Transformed:
        """This transformation for calls shaped like ``f(*args, **kwargs)``: itself, or, when ``f`` takes
        ``*args``/``**kwargs``, the one of ``f`` at that call's shape (its ``.source`` is the module such calls run);
        where the arguments hold objects of the program's classes, the one read for them (``object_layouts``).
        """
        if self._variadic is None:
            held = self._held(self.binding(args, kwargs))
            return self if held is None else held
        return _transformed(
            self._at(args, kwargs),
            self.kind,
            self._variadic,
            self.has_aux,
            self.backend,
            allow_int=self.allow_int,
        )

    def _at(self, args, kwargs):
        """What this transforms for the call ``f(*args, **kwargs)`` of a function with ``*args``/``**kwargs``."""
        if isinstance(self.target, Transformed):
            return self.target.at(*args, **kwargs)
        if self.binding.partial_arguments:  # ``partial(loss, activation="gelu")``
            return variadic.at_call(self.fn, args, kwargs)
        return variadic.specialize(
            self.target, variadic.shape_of(self.binding.signature.bind(*args, **kwargs))
        )

    @functools.cached_property
    def generated(self) -> Generated:
        if self._variadic is not None:
            raise S2SError(
                f"`{getattr(self.target, '__name__', 'the function')}` takes `*args`/`**kwargs`: s2s generates its "
                "code for each call's shape (how many arguments `*args` receives, which keywords `**kwargs`)",
                hint="read `.at(*args, **kwargs).source` for the calls you make",
            )
        return _generated(self.target, (self.kind,), self.argnums, self.has_aux)

    def _refresh(self) -> bool:
        """Drop the module (and its compilations) if a value it baked in has changed; whether it did."""
        generated = self.__dict__.get("generated")
        if generated is None or generated.watch is None or generated.watch.fresh():
            return False
        for name in ("generated", "_entry", "_function", "_runner", "_direct"):
            self.__dict__.pop(name, None)
        return True

    @property
    def source(self) -> str:
        """The generated module's text."""
        self._refresh()
        return self.generated.text

    @functools.cached_property
    def _entry(self):
        """The generated function, as its module defines it."""
        generated = self.generated
        stem = getattr(self.target, "__name__", None) or "function"
        injected = generated.injected
        if self.backend == "numpy" and injected:
            # a module constant made with jax.numpy runs as NumPy's too (its namespace is the arguments')
            injected = {k: backends._to_numpy(v) for k, v in injected.items()}
        module = loader.load_module(generated.text, stem, injected, generated.path)
        module.__dict__[GENERATED_KEY] = (
            generated  # code read from this module depends on what it baked in
        )
        return getattr(module, generated.entries[self.kind])

    @functools.cached_property
    def _function(self):
        """The generated function, called with every argument positionally."""
        return loader.positional(self._entry)

    @property
    def s2s_generated_function(self):
        """The generated function that transforming this again reads (None for ``@transform``: the user's own is read)."""
        if self.kind == "primal":
            return None
        self._refresh()
        entry = self._entry
        # what made it (``program`` maps an inner ``vmap``'s module again, over both axes)
        entry.s2s_made_by = self
        return entry

    @functools.cached_property
    def _runner(self):
        return backends.Runner(self._function, self.backend)

    def _current_runner(self):
        self._refresh()
        return self._runner

    def __call__(self, *args, **kwargs):
        direct = self.__dict__.get("_direct")
        if direct is not None and not kwargs:
            out = direct(args)
            if out is not MISSED:
                return out
        if self._variadic is not None:
            return self.at(*args, **kwargs)(*args, **kwargs)
        if self._negative is not None and len(args) != len(self.binding.positional):
            spec, api = self._negative
            argnums = self.binding.for_call(spec, len(args), api)
            return _transformed(
                self.fn,
                self.kind,
                argnums,
                self.has_aux,
                self.backend,
                allow_int=self.allow_int,
            )(*args, **kwargs)
        args = self.binding(args, kwargs)
        if self.kind in ("grad", "value_and_grad"):
            check_float_inputs(args, self.argnums, self.kind, self.allow_int)
        held = self._held(args)
        if (
            held is not None
        ):  # objects of the program's classes: the function read for where they are
            return held._finish(held._current_runner(), args, kwargs)
        runner = self.__dict__.get("_runner")
        if runner is None or self._refresh():
            runner = self._runner
        return self._finish(runner, args, kwargs)

    def _held(self, args) -> Transformed | None:
        """This transformation of the function read for the objects of the program's classes ``args``
        hold (``held_objects``), or None where they hold none."""
        held = held_target(self, self.binding.names, args)
        return None if held is self else held

    def _finish(self, runner, args, kwargs):
        computed = out = runner(*args)
        if self.kind in ("grad", "value_and_grad"):
            out = in_primal_dtypes(
                out,
                args,
                self.argnums,
                self.kind,
                self.has_aux,
                self.allow_int,
                self.target,
            )
        if not kwargs and self._variadic is None and len(args) == self.binding._fast:
            self._remember(runner, args, computed, out)
        return out

    def _remember(self, runner, args, computed, out):
        """Let the next calls with ``args``'s tree structure and dtypes go straight to the compiled function
        (``_Direct``), where this one needed nothing of the full path: no static argument, no cast.
        """
        if runner.backend != "xla" or runner._holds:
            return
        jitted = runner._jitted.get(())
        if jitted is None or any(backends._is_static(a) for a in args):
            return
        if any(backends.in_order(a) is not a for a in args):
            return  # a dict in the caller's key order: the runner passes it as ``InOrder``
        if computed is not out and any(
            a is not b for a, b in zip(tree_leaves(computed), tree_leaves(out))
        ):
            return  # a gradient cast to its primal's dtype: every call takes the full path
        direct = self.__dict__.get("_direct")
        if direct is None or direct.jitted is not jitted:
            direct = self._direct = _Direct(len(args), self.generated, jitted)
        direct.remember(args)

    def __repr__(self):
        return f"<s2s.{self.kind} of {wrappers.describe(self.fn)}>"


def transform(fun=None, *, backend="xla"):
    """Decorator: run ``fun`` as s2s's normal form of it, compiled through XLA (``.source`` shows it).

    Usable bare (``@s2s.transform``) or with options (``@s2s.transform(backend="numpy")``).
    The result composes with ``s2s.grad`` and the rest, and with ``jax.jit`` and ``jax.grad``.
    """
    if fun is None:
        return lambda f: Transformed(f, "primal", backend=backend)
    return Transformed(fun, "primal", backend=backend)


def grad(
    fun, argnums=0, has_aux=False, *, allow_int=False, backend="xla"
) -> Transformed:
    """Gradient of a scalar-valued ``fun`` with respect to argument(s) ``argnums`` (JAX's ``grad``); with
    ``allow_int``, integer and boolean leaves of those arguments get float0 zeros, as in JAX.
    """
    return Transformed(fun, "grad", argnums, has_aux, backend, allow_int=allow_int)


def value_and_grad(
    fun, argnums=0, has_aux=False, *, allow_int=False, backend="xla"
) -> Transformed:
    """``fun``'s value and gradient together (JAX's ``value_and_grad``)."""
    return Transformed(
        fun, "value_and_grad", argnums, has_aux, backend, allow_int=allow_int
    )


def vjp(fun, *primals, has_aux=False, backend="xla"):
    """``(out, vjp_fn)``, where ``vjp_fn(ct)`` gives one cotangent per primal (JAX's ``vjp``).

    ``vjp_fn`` keeps the derivative of the function as it was when ``vjp`` ran, as JAX's does.
    """
    fun = _at_call(fun, primals, backend)
    forward = _transformed(fun, "primal", 0, backend=backend)
    args = forward.binding(primals, {})
    positions = forward.binding.positions(len(primals))
    check_real(args, positions, "vjp")
    backward = _transformed(fun, "vjp", positions, backend=backend, flat=True)
    out = forward._current_runner()(*args)
    aux = None
    if has_aux:
        out, aux = out
    vjp_fn = VjpFunction(backward, backward._current_runner(), args, out, has_aux, aux)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


class VjpFunction:
    """``vjp``'s ``vjp_fn``: one cotangent per primal for a cotangent of the output, by the backward module
    as it was when ``vjp`` ran. ``s2s.vmap`` of it maps the backward module over the cotangent, the primals
    and residuals the same for every row (the autodiff cookbook's Jacobian by rows)."""

    S2S_HINT = (
        "map it over cotangents with `s2s.vmap(vjp_fn)` itself, or call `s2s.vjp` inside the function "
        "you transform"
    )

    def __init__(self, backward, runner, args, out, has_aux, aux):
        self.backward, self.runner, self.args = backward, runner, args
        self.out, self.has_aux, self.aux = out, has_aux, aux

    def __call__(self, ct):
        return tuple(self.runner(*self.args, self._full(ordered_like(ct, self.out))))

    def _full(self, ct):
        return (ct, _zeros_like(self.aux)) if self.has_aux else ct

    def mapped(self, in_axes, out_axes, axis_size, backend):
        """``vmap`` of this function over its cotangent (``in_axes``: its axis, or a one-item tuple)."""
        from .vmapping import vmap

        axis = in_axes[0] if isinstance(in_axes, (tuple, list)) else in_axes
        full_axis = (axis, None) if self.has_aux else axis
        batched = vmap(
            self.backward.s2s_generated_function,
            in_axes=(*(None for _ in self.args), full_axis),
            out_axes=out_axes,
            axis_size=axis_size,
            backend=backend,
        )

        def vjp_fn_mapped(cts):
            return tuple(batched(*self.args, self._full(cts)))

        return vjp_fn_mapped


def held_target(target, names, args):
    """``target`` (a function, or a transformation of one) read for the objects of the program's classes
    ``args`` (by parameter ``names``) hold: a ``Held`` function (``object_layouts``), or the same
    transformations of it; ``target`` itself where they hold none."""
    if isinstance(target, Transformed):
        if target._variadic is not None or target.binding.partial_arguments:
            return target
        inner = held_target(target.target, names, args)
        if inner is target.target:
            return target
        return _transformed(
            inner,
            target.kind,
            target.argnums,
            target.has_aux,
            target.backend,
            flat=True,
            allow_int=target.allow_int,
        )
    return object_layouts.at_call(target, names, args)


MISSED = object()


class _Direct:
    """A transformed function's compiled entry for calls with ``count`` positional arguments and no keywords
    whose tree structure and leaf dtypes a call through the full path has already seen: such a call skips
    binding, the dtype checks and the runner (what a small call costs), while the module is fresh. Anything
    else, or an error, takes the full path (which raises at the user's line).
    """

    __slots__ = ("count", "flatten", "fresh", "jitted", "seen")

    def __init__(self, count, generated, jitted):
        import jax

        self.count, self.fresh, self.jitted = count, generated.fresh, jitted
        self.seen = set()
        self.flatten = jax.tree_util.tree_flatten
        if generated.watch is not None:
            self.fresh = generated.watch.fresh  # one call fewer on every call

    def key(self, args):
        """``args``'s tree structure and leaf dtypes (``float`` for a Python float); None for other leaves."""
        leaves, tree = self.flatten(args)
        kinds = []
        for leaf in leaves:
            if type(leaf) is float:
                kinds.append(float)
                continue
            dtype = getattr(leaf, "dtype", None)
            if dtype is None or not hasattr(leaf, "shape"):
                return None
            kinds.append(dtype)
        return tree, tuple(kinds)

    def remember(self, args):
        key = self.key(args)
        if key is not None:
            self.seen.add(key)

    def __call__(self, args):
        if len(args) != self.count or not self.fresh():
            return MISSED
        if self.key(args) not in self.seen:
            return MISSED
        try:
            return self.jitted(*args)
        except Exception:
            return MISSED


@functools.lru_cache(maxsize=256)
def _transformed(
    fun, kind, argnums, has_aux=False, backend="xla", flat=False, allow_int=False
) -> Transformed:
    """One ``Transformed`` per request, so repeated ``jvp``/``vjp``/``linearize`` calls reuse its compilation."""
    return Transformed(
        fun, kind, argnums, has_aux, backend, flat=flat, allow_int=allow_int
    )


def _at_call(fun, primals, backend):
    """What s2s transforms for the call ``fun(*primals)``: ``fun``, or, when it takes ``*args``/``**kwargs``,
    ``fun`` at that call's shape; read for the objects of the program's classes the primals hold.
    """
    primal = _transformed(fun, "primal", 0, backend=backend)
    if primal._variadic is not None:
        return _at_call(primal._at(tuple(primals), {}), primals, backend)
    if primal.binding.partial_arguments:
        return fun
    return held_target(fun, primal.binding.names, primals)


def _primal_arguments(fun, primals, api, backend):
    """The generated functions' arguments for ``fun(*primals)`` and the positions the primals fill."""
    binding = _transformed(fun, "primal", 0, backend=backend).binding
    args = binding(tuple(primals), {})
    positions = binding.positions(len(primals))
    check_real(args, positions, api)
    return args, positions


def jvp(fun, primals, tangents, has_aux=False, *, backend="xla"):
    """``(out, out_tangent)``: ``fun``'s value at ``primals`` and its derivative along ``tangents`` (JAX's ``jvp``).

    With ``has_aux=True``, ``fun`` returns ``(out, aux)`` and this returns
    ``(out, out_tangent, aux)``. The forward-mode module is ``s2s.jvp_source(fun)``.
    """
    for what, value in (("primal", primals), ("tangent", tangents)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(
                f"{what} arguments to s2s.jvp must be a tuple or list, found {type(value).__name__}: "
                f"pass `({what}s,)` for a single argument"
            )
    if len(primals) != len(tangents):
        raise TypeError(
            f"s2s.jvp got {len(primals)} primals and {len(tangents)} tangents: give one tangent per primal"
        )
    fun = _at_call(fun, primals, backend)
    args, positions = _primal_arguments(fun, primals, "jvp", backend)
    transformed = _transformed(fun, "jvp", positions, has_aux, backend, flat=True)
    tangents = [
        _checked_tangent(i, p, t) for i, (p, t) in enumerate(zip(primals, tangents))
    ]
    out = tuple(transformed._current_runner()(*args, *tangents))
    check_real_derivatives(fun, "tangent", out[1], out[0])
    return out


def linearize(fun, *primals, backend="xla"):
    """``(out, f_jvp)``: ``fun``'s value and its linear map ``f_jvp(*tangents)`` at ``primals`` (JAX's ``linearize``).

    ``f_jvp`` runs the forward-mode module compiled, with the primals fixed: it
    computes the primal values again with each tangent (JAX keeps them instead).
    It keeps the derivative of the function as it was when ``linearize`` ran, as JAX's does.
    """
    fun = _at_call(fun, primals, backend)
    args, positions = _primal_arguments(fun, primals, "linearize", backend)
    transformed = _transformed(fun, "jvp", positions, backend=backend, flat=True)
    out = _transformed(fun, "primal", 0, backend=backend)._current_runner()(*args)
    transformed._refresh()
    function = transformed._function
    # only the tangent is returned, so the compiled function drops what only the value needs
    runner = backends.Runner(lambda *a: function(*a)[1], backend)

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise TypeError(
                f"the linearized function takes {len(primals)} tangents, got {len(tangents)}"
            )
        checked = [
            _checked_tangent(i, p, t) for i, (p, t) in enumerate(zip(primals, tangents))
        ]
        return runner(*args, *checked)

    return out, f_jvp


def jvp_source(fun, has_aux=False) -> str:
    """The generated forward-mode module of ``fun`` (tangents for every parameter)."""
    every = tuple(range(len(wrappers.target(fun, "s2s.jvp_source")[1].names)))
    return Transformed(fun, "jvp", every, has_aux, flat=True).source


def _checked_tangent(index, primal, tangent):
    """``tangent`` after JAX's checks against its primal (structure, shapes, dtypes); float0 becomes zeros."""
    p_leaves, t_leaves = list(_sorted_leaves(primal)), list(_sorted_leaves(tangent))
    if _structure(primal) != _structure(tangent):
        raise TypeError(
            f"primal and tangent {index} of s2s.jvp must have the same structure; "
            f"the primal is {_structure(primal)} but the tangent is {_structure(tangent)}"
        )
    for p, t in zip(p_leaves, t_leaves):
        if callable(p) and not hasattr(
            p, "dtype"
        ):  # a function a model holds: no tangent
            continue
        if np.shape(p) != np.shape(t):
            raise ValueError(
                f"s2s.jvp called with different primal and tangent shapes: primal {index} has shape "
                f"{np.shape(p)} but its tangent has shape {np.shape(t)}"
            )
        p_type, t_type = dtype_of(p), dtype_of(t)
        if p_type.kind in "fc":
            if t_type != p_type and not isinstance(p, (float, complex)):
                raise TypeError(
                    f"primal and tangent {index} of s2s.jvp do not match: the tangent of a {p_type.name} "
                    f"primal must be {p_type.name}, got {t_type.name}"
                )
        elif t_type.name != "float0" and t_type.kind != "V":
            raise TypeError(
                f"primal {index} of s2s.jvp is {p_type.name}: its tangent must have dtype float0 "
                f"(np.zeros(shape, dtype=jax.dtypes.float0)), got {t_type.name}"
            )
    zeroed = tree_map(
        lambda t: np.zeros(np.shape(t)) if dtype_of(t).kind == "V" else t, tangent
    )
    return ordered_like(zeroed, primal)


def ordered_like(tree, like):
    """``tree`` with its dicts' keys in the order of ``like``'s (its primal's): JAX's pytrees match dicts
    whatever their order, and the generated code walks a tangent's dict beside its primal's, in the
    primal's order (``for k, v in hyp.items()``)."""
    if isinstance(tree, dict) and isinstance(like, dict) and tree.keys() == like.keys():
        return {k: ordered_like(tree[k], like[k]) for k in like}
    if (
        isinstance(tree, (list, tuple))
        and isinstance(like, (list, tuple))
        and len(tree) == len(like)
    ):
        items = [ordered_like(t, p) for t, p in zip(tree, like)]
        if hasattr(tree, "_fields"):
            return type(tree)(*items)
        return type(tree)(items)
    return tree


def _sorted_leaves(tree):
    """Leaves in JAX's order: dict keys sorted (two dicts with the same keys in another order match)."""
    if isinstance(tree, dict):
        for k in sorted(tree, key=repr):
            yield from _sorted_leaves(tree[k])
    elif isinstance(tree, (tuple, list)):
        for v in tree:
            yield from _sorted_leaves(v)
    elif _is_record(tree):
        for _, v in _children(tree):
            yield from _sorted_leaves(v)
    elif tree is not None:
        yield tree


def _structure(tree) -> str:
    """A readable description of a tree's containers (leaves as ``*``; dict keys sorted, as JAX's pytrees)."""
    if isinstance(tree, dict):
        return (
            "{"
            + ", ".join(f"{k!r}: {_structure(tree[k])}" for k in sorted(tree, key=repr))
            + "}"
        )
    if isinstance(tree, (tuple, list)):
        inner = ", ".join(_structure(v) for v in tree)
        return (
            f"({inner},)"
            if isinstance(tree, tuple) and len(tree) == 1
            else (f"({inner})" if isinstance(tree, tuple) else f"[{inner}]")
        )
    if _is_record(tree):
        inner = ", ".join(_structure(v) for _, v in _children(tree))
        return f"{type(tree).__name__}({inner})"
    return "None" if tree is None else "*"


def _zeros_like(tree):
    from .runtime import tree_zeros_like

    return tree_zeros_like(tree)
