"""Per-example gradients: ``s2s.vmap(s2s.grad(f))`` against a loop of ``s2s.grad`` and ``oracle(jax.vmap, jax.grad)``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_checks import oracle

import s2s
from tests.programs import vmap as P

RNG = np.random.default_rng(5)
B = 4


def arr(*shape):
    return RNG.normal(size=shape)


def per_example(fn, args, in_axes):
    grad = s2s.grad(fn, backend="numpy")
    outs = [
        grad(*(a if ax is None else a[i] for a, ax in zip(args, in_axes)))
        for i in range(B)
    ]
    return jax.tree.map(lambda *xs: np.stack(xs), *outs)


CASES = [
    (
        P.mlp_loss,
        lambda: ([arr(3, 4), arr(4), arr(4, 2), arr(2)], arr(B, 3), arr(B, 2)),
        (None, 0, 0),
    ),
    (
        P.cross_entropy,
        lambda: (arr(3, 5), arr(B, 3), np.array([0, 4, 2, 2])),
        (None, 0, 0),
    ),
    (P.hinge_if, lambda: (arr(3), arr(B, 3)), (None, 0)),
    (P.clipped_steps, lambda: (arr(3), arr(B, 2, 3)), (None, 0)),
    (P.padded_same, lambda: (arr(3, 2), arr(B, 4, 2)), (None, 0)),
    (P.ar1_nll, lambda: (np.array([0.1, 0.6, 0.5]), arr(B, 6)), (None, 0)),
    (
        P.ar1_nll,
        lambda: (np.array([[0.1, 0.6, 0.5], [0.2, -0.3, 0.1]] * 2), arr(6)),
        (0, None),
    ),
]


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("fn, make, in_axes", CASES, ids=[c[0].__name__ for c in CASES])
def test_per_example_gradients_match_a_loop(fn, make, in_axes, backend):
    args = make()
    got = s2s.vmap(s2s.grad(fn), in_axes=in_axes, backend=backend)(*args)
    want = per_example(fn, args, in_axes)
    tol = (
        {"rtol": 1e-9, "atol": 1e-12}
        if backend == "numpy"
        else {"rtol": 1e-4, "atol": 1e-5}
    )
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), w, **tol)


def test_per_example_gradients_match_jax_vmap_of_grad():
    params = [arr(3, 4), arr(4), arr(4, 2), arr(2)]
    x, y = arr(B, 3), arr(B, 2)

    def twin(params, x, y):
        w1, b1, w2, b2 = params
        h = jnp.tanh(x @ w1 + b1)
        return jnp.mean((h @ w2 + b2 - y) ** 2)

    f32 = jax.tree.map(lambda a: np.asarray(a, np.float32), (params, x, y))
    got = s2s.vmap(s2s.grad(P.mlp_loss), in_axes=(None, 0, 0))(*f32)
    want = jax.vmap(oracle(jax.grad, twin), in_axes=(None, 0, 0))(*f32)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)


def test_batched_gradient_module_reads_like_the_gradient():
    text = s2s.vmap(s2s.grad(P.mlp_loss), in_axes=(None, 0, 0)).source
    assert "def mlp_loss_grad_batched(params, x, y):" in text
    assert "rt.batched_vjps.matmul_vjp_rhs" in text


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_reverse_mode_of_batched_code_matches_jax(backend):
    """``s2s.vjp`` of a batched module (``grad`` of ``vmap``): shared weights get the sum over examples."""
    xs, w, b = arr(B, 3), arr(3, 4), arr(4)
    if backend == "xla":
        xs, w, b = (a.astype(np.float32) for a in (xs, w, b))
    batched = s2s.vmap(P.layer_if, in_axes=(0, None, None), backend=backend).at(3)
    out, pullback = s2s.vjp(batched, xs, w, b, backend=backend)
    got = pullback(np.ones(B, xs.dtype))

    def twin(x, w, b):
        h = jnp.tanh(x @ w + b)
        return jnp.sum(jnp.where(jnp.sum(h) > 0, h * 2.0, -h) ** 2)

    with jax.enable_x64(backend == "numpy"):  # the oracle in the inputs' precision
        want_out, jax_pullback = jax.vjp(
            oracle(jax.vmap, twin, (0, None, None)), xs, w, b
        )
        want = jax_pullback(jnp.ones(B, xs.dtype))
    tol = (
        {"rtol": 1e-9, "atol": 1e-12}
        if backend == "numpy"
        else {"rtol": 1e-4, "atol": 1e-5}
    )
    np.testing.assert_allclose(np.asarray(out), np.asarray(want_out), **tol)
    for g, w_ in zip(got, want):
        assert np.shape(g) == np.shape(w_)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w_), **tol)


def test_forward_mode_of_batched_code_matches_jax():
    xs, w, b = arr(B, 3), arr(3, 4), arr(4)
    tangents = (arr(B, 3), arr(3, 4), arr(4))
    batched = s2s.vmap(P.layer_if, in_axes=(0, None, None), backend="numpy").at(3)
    out, tangent = s2s.jvp(batched, (xs, w, b), tangents, backend="numpy")

    def twin(x, w, b):
        h = jnp.tanh(x @ w + b)
        return jnp.sum(jnp.where(jnp.sum(h) > 0, h * 2.0, -h) ** 2)

    with jax.enable_x64(True):
        want_out, want_tangent = jax.jvp(
            oracle(jax.vmap, twin, (0, None, None)), (xs, w, b), tangents
        )
    np.testing.assert_allclose(out, np.asarray(want_out), rtol=1e-9)
    np.testing.assert_allclose(tangent, np.asarray(want_tangent), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize(
    "xs",
    [[1.0, -2.0, 4.0], [-1.0, -2.0, -3.0], [1.0, 2.0, 0.0]],
    ids=["mixed", "none-take-sqrt", "all-but-zero"],
)
def test_untaken_branch_leaks_no_nan_into_the_gradient(xs, backend):
    """``s2s.grad`` of a batched per-example ``if`` whose other branch is nan there: as JAX's double
    ``where``, each branch reads an example that takes it (``rt.batching.guard``)."""
    xs = np.asarray(xs, np.float32 if backend == "xla" else np.float64)
    got = s2s.grad(P.batched_safe_sqrt_loss, argnums=(0, 1), backend=backend)(xs, 1.5)

    def twin(xs, w):
        safe = jnp.where(xs > 0, xs, 1.0)
        return jnp.sum(jnp.where(xs > 0, jnp.sqrt(safe) * w, 0.0 * w))

    want = oracle(jax.grad, twin, argnums=(0, 1))(xs, 1.5)
    for g, w in zip(got, want):
        assert np.all(np.isfinite(np.asarray(g)))
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_a_refusal_in_gradient_code_read_again_points_at_the_users_line():
    """``s2s.vmap(s2s.grad(f))`` reads the gradient module again: a refusal there is shown at the line of
    ``f`` that the module's comment cites, not in the generated file."""
    batched = s2s.vmap(s2s.grad(P.halving_in_loop), in_axes=(0, None), backend="numpy")
    with pytest.raises(s2s.S2SError, match="checkpoints another loop") as info:
        batched(arr(B, 3), arr(2, 3))
    message = str(info.value)
    assert (
        message.startswith(P.__file__) or "programs/vmap.py:" in message.splitlines()[0]
    )
    assert "s2s_generated" not in message.splitlines()[0]


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_branch_on_a_string_in_a_loop_with_batched_parameters(backend):
    params = {"W1": arr(B, 3, 2), "b1": arr(B, 2), "W2": arr(B, 2, 3), "b2": arr(B, 3)}
    x = arr(3)
    got = s2s.vmap(
        s2s.grad(P.layers_by_activation_name), in_axes=(0, None), backend=backend
    )(params, x)
    grad = s2s.grad(P.layers_by_activation_name, backend="numpy")
    for i in range(B):
        want = grad({k: v[i] for k, v in params.items()}, x)
        for k in params:
            np.testing.assert_allclose(got[k][i], want[k], rtol=1e-4, atol=1e-6)


def test_a_branch_kept_by_a_loop_on_a_key_stays_one_branch_for_every_example():
    """``vmap`` of the gradient keeps the loop's tests on its dict's keys unbatched (residuals batched leaf
    by leaf): only the side each key takes runs, also where the other cannot (another key's keywords).
    """
    settings = {"scaled": {"scale": 0.5}, "shifted": {"shift": 0.1, "scale": 2.0}}
    grad = s2s.grad(P.terms_by_name, argnums=1, backend="numpy")
    xs = arr(B, 3)
    got = s2s.vmap(grad, in_axes=(None, 0), backend="numpy")(settings, xs)
    for g, x in zip(got, xs):
        np.testing.assert_allclose(g, grad(settings, x), rtol=1e-12)


def thomas_solve(d, a, b, c):
    """The Thomas algorithm for a tridiagonal system: a branch on the loop's index (``i < n - 1``)."""
    n = d.shape[0]
    cp, dp = np.zeros(n), np.zeros(n)
    cp[0], dp[0] = c[0] / b[0], d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        if i < n - 1:
            cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x = np.zeros(n)
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return np.sum(x**2)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_loops_branch_on_its_index_stays_one_branch_for_every_example(backend):
    """The residuals of a gradient's loop keep their own batching leaf by leaf (``rt.batch_first`` with
    flags): the test ``i < n - 1`` on the loop's index is the same for every example, so only the branch
    taken runs (both sides ran, and a write at the index broke, before)."""
    r = np.random.default_rng(5)
    n = 5
    a, b, c = r.normal(size=n), 4.0 + r.uniform(size=n), r.normal(size=n)
    ds = r.normal(size=(3, n))
    grad = s2s.grad(thomas_solve, backend=backend)
    got = s2s.vmap(grad, in_axes=(0, None, None, None), backend=backend)(ds, a, b, c)
    for g, d in zip(got, ds):
        np.testing.assert_allclose(
            g, s2s.grad(thomas_solve, backend="numpy")(d, a, b, c), rtol=1e-6
        )
    text = s2s.vmap(s2s.grad(thomas_solve), in_axes=(0, None, None, None)).source
    assert "rt.batch_first(" in text and "(True, False" in text.replace("\n", "")


LAYER_SHAPES = [(2, 3), (3, 1)]


def unpack_flat(weights):
    """autograd's ``unpack_layers``: slices of a flat vector at sizes read from a module-level list."""
    layers = []
    for m, n in LAYER_SHAPES:
        layers.append((weights[: m * n].reshape((m, n)), weights[m * n : m * n + n]))
        weights = weights[(m + 1) * n :]
    return layers


def flat_mlp_loss(weights, x):
    h = x
    for W, b in unpack_flat(weights):
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


def test_slices_at_sizes_a_loop_reads_stay_the_same_for_every_example():
    """The sizes are residuals of the gradient's loop, unbatched leaf by leaf even beside batched ones in
    a nested tuple: the backward loop slices at bounds that are the same for every example.
    """
    r = np.random.default_rng(6)
    weights = r.normal(size=13) * 0.5
    xs = r.normal(size=(3, 4, 2))
    got = s2s.vmap(s2s.grad(flat_mlp_loss), in_axes=(None, 0))(weights, xs)
    for g, x in zip(got, xs):
        np.testing.assert_allclose(
            g, s2s.grad(flat_mlp_loss, backend="numpy")(weights, x), rtol=1e-5
        )


def _written_into_an_integer_array(x, y):
    """``.at[:].set`` of float values into an integer array: no cotangent reaches the values (JAX's cast)."""
    r = jnp.std(y, axis=-1)
    counts = jnp.zeros(2, dtype=int).at[:].set(r * 2.5 + 4.0)
    counts = counts.at[0].set(r[-1] * 1.5)
    return jnp.sum(r * counts * 0.5) + jnp.sum(x**2)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_per_example_gradients_through_writes_into_an_integer_array(backend):
    """Fuzz seed 600337: the values' cotangent was zeros of one example, where every example's was due
    (a broadcasting error in the generated code)."""
    r = np.random.default_rng(7)
    x, y = r.normal(size=(2, 3)), r.normal(size=(2, 2))
    xs = np.stack([x, 2 * x, 3 * x])
    with jax.enable_x64(True):
        want = jax.vmap(jax.grad(_written_into_an_integer_array, (0, 1)), (0, None))(
            xs, y
        )
        got = s2s.vmap(
            s2s.grad(_written_into_an_integer_array, (0, 1), backend=backend),
            (0, None),
            backend=backend,
        )(xs, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-12)
