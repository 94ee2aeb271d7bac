"""Library code inside a transformed function: optax losses and optimizers, Equinox models.

s2s calls a library's JAX code through ``rt.foreign`` (visible in the generated code) and takes its
derivatives with JAX's own ``jax.vjp``/``jax.jvp``/``jax.vmap`` at that call; a derivative of a foreign
call is again a foreign call, so Hessians and per-example gradients come the same way. Every result is
checked against JAX on the same function, on both backends. Code JAX cannot trace, or code of your own
reached through a parameter, is a located error at your line.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
from jax_checks import jvp_of, oracle

import s2s
from s2s.errors import S2SError

jax.config.update("jax_enable_x64", True)

BACKENDS = ["xla", "numpy"]
RNG = np.random.default_rng(12)


def _optax():
    pytest.importorskip("optax")
    from tests.programs import foreign_optax

    return foreign_optax


def _equinox():
    pytest.importorskip("equinox")
    pytest.importorskip("optax")
    from tests.programs import foreign_equinox

    return foreign_equinox


def close(got, want, rtol=1e-9, atol=1e-12):
    """Two pytrees (dicts, tuples, Equinox models) with the same leaves, to tolerance."""
    # arrays only: an Equinox model also holds its activation functions
    got_leaves, want_leaves = (
        [x for x in jax.tree_util.tree_leaves(tree) if not callable(x)]
        for tree in (got, want)
    )
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def loss_cases(P):
    w, x = RNG.normal(size=(4, 3)), RNG.normal(size=(6, 4))
    labels, y = np.array([0, 2, 1, 1, 0, 2]), RNG.uniform(size=(6, 3))
    return {
        "softmax_cross_entropy_with_integer_labels": (
            P.classifier_loss,
            (w, x, labels),
        ),
        "l2_loss": (P.regression_loss, (w, x, y)),
        "sigmoid_binary_cross_entropy": (P.binary_loss, (w, x, y)),
        "keywords": (P.keyword_loss, (w, x, labels, RNG.normal(size=(6, 3)))),
    }


LOSSES = [
    "softmax_cross_entropy_with_integer_labels",
    "l2_loss",
    "sigmoid_binary_cross_entropy",
    "keywords",
]


# --- optax losses inside a user's loss ------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", LOSSES)
def test_optax_loss_grad_and_value_match_jax(name, backend):
    fn, args = loss_cases(_optax())[name]
    close(s2s.grad(fn, backend=backend)(*args), oracle(jax.grad, fn)(*args))
    value, grad = s2s.value_and_grad(fn, backend=backend)(*args)
    want_value, want_grad = oracle(jax.value_and_grad, fn)(*args)
    close((value, grad), (want_value, want_grad))
    # the library function is a visible foreign call, differentiated by JAX at that call
    assert (
        "rt.foreign(" in s2s.grad(fn).source
        and "rt.vjp_of((1,))" in s2s.grad(fn).source
    )


@pytest.mark.parametrize("name", LOSSES)
def test_optax_loss_jvp_and_hessian_match_jax(name):
    fn, args = loss_cases(_optax())[name]
    w = args[0]
    t = RNG.normal(size=w.shape)
    rest = [
        (
            np.zeros(a.shape, jax.dtypes.float0)
            if a.dtype.kind == "i"
            else np.zeros_like(a)
        )
        for a in args[1:]
    ]
    out, out_dot = s2s.jvp(fn, args, (t, *rest))
    want, want_dot = oracle(jvp_of, fn)(args, (t, *rest))
    close((out, out_dot), (want, want_dot))
    for backend in BACKENDS:
        close(
            s2s.hessian(fn, backend=backend)(*args),
            oracle(jax.hessian, fn)(*args),
            rtol=1e-8,
        )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", LOSSES)
def test_optax_loss_vmap_and_per_example_gradients_match_jax(name, backend):
    fn, args = loss_cases(_optax())[name]
    w, batched = args[0], [np.stack([a, a[::-1]]) for a in args[1:]]
    axes = (None, *[0] * len(batched))
    close(
        s2s.vmap(fn, in_axes=axes, backend=backend)(w, *batched),
        oracle(jax.vmap, fn, in_axes=axes)(w, *batched),
    )
    close(
        s2s.vmap(s2s.grad(fn, backend=backend), in_axes=axes)(w, *batched),
        jax.vmap(oracle(jax.grad, fn), in_axes=axes)(w, *batched),
    )
    assert "rt.vmap_of((None, 0, 0" in s2s.vmap(fn, in_axes=axes).source


def test_optax_loss_gradients_match_finite_differences():
    fn, args = loss_cases(_optax())["sigmoid_binary_cross_entropy"]
    s2s.check_grads(fn, args, order=2)


def test_the_generated_module_imports_the_library_function(tmp_path):
    """``s2s grad`` writes a file that runs on its own: it imports ``optax.l2_loss`` by its public name."""
    import subprocess
    import sys

    _optax()
    out = tmp_path / "regression_grad.py"
    subprocess.run(
        [sys.executable, "-m", "s2s.cli.main", "grad", "tests/programs/foreign_optax.py::regression_loss",
         "-o", str(out)],
        check=True,
    )  # fmt: skip
    text = out.read_text()
    assert "from optax import l2_loss as optax_l2_loss\n" in text
    namespace = {}
    exec(compile(text, str(out), "exec"), namespace)
    fn, args = loss_cases(_optax())["l2_loss"]
    close(namespace["regression_loss_grad"](*args), oracle(jax.grad, fn)(*args))


def test_keyword_arguments_bind_by_the_signature():
    P = _optax()
    text = s2s.grad(P.keyword_loss).source
    # `targets=y`, computed: passed at its position; `axis=-1`, a constant: kept as a keyword
    assert "rt.foreign(optax_l2_loss, logits, y)" in text
    assert 'keywords={"axis": -1}' in text


# --- an optax training loop ---------------------------------------------------------------------


def _data():
    params = {"w": RNG.normal(size=(4, 3)), "b": np.zeros(3)}
    return params, RNG.normal(size=(8, 4)), RNG.normal(size=(8, 3))


def _jax_training(P, params, x, y, steps):
    import optax

    state, values = P.optimizer.init(params), []
    for _ in range(steps):
        value, grads = oracle(jax.value_and_grad, P.params_loss)(params, x, y)
        updates, state = P.optimizer.update(grads, state, params)
        params = optax.apply_updates(params, updates)
        values.append(value)
    return params, values


def test_optax_training_loop_with_a_jitted_step_matches_jax():
    import optax

    P = _optax()
    params, x, y = _data()

    @jax.jit
    def step(params, opt_state, x, y):
        value, grads = P.loss_and_grad(params, x, y)
        updates, opt_state = P.optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    state, mine, values = P.optimizer.init(params), params, []
    for _ in range(5):
        mine, state, value = step(mine, state, x, y)
        values.append(value)
    want, want_values = _jax_training(P, params, x, y, 5)
    close((mine, values), (want, want_values))
    assert values[-1] < values[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_optax_training_step_transformed_by_s2s_matches_jax(backend):
    P = _optax()
    params, x, y = _data()
    step = s2s.transform(P.train_step, backend=backend)
    state, mine, values = P.optimizer.init(params), params, []
    for _ in range(5):
        mine, state, value = step(mine, state, x, y)
        values.append(value)
    want, want_values = _jax_training(P, params, x, y, 5)
    close((mine, values), (want, want_values))
    text = step.source
    assert "rt.foreign(optimizer_update, grads, opt_state, params)" in text
    assert "rt.foreign(optax_apply_updates, params, updates)" in text


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_through_an_optimizer_update_matches_jax(backend):
    """Pytrees in and out of the library: a dict of parameters, optax's state, a tuple of results."""
    P = _optax()
    params, x, y = _data()
    state = P.sgd.init(params)
    close(
        s2s.grad(P.unrolled_loss, backend=backend)(params, state, x, y),
        oracle(jax.grad, P.unrolled_loss)(params, state, x, y),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_optimizer_made_in_the_function_from_constants_is_made_once(backend):
    """``tx = optax.chain(...)`` of constants inside the function: read as the object it makes."""
    P = _optax()
    params, x, y = _data()
    close(
        s2s.value_and_grad(P.lookahead_loss, backend=backend)(params, x, y),
        oracle(jax.value_and_grad, P.lookahead_loss)(params, x, y),
    )
    assert "rt.foreign(tx_update, " in s2s.grad(P.lookahead_loss).source
    # made from a value of the function: no constant, a located error at the method's call
    with pytest.raises(s2s.S2SError, match="calls a method of an object") as info:
        s2s.grad(P.meta_lr_loss)(0.1, params, x, y)
    assert info.value.origin.text.strip().startswith("updates, _ = tx.update(")


# --- Equinox ------------------------------------------------------------------------------------


def _model(E, depth=2):
    import equinox as eqx

    return eqx.nn.MLP(4, 3, 8, depth, key=jax.random.PRNGKey(0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_equinox_layer_in_a_module_global(backend):
    E = _equinox()
    x, y = RNG.normal(size=4), RNG.normal(size=3)
    close(
        s2s.grad(E.global_layer_loss, backend=backend)(x, y),
        oracle(jax.grad, E.global_layer_loss)(x, y),
    )
    close(
        s2s.hessian(E.global_layer_loss, backend=backend)(x, y),
        oracle(jax.hessian, E.global_layer_loss)(x, y),
    )
    assert "rt.foreign(layer, x)" in s2s.grad(E.global_layer_loss).source


@pytest.mark.parametrize("backend", BACKENDS)
def test_equinox_model_as_the_differentiated_argument(backend):
    """``s2s.grad(loss)(model, x, y)``: the model is an operand of its own call; its gradient is a model
    of gradients, as ``equinox.filter_grad`` gives (None where the model holds a function).
    """
    import equinox as eqx

    E = _equinox()
    model, x, y = _model(E), RNG.normal(size=4), RNG.normal(size=3)
    got = s2s.grad(E.example_loss, backend=backend)(model, x, y)
    assert isinstance(got, eqx.nn.MLP) and got.activation is None
    close(got, eqx.filter_grad(E.example_loss)(model, x, y))
    close(
        s2s.grad(E.keyword_loss, backend=backend)(model, x, y),
        eqx.filter_grad(E.keyword_loss)(model, x, y),
    )
    assert "rt.vjp_of((0,))" in s2s.grad(E.example_loss).source


def test_equinox_model_forward_mode():
    import equinox as eqx

    E = _equinox()
    model, x, y = _model(E), RNG.normal(size=4), RNG.normal(size=3)
    tangent = jax.tree_util.tree_map(
        lambda a: RNG.normal(size=a.shape) if hasattr(a, "shape") else a, model
    )
    zeros = (np.zeros(4), np.zeros(3))
    close(
        s2s.jvp(E.example_loss, (model, x, y), (tangent, *zeros)),
        eqx.filter_jvp(
            E.example_loss, (model, x, y), (eqx.filter(tangent, eqx.is_array), *zeros)
        ),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_equinox_vmapped_model(backend):
    import equinox as eqx

    E = _equinox()
    model, xs, ys = _model(E), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 3))
    value, got = s2s.value_and_grad(E.batch_loss, backend=backend)(model, xs, ys)
    want_value, want = eqx.filter_value_and_grad(E.batch_loss)(model, xs, ys)
    close((value, got), (want_value, want))
    # with respect to the data: forward mode, and per-example losses
    t = RNG.normal(size=xs.shape)
    close(
        s2s.jvp(lambda xs: E.batch_loss(model, xs, ys), (xs,), (t,)),
        jax.jvp(lambda xs: E.batch_loss(model, xs, ys), (xs,), (t,)),
    )
    close(
        s2s.vmap(E.example_loss, in_axes=(None, 0, 0), backend=backend)(model, xs, ys),
        jax.vmap(E.example_loss, in_axes=(None, 0, 0))(model, xs, ys),
    )
    # per-example gradients: one model of gradients per example, stacked
    close(
        s2s.vmap(s2s.grad(E.example_loss, backend=backend), in_axes=(None, 0, 0))(
            model, xs, ys
        ),
        jax.vmap(eqx.filter_grad(E.example_loss), in_axes=(None, 0, 0))(model, xs, ys),
    )
    close(
        s2s.hessian(E.example_loss, argnums=1, backend=backend)(model, xs[0], ys[0]),
        jax.hessian(E.example_loss, argnums=1)(model, xs[0], ys[0]),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_equinox_linear_layer_differentiated_like_jax_grad(backend):
    import equinox as eqx

    E = _equinox()
    linear = eqx.nn.Linear(
        4, 3, key=jax.random.PRNGKey(2)
    )  # only arrays: jax.grad takes it too
    x, y = RNG.normal(size=4), RNG.normal(size=3)
    close(
        s2s.grad(E.example_loss, backend=backend)(linear, x, y),
        jax.grad(E.example_loss)(linear, x, y),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_equinox_training_step_transformed_by_s2s_matches_equinox(backend):
    """An Equinox model and an optax optimizer in a training step that s2s compiles: the model, which holds
    its activation functions, goes in and comes out of the compiled step (as ``equinox.filter_jit``).
    """
    import equinox as eqx
    import optax

    E = _equinox()
    model, xs, ys = _model(E), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 3))
    step = s2s.transform(E.train_step, backend=backend)
    mine, state = model, E.optimizer.init(eqx.filter(model, eqx.is_array))
    want, want_state = model, state
    for _ in range(3):
        mine, state, value = step(mine, state, xs, ys)
        want_value, grads = eqx.filter_value_and_grad(E.batch_loss)(want, xs, ys)
        updates, want_state = E.optimizer.update(
            grads, want_state, eqx.filter(want, eqx.is_array)
        )
        want = eqx.apply_updates(want, updates)
        close(value, want_value)
    assert isinstance(mine, eqx.nn.MLP) and mine.activation is model.activation
    close(mine, want)
    assert isinstance(optax.tree_utils.tree_get(state, "count"), jax.Array | np.ndarray)


# --- Flax (skipped where Flax is not installed: it is not in the test extra) ---------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_flax_model_apply(backend):
    pytest.importorskip("flax")
    pytest.importorskip("optax")
    from tests.programs import foreign_flax as F

    x, labels = RNG.normal(size=(6, 4)), np.array([0, 1, 2, 0, 1, 2])
    params = F.model.init(jax.random.PRNGKey(0), x)
    close(
        s2s.grad(F.loss, backend=backend)(params, x, labels),
        oracle(jax.grad, F.loss)(params, x, labels),
    )
    close(
        s2s.vmap(s2s.grad(F.loss, backend=backend), in_axes=(None, 0, 0))(
            params, np.stack([x, -x]), np.stack([labels, labels[::-1]])
        ),
        jax.vmap(oracle(jax.grad, F.loss), in_axes=(None, 0, 0))(
            params, np.stack([x, -x]), np.stack([labels, labels[::-1]])
        ),
    )
    assert "rt.foreign(model_apply, params, x)" in s2s.grad(F.loss).source


# --- what is not called through JAX: located errors ---------------------------------------------


def _at(err, path_end, line):
    assert err.origin is not None
    origin = getattr(err.origin, "cited", None) or err.origin
    assert origin.path.endswith(path_end), origin.path
    assert origin.line == line


def _line(module, text):
    import inspect

    lines = inspect.getsource(module).splitlines()
    return next(i for i, line in enumerate(lines, start=1) if text in line)


def test_a_library_that_is_not_jax_code_is_a_located_error():
    """SciPy's own ``rosen`` of the differentiated parameters: NumPy code s2s cannot read, run only on values
    known when traced (``rt.host_call``), so a derivative through it is a located error naming it.
    """
    from tests.programs import foreign_plain as F

    with pytest.raises(
        S2SError, match=r"no derivative rule for `rosen` \(run by `rt\.host_call`\)"
    ) as info:
        s2s.grad(F.rosen_loss)(np.ones(3))
    assert "write it with NumPy ops" in info.value.message
    _at(info.value, "foreign_plain.py", _line(F, "scipy.optimize.rosen(w)"))


def test_a_function_jax_cannot_trace_is_a_located_error():
    P = _optax()
    with pytest.raises(
        S2SError,
        match=r"`optax\.cosine_decay_schedule` cannot be traced by JAX",
    ) as info:
        s2s.grad(P.schedule_loss, argnums=1)(np.array(10), np.ones(3))
    _at(
        info.value,
        "foreign_optax.py",
        _line(P, "optax.cosine_decay_schedule(1.0, steps)"),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_your_own_function_through_a_parameter_is_a_located_error(backend):
    """Never traced by JAX in s2s's stead: your code is read from its source, or refused; JAX's and
    NumPy's functions JAX traces."""
    from tests.programs import foreign_plain as F

    with pytest.raises(
        S2SError, match=r"`tests\.programs\.foreign_plain\.own`.* is your own code"
    ) as info:
        s2s.grad(F.call_param, argnums=1, backend=backend)(F.own, np.ones(3))
    _at(info.value, "foreign_plain.py", _line(F, "return jnp.sum(f(x))"))
    # JAX's own function, held in a parameter: JAX traces it (``rt.foreign``), and so a NumPy function
    # (as jax.numpy's namesake)
    x = np.linspace(-1.0, 1.0, 3)
    for act in (jnp.tanh, np.tanh):
        got = s2s.grad(F.call_param, argnums=1, backend=backend)(act, x)
        np.testing.assert_allclose(got, 1 - np.tanh(x) ** 2, rtol=1e-6)
    with pytest.raises(S2SError, match=r"comes from `scipy`, which does not use JAX"):
        s2s.grad(F.call_param, argnums=1, backend=backend)(
            scipy.optimize.rosen, np.ones(3)
        )


def test_a_computed_keyword_argument_is_a_located_error():
    E = _equinox()
    with pytest.raises(
        S2SError, match=r"keyword argument `key=` of `model\(\.\.\.\)`"
    ) as info:
        s2s.grad(E.computed_keyword_loss, argnums=1)(
            _model(E), np.ones(4), jax.random.PRNGKey(0)
        )
    _at(info.value, "foreign_equinox.py", _line(E, "model(x, key=key)"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_library_function_held_in_a_local_is_called_through_jax(backend):
    P = _optax()
    w, x, y = RNG.normal(size=(4, 3)), RNG.normal(size=(2, 4)), RNG.normal(size=(2, 3))
    close(
        s2s.grad(P.value_loss, backend=backend)(w, x, y),
        oracle(jax.grad, P.value_loss)(w, x, y),
    )
    assert "rt.foreign(optax_l2_loss, _matmul, y)" in s2s.grad(P.value_loss).source


def test_the_rule_table_lists_foreign_calls():
    import io

    from s2s.rules.__main__ import main

    out = io.StringIO()
    main(out)
    assert "rt.foreign" in out.getvalue()


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_scipy_functions_with_a_jax_twin_run_through_jax(backend):
    """``scipy.linalg.expm`` has no op: ``jax.scipy.linalg.expm`` (the function of the same public path)
    runs as library code, differentiated and batched by JAX; ``jax.scipy`` functions s2s has no op for too.
    """
    from tests.programs import foreign_plain as P

    theta = np.array([0.7, -0.2])

    def twin(theta):
        Q = jnp.array([[-1.0, 1.0], [0.5, -0.5]]) * theta[0] + jnp.eye(2) * theta[1]
        P_ = jax.scipy.linalg.expm(Q * 1.5)
        R = jax.scipy.linalg.expm(Q * 0.5)
        return jnp.sum(P_ * R) + jnp.sum(jax.scipy.special.hyp1f1(1.0, 2.0, theta))

    with jax.enable_x64(True):
        np.testing.assert_allclose(
            s2s.grad(P.matrix_exponential, backend=backend)(theta, 1.5),
            jax.grad(twin)(theta),
            rtol=1e-6,
        )
        thetas = np.stack([theta, 0.5 * theta])
        np.testing.assert_allclose(
            s2s.vmap(s2s.grad(P.matrix_exponential), (0, None), backend=backend)(
                thetas, 1.5
            ),
            jax.vmap(jax.grad(twin))(thetas),
            rtol=1e-6,
        )
