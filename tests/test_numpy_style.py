"""Issue 13: objectives in the style of public NumPy example programs (``tests/programs/numpy_style.py``).

Each program's gradient, on both backends, matches central differences of the
NumPy function itself in float64 along random directions, with the argument's
whole structure (every dict entry, every list element) present in the gradient.
"""

import warnings
from pathlib import Path

import jax
import numpy as np
import pytest

import s2s
from s2s import codegen
from tests.programs import numpy_style as P

jax.config.update("jax_enable_x64", True)

BACKENDS = ("xla", "numpy")


def _leaves(tree, path=()):
    if isinstance(tree, dict):
        for k in tree:
            yield from _leaves(tree[k], (*path, k))
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            yield from _leaves(v, (*path, i))
    else:
        yield path, tree


def _moved(tree, direction, eps):
    if isinstance(tree, dict):
        return {k: _moved(tree[k], direction, eps) for k in tree}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_moved(v, direction, eps) for v in tree)
    return tree + eps * direction[id(tree)]


def check_against_finite_differences(f, args, eps=1e-6, rtol=1e-5, atol=1e-7):
    """The gradient of ``f`` with respect to ``args[0]`` (any tree of float64 arrays) on both backends."""
    rng = np.random.default_rng(0)
    wrt, rest = args[0], args[1:]
    leaves = dict(_leaves(wrt))
    for backend in BACKENDS:
        grad = s2s.grad(f, backend=backend)(*args)
        got = dict(_leaves(grad))
        assert (
            got.keys() == leaves.keys()
        ), f"{backend}: gradient entries {sorted(map(str, got))}"
        for _ in range(2):
            direction = {id(v): rng.normal(size=np.shape(v)) for v in leaves.values()}
            fd = (
                f(_moved(wrt, direction, eps), *rest)
                - f(_moved(wrt, direction, -eps), *rest)
            ) / (2 * eps)
            along = sum(
                float(np.sum(np.asarray(got[p]) * direction[id(v)]))
                for p, v in leaves.items()
            )
            np.testing.assert_allclose(along, fd, rtol=rtol, atol=atol, err_msg=backend)


def check_program(programs, name, rtol=1e-10):
    """``programs.<name>`` on ``programs.inputs_<name>()``: its gradient against central differences on
    both backends (``check_against_finite_differences``), and its value as NumPy computes it.
    """
    f = getattr(programs, name)
    args = getattr(programs, f"inputs_{name}")()
    check_against_finite_differences(f, args)
    np.testing.assert_allclose(s2s.value_and_grad(f)(*args)[0], f(*args), rtol=rtol)


def check_batched(f, firsts, rest, rtol=1e-9):
    """``vmap`` of ``f`` over its first argument against a loop, and ``vmap`` of its gradient against
    each example's gradient on the NumPy backend."""
    in_axes = (0, *(None for _ in rest))
    np.testing.assert_allclose(
        s2s.vmap(f, in_axes=in_axes)(firsts, *rest),
        [f(x, *rest) for x in firsts],
        rtol=1e-10,
    )
    grads = s2s.vmap(s2s.grad(f), in_axes=in_axes)(firsts, *rest)
    for g, x in zip(grads, firsts):
        np.testing.assert_allclose(
            g, s2s.grad(f, backend="numpy")(x, *rest), rtol=rtol, atol=1e-12
        )


def check_per_example_gradients(f, params, xs):
    """``vmap`` over ``xs`` of the gradient with respect to ``params`` (a tree, the same for every example)
    against each example's gradient on the NumPy backend, leaf by leaf."""
    for backend in BACKENDS:
        got = s2s.vmap(s2s.grad(f), in_axes=(None, 0), backend=backend)(params, xs)
        for k, x in enumerate(xs):
            want = s2s.grad(f, backend="numpy")(params, x)
            got_leaves, want_leaves = dict(_leaves(got)), dict(_leaves(want))
            assert got_leaves.keys() == want_leaves.keys()
            for path, w in want_leaves.items():
                np.testing.assert_allclose(
                    np.asarray(got_leaves[path])[k], w, rtol=1e-5, atol=1e-7
                )


def check_forward_and_hessian(f, first, rest, t, eps=1e-6):
    """``jvp`` along ``t`` and the Hessian times ``t`` against central differences (of ``f`` and of its
    gradient on the NumPy backend)."""
    want = (f(first + eps * t, *rest) - f(first - eps * t, *rest)) / (2 * eps)
    zeros = tuple(np.zeros_like(np.asarray(r, dtype=float)) for r in rest)
    value, tangent = s2s.jvp(f, (first, *rest), (t, *zeros))
    np.testing.assert_allclose(value, f(first, *rest), rtol=1e-12)
    np.testing.assert_allclose(tangent, want, rtol=1e-6)
    h = s2s.hessian(f)(first, *rest)
    g = s2s.grad(f, backend="numpy")
    fd = (g(first + eps * t, *rest) - g(first - eps * t, *rest)) / (2 * eps)
    np.testing.assert_allclose(
        np.tensordot(h, t, axes=np.ndim(t)), fd, rtol=1e-5, atol=1e-7
    )


@pytest.mark.parametrize("name", P.PROGRAMS)
def test_gradient_matches_finite_differences(name):
    f = getattr(P, name)
    check_against_finite_differences(f, getattr(P, f"inputs_{name}")())


def test_a_frozen_dataclass_argument_is_compiled_in_and_a_mutable_one_is_a_clear_error():
    r = np.random.default_rng(3)
    w, x, y = r.normal(size=3), r.normal(size=(4, 3)), r.normal(size=4)
    for backend in BACKENDS:
        got = s2s.grad(P.map_objective, backend=backend)(w, x, y, P.FrozenPrior(2.0))
        want = 2 * x.T @ (x @ w - y) + w / 4.0
        np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(
        s2s.grad(P.map_objective, backend="numpy")(w, x, y, P.Prior(2.0)),
        want,
        rtol=1e-10,
    )
    with pytest.raises(
        TypeError,
        match=r"the argument `prior` .* holds a Prior, which is neither an array nor a pytree",
    ):
        s2s.grad(P.map_objective)(w, x, y, P.Prior(2.0))


def test_recursion_on_data_is_a_located_error_that_names_it_under_xla():
    with pytest.raises(s2s.S2SError, match="a recursion that does not end") as info:
        s2s.grad(P.recursion_on_data)(np.ones(3))
    assert info.value.origin.path == P.__file__
    assert "while` loop" in info.value.hint
    np.testing.assert_allclose(
        s2s.grad(P.recursion_on_data, backend="numpy")(np.ones(3)), np.ones(3) / 8
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_asserts_are_checked(backend):
    grad = s2s.grad(P.asserted, backend=backend)
    with pytest.raises(AssertionError, match="w must be a vector, got 2 dimensions"):
        grad(np.ones((3, 3)), np.ones(3))
    with pytest.raises(Exception, match="h is not finite"):
        grad(np.ones(3), np.array([1.0, np.nan, 1.0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_variable_first_assigned_in_a_loop_that_ran_no_step_is_an_error(backend):
    with pytest.raises(UnboundLocalError, match="`outputs` has no value"):
        s2s.grad(P.last_layer_outputs, backend=backend)([], np.ones((2, 3)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_variable_first_assigned_in_a_loop_under_vmap_and_jvp(backend):
    params, x = P.inputs_last_layer_outputs()
    xs = np.stack([x, 2 * x])
    got = s2s.vmap(P.last_layer_outputs, in_axes=(None, 0), backend=backend)(params, xs)
    want = [P.last_layer_outputs(params, x), P.last_layer_outputs(params, 2 * x)]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    _, tangent = s2s.jvp(
        P.last_layer_outputs, (params, x), (params, x), backend=backend
    )
    eps = 1e-6
    moved = [(W * (1 + eps), b * (1 + eps)) for W, b in params]
    fd = (
        P.last_layer_outputs(moved, x * (1 + eps)) - P.last_layer_outputs(params, x)
    ) / eps
    np.testing.assert_allclose(tangent, fd, rtol=1e-4)


def test_a_long_expression_transforms_without_recursion_errors(tmp_path):
    """Issue 13's scale: a sum of many products (315 terms used to hit RecursionError in libcst)."""
    import importlib.util

    terms = " + ".join(f"x[{i % 7}] * x[{(i + 1) % 7}]" for i in range(400))
    path = tmp_path / "long_expression.py"
    path.write_text(f"def f(x):\n    return {terms}\n")
    spec = importlib.util.spec_from_file_location("long_expression", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.linspace(-1.0, 1.0, 7)
    got = s2s.grad(module.f, backend="numpy")(x)
    want = np.zeros(7)
    for i in range(400):
        a, b = i % 7, (i + 1) % 7
        want[a] += x[b]
        want[b] += x[a]
    # one entry is a true zero, which either sum leaves at float64 round-off (entries are up to 77)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lists_grown_from_their_first_items_under_vmap_and_jvp(backend):
    params, xs, h0 = P.inputs_rnn_states_from_h0()
    batch = np.stack([xs, 0.5 * xs])
    got = s2s.vmap(P.rnn_states_from_h0, in_axes=(None, 0, None), backend=backend)(
        params, batch, h0
    )
    want = [P.rnn_states_from_h0(params, x, h0) for x in batch]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    _, tangent = s2s.jvp(
        P.rnn_states_from_h0, (params, xs, h0), (params, xs, h0), backend=backend
    )
    eps = 1e-6
    moved = {k: v * (1 + eps) for k, v in params.items()}
    fd = (
        P.rnn_states_from_h0(moved, xs * (1 + eps), h0 * (1 + eps))
        - P.rnn_states_from_h0(params, xs, h0)
    ) / eps
    np.testing.assert_allclose(tangent, fd, rtol=1e-4)


def test_the_programs_module_defines_each_name_once():
    """A class or function defined twice in ``programs/numpy_style.py`` replaces the first, and the
    programs written for the first then silently test the second."""
    import ast
    import collections

    tree = ast.parse(Path(P.__file__).read_text())
    names = collections.Counter(
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    )
    assert not [n for n, count in names.items() if count > 1]


def test_a_list_parameter_rebound_in_a_loop_under_vmap():
    """A helper's list parameter rebound by a comprehension over it in a loop: its cotangent (a list of
    items of different shapes) carried by the backward loop, per example too."""
    w, x = P.inputs_list_parameter_rebound_in_a_loop()
    check_batched(P.list_parameter_rebound_in_a_loop, np.stack([w, 0.5 * w, -w]), (x,))


@pytest.mark.parametrize(
    "name, message",
    [
        ("last_of_empty", r"reads `hs\[-1\]`, but `hs` is empty before the loop"),
        (
            "swapped_lists",
            "needs `b` to be a list made in the function before the loop",
        ),
        (
            "length_read_while_growing",
            "the list `hs` is read in the loop that grows it",
        ),
    ],
)
def test_a_growing_list_read_in_its_loop_other_than_its_last_item_is_an_error(
    name, message
):
    with pytest.raises(s2s.S2SError, match=message) as info:
        s2s.grad(getattr(P, name))(np.ones(3))
    assert info.value.origin.path == P.__file__


@pytest.mark.parametrize("backend", BACKENDS)
def test_helpers_bound_to_functions_under_vmap_and_jvp(backend):
    """Each binding is its own helper (``mlp_with_activation_softplus``), batched and pushed forward."""
    params, x, y = P.inputs_activations_passed()
    ys = np.stack([y, 2 * y])
    grad = s2s.grad(P.activations_passed, backend=backend)
    got = s2s.vmap(grad, (None, None, 0))(params, x, ys)
    for i, yi in enumerate(ys):  # the oracle: a loop (each gradient checked above)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(grad(params, x, yi))):
            np.testing.assert_allclose(g[i], w, rtol=1e-9, atol=1e-12)
    _, tangent = s2s.jvp(
        P.activations_passed, (params, x, y), (params, x, y), backend=backend
    )
    eps = 1e-6
    moved = [tuple(v * (1 + eps) for v in layer) for layer in params]
    fd = (
        P.activations_passed(moved, x * (1 + eps), y * (1 + eps))
        - P.activations_passed(params, x, y)
    ) / eps
    np.testing.assert_allclose(tangent, fd, rtol=1e-4)
    assert "def mlp_with_activation_softplus(params, x)" in grad.source


@pytest.mark.parametrize("backend", BACKENDS)
def test_masked_reductions_compile_and_batch(backend):
    """``np.sum(h[h > 0])`` and the like are masked reductions (``passes/masks.py``): under XLA they
    compile, and the gradient equals NumPy's (checked above by finite differences) under vmap too.
    """
    w, x, y = P.inputs_masked_losses()
    want = s2s.grad(P.masked_losses, backend="numpy")(w, x, y)
    np.testing.assert_allclose(
        s2s.grad(P.masked_losses, backend=backend)(w, x, y), want, rtol=1e-10
    )
    ys = np.stack([y, -y])
    got = s2s.vmap(s2s.grad(P.masked_losses, backend=backend), (None, None, 0))(
        w, x, ys
    )
    for i, yi in enumerate(ys):  # the oracle: a loop
        loop = s2s.grad(P.masked_losses, backend="numpy")(w, x, yi)
        np.testing.assert_allclose(got[i], loop, rtol=1e-10)
    assert "xp.where(selected" in s2s.grad(P.masked_losses).source


@pytest.mark.parametrize("backend", BACKENDS)
def test_positions_of_nonzeros_used_to_index_compile_and_batch(backend):
    """``zero_idx = np.nonzero(endog == 0)[0]`` read only as an index is the mask it selects by
    (``frontend/nonzero_masks``): under XLA it compiles, and per-example gradients (the counts batched,
    the weights the same for every example) equal a loop of NumPy's."""
    f = P.zero_inflated_poisson_by_positions
    params, endog, exog = P.inputs_zero_inflated_poisson_by_positions()
    want = s2s.grad(f, backend="numpy")(params, endog, exog)
    np.testing.assert_allclose(
        s2s.grad(f, backend=backend)(params, endog, exog), want, rtol=1e-10
    )
    counts = np.stack([endog, endog[::-1]])
    got = s2s.vmap(s2s.grad(f, backend=backend), (None, 0, None))(params, counts, exog)
    for i, c in enumerate(counts):
        loop = s2s.grad(f, backend="numpy")(params, c, exog)
        np.testing.assert_allclose(got[i], loop, rtol=1e-10)
    values = s2s.vmap(f, (None, 0, None), backend=backend)(params, counts, exog)
    np.testing.assert_allclose(values, [f(params, c, exog) for c in counts], rtol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_selections_given_unit_axes_reduced_whole_compile_and_batch(backend):
    """``eta[idx][:, None] + nodes[None, :]`` reduced whole: the mask given the same unit axes."""
    beta, x, groups = P.inputs_grouped_quadrature()
    f = P.grouped_quadrature
    want = s2s.grad(f, backend="numpy")(beta, x, groups)  # (against differences above)
    np.testing.assert_allclose(s2s.grad(f, backend=backend)(beta, x, groups), want)
    xs = np.stack([x, -x])
    got = s2s.vmap(s2s.grad(f, backend=backend), (None, 0, None))(beta, xs, groups)
    for g, xi in zip(got, xs):
        np.testing.assert_allclose(g, s2s.grad(f, backend="numpy")(beta, xi, groups))
    no_tangent = np.zeros(groups.shape, jax.dtypes.float0)
    tangent = s2s.jvp(f, (beta, x, groups), (np.ones(2), np.zeros_like(x), no_tangent))[
        1
    ]
    np.testing.assert_allclose(tangent, np.sum(want))


@pytest.mark.parametrize("backend", BACKENDS)
def test_submatrices_by_open_meshes_compile_and_batch(backend):
    """``L[np.ix_(Y, Y)]``: the index arrays each along an axis of their own."""
    w, X, Y = P.inputs_dpp_subset_likelihood()
    f = P.dpp_subset_likelihood
    want = s2s.grad(f, backend="numpy")(w, X, Y)  # (against differences above)
    np.testing.assert_allclose(s2s.grad(f, backend=backend)(w, X, Y), want, rtol=1e-6)
    Xs = np.stack([X, X[::-1]])
    got = s2s.vmap(s2s.grad(f, backend=backend), (None, 0, None))(w, Xs, Y)
    for g, Xi in zip(got, Xs):
        np.testing.assert_allclose(g, s2s.grad(f, backend="numpy")(w, Xi, Y), rtol=1e-6)


def test_a_selection_by_a_mask_of_two_axes_given_unit_axes_is_a_located_error():
    with pytest.raises(s2s.S2SError, match="a mask of 2 axes given unit axes") as info:
        s2s.grad(P.two_axis_selection_spread)(np.ones((3, 2)))
    assert info.value.origin.path == P.__file__


def test_a_selection_whose_size_escapes_is_a_located_error_under_xla():
    w, x, _ = P.inputs_masked_losses()
    with pytest.raises(s2s.S2SError, match="boolean-mask indexing") as info:
        s2s.jit(P.mask_escapes)(w, x)
    assert info.value.origin.path == P.__file__


def test_a_range_loop_reading_a_shorter_list_by_its_index_is_an_error():
    """``biases[i]`` past the end of ``biases``: Python's IndexError, never ``zip`` stopping early."""
    weights, biases, x = P.inputs_layers_by_index()
    with pytest.raises(
        AssertionError, match=r"biases\[i\] reads past the end of biases"
    ):
        s2s.grad(P.layers_by_index, backend="numpy")(weights, biases[:1], x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dict_read_by_a_range_loops_index_is_a_located_error_not_its_keys(backend):
    layers = {0: np.array([1.0, 2.0]), 1: np.array([0.5, 0.1])}
    with pytest.raises(
        s2s.S2SError, match="a dict read by a `range` loop's index"
    ) as info:
        s2s.grad(P.dict_by_range_index, argnums=1, backend=backend)(layers, np.ones(2))
    assert info.value.origin.path == P.__file__


@pytest.mark.parametrize("backend", BACKENDS)
def test_sorted_of_arrays_is_a_located_error_that_names_np_sort(backend):
    ws, x = [np.ones(3), np.zeros(3)], np.ones(3)
    with pytest.raises(s2s.S2SError, match=r"np\.sort") as info:
        s2s.grad(P.sorted_arrays, backend=backend)(ws, x)
    assert "numpy_style.py" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_records_method_named_like_a_string_method_is_its_own(backend):
    # once a silent zero gradient: `halves.split()` was called as a string method, with no derivative;
    # then a located error; now the record's method, read from its source (``held_objects``)
    halves = P.Halves(np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.2, 0.1]))
    x = np.array([0.7, 1.5, -1.0])
    got = s2s.grad(P.record_split, backend=backend)(halves, x)
    want = jax.grad(P.record_split)(halves, x)
    np.testing.assert_allclose(got.a, want.a, rtol=1e-12)
    np.testing.assert_allclose(got.b, want.b, rtol=1e-12)
    assert isinstance(got, P.Halves)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lists_filtered_on_static_facts_under_vmap_and_jvp(backend):
    params, x = P.inputs_filtered_params()
    xs = np.stack([x, 0.5 * x])
    got = s2s.vmap(P.filtered_params, in_axes=(None, 0), backend=backend)(params, xs)
    want = [P.filtered_params(params, x), P.filtered_params(params, 0.5 * x)]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    _, tangent = s2s.jvp(P.filtered_params, (params, x), (params, x), backend=backend)
    eps = 1e-6
    moved = {k: v * (1 + eps) for k, v in params.items()}
    fd = (P.filtered_params(moved, x * (1 + eps)) - P.filtered_params(params, x)) / eps
    np.testing.assert_allclose(tangent, fd, rtol=1e-4)


def test_a_list_filtered_on_values_runs_on_numpy_and_is_a_located_error_under_xla():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(
        s2s.grad(P.filtered_on_data, backend="numpy")(x), [1.0, 0.0, 1.0]
    )
    with pytest.raises(s2s.S2SError, match="the list's length would depend") as info:
        s2s.grad(P.filtered_on_data)(x)
    assert info.value.origin.path == P.__file__


@pytest.mark.parametrize("backend", BACKENDS)
def test_raise_statements_raise_as_python_does(backend):
    ws, x = P.inputs_raising_helpers()
    with pytest.raises(ValueError, match="the layer's width does not match"):
        s2s.grad(P.raising_helpers, backend=backend)([ws[1], ws[0]], x)
    # a guard on data is checked when the code runs (under XLA: JAX's runtime error quotes it)
    bad = x.copy()
    bad[0, 0] = np.nan
    with pytest.raises(Exception, match="NaN in the activations"):
        s2s.grad(P.raising_helpers, backend=backend)(ws, bad)


def test_a_raise_in_a_branch_on_data_is_a_located_error_under_xla():
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(
        s2s.grad(P.raises_in_a_branch_on_data, backend="numpy")(x),
        1 - np.tanh(x) ** 2,
    )
    with pytest.raises(s2s.S2SError, match="a `raise` in a branch whose test") as info:
        s2s.grad(P.raises_in_a_branch_on_data)(x)
    assert info.value.origin.path == P.__file__


def test_a_dict_in_its_own_key_order_on_every_call_under_xla():
    """The second call took a fast path that handed the dict to jax.jit as it is (its keys then sorted)."""
    params, x = P.inputs_layers_in_insertion_order()
    want = P.layers_in_insertion_order(params, x)
    value_and_grad = s2s.value_and_grad(P.layers_in_insertion_order)
    first = value_and_grad(params, x)
    for _ in range(2):
        value, grad = value_and_grad(params, x)
        np.testing.assert_allclose(value, want, rtol=1e-12)
        for k in params:
            np.testing.assert_allclose(grad[k], first[1][k], rtol=1e-12)
    transformed = s2s.transform(P.layers_in_insertion_order)
    for _ in range(3):
        np.testing.assert_allclose(transformed(params, x), want, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_name_a_while_loop_never_assigned_is_pythons_unbound_local_error(backend):
    w, x = P.inputs_newton_last_step()
    with pytest.raises(
        Exception,
        match="`last` has no value: the loop that assigns it ran no iteration",
    ):
        jax.block_until_ready(s2s.grad(P.while_never_runs, backend=backend)(w, x))


def test_a_name_first_assigned_in_a_while_loop_batches_and_pushes_tangents():
    w, x = P.inputs_newton_last_step()
    f = P.newton_last_step
    xs = np.stack([x, 0.5 * x, 2.0 * x])
    for backend in BACKENDS:
        np.testing.assert_allclose(
            s2s.vmap(f, in_axes=(None, 0), backend=backend)(w, xs),
            [f(w, a) for a in xs],
            rtol=1e-10,
        )
        got = s2s.vmap(
            s2s.grad(f, backend=backend), in_axes=(None, 0), backend=backend
        )(w, xs)
        for g, a in zip(got, xs):
            np.testing.assert_allclose(g, s2s.grad(f, backend="numpy")(w, a), rtol=1e-8)
    t = np.ones(3)
    eps = 1e-6
    want = (f(w + eps * t, x) - f(w - eps * t, x)) / (2 * eps)
    np.testing.assert_allclose(s2s.jvp(f, (w, x), (t, 0 * x))[1], want, rtol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_module_objects_attributes_changed_in_place_are_read_again(
    backend, monkeypatch
):
    """``PARSER.idxs_and_shapes`` read through a bound method: the code is made again when it changes."""
    w, x = P.inputs_parser_objective()
    grad = s2s.grad(P.parser_objective, backend=backend)
    before = np.asarray(grad(w, x))
    monkeypatch.setitem(P.PARSER.idxs_and_shapes, "b", (slice(0, 2), (2,)))
    after = np.asarray(grad(w, x))
    assert not np.allclose(before, after)
    check_against_finite_differences(P.parser_objective, (w, x))


def test_a_helper_calling_itself_with_the_local_function_it_was_passed_is_a_located_error():
    with pytest.raises(
        s2s.S2SError, match="calls itself with the local function it was passed"
    ) as err:
        s2s.grad(P.recursion_with_a_lambda)(np.ones(2))
    assert err.value.origin.path == P.__file__ and "module level" in err.value.hint


def test_zip_of_a_starred_sequence_into_one_name_is_a_located_error():
    """Its items' number is not in the code: never a star dropped (it once zipped one sequence)."""
    with pytest.raises(
        s2s.S2SError, match=r"`zip\(\*\.\.\.\)` iterated into one name"
    ) as info:
        s2s.grad(P.zip_of_starred_into_one_name)(np.ones((3, 2)))
    assert info.value.origin.path == P.__file__
    assert "for a, b in zip(*pairs)" in info.value.hint


def test_tuples_joined_by_plus_in_every_transform():
    """``args + (w,)`` joins tuples in forward mode and under ``vmap`` too (it once added them as arrays)."""
    W, xs = P.inputs_rnn_tuple_joined_arguments()
    f = P.rnn_tuple_joined_arguments
    tangent = np.ones_like(W)
    _, out = s2s.jvp(f, (W, xs), (tangent, np.zeros_like(xs)))
    eps = 1e-6
    want = (f(W + eps * tangent, xs) - f(W - eps * tangent, xs)) / (2 * eps)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    batch = np.stack([xs, 0.5 * xs])
    got = s2s.vmap(f, in_axes=(None, 0))(W, batch)
    np.testing.assert_allclose(got, [f(W, b) for b in batch], rtol=1e-10)


def test_nested_loops_appending_batch_and_push_tangents():
    W, xs = P.inputs_nested_loops_over_arrays()
    f = P.nested_loops_over_arrays
    batch = np.stack([xs, 0.5 * xs, -xs])
    got = s2s.vmap(f, in_axes=(None, 0))(W, batch)
    np.testing.assert_allclose(got, [f(W, b) for b in batch], rtol=1e-10)
    tangent = np.ones_like(W)
    _, out = s2s.jvp(f, (W, xs), (tangent, np.zeros_like(xs)))
    eps = 1e-6
    want = (f(W + eps * tangent, xs) - f(W - eps * tangent, xs)) / (2 * eps)
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_a_key_the_dict_of_functions_does_not_hold_is_a_key_error():
    x = np.array([0.1, 0.2, 0.3])
    for backend in BACKENDS:
        with pytest.raises(KeyError, match="gelu"):
            s2s.grad(P.activations_by_name, backend=backend)(x, ("tanh",), "gelu")


def test_a_guarded_trajectory_under_vmap_returns_early_per_example():
    th, x0, obs = P.inputs_guarded_trajectory()
    ths = np.stack(
        [th, 1.1 * th, 1000.0 * th]
    )  # the last one blows up: inf, as NumPy returns
    got = s2s.vmap(P.guarded_trajectory, in_axes=(0, None, None))(ths, x0, obs)
    np.testing.assert_allclose(got, [P.guarded_trajectory(t, x0, obs) for t in ths])
    check_batched(P.guarded_trajectory, ths[:2], (x0, obs), rtol=1e-7)


def test_a_while_loop_counted_by_numbers_records_under_every_transform():
    """e38: ``while t < t_end`` on float time with appends runs as a count of steps, then a loop."""
    mu, x0 = P.inputs_recorded_while_time()
    check_batched(P.recorded_while_time, np.array([1.3, 0.9, 1.6]), (x0,), rtol=1e-8)
    check_forward_and_hessian(P.recorded_while_time, mu, (x0,), 1.0)
    text = s2s.transform(P.recorded_while_time).source
    assert "rt.while_loop(while_cond, while_body, (t, steps))" in text
    # a bound the caller passes under jax.jit is known only at run time: the loop cannot collect
    jitted = jax.jit(s2s.grad(P.recorded_while_time))
    with pytest.raises(s2s.S2SError, match="cannot collect per-step outputs") as info:
        jitted(mu, x0, 0.5)
    assert "xs" in info.value.origin.text


def counter_in_a_branch(w):
    t, xs = 0.0, []
    while t < 1.0:
        w = np.tanh(w)
        if np.sum(w) > 0:
            t += 0.25
        else:
            t += 0.5
        xs.append(w)
    return np.sum(np.stack(xs))


def test_a_while_loop_whose_counter_data_moves_stays_a_located_error():
    with pytest.raises(s2s.S2SError, match="`append` in a `while` loop") as info:
        s2s.grad(counter_in_a_branch)(np.array([0.3, -0.2]))
    assert info.value.origin.text.strip() == "xs.append(w)"


def copy_of_a_number_updated(x):
    t = 0.0
    s = t
    s += 1.5  # floats are immutable: `t` stays 0.0
    return np.sum(x * s) + t


def test_an_update_of_a_copy_of_a_number_changes_nothing_else():
    x = np.array([0.5, 2.0])
    for backend in BACKENDS:
        np.testing.assert_allclose(
            s2s.grad(copy_of_a_number_updated, backend=backend)(x), [1.5, 1.5]
        )


def test_a_guard_returning_a_constant_beside_per_example_data_under_vmap():
    """p45: the guard's test is the same for every example (it reads no batched value), the other branch
    is per example: ``return np.inf`` gets the batch axis."""
    f = P.recorded_steps_from_defaults
    log_theta, obs = P.inputs_recorded_steps_from_defaults()
    batch = np.stack([obs, 0.5 * obs, 2.0 * obs])
    for backend in BACKENDS:
        got = s2s.vmap(f, in_axes=(None, 0), backend=backend)(log_theta, batch)
        np.testing.assert_allclose(got, [f(log_theta, o) for o in batch], rtol=1e-6)
    blown = np.log(np.array([500.0, 0.1]))  # grows past the guard: every example is inf
    got = s2s.vmap(f, in_axes=(None, 0))(blown, batch)
    np.testing.assert_array_equal(got, [np.inf] * 3)


def test_per_example_gradients_through_starred_dict_values():
    params, x = P.inputs_starred_dict_values()
    check_per_example_gradients(
        P.starred_dict_values, params, np.stack([x, 0.5 * x, -x])
    )


def test_items_taken_by_an_index_are_numbers_of_vectors_and_views_of_matrices():
    (x,) = P.inputs_item_accumulators()
    check_batched(P.item_accumulators, np.stack([x, 0.5 * x, -x]), ())
    check_forward_and_hessian(P.item_accumulators, x, (), np.ones_like(x))
    # a matrix's row: NumPy would change the matrix, refused at the binding, in every transform
    X = np.ones((3, 2))
    for run in (
        lambda: s2s.grad(P.row_accumulator)(X),
        lambda: s2s.vmap(P.row_accumulator)(np.stack([X, X])),
        lambda: s2s.grad(P.row_accumulator, backend="numpy")(X),
    ):
        with pytest.raises(
            s2s.S2SError, match="`s` was taken from `X` by an index"
        ) as info:
            run()
        assert info.value.origin.text.strip() == "s = X[0]"


def test_functions_passed_to_helpers_with_spread_arguments_batch_and_push_tangents():
    (theta,) = P.inputs_integrand_passed_in()
    check_batched(
        P.integrand_passed_in, np.stack([theta, 0.5 * theta, 1.5 * theta]), ()
    )
    check_forward_and_hessian(P.integrand_passed_in, theta, (), np.ones_like(theta))


def test_math_functions_of_integers_are_pythons_of_numbers_known_when_traced():
    (x,) = P.inputs_taylor_exp_and_binomials()
    check_batched(P.taylor_exp_and_binomials, np.stack([x, -x]), ())
    np.testing.assert_allclose(
        s2s.grad(P.factorial_of_a_count)(x, 3), np.full(3, 1 / 6)
    )
    # a count traced under jax.jit, or a compiled loop's counter: JAX's computation of it
    got = jax.jit(s2s.grad(P.factorial_of_a_count))(x, 5)
    np.testing.assert_allclose(got, np.full(3, 1 / 120))


def test_a_loop_variable_read_after_the_loop_is_its_last_value():
    (data,) = P.inputs_welford_variance()
    check_batched(P.welford_variance, np.stack([data, 2.0 * data]), ())
    check_forward_and_hessian(P.welford_variance, data, (), np.ones_like(data))
    # a loop that ran no step leaves it unbound, as Python does
    for backend in BACKENDS:
        with pytest.raises(UnboundLocalError, match="`n` has no value"):
            s2s.grad(P.welford_variance, backend=backend)(np.zeros(0))


def test_module_kernels_and_column_writes_batch():
    (img,) = P.inputs_stencil_of_a_module_kernel()
    check_batched(P.stencil_of_a_module_kernel, np.stack([img, 0.5 * img]), ())
    params, z = P.inputs_paths_by_columns()
    check_batched(P.paths_by_columns, np.stack([params, 1.5 * params]), (z,))


def test_objects_of_the_programs_classes_made_in_the_function():
    data, x = P.inputs_objects_made_inside()
    check_batched(P.objects_made_inside, np.stack([data, 0.8 * data]), (x,), rtol=1e-7)
    check_forward_and_hessian(P.objects_made_inside, data, (x,), np.ones_like(data))
    check_against_finite_differences(P.object_passed_on, (data, x))


def test_per_example_gradients_through_a_recursion_over_a_list():
    """The last step's ``rest`` is empty: its cotangent writes nothing (was an internal StopIteration)."""
    x, blocks = P.inputs_recursive_tower()
    check_batched(P.recursive_tower, np.stack([x, -0.5 * x]), (blocks,), rtol=1e-7)
    check_per_example_gradients(P.recursive_tower_loss, blocks, np.stack([x, -0.5 * x]))


def test_a_copy_of_a_collected_list_written_back_by_a_loops_index():
    """``list(ms)`` of a list collected by ``append`` is its stacked items again: a loop writing it by its
    counter compiles (was a compile-time-index error under XLA)."""
    y, a = P.inputs_rts_backward_pass()
    check_batched(P.rts_backward_pass, np.stack([y, -0.5 * y]), (a,))
    check_forward_and_hessian(P.rts_backward_pass, y, (a,), np.ones_like(y))
    # under jax.jit too, with respect to the filter's coefficient
    got = jax.jit(s2s.grad(P.rts_backward_pass, argnums=1))(y, a)
    eps = 1e-6
    want = (P.rts_backward_pass(y, a + eps) - P.rts_backward_pass(y, a - eps)) / (
        2 * eps
    )
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_list_written_at_a_compiled_loops_counter_is_collected():
    """``hs = [0.0] * T`` written at ``hs[t]`` once per step of ``range(T)`` is the list the loop collects
    (``frontend/filled_lists``): it compiles (was a located refusal), under vmap too. Read in the loop
    (``hs[t - 1]``), it stays a list written at a traced position: under XLA, a located error whose hint
    says to make it an array.
    """
    y, a = np.array([0.2, -0.4, 0.9]), 0.7
    f = P.list_written_by_a_compiled_counter
    eps = 1e-6
    want = (f(y, a + eps) - f(y, a - eps)) / (2 * eps)
    for backend in BACKENDS:
        got = s2s.grad(f, argnums=1, backend=backend)(y, a)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    check_batched(f, np.stack([y, 0.5 * y]), (a,))
    g = P.list_read_where_a_compiled_counter_writes_it
    np.testing.assert_allclose(
        s2s.grad(g, argnums=1, backend="numpy")(y, a),
        (g(y, a + eps) - g(y, a - eps)) / (2 * eps),
        rtol=1e-6,
    )
    with pytest.raises(s2s.S2SError, match="make it an array first") as info:
        s2s.grad(g, argnums=1)(y, a)
    assert "hs[t - 1]" in info.value.origin.text


def test_lists_of_itertools_tuples_are_arrays_of_rows_in_every_transform():
    points, w = P.inputs_triples_as_an_index_array()
    check_batched(P.triples_as_an_index_array, np.stack([points, 0.5 * points]), (w,))
    check_forward_and_hessian(
        P.triples_as_an_index_array, points, (w,), np.ones_like(points)
    )


def test_dicts_updated_functionally_batch_and_push_tangents():
    params, x = P.inputs_dicts_updated_functionally()
    check_per_example_gradients(
        P.dicts_updated_functionally, params, np.stack([x, 0.5 * x])
    )
    tangents = {k: np.ones_like(v) for k, v in params.items()}
    _, got = s2s.jvp(
        P.dicts_updated_functionally, (params, x), (tangents, np.zeros_like(x))
    )
    eps = 1e-6
    moved = [{k: v + s * eps for k, v in params.items()} for s in (1, -1)]
    want = (
        P.dicts_updated_functionally(moved[0], x)
        - P.dicts_updated_functionally(moved[1], x)
    ) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_masks_given_as_arguments_per_example_and_forward(backend):
    """Masks the caller passes, one per example under ``vmap`` (and one for all), and ``jvp``."""
    w, x, y, observed, rows, picks = P.inputs_masks_given_as_arguments()
    f = P.masks_given_as_arguments
    masks = np.stack([observed, ~observed, observed | True])
    got = s2s.vmap(f, in_axes=(None, None, None, 0, None, None), backend=backend)(
        w, x, y, masks, rows, picks
    )
    want = [f(w, x, y, m, rows, picks) for m in masks]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    grads = s2s.vmap(
        s2s.grad(f), in_axes=(None, None, None, 0, None, None), backend=backend
    )(w, x, y, masks, rows, picks)
    for g, m in zip(grads, masks):
        want = s2s.grad(f, backend="numpy")(w, x, y, m, rows, picks)
        np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-12)
    t = np.random.default_rng(0).normal(size=w.shape)
    eps = 1e-6
    rest = (x, y, observed, rows, picks)
    fd = (f(w + eps * t, *rest) - f(w - eps * t, *rest)) / (2 * eps)
    value, tangent = s2s.jvp(lambda w: f(w, *rest), (w,), (t,), backend=backend)
    np.testing.assert_allclose(value, f(w, *rest), rtol=1e-12)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


def test_nnfs_objects_match_jax_and_batch():
    """The NNFS program against its ``jax.numpy`` twin, and ``vmap`` over examples on both backends."""
    import jax.numpy as jnp

    weights, X, y = P.inputs_nnfs_objects()

    def twin(w, X, y):
        h = jnp.maximum(0, X @ w["W1"] + w["b1"])
        z = h @ w["W2"] + w["b2"]
        e = jnp.exp(z - jnp.max(z, axis=1, keepdims=True))
        p = jnp.clip(e / jnp.sum(e, axis=1, keepdims=True), 1e-7, 1 - 1e-7)
        return jnp.mean(-jnp.log(p[jnp.arange(len(y)), y])) + 0.01 * jnp.sum(h**2)

    want = jax.grad(twin)(weights, X, y)
    for backend in BACKENDS:
        got = s2s.grad(P.nnfs_objects, backend=backend)(weights, X, y)
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-9, atol=1e-12)
        batched = s2s.vmap(P.nnfs_objects, in_axes=(None, 0, 0), backend=backend)(
            weights, np.stack([X, -X]), np.stack([y, y[::-1]])
        )
        np.testing.assert_allclose(
            batched, [twin(weights, X, y), twin(weights, -X, y[::-1])], rtol=1e-9
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_maps_under_vmap_match_a_loop(backend):
    """``np.vectorize`` and ``np.apply_along_axis`` are an inner ``vmap``; ``s2s.vmap`` of the function
    maps it over both axes at once (``nested_batches``), each argument mapped or not."""
    x, y = P.inputs_mapped_by_numpy()
    xs, ys = np.stack([x, -x, 2 * x]), np.stack([y, y[::-1], -y])
    f = P.mapped_by_numpy
    for in_axes, args in (
        ((0, None), (xs, y)),
        ((None, 0), (x, ys)),
        ((0, 0), (xs, ys)),
    ):
        got = s2s.vmap(f, in_axes=in_axes, backend=backend)(*args)
        want = [
            f(*(a[k] if axis == 0 else a for a, axis in zip(args, in_axes)))
            for k in range(3)
        ]
        np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_numpy_draw_in_a_branch_is_refused_only_where_the_branch_runs(backend):
    """``if params is None: ... np.random.randn(...)``: given the weights, the branch does not run (the
    program above differentiates); left to draw them, it is the located refusal naming the draw.
    """
    _, X, y = P.inputs_cs231n_two_layer_net()
    with pytest.raises(
        s2s.S2SError, match=r"`np\.random\.randn` \(a NumPy random draw\)"
    ) as info:
        s2s.grad(P.cs231n_net_drawing_its_weights, backend=backend)(X, y)
    assert "np.random.randn(input_size, hidden_size)" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_array_spread_into_a_call_under_vmap(backend):
    """``f(t, *p)`` per example: each example's parameters, and their gradients."""
    p, t, y = P.inputs_curve_fit_residuals()
    ps = np.stack([p, p * 1.3, p[::-1]])
    check = P.curve_fit_residuals
    got = s2s.vmap(check, in_axes=(0, None, None), backend=backend)(ps, t, y)
    np.testing.assert_allclose(got, [check(q, t, y) for q in ps], rtol=1e-10)
    grads = s2s.vmap(s2s.grad(check), in_axes=(0, None, None), backend=backend)(
        ps, t, y
    )
    for g, q in zip(grads, ps):
        want = s2s.grad(check, backend="numpy")(q, t, y)
        np.testing.assert_allclose(g, want, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_number_written_by_a_mask_among_slices_is_a_where(backend):
    """``scores[:, ~key_mask] = -1e9`` with the mask an argument: compiles, differentiates, batches (a mask
    per example too), as NumPy computes it."""
    rng = np.random.default_rng(4)
    w, x = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 3))
    key_mask = np.array([True, False, True, True])
    f = P.padded_attention
    np.testing.assert_allclose(
        s2s.transform(f, backend=backend)(w, x, key_mask), f(w, x, key_mask), rtol=1e-10
    )
    t, eps = rng.normal(size=w.shape), 1e-6
    fd = (f(w + eps * t, x, key_mask) - f(w - eps * t, x, key_mask)) / (2 * eps)
    got = s2s.grad(f, backend=backend)(w, x, key_mask)
    np.testing.assert_allclose(np.sum(got * t), fd, rtol=1e-6)
    masks = np.stack([key_mask, ~key_mask | np.eye(4, dtype=bool)[0]])
    batched = s2s.vmap(f, in_axes=(None, None, 0), backend=backend)(w, x, masks)
    np.testing.assert_allclose(batched, [f(w, x, m) for m in masks], rtol=1e-10)
    grads = s2s.vmap(s2s.grad(f), in_axes=(None, None, 0), backend=backend)(w, x, masks)
    for g, m in zip(grads, masks):
        np.testing.assert_allclose(
            g, s2s.grad(f, backend="numpy")(w, x, m), rtol=1e-9, atol=1e-12
        )


def test_a_list_argument_read_as_an_array_under_xla_is_a_located_error_whose_hint_works():
    ws, x = [np.ones(2), np.full(2, 3.0)], np.array([1.0, -2.0])
    with pytest.raises(
        s2s.S2SError,
        match=r"a Python list given to a NumPy function \(jax.numpy's `mean`",
    ) as info:
        s2s.grad(P.mean_of_a_list_argument)(ws, x)
    assert info.value.origin.path == P.__file__
    assert "np.asarray" in info.value.hint
    for backend in BACKENDS:  # the hint followed: a list of gradients, one per item
        grads = s2s.grad(P.mean_of_a_list_argument_as_an_array, backend=backend)(ws, x)
        assert isinstance(grads, list) and len(grads) == 2
        for g in grads:
            np.testing.assert_allclose(g, x / 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_mode_through_an_object_holding_a_dtype(backend):
    params, x = P.inputs_model_holding_its_dtype()
    t = {k: np.ones_like(v) for k, v in params.items()}
    eps = 1e-6
    moved = [{k: v + s * eps * t[k] for k, v in params.items()} for s in (1, -1)]
    want = (
        P.model_holding_its_dtype(moved[0], x) - P.model_holding_its_dtype(moved[1], x)
    ) / (2 * eps)
    _, tangent = s2s.jvp(
        P.model_holding_its_dtype, (params, x), (t, np.zeros_like(x)), backend=backend
    )
    np.testing.assert_allclose(tangent, want, rtol=1e-6)


def test_layer_objects_holding_layers_batch_and_push_tangents():
    """Objects made by an object's ``__init__`` are written as names in turn (three levels), ``*params[...]``
    binds a constructor's parameters, a static method is a function of its arguments."""
    params, x = P.inputs_layer_objects_holding_layers()
    check_per_example_gradients(
        P.layer_objects_holding_layers, params, np.stack([x, 0.5 * x, -x])
    )
    tangents = jax.tree_util.tree_map(np.ones_like, params)
    zeros = jax.tree_util.tree_map(np.zeros_like, params)
    eps = 1e-6
    moved = [
        jax.tree_util.tree_map(lambda p, t: p + s * eps * t, params, tangents)
        for s in (1, -1)
    ]
    f = P.layer_objects_holding_layers
    want = (f(moved[0], x) - f(moved[1], x)) / (2 * eps)
    _, got = s2s.jvp(f, (params, x), (tangents, np.zeros_like(x)))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert zeros  # (the tangent tree has the parameters' structure)


def test_a_star_argument_of_the_wrong_length_raises_as_python_does():
    params, x = P.inputs_layer_objects_holding_layers()
    short = {**params, "qk": params["qk"][:1]}
    for backend in BACKENDS:
        with pytest.raises(Exception, match="must hold 2 items"):
            s2s.grad(P.layer_objects_holding_layers, backend=backend)(short, x)


def test_lambdas_passed_to_a_helper_with_star_args_batch():
    """A helper taking ``*rest`` read as a local function at the call's shape (was refused)."""
    params, x = P.inputs_unrolled_adam_with_a_tree_map()
    check_per_example_gradients(
        P.unrolled_adam_with_a_tree_map, params, np.stack([x, 0.5 * x, -x])
    )


@pytest.mark.parametrize("f", [P.chain_over_its_own_rows, P.tower_of_its_own_rows])
def test_recursion_over_a_tuple_of_mapped_values_runs_one_branch(f):
    xs = np.stack([np.array([0.3, -0.2, 0.5]), np.array([-0.4, 0.1, 0.2])])
    check_batched(f, xs, ())


@pytest.mark.parametrize("backend", BACKENDS)
def test_ufunc_methods_are_the_numpy_functions_they_are(backend):
    """``np.subtract.outer``, ``np.add.reduce``, ``np.multiply.accumulate``: gradients against finite
    differences, per-example values and gradients against a loop."""
    x = np.array([0.3, -0.2, 0.5, 0.9])
    for f, rest in [
        (P.rbf_kernel_by_ufunc_outer, (0.7,)),
        (P.ufunc_reductions_and_accumulations, ()),
    ]:
        eps, grad = 1e-6, s2s.grad(f, backend=backend)(x, *rest)
        for k, e in enumerate(np.eye(x.size)):
            want = (f(x + eps * e, *rest) - f(x - eps * e, *rest)) / (2 * eps)
            np.testing.assert_allclose(grad[k], want, rtol=1e-6, atol=1e-8)
        if backend == "xla":
            check_batched(f, np.stack([x, -0.5 * x]), rest)


@pytest.mark.parametrize("backend", BACKENDS)
def test_imports_at_the_top_of_a_function_are_its_modules_names(backend):
    f, x = P.imports_at_the_top_of_the_function, np.array([0.3, -0.2, 0.5])
    eps, grad = 1e-6, s2s.grad(f, backend=backend)(x)
    for k, e in enumerate(np.eye(x.size)):
        want = (f(x + eps * e) - f(x - eps * e)) / (2 * eps)
        np.testing.assert_allclose(grad[k], want, rtol=1e-6)
    if backend == "xla":
        check_batched(f, np.stack([x, -0.5 * x]), ())


def test_min_char_rnn_batches_and_pushes_tangents():
    """Its dicts keyed by step stay one dict per key beside a hidden state that differs per example (the
    loop's carry batched item by item), and a tangent dict gets the keys its writes make.
    """
    params, inputs_, targets, hprev = P.inputs_min_char_rnn()
    f = P.min_char_rnn
    hs = np.stack([hprev, -2.0 * hprev])
    got = s2s.vmap(f, in_axes=(None, None, None, 0))(params, inputs_, targets, hs)
    np.testing.assert_allclose(got, [f(params, inputs_, targets, h) for h in hs])
    grads = s2s.vmap(s2s.grad(f), in_axes=(None, None, None, 0))(
        params, inputs_, targets, hs
    )
    for k, h in enumerate(hs):
        want = s2s.grad(f, backend="numpy")(params, inputs_, targets, h)
        for key in want:
            np.testing.assert_allclose(grads[key][k], want[key], rtol=1e-9, atol=1e-12)
    tangents = {k: np.ones_like(v) for k, v in params.items()}
    g = s2s.grad(f, backend="numpy")(params, inputs_, targets, hprev)
    for backend in BACKENDS:
        value, tangent = s2s.jvp(
            lambda p: f(p, inputs_, targets, hprev),
            (params,),
            (tangents,),
            backend=backend,
        )
        np.testing.assert_allclose(value, f(params, inputs_, targets, hprev))
        np.testing.assert_allclose(tangent, sum(np.sum(g[k]) for k in g), rtol=1e-9)


def test_a_joined_list_another_name_holds_is_not_grown_in_place():
    """``states = states + [s]`` is read as ``states.append(s)`` only where no other name holds the list:
    here ``first`` does, and the function computes what NumPy does (``len(first)`` stays 1).
    """
    r = np.random.default_rng(46)
    w, xs = r.normal(size=2), r.normal(size=(3, 2))
    f = P.joined_list_held_by_another_name
    eps = 1e-6
    want = np.array(
        [(f(w + eps * e, xs) - f(w - eps * e, xs)) / (2 * eps) for e in np.eye(2)]
    )
    np.testing.assert_allclose(
        s2s.grad(f, backend="numpy")(w, xs), want, rtol=1e-6, atol=1e-8
    )


def test_runge_kutta_stages_from_a_tableau_batch_and_differentiate_forward():
    p, y0 = P.inputs_butcher_tableau_steps()
    firsts = np.stack([p, p * 0.8, p + 0.1])
    check_batched(P.butcher_tableau_steps, firsts, (y0,))
    check_forward_and_hessian(P.butcher_tableau_steps, p, (y0,), np.array([0.3, -1.0]))
    # the stage loop is written out: each stage reads the ones before it, no loop collects them
    text = s2s.grad(P.butcher_tableau_steps).source
    assert "a_row = RK4_A[0]" in text and "c = RK4_C[0]" in text
    assert "a_row_4 = RK4_A[3]" in text and "c_4 = RK4_C[3]" in text


def _no_stages(w, x):
    ks = []
    return np.sum(w * x) + sum(a * k for a, k in zip([], ks))


def _stages_in_a_range(w, x):
    out = w * x
    for i in (0, 1):
        out = out + sum(0.5 * v for v in [out][:i])
    return np.sum(out)


@pytest.mark.parametrize("f", [_no_stages, _stages_in_a_range])
def test_python_sum_of_no_items_is_zero(f):
    w, x = 0.7, np.array([1.0, -2.0, 0.5])
    for backend in BACKENDS:
        np.testing.assert_allclose(s2s.transform(f, backend=backend)(w, x), f(w, x))
        fd = (f(w + 1e-6, x) - f(w - 1e-6, x)) / 2e-6
        np.testing.assert_allclose(s2s.grad(f, backend=backend)(w, x), fd, rtol=1e-7)
    if f is _stages_in_a_range:
        return  # (not yet: under vmap, residuals of a loop over a list that runs no step)
    ws = np.array([0.7, -0.3])
    np.testing.assert_allclose(
        s2s.vmap(s2s.grad(f), in_axes=(0, None))(ws, x),
        [s2s.grad(f, backend="numpy")(v, x) for v in ws],
    )


def _raising_errstate(x):
    with np.errstate(over="raise"):
        return np.sum(np.exp(x))


def _named_and_quiet_blocks(x):
    import contextlib
    import warnings

    with jax.named_scope("energy"):
        e = np.sum(np.exp(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = e + np.sum(np.log(np.abs(x) + 1.0))
    with contextlib.nullcontext(), jax.profiler.TraceAnnotation("tail"):
        return e * 2.0


def test_context_managers_that_change_no_value_are_read_as_their_statements():
    x = np.array([0.3, -1.2, 0.5])
    eps, d = 1e-6, np.array([0.2, 0.7, -0.4])
    fd = (
        _named_and_quiet_blocks(x + eps * d) - _named_and_quiet_blocks(x - eps * d)
    ) / 2e-6
    for backend in BACKENDS:
        g = s2s.grad(_named_and_quiet_blocks, backend=backend)(x)
        np.testing.assert_allclose(np.dot(g, d), fd, rtol=1e-6)


def test_an_errstate_that_raises_stays_a_located_error():
    with pytest.raises(s2s.S2SError, match="`with` statement") as info:
        s2s.grad(_raising_errstate)(np.ones(3))
    assert info.value.origin.line == _raising_errstate.__code__.co_firstlineno + 1


def test_a_keyword_splat_into_a_class_checks_its_keys():
    params, obs = P.inputs_hmm_made_from_keywords()
    extra = {**params, "n_iter": 3.0}
    with pytest.raises(Exception, match="may hold only"):
        s2s.grad(P.hmm_made_from_keywords, backend="numpy")(extra, obs)
    missing = {k: v for k, v in params.items() if k != "means"}
    with pytest.raises(Exception, match="means"):
        s2s.grad(P.hmm_made_from_keywords, backend="numpy")(missing, obs)


class _Drawn:
    def __init__(self, n=3):
        self.noise = np.random.randn(n)


def _scaled_by(obj, x):
    return x * obj.noise


def _drawn_object(x):
    obj = _Drawn(3)
    return np.sum(_scaled_by(obj, x))


def test_an_object_whose_constructor_draws_is_not_made_once():
    # made once, its draw would be the same at every call: it stays the located error
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(_drawn_object)(np.ones(3))
    assert info.value.origin.path == __file__


def test_a_default_tested_in_an_init_compiles_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        w, y = P.inputs_default_tested_in_init()
        assert np.isfinite(s2s.grad(P.default_tested_in_init)(w, y)).all()
        assert " is None" not in s2s.grad(P.default_tested_in_init).source


def test_a_class_constant_changed_since_makes_the_code_again():
    """``family.eps`` reads the class's constant as a module's value is read: watched, so a new value
    makes the code again (a baked-in old one would be a wrong answer)."""
    f, args = P.class_attributes_of_a_family, P.inputs_class_attributes_of_a_family()
    value_and_grad = s2s.value_and_grad(f)
    np.testing.assert_allclose(value_and_grad(*args)[0], f(*args), rtol=1e-10)
    kept = P._Family.eps
    try:
        P._Family.eps = 0.75
        np.testing.assert_allclose(value_and_grad(*args)[0], f(*args), rtol=1e-10)
    finally:
        P._Family.eps = kept


def test_an_object_an_init_reads_again_is_right_or_refused():
    x = np.array([0.3, -0.2, 0.5])
    f = P.handed_object_read_again_in_init
    try:
        got = s2s.grad(f)(x)
    except s2s.S2SError as e:
        assert e.origin is not None
        return
    eps = 1e-6
    want = [(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "name",
    [
        "unflattened_by_split_points",
        "unflattened_by_integer_arithmetic",
        "dicts_merged",
        "operands_chosen_by_or_and",
        "dict_of_tuples_filled_in_a_loop",
        "loop_variables_after_a_break",
        "design_matrix_built_row_by_row",
        "pendulum_parameters_bound_to_a_name",
        "sgd_steps_over_a_dict_of_parameters",
        "masked_updates_in_place",
        "parameters_rebound_by_a_comprehension",
        "riccati_gains_in_a_preallocated_list",
    ],
)
def test_split_points_summed_from_sizes_batch_and_push_tangents(name):
    """``np.split(flat, np.cumsum(sizes)[:-1])``, and sizes and offsets from comprehensions over shapes
    (integers known when traced), under vmap, jvp and the Hessian too; so dicts merged.
    """
    flat, x = getattr(P, f"inputs_{name}")()
    f = getattr(P, name)
    check_batched(f, np.stack([flat, 0.5 * flat]), (x,))
    check_forward_and_hessian(f, flat, (x,), np.linspace(-1.0, 1.0, flat.size))


def test_a_branch_decided_by_a_constant_follows_a_new_value(monkeypatch):
    """The branch a module constant picks is decided when the code is read, and the constant is watched:
    set anew, the function is read again (``frontend/static_tests.py``, ``freshness``).
    """
    x, w = P.inputs_activation_chosen_by_a_constant()
    f = P.activation_chosen_by_a_constant
    for name in ("gelu", "tanh", "relu"):
        monkeypatch.setattr(P, "ACTIVATION_NAME", name)
        check_against_finite_differences(f, (x, w))


def test_an_inner_loops_variable_read_after_it_batches_and_pushes_tangents():
    """``for j in range(3): ...`` inside an outer ``while``/``for``, then ``j`` read: Python's last index
    (the outer loop carries it, unset before its first step), under vmap, jvp and the Hessian too.
    """
    (x,) = P.inputs_inner_loop_variable_read_after_it()
    f = P.inner_loop_variable_read_after_it
    check_batched(f, np.stack([x, 0.5 * x]), ())
    check_forward_and_hessian(f, x, (), np.array([1.0, -0.5, 0.25]))


def test_a_sweep_reading_the_items_it_wrote_runs_as_written():
    """``V[k] = f(V[k + 1])`` over a list of placeholders: the loop reads the list, so it is not read as
    collecting it; NumPy runs it as written (FD), and XLA's compiled loop, which cannot carry a list
    whose items change kind, refuses it where the loop is."""
    q = np.array([0.3, -0.2])
    f = P.value_sweep_reading_the_next_item
    eps = 1e-6
    fd = [(f(q + eps * e) - f(q - eps * e)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(s2s.grad(f, backend="numpy")(q), fd, rtol=1e-6)
    with pytest.raises(s2s.S2SError, match="compiled loop"):
        s2s.grad(f)(q)


def test_scalar_states_updated_in_place_after_being_recorded_batch_and_push_tangents():
    """``ys.append(y); y += v * dt``: the update is checked to be of a number (NumPy rebinds it), under
    vmap (each example's state is a number), jvp and the Hessian too."""
    (x,) = P.inputs_scalar_states_recorded_then_updated_in_place()
    f = P.scalar_states_recorded_then_updated_in_place
    check_batched(f, np.stack([x, 0.5 * x]), ())
    check_forward_and_hessian(f, x, (), np.array([1.0, -0.5, 0.25]))


def test_loops_over_a_list_left_empty_batch_and_push_tangents():
    """A generator over a list that ``del``/``pop`` left empty: under vmap its sum of no steps is 0 for
    every example (the steps' outputs keep the batch axis), and under jvp and the Hessian.
    """
    (x,) = P.inputs_list_emptied_by_pops_then_summed()
    f = P.list_emptied_by_pops_then_summed
    check_batched(f, np.stack([x, 0.5 * x]), ())
    check_forward_and_hessian(f, x, (), np.array([1.0, -0.5, 0.25]))


def test_momentum_over_a_list_of_parameters_batches_and_pushes_tangents():
    """Velocities made by a comprehension before the loop and again in it, items of different shapes
    (a ``for`` loop, and a ``while`` loop on data): carried item by item under XLA, also under vmap, jvp
    and the Hessian."""
    for f in (
        P.momentum_over_a_list_of_parameters,
        P.momentum_until_a_tolerance_with_comprehensions,
    ):
        (x,) = P.inputs_momentum_over_a_list_of_parameters()
        check_batched(f, np.stack([x, 0.5 * x]), ())
        check_forward_and_hessian(f, x, (), np.linspace(-1.0, 1.0, x.size))


def test_powers_by_a_loop_counter_have_finite_tangents_and_hessians():
    """``x ** k`` with ``k`` a loop's counter at a negative ``x``: jvp and the Hessian against central
    differences (they were nan: the counter's zero tangent times ``log(x)``), and under vmap.
    """
    (x,) = P.inputs_powers_by_a_loop_counter()
    f = P.powers_by_a_loop_counter
    check_batched(f, np.stack([x, 0.5 * x]), ())
    check_forward_and_hessian(f, x, (), np.array([1.0, -0.5, 0.25]))
    h = s2s.hessian(f, backend="xla")(x)
    assert np.all(np.isfinite(np.asarray(h)))


def test_counters_a_loop_carries_have_no_tangent():
    """``while`` and ``for`` loops' own counters (``k += 1``) under square roots, whose partials are
    infinite at 0: jvp and the Hessian against central differences on both backends (they were nan), the
    gradient without a warning (a Python float counter's cotangent raised), and the counters' parts of the
    carry get no tangent in the generated code."""
    (x,) = P.inputs_roots_of_carried_counters()
    f = P.roots_of_carried_counters
    check_forward_and_hessian(f, x, (), np.array([1.0, -0.5, 0.25]))
    for backend in BACKENDS:
        h = s2s.hessian(f, backend=backend)(x)
        assert np.all(np.isfinite(np.asarray(h))), backend
    with (
        warnings.catch_warnings()
    ):  # (no step computes a counter's cotangent: no 1 / sqrt(0))
        warnings.simplefilter("error")
        s2s.grad(f, backend="numpy")(x)
    source = codegen.generate(f, ("jvp",), (0,)).text
    assert "xp.sqrt(k_" in source and "xp.sqrt(steps_" in source
    assert "_sqrt_dot" not in source and "_power_dot" not in source, source


def test_parameters_spread_from_a_slice_batch():
    """``model(t, *x[:3])`` under vmap, for a batch of another size than the slice's (the call's check
    counted the batch before), and under jvp and the Hessian."""
    (x,) = P.inputs_curve_fit_residuals_of_unpacked_parameters()
    f = P.curve_fit_residuals_of_unpacked_parameters
    check_batched(f, np.stack([x, 0.9 * x]), ())
    check_forward_and_hessian(f, x, (), np.linspace(-1.0, 1.0, x.size))


def test_state_started_as_none_batches():
    """``best = None`` in a loop, per example: the first step's guard is every example's."""
    w, X = P.inputs_running_best_from_none()
    check_batched(P.running_best_from_none, np.stack([w, -w, 0.5 * w]), (X,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_loops_over_ndindex_and_ndenumerate_grids_batch_and_push_tangents(backend):
    """``np.ndindex``/``np.ndenumerate`` loops and comprehensions: one loop over the grid's positions, under
    ``vmap``, ``jvp`` and ``hessian`` (the gradient is ``test_gradient_matches_finite_differences``'s).
    """
    W, scale = P.inputs_weights_by_ndenumerate()
    r = np.random.default_rng(3)
    check_batched(P.weights_by_ndenumerate, r.normal(size=(3, *W.shape)), (scale,))
    check_forward_and_hessian(
        P.weights_by_ndenumerate, W, (scale,), r.normal(size=W.shape)
    )
    K, x = P.inputs_convolution_over_an_ndindex_grid()
    got = s2s.vmap(
        P.convolution_over_an_ndindex_grid, in_axes=(None, 0), backend=backend
    )(K, np.stack([x, 2 * x]))
    np.testing.assert_allclose(
        got, [P.convolution_over_an_ndindex_grid(K, v) for v in (x, 2 * x)], rtol=1e-10
    )


def test_a_backward_sweep_over_reversed_steps_batches_and_pushes_tangents():
    """``for t in reversed(range(T))`` reading states kept by step (a dict, a list read one ahead): the
    loop counts down (``reversed_ranges``), under ``vmap``, ``jvp`` and ``hessian``."""
    Wh, xs = P.inputs_bptt_over_reversed_steps()
    r = np.random.default_rng(4)
    check_batched(
        P.bptt_over_reversed_steps, r.normal(size=(2, *Wh.shape)) * 0.5, (xs,)
    )
    check_forward_and_hessian(
        P.bptt_over_reversed_steps, Wh, (xs,), r.normal(size=Wh.shape)
    )


def test_an_ndindex_position_not_unpacked_is_a_located_error_that_says_to_unpack():
    with pytest.raises(s2s.S2SError, match=r"for i, j in np\.ndindex") as info:
        s2s.grad(P.positions_of_ndindex_not_unpacked)(np.ones((2, 3)))
    assert "numpy_style.py" in str(info.value) and "^" in str(info.value)
