"""``s2s.vmap`` of ``s2s.jacrev``, ``s2s.jacfwd`` or ``s2s.hessian``: one Jacobian (or Hessian) per example.

The Jacobian's own basis (one cotangent per output element, or one tangent
per input element) is pushed through the *batched* derivative module
(``s2s.vmap`` of the ``vjp`` or ``jvp`` module, which ``.source`` shows), the
same basis vector for every example at once. The arguments the Jacobian is
taken with respect to are given the batch axis first (broadcast where they
are shared), so each example's cotangent stays its own instead of being
summed over the batch. Results have JAX's structure with the batch axis in
front: ``(batch, *out.shape, *in.shape)`` per leaf.

``hessian`` (forward over reverse, as unbatched) batches the same way, a
basis vector of the output and one of the inputs at a time. Supported:
``in_axes`` that are ints, None or a tuple of them, ``out_axes=0``, no
``has_aux``.
"""

from __future__ import annotations

import functools

import numpy as np

from .display import ShowsSource
from .errors import S2SError
from .jacobians import _map, _namespace, _rebuild, _unravel
from .nested_vmap import _flat_axes
from .runtime import backends
from .runtime.trees import tree_leaves, tree_map


class BatchedJacobian(ShowsSource):
    """``s2s.vmap`` of a ``jacfwd``/``jacrev`` object: call it like ``f`` on batched arguments."""

    def __init__(self, jac, in_axes, out_axes, axis_size, backend):
        if jac.has_aux or out_axes != 0:
            raise S2SError(
                f"s2s.vmap of s2s.{jac.kind}"
                + (" with has_aux" if jac.has_aux else "")
                + (f" and out_axes={out_axes!r}" if out_axes != 0 else "")
                + " is not supported",
                hint="vmap the Jacobian without has_aux, with out_axes=0",
            )
        if jac._variadic is not None:
            raise S2SError(
                f"s2s.vmap of s2s.{jac.kind} of a function with `*args`",
                hint="name each parameter",
            )
        self.jac, self.in_axes, self.axis_size, self.backend = (
            jac,
            in_axes,
            axis_size,
            backend,
        )
        self._runners = {}
        functools.update_wrapper(self, jac, updated=())

    def _modules(self, nargs: int, given: int | None = None):
        """The batched primal and derivative modules, every argument the Jacobian is taken with respect to
        batched (axis 0) and the others as ``in_axes`` maps them (at axis 0 after ``_fronted``); of
        ``nargs`` arguments, those after the ``given`` ones the call left their defaults, unmapped.
        """
        from .vmapping import Axes, _batched, vmap

        given = nargs if given is None else given
        axes = _flat_axes(self.in_axes, given, "in_axes") + (None,) * (nargs - given)
        mapped = tuple(
            0 if (a is not None or i in self.jac.wrt) else None
            for i, a in enumerate(axes)
        )
        if self.jac.primal.binding.variadic:  # (``f(p, *args)``: at this call's shape)
            primal = vmap(self.jac.fun, mapped, backend=self.backend).at(nargs)
        else:  # every parameter (keyword-only ones too) as ``mapped`` maps it
            primal = _batched(
                self.jac.fun, Axes.of(mapped, 0, None, None), self.backend
            )
        # the derivative module's own parameters: the function's, then its tangents (or one cotangent)
        tangents = (0,) * len(self.jac.wrt)
        extra = {"jacfwd": tangents, "jacrev": (0,), "hessian": (0, *tangents)}[
            self.jac.kind
        ]
        spec = Axes.of((*mapped, *extra), 0, None, None)
        derivative = _batched(self.jac.transformed, spec, self.backend)
        return axes, primal, derivative

    @property
    def source(self) -> str:
        """The batched derivative module the basis is pushed through."""
        nargs = len(self.jac.primal.binding.names)
        return self._modules(nargs)[2].source

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise S2SError(
                f"s2s.vmap of s2s.{self.jac.kind} takes positional arguments only",
                hint="pass every argument positionally",
            )
        given = len(args)
        args = self.jac.primal.binding(
            args, {}
        )  # (the parameters it leaves out: their defaults)
        runner, modules = self._runners.get(given, (None, ()))
        # each module checks the values it baked in; a stale one is compiled anew
        stale = [m._refresh() for m in modules[1:]]
        if runner is None or any(stale):
            modules = self._modules(len(args), given)
            runner = backends.Runner(
                functools.partial(self._per_example, *modules), self.backend
            )
            self._runners[len(args)] = (runner, modules)
        return runner(*args)

    def _per_example(self, axes, primal, derivative, *args):
        xp = _namespace(list(tree_leaves(args)))
        size = _batch_size(args, axes, self.axis_size)
        args = [
            _fronted(xp, a, ax, size, i in self.jac.wrt)
            for i, (a, ax) in enumerate(zip(args, axes))
        ]
        out = primal.s2s_generated_function(*args)
        inputs = [args[i] for i in self.jac.wrt]
        in_leaves = [leaf for tree in inputs for leaf in tree_leaves(tree)]
        out_leaves = list(tree_leaves(out))
        m = sum(int(np.size(leaf[0])) for leaf in out_leaves)
        n = sum(int(np.size(leaf[0])) for leaf in in_leaves)
        fn = derivative.s2s_generated_function

        def cotangent(c):  # one basis vector of an example's output, for every example
            pieces = _unravel(xp, c, [leaf[0] for leaf in out_leaves])
            return _rebuild(out, [_broadcast(xp, p, size) for p in pieces])

        def tangents(t):  # one basis vector of an example's inputs, for every example
            pieces = iter(_unravel(xp, t, [leaf[0] for leaf in in_leaves]))
            return [
                _rebuild(
                    tree,
                    [_broadcast(xp, next(pieces), size) for _ in tree_leaves(tree)],
                )
                for tree in inputs
            ]

        def raveled(trees):
            return _per_example_ravel(
                xp, [leaf for t in trees for leaf in tree_leaves(t)], size
            )

        out_basis = xp.eye(m, dtype=xp.result_type(*out_leaves))
        in_basis = xp.eye(n, dtype=xp.result_type(*in_leaves))
        if self.jac.kind == "jacrev":
            rows = _map(
                lambda c: raveled(fn(*args, cotangent(c))), out_basis
            )  # (m, B, n)
            flat = xp.moveaxis(rows, 0, 1)
        elif self.jac.kind == "jacfwd":
            columns = _map(
                lambda t: raveled([fn(*args, *tangents(t))[1]]), in_basis
            )  # (n, B, m)
            flat = xp.transpose(columns, (1, 2, 0))
        else:  # forward over reverse: (m, n, B, n), the last axis the cotangent's

            def second(c):
                return _map(
                    lambda t: raveled(fn(*args, cotangent(c), *tangents(t))[1]),
                    in_basis,
                )

            flat = xp.transpose(_map(second, out_basis), (2, 0, 3, 1))
        chosen = inputs[0] if isinstance(self.jac.argnums, int) else tuple(inputs)
        return _blocks(xp, flat, out, chosen, size, second=self.jac.kind == "hessian")

    def __repr__(self):
        return f"<s2s.vmap of {self.jac!r}>"


def _batch_size(args, axes, given) -> int:
    sizes = {
        np.shape(leaf)[a]
        for value, a in zip(args, axes)
        if a is not None
        for leaf in tree_leaves(value)
    } | ({given} if given is not None else set())
    if len(sizes) != 1:
        raise ValueError(
            f"vmap got inconsistent sizes for the mapped axis: {sorted(sizes)}"
            if sizes
            else "vmap must have at least one non-None value in in_axes"
        )
    return sizes.pop()


def _fronted(xp, value, axis, size, batched):
    """An argument with its mapped axis first, or broadcast along a new first axis when it is shared but
    the Jacobian is taken with respect to it; else as it is."""
    if axis is not None:
        return tree_map(lambda leaf: xp.moveaxis(xp.asarray(leaf), axis, 0), value)
    if batched:
        return tree_map(lambda leaf: _broadcast(xp, xp.asarray(leaf), size), value)
    return value


def _broadcast(xp, x, size):
    return xp.broadcast_to(x, (size, *np.shape(x)))


def _per_example_ravel(xp, leaves, size):
    """``(B, n)``: each example's leaves raveled and joined."""
    return xp.concatenate([xp.reshape(leaf, (size, -1)) for leaf in leaves], axis=1)


def _blocks(xp, flat, out, inputs, size, second=False):
    """``flat`` ``(B, out size, in size[, in size])`` in JAX's structure, each leaf
    ``(B, *out.shape, *in.shape[, *in.shape])`` (``second``: a Hessian's inputs nested twice).
    """
    out_leaves, in_leaves = list(tree_leaves(out)), list(tree_leaves(inputs))
    out_starts = np.cumsum([0] + [int(np.size(o[0])) for o in out_leaves])
    in_starts = np.cumsum([0] + [int(np.size(i[0])) for i in in_leaves])

    def cut(starts, j):
        return slice(int(starts[j]), int(starts[j + 1]))

    def block(k, j, i=None):
        part = flat[:, cut(out_starts, k), cut(in_starts, j)]
        shape = (size, *np.shape(out_leaves[k])[1:], *np.shape(in_leaves[j])[1:])
        if i is not None:
            part = part[..., cut(in_starts, i)]
            shape = (*shape, *np.shape(in_leaves[i])[1:])
        return xp.reshape(part, shape)

    def per_input(k, j):
        if not second:
            return block(k, j)
        return _rebuild(inputs, [block(k, j, i) for i in range(len(in_leaves))])

    return _rebuild(
        out,
        [
            _rebuild(inputs, [per_input(k, j) for j in range(len(in_leaves))])
            for k in range(len(out_leaves))
        ],
    )
