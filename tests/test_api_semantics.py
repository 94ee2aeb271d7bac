"""JAX's semantics through s2s's API: pytrees in and out, argnums, keyword arguments,
has_aux, vjp, unused inputs, and composition with jax.jit / jax.vmap / jax.grad.

The functions are written with ``jax.numpy`` (which s2s also reads), so the
oracle is ``jax.grad`` of the very same function.
"""

import functools
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_checks import oracle

import s2s

jax.config.update("jax_enable_x64", True)

Params = namedtuple("Params", "W b")
RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 3))
W = RNG.normal(size=(3, 2))
B = RNG.normal(size=2)


def assert_trees_close(got, want):
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def namedtuple_loss(p, x):
    return jnp.sum(jnp.tanh(x @ p.W + p.b) ** 2)


def nested_loss(params, x):
    first = params["layers"][0]
    h = jnp.tanh(x @ first["W"] + first["b"])
    return params["scale"] * jnp.mean(h @ params["layers"][1]["W"])


def defaults_loss(x, w, scale=2.0, axis=-1):
    return jnp.sum(jnp.sum(x * w, axis=axis) ** 2) * scale


def scalar_param_loss(x, a):
    return jnp.sum(a * x**2 + jnp.sin(a))


def dense(x, W, b, scale=1.0):
    return jnp.tanh(x @ W + b) * scale


def whole_tree_helper(p):
    return jnp.sum(p[0] ** 2) + jnp.sum(p[1])


def helper_loss(p, x):
    W, b = p
    h = dense(x, W, b=b, scale=0.5)
    return jnp.sum(h) + whole_tree_helper(p)


def pair_output(x):
    return jnp.sin(x), jnp.cos(x) * 2.0


def aux_loss(x, w):
    y = x @ w
    return jnp.sum(y**2), {"mean": jnp.mean(y), "y": y}


def unused_input(x, w):
    return jnp.sum(x**3)


TREE_CASES = [
    (namedtuple_loss, (Params(W, B), X)),
    (
        nested_loss,
        (
            {
                "layers": [{"W": W, "b": B}, {"W": RNG.normal(size=(2, 5))}],
                "scale": 1.5,
            },
            X,
        ),
    ),
    (helper_loss, ((W, B), X)),
    (unused_input, (X, W)),
]


@pytest.mark.parametrize(
    "fn, args", TREE_CASES, ids=lambda v: getattr(v, "__name__", "")
)
@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_gradient_has_the_structure_of_the_argument(fn, args, backend):
    assert_trees_close(
        s2s.grad(fn, backend=backend)(*args), oracle(jax.grad, fn)(*args)
    )


def test_argnums_tuple_and_keywords_and_defaults():
    want = oracle(jax.grad, defaults_loss, (0, 1))(X, X, axis=0)
    assert_trees_close(s2s.grad(defaults_loss, (0, 1))(X, X, axis=0), want)
    assert_trees_close(
        s2s.grad(defaults_loss, 1)(X, X, 3.0),
        oracle(jax.grad, defaults_loss, 1)(X, X, 3.0),
    )


def test_gradient_with_respect_to_a_python_float():
    got = s2s.grad(scalar_param_loss, 1)(X, 0.3)
    np.testing.assert_allclose(got, oracle(jax.grad, scalar_param_loss, 1)(X, 0.3))


def test_value_and_grad_with_aux():
    (value, aux), grad = s2s.value_and_grad(aux_loss, has_aux=True)(X, W)
    (want_value, want_aux), want_grad = oracle(
        jax.value_and_grad, aux_loss, has_aux=True
    )(X, W)
    np.testing.assert_allclose(value, want_value)
    assert_trees_close(aux, want_aux)
    assert_trees_close(grad, want_grad)
    grad, aux = s2s.grad(aux_loss, 1, has_aux=True)(X, W)
    assert_trees_close((grad, aux), oracle(jax.grad, aux_loss, 1, has_aux=True)(X, W))


def test_vjp_of_a_tuple_output():
    x = RNG.normal(size=5)
    cts = (RNG.normal(size=5), RNG.normal(size=5))
    out, vjp_fn = s2s.vjp(pair_output, x)
    want_out, want_vjp = jax.vjp(pair_output, x)
    assert_trees_close(out, want_out)
    assert_trees_close(vjp_fn(cts), want_vjp(cts))


def kernels_summed_by_items(hyper, x):
    # the dict's entries in its own order, each a different kernel
    total = 0.0
    for name, h in hyper.items():
        total = total + (
            jnp.sum(jnp.sin(h * x)) if name == "sine" else jnp.sum(h * x**2)
        )
    return total


def dict_output(x):
    return {"second": jnp.sin(x), "first": x**2}


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_tangents_and_cotangents_whose_dicts_are_in_another_order(backend):
    """JAX matches dicts whatever their key order; the entries are read by key, never by position."""
    hyper = {"square": 0.7, "sine": -0.4}  # insertion order unlike JAX's sorted one
    tangent = {"sine": 1.0, "square": 0.0}
    x = RNG.normal(size=3)
    got = s2s.jvp(
        kernels_summed_by_items, (hyper, x), (tangent, np.zeros(3)), backend=backend
    )
    want = jax.jvp(kernels_summed_by_items, (hyper, x), (tangent, np.zeros(3)))
    assert_trees_close(got, want)
    ct = {"first": RNG.normal(size=3), "second": RNG.normal(size=3)}
    _, vjp_fn = s2s.vjp(dict_output, x, backend=backend)
    assert_trees_close(vjp_fn(ct), jax.vjp(dict_output, x)[1](ct))


def test_transformed_functions_are_jax_functions():
    grad = s2s.grad(namedtuple_loss)
    p = Params(W, B)
    assert_trees_close(jax.jit(grad)(p, X), oracle(jax.grad, namedtuple_loss)(p, X))
    xs = RNG.normal(size=(3, 4, 3))
    assert_trees_close(
        oracle(jax.vmap, grad, (None, 0))(p, xs),
        jax.vmap(oracle(jax.grad, namedtuple_loss), (None, 0))(p, xs),
    )
    second = jax.grad(lambda a: s2s.grad(scalar_param_loss, 1)(X, a))(0.3)
    np.testing.assert_allclose(
        second, jax.grad(oracle(jax.grad, scalar_param_loss, 1), 1)(X, 0.3)
    )


def test_each_transformed_function_exposes_its_source():
    grad = s2s.grad(helper_loss)
    assert "def helper_loss_grad(p, x):" in grad.source
    assert "def dense_vjp(x, W, b, scale, dense_bar):" in grad.source
    assert "def whole_tree_helper_vjp(p, whole_tree_helper_bar):" in grad.source
    assert grad.source == s2s.grad(helper_loss).source


def indexing_loss(x, idx):
    rows = x[idx]  # integer-array indexing, repeated indices accumulate
    picked = x[None, 1:, ...][0, :, -1]
    return jnp.sum(rows**2) + jnp.sum(jnp.exp(picked)) + x[0, 0] * x.copy()[2, 1]


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_indexing_reads(backend):
    idx = np.array([0, 2, 2, 3])
    assert_trees_close(
        s2s.grad(indexing_loss, backend=backend)(X, idx),
        oracle(jax.grad, indexing_loss)(X, idx),
    )


def test_tracebacks_point_into_the_generated_file():
    grad = s2s.grad(namedtuple_loss, backend="numpy")
    with pytest.raises(ValueError) as info:
        grad(Params(W, B), np.ones((4, 5)))  # wrong inner dimension
    frames = [str(entry.path) for entry in info.traceback]
    assert any(
        "s2s_generated_namedtuple_loss" in name and name.endswith(".py")
        for name in frames
    )


def test_lambdas_passed_directly():
    square_sum = lambda x, w: jnp.sum((x @ w) ** 2)
    assert_trees_close(
        s2s.grad(square_sum, (0, 1))(X, W), oracle(jax.grad, square_sum, (0, 1))(X, W)
    )
    np.testing.assert_allclose(
        s2s.grad(lambda a: jnp.tanh(a) * 3.0)(0.5),
        jax.grad(lambda a: jnp.tanh(a) * 3.0)(0.5),
    )


def nested_array_loss(a, b):
    m = jnp.array(((a, b), (b * 2.0, a)))
    return jnp.sum(jnp.asarray(m) ** 2) + jnp.sum(jnp.full((2, 3), jnp.sum(a)))


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_constructors_carry_their_data_derivative(backend):
    a, b = RNG.normal(size=3), RNG.normal(size=3)
    assert_trees_close(
        s2s.grad(nested_array_loss, (0, 1), backend=backend)(a, b),
        oracle(jax.grad, nested_array_loss, (0, 1))(a, b),
    )


def layers_loss(params, x):
    h = x
    for w, b in params:
        h = jnp.tanh(h @ w + b)
    return jnp.sum(h**2)


def test_repeated_calls_with_pytree_arguments_go_straight_to_the_compiled_function():
    """A call with a tree structure and dtypes seen before skips the full path (``api._Direct``): same
    results; a new structure, a cast gradient or an integer input takes the full path again.
    """
    rng = np.random.default_rng(3)
    params = [(rng.normal(size=(3, 3)), rng.normal(size=3)) for _ in range(2)]
    x = rng.normal(size=(2, 3))
    g = s2s.grad(layers_loss)
    first = g(params, x)
    assert len(g._direct.seen) == 1
    again = g(params, x)
    for a, b in zip(jax.tree_util.tree_leaves(first), jax.tree_util.tree_leaves(again)):
        np.testing.assert_array_equal(a, b)
    want = jax.grad(layers_loss)(params, x)
    for a, b in zip(jax.tree_util.tree_leaves(again), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    g(params + params[:1], x)  # three layers: a structure of its own
    assert len(g._direct.seen) == 2
    with pytest.raises(TypeError, match="requires real"):
        g([(np.ones((3, 3), int), np.ones(3, int))], x)
    # float32 parameters of a loss computed in float64: the gradient is cast back, so never direct
    narrow = [(w.astype(np.float32), b.astype(np.float32)) for w, b in params]
    cast = s2s.grad(layers_loss)
    for _ in range(2):
        out = cast(narrow, x)
        assert all(leaf.dtype == np.float32 for leaf in jax.tree_util.tree_leaves(out))
    assert "_direct" not in cast.__dict__ or not cast._direct.seen


def test_a_gradient_of_another_shape_than_its_parameter_is_never_returned():
    """The last check before a gradient is returned: its leaves have their parameters' shapes (a rule that
    forgot to sum a per-example cotangent returned a (4, 3) gradient for a (3,) parameter).
    """
    from s2s.dtypes import in_primal_dtypes

    params = {"w": np.ones(3), "b": 0.5}
    good = {"w": np.zeros(3), "b": np.float64(0.0)}
    assert in_primal_dtypes(good, (params,), 0, "grad", False)["w"].shape == (3,)
    with pytest.raises(
        s2s.S2SError, match=r"shape \(4, 3\) for a parameter of shape \(3,\)"
    ):
        in_primal_dtypes({"w": np.zeros((4, 3)), "b": 0.0}, (params,), 0, "grad", False)


def _loss_with_integer_leaves(p):
    return np.sum(p["w"][p["idx"]] ** 2) * p["scale"] + np.sum(p["mask"] * p["w"])


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_allow_int_gives_integer_and_boolean_leaves_float0_gradients(backend):
    """JAX's ``allow_int``: without it an integer leaf is JAX's TypeError (whose hint names it); with it,
    float0 zeros for integer and boolean leaves and the other leaves' gradients, as ``jax.grad``'s.
    """
    p = {
        "w": np.arange(5.0),
        "idx": np.array([0, 3, 3]),
        "scale": 2.0,
        "mask": np.array([True, False, True, True, False]),
    }
    with pytest.raises(TypeError, match="allow_int"):
        s2s.grad(_loss_with_integer_leaves, backend=backend)(p)
    got = s2s.grad(_loss_with_integer_leaves, allow_int=True, backend=backend)(p)
    want = jax.grad(_loss_with_integer_leaves, allow_int=True)(p)
    for key in ("idx", "mask"):
        assert got[key].dtype == want[key].dtype == jax.dtypes.float0
        assert got[key].shape == p[key].shape
    np.testing.assert_allclose(got["w"], want["w"], rtol=1e-6)
    np.testing.assert_allclose(got["scale"], want["scale"], rtol=1e-6)
    value, grads = s2s.value_and_grad(
        _loss_with_integer_leaves, allow_int=True, backend=backend
    )(p)
    np.testing.assert_allclose(value, _loss_with_integer_leaves(p))
    assert grads["idx"].dtype == jax.dtypes.float0


def residual_block(w, x):
    """A residual connection as JAX code writes it: ``out += ...`` binds ``out`` anew (``jax.numpy``
    arrays are immutable), ``x`` keeps its value."""
    out = x
    out += jnp.tanh(x @ w)
    return jnp.sum(out * x)


def _accumulate(h, v):
    h += v * 0.5
    return h


def accumulated(w, x):
    """A helper of JAX code whose ``h += v`` rebinds its parameter: the caller's ``x`` is unchanged."""
    h = _accumulate(x, jnp.sin(x @ w))
    return jnp.sum(h * x)


def mixed_namespaces(w, x):
    """NumPy's ``np`` read beside ``jnp``: NumPy's semantics, where ``out += ...`` would change ``x``."""
    out = x
    out += jnp.tanh(x @ w)
    return np.sum(out * x)


@pytest.mark.parametrize("fn", [residual_block, accumulated], ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_augmented_assignment_in_jax_numpy_code_binds_a_new_array(fn, backend):
    w, x = RNG.normal(size=(3, 3)), RNG.normal(size=(2, 3))
    got = s2s.grad(fn, argnums=(0, 1), backend=backend)(w, x)
    assert_trees_close(got, oracle(jax.grad, fn, argnums=(0, 1))(w, x))


def test_augmented_assignment_in_numpy_code_that_another_name_sees_is_refused():
    w, x = RNG.normal(size=(3, 3)), RNG.normal(size=(2, 3))
    with pytest.raises(s2s.S2SError, match="in-place update of `out`, which may share"):
        s2s.grad(mixed_namespaces)(w, x)


XP = jnp


def dispatch_on_a_module_global(w):
    """The array-API idiom: a test of which module a name holds, decided when the code is read."""
    if XP is np:
        return np.sum(w**2)
    return XP.sum(w**3)


def dispatch_on_a_module_default(w, xp=jnp):
    if xp is jnp:
        return xp.sum(jnp.sin(w))
    return xp.sum(w)


def _dispatch_on_a_closure(xp):
    def f(w):
        s = xp.sum(w**2)
        return s if xp is not np else 2 * s

    return f


@pytest.mark.parametrize(
    "fn",
    [
        dispatch_on_a_module_global,
        dispatch_on_a_module_default,
        _dispatch_on_a_closure(jnp),
    ],
    ids=["global", "default", "closure"],
)
@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_test_of_which_module_a_name_holds_is_decided_when_read(fn, backend):
    w = RNG.normal(size=3)
    assert_trees_close(s2s.grad(fn, backend=backend)(w), jax.grad(fn)(w))


def _burgers_residual(w, t, x, nu=0.01 / jnp.pi):
    return jnp.sin(w * t) * x - nu * w


def residual_mapped_inside(w, ts, xs):
    """``jax.vmap`` of a function whose default is an expression, inside: the call keeps the default."""
    return jnp.sum(jax.vmap(_burgers_residual, in_axes=(None, 0, 0))(w, ts, xs) ** 2)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_transformation_made_inside_keeps_its_functions_defaults(backend):
    ts, xs = RNG.normal(size=3), RNG.normal(size=3)
    got = s2s.grad(residual_mapped_inside, backend=backend)(0.7, ts, xs)
    np.testing.assert_allclose(
        got, jax.grad(residual_mapped_inside)(0.7, ts, xs), rtol=1e-10
    )


def _convolve(x, w):
    return jnp.array([jnp.dot(x[i - 1 : i + 2], w) for i in range(1, len(x) - 1)])


def convolve_mapped_by_a_partial(w, xs, scale):
    """The vectorization tutorial's ``jax.vmap(functools.partial(convolve, w=w))(xs)`` inside."""
    out = jax.vmap(functools.partial(_convolve, w=w * scale))(xs)
    return jnp.sum(out**2)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_partial_with_keywords_mapped_inside(backend):
    w, xs = RNG.normal(size=3), RNG.normal(size=(3, 5))
    got = s2s.grad(convolve_mapped_by_a_partial, argnums=(0, 2), backend=backend)(
        w, xs, 1.5
    )
    want = jax.grad(convolve_mapped_by_a_partial, argnums=(0, 2))(w, xs, 1.5)
    assert_trees_close(got, want)
