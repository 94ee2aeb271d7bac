"""Every op and runtime helper with a derivative rule has a batching rule, so ``s2s.vmap(s2s.grad(f))``
batches whatever gradient code calls; the few without one are listed below, each with its reason, and a
new helper without a batching rule fails here until it has one (or a reason in the list).

Per-example gradients through the helpers that gained rules are checked against a loop of ``s2s.grad``.
"""

import numpy as np
import pytest
from test_coverage import CALLED_BY_DERIVATIVES, CONTROL

import s2s
from s2s.rules import OPS, RUNTIME_OPS

_SECOND_ORDER = (
    "called only by second and higher derivatives (vmap of hessian): not batched yet"
)
_BATCHED_CODE = (
    "differentiates batched code (grad of vmap); batching it again is vmap of vmap, which "
    "s2s.vmap does not do"
)

# helper or op -> why it has no batching rule (a use under vmap is a located "no batching rule" error)
ALLOWED = {
    **dict.fromkeys(
        [
            "rt.batch_first",
            "rt.loop_first",
            "rt.loop_first_vjp",
            "rt.batch_size",
            "rt.example_ndim",
            "rt.example_item",
            "rt.example_item_vjp",
            "rt.example_transpose",
            "rt.flat_examples",
            "rt.pack_examples",
            "rt.unpack_examples",
            "rt.sum_unbatched",
            "rt.tree_sum_batch",
            "rt.unsum_batch",
            "rt.pmean_examples",
            "rt.pmean_examples_vjp",
            "rt.batching.matmul",
            "rt.batching.select",
            "rt.batching.guard_vjp",
            "rt.batched_vjps.broadcast_like",
            "rt.batched_vjps.unbroadcast",
            "rt.batched_vjps.matmul_vjp_lhs",
            "rt.batched_vjps.matmul_vjp_rhs",
            "rt.batching.dot",
            "rt.batching.inner",
            "rt.batched_vjps.dot_vjp",
            "rt.batched_vjps.inner_vjp",
            "rt.batched_vjps.take_vjp",
            "rt.batching.take_length",
            "rt.batched_vjps.batching_einsum_vjp",
            "rt.batching.solve",
            "rt.batched_vjps.solve_vjp_a",
            "rt.batched_vjps.solve_vjp_b",
            "rt.batched_vjps.solve_jvp_a",
            "rt.batch_leaves",
            "rt.batch_leaves_vjp",
            "rt.unbatch_leaves",
            "rt.rebatch_leaves",
            "rt.batch_size_of",
            "rt.fill_examples",
            "rt.fill_examples_vjp",
            "rt.batching.zero_at",
            "rt.batched_vjps.index_add_value_vjp",
            "rt.batched_vjps.index_read_add_value_vjp",
            "rt.batched_vjps.index_set_value_vjp",
            "rt.batched_shape_vjps.array_vjp",
            "rt.batched_shape_vjps.array_vjp_transpose",
            "rt.batched_ops.reshape",
            "rt.batched_ops.diag",
            "rt.batched_shape_vjps.diag_vjp",
            "rt.batched_vjps.dot_at",
            "rt.batched_vjps.inner_at",
            "rt.batched_vjps.tensordot_at",
            "rt.batched_ops.convolve",
            "rt.batched_ops.last_axis_padding",
            "rt.batching.index_add",
            "rt.batched_ops.selection",
            "rt.batched_ops.selection_vjp",
            "rt.example_shape",
            "rt.batched_total",
            "rt.batched_total_vjp",
            *(
                f"rt.batched_loops.{name}{suffix}"
                for name in (
                    "sequence",
                    "enumerate",
                    "zip",
                    "reversed",
                    "items",
                    "values",
                )
                for suffix in ("_vjp", "_vjp_transpose")
            ),
        ],
        _BATCHED_CODE,
    ),
    **dict.fromkeys(
        [
            "rt.einsum_list",
            "rt.einsum_pairs",
            "rt.einsum_unpairs",
            "rt.einsum_pair_slot",
            "rt.einsum_pairs_subscripts",
            "rt.einsum_selector",
        ],
        _SECOND_ORDER,
    ),
    **dict.fromkeys(
        [
            "rt.merged_examples",
            "rt.merged_examples_vjp",
            "rt.split_examples",
            "rt.split_examples_vjp",
        ],
        "merge two batch axes (an inner vmap mapped again, nested_batches.py): a third is refused",
    ),
}


def _helpers():
    for name in CALLED_BY_DERIVATIVES:
        if name not in CONTROL:
            yield f"rt.{name}"


def _ops():
    for name, op in sorted(OPS.items()):
        if op.family != "nondiff":
            yield name


@pytest.mark.parametrize("name", [*_helpers(), *_ops()])
def test_what_derivative_code_calls_has_a_batching_rule(name):
    op = RUNTIME_OPS.get(name) if name.startswith("rt.") else OPS.get(name)
    assert op is not None, name
    if op.family == "decompose":  # inlined into ops with batching rules before batching
        assert "batch" not in op.rules, name
        return
    if name in ALLOWED:
        assert (
            "batch" not in op.rules
        ), f"{name} has a batching rule now: drop it from ALLOWED"
        return
    assert (
        "batch" in op.rules
    ), f"{name} is called by derivative code but has no batching rule"


def test_the_allow_list_names_registered_helpers_only():
    for name in ALLOWED:
        table = RUNTIME_OPS if name.startswith("rt.") else OPS
        assert name in table, name


# --- per-example gradients through the helpers' batching rules, against a loop of s2s.grad ----------


def horner(coeffs, x):
    result = 0.0
    for c in coeffs:
        result = result * x + c
    return result


def zipped(xs, ys):
    acc = 0.0
    for a, b in zip(xs, ys):
        acc = acc + a * np.sin(b)
    return acc


def enumerated(points):
    total = 0.0
    for i, p in enumerate(points):
        total = total + (i + 1) * np.sum(p**2)
    return total


def backwards(xs):
    acc = 0.0
    for x in reversed(xs):
        acc = np.tanh(acc + x)
    return acc


def solve_vector(A, b):
    return np.sum(np.linalg.solve(A, b) ** 2)


def solve_matrix(A, b):
    return np.sum(np.tanh(np.linalg.solve(A, b)))


def picked(logits, labels):
    return np.sum(np.take_along_axis(logits, labels, axis=1) ** 2)


def picked_flat(x, idx):
    return np.sum(np.take_along_axis(x, idx, axis=None) ** 2)


def taken(x):
    return np.sum(np.take(x, np.array([0, 2, 2]), axis=1) ** 2)


def scattered(x, v):
    out = np.zeros(5)
    out[np.array([1, 3, 1])] = v
    return np.sum(out * x)


def sorted_sum(x):
    s = np.sort(x)
    return np.sum(s * np.arange(s.shape[0]))


def _rng():
    return np.random.default_rng(0)


def _spd(r, *batch):
    a = r.normal(size=batch + (3, 3))
    return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)


B = 3
CASES = [
    (horner, lambda r: (r.normal(size=4), r.normal(size=B)), (None, 0)),
    (horner, lambda r: (r.normal(size=(B, 4)), r.normal(size=B)), (0, 0)),
    (zipped, lambda r: (r.normal(size=(B, 4)), r.normal(size=4)), (0, None)),
    (enumerated, lambda r: (r.normal(size=(B, 3, 2)),), (0,)),
    (backwards, lambda r: (r.normal(size=(B, 4)),), (0,)),
    (solve_vector, lambda r: (_spd(r, B), r.normal(size=(B, 3))), (0, 0)),
    (solve_vector, lambda r: (_spd(r), r.normal(size=(B, 3))), (None, 0)),
    (solve_matrix, lambda r: (_spd(r, B), r.normal(size=(3, 2))), (0, None)),
    (
        picked,
        lambda r: (r.normal(size=(B, 2, 4)), r.integers(0, 4, size=(B, 2, 1))),
        (0, 0),
    ),
    (
        picked,
        lambda r: (r.normal(size=(B, 2, 4)), r.integers(0, 4, size=(2, 3))),
        (0, None),
    ),
    (
        picked_flat,
        lambda r: (r.normal(size=(B, 2, 3)), r.integers(0, 6, size=(B, 4))),
        (0, 0),
    ),
    (taken, lambda r: (r.normal(size=(B, 2, 3)),), (0,)),
    (scattered, lambda r: (r.normal(size=(B, 5)), r.normal(size=(B, 3))), (0, 0)),
    (scattered, lambda r: (r.normal(size=5), r.normal(size=(B, 3))), (None, 0)),
    (sorted_sum, lambda r: (r.normal(size=(B, 5)),), (0,)),
]


def _loop(f, args, in_axes):
    outs = []
    for i in range(B):
        outs.append(f(*(a if ax is None else a[i] for a, ax in zip(args, in_axes))))
    return np.stack(outs)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize(
    "fn, make, in_axes", CASES, ids=[f"{c[0].__name__}-{c[2]}" for c in CASES]
)
def test_per_example_gradient_matches_a_loop(fn, make, in_axes, backend):
    args = make(_rng())
    want = _loop(s2s.grad(fn, backend="numpy"), args, in_axes)
    got = s2s.vmap(s2s.grad(fn), in_axes=in_axes, backend=backend)(*args)
    tol = 1e-9 if backend == "numpy" else 1e-4
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_argsort_and_sort_batch_per_example():
    def f(keys, values):
        return values[np.argsort(keys)] + np.sort(keys, axis=-1)

    r = _rng()
    keys, values = r.normal(size=(B, 5)), r.normal(size=5)
    got = s2s.vmap(f, in_axes=(0, None), backend="numpy")(keys, values)
    np.testing.assert_allclose(got, _loop(f, (keys, values), (0, None)))
