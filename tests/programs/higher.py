"""Programs for forward mode, Jacobians, Hessians and custom rules (tests/test_forward_and_higher.py).

Each has a jax.numpy twin in the test (``TWINS``) where JAX can run it.
"""

import jax
import jax.numpy as jnp
import numpy as np

import s2s


def rnn(w, x):
    h = np.zeros(3)
    for t in range(x.shape[0]):
        h = np.tanh(w @ h + x[t])
    return np.sum(h**2)


def branchy(x):
    if np.sum(x) > 0:
        y = np.sin(x) * x
    else:
        y = np.cos(x)
    return np.sum(y)


def newton(a):
    x = a
    n = 0
    while n < 8:
        x = 0.5 * (x + a / x)
        n = n + 1
    return np.sum(x**3)


def vector_valued(params, x):
    h = np.tanh(x @ params["w"] + params["b"])
    return {"out": h * 2.0, "norm": np.sum(h**2)}


def with_aux(x):
    y = np.sin(x)
    return np.sum(y * x), y


def shapes(x, y):
    return np.sum(np.outer(x, y) ** 2)


@s2s.custom_jvp
def softplus(x):
    return np.log(1.0 + np.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,) = primals
    (x_dot,) = tangents
    return softplus(x), x_dot / (1.0 + np.exp(-x))


def uses_softplus(x):
    return np.sum(softplus(x) ** 2)


@jax.custom_jvp
def sine_times(x, y):
    return jnp.sin(x) * y


# JAX's ``defjvps``: the output's tangent along each argument (the custom derivatives tutorial's)
sine_times.defjvps(
    lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
    lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot,
)


@s2s.custom_jvp
def clipped_square(x, scale):
    return scale * np.clip(x, -1.0, 1.0) ** 2


# s2s's own ``defjvps``, a ``None`` for an argument without a tangent
clipped_square.defjvps(lambda t, out, x, scale: 2.0 * scale * x * t, None)


def _cosine_times(x, t):
    return np.cos(x) * t


@jax.custom_jvp
def sine(x):
    return jnp.sin(x)


@sine.defjvp
def sine_jvp(primals, tangents):
    """A rule that calls a helper of its own (transposed with it for reverse mode)."""
    (x,), (t,) = primals, tangents
    return sine(x), _cosine_times(x, t)


def uses_rules_by_argument(x):
    return (
        jnp.sum(sine_times(x, x**2))
        + np.sum(clipped_square(0.5 * x, 3.0))
        + jnp.sum(sine(x) ** 2)
    )


def twin_uses_rules_by_argument(x):
    return (
        jnp.sum(jnp.sin(x) * x**2)
        + jnp.sum(3.0 * (0.5 * x) ** 2)
        + jnp.sum(jnp.sin(x) ** 2)
    )


@s2s.custom_vjp
def scaled(x, k):
    return x * k


def scaled_fwd(x, k):
    return x * k, k


def scaled_bwd(k, g):
    return (g * k, None)


scaled.defvjp(scaled_fwd, scaled_bwd)


def uses_scaled(x):
    return np.sum(np.sin(scaled(x, 3.0)))


@s2s.custom_vjp
def no_rule(x):
    return x


def uses_no_rule(x):
    return np.sum(no_rule(x))


@s2s.custom_vjp
def bad_bwd(x, y):
    return x * y


def bad_bwd_fwd(x, y):
    return x * y, (x, y)


def bad_bwd_bwd(res, g):
    x, y = res
    return (g * y,)


bad_bwd.defvjp(bad_bwd_fwd, bad_bwd_bwd)


def uses_bad_bwd(x, y):
    return np.sum(bad_bwd(x, y))


def unknown_op_sum(x):
    # np.fft.fft has no derivative rule: on the differentiated path it is a located error
    return np.sum(x * np.fft.fft(x).real)
