"""Registered pytree classes as arguments: ``register_dataclass``, ``register_pytree_node_class`` (the
kinds Flax's ``struct.dataclass`` and Equinox modules are), alone and inside dicts and lists, in every
transform, against JAX."""

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_checks import jvp_of, oracle

import s2s


@partial(jax.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=[])
@dataclass
class Dense:
    w: jax.Array
    b: jax.Array


@jax.tree_util.register_pytree_node_class
class Linear:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def layer_loss(layer, x):
    return jnp.sum(jnp.tanh(x @ layer.w + layer.b) ** 2)


def stack_loss(params, x):
    for layer in params["layers"]:
        x = jnp.tanh(x @ layer.w + layer.b)
    return jnp.sum(x**2) + params["scale"] * jnp.sum(params["layers"][0].w ** 2)


@jax.tree_util.register_pytree_node_class
class Affine(Linear):
    """A registered class with methods: ``layer(x)`` and ``layer.l2()``, read from the source."""

    def __call__(self, x):
        return x @ self.w + self.b

    def l2(self):
        return jnp.sum(self.w**2)


@partial(jax.tree_util.register_dataclass, data_fields=["layers"], meta_fields=["act"])
@dataclass
class Stack:
    """Equinox's way: a module holding a list of modules, and a static field its ``__call__`` tests."""

    layers: list
    act: str = "tanh"

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = jnp.tanh(layer(x)) if self.act == "tanh" else jax.nn.relu(layer(x))
        return self.layers[-1](x)

    def penalty(self):
        return sum(layer.l2() for layer in self.layers)


def model_loss(model, x):
    """The model called, and a method of it: ``loss(model, x)`` of the JAX and Equinox tutorials."""
    return jnp.sum(jnp.sin(model(x)) ** 2) + 0.1 * model.penalty()


def layers_loss(layers, x):
    """A list of modules as the argument, each called in a loop and read by its index."""
    for layer in layers:
        x = jnp.tanh(layer(x))
    return jnp.sum(x**2) + 0.1 * sum(layers[i].l2() for i in range(len(layers)))


class Scaled(NamedTuple):
    """A ``NamedTuple`` with methods and a property (a pytree of its fields, read as an object)."""

    w: jax.Array
    b: jax.Array

    def __call__(self, x):
        return x @ self.w + self.b

    def l2(self):
        return jnp.sum(self.w**2)

    @property
    def size(self):
        return self.w.shape[1]


def layers_loss_of_named_tuples(layers, x):
    for layer in layers:
        x = jnp.tanh(layer(x))
    return jnp.sum(x**2) + 0.1 * layers[0].l2()


def named_tuple_loss(layer, x):
    return jnp.sum(jnp.tanh(layer(x)) ** 2) / layer.size + 0.1 * layer.l2()


RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3))


def _layer(kind, n_in, n_out):
    return kind(RNG.normal(size=(n_in, n_out)) * 0.5, RNG.normal(size=n_out))


CASES = {
    "dataclass": (layer_loss, _layer(Dense, 3, 3)),
    "node class": (layer_loss, _layer(Linear, 3, 3)),
    "list of records in a dict": (
        stack_loss,
        {"layers": [_layer(Linear, 3, 3), _layer(Dense, 3, 2)], "scale": 0.5},
    ),
    "methods of a node class": (
        model_loss,
        Stack([_layer(Affine, 3, 3), _layer(Affine, 3, 3)]),
    ),
    "a module of modules": (
        model_loss,
        Stack([_layer(Affine, 3, 4), _layer(Affine, 4, 4), _layer(Affine, 4, 2)]),
    ),
    "a list of modules": (layers_loss, [_layer(Affine, 3, 4), _layer(Affine, 4, 2)]),
    "a NamedTuple with methods": (named_tuple_loss, _layer(Scaled, 3, 2)),
    "a list of NamedTuples with methods": (
        layers_loss_of_named_tuples,
        [_layer(Scaled, 3, 4), _layer(Scaled, 4, 2)],
    ),
    "a module of modules, another static field": (
        model_loss,
        Stack([_layer(Affine, 3, 4), _layer(Affine, 4, 2)], act="relu"),
    ),
}


def _close(got, want):
    assert jax.tree.structure(got) == jax.tree.structure(want)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("case", list(CASES))
def test_records_in_every_transform(case, backend):
    f, params = CASES[case]
    _close(s2s.grad(f, backend=backend)(params, X), oracle(jax.grad, f)(params, X))
    _close(
        s2s.value_and_grad(f, backend=backend)(params, X),
        oracle(jax.value_and_grad, f)(params, X),
    )
    tangent = jax.tree.map(np.ones_like, params)
    _close(
        s2s.jvp(f, (params, X), (tangent, np.zeros_like(X)), backend=backend),
        oracle(jvp_of, f)((params, X), (tangent, np.zeros_like(X))),
    )
    _close(
        s2s.hessian(f, argnums=1, backend=backend)(params, X),
        oracle(jax.hessian, f, argnums=1)(params, X),
    )
    xs = np.stack([X, 2 * X, -X])
    _close(
        s2s.vmap(s2s.grad(f), in_axes=(None, 0), backend=backend)(params, xs),
        jax.vmap(oracle(jax.grad, f), in_axes=(None, 0))(params, xs),
    )
    batched = jax.tree.map(lambda leaf: np.stack([leaf, 2 * leaf, -leaf]), params)
    _close(
        s2s.vmap(f, in_axes=(0, None), backend=backend)(batched, X),
        oracle(jax.vmap, f, in_axes=(0, None))(batched, X),
    )


def test_the_gradient_of_a_record_is_a_record_of_its_class():
    g = s2s.grad(layer_loss)(CASES["dataclass"][1], X)
    assert isinstance(g, Dense)
    g = s2s.grad(stack_loss)(CASES["list of records in a dict"][1], X)
    assert [type(layer) for layer in g["layers"]] == [Linear, Dense]


@jax.tree_util.register_pytree_node_class
class Scaled:
    """Flattens to a value computed from its attribute: ``.w`` is not one of its children."""

    def __init__(self, w):
        self.w = w

    def tree_flatten(self):
        return (self.w * 1.0,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def scaled_loss(p, x):
    return jnp.sum(x @ p.w)


def test_an_attribute_that_is_no_child_is_an_error_that_says_what_to_do():
    with pytest.raises(Exception, match="register_dataclass"):
        s2s.grad(scaled_loss, backend="numpy")(Scaled(np.ones((3, 2))), X)


@jax.tree_util.register_pytree_node_class
class Boxed:
    """The JAX documentation's registered class: its scale kept in the aux data, no child."""

    def __init__(self, a, scale=2.0):
        self.a = a
        self.scale = scale

    def tree_flatten(self):
        return (self.a,), (self.scale,)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)


def boxed_loss(box, x):
    return jnp.sum(jnp.tanh(box.a * x)) * box.scale


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_an_attribute_in_the_aux_data_is_read_with_the_code(backend):
    box = Boxed(RNG.normal(size=3), 3.0)
    x = RNG.normal(size=3)
    got = s2s.grad(boxed_loss, backend=backend)(box, x)
    want = oracle(jax.grad, boxed_loss)(box, x)
    _close(got, want)
    assert got.scale == 3.0
    _close(
        s2s.grad(boxed_loss, argnums=1, backend=backend)(box, x),
        oracle(jax.grad, boxed_loss, argnums=1)(box, x),
    )
