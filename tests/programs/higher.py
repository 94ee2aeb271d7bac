"""Programs for forward mode, Jacobians, Hessians and custom rules (tests/test_forward_and_higher.py).

Each has a jax.numpy twin in the test (``TWINS``) where JAX can run it.
"""

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
