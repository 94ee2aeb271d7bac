"""JAX's rules on the types of what is differentiated: real floating-point inputs to a derivative (no
complex ones), and gradients returned in their parameters' dtypes and shapes (a gradient of another shape
is never returned: s2s stops with an internal error).
"""

from __future__ import annotations

import numpy as np

from .errors import S2SError
from .runtime.trees import tree_leaves, tree_map


def check_float_inputs(args, argnums, api="grad", allow_int=False):
    """JAX's dtype checks on the differentiated arguments: real floating-point leaves only (integer and
    boolean ones too with ``allow_int``)."""
    for i in (argnums,) if isinstance(argnums, int) else argnums:
        for leaf in tree_leaves(args[i]):
            # a function a module holds (Equinox's activation) has no derivative: None, as equinox.filter_grad
            if isinstance(leaf, float) or (
                callable(leaf) and not hasattr(leaf, "dtype")
            ):
                continue
            if not hasattr(leaf, "dtype") and not isinstance(
                leaf, (bool, int, complex, np.generic)
            ):  # an object JAX does not flatten (a plain ``@dataclass``): as jax.grad, not a valid input
                raise TypeError(
                    f"{api}: argument {i} holds a {type(leaf).__name__}, which is neither an array nor "
                    "a pytree of arrays: register its class as a pytree "
                    "(`jax.tree_util.register_dataclass`, `register_pytree_node_class`), or pass its "
                    "arrays as arguments"
                )
            dtype = dtype_of(leaf)
            if dtype.kind == "c":
                raise _complex_error(api, dtype)
            if dtype.kind != "f" and not (allow_int and dtype.kind in "iub"):
                raise TypeError(
                    f"{api} requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), "
                    f"but got {dtype.name}. If you want to use Boolean- or integer-valued inputs, use vjp or set "
                    "allow_int to True."
                )


def in_primal_dtypes(out, args, argnums, kind, has_aux, allow_int=False, fn=None):
    """JAX's rule: a gradient has its primal's dtype (a float32 parameter of a loss computed in float64
    under ``jax_enable_x64`` gets a float32 gradient); an integer or boolean one (``allow_int``), float0
    zeros of its shape. A complex gradient of a real parameter (a complex argument met it on the
    differentiated path) is an error at ``fn``'s definition, never its real part."""
    value, grads = out if kind == "value_and_grad" else (None, out)
    if has_aux and kind == "grad":
        grads, aux = grads
    primals = (
        args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    )

    def cast(g, p):
        want = dtype_of(p)
        if allow_int and want.kind in "iub" and not isinstance(p, float):
            from jax.dtypes import float0

            return np.zeros(np.shape(p), dtype=float0)
        if type(g).__module__.startswith(
            "jax"
        ):  # float64 is float32 without ``jax_enable_x64``
            import jax

            want = jax.dtypes.canonicalize_dtype(want)
        if want.kind == "f" and not isinstance(p, float) and dtype_of(g) != want:
            return g.astype(want)
        return g

    pairs = list(_leaf_pairs(grads, primals))
    for g, p in pairs:
        if g is None:
            raise S2SError(
                f"s2s.{kind}: the generated code computed no gradient (None) for a parameter of shape "
                f"{np.shape(p)}; this is a bug in s2s, not in your program",
                hint="please report it with the function; `.source` shows the generated module",
            )
        if dtype_of(g).kind == "c" and dtype_of(p).kind != "c":
            raise complex_on_the_path(fn, "gradient")
        if np.shape(g) != np.shape(
            p
        ):  # a gradient of another shape is never returned as one
            raise S2SError(
                f"s2s.{kind}: the generated code computed a gradient of shape {np.shape(g)} for a "
                f"parameter of shape {np.shape(p)}; this is a bug in s2s, not in your program",
                hint="please report it with the function; `.source` shows the generated module",
            )
    cast_by_id = {id(g): cast(g, p) for g, p in pairs}
    grads = tree_map(lambda g: cast_by_id.get(id(g), g), grads)
    if has_aux and kind == "grad":
        grads = (grads, aux)
    return (value, grads) if kind == "value_and_grad" else grads


def _leaf_pairs(grads, primals):
    """``(gradient leaf, parameter leaf)`` pairs: dicts matched by key (a gradient's keys may come in
    another order), sequences by position; a leaf without a gradient (None: a function an Equinox module
    holds) has no pair, unless the parameter is an array or a number (``(None, p)``: a bug).
    """
    if isinstance(grads, dict) and isinstance(primals, dict):
        for k in primals:
            if k in grads:
                yield from _leaf_pairs(grads[k], primals[k])
    elif (
        isinstance(grads, (list, tuple))
        and isinstance(primals, (list, tuple))
        and len(grads) == len(primals)
    ):
        for g, p in zip(grads, primals):
            yield from _leaf_pairs(g, p)
    elif grads is None:
        if (
            isinstance(primals, (float, int, np.ndarray, np.generic))
            or hasattr(primals, "__jax_array__")
            or type(primals).__module__.startswith("jax")
        ):
            yield None, primals  # an array's gradient is never None
        return
    elif not hasattr(
        grads, "shape"
    ):  # another record (a dataclass, a module): its leaves in order
        g_leaves, p_leaves = list(tree_leaves(grads)), list(tree_leaves(primals))
        if len(g_leaves) == len(p_leaves) and not (
            len(g_leaves) == 1 and g_leaves[0] is grads
        ):
            for g, p in zip(g_leaves, p_leaves):
                yield from _leaf_pairs(g, p)
    elif hasattr(primals, "shape") or isinstance(primals, (int, float)):
        yield grads, primals


def check_real(args, positions, api):
    """No complex leaf in the arguments at ``positions`` (``jvp``/``vjp``/``linearize``, which allow integers)."""
    for i in positions:
        for leaf in tree_leaves(args[i]):
            if not isinstance(leaf, float) and dtype_of(leaf).kind == "c":
                raise _complex_error(api, dtype_of(leaf))


def complex_on_the_path(fn, what: str) -> S2SError:
    """The error for a complex ``what`` (gradient, tangent) of real values: s2s's rules are written for
    real numbers, so a complex value that met the differentiated path (a complex argument, a complex
    constant of a helper) made it wrong, not only complex. At ``fn``'s ``def`` line."""
    return S2SError(
        f"a complex value on the differentiated path (the {what} came out complex): s2s differentiates "
        "real-valued code, and its rules are not those of complex numbers",
        _definition(fn),
        "keep the real and imaginary parts as two real arrays (pass `M.real` and `M.imag` for a complex "
        "argument `M`; `np.cos(t)` and `np.sin(t)` for `np.exp(1j * t)`)",
    )


def check_real_derivatives(fn, what: str, derivatives, values=None) -> None:
    """``complex_on_the_path`` where a leaf of ``derivatives`` is complex (and, given ``values`` leaf by
    leaf, its value is real): the inputs of a derivative are real, so a complex value met the path.
    """
    leaves = list(tree_leaves(derivatives))
    paired = list(tree_leaves(values)) if values is not None else [None] * len(leaves)
    for d, v in zip(leaves, paired):
        if dtype_of(d).kind == "c" and (v is None or dtype_of(v).kind != "c"):
            raise complex_on_the_path(fn, what)


def _definition(fn):
    """The ``def`` line of ``fn`` as an ``Origin``, or None."""
    import inspect
    import linecache

    from .errors import Origin

    try:
        code = inspect.unwrap(fn).__code__
    except (AttributeError, ValueError):
        return None
    line = linecache.getline(code.co_filename, code.co_firstlineno).rstrip("\n")
    col = len(line) - len(line.lstrip())
    return Origin(code.co_filename, code.co_firstlineno, col, len(line), line)


def _complex_error(api, dtype) -> TypeError:
    return TypeError(
        f"s2s.{api} got a {dtype.name} input: s2s does not differentiate complex inputs (its derivative rules "
        "are written for real numbers). Split each complex array into its real and imaginary parts, two real "
        "arrays, and compute with them as real arrays."
    )


def dtype_of(value):
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return np.asarray(value).dtype
    try:
        return np.dtype(dtype)
    except (
        TypeError
    ):  # a typed key (``jax.random.key``): integers underneath, its tangent float0
        return np.dtype(np.uint32)
