"""How much of JAX's differentiable API s2s covers, per namespace, computed (``python -m s2s.rules --coverage``).

Every public function of ``jax.numpy``, ``jax.numpy.linalg``, ``jax.nn`` and
``jax.scipy.special`` is probed with ``jax.eval_shape`` on small float arrays
(one or two vectors or square matrices, or a vector and an int): a function
whose result has a floating-point leaf is one JAX differentiates. A function
is covered when s2s resolves it to an op with rules (any family: a
``nondiff`` op is covered too, its gradient being JAX's zero). Functions no
probe can call (they take other arguments, or have data-dependent shapes)
are listed apart. Only the functions that are not array math (printing,
files, dtypes, which some probes crash) are named by hand, and not probed.
"""

from __future__ import annotations

import functools
import types
import warnings
from dataclasses import dataclass

NAMESPACES = ("jax.numpy", "jax.numpy.linalg", "jax.nn", "jax.scipy.special")
# not array math: text, files, buffers, dtype queries and wrappers of Python functions
NOT_MATH = frozenset(
    {
        "array_repr", "array_str", "printoptions", "set_printoptions", "get_printoptions",
        "save", "savez", "load", "fromfile", "frombuffer", "fromstring", "from_dlpack",
        "fromiter", "frompyfunc", "vectorize", "iterable", "isscalar", "isdtype",
        "issubdtype", "can_cast", "promote_types", "result_type", "einsum_path",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Namespace:
    name: str
    covered: tuple[str, ...]  # differentiable and known to s2s
    missing: tuple[str, ...]  # differentiable, unknown to s2s
    unprobed: tuple[str, ...]  # no probe could call them, unknown to s2s
    unprobed_known: tuple[str, ...]  # no probe could call them, known to s2s

    @property
    def differentiable(self) -> int:
        return len(self.covered) + len(self.missing)


def _probes():
    import jax
    import numpy as np

    vector = jax.ShapeDtypeStruct((3,), np.float32)
    matrix = jax.ShapeDtypeStruct((3, 3), np.float32)
    return (
        (vector,),
        (matrix,),
        (vector, vector),
        (matrix, matrix),
        (vector, 2),
        (matrix, vector),
    )


def _probe_leaves(fn) -> list | None:
    """The leaves of JAX's result on the first probe of real arrays that ``fn`` takes; None if none fits."""
    import jax

    for args in _probes():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = jax.eval_shape(fn, *args)
        except Exception:  # a probe that does not fit: try the next
            continue
        return [
            leaf for leaf in jax.tree_util.tree_leaves(out) if hasattr(leaf, "dtype")
        ]
    return None


def _complex_valued(namespace: str, name: str) -> bool:
    """Whether JAX's function returns complex numbers on real arrays."""
    import importlib

    import numpy as np

    leaves = _probe_leaves(getattr(importlib.import_module(namespace), name)) or []
    return any(np.issubdtype(leaf.dtype, np.complexfloating) for leaf in leaves)


def _differentiable(fn) -> bool | None:
    """True if JAX returns a float result for some probe, False if only other results, None if no probe runs."""
    import numpy as np

    leaves = _probe_leaves(fn)
    if leaves is None:
        return None
    return any(np.issubdtype(leaf.dtype, np.inexact) for leaf in leaves)


def _known(obj, path: tuple[str, ...]) -> bool:
    from ..frontend import blocks, chains, identity, selections, spellings
    from . import OPS

    name = spellings.canonical_op(obj, path)
    return (
        (name is not None and name in OPS)
        or identity.library_op(obj) is not None
        or selections.is_select(obj)  # read as nested ``where``s
        or blocks.is_block(obj)  # read as nested concatenations
        or chains.is_multi_dot(obj)  # read as nested matrix products
    )


def known(namespace: str, name: str) -> bool:
    """Whether s2s resolves ``<namespace>.<name>`` (``"jax.numpy.linalg", "eigh"``) to an op it has rules for."""
    import importlib

    prefix = (
        tuple(namespace.split(".")[2:]) if namespace.startswith("jax.numpy") else ()
    )
    return _known(getattr(importlib.import_module(namespace), name), (*prefix, name))


def _functions(module):
    for name in sorted(dir(module)):
        obj = getattr(module, name)
        if (
            name.startswith("_")
            or name in NOT_MATH
            or isinstance(obj, (types.ModuleType, type))
            or not callable(obj)
        ):
            continue
        yield name, obj


@functools.cache
def namespaces() -> tuple[Namespace, ...]:
    import importlib

    out = []
    for dotted in NAMESPACES:
        module = importlib.import_module(dotted)
        prefix = tuple(dotted.split(".")[2:]) if dotted.startswith("jax.numpy") else ()
        covered, missing, unprobed, unprobed_known = [], [], [], []
        for name, obj in _functions(module):
            kind, known = _differentiable(obj), _known(obj, (*prefix, name))
            if kind is None:
                (unprobed_known if known else unprobed).append(name)
            elif kind:
                (covered if known else missing).append(name)
        out.append(
            Namespace(
                dotted,
                tuple(covered),
                tuple(missing),
                tuple(unprobed),
                tuple(unprobed_known),
            )
        )
    return tuple(out)


def report(out) -> None:
    print(
        "\ncoverage of the functions JAX differentiates (those returning floats on float arrays):",
        file=out,
    )
    for ns in namespaces():
        share = len(ns.covered) / max(ns.differentiable, 1)
        print(
            f"  {ns.name}: {len(ns.covered)} of {ns.differentiable} ({share:.0%})",
            file=out,
        )
        real = [name for name in ns.missing if not _complex_valued(ns.name, name)]
        complex_ = [name for name in ns.missing if name not in real]
        if real:
            print(f"    not covered: {' '.join(real)}", file=out)
        if complex_:
            print(
                f"    not covered, complex results (s2s is real-only): {' '.join(complex_)}",
                file=out,
            )
    print(
        "\nnot probed (they take other arguments, or their shapes depend on data):",
        file=out,
    )
    for ns in namespaces():
        print(f"  {ns.name}:", file=out)
        if ns.unprobed_known:
            print(f"    known to s2s: {' '.join(ns.unprobed_known)}", file=out)
        if ns.unprobed:
            print(f"    unknown to s2s: {' '.join(ns.unprobed)}", file=out)
