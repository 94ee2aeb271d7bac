"""``s2s.vmap``: JAX's ``vmap`` on source, a batched module a person can read (``<f>_batched``).

``vmap(f, in_axes, out_axes, axis_size)`` binds each call with ``f``'s own
signature, as JAX does: ``in_axes`` (an int, None, or a tuple with one entry
per positional argument, each entry an int, None or a tree prefix of the
argument) maps the positional arguments, keyword arguments are mapped over
axis 0, and defaults are shared. One module is generated per distinct set of
axes; it moves the mapped axes to the front itself (``rt.batch_leaves``) and
its outputs to ``out_axes`` (``rt.unbatch_leaves``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .api import MISSED, Transformed
from .display import ShowsSource
from .dtypes import check_real_derivatives
from .errors import S2SError
from .frontend import variadic, wrappers


@dataclass(frozen=True)
class Axes:
    """A hashable set of axes: in_axes per parameter, out_axes, axis_size and axis_name (the generator's ``axes``)."""

    text: (
        str  # repr of ``spec``: what hashing and equality read (dicts are not hashable)
    )
    spec: tuple

    def __eq__(self, other):
        return isinstance(other, Axes) and self.text == other.text

    def __hash__(self):
        return hash(self.text)

    @classmethod
    def of(cls, in_axes, out_axes, axis_size, axis_name) -> Axes:
        spec = (tuple(in_axes), out_axes, axis_size, axis_name)
        return cls(repr(spec), spec)


def _is_pytree_node(axes) -> bool:
    """Whether ``axes`` is an object of a class registered with JAX as a pytree node (not a leaf)."""
    import jax

    _, treedef = jax.tree_util.tree_flatten(axes, is_leaf=lambda x: x is None)
    return treedef.num_nodes > 1


def _check_axes(axes, where: str, api: str) -> None:
    """JAX's errors for an axes specification that is not an int, None or a tree of them."""
    if axes is None or (isinstance(axes, int) and not isinstance(axes, bool)):
        return
    if isinstance(axes, (dict, tuple, list)):
        for v in axes.values() if isinstance(axes, dict) else axes:
            _check_axes(v, where, api)
        return
    if _is_pytree_node(axes):  # (JAX's prefixes may be such objects)
        raise TypeError(
            f"{api} {where}: an object of the pytree class `{type(axes).__name__}` as an axes prefix; s2s "
            "reads axes as ints, None, tuples, lists and dicts: give the whole argument one axis (0 or "
            "None), or pass the fields to map differently as arguments of their own"
        )
    raise TypeError(
        f"{api} {where} must be an int, None, or (nested) container with those types as leaves, "
        f"but got {axes!r}."
    )


def checked_axes(in_axes, out_axes, axis_name, api: str = "vmap"):
    """``in_axes`` as JAX reads it (a list is a tuple), after JAX's checks of the three options."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axes(in_axes, "in_axes", api)
    _check_axes(out_axes, "out_axes", api)
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(
            f"s2s.{api} axis_name must be a string (what collectives name the axis by), got {axis_name!r}"
        )
    return in_axes


class Vmapped(ShowsSource):
    """``s2s.vmap(f, ...)``: call it like ``f`` on batched arguments; ``.source`` is the batched module."""

    def __init__(
        self, fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, backend="xla"
    ):
        in_axes = checked_axes(in_axes, out_axes, axis_name)
        self.fun, self.in_axes, self.out_axes = fun, in_axes, out_axes
        self.axis_size, self.axis_name, self.backend = axis_size, axis_name, backend
        functools.update_wrapper(self, fun, updated=())
        del self.__wrapped__  # a batched function is not the one it came from
        self._binding = wrappers.target(fun, "s2s.vmap")[1]
        self._by_call_shape = {}
        self._direct = {}  # positional count -> the batched function's compiled entry

    def _per_parameter(self, npositional: int, keywords, binding) -> tuple:
        """in_axes for every parameter of the generated function, for a call with these arguments (placed by
        the binding: a ``functools.partial``'s arguments, and defaults, are the same for every example).
        """
        axes = self.in_axes
        if isinstance(axes, tuple):
            if len(axes) != npositional:
                raise ValueError(
                    "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                    f"positional arguments passed to the function, but got len(in_axes)={len(axes)}, "
                    f"len(args)={npositional}"
                )
            positional = list(axes)
        else:
            positional = [axes] * npositional
        per = []
        for at in binding.placement(npositional, keywords):
            if isinstance(at, int):
                per.append(positional[at])
            else:  # JAX maps keyword arguments over axis 0
                per.append(None if at is None else 0)
        return tuple(per)

    def at(self, npositional=None, keywords=()) -> Transformed:
        """The batched function for calls with ``npositional`` positional arguments and these keywords."""
        # what transforming it again sees: in_axes' positions, or every parameter
        if npositional is None:
            npositional = (
                len(self.in_axes)
                if isinstance(self.in_axes, tuple)
                else len(self._binding.signature.parameters)
            )
        fun, binding = self.fun, self._binding
        if (
            binding.variadic
        ):  # ``f(p, *args)``: the function at this call's shape, its parameters one by one
            args, kwargs = [None] * npositional, dict.fromkeys(keywords)
            if isinstance(
                fun, Transformed
            ):  # (``vmap(grad(f))``: the gradient at that shape)
                fun = fun.at(*args, **kwargs)
            else:  # (a ``functools.partial`` of one at the shape of the call it makes)
                fun = variadic.at_call(fun, args, kwargs)
            binding = wrappers.target(fun, "s2s.vmap")[1]
        axes = Axes.of(
            self._per_parameter(npositional, set(keywords), binding),
            self.out_axes,
            self.axis_size,
            self.axis_name,
        )
        return _batched(fun, axes, self.backend)

    @property
    def source(self) -> str:
        """The batched module for calls passing every parameter positionally."""
        return self.at().source

    def __call__(self, *args, **kwargs):
        if not kwargs:
            # arrays only, as in a training loop: straight to the compiled function (``api._Direct``)
            direct = self._direct.get(len(args))
            if direct is not None and (out := direct(args)) is not MISSED:
                return out
        key = (len(args), tuple(kwargs))
        batched = self._by_call_shape.get(key)
        if batched is None:
            batched = self._by_call_shape[key] = self.at(*key)
        out = batched(*args, **kwargs)
        if not kwargs and (direct := batched.__dict__.get("_direct")) is not None:
            self._direct[len(args)] = direct
        if isinstance(self.fun, Transformed) and self.fun.kind == "grad":
            check_real_derivatives(self.fun.target, "gradient", out)  # (per example)
        return out

    def __repr__(self):
        return f"<s2s.vmap of {wrappers.describe(self.fun)}>"


@functools.lru_cache(maxsize=256)
def _batched(fun, axes: Axes, backend) -> Transformed:
    return Transformed(fun, "batch", axes, backend=backend, flat=True, api="s2s.vmap")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, *, backend="xla"):
    """``fun`` mapped over axes of its arguments (JAX's ``vmap``), as a generated batched module."""
    from .api import VjpFunction
    from .batched_jacobians import BatchedJacobian
    from .jacobians import Jacobian
    from .nested_vmap import NestedVmapped

    if isinstance(fun, Jacobian):  # one Jacobian per example (``batched_jacobians``)
        if axis_name is not None:
            raise S2SError(
                "s2s.vmap of a Jacobian with axis_name is not supported",
                hint="drop axis_name: a Jacobian's function has no collectives to name it",
            )
        in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        return BatchedJacobian(fun, in_axes, out_axes, axis_size, backend)
    if isinstance(fun, VjpFunction):  # ``vmap(vjp_fn)``: over the cotangent
        return fun.mapped(in_axes, out_axes, axis_size, backend)
    if isinstance(fun, NestedVmapped):
        raise S2SError(
            "s2s.vmap nested three deep is not supported",
            hint="merge two of the mapped axes into one before the call (a reshape), and vmap twice",
        )
    if not isinstance(fun, Vmapped):
        return Vmapped(fun, in_axes, out_axes, axis_name, axis_size, backend)
    # ``vmap`` of ``vmap``: over the product of both mapped axes (``nested_vmap``)
    if axis_name is not None:
        raise S2SError(
            "s2s.vmap of an s2s.vmap with axis_name: a collective over the outer axis would combine "
            "every example of both",
            hint="vmap once over the merged axes, or move the collective outside",
        )
    in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
    return NestedVmapped(fun, in_axes, out_axes, axis_size, backend)
