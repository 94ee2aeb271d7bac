"""``jax.tree_util`` calls on the differentiated path, in the styles of the JAX docs and optax (issue 13).

Each ``name`` has ``inputs_name()``; the test differentiates with respect to
the first input and checks against ``jax.grad`` of the same function.
"""

import functools
import operator
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import tree_util
from jax.flatten_util import ravel_pytree


def _dict_params(seed=0):
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)
    params = {
        "w2": jax.random.normal(k1, (3, 2)),
        "b2": jnp.zeros(2) + 0.1,
        "w1": jax.random.normal(k2, (2, 3)),
    }
    return params, jax.random.normal(k3, (4, 2))


def _forward(params, x):
    h = jnp.tanh(x @ params["w1"])
    return h @ params["w2"] + params["b2"]


def l2_by_tree_leaves(params, x):
    """The JAX tutorials' weight decay: ``sum(jnp.sum(p ** 2) for p in tree_leaves(params))``."""
    decay = sum(jnp.sum(p**2) for p in jax.tree_util.tree_leaves(params))
    return jnp.mean(_forward(params, x) ** 2) + 1e-2 * decay


def l2_by_tree_map(params, x):
    """``tree_map`` to per-leaf norms, then ``sum`` of their leaves."""
    norms = jax.tree_util.tree_map(lambda p: jnp.sum(p**2), params)
    return jnp.mean(_forward(params, x)) + sum(jax.tree_util.tree_leaves(norms))


def _sgd(p, g):
    return p - 0.1 * g


def one_sgd_step_then_loss(params, x):
    """A meta-learning loss: one inner SGD step by ``tree_map`` of two trees, then the loss."""
    grads = jax.tree_util.tree_map(lambda p: 0.5 * p, params)
    inner = jax.tree_util.tree_map(_sgd, params, grads)
    return jnp.sum(_forward(inner, x) ** 2)


def scaled_by_a_closure(params, x):
    """A lambda closing over a local value, through ``jax.tree.map``."""
    scale = jnp.mean(x) + 2.0
    scaled = jax.tree.map(lambda p: p * scale, params)
    return jnp.sum(_forward(scaled, x))


def list_of_pairs(layers, x):
    """A list of ``(W, b)`` tuples mapped leaf by leaf."""
    halved = tree_util.tree_map(lambda p: p / 2.0, layers)
    for W, b in halved:
        x = jnp.tanh(x @ W + b)
    return jnp.sum(x**2)


class Layer(NamedTuple):
    w: jnp.ndarray
    b: jnp.ndarray


def namedtuple_layers(layer, x):
    """A NamedTuple's fields, mapped; the result is a NamedTuple."""
    moved = jax.tree_util.tree_map(lambda p, q: p + 0.1 * q, layer, layer)
    return jnp.sum(jnp.tanh(x @ moved.w + moved.b))


def ravel_then_unravel(params, x):
    """The flatten utility: the parameters as one vector (an L2 on it), and a step on it read back."""
    flat, unravel = ravel_pytree(params)
    moved = unravel(flat - 0.1 * jnp.tanh(flat))
    return jnp.sum(_forward(moved, x) ** 2) + 1e-2 * jnp.dot(flat, flat)


def ravel_in_a_local_function(params, x):
    """``unravel`` called by a local function of the flat vector (the usual way to a flat Hessian)."""
    flat, unravel = ravel_pytree(params)

    def loss_of_flat(v):
        return jnp.sum(_forward(unravel(v), x))

    return loss_of_flat(flat * 2.0) + jnp.sum(flat[:3])


def sgd_steps_in_a_compiled_loop(params, x):
    """Several inner SGD steps, each a ``tree_map`` over leaves of different shapes, in a ``for`` loop
    and in a ``lax.fori_loop`` (the inner loop's items are residuals of the compiled outer one).
    """
    for _ in range(3):
        grads = jax.tree_util.tree_map(lambda p: 0.1 * p, params)
        params = jax.tree_util.tree_map(lambda p, g: p - g, params, grads)
    shrunk = jax.lax.fori_loop(
        0, 2, lambda i, p: jax.tree_util.tree_map(lambda a: a * 0.9, p), params
    )
    return jnp.sum(_forward(shrunk, x) ** 2)


class AdamState(NamedTuple):
    mu: dict
    nu: dict
    count: float = 0.0


def _adam_step(params, grads, state, lr=0.1, b1=0.9, b2=0.99, eps=1e-8):
    mu = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state.mu, grads)
    nu = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g**2, state.nu, grads)
    count = state.count + 1.0
    step = jax.tree_util.tree_map(
        lambda m, v: lr * (m / (1 - b1**count)) / (jnp.sqrt(v / (1 - b2**count)) + eps),
        mu,
        nu,
    )
    new = jax.tree_util.tree_map(lambda p, s: p - s, params, step)
    return new, AdamState(mu, nu, count=count)


def adam_state_as_a_namedtuple(params, x):
    """optax-style Adam written by hand: its state a NamedTuple made in the function, then
    ``_replace``-d; the loss after two steps (the meta-gradient of an unrolled optimizer).
    """
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = AdamState(mu=zeros, nu=zeros)
    for _ in range(2):
        grads = jax.tree_util.tree_map(lambda p: 0.5 * p, params)
        params, state = _adam_step(params, grads, state)
    state = state._replace(count=state.count * 2.0)
    return jnp.sum(_forward(params, x) ** 2) + state.count * jnp.sum(state.nu["w1"])


class Stats(NamedTuple):
    mean: jnp.ndarray
    var: jnp.ndarray


def moments(x):
    m = jnp.mean(x)
    return Stats(m, jnp.mean((x - m) ** 2))


def moments_loss(x):
    """A NamedTuple made by a helper, ``_replace``-d, read by field."""
    s = moments(x)
    s = s._replace(var=s.var + 1.0)
    return s.mean * s.var


def scalar_leaves_beside_batched(x):
    """Trees holding a per-example value beside leaves that are not (a bias ``jnp.zeros(())``, a ``0.0``),
    nested: under ``vmap`` every leaf of the tree carries the batch axis."""
    leaves = jax.tree_util.tree_leaves([[jnp.sum(x), 0.0]])
    terms = {"o": {"w": jnp.sum(x**2), "b": jnp.zeros(())}}
    return (
        leaves[0] * leaves[1] + leaves[0] + tree_util.tree_reduce(operator.add, terms)
    )


def flatten_then_unflatten(params, x):
    """``tree_flatten``/``tree_unflatten`` and ``tree_structure``, as library code rebuilds trees."""
    leaves, treedef = jax.tree_util.tree_flatten(params)
    scaled = [0.9 * leaf for leaf in leaves]
    params = jax.tree_util.tree_unflatten(treedef, scaled)
    structure = jax.tree.structure(params)
    again = jax.tree.unflatten(structure, jax.tree_util.tree_leaves(params))
    return jnp.sum(_forward(again, x) ** 2) + sum(jnp.sum(leaf**2) for leaf in leaves)


def reduced_by_tree_reduce(params, x):
    """``tree_reduce`` with a lambda, ``operator.add`` and an initializer, as L2 penalties are written."""
    squares = jax.tree_util.tree_map(lambda p: jnp.sum(p**2), params)
    penalty = jax.tree_util.tree_reduce(lambda a, b: a + b, squares)
    product = jax.tree.reduce(operator.mul, squares, 1.0)
    return jnp.sum(_forward(params, x) ** 2) + penalty + 0.01 * product


def chained_by_functools_reduce(params, x):
    """``functools.reduce`` of matrix products (``reduce(jnp.dot, mats)``) and of a lambda with a start."""
    mats = [params["w1"], params["w2"], params["w2"].T]
    chained = functools.reduce(jnp.dot, mats)
    total = functools.reduce(lambda acc, v: acc + jnp.sum(v * x[0, 0]), mats, 0.0)
    return jnp.sum(jnp.tanh(x @ chained)) + total


def _inputs_dict():
    return _dict_params()


def _inputs_layers():
    params, x = _dict_params(1)
    w1 = params["w1"]
    return [(w1, 0.1 * jnp.ones(3)), (w1.T @ w1, params["b2"][0] * jnp.ones(3))], x


def _inputs_namedtuple():
    params, x = _dict_params(2)
    return Layer(params["w1"], jnp.ones(3)), x


_, UNRAVEL = ravel_pytree(_dict_params()[0])


def flat_objective_unraveled_at_module_level(flat, x):
    """k10: ``_, unravel = ravel_pytree(INIT)`` at module level (JAX's closure over the tree's structure),
    the objective a function of the flat vector (hand-rolled HMC or VI), a log density from
    ``jax.scipy.stats`` updated by ``+=`` while its operand is read later."""
    params = UNRAVEL(flat)
    mu = params["b2"]
    lp = jax.scipy.stats.norm.logpdf(mu, 0.0, 5.0)
    lp += jnp.sum(_forward(params, x) ** 2)
    return jnp.sum(lp * mu) + jnp.sum(mu)


def _inputs_flat():
    params, x = _dict_params()
    return ravel_pytree(params)[0], x


def decay_masked_by_path(params, x):
    """optax's weight-decay mask: ``tree_map_with_path`` reading each leaf's key (biases left out)."""
    mask = jax.tree_util.tree_map_with_path(
        lambda path, _: path[-1].key[0] == "w", params
    )

    def decayed(path, p):
        return 0.01 * jnp.sum(p**2) if path[-1].key.startswith("w") else 0.0

    penalty = sum(
        jax.tree_util.tree_leaves(jax.tree_util.tree_map_with_path(decayed, params))
    )
    return (
        jnp.sum(_forward(params, x) ** 2) + penalty + jnp.sum(params["w1"] * mask["w1"])
    )


def decay_masked_by_keystr(params, x):
    """The same mask read from each path's text (``jax.tree_util.keystr``), as optax's examples write it."""

    def decayed(path, p):
        return 0.0 if "b" in jax.tree_util.keystr(path) else 0.01 * jnp.sum(p**2)

    penalty = sum(
        jax.tree_util.tree_leaves(jax.tree_util.tree_map_with_path(decayed, params))
    )
    return jnp.sum(_forward(params, x) ** 2) + penalty


def rebuilt_by_the_treedefs_methods(params, x):
    """``treedef.unflatten(leaves)`` and ``treedef.num_leaves``, as optax and flax write them."""
    leaves, treedef = jax.tree_util.tree_flatten(params)
    scaled = [leaf / treedef.num_leaves for leaf in leaves]
    return jnp.sum(_forward(treedef.unflatten(scaled), x) ** 2)


PROGRAMS = {
    "decay_masked_by_path": _inputs_dict,
    "rebuilt_by_the_treedefs_methods": _inputs_dict,
    "decay_masked_by_keystr": _inputs_dict,
    "l2_by_tree_leaves": _inputs_dict,
    "l2_by_tree_map": _inputs_dict,
    "one_sgd_step_then_loss": _inputs_dict,
    "scaled_by_a_closure": _inputs_dict,
    "list_of_pairs": _inputs_layers,
    "namedtuple_layers": _inputs_namedtuple,
    "ravel_then_unravel": _inputs_dict,
    "ravel_in_a_local_function": _inputs_dict,
    "sgd_steps_in_a_compiled_loop": _inputs_dict,
    "adam_state_as_a_namedtuple": _inputs_dict,
    "flatten_then_unflatten": _inputs_dict,
    "reduced_by_tree_reduce": _inputs_dict,
    "chained_by_functools_reduce": _inputs_dict,
    "flat_objective_unraveled_at_module_level": _inputs_flat,
}


def weighted_by_position(params, x):
    """Leaves weighted by their place in ``tree_leaves``: JAX's order (dict keys sorted) matters."""
    leaves = jax.tree_util.tree_leaves(params)
    return jnp.sum(_forward(params, x)) + sum(
        (i + 1.0) * jnp.sum(leaf) for i, leaf in enumerate(leaves)
    )


def with_is_leaf(params, x):
    mapped = jax.tree_util.tree_map(lambda p: p * 2, params, is_leaf=lambda n: False)
    return jnp.sum(_forward(mapped, x))


def sum_of_an_array(params, x):
    return jnp.sum(sum(params["w1"]))


def ravel_kept_whole(params, x):
    packed = ravel_pytree(params)
    return jnp.sum(packed[0])


def treedef_read_otherwise(params, x):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    return jnp.sum(leaves[0]) * len(treedef.children())
