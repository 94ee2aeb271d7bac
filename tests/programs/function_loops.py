"""Functions held in names and in static sequences, as JAX and NumPy programs keep activations and layers.

``tests/test_function_loops.py`` checks every transform of each against JAX's.
"""

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

ACTIVATIONS = (jnp.tanh, jax.nn.softplus, jnp.sin)
SCALES = (lambda z: 2.0 * z, lambda z: z**2)


def dense(x, w):
    return jnp.tanh(x @ w)


def residual(x, w):
    return x + 0.5 * jnp.sin(x @ w)


LAYERS = [dense, residual]


def activations_in_turn(x, w):
    for act in ACTIVATIONS:
        x = act(x @ w)
    return jnp.sum(x**2)


def enumerated_activations(x, w):
    for i, act in enumerate(ACTIVATIONS):
        x = act(x @ w) / (i + 1)
    return jnp.sum(x)


def literal_tuple_of_functions(x, w):
    total = 0.0
    for f in (jnp.sin, jnp.cos, jax.nn.sigmoid):
        total = total + jnp.sum(f(x @ w))
    return total


def layers_from_a_module_list(x, w):
    for layer in LAYERS:
        x = layer(x, w)
    return jnp.mean(x**2)


def chosen_activation(x, w):
    act = jax.nn.gelu
    return jnp.sum(act(x @ w))


def last_activation(x, w):
    return jnp.sum(ACTIVATIONS[-1](x @ w))


def summed_over_functions(x, w):
    return sum(jnp.sum(f(x @ w)) for f in ACTIVATIONS)


def lambdas_in_a_tuple(x, w):
    for scale in SCALES:
        x = scale(x) @ w
    return jnp.sum(x)


class Scaled:
    """A layer object with ``__call__`` (Keras/PyTorch style), its configuration an attribute."""

    def __init__(self, scale, activation=None):
        self.scale, self.activation = scale, activation

    def __call__(self, x, w):
        z = self.scale * (x @ w)
        return jnp.tanh(z) if self.activation == "tanh" else z


OBJECTS = [Scaled(0.5, "tanh"), Scaled(2.0)]


def objects_zipped_with_weights(x, w):
    """``for layer, s in zip(OBJECTS, scales)``: a module list of callable objects beside another list."""
    for layer, s in zip(OBJECTS, [1.0, 0.5]):
        x = s * layer(x, w)
    return jnp.sum(x**2)


def loop_names_read_after_it(x, w):
    """After a loop over functions, its names hold the last step's: the last activation, its index,
    the item zipped with it (read after the loop, and in a branch after it)."""
    for i, act in enumerate(ACTIVATIONS):
        x = act(x @ w)
    for layer, s in zip(LAYERS, [1.0, 0.5]):
        x = s * layer(x, w)
    y = act(x) * i + s
    if x.shape[0] > 1:
        y = y + layer(x, w)
    return jnp.sum(y**2)


def data_zipped_before_functions(x, w):
    """``for s, act in zip(scales, ACTIVATIONS)``: the functions second (optax's ``zip(state, update_fns)``),
    the other sequence an array of the data, as long as the functions (``len`` of them).
    """
    scales = jnp.stack([jnp.mean(x) + k for k in range(len(ACTIVATIONS))])
    for s, act in zip(scales, ACTIVATIONS):
        x = s * act(x @ w)
    return jnp.sum(x**2)


def zipped_with_a_shorter_array(x, w):
    """``zip`` stops at its shortest sequence: two rows for more functions than that."""
    rows = jnp.stack([x[0], x[1]])
    out = x[0]
    for act, r in zip(ACTIVATIONS, rows):
        out = act(out * r)
    return jnp.sum(out**2)


class Block(NamedTuple):
    """A NamedTuple of the program with a method and a field holding a function."""

    scale: float
    act: Callable

    def apply(self, x, w):
        return self.act(self.scale * (x @ w))


BLOCKS = (Block(0.5, jnp.tanh), Block(1.5, jnp.sin))


def namedtuple_blocks_by_method_and_field(x, w):
    """``for block in BLOCKS``: a module tuple of NamedTuples, each read by its method and its function."""
    for block in BLOCKS:
        x = block.apply(x, w) + 0.1 * block.act(x)
    return jnp.sum(x**2)
