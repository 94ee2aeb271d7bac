"""``s2s.vmap(s2s.vmap(f, ...), ...)``: one batched module of ``f`` over the product of the two mapped axes.

Mapping ``f`` over an inner axis and again over an outer one is mapping it
over both at once: every argument gets its outer axis first and its inner
axis second, ``(outer, inner, ...)``, the two are merged into one batch axis
of ``outer * inner`` examples (an argument mapped by one of the two is
broadcast along the other, one mapped by neither stays shared), ``f``'s
batched module (``s2s.vmap(f, in_axes=0 or None)``, what ``.source`` shows)
runs once on the merged batch, and each output is split back into its two
axes and put where the two ``out_axes`` say. Under XLA the whole call is one
``jax.jit``; on NumPy it runs eagerly.

Supported: ``in_axes``/``out_axes`` that are ints, None or tuples of those
(one per argument or output), two levels, no ``axis_name`` (a collective
over one of the two axes combines only part of the merged batch). Anything
else is an error that says so.
"""

from __future__ import annotations

import functools

import numpy as np

from .display import ShowsSource
from .errors import S2SError
from .runtime import backends, namespace
from .runtime.trees import tree_leaves, tree_map


def _flat_axes(axes, n: int, what: str) -> tuple:
    """``axes`` as one int-or-None per argument (or output)."""
    if axes is None or isinstance(axes, int):
        return (axes,) * n
    if isinstance(axes, tuple) and all(a is None or isinstance(a, int) for a in axes):
        if len(axes) != n:
            raise ValueError(
                f"vmap {what} {axes!r} names {len(axes)} axes for {n} values"
            )
        return axes
    raise S2SError(
        f"s2s.vmap of s2s.vmap takes {what} that are ints, None or tuples of them, got {axes!r}",
        hint="map over dicts of arguments with a single s2s.vmap, or pass the tree's leaves as arguments",
    )


class NestedVmapped(ShowsSource):
    """``s2s.vmap`` of an ``s2s.vmap`` object: call it like the inner function's ``f`` on doubly batched
    arguments; ``.source`` is ``f``'s batched module that runs on the merged batch."""

    def __init__(self, inner, in_axes, out_axes, axis_size, backend):
        if inner.axis_name is not None:
            raise S2SError(
                "s2s.vmap of an s2s.vmap with axis_name: a collective over the inner axis would combine "
                "every example of both",
                hint="vmap once over the merged axes, or move the collective outside the inner vmap",
            )
        self.inner, self.in_axes, self.out_axes = inner, in_axes, out_axes
        self.axis_size, self.backend = axis_size, backend
        self._runners = (
            {}
        )  # number of arguments -> (the merged call's runner, the module it runs)
        functools.update_wrapper(self, inner, updated=())

    def _flat(self, nargs: int):
        """``f``'s batched module over the merged axis (every argument mapped at either level at axis 0)."""
        from .vmapping import vmap

        outer = _flat_axes(self.in_axes, nargs, "in_axes")
        inner = _flat_axes(self.inner.in_axes, nargs, "in_axes")
        mapped = tuple(
            None if o is None and i is None else 0 for o, i in zip(outer, inner)
        )
        return vmap(self.inner.fun, mapped, backend=self.backend).at(nargs)

    def at(self, npositional=None):
        """The generated module of this double map for calls with ``npositional`` arguments: the inner
        batched module mapped again, which ``codegen`` writes over the merged axes
        (``nested_batches.merged``) and every transform reads, as code that calls it is read.
        """
        from .vmapping import Axes, _batched

        n = (
            len(self.inner._binding.signature.parameters)
            if npositional is None
            else npositional
        )
        axes = Axes.of(
            _flat_axes(self.in_axes, n, "in_axes"), self.out_axes, self.axis_size, None
        )
        return _batched(self.inner.at(n), axes, self.backend)

    @property
    def source(self) -> str:
        """The batched module of ``f`` that runs on the merged batch, for calls passing every parameter."""
        return self._flat(len(self.inner._binding.signature.parameters)).source

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise S2SError(
                "s2s.vmap of s2s.vmap takes positional arguments only",
                hint="pass every argument positionally",
            )
        runner, flat = self._runners.get(len(args), (None, None))
        if (
            runner is None or flat._refresh()
        ):  # a value the module baked in changed: compile anew
            flat = self._flat(len(args))
            call = functools.partial(self._merged_call, flat)
            runner = backends.Runner(call, self.backend)
            self._runners[len(args)] = (runner, flat)
        return runner(*args)

    def _merged_call(self, flat, *args):
        outer = _flat_axes(self.in_axes, len(args), "in_axes")
        inner = _flat_axes(self.inner.in_axes, len(args), "in_axes")
        xp = namespace(*args)
        fronts = [_fronted(xp, a, o, i) for a, o, i in zip(args, outer, inner)]
        n_outer = _common_size(
            [_axis_len(v, 0) for v, o in zip(fronts, outer) if o is not None],
            self.axis_size,
            "outer",
        )
        n_inner = _common_size(
            [
                _axis_len(v, 1 if o is not None else 0)
                for v, o, i in zip(fronts, outer, inner)
                if i is not None
            ],
            self.inner.axis_size,
            "inner",
        )
        merged = [
            _merged(xp, a, o is not None, i is not None, n_outer, n_inner)
            for a, o, i in zip(fronts, outer, inner)
        ]
        out = flat.s2s_generated_function(*merged)
        return self._placed(xp, out, n_outer, n_inner)

    def _placed(self, xp, out, n_outer, n_inner):
        """Each output ``(outer * inner, ...)`` split and moved where the two ``out_axes`` say."""
        values = out if isinstance(out, tuple) else (out,)
        inner_axes = _flat_axes(self.inner.out_axes, len(values), "out_axes")
        outer_axes = _flat_axes(self.out_axes, len(values), "out_axes")
        placed = []
        for value, i_axis, o_axis in zip(values, inner_axes, outer_axes):
            if i_axis is None or o_axis is None:
                raise S2SError(
                    "s2s.vmap of s2s.vmap with out_axes None is not supported",
                    hint="give every output an axis, and take one slice of it after the call",
                )

            def split(leaf, i_axis=i_axis, o_axis=o_axis):
                leaf = xp.reshape(leaf, (n_outer, n_inner, *np.shape(leaf)[1:]))
                rank = leaf.ndim
                leaf = xp.moveaxis(leaf, 1, 1 + (i_axis % (rank - 1)))
                return xp.moveaxis(leaf, 0, o_axis % rank)

            placed.append(tree_map(split, value))
        return tuple(placed) if isinstance(out, tuple) else placed[0]

    def __repr__(self):
        return f"<s2s.vmap of {self.inner!r}>"


def _fronted(xp, value, outer, inner):
    """``value`` with its outer axis first and its inner axis next (where each is mapped)."""

    def leaf(x):
        x = xp.asarray(x)
        if outer is not None:
            x = xp.moveaxis(x, outer, 0)
            if inner is not None:
                x = xp.moveaxis(x, 1 + inner % (x.ndim - 1), 1)
        elif inner is not None:
            x = xp.moveaxis(x, inner, 0)
        return x

    return value if outer is None and inner is None else tree_map(leaf, value)


def _axis_len(value, position) -> set:
    return {np.shape(leaf)[position] for leaf in tree_leaves(value)}


def _common_size(found: list, given, which: str) -> int:
    """The one size of the outer (or inner) mapped axis, read from the arguments mapped along it."""
    sizes = set().union(set(), *found) | ({given} if given is not None else set())
    if len(sizes) != 1:
        raise ValueError(
            f"vmap got inconsistent sizes for the {which} mapped axis: {sorted(sizes)}"
            if sizes
            else f"vmap must have at least one non-None value in in_axes ({which} map)"
        )
    return sizes.pop()


def _merged(xp, value, by_outer, by_inner, n_outer, n_inner):
    """``value`` over the merged batch axis ``outer * inner`` (broadcast along an axis it is not mapped by)."""
    if not by_outer and not by_inner:
        return value

    def leaf(x):
        if by_outer and not by_inner:
            x = xp.broadcast_to(x[:, None], (n_outer, n_inner, *x.shape[1:]))
        elif by_inner and not by_outer:
            x = xp.broadcast_to(x[None], (n_outer, n_inner, *x.shape[1:]))
        return xp.reshape(x, (n_outer * n_inner, *x.shape[2:]))

    return tree_map(leaf, value)
