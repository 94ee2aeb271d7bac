"""``jax.lax`` control flow written by hand (``tests/programs/lax_users.py``) under every s2s transform.

The programs are valid JAX, so JAX is the oracle on the very same source: ``jax.grad``,
``jax.value_and_grad``, ``jax.jvp``, ``jax.vmap`` and ``jax.hessian`` of the function. Where
JAX cannot reverse-differentiate (``lax.while_loop``, ``lax.fori_loop`` over bounds known only at
run time) its forward mode is the oracle (``jax.jacfwd``), and s2s's reverse mode is what JAX
cannot give. Each check runs on the NumPy backend in float64 and on XLA in float32.
"""

from dataclasses import dataclass, field

import jax
import numpy as np
import pytest
from jax_checks import compiled

import s2s
from s2s.errors import S2SError
from tests.programs import lax_users as P

B = 3  # examples for vmap


@pytest.fixture(autouse=True)
def _precision(request):
    """float64 on NumPy, float32 on XLA, whatever another test module set globally (``jax_enable_x64``)."""
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    with jax.enable_x64(params.get("backend", "numpy") == "numpy"):
        yield


def n(r, *shape):
    return r.normal(size=shape)


@dataclass
class Case:
    fn: object
    args: object  # rng -> tuple of float64 arguments
    argnums: object = 0
    reverse: bool = True  # JAX can reverse-differentiate it
    in_axes: object = 0  # for vmap; None: not checked
    hessian: bool = False
    tol: dict = field(default_factory=dict)

    @property
    def id(self):
        return self.fn.__name__


def rnn_params(r):
    return {"W": 0.5 * n(r, 4, 4), "U": n(r, 4, 2), "b": n(r, 4), "V": n(r, 1, 4)}


def lstm_params(r):
    return {"Wx": 0.5 * n(r, 12, 2), "Wh": 0.5 * n(r, 12, 3)}


CASES = [
    Case(
        P.rnn_loss,
        lambda r: (rnn_params(r), n(r, 5, 2), n(r, 5, 1)),
        in_axes=(None, 0, 0),
    ),
    Case(
        P.two_sequences,
        lambda r: (rnn_params(r), n(r, 5, 2), n(r, 5, 1)),
        in_axes=(None, 0, 0),
    ),
    Case(P.cumulative_sum, lambda r: (n(r, 6),), hessian=True),
    Case(
        P.discounted_returns, lambda r: (n(r, 7), 0.9), in_axes=(0, None), hessian=True
    ),
    Case(
        P.iterated_map,
        lambda r: (0.5 * n(r, 3, 3), n(r, 3)),
        argnums=(0, 1),
        in_axes=(None, 0),
    ),
    Case(P.lstm_loss, lambda r: (lstm_params(r), n(r, 4, 2)), in_axes=(None, 0)),
    Case(
        P.deep_tanh,
        lambda r: (0.5 * n(r, 3, 4, 4), n(r, 3, 4), n(r, 4)),
        argnums=(0, 1, 2),
        in_axes=(None, None, 0),
    ),
    Case(
        P.regression_steps,
        lambda r: (n(r, 3), {"x": n(r, 5, 3), "y": n(r, 5)}),
        argnums=(0, 1),
        in_axes=(None, 0),
    ),
    Case(
        P.partial_rnn,
        lambda r: ((0.5 * n(r, 3, 3), n(r, 3, 2)), n(r, 4, 2)),
        in_axes=(None, 0),
    ),
    Case(P.module_level_body, lambda r: (n(r, 5),), hessian=True),
    Case(P.scan_grid, lambda r: (0.7, n(r, 3, 4)), argnums=(0, 1), in_axes=(None, 0)),
    Case(P.unrolled_product, lambda r: (n(r, 5),), hessian=True),
    Case(P.scan_with_length, lambda r: (n(r, 4, 2),)),
    Case(P.no_outputs, lambda r: (n(r, 3), n(r, 4, 3)), argnums=(0, 1)),
    Case(P.per_example_loss, lambda r: (n(r, 3, 2), n(r, 5, 2)), in_axes=(None, 0)),
    Case(P.map_an_op, lambda r: (n(r, 4, 3),), hessian=True),
    Case(
        P.map_pairs, lambda r: (n(r, 2), n(r, 4, 2)), argnums=(0, 1), in_axes=(0, None)
    ),
    Case(
        P.lotka_volterra,
        lambda r: (
            np.array([1.0, 0.4, 0.3, 0.8]) + 0.05 * n(r, 4),
            np.array([1.0, 0.8]) + 0.1 * n(r, 2),
        ),
        argnums=(0, 1),
        in_axes=(None, 0),
        hessian=True,
    ),
    Case(
        P.damped_oscillator,
        lambda r: (1.3, (n(r, 2), n(r, 2))),
        argnums=(0, 1),
        in_axes=(None, 0),
    ),
    Case(P.power_iteration, lambda r: (n(r, 3, 3), n(r, 3)), in_axes=(None, 0)),
    Case(
        P.data_dependent_steps,
        lambda r: (n(r, 6), 0.8),
        argnums=(0, 1),
        reverse=False,
        in_axes=(None, 0),
    ),
    Case(
        P.newton_sqrt,
        lambda r: (2.0 + r.uniform(),),
        reverse=False,
        in_axes=None,
        hessian=True,
    ),
    Case(
        P.descent_until_small,
        lambda r: (np.eye(3) + 0.1 * n(r, 3, 3), n(r, 3)),
        argnums=(0, 1),
        reverse=False,
        in_axes=(None, 0),
    ),
    Case(P.halving, lambda r: (4.0 * n(r, 3),), reverse=False),
    Case(P.relu_or_square, lambda r: (n(r, 3), n(r, 3)), argnums=(0, 1), hessian=True),
    Case(P.keyword_operand, lambda r: (0.6 * n(r, 3),)),
    Case(
        P.closure_branches,
        lambda r: (n(r, 3), n(r, 3)),
        argnums=(0, 1),
        in_axes=(0, None),
    ),
    Case(P.pick_a_value, lambda r: (n(r, 3), n(r, 3)), argnums=(0, 1), in_axes=(0, 0)),
    Case(P.piecewise, lambda r: (1.5 * n(r, 3),), hessian=True),
    Case(P.clamped_switch, lambda r: (n(r, 3),), hessian=True),
    Case(P.switch_over_a_module_list, lambda r: (n(r, 3),)),
    Case(P.switch_over_made_branches, lambda r: (n(r, 3),)),
    Case(P.conv_layer, lambda r: (0.5 * n(r, 2, 1, 3, 3), n(r, 2, 1, 5, 5))),
    Case(P.pooled_conv_layer, lambda r: (0.5 * n(r, 2, 1, 3, 3), n(r, 2, 1, 4, 4))),
    Case(P.listwise_ranking, lambda r: (n(r, 5),)),
    Case(P.scan_in_cond, lambda r: (n(r, 4), 1.0), in_axes=(0, None)),
    Case(P.switch_in_scan, lambda r: (n(r, 6),), hessian=True),
    Case(P.while_in_scan, lambda r: (n(r, 4),), reverse=False, in_axes=None),
    Case(P.old_style_cond, lambda r: (n(r, 3), n(r, 3)), argnums=(0, 1)),
]
IDS = [c.id for c in CASES]


def _case(fn):
    return next(c for c in CASES if c.fn is fn)


def _args(case, backend, seed=0):
    args = case.args(np.random.default_rng(seed))
    if backend == "xla":
        args = jax.tree.map(
            lambda a: np.asarray(a, np.float32) if isinstance(a, np.ndarray) else a,
            args,
        )
    return args


def _tol(backend):
    return (
        {"rtol": 1e-8, "atol": 1e-10}
        if backend == "numpy"
        else {"rtol": 2e-4, "atol": 2e-5}
    )


def _close(got, want, backend):
    assert jax.tree.structure(got) == jax.tree.structure(want), (got, want)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **_tol(backend))


def _oracle_grad(case, args):
    if case.reverse:
        return compiled(jax.grad(case.fn, case.argnums), args)
    return compiled(jax.jacfwd(case.fn, case.argnums), args)


BACKENDS = ["numpy", "xla"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_value_and_grad_match_jax(case, backend):
    args = _args(case, backend)
    with jax.enable_x64(backend == "numpy"):
        want_value, want_grad = compiled(case.fn, args), _oracle_grad(case, args)
    value, grad = s2s.value_and_grad(case.fn, case.argnums, backend=backend)(*args)
    _close(value, want_value, backend)
    _close(grad, want_grad, backend)
    _close(s2s.grad(case.fn, case.argnums, backend=backend)(*args), want_grad, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp_matches_jax(case, backend):
    args = _args(case, backend)
    tangents = jax.tree.map(
        lambda a: np.asarray(
            np.random.default_rng(1).normal(size=np.shape(a)), np.asarray(a).dtype
        ),
        args,
    )
    with jax.enable_x64(backend == "numpy"):
        want = compiled(lambda a, t: jax.jvp(case.fn, a, t), (args, tangents))
    got = s2s.jvp(case.fn, args, tangents, backend=backend)
    _close(got, want, backend)


VMAP_CASES = [c for c in CASES if c.in_axes is not None]


def _batched(case, backend):
    """The case's arguments with ``B`` examples along axis 0 of each mapped one."""
    args = list(_args(case, backend))
    axes = (
        case.in_axes if isinstance(case.in_axes, tuple) else (case.in_axes,) * len(args)
    )
    for k, axis in enumerate(axes):
        if axis is not None:
            examples = [_args(case, backend, seed)[k] for seed in range(B)]
            args[k] = jax.tree.map(lambda *xs: np.stack(xs), *examples)
    return tuple(args)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", VMAP_CASES, ids=[c.id for c in VMAP_CASES])
def test_vmap_matches_jax(case, backend):
    args = _batched(case, backend)
    with jax.enable_x64(backend == "numpy"):
        want = compiled(jax.vmap(case.fn, in_axes=case.in_axes), args)
    _close(
        s2s.vmap(case.fn, in_axes=case.in_axes, backend=backend)(*args), want, backend
    )


PER_EXAMPLE = [c for c in VMAP_CASES if c.reverse]


@pytest.mark.parametrize("case", PER_EXAMPLE, ids=[c.id for c in PER_EXAMPLE])
def test_vmap_of_grad_matches_jax(case):
    args = _batched(case, "numpy")
    with jax.enable_x64(True):
        want = compiled(
            jax.vmap(jax.grad(case.fn, case.argnums), in_axes=case.in_axes), args
        )
    got = s2s.vmap(
        s2s.grad(case.fn, case.argnums, backend="numpy"),
        in_axes=case.in_axes,
        backend="numpy",
    )(*args)
    _close(got, want, "numpy")


HESSIAN_CASES = [c for c in CASES if c.hessian]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", HESSIAN_CASES, ids=[c.id for c in HESSIAN_CASES])
def test_hessian_matches_jax(case, backend):
    args = _args(case, backend)
    with jax.enable_x64(backend == "numpy"):
        oracle = (
            jax.hessian
            if case.reverse
            else (lambda f, a: jax.jacfwd(jax.jacfwd(f, a), a))
        )
        want = compiled(oracle(case.fn, case.argnums), args)
    _close(s2s.hessian(case.fn, case.argnums, backend=backend)(*args), want, backend)


# --- what JAX cannot do: reverse mode through lax.while_loop ---------------------------------


def test_while_loop_reverse_mode_matches_finite_differences():
    """JAX's ``jax.grad`` refuses ``lax.while_loop``; s2s's gradient equals central differences."""
    A, b = np.eye(3) + 0.1 * n(np.random.default_rng(2), 3, 3), np.array(
        [1.0, -0.5, 0.3]
    )
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.grad(P.descent_until_small)(A, b)
    grad = s2s.grad(P.descent_until_small, backend="numpy")(A, b)
    eps, want = 1e-6, np.zeros_like(A)
    with jax.enable_x64(True):
        for idx in np.ndindex(A.shape):
            d = np.zeros_like(A)
            d[idx] = eps
            up, down = P.descent_until_small(A + d, b), P.descent_until_small(A - d, b)
            want[idx] = (up - down) / (2 * eps)
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-7)


def test_forward_mode_of_batched_loops_and_branches_matches_jax():
    """``jvp(vmap(f))`` of a ``while_loop`` carrying a tuple with a counter (the loop test's lines read on
    the carry of a pair), and ``vmap(hessian(f))`` of a ``lax.switch`` on a per-example index.
    """
    a = np.array([0.5, 2.0, 9.0])
    got = s2s.jvp(s2s.vmap(P.newton_sqrt), (a,), (np.ones(3),), backend="numpy")
    with jax.enable_x64(True):
        want = jax.jvp(jax.vmap(P.newton_sqrt), (a,), (np.ones(3),))
    np.testing.assert_allclose(got, want, rtol=1e-9)
    xs = np.array([[-1.5, 0.2], [0.3, 0.4], [1.5, 2.0]])
    got = s2s.vmap(s2s.hessian(P.piecewise), backend="numpy")(xs)
    with jax.enable_x64(True):
        want = compiled(jax.vmap(jax.hessian(P.piecewise)), (xs,))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_batched_forward_mode_of_a_loop_whose_carry_becomes_per_example():
    """``vmap(jvp(f))`` of a ``while_loop`` whose carry starts partly the same for every example (``1.0``)
    and is each example's own after a step: the tangent's items are batched as the value's.
    """
    thetas = np.array([0.3, 0.7, 1.1])
    got = s2s.vmap(P.fixed_point_tangent)(thetas)
    with jax.enable_x64(True):
        want = compiled(jax.vmap(P.fixed_point_tangent), (thetas,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-7)


# --- the generated code ---------------------------------------------------------------------


def test_generated_code_is_lowered_control_flow_citing_the_users_line():
    text = s2s.grad(P.rnn_loss).source
    assert "rt.scan(scan_body_fwd, h0, xs)" in text
    assert "# lax_users.py:" in text and "lax.scan(step, h0, xs)" in text
    assert not any("lax." in line or "jax" in line for line in _code_lines(text))


def test_loops_stay_rolled_under_jit():
    """One ``scan``/``while`` in the compiled program, not one copy of the body per step."""
    args = _args(_case(P.rnn_loss), "xla")
    jaxpr = str(jax.make_jaxpr(s2s.grad(P.rnn_loss))(*args))
    assert jaxpr.count("tanh") <= 2
    text = str(
        jax.make_jaxpr(s2s.grad(P.lotka_volterra))(
            *_args(_case(P.lotka_volterra), "xla")
        )
    )
    assert "scan" in text or "while" in text


@pytest.mark.parametrize("backend", BACKENDS)
def test_spellings_resolve_by_identity(backend):
    """``from jax import lax``, ``import jax.lax as jlax``, ``jax.lax.scan``, ``from jax.lax import scan``."""
    for fn in (
        P.cumulative_sum,
        P.damped_oscillator,
        P.module_level_body,
        P.scan_grid,
        P.lotka_volterra,
    ):
        lowered = s2s.transform(fn, backend=backend)
        assert "rt.scan(" in lowered.source
        assert not any("lax" in line for line in _code_lines(lowered.source))


def _code_lines(text):
    """The lines of a generated module that are code: no comments, no docstrings."""
    body = text.split('"""', 2)[-1]
    return [
        line
        for line in body.splitlines()
        if not line.strip().startswith(("#", '"""', "'"))
    ]


# --- errors -----------------------------------------------------------------------------------

ERRORS = [
    (P.library_function_body, (np.ones(3),), r"`operator\.concat`"),
    (
        # a function of the user's passed in: never handed to JAX in s2s's place (``rt.foreign`` refuses it
        # when the call runs, at the user's line)
        P.function_parameter_body,
        (P.accumulate, np.ones(3)),
        r"`tests\.programs\.lax_users\.accumulate`.* is your own code",
    ),
    (P.reverse_at_run_time, (np.ones(3), True), r"`reverse=` computed at run time"),
    (
        P.branches_computed,
        (np.ones(3), None),
        r"`branches` that are not a list of functions written in the call",
    ),
    (P.unpacked_operands, (np.ones(()), (1.0, 2.0)), r"`\*` argument unpacking"),
    (P.xs_none_no_length, (1.0,), r"`xs=None` without `length`"),
]


@pytest.mark.parametrize(
    "fn, args, message", ERRORS, ids=[e[0].__name__ for e in ERRORS]
)
def test_unsupported_uses_are_located_errors(fn, args, message):
    with pytest.raises(S2SError, match=message) as info:
        s2s.grad(fn)(*args)
    err = info.value
    assert err.origin is not None and err.origin.path.endswith("lax_users.py"), str(err)
    assert err.origin.text.strip() != ""
    import inspect

    lines, start = inspect.getsourcelines(fn)
    assert start <= err.origin.line < start + len(lines), str(err)
