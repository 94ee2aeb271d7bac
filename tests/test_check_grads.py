"""``check_grads``: passes on correct derivatives (both modes, orders 1 and 2, both backends, containers,
control flow), and fails with a report naming mode, order, argument and numbers on wrong ones (a wrong
custom rule, a rule right to first order only, a discontinuity)."""

import re

import jax
import numpy as np
import pytest

import s2s
from s2s.checking import check_grads

jax.config.update("jax_enable_x64", True)

X = np.array([0.3, -0.5, 0.8])
Y = np.array([1.2, -0.7, 0.4])


def smooth(x, y):
    return np.sin(x) * y + np.tanh(x * y) / (1.0 + y**2)


def control(x, n):
    s = 0.0
    for i in range(n):
        if np.sum(x) > 0:
            s = s + np.sin(x[i]) * x[i]
        else:
            s = s - np.exp(x[i])
    return s


def layer(params, x):
    w = params["w"]
    b = params["b"]
    h = np.tanh(x @ w + b)
    return {"h": h, "loss": np.sum(h**2) * params["scale"]}


@s2s.custom_jvp
def wrong_mul(x, y):
    return x * y


@wrong_mul.defjvp
def wrong_mul_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return x * y, x_dot * y + y_dot * x * 1.5  # wrong in y only


def uses_wrong_mul(x, y):
    return np.sum(np.sin(wrong_mul(x, y)))


@s2s.custom_vjp
def wrong_square(x):
    return x**2


def wrong_square_fwd(x):
    return x**2, x


def wrong_square_bwd(x, g):
    return (g * x,)  # should be 2 * g * x


wrong_square.defvjp(wrong_square_fwd, wrong_square_bwd)


def uses_wrong_square(params, x):
    return np.sum(wrong_square(params["b"]) * x) + np.sum(params["w"] * x)


@s2s.custom_jvp
def first_order_sin(x):
    return np.sin(x)


@first_order_sin.defjvp
def first_order_sin_jvp(primals, tangents):
    (x,) = primals
    (x_dot,) = tangents
    # right slope, no second derivative
    return (
        np.sin(x),
        np.cos(s2s.stop_gradient(x)) * x_dot,
    )


def uses_first_order_sin(x):
    return np.sum(first_order_sin(x))


def step(x):
    return np.where(x > 0, x, x + 1.0)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("order", [1, 2])
def test_smooth_function_passes(order, backend):
    assert check_grads(smooth, (X, Y), order, backend=backend) is None


@pytest.mark.parametrize("order", [1, 2])
def test_containers_pass(order):
    params = {
        "w": np.linspace(-0.5, 0.5, 6).reshape(3, 2),
        "b": np.array([0.1, -0.2]),
        "scale": 0.7,
    }
    check_grads(layer, (params, X), order, backend="numpy")


def test_containers_pass_under_xla():
    params = {
        "w": np.linspace(-0.5, 0.5, 6).reshape(3, 2),
        "b": np.array([0.1, -0.2]),
        "scale": 0.7,
    }
    check_grads(layer, [params, X], 1)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_control_flow_passes_with_integer_argument_held_fixed(backend):
    check_grads(control, (X, 3), 1, backend=backend)
    # the else branch; under XLA once is enough (each n compiles anew)
    if backend == "numpy":
        check_grads(control, (-X, 2), 1, backend=backend)


def test_control_flow_second_order_forward():  # s2s.jvp and s2s.vjp of the generated control_jvp
    check_grads(control, (X, 3), 2, modes="fwd", backend="numpy")


def test_control_flow_second_order_reverse():
    check_grads(control, (X, 3), 2, modes="rev", backend="numpy")


def two_outputs(x, y):
    a = np.sin(x) * y
    b = np.tanh(y)
    return a, b


def test_tuple_output():
    check_grads(two_outputs, (X, Y), 1, backend="numpy")


def sum_of_sin_squares(x):
    return np.sum(np.sin(x) ** 2)


def test_checks_an_s2s_transformed_function():
    # the Hessian, through the gradient
    check_grads(s2s.grad(sum_of_sin_squares), (X,), 2, backend="numpy")


@pytest.mark.parametrize("modes", [("fwd",), ("rev",), "rev"])
def test_single_mode(modes):
    check_grads(smooth, (X, Y), 2, modes=modes, backend="numpy")


def test_float32_and_python_scalar_arguments():
    check_grads(
        smooth, (X.astype(np.float32), Y.astype(np.float32)), 1, backend="numpy"
    )
    check_grads(smooth, (0.3, 1.2), 2, backend="numpy")


def numbers_in(message):
    return [
        float(v) for v in re.findall(r"(?:expected|got) \([^\n]*\): (\S+)", message)
    ]


def test_wrong_custom_jvp_rule_is_reported_with_mode_argument_and_numbers():
    with pytest.raises(AssertionError) as info:
        check_grads(uses_wrong_mul, (X, Y), 1, modes=("fwd",), backend="numpy")
    message = str(info.value)
    assert "forward mode (s2s.jvp of `uses_wrong_mul`), order 1" in message
    # x's derivative is right: the report names y
    assert "argument 1, args[1]" in message
    expected, got = numbers_in(message)
    # the rule scales y's tangent by 1.5
    assert np.isclose(got, 1.5 * expected, rtol=1e-6)
    assert re.search(
        r"abs error \S+ \(atol 1e-05\), rel error 0.5 \(rtol 1e-05\)", message
    )
    assert "hint:" in message


def test_wrong_custom_vjp_rule_names_the_container_path():
    params = {"w": np.array([0.5, -0.1, 0.2]), "b": np.array([0.3, 0.6, -0.9])}
    with pytest.raises(AssertionError) as info:
        check_grads(uses_wrong_square, (params, X), 1, modes=("rev",))
    message = str(info.value)
    assert "reverse mode (s2s.vjp of `uses_wrong_square`), order 1" in message
    assert "argument 0, args[0]['b']" in message  # w's cotangent is right
    expected, got = numbers_in(message)
    assert np.isclose(expected, 2 * got, rtol=1e-6)  # the rule forgets the factor 2


def test_rule_right_to_first_order_only_fails_at_order_two():
    check_grads(uses_first_order_sin, (X,), 1, backend="numpy")
    with pytest.raises(AssertionError, match=r"mismatch in .*order 2"):
        check_grads(uses_first_order_sin, (X,), 2, backend="numpy")


def test_tolerances_as_numbers_or_per_dtype():
    check_grads(uses_wrong_mul, (X, Y), 1, atol=1.0, rtol=1.0, backend="numpy")
    check_grads(
        uses_wrong_mul,
        (X, Y),
        1,
        atol={np.float64: 1.0},
        rtol={np.float64: 1.0},
        backend="numpy",
    )
    with pytest.raises(AssertionError):
        check_grads(
            uses_wrong_mul,
            (X, Y),
            1,
            atol={np.float32: 1.0},
            rtol={np.float32: 1.0},
            backend="numpy",
        )


def test_an_error_while_transforming_names_the_check():
    params = {"w": X, "b": Y}
    with pytest.raises(
        s2s.S2SError, match="custom_vjp"
    ) as info:  # forward mode of a custom_vjp function, as JAX
        check_grads(uses_wrong_square, (params, X), 1, modes="fwd", backend="numpy")
    assert (
        "check_grads: raised while checking the derivatives of `uses_wrong_square` at order 1"
        in info.value.__notes__
    )


def test_discontinuity_within_eps_fails():
    with pytest.raises(AssertionError, match="not smooth"):
        check_grads(step, (np.array([0.3, 1e-5]),), 1, eps=1e-3, backend="numpy")


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(order=0), "order must be a positive int"),
        (dict(order=1.5), "order must be a positive int"),
        (dict(modes=("fwd", "lin")), "modes must be"),
        (dict(modes=()), "modes must be"),
    ],
)
def test_invalid_order_and_modes(kwargs, error):
    with pytest.raises(ValueError, match=error):
        check_grads(smooth, (X, Y), **{"order": 1, **kwargs})


def test_args_must_be_a_sequence():
    with pytest.raises(TypeError, match="tuple or list"):
        check_grads(smooth, X, 1)
