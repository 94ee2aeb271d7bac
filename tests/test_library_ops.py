"""``jax.nn``, ``jax.lax``, ``jax.scipy`` and ``scipy`` functions in programs written as users write them
(``tests/programs/library_models.py``): gradients, forward mode, batching and Hessians against JAX on both
backends; gradients at the kinks and at ±1000 against ``jax.grad``; resolution by identity; located errors.

(The op table, ``tests/op_table_library.py``, checks each function alone in every mode.)
"""

import importlib.util
import itertools
import re
import types

import jax
import jax.numpy as jnp
import jax.scipy.special
import jax.scipy.stats
import numpy as np
import pytest
from jax_checks import jvp_of, oracle

import s2s
from s2s.rules import RUNTIME_OPS
from s2s.rules.vocabulary import ARRAY_FUNCTIONS
from tests.programs import library_models as M

jax.config.update("jax_enable_x64", True)

BACKENDS = ("xla", "numpy")
RNG = np.random.default_rng(0)


def close(got, want, rtol=1e-10, atol=1e-12):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def scipy_twin(fn):
    """``fn`` with SciPy's functions replaced by ``jax.scipy``'s and NumPy by ``jax.numpy``: the JAX oracle."""
    replaced = {
        "np": jnp,
        "expit": jax.scipy.special.expit,
        "xlogy": jax.scipy.special.xlogy,
        "norm": jax.scipy.stats.norm,
    }
    return types.FunctionType(fn.__code__, {**fn.__globals__, **replaced})


def mlp_params(sizes):
    return [
        (RNG.normal(size=(m, n)) / np.sqrt(m), RNG.normal(size=n) * 0.1)
        for m, n in itertools.pairwise(sizes)
    ]


# --- programs in JAX documentation style -------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_mlp_with_relu_and_log_softmax(backend):
    params = mlp_params([4, 6, 5, 3])
    images = RNG.normal(size=(7, 4))
    targets = np.eye(3)[RNG.integers(0, 3, 7)]
    close(
        s2s.grad(M.mlp_loss, backend=backend)(params, images, targets),
        oracle(jax.grad, M.mlp_loss)(params, images, targets),
    )
    value, tangent = s2s.jvp(
        M.mlp_loss,
        (params, images, targets),
        (params, images, targets * 0),
        backend=backend,
    )
    close(
        (value, tangent),
        oracle(jvp_of, M.mlp_loss)(
            (params, images, targets), (params, images, targets * 0)
        ),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_cross_entropy_with_one_hot_labels(backend):
    params = mlp_params([4, 5, 3])
    images = RNG.normal(size=(6, 4))
    labels = RNG.integers(0, 3, 6)
    close(
        s2s.grad(M.xent_loss, backend=backend)(params, images, labels),
        oracle(jax.grad, M.xent_loss)(params, images, labels),
    )
    # per-example gradients: vmap of grad, against JAX's
    per_example = s2s.vmap(s2s.grad(M.xent_loss), in_axes=(None, 0, 0), backend=backend)
    close(
        per_example(params, images, labels),
        oracle(jax.vmap, oracle(jax.grad, M.xent_loss), in_axes=(None, 0, 0))(
            params, images, labels
        ),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_gaussian_negative_log_likelihood(backend):
    x = RNG.normal(size=20) * 2 + 1
    args = (0.3, -0.2, x)
    close(
        s2s.grad(M.gaussian_nll, (0, 1), backend=backend)(*args),
        oracle(jax.grad, M.gaussian_nll, (0, 1))(*args),
    )
    close(
        s2s.hessian(M.gaussian_nll, (0, 1), backend=backend)(*args),
        oracle(jax.hessian, M.gaussian_nll, (0, 1))(*args),
    )
    batched = s2s.vmap(M.gaussian_nll, in_axes=(0, 0, None), backend=backend)
    mus, log_sigmas = RNG.normal(size=4), RNG.normal(size=4) * 0.3
    close(
        batched(mus, log_sigmas, x),
        oracle(jax.vmap, M.gaussian_nll, (0, 0, None))(mus, log_sigmas, x),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_heteroscedastic_regression(backend):
    params = (RNG.normal(size=3), RNG.normal(size=3) * 0.3)
    x, y = RNG.normal(size=(10, 3)), RNG.normal(size=10)
    close(
        s2s.grad(M.heteroscedastic_nll, backend=backend)(params, x, y),
        oracle(jax.grad, M.heteroscedastic_nll)(params, x, y),
    )
    tangents = (RNG.normal(size=3), RNG.normal(size=3))
    close(
        s2s.jvp(
            M.heteroscedastic_nll,
            (params, x, y),
            (tangents, x * 0, y * 0),
            backend=backend,
        ),
        oracle(jvp_of, M.heteroscedastic_nll)((params, x, y), (tangents, x * 0, y * 0)),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_bayesian_logistic_regression_with_scipy(backend):
    X = RNG.normal(size=(12, 3))
    y = (RNG.uniform(size=12) < 0.5).astype(float)
    w = RNG.normal(size=3)
    twin = scipy_twin(M.log_posterior)
    # the program runs on NumPy with SciPy as written
    np.testing.assert_allclose(
        M.log_posterior(w, X, y, 2.0), twin(w, X, y, 2.0), rtol=1e-12
    )
    close(
        s2s.grad(M.log_posterior, backend=backend)(w, X, y, 2.0),
        oracle(jax.grad, twin)(w, X, y, 2.0),
    )
    close(
        s2s.hessian(M.log_posterior, backend=backend)(w, X, y, 2.0),
        oracle(jax.hessian, twin)(w, X, y, 2.0),
    )
    v = RNG.normal(size=3)
    close(
        s2s.jvp(
            M.log_posterior, (w, X, y, 2.0), (v, X * 0, y * 0, 0.0), backend=backend
        ),
        oracle(jvp_of, twin)((w, X, y, 2.0), (v, X * 0, y * 0, 0.0)),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_softplus_and_gelu_network(backend):
    params = (RNG.normal(size=(3, 4)), RNG.normal(size=(4, 4)), RNG.normal(size=(4, 2)))
    x = RNG.normal(size=(5, 3))
    close(
        s2s.grad(M.smooth_net, backend=backend)(params, x),
        oracle(jax.grad, M.smooth_net)(params, x),
    )
    close(
        s2s.grad(M.smooth_net, argnums=1, backend=backend)(params, x),
        oracle(jax.grad, M.smooth_net, argnums=1)(params, x),
    )
    close(
        s2s.vmap(M.smooth_net, in_axes=(None, 0), backend=backend)(params, x[:, None]),
        oracle(jax.vmap, M.smooth_net, in_axes=(None, 0))(params, x[:, None]),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_logsumexp_with_weights_and_signs(backend):
    a = RNG.normal(size=(3, 4))
    b = RNG.normal(size=(3, 4))
    close(
        s2s.grad(M.signed_lse, (0, 1), backend=backend)(a, b),
        oracle(jax.grad, M.signed_lse, (0, 1))(a, b),
    )
    close(
        s2s.hessian(M.signed_lse, backend=backend)(a, b),
        oracle(jax.hessian, M.signed_lse)(a, b),
        rtol=1e-9,
    )
    close(
        s2s.vmap(M.signed_lse, backend=backend)(a[:, None], b[:, None]),
        oracle(jax.vmap, M.signed_lse)(a[:, None], b[:, None]),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_attention_with_softmax_standardize_and_glu(backend):
    q, k, v = (RNG.normal(size=(4, 6)) for _ in range(3))
    close(
        s2s.grad(M.attention, (0, 1, 2), backend=backend)(q, k, v),
        oracle(jax.grad, M.attention, (0, 1, 2))(q, k, v),
        rtol=1e-9,
    )
    close(
        s2s.hessian(M.attention, backend=backend)(q, k, v),
        oracle(jax.hessian, M.attention)(q, k, v),
        rtol=1e-8,
        atol=1e-10,
    )
    close(
        s2s.vmap(M.attention, in_axes=(0, None, None), backend=backend)(
            q[:, None], k, v
        ),
        oracle(jax.vmap, M.attention, in_axes=(0, None, None))(q[:, None], k, v),
    )


# --- gradients at kinks and far out: exactly JAX's -------------------------------------------

POINTS = np.array([0.0, 1000.0, -1000.0, 6.0, -1.0, 1.0, 3.0, -3.0, 1e-300, -1e-300])
CALLS = [
    "jax.nn.relu(x)",
    "jax.nn.relu6(x)",
    "jax.nn.sigmoid(x)",
    "jax.nn.log_sigmoid(x)",
    "jax.nn.softplus(x)",
    "jax.nn.silu(x)",
    "jax.nn.mish(x)",
    "jax.nn.gelu(x)",
    "jax.nn.gelu(x, approximate=False)",
    "jax.nn.elu(x)",
    "jax.nn.celu(x)",
    "jax.nn.selu(x)",
    "jax.nn.leaky_relu(x)",
    "jax.nn.hard_tanh(x)",
    "jax.nn.hard_sigmoid(x)",
    "jax.nn.hard_silu(x)",
    "jax.nn.soft_sign(x)",
    "jax.nn.sparse_plus(x)",
    "jax.nn.squareplus(x)",
    "jax.nn.softmax(x)",
    "jax.nn.log_softmax(x)",
    "jax.nn.logsumexp(x)",
    "jax.nn.standardize(x)",
    "jax.scipy.special.erf(x)",
    "jax.scipy.special.erfc(x)",
    "jax.scipy.special.ndtr(x)",
    "jax.scipy.special.log_ndtr(x)",
    "jax.scipy.special.xlogy(x, x * x)",
    "jax.lax.clamp(-1.0, x, 6.0)",
]


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kink_function(tmp_path, i, call):
    weights = f"jnp.arange(1.0, {POINTS.size + 1.0})"
    text = f"import jax\nimport jax.numpy as jnp\n\n\ndef f(x):\n    return jnp.sum({weights}[: x.size] * {call})\n"
    return _module(tmp_path, f"kink_{i}", text).f


@pytest.mark.parametrize("call", CALLS)
def test_gradient_at_kinks_and_far_out_is_jaxs(tmp_path, call):
    f = _kink_function(tmp_path, CALLS.index(call), call)
    want = np.asarray(oracle(jax.grad, f)(POINTS))
    for backend in BACKENDS:
        with np.errstate(all="ignore"):
            got = np.asarray(s2s.grad(f, backend=backend)(POINTS))
        # nan and inf where JAX has them and nowhere else; finite values JAX's to a few units in the last
        # place (NumPy's and XLA's tanh, exp, ... round differently, and differences of nearly equal terms,
        # squareplus's at -1000, keep those units)
        np.testing.assert_array_equal(
            np.isfinite(got), np.isfinite(want), err_msg=backend
        )
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15, err_msg=backend)
    tangent = np.linspace(-1, 1, POINTS.size)
    _, got_dot = s2s.jvp(f, (POINTS,), (tangent,))
    _, want_dot = oracle(jvp_of, f)((POINTS,), (tangent,))
    np.testing.assert_allclose(got_dot, want_dot, rtol=1e-13, atol=1e-15)


def test_entr_has_no_slope_below_zero_in_both_modes(tmp_path):
    """JAX's ``entr`` is ``-inf`` below 0 with slope 0 in forward mode; its reverse mode gives nan there (a
    zero cotangent times ``log(x) + 1``). s2s gives 0 in both modes, and JAX's values elsewhere.
    """
    f = _kink_function(tmp_path, "entr", "jax.scipy.special.entr(x)")
    x = np.array([-1000.0, -1.0, 0.0, 1.0, 1000.0])
    for backend in BACKENDS:
        got = (
            np.asarray(s2s.grad(f, backend=backend)(x)) / np.arange(1.0, 11.0)[: x.size]
        )
        np.testing.assert_array_equal(got[:2], [0.0, 0.0])
        np.testing.assert_allclose(
            got[2:], [np.inf, -1.0, -np.log(1000.0) - 1], rtol=1e-15
        )
    _, tangent = s2s.jvp(f, (x,), (np.ones_like(x),))
    _, jax_tangent = oracle(jvp_of, f)((x,), (np.ones_like(x),))
    np.testing.assert_array_equal(tangent, jax_tangent)


@pytest.mark.parametrize(
    "call",
    ["jax.scipy.special.gammainc(x, 1.5)", "jax.scipy.special.zeta(x + 1.5, 2.0)"],
)
def test_partials_jax_has_no_derivative_of_are_errors_when_differentiated_again(
    tmp_path, call
):
    """A partial with no closed form is JAX's own, evaluated (``rt.special.jax_partial``): the gradient is
    JAX's, and a second derivative through it is a located error that says why, never a zero.
    """
    f = _kink_function(tmp_path, f"partial_{len(call)}", call)
    x = np.array([0.7, 1.3, 2.2])
    for backend in BACKENDS:
        close(s2s.grad(f, backend=backend)(x), oracle(jax.grad, f)(x), rtol=1e-9)
    with pytest.raises(
        s2s.S2SError, match=r"jax_partial.*JAX differentiates it no further"
    ) as err:
        s2s.hessian(f)(x)
    assert f"partial_{len(call)}.py" in str(err.value)


# --- resolution by identity ---------------------------------------------------------------

SPELLINGS = """\
import jax
import jax.nn
import jax.numpy as jnp
import scipy.special
from jax import lax, nn
from jax.nn import relu
from jax._src.nn.functions import relu as private_relu


def a(x):
    return jnp.sum(jax.nn.relu(x) + lax.logistic(x) + lax.exp(x))


def b(x):
    return jnp.sum(relu(x) + jax.nn.sigmoid(x) + jnp.exp(x))


def c(x):
    return jnp.sum(nn.relu(x) + scipy.special.expit(x) + lax.exp(x))


def d(x):
    return jnp.sum(private_relu(x) + jax.scipy.special.expit(x) + jax.lax.exp(x))
"""


def test_one_object_is_one_op_whatever_its_spelling(tmp_path):
    module = _module(tmp_path, "spellings", SPELLINGS)
    bodies = set()
    for name in "abcd":
        text = s2s.grad(getattr(module, name)).source
        assert (
            "rt.nn.relu(x)" in text
            and "rt.nn.sigmoid(x)" in text
            and "xp.exp(x)" in text
        )
        code = [
            line
            for line in text.split('"""', 4)[-1].splitlines()
            if not line.strip().startswith("#")
        ]
        bodies.add(re.sub(rf"\b{name}(?=\b|_)", "f", "\n".join(code)))
    assert len(bodies) == 1, "the four spellings generate different code"


def test_every_library_op_has_rules_in_every_mode_or_is_expanded():
    for name in ARRAY_FUNCTIONS:
        op = RUNTIME_OPS[name]
        if op.family in ("nondiff", "decompose"):
            continue
        missing = {"forward", "reverse", "batch"} - set(op.rules)
        assert not missing, f"{name} has no {missing} rule"


def test_library_functions_run_on_both_backends():
    from s2s import runtime as rt

    x = RNG.uniform(0.1, 0.9, size=5)
    for fn, want in [
        (rt.nn.relu, jax.nn.relu),
        (rt.nn.gelu, jax.nn.gelu),
        (rt.special.gammaln, jax.scipy.special.gammaln),
        (rt.special.ndtri, jax.scipy.special.ndtri),
        (rt.stats.norm_logpdf, jax.scipy.stats.norm.logpdf),
        (rt.nn.log_softmax, jax.nn.log_softmax),
    ]:
        got = fn(x)
        assert isinstance(got, np.ndarray), fn
        np.testing.assert_allclose(got, want(x), rtol=1e-12)
        assert isinstance(fn(jnp.asarray(x)), jax.Array)
    out, sign = rt.special.logsumexp(x, b=x - 0.5, return_sign=True)
    close((out, sign), jax.scipy.special.logsumexp(x, b=x - 0.5, return_sign=True))
    np.testing.assert_array_equal(
        rt.nn.one_hot(np.array([0, 2, 5]), 3), jax.nn.one_hot(np.array([0, 2, 5]), 3)
    )


def test_special_functions_without_scipy_run_jax_in_float64(monkeypatch):
    import builtins

    from s2s import runtime as rt

    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name == "scipy" or name.startswith("scipy."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    x = np.array([0.3, 1.7, 4.2])
    got = rt.special.digamma(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, jax.scipy.special.digamma(x), rtol=1e-14)
    np.testing.assert_allclose(
        rt.special.polygamma(2, x), jax.scipy.special.polygamma(2, x), rtol=1e-13
    )


# --- located errors -------------------------------------------------------------------------

ERRORS = """\
import jax
import jax.numpy as jnp
from scipy.stats import norm


def gelu_flag(x, flag):
    return jnp.sum(jax.nn.gelu(x, approximate=flag))


def standardize_where(x, mask):
    return jnp.sum(jax.nn.standardize(x, where=mask))


def frozen(x):
    return jnp.sum(norm(0.0, 1.0).logpdf(x))


def unknown(x):
    return jnp.sum(jax.scipy.special.betainc(x, x, 0.5 * x))


def attention_lengths(x):
    q = jnp.reshape(x, (1, 2, 1, 3))
    lengths = jnp.array([1], dtype=jnp.int32)
    return jnp.sum(jax.nn.dot_product_attention(q, q, q, query_seq_lengths=lengths))
"""


@pytest.mark.parametrize(
    "name, message",
    [
        ("gelu_flag", "`jax.nn.gelu` needs its argument `approximate` as a constant"),
        (
            "standardize_where",
            "`jax.nn.standardize` called with arguments s2s cannot bind",
        ),
        ("frozen", "a frozen distribution"),
        ("unknown", "betainc"),
        ("attention_lengths", "with sequence lengths, a local window or a residual"),
    ],
)
def test_what_s2s_cannot_do_is_a_located_error(tmp_path, name, message):
    module = _module(tmp_path, "errors", ERRORS)
    x = np.ones((2, 3))
    args = {"gelu_flag": (x, True), "standardize_where": (x, x > 0)}.get(name, (x,))
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(getattr(module, name))(*args)
    text = str(info.value)
    assert message in text, text
    assert "errors.py:" in text, text
