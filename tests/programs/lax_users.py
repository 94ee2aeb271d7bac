"""``jax.lax`` control flow written by hand, the way the JAX documentation writes it.

Each function is valid JAX: ``tests/test_lax_control.py`` calls ``jax.grad``, ``jax.jvp`` and
``jax.vmap`` on it directly as the oracle for s2s's transformations of the same source. Where JAX
itself cannot reverse-differentiate (``lax.while_loop``, ``lax.fori_loop`` with bounds known only
at run time), the oracle is JAX's forward mode. The spellings vary on purpose: ``from jax import
lax``, ``import jax.lax as jlax``, ``jax.lax.scan``, ``from jax.lax import ...``.
"""

import operator
from functools import partial

import jax
import jax.lax as jlax
import jax.numpy as jnp
from jax import lax
from jax.lax import fori_loop
from jax.lax import scan as lax_scan

DT = 0.05

# --- lax.scan: recurrent networks, cumulative sums, stacked layers ---------------------------


def rnn_loss(params, xs, targets):
    """An Elman RNN over a sequence; the step closes over ``params``."""

    def step(h, x):
        h = jnp.tanh(params["W"] @ h + params["U"] @ x + params["b"])
        return h, params["V"] @ h

    h0 = jnp.zeros(params["W"].shape[0])
    _, outputs = lax.scan(step, h0, xs)
    return jnp.mean((outputs - targets) ** 2)


def two_sequences(params, xs, targets):
    """A function of the program that uses ``lax.scan``, called twice (forwards and backwards in time)."""
    return rnn_loss(params, xs, targets) + rnn_loss(params, xs[::-1], targets)


def cumulative_sum(x):
    """``jnp.cumsum`` as a scan: the carry is the running total, each output the total so far."""
    total, sums = lax.scan(lambda c, v: (c + v, c + v), 0.0, x)
    return jnp.sum(sums**2) + total


def discounted_returns(rewards, gamma):
    """Returns ``G_t = r_t + gamma * G_{t+1}``, computed from the last step with ``reverse=True``."""

    def backup(g, r):
        g = r + gamma * g
        return g, g

    _, returns = lax.scan(backup, 0.0, rewards, reverse=True)
    return jnp.sum(returns * jnp.arange(1.0, rewards.shape[0] + 1.0))


def iterated_map(W, h0):
    """No sequence, only a number of steps: ``xs=None`` with ``length``."""

    def step(h, _):
        h = jnp.tanh(W @ h)
        return h, jnp.sum(h)

    h, trace = lax.scan(step, h0, None, length=6)
    return jnp.sum(trace) + jnp.sum(h**2)


def sigmoid(z):
    return 1.0 / (1.0 + jnp.exp(-z))


def lstm_loss(params, xs):
    """An LSTM whose carry is a dict of ``h`` and ``c``."""

    def cell(state, x):
        z = params["Wx"] @ x + params["Wh"] @ state["h"]
        i, f, o, g = jnp.split(z, 4)
        c = sigmoid(f) * state["c"] + sigmoid(i) * jnp.tanh(g)
        h = sigmoid(o) * jnp.tanh(c)
        return {"h": h, "c": c}, h

    n = params["Wh"].shape[1]
    state, hs = lax.scan(cell, {"h": jnp.zeros(n), "c": jnp.zeros(n)}, xs)
    return jnp.sum(hs**2) + jnp.sum(state["c"])


def deep_tanh(Ws, bs, x):
    """An MLP whose layers are the scanned sequence: ``xs`` is the tuple of stacked weights."""

    def layer(h, wb):
        W, b = wb
        return jnp.tanh(h @ W + b), None

    h, _ = lax.scan(layer, x, (Ws, bs))
    return jnp.sum(h**2)


def regression_steps(w, data):
    """``xs`` a dict of sequences stepped together; the outputs a tuple."""

    def step(w, example):
        pred = example["x"] @ w
        err = pred - example["y"]
        w = w - 0.1 * err * example["x"]
        return w, (err**2, pred)

    w, (losses, preds) = lax.scan(step, w, {"x": data["x"], "y": data["y"]})
    return jnp.sum(losses) + jnp.sum(preds) + jnp.sum(w**2)


def rnn_cell(params, h, x):
    """A step defined at module level, bound to its parameters with ``functools.partial``."""
    h = jnp.tanh(params[0] @ h + params[1] @ x)
    return h, jnp.sum(h)


def partial_rnn(params, xs):
    h, ys = lax.scan(partial(rnn_cell, params), jnp.zeros(3), xs)
    return jnp.sum(ys) + jnp.sum(h)


def accumulate(carry, x):
    """A module-level scan body, the carry a tuple."""
    total, weighted = carry
    return (total + x, weighted + total * x), total


def module_level_body(xs):
    (total, weighted), partials = jax.lax.scan(accumulate, (0.0, 0.0), xs)
    return weighted + jnp.sum(jnp.sin(partials)) + total


def scan_grid(a, xs):
    """A scan inside a scan: each row scanned, the rows' results scanned again."""

    def inner(c, x):
        c = jnp.sin(c * a + x)
        return c, c

    def outer(c, row):
        last, values = lax_scan(inner, c, row)
        return last, jnp.sum(values)

    c, sums = lax_scan(outer, 0.5, xs)
    return c + jnp.sum(sums**2)


def unrolled_product(x):
    """``unroll`` changes how XLA compiles the loop, not what it computes."""
    p, prods = lax.scan(lambda p, v: (p * v, p), 1.0, x, unroll=2)
    return p + jnp.sum(prods)


def scan_with_length(xs):
    """``length`` given with ``xs`` (they agree)."""
    c, ys = lax.scan(
        lambda c, x: (c * 0.5 + x, c), jnp.zeros(2), xs, length=xs.shape[0]
    )
    return jnp.sum(ys**2) + jnp.sum(c)


def no_outputs(w, xs):
    """A step that outputs nothing: ``return carry, None``."""

    def step(c, x):
        return c + jnp.tanh(w * x), None

    c, _ = lax.scan(step, jnp.zeros_like(w), xs)
    return jnp.sum(c**2)


# --- lax.map --------------------------------------------------------------------------------


def per_example_loss(w, xs):
    """``lax.map`` of a per-example function."""

    def loss(x):
        return jnp.sum(jnp.tanh(w @ x) ** 2)

    return jnp.mean(lax.map(loss, xs))


def map_an_op(xs):
    """``lax.map`` of a ``jax.numpy`` function itself."""
    return jnp.sum(lax.map(jnp.tanh, xs) ** 2)


def map_pairs(w, xs):
    """``lax.map`` whose function returns a tuple: the outputs are stacked leaf by leaf."""
    first, second = lax.map(
        lambda x: (jnp.sin(x * w), jnp.sum(x) * w), xs, batch_size=2
    )
    return jnp.sum(first) + jnp.sum(second**2)


# --- lax.fori_loop --------------------------------------------------------------------------


def lotka_volterra(theta, y0):
    """An ODE integrated with explicit Euler steps in ``fori_loop``."""
    alpha, beta, delta, gamma = theta[0], theta[1], theta[2], theta[3]

    def euler(i, y):
        prey, predator = y[0], y[1]
        dy = jnp.stack(
            [
                alpha * prey - beta * prey * predator,
                delta * prey * predator - gamma * predator,
            ]
        )
        return y + DT * dy

    y = fori_loop(0, 40, euler, y0)
    return jnp.sum(y**2)


def damped_oscillator(k, state):
    """A tuple carry; the loop index is used in the body."""

    def body(i, s):
        x, v = s
        a = -k * x - 0.1 * v + 0.01 * jnp.sin(i * 1.0)
        return (x + DT * v, v + DT * a)

    x, v = jlax.fori_loop(0, 30, body, state, unroll=True)
    return jnp.sum(x**2 + v**2)


def power_iteration(A, v):
    """``fori_loop`` written with a lambda."""
    v = lax.fori_loop(0, 8, lambda i, v: A @ v / jnp.linalg.norm(A @ v), v)
    return v @ A @ v


def data_dependent_steps(x, scale):
    """Bounds known only at run time (JAX makes this a ``while_loop``, which it cannot reverse)."""
    n = jnp.sum(x > 0)
    return lax.fori_loop(0, n, lambda i, acc: acc * scale + jnp.sum(x) * i, 1.0)


# --- lax.while_loop -------------------------------------------------------------------------


def newton_sqrt(a):
    """Newton's method for ``sqrt(a)`` until it converges."""

    def cond_fun(state):
        x, i = state
        return jnp.logical_and(jnp.abs(x * x - a) > 1e-10, i < 50)

    def body_fun(state):
        x, i = state
        return (x - (x * x - a) / (2.0 * x), i + 1)

    x, _ = lax.while_loop(cond_fun, body_fun, (a, 0))
    return x


def descent_until_small(A, b):
    """Gradient descent on a quadratic until the step is small; the gradient is taken with respect to ``A``."""

    def cond_fun(x):
        return jnp.sum((A @ x - b) ** 2) > 1e-3

    def body_fun(x):
        return x - 0.1 * (A.T @ (A @ x - b))

    x = lax.while_loop(cond_fun, body_fun, jnp.zeros_like(b))
    return jnp.sum(x**2)


def halving(x):
    """A ``while_loop`` with lambdas: halve until below one."""
    return lax.while_loop(
        lambda v: jnp.max(jnp.abs(v)) > 1.0, lambda v: v * 0.5, x
    ).sum()


# --- lax.cond and lax.switch ----------------------------------------------------------------


def relu_or_square(x, y):
    """``lax.cond`` with two operands."""
    return lax.cond(
        jnp.sum(x) > 0,
        lambda a, b: jnp.sum(jnp.maximum(a, 0.0) * b),
        lambda a, b: jnp.sum(a**2 - b),
        x,
        y,
    )


def keyword_operand(x):
    """The single operand passed as ``operand=``."""

    def big(v):
        return jnp.log1p(v**2)

    def small(v):
        return 0.5 * v**2

    return jnp.sum(lax.cond(jnp.max(jnp.abs(x)) > 1.0, big, small, operand=x))


def closure_branches(x, w):
    """Branches that take no operands and read the function's values."""
    z = jnp.dot(w, x)
    return lax.cond(z > 0.0, lambda: z * jnp.sum(x), lambda: jnp.sin(z))


def pick_a_value(x, w):
    """Branches that return values of the function as they are."""
    a = jnp.sin(x)
    b = w * x
    return jnp.sum(lax.cond(jnp.sum(x) > 0, lambda: a, lambda: b) ** 2)


def piecewise(x):
    """``lax.switch`` on an index computed from the data: three pieces of a function."""
    index = jnp.sum(x > -1.0) + jnp.sum(x > 1.0)
    return lax.switch(
        index // x.shape[0],
        [
            lambda v: jnp.sum(v**2),
            lambda v: jnp.sum(jnp.sin(v)),
            lambda v: jnp.sum(jnp.exp(-v)),
        ],
        x,
    )


def clamped_switch(x):
    """The index clamped as JAX clamps it: 7 picks the last branch, -3 the first."""

    def double(v):
        return 2.0 * v

    def cube(v):
        return v**3

    return jnp.sum(lax.switch(7, [double, cube], x)) + jnp.sum(
        lax.switch(-3, (double, cube), x)
    )


def conv_layer(w, x):
    """``lax.conv_general_dilated`` (a JAX CNN's layer): JAX's own function, called as library code is."""
    y = lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")
    )
    return jnp.sum(jnp.tanh(y) ** 2)


def pooled_conv_layer(w, x):
    """A JAX CNN's layer with pooling by hand: ``lax.reduce_window`` with ``lax.max`` and ``lax.add``, JAX's own
    reductions (its code tells them by identity), called as library code is."""
    y = jnp.tanh(
        lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")
        )
    )
    window = (1, 1, 2, 2)
    peak = lax.reduce_window(y, -jnp.inf, lax.max, window, window, "VALID")
    mean = lax.reduce_window(y, 0.0, lax.add, window, window, "VALID") / 4.0
    return jnp.sum(peak**2) + jnp.sum(jnp.sin(mean))


def listwise_ranking(s):
    """``lax.cumlogsumexp`` of scores in reverse (a Plackett-Luce likelihood)."""
    return jnp.sum(lax.cumlogsumexp(s[::-1])[::-1] - s)


PIECES = [jnp.tanh, jax.nn.relu, jax.nn.softplus]


def switch_over_a_module_list(x):
    """``lax.switch(i, PIECES, x)``: the branches a module-level list of functions."""
    index = jnp.sum(x > 0.0) % 3
    return jnp.sum(lax.switch(index, PIECES, x) ** 2)


def switch_over_made_branches(x):
    """``lax.switch`` over lambdas a comprehension makes, each capturing its count by a default
    (``lambda v, k=k: ...``)."""
    branches = [lambda v, k=k: jnp.sin((k + 1.0) * v) for k in range(3)]
    index = jnp.sum(x > 0.0) % 3
    return jnp.sum(lax.switch(index, branches, x) ** 2)


def scan_in_cond(x, flag):
    """A scan inside one branch of a cond."""

    def running(v):
        _, sums = lax.scan(lambda c, e: (c + e, jnp.tanh(c + e)), 0.0, v)
        return jnp.sum(sums)

    return lax.cond(flag > 0, running, lambda v: jnp.sum(v**3), x)


def switch_in_scan(xs):
    """Each step picks its update by its index."""

    def step(c, ix):
        i, x = ix
        c = lax.switch(
            i % 3, [lambda v: v + x, lambda v: v * jnp.cos(x), lambda v: v - x**2], c
        )
        return c, c

    c, cs = lax.scan(step, 1.0, (jnp.arange(xs.shape[0]), xs))
    return c + jnp.sum(cs)


def while_in_scan(ts):
    """A Newton solve for each step of a scan."""

    def solve(t):
        def body(s):
            return s - (s**3 + s - t) / (3.0 * s**2 + 1.0)

        return lax.while_loop(lambda s: jnp.abs(s**3 + s - t) > 1e-9, body, t)

    _, roots = lax.scan(lambda c, t: (c + solve(t), solve(t)), 0.0, ts)
    return jnp.sum(roots**2)


def old_style_cond(x, y):
    """The deprecated ``cond(pred, true_operand, true_fun, false_operand, false_fun)``."""
    return lax.cond(
        jnp.sum(x) > jnp.sum(y),
        x,
        lambda a: jnp.sum(a**2),
        y,
        lambda b: jnp.sum(jnp.sin(b)),
    )


# --- programs s2s refuses, each with a located error ---------------------------------------


def library_function_body(xs):
    """A function from a library s2s does not read, as the scan's body."""
    c, _ = lax.scan(operator.concat, 0.0, xs)
    return c


def function_parameter_body(f, xs):
    c, _ = lax.scan(f, 0.0, xs)
    return c


def reverse_at_run_time(xs, backwards):
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, xs, reverse=backwards)
    return jnp.sum(ys)


def branches_computed(x, fns):
    return lax.switch(0, fns, x)


def unpacked_operands(x, ops):
    return lax.cond(x > 0, lambda a, b: a, lambda a, b: b, *ops)


def xs_none_no_length(c0):
    c, _ = lax.scan(lambda c, _: (c * 2.0, None), c0, None)
    return c


def fixed_point_from_a_number(theta):
    """A fixed point iteration whose carry starts as ``(zeros_like(theta), 1.0)``: the second item, one
    number for every example at the start, is each example's own after a step (``vmap(jvp(...))``).
    """

    def step(carry):
        x, _ = carry
        return jnp.cos(theta * x), x

    x, _ = lax.while_loop(
        lambda c: jnp.abs(c[0] - c[1]) > 1e-9, step, (jnp.zeros_like(theta), 1.0)
    )
    return x


def fixed_point_tangent(theta):
    return jax.jvp(fixed_point_from_a_number, (theta,), (jnp.ones_like(theta),))
