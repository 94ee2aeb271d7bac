"""Control flow and in-place writes: lowering keeps the value, gradients match finite differences and JAX.

Each program in ``tests/programs/control.py`` runs as written (NumPy), through
``@s2s.transform`` (both backends) and through ``s2s.grad`` (both backends,
against central finite differences in float64). Loops stay rolled: a 1000-step
loop is one ``scan`` in the gradient's jaxpr.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_checks import oracle
from programs import control as P

import s2s

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(7)


def _normal(*shape, scale=1.0):
    return RNG.normal(size=shape) * scale


LAYERS = [
    (_normal(3, 4, scale=0.5), _normal(4)),
    (_normal(4, 2, scale=0.5), _normal(2)),
]

# name -> argument tuples (each tried); the first ``argnums`` arguments are differentiated
CASES = {
    "branch_on_data": [(np.abs(_normal(4)),), (-np.abs(_normal(4)),)],
    "elif_chain": [(np.full(3, 0.8),), (np.full(3, 0.1),), (np.full(3, -0.8),)],
    "conditional_expression": [(np.abs(_normal(3)),), (-np.abs(_normal(3)),)],
    "boolean_predicate": [
        (np.array([0.5, 1.0, 0.2]),),
        (np.array([0.5, 4.0, 0.2]),),
        (-np.ones(3),),
    ],
    "early_return": [(np.array([0.1, 3.0]),), (np.array([0.1, 0.2]),)],
    "rnn": [(_normal(3, 3, scale=0.5), _normal(3), _normal(5, 3))],
    "indexed_loop": [(_normal(4), np.array(0.7))],
    "enumerate_and_zip": [(_normal(4), _normal(4))],
    "loop_with_break": [(np.full(3, 0.2),), (np.full(3, -0.4),)],
    "loop_with_continue": [(_normal(6),)],
    "return_in_loop": [(np.full(2, 0.6),), (np.full(2, -0.3),)],
    "nested_loops": [(_normal(3),)],
    "loop_over_layers": [(LAYERS, _normal(5, 3))],
    "cond_in_loop": [(np.full(2, 0.4),), (np.full(2, -0.2),)],
    "element_writes": [(np.array([0.3, 0.5, -0.2, 0.4, 0.6, 0.7]),)],
    "write_in_loop": [(_normal(4),)],
    "collected_outputs": [(_normal(3, 3, scale=0.5), _normal(4, 3))],
    "while_loop": [(np.array([0.5, 0.25]),), (np.array([6.0, 5.0]),)],
    "while_with_weights": [(np.array([0.3, 0.4]), np.array(0.9))],
    "newton_sqrt": [(np.array([2.0, 3.0, 0.5]),)],
    "while_with_break": [(np.array([0.2, 0.1]),), (np.array([-0.3, 0.1]),)],
    "while_in_for": [(np.array([0.3, 0.4]), np.array(1.3))],
    "for_in_while": [(np.array([0.2, -0.1]),)],
    "traced_range": [(np.array([0.3, -0.2]), 4)],
    "static_recursion": [(_normal(3),)],
    "while_in_branch": [
        (np.array([0.3, 0.4]), np.array(1.3)),
        (np.array([-0.3, 0.1]), np.array(1.3)),
    ],
    "while_in_helper": [(np.array([0.3, 0.4]), np.array(1.1))],
    "cond_in_while": [(np.array([0.3, 0.4]),)],
    "loop_without_residuals": [(_normal(3),)],
    "masked_augmented_write": [(np.array([0.1, 0.9, 0.5, -0.4]),)],
    "counter_in_arithmetic": [
        (np.array([0.3, 0.4, 0.5]), np.array([[0.2, 0.1, 0.3], [0.5, -0.2, 0.1]]))
    ],
    "empty_loop": [(_normal(3),)],
    "return_in_empty_loop": [(np.array([0.3, -1.2, 0.8]),)],
    "two_returns_in_loop": [
        (np.array([0.3, 0.4, 0.5]),),
        (np.array([-0.3, -0.4, -0.5]),),
        (np.array([0.03, 0.04, -0.05]),),
    ],
    "enumerate_in_branch": [(np.array([0.3, 0.4, 0.5]), _normal(2, 3))],
    "enumerate_with_break": [(np.array([0.3, 0.4, 0.5]), _normal(2, 3))],
    "write_after_conditional_expression": [
        (np.array([0.3, 0.4, 0.5]),),
        (np.array([-0.3, 0.4, -0.5]),),
    ],
    "loop_over_dict": [({"first": LAYERS[0], "second": LAYERS[1]}, _normal(5, 3))],
}
ARGNUMS = {
    "rnn": (0, 1, 2),
    "indexed_loop": (0, 1),
    "enumerate_and_zip": (0, 1),
    "loop_over_layers": (0, 1),
    "collected_outputs": (0, 1),
    "while_with_weights": (0, 1),
    "while_in_for": (0, 1),
    "loop_over_dict": (0, 1),
    "while_in_branch": (0, 1),
    "while_in_helper": (0, 1),
    "enumerate_in_branch": (0, 1),
    "enumerate_with_break": (0, 1),
    "counter_in_arithmetic": (0, 1),
}
BACKENDS = ("numpy", "xla")


def _cases():
    return [(name, i) for name, argsets in CASES.items() for i in range(len(argsets))]


def _leaves(tree):
    return jax.tree_util.tree_leaves(tree)


def _close(a, b, tol=1e-6):
    for x, y in zip(_leaves(a), _leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, i", _cases())
def test_lowered_function_computes_the_original(name, i, backend):
    fn = getattr(P, name)
    args = CASES[name][i]
    _close(s2s.transform(fn, backend=backend)(*args), fn(*args))


def _perturbed(args, direction, eps, argnums):
    out = list(args)
    for k, d in zip(argnums, direction):
        out[k] = jax.tree_util.tree_map(lambda a, v: a + eps * v, args[k], d)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, i", _cases())
def test_gradient_matches_finite_differences(name, i, backend):
    fn = getattr(P, name)
    args = CASES[name][i]
    argnums = ARGNUMS.get(name, (0,))
    grads = s2s.grad(fn, argnums=argnums, backend=backend)(*args)
    direction = [
        jax.tree_util.tree_map(lambda a: RNG.normal(size=np.shape(a)), args[k])
        for k in argnums
    ]
    eps = 1e-6
    numeric = (
        fn(*_perturbed(args, direction, eps, argnums))
        - fn(*_perturbed(args, direction, -eps, argnums))
    ) / (2 * eps)
    analytic = sum(
        float(np.sum(np.asarray(g) * d))
        for gk, dk in zip(grads, direction)
        for g, d in zip(_leaves(gk), _leaves(dk))
    )
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_gradients_match_jax_lax_versions():
    W, h, xs = CASES["rnn"][0]

    def rnn_lax(W, h, xs):
        h, _ = jax.lax.scan(lambda h, x: (jnp.tanh(h @ W + x), None), h, xs)
        return jnp.sum(h)

    _close(
        s2s.grad(P.rnn, argnums=(0, 1, 2))(W, h, xs),
        oracle(jax.grad, rnn_lax, argnums=(0, 1, 2))(W, h, xs),
        1e-10,
    )

    def branch_lax(x):
        y = jax.lax.cond(x.sum() > 0, lambda: jnp.sin(x) * 2, lambda: jnp.cos(x))
        return jnp.sum(y * x)

    for (x,) in CASES["branch_on_data"]:
        _close(s2s.grad(P.branch_on_data)(x), oracle(jax.grad, branch_lax)(x), 1e-12)
        _close(
            jax.jit(s2s.grad(P.branch_on_data))(x),
            oracle(jax.grad, branch_lax)(x),
            1e-12,
        )


def test_static_conditions_stay_python():
    x = _normal(3)
    for squared in (True, False):
        _close(s2s.transform(P.static_flag)(x, squared), P.static_flag(x, squared))
        _close(
            s2s.grad(P.static_flag)(x, squared),
            jax.grad(
                lambda v: (
                    P.static_flag(v, squared)
                    if False
                    else (jnp.sum(v * v) if squared else jnp.sum(v))
                )
            )(x),
        )


def test_while_loop_runs_compiled():
    x = np.array([0.5, 0.25])
    _close(s2s.transform(P.while_loop)(x), P.while_loop(x))
    jaxpr = str(jax.make_jaxpr(s2s.transform(P.while_loop))(x))
    assert "while[" in jaxpr


def test_while_loop_gradients_are_exact_and_compiled():
    a = np.array([2.0, 3.0, 0.5])
    grad = jax.jit(s2s.grad(P.newton_sqrt))
    _close(grad(a), 0.5 / np.sqrt(a), 1e-10)  # d/da of sum(sqrt(a))
    jaxpr = str(jax.make_jaxpr(s2s.grad(P.newton_sqrt))(a))
    assert jaxpr.count("while[") >= 2, "a forward and a backward while loop"


def test_loop_over_a_traced_range_is_differentiable():
    def traced_range_lax(x, n):
        return jnp.sum(
            jax.lax.fori_loop(0, n, lambda i, x: jnp.sin(x) * 1.1 + 0.1 * i, x)
        )

    grad = jax.jit(s2s.grad(P.traced_range))  # one compilation for every trip count
    x = np.array([0.3, -0.2, 0.9])
    for n in (0, 1, 5, 40):
        _close(grad(x, n), oracle(jax.grad, traced_range_lax)(x, n), 1e-12)


def test_long_loop_gradient_stays_rolled():
    W, h = CASES["rnn"][0][:2]
    xs = _normal(1000, 3)
    jaxpr = jax.make_jaxpr(s2s.grad(P.rnn, argnums=0))(W, h, xs)
    text = str(jaxpr)
    assert text.count("scan[") == 2, "one forward and one backward scan"
    assert len(jaxpr.jaxpr.eqns) < 40


def test_lowered_source_reads_as_loops():
    text = s2s.transform(P.rnn).source
    assert "def for_body(h, x):" in text and "rt.scan(for_body, h, _iterate)" in text
    grad_text = s2s.grad(P.rnn).source
    assert (
        "def for_body_fwd(" in grad_text
        and "def for_body_bwd(" in grad_text
        and "reverse=True" in grad_text
    )
    while_text = s2s.grad(P.while_with_weights).source
    assert "rt.while_loop_with_tape(while_cond, while_body_fwd, (x, k))" in while_text
    assert (
        "rt.while_loop_reverse(" in while_text and "def while_body_bwd(" in while_text
    )
