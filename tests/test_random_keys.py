"""``jax.random`` inside transformed functions, keys passed in as arguments (``jax.random.PRNGKey`` and typed
``jax.random.key``), in the programs JAX's documentation writes: a VAE's reparameterized loss, dropout,
keys split in a loop. Draws are JAX's own (the same values), carry no derivative through the key and
JAX's through what they are computed from; under ``s2s.vmap`` a batched key draws what ``jax.vmap``
draws. NumPy draws inside a function are refused at the user's line with how to pass a key.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import random
from jax.random import bernoulli
from jax_checks import (
    assert_tree_close,
    check_jvp,
    check_second_order,
    check_value_and_grad,
    check_vmap,
)

import s2s
from s2s.errors import S2SError


def vae_loss(params, x, key):
    """The reparameterization trick: the noise is drawn from the key, the gradient flows through mu and sigma."""
    h = jnp.tanh(x @ params["enc"])
    mu = h @ params["mu"]
    log_sigma = h @ params["log_sigma"]
    eps = jax.random.normal(key, mu.shape)
    z = mu + jnp.exp(log_sigma) * eps
    recon = z @ params["dec"]
    kl = -0.5 * jnp.sum(1.0 + 2.0 * log_sigma - mu**2 - jnp.exp(2.0 * log_sigma))
    return jnp.mean((recon - x) ** 2) + kl / x.shape[0]


def dropout_mlp(w, x, key, rate=0.5):
    h = jnp.tanh(x @ w)
    keep = bernoulli(key, 1.0 - rate, h.shape)
    h = jnp.where(keep, h / (1.0 - rate), 0.0)
    return jnp.sum(h**2)


def noisy_steps(w, h, key):
    """Keys split in a loop, one fresh draw per step; another stream by `fold_in` of the step."""
    for t in range(3):
        key, sub = jax.random.split(key)
        noise = jax.random.normal(sub, h.shape)
        shift = random.uniform(random.fold_in(key, t), (), minval=-0.1, maxval=0.1)
        h = jnp.tanh(h * w + 0.1 * noise + shift)
    return jnp.sum(h**2)


def learned_bounds(w, key):
    """Draws that are functions of parameters: uniform's and truncated_normal's bounds."""
    k1, k2 = jax.random.split(key)
    a = jax.random.uniform(k1, w.shape, minval=-jnp.abs(w), maxval=1.0 + w**2)
    b = jax.random.truncated_normal(k2, -1.0 - w**2, 0.5 + jnp.abs(w))
    return jnp.sum(a * w) + jnp.sum(jnp.sin(b))


def picks(w, key):
    """Permutations and choices pick elements of an array (the gradient goes back to them)."""
    k1, k2, k3, k4 = jax.random.split(key, 4)
    p = jax.random.permutation(k1, w)
    q = jax.random.permutation(k2, jnp.outer(w, w), axis=1, independent=True)
    c = jax.random.choice(k3, w, (3,))
    d = jax.random.choice(k4, w, (2,), replace=False, p=jnp.abs(w) + 0.1)
    i = jax.random.categorical(k1, w)
    n = jax.random.randint(k2, (), 0, w.shape[0])
    g = jax.random.gumbel(k3, w.shape)
    return (
        jnp.sum(p * jnp.arange(w.shape[0]))
        + jnp.sum(q[0] * w)
        + jnp.sum(c**2)
        + jnp.sum(d)
        + w[i]
        + w[n] * jnp.sum(g * w)
    )


def seeded(w, seed):
    """A key made inside from an int seed."""
    key = jax.random.key(seed)
    k1, k2, k3 = jax.random.split(key, 3)
    return (
        jnp.sum(w * jax.random.exponential(key, w.shape))
        + jnp.sum(jax.random.laplace(jax.random.PRNGKey(seed), w.shape) * w)
        # Hutchinson's probes, and heavy-tailed noise
        + jnp.sum(w * jax.random.rademacher(k1, w.shape, dtype=w.dtype) * w)
        + jnp.sum(jax.random.logistic(k2, w.shape) * w)
        + jnp.sum(jnp.tanh(jax.random.cauchy(k3, w.shape)) * w**2)
    )


R = np.random.default_rng(5)


def vae_params():
    return {
        "enc": 0.5 * R.normal(size=(4, 3)),
        "mu": 0.5 * R.normal(size=(3, 2)),
        "log_sigma": 0.3 * R.normal(size=(3, 2)),
        "dec": 0.5 * R.normal(size=(2, 4)),
    }


KEYS = {"PRNGKey": lambda n: jax.random.PRNGKey(n), "key": lambda n: jax.random.key(n)}
CASES = [
    ("vae_loss", vae_loss, lambda k: (vae_params(), R.normal(size=(5, 4)), k), 0),
    ("dropout_mlp", dropout_mlp, lambda k: (R.normal(size=(4, 6)), R.normal(size=(5, 4)), k), 0),
    ("noisy_steps", noisy_steps, lambda k: (R.normal(size=3), R.normal(size=3), k), 0),
    ("learned_bounds", learned_bounds, lambda k: (R.normal(size=4), k), 0),
    ("picks", picks, lambda k: (R.uniform(0.5, 1.0, size=5), k), 0),
]  # fmt: skip
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("kind", sorted(KEYS))
@pytest.mark.parametrize("name, f, make, argnum", CASES, ids=IDS)
def test_value_and_grad_as_jax(name, f, make, argnum, kind):
    check_value_and_grad(f, make(KEYS[kind](1)), argnum)


@pytest.mark.parametrize("name, f, make, argnum", CASES, ids=IDS)
def test_jvp_as_jax(name, f, make, argnum):
    check_jvp(f, make(jax.random.key(2)), np.random.default_rng(6))


@pytest.mark.parametrize(
    "name, f, make, argnum",
    [c for c in CASES if c[0] in ("noisy_steps", "learned_bounds")],
    ids=["noisy_steps", "learned_bounds"],
)
def test_second_order_as_jax(name, f, make, argnum):
    check_second_order(f, make(jax.random.PRNGKey(3)), argnum)


# both kinds of key for two programs, typed keys for the others (the draws are the same functions)
VMAP_CASES = [
    (*case, kind)
    for case in CASES
    for kind in (sorted(KEYS) if case[0] in ("vae_loss", "noisy_steps") else ["key"])
]


@pytest.mark.parametrize(
    "name, f, make, argnum, kind",
    VMAP_CASES,
    ids=[f"{c[0]}-{c[4]}" for c in VMAP_CASES],
)
def test_vmap_with_per_example_keys_as_jax(name, f, make, argnum, kind):
    """Keys from `jax.random.split(key, n)`, one per example: each example draws what `jax.vmap` draws."""
    keys = jax.random.split(KEYS[kind](4), 3)
    args = make(keys)
    in_axes = (None,) * (len(args) - 1) + (0,)
    check_vmap(f, args, in_axes, grad=argnum)


def test_vmap_over_data_and_keys_as_jax():
    params, x = vae_params(), R.normal(size=(3, 5, 4))
    keys = jax.random.split(jax.random.key(5), 3)
    check_vmap(vae_loss, (params, x, keys), (None, 0, 0), grad=0)
    check_vmap(vae_loss, (params, x, jax.random.key(5)), (None, 0, None), grad=0)


def test_key_made_inside_from_a_seed():
    w = R.normal(size=4)
    check_value_and_grad(seeded, (w, 7))
    check_vmap(seeded, (R.normal(size=(3, 4)), np.array([1, 2, 3])), (0, 0), grad=0)


def test_draws_are_compiled_fresh_for_each_key():
    """Under XLA the draw is part of the program (no constant baked in): new keys, new noise."""
    grad = s2s.grad(vae_loss)
    params, x = vae_params(), R.normal(size=(5, 4))
    first = grad(params, x, jax.random.key(0))
    second = grad(params, x, jax.random.key(1))
    assert not np.allclose(first["mu"], second["mu"])
    jaxpr = str(jax.make_jaxpr(grad)(params, x, jax.random.key(0)))
    assert "random_bits" in jaxpr or "threefry" in jaxpr


def test_numpy_backend_returns_numpy_draws():
    w = R.normal(size=4)
    out = s2s.transform(learned_bounds, backend="numpy")(w, jax.random.PRNGKey(0))
    assert isinstance(out, np.ndarray | np.generic | float)
    typed = s2s.transform(noisy_steps, backend="numpy")(w[:3], w[:3], jax.random.key(0))
    assert_tree_close(typed, noisy_steps(jnp.asarray(w[:3]), w[:3], jax.random.key(0)))


# --- what s2s refuses -------------------------------------------------------------------------

rng = np.random.default_rng(0)
state = np.random.RandomState(0)


def numpy_global_draw(x):
    return jnp.sum(x * np.random.normal(size=x.shape))


def generator_draw(x):
    return jnp.sum(x * rng.normal(size=x.shape))


def random_state_draw(x):
    return jnp.sum(x * state.uniform(size=x.shape))


def generator_argument(x, g):
    return jnp.sum(x * g.normal(size=x.shape))


def unsupported_jax_draw(x, key):
    return jnp.sum(x * jax.random.beta(key, 2.0, 3.0, x.shape))


def sharded_draw(x, key):
    return jnp.sum(x * jax.random.normal(key, x.shape, out_sharding=None))


REFUSED = [
    (numpy_global_draw, "`np.random.normal` comes from `numpy.random`", "jax.random"),
    (generator_draw, "`rng.normal()` calls a method of a Generator", "jax.random"),
    (random_state_draw, "calls a method of a RandomState", "jax.random"),
    (generator_argument, "a random draw, if this is a NumPy Generator", "jax.random"),
    (
        unsupported_jax_draw,
        "`jax.random.beta` comes from `jax.random`",
        "split, fold_in, normal",
    ),
    (sharded_draw, "`out_sharding=`", "leave it out"),
]


@pytest.mark.parametrize(
    "f, message, hint", REFUSED, ids=[f.__name__ for f, _, _ in REFUSED]
)
def test_refused_at_the_users_line(f, message, hint):
    with pytest.raises(S2SError) as info:
        s2s.generate(f, ("grad",))
    assert message in info.value.message
    assert hint in info.value.hint
    assert info.value.origin.path == __file__
