"""The op table: test cases for every differentiable op, as data.

Each ``Case`` is one NumPy call, written as a standalone expression over named
inputs with the ``np.`` spelling (``"np.sum(x, axis=1, keepdims=True)"``),
with a shape spec and a value domain per input and tolerances. It drives the
rule harness (tests/test_rules.py) and end-to-end compiler tests.

API::

    from op_table import CASES, draw_inputs, inputs_for
    for case in CASES:                 # case.op, case.call, case.names, case.id
        ...
    @given(data=st.data())
    def test(data):
        inputs = draw_inputs(case, data.draw)    # {name: float64 ndarray}
    # or: inputs_for(case) is a hypothesis strategy of such dicts

Shape specs: a string of space-separated dims. A letter is a size drawn from
1..3, the same for every input of a case; a number is that size; ``...`` is a
shape drawn once per case (rank 0..2, sizes 1..3), and ``~...`` a
broadcast-compatible variant of it (leading dims dropped, some sizes set to 1).

Domains (values are drawn by NumPy from a seed that hypothesis picks):
``real`` (-2, 2), ``positive`` (0.5, 2.5), ``unit`` (-0.9, 0.9), ``gt1``
(1.1, 3), ``nonzero`` (|x| in (0.5, 2)), ``ties`` (drawn from {-1, 0, 0.5, 1}:
exercises kinks and ties, so no finite differences), ``wellcond`` (real plus
(n + 1) times the identity on the last two, square, dims: invertible), ``spd``
(``r @ r.T + n * I`` for r in (-1, 1) on the last two, square, dims: symmetric
positive definite), ``sym`` (symmetric, eigenvalues about 1.5 apart: eigenvector derivatives are
finite), ``tall`` (any shape, singular values about 1.5 apart).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

DOMAINS = {
    "real": (-2.0, 2.0),
    "positive": (0.5, 2.5),
    "unit": (-0.9, 0.9),
    "gt1": (1.1, 3.0),
    "nonzero": (0.5, 2.0),
    "wellcond": (-1.0, 1.0),
    "spd": (-1.0, 1.0),
    "sym": (-1.0, 1.0),
    "tall": (-1.0, 1.0),
}
TIES = np.array([-1.0, 0.0, 0.5, 1.0])


@dataclass(frozen=True)
class Case:
    op: str  # canonical op name
    call: str  # a NumPy call over the inputs, ``np.`` spelling
    shapes: dict[str, str]  # input name -> shape spec
    domain: str | dict[str, str] = "real"
    rtol: float = 1e-7
    atol: float = 1e-9
    fd: bool = True  # also check against central finite differences
    tags: tuple[str, ...] = field(default=())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.shapes)

    def domain_of(self, name: str) -> str:
        return (
            self.domain
            if isinstance(self.domain, str)
            else self.domain.get(name, "real")
        )

    @property
    def id(self) -> str:
        return self.call.replace("np.", "").replace(" ", "")

    @property
    def func_name(self) -> str:
        """The op as spelled in the call (``sum``, ``linalg.norm``, ``amax``)."""
        body = ast.parse(self.call, mode="eval").body
        # ``np.split(...)[i]``
        body = body.value if isinstance(body, ast.Subscript) else body
        spelled = ast.unparse(body.func).removeprefix("np.")
        # ``jax.nn.relu``: the op s2s resolves it to
        return library_name(spelled) or spelled


def C(op, call, shapes, domain="real", **kw):
    if isinstance(shapes, str):
        shapes = {"x": shapes}
    if domain == "ties":
        kw.setdefault("fd", False)
    return Case(op, call, shapes, domain, **kw)


U = {"x": "..."}  # unary, any rank
B = {"x": "~...", "y": "~..."}  # binary, broadcasting

CASES = [
    # elementwise, binary
    C("add", "np.add(x, y)", B),
    C("subtract", "np.subtract(x, y)", B),
    C("multiply", "np.multiply(x, y)", B),
    C("divide", "np.divide(x, y)", B, {"y": "nonzero"}),
    C("divide", "np.true_divide(x, y)", {"x": "...", "y": "..."}, {"y": "nonzero"}),
    C("power", "np.power(x, y)", B, "positive"),
    C("power", "np.power(x, 3.0)", U),
    C("power", "np.pow(x, y)", B, {"x": "positive", "y": "ties"}),
    # x ** 0 (an integer exponent) has slope 0, also at x = 0, as JAX's (not 0 * 0 ** -1, nan)
    C("power", "np.power(x, 0)", U, "ties"),
    C("remainder", "np.remainder(x, y)", B, {"y": "nonzero"}, fd=False),
    C("arctan2", "np.arctan2(x, y)", B, "nonzero"),
    C("maximum", "np.maximum(x, y)", B, fd=False),
    C("maximum", "np.maximum(x, y)", B, "ties"),
    C("minimum", "np.minimum(x, y)", B, fd=False),
    C("minimum", "np.minimum(x, y)", B, "ties"),
    C("logaddexp", "np.logaddexp(x, y)", B),
    C("hypot", "np.hypot(x, y)", B, "nonzero"),
    C("where", "np.where(x > 0, x, y)", B, fd=False),
    C("where", "np.where(np.isclose(x, y, atol=0.5), x, y)", B, fd=False),
    C(
        "where",
        "np.where(c > 0, x, y)",
        {"c": "...", "x": "~...", "y": "~..."},
        fd=False,
    ),
    C("clip", "np.clip(x, -0.5, 0.7)", U, fd=False),
    C(
        "clip",
        "np.clip(x, lo, hi)",
        {"x": "~...", "lo": "~...", "hi": "~..."},
        fd=False,
    ),
    C("clip", "np.clip(x, lo, hi)", {"x": "...", "lo": "...", "hi": "..."}, "ties"),
    C("clip", "np.clip(x, None, 0.5)", U, "ties"),
    # elementwise, unary
    C("negative", "np.negative(x)", U),
    C("positive", "np.positive(x)", U),
    C("abs", "np.abs(x)", U, "nonzero"),
    C("abs", "np.absolute(x)", U, "ties"),
    C("exp", "np.exp(x)", U),
    C("expm1", "np.expm1(x)", U),
    C("log", "np.log(x)", U, "positive"),
    C("log1p", "np.log1p(x)", U, "unit"),
    C("log2", "np.log2(x)", U, "positive"),
    C("log10", "np.log10(x)", U, "positive"),
    C("sqrt", "np.sqrt(x)", U, "positive"),
    C("square", "np.square(x)", U),
    C("reciprocal", "np.reciprocal(x)", U, "nonzero"),
    C("sin", "np.sin(x)", U),
    C("cos", "np.cos(x)", U),
    C("tan", "np.tan(x)", U, "unit"),
    C("arcsin", "np.arcsin(x)", U, "unit"),
    C("arccos", "np.arccos(x)", U, "unit"),
    C("arctan", "np.arctan(x)", U),
    C("sinh", "np.sinh(x)", U),
    C("cosh", "np.cosh(x)", U),
    C("tanh", "np.tanh(x)", U),
    C("arcsinh", "np.arcsinh(x)", U),
    C("arccosh", "np.arccosh(x)", U, "gt1"),
    C("arctanh", "np.arctanh(x)", U, "unit"),
    # reductions
    C("sum", "np.sum(x)", U),
    C("sum", "np.sum(x, axis=1, keepdims=True)", "a b ..."),
    C("sum", "np.sum(x, axis=(0, -1))", "a b c"),
    C("sum", "np.sum(x, 0)", "a ..."),
    C("mean", "np.mean(x)", U),
    C("mean", "np.mean(x, axis=-1)", "... a"),
    C("mean", "np.mean(x, axis=(0, 2), keepdims=True)", "a b c"),
    C("prod", "np.prod(x)", U),
    C("prod", "np.prod(x, axis=1)", "a b ...", "ties"),
    C("prod", "np.prod(x, axis=(0, 1), keepdims=True)", "a b ...", "ties"),
    C("max", "np.max(x)", U, fd=False),
    C("max", "np.max(x, axis=0, keepdims=True)", "a ...", "ties"),
    C("max", "np.amax(x, axis=-1)", "... a", "ties"),
    C("min", "np.min(x, axis=1)", "a b", fd=False),
    C("min", "np.amin(x)", U, "ties"),
    C("cumsum", "np.cumsum(x)", U),
    C("cumsum", "np.cumsum(x, axis=1)", "a b ..."),
    C("cumprod", "np.cumprod(x, axis=0)", "a ..."),
    C("cumprod", "np.cumprod(x)", U, "ties"),
    # decompositions
    C("var", "np.var(x)", "a ..."),
    C("var", "np.var(x, axis=1, ddof=1, keepdims=True)", "a 3 ..."),
    C("var", "np.var(x, axis=0)", "a ..."),
    C("std", "np.std(x, axis=-1)", "... 3"),
    C("std", "np.std(x, ddof=1)", "2 ..."),
    # contractions
    C("matmul", "np.matmul(a, b)", {"a": "n k", "b": "k m"}),
    C("matmul", "np.matmul(a, b)", {"a": "~... n k", "b": "~... k m"}),
    C("matmul", "np.matmul(a, b)", {"a": "k", "b": "... k m"}),
    C("matmul", "np.matmul(a, b)", {"a": "... n k", "b": "k"}),
    C("matmul", "np.matmul(a, b)", {"a": "k", "b": "k"}),
    C("dot", "np.dot(a, b)", {"a": "k", "b": "k"}),
    C("dot", "np.dot(a, b)", {"a": "n k", "b": "k m"}),
    C("dot", "np.dot(a, b)", {"a": "p n k", "b": "q k m"}),
    C("dot", "np.dot(a, b)", {"a": "n k", "b": "k"}),
    C("dot", "np.dot(a, b)", {"a": "", "b": "..."}),
    C("vdot", "np.vdot(a, b)", {"a": "n k", "b": "k n"}),
    C("inner", "np.inner(a, b)", {"a": "n k", "b": "... k"}),
    C("inner", "np.inner(a, b)", {"a": "", "b": "..."}),
    C("outer", "np.outer(a, b)", {"a": "n", "b": "m k"}),
    C("einsum", "np.einsum('ij,jk->ik', a, b)", {"a": "n k", "b": "k m"}),
    C("einsum", "np.einsum('ij,jk', a, b)", {"a": "n k", "b": "k m"}),
    C(
        "einsum",
        "np.einsum('...ij,...jk->...ik', a, b)",
        {"a": "~... n k", "b": "~... k m"},
    ),
    C("einsum", "np.einsum('ii->i', a)", {"a": "n n"}),
    C("einsum", "np.einsum('ii', a)", {"a": "n n"}),
    C("einsum", "np.einsum('ij->', a)", {"a": "n m"}),
    C(
        "einsum",
        "np.einsum('bij,j,k->bik', a, b, c)",
        {"a": "p n m", "b": "m", "c": "k"},
    ),
    C("einsum", "np.einsum('ji', a)", {"a": "n m"}),
    C("einsum", "np.einsum('i...,i->...', a, b)", {"a": "n ...", "b": "n"}),
    C("tensordot", "np.tensordot(a, b)", {"a": "p n m", "b": "n m k"}),
    C("tensordot", "np.tensordot(a, b, axes=1)", {"a": "p n", "b": "n k"}),
    C(
        "tensordot",
        "np.tensordot(a, b, axes=([1, 0], [0, 2]))",
        {"a": "n m", "b": "m k n"},
    ),
    C("tensordot", "np.tensordot(a, b, axes=0)", {"a": "n", "b": "m k"}),
    C("trace", "np.trace(x)", "n m"),
    C("trace", "np.trace(x, 1, 0, 2)", "n k m"),
    # linear algebra
    C("linalg.norm", "np.linalg.norm(x)", "a ...", "nonzero"),
    C("linalg.norm", "np.linalg.norm(x, axis=-1, keepdims=True)", "... a", "nonzero"),
    C("linalg.norm", "np.linalg.norm(x, 2)", "a", "nonzero"),
    C("linalg.norm", "np.linalg.norm(x, 1, axis=0)", "a ...", "nonzero"),
    C("linalg.norm", "np.linalg.norm(x, np.inf)", "a", "ties"),
    C("linalg.norm", "np.linalg.norm(x, 3)", "a", "nonzero"),
    C("linalg.norm", "np.linalg.norm(x, 'fro')", "a b", "nonzero"),
    C("linalg.norm", "np.linalg.norm(x, 1)", "a b", "ties"),
    C("linalg.norm", "np.linalg.norm(x, -np.inf, axis=(2, 0))", "a b c", fd=False),
    C("linalg.norm", "np.linalg.norm(x, 'nuc')", "a b", rtol=1e-6, atol=1e-8, fd=False),
    C("linalg.inv", "np.linalg.inv(x)", "... n n", "wellcond"),
    C("linalg.det", "np.linalg.det(x)", "... n n", "wellcond"),
    C(
        "linalg.solve",
        "np.linalg.solve(a, b)",
        {"a": "n n", "b": "n"},
        {"a": "wellcond"},
    ),
    C(
        "linalg.solve",
        "np.linalg.solve(a, b)",
        {"a": "~... n n", "b": "~... n k"},
        {"a": "wellcond"},
    ),
    C(
        "linalg.solve",
        "np.linalg.solve(a, b)",
        {"a": "... n n", "b": "n"},
        {"a": "wellcond"},
    ),
    # JAX symmetrizes cholesky's input (NumPy reads its lower triangle): no finite differences
    C("linalg.cholesky", "np.linalg.cholesky(x)", "... n n", "spd", fd=False),
    C("convolve", "np.convolve(a, v)", {"a": "n", "v": "m"}),
    C("convolve", "np.convolve(a, v, mode='same')", {"a": "n", "v": "m"}),
    C("convolve", "np.convolve(a, v, 'valid')", {"a": "n", "v": "m"}),
    # decompositions into other ops
    C("diff", "np.diff(x)", "... a"),
    C("diff", "np.diff(x, 2, axis=0)", "4 ..."),
    C("diff", "np.diff(x, axis=0, prepend=0.5)", "3 ..."),
    C("diff", "np.diff(x, append=b)", {"x": "... a", "b": "... 1"}),
    C("cross", "np.cross(a, b)", {"a": "~... 3", "b": "~... 3"}),
    C(
        "cross",
        "np.cross(a, b, axisa=0, axisb=0, axisc=0)",
        {"a": "3 ...", "b": "3 ..."},
    ),
    C("kron", "np.kron(a, b)", {"a": "...", "b": "..."}),
    C("kron", "np.kron(a, b)", {"a": "n", "b": "m k"}),
    # shape ops
    C("copy", "np.copy(x)", U),
    C("reshape", "np.reshape(x, (-1,))", U),
    C("reshape", "np.reshape(x, (2, 3, -1))", "6 a"),
    C("reshape", "np.reshape(x, (-1, 2), order='F')", "a 4"),
    C("ravel", "np.ravel(x)", "a b ..."),
    C("transpose", "np.transpose(x)", U),
    C("transpose", "np.transpose(x, (1, 2, 0))", "a b c"),
    C("transpose", "np.transpose(x, (-1, 0, 1))", "a b c"),
    C("matrix_transpose", "np.matrix_transpose(x)", "... a b"),
    C("swapaxes", "np.swapaxes(x, 0, -1)", "a b ..."),
    C("moveaxis", "np.moveaxis(x, 0, -1)", "a b ..."),
    C("moveaxis", "np.moveaxis(x, (0, 1), (2, 0))", "a b c"),
    C("squeeze", "np.squeeze(x)", "1 a 1 ..."),
    C("squeeze", "np.squeeze(x, axis=0)", "1 ..."),
    C("expand_dims", "np.expand_dims(x, 1)", "a ..."),
    C("expand_dims", "np.expand_dims(x, (0, -1))", U),
    C("concatenate", "np.concatenate([a, b], axis=0)", {"a": "n ...", "b": "m ..."}),
    C(
        "concatenate",
        "np.concatenate([a, b, a], axis=-1)",
        {"a": "... n", "b": "... m"},
    ),
    C("concatenate", "np.concatenate((a, b), axis=None)", {"a": "...", "b": "n m"}),
    C("concatenate", "np.concat([a, b])", {"a": "n ...", "b": "m ..."}),
    C("stack", "np.stack([a, b])", {"a": "...", "b": "..."}),
    C("stack", "np.stack([a, b, c], axis=-1)", {"a": "...", "b": "...", "c": "..."}),
    C("hstack", "np.hstack([a, b])", {"a": "n", "b": "m"}),
    C("hstack", "np.hstack((a, b))", {"a": "n k ...", "b": "n m ..."}),
    C("vstack", "np.vstack([a, b])", {"a": "n", "b": "n"}),
    C("vstack", "np.vstack([a, b])", {"a": "k n ...", "b": "m n ..."}),
    C("split", "np.split(x, 2)[1]", "4 ..."),
    C("split", "np.split(x, [1, 3], axis=1)[0]", "a 4 ..."),
    C(
        "split", "np.split(x, [1, 1])[2]", "4 ..."
    ),  # jax.numpy.split rejects negative indices
    C("tile", "np.tile(x, 2)", U),
    C("tile", "np.tile(x, (2, 1, 3))", "a b"),
    C("repeat", "np.repeat(x, 3)", U),
    C("repeat", "np.repeat(x, 2, axis=1)", "a b ..."),
    C("broadcast_to", "np.broadcast_to(x, (2, 3, 4))", "~3 ~4"),
    C("flip", "np.flip(x)", U),
    C("flip", "np.flip(x, axis=1)", "a b ..."),
    C("roll", "np.roll(x, 2)", U),
    C("roll", "np.roll(x, -1, axis=0)", "a ..."),
    C("roll", "np.roll(x, (1, 2), axis=(0, 1))", "a b"),
    C("pad", "np.pad(x, 1)", U),
    C("pad", "np.pad(x, ((1, 0), (2, 3)))", "a b"),
    C("pad", "np.pad(x, (1, 2))", "a ..."),
    C("pad", "np.pad(x, ((1, 2), (2, 1)), mode='edge')", "a b"),
    C("pad", "np.pad(x, 1, mode='reflect')", "a b"),
    C("pad", "np.pad(x, (2, 1), mode='symmetric')", "a ..."),
    C("pad", "np.pad(x, (1, 2), mode='wrap')", "a ..."),
    C("diag", "np.diag(x)", "n"),
    C("diag", "np.diag(x, -1)", "n"),
    C("diag", "np.diag(x)", "n m"),
    C("diag", "np.diag(x, 1)", "n m"),
    C("diag", "np.diag(x, -2)", "5 m"),
    C("triu", "np.triu(x)", "... a b"),
    C("tril", "np.tril(x, -1)", "... a b"),
    C("asarray", "np.asarray(x)", U),
    C("array", "np.array([a, b, a])", {"a": "...", "b": "..."}),
    C("full", "np.full((2, 3), x)", {"x": ""}),
    C("full", "np.full((2, 3), x)", {"x": "3"}),
    C("full_like", "np.full_like(y, x)", {"x": "", "y": "2 3"}),
    C("take", "np.take(x, np.array([0, 2, 2, 1]))", "3 ..."),
    C("take", "np.take(x, np.array([[1, 0], [-1, 1]]), axis=1)", "a 2 ..."),
    C("take", "np.take(x, np.array([0, 5, 2]), mode='clip')", "3 ..."),
    C(
        "take",
        "np.take(x, np.array([[4, 0], [-4, 1]]), axis=1, mode='wrap')",
        "a 2 ...",
    ),
    C(
        "take_along_axis",
        "np.take_along_axis(x, np.array([0, 2, 2, 1, 2]), axis=0)",
        "3",
    ),
    C(
        "take_along_axis",
        "np.take_along_axis(x, np.array([[0, 2, 2, 1]]), axis=1)",
        "a 3",
    ),
    C(
        "take_along_axis",
        "np.take_along_axis(x, np.array([[1], [0], [1]]), axis=-1)",
        "3 2",
    ),
    C(
        "take_along_axis",
        "np.take_along_axis(x, np.array([[[1], [0], [1], [1]]]), axis=1)",
        "a 2 b",
    ),
    C(
        "take_along_axis",
        "np.take_along_axis(x, np.array([[0, 2, 2, 1], [1, 1, 0, 2]]), axis=1)",
        "~2 3",
    ),
    C(
        "take_along_axis",
        "np.take_along_axis(x, np.array([3, 0, -1, 3]), axis=None)",
        "2 2",
    ),
    # order statistics: each element's derivative follows it to its sorted place
    C("sort", "np.sort(x)", "... a"),
    C("sort", "np.sort(x, axis=0)", "a ..."),
    C("sort", "np.sort(x, axis=None)", "a b"),
    # casts to inexact types (the op table's inputs and cotangents are float64; casts to float32 and to
    # integers, where JAX's cotangents are float32 or float0, are tested in test_rules_astype_take_along.py)
    C("astype", "np.astype(x, np.float64)", U),
    C("astype", "np.astype(x, float)", U),
    # nondiff ops with float outputs: JAX's gradient is zero
    C("sign", "np.sign(x)", U),
    C("floor", "np.floor(x)", U),
    C("ceil", "np.ceil(x)", U),
    C("round", "np.round(x)", U),
    C("trunc", "np.trunc(x)", U),
    C("floor_divide", "np.floor_divide(x, y)", B, {"y": "nonzero"}),
]

from op_table_library import LIBRARY_CASES, library_name  # noqa: E402

# NumPy's own ops; then jax.nn, jax.lax, scipy.special, scipy.stats, as users spell them. The harnesses
# draw fewer examples of library cases: most are compositions of the ops above, each drawn in full by
# its own cases, and their JAX oracles compile slowly
CORE_CASES = list(CASES)
CASES += LIBRARY_CASES


def _dims_for(spec, sizes, base, draw):
    dims = []
    for token in spec.split():
        if token == "...":
            dims.extend(base)
        elif token == "~...":
            drop = draw(st.integers(0, len(base)))
            dims.extend(1 if draw(st.booleans()) else n for n in base[drop:])
        elif token.startswith("~"):
            n = int(token[1:])
            dims.append(1 if draw(st.booleans()) else n)
        elif token.isdigit():
            dims.append(int(token))
        else:
            if token not in sizes:
                sizes[token] = draw(st.integers(1, 3))
            dims.append(sizes[token])
    return tuple(dims)


def draw_shapes(case: Case, draw) -> dict[str, tuple[int, ...]]:
    """Shapes for the inputs of ``case``, drawn with hypothesis's ``draw``."""
    rank = draw(st.integers(0, 2))
    base = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    sizes: dict[str, int] = {}
    return {
        name: _dims_for(spec, sizes, base, draw) for name, spec in case.shapes.items()
    }


def tall(rng, shape):
    """A matrix with well-separated singular values: orthogonal factors around (n, n - 1, ..., 1) * 1.5."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(rng.normal(size=(*shape[:-2], m, m)))
    v, _ = np.linalg.qr(rng.normal(size=(*shape[:-2], n, n)))
    s = 1.5 * np.arange(k, 0, -1.0) + rng.uniform(0, 0.3, size=k)
    return (u[..., :, :k] * s) @ np.swapaxes(v[..., :, :k], -1, -2)


def symmetric(rng, shape):
    """A symmetric matrix with eigenvalues (1, 2, ..., n) * 1.5 plus noise, in a random basis."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.normal(size=shape))
    w = 1.5 * np.arange(1, n + 1.0) + rng.uniform(0, 0.3, size=n)
    return (q * w) @ np.swapaxes(q, -1, -2)


MATRICES = {"tall": tall, "sym": symmetric}


def _values(rng, domain, shape):
    if domain in MATRICES:
        return MATRICES[domain](rng, shape)
    if domain == "ties":
        return rng.choice(TIES, size=shape)
    low, high = DOMAINS[domain]
    x = rng.uniform(low, high, size=shape)
    if domain == "nonzero":
        x = x * rng.choice([-1.0, 1.0], size=shape)
    if domain == "wellcond":
        n = shape[-1]
        x = x + (n + 1) * np.eye(n)
    if domain == "spd":
        x = x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])
    return np.asarray(x)


def draw_inputs(case: Case, draw) -> dict[str, np.ndarray]:
    """Float64 NumPy inputs for ``case``: shapes from hypothesis, values from a seed it picks."""
    return draw_values(case, draw_shapes(case, draw), draw)


def draw_values(case: Case, shapes: dict[str, tuple], draw) -> dict[str, np.ndarray]:
    """Float64 inputs of the given ``shapes`` in the case's domains, from a seed hypothesis picks."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return {
        name: _values(rng, case.domain_of(name), shape)
        for name, shape in shapes.items()
    }


def inputs_for(case: Case) -> st.SearchStrategy[dict[str, np.ndarray]]:
    """A hypothesis strategy of input dicts for ``case``."""
    return st.composite(lambda draw: draw_inputs(case, draw))()
