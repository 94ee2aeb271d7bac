"""Check s2s's derivatives against finite differences: ``check_grads`` (JAX's ``jax.test_util.check_grads``).

``check_grads(f, args)`` compares, at ``args`` and along a random direction
``t`` (every floating-point leaf of every argument; seed 0, as JAX):

- forward mode: ``s2s.jvp(f, args, t)`` with central differences
  ``(f(args + eps t) - f(args - eps t)) / (2 eps)``, element by element;
- reverse mode: ``<t, vjp(u)>`` with ``<u, finite differences along t>``
  (JAX's "cotangent projection"), ``u`` a random output cotangent;
- with both modes, forward against reverse: ``<u, jvp(t)>`` with ``<vjp(u), t>``;
- the value s2s computes alongside (``s2s.jvp``/``s2s.vjp``'s output) with ``f(*args)``.

When a comparison fails, every floating-point leaf is checked again alone
(a random direction on that leaf, zero elsewhere), so the report names the
argument and path the mismatch comes from. Integer and boolean leaves are
held fixed (their tangents are float0). Finite differences call ``f`` itself
in the inputs' dtype: float64 inputs give float64 differences (s2s's results
under XLA are float64 only with ``jax_enable_x64``; otherwise their float32
dtype selects the float32 tolerances).

``order=2`` checks the same again on s2s's generated first-order functions,
as JAX does: forward and reverse mode of ``f_jvp(*args, *tangents)`` (the
forward-mode module of ``f``) at ``args`` and random tangents, and of
``f_vjp(*args, ct)`` (the reverse-mode module) at ``args`` and a random output
cotangent (JAX uses ``ct = f(*args)``; here ``ct`` is an input of its own, so
its derivative is checked too). s2s differentiates those generated functions
again (as ``s2s.hessian`` does) and the finite differences call them directly,
so order 2 checks second derivatives given first derivatives; higher orders
recurse the same way. With ``modes=("fwd",)`` only forward-mode functions are
differentiated again, with ``("rev",)`` only reverse-mode ones.

``f`` is what ``s2s.jvp``/``s2s.vjp`` accept: a function s2s can read from
its file, an ``@s2s.transform`` function, or another s2s transform of one.
"""

from __future__ import annotations

import numpy as np

from .api import Transformed, jvp, vjp
from .frontend import wrappers

EPS = 1e-4
MODES = ("fwd", "rev")
# JAX's default gradient tolerances (jax._src.public_test_util.default_gradient_tolerance); other floats get 1e-1
TOLERANCE = {
    np.dtype(k): v
    for k, v in {
        "float16": 1e-2,
        "float32": 2e-3,
        "float64": 1e-5,
        "complex64": 1e-3,
    }.items()
}
TOLERANCE[np.dtype("complex128")] = 1e-5
HINTS = {
    "derivative": "hint: a derivative rule s2s used (a custom_jvp/custom_vjp rule of yours, or a built-in one) may be "
    "wrong, or the function is not smooth within eps of this point (a kink, a branch, a discontinuity): "
    "try another point or a smaller eps",
    "consistency": "hint: s2s's forward and reverse modes disagree with each other: a built-in rule's jvp and vjp "
    "differ, or a custom_jvp rule is not linear in its tangents",
    "value": "hint: s2s's generated code computes another value than the function itself: s2s may have lowered it "
    "wrongly, or the function is not deterministic",
}


def check_grads(
    f, args, order=1, modes=MODES, atol=None, rtol=None, eps=None, backend="xla"
):
    """Check s2s's derivatives of ``f`` at ``args`` against finite differences, up to ``order``.

    ``modes``: "fwd" (``s2s.jvp``) and/or "rev" (``s2s.vjp``). ``atol``/``rtol``:
    a number, or a dict from dtype to number merged over the defaults
    (float64 1e-5, float32 2e-3, float16 1e-2, as JAX), scaled by the size of
    the compared array as JAX does. ``eps``: the finite-difference step
    (default 1e-4). ``backend``: where s2s runs its derivatives ("xla" or "numpy").

    Returns None. Raises ``AssertionError`` describing the worst mismatch
    (mode, order, argument and path, direction, expected and got, errors
    against the tolerances), ``ValueError`` for an invalid ``order`` or ``modes``.
    An error s2s raises while transforming carries a note naming the check.
    """
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    if not modes or any(m not in MODES for m in modes):
        raise ValueError(
            f"check_grads: modes must be a non-empty collection of 'fwd' and 'rev', got {modes!r}"
        )
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(
            f"check_grads: order must be a positive int (1: first derivatives, 2: second), got {order!r}"
        )
    if not isinstance(args, (tuple, list)):
        raise TypeError(
            f"check_grads: args must be a tuple or list of arguments, got {type(args).__name__}"
        )
    checker = _Checker(modes, atol, rtol, eps or EPS, backend)
    names = [f"args[{i}]" for i in range(len(args))]
    checker.check(f, tuple(args), names, order, 1, f"`{getattr(f, '__name__', 'f')}`")
    checker.report()


class _Checker:
    def __init__(self, modes, atol, rtol, eps, backend):
        self.modes, self.atol, self.rtol, self.eps, self.backend = (
            modes,
            atol,
            rtol,
            eps,
            backend,
        )
        self.rng = np.random.RandomState(0)
        # (error over allowed error, report lines, along every leaf at once)
        self.results = []

    def check(self, fun, args, names, order, level, what):
        """Every check of ``fun`` at ``args`` (named ``names``), then the next order on its generated functions."""
        out = fun(*args)
        u = _map(
            lambda p, y: self.rand(y) if _inexact(y) else np.zeros(np.shape(y)), out
        )
        joint = tuple(
            _map(lambda p, x: self.rand(x) if _inexact(x) else _zero_tangent(x), a)
            for a in args
        )
        start = len(self.results)
        try:
            self.along(
                fun,
                args,
                out,
                u,
                [("every floating-point leaf of every argument", joint)],
                level,
                what,
            )
            # again leaf by leaf, to name the argument
            if any(not r[0] <= 1.0 for r in self.results[start:]):
                alone = [
                    (
                        f"argument {i}, {names[i]}{path}",
                        _only(args, i, path, self.rand(x)),
                    )
                    for i, a in enumerate(args)
                    for path, x in _leaves(a)
                    if _inexact(x)
                ]
                self.along(fun, args, out, u, alone, level, what, values=False)
        except Exception as error:
            error.add_note(
                f"check_grads: raised while checking the derivatives of {what} at order {level}"
            )
            raise
        every = tuple(range(len(args)))
        # generated functions take every parameter positionally: defaults the call left out too
        if order > 1:
            _, binding = wrappers.target(fun, "check_grads")
            full = binding(args, {})
            names = names + [f"`{n}` (its default)" for n in binding.names[len(args) :]]
            args, every = full, binding.argnums(every, "check_grads")
        if order > 1 and "fwd" in self.modes:
            inner = Transformed(
                fun, "jvp", every, backend=self.backend
            ).s2s_generated_function
            # the generated function takes float zeros as the tangents of integers (what s2s.jvp passes for float0)
            point = tuple(
                _map(
                    lambda p, t: np.zeros(np.shape(t)) if _dtype(t).kind == "V" else t,
                    a,
                )
                for a in joint
            )
            inner_names = names + [f"tangent of {n}" for n in names]
            self.check(
                inner,
                args + point,
                inner_names,
                order - 1,
                level + 1,
                f"`{inner.__name__}`, {what}'s jvp",
            )
        if order > 1 and "rev" in self.modes:
            inner = Transformed(
                fun, "vjp", every, backend=self.backend
            ).s2s_generated_function
            inner_names = names + ["output cotangent"]
            self.check(
                inner,
                args + (u,),
                inner_names,
                order - 1,
                level + 1,
                f"`{inner.__name__}`, {what}'s vjp",
            )

    def rand(self, x):
        """Standard normal values shaped and typed like ``x`` (a Python float stays one)."""
        dtype, shape = _dtype(x), np.shape(x)
        value = np.asarray(self.rng.randn(*shape), dtype=dtype)
        if dtype.kind == "c":
            value = value + dtype.type(1j) * np.asarray(
                self.rng.randn(*shape), dtype=dtype
            )
        return value.item() if isinstance(x, (float, complex)) else value

    def along(self, fun, args, out, u, directions, level, what, values=True):
        """The checks along each ``(label, tangent)`` of ``directions`` (and of the values, if ``values``)."""
        fd_name = f"central finite differences, eps={self.eps:g}"
        forward = f"forward mode (s2s.jvp of {what}), order {level}"
        reverse = f"reverse mode (s2s.vjp of {what}), order {level}"
        fds, dots = [self.central_difference(fun, args, t) for _, t in directions], []
        for (label, t), fd in zip(directions, fds):
            if "fwd" in self.modes:
                result = jvp(fun, args, t, backend=self.backend)
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise AssertionError(
                        f"check_grads: s2s.jvp of {what} gave {_structure(result)}, not (out, tangent)"
                    )
                dots.append(result[1])
                self.compare(
                    forward,
                    fd,
                    result[1],
                    (fd_name, "s2s.jvp"),
                    {"along": label, "t": t},
                    joint=values,
                )
                if values:
                    self.compare(
                        forward,
                        out,
                        result[0],
                        (f"{what}(*args)", "value from s2s.jvp"),
                        what="value",
                    )
        if "rev" in self.modes:
            value, pullback = vjp(fun, *args, backend=self.backend)
            if values:
                self.compare(
                    reverse,
                    out,
                    value,
                    (f"{what}(*args)", "value from s2s.vjp"),
                    what="value",
                )
            cts = pullback(u)
            for k, ((label, t), fd) in enumerate(zip(directions, fds)):
                got, where = _inner(t, cts), {"along": label, "t": t, "u": u}
                self.compare(
                    reverse,
                    _inner(fd, u),
                    got,
                    (f"<u, {fd_name}>", "<t, s2s.vjp(u)>"),
                    where,
                    joint=values,
                )
                if dots:
                    both = f"forward vs reverse mode (s2s.jvp and s2s.vjp of {what}), order {level}"
                    names = ("<u, s2s.jvp(t)>", "<t, s2s.vjp(u)>")
                    self.compare(
                        both,
                        _inner(dots[k], u),
                        got,
                        names,
                        where,
                        "consistency",
                        values,
                    )

    def central_difference(self, fun, args, tangent):
        """``(fun(args + eps t) - fun(args - eps t)) / (2 eps)`` in the inputs' dtypes (integers held fixed)."""
        steps = [dict(_leaves(t)) for t in tangent]

        def shifted(h):
            return [
                _map(lambda p, x: _axpy(h, step[p], x) if _inexact(x) else x, a)
                for a, step in zip(args, steps)
            ]

        plus, minus = fun(*shifted(self.eps)), dict(_leaves(fun(*shifted(-self.eps))))
        return _map(lambda p, y: _safe_subtract(y, minus[p]) * (0.5 / self.eps), plus)

    def compare(
        self, mode, expected, got, names, where=None, what="derivative", joint=True
    ):
        """Record each leaf of ``got`` against ``expected`` (``names``: theirs): its worst element's error ratio."""
        if _structure(expected) != _structure(got):
            raise AssertionError(
                f"check_grads: in {mode}, {names[1]} has the structure (leaf paths and shapes)\n  {_structure(got)}\n"
                f"but {names[0]} has\n  {_structure(expected)}"
            )
        got_leaves, where = dict(_leaves(got)), where or {}
        for path, e in _leaves(expected):
            e, g = np.asarray(e), np.asarray(got_leaves[path])
            if not _inexact(e) or not e.size:
                continue
            atol = max(_tolerance(self.atol, d) for d in (e.dtype, g.dtype)) * e.size
            rtol = max(_tolerance(self.rtol, d) for d in (e.dtype, g.dtype)) * e.size
            with np.errstate(invalid="ignore", divide="ignore"):
                err = np.where(
                    (e == g) | (np.isnan(e) & np.isnan(g)), 0.0, np.abs(g - e)
                )
                ratio = np.nan_to_num(err / (atol + rtol * np.abs(e)), nan=np.inf)
            k = np.unravel_index(int(np.argmax(ratio)), e.shape)
            if ratio[k] <= 1.0:
                self.results.append((float(ratio[k]), None, joint))
                continue
            lines = [f"check_grads: {what} mismatch in {mode}"]
            if "t" in where:
                lines.append(
                    f"  direction (random, seed 0) along {where['along']}: {_show(where['t'], 't')}"
                )
            if "u" in where:
                lines.append(
                    f"  output cotangent (random, seed 0): {_show(where['u'], 'u')}"
                )
            if path or e.ndim:
                lines.append(
                    f"  at output{path}"
                    + (f", element {tuple(int(j) for j in k)}" if e.ndim else "")
                )
            rel = err[k] / abs(e[k]) if e[k] else np.inf
            lines += [
                f"  expected ({names[0]}): {e[k].item()!r}",
                f"  got ({names[1]}): {g[k].item()!r}",
                f"  abs error {err[k]:.3g} (atol {atol:.3g}), rel error {rel:.3g} (rtol {rtol:.3g}); "
                "allowed: |got - expected| <= atol + rtol * |expected|",
                HINTS[what],
            ]
            self.results.append((float(ratio[k]), lines, joint))

    def report(self):
        failed = [r for r in self.results if not r[0] <= 1.0]
        if failed:
            # one leaf's, if any
            ratio, lines, _ = max(
                [r for r in failed if not r[2]] or failed, key=lambda r: r[0]
            )
            count = f"  {len(failed)} of {len(self.results)} comparisons failed; this is the worst "
            count += f"({ratio:.3g} times the allowed error)"
            raise AssertionError("\n".join([*lines[:-1], count, lines[-1]]))


def _leaves(tree, path=""):
    """``(path, leaf)`` for each leaf of a tree of tuples, lists and dicts, in order; ``None`` is no leaf."""
    if isinstance(tree, dict):
        return [item for k, v in tree.items() for item in _leaves(v, f"{path}[{k!r}]")]
    if isinstance(tree, (tuple, list)):
        return [item for k, v in enumerate(tree) for item in _leaves(v, f"{path}[{k}]")]
    return [] if tree is None else [(path, tree)]


def _map(fn, tree, path=""):
    """``tree`` with each leaf replaced by ``fn(path, leaf)``."""
    if isinstance(tree, dict):
        return {k: _map(fn, v, f"{path}[{k!r}]") for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        values = [_map(fn, v, f"{path}[{k}]") for k, v in enumerate(tree)]
        return type(tree)(*values) if hasattr(tree, "_fields") else type(tree)(values)
    return None if tree is None else fn(path, tree)


def _structure(tree):
    # JAX returns dicts with sorted keys
    return sorted((path, np.shape(leaf)) for path, leaf in _leaves(tree))


def _only(args, index, path, value):
    """Tangents for ``args``: ``value`` at leaf ``path`` of argument ``index``, zero elsewhere."""
    return tuple(
        _map(lambda p, x: value if (j, p) == (index, path) else _zero_tangent(x), a)
        for j, a in enumerate(args)
    )


def _dtype(x):
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


def _inexact(x):
    return _dtype(x).kind in "fc"


def _zero_tangent(x):
    """A zero tangent for ``x``: its own float dtype, float0 for integers and booleans (as ``s2s.jvp`` wants)."""
    if isinstance(x, float):
        return 0.0
    if _inexact(x):
        return np.zeros(np.shape(x), _dtype(x))
    import jax

    return np.zeros(np.shape(x), dtype=jax.dtypes.float0)


def _axpy(a, t, x):
    """``x + a * t`` in ``x``'s dtype (a Python float stays one)."""
    value = (np.asarray(x) + np.asarray(a * np.asarray(t), dtype=_dtype(x))).astype(
        _dtype(x)
    )
    return value.item() if isinstance(x, (float, complex)) else value


def _safe_subtract(a, b):
    """``a - b``, with ``inf - inf == 0``."""
    a, b = np.asarray(a), np.asarray(b)
    with np.errstate(invalid="ignore"):
        return np.where(a == b, np.zeros((), a.dtype), a - b)


def _inner(xs, ys):
    """``<xs, ys>`` (real part) over the inexact leaves of two trees; a leaf missing from ``ys`` counts as zero.

    Summed in float64, returned in the least precise dtype involved, so that dtype's tolerance applies.
    """
    y_leaves = dict(_leaves(ys))
    pairs = [
        (np.asarray(x), np.asarray(y_leaves[p]))
        for p, x in _leaves(xs)
        if _inexact(x) and p in y_leaves
    ]
    total = sum((np.real(np.vdot(x, y)) for x, y in pairs), 0.0)
    dtypes = [a.dtype for pair in pairs for a in pair if a.dtype.kind in "fc"]
    coarsest = max(
        dtypes, key=lambda d: _tolerance(None, d), default=np.dtype("float64")
    )
    return np.asarray(total, dtype=np.zeros(0, coarsest).real.dtype)


def _tolerance(tol, dtype):
    if tol is not None and not isinstance(tol, dict):
        return float(tol)
    merged = {**TOLERANCE, **{np.dtype(k): v for k, v in (tol or {}).items()}}
    return merged.get(np.dtype(dtype), 1e-1) if np.dtype(dtype).kind in "fc" else 0.0


def _show(tree, name):
    """``name = value`` for each nonzero floating-point leaf of ``tree`` (long arrays abbreviated)."""
    shown = []
    for path, x in _leaves(tree):
        a = np.asarray(x)
        if _inexact(a) and np.any(a != 0):
            text = np.array2string(
                a, precision=4, threshold=8, edgeitems=3, separator=", "
            ).replace("\n", "")
            shown.append(
                f"{name}{path} = {text}" + (f" (shape {a.shape})" if a.ndim else "")
            )
    return "; ".join(shown) or f"{name} = 0"
