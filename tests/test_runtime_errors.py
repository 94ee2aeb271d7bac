"""Errors raised while generated code runs name the user's line: ``file:line:col``, the line, a caret and a hint.

Each case runs a transformed function on inputs it cannot handle and checks
the error's type (an ``s2s.S2SError`` that is still an instance of the
original exception's class), the location (this file, the line of the
offending statement), the caret line, the hint, and that the original
exception is chained. Errors s2s raises on purpose with JAX's messages, and
errors raised in the user's own code, stay as they are.
"""

import inspect
import re

import jax
import numpy as np
import pytest
from s2s.runtime import backends, loader
from s2s.runtime.located import GeneratedCodeError

import s2s
from tests.test_trust import finite_differences

X = np.array([-1.0, 0.5, 2.0])
W = np.ones((4, 2))


def back_substitution(U, b):
    # (``U[i, i + 1:] @ x[i + 1:]`` compiles as a masked product; a cumulative sum keeps the slice's size)
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - np.cumsum(U[i, i + 1 :])[-1:] @ x[i + 1 : i + 2]) / U[i, i]
    return np.sum(x)


# (a selection feeding a whole reduction compiles as a masked reduction: these let its size escape)
def mask_read(x):
    y = x[x > 0]
    return np.sum(np.cumsum(y))


def nonzero(x):
    idx = np.nonzero(x > 0)
    return np.sum(np.cumsum(x[idx]))


def where_one_argument(x):
    idx = np.where(x > 0)
    return np.sum(np.cumsum(x[idx]))


def unique(x):
    u = np.unique(x)
    return np.sum(u)


def trip_count(x, n):
    s = 0.0
    for i in range(int(n)):
        s = s + np.sum(x) * i
    return s


def to_float(x):
    a = float(np.sum(x))
    return a * np.sum(x)


def traced_length(x):
    n = int(np.sum(x) > 0) + 2
    return np.sum(np.zeros(n) + x[0])


def to_bool(x):
    b = bool(np.sum(x) > 0)
    return np.sum(x) * b


def matmul(x, w):
    h = np.tanh(x @ w)
    return np.sum(h)


def in_loop(x, w):
    s = 0.0
    for i in range(2):
        s = s + np.sum(x @ w)
    return s


def filtered_on_values(x):
    positive = [v for v in x if v > 0]
    return np.sum(np.stack(positive) ** 2)


def assigned_in_one_branch(x):
    if np.sum(x) > 0:
        y = x * 2
    return np.sum(y)


def activation(z, name):
    if name == "relu":
        a = np.maximum(z, 0.0)
    elif name == "tanh":
        a = np.tanh(z)
    return a


def activation_by_name(x):
    return np.sum(activation(x, "tanh")) + np.sum(activation(2 * x, "relu"))


def unknown_activation(x):
    return np.sum(activation(x, "gelu"))


def vector_output(x):
    return x * 2.0


inner_grad = s2s.grad(matmul)


def calls_a_transformed_function(x, w):
    g = inner_grad(x, w)
    return np.sum(g * g)


def line_of(fn, text: str) -> int:
    """The line number in this file of the line of ``fn`` that contains ``text``."""
    lines, start = inspect.getsourcelines(fn)
    (offset,) = [i for i, line in enumerate(lines) if text in line]
    return start + offset


def assert_located(err, fn, text: str, hint: str):
    """``err`` renders at this file's line of ``fn`` containing ``text``, with that line, a caret and ``hint``."""
    assert isinstance(err, s2s.S2SError) and isinstance(err, GeneratedCodeError), type(
        err
    )
    rendered = str(err)
    first, source, caret, *rest = rendered.splitlines()
    match = re.fullmatch(r"(.+):(\d+):(\d+): error: .+", first)
    assert match, rendered
    assert match.group(1) == __file__, rendered
    assert int(match.group(2)) == line_of(fn, text), rendered
    assert source.strip() == text, rendered
    assert re.fullmatch(r"\s*\^+", caret) and caret.index("^") == source.index(
        text[0]
    ), rendered
    assert rest and rest[-1].startswith("hint: ") and hint in rest[-1], rendered
    assert err.__cause__ is not None and not isinstance(err.__cause__, s2s.S2SError)


COMPILE_TIME = [
    (
        s2s.grad,
        mask_read,
        (X,),
        jax.errors.NonConcreteBooleanIndexError,
        "y = x[x > 0]",
        "np.where(mask, x, 0)",
    ),
    (
        s2s.transform,
        nonzero,
        (X,),
        jax.errors.ConcretizationTypeError,
        "idx = np.nonzero(x > 0)",
        "np.where(c, x, 0)",
    ),
    (
        s2s.transform,
        where_one_argument,
        (X,),
        jax.errors.ConcretizationTypeError,
        "idx = np.where(x > 0)",
        "np.where(c, x, 0)",
    ),
    (
        s2s.transform,
        unique,
        (X,),
        jax.errors.ConcretizationTypeError,
        "u = np.unique(x)",
        "np.where(c, x, 0)",
    ),
    (
        s2s.transform,
        traced_length,
        (X,),
        TypeError,
        "return np.sum(np.zeros(n) + x[0])",
        "backend='numpy'",
    ),
    (
        s2s.grad,
        back_substitution,
        (np.triu(np.ones((3, 3))) + 2 * np.eye(3), X),
        IndexError,
        "x[i] = (b[i] - np.cumsum(U[i, i + 1 :])[-1:] @ x[i + 1 : i + 2]) / U[i, i]",
        "mask instead of slicing",
    ),
]


@pytest.mark.parametrize(
    "make, fn, args, original, text, hint",
    COMPILE_TIME,
    ids=[c[1].__name__ for c in COMPILE_TIME],
)
def test_values_needed_at_compile_time(make, fn, args, original, text, hint):
    with pytest.raises(original) as info:
        make(fn)(*args)
    assert_located(info.value, fn, text, hint)
    assert "this needs a value known at compile time" in info.value.message
    assert "backend='numpy'" in info.value.hint
    assert isinstance(info.value.__cause__, original)


def test_a_truth_value_of_data_compiles():
    """``bool(np.sum(x) > 0)`` is the one element's truth, a traced boolean (``rt.as_bool``): under XLA
    it computes what NumPy computes, where JAX's ``bool`` of a tracer refuses."""
    for x in (X, -X):
        np.testing.assert_allclose(
            s2s.grad(to_bool)(x), s2s.grad(to_bool, backend="numpy")(x), rtol=1e-6
        )
    assert "rt.as_bool" in s2s.grad(to_bool).source


def test_a_list_filtered_on_values_under_xla():
    """Its length would depend on the values: refused where the filter is, with hints that work."""
    with pytest.raises(TypeError) as info:
        s2s.grad(filtered_on_values)(X)
    assert_located(
        info.value,
        filtered_on_values,
        "positive = [v for v in x if v > 0]",
        "backend='numpy'",
    )
    assert "the list's length would depend on the values" in info.value.message
    want = 2 * X * (X > 0)
    got = s2s.grad(filtered_on_values, backend="numpy")(X)
    np.testing.assert_allclose(got, want)


def test_a_name_assigned_in_one_branch_of_an_if_on_data_under_xla():
    """Python binds it on one path only: a test known only at run time cannot compile that."""
    with pytest.raises(TypeError) as info:
        s2s.grad(assigned_in_one_branch)(X)
    assert_located(
        info.value, assigned_in_one_branch, "if np.sum(x) > 0:", "give `y` a value"
    )
    # NumPy runs Python's code: the branch is taken here
    np.testing.assert_allclose(
        s2s.grad(assigned_in_one_branch, backend="numpy")(X), 2 * np.ones(3)
    )


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_an_if_elif_chain_on_static_names_without_else(backend):
    """The deep-learning course's ``if activation == "relu": ... elif ...`` (no ``else``)."""
    got = s2s.grad(activation_by_name, backend=backend)(X)
    want = (1 - np.tanh(X) ** 2) + 2.0 * (X > 0)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # the mode is read with the helper's code: no branch assigns `a`, where Python raises (its line)
    with pytest.raises(s2s.S2SError, match="`a` has no value here") as info:
        s2s.grad(unknown_activation, backend=backend)(X)
    assert "return a" in str(info.value)


def test_int_and_float_of_traced_values_compile():
    """``float(np.sum(x))`` is the 0-d array it holds, and ``range(int(n))`` of a traced ``n`` a loop
    with a bound known when the code runs (``runtime/scalars.py``)."""
    assert s2s.transform(to_float)(X) == pytest.approx(np.sum(X) ** 2, rel=1e-6)
    np.testing.assert_allclose(
        s2s.grad(to_float)(X), 2 * np.sum(X) * np.ones_like(X), rtol=1e-6
    )
    np.testing.assert_allclose(
        s2s.grad(trip_count)(X, np.array(3)), 3 * np.ones_like(X)
    )
    assert s2s.transform(trip_count)(X, np.array(3)) == pytest.approx(3 * np.sum(X))


def test_the_numpy_backend_runs_them():
    assert s2s.transform(trip_count, backend="numpy")(X, np.array(3)) == pytest.approx(
        3 * np.sum(X)
    )


@pytest.mark.parametrize(
    "backend, original, says",
    [("xla", TypeError, "dot_general"), ("numpy", ValueError, "matmul")],
)
def test_shape_mismatch(backend, original, says):
    with pytest.raises(original) as info:
        s2s.grad(matmul, backend=backend)(X, W)
    assert_located(
        info.value,
        matmul,
        "h = np.tanh(x @ w)",
        "raised by the generated code at s2s_generated_matmul_",
    )
    assert says in info.value.message


def test_inside_a_loop_body_names_the_body_line():
    with pytest.raises(TypeError) as info:
        s2s.grad(in_loop)(X, W)
    assert_located(info.value, in_loop, "s = s + np.sum(x @ w)", "chained")


def test_through_generated_code_transformed_again():
    """Forward mode of a gradient: the error is in the second module, whose comments cite the first."""
    with pytest.raises(TypeError) as info:
        s2s.jvp(s2s.grad(matmul), (X, W), (X, W))
    assert_located(info.value, matmul, "h = np.tanh(x @ w)", "chained")


def test_under_jax_jit_and_inside_another_transformed_function():
    with pytest.raises(TypeError) as info:
        jax.jit(s2s.grad(matmul))(X, W)
    assert_located(info.value, matmul, "h = np.tanh(x @ w)", "chained")
    with pytest.raises(TypeError) as info:
        s2s.grad(calls_a_transformed_function)(X, W)
    # located once, where it went wrong
    assert_located(info.value, matmul, "h = np.tanh(x @ w)", "chained")


def test_the_traceback_keeps_the_generated_frames():
    with pytest.raises(ValueError) as info:
        s2s.grad(matmul, backend="numpy")(X, W)
    assert any("s2s_generated_matmul_" in str(entry.path) for entry in info.traceback)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_errors_with_jax_semantics_stay_as_they_are(backend):
    with pytest.raises(
        TypeError, match="Gradient only defined for scalar-output functions"
    ) as info:
        s2s.grad(vector_output, backend=backend)(X)
    assert type(info.value) is TypeError
    note = f"s2s: raised at {__file__}:{line_of(vector_output, 'return x * 2.0')}:5: return x * 2.0"
    assert note in info.value.__notes__


def users_own(x):
    raise KeyError("from the user's own code")


GENERATED = '''"""A generated module that calls a function of the user's."""


def calls_user(x):
    # test_runtime_errors.py:{line}  raise KeyError("from the user's own code")
    return users_own(x)
'''


def test_errors_raised_in_the_users_own_code_stay_as_they_are():
    text = GENERATED.format(line=line_of(users_own, "raise KeyError"))
    module = loader.load_module(text, "calls_user", {"users_own": users_own})
    with pytest.raises(KeyError) as info:
        backends.Runner(module.calls_user, "numpy")(X)
    assert type(info.value) is KeyError


def test_index_add_of_new_axes_is_a_reshape_under_jax():
    """``x[None]``'s transpose is a reshape (no scatter): XLA's CPU compiler aborted the process on a
    gradient of ``np.sum(x[::-1][None])``, whose two scatters it combined."""
    import jax.numpy as jnp
    from s2s.runtime import index_add

    target = jnp.zeros((2, 3))
    for index in (None, (None, Ellipsis), (Ellipsis, None)):
        value = jnp.arange(6.0).reshape(target[index].shape)
        np.testing.assert_allclose(
            index_add(target, index, value), target.at[index].add(value)
        )
        np.testing.assert_allclose(
            index_add(target, index, 2.0), target.at[index].add(2.0)
        )


def sum_of_the_first_positive_count(x):
    n = int(np.sum(x > 0))
    s = 0.0
    for i in range(n):
        s = s + x[i] ** 2
    return s


def test_a_range_bounded_by_data_reading_items_is_a_located_refusal():
    """Under XLA the steps of ``for i in range(n)`` reading ``x[i]`` must be known when traced: a located
    refusal whose hint (a test of the index in a loop over the whole sequence) compiles.
    """
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(sum_of_the_first_positive_count)(X)
    assert_located(
        info.value, sum_of_the_first_positive_count, "for i in range(n):", "if i < n"
    )
    np.testing.assert_allclose(
        s2s.grad(sum_of_the_first_positive_count, backend="numpy")(X), [-2.0, 1.0, 0.0]
    )


ROWS = np.arange(18.0).reshape(6, 3) / 10
ROW_LABELS = np.array([0, 1, 0, 1, 1, 0])


def product_keeping_the_selected_rows(w):
    A = ROWS[ROW_LABELS == 0] * w
    B = ROWS[ROW_LABELS == 0] - w
    return np.sum(A @ B.T)


def product_keeping_the_selected_rows_as_hinted(w):
    kept = (ROW_LABELS == 0)[:, None]
    return np.sum(np.where(kept, ROWS * w, 0.0) @ np.where(kept, ROWS - w, 0.0).T)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_product_of_two_selections_keeping_the_selected_axis_is_a_located_refusal(
    backend,
):
    """``A[m] @ B[m].T`` keeps the selected rows (its shape depends on the mask): a located refusal, on
    both backends, whose hint (the whole arrays with the dropped rows zeroed) computes the same sum.
    """
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(product_keeping_the_selected_rows, backend=backend)(X)
    assert_located(
        info.value,
        product_keeping_the_selected_rows,
        "return np.sum(A @ B.T)",
        "np.where(m[:, None], A, 0.0) @ B",
    )
    w = np.array([0.1, -0.2, 0.3])
    want = s2s.grad(product_keeping_the_selected_rows_as_hinted, backend=backend)(w)
    fd = finite_differences(product_keeping_the_selected_rows, (w,), 0)
    np.testing.assert_allclose(want, fd, rtol=1e-5)


def history_of_an_array_updated_in_place(x):
    y = 1.0 + x[:2]
    ys = []
    for _ in range(3):
        ys.append(y)
        y += 0.1 * x[:2]
    return np.sum(ys[0] * ys[1])


def history_of_an_array_updated_as_hinted(x):
    y = 1.0 + x[:2]
    ys = []
    for _ in range(3):
        ys.append(y)
        y = y + 0.1 * x[:2]
    return np.sum(ys[0] * ys[1])


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_an_array_updated_in_place_while_a_list_holds_it_is_a_located_refusal(
    backend,
):
    """``ys.append(y); y += ...``: s2s computes ``y`` anew, as NumPy does for a scalar; for an array NumPy
    would change the recorded item too, so the update stops when the code runs, at its line, and the
    hinted ``y = y + ...`` gives the gradient of what that code computes."""
    x = np.array([0.3, -0.5, 0.2])
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(history_of_an_array_updated_in_place, backend=backend)(x)
    assert_located(
        info.value,
        history_of_an_array_updated_in_place,
        "y += 0.1 * x[:2]",
        "write `y = y + ...` for a new array",
    )
    got = s2s.grad(history_of_an_array_updated_as_hinted, backend=backend)(x)
    fd = finite_differences(history_of_an_array_updated_as_hinted, (x,), 0)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-8)
