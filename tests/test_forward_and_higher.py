"""Forward mode, Jacobians, Hessians and custom rules, against JAX and finite differences.

- ``s2s.jvp`` of every control-flow program (tests/programs/control.py) equals
  the gradient (itself checked against finite differences) dotted with the
  tangent, on both backends.
- ``jacfwd``, ``jacrev`` and ``hessian`` (forward over reverse) of programs
  with ``for``, ``if`` and ``while``, and with pytree inputs and outputs,
  against JAX's own on the jax.numpy twins; reverse over reverse through
  ``for`` and ``if`` (a gradient called inside a function).
- ``custom_jvp``/``custom_vjp``: the derivative is the user's rule, called by
  name in the generated source; misuse is a clear error.
- ``jvp`` argument errors follow JAX's types.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_checks import jvp_of, oracle
from programs import control as C
from programs import higher as H
from test_control_flow import ARGNUMS, CASES

import s2s
from s2s.errors import S2SError

jax.config.update("jax_enable_x64", True)

BACKENDS = ("numpy", "xla")


def _leaves(tree):
    return jax.tree_util.tree_leaves(tree)


def _tangent(arg, rng, differentiated):
    def leaf(a):
        if differentiated and np.asarray(a).dtype.kind == "f":
            return rng.normal(size=np.shape(a))
        if np.asarray(a).dtype.kind == "f":
            return np.zeros(np.shape(a))
        return np.zeros(np.shape(a), jax.dtypes.float0)

    return jax.tree_util.tree_map(leaf, arg)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_of_control_flow_is_the_gradient_along_the_tangent(name, backend):
    fn, argnums = getattr(C, name), ARGNUMS.get(name, (0,))
    rng = np.random.default_rng(0)
    for args in CASES[name]:
        tangents = tuple(_tangent(a, rng, i in argnums) for i, a in enumerate(args))
        out, out_dot = s2s.jvp(fn, args, tangents, backend=backend)
        grads = s2s.grad(fn, argnums, backend="numpy")(*args)
        want = sum(
            np.sum(g * t)
            for i, gi in zip(argnums, grads)
            for g, t in zip(_leaves(gi), _leaves(tangents[i]))
        )
        np.testing.assert_allclose(out, fn(*args), rtol=1e-10)
        np.testing.assert_allclose(out_dot, want, rtol=1e-8, atol=1e-10)


def _jnp_rnn(w, x):
    h = jnp.zeros(3)
    for t in range(x.shape[0]):
        h = jnp.tanh(w @ h + x[t])
    return jnp.sum(h**2)


def _jnp_branchy(x):
    return jnp.sum(jnp.where(jnp.sum(x) > 0, jnp.sin(x) * x, jnp.cos(x)))


def _jnp_newton(a):
    x = a
    for _ in range(8):
        x = 0.5 * (x + a / x)
    return jnp.sum(x**3)


def _jnp_vector_valued(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    return {"out": h * 2.0, "norm": jnp.sum(h**2)}


RNG = np.random.default_rng(3)
PROGRAMS = {
    "rnn": (
        H.rnn,
        _jnp_rnn,
        (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(4, 3))),
        (0, 1),
    ),
    "branchy_true": (H.branchy, _jnp_branchy, (np.array([0.3, 0.2]),), 0),
    "branchy_false": (H.branchy, _jnp_branchy, (np.array([-0.3, 0.2]),), 0),
    "newton": (H.newton, _jnp_newton, (np.array([2.0, 3.0]),), 0),
}


def _close(got, want, rtol=1e-8):
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(_leaves(got), _leaves(want)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_control_flow_matches_jax(name, backend):
    fn, twin, args, argnums = PROGRAMS[name]
    _close(
        s2s.hessian(fn, argnums, backend=backend)(*args),
        oracle(jax.hessian, twin, argnums)(*args),
    )


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_jacobians_of_pytrees_match_jax(transform, backend):
    params = {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    x = RNG.normal(size=(4, 3))
    got = getattr(s2s, transform)(H.vector_valued, (0, 1), backend=backend)(params, x)
    _close(got, getattr(jax, transform)(_jnp_vector_valued, (0, 1))(params, x))


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
def test_jacobians_with_aux(transform):
    x = np.array([0.3, -0.4, 0.5])
    got, aux = getattr(s2s, transform)(H.with_aux, has_aux=True)(x)
    want, want_aux = getattr(jax, transform)(
        lambda x: (jnp.sum(jnp.sin(x) * x), jnp.sin(x)), has_aux=True
    )(x)
    _close(got, want)
    _close(aux, want_aux)


def test_hessian_blocks_for_several_arguments():
    x, y = np.array([0.3, -0.4]), np.array([1.0, 0.5, 2.0])
    got = s2s.hessian(H.shapes, (0, 1))(x, y)
    _close(got, jax.hessian(lambda x, y: jnp.sum(jnp.outer(x, y) ** 2), (0, 1))(x, y))
    assert np.shape(got[0][1]) == (2, 3)


@pytest.mark.parametrize("outer", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("inner", ["jacfwd", "jacrev"])
def test_a_jacobian_of_a_jacobian_is_the_hessian(outer, inner):
    """``jacfwd(jacrev(f))`` (how JAX defines ``hessian``) and the other three compositions, of one
    argument or of several, as JAX computes them; of other arguments than the inner one's, an error.
    """
    x, y = np.array([0.3, -0.4]), np.array([1.0, 0.5, 2.0])
    s2s_jac, jax_jac = getattr(s2s, outer), getattr(jax, outer)
    s2s_inner, jax_inner = getattr(s2s, inner), getattr(jax, inner)
    twin = lambda x, y: jnp.sum(jnp.outer(x, y) ** 2)
    for argnums in (0, (0, 1)):
        got = s2s_jac(s2s_inner(H.shapes, argnums), argnums)(x, y)
        _close(got, jax_jac(jax_inner(twin, argnums), argnums)(x, y))
    with pytest.raises(S2SError, match="cannot transform"):
        s2s_jac(s2s_inner(H.shapes, 0), 1)(x, y)


def test_linearize_is_the_jvp_at_fixed_primals():
    w, x = PROGRAMS["rnn"][2]
    out, f_jvp = s2s.linearize(H.rnn, w, x)
    tw, tx = np.cos(w), np.sin(x)
    want_out, want_dot = oracle(jvp_of, _jnp_rnn)((w, x), (tw, tx))
    np.testing.assert_allclose(out, want_out, rtol=1e-10)
    np.testing.assert_allclose(f_jvp(tw, tx), want_dot, rtol=1e-8)


# reverse over reverse: a gradient called inside another function, differentiated again
d_rnn = s2s.grad(H.rnn)
d_branchy = s2s.grad(H.branchy)


def rnn_second(w, x, v):
    return np.sum(d_rnn(w, x) * v)


def branchy_second(x, v):
    return np.sum(d_branchy(x) * v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reverse_over_reverse_through_for_and_if(backend):
    w, x = PROGRAMS["rnn"][2]
    v = RNG.normal(size=(3, 3))
    want = jax.grad(lambda w: jnp.sum(oracle(jax.grad, _jnp_rnn)(w, x) * v))(w)
    np.testing.assert_allclose(
        s2s.grad(rnn_second, backend=backend)(w, x, v), want, rtol=1e-8
    )
    for x0 in (np.array([0.3, 0.2]), np.array([-0.3, 0.2])):
        u = np.array([0.7, -1.1])
        want = jax.grad(lambda x: jnp.sum(oracle(jax.grad, _jnp_branchy)(x) * u))(x0)
        np.testing.assert_allclose(
            s2s.grad(branchy_second, backend=backend)(x0, u), want, rtol=1e-8
        )


d_newton = s2s.grad(H.newton)


def newton_second(a, v):
    return np.sum(d_newton(a) * v)


def test_reverse_over_reverse_through_while_is_a_clear_error():
    with pytest.raises(S2SError, match="reverse of a `while` loop") as info:
        s2s.grad(newton_second)(np.array([2.0, 3.0]), np.ones(2))
    assert "s2s.hessian" in info.value.hint


# --- custom rules ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_jvp_rule_is_used_in_both_modes(backend):
    x = np.array([-1.0, 0.5, 40.0])
    sig = 1 / (1 + np.exp(-x))
    sp = np.log1p(np.exp(x))
    np.testing.assert_allclose(
        s2s.grad(H.uses_softplus, backend=backend)(x), 2 * sp * sig, rtol=1e-10
    )
    _, tangent = s2s.jvp(H.uses_softplus, (x,), (np.ones(3),), backend=backend)
    np.testing.assert_allclose(tangent, np.sum(2 * sp * sig), rtol=1e-10)
    # the rule, transposed by s2s
    assert "softplus_jvp_vjp(" in s2s.grad(H.uses_softplus).source
    assert "softplus_jvp((x,), (x_dot,))" in s2s.jvp_source(H.uses_softplus)


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_jvp_rules_by_argument_and_rules_calling_helpers(backend):
    """``defjvps`` (JAX's and s2s's, with a ``None``) and a ``defjvp`` rule that calls a helper of its own,
    in both modes, against JAX on the function's twin (its rules are its derivatives where |x| < 2).
    """
    x = np.array([-1.2, 0.5, 1.5])
    with jax.enable_x64(True):
        want = jax.grad(H.twin_uses_rules_by_argument)(x)
        _, want_tangent = jax.jvp(H.twin_uses_rules_by_argument, (x,), (np.cos(x),))
    np.testing.assert_allclose(
        s2s.grad(H.uses_rules_by_argument, backend=backend)(x), want, rtol=1e-10
    )
    _, tangent = s2s.jvp(H.uses_rules_by_argument, (x,), (np.cos(x),), backend=backend)
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-10)
    # the rule ``defjvps`` stands for, written out: each argument's tangent through its function
    source = s2s.grad(H.uses_rules_by_argument).source
    assert "sine_times_jvp_vjp(" in source and "cosine_times_vjp(" in source


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_vjp_rule_is_used(backend):
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(
        s2s.grad(H.uses_scaled, backend=backend)(x), 3.0 * np.cos(3.0 * x), rtol=1e-12
    )
    source = s2s.grad(H.uses_scaled).source
    assert "_scaled, scaled_residuals = scaled_fwd(x, 3.0)" in source
    assert "x_bar, _ = scaled_bwd(scaled_residuals, " in source


def test_custom_vjp_has_no_forward_mode():
    with pytest.raises(
        S2SError,
        match="forward mode \\(jvp\\) cannot go through `scaled`: it is a custom_vjp function",
    ):
        s2s.jvp(H.uses_scaled, (np.ones(2),), (np.ones(2),))


def test_custom_vjp_without_rule():
    with pytest.raises(
        S2SError, match="custom_vjp function `no_rule` has no rule"
    ) as info:
        s2s.grad(H.uses_no_rule)(np.ones(2))
    assert "no_rule.defvjp" in info.value.hint


def test_custom_vjp_bwd_returning_too_few_cotangents():
    with pytest.raises(
        S2SError,
        match="`bad_bwd_bwd` must return a tuple with one cotangent per differentiable argument \\(2\\), but returns 1",
    ):
        s2s.grad(H.uses_bad_bwd)(np.ones(2), np.ones(2))


def test_op_without_forward_rule_on_the_path():
    with pytest.raises(S2SError, match=r"no derivative rule for `fft\.fft`") as info:
        s2s.jvp(H.unknown_op_sum, (np.ones(3),), (np.ones(3),))
    assert info.value.origin is not None and info.value.origin.line > 0


# --- jvp's arguments, checked as JAX checks them ----------------------------------------------


def test_jvp_tangent_shape_mismatch_is_a_value_error():
    with pytest.raises(
        ValueError,
        match="primal 0 has shape \\(3,\\) but its tangent has shape \\(2,\\)",
    ):
        s2s.jvp(H.branchy, (np.ones(3),), (np.ones(2),))


def test_jvp_tangent_dtype_mismatch_is_a_type_error():
    with pytest.raises(
        TypeError, match="the tangent of a float64 primal must be float64, got float32"
    ):
        s2s.jvp(H.branchy, (np.ones(3),), (np.ones(3, np.float32),))


def test_jvp_needs_tuples_and_one_tangent_per_primal():
    with pytest.raises(TypeError, match="must be a tuple or list"):
        s2s.jvp(H.branchy, np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="1 primals and 2 tangents"):
        s2s.jvp(H.branchy, (np.ones(3),), (np.ones(3), np.ones(3)))


def test_jvp_tangent_structure_mismatch_is_a_type_error():
    params = {"w": np.ones((3, 2)), "b": np.ones(2)}
    with pytest.raises(TypeError, match="same structure"):
        s2s.jvp(
            H.vector_valued,
            (params, np.ones((4, 3))),
            ({"w": np.ones((3, 2))}, np.ones((4, 3))),
        )


def test_integer_primals_take_float0_tangents():
    x = np.array([0.3, 0.4, 0.5])
    out, tangent = s2s.jvp(
        C.traced_range, (x, 4), (np.ones(3), np.zeros((), jax.dtypes.float0))
    )
    assert np.isfinite(tangent)
    with pytest.raises(TypeError, match="its tangent must have dtype float0"):
        s2s.jvp(C.traced_range, (x, 4), (np.ones(3), 1.0))
