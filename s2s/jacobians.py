"""Whole Jacobians and Hessians from generated derivative modules: ``jacfwd``, ``jacrev``, ``hessian``.

Each pushes a basis through a generated function, as JAX does: ``jacfwd``
through the forward-mode module (one tangent per input element), ``jacrev``
through the reverse-mode module (one cotangent per output element), and
``hessian`` through the forward-mode module *of the reverse-mode module*
(forward over reverse: s2s transforms the generated ``f_vjp`` again). Under
XLA the basis is mapped with ``jax.vmap`` inside one ``jax.jit``; on NumPy it
is a Python loop. Results have JAX's structure: the output's tree, each leaf
holding the inputs' trees (a tuple of them for tuple ``argnums``), leaves of
shape ``out.shape + in.shape`` (``+ in.shape`` again for the Hessian).
"""

from __future__ import annotations

import functools

import numpy as np

from .api import Transformed, held_target
from .display import ShowsSource
from .dtypes import check_float_inputs, check_real_derivatives
from .frontend.wrappers import describe
from .runtime import backends
from .runtime.trees import tree_leaves, tree_map, uses_jax


def _rebuild(tree, leaves):
    """``tree`` with its leaves replaced, in order, by ``leaves``."""
    it = iter(leaves)
    return tree_map(lambda _: next(it), tree)


def _ravel(xp, leaves):
    return (
        xp.concatenate([xp.reshape(xp.asarray(leaf), (-1,)) for leaf in leaves])
        if leaves
        else xp.zeros(0)
    )


def _unravel(xp, vector, leaves):
    """``vector`` cut into pieces shaped like ``leaves``."""
    pieces, start = [], 0
    for leaf in leaves:
        size = int(np.size(leaf))
        pieces.append(xp.reshape(vector[start : start + size], np.shape(leaf)))
        start += size
    return pieces


def _map(fn, basis):
    """``fn`` on each row of ``basis``, outputs stacked along a new first axis (``jax.vmap`` under JAX)."""
    if uses_jax(basis):
        import jax

        return jax.vmap(fn)(basis)
    return _stack([fn(row) for row in basis])


def _stack(rows):
    first = rows[0]
    if isinstance(first, (tuple, list)):
        return type(first)(_stack([r[i] for r in rows]) for i in range(len(first)))
    return np.stack([np.asarray(r) for r in rows])


def _selected(args, argnums):
    return (
        args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    )


def _blocks(flat, out, inputs, extra_inputs=None):
    """Split a flat Jacobian ``(out size, in size[, in size])`` into JAX's nested structure."""
    xp = _namespace(flat)
    out_leaves, in_leaves = list(tree_leaves(out)), list(tree_leaves(inputs))
    out_starts = np.cumsum([0] + [int(np.size(o)) for o in out_leaves])
    in_starts = np.cumsum([0] + [int(np.size(i)) for i in in_leaves])

    def block(k, j, m=None):
        rows = flat[out_starts[k] : out_starts[k + 1], in_starts[j] : in_starts[j + 1]]
        shape = np.shape(out_leaves[k]) + np.shape(in_leaves[j])
        if m is not None:
            rows = rows[..., in_starts[m] : in_starts[m + 1]]
            shape = shape + np.shape(in_leaves[m])
        return xp.reshape(rows, shape)

    def per_input(k, m=None):
        return _rebuild(inputs, [block(k, j, m) for j in range(len(in_leaves))])

    if extra_inputs is None:
        return _rebuild(out, [per_input(k) for k in range(len(out_leaves))])
    return _rebuild(
        out,
        [
            _rebuild(
                inputs,
                [
                    _rebuild(inputs, [block(k, j, m) for m in range(len(in_leaves))])
                    for j in range(len(in_leaves))
                ],
            )
            for k in range(len(out_leaves))
        ],
    )


def _namespace(x):
    from .runtime import namespace

    return namespace(x)


def _eye(xp, n, leaves):
    dtype = xp.result_type(*leaves) if leaves else float
    return xp.eye(n, dtype=dtype)


class Jacobian(ShowsSource):
    """A Jacobian (or Hessian) function: call it like ``fun``; ``.source`` shows the generated module it pushes a basis through."""

    def __init__(self, fun, kind, argnums, has_aux, backend):
        self.fun = fun
        self.kind = kind
        self.primal = Transformed(fun, "primal", backend=backend, api=f"s2s.{kind}")
        binding = self.primal.binding
        # ``*args``: per call shape
        self._variadic = argnums if self.primal._variadic is not None else None
        self.has_aux, self._backend = has_aux, backend
        functools.update_wrapper(self, fun, updated=())
        # a Jacobian is not ``fun``: nothing may unwrap it into ``fun``
        del self.__wrapped__
        self.__signature__ = binding.signature
        if self._variadic is not None:
            return
        self._given = argnums
        # indices into the generated functions' parameters
        self.argnums = binding.argnums(argnums, f"s2s.{kind}")
        # JAX reads them per call
        self._negative = argnums if binding.negative(argnums) else None
        self.wrt = (self.argnums,) if isinstance(self.argnums, int) else self.argnums
        if kind == "jacfwd":
            self.transformed = Transformed(
                fun, "jvp", self.wrt, has_aux, backend, flat=True
            )
        else:
            # one cotangent per wrt
            reverse = Transformed(fun, "vjp", self.wrt, backend=backend, flat=True)
            # hessian: forward mode of the generated reverse-mode function, for tangents of the inputs
            hessian = kind == "hessian"
            self.transformed = (
                Transformed(reverse, "jvp", self.wrt, backend=backend, flat=True)
                if hessian
                else reverse
            )
        self._runner = backends.Runner(getattr(self, f"_{kind}"), backend)

    @property
    def source(self) -> str:
        if self._variadic is not None:
            # the error saying to read ``.at(*args, **kwargs).source``
            return self.primal.source
        return self.transformed.source

    def at(self, *args, **kwargs) -> Jacobian:
        """This Jacobian for calls shaped like ``f(*args, **kwargs)`` (``Transformed.at``)."""
        if self._variadic is None:
            return self
        return _jacobian(
            self.primal._at(args, kwargs),
            self.kind,
            self._variadic,
            self.has_aux,
            self._backend,
        )

    def __call__(self, *args, **kwargs):
        if self._variadic is not None:
            return self.at(*args, **kwargs)(*args, **kwargs)
        if self._negative is not None and len(args) != len(
            self.primal.binding.positional
        ):
            argnums = self.primal.binding.for_call(
                self._negative, len(args), f"s2s.{self.kind}"
            )
            return _jacobian(self.fun, self.kind, argnums, self.has_aux, self._backend)(
                *args, **kwargs
            )
        args = self.primal.binding(args, kwargs)
        check_float_inputs(args, self.wrt, self.kind)
        if not self.primal.binding.partial_arguments:
            # objects of the program's classes in the arguments: the function read for where they are
            target = self.primal.target
            held = held_target(target, self.primal.binding.names, args)
            if held is not target:
                return _jacobian(
                    held, self.kind, self._given, self.has_aux, self._backend
                )(*args)
        # a value the modules baked in has changed
        if self.primal._refresh() | self.transformed._refresh():
            self._runner = backends.Runner(
                getattr(self, f"_{self.kind}"), self._backend
            )
        out = self._runner(*args)
        check_real_derivatives(self.fun, "Jacobian", out[0] if self.has_aux else out)
        return out

    def _tangents(self, xp, args, vector):
        leaves = [leaf for i in self.wrt for leaf in tree_leaves(args[i])]
        pieces = iter(_unravel(xp, vector, leaves))
        return [
            _rebuild(args[i], [next(pieces) for _ in tree_leaves(args[i])])
            for i in self.wrt
        ]

    def _jacfwd(self, *args):
        fn = self.transformed._function
        inputs = _selected(args, self.argnums)
        leaves = list(tree_leaves(inputs))
        xp = _namespace(leaves)
        n = sum(int(np.size(leaf)) for leaf in leaves)
        out, aux = self._outputs(args)

        def push(t):
            return _ravel(
                xp, list(tree_leaves(fn(*args, *self._tangents(xp, args, t))[1]))
            )

        columns = _map(push, _eye(xp, n, leaves))  # (in size, out size)
        jac = _blocks(xp.transpose(columns), out, inputs)
        return (jac, aux) if self.has_aux else jac

    def _outputs(self, args):
        out = self.primal._function(*args)
        return out if self.has_aux else (out, None)

    def _cotangent(self, xp, out, aux, vector):
        ct = _rebuild(out, _unravel(xp, vector, list(tree_leaves(out))))
        if self.has_aux:
            from .runtime.trees import tree_zeros_like

            ct = (ct, tree_zeros_like(aux))
        return ct

    def _jacrev(self, *args):
        out, aux = self._outputs(args)
        inputs = _selected(args, self.argnums)
        out_leaves = list(tree_leaves(out))
        xp = _namespace(out_leaves)
        m = sum(int(np.size(leaf)) for leaf in out_leaves)
        fn = self.transformed._function

        def pull(c):
            cts = fn(*args, self._cotangent(xp, out, aux, c))  # one per wrt
            return _ravel(xp, [leaf for ct in cts for leaf in tree_leaves(ct)])

        rows = _map(pull, _eye(xp, m, out_leaves))  # (out size, in size)
        jac = _blocks(rows, out, inputs)
        return (jac, aux) if self.has_aux else jac

    def _hessian(self, *args):
        out, aux = self._outputs(args)
        inputs = _selected(args, self.argnums)
        out_leaves, in_leaves = list(tree_leaves(out)), list(tree_leaves(inputs))
        xp = _namespace([*out_leaves, *in_leaves])
        m = sum(int(np.size(leaf)) for leaf in out_leaves)
        n = sum(int(np.size(leaf)) for leaf in in_leaves)
        fn = self.transformed._function

        def second(c):
            ct = self._cotangent(xp, out, aux, c)

            def push(t):
                cts_dot = fn(*args, ct, *self._tangents(xp, args, t))[1]  # one per wrt
                return _ravel(
                    xp, [leaf for ct_dot in cts_dot for leaf in tree_leaves(ct_dot)]
                )

            return _map(push, _eye(xp, n, in_leaves))  # (in size, in size)

        flat = _map(second, _eye(xp, m, out_leaves))  # (out size, in size, in size)
        hess = _blocks(flat, out, inputs, extra_inputs=True)
        return (hess, aux) if self.has_aux else hess

    def __repr__(self):
        return f"<s2s.{self.kind} of {describe(self.fun)}>"


@functools.lru_cache(maxsize=64)
def _jacobian(fun, kind, argnums, has_aux, backend) -> Jacobian:
    return Jacobian(fun, kind, argnums, has_aux, backend)


def jacfwd(fun, argnums=0, has_aux=False, *, backend="xla") -> Jacobian:
    """The Jacobian of ``fun`` by forward mode, one tangent per input element (JAX's ``jacfwd``)."""
    return _second(fun, argnums, has_aux, backend) or Jacobian(
        fun, "jacfwd", argnums, has_aux, backend
    )


def jacrev(fun, argnums=0, has_aux=False, *, backend="xla") -> Jacobian:
    """The Jacobian of ``fun`` by reverse mode, one cotangent per output element (JAX's ``jacrev``)."""
    return _second(fun, argnums, has_aux, backend) or Jacobian(
        fun, "jacrev", argnums, has_aux, backend
    )


def _second(fun, argnums, has_aux, backend) -> Jacobian | None:
    """``jacfwd(jacrev(f))`` (JAX's definition of ``hessian``), ``jacrev(jacrev(f))``, ...: a Jacobian of a
    Jacobian of ``f`` with respect to the same arguments is ``f``'s Hessian, whichever modes compute
    them (the same array, its last two axes the two derivatives'); None for anything else (a Jacobian
    with respect to other arguments, or one with ``has_aux``: s2s does not transform it again).
    """
    if (
        not isinstance(fun, Jacobian)
        or fun.kind == "hessian"
        or has_aux
        or fun.has_aux
        or getattr(fun, "_given", None) != argnums
    ):
        return None
    return Jacobian(fun.fun, "hessian", argnums, False, backend)


def hessian(fun, argnums=0, has_aux=False, *, backend="xla") -> Jacobian:
    """The Hessian of ``fun``, forward over reverse: ``jacfwd(jacrev(fun))`` (JAX's ``hessian``)."""
    return Jacobian(fun, "hessian", argnums, has_aux, backend)


__all__ = ["Jacobian", "hessian", "jacfwd", "jacrev"]
