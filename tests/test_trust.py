"""Issue 10's repros: programs that once gave a wrong answer with no error now give the right one.

Every case runs ``s2s.grad`` on both backends against central finite
differences of the NumPy program itself in float64 (pytrees leaf by leaf).
"""

import subprocess
import sys

import jax
import numpy as np
import pytest
from programs import trust as P

import s2s

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(10)


def _normal(*shape, scale=1.0):
    return RNG.normal(size=shape) * scale


MLP = [
    (_normal(3, 4, scale=0.5), _normal(4)),
    (_normal(4, 4, scale=0.5), _normal(4)),
    (_normal(4, 2), _normal(2)),
]
SQUARE = [(_normal(3, 2), _normal(2)), (_normal(3, 2), _normal(2))]

# name -> (arguments, argnums)
CASES = {
    "mlp_last_layer_by_negative_index": ((MLP, _normal(5, 3)), 0),
    "same_layer_by_two_indices": ((SQUARE, _normal(5, 3)), 0),
    "two_closures_from_one_factory": ((_normal(3),), 0),
    "one_line": ((_normal(3),), 0),
    "one_line_blocks": ((np.abs(_normal(3)),), 0),
    "names_of_generated_code": ((_normal(3), _normal(3)), (0, 1)),
    "module_constant_named_rt": ((_normal(3),), 0),
    "write_through_out": ((_normal(3),), 0),
    "write_through_copyto": ((np.array([0.5, -1.0, 2.0]),), 0),
    "lagged_outputs_filter": ((np.array([0.3, -0.2]), _normal(6)), 0),
    "gradient_inside_reaching_a_helper": ((0.7, 1.3, _normal(3)), (0, 1)),
    "copy_read_by_the_loop_that_updates_it": ((_normal(2), 0.3), (0, 1)),
    "lagged_rows": ((np.array([0.3, -0.2]), _normal(4, 3)), 0),
    "write_through_fill": ((_normal(3),), 0),
    "helper_with_keyword_only_parameters": ((_normal(3),), 0),
    "keywords_numpy_and_jax_spell_differently": ((np.array([0.2, 1.0, 2.0]),), 0),
    "calls_a_module_level_lambda": ((_normal(3),), 0),
    "writes_with_repeated_indices": ((np.array([1.0, 2.0, 0.5]),), 0),
    "reads_with_a_list_index": ((_normal(3),), 0),
    "readings_by_index_arrays_then_updated": ((0.3, _normal(4)), (0, 1)),
    "masked_scores_rebound": ((_normal(3),), 0),
    "gaussian_log_likelihood": ((_normal(3), _normal(3)), 0),
    "loop_over_dict_layers": (
        (
            [{"w": _normal(3), "b": _normal(3)}, {"w": _normal(3), "b": _normal(3)}],
            _normal(3),
        ),
        0,
    ),
    "recursion_until_a_tuple_is_empty": ((_normal(2),), 0),
    "static_flag_default_picks_a_branch": ((_normal(2, 3),), 0),
    "known_wrappers_inside": ((_normal(3, 3, scale=0.5), _normal(2, 3)), (0, 1)),
    "closure_defined_before_a_branch_sets_what_it_reads": (
        (np.array([0.5, 1.2, -0.7]),),
        0,
    ),
    "closure_reads_what_a_loop_computed": ((_normal(3),), 0),
    "mlp_of_one_layer": ((MLP[-1:], _normal(5, 4)), 0),
    "shift_by_hidden_biases": ((SQUARE[-1:], _normal(5, 3)), 0),
    "helper_tests_an_argument_is_not_none": ((_normal(2, 3),), 0),
    "lists_where_numpy_takes_arrays": ((np.array([0.5, 1.2, -0.7]),), 0),
    "lists_joined_by_plus": ((_normal(3),), 0),
    "calls_a_decorated_helper": (
        (_normal(3),),
        0,
    ),  # functools.wraps with *args: the wrapper's 2x is kept
    "decorated_model": ((_normal(3), _normal(3, 2)), (0, 1)),
    "sums_variadic_terms": ((_normal(3),), 0),
    "reversed_then_new_axis": ((_normal(2, 2),), 0),
    "nan_marked_targets": (
        (_normal(2), _normal(3, 2), _normal(3), np.array([True, False, True])),
        0,
    ),
    "float_written_into_int_buffer": (
        (np.array([1.37, 2.61, -0.42]), np.array([0, 1, 1])),
        0,
    ),
    "whole_array_write_then_reversed": ((_normal(2, 4),), 0),
    "chained_names_rebound": ((_normal(3),), 0),
    "helper_updates_its_argument_and_the_caller_rebinds": ((_normal(3),), 0),
    "repeated_list_of_numbers": ((_normal(3),), 0),
    "helper_result_updated_in_place": ((_normal(3), _normal(4, 3), _normal(4)), 0),
    "calls_a_vmapped_helper": ((_normal(3, 3, scale=0.5), _normal(2, 3)), (0, 1)),
    "jax_constant_on_the_numpy_backend": ((_normal(2, 3),), 0),
    "pairs_collected_then_unpacked": ((_normal(3),), 0),
    "bisection_in_a_helper": ((np.array([1.3, 0.4]), _normal(3)), (0, 1)),
    "counted_by_a_while_helper": ((np.array([1.3, 2.1]), _normal(3)), (0, 1)),
    "caches_read_backwards": (
        ([_normal(2, 3, scale=0.5), _normal(3, 3, scale=0.5)], _normal(4, 2)),
        0,
    ),
}


def _leaves(tree):
    return jax.tree_util.tree_leaves(tree)


def _with_leaf(tree, i, value):
    leaves, structure = jax.tree_util.tree_flatten(tree)
    leaves = list(leaves)
    leaves[i] = value
    return jax.tree_util.tree_unflatten(structure, leaves)


def finite_differences(f, args, argnums, eps=1e-6):
    """Central differences of ``f`` in float64 for each argument in ``argnums``, with that argument's structure."""
    grads = []
    for k in (argnums,) if isinstance(argnums, int) else argnums:
        leaves = []
        for i, leaf in enumerate(_leaves(args[k])):
            leaf = np.asarray(leaf, dtype=np.float64)
            g = np.zeros_like(leaf)
            for j in np.ndindex(leaf.shape):
                step = np.zeros_like(leaf)
                step[j] = eps
                up = list(args)
                up[k] = _with_leaf(args[k], i, leaf + step)
                down = list(args)
                down[k] = _with_leaf(args[k], i, leaf - step)
                g[j] = (f(*up) - f(*down)) / (2 * eps)
            leaves.append(g)
        grads.append(
            jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(args[k]), leaves)
        )
    return grads[0] if isinstance(argnums, int) else tuple(grads)


def assert_trees_close(got, want, rtol=1e-5, atol=1e-7):
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(_leaves(got), _leaves(want)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name, backend):
    f = getattr(P, name)
    args, argnums = CASES[name]
    got = s2s.grad(f, argnums, backend=backend)(*args)
    assert_trees_close(got, finite_differences(f, args, argnums))


@pytest.mark.parametrize(
    "name, message",
    [
        (
            "uses_fwd_without_pair",
            "`_shifted_fwd` must return a pair (output, residuals), written as a tuple",
        ),
        (
            "uses_bwd_without_tuple",
            "`_cube_bwd` must return a tuple with one cotangent per differentiable argument (1)",
        ),
    ],
)
def test_custom_vjp_rules_must_return_tuples(name, message):
    """An array where a tuple belongs would be unpacked row by row: an error at the rule's line instead."""
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(getattr(P, name))(np.ones(2))
    assert message in info.value.message
    assert (
        info.value.origin.path.endswith("trust.py")
        and "return" in info.value.origin.text
    )


def test_complex_numbers_on_the_differentiated_path_are_refused():
    with pytest.raises(
        s2s.S2SError, match="a complex number on the differentiated path"
    ) as info:
        s2s.grad(P.complex_literal_on_the_path)(np.ones(2))
    assert info.value.origin.text.strip() == "return np.sum(np.real(x * 1j * x))"
    with pytest.raises(
        s2s.S2SError, match="a complex number on the differentiated path"
    ):
        s2s.jvp(P.complex_literal_on_the_path, (np.ones(2),), (np.ones(2),))


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_complex_values_that_meet_the_differentiated_path_are_refused(backend):
    """A complex constant made off the path (a DFT matrix) and used on it is refused where it meets the
    path; a complex argument, when the derivative comes out complex. s2s's rules are those of real
    numbers: the real part of such a derivative would be wrong (``|M @ x|**2``), never returned.
    """
    x = np.array([0.3, -0.7, 1.1])
    for transform in (
        lambda f: s2s.grad(f, backend=backend),
        lambda f: s2s.hessian(f, backend=backend),
        lambda f: lambda v: s2s.jvp(f, (v,), (np.ones(3),), backend=backend),
    ):
        with pytest.raises(s2s.S2SError, match="`M` holds a complex value") as info:
            transform(P.complex_constant_meets_the_path)(x)
        assert info.value.origin.text.strip() == "X = M @ x"
    M = np.array([[1 + 1j, 2, 0], [0, 1j, 0], [1, 1, 1]])
    per_example = lambda f, backend: lambda x, M: s2s.vmap(
        s2s.grad(f), in_axes=(0, None), backend=backend
    )(np.stack([x, x]), M)
    for transform in (s2s.grad, s2s.jacrev, s2s.hessian, per_example):
        with pytest.raises(s2s.S2SError, match="came out complex") as info:
            transform(P.complex_argument_meets_the_path, backend=backend)(x, M)
        assert info.value.origin.text.startswith("def complex_argument_meets_the_path")
    # a real matrix is differentiated as before
    np.testing.assert_allclose(
        s2s.grad(P.complex_argument_meets_the_path, backend=backend)(x, M.real),
        2 * M.real.T @ (M.real @ x),
    )


@pytest.mark.parametrize(
    "name, message, line",
    [
        (
            "decorated_local_function",
            "decorator `@_twice` on a local function",
            "@_twice",
        ),
        (
            "calls_a_jax_jacrev_helper",
            "`_dense_jacobian` is `jax.jacrev(_dense_total)`",
            "return np.sum(_dense_jacobian(W, x))",
        ),
    ],
)
def test_wrappers_s2s_cannot_see_through_are_refused(name, message, line):
    """What runs is what is transformed: a decorator's wrapper is read as itself, never stripped."""
    f = getattr(P, name)
    args = (np.ones((3, 3)), np.ones((2, 3))) if "helper" in name else (np.ones(2),)
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(f)(*args)
    assert message in info.value.message
    assert info.value.origin.text.strip() == line


def test_a_jax_grad_made_at_module_level_is_s2s_grad_of_its_function():
    W, x = np.array([[0.5, -1.0], [0.3, 0.8]]), np.array([[1.0, 2.0], [-0.5, 0.1]])
    # the function is x.T @ (1 - tanh(x @ W) ** 2), summed: its gradient by hand
    t = np.tanh(x @ W)
    want = x.T @ (-2 * t * (1 - t**2) * (x @ np.ones((2, 2))))
    np.testing.assert_allclose(
        s2s.grad(P.calls_a_jax_grad_helper, backend="numpy")(W, x), want, rtol=1e-10
    )


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_lists_joined_where_s2s_cannot_see_they_are_lists_are_refused(backend):
    """``ws + vs`` of two list arguments: an array rule for ``+`` would add the cotangents (it did, silently)."""
    with pytest.raises(TypeError, match="joined or repeated Python lists"):
        s2s.grad(P.joins_two_list_arguments, backend=backend)(
            [np.ones(2)], [np.ones(2)]
        )
    # a list of 4 cotangents for 1 array
    with pytest.raises(TypeError, match="joined or repeated Python lists"):
        s2s.grad(P.repeats_a_list_argument, backend=backend)([np.ones(2)])


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_grad_of_a_vector_output_is_a_type_error_even_when_no_derivative_reaches_it(
    backend,
):
    """JAX's TypeError, not a zero gradient, also when the output does not depend on the input."""
    with pytest.raises(
        TypeError, match="Gradient only defined for scalar-output functions"
    ):
        s2s.grad(P.vector_output_not_depending_on_x, backend=backend)(np.ones(2))


def test_check_grads_of_second_order_binds_defaults_and_keyword_only_parameters():
    s2s.check_grads(P.scaled_with_keyword_only, (_normal(3),), order=2)
    s2s.check_grads(P.scaled_with_keyword_only, (_normal(3), 0.5), order=2)


@pytest.mark.parametrize(
    "name, message, line",
    [
        (
            "chained_arrays_written",
            "in-place write into `a`, which may share memory with `b`",
            "a[0] = w[0]",
        ),
        (
            "helper_updates_its_argument_read_later",
            "`_add_in_place` updates its parameter `v` in place (`v += ...`), which holds `h` here",
            "out = _add_in_place(h, 1.0)",
        ),
        (
            "helper_updates_a_view_of_an_array_read_later",
            "`_normalized_in_place` updates its parameter `v` in place (`v /= ...`), which holds `x[:2]`, "
            "a view of `x`, here",
            "u = _normalized_in_place(x[:2])",
        ),
        (
            "helper_updates_through_another_read_later",
            "`_through_another` updates its parameter `v` in place (`v *= ...`), which holds `x` here",
            "s = _through_another(x)",
        ),
        (
            "partial_of_a_helper_writing_elements_read_later",
            "`h` updates its parameter `v` in place (`v[...] = ...`), which holds `x` here",
            "s = h(x)",
        ),
        (
            "local_function_updates_its_argument_read_later",
            "`scaled_in_place` updates its parameter `v` in place (`v *= ...`), which holds `x` here",
            "u = scaled_in_place(x)",
        ),
        (
            "local_function_updates_a_row_of_a_matrix_read_later",
            "which holds `M[0]`, a view of `M`, here: NumPy changes `M` too",
            "r = normalized_in_place(M[0])",
        ),
        (
            "helper_view_updated_in_place",
            "in-place update of `v`, which may share memory with `w`",
            "v += 1.0",
        ),
        (
            "repeated_list_of_arrays_written",
            "a list made by repetition (`[a] * n`), whose items are one object",
            "hs[0][1] = w[0]",
        ),
        (
            "one_array_under_two_keys_written",
            "in-place write into an item of `pair`, which may hold the same array under another item",
            'pair["a"][0] = 5.0',
        ),
        (
            "one_array_twice_in_a_list_updated",
            "in-place write into an item of `track`, which may hold the same array under another item",
            "track[0] += 0.5 * w",
        ),
        (
            "dict_item_handle_updated",
            "in-place update of `W`, which may share memory with `d`",
            "W *= 2.0",
        ),
        (
            "dict_entry_updated_handle_read",
            "in-place write into `d`, which may share memory with `W`",
            'd["W"] *= 2.0',
        ),
        (
            "state_dict_advanced_through_handles",
            "in-place update of `v`, which may share memory with `state`",
            "v += 0.1 * (-w * x)",
        ),
        (
            "view_bound_in_a_branch_then_written",
            "in-place write into `a`, which may share memory with `v`",
            "a[0] = w[0]",
        ),
    ],
)
def test_writes_numpy_makes_visible_through_another_name_are_refused(
    name, message, line
):
    """Each gave a wrong value and gradient with no error: one array under two names, written once."""
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(getattr(P, name))(np.array([1.5, 2.0, 3.0]))
    assert message in info.value.message
    assert info.value.origin.text.strip() == line


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_an_array_item_of_a_list_argument_updated_in_place_is_refused_when_the_code_runs(
    backend,
):
    """``W = ws[0]`` of a list of arrays: not a number but the list's array (corpus I, silent before)."""
    w = np.array([1.5, 2.0, 3.0])
    with pytest.raises(
        s2s.S2SError, match="the very array a list or dict holds"
    ) as info:
        s2s.grad(P.list_argument_item_updated, argnums=1, backend=backend)([w * 1.0], w)
    assert "W = ws[0]" in str(info.value)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_an_item_of_a_dict_updated_in_place_is_its_new_value(backend):
    w = np.array([1.5, -2.0, 0.3])
    want_value = P.dict_item_updated_in_place(w.copy())
    c = w - 0.1 * np.tanh(w)
    want = 2 * c * (1 - 0.1 * (1 - np.tanh(w) ** 2))
    value, got = s2s.value_and_grad(P.dict_item_updated_in_place, backend=backend)(w)
    np.testing.assert_allclose(value, want_value, rtol=1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    batched = s2s.vmap(s2s.grad(P.dict_item_updated_in_place), backend=backend)(
        np.stack([w, 2 * w])
    )
    np.testing.assert_allclose(batched[0], want, rtol=1e-5)


# --- writes by index arrays over values no arithmetic may touch (corpus F) ----------------------


def dp_table(x, fill):
    """A dynamic-programming table started at ``fill`` (``np.inf``), written row by row and by an index array."""
    R = np.full(4, fill)
    R[np.array([1, 2])] = x[:2]
    for i in range(2, 4):
        R[i] = np.minimum(R[i - 1], x[i]) + x[i - 1]
    return R[1] + R[2] + R[3]


@pytest.mark.parametrize("fill", [np.inf, np.nan, 1e17, 1.0])
def test_a_write_by_an_index_array_never_computes_with_the_old_values(fill):
    x = np.array([3e-17, 5e-17, 0.7, 0.2])
    want = dp_table(x, fill)
    value, grad = s2s.value_and_grad(dp_table)(x, fill)
    np.testing.assert_allclose(value, want, rtol=1e-12)
    np.testing.assert_allclose(grad, s2s.grad(dp_table, backend="numpy")(x, fill))
    np.testing.assert_allclose(
        s2s.jvp(dp_table, (x, fill), (np.ones(4), 0.0))[0], want, rtol=1e-12
    )
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(
        s2s.vmap(dp_table, in_axes=(0, None))(xs, fill),
        [dp_table(v, fill) for v in xs],
        rtol=1e-12,
    )


# --- a function value a call of the user's returns (a factory), reached by a derivative ---------


def scaler(lr):
    def update(g):
        return -lr * g

    return update


def scaled_step(lr, x):
    update = scaler(lr)
    return np.sum(x + update(x))


def test_a_factorys_closure_reached_by_a_derivative_is_its_derivative_in_every_transform():
    """Was zeros under vmap(grad), then a located error: the factory is written in place now."""
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(s2s.grad(scaled_step)(0.3, x[0]), -3.0)
    np.testing.assert_allclose(
        s2s.vmap(s2s.grad(scaled_step), in_axes=(None, 0))(0.3, x), [-3.0, -7.0]
    )
    np.testing.assert_allclose(
        s2s.jvp(scaled_step, (0.3, x[0]), (1.0, np.zeros(2)))[1], -3.0
    )
    np.testing.assert_allclose(
        s2s.vmap(scaled_step, in_axes=(0, None))(np.array([0.3, 0.5]), x[0]),
        [0.7 * 3.0, 0.5 * 3.0],
    )


def scaler_of_rates(*rates):
    def update(g):
        return -rates[0] * g

    return update


def scaled_step_by_rates(lr, x):
    update = scaler_of_rates(lr)
    return np.sum(x + update(x))


def test_a_factorys_closure_s2s_cannot_write_in_place_is_a_located_error_in_every_transform():
    """A factory taking ``*args`` is not written in place: its closure is a located error where a
    derivative or a batch axis reaches it."""
    scaled_step = scaled_step_by_rates
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    calls = [
        lambda: s2s.grad(scaled_step)(0.3, x[0]),
        lambda: s2s.vmap(s2s.grad(scaled_step), in_axes=(None, 0))(0.3, x),
        lambda: s2s.jvp(scaled_step, (0.3, x[0]), (1.0, np.zeros(2))),
        lambda: s2s.vmap(scaled_step, in_axes=(0, None))(np.array([0.3, 0.5]), x[0]),
    ]
    for run in calls:
        with pytest.raises(s2s.S2SError, match="returns a function that reads") as info:
            run()
        assert info.value.origin.path == __file__
        assert info.value.origin.line == scaled_step.__code__.co_firstlineno + 1
    # where none reaches them, the call through the value it returns is the located error
    with pytest.raises(s2s.S2SError, match="called through a parameter or a value"):
        s2s.grad(scaled_step, argnums=1, backend="numpy")(0.3, x[0])


# --- np.bincount with minlength under XLA: minlength bins, checked when the code runs -------------


def degree_weighted(h, edges, n=4):
    """A graph's node degrees by ``np.bincount(..., minlength=n)`` (``e47``'s GNN), then a weighted sum."""
    degree = np.bincount(edges, minlength=n)
    return np.sum(h * (1.0 + degree) ** -0.5)


def test_bincount_with_minlength_compiles_and_checks_its_values():
    h = np.array([0.5, -1.0, 2.0, 0.3])
    edges = np.array([0, 1, 1, 3])
    want = degree_weighted(h, edges)
    np.testing.assert_allclose(s2s.jit(degree_weighted)(h, edges), want, rtol=1e-12)
    np.testing.assert_allclose(
        s2s.grad(degree_weighted)(h, edges),
        (1.0 + np.bincount(edges, minlength=4)) ** -0.5,
    )
    with pytest.raises(
        Exception, match="minlength=4"
    ):  # NumPy would add a bin: loud, never dropped
        s2s.jit(degree_weighted)(h, np.array([0, 1, 5, 3]))


def weights_binned(x):
    """``np.bincount`` of ids made in the function, without ``minlength``: known when traced, so are its
    bins (``runtime/known_integers.py``)."""
    return np.sum(np.bincount(np.array([0, 1, 1, 2]), weights=x) ** 2)


def weights_binned_by_sign(x):
    """``np.bincount`` of ids computed from the data, without ``minlength``: its bins depend on the data."""
    return np.sum(np.bincount((x > 0).astype(int), weights=x) ** 2)


def test_bincount_without_its_number_of_bins_is_refused_under_jit_and_right_on_numpy():
    x = np.array([0.5, -1.0, 2.0, 0.3])
    want = 2 * np.bincount([0, 1, 1, 2], weights=x)[[0, 1, 1, 2]]
    for backend in (
        "numpy",
        "xla",
    ):  # ids known when traced: NumPy's bins under jit too
        np.testing.assert_allclose(s2s.grad(weights_binned, backend=backend)(x), want)
    ids = (x > 0).astype(int)
    np.testing.assert_allclose(
        s2s.grad(weights_binned_by_sign, backend="numpy")(x),
        2 * np.bincount(ids, weights=x)[ids],
    )
    with pytest.raises(s2s.S2SError, match="without `length=` under jit") as info:
        s2s.grad(weights_binned_by_sign)(x)
    assert "minlength=n" in str(info.value)


def soft_dtw_first_row(x):
    """Soft-DTW's table starts at +inf: minima of two infinities (a tie) whose entries depend on ``x``."""
    R = x[0] + np.full(3, np.inf)
    first = np.minimum(R[1], R[2])
    return np.minimum(first, x[1]) + np.exp(-np.maximum(R[1], R[2])) + x[0]


def test_minima_of_the_same_infinity_split_no_nan_into_derivatives():
    x, t = np.array([0.3, 0.7]), np.array([1.0, 0.5])
    for backend in ("numpy", "xla"):
        np.testing.assert_allclose(
            s2s.grad(soft_dtw_first_row, backend=backend)(x), [1.0, 1.0]
        )
        _, tangent = s2s.jvp(soft_dtw_first_row, (x,), (t,), backend=backend)
        np.testing.assert_allclose(tangent, 1.5)


def test_a_row_view_written_in_its_iteration_is_refused_where_it_is_a_view():
    """``y1 = Y[n]`` then ``Y[n] = ...`` with ``y1`` read later: NumPy changes ``y1`` where ``Y`` has two
    axes (a view), not where it has one (a number): refused when the code runs, on the first only.
    """
    w = np.array([1.5, 2.0, 3.0])
    with pytest.raises(
        s2s.S2SError, match="`y1` was taken from `Y` by an index"
    ) as info:
        s2s.grad(P.row_view_written_in_its_iteration)(w)
    assert info.value.origin.text.strip() == "y1 = Y[n]"
    for backend in ("numpy", "xla"):
        np.testing.assert_allclose(
            s2s.grad(P.row_item_written_in_its_iteration, backend=backend)(w),
            finite_differences(P.row_item_written_in_its_iteration, (w,), 0),
            rtol=1e-6,
        )


def test_a_copy_read_by_the_loop_that_updates_its_source_keeps_its_value():
    """The value itself, and ``vmap`` and ``jvp``, not only the gradient (all were wrong the same way)."""
    f = P.copy_read_by_the_loop_that_updates_it
    y0s, a = np.array([[1.0, 2.0], [0.5, -1.0]]), 0.3
    np.testing.assert_allclose(
        s2s.vmap(f, in_axes=(0, None))(y0s, a), [f(y, a) for y in y0s], rtol=1e-12
    )
    value, tangent = s2s.jvp(f, (y0s[0], a), (np.ones(2), 0.0))
    eps = 1e-6
    want = (f(y0s[0] + eps, a) - f(y0s[0] - eps, a)) / (2 * eps)
    np.testing.assert_allclose(value, f(y0s[0], a), rtol=1e-12)
    np.testing.assert_allclose(tangent, want, rtol=1e-6)


def test_an_index_of_whole_and_new_axes_is_a_reshape_not_a_scatter(tmp_path):
    """``np.cumsum(y, axis=1)[:, None, :]``: its cotangent was a scatter-add, which XLA's CPU compiler
    aborted on beside ``cumsum``'s reversals (the process died: no error to catch). In a subprocess.
    """
    program = tmp_path / "whole_axes.py"
    program.write_text(
        "import numpy as np\nimport s2s\n\n\n"
        "def loss(y):\n    return np.sum(np.cumsum(y, axis=1)[:, None, :] ** 2)\n\n\n"
        "y = np.arange(6.0).reshape(2, 3) / 7\n"
        "got = np.asarray(s2s.grad(loss)(y))\n"
        "want = s2s.grad(loss, backend='numpy')(y)\n"
        "np.testing.assert_allclose(got, want, rtol=1e-5)\n"
        "print('ok')\n"
    )
    run = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_functions_handed_to_an_op_in_a_display_carry_what_they_read(backend):
    """Local functions in a list handed to an op without rules: their reads of ``w`` reach the op, so
    every transform is a located error (``grad`` was a silent zero, ``vmap`` a broadcast error).
    """
    w, x = 0.5, np.array([-1.0, 2.0, 3.0])
    f = P.functions_in_a_list_handed_to_an_op
    with pytest.raises(s2s.S2SError, match="no derivative rule for `piecewise`"):
        s2s.grad(f, backend=backend)(w, x)
    with pytest.raises(s2s.S2SError, match="no derivative rule for `piecewise`"):
        s2s.jvp(f, (w, x), (1.0, np.zeros(3)), backend=backend)
    with pytest.raises(s2s.S2SError, match="no batching rule for `piecewise`"):
        s2s.vmap(f, in_axes=(0, None), backend=backend)(np.array([0.5, 1.0]), x)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_return_in_a_loop_under_an_if_on_data_differentiates(backend):
    f = P.early_return_in_a_loop_on_data
    for v in (1.3, 0.7):
        fd = (f(v + 1e-6) - f(v - 1e-6)) / 2e-6
        np.testing.assert_allclose(s2s.grad(f, backend=backend)(v), fd, rtol=1e-6)
    got = s2s.vmap(s2s.grad(f, backend=backend), backend=backend)(np.array([1.3, 0.7]))
    np.testing.assert_allclose(got, [-1.08, -1.0], rtol=1e-9)  # 0.7: no step returns


@pytest.mark.parametrize("backend", ["xla"])
def test_a_dict_keyed_by_the_step_runs_in_every_transform(backend):
    """Karpathy's min-char-rnn keeps ``hs[t]`` in a dict: its loop runs step by step when traced, so the
    keys are Python ints (was JAX's ``unhashable type`` from inside the generated code, then a located
    refusal); under ``vmap`` of per-example indices the one-hot rows differ per example, and the zeros
    first written into the dict get the batch axis."""
    W = np.arange(9.0).reshape(3, 3) / 10
    idx = np.array([[0, 2, 1], [1, 1, 0]])
    f = P.dict_keyed_by_step
    got = s2s.vmap(f, in_axes=(None, 0), backend=backend)(W, idx)
    np.testing.assert_allclose(got, [f(W, i) for i in idx], rtol=1e-12)
    eps, d = 1e-6, np.outer([1.0, -0.5, 0.2], [0.3, 1.0, -1.0])
    grads = s2s.vmap(s2s.grad(f), in_axes=(None, 0), backend=backend)(W, idx)
    for g, i in zip(grads, idx):
        fd = (f(W + eps * d, i) - f(W - eps * d, i)) / (2 * eps)
        np.testing.assert_allclose(np.sum(g * d), fd, rtol=1e-6)
    fd = (f(W + eps * d, idx[0]) - f(W - eps * d, idx[0])) / (2 * eps)
    got = s2s.grad(f, backend=backend)(W, idx[0])
    np.testing.assert_allclose(np.sum(got * d), fd, rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_floats_written_into_an_integer_array_have_no_tangent(backend):
    w, t = np.array([0.3, -0.7, 1.1]), np.array([1.0, 0.5, -0.3])
    f = P.floats_written_into_integers
    value, tangent = s2s.jvp(f, (w,), (t,), backend=backend)
    eps = 1e-6
    want = (f(w + eps * t) - f(w - eps * t)) / (2 * eps)
    np.testing.assert_allclose(value, f(w), rtol=1e-6)
    np.testing.assert_allclose(tangent, want, rtol=1e-5)
    np.testing.assert_allclose(s2s.grad(f, backend=backend)(w) @ t, want, rtol=1e-5)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_row_bound_in_one_branch_is_checked_where_the_code_runs(backend):
    """A view bound in one branch of an ``if`` (``prev = C[t - 1]``, else ``c0``) survives the branch:
    the write into ``C`` read through ``prev`` after it gave 0.0 where NumPy gives the new row's values.
    """
    with pytest.raises(s2s.S2SError, match="`prev` was taken from `C` by an index"):
        s2s.grad(P.row_bound_in_a_branch_then_written, backend=backend)(
            np.array([1.5, 2.0, 3.0])
        )


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_previous_row_or_the_start_is_not_an_alias_of_the_start(backend):
    """``prev = C[t - 1] if t > 0 else c0`` shares memory with ``C`` or with ``c0``, not ``C`` with ``c0``
    (was refused: in-place write into `C`, which may share memory with `c0`)."""
    f = P.previous_row_or_start
    w = np.array([0.3, -0.2, 0.5])
    eps = 1e-6
    want = np.array([(f(w + eps * e) - f(w - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(s2s.grad(f, backend=backend)(w), want, rtol=1e-5)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize(
    "name",
    [
        "custom_vjp_mapped_directly",
        "custom_vjp_mapped_in_a_lambda",
        "custom_vjp_mapped_in_a_helper",
    ],
)
def test_a_custom_vjp_rule_under_an_inner_vmap_is_the_gradient(name, backend):
    """``jax.vmap(gradscale)(x)`` inside: the rule applies to each example, as in JAX (it was lost)."""
    f, x = getattr(P, name), np.array([[1.0, -2.0, 0.5], [0.3, 2.0, -1.5]])
    np.testing.assert_allclose(
        s2s.grad(f, backend=backend)(x), jax.jit(jax.grad(f))(x), rtol=1e-12
    )


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_custom_jvp_rule_under_an_inner_vmap_is_the_tangent(backend):
    """The rule's tangent through ``jax.vmap(f)`` inside, as JAX's; its reverse mode batches the transposed
    rule (requested as a helper's vjp is), and is JAX's too, never the primal's derivative.
    """
    f, x = P.custom_jvp_mapped, np.array([[1.0, -2.0, 0.5], [0.3, 2.0, -1.5]])
    t = np.ones_like(x)
    got = s2s.jvp(f, (x,), (t,), backend=backend)
    want = jax.jvp(f, (x,), (t,))
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    np.testing.assert_allclose(
        s2s.grad(f, backend=backend)(x), jax.grad(f)(x), rtol=1e-12
    )


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_an_unhashable_dataclass_object_called_in_an_assignment(backend):
    """``y = layer(x)`` of a mutable dataclass (unhashable): its ``__call__`` (a crash before, corpus Y)."""
    x = np.array([1.0, -2.0, 0.5])
    f = P.unhashable_layer_called
    np.testing.assert_allclose(
        s2s.grad(f, backend=backend)(x), jax.jit(jax.grad(f))(x), rtol=1e-12
    )


def test_a_gradient_of_none_for_an_array_is_an_internal_error_never_returned():
    from s2s import dtypes

    x, w = np.ones(3), np.ones(2)
    with pytest.raises(
        s2s.S2SError, match=r"no gradient \(None\) for a parameter of shape \(3,\)"
    ):
        dtypes.in_primal_dtypes((None, w), (x, w), (0, 1), "grad", has_aux=False)
    # a None leaf of the parameters' tree keeps its None
    got = dtypes.in_primal_dtypes(
        {"a": w, "b": None}, ({"a": w, "b": None},), 0, "grad", False
    )
    assert got["b"] is None


def _det_total(a):
    return np.linalg.det(a) * 2.0


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_the_derivative_of_det_at_singular_matrices_is_finite_as_jax(backend):
    """JAX's rule for ``det`` is the adjugate, finite where the matrix is singular (a zero matrix, a
    degenerate triangle): never a nan from an inverse."""
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    for a in (
        np.diag([0.0, 1.0, 2.0]),
        np.array([[1.0, 2.0], [2.0, 4.0]]),
        np.zeros((2, 2)),
    ):
        want = jax.grad(lambda m: jnp.linalg.det(m) * 2.0)(a)
        np.testing.assert_allclose(
            s2s.grad(_det_total, backend=backend)(a), want, atol=1e-12
        )
        _, tangent = s2s.jvp(_det_total, (a,), (np.ones_like(a),), backend=backend)
        _, want_tangent = jax.jvp(
            lambda m: jnp.linalg.det(m) * 2.0, (a,), (np.ones_like(a),)
        )
        np.testing.assert_allclose(tangent, want_tangent, atol=1e-12)


def _hypot_energy(p):
    return np.sum(np.hypot(p[:, 0], p[:, 1]))


def _log1mexp_total(x):
    return np.sum(jax.nn.log1mexp(x))


def _guarded_quantiles(a):
    u = np.clip(0.5 + np.array([-3.0, 0.1, 3.0]) * a, 0.0, 1.0)
    z = jax.scipy.special.ndtri(u)
    return np.sum(np.where(np.isfinite(z), z, 0.0) ** 2)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize(
    "fn, x",
    [
        (_hypot_energy, np.array([[0.0, 0.0], [3.0, 4.0]])),  # a particle at the origin
        (_log1mexp_total, np.array([0.0, 1e-17, 1e-3, 2.0])),
        (_guarded_quantiles, 0.4),  # clipped to 0 and 1, then guarded
    ],
    ids=["hypot_at_the_origin", "log1mexp_near_zero", "ndtri_at_its_ends"],
)
def test_derivatives_at_edge_points_are_jaxs_not_nan(fn, x, backend):
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    twin = {
        _hypot_energy: lambda p: jnp.sum(jnp.hypot(p[:, 0], p[:, 1])),
        _log1mexp_total: lambda v: jnp.sum(jax.nn.log1mexp(v)),
        _guarded_quantiles: lambda a: jnp.sum(
            jnp.where(
                jnp.isfinite(
                    z := jax.scipy.special.ndtri(
                        jnp.clip(0.5 + jnp.array([-3.0, 0.1, 3.0]) * a, 0.0, 1.0)
                    )
                ),
                z,
                0.0,
            )
            ** 2
        ),
    }[fn]
    np.testing.assert_allclose(
        s2s.grad(fn, backend=backend)(x), jax.grad(twin)(x), rtol=1e-12
    )
