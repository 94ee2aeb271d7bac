"""Containers of layer objects of different classes (``frontend/object_structures``): every transform,
both backends, against ``jax.numpy`` twins; the containers s2s cannot name stay located errors.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from programs import object_structures as P

import s2s

jax.config.update("jax_enable_x64", True)

BACKENDS = ("numpy", "xla")


def _log_softmax(z):
    return z - jax.scipy.special.logsumexp(z, axis=-1, keepdims=True)


def twin_two_layer_net(params, x, t):
    h = jnp.maximum(x @ params["W1"] + params["b1"], 0)
    y = jax.nn.softmax(h @ params["W2"] + params["b2"], axis=-1)
    decay = 0.5 * 0.01 * (jnp.sum(params["W1"] ** 2) + jnp.sum(params["W2"] ** 2))
    return -jnp.sum(t * jnp.log(y + 1e-7)) / x.shape[0] + decay


def twin_sequential(params, x, t):
    h = jnp.tanh(x @ params["W1"] + params["b1"])
    out = jnp.logaddexp(0.0, h @ params["W2"] + params["b2"])
    return jnp.mean((out - t) ** 2)


def twin_named_blocks(params, x, t):
    h = jnp.tanh(x @ params["W1"] + params["b1"]) * 0.5
    h = h @ params["W2"] + params["b2"]
    penalty = jnp.sum(params["W1"] ** 2) + jnp.sum(params["W2"] ** 2)
    return jnp.mean((h - t) ** 2) + 1e-3 * penalty / 3


def twin_appended_layers(params, x, t):
    h = jnp.tanh(x @ params["W1"] + params["b1"])
    h = jnp.tanh(h @ params["W2"] + params["b2"])
    return jnp.mean((h - t) ** 2) + 0.03


CASES = {
    "two_layer_net": (P.two_layer_net_loss, twin_two_layer_net),
    "sequential": (P.sequential_loss, twin_sequential),
    "named_blocks": (P.named_blocks_loss, twin_named_blocks),
    "appended_layers": (P.appended_layers_loss, twin_appended_layers),
}


def _close(got, want):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_container_of_layers_matches_jax(case, backend):
    f, twin = CASES[case]
    params, x, t = P.inputs()
    _close(s2s.transform(f, backend=backend)(params, x, t), f(params, x, t))
    _close(s2s.grad(f, backend=backend)(params, x, t), jax.grad(twin)(params, x, t))
    tangents = jax.tree.map(np.ones_like, params)
    zeros = (np.zeros_like(x), np.zeros_like(t))
    _close(
        s2s.jvp(f, (params, x, t), (tangents, *zeros), backend=backend),
        jax.jvp(lambda p: twin(p, x, t), (params,), (tangents,)),
    )
    xs, ts = np.stack([x, 0.5 * x]), np.stack([t, t[::-1]])
    _close(
        s2s.vmap(s2s.grad(f), in_axes=(None, 0, 0), backend=backend)(params, xs, ts),
        jax.vmap(jax.grad(twin), in_axes=(None, 0, 0))(params, xs, ts),
    )


def test_layers_appended_per_parameter_are_a_list_of_one_class():
    params, x, t = P.inputs()
    weights = [(params["W1"], params["b1"]), (params["W2"], params["b2"])]

    def twin(weights, x, t):
        for W, b in weights:
            x = jnp.tanh(x @ W + b)
        return jnp.mean((x - t) ** 2)

    for backend in BACKENDS:
        got = s2s.grad(P.per_parameter_layers_loss, backend=backend)(weights, x, t)
        _close(got, jax.grad(twin)(weights, x, t))
    # however many pairs: the list stays a list, its loop a loop
    three = weights[:1] + [(params["W2"], params["b2"]), (np.eye(3), np.zeros(3))]
    _close(
        s2s.grad(P.per_parameter_layers_loss)(three, x, t),
        jax.grad(twin)(three, x, t),
    )


def test_each_object_is_named_and_its_loop_written_out():
    text = s2s.grad(P.two_layer_net_loss).source
    # the ``OrderedDict``'s layers, named by their keys; no loop over them is left
    assert "net_layers_Affine1_W = " in text
    assert "net_layers_Affine2_W = " in text
    assert not re.search(r"^\s*for .* in .*layers", text, re.M)


@pytest.mark.parametrize(
    "f, line",
    [
        (P.passed_on_whole, "layers = [Dense("),
        (P.two_classes_per_parameter, "Affine(W, b)"),
        (P.loop_variable_read_after, "Dense(W, b)"),
        (P.appended_by_a_local_function, "add(Dense("),
    ],
    ids=[
        "passed_on_whole",
        "two_classes_per_parameter",
        "loop_variable_read_after",
        "appended_by_a_local_function",
    ],
)
def test_a_container_s2s_cannot_name_stays_a_located_error(f, line):
    params, x, t = P.inputs()
    if f in (P.two_classes_per_parameter, P.loop_variable_read_after):
        params = [(params["W1"], params["b1"]), (params["W2"], params["b2"])]
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(f)(params, x, t)
    message = str(info.value)
    assert "object_structures.py:" in message
    assert line in message
