"""Lists of objects of your classes made in the function (``frontend/object_lists``): every transform,
both backends, against ``jax.numpy`` twins and float64 finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from programs import object_lists as P

import s2s

jax.config.update("jax_enable_x64", True)

BACKENDS = ("numpy", "xla")


def twin_mlp(params, X, y, weight_decay=1e-3):
    (W1, b1), (W2, b2), (W3, b3) = params
    h = jnp.tanh(jnp.maximum(X @ W1 + b1, 0) @ W2 + b2)
    pred = (h @ W3 + b3)[:, 0]
    reg = sum(jnp.sum(W**2) for W, _ in params)
    return jnp.mean((pred - y) ** 2) + weight_decay * reg


def twin_records(params, X, y):
    for (W, b), scale in zip(params, (1.0, 0.5, 1.0)):
        X = jnp.tanh(X @ W + b) * scale
    return jnp.mean((X[:, 0] - y) ** 2) / 10 + 0.03


def twin_sliced(params, X, y):
    (W1, b1), (W2, b2), (W3, b3) = params
    pred = (jnp.tanh(jnp.tanh(X @ W1 + b1) @ W2 + b2) @ W3 + b3)[:, 0]
    decay = jnp.sum(W3**2) + jnp.sum(W2**2)
    return jnp.mean((pred - y) ** 2) + 1e-3 * decay + 0.01 * jnp.sum(W1**2)


def twin_base_init(params, X, y):
    for (W, _), scale in zip(params, (1.0, 0.5, 2.0)):
        X = jnp.tanh(X @ W) * scale
    return jnp.mean((X[:, 0] - y) ** 2)


def _close(got, want):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "f, twin",
    [
        (P.mlp_loss, twin_mlp),
        (P.records_loss, twin_records),
        (P.sliced_layers_loss, twin_sliced),
        (P.base_init_in_a_list, twin_base_init),
    ],
    ids=["mlp", "records", "sliced", "base init"],
)
def test_a_list_of_layer_objects_matches_jax(f, twin, backend):
    params, X, y = P.inputs()
    _close(s2s.transform(f, backend=backend)(params, X, y), f(params, X, y))
    _close(s2s.grad(f, backend=backend)(params, X, y), jax.grad(twin)(params, X, y))
    tangents = jax.tree.map(np.ones_like, params)
    _close(
        s2s.jvp(
            f,
            (params, X, y),
            (tangents, np.zeros_like(X), np.zeros_like(y)),
            backend=backend,
        ),
        jax.jvp(lambda p: twin(p, X, y), (params,), (tangents,)),
    )
    Xs, ys = np.stack([X, 0.5 * X]), np.stack([y, -y])
    _close(
        s2s.vmap(s2s.grad(f), in_axes=(None, 0, 0), backend=backend)(params, Xs, ys),
        jax.vmap(jax.grad(twin), in_axes=(None, 0, 0))(params, Xs, ys),
    )


def test_the_objects_are_tuples_their_loops_unpack():
    text = s2s.transform(P.mlp_loss).source
    assert "layer_W, layer_b, layer_activation = item" in text
    assert "(W_2, b_2, act)" in text  # an item: the attributes ``__init__`` assigns


def test_a_list_handed_on_whole_stays_a_located_error():
    params, X, y = P.inputs()
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(P.passed_on)(params, X, y)
    assert "object_lists.py" in str(info.value)


def test_an_attribute_written_in_the_loop_stays_a_located_error():
    params, X, y = P.inputs()
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(P.updated_in_the_loop)(params, X, y)
    assert "object_lists.py" in str(info.value)
