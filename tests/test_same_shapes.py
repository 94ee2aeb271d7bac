"""``transforms.same_shapes``: a broadcast goes only where shapes are proved equal, never for a Python list.

The end-to-end tests run every generated module against JAX and finite
differences; these check the pass's guarantees on small functions built by
hand, then its effect on a generated gradient.
"""

import libcst as cst
import numpy as np

import s2s
from s2s import ir
from s2s.transforms.same_shapes import without_same_shape_broadcasts


def _code(*statements, params=("a", "b")):
    body = []
    for line in statements:
        target, value = line.split(" = ", 1)
        body.append(ir.Assign(cst.Name(target), cst.parse_expression(value)))
    fn = ir.Function("f", tuple(ir.Param(p) for p in params), tuple(body))
    return ir.to_source(without_same_shape_broadcasts(fn), comments=False)


def test_elementwise_results_of_one_operand_keep_its_shape():
    code = _code(
        "m = a * a",
        "s = a + m",
        "t = xp.tanh(s) - 1.0",
        "g = rt.unbroadcast(t, m)",
        "h = rt.broadcast_like(-t, a)",
    )
    assert "g = t" in code and "h = -t" in code


def test_an_operand_that_may_broadcast_keeps_its_sum():
    code = _code("m = a * b", "g = rt.unbroadcast(m, a)", "h = rt.unbroadcast(a, m)")
    assert "rt.unbroadcast(m, a)" in code and "rt.unbroadcast(a, m)" in code


def test_python_sequences_joined_or_repeated_are_never_taken_for_arrays():
    code = _code(
        "j = a + a",  # two lists joined
        "g = rt.unbroadcast(j, a)",
        "r = a * 3",  # a list repeated
        "h = rt.unbroadcast(r, a)",
        "k = rt.unbroadcast(a, j)",
    )
    assert code.count("rt.unbroadcast(") == 3


def test_a_number_or_an_array_is_proved_by_arithmetic_only_they_do():
    # ``a - 1.0`` raises for a list: after it ``a`` is a number or an array, and ``a + a`` adds
    code = _code("d = a - 1.0", "j = a + a", "g = rt.unbroadcast(j, d)")
    assert "g = j" in code


def test_the_seed_of_a_gradient_proves_its_terms_zero_dimensional():
    code = _code(
        "m = b * xp.sum(a)",
        "loss = xp.mean(a) + m",
        "loss_bar = rt.grad_seed(loss)",
        "g = rt.unbroadcast(loss_bar, m)",
        "h = rt.unbroadcast(loss_bar * b, xp.sum(a))",
    )
    assert "g = loss_bar" in code and "h = loss_bar * b" in code


def test_without_the_seed_a_product_with_a_parameter_may_broadcast():
    code = _code("m = b * xp.sum(a)", "g = rt.unbroadcast(xp.sum(a), m)")
    assert "rt.unbroadcast(" in code


def test_names_rebound_in_a_loop_are_not_known_after_it():
    loop = ir.For(
        cst.Name("i"),
        cst.parse_expression("range(3)"),
        (ir.Assign(cst.Name("y"), cst.parse_expression("y @ b")),),
    )
    body = (
        ir.Assign(cst.Name("y"), cst.parse_expression("a * a")),
        loop,
        ir.Assign(cst.Name("g"), cst.parse_expression("rt.unbroadcast(a * 2.0, y)")),
    )
    fn = ir.Function("f", (ir.Param("a"), ir.Param("b")), body)
    assert "rt.unbroadcast(a * 2.0, y)" in ir.to_source(
        without_same_shape_broadcasts(fn), comments=False
    )


def test_a_call_standing_in_two_places_goes_only_if_it_may_in_both():
    shared = cst.parse_expression("rt.unbroadcast(t, a)")
    body = (
        ir.Assign(cst.Name("t"), cst.parse_expression("a * 2.0")),
        ir.Assign(cst.Name("g"), shared),
        ir.Assign(cst.Name("t"), cst.parse_expression("a * b")),
        ir.Assign(cst.Name("h"), shared),
    )
    fn = ir.Function("f", (ir.Param("a"), ir.Param("b")), body)
    assert (
        ir.to_source(without_same_shape_broadcasts(fn), comments=False).count(
            "rt.unbroadcast(t, a)"
        )
        == 2
    )


def polynomial(x):
    return np.sum(x + x * x + x * x * x)


def scaled(x, b):
    return np.sum(np.tanh(x) * b) + 0.5 * np.mean(x * x)


def test_generated_gradients_sum_only_where_an_operand_may_broadcast():
    x = np.linspace(-1.0, 1.0, 5)
    grad = s2s.grad(polynomial, backend="numpy")
    assert "rt.unbroadcast(" not in grad.source
    np.testing.assert_allclose(grad(x), 1 + 2 * x + 3 * x**2)
    b = np.array([0.5, -1.0, 2.0])
    xs = np.arange(6.0).reshape(2, 3) / 6
    dx, db = s2s.grad(scaled, argnums=(0, 1), backend="numpy")(xs, b)
    np.testing.assert_allclose(dx, (1 - np.tanh(xs) ** 2) * b + xs / xs.size)
    np.testing.assert_allclose(db, np.sum(np.tanh(xs), axis=0))
