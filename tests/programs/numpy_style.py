"""Objectives written the way public NumPy example programs write them (issue 13).

Each ``<name>`` has an ``inputs_<name>()`` giving float64 arguments; the first
argument is differentiated. ``tests/test_numpy_style.py`` checks s2s's gradient
on both backends against central differences of the function itself.
"""

import abc
import functools
import itertools
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import jax
import numpy as np
from scipy.special import logsumexp

import s2s

from . import layer_library
from .layer_library import LibraryDense

LAMBDA = 1e-2


def dict_of_dicts(params, x, y):
    """Layers as a dict of dicts, the head without a bias: regularized over every entry."""
    h = x
    for name in ["layer1", "layer2"]:
        layer = params[name]
        h = np.tanh(h @ layer["W"] + layer["b"])
    out = h @ params["head"]["W"]
    reg = 0.0
    for lname, layer in params.items():
        for pname, value in layer.items():
            reg = reg + np.sum(value**2)
    return np.mean((out[:, 0] - y) ** 2) + LAMBDA * reg


def inputs_dict_of_dicts():
    r = np.random.default_rng(11)
    params = {
        "layer1": {"W": 0.5 * r.normal(size=(3, 4)), "b": 0.1 * r.normal(size=4)},
        "layer2": {"W": 0.5 * r.normal(size=(4, 4)), "b": 0.1 * r.normal(size=4)},
        "head": {"W": 0.5 * r.normal(size=(4, 1))},
    }
    return params, r.normal(size=(5, 3)), r.normal(size=5)


def list_of_dicts_uneven(layers, x):
    """A list of layers, only some with a bias (``"b" in layer``)."""
    h = x
    total = 0.0
    for layer in layers:
        h = h @ layer["W"]
        if "b" in layer:
            h = h + layer["b"]
        h = np.tanh(h)
        total = total + np.sum(layer["W"] ** 2)
    return np.sum(h**2) + LAMBDA * total


def inputs_list_of_dicts_uneven():
    r = np.random.default_rng(12)
    layers = [
        {"W": 0.5 * r.normal(size=(3, 4)), "b": 0.1 * r.normal(size=4)},
        {"W": 0.5 * r.normal(size=(4, 4))},
        {"W": 0.5 * r.normal(size=(4, 2)), "b": 0.1 * r.normal(size=2)},
    ]
    return layers, r.normal(size=(5, 3))


PROGRAMS = ["dict_of_dicts", "list_of_dicts_uneven"]


def l2_generator(params, x, y):
    """A weight-decay term written with a generator expression, layers unpacked in the loop."""
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    penalty = sum(np.sum(W**2) for W, _ in params)
    return np.mean((h[:, 0] - y) ** 2) + LAMBDA * penalty


def inputs_l2_generator():
    r = np.random.default_rng(13)
    params = [(0.5 * r.normal(size=(3, 4)), 0.1 * r.normal(size=4)),
              (0.5 * r.normal(size=(4, 2)), 0.1 * r.normal(size=2))]  # fmt: skip
    return params, r.normal(size=(5, 3)), r.normal(size=5)


def gmm_nll(means, x, log_weights):
    """A Gaussian mixture's negative log-likelihood: per-component terms stacked from a comprehension."""
    terms = np.stack(
        [lw - 0.5 * np.sum((x - m) ** 2, axis=1) for m, lw in zip(means, log_weights)],
        axis=1,
    )
    top = np.max(terms, axis=1, keepdims=True)
    return -np.mean(top[:, 0] + np.log(np.sum(np.exp(terms - top), axis=1)))


def inputs_gmm_nll():
    r = np.random.default_rng(14)
    return (
        r.normal(size=(3, 2)),
        r.normal(size=(6, 2)),
        np.log(np.array([0.2, 0.3, 0.5])),
    )


def nested_comprehension(w, xs):
    """A list of lists from a nested comprehension, a comprehension variable that shadows a name."""
    x = w * 2.0
    pairs = [[np.sum(np.tanh(x * a * b)) for b in xs] for a in xs]
    table = np.array([np.sum(np.cos(w * x)) for x in xs])
    return sum(np.sum(row) for row in pairs) + np.sum(table * x[0])


def inputs_nested_comprehension():
    r = np.random.default_rng(15)
    return r.normal(size=3), [r.normal(size=3) for _ in range(2)]


def builtin_reductions(w, x):
    """Python's ``max``/``min``/``sum`` on values, and ``sum`` of a list display."""
    a = np.sum(np.tanh(w * x))
    b = np.sum(w**2)
    return max(a, b) + min(a, 0.5 * b, 1.0) + sum([a, b, 2.0 * a])


def inputs_builtin_reductions():
    r = np.random.default_rng(16)
    return r.normal(size=4), r.normal(size=4)


PROGRAMS += [
    "l2_generator",
    "gmm_nll",
    "nested_comprehension",
    "builtin_reductions",
]


@dataclass
class Prior:
    """A plain (mutable) dataclass passed as an argument."""

    scale: float


@dataclass(frozen=True)
class FrozenPrior:
    scale: float


def map_objective(w, x, y, prior):
    """A MAP objective reading a configuration object's field."""
    return np.sum((x @ w - y) ** 2) + np.sum(w**2) / (2 * prior.scale**2)


def starred_layers(params, x):
    """``*hidden, last = params`` and ``first, *rest = ...``: a head layer split off the hidden ones."""
    *hidden, last = params
    for W, b in hidden:
        x = np.tanh(x @ W + b)
    W, b = last
    first, *others = [np.sum(x @ W + b), np.sum(W**2), np.sum(b**2)]
    return first + LAMBDA * (others[0] + others[1])


def inputs_starred_layers():
    r = np.random.default_rng(17)
    params = [(0.5 * r.normal(size=(3, 3)), 0.1 * r.normal(size=3)) for _ in range(3)]
    return params, r.normal(size=3)


PROGRAMS += ["starred_layers"]


def halve_until_small(x):
    """Recursion on data: the test is on array values."""
    if np.sum(x) > 1.0:
        return halve_until_small(x / 2)
    return x


def recursion_on_data(x):
    return np.sum(halve_until_small(x) ** 2)


def asserted(w, x):
    """``assert`` on shapes (checked when the function is traced) and on data (checked as it runs)."""
    assert w.ndim == 1, f"w must be a vector, got {w.ndim} dimensions"
    assert x.shape == w.shape
    h = np.tanh(w * x)
    assert np.all(np.isfinite(h)), "h is not finite"
    return np.sum(h**2)


def inputs_asserted():
    r = np.random.default_rng(18)
    return r.normal(size=3), r.normal(size=3)


PROGRAMS += ["asserted"]


def last_layer_outputs(params, x):
    """autograd's ``neural_net``: ``outputs`` first assigned in the loop, the last layer's read after it."""
    for W, b in params:
        outputs = x @ W + b
        x = np.tanh(outputs)
    log_norm = np.log(np.sum(np.exp(outputs), axis=1, keepdims=True))
    return -np.mean(outputs - log_norm)


def inputs_last_layer_outputs():
    r = np.random.default_rng(19)
    params = [(0.5 * r.normal(size=(3, 4)), 0.1 * r.normal(size=4)),
              (0.5 * r.normal(size=(4, 2)), 0.1 * r.normal(size=2))]  # fmt: skip
    return params, r.normal(size=(5, 3))


def advection_mass(u, c):
    """A simulation loop whose diagnostic is assigned on each step and read after the last one."""
    for t in range(4):
        u = u - c * (u - np.roll(u, 1))
        mass = np.sum(u) * (t + 1)
    return mass**2 + np.sum(u**2)


def inputs_advection_mass():
    r = np.random.default_rng(20)
    return r.normal(size=6), 0.3


PROGRAMS += ["last_layer_outputs", "advection_mass"]


def cached_forward(params, x, y):
    """A forward pass that keeps its activations in a ``cache`` dict, item by item (the NumPy model zoo's style)."""
    cache = {}
    cache["z1"] = x @ params["W1"] + params["b1"]
    cache["a1"] = np.tanh(cache["z1"])
    cache["z2"] = cache["a1"] @ params["W2"]
    cache["a2"] = 1.0 / (1.0 + np.exp(-cache["z2"][:, 0]))
    return -np.mean(y * np.log(cache["a2"]) + (1 - y) * np.log(1 - cache["a2"]))


def inputs_cached_forward():
    r = np.random.default_rng(21)
    params = {
        "W1": 0.5 * r.normal(size=(3, 4)),
        "b1": 0.1 * r.normal(size=4),
        "W2": 0.5 * r.normal(size=(4, 1)),
    }
    return params, r.normal(size=(6, 3)), (r.uniform(size=6) > 0.5).astype(float)


def decayed_params(params, x):
    """A dict written in a loop over another's keys (weight decay applied per entry), then read by key."""
    decayed = {}
    for name in params:
        decayed[name] = params[name] * (1.0 - 0.1 * len(name))
    total = 0.0
    for name, value in decayed.items():
        total = total + np.sum(np.sin(x @ value) if value.ndim == 2 else value**2)
    return total


def inputs_decayed_params():
    r = np.random.default_rng(22)
    return {"W": r.normal(size=(3, 2)), "bias": r.normal(size=2)}, r.normal(size=(4, 3))


def replaced_layer(layers, x):
    """A list of the weights with one item replaced (the last layer scaled), then applied in order."""
    scaled = [layers[0], layers[1]]
    scaled[-1] = scaled[-1] * 0.5
    h = x
    for w in scaled:
        h = np.tanh(h @ w)
    return np.sum(h**2)


def inputs_replaced_layer():
    r = np.random.default_rng(23)
    return [r.normal(size=(3, 3)), r.normal(size=(3, 2))], r.normal(size=(4, 3))


PROGRAMS += ["cached_forward", "decayed_params", "replaced_layer"]


def rnn_states_from_h0(params, xs, h0):
    """A list that starts with the initial state; each step reads the last state (``hs[-1]``)."""
    hs = [h0]
    for t in range(xs.shape[0]):
        hs.append(np.tanh(params["W"] @ hs[-1] + params["U"] @ xs[t]))
    H = np.stack(hs)
    return np.sum((H[1:] @ params["V"]) ** 2) + 0.1 * np.sum(H[-1])


def inputs_rnn_states_from_h0():
    r = np.random.default_rng(31)
    params = {
        "W": 0.4 * r.normal(size=(3, 3)),
        "U": 0.4 * r.normal(size=(3, 2)),
        "V": r.normal(size=(3, 2)),
    }
    return params, r.normal(size=(4, 2)), r.normal(size=3)


def lstm_cell_lists(params, xs):
    """Hidden and cell states kept in two lists from their first items; outputs in a third, empty one."""
    hs, cs, outs = [np.zeros(3)], [np.zeros(3)], []
    for x in xs:
        z = params["W"] @ np.concatenate([x, hs[-1]]) + params["b"]
        i, f, o, g = np.split(z, 4)
        c = 1 / (1 + np.exp(-f)) * cs[-1] + 1 / (1 + np.exp(-i)) * np.tanh(g)
        hs.append(np.tanh(c) / (1 + np.exp(-o)))
        cs.append(c)
        outs.append(np.sum(hs[-1] * params["v"]))
    return np.sum(np.array(outs) ** 2) + np.sum(np.stack(cs) ** 2) / len(cs)


def inputs_lstm_cell_lists():
    r = np.random.default_rng(32)
    params = {
        "W": 0.4 * r.normal(size=(12, 5)),
        "b": 0.1 * r.normal(size=12),
        "v": r.normal(size=3),
    }
    return params, r.normal(size=(3, 2))


def trajectory_with_start(x0, dt):
    """A list that starts with the initial point and grows without reading itself in the loop."""
    xs = [x0, x0 * 0.5]
    x = x0
    for _ in range(3):
        x = x + dt * np.sin(x)
        xs.append(x)
    return np.sum(np.vstack(xs) ** 2)


def inputs_trajectory_with_start():
    return np.random.default_rng(33).normal(size=3), 0.1


PROGRAMS += ["rnn_states_from_h0", "lstm_cell_lists", "trajectory_with_start"]


def last_of_empty(x):
    hs = []
    for _ in range(3):
        hs.append(np.tanh(hs[-1] + x))
    return np.sum(np.stack(hs))


def length_read_while_growing(x):
    """The list's length read in a loop over an array's rows: a compiled loop, which has the items only
    after it ends (an error)."""
    hs = [x]
    for v in x:
        hs.append(hs[-1] * len(hs) + v)
    return np.sum(np.stack(hs))


def length_read_while_growing_in_a_range(x):
    """The same over ``range(3)``, known when the code is read: written out (``written_loops``), as JAX's
    tracing writes it."""
    hs = [x]
    for _ in range(3):
        hs.append(np.tanh(hs[-1]) * len(hs))
    return np.sum(np.stack(hs))


def inputs_length_read_while_growing_in_a_range():
    return (np.array([0.3, -0.2, 0.5]),)


PROGRAMS += ["length_read_while_growing_in_a_range"]


def swapped_lists(x):
    """``a, b = [..], [a]`` (the second list holds the old ``a``): not split, so ``b`` is not known as a list."""
    a = x * 2.0
    a, b = [x], [a]
    for _ in range(2):
        b.append(np.sin(b[-1]))
    return np.sum(np.stack(b)) + np.sum(a[0])


# --- functions passed to helpers, and list() / tuple() of parameters --------------------------


def mlp_with_activation(params, x, act=np.tanh):
    """A helper taking its activation, NumPy's by default."""
    for W, b in params[:-1]:
        x = act(x @ W + b)
    W, b = params[-1]
    return x @ W + b


def softplus(z):
    return np.log1p(np.exp(z))


def apply_twice(f, x):
    return f(f(x))


def activations_passed(params, x, y):
    """The default activation, a function of the user's passed by position, a NumPy function by keyword."""
    fit = np.mean((mlp_with_activation(params, x) - y) ** 2)
    smooth = np.mean((mlp_with_activation(params, x, softplus) - y) ** 2)
    wavy = np.mean(mlp_with_activation(params, x, act=np.sin) ** 2)
    return fit + 0.5 * smooth + 0.1 * wavy + np.sum(apply_twice(np.cos, params[0][1]))


def inputs_activations_passed():
    r = np.random.default_rng(5)
    params = [
        (0.5 * r.normal(size=(3, 4)), 0.1 * r.normal(size=4)),
        (0.5 * r.normal(size=(4, 2)), 0.1 * r.normal(size=2)),
    ]
    return params, r.normal(size=(6, 3)), r.normal(size=(6, 2))


def copied_containers(params, x):
    """``list(params)`` and ``tuple(...)`` of parameters, and ``list`` of an array's rows."""
    layers = list(params)
    W, b = tuple(layers[0])
    first, second = list(x)[:2]
    return np.sum(np.tanh(first @ W + b) * second[0]) + np.sum(layers[1][0] ** 2)


def inputs_copied_containers():
    r = np.random.default_rng(6)
    params = [(r.normal(size=(3, 2)), r.normal(size=2)), (r.normal(size=(2, 2)), None)]
    params[1] = (params[1][0],)
    return params, r.normal(size=(4, 3))


def clipped_by_keyword(w, x):
    """``np.clip`` with one bound, by NumPy 2's and JAX's keyword names."""
    h = np.clip(x @ w, min=-0.5)
    return np.sum(np.clip(h, max=0.8) ** 2) + np.sum(np.clip(w, a_min=-1.0, a_max=1.0))


def inputs_clipped_by_keyword():
    r = np.random.default_rng(7)
    return r.normal(size=(3, 2)), r.normal(size=(4, 3))


PROGRAMS += ["activations_passed", "copied_containers", "clipped_by_keyword"]


def local_activation_passed(params, x):
    def swish(z):
        return z / (1.0 + np.exp(-z))

    return np.sum(mlp_with_activation(params, x, swish))


def lambda_passed(params, x):
    return np.sum(mlp_with_activation(params, x, lambda z: z * 2.0))


def _twice_through(f, h, *, times=2):
    for _ in range(times):
        h = f(h) + 0.1 * apply_twice(f, h)
    return h


def closure_passed_down(params, x):
    """A lambda closing over a value of the caller, passed to a helper that passes it on to another."""
    gain = np.mean(x) + 1.5
    W, b = params[0]
    return np.sum(_twice_through(lambda z: np.tanh(gain * z), x @ W + b))


def _inputs_local_functions():
    params, x, _ = inputs_activations_passed()
    return params, x


inputs_local_activation_passed = inputs_lambda_passed = _inputs_local_functions
inputs_closure_passed_down = _inputs_local_functions
PROGRAMS += ["local_activation_passed", "lambda_passed", "closure_passed_down"]


# --- selections by a mask that feed reductions: masked reductions, compiled --------------------


def masked_losses(w, x, y):
    """A loss over the observed entries, the mean of the positive part, a log over the positive weights."""
    pred = np.tanh(x @ w)
    observed = y > -0.5
    fit = np.mean((pred[observed] - y[observed]) ** 2)
    h = x @ w
    positive = np.sum(h[h > 0]) + np.max(h[np.nonzero(h > -1.0)])
    rows = np.sum(x[x[:, 0] > 0] ** 2)
    return fit + 0.1 * positive + np.sum(np.log(w[w > 0])) + rows + len(h[h > 0])


def inputs_masked_losses():
    r = np.random.default_rng(8)
    return (
        np.abs(r.normal(size=(3, 2))) * np.array([1.0, -1.0]),
        r.normal(size=(6, 3)),
        r.normal(size=(6, 2)),
    )


def dict_by_keywords(params, x):
    """``dict(h=h, out=out)``: the dict display it makes (``out=`` is a key, not NumPy's ``out``)."""
    h = np.tanh(x @ params[0][0] + params[0][1])
    out = h @ params[1][0]
    parts = dict(h=h, out=out)
    return sum(np.sum(np.cos(v)) for v in parts.values()) + np.sum(parts["out"] ** 2)


def inputs_dict_by_keywords():
    r = np.random.default_rng(9)
    params = [(r.normal(size=(3, 4)), r.normal(size=4)), (r.normal(size=(4, 2)),)]
    return params, r.normal(size=(5, 3))


def layers_by_index(weights, biases, x):
    """Layers as two lists read by a ``range`` loop's index: a loop over the lists' items."""
    h = x
    for i in range(len(weights)):
        h = np.tanh(h @ weights[i] + biases[i])
    total = 0.0
    for k in range(2):
        total = total + np.sum(weights[k] ** 2) * (k + 1)
    return np.sum(h**2) + 0.1 * total


def inputs_layers_by_index():
    r = np.random.default_rng(10)
    weights = [r.normal(size=(3, 4)), r.normal(size=(4, 2))]
    biases = [r.normal(size=4), r.normal(size=2)]
    return weights, biases, r.normal(size=(5, 3))


PROGRAMS += ["masked_losses", "dict_by_keywords", "layers_by_index"]


def selected_products(w, x, y, event):
    """scikit-learn's Huber loss and Cox's partial likelihood: a product of two selections
    (``np.dot(a[m].T, b[m])``), a value read beside a selection, a mask from ``astype(bool)``.
    """
    r = y - x @ w
    small = np.abs(r) < 1.0
    squares = np.dot((0.5 * r[small]).T, r[small])
    scale = np.mean(w**2)
    outer = np.sum(scale * np.abs(r[~small]))
    ev = event.astype(bool)
    partial = np.sum((r - np.log(np.cumsum(np.exp(r))))[ev])
    return squares + outer - partial / ev.sum()


def inputs_selected_products():
    r = np.random.default_rng(11)
    return r.normal(size=3), r.normal(size=(8, 3)), r.normal(size=8), np.arange(8) % 3


PROGRAMS += ["selected_products"]


def grouped_quadrature(beta, x, groups):
    """A random-intercept likelihood by quadrature, per group: each group's selection given a node
    axis (``eta[idx][:, None] + nodes[None, :]``), reduced whole; a row selection given a last one.
    """
    nodes = np.array([-1.2, 0.0, 1.2])
    eta = x @ beta
    ll = 0.0
    for g in range(3):
        idx = groups == g
        e = eta[idx][:, None] + nodes[None, :]
        ll += np.sum(np.logaddexp(0.0, e) * 0.5) - np.mean(
            np.tanh(eta[idx][None] * 2.0)
        )
        # along the selected axis (a GLMM's log-likelihood per quadrature node)
        y_g = x[:, 0][idx][:, None]
        per_node = np.sum(y_g * e - np.logaddexp(0.0, e), axis=0)
        ll += np.log(np.sum(np.exp(per_node)))
    rows = x[x[:, 0] > 0][..., None] * np.array([1.0, -0.5])
    return ll + np.sum(rows**2 * beta[0])


def inputs_grouped_quadrature():
    r = np.random.default_rng(12)
    return r.normal(size=2), r.normal(size=(7, 2)), np.array([0, 1, 2, 0, 1, 1, 2])


PROGRAMS += ["grouped_quadrature"]


def two_axis_selection_spread(h):
    return np.sum(np.tanh(h[h > 0][:, None] * np.array([0.5, -1.0])[None, :]))


def mask_escapes(w, x):
    return (x @ w)[x[:, 0] > 0]


def dict_by_range_index(layers, x):
    """A dict keyed by ints read by a ``range`` loop's index: iterating it gives keys, so it is refused."""
    h = x
    for i in range(2):
        h = np.tanh(h * layers[i])
    return np.sum(h)


def logistic_with_bias_column(w, X, y):
    """A bias column by ``np.c_`` (the usual NumPy regression code) and another by ``np.insert``."""
    Xb = np.c_[np.ones(X.shape[0]), X]
    Xi = np.insert(X, 0, 1.0, axis=1)
    p = 1.0 / (1.0 + np.exp(-(Xb @ w)))
    q = np.tanh(Xi @ w)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)) + 0.1 * np.sum(q**2)


def inputs_logistic_with_bias_column():
    r = np.random.default_rng(11)
    return r.normal(size=4), r.normal(size=(6, 3)), (r.random(6) > 0.5).astype(float)


def gp_with_jitter(log_scale, x, y):
    """A GP log-likelihood whose kernel gets its noise by ``np.fill_diagonal`` (in place)."""
    d2 = (x[:, None] - x[None, :]) ** 2
    K = np.exp(log_scale[0]) * np.exp(-0.5 * d2 / np.exp(2 * log_scale[1]))
    np.fill_diagonal(K, np.diag(K) + 0.1)
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(K, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L)))


def inputs_gp_with_jitter():
    r = np.random.default_rng(12)
    return np.array([0.2, -0.3]), np.linspace(0.0, 2.0, 5), r.normal(size=5)


def pieces_and_grids(w, x):
    """``np.r_``, ``np.array_split``, ``np.delete``, ``np.rollaxis``, ``np.mgrid``, ``multi_dot`` and
    ``np.bincount`` (weights: per-bin sums)."""
    v = np.r_[w, 0.5, 1:3]
    head, tail = np.array_split(v, 2)
    kept = np.delete(v, [0, 2])
    gx, gy = np.mgrid[0:1:3j, 0:2]
    M = np.rollaxis(np.reshape(w[:6], (1, 2, 3)), 2)
    chain = np.linalg.multi_dot([x, np.outer(w[:3], w[:3]), x.T])
    return (
        np.sum(head**2) * np.sum(tail)
        + np.sum(kept * np.arange(kept.size))
        + np.sum(gx * w[0] + gy * w[1])
        + np.sum(M**3)
        + np.trace(chain)
        + np.sum(np.bincount([0, 2, 2, 1], weights=w[:4], minlength=5) ** 2)
    )


def inputs_pieces_and_grids():
    r = np.random.default_rng(13)
    return r.normal(size=7), r.normal(size=(2, 3))


PROGRAMS += ["logistic_with_bias_column", "gp_with_jitter", "pieces_and_grids"]


def polynomial_remainder(w, x):
    """``np.polydiv``'s remainder as NumPy returns it (its zeroed leading coefficients dropped)."""
    q, r = np.polydiv(np.poly(w), np.array([1.0, x[0]]) * w[0])
    return np.sum(q**2) + np.sum(r * x[: r.shape[0]]) + r.shape[0]


def inputs_polynomial_remainder():
    return np.array([1.1, 0.6, -0.3]), np.array([0.5, -0.2, 0.9])


PROGRAMS += ["polynomial_remainder"]


def weight_decay_on_matrices(layers, named, x):
    """``sum`` over comprehensions with ``if`` clauses: decay on the matrices only, on the keys named ``W*``."""
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    decay = sum(np.sum(p**2) for layer in layers for p in layer if p.ndim == 2)
    keyed = sum((np.sum(np.abs(v)) for k, v in named.items() if k[0] == "W"), 1.0)
    return np.sum(h**2) + 0.1 * decay + 0.01 * keyed * np.sum(named["b"])


def inputs_weight_decay_on_matrices():
    r = np.random.default_rng(14)
    layers = [
        (r.normal(size=(3, 4)), r.normal(size=4)),
        (r.normal(size=(4, 2)), r.normal(size=2)),
    ]
    named = {"W1": r.normal(size=(2, 2)), "b": r.normal(size=2), "W2": r.normal(size=3)}
    return layers, named, r.normal(size=(5, 3))


PROGRAMS += ["weight_decay_on_matrices"]


def checked_layers(layers, x):
    """``any``/``all`` over static facts (ranks, shapes) and over data: Python's, at trace time or compiled."""
    h = x
    if all(W.ndim == 2 for W, _ in layers):
        for W, b in layers:
            h = np.tanh(h @ W + b)
    flags = [np.sum(b) > 0 for _, b in layers]
    if any(flags):
        h = h * 2.0
    return np.sum(h**2)


def inputs_checked_layers():
    rng = np.random.default_rng(9)
    layers = [
        (rng.normal(size=(3, 4)), rng.normal(size=4)),
        (rng.normal(size=(4, 2)), rng.normal(size=2)),
    ]
    return layers, rng.normal(size=(5, 3))


PROGRAMS += ["checked_layers"]


def _sigmoid(Z):
    return 1 / (1 + np.exp(-Z))


def deep_network_cost(parameters, X, Y):
    """The NumPy course's L-layer network: parameters "W1", "b1", ... named by the loop's index."""
    A = X
    L = len(parameters) // 2
    for l in range(1, L):
        A = np.maximum(0, parameters["W" + str(l)] @ A + parameters["b" + str(l)])
    AL = _sigmoid(parameters[f"W{L}"] @ A + parameters[f"b{L}"])
    m = Y.shape[1]
    return -np.sum(Y * np.log(AL) + (1 - Y) * np.log(1 - AL)) / m


def inputs_deep_network_cost():
    rng = np.random.default_rng(11)
    dims = [4, 5, 3, 1]
    parameters = {}
    for l in range(1, len(dims)):
        parameters[f"W{l}"] = rng.normal(size=(dims[l], dims[l - 1])) * 0.5
        parameters[f"b{l}"] = rng.normal(size=(dims[l], 1)) * 0.1
    return parameters, rng.normal(size=(4, 6)), (rng.random((1, 6)) > 0.5) * 1.0


PROGRAMS += ["deep_network_cost"]


def named_weights_in_order(params, x):
    """Keys sorted and filtered by their names (``sorted``, ``str.endswith``, ``str.startswith``)."""
    total = 0.0
    for name in sorted(params):
        if name.endswith("_w"):
            total = total + np.sum(np.tanh(x * params[name]))
    decay = sum(np.sum(v**2) for k, v in params.items() if k.startswith("a"))
    return total + 0.1 * decay


def inputs_named_weights_in_order():
    rng = np.random.default_rng(12)
    return {
        "b_w": rng.normal(size=3),
        "a_w": rng.normal(size=3),
        "c": rng.normal(size=3),
    }, rng.normal(size=3)


PROGRAMS += ["named_weights_in_order"]


def sorted_arrays(ws, x):
    return np.sum(sorted(ws)[0] * x)


@jax.tree_util.register_dataclass
@dataclass
class Halves:
    """A record with a method named like a string method: never read as one."""

    a: np.ndarray
    b: np.ndarray

    def split(self):
        return self.a * 2.0, self.b


def record_split(halves, x):
    left, right = halves.split()
    return np.sum(left * x) + np.sum(right)


def standardized(x):
    """``np.var`` next to the user's own ``np.mean`` of the same axis (one mean in the generated code)."""
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return np.sum((x - mean) / np.sqrt(var + 1e-5))


def filtered_params(params, x):
    """Lists filtered on static facts: a comprehension's ``if`` on ranks and names, appends under ``if``s."""
    weights = [p for p in params.values() if p.ndim == 2]
    biases = {k: v for k, v in params.items() if k.startswith("b")}
    h = x
    for W, b in zip(weights, biases.values()):
        h = np.tanh(h @ W + b)
    penalties = []
    for name, p in params.items():
        if name.startswith("W"):
            penalties.append(np.sum(p**2))
    unused = [p for p in params.values() if p.ndim == 3]  # none: an empty list
    return np.sum(h**2) + 0.1 * sum(penalties) + sum(unused) + len(penalties)


def inputs_filtered_params():
    rng = np.random.default_rng(13)
    return {
        "W1": rng.normal(size=(3, 4)),
        "b1": rng.normal(size=4),
        "W2": rng.normal(size=(4, 2)),
        "b2": rng.normal(size=2),
    }, rng.normal(size=(5, 3))


def conditional_appends(layers, x):
    """Appends an ``if`` may skip, or makes on either side; a list grown from its first item; ``break``."""
    hs = [x]
    norms = []
    for W in layers:
        if W.shape[0] != hs[-1].shape[-1]:
            break
        if W.ndim == 2:
            hs.append(np.tanh(hs[-1] @ W))
            norms.append(np.sum(W**2))
        else:
            norms.append(np.sum(np.abs(W)))
    stacked = np.stack([h for h in hs if h.shape[-1] == 3])
    return np.sum(hs[-1]) + sum(norms) + np.sum(stacked**2)


def inputs_conditional_appends():
    rng = np.random.default_rng(14)
    layers = [rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), rng.normal(size=(2, 3))]
    return layers, rng.normal(size=(4, 3))


PROGRAMS += ["filtered_params", "conditional_appends"]


def filtered_on_data(x):
    """A filter on values: its length would depend on them (NumPy runs it; XLA cannot)."""
    positive = [v for v in x if v > 0]
    return sum(positive)


def activations_of_every_layer(ws, x):
    """Each layer's activation kept in a list (layers of different widths), read by slices and ``zip``."""
    acts = [x]
    for W in ws:
        acts.append(np.tanh(acts[-1] @ W))
    reg = sum(np.sum(a**2) for a in acts[1:])
    s = 0.0
    for a, W in zip(acts[:-1], ws):
        s = s + np.sum((a @ W) ** 2)
    return np.sum(acts[-1]) + 0.1 * reg + s


def inputs_activations_of_every_layer():
    rng = np.random.default_rng(15)
    return [rng.normal(size=(2, 3)) * 0.5, rng.normal(size=(3, 1))], rng.normal(
        size=(4, 2)
    )


PROGRAMS += ["activations_of_every_layer"]


def _activate(z, name):
    if name == "relu":
        return np.maximum(z, 0.0)
    elif name == "tanh":
        return np.tanh(z)
    raise ValueError(f"unknown activation {name}")


def _checked_layer(h, W):
    if h.shape[-1] != W.shape[0]:
        raise ValueError("the layer's width does not match its input")
    return h @ W


def raising_helpers(ws, x):
    """Library-style helpers: an ``if``/``elif`` chain on a name that raises for unknown names, a guard."""
    h = x
    for W in ws:
        h = _activate(_checked_layer(h, W), "tanh")
    if np.any(np.isnan(h)):
        raise FloatingPointError("NaN in the activations")
    return np.sum(_activate(h, "relu"))


def inputs_raising_helpers():
    rng = np.random.default_rng(16)
    return [rng.normal(size=(3, 4)), rng.normal(size=(4, 2))], rng.normal(size=(5, 3))


PROGRAMS += ["raising_helpers"]


def raises_in_a_branch_on_data(x):
    """A ``raise`` in one branch of an ``if`` on data (not a guard): both branches run in compiled code."""
    if np.sum(x) > 0:
        y = np.tanh(x)
    else:
        raise ValueError("the sum is not positive")
    return np.sum(y)


def sums_of_python_sequences(params, x):
    """Python's ``sum`` of a dict's values and of a list kept in a name."""
    norms = {k: np.sqrt(np.sum(v**2)) for k, v in params.items()}
    terms = [np.sum(np.tanh(x @ params["W"])), np.sum(params["b"] ** 2), 0.5]
    return sum(norms.values()) + sum(terms)


def inputs_sums_of_python_sequences():
    rng = np.random.default_rng(17)
    return {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}, rng.normal(
        size=(4, 3)
    )


PROGRAMS += ["sums_of_python_sequences"]


def batchnorm_with_settings(x, gamma, beta, bn_param):
    """cs231n's batch norm: settings read with ``dict.get`` and defaults."""
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    out = gamma * (x - mu) / np.sqrt(var + eps) + beta
    return np.sum(out**2) * momentum + np.sum(bn_param.get("shift", np.zeros(3)) * out)


def inputs_batchnorm_with_settings():
    rng = np.random.default_rng(18)
    return (
        rng.normal(size=(4, 3)),
        rng.normal(size=3),
        rng.normal(size=3),
        {"eps": 1e-3},
    )


PROGRAMS += ["batchnorm_with_settings"]


def masks_combined_with_bit_operators(x):
    """Masks combined with ``&``, ``|`` and ``~`` (NumPy's spelling of logical ops on boolean arrays)."""
    inside = (x > -1.0) & (x < 1.0)
    picked = np.where(inside | (x > 3.0), x**2, 0.0)
    return np.sum(picked) + np.mean(x[~inside] ** 2) + np.sum(x[inside & (x > 0)])


def inputs_masks_combined_with_bit_operators():
    return (np.array([-2.0, -0.5, 0.3, 0.8, 1.5, 3.5]),)


PROGRAMS += ["masks_combined_with_bit_operators"]


def layers_in_insertion_order(params, x):
    """Layers applied in the order the dict was written (not sorted: under XLA too)."""
    for name, W in params.items():
        x = np.tanh(x @ W)
    return np.sum(x**2)


def inputs_layers_in_insertion_order():
    rng = np.random.default_rng(19)
    params = {name: rng.normal(size=(2, 2)) for name in ("input", "hidden", "output")}
    return params, rng.normal(size=(1, 2))


PROGRAMS += ["layers_in_insertion_order"]


def finfo_epsilons(w, x):
    """``np.finfo(z.dtype).tiny`` and ``jnp.finfo``-style epsilons guarding a log: dtype queries."""
    z = x @ w
    tiny = np.finfo(z.dtype).tiny
    eps = np.finfo(np.float64).eps
    return np.sum(np.log(np.maximum(z * z, tiny) + eps)) + 1e-9 * np.iinfo(np.int32).max


def inputs_finfo_epsilons():
    rng = np.random.default_rng(20)
    return rng.normal(size=3), rng.normal(size=(4, 3))


PROGRAMS += ["finfo_epsilons"]


def reductions_with_where(w, x):
    """``where=`` in reductions: a masked mean, sum and product, and a masked max with its ``initial``."""
    z = x @ w
    observed = z > -0.5
    return (
        np.mean((z - 0.1) ** 2, where=observed)
        + np.sum(np.tanh(z), where=observed)
        + np.prod(1.0 + 0.1 * z, where=~observed)
        + np.max(z, where=observed, initial=-1.0)
        + (z**2).sum(where=~observed)
        + np.var(z, where=observed)
        + np.sum(np.std(np.outer(z, w), axis=0, ddof=1, where=observed[:, None]))
        + np.var(np.tanh(z), 0, keepdims=True, where=~observed)[0]
        + np.sum(z**2, where=observed, initial=1.0)
        + np.prod(1.0 + 0.1 * z, where=observed, initial=2.0)
    )


def inputs_reductions_with_where():
    rng = np.random.default_rng(21)
    return rng.normal(size=3), rng.normal(size=(6, 3))


PROGRAMS += ["reductions_with_where"]


def newton_last_step(w, x):
    """The last step of a loop on data, first assigned in the loop and read after it (no value before)."""
    z = x @ w
    y = np.ones_like(z)
    while np.max(np.abs(y * y - np.abs(z) - 1.0)) > 1e-10:
        step = (y * y - np.abs(z) - 1.0) / (2 * y)
        y = y - step
    return np.sum(y) + 100.0 * np.sum(step)


def inputs_newton_last_step():
    rng = np.random.default_rng(22)
    return rng.normal(size=3), rng.normal(size=(4, 3))


PROGRAMS += ["newton_last_step"]


def while_never_runs(w, x):
    z = x @ w
    while np.sum(z) > 1e9:
        last = z * 2
        z = z - 1.0
    return np.sum(last)


def steps_of_a_counted_range(w, x):
    """A ``range`` whose bound the data gives (a ``while`` loop under XLA), its last value read after it."""
    n = np.sum(x > 0)
    h = x
    for i in range(n):
        z = h * w + 0.1 * i
        h = np.tanh(z)
    return np.sum(z)


def inputs_steps_of_a_counted_range():
    return np.array([0.5, -0.3, 0.8]), np.array([0.4, -0.2, 0.9])


PROGRAMS += ["steps_of_a_counted_range"]


def repeated_list_read(w):
    """A list repeated by ``*`` (``[a, b] * 2``), read by index and stacked: each copy's derivative adds up."""
    n = 2
    parts = [np.tanh(w), 0.5 * w] * n
    doubled = 2 * [w**2]
    return np.sum(parts[0] * parts[3] + np.stack(parts)[2]) + np.sum(
        np.stack(doubled) * np.arange(2.0)[:, None]
    )


def inputs_repeated_list_read():
    return (np.array([0.3, -0.5, 1.2]),)


PROGRAMS += ["repeated_list_read"]


def scatter_with_ufunc_at(w, x):
    """``np.add.at`` (repeated indices accumulate), ``np.subtract.at``, ``np.maximum.at`` into arrays made here."""
    idx = np.array([0, 2, 2, 1, 0])
    out = np.zeros(3)
    np.add.at(out, idx, w * x)
    np.subtract.at(out, [1, 1], w[:2] ** 2)
    best = np.full(3, -10.0)
    np.maximum.at(best, idx, w)
    return np.sum(out**2) + np.sum(best)


def inputs_scatter_with_ufunc_at():
    return np.array([0.3, -0.5, 1.2, 0.7, -0.1]), np.arange(5.0) / 3


PROGRAMS += ["scatter_with_ufunc_at"]


def keys_with_format_specs(params, X):
    """The deep-learning course's keys written with a format spec and a conversion (``f"W{l:d}"``)."""
    L = len(params) // 2
    A = X
    for l in range(1, L + 1):
        A = np.tanh(params[f"W{l:d}"] @ A + params[f"b{l!s}"])
    return np.sum(A**2) + np.sum(params[f"W{1:01d}"])


def inputs_keys_with_format_specs():
    rng = np.random.default_rng(23)
    params = {"W1": rng.normal(size=(3, 2)), "b1": rng.normal(size=(3, 1))}
    params |= {"W2": rng.normal(size=(2, 3)), "b2": rng.normal(size=(2, 1))}
    return params, rng.normal(size=(2, 4))


PROGRAMS += ["keys_with_format_specs"]


# --- module-level objects of the user's: their methods, with ``self`` bound, and their attributes ----


class WeightsParser:
    """autograd's examples: named slices of one flat parameter vector."""

    def __init__(self):
        self.idxs_and_shapes = {}
        self.N = 0

    def add_weights(self, name, shape):
        start = self.N
        self.N += np.prod(shape)  # a NumPy int, as autograd's examples leave it
        self.idxs_and_shapes[name] = (slice(start, self.N), shape)

    def get(self, vect, name):
        idxs, shape = self.idxs_and_shapes[name]
        return np.reshape(vect[idxs], shape)


PARSER = WeightsParser()
PARSER.add_weights("W", (3, 2))
PARSER.add_weights("b", (2,))


@dataclass(frozen=True)
class GaussianPrior:
    scale: float
    center: float = 0.0

    def log_prob(self, w):
        return -0.5 * np.sum(((w - self.center) / self.scale) ** 2)


PRIOR = GaussianPrior(2.0)


def parser_objective(w, x):
    """``PARSER.get(w, "W")`` and a frozen dataclass's method: the user's methods, ``self`` bound."""
    W = PARSER.get(w, "W")
    b = PARSER.get(w, "b")
    return np.sum(np.tanh(x @ W + b)) + PRIOR.log_prob(w) + 0.1 * PARSER.N


def inputs_parser_objective():
    return np.linspace(-1.0, 1.0, 8), np.random.default_rng(24).normal(size=(4, 3))


PROGRAMS += ["parser_objective"]


class Encoder:
    """A model as a class: its settings in ``__init__``, ``__call__`` runs it with its other methods."""

    def __init__(self, n_layers=2, eps=1e-6):
        self.n_layers = n_layers
        self.eps = eps

    def norm(self, x, g):
        mu = x.mean(-1, keepdims=True)
        return (
            g * (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + self.eps)
        )

    def __call__(self, params, x):
        for l in range(
            self.n_layers
        ):  # the layers' list read by the index, through a path
            p = params["layers"][l]
            x = x + np.tanh(self.norm(x, p["g"]) @ p["w"])
        return x @ params["head"]


MODEL = Encoder()


def called_model_objective(params, x):
    """``model(params, x)``: an object of the user's called, its class's ``__call__``."""
    return np.sum(MODEL(params, x) ** 2)


def inputs_called_model_objective():
    r = np.random.default_rng(31)
    layer = lambda: {"g": 1 + 0.1 * r.normal(size=3), "w": r.normal(size=(3, 3)) / 2}
    return {"layers": [layer(), layer()], "head": r.normal(size=(3, 2))}, r.normal(
        size=(4, 3)
    )


PROGRAMS += ["called_model_objective"]


class VectorTerm:
    """diffrax's style: a term holding the vector field, a solver whose step is handed the term."""

    def __init__(self, field):
        self.field = field


class MidpointSolver:
    def __init__(self, dt):
        self.dt = dt

    def step(self, term, t, y, rate):
        half = y + 0.5 * self.dt * term.field(t, y, rate)
        return y + self.dt * term.field(t + 0.5 * self.dt, half, rate)


def damped_field(t, y, rate):
    return -rate * y + 0.1 * np.sin(t)


def integrate_with(term, solver, y0, rate):
    y = y0
    for k in range(4):
        y = solver.step(term, k * solver.dt, y, rate)
    return y


TERM, SOLVER = VectorTerm(damped_field), MidpointSolver(0.1)


def solver_objects_objective(rate, y0):
    """Module-level objects handed to a helper, which hands one to the other's method."""
    return np.sum(integrate_with(TERM, SOLVER, y0, rate) ** 2)


def inputs_solver_objects_objective():
    return np.array(0.7), np.array([1.0, -2.0, 0.5])


PROGRAMS += ["solver_objects_objective"]

LAYER_PARSER = WeightsParser()
for _layer, (_m, _n) in enumerate([(3, 4), (4, 2)]):
    LAYER_PARSER.add_weights(("weights", _layer), (_m, _n))
    LAYER_PARSER.add_weights(("biases", _layer), (_n,))


def parser_with_tuple_keys(w, x):
    """autograd's ``neural_net.py`` style: the parser's names are ``("weights", i)`` tuples."""
    for i in range(2):
        x = np.tanh(
            x @ LAYER_PARSER.get(w, ("weights", i)) + LAYER_PARSER.get(w, ("biases", i))
        )
    return np.sum(x**2)


def inputs_parser_with_tuple_keys():
    r = np.random.default_rng(34)
    return r.normal(size=int(LAYER_PARSER.N)) * 0.5, r.normal(size=(4, 3))


PROGRAMS += ["parser_with_tuple_keys"]


def builtins_map_and_unzip(params, x):
    """``zip(*pairs)`` unpacked into columns, ``map`` with a lambda, a function and two sequences."""
    Ws, bs = zip(*params)
    norms = list(map(lambda W: np.sum(W**2), Ws))  # noqa: C417 (as users write it)
    h = x
    for W, b in zip(Ws, bs):
        h = np.tanh(h @ W + b)
    shifted = sum(map(np.sum, map(np.tanh, bs)))
    paired = sum(map(lambda W, b: np.sum(W @ b), Ws, bs))
    return np.sum(h**2) + 0.1 * sum(norms) + shifted + 0.01 * paired


def inputs_builtins_map_and_unzip():
    rng = np.random.default_rng(25)
    return [
        (rng.normal(size=(3, 3)), rng.normal(size=3)) for _ in range(2)
    ], rng.normal(size=(2, 3))


PROGRAMS += ["builtins_map_and_unzip"]


def _walk(f, z, n):
    if n == 0:
        return z
    return _walk(f, f(z), n - 1)


def recursion_with_a_lambda(w):
    s = 2.0
    return np.sum(_walk(lambda z: np.tanh(z * s), w, 3))


def _unpack_mixture(params):
    log_proportions = params["log proportions"] - np.log(
        np.sum(np.exp(params["log proportions"]))
    )
    return log_proportions, params["means"], params["lower triangles"]


def gmm_zip_of_unpacked(params, data):
    """autograd's ``gmm.py``: components zipped out of a helper's tuple (``zip(*unpack(params))``)."""
    cluster_lls = []
    for log_proportion, mean, cov_sqrt in zip(*_unpack_mixture(params)):
        cov = np.dot(cov_sqrt.T, cov_sqrt) + np.eye(2)
        diff = data - mean
        quad = np.sum(diff * np.linalg.solve(cov, diff.T).T, axis=1)
        cluster_lls.append(
            log_proportion - 0.5 * quad - 0.5 * np.linalg.slogdet(cov)[1]
        )
    lls = np.vstack(cluster_lls)
    top = np.max(lls, axis=0)
    total = [a * b for a, b in zip(*[lls[0], lls[1]])]
    return -np.sum(top + np.log(np.sum(np.exp(lls - top), axis=0))) + 0.01 * sum(total)


def inputs_gmm_zip_of_unpacked():
    r = np.random.default_rng(26)
    params = {
        "log proportions": r.normal(size=3),
        "means": r.normal(size=(3, 2)),
        "lower triangles": r.normal(size=(3, 2, 2)) * 0.3,
    }
    return params, r.normal(size=(5, 2))


PROGRAMS += ["gmm_zip_of_unpacked"]


def zip_of_starred_into_one_name(x):
    s = 0.0
    for row in zip(*(x * 2.0, x**2)):
        s = s + np.sum(row[0]) * np.sum(row[-1])
    return s


def _concat_and_multiply(weights, *args):
    """autograd's ``rnn.py``: the arguments joined with a bias column (tuple ``+``)."""
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def rnn_tuple_joined_arguments(W, xs):
    h = np.zeros((xs.shape[1], 2))
    for x in xs:
        h = np.tanh(_concat_and_multiply(W, x, h))
    return np.sum(h**2)


def inputs_rnn_tuple_joined_arguments():
    r = np.random.default_rng(27)
    return r.normal(size=(3 + 2 + 1, 2)) * 0.5, r.normal(size=(4, 5, 3))


PROGRAMS += ["rnn_tuple_joined_arguments"]


def _affine_forward(x, w, b):
    out = x @ w + b
    return out, (x, w)


def cs231n_cache_items(params, x):
    """cs231n's layers: ``out, cache["fc1"] = affine_forward(...)`` (an item target in the unpacking)."""
    cache = {}
    h, cache["fc1"] = _affine_forward(x, params["W1"], params["b1"])
    h = np.maximum(h, 0.1 * h)
    scores, cache["fc2"] = _affine_forward(h, params["W2"], params["b2"])
    x_in, _ = cache["fc2"]
    return np.sum(scores**2) + 0.1 * np.sum(x_in)


def inputs_cs231n_cache_items():
    r = np.random.default_rng(28)
    params = {
        "W1": r.normal(size=(3, 4)),
        "b1": r.normal(size=4),
        "W2": r.normal(size=(4, 2)),
        "b2": r.normal(size=2),
    }
    return params, r.normal(size=(5, 3))


def starred_hidden_then_a_pair(params, x):
    """``*hidden, (W_out, b_out) = params``: a starred name before a nested target."""
    *hidden, (W_out, b_out) = params
    for W, b in hidden:
        x = np.tanh(x @ W + b)
    return np.sum((x @ W_out + b_out) ** 2)


def inputs_starred_hidden_then_a_pair():
    r = np.random.default_rng(29)
    sizes = [3, 4, 4, 2]
    params = [
        (r.normal(size=(m, n)) * 0.5, r.normal(size=n))
        for m, n in zip(sizes[:-1], sizes[1:])  # noqa: RUF007
    ]
    return params, r.normal(size=(2, 3))


PROGRAMS += ["cs231n_cache_items", "starred_hidden_then_a_pair"]


# --- autograd's fluidsim.py (a helper updating its fresh argument in place: ``vx -= ...``) ---


def _fluid_project(vx, vy):
    """Project the velocity field to be approximately mass-conserving,
    using a few iterations of Gauss-Seidel."""
    p = np.zeros(vx.shape)
    h = 1.0 / vx.shape[0]
    div = (
        -0.5
        * h
        * (
            np.roll(vx, -1, axis=0)
            - np.roll(vx, 1, axis=0)
            + np.roll(vy, -1, axis=1)
            - np.roll(vy, 1, axis=1)
        )
    )

    for k in range(10):
        p = (
            div
            + np.roll(p, 1, axis=0)
            + np.roll(p, -1, axis=0)
            + np.roll(p, 1, axis=1)
            + np.roll(p, -1, axis=1)
        ) / 4.0

    vx -= 0.5 * (np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0)) / h
    vy -= 0.5 * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1)) / h
    return vx, vy


def _fluid_advect(f, vx, vy):
    """Move field f according to x and y velocities (u and v)
    using an implicit Euler integrator."""
    rows, cols = f.shape
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols))
    center_xs = (cell_xs - vx).ravel()
    center_ys = (cell_ys - vy).ravel()

    # Compute indices of source cells.
    left_ix = np.floor(center_xs).astype(int)
    top_ix = np.floor(center_ys).astype(int)
    rw = center_xs - left_ix  # Relative weight of right-hand cells.
    bw = center_ys - top_ix  # Relative weight of bottom cells.
    left_ix = np.mod(left_ix, rows)  # Wrap around edges of simulation.
    right_ix = np.mod(left_ix + 1, rows)
    top_ix = np.mod(top_ix, cols)
    bot_ix = np.mod(top_ix + 1, cols)

    # A linearly-weighted sum of the 4 surrounding cells.
    flat_f = (1 - rw) * (
        (1 - bw) * f[left_ix, top_ix] + bw * f[left_ix, bot_ix]
    ) + rw * ((1 - bw) * f[right_ix, top_ix] + bw * f[right_ix, bot_ix])
    return np.reshape(flat_f, (rows, cols))


def _fluid_simulate(vx, vy, smoke, num_time_steps):
    for t in range(num_time_steps):
        vx_updated = _fluid_advect(vx, vx, vy)
        vy_updated = _fluid_advect(vy, vx, vy)
        vx, vy = _fluid_project(vx_updated, vy_updated)
        smoke = _fluid_advect(smoke, vx, vy)
    return smoke


def _fluid_distance(smoke, target):
    return np.mean((target - smoke) ** 2)


def fluidsim_objective(params, smoke, target, num_steps=3):
    init_vx = params[0]
    init_vy = params[1]
    final_smoke = _fluid_simulate(init_vx, init_vy, smoke, num_steps)
    return _fluid_distance(final_smoke, target)


def inputs_fluidsim_objective():
    r = np.random.default_rng(30)
    n = 6
    return r.normal(size=(2, n, n)) * 0.3, r.random(size=(n, n)), r.random(size=(n, n))


PROGRAMS += ["fluidsim_objective"]


def l2_norm_nested_comprehension(params):
    """autograd's ``neural_net.py``: ``np.concatenate`` of a comprehension over layers and their arrays."""
    flat = np.concatenate([np.ravel(p) for layer in params for p in layer])
    return np.dot(flat, flat) + sum(np.sum(p**2) for layer in params for p in layer)


def inputs_l2_norm_nested_comprehension():
    r = np.random.default_rng(31)
    params = [
        (r.normal(size=(3, 2)), r.normal(size=2)),
        (r.normal(size=(2, 1)), r.normal(size=1)),
    ]
    return (params,)


def nested_loops_over_arrays(W, xs):
    """Appends in an inner loop of a compiled loop, and a comprehension with three loops."""
    feats = []
    for x in xs:
        for j in range(W.shape[0]):
            feats.append(np.sum(np.tanh(x * W[j])))
    deep = [
        np.sum(x * W[j] * k) for x in xs for j in range(W.shape[0]) for k in (1.0, 2.0)
    ]
    return np.sum(np.stack(feats) ** 2) + np.sum(np.array(deep))


def inputs_nested_loops_over_arrays():
    r = np.random.default_rng(32)
    return r.normal(size=(3, 2)), r.normal(size=(4, 2))


PROGRAMS += ["l2_norm_nested_comprehension", "nested_loops_over_arrays"]


def layers_rescaled_under_a_data_if(params, x):
    """A list of differently shaped layers rebuilt in one branch of an ``if`` on data, kept in the other."""
    if np.sum(x) > 0:
        params = [p * 2.0 for p in params]
    total = 0.0
    for p in params:
        total = total + np.sum(np.tanh(p) ** 2)
    return total * np.sum(x)


def inputs_layers_rescaled_under_a_data_if():
    r = np.random.default_rng(33)
    return [r.normal(size=(2, 2)), r.normal(size=3)], r.normal(size=2) + 0.5


PROGRAMS += ["layers_rescaled_under_a_data_if"]


def dicts_keyed_by_a_loop_index(ws, x):
    """A dict comprehension keyed by ``enumerate``'s index, and a dict filled by a ``range`` loop."""
    hs = [np.tanh(w * x) for w in ws]
    norms = {i: np.sum(h**2) for i, h in enumerate(hs)}
    scores = {}
    for i in range(len(ws)):
        scores[i] = np.sum(ws[i] * x)
    return sum(norms[k] * (k + 1) for k in sorted(norms)) + scores[1] ** 2


def inputs_dicts_keyed_by_a_loop_index():
    r = np.random.default_rng(35)
    return [r.normal(size=2), r.normal(size=2), r.normal(size=2)], r.normal(size=2)


PROGRAMS += ["dicts_keyed_by_a_loop_index"]


def _lotka_volterra(z, alpha, beta):
    prey, predator = z[0], z[1]
    return np.array(
        [alpha * prey - beta * prey * predator, beta * prey * predator - predator]
    )


def _rk4_step(f, y, dt, *args):
    """A stepper taking the vector field and its parameters (``*args``), as ODE example code writes it."""
    k1 = f(y, *args)
    k2 = f(y + dt / 2 * k1, *args)
    k3 = f(y + dt / 2 * k2, *args)
    k4 = f(y + dt * k3, *args)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def ode_stepper_with_star_args(theta, z0):
    z = z0
    for _ in range(4):
        z = _rk4_step(_lotka_volterra, z, 0.1, theta[0], theta[1])
    return np.sum(z**2)


def inputs_ode_stepper_with_star_args():
    return np.array([1.1, 0.4]), np.array([1.0, 0.5])


PROGRAMS += ["ode_stepper_with_star_args"]


LEAKY = functools.partial(jax.nn.leaky_relu, negative_slope=0.1)


def _dense_act(w, x, activation=jax.nn.relu):
    return np.sum(activation(x @ w))


def function_valued_parameters(w, x, activation=jax.nn.relu):
    """A default function forwarded one level more, a module-level partial passed by name, and
    ``functools.partial`` of a helper with a function default (the JAX tutorials' MLPs).
    """
    forwarded = _dense_act(w, x, activation)
    leaky = _dense_act(w, x, LEAKY)
    bound = functools.partial(_dense_act, w)
    return forwarded + 2.0 * leaky + 3.0 * bound(np.tanh(x)) + _dense_act(w, x, np.tanh)


def inputs_function_valued_parameters():
    r = np.random.default_rng(36)
    return r.normal(size=(3, 2)), r.normal(size=(4, 3))


PROGRAMS += ["function_valued_parameters"]


def _scaled_by(x, out=1.0):
    return x * out


def keyword_named_out(w, x):
    """A keyword of yours named ``out`` (not NumPy's output argument)."""
    y = np.zeros_like(w)
    np.add(w, x, out=y)
    return np.sum(_scaled_by(w, out=x) ** 2) + np.sum(y * w)


def inputs_keyword_named_out():
    r = np.random.default_rng(37)
    return r.normal(size=3), r.normal(size=3)


PROGRAMS += ["keyword_named_out"]


ACTIVATION_TABLE = {
    "tanh": np.tanh,
    "softplus": lambda z: np.logaddexp(0.0, z),
    "sin": np.sin,
}


def activations_by_name(x, names=("tanh", "softplus"), last="sin", extra=None):
    """A module-level dict of functions called at a key the function holds (``ACTS[name](x)``), or one
    it computes without calls (``ACTS[extra or "tanh"]``)."""
    for name in names:
        x = ACTIVATION_TABLE[name](x)
    out = ACTIVATION_TABLE[last](x) + ACTIVATION_TABLE["tanh"](x)
    return np.sum(out + ACTIVATION_TABLE[extra or "tanh"](x) * 0.5)


def inputs_activations_by_name():
    return (np.array([0.1, -0.4, 0.7]),)


PROGRAMS += ["activations_by_name"]


class _Config:
    activation = "softplus"


CONFIG = _Config()


def activation_held_in_a_name(x, head="sin"):
    """``act = ACTS[cfg.activation]`` and ``out = ACTS[head]``: items of a dict of functions held in names."""
    act = ACTIVATION_TABLE[CONFIG.activation]
    out = ACTIVATION_TABLE[head]
    h = act(x * 2.0)
    return np.sum(out(h) * act(x))


def inputs_activation_held_in_a_name():
    return (np.array([0.3, -0.2, 0.5]),)


PROGRAMS += ["activation_held_in_a_name"]


def _grad_potential(q, prec, scale=1.0):
    return scale * prec * q


def _leapfrog(q, p, step_size, n_steps, grad_U):
    p = p - 0.5 * step_size * grad_U(q)
    for i in range(n_steps):
        q = q + step_size * p
        if i != n_steps - 1:
            p = p - step_size * grad_U(q)
    p = p - 0.5 * step_size * grad_U(q)
    return q, -p


def hmc_leapfrog_with_a_partial(q0, p0, prec):
    """autograd's HMC style: ``functools.partial`` of a helper, made in the function (binding one of its
    values) and passed to another helper."""
    grad_U = functools.partial(_grad_potential, prec=prec)
    q, p = _leapfrog(q0, p0, 0.1, 4, grad_U)
    half = functools.partial(_grad_potential, q0, scale=0.5)
    return np.sum(q**2) + 0.5 * np.sum(p**2) + np.sum(half(prec))


def inputs_hmc_leapfrog_with_a_partial():
    r = np.random.default_rng(38)
    return r.normal(size=3), r.normal(size=3), np.abs(r.normal(size=3)) + 0.5


PROGRAMS += ["hmc_leapfrog_with_a_partial"]


def _scaled_product(a, x):
    return a * x


def partial_binds_when_made(x):
    """``partial`` binds its arguments' values when it is made: rebinding one afterwards changes nothing
    (s2s once read the later value)."""
    a = 2.0 * x[0]
    g = functools.partial(_scaled_product, a)
    a = 5.0
    return np.sum(g(x)) + a


def inputs_partial_binds_when_made():
    return (np.array([0.3, -0.2, 0.5]),)


PROGRAMS += ["partial_binds_when_made"]


def _scaled_by_three(z):
    return z * 3.0


def partial_binding_functions(x):
    """``partial`` made in the function binding module-level functions (JAX's, and one of yours)."""
    relu_net = functools.partial(_dense_act, np.eye(3), activation=jax.nn.relu)
    own_net = functools.partial(_dense_act, np.eye(3), activation=_scaled_by_three)
    return relu_net(x) + own_net(x**2)


def inputs_partial_binding_functions():
    return (np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]]),)


PROGRAMS += ["partial_binding_functions"]


def _minibatches(X, y, size):
    for start in range(0, len(X), size):
        yield X[start : start + size], y[start : start + size]


def _leaves_of(params):
    for W, b in params:
        yield W
        yield b


def _all_leaves(params):
    yield from _leaves_of(params)
    return


def minibatch_generator(w, X, y):
    """A generator helper of minibatches read by a loop, and a generator expression over another."""
    total = 0.0
    for xb, yb in _minibatches(X, y, 2):
        total = total + np.mean((xb @ w - yb) ** 2)
    return total + sum(np.sum(xb @ w) for xb, _ in _minibatches(X, y, 3))


def inputs_minibatch_generator():
    r = np.random.default_rng(41)
    return r.normal(size=3), r.normal(size=(6, 3)), r.normal(size=6)


def leaves_generator(params, x):
    """``yield W; yield b`` per layer, through ``yield from``, and a local generator of layer outputs."""

    def activations(h):
        for W, b in params:
            h = np.tanh(h @ W + b)
            yield h

    penalty = sum(np.sum(p**2) for p in _all_leaves(params))
    outs = list(activations(x))
    return penalty + np.sum(outs[-1] ** 2) + sum(np.mean(a) for a in outs)


def inputs_leaves_generator():
    r = np.random.default_rng(42)
    params = [
        (r.normal(size=(3, 4)), r.normal(size=4)),
        (r.normal(size=(4, 2)), r.normal(size=2)),
    ]
    return params, r.normal(size=(5, 3))


def appends_in_a_row(params, xs):
    """Two appends per step of a compiled loop, and of a loop over layers (``flat.append(W); flat.append(b)``)."""
    feats = []
    for x in xs:
        feats.append(np.sin(x))
        feats.append(x**2)
    flat = []
    for W, b in params:
        flat.append(np.ravel(W))
        flat.append(b)
    return np.sum(np.stack(feats) ** 2) + np.dot(
        np.concatenate(flat), np.concatenate(flat)
    )


def inputs_appends_in_a_row():
    r = np.random.default_rng(43)
    params = [
        (r.normal(size=(2, 3)), r.normal(size=3)),
        (r.normal(size=(3, 1)), r.normal(size=1)),
    ]
    return params, r.normal(size=(4, 2))


PROGRAMS += ["minibatch_generator", "leaves_generator", "appends_in_a_row"]


def _vector_field(y, t, theta):
    return np.array(
        [
            theta[0] * y[0] - theta[1] * y[0] * y[1],
            theta[1] * y[0] * y[1] - theta[2] * y[1],
        ]
    )


def _euler(f, y, ts):
    for k in range(len(ts) - 1):
        y = y + (ts[k + 1] - ts[k]) * f(y, ts[k])
    return y


def partial_passed_inline(theta, y0):
    """``partial(field, theta=theta)`` made as an argument (an ODE solver's vector field), also in a loop."""
    ts = np.linspace(0.0, 0.5, 6)
    y = _euler(functools.partial(_vector_field, theta=theta), y0, ts)
    for scale in (0.5, 2.0):
        y = _euler(functools.partial(_vector_field, theta=theta * scale), y, ts[:3])
    return np.sum(y**2)


def inputs_partial_passed_inline():
    return np.array([1.0, 0.5, 0.8]), np.array([1.2, 0.7])


PROGRAMS += ["partial_passed_inline"]


def _linear_kernel(X, a=1.0):
    return a * X


def _shifted_sine_kernel(X, a=1.0, c=0.0):
    return a * np.sin(X) + c


KERNEL_TABLE = {"linear": _linear_kernel, "sine": _shifted_sine_kernel}


def kernels_by_name_with_keywords(hyper, X):
    """Functions of a dict called at each key of a dict of their keyword arguments (a GP's kernel sum):
    each call gets its own keywords, which another function of the table may not take.
    """
    return np.sum(sum(KERNEL_TABLE[name](X, **kw) for name, kw in hyper.items()))


def inputs_kernels_by_name_with_keywords():
    return {"linear": {"a": 2.0}, "sine": {"a": 1.0, "c": 0.5}}, np.linspace(
        0.0, 1.0, 3
    )


PROGRAMS += ["kernels_by_name_with_keywords"]


def writes_by_a_mask(x, w):
    """NumPy's writes by a mask: a leaky ReLU written in place, clipping, zeroing small entries of a
    product by a mask of another shape, a value computed from the selection."""
    h = np.tanh(x @ w) * 2.0
    h[h < 0] = 0.1 * h[h < 0]
    h[h > 1.0] = 1.0
    g = x.copy()
    g[np.abs(g) < 0.2] = np.mean(g[np.abs(g) >= 0.2])
    return np.sum(h**2) + np.sum(g * x)


def inputs_writes_by_a_mask():
    r = np.random.default_rng(44)
    return r.normal(size=(4, 3)), r.normal(size=(3, 2))


PROGRAMS += ["writes_by_a_mask"]


softplus_by_partial = functools.partial(np.logaddexp, 0.0)


def partial_of_a_ufunc(w, x):
    """A module-level ``partial`` of a NumPy ufunc binding its first argument (``softplus``)."""
    return np.sum(softplus_by_partial(x @ w)) + np.sum(
        functools.partial(np.maximum, 0.0)(x)
    )


def inputs_partial_of_a_ufunc():
    r = np.random.default_rng(45)
    return r.normal(size=3), r.normal(size=(4, 3))


PROGRAMS += ["partial_of_a_ufunc"]


def features_grown_by_plus_equals(w, x):
    """A list that starts with a parameter and grows by ``+=`` in a loop (its items untouched), and
    chained writes of one value into two places (``u[0] = u[-1] = ...``)."""
    feats = [x]
    for k in range(2):
        feats += [np.sin(x * (k + 1.0))]
    feats += [np.cos(x), x**2]
    u = x * w
    u[0] = u[-1] = np.sum(x) * 0.1
    return np.sum(np.stack(feats) @ w) + np.sum(u**2)


def inputs_features_grown_by_plus_equals():
    r = np.random.default_rng(46)
    return r.normal(size=4), r.normal(size=4)


PROGRAMS += ["features_grown_by_plus_equals"]


def sizes_computed_by_numpy(w, x):
    """NumPy functions of sizes: a flatten by ``int(np.prod(x.shape[1:]))`` (a convnet's), the top quarter
    by ``int(np.ceil(0.25 * len(...)))``, a square side by ``int(np.sqrt(size))``."""
    flat = x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
    losses = np.sort(np.ravel(flat @ w))
    k = int(np.ceil(0.25 * len(losses)))
    side = int(np.sqrt(flat.size // x.shape[0]))
    return losses[-k:].mean() + np.sum(flat[0].reshape(side, side) ** 2)


def inputs_sizes_computed_by_numpy():
    r = np.random.default_rng(47)
    return r.normal(size=(4, 2)), r.normal(size=(3, 2, 2))


def keys_formatted_with_percent(params, x):
    """cs231n's ``params["W%d" % i]`` keys in a loop over layers."""
    h = x
    for i in range(1, 3):
        h = np.tanh(h @ params["W%d" % i] + params["b%d" % i])
    return np.sum(h**2)


def inputs_keys_formatted_with_percent():
    r = np.random.default_rng(48)
    params = {"W1": r.normal(size=(3, 4)), "b1": r.normal(size=4)}
    params |= {"W2": r.normal(size=(4, 2)), "b2": r.normal(size=2)}
    return params, r.normal(size=(5, 3))


PROGRAMS += ["sizes_computed_by_numpy", "keys_formatted_with_percent"]


def lists_of_values_joined(theta, gaps):
    """Ordered cut points of an ordinal model: a list holding a parameter's entry inside ``concatenate``,
    and a tuple holding a list of an entry and a number inside ``hstack``."""
    cut = np.cumsum(np.concatenate([[theta[0]], np.exp(gaps)]))
    both = np.hstack(([theta[1], 0.5], gaps))
    return np.sum(np.tanh(cut)) + np.sum(both**2)


def inputs_lists_of_values_joined():
    return np.array([0.3, -0.2]), np.array([0.1, 0.2, -0.3])


PROGRAMS += ["lists_of_values_joined"]


def returns_built_front_first(w, rewards):
    """Discounted returns built by ``returns.insert(0, G)`` walking the rewards backwards (REINFORCE),
    the rewards shaped by the parameters so the returns carry a derivative, then rebound as an array.
    """
    shaped = np.tanh(rewards * w)
    returns = [np.sum(w) * 0.0]
    G = 0.0
    for r in reversed(list(shaped)):
        G = r + 0.9 * G
        returns.insert(0, G)
    returns = np.array(returns)
    return np.sum(returns * np.arange(1.0, len(returns) + 1.0))


def inputs_returns_built_front_first():
    r = np.random.default_rng(49)
    return r.normal(size=5), r.normal(size=5)


PROGRAMS += ["returns_built_front_first"]


def backtracking_with_loop_else(w, x):
    """A backtracking line search whose ``for ... else`` gives up (a step of zero) when no step is
    accepted, and a ``while ... else`` doubling a total that never breaks."""
    step = 1.0
    for _ in range(6):
        if np.sum((w - step * x) ** 2) < np.sum(w**2):
            break
        step = step * 0.5
    else:
        step = 0.0
    i, total = 0, 0.0
    while i < 3:
        total = total + np.sum(w * x) * i
        if total > 1e6:
            break
        i += 1
    else:
        total = total * 2.0
    return np.sum((w - step * x) ** 2) + total


def inputs_backtracking_with_loop_else():
    return np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -1.0])


PROGRAMS += ["backtracking_with_loop_else"]


def _dynamics(y, t, W):
    return np.tanh(W @ y) - 0.1 * t * y


def _rk4(f, y, t, dt, *args):
    k1 = f(y, t, *args)
    k2 = f(y + dt / 2 * k1, t + dt / 2, *args)
    k3 = f(y + dt / 2 * k2, t + dt / 2, *args)
    k4 = f(y + dt * k3, t + dt, *args)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _odeint(func, y0, ts, *args):
    ys = [y0]
    y = y0
    for t0, t1 in zip(ts[:-1], ts[1:]):  # noqa: RUF007 (as the model zoo writes it)
        y = _rk4(func, y, t0, t1 - t0, *args)
        ys.append(y)
    return np.stack(ys)


def function_forwarded_with_args(W, y0):
    """A neural ODE: the dynamics passed to a solver, which passes it and its ``*args`` to a step."""
    pred = _odeint(_dynamics, y0, np.linspace(0.0, 1.0, 5), W)
    return np.sum(pred**2)


def inputs_function_forwarded_with_args():
    r = np.random.default_rng(50)
    return r.normal(size=(2, 2)) * 0.5, r.normal(size=2)


PROGRAMS += ["function_forwarded_with_args"]


class _EnergyModel:
    visible = 3

    @staticmethod
    def free_energy(params, v):
        return -np.sum(np.logaddexp(0.0, v @ params["W"] + params["b"]), axis=1)


def static_method_through_its_class(params, v_data, v_model):
    """An RBM's free energy, a static method called through its class, also kept in a name first."""
    fe = _EnergyModel.free_energy
    return np.mean(fe(params, v_data)) - np.mean(
        _EnergyModel.free_energy(params, v_model)
    )


def inputs_static_method_through_its_class():
    r = np.random.default_rng(51)
    params = {"W": r.normal(size=(3, 2)) * 0.5, "b": r.normal(size=2)}
    return params, r.normal(size=(4, 3)), r.normal(size=(4, 3))


PROGRAMS += ["static_method_through_its_class"]


@dataclass(frozen=True)
class _LayerConfig:
    scale: float = 0.5
    activation: str = "tanh"


LAYER_CONFIG = _LayerConfig()


def _configured_layer(w, x, cfg=LAYER_CONFIG):
    h = x @ w * cfg.scale
    return np.tanh(h) if cfg.activation == "tanh" else h


def frozen_dataclass_configuration(w, x):
    """A module-level frozen dataclass of settings, a helper's default and passed by name."""
    return np.sum(_configured_layer(w, x) ** 2) + np.sum(
        _configured_layer(w, x, LAYER_CONFIG)
    )


def inputs_frozen_dataclass_configuration():
    r = np.random.default_rng(52)
    return r.normal(size=3), r.normal(size=(4, 3))


PROGRAMS += ["frozen_dataclass_configuration"]


def _im2col(images, fh, fw, stride=1):
    """'Deep Learning from Scratch''s im2col: strided slices whose ends are names bound in the loop."""
    n, c, h, w = images.shape
    out_h = (h - fh) // stride + 1
    out_w = (w - fw) // stride + 1
    col = np.zeros((n, c, fh, fw, out_h, out_w))
    for y in range(fh):
        y_max = y + stride * out_h
        for x in range(fw):
            x_max = x + stride * out_w
            col[:, :, y, x, :, :] = images[:, :, y:y_max:stride, x:x_max:stride]
    return col.transpose(0, 4, 5, 1, 2, 3).reshape(n * out_h * out_w, -1)


def convolution_by_im2col(W, images):
    """A convolution as a matrix product of ``im2col``'s columns, stride 2."""
    col = _im2col(images, 2, 2, stride=2)
    return np.sum(np.tanh(col @ W) ** 2)


def inputs_convolution_by_im2col():
    r = np.random.default_rng(53)
    return r.normal(size=(4, 3)) * 0.5, r.normal(size=(2, 1, 4, 4))


PROGRAMS += ["convolution_by_im2col"]


def _cvar(losses, alpha=0.25):
    k = int(np.ceil(alpha * losses.shape[0]))  # a number: a float default times a size
    return np.sort(losses)[::-1][:k].mean()


def cvar_objective(w):
    """The conditional value at risk of logistic losses: the mean of the largest quarter."""
    return _cvar(np.log1p(np.exp(-w))) + _cvar(w**2, alpha=0.5)


def inputs_cvar_objective():
    return (np.linspace(-1.0, 1.3, 8),)


PROGRAMS += ["cvar_objective"]


def scaled_by_root_of_width(q):
    """``np.sqrt(d).astype(q.dtype)``: a number of the shape, then an array method on it."""
    scale = np.sqrt(q.shape[-1]).astype(q.dtype)
    return np.sum(np.tanh(q / scale) ** 2)


def inputs_scaled_by_root_of_width():
    return (np.random.default_rng(41).normal(size=(2, 4)),)


PROGRAMS += ["scaled_by_root_of_width"]


def _spread_args(x, *args):
    a, b = (
        args if args else (1.0, 2.0)
    )  # scipy's optional ``args``: a tuple's truth is its length
    if not args:
        b = b * 0.5
    return np.sum(b * x**2 + a * np.tanh(x))


def tuple_truth(x, a):
    return _spread_args(x, a, 0.5) + _spread_args(x * 2.0)


def inputs_tuple_truth():
    return np.array([0.3, -0.8, 1.1]), 0.7


PROGRAMS += ["tuple_truth"]


def accelerations(pos, mass):
    """Fills a new array by elements: its result shares no memory with the caller's arrays."""
    a = np.zeros(pos.shape[0])
    for i in range(pos.shape[0]):
        a[i] = -mass[i] * pos[i]
    a += 0.1 * np.roll(pos, 1)
    return a


def leapfrog_with_a_helper(x0, mass):
    """A leapfrog integrator updating its state in place by a helper's new array."""
    x = x0.copy()
    v = np.zeros_like(x)
    for _ in range(3):
        a = accelerations(x, mass)
        v += 0.1 * a
        x += 0.1 * v
    return np.sum(x**2) + np.sum(v**2)


def inputs_leapfrog_with_a_helper():
    r = np.random.default_rng(14)
    return r.normal(size=4), r.uniform(0.5, 1.5, size=4)


PROGRAMS += ["leapfrog_with_a_helper"]


def pairs_by_itertools(points, w):
    """``itertools.combinations`` of rows in a generator, ``product`` of ranges and ``permutations`` in loops."""
    energy = sum(
        np.exp(-np.sum((a - b) ** 2)) for a, b in itertools.combinations(points, 2)
    )
    for i, j in itertools.product(range(2), range(3)):
        energy += w[i, j] * points[i, j % points.shape[1]]
    for a, b in itertools.permutations(points[:3], 2):
        energy = energy + 0.1 * np.dot(a, b) * np.sum(w)
    return energy


def inputs_pairs_by_itertools():
    r = np.random.default_rng(15)
    return r.normal(size=(4, 2)), r.normal(size=(2, 3))


PROGRAMS += ["pairs_by_itertools"]


def triples_as_an_index_array(points, w):
    """h25: ``np.array(list(combinations(range(n), 3)))``, the index triples as one array (its gradient's
    code read again under ``vmap`` was a ``list(zip(...))`` s2s refused), and ``list(...)`` of rows.
    """
    triples = np.array(list(itertools.combinations(range(len(points)), 3)))
    a, b, c = points[triples[:, 0]], points[triples[:, 1]], points[triples[:, 2]]
    pairs = list(itertools.combinations(points, 2))
    return (
        np.sum(np.cross(b - a, c - a) ** 2)
        + np.sum(w) * len(pairs)
        + np.sum(np.array(pairs)[:, 0] * np.array(pairs)[:, 1])
    )


def inputs_triples_as_an_index_array():
    r = np.random.default_rng(16)
    return r.normal(size=(4, 3)), r.normal(size=2)


PROGRAMS += ["triples_as_an_index_array"]


def guarded_trajectory(th, x0, obs):
    """Forward Euler recording a trajectory, with a blow-up guard that returns early (p45's Lotka-Volterra):
    the append after the guard runs every step (``jumps._unskipped_appends``)."""
    state = x0
    traj = [state]
    for _ in range(12):
        state = state + 0.05 * np.array(
            [
                th[0] * state[0] - th[1] * state[0] * state[1],
                th[2] * state[0] * state[1] - th[3] * state[1],
            ]
        )
        if np.any(state > 1e6):
            return np.inf
        traj.append(state)
    return np.sum((np.stack(traj)[::4] - obs) ** 2)


def inputs_guarded_trajectory():
    return np.array([1.0, 0.5, 0.4, 0.8]), np.array([1.0, 0.5]), np.ones((4, 2))


PROGRAMS += ["guarded_trajectory"]


def steps_from_defaults(x, t_end=1.0, dt=0.25):
    """A step count from float defaults left out (constants, as under ``jax.jit``): ``int(round(...))``."""
    n_steps = int(round(t_end / dt))  # noqa: RUF046 (as people write it)
    for _ in range(n_steps):
        x = x + dt * np.tanh(x)
    return np.sum(x**2)


def inputs_steps_from_defaults():
    return (np.random.default_rng(17).normal(size=3),)


PROGRAMS += ["steps_from_defaults"]


def recorded_while_time(mu, x0, t_end=1.0, dt=0.05):
    """A ``while t < t_end`` loop on float time recording states (e38): the numbers alone count its steps."""
    x = np.array(x0, dtype=float)
    t = 0.0
    xs = []
    while t < t_end - 1e-12:
        dx = np.array([x[1], mu * (1 - x[0] ** 2) * x[1] - x[0]])
        x = x + dt * dx
        t += dt
        xs.append(x[0])
    return np.mean(np.array(xs) ** 2) + 0.1 * len(xs)


def inputs_recorded_while_time():
    return 1.3, np.array([1.0, 0.1])


def recorded_while_two_counters(w, n=6):
    """Two counters in the test, one updated from the other; the states stacked after the loop."""
    k, t, h = 0, 0.0, 0.125
    states = [w]
    while k < n and t + h <= 0.5:
        w = w - h * np.sin(w)
        k += 1
        t = t + h * (1 + k % 2)
        states.append(w * t)
    return np.sum(np.stack(states) ** 2)


def inputs_recorded_while_two_counters():
    return (np.random.default_rng(21).normal(size=3),)


PROGRAMS += ["recorded_while_time", "recorded_while_two_counters"]


def recorded_steps_from_defaults(log_theta, obs, dt=0.1, t_end=0.5):
    """p45: ``int(round(t_end / dt))`` steps recorded in a list behind a blow-up guard returning ``np.inf``."""
    theta = np.exp(log_theta)
    n_steps = int(round(t_end / dt))  # noqa: RUF046 (as people write it)
    state = np.array([1.0, 0.5])
    traj = [state]
    for _ in range(n_steps):
        state = state + dt * np.array(
            [
                theta[0] * state[0] - state[0] * state[1],
                state[0] * state[1] - theta[1] * state[1],
            ]
        )
        if np.any(state > 1e6):
            return np.inf
        traj.append(state)
    return np.sum((np.log(np.stack(traj)) - np.log(obs)) ** 2)


def inputs_recorded_steps_from_defaults():
    return np.log(np.array([1.0, 0.8])), np.full((6, 2), 0.7)


PROGRAMS += ["recorded_steps_from_defaults"]


def starred_dict_values(params, x):
    """``*hidden, last = params.values()`` (g03): a list of layer dicts looped over, then the last."""
    *hidden, last = params.values()
    for layer in hidden:
        x = np.tanh(x @ layer["w"] + layer["b"])
    return np.sum((x @ last["w"] + last["b"]) ** 2)


def inputs_starred_dict_values():
    r = np.random.default_rng(23)
    params = {
        f"layer{i}": {"w": r.normal(size=(3, 3)) * 0.5, "b": r.normal(size=3)}
        for i in range(3)
    }
    return params, r.normal(size=(2, 3))


PROGRAMS += ["starred_dict_values"]


starred_dict_values_grad = s2s.grad(starred_dict_values)


def meta_step_over_layer_dicts(lr, params, x):
    """A gradient step through the gradient of a loop over a list of layer dicts (g03's meta-objective):
    second derivatives restack the loop's per-layer dicts."""
    grads = starred_dict_values_grad(params, x)
    stepped = {
        k: {n: v - lr * grads[k][n] for n, v in layer.items()}
        for k, layer in params.items()
    }
    return starred_dict_values(stepped, x)


def inputs_meta_step_over_layer_dicts():
    params, x = inputs_starred_dict_values()
    return 0.05, params, x


PROGRAMS += ["meta_step_over_layer_dicts"]


def item_accumulators(x):
    """``s = x[0]`` then ``s += ...`` (a running sum from the first element, Levinson-Durbin's
    ``acc = r[k]``): a number taken from a vector, a copy, while ``x`` is read later."""
    s = x[0]
    for i in range(1, x.shape[0]):
        s += x[i] ** 2
    acc, e = x[-1], x[0]
    acc *= 1.5
    return s * x[0] + acc / e


def inputs_item_accumulators():
    return (np.array([0.5, 1.0, -2.0, 0.7]),)


def newton_with_a_helpers_item(coeffs, x0):
    """g20: a helper returning an item of its argument (``p = coeffs[0]``) beside new values; the caller's
    ``x -= step`` shares nothing with ``coeffs``."""
    x = x0
    for _ in range(4):
        p, dp = _horner_pair(coeffs, x)
        x -= p / dp
    return x


def _horner_pair(coeffs, x):
    p = coeffs[0]
    dp = 0.0
    for c in coeffs[1:]:
        dp = dp * x + p
        p = p * x + c
    return p, dp


def inputs_newton_with_a_helpers_item():
    return np.array([1.0, 0.0, -2.0, 1.5]), -1.8


def row_accumulator(X):
    """The same on a matrix: ``X[0]`` is a view of its first row, which NumPy's ``s += ...`` changes."""
    s = X[0]
    for i in range(1, X.shape[0]):
        s += X[i] ** 2
    return np.sum(s * X[0])


PROGRAMS += ["item_accumulators", "newton_with_a_helpers_item"]


def _gaussian_bump(x, alpha, shift=0.0):
    return np.exp(-alpha * (x - shift) ** 2)


def _simpson(f, a, b, n=8, args=()):
    """scipy's convention: the integrand passed in, its extra arguments as ``args``, spread into it."""
    x = np.linspace(a, b, n + 1)
    y = f(x, *args)
    h = (b - a) / n
    return h / 3 * (y[0] + 4 * np.sum(y[1:-1:2]) + 2 * np.sum(y[2:-1:2]) + y[-1])


def _rk4_keywords(f, y, dt, steps, **kwargs):
    for _ in range(steps):
        k1 = f(y, **kwargs)
        k2 = f(y + 0.5 * dt * k1, **kwargs)
        y = y + dt * k2
    return y


def _decay(y, rate=1.0):
    return -rate * y


def integrand_passed_in(theta):
    """g13/g46: ``f(x, *args)`` and ``f(y, **kwargs)`` of a function passed to a helper."""
    area = _simpson(_gaussian_bump, 0.0, 1.0, args=(theta[0], theta[1]))
    y = _rk4_keywords(_decay, np.array([1.0, 2.0]), 0.1, 3, rate=theta[2])
    return area + np.sum(y**2)


def inputs_integrand_passed_in():
    return (np.array([0.7, 0.2, 0.5]),)


PROGRAMS += ["integrand_passed_in"]


def taylor_exp_and_binomials(x):
    """``math.factorial(k)`` and ``math.comb(n, k)`` of a fixed range's counter (g43's Savitzky-Golay)."""
    series = sum(x**k / math.factorial(k) for k in range(6))
    weights = np.array([math.comb(4, k) for k in range(5)]) / 2.0**4
    return np.sum(series) + np.sum(weights * np.tanh(x[0] * np.arange(5.0)))


def inputs_taylor_exp_and_binomials():
    return (np.array([0.3, -0.5, 1.1]),)


def factorial_of_a_count(x, n):
    return np.sum(x) / math.factorial(n)


PROGRAMS += ["taylor_exp_and_binomials"]


def welford_variance(data):
    """g35: the loop variable read after the loop (its last value, as Python keeps it)."""
    mean, m2 = 0.0, 0.0
    for n, x in enumerate(data, start=1):
        delta = x - mean
        mean += delta / n
        m2 += delta * (x - mean)
    for i in range(2):
        mean = mean * 0.5
    return m2 / (n - 1) + mean * i


def inputs_welford_variance():
    return (np.array([1.0, 2.0, 4.0, 7.0, -1.5]),)


PROGRAMS += ["welford_variance"]


STENCIL = np.array([[0.0, 1.0, 0.5], [1.0, -2.0, 0.3], [0.2, 0.1, 0.0]])


def _correlate(img, kernel):
    out = np.zeros((img.shape[0] - 2, img.shape[1] - 2))
    for i in range(3):
        for j in range(3):
            if kernel[i, j] == 0:
                continue
            out += kernel[i, j] * img[i : i + out.shape[0], j : j + out.shape[1]]
    return out


def stencil_of_a_module_kernel(img):
    """g31: a module-level kernel's entries read by the loops' counters (compiled loops: traced
    counters index a NumPy constant)."""
    direct = 0.0
    for i in range(3):
        direct = direct + STENCIL[i, i] * np.sum(img[i])
    return np.sum(_correlate(img, STENCIL) ** 2) + direct


def inputs_stencil_of_a_module_kernel():
    return (np.random.default_rng(29).normal(size=(5, 5)),)


def paths_by_columns(params, z):
    """g23: paths filled column by column (``S[:, t + 1] = ...``): the write's index, with a slice, is a
    residual of the compiled loop."""
    r, sigma = params
    n_paths, n_steps = z.shape
    paths = np.empty((n_paths, n_steps + 1))
    paths[:, 0] = 1.0
    for t in range(n_steps):
        paths[:, t + 1] = paths[:, t] * np.exp(r - 0.5 * sigma**2 + sigma * z[:, t])
    return paths[:, 1:].mean()


def inputs_paths_by_columns():
    return np.array([0.03, 0.2]), np.random.default_rng(31).normal(size=(3, 4))


PROGRAMS += ["stencil_of_a_module_kernel", "paths_by_columns"]


class GaussianKDE:
    """scipy.stats.gaussian_kde's shape: data and a bandwidth kept by ``__init__``, a method reading them."""

    def __init__(self, data, bw=0.5):
        self.data = data
        self.bw = bw
        self.n = data.shape[0]

    def logpdf(self, x):
        z = (x[:, None] - self.data[None, :]) / self.bw
        return np.log(np.sum(np.exp(-0.5 * z**2), axis=1) / self.n) - self._norm()

    def _norm(self):
        return np.log(self.bw * np.sqrt(2 * np.pi))


@dataclass
class Affine:
    """A dataclass layer with a method calling another."""

    w: np.ndarray
    b: float = 0.1

    def apply(self, x):
        return self.act(x @ self.w + self.b)

    def act(self, z):
        return np.tanh(z)


class _Stateless:
    """ML-From-Scratch's loss classes: an ``__init__`` that does nothing."""

    def __init__(self):
        pass

    def loss(self, y, p):
        p = np.clip(p, 1e-6, 1 - 1e-6)
        return -y * np.log(p) - (1 - y) * np.log(1 - p)


class _Gain:
    def __init__(self, gain=1.5):
        super().__init__()
        self.gain = gain


def objects_made_inside(data, x):
    """g37: objects of the program's classes made in the function, read by attributes and methods."""
    kde = GaussianKDE(data, bw=0.4 + 0.1 * np.mean(data**2))
    layer = Affine(np.outer(data[:2], data[:2]))
    criterion = _Stateless()
    p = 1.0 / (1.0 + np.exp(-x))
    return (
        -np.mean(kde.logpdf(x))
        + kde.bw
        + np.sum(layer.apply(x[:2]))
        + np.mean(GaussianKDE(data).logpdf(x[:1]))
        + np.mean(criterion.loss(0.5, p)) * _Gain().gain
    )


def inputs_objects_made_inside():
    r = np.random.default_rng(37)
    return r.normal(size=4), r.normal(size=3)


def object_passed_on(data, x):
    """An object made in the function handed to a helper on the line that returns: the helper written in
    place (``factories``), the object as names."""
    kde = GaussianKDE(data)
    return _mean_logpdf(kde, x)


def _mean_logpdf(kde, x):
    return np.mean(kde.logpdf(x))


PROGRAMS += ["objects_made_inside"]


def _tower(blocks, h):
    if not blocks:
        return h
    first, *rest = blocks
    return _tower(rest, h + np.tanh(h @ first))


def recursive_tower(x, blocks):
    """p43: a tower written recursively over its list of blocks (``first, *rest = blocks``)."""
    return np.sum(_tower(blocks, x) ** 2)


def inputs_recursive_tower():
    r = np.random.default_rng(43)
    return r.normal(size=3), [0.5 * r.normal(size=(3, 3)) for _ in range(2)]


def recursive_tower_loss(blocks, x):
    """The same, differentiated with respect to the blocks."""
    return np.sum(_tower(blocks, x) ** 2)


def rts_backward_pass(y, a):
    """g44: a filter's means collected by ``append``, copied by ``list(...)`` (two at once) and written back
    by the index of a ``reversed(range(...))`` loop (a Rauch-Tung-Striebel smoother's backward pass).
    """
    m, p = 0.0, 1.0
    ms, ps = [], []
    for yt in y:
        p = a * p * a + 0.1
        gain = p / (p + 0.5)
        m = a * m + gain * (yt - a * m)
        p = (1.0 - gain) * p
        ms.append(m)
        ps.append(p)
    sm, sp = list(ms), list(ps)
    for t in reversed(range(len(y) - 1)):
        g = ps[t] * a / (a * ps[t] * a + 0.1)
        sm[t] = ms[t] + g * (sm[t + 1] - a * ms[t])
        sp[t] = ps[t] + g * (sp[t + 1] - ps[t]) * g
    return np.sum(np.array(sm) ** 2) + np.sum(np.log(np.array(sp)))


def inputs_rts_backward_pass():
    return np.array([0.3, -0.2, 0.9, 1.4, 0.1, -0.6]), 0.8


PROGRAMS += ["rts_backward_pass"]


def list_written_by_a_compiled_counter(y, a):
    """``hs = [0.0] * T`` written at ``hs[t]`` in a loop that compiles: the list the loop collects."""
    hs = [0.0] * len(y)
    h = 0.0
    for t in range(len(y)):
        h = np.tanh(a * h + y[t])
        hs[t] = h
    return np.sum(np.array(hs) ** 2)


def list_read_where_a_compiled_counter_writes_it(y, a):
    """The same list read in the loop (``hs[t - 1]``): a Python list at a traced position."""
    hs = [0.0] * len(y)
    h = 0.0
    for t in range(len(y)):
        h = np.tanh(a * h + y[t] + 0.1 * hs[t - 1])
        hs[t] = h
    return np.sum(np.array(hs) ** 2)


def inputs_made_arrays_by_map(w, x):
    """h04: ``w, x = map(np.asarray, (w, x))``, the usual first line that accepts lists, and a lambda mapped
    over a list display, unpacked at once."""
    w, x = map(np.asarray, (w, x))
    a, b = map(lambda t: np.tanh(t) * 2.0, [w, x])  # noqa: C417
    return np.sum(a * b) + np.sum(w**2)


def inputs_inputs_made_arrays_by_map():
    return np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -0.5])


PROGRAMS += ["inputs_made_arrays_by_map"]


def list_reversed_in_place(ws, x):
    """h37: ``hs.reverse()`` of a list the function made (a comprehension): ``hs = hs[::-1]``."""
    hs = [np.tanh(x * w) for w in ws]
    hs.reverse()
    out = []
    for h in hs:
        out.append(h * 2.0)
    out.reverse()
    return np.sum(hs[0] * 2.0 + hs[-1]) + np.sum(out[0])


def inputs_list_reversed_in_place():
    return np.array([0.5, 1.5, -0.7]), np.array([1.0, 2.0])


PROGRAMS += ["list_reversed_in_place"]


class _ScaledParams:
    """A wrapper over a flat vector with read-only views (h39's ``Params``)."""

    def __init__(self, theta):
        self.theta = theta

    @property
    def log_scale(self):
        return self.theta[0]

    @property
    def weights(self):
        return self.theta[1:] * np.exp(self.log_scale)

    def predict(self, x):
        return np.tanh(x @ self.weights)


def objects_with_properties(theta, x):
    """``p.weights`` of an object made in the function, a property reading another: its getter called."""
    p = _ScaledParams(theta)
    return np.sum(p.predict(x) ** 2) + p.log_scale**2


def inputs_objects_with_properties():
    r = np.random.default_rng(17)
    return r.normal(size=3) * 0.5, r.normal(size=(4, 2))


PROGRAMS += ["objects_with_properties"]


def dicts_updated_functionally(params, x):
    """h18/h38: ``{**params, "w": ...}`` and ``dict(params)``, the functional updates JAX code writes."""
    shrunk = {**params, "w": params["w"] * 0.5}
    copy = dict(shrunk)
    copy["b"] = copy["b"] + 1.0
    return np.sum(np.tanh(x @ copy["w"] + copy["b"]) ** 2) + np.sum(params["w"] ** 2)


def inputs_dicts_updated_functionally():
    r = np.random.default_rng(18)
    return {"w": r.normal(size=3), "b": np.array(0.1)}, r.normal(size=(4, 3))


PROGRAMS += ["dicts_updated_functionally"]


def masks_given_as_arguments(w, x, y, observed, rows, picks):
    """scipy's matrix completion and masked losses: keys the caller passes. ``observed`` and ``rows`` are
    boolean masks (a selection of a size known only at run time, reduced: it compiles as a masked
    reduction), ``picks`` integer positions (gathered); s2s tells them apart when the code is traced.
    """
    err = np.tanh(x @ w) - y
    fit = 0.5 * np.sum(err[observed] ** 2) + np.mean(np.abs(err)[observed])
    worst = np.max(err[rows] ** 2)
    picked = np.sum(np.log(1.0 + err[picks] ** 2)) / len(err[picks])
    return fit + worst + picked + len(err[rows])


def inputs_masks_given_as_arguments():
    r = np.random.default_rng(19)
    x, y = r.normal(size=(5, 3)), r.normal(size=(5, 2))
    observed = np.array(
        [[True, False], [True, True], [False, True], [True, False], [False, False]]
    )
    rows = np.array([False, True, True, False, True])
    return r.normal(size=(3, 2)), x, y, observed, rows, np.array([4, 0, 4])


PROGRAMS += ["masks_given_as_arguments"]


class _DenseLayer:
    """ "Neural Networks from Scratch": ``forward`` stores its input and output on the object."""

    def __init__(self, weights, biases):
        self.weights = weights
        self.biases = biases

    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.dot(inputs, self.weights) + self.biases


class _ReLU:
    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.maximum(0, inputs)


class _Loss:
    def calculate(self, output, y):
        return np.mean(self.forward(output, y))


class _CrossEntropy(_Loss):
    def forward(self, y_pred, y_true):
        clipped = np.clip(y_pred, 1e-7, 1 - 1e-7)
        return -np.log(clipped[range(len(y_pred)), y_true])


class _SoftmaxLayer(_DenseLayer):
    def __call__(self, inputs):
        self.forward(inputs)
        exp = np.exp(self.output - np.max(self.output, axis=1, keepdims=True))
        return exp / np.sum(exp, axis=1, keepdims=True)


def nnfs_objects(weights, X, y):
    """Layers as objects whose methods store ``self.output``, a loss whose base class calls the subclass's
    ``forward``, a layer called through ``__call__``, and ``p[range(n), y]`` (an integer array index).
    """
    dense1 = _DenseLayer(weights["W1"], weights["b1"])
    activation1 = _ReLU()
    dense2 = _SoftmaxLayer(weights["W2"], weights["b2"])
    loss_function = _CrossEntropy()
    dense1.forward(X)
    activation1.forward(dense1.output)
    probabilities = dense2(activation1.output)
    return loss_function.calculate(probabilities, y) + 0.01 * np.sum(dense2.inputs**2)


def inputs_nnfs_objects():
    r = np.random.default_rng(20)
    weights = {
        "W1": r.normal(size=(2, 5)) * 0.5,
        "b1": np.full((1, 5), 0.05),
        "W2": r.normal(size=(5, 3)) * 0.5,
        "b2": np.zeros((1, 3)),
    }
    return weights, r.normal(size=(6, 2)), np.array([0, 2, 1, 1, 0, 2])


PROGRAMS += ["nnfs_objects"]


class _Network:
    """A model object made at module level, holding its configuration: handed to helpers."""

    def __init__(self, scale, activation):
        self.scale = scale
        self.activation = activation

    def apply(self, w, x):
        return self.activation(self.scale * x @ w)

    def penalty(self, w):
        return 0.5 * self.scale * np.sum(w**2)


NETWORK = _Network(2.0, np.tanh)


def _predict(model, w, x):
    return model.apply(w, x)


def _regularized(model, w, residual, weight=1.0):
    return np.mean(residual**2) + weight * model.penalty(w)


def model_object_passed_to_helpers(w, x, y):
    """A module-level model object passed to helpers, which call its methods (bound per object)."""
    residual = _predict(NETWORK, w, x) - y
    return _regularized(NETWORK, w, residual, weight=0.1) + np.sum(NETWORK.apply(w, x))


def inputs_model_object_passed_to_helpers():
    r = np.random.default_rng(21)
    return r.normal(size=(3, 2)) * 0.5, r.normal(size=(5, 3)), r.normal(size=(5, 2))


PROGRAMS += ["model_object_passed_to_helpers"]


def im2col_convolution(kernel, images):
    """A convolution layer as NumPy users write it without loops: windows by
    ``sliding_window_view``, contracted with the kernel by ``einsum``."""
    windows = np.lib.stride_tricks.sliding_window_view(images, (3, 3), axis=(1, 2))
    features = np.maximum(np.einsum("nhwij,ij->nhw", windows, kernel), 0.0)
    return np.mean(features**2) + np.sum(np.tanh(features[:, ::2, :]))


def inputs_im2col_convolution():
    r = np.random.default_rng(22)
    return r.normal(size=(3, 3)), r.normal(size=(2, 5, 6))


PROGRAMS += ["im2col_convolution"]


def history_of_lists(w, x):
    """A training-style record: a dict of lists grown in a loop, read by its keys after it."""
    history = {"loss": [], "norm": []}
    history["steps"] = []
    h = x
    for step in range(3):
        h = np.tanh(h * w + 0.1 * step)
        history["loss"].append(np.sum(h**2))
        history["norm"].append(np.sqrt(np.sum(h**2) + 1.0))
        history["steps"].append(h)
    last = np.stack(history["steps"])[-1]
    return sum(history["loss"]) + max(history["norm"]) + np.sum(last)


def inputs_history_of_lists():
    r = np.random.default_rng(23)
    return r.normal(size=4), r.normal(size=4)


PROGRAMS += ["history_of_lists"]


def python_numbers_at_the_end(w, x):
    """``.item()`` as NumPy code returns a Python number (an index from ``argmax`` keeps its int)."""
    scores = np.tanh(x @ w)
    best = np.argmax(scores[0]).item()
    return np.mean(scores**2).item() + scores[0, best].item()


def inputs_python_numbers_at_the_end():
    r = np.random.default_rng(24)
    return r.normal(size=(3, 4)), r.normal(size=(2, 3))


PROGRAMS += ["python_numbers_at_the_end"]


def _huber(t, delta):
    if abs(t) < delta:
        return 0.5 * t**2
    return delta * (abs(t) - 0.5 * delta)


@np.vectorize
def _soft_sign(t):
    return t / (1.0 + abs(t))


def _normalized(row, p):
    return row / np.sum(np.abs(row) ** p) ** (1.0 / p)


def mapped_by_numpy(x, y):
    """``np.vectorize`` (a Python ``if`` per element; a module-level ``@np.vectorize``; a local alias)
    and ``np.apply_along_axis`` (extra arguments; a lambda returning a number), read as ``jax.vmap``.
    """
    loss = np.vectorize(_huber)(x - y, 0.5)
    robust = np.vectorize(_huber, otypes=[float])
    columns = np.apply_along_axis(_normalized, 0, x, 2.0)
    spread = np.apply_along_axis(lambda r: np.max(r) - np.min(r), 1, x)
    return (
        np.sum(loss)
        + np.sum(robust(x, 1.0))
        + np.sum(_soft_sign(x))
        + np.sum(columns * y)
        + np.sum(spread**2)
    )


def inputs_mapped_by_numpy():
    r = np.random.default_rng(25)
    return r.normal(size=(3, 4)), r.normal(size=(3, 4))


PROGRAMS += ["mapped_by_numpy"]


def _linear_activation_forward(A_prev, W, b, activation):
    Z = np.dot(W, A_prev) + b
    A = 1 / (1 + np.exp(-Z)) if activation == "sigmoid" else np.maximum(0, Z)
    return A, ((A_prev, W, b), Z)


def deeplearning_ai_layers(parameters, X, Y):
    """deeplearning.ai's L-layer network: ``parameters["W" + str(l)]``, caches collected in the loop and
    one more appended after it (tuples whose arrays change shape from layer to layer).
    """
    caches = []
    A = X
    L = len(parameters) // 2
    for l in range(1, L):
        A, cache = _linear_activation_forward(
            A, parameters["W" + str(l)], parameters["b" + str(l)], "relu"
        )
        caches.append(cache)
    AL, cache = _linear_activation_forward(
        A, parameters["W" + str(L)], parameters["b" + str(L)], "sigmoid"
    )
    caches.append(cache)
    m = Y.shape[1]
    cost = (-1 / m) * np.sum(Y * np.log(AL) + (1 - Y) * np.log(1 - AL))
    return np.squeeze(cost) + 0.01 * np.sum(caches[0][1] ** 2) / len(caches)


def inputs_deeplearning_ai_layers():
    r = np.random.default_rng(26)
    dims = [3, 5, 4, 1]
    parameters = {}
    for l in range(1, len(dims)):
        parameters["W" + str(l)] = r.normal(size=(dims[l], dims[l - 1])) * 0.5
        parameters["b" + str(l)] = np.zeros((dims[l], 1))
    return parameters, r.normal(size=(3, 6)), (r.uniform(size=(1, 6)) > 0.5) * 1.0


PROGRAMS += ["deeplearning_ai_layers"]


def layers_by_shifted_index(Ws, x):
    """Lists read by a loop's index plus or minus a constant (``Ws[l - 1]`` for ``l in range(1, L)``,
    ``Ws[i + 1]``): loops over the lists from that item on."""
    a = x
    for l in range(1, 3):
        a = np.tanh(Ws[l - 1] @ a)
    total = 0.0
    for i in range(len(Ws) - 1):
        total = total + np.sum(Ws[i] * Ws[i + 1])
    return np.sum(a**2) + 0.1 * total


def inputs_layers_by_shifted_index():
    r = np.random.default_rng(27)
    return [r.normal(size=(2, 2)) * 0.7 for _ in range(3)], r.normal(size=2)


PROGRAMS += ["layers_by_shifted_index"]


class _TwoLayerNet:
    """cs231n's TwoLayerNet: an ``__init__`` that draws its own weights unless it is given them, filling a
    dict item by item; ``loss`` returning the scores early when there are no labels."""

    def __init__(self, input_size, hidden_size, output_size, std=1e-4, params=None):
        if params is None:
            self.params = {}
            self.params["W1"] = std * np.random.randn(input_size, hidden_size)
            self.params["b1"] = np.zeros(hidden_size)
        else:
            self.params = params

    def loss(self, X, y=None, reg=0.0):
        W1, b1 = self.params["W1"], self.params["b1"]
        scores = np.maximum(0, X.dot(W1) + b1)
        if y is None:
            return scores
        scores = scores - np.max(scores, axis=1, keepdims=True)
        probs = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
        N = X.shape[0]
        return -np.sum(np.log(probs[np.arange(N), y])) / N + 0.5 * reg * np.sum(W1 * W1)


def cs231n_two_layer_net(params, X, y):
    net = _TwoLayerNet(3, 4, 4, params=params)
    return net.loss(X, y, reg=0.05)


def inputs_cs231n_two_layer_net():
    r = np.random.default_rng(28)
    params = {"W1": r.normal(size=(3, 4)), "b1": r.normal(size=4) * 0.1}
    return params, r.normal(size=(5, 3)), np.array([0, 3, 1, 2, 1])


def cs231n_net_drawing_its_weights(X, y):
    """The branch that draws with ``np.random`` taken: the located refusal, when it runs."""
    net = _TwoLayerNet(3, 4, 4)
    return net.loss(X, y)


PROGRAMS += ["cs231n_two_layer_net"]


def _decay_model(t, a, k, c=0.0):
    return a * np.exp(-k * t) + c


def curve_fit_residuals(p, t, y):
    """scipy's ``curve_fit`` convention: the model called with the parameter array spread, ``f(t, *p)``
    (its rows, one per parameter; the default used where ``p`` is shorter)."""
    full = np.sum((y - _decay_model(t, *p)) ** 2)
    short = np.sum((y - _decay_model(t, *p[:2])) ** 2)
    return 0.5 * full + 0.25 * short


def inputs_curve_fit_residuals():
    t = np.linspace(0.0, 2.0, 6)
    return np.array([1.2, 0.7, 0.1]), t, np.exp(-t) + 0.05


PROGRAMS += ["curve_fit_residuals"]


def class_means_by_mask(w, X, y):
    """Fisher's class means (``X[y > 0].mean(axis=0)``) and a per-feature max over the other class:
    reductions along the axis a selection makes, as masked reductions."""
    mu_pos = X[y > 0].mean(axis=0)
    mu_neg = np.mean(X[y < 0], axis=0)
    spread = np.max(X[y < 0] * w, axis=0)
    return (w @ (mu_pos - mu_neg)) ** 2 + np.sum(spread**2)


def inputs_class_means_by_mask():
    r = np.random.default_rng(29)
    return r.normal(size=3), r.normal(size=(7, 3)), np.array([1, -1, 1, 1, -1, -1, 1.0])


PROGRAMS += ["class_means_by_mask"]


def selection_sizes(w, X, y):
    """``s.size`` of a selection by a mask: its count of kept elements (a mean written by hand)."""
    margins = y * (X @ w)
    pos = margins[margins > 0]
    return np.sum(pos) / max(pos.size, 1) + np.sum(X[X > 0] * w[0]) / X[X > 0].size


inputs_selection_sizes = inputs_class_means_by_mask
PROGRAMS += ["selection_sizes"]


def path_length_pairwise(points, w):
    """``itertools.pairwise`` of a list of points: ``zip(points, points[1:])``."""
    moved = [p * w for p in points]
    return sum(
        np.sqrt(np.sum((b - a) ** 2) + 1e-3) for a, b in itertools.pairwise(moved)
    )


def inputs_path_length_pairwise():
    r = np.random.default_rng(30)
    return [r.normal(size=2) for _ in range(4)], np.array([1.5, 0.5])


PROGRAMS += ["path_length_pairwise"]


def _nll_factory(X, y, noise):
    def nll(theta):
        K = np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / theta**2) + noise * np.eye(
            len(X)
        )
        return 0.5 * y @ np.linalg.solve(K, y) + 0.5 * np.linalg.slogdet(K)[1]

    return nll


def factory_called_at_once(theta, X, y):
    """Krasser's GP notebook: the objective a factory returns, called where it is made."""
    return _nll_factory(X, y, noise=0.1)(theta) + 0.1 * _nll_factory(X, y, 0.2)(
        theta * 2.0
    )


def inputs_factory_called_at_once():
    return 1.2, np.linspace(0.0, 1.0, 4), np.array([0.1, 0.5, 0.2, -0.3])


PROGRAMS += ["factory_called_at_once"]


def padded_attention(w, x, key_mask):
    """Attention over padded keys: ``scores[:, ~key_mask] = -1e9`` (a number written by a mask the caller
    passes, among full slices: a ``where``)."""
    q, k = x @ w, x @ w.T
    scores = q @ k.T / np.sqrt(x.shape[1])
    scores[:, ~key_mask] = -1e9
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return np.sum(e / e.sum(axis=1, keepdims=True) @ x)


def _hidden_states(w, xs):
    h = np.zeros_like(w)
    hs, caches = [], []
    for x in xs:
        h = np.tanh(w * x + h)
        hs.append(h)
        caches.append((h, x))
    return hs, caches


def _features(w):
    return [np.tanh(w), w**2]


class _Recurrent:
    def __init__(self, w):
        self.w = w

    def states(self, xs):
        h, out = np.zeros_like(self.w), []
        for x in xs:
            h = np.sin(self.w * x) + 0.5 * h
            out.append(h)
        return out


def lists_read_as_arrays(w, xs):
    """j17: NumPy functions of Python lists, which NumPy reads as one array: a list display bound to a
    name, a helper's lists (built by ``append``, one of a returned pair, an item of its result), a
    method's list, each reduced by ``np.mean``/``np.max``/``np.var``/``np.linalg.norm``.
    """
    terms = [np.sum(w**2), np.sum(np.cos(w))]
    hs, _ = _hidden_states(w, xs)
    first = _hidden_states(w * 0.5, xs)[0]
    states = _Recurrent(w).states(xs)
    return (
        np.mean(terms)
        + np.sum(np.mean(hs, axis=0) ** 2)
        + np.sum(np.max(first, axis=0))
        + np.sum(np.var(_features(w), axis=0))
        + np.sum(np.linalg.norm(states, axis=1))
    )


def inputs_lists_read_as_arrays():
    r = np.random.default_rng(31)
    return r.normal(size=3), r.normal(size=(4, 3))


PROGRAMS += ["lists_read_as_arrays"]


def mean_of_a_list_argument(ws, x):
    return np.sum(np.mean(ws, axis=0) * x)


def mean_of_a_list_argument_as_an_array(ws, x):
    return np.sum(np.mean(np.asarray(ws), axis=0) * x)


def local_functions_in_lists(w, x):
    """Local functions kept in a list: a loop and a generator over a display of local ``def``s, a lambda
    and a NumPy function, a list bound to a name read by a literal index and zipped with weights.
    """

    def squashed(z):
        return np.tanh(z * w)

    def waved(z):
        return np.sin(z) * w

    total = 0.0
    for f in [squashed, waved]:
        total = total + np.sum(f(x))
    features = [squashed, lambda z: np.cos(z * w), np.exp]
    total = total + sum(np.sum(f(x * 0.5)) for f in features)
    for f, c in zip(features, [0.5, 1.5, -0.2]):
        total = total + c * np.sum(f(x))
    return total + np.sum(features[1](x)) + np.sum([squashed, np.sin][0](x))


def inputs_local_functions_in_lists():
    r = np.random.default_rng(32)
    return r.normal(size=3), r.normal(size=3)


PROGRAMS += ["local_functions_in_lists"]


class _CastingModel:
    """cs231n's models: a dtype kept on the object (``self.dtype = np.float64``), parameters cast to it."""

    def __init__(self, params, dtype=np.float64):
        self.dtype = dtype
        self.params = {}
        for k, v in params.items():
            self.params[k] = v.astype(self.dtype)

    def loss(self, x):
        return np.sum(np.tanh(x @ self.params["W"]) * self.params["v"])


def model_holding_its_dtype(params, x):
    return _CastingModel(params).loss(x)


def inputs_model_holding_its_dtype():
    r = np.random.default_rng(33)
    return {"W": r.normal(size=(2, 3)), "v": r.normal(size=3)}, r.normal(size=2)


PROGRAMS += ["model_holding_its_dtype"]


def tuples_named_stay_tuples(w, x):
    """A name bound to a tuple display (``bins = (3, 3)``, a shape) stays a tuple where a NumPy function
    takes it, while a name bound to a list display of arrays is read as one array."""
    bins, shape = (3, 3), (3, 3)
    counts, _ = np.histogramdd(
        np.stack([x, x**2], axis=1),
        bins=bins,
        range=[(-1.0, 1.0), (0.0, 1.0)],
        weights=w[0] + x,
    )
    rows = [w * 2.0, np.sin(w)]
    return (
        np.sum(counts**2)
        + np.sum(np.reshape(x, shape) * w[1])
        + np.sum(np.max(rows, axis=0))
    )


def inputs_tuples_named_stay_tuples():
    return np.array([0.5, -1.0, 2.0]), np.linspace(-0.9, 0.9, 9)


PROGRAMS += ["tuples_named_stay_tuples"]


NEG_INF = -float("inf")  # the CTC and Viterbi code people copy
MISSING = float("nan")


def infinite_module_constants(w, x):
    """Module-level constants that are not finite (``-inf``, ``nan``), read by the function."""
    start = np.logaddexp(w[0], NEG_INF)
    filled = np.where(np.isnan(np.array([MISSING, 1.0])), 0.0, 1.0)
    return start + np.sum(np.tanh(x * w)) + np.sum(filled) * w[1]


def inputs_infinite_module_constants():
    return np.array([0.3, -0.5]), np.array([1.0, 2.0])


PROGRAMS += ["infinite_module_constants"]


class _Squash:
    def forward(self, x):
        return np.tanh(x)

    def penalty(self, w):
        return 0.0 * np.sum(w)


class _Shift:
    def __init__(self, by):
        self.by = by

    def forward(self, x):
        return x + self.by

    def penalty(self, w):
        return self.by * np.sum(w**2)


LAYER_OBJECTS = [_Squash(), _Shift(0.5), _Squash()]


def module_list_of_layer_objects(w, x):
    """autograd's convnet: module-level layer objects of several classes, looped over by their methods."""
    h = x * w
    for layer in LAYER_OBJECTS:
        h = layer.forward(h)
    return np.sum(h**2) + sum(layer.penalty(w) for layer in LAYER_OBJECTS)


def inputs_module_list_of_layer_objects():
    r = np.random.default_rng(34)
    return r.normal(size=3), r.normal(size=3)


PROGRAMS += ["module_list_of_layer_objects"]


class _Doubled:
    def __init__(self, w):
        self.v = w * 2.0

    def __call__(self, x):
        return np.tanh(self.v * x)


def objects_used_where_made(w, x):
    """Objects of a class used where they are made: an attribute (``Scale(w).v``), a call (``__call__``)
    and a method of the object made on the spot."""
    return (
        np.sum(_Doubled(w).v ** 2)
        + np.sum(_Doubled(w * 0.5)(x))
        + np.sum(_Doubled(w).__call__(x) * x)
    )


def inputs_objects_used_where_made():
    r = np.random.default_rng(35)
    return r.normal(size=3), r.normal(size=3)


PROGRAMS += ["objects_used_where_made"]


def _logsumexp_of_args(*args):
    """awni's CTC: Python's ``max`` of ``*args``, then ``math.exp``/``math.log`` of each."""
    a_max = max(args)
    return a_max + math.log(sum(math.exp(a - a_max) for a in args))


def max_of_star_args(w):
    pair = (w[0] * w[1], w[2])
    return _logsumexp_of_args(w[0], w[1], w[2]) + min(pair) * 0.5


def inputs_max_of_star_args():
    return (np.array([0.3, -0.5, 1.2]),)


PROGRAMS += ["max_of_star_args"]


class _Cast:
    def __init__(self, w, dtype=np.float64, scale=1.5):
        self.w = w.astype(dtype) * scale


def object_with_a_dtype_default(w, x):
    """An ``__init__`` whose default is a NumPy type (``dtype=np.float64``), left out by the call."""
    return np.sum(_Cast(w).w * x) + np.sum(_Cast(w, np.float64, 0.5).w ** 2)


def inputs_object_with_a_dtype_default():
    r = np.random.default_rng(36)
    return r.normal(size=3), r.normal(size=3)


PROGRAMS += ["object_with_a_dtype_default"]


def _batchnorm_forward(x, gamma, beta, bn_param):
    """cs231n's batchnorm_forward with its dict of options copied first: the running mean written into
    the copy."""
    bn_param = bn_param.copy()
    eps = bn_param.get("eps", 1e-5)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    if bn_param["mode"] == "train":
        mu = x.mean(axis=0)
        out = gamma * (x - mu) / np.sqrt(x.var(axis=0) + eps) + beta
        running_mean = 0.9 * running_mean + 0.1 * mu
    else:
        out = gamma * (x - running_mean) + beta
    bn_param["running_mean"] = running_mean
    return out, bn_param


def dict_options_copied(gamma, x):
    out, state = _batchnorm_forward(x, gamma, 0.1, {"mode": "train", "eps": 1e-3})
    return np.sum(out**2) + np.sum(state["running_mean"] * gamma)


def inputs_dict_options_copied():
    r = np.random.default_rng(41)
    return r.normal(size=2), r.normal(size=(4, 2))


PROGRAMS += ["dict_options_copied"]


def dpp_subset_likelihood(w, X, Y):
    """A determinantal point process's log-likelihood of a subset: the kernel's submatrix by ``np.ix_``."""
    L = (X * w) @ X.T + 0.1 * np.eye(X.shape[0])
    rows, cols = np.ix_(Y, Y[::-1])
    crossed = np.sum(L[rows, cols] ** 2) * 0.01
    return (
        np.linalg.slogdet(L[np.ix_(Y, Y)])[1]
        - np.linalg.slogdet(L + np.eye(len(L)))[1]
        + crossed
    )


def inputs_dpp_subset_likelihood():
    r = np.random.default_rng(43)
    return np.abs(r.normal(size=3)) + 0.5, r.normal(size=(5, 3)), np.array([0, 2, 3])


PROGRAMS += ["dpp_subset_likelihood"]


def _dropout_forward(x, dropout_param):
    """cs231n's inverted dropout, its uniforms passed in the dict of options."""
    p, mode = dropout_param["p"], dropout_param["mode"]
    out = None
    if mode == "train":
        mask = (
            dropout_param["u"] < p
        ) / p  # a boolean array divided by the keep probability
        out = x * mask
    elif mode == "test":
        out = x
    return out


def dropout_options_written_per_layer(params, us):
    w, p = params
    dropout_param = {"mode": "train", "p": p}
    s = 0.0
    for i in range(2):
        dropout_param["u"] = us[i]
        s += np.sum(_dropout_forward(w * (i + 1.0), dropout_param) ** 2)
    return s


def inputs_dropout_options_written_per_layer():
    params = (np.array([1.0, -2.0, 0.5]), np.array(0.75))
    return params, np.array([[0.2, 0.9, 0.5], [0.8, 0.1, 0.5]])


PROGRAMS += ["dropout_options_written_per_layer"]


class _Norm:
    """A layer norm whose ``__init__`` assigns a tuple (``self.gamma, self.beta, self.eps = ...``)."""

    def __init__(self, gamma, beta, eps=1e-5):
        self.gamma, self.beta, self.eps = gamma, beta, eps

    def forward(self, x):
        mu = x.mean(axis=-1, keepdims=True)
        return (
            self.gamma * (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + self.eps)
            + self.beta
        )


class _Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def forward(self, x):
        return self._act(x @ self.W + self.b)

    @staticmethod
    def _act(z):
        return np.where(z > 0, z, 0.1 * z)


class _Attention:
    """Layers handed to the constructor, kept as attributes."""

    def __init__(self, qk: _Dense, v: _Dense, scale: float):
        self.qk, self.v, self.scale = qk, v, scale

    def forward(self, x):
        s = self.qk.forward(x) @ x.T * self.scale
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ self.v.forward(x)


class _RunningNorm:
    """A batch norm updating its running mean as a side effect (read after the forward pass)."""

    def __init__(self, gamma, momentum=0.1):
        self.gamma = gamma
        self.momentum = momentum
        self.running_mean = np.zeros_like(gamma)

    def __call__(self, x):
        mean = x.mean(axis=0)
        self.running_mean = (
            1 - self.momentum
        ) * self.running_mean + self.momentum * mean
        return self.gamma * (x - mean)


class _Block:
    """Layer objects made by the block's ``__init__``, from ``*params[...]``."""

    def __init__(self, p, scale=0.5):
        self.norm = _Norm(*p["norm"])
        self.attn = _Attention(_Dense(*p["qk"]), _Dense(*p["v"]), scale)
        self.bn = _RunningNorm(p["gamma"])

    def forward(self, x):
        h = x + self.attn.forward(self.norm.forward(x))
        return self.bn(h)


def layer_objects_holding_layers(params, x):
    """Model-zoo layer classes: a block holding layers that hold layers (made from ``*params[...]``), a
    static method, a side effect on an attribute read through two objects."""
    block = _Block(params)
    out = block.forward(x)
    return np.sum(out**2) + np.sum(block.bn.running_mean**2)


def inputs_layer_objects_holding_layers():
    r = np.random.default_rng(41)
    d = 3
    params = {
        "norm": [1.0 + 0.1 * r.normal(size=d), 0.1 * r.normal(size=d)],
        "qk": (r.normal(size=(d, d)), 0.1 * r.normal(size=d)),
        "v": (r.normal(size=(d, d)), 0.1 * r.normal(size=d)),
        "gamma": 1.0 + 0.1 * r.normal(size=d),
    }
    return params, r.normal(size=(4, d))


PROGRAMS += ["layer_objects_holding_layers"]


def _tree_map(fn, tree, *rest):
    """A hand-written ``tree_map`` over dicts of arrays, with ``*rest`` trees."""
    return {k: fn(v, *(r[k] for r in rest)) for k, v in tree.items()}


def unrolled_adam_with_a_tree_map(params, x):
    """m21: lambdas closing over the step's constants passed to a helper with ``*rest``."""
    m = _tree_map(lambda p: np.zeros_like(p), params)
    b1, lr = 0.9, 0.1
    for t in range(1, 3):
        grads = _tree_map(lambda p: 2.0 * p * np.mean(x**2), params)
        m = _tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        params = _tree_map(lambda p, m_: p - lr * m_ / (1 - b1**t), params, m)
    return sum(np.sum(np.tanh(v * x[: v.size])) for v in params.values())


def inputs_unrolled_adam_with_a_tree_map():
    r = np.random.default_rng(43)
    return {"w": r.normal(size=3), "b": r.normal(size=1)}, r.normal(size=3)


PROGRAMS += ["unrolled_adam_with_a_tree_map"]


def _chain(ws, z):
    if not ws:
        return z
    return _chain(ws[1:], np.tanh(z * ws[0]))


def chain_over_its_own_rows(x):
    """A recursion over a tuple made from the mapped argument: ``if not ws`` and ``ws[1:]`` of a tuple whose
    length every example shares (under ``vmap`` both branches ran, and the recursion never ended).
    """
    return np.sum(_chain((x, 2 * x, x[::-1]), np.ones(x.shape[0])) ** 2)


def tower_of_its_own_rows(x):
    """The same with ``first, *rest = blocks`` of blocks made from the mapped argument."""
    blocks = [np.outer(x, x), np.eye(x.shape[0]) * x]
    return np.sum(_tower(blocks, x) ** 2)


def rbf_kernel_by_ufunc_outer(x, ell):
    """A GP's kernel as NumPy code writes it: ``np.subtract.outer`` of the inputs, squared."""
    d2 = np.subtract.outer(x, x) ** 2
    K = np.exp(-0.5 * d2 / ell**2) + 1e-3 * np.eye(x.shape[0])
    return np.sum(np.linalg.solve(K, np.sin(x))) + np.sum(np.multiply.outer(x, x[:2]))


def ufunc_reductions_and_accumulations(x):
    """``np.add.reduce`` (axis 0 by default), ``np.minimum.reduce`` along an axis with ``keepdims``,
    ``np.multiply.accumulate``."""
    X = np.outer(x, x) + 1.0
    first = np.add.reduce(X)
    last = np.minimum.reduce(X, axis=1, keepdims=True)
    return np.sum(first**2) + np.sum(last * X) + np.sum(np.multiply.accumulate(x + 2.0))


def imports_at_the_top_of_the_function(x):
    """Library code's local imports: a function, a module under another name, a package's submodule."""
    import numpy.linalg as la
    import scipy.stats
    from scipy.special import expit, logsumexp

    return (
        logsumexp(x)
        + np.sum(expit(x))
        + la.norm(x)
        + np.sum(scipy.stats.norm.logpdf(x, 0.5, 2.0))
    )


def min_char_rnn(params, inputs_, targets, hprev):
    """Karpathy's min-char-rnn: dicts keyed by the time step (``xs, hs, ys, ps = {}, {}, {}, {}``), the
    previous step's state read at ``t - 1`` (``hs[-1]`` the start), a one-hot row written by index.
    """
    Wxh, Whh, Why, bh, by = (params[k] for k in ("Wxh", "Whh", "Why", "bh", "by"))
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    for t in range(len(inputs_)):
        xs[t] = np.zeros((Wxh.shape[1], 1))
        xs[t][inputs_[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        ys[t] = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


def inputs_min_char_rnn():
    r, vocab, hidden = np.random.default_rng(2), 4, 3
    params = {
        "Wxh": 0.3 * r.normal(size=(hidden, vocab)),
        "Whh": 0.3 * r.normal(size=(hidden, hidden)),
        "Why": 0.3 * r.normal(size=(vocab, hidden)),
        "bh": np.zeros((hidden, 1)),
        "by": np.zeros((vocab, 1)),
    }
    data = r.integers(0, vocab, size=5)
    return params, data[:-1], data[1:], 0.1 * r.normal(size=(hidden, 1))


PROGRAMS += ["min_char_rnn"]


def maml_head_update(params, x, y):
    """One inner SGD step on the head layer only, MAML style: the adapted parameters are the hidden layers
    joined with the new head, ``params[:-1] + [(W, b)]`` (layers of different shapes).
    """

    def predict(layers, h):
        for W, b in layers[:-1]:
            h = np.tanh(h @ W + b)
        W, b = layers[-1]
        return h @ W + b

    W, b = params[-1]
    residual = predict(params, x) - y
    hidden = x
    for Wh, bh in params[:-1]:
        hidden = np.tanh(hidden @ Wh + bh)
    adapted = params[:-1] + [(W - 0.1 * hidden.T @ residual, b - 0.1 * residual.sum(0))]
    return np.mean((predict(adapted, x) - y) ** 2)


def inputs_maml_head_update():
    r = np.random.default_rng(40)
    sizes = [2, 4, 3, 1]
    params = [
        (0.5 * r.normal(size=(m, n)), 0.1 * r.normal(size=n))
        for m, n in zip(sizes[:-1], sizes[1:])  # noqa: RUF007
    ]
    return params, r.normal(size=(5, 2)), r.normal(size=(5, 1))


SIZES = [3, 4, 2]


def unflatten_with_a_counter(flat, x):
    """autograd-style flat parameter vector: layer shapes from ``list(zip(SIZES[:-1], SIZES[1:]))``, the
    hand-written unflatten ``out, i = [], 0`` then ``i += n``, and the widest layer by ``max(SIZES)``.
    """
    shapes = list(zip(SIZES[:-1], SIZES[1:]))  # noqa: RUF007 (as users write it)
    out, i = [], 0
    for shape in shapes:
        n = int(np.prod(shape))
        out.append(flat[i : i + n].reshape(shape))
        i += n
    h = x
    for W in out:
        h = np.tanh(h @ W)
    return np.sum(h**2) / max(SIZES) + len(sorted(SIZES)) * np.sum(flat[i:] ** 2)


def inputs_unflatten_with_a_counter():
    r = np.random.default_rng(41)
    return 0.5 * r.normal(size=3 * 4 + 4 * 2 + 2), r.normal(size=(2, 3))


def bidirectional_by_reversed(w, seq):
    """A bidirectional RNN's two passes: ``list(reversed(...))`` of a sequence and of the states a helper
    returns, paired with the forward states by ``list(zip(...))``, weighted by ``list(enumerate(...))``.
    """

    def run(xs, w):
        hs, h = [], 0.0
        for x in xs:
            h = np.tanh(w[0] * x + w[1] * h)
            hs.append(h)
        return hs

    forward = run(list(seq), w)
    backward = list(reversed(run(list(reversed(list(seq))), w)))
    pairs = list(zip(forward, backward))
    return sum(k * f * b for k, (f, b) in list(enumerate(pairs, 1)))


def inputs_bidirectional_by_reversed():
    r = np.random.default_rng(42)
    return np.array([0.7, -0.3]), r.normal(size=4)


PROGRAMS += [
    "maml_head_update",
    "unflatten_with_a_counter",
    "bidirectional_by_reversed",
]


def spring_chain_fixed_ends(x, k, ends):
    """A mass-spring chain whose ends are held: the positions padded with the walls' positions
    (``np.pad(..., constant_values=(left, right))``, the right wall a parameter), forces from ``np.diff``.
    """
    padded = np.pad(x, (1, 1), constant_values=(0.0, ends[1]))
    stretch = np.diff(padded) - 1.0
    energy = 0.5 * np.sum(k * stretch**2)
    grid = np.pad(np.outer(x, x), ((1, 0), (0, 1)), "constant", constant_values=0.5)
    grid = np.pad(
        grid, pad_width=((0, 1), (0, 0)), mode="constant", constant_values=0.25
    )
    return energy + 0.01 * np.sum(grid**2)


def inputs_spring_chain_fixed_ends():
    r = np.random.default_rng(43)
    return (
        np.arange(1.0, 5.0) + 0.1 * r.normal(size=4),
        1.0 + r.random(5),
        np.array([0.0, 5.2]),
    )


PROGRAMS += ["spring_chain_fixed_ends"]


def rosenbrock_as_scipy_writes_it(x):
    """``scipy.optimize.rosen`` verbatim: Python's ``sum`` of an array (its elements added)."""
    return sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0)


def inputs_rosenbrock_as_scipy_writes_it():
    return (np.array([0.5, 1.5, -0.3, 0.8]),)


PROGRAMS += ["rosenbrock_as_scipy_writes_it"]


def convolution_by_shifted_slices(x, k):
    """A 2-D convolution as a sum of shifted slices, the sum started as the number ``0.0`` in a nested
    loop (its first steps change the carry's shape: run on their own, in the inner loop and the outer).
    """
    out = 0.0
    for i in range(k.shape[0]):
        for j in range(k.shape[1]):
            out = out + x[i : i + 3, j : j + 3] * k[i, j]
    return np.sum(np.tanh(out) ** 2)


def inputs_convolution_by_shifted_slices():
    r = np.random.default_rng(44)
    return r.normal(size=(4, 4)), r.normal(size=(2, 2))


PROGRAMS += ["convolution_by_shifted_slices"]


def states_joined_in_a_loop(w, xs):
    """A recurrence whose states list grows by ``states = states + [s]`` (read back by ``states[-1]``), and
    a helper building its list the same way and returning it."""

    def run(w, xs):
        hs = []
        for x in xs:
            hs = hs + [np.sin(w * x)]
        return hs

    states = [np.zeros(2)]
    for t in range(xs.shape[0]):
        s = np.tanh(w * states[-1] + xs[t])
        states = states + [s]
    return np.sum(np.stack(states) ** 2) + np.sum(np.stack(run(w, xs)) * 2.0)


def inputs_states_joined_in_a_loop():
    r = np.random.default_rng(45)
    return r.normal(size=2), r.normal(size=(3, 2))


PROGRAMS += ["states_joined_in_a_loop"]


def joined_list_held_by_another_name(w, xs):
    """``first = states`` before ``states = states + [s]``: ``first`` keeps the one-item list (an append
    would grow it too), so the joins stay joins."""
    states = [np.zeros(2)]
    first = states
    for t in range(xs.shape[0]):
        states = states + [np.tanh(w * states[-1] + xs[t])]
    return np.sum(np.stack(states) ** 2) + len(first) * np.sum(w)


SETTINGS_OF_LAYERS = {
    "hidden": {"act": "tanh", "scale": 1.0},
    "out": {"act": "softplus", "scale": 0.5},
}
ACTS_BY_CONFIG = {"tanh": np.tanh, "softplus": lambda z: np.log1p(np.exp(z))}


def activations_passed_by_config(params, x):
    """Layers described by a configuration dict of dicts; each one's activation looked up in a table of
    functions by the configuration's string and passed to the layer helper."""

    def layer(p, h, act):
        return act(h @ p["W"] + p["b"])

    h = x
    for name, cfg in SETTINGS_OF_LAYERS.items():
        h = cfg["scale"] * layer(params[name], h, ACTS_BY_CONFIG[cfg["act"]])
    return np.sum(h**2)


def inputs_activations_passed_by_config():
    r = np.random.default_rng(47)
    params = {
        "hidden": {"W": 0.5 * r.normal(size=(3, 4)), "b": 0.1 * r.normal(size=4)},
        "out": {"W": 0.5 * r.normal(size=(4, 2)), "b": 0.1 * r.normal(size=2)},
    }
    return params, r.normal(size=(5, 3))


PROGRAMS += ["activations_passed_by_config"]


def named_layers_by_zip(params, x):
    """``dict(zip(names, params))`` and ``list(enumerate(...))``: layers named, then visited in order."""
    layers = dict(zip(["first", "second"], params))
    h = x
    for depth, name in list(enumerate(["first", "second"])):
        W, b = layers[name]
        h = np.tanh(h @ W + b) * (depth + 1)
    return np.sum(h**2)


def inputs_named_layers_by_zip():
    r = np.random.default_rng(48)
    params = [(0.5 * r.normal(size=(3, 3)), 0.1 * r.normal(size=3)) for _ in range(2)]
    return params, r.normal(size=(2, 3))


PROGRAMS += ["named_layers_by_zip"]


def _decay_rhs(t, y, rate, source):
    return -rate * y + source * np.cos(t)


def _euler_step(f, t, y, h, *args):
    return y + h * f(t, y, *args)


def _integrate(f, y0, t1, steps, *args):
    h, y = t1 / steps, y0
    for k in range(steps):
        y = _euler_step(f, k * h, y, h, *args)
    return y


def args_passed_on_twice(p, y0):
    """scipy.integrate's ``args`` style: ``*args`` passed on by the integrator to its step, and by the
    step to the right-hand side (two levels, the function bound at each)."""
    return np.sum(_integrate(_decay_rhs, y0, 1.0, 4, p[0], p[1]) ** 2)


def inputs_args_passed_on_twice():
    r = np.random.default_rng(49)
    return np.array([0.7, 0.3]), r.normal(size=3)


PROGRAMS += ["args_passed_on_twice"]


def mixture_by_logaddexp_reduce(means, x, log_weights):
    """A 1-D Gaussian mixture's log-likelihood with ``np.logaddexp.reduce`` over the components (axis 1),
    as NumPy code writes a log-sum-exp without SciPy."""
    log_probs = log_weights - 0.5 * (x[:, None] - means[None, :]) ** 2
    return -np.sum(np.logaddexp.reduce(log_probs, axis=1))


def inputs_mixture_by_logaddexp_reduce():
    r = np.random.default_rng(50)
    return r.normal(size=3), r.normal(size=6), np.log(np.array([0.2, 0.5, 0.3]))


PROGRAMS += ["mixture_by_logaddexp_reduce"]


def _rbf_kernel(x1, x2, lengthscale=1.0):
    return np.exp(-0.5 * (x1[:, None] - x2[None, :]) ** 2 / lengthscale**2)


def _sum_kernel(x1, x2, k1, k2):
    return k1(x1, x2) + k2(x1, x2)


def _gram_total(kernel, x):
    return np.sum(kernel(x, x))


def composite_kernel_by_nested_partials(log_ell, x):
    """A GP's composite kernel made of ``functools.partial``s nested in a ``partial``'s keywords, then
    passed to a helper."""
    ell = np.exp(log_ell)
    kernel = functools.partial(
        _sum_kernel,
        k1=functools.partial(_rbf_kernel, lengthscale=ell),
        k2=functools.partial(_rbf_kernel, lengthscale=2.0 * ell),
    )
    return _gram_total(kernel, x)


def inputs_composite_kernel_by_nested_partials():
    return np.array(0.3), np.array([0.0, 0.5, 1.5, 2.0])


PROGRAMS += ["composite_kernel_by_nested_partials"]

# the classic Runge-Kutta tableau, as explicit RK code holds it: lists of lists of numbers
RK4_A = [[], [0.5], [0.0, 0.5], [0.0, 0.0, 1.0]]
RK4_B = [1 / 6, 1 / 3, 1 / 3, 1 / 6]
RK4_C = [0.0, 0.5, 0.5, 1.0]


def _rk_step(f, t, y, h, *args):
    ks = []
    for a_row, c in zip(RK4_A, RK4_C):
        yi = y + h * sum(a * k for a, k in zip(a_row, ks))
        ks.append(f(t + c * h, yi, *args))
    return y + h * sum(b * k for b, k in zip(RK4_B, ks))


def _damped_rhs(t, y, omega, damping):
    return np.array([y[1], -(omega**2) * y[0] - damping * y[1] + 0.1 * np.sin(t)])


def butcher_tableau_steps(p, y0):
    """Fixed-step RK4 from a Butcher tableau: each stage reads the stages before it (``ks``, a list the
    stage loop appends to), as hand-written explicit Runge-Kutta code does."""
    y, t, h = y0, 0.0, 0.1
    for _ in range(3):
        y = _rk_step(_damped_rhs, t, y, h, p[0], p[1])
        t = t + h
    return np.sum(y**2)


def inputs_butcher_tableau_steps():
    return np.array([1.3, 0.2]), np.array([1.0, -0.5])


PROGRAMS += ["butcher_tableau_steps"]


def _gamma_logpdf(x, a, scale=1.0):
    return (a - 1) * np.log(x) - x / scale - a * np.log(scale)


def _beta_logpdf(x, a, b):
    return (a - 1) * np.log(x) + (b - 1) * np.log1p(-x)


PRIORS_TABLE = {
    "sigma": (_gamma_logpdf, {"a": 2.0, "scale": 0.5}),
    "rho": (_beta_logpdf, {"a": 2.0, "b": 3.0}),
}
PRIOR_ROWS = [("sigma", _gamma_logpdf, (2.0, 10.0)), ("rho", _beta_logpdf, (2.0, 2.0))]


def priors_from_a_table(params, x):
    """A log posterior whose priors come from a module-level table of ``(logpdf, kwargs)`` rows,
    applied with ``**kw``, and from a list of ``(name, logpdf, args)`` rows applied with ``*args``.
    """
    p = {"sigma": np.exp(params[0]), "rho": 1 / (1 + np.exp(-params[1]))}
    lp = -0.5 * np.sum((x / p["sigma"]) ** 2) - x.size * np.log(p["sigma"])
    for name, (logpdf, kw) in PRIORS_TABLE.items():
        lp = lp + logpdf(p[name], **kw)
    for name, logpdf, args in PRIOR_ROWS:
        lp = lp + 0.1 * logpdf(p[name], *args)
    # after the loop its names hold the last row's: ``rho``'s prior, again
    return -lp - 0.01 * logpdf(p[name], *args)


def inputs_priors_from_a_table():
    r = np.random.default_rng(51)
    return np.array([-0.3, 0.4]), r.normal(size=5)


PROGRAMS += ["priors_from_a_table"]


CHEB_DEGREE = 4


def _chebyshev(n, x):
    if n == 0:
        return np.ones_like(x)
    if n == 1:
        return x
    return 2 * x * _chebyshev(n - 1, x) - _chebyshev(n - 2, x)


def chebyshev_features_by_recursion(coef, x, y):
    """Chebyshev features by a recursion over the degree, the degree a loop's counter (``range(CHEB_DEGREE
    + 1)``), accumulated into columns in place."""
    feats = np.zeros((x.shape[0], 2))
    for j in range(2):
        for n in range(CHEB_DEGREE + 1):
            feats[:, j] += coef[n, j] * _chebyshev(n, x)
    return np.mean((np.tanh(feats) @ np.array([1.0, -0.5]) - y) ** 2)


def inputs_chebyshev_features_by_recursion():
    r = np.random.default_rng(52)
    return (
        0.5 * r.normal(size=(CHEB_DEGREE + 1, 2)),
        np.linspace(-0.9, 0.9, 6),
        r.normal(size=6),
    )


PROGRAMS += ["chebyshev_features_by_recursion"]


class _KalmanFilter:
    """filterpy's ``KalmanFilter``, cut down: matrices set as attributes after it is made, ``predict`` and
    ``update`` changing ``self``, the innovation and gain kept as attributes."""

    def __init__(self, dim_x, dim_z):
        self.dim_x, self.dim_z = dim_x, dim_z
        self.x = np.zeros((dim_x, 1))
        self.P = np.eye(dim_x)
        self.F = np.eye(dim_x)
        self.H = np.zeros((dim_z, dim_x))
        self.Q = np.eye(dim_x)
        self.R = np.eye(dim_z)
        self.log_likelihood = 0.0

    def predict(self):
        self.x = self.F @ self.x
        self.P = self.F @ self.P @ self.F.T + self.Q

    def update(self, z):
        self.y = np.reshape(z, (self.dim_z, 1)) - self.H @ self.x
        self.S = self.H @ self.P @ self.H.T + self.R
        self.K = self.P @ self.H.T @ np.linalg.inv(self.S)
        self.x = self.x + self.K @ self.y
        self.P = (np.eye(self.dim_x) - self.K @ self.H) @ self.P
        _, logdet = np.linalg.slogdet(self.S)
        self.log_likelihood += -0.5 * (
            logdet + (self.y.T @ np.linalg.solve(self.S, self.y))[0, 0]
        )


def kalman_filter_attributes(params, zs):
    """A tracker's negative log-likelihood, the filter configured by assigning its attributes
    (``kf.F = ...``, ``kf.R *= ...``, ``kf.H[0, 0] = 1.0``) as filterpy's examples do.
    """
    kf = _KalmanFilter(dim_x=2, dim_z=1)
    kf.F = np.array([[1.0, 0.1], [0.0, 1.0]])
    kf.F[1, 1] *= np.exp(-np.exp(params[0]))
    kf.H[0, 0] = 1.0
    kf.Q = np.exp(params[1]) * np.array([[0.01, 0.05], [0.05, 1.0]]) + 1e-6 * np.eye(2)
    kf.R *= np.exp(params[2])
    kf.x[0, 0] = zs[0]
    for z in zs[1:]:
        kf.predict()
        kf.update(z)
    return -kf.log_likelihood


def inputs_kalman_filter_attributes():
    t = 0.1 * np.arange(8)
    return np.array([-1.0, 0.5, -2.0]), np.cos(t) + 0.05 * np.sin(7 * t)


PROGRAMS += ["kalman_filter_attributes"]


def _log_normalize(a, axis=None):
    return a - logsumexp(a, axis=axis, keepdims=True)


class _GaussianHMM:
    """hmmlearn's way: made from keyword parameters, scored by a forward pass that fills a lattice element
    by element under ``np.errstate``."""

    def __init__(self, startprob_logits, transmat_logits, means, log_covars, eps=1e-12):
        self.log_startprob = _log_normalize(startprob_logits)
        self.log_transmat = _log_normalize(transmat_logits, axis=1)
        self.means_, self.covars_ = means, np.exp(log_covars) + eps

    def _compute_log_likelihood(self, X):
        return -0.5 * (
            np.log(2 * np.pi * self.covars_)[None, :]
            + (X[:, None] - self.means_[None, :]) ** 2 / self.covars_[None, :]
        )

    def _do_forward_pass(self, framelogprob):
        n_samples, n_components = framelogprob.shape
        fwdlattice = np.zeros((n_samples, n_components))
        fwdlattice[0] = self.log_startprob + framelogprob[0]
        for t in range(1, n_samples):
            for j in range(n_components):
                work_buffer = fwdlattice[t - 1] + self.log_transmat[:, j]
                fwdlattice[t, j] = logsumexp(work_buffer) + framelogprob[t, j]
        with np.errstate(under="ignore"):
            return logsumexp(fwdlattice[-1]), fwdlattice

    def score(self, X):
        logprob, _ = self._do_forward_pass(self._compute_log_likelihood(X))
        return logprob


def hmm_made_from_keywords(params, obs):
    """A Gaussian HMM's negative log-likelihood per observation, the model made as
    ``GaussianHMM(**params)``."""
    model = _GaussianHMM(**params)
    return -model.score(obs) / len(obs)


def inputs_hmm_made_from_keywords():
    r = np.random.default_rng(53)
    params = {
        "startprob_logits": 0.3 * r.normal(size=3),
        "transmat_logits": 2.0 * np.eye(3) + 0.3 * r.normal(size=(3, 3)),
        "means": np.array([-1.5, 0.0, 1.5]),
        "log_covars": -0.5 + 0.1 * r.normal(size=3),
    }
    return params, np.array([-1.4, -1.6, 0.1, 0.0, 1.4, 1.7, 0.2])


PROGRAMS += ["hmm_made_from_keywords"]


def _safe_sparse_dot(a, b, dense_output=False):
    """scikit-learn's: sparse matrices (``toarray``) are another branch, which no array takes."""
    if hasattr(a, "toarray") or hasattr(b, "toarray"):
        ret = a @ b
        return ret.toarray() if dense_output and hasattr(ret, "toarray") else ret
    return np.dot(a, b)


def _multinomial_loss(w, X, Y, alpha):
    n_classes, n_features = Y.shape[1], X.shape[1]
    fit_intercept = w.size == (n_classes * (n_features + 1))
    w = w.reshape(n_classes, -1)
    if fit_intercept:
        intercept = w[:, -1]
        w = w[:, :-1]
    else:
        intercept = 0
    p = _safe_sparse_dot(X, w.T)
    p += intercept
    p -= logsumexp(p, axis=1)[:, np.newaxis]
    loss = -(Y * p).sum()
    loss += 0.5 * alpha * np.dot(w.ravel(), w.ravel())
    p = np.exp(p, p)
    return loss, p, w


def multinomial_loss_as_sklearn_writes_it(w, X, Y):
    """scikit-learn's multinomial logistic loss: a flat coefficient vector, ``hasattr`` checks for sparse
    inputs, in-place ``p += intercept``, ``np.exp(p, p)`` into its own input."""
    return _multinomial_loss(w, X, Y, 1e-2)[0]


def inputs_multinomial_loss_as_sklearn_writes_it():
    r = np.random.default_rng(54)
    return (
        0.3 * r.normal(size=15),
        r.normal(size=(6, 4)),
        np.eye(3)[r.integers(0, 3, 6)],
    )


PROGRAMS += ["multinomial_loss_as_sklearn_writes_it"]


def ufunc_into_an_output(x, w):
    """NumPy ufuncs writing into ``out`` (a buffer made in the function, or their own input)."""
    buf = np.empty_like(x)
    np.multiply(x, w, out=buf)
    np.tanh(buf, buf)
    s = np.add(buf, 1.0, out=(buf,))
    total = np.sum(s**2)
    np.maximum(buf, 0.1, buf)
    return total + np.sum(buf)


def inputs_ufunc_into_an_output():
    r = np.random.default_rng(55)
    return r.normal(size=5), r.normal(size=5)


PROGRAMS += ["ufunc_into_an_output"]


def gp_nll_with_diagonal_noise(log_params, X, y):
    """A GP's negative log marginal likelihood with the noise added on the diagonal in place
    (``K[np.diag_indices_from(K)] += noise``) and the upper triangle's penalty by ``triu_indices_from``.
    """
    ell, noise = np.exp(log_params[0]), np.exp(log_params[1])
    d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = np.exp(-0.5 * d2 / ell**2)
    K[np.diag_indices_from(K)] += noise
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    upper = K[np.triu_indices_from(K, k=1)]
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 1e-3 * np.sum(upper**2)


def inputs_gp_nll_with_diagonal_noise():
    r = np.random.default_rng(56)
    return np.array([0.1, -1.0]), r.normal(size=(5, 2)), r.normal(size=5)


PROGRAMS += ["gp_nll_with_diagonal_noise"]


@dataclass
class _Grid:
    """A course notebook's grid: sizes as fields, the spacing and cell centres made after them."""

    nx: int = 12
    xmin: float = 0.0
    xmax: float = 2.0

    def __post_init__(self):
        self.dx = (self.xmax - self.xmin) / self.nx
        self.x = self.xmin + (np.arange(self.nx) + 0.5) * self.dx


def _diffusion_rhs(u, grid, nu):
    ue = np.concatenate([u[-1:], u, u[:1]])
    return nu * (ue[2:] - 2 * ue[1:-1] + ue[:-2]) / grid.dx**2 - u * (
        ue[2:] - ue[:-2]
    ) / (2 * grid.dx)


def grid_object_made_from_constants(params, u_obs):
    """A grid object made from constants in the function and handed to helpers (a finite-volume
    solver's ``grid = Grid()``): made once, as a module-level one would be."""
    grid = _Grid(nx=12)
    u = 1.0 + sum(
        a * np.sin((k + 1) * np.pi * grid.x) for k, a in enumerate(params[:-1])
    )
    for _ in range(5):
        u = u + 0.01 * _diffusion_rhs(u, grid, np.exp(params[-1]))
    return np.mean((u - u_obs) ** 2)


def inputs_grid_object_made_from_constants():
    r = np.random.default_rng(57)
    return np.array([0.3, -0.1, 0.05, np.log(0.05)]), 1.0 + 0.1 * r.normal(size=12)


PROGRAMS += ["grid_object_made_from_constants"]


@dataclass
class HeadsConfig:
    n_head: int = 2
    scale: float = 0.5


class HeadsAttention:
    def __init__(self, w, config):
        self.w = w
        self.n_head = config.n_head
        self.scale = config.scale

    def __call__(self, x):
        h = (x * self.w).reshape(self.n_head, -1)
        return self.scale * np.sum(np.tanh(h) ** 2, axis=1)


def heads_from_a_config_default(w, x, config=HeadsConfig()):
    """nanoGPT's style: a dataclass config as a parameter's default, handed to a layer's constructor
    and read in the function."""
    attn = HeadsAttention(w, config)
    return np.sum(attn(x)) + config.scale * np.sum(w**2)


def inputs_heads_from_a_config_default():
    return np.linspace(-1.0, 1.0, 6), np.linspace(0.5, 2.0, 6)


PROGRAMS += ["heads_from_a_config_default"]


class SquaredExp:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, A, B):
        d = A[:, None, :] - B[None, :, :]
        return np.exp(-0.5 * np.sum((d / self.scale) ** 2, axis=-1))


def _fit_gp(log_scale, X, y, noise=0.1):
    kernel = SquaredExp(np.exp(log_scale))
    K = kernel(X, X) + noise * np.eye(len(X))
    alpha = np.linalg.solve(K, y)
    return -0.5 * y @ alpha, (kernel, alpha)


def kernel_returned_with_its_fit(log_scale, X, y):
    """scikit-learn's GP written out: a helper fits and returns the kernel object beside its weights in
    a nested tuple; the caller predicts with it."""
    lml, (kernel, alpha) = _fit_gp(log_scale, X[:5], y[:5])
    pred = kernel(X[5:], X[:5]) @ alpha
    return -lml + np.mean((pred - y[5:]) ** 2)


def inputs_kernel_returned_with_its_fit():
    r = np.random.default_rng(53)
    X = r.uniform(-2, 2, size=(8, 2))
    return np.array([0.1, -0.2]), X, np.sin(X[:, 0]) + 0.1 * r.normal(size=8)


PROGRAMS += ["kernel_returned_with_its_fit"]


def _fitted_kernel(log_scale, X, y):
    kernel = SquaredExp(np.exp(log_scale))
    weights = np.linalg.solve(kernel(X, X) + 0.1 * np.eye(len(X)), y)
    return kernel, weights


def kernel_and_weights_from_a_helper(log_scale, X, y):
    """The same with a flat tuple: ``k, w = fitted(...)``, the object under another name."""
    k, w = _fitted_kernel(log_scale, X[:5], y[:5])
    return np.mean((k(X[5:], X[:5]) @ w - y[5:]) ** 2)


inputs_kernel_and_weights_from_a_helper = inputs_kernel_returned_with_its_fit
PROGRAMS += ["kernel_and_weights_from_a_helper"]


def _softmax_rows(z):
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def heads_split_by_a_map(w, x):
    """picoGPT's multi-head attention: q, k and v each split into heads by ``list(map(lambda ...
    np.split ...))``, zipped back head by head; and a list of the lists ``np.split`` returns, made by a
    comprehension and read by index (once read transposed: a wrong value with no error).
    """
    qkv = np.split(x @ w, 3, axis=-1)
    split_heads = lambda m: np.split(m, 2, axis=-1)
    heads = list(map(split_heads, qkv))
    outs = [_softmax_rows(q @ k.T) @ v for q, k, v in zip(*heads)]
    rows = [np.split(t, 2) for t in np.split(np.ravel(x), 3)]
    return np.sum(np.hstack(outs) ** 2) + np.sum(rows[0][1] * rows[2][0])


def inputs_heads_split_by_a_map():
    r = np.random.default_rng(54)
    return 0.5 * r.normal(size=(3, 12)), r.normal(size=(4, 3))


PROGRAMS += ["heads_split_by_a_map"]


def _poisson_logpmf(k, mu):
    return k * np.log(mu) - mu - np.array([math.lgamma(v + 1.0) for v in k])


def zero_inflated_poisson_by_positions(params, endog, exog):
    """statsmodels' ZeroInflatedPoisson.loglikeobs: the zeros and the counts found by ``np.nonzero`` of
    the data, each filled through its positions (``llf[zero_idx] = ...``), the inflation weight an
    array the same for every example."""
    w = 1.0 / (1.0 + np.exp(-params[0] * np.ones(len(endog))))
    mu = np.exp(exog @ params[1:])
    llf_main = _poisson_logpmf(endog, mu)
    zero_idx = np.nonzero(endog == 0)[0]
    nonzero_idx = np.nonzero(endog)[0]
    llf = np.zeros_like(endog)
    llf[zero_idx] = np.log(w[zero_idx] + (1 - w[zero_idx]) * np.exp(llf_main[zero_idx]))
    llf[nonzero_idx] = np.log(1 - w[nonzero_idx]) + llf_main[nonzero_idx]
    return -np.mean(llf)


def inputs_zero_inflated_poisson_by_positions():
    r = np.random.default_rng(55)
    exog = np.column_stack([np.ones(8), r.normal(size=8)])
    endog = np.array([0.0, 2.0, 1.0, 0.0, 0.0, 3.0, 1.0, 0.0])
    return np.array([-0.5, 0.3, 0.2]), endog, exog


PROGRAMS += ["zero_inflated_poisson_by_positions"]


def hinge_on_the_violators(w, X, y):
    """An SVM's hinge loss over the margin violators only, found the ways people find them:
    ``np.flatnonzero`` and ``np.argwhere(...)[:, 0]`` written where they index, and ``.ravel()`` of
    ``argwhere`` kept in a name (positions read as the mask they stand for)."""
    margins = y * (X @ w)
    hinge = np.sum(1.0 - margins[np.flatnonzero(margins < 1.0)])
    worst = np.max(-margins[np.argwhere(margins < 0.5)[:, 0]], initial=0.0)
    kept = np.argwhere(margins >= 1.0).ravel()
    return hinge + worst + 0.1 * np.sum(w**2) + 0.01 * np.sum(margins[kept])


def inputs_hinge_on_the_violators():
    r = np.random.default_rng(56)
    X = r.normal(size=(10, 3))
    return np.array([0.4, -0.3, 0.8]), X, np.sign(r.normal(size=10))


PROGRAMS += ["hinge_on_the_violators"]


def drawdown_penalised_returns(weights, returns):
    """A portfolio's mean return less its maximum drawdown, the way backtests compute it: the running
    peak of the equity curve by ``np.maximum.accumulate``, the trough so far by ``np.minimum.accumulate``
    along the other axis of the per-asset curves."""
    w = np.exp(weights) / np.sum(np.exp(weights))
    daily = returns @ w
    equity = np.cumprod(1.0 + daily)
    peak = np.maximum.accumulate(equity)
    drawdown = np.max((peak - equity) / peak)
    curves = np.cumsum(returns * w, axis=0)
    trough = np.minimum.accumulate(curves, axis=0)
    return -np.mean(daily) + 0.5 * drawdown + 0.1 * np.mean(curves[-1] - trough[-1])


def inputs_drawdown_penalised_returns():
    r = np.random.default_rng(57)
    return np.array([0.2, -0.1, 0.3]), 0.02 * r.normal(size=(12, 3))


PROGRAMS += ["drawdown_penalised_returns"]


def layer_stack_surgery(w, x):
    """A list of hidden states changed in place the ways Python code does: ``pop`` of the last (a stack),
    ``pop(0)``, ``insert``, ``del``, a slice assigned with items of another length, ``reverse``, an
    item written before a ``pop(1)`` (each a new list: ``frontend/list_methods.py``)."""
    hs = [np.tanh(x * w[0])]
    for k in range(1, 4):
        hs.append(np.tanh(hs[-1] * w[k] + x))
    top = hs.pop()
    first = hs.pop(0)
    hs.insert(1, top * first)
    del hs[0]
    hs[1:] = [hs[-1] * 2.0, first, top]
    hs.reverse()
    hs[0] = hs[0] + w[0]
    middle = hs.pop(1)
    order = [3, 1, 2]
    order.sort()
    return sum(np.sum(h**2) for h in hs) + np.sum(middle) * order[0] + len(hs)


def inputs_layer_stack_surgery():
    r = np.random.default_rng(58)
    return np.array([0.7, -0.4, 0.9, 0.3]), r.normal(size=5)


PROGRAMS += ["layer_stack_surgery"]


def tail_risk(w, returns):
    """Conditional value at risk, the way risk code sizes its tail: Python's ``max``/``min`` of lengths
    (numbers known when the code is traced, so slice bounds, loop counts and shapes under XLA).
    """
    losses = -(returns @ w)
    n_tail = max(1, int(np.ceil(0.25 * len(losses))))
    cvar = np.sort(losses)[-n_tail:].mean()
    head = 0.0
    for i in range(min(3, len(w))):
        head = head + w[i] ** 2
    rows = max(1, len(losses) // 4)
    return cvar + head + 0.1 * np.sum(np.max(losses.reshape(rows, -1), axis=1))


def inputs_tail_risk():
    r = np.random.default_rng(59)
    return np.array([0.5, 0.2, -0.3, 0.6]), 0.05 * r.normal(size=(8, 4))


PROGRAMS += ["tail_risk"]


class PinholeCamera:
    def __init__(self, res, fov=0.8):
        u = np.linspace(-fov, fov, res)
        U, V = np.meshgrid(u, -u)
        dirs = np.stack([U, V, np.ones_like(U)], axis=-1)
        self.dirs = dirs / np.linalg.norm(dirs, axis=-1, keepdims=True)
        self.origin = np.zeros(3)

    def point_at(self, t):
        return self.origin + t[..., None] * self.dirs


def _sphere_hit(cam, centre, radius):
    oc = cam.origin - centre
    b = cam.dirs @ oc
    disc = b**2 - (oc @ oc - radius**2)
    return -b - np.sqrt(np.maximum(disc, 1e-6)), 1.0 / (1.0 + np.exp(-disc / 0.05))


def _render_spheres(theta, cam):
    image = 0.0
    for k in range(2):
        centre, radius = theta[4 * k : 4 * k + 3], np.exp(theta[4 * k + 3])
        t, coverage = _sphere_hit(cam, centre, radius)
        normal = (cam.point_at(t) - centre) / radius
        image = image + coverage * np.maximum(normal @ np.array([0.0, 0.6, -0.8]), 0.0)
    return image


def rendered_spheres(theta, target):
    """A ray-sphere renderer as "a ray tracer in 100 lines" posts write it: a camera object made in the
    objective and handed whole to helpers that read its attributes, call its method and hand it on.
    """
    cam = PinholeCamera(6)
    return np.mean((_render_spheres(theta, cam) - target) ** 2)


def inputs_rendered_spheres():
    r = np.random.default_rng(60)
    theta = np.array([-0.3, 0.1, 3.0, np.log(0.7), 0.4, -0.2, 3.6, np.log(0.8)])
    return theta + 0.05 * r.normal(size=8), 0.3 * r.random(size=(6, 6))


PROGRAMS += ["rendered_spheres"]


class AffineCoupling:
    def __init__(self, params, mask):
        self.params = params
        self.mask = mask

    def forward(self, x):
        kept = x * self.mask
        s = np.tanh(kept @ self.params["Ws"]) * (1 - self.mask)
        t = (kept @ self.params["Wt"]) * (1 - self.mask)
        return kept + (1 - self.mask) * (x * np.exp(s) + t), np.sum(s, axis=1)


class CouplingFlow:
    def __init__(self, layer_params):
        dim = layer_params[0]["Ws"].shape[0]
        masks = [
            (np.arange(dim) % 2 == i % 2).astype(float)
            for i in range(len(layer_params))
        ]
        self.layers = [AffineCoupling(p, m) for p, m in zip(layer_params, masks)]

    def log_prob(self, x):
        log_det = np.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer.forward(x)
            log_det += ld
        return -0.5 * np.sum(x**2, axis=1) + log_det


def realnvp_nll(layer_params, x):
    """RealNVP as "normalizing flows from scratch" notebooks write it: the flow's ``__init__`` computes
    local variables (the dimension, the alternating masks) before building its list of coupling layers
    from them."""
    return -np.mean(CouplingFlow(layer_params).log_prob(x))


def inputs_realnvp_nll():
    r = np.random.default_rng(61)
    layers = [
        {"Ws": 0.3 * r.normal(size=(4, 4)), "Wt": 0.3 * r.normal(size=(4, 4))}
        for _ in range(3)
    ]
    return layers, r.normal(size=(5, 4))


PROGRAMS += ["realnvp_nll"]


SAVE_EVERY = 3


def _verlet_energies(x, v, k, dt, n_steps):
    energies = [0.5 * np.sum(v**2)]
    for step in range(n_steps):
        v = v - dt * k * (x - np.roll(x, 1))
        x = x + dt * v
        if step % 2 == 1 and step > 0:
            energies.append(
                0.5 * np.sum(v**2) + 0.5 * k * np.sum((x - np.roll(x, 1)) ** 2)
            )
    return x, energies


def snapshots_every_few_steps(w, h0):
    """A heat-equation solver saving a snapshot every ``SAVE_EVERY`` steps (``if (n + 1) % SAVE_EVERY ==
    0: snapshots.append(h.copy())``), and a helper's Verlet integrator recording the energy on odd
    steps of a range its caller sizes: appends on a test of the counter alone."""
    h = h0 * w
    snapshots = []
    for n in range(7):
        h = h + 0.2 * (np.roll(h, 1) - 2 * h + np.roll(h, -1))
        if (n + 1) % SAVE_EVERY == 0:
            snapshots.append(h.copy())
    x, energies = _verlet_energies(h, 0.1 * w, 0.5, 0.1, 6)
    return np.sum(np.array(snapshots) ** 2) + np.var(energies) + np.sum(x)


def inputs_snapshots_every_few_steps():
    return np.linspace(0.5, 1.5, 5), np.arange(5.0)


PROGRAMS += ["snapshots_every_few_steps"]


@dataclass
class _StateSpace:
    F: np.ndarray
    H: np.ndarray
    q: float
    x0: np.ndarray = field(default_factory=lambda: np.zeros(2))

    @classmethod
    def from_params(cls, params, dt=0.1):
        """A constructor by another name, as filterpy-style code builds its models: ``cls(...)``."""
        F = np.array([[1.0, dt], [0.0, 1.0]])
        F[1, 1] = np.exp(-np.exp(params["log_damping"]) * dt)
        return cls(F=F, H=np.array([[1.0, 0.0]]), q=np.exp(params["log_q"]))

    def predicted(self, x, P):
        return self.F @ x, self.F @ P @ self.F.T + self.q * np.eye(2)


def kalman_from_a_class_method(params, zs):
    """A Kalman filter's negative log-likelihood, its model made by a class method of a dataclass (its
    initial state a field's ``default_factory``)."""
    model = _StateSpace.from_params(params)
    x, P, nll = model.x0, np.eye(2), 0.0
    for z in zs:
        x, P = model.predicted(x, P)
        S = model.H @ P @ model.H.T + 0.1
        y = z - model.H @ x
        K = P @ model.H.T / S
        x, P = x + K @ y, (np.eye(2) - K @ model.H) @ P
        nll += 0.5 * (np.log(S[0, 0]) + y[0] ** 2 / S[0, 0])
    return nll


def inputs_kalman_from_a_class_method():
    params = {"log_damping": np.array(-1.0), "log_q": np.array(-0.5)}
    return params, np.sin(np.arange(6.0))[:, None]


PROGRAMS += ["kalman_from_a_class_method"]


class _Dynamics:
    def __init__(self, F, q):
        self.F = F
        self.q = q


class _Tracker:
    """An object holding another one handed to its constructor (``self.model = model``), changing its
    own state in a method: the model read through it and by its own name are the same object.
    """

    def __init__(self, model, x0):
        self.model = model
        self.x = x0

    def step(self):
        self.x = np.tanh(self.model.F @ self.x) * self.model.q


def object_handed_to_an_object(a, x0):
    model = _Dynamics(np.array([[1.0, 0.1], [0.0, 1.0]]) * a, 0.9)
    tracker = _Tracker(model, x0)
    for _ in range(3):
        tracker.step()
    return np.sum(tracker.x**2) + model.q * np.sum(tracker.model.F)


def inputs_object_handed_to_an_object():
    return np.array(1.2), np.array([0.5, -0.3])


PROGRAMS += ["object_handed_to_an_object"]


class _Link:
    def inverse(self, z):
        raise NotImplementedError


class _LogLink(_Link):
    def inverse(self, z):
        return np.exp(z)


class _Family:
    """statsmodels' families: a class attribute names the link class, made when none is given."""

    default_link = _Link
    eps = 1e-8

    def __init__(self, link=None):
        self.link = link if link is not None else self.default_link()


class _Poisson(_Family):
    default_link = _LogLink
    floor = staticmethod(np.maximum)

    def loglike_obs(self, y, mu):
        return y * np.log(self.floor(mu, self.eps)) - mu


def class_attributes_of_a_family(params, X, y):
    """Class attributes read through the object: a constant, a library function held by
    ``staticmethod``, and a class the constructor makes an object of (``self.default_link()``).
    """
    family = _Poisson()
    mu = family.link.inverse(X @ params)
    return -np.sum(family.loglike_obs(y, mu)) / y.shape[0] + family.eps


def inputs_class_attributes_of_a_family():
    r = np.random.default_rng(21)
    X = r.normal(size=(8, 3))
    return 0.3 * r.normal(size=3), X, r.poisson(1.5, size=8).astype(float)


PROGRAMS += ["class_attributes_of_a_family"]


def version_shims(w):
    """NumPy-version shims in the function: the branch ``hasattr`` rules out names what this NumPy
    lacks (``np.trapz`` is gone in NumPy 2; ``np.totally_missing`` in every version)."""
    y = np.tanh(w) ** 2
    area = np.trapezoid(y, dx=0.5) if hasattr(np, "trapezoid") else np.trapz(y, dx=0.5)
    if not hasattr(np, "totally_missing"):
        return area + np.sum(y)
    return np.totally_missing(y)


def inputs_version_shims():
    return (np.linspace(-1.0, 1.0, 5),)


PROGRAMS += ["version_shims"]


def reductions_with_initial(x):
    """Reductions given ``initial=``: one more item joined to the reduction (a floor for ``max``)."""
    floor = np.max(x, axis=0, initial=0.5)
    return np.sum(floor**2) + x.sum(initial=2.0) + np.prod(np.tanh(x), initial=3.0)


def inputs_reductions_with_initial():
    return (np.array([[0.3, 0.9, -0.2], [0.7, 0.1, 0.4]]),)


PROGRAMS += ["reductions_with_initial"]


class _Offsets:
    def __init__(self, offset=None):
        if offset is None:
            offset = 0.0
        self.offset = offset

    def loglike(self, w, y):
        mu = np.exp(w + self.offset)
        return np.sum(y * np.log(mu) - mu)


def default_tested_in_init(w, y):
    """An ``__init__`` testing its argument against its default (``if offset is None``) given a number:
    the generated test is decided (no ``0.1 is None``, which Python warns about)."""
    return _Offsets(0.1).loglike(w, y)


def inputs_default_tested_in_init():
    return np.array([0.2, -0.4, 0.1]), np.array([1.0, 2.0, 0.0])


PROGRAMS += ["default_tested_in_init"]


class _PoissonGLM:
    """statsmodels' models: an ``__init__`` that tests its arguments (``if offset is None:``) and keeps
    the family object it is handed (``self.family = family``), read through it in the methods.
    """

    def __init__(self, endog, exog, family, offset=None, exposure=None):
        self.endog, self.exog = endog, exog
        self.family = family
        if offset is None:
            offset = np.zeros(endog.shape[0])
        if exposure is not None:
            offset = offset + np.log(exposure)
        self.offset = offset

    def loglike(self, params):
        mu = self.family.link.inverse(self.exog @ params + self.offset)
        return np.sum(self.family.loglike_obs(self.endog, mu))


def model_holding_its_family(params, X, y, exposure):
    model = _PoissonGLM(y, X, _Poisson(), exposure=exposure)
    return -model.loglike(params) / y.shape[0]


def inputs_model_holding_its_family():
    params, X, y = inputs_class_attributes_of_a_family()
    return params, X, y, np.linspace(0.5, 2.0, y.shape[0])


PROGRAMS += ["model_holding_its_family"]


class _Gains:
    def __init__(self, w, c):
        self.w = w
        self.c = c


class _Stepper:
    def __init__(self, gains, state, damping=None):
        self.gains = gains
        if damping is None:
            damping = gains.w  # the parameter read again: not only kept
        self.state = state * damping

    def advance(self):
        self.state = np.tanh(self.state * self.gains.w + self.gains.c)


def handed_object_read_again_in_init(x):
    """An ``__init__`` that reads the object it keeps once more, beside a name of the function spelled
    like its parameter (``gains``): right, or a located refusal, never the other ``gains``.
    """
    gains = _Gains(np.mean(x) + 0.5, 0.1)
    stepper = _Stepper(_Gains(2.0, 0.3), x)
    stepper.advance()
    return np.sum(stepper.state) * gains.w


# --- optax's chain, as optax writes it: NamedTuples of closures, ``del params``, states zipped with links ---


class _OptaxLink(NamedTuple):
    init: object
    update: object


def _optax_trace(decay):
    def init_fn(params):
        return (np.zeros_like(params),)

    def update_fn(updates, state, params=None):
        del params
        new_trace = updates + decay * state[0]
        return new_trace, (new_trace,)

    return _OptaxLink(init_fn, update_fn)


def _optax_add_decayed_weights(weight_decay):
    def init_fn(params):
        del params
        return ()

    def update_fn(updates, state, params=None):
        return updates + weight_decay * params, state

    return _OptaxLink(init_fn, update_fn)


def _optax_scale(step_size):
    def init_fn(params):
        del params
        return ()

    def update_fn(updates, state, params=None):
        del params
        return step_size * updates, state

    return _OptaxLink(init_fn, update_fn)


def _optax_chain(*args):
    init_fns, update_fns = zip(*args)

    def init_fn(params):
        return tuple(fn(params) for fn in init_fns)

    def update_fn(updates, state, params=None):
        new_state = []
        for s, fn in zip(state, update_fns):
            updates, new_s = fn(updates, s, params)
            new_state.append(new_s)
        return updates, tuple(new_state)

    return _OptaxLink(init_fn, update_fn)


_OPTIMIZER = _optax_chain(
    _optax_add_decayed_weights(1e-2), _optax_trace(0.9), _optax_scale(-0.05)
)


def _optax_inner_grad(w, x, y):
    return 2 * x.T @ (x @ w - y) / len(y)


def optax_chain_unrolled(w0, x, y):
    """Meta-learning's objective: the loss after a few steps of an optax-style optimizer, by ``w0``."""
    w = w0
    state = _OPTIMIZER.init(w)
    for _ in range(3):
        updates, state = _OPTIMIZER.update(_optax_inner_grad(w, x, y), state, w)
        w = w + updates
    return np.mean((x @ w - y) ** 2) + 0.1 * np.sum(state[1][0] ** 2)


def inputs_optax_chain_unrolled():
    r = np.random.default_rng(41)
    return r.normal(size=3), r.normal(size=(6, 3)), r.normal(size=6)


PROGRAMS += ["optax_chain_unrolled"]


def unflattened_by_split_points(flat, x):
    """A parameter vector unflattened at split points summed from its pieces' sizes (``np.cumsum`` of a
    display of numbers: integers known when traced, which a split can use under ``jax.jit``).
    """
    sizes = [6, 3]
    W, b = np.split(flat, np.cumsum(sizes)[:-1])
    hidden = np.tanh(x @ W.reshape(2, 3) + b)
    bounds = np.cumsum((2, 1))
    return np.sum(hidden[:, : bounds[0]] ** 2) + np.sum(np.diff([0.5, 1.5]) * hidden)


def inputs_unflattened_by_split_points():
    r = np.random.default_rng(43)
    return r.normal(size=9), r.normal(size=(4, 2))


PROGRAMS += ["unflattened_by_split_points"]


PIECE_SHAPES = [(2, 3), (3,), (3, 1), (1,)]


def _pieces_by_sizes(flat):
    """The usual unflattening helper: sizes from a comprehension over the shapes, split at their sums."""
    sizes = [int(np.prod(s)) for s in PIECE_SHAPES]
    chunks = np.split(flat, np.cumsum(sizes)[:-1])
    return [c.reshape(s) for c, s in zip(chunks, PIECE_SHAPES)]


def _pieces_by_offsets(flat):
    """Offsets summed with a leading zero, pieces sliced between them (``np.prod`` with no ``int``)."""
    offsets = np.cumsum([0] + [np.prod(s) for s in PIECE_SHAPES])
    return [
        flat[offsets[k] : offsets[k + 1]].reshape(s) for k, s in enumerate(PIECE_SHAPES)
    ]


def unflattened_by_integer_arithmetic(flat, x):
    """Index arithmetic on integers NumPy computes from constants (sizes, offsets, split points): known when
    traced, so slices and splits take them under ``jax.jit`` as on NumPy (``runtime/known_integers.py``).
    """
    W1, b1, W2, b2 = _pieces_by_sizes(flat)
    V1, c1, V2, c2 = _pieces_by_offsets(flat[::-1])
    hidden = np.tanh(x @ W1 + b1) * np.cos(x @ V1 + c1)
    widest = max(np.prod(s) for s in PIECE_SHAPES)
    padded = np.zeros(widest)
    padded[: b1.size] = b1
    return (
        np.sum((hidden @ W2 + b2) ** 2) + np.sum(hidden @ V2 * c2) + np.sum(padded**2)
    )


def inputs_unflattened_by_integer_arithmetic():
    r = np.random.default_rng(44)
    return 0.5 * r.normal(size=13), r.normal(size=(4, 2))


PROGRAMS += ["unflattened_by_integer_arithmetic"]


def dicts_merged(x, w):
    """Dicts merged as Python 3.9 code merges them: ``|`` and ``|=`` with a display, ``{**a, **b}`` with
    later spreads, ``dict(a, k=v)``, ``d.update(...)`` of a dict the function made (``dict_merges``).
    """
    base = {"w": w, "shift": x[0]}
    layer = base | {"shift": np.tanh(x[1])}
    layer |= {"scale": np.exp(0.1 * x[2])}
    extra = {"gain": np.sum(x**2), "w": 2.0 * w}
    both = {"bias": x[3], **layer, "scale": x[2] ** 2, **extra}
    config = dict(both, offset=np.mean(x))
    config.update({"gain": config["gain"] * 0.5}, bias=np.sin(x[3]))
    h = np.tanh(config["w"] @ x[:3] * config["scale"] + config["shift"])
    return (
        np.sum(h**2) * config["gain"]
        + config["bias"] * layer["scale"]
        + config["offset"]
    )


def inputs_dicts_merged():
    r = np.random.default_rng(45)
    return r.normal(size=4), 0.5 * r.normal(size=(2, 3))


PROGRAMS += ["dicts_merged"]


def _scaled_or_default(x, scale=None):
    scale = scale or 2.0  # the default people write for an optional argument
    return x * scale


def operands_chosen_by_or_and(x, w):
    """``or``/``and`` that return an operand (``scale or 2.0``, ``None or v``, ``mask and v``): Python's
    ``a if a else b``, which carries the chosen operand's derivative (``passes/desugar.py``).
    """
    y = x[0] or 1.0
    z = None or x[2]
    gate = (x[1] > 0) and x[3]
    s = _scaled_or_default(x) + _scaled_or_default(x, w[0])
    return y * 3.0 + z * 5.0 + gate * 2.0 + np.sum(s**2)


def inputs_operands_chosen_by_or_and():
    r = np.random.default_rng(46)
    return r.normal(size=4) + 0.5, r.normal(size=2)


PROGRAMS += ["operands_chosen_by_or_and"]


def dict_of_tuples_filled_in_a_loop(x, w):
    """A dict whose values are tuples (or lists) of arrays, filled by item writes in a loop: the
    container keeps each value as it is, its tangent too (``rt.written_dtype``)."""
    pairs = [(x[0] * w, x[1]), (np.sin(x[2]) * w, x[3])]
    d = {}
    for i, p in enumerate(pairs):
        d[i] = p
    e = {k: [v[1], v[0]] for k, v in d.items()}
    return np.sum(d[1][0] ** 2) + d[0][1] * np.sum(e[0][1]) + e[1][0] ** 3


def inputs_dict_of_tuples_filled_in_a_loop():
    r = np.random.default_rng(47)
    return r.normal(size=4), r.normal(size=3)


PROGRAMS += ["dict_of_tuples_filled_in_a_loop"]


def _forward_keyword_only(h, *, act=np.tanh, scale=2.0):
    return act(h) * scale


def _forward_named_beside_kwargs(h, act=np.tanh, **kwargs):
    return act(h) * kwargs.get("scale", 1.0)


def functions_in_keyword_only_parameters(x, w):
    """Functions given as keyword-only parameters (a bare ``*`` before them) and beside ``**kwargs``, by
    default or by the caller: the helper is bound to them (``frontend/function_args.py``).
    """
    h = x @ w
    return (
        np.sum(_forward_keyword_only(h))
        + np.sum(_forward_keyword_only(h, act=np.sin, scale=x[0]))
        + np.sum(_forward_named_beside_kwargs(h, act=np.cos, scale=x[1]))
        + np.sum(_forward_named_beside_kwargs(h) ** 2)
    )


def inputs_functions_in_keyword_only_parameters():
    r = np.random.default_rng(48)
    return r.normal(size=3), r.normal(size=(3, 2))


PROGRAMS += ["functions_in_keyword_only_parameters"]


STEP_TARGETS = np.array([[1.0, -0.5], [0.25, 0.75], [0.0, 1.0]])


def outputs_enumerated_beside_constant_targets(x, w):
    """An RNN's outputs kept in a list, scored in ``enumerate(zip(outputs, TARGETS))`` against a
    module-level array (the cotangents of its rows, traced, made by ``jax.numpy``)."""
    h, outs = np.zeros(2), []
    for t in range(3):
        h = np.tanh(w @ h + x[t])
        outs.append(h)
    loss = 0.0
    for t, (o, y) in enumerate(zip(outs, STEP_TARGETS)):
        loss = loss + (t + 1.0) * np.sum((o - y) ** 2)
    return loss


def inputs_outputs_enumerated_beside_constant_targets():
    r = np.random.default_rng(49)
    return r.normal(size=(3, 2)), 0.5 * r.normal(size=(2, 2))


PROGRAMS += ["outputs_enumerated_beside_constant_targets"]


ACTIVATION_NAME = "gelu"
USE_BIAS, N_EXTRA = True, 2


def _gelu_tanh(z):
    return 0.5 * z * (1.0 + np.tanh(0.79788456 * (z + 0.044715 * z**3)))


def activation_chosen_by_a_constant(x, w):
    """A function picked by a module-level setting (``if ACTIVATION_NAME == "gelu": act = ...``), flags and
    counts tested the same way: the branch Python takes, decided when the code is read.
    """
    if ACTIVATION_NAME == "gelu":
        act = _gelu_tanh
    elif ACTIVATION_NAME in ("tanh", "th"):
        act = np.tanh
    else:
        act = np.sin
    out = act(x @ w)
    if USE_BIAS and N_EXTRA > 1:
        out = out + 0.5
    scale = np.cos if not USE_BIAS else np.exp
    return np.sum(out**2) + np.sum(scale(0.1 * x))


def inputs_activation_chosen_by_a_constant():
    r = np.random.default_rng(50)
    return r.normal(size=3), r.normal(size=(3, 2))


PROGRAMS += ["activation_chosen_by_a_constant"]


def _batchnorm_keeping_statistics(x, gamma, beta, bn_param):
    """cs231n's ``batchnorm_forward``: options read from a dict, running statistics written into it."""
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param["momentum"]
    mean, var = np.mean(x, axis=0), np.var(x, axis=0)
    bn_param["running_mean"] = (
        momentum * bn_param.get("running_mean", 0.0) + (1 - momentum) * mean
    )
    bn_param["running_var"] = (
        momentum * bn_param.get("running_var", 1.0) + (1 - momentum) * var
    )
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def batchnorm_writing_its_running_statistics(x, gamma):
    """A helper that reads one entry of a dict argument and writes others (the entries it read keep
    their values: a write binds an entry anew), its caller not reading the dict after.
    """
    out = _batchnorm_keeping_statistics(x, gamma, 0.1, {"eps": 1e-3, "momentum": 0.9})
    return np.sum(np.tanh(out) ** 2)


def inputs_batchnorm_writing_its_running_statistics():
    r = np.random.default_rng(51)
    return r.normal(size=(5, 3)), 1.0 + 0.1 * r.normal(size=3)


PROGRAMS += ["batchnorm_writing_its_running_statistics"]


def kmeans_step_with_an_empty_cluster_guard(X, centers):
    """One k-means step as NumPy code writes it: each cluster's points selected by a mask, averaged under
    a guard for an empty cluster (a mask made outside the branch, selected inside: a masked reduction).
    """
    d = np.sum((X[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
    labels = np.argmin(d, axis=1)
    loss = 0.0
    for k in range(centers.shape[0]):
        mask = labels == k
        if np.any(mask):
            loss = loss + np.sum((X[mask] - centers[k]) ** 2) / np.sum(mask)
    return loss


def inputs_kmeans_step_with_an_empty_cluster_guard():
    r = np.random.default_rng(52)
    return r.normal(size=(8, 2)), r.normal(size=(3, 2))


PROGRAMS += ["kmeans_step_with_an_empty_cluster_guard"]


def loop_variables_after_a_break(x, ws):
    """A search that stops at the first item past a threshold and reads the loop's variables after it:
    they hold the items of the step that broke (enumerate, a range, a list of arrays, rows), not the last.
    """
    total = 0.0
    for i, v in enumerate(x):
        if total > 1.0:
            break
        total += v**2
    for j in range(len(x)):
        if j >= 3:
            break
    for w in [ws[0], ws[1], 2.0 * ws[2]]:
        if np.sum(w * x[:2]) > 0.5:
            break
    for row in ws:
        if np.sum(row) > 1.0:
            break
    return total * i + x[j] * j + np.sum(w**2 * x[:2]) + np.sum(row * x[2:4])


def inputs_loop_variables_after_a_break():
    x = np.array([0.7, -0.3, 1.2, 0.4, -0.9, 0.25, 1.6, -0.55])
    ws = np.array([[0.1, 0.2], [0.9, 0.3], [-0.4, 1.5]])
    return x, ws


PROGRAMS += ["loop_variables_after_a_break"]


def scatter_of_selected_rows(w, X, labels):
    """Fisher LDA's within-class scatter: each class's rows selected by a mask and centered, times their
    transpose (a product of two selections contracting the selected rows: ``A.T @ A``).
    """
    Z = X * w
    S = np.zeros((Z.shape[1], Z.shape[1]))
    for k in range(2):
        A = Z[labels == k] - np.mean(Z[labels == k], axis=0)
        S = S + A.T @ A
    return np.trace(S) + np.sum(S[0])


def inputs_scatter_of_selected_rows():
    r = np.random.default_rng(53)
    return r.normal(size=3), r.normal(size=(7, 3)), np.array([0, 1, 1, 0, 1, 0, 0])


def gram_of_rows_picked_by_a_constant_mask(w):
    """``A.T @ A`` of rows a module-level label array selects (the mask is known, the rows are not)."""
    A = GRAM_ROWS[GRAM_LABELS == 0] * w
    return np.sum(A.T @ A)


GRAM_ROWS = np.arange(18.0).reshape(6, 3) / 10
GRAM_LABELS = np.array([0, 1, 0, 1, 1, 0])


def inputs_gram_of_rows_picked_by_a_constant_mask():
    return (np.array([0.1, 0.2, 0.3]),)


PROGRAMS += ["scatter_of_selected_rows", "gram_of_rows_picked_by_a_constant_mask"]


def design_matrix_built_row_by_row(theta, u):
    """System identification as NumPy code writes it: the regressor rows appended as lists in a loop, then
    ``np.array`` of the list (a 2-D design matrix), then least squares by hand."""
    y = u * theta[0] + theta[1]
    Phi = []
    for k in range(1, len(y)):
        Phi.append([y[k - 1], u[k]])
    Phi = np.array(Phi)
    coef = np.linalg.solve(Phi.T @ Phi + 0.1 * np.eye(2), Phi.T @ y[1:])
    return np.sum((Phi @ coef - y[1:]) ** 2) + np.sum(coef**2)


def inputs_design_matrix_built_row_by_row():
    return np.array([0.5, 0.2]), np.linspace(0.0, 1.0, 8) ** 2


PROGRAMS += ["design_matrix_built_row_by_row"]


def _pendulum_derivative(state, t, params):
    theta, omega = state
    g, L = params
    return np.array([omega, -g / L * np.sin(theta) - 0.1 * omega * t])


def pendulum_parameters_bound_to_a_name(x, dt):
    """An RK4 pendulum whose parameters, a constant and a value of the data, are bound to a name and
    unpacked by the helper (under vmap the helper reads the constant unbatched)."""
    params = (9.81, x[2])
    y, t = x[:2], 0.0
    for _ in range(3):
        k1 = _pendulum_derivative(y, t, params)
        k2 = _pendulum_derivative(y + 0.5 * dt * k1, t + 0.5 * dt, params)
        k3 = _pendulum_derivative(y + 0.5 * dt * k2, t + 0.5 * dt, params)
        k4 = _pendulum_derivative(y + dt * k3, t + dt, params)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + dt
    return np.sum(y**2)


def inputs_pendulum_parameters_bound_to_a_name():
    return np.array([0.3, -0.2, 1.1]), 0.05


PROGRAMS += ["pendulum_parameters_bound_to_a_name"]


def inner_loop_variable_read_after_it(x):
    """An inner loop's variable read after it, inside an outer ``while`` and an outer ``for`` (the last
    index of the inner loop: Python keeps it)."""
    total = 0.0
    k = 0
    while k < 2:
        for j in range(3):
            total += x[j] * (k + 1)
        total += j * x[k] ** 2
        k += 1
    for k in range(2):
        for j, v in enumerate(x[:2]):
            total += v * x[k]
        total += np.tanh(v) * j
    return total


def inputs_inner_loop_variable_read_after_it():
    return (np.array([0.7, -0.3, 1.2]),)


PROGRAMS += ["inner_loop_variable_read_after_it"]


def sgd_steps_over_a_dict_of_parameters(x, lr):
    """Hand-written SGD on a dict of parameters, updated key by key in a loop over the dict inside a loop
    over steps (under vmap, the keys are the same for every example)."""
    params = {"a": x[0], "b": x[1:]}
    for step in range(2):
        grads = {"a": params["a"] * 2.0, "b": params["b"] ** 2}
        for key in params:
            params[key] = params[key] - lr * grads[key]
    return params["a"] ** 2 + np.sum(params["b"])


def inputs_sgd_steps_over_a_dict_of_parameters():
    return np.array([0.3, -0.2, 0.4]), 0.5


PROGRAMS += ["sgd_steps_over_a_dict_of_parameters"]


def masked_updates_in_place(x, scale):
    """In-place updates through boolean masks, as NumPy code clips and rescales: ``a[a > 0] += v`` (the
    mask computed once), ``W[W < 0] *= s``, rows picked by a column's sign (per example under vmap).
    """
    a = x.copy()
    a[a > 0] += 1.0
    a[a < 0] *= scale
    rows = np.reshape(a, (2, -1)).copy()
    rows[rows[:, 0] > 0.5] *= 2.0
    return np.sum(rows**2) + np.sum(np.tanh(a))


def inputs_masked_updates_in_place():
    return np.array([0.7, -0.3, 1.2, 1.5, -0.4, 0.2]), 0.1


PROGRAMS += ["masked_updates_in_place"]


def _sum_of_squares_in(v, xp=np):
    return xp.sum(v**2)


def _mean_in(v, xp):
    return xp.mean(v)


def array_module_held_in_a_name(x):
    """The array-API idiom: the array module held in a local name (``xp = np``), a helper's default
    (``xp=np``), and an argument (``_mean_in(v, np)``)."""
    xp = np
    return xp.sum(xp.tanh(x) * x) + _sum_of_squares_in(x) * 2.0 + _mean_in(x**3, np)


def inputs_array_module_held_in_a_name():
    return (np.array([0.35, -0.6, 0.8, 0.25]),)


PROGRAMS += ["array_module_held_in_a_name"]


def _make_cubic_loss():
    def loss(params, keys):
        total = 0.0
        for k in keys:
            total = total + np.sum(params[k] ** 3)
        return total + np.sum(params["w"])

    return loss


def dict_display_handed_to_a_local_function(x):
    """A closure a factory makes, called with a dict display read by constant keys and by the keys of a
    loop (the display is named, as a subscripted value), and a local function reading one entry.
    """
    loss = _make_cubic_loss()

    def entry(params, k):
        return np.sum(params[k] ** 2)

    return loss({"w": x, "b": 2.0 * x}, ["w", "b"]) + entry({"w": x, "b": x + 1.0}, "b")


def inputs_dict_display_handed_to_a_local_function():
    return (np.array([0.3, -0.2, 0.5, 0.1]),)


PROGRAMS += ["dict_display_handed_to_a_local_function"]


def parameters_rebound_by_a_comprehension(x, data):
    """Gradient descent as optimizer code writes it: the list of parameters rebound by a comprehension
    over ``zip(params, grads)`` in a loop (items of different shapes), then Python's ``sum`` over it.
    """
    params = [np.reshape(x[:6], (2, 3)), x[6:9]]
    for _ in range(3):
        h = np.tanh(data @ params[0] + params[1])
        grads = [data.T @ (1 - h**2), np.sum(1 - h**2, axis=0)]
        params = [p - 0.1 * g for p, g in zip(params, grads)]
    return sum(np.sum(p**2) for p in params)


def inputs_parameters_rebound_by_a_comprehension():
    return np.linspace(-0.5, 0.7, 9), np.array([[0.5, -1.0], [1.5, 0.2]])


PROGRAMS += ["parameters_rebound_by_a_comprehension"]


def _weighted_sum(v, w, shift=0.0):
    return np.sum(v * w) + shift


def partial_keyword_given_again(x):
    """A keyword a ``partial`` binds, given again by a call (legal Python: the call's value wins)."""
    g = functools.partial(_weighted_sum, w=x[:3], shift=0.5)
    return g(x[3:6]) + g(x[3:6], w=x[6:9]) ** 2 + g(x[:3], shift=np.sum(x))


def inputs_partial_keyword_given_again():
    return (np.array([0.3, -0.2, 0.5, 0.1, 0.7, -0.4, 0.9, 0.2, -0.6]),)


PROGRAMS += ["partial_keyword_given_again"]


ACTIVATION_BY_NAME = "tanh"


def activation_looked_up_by_name(x):
    """Configuration-driven code: functions looked up by a name known when the code is read
    (``getattr(np, ACTIVATION_BY_NAME)``, ``getattr(np, "sin")``), a default where there is none.
    """
    act = getattr(np, ACTIVATION_BY_NAME)
    other = getattr(np, "no_such_function", np.sin)
    return np.sum(act(x) * getattr(np, "cos")(x)) + np.sum(other(x))  # noqa: B009


def inputs_activation_looked_up_by_name():
    return (np.array([0.3, -0.2, 0.5]),)


def _act_by_name(z, activation):
    return getattr(np, activation)(z)


def activation_named_by_a_parameter(x, activation="tanh"):
    """``getattr(np, activation)`` of a parameter left to its default, and of a helper's given a literal."""
    act = getattr(np, activation)
    return np.sum(act(x) ** 2) + np.sum(_act_by_name(x, "sin"))


def inputs_activation_named_by_a_parameter():
    return (np.array([0.3, -0.2, 0.5]),)


PROGRAMS += ["activation_looked_up_by_name", "activation_named_by_a_parameter"]


@functools.lru_cache(maxsize=8)
def _dct_matrix(n):
    k = np.arange(n)
    return np.cos(np.pi / n * (k[:, None] + 0.5) * k[None, :])


def transform_matrix_from_a_cached_helper(x):
    """A constant matrix made by a helper under ``functools.lru_cache`` (a cache changes no value)."""
    return np.sum((_dct_matrix(x.shape[0]) @ x) ** 2)


def inputs_transform_matrix_from_a_cached_helper():
    return (np.array([0.3, -0.2, 0.5, 0.1]),)


PROGRAMS += ["transform_matrix_from_a_cached_helper"]


def frames_by_a_while_on_sizes(x):
    """Overlapping frames of a signal taken by a ``while`` loop on a counter and the signal's length
    (``len(x)``, known when traced: the steps are counted, then collected), and pairs of rows by one on
    ``X.shape[0]``."""
    frames, start = [], 0
    while start + 4 <= len(x):
        frames.append(x[start : start + 4] * np.hanning(4))
        start += 2
    X = np.reshape(x, (5, 2))
    pairs, i = [], 0
    while i < X.shape[0] - 1:
        pairs.append(np.sum(X[i] * X[i + 1]))
        i += 1
    return np.sum(np.array(frames) ** 2) + sum(pairs)


def inputs_frames_by_a_while_on_sizes():
    return (np.sin(np.arange(10.0)),)


PROGRAMS += ["frames_by_a_while_on_sizes"]


def riccati_gains_in_a_preallocated_list(q, A):
    """A finite-horizon LQR sweep as control code writes it: the gains in a list of ``None``
    placeholders filled backward at the loop's counter, then a forward rollout reading them.
    """
    N = 4
    P = np.diag(np.exp(q))
    gains = [None] * N
    for k in reversed(range(N)):
        K = P @ A / (1.0 + np.trace(P))
        P = np.eye(2) + 0.5 * A.T @ P @ A - K
        gains[k] = K
    costs = [0.0] * N
    x = np.array([1.0, -0.5])
    for k in range(N):
        x = A @ x - gains[k] @ x
        costs[k] = np.sum(x**2)
    return np.sum(P) + sum(costs)


def inputs_riccati_gains_in_a_preallocated_list():
    return np.array([0.1, -0.2]), np.array([[0.9, 0.1], [-0.2, 0.8]])


PROGRAMS += ["riccati_gains_in_a_preallocated_list"]


def value_sweep_reading_the_next_item(q):
    """A backward sweep that reads the item it wrote the step before (``V[k + 1]``): not a list the loop
    collects (``frontend/filled_lists`` leaves it), so NumPy's code runs it as written.
    """
    N = 3
    V = [None] * (N + 1)
    V[N] = np.exp(q)
    for k in reversed(range(N)):
        V[k] = 0.5 * V[k + 1] + np.tanh(V[k + 1] * q)
    return np.sum(V[0] ** 2)


HMM_OBSERVED = [0, 2, 1, 2, 0]
HMM_EMISSIONS = np.array([[0.6, 0.3, 0.1], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4]])


def hmm_scaled_forward_filled_by_entries(x):
    """An HMM's scaled forward pass as textbooks write it: ``alpha[t, j]`` written entry by entry in a
    nested loop reading ``OBS[t]`` (a module-level list) at the outer loop's counter."""
    A = np.exp(x.reshape(3, 3))
    A = A / A.sum(axis=1, keepdims=True)
    T = len(HMM_OBSERVED)
    alpha = np.zeros((T, 3))
    c = np.zeros(T)
    alpha[0] = np.array([0.5, 0.3, 0.2]) * HMM_EMISSIONS[:, HMM_OBSERVED[0]]
    c[0] = alpha[0].sum()
    alpha[0] /= c[0]
    for t in range(1, T):
        for j in range(3):
            alpha[t, j] = alpha[t - 1].dot(A[:, j]) * HMM_EMISSIONS[j, HMM_OBSERVED[t]]
        c[t] = np.sum(alpha[t])
        alpha[t] = alpha[t] / c[t]
    return -np.sum(np.log(c))


def inputs_hmm_scaled_forward_filled_by_entries():
    return (np.linspace(-0.5, 0.5, 9),)


PROGRAMS += ["hmm_scaled_forward_filled_by_entries"]


class _Gaussian:
    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale

    def log_prob(self, v):
        return -0.5 * ((v - self.loc) / self.scale) ** 2 - np.log(self.scale)


MIXTURE_DATA = np.array([0.2, -0.7, 1.3, 0.4])


def mixture_components_read_at_a_comprehensions_counter(x):
    """A mixture's components made by one comprehension and read at another's counter
    (``comps[k].log_prob(...) for k in range(K)``), and pairs read so (``pairs[k][0]``).
    """
    comps = [_Gaussian(x[k], np.exp(x[k + 2])) for k in range(2)]
    logw = x[4:6] - np.log(np.sum(np.exp(x[4:6])))
    lps = np.stack([logw[k] + comps[k].log_prob(MIXTURE_DATA) for k in range(2)])
    pairs = [(x[k], np.exp(x[k + 2])) for k in range(2)]
    extra = sum(pairs[k][0] * pairs[k][1] for k in range(2))
    return -np.sum(np.log(np.sum(np.exp(lps), axis=0))) + extra


def inputs_mixture_components_read_at_a_comprehensions_counter():
    return (np.array([0.3, -0.2, 0.5, 0.1, 0.2, -0.4]),)


PROGRAMS += ["mixture_components_read_at_a_comprehensions_counter"]


def scalar_states_recorded_then_updated_in_place(x):
    """A simulation that records scalar states in history lists and then updates them in place
    (``ys.append(y); y += v * dt``): a NumPy scalar is rebound by ``+=``, so the history keeps its values;
    a PID controller's integral and a clock (``t += dt``) do the same.
    """
    y, v = 1.0 + x[0], 0.5 * x[1]
    t, integral = 0.0, 0.0
    ys, ts, us = [], [], []
    for _ in range(6):
        ys.append(y)
        ts.append(t)
        err = x[2] - y
        integral += err * 0.1
        u = 0.8 * err + 0.3 * integral
        us.append(u)
        v += (u - 9.81 * 0.01) * 0.1
        y += v * 0.1
        t += 0.1
    return sum(ys) / len(ys) + np.dot(np.array(us), np.array(ts))


def inputs_scalar_states_recorded_then_updated_in_place():
    return (np.array([0.2, -0.4, 0.6]),)


PROGRAMS += ["scalar_states_recorded_then_updated_in_place"]


def list_emptied_by_pops_then_summed(x):
    """A work list consumed by ``pop`` until none is left, and a list emptied by ``del``, then summed by
    a generator (a sum of nothing: 0) and zipped with itself: loops over no items, also under vmap.
    """
    pending = [np.tanh(x) * 0.5, x**2]
    done = []
    done.append(np.sum(pending.pop() * x))
    first = pending.pop(0)
    done.append(np.sum(first * x))
    rest = [np.sin(x)]
    del rest[0]
    leftover = sum(np.sum(r**2) for r in rest) + sum(a * b for a, b in zip(rest, rest))
    return sum(done) + leftover + len(rest)


def inputs_list_emptied_by_pops_then_summed():
    return (np.array([0.3, -0.5, 0.8]),)


PROGRAMS += ["list_emptied_by_pops_then_summed"]


def momentum_over_a_list_of_parameters(x):
    """Heavy-ball momentum over a list of parameters of different shapes, its velocities made by a
    comprehension before the loop and rebuilt by one in each step (the carry: the lists' items).
    """
    params = [x[0:4].reshape(2, 2), x[4:6], x[6]]
    velocity = [np.zeros_like(p) for p in params]
    mu, lr = 0.8, 0.2
    for _ in range(3):
        grads = [np.tanh(p) * 0.5 + 0.1 * p**2 for p in params]
        velocity = [mu * v - lr * g for v, g in zip(velocity, grads)]
        params = [p + v for p, v in zip(params, velocity)]
    return sum(np.sum(p**2) for p in params) + np.sum(velocity[1])


def inputs_momentum_over_a_list_of_parameters():
    return (np.array([0.3, -0.5, 0.8, 0.1, -0.2, 0.6, 0.4]),)


PROGRAMS += ["momentum_over_a_list_of_parameters"]


def momentum_until_a_tolerance_with_comprehensions(x):
    """The same steps in a ``while`` loop on data: the lists its comprehensions make each step grow no
    more than that (they are no ``append`` across steps), and the velocities are carried item by item.
    """
    params = [x[0:4].reshape(2, 2), x[4:6], x[6]]
    velocity = [np.zeros_like(p) for p in params]
    while np.sum(params[1] ** 2) < 4.0:
        grads = [-0.5 - 0.1 * np.tanh(p) for p in params]
        velocity = [0.8 * v - 0.2 * g for v, g in zip(velocity, grads)]
        params = [p + v for p, v in zip(params, velocity)]
    return sum(np.sum(np.sin(p)) for p in params)


def inputs_momentum_until_a_tolerance_with_comprehensions():
    return (np.array([0.3, -0.5, 0.8, 0.1, -0.2, 0.6, 0.4]),)


PROGRAMS += ["momentum_until_a_tolerance_with_comprehensions"]


def powers_by_a_loop_counter(x):
    """Powers whose exponent is a loop's counter (a ``while`` loop's carried ``k``, a ``for`` loop's
    ``k + 1``) at negative entries: an integer exponent has no derivative, so no ``0 * log(x)`` (nan)
    enters the jvp or the Hessian."""
    total, k = 0.0, 0
    while k < 3:
        total = total + np.sum(x ** (k + 1)) / (k + 1)
        k += 1
    for j in range(3):
        total = total + np.sum(x**j * 0.5) * j
    return total


def inputs_powers_by_a_loop_counter():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["powers_by_a_loop_counter"]


def roots_of_carried_counters(x):
    """Counters ``while`` and ``for`` loops carry themselves (an int, floats), under square roots, whose
    partials are infinite at 0: no input reaches them, so they have no tangent and no cotangent, and the
    gradient, the jvp and the Hessian are finite (a zero tangent times that partial was nan).
    """
    total, k = 0.0, 0
    while k < 3:
        total = total + np.sqrt(k) * np.sum(x**2)
        k += 1
    steps = 0.0
    for _ in range(3):
        total = total + np.sqrt(steps) * np.sum(np.sin(x))
        steps = steps + 1.0
    scale = 0.0  # (a Python float: 0.0 ** -0.5 raises, where a backward step computed its cotangent)
    while scale < 2:
        total = total + scale**0.5 * np.sum(np.cos(x))
        scale += 1.0
    left = 2  # (read after the loop, at 0)
    while left > 0:
        total = total + np.sum(x**3) * left
        left -= 1
    return total + np.sqrt(left) * np.sum(x)


def inputs_roots_of_carried_counters():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["roots_of_carried_counters"]


class _AbstractLayer(abc.ABC):
    """numpy-ml style: an abstract base that sets shared hyperparameters (its ``**kwargs`` unread)."""

    def __init__(self, scale=1.0, **kwargs):
        self.scale = scale
        self.trainable = True

    @abc.abstractmethod
    def forward(self, v): ...


class _DenseOverABase(_AbstractLayer):
    def __init__(self, w, b, scale=1.0):
        super().__init__(scale)
        self.w = w
        self.b = b

    def forward(self, v):
        return np.tanh(v @ self.w + self.b) * self.scale


class _AffineOverDense(_DenseOverABase):
    def __init__(self, w, b):
        _DenseOverABase.__init__(self, w, b, scale=0.5)
        self.shift = 0.1

    def forward(self, v):
        return v @ self.w + self.b + self.shift * self.scale


def layers_calling_their_bases_init(x):
    """Layers whose ``__init__`` calls the base's (``super().__init__(scale)``, ``Base.__init__(self,
    ...)``) over an abstract base class, made in the function and called."""
    w = x[:6].reshape(3, 2)
    hidden = _DenseOverABase(w, x[6:8], scale=2.0)
    out = _AffineOverDense(x[8:10].reshape(2, 1), x[10])
    h = hidden.forward(np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4]]))
    return np.sum(out.forward(h) ** 2) + hidden.scale * out.scale


def inputs_layers_calling_their_bases_init():
    return (np.linspace(-0.5, 0.6, 11),)


PROGRAMS += ["layers_calling_their_bases_init"]


def _decay_curve(t, a, b, c):
    return a * np.exp(-b * t) + c


DECAY_T = np.linspace(0.0, 2.0, 7)
DECAY_Y = np.array([2.1, 1.6, 1.25, 1.0, 0.85, 0.72, 0.66])


def curve_fit_residuals_of_unpacked_parameters(x):
    """scipy's curve_fit convention: the model's parameters spread from a slice (``model(t, *p)``);
    its call is checked as Python's, per example under vmap."""
    r = DECAY_Y - _decay_curve(DECAY_T, *x[:3])
    return np.sum(r**2) + x[3] * np.sum(x[:3])


def inputs_curve_fit_residuals_of_unpacked_parameters():
    return (np.array([0.9, 1.3, 0.4, 0.7, 1.1]),)


PROGRAMS += ["curve_fit_residuals_of_unpacked_parameters"]


def sizes_given_one_by_one_with_an_order(x):
    """``x.reshape(2, 3, order="F")``: the sizes one by one beside a keyword (MATLAB ports)."""
    m = x.reshape(2, 3, order="F")
    return np.sum(m * np.arange(6.0).reshape(2, 3)) + np.sum(m.transpose(1, 0)[0] ** 2)


def inputs_sizes_given_one_by_one_with_an_order():
    return (np.array([0.3, -0.5, 0.8, 0.1, -0.2, 0.6]),)


PROGRAMS += ["sizes_given_one_by_one_with_an_order"]


def _batchnorm_forward_keeping_a_cache(x, gamma, beta, bn_param):
    """CS231n's ``batchnorm_forward``: settings read with ``.get``, kept in the cache, running averages
    written back into the dict (binding its entries anew changes nothing the cache holds).
    """
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    mu = np.mean(x, axis=0)
    var = np.var(x, axis=0)
    xhat = (x - mu) / np.sqrt(var + eps)
    out = gamma * xhat + beta
    cache = (xhat, gamma, var, eps)
    bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mu
    return out, cache


def batchnorm_with_its_settings_in_a_dict(x):
    w = x.reshape(2, 3)
    out, cache = _batchnorm_forward_keeping_a_cache(
        np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [1.0, 0.2, 0.6]]) @ w.T,
        np.array([1.5, 0.5]),
        np.array([0.1, -0.1]),
        {"mode": "train", "eps": 1e-3},
    )
    xhat, gamma, var, eps = cache
    return np.sum(out**2) + np.sum(var) * eps


def inputs_batchnorm_with_its_settings_in_a_dict():
    return (np.array([0.3, -0.5, 0.8, 0.1, -0.2, 0.6]),)


PROGRAMS += ["batchnorm_with_its_settings_in_a_dict"]


SMOOTHING = 0.25


def constant_declared_global_and_only_read(x):
    """``global SMOOTHING`` in a function that only reads it (a habit from scripts): a declaration
    with no effect, read as nothing."""
    global SMOOTHING
    return np.sum(np.tanh(x) * SMOOTHING) + SMOOTHING * np.sum(x**2)


def inputs_constant_declared_global_and_only_read():
    return (np.array([0.3, -0.5, 0.8]),)


PROGRAMS += ["constant_declared_global_and_only_read"]


# fmt: off
class _ScaleLayer:
    def __init__(self, w):
        self.w = w

    def forward(self, v):
        s = v * self.w; return np.tanh(s)  # noqa: E702


def statements_joined_on_one_line(x, w):
    """Script habits: ``;``-joined statements (an object made on one of them, a method's), and one-line
    blocks (``for v in h: s += v``, ``if ...: ...``, ``else: ...``)."""
    layer = _ScaleLayer(w); h = layer.forward(x)  # noqa: E702
    s = 0.0; t = 1.0  # noqa: E702
    for v in h: s += v**2; t *= 1.1  # noqa: E702
    if s > 0.5: s = s * 2.0; t = t + s  # noqa: E702
    else: s = s - 1.0
    while t < 10.0: t = t * 3.0
    return s * t + np.sum(np.sin(h))
# fmt: on


def inputs_statements_joined_on_one_line():
    return (np.array([0.3, -0.8, 1.2]), np.array([0.5, 1.5, -0.7]))


PROGRAMS += ["statements_joined_on_one_line"]


def _batchnorm_cs231n(x, gamma, beta, bn_param):
    """CS231n's layer: running statistics read with ``get``, updated in the ``train`` branch only, and
    written back into the dict it was given."""
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    running_var = bn_param.get("running_var", np.ones(x.shape[1]))
    if mode == "train":
        mu, var = x.mean(axis=0), x.var(axis=0)
        out = gamma * (x - mu) / np.sqrt(var + eps) + beta
        running_mean = 0.9 * running_mean + 0.1 * mu
        running_var = 0.9 * running_var + 0.1 * var
    else:
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, None


def batchnorm_at_test_time_with_its_statistics_given(x):
    """The statistics come from the dict (``test`` mode): a value read with ``get``, rebound in a branch
    that does not run, then written back under its key, which changes no array it held.
    """
    bn_param = {
        "mode": "test",
        "running_mean": np.array([0.1, 0.2, -0.1]),
        "running_var": np.array([1.0, 0.5, 2.0]),
    }
    out, _ = _batchnorm_cs231n(x, np.ones(3), np.zeros(3), bn_param)
    return np.sum(out**2)


def inputs_batchnorm_at_test_time_with_its_statistics_given():
    return (np.array([[0.3, -0.8, 1.2], [0.5, 0.1, -0.4]]),)


PROGRAMS += ["batchnorm_at_test_time_with_its_statistics_given"]


class _ModeNet:
    """CS231n's ``FullyConnectedNet``: per-layer settings dicts in a list, their mode set by ``loss``."""

    def __init__(self, weights):
        self.params = {f"W{i + 1}": w for i, w in enumerate(weights)}
        self.num_layers = len(weights)
        self.dropout_param = {"mode": "train", "p": 0.5}
        self.bn_params = [{"mode": "train"} for _ in range(self.num_layers - 1)]

    def loss(self, X, y=None):
        mode = "test" if y is None else "train"
        self.dropout_param["mode"] = mode
        for bn_param in self.bn_params:
            bn_param["mode"] = mode
        out = X
        for i in range(1, self.num_layers):
            scale = 1.0 if self.bn_params[i - 1]["mode"] == "test" else 0.5
            out = np.tanh(out @ self.params[f"W{i}"]) * scale
        scores = out @ self.params[f"W{self.num_layers}"]
        if mode == "test":
            return scores
        loss = np.mean((scores - y) ** 2)
        for bn_param in self.bn_params:
            loss += 0.01 * len(bn_param["mode"])
        return loss


def layer_settings_set_by_a_loop_over_their_dicts(w1, w2, x, y):
    """``for bn_param in self.bn_params: bn_param["mode"] = mode``: the loop writes into the dicts the
    list holds (the same name visits them again in a later loop); ``x`` at test time (``y=None``) too.
    """
    net = _ModeNet([w1, w2])
    train = net.loss(x, y)
    scores = _ModeNet([w1, w2]).loss(x)
    return train + np.sum(scores**2)


def inputs_layer_settings_set_by_a_loop_over_their_dicts():
    r = np.random.default_rng(5)
    return (
        r.normal(size=(3, 4)),
        r.normal(size=(4, 2)),
        r.normal(size=(5, 3)),
        r.normal(size=(5, 2)),
    )


PROGRAMS += ["layer_settings_set_by_a_loop_over_their_dicts"]


def sgd_steps_over_a_list_by_its_indices(w1, b1, w2, x, y):
    """Plain SGD on a list of parameter arrays of different shapes, updated by index
    (``ws[i] = ws[i] - lr * grads[i]``): a loop no compiled counter can run, visited step by step.
    """
    ws = [w1, b1, w2]
    for step in range(2):
        h = np.tanh(x @ ws[0] + ws[1])
        err = h @ ws[2] - y
        grads = [
            x.T @ ((err @ ws[2].T) * (1 - h**2)),
            np.sum((err @ ws[2].T) * (1 - h**2), axis=0),
            h.T @ err,
        ]
        for i in range(len(ws)):
            ws[i] = ws[i] - 0.1 * grads[i] / len(y)
    h = np.tanh(x @ ws[0] + ws[1])
    return np.mean((h @ ws[2] - y) ** 2)


def inputs_sgd_steps_over_a_list_by_its_indices():
    r = np.random.default_rng(8)
    return (
        0.5 * r.normal(size=(3, 4)),
        0.1 * r.normal(size=4),
        0.5 * r.normal(size=(4, 2)),
        r.normal(size=(6, 3)),
        r.normal(size=(6, 2)),
    )


PROGRAMS += ["sgd_steps_over_a_list_by_its_indices"]


def _batchnorm_keeping_running_mean(x, gamma, bn_param):
    """CS231n's contract: the layer writes its running mean into the dict it is given."""
    mode = bn_param["mode"]
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    out, cache = None, None
    if mode == "train":
        mu = x.mean(axis=0)
        out = gamma * (x - mu) / np.sqrt(x.var(axis=0) + 1e-5)
        cache = (x, mu, gamma)
        running_mean = 0.9 * running_mean + 0.1 * mu
    else:
        out = gamma * (x - running_mean)
    bn_param["running_mean"] = running_mean
    return out, cache


def running_mean_read_after_the_layer_wrote_it(x):
    """The caller reads the statistics the layer wrote into its dict: NumPy's change, handed back."""
    bn_param = {"mode": "train"}
    out, _ = _batchnorm_keeping_running_mean(x, np.array([1.0, 2.0, 0.5]), bn_param)
    return np.sum(out**2) + np.sum(bn_param["running_mean"] ** 2)


def inputs_running_mean_read_after_the_layer_wrote_it():
    return (np.array([[0.3, -0.8, 1.2], [0.5, 0.1, -0.4], [0.2, 0.7, -0.9]]),)


PROGRAMS += ["running_mean_read_after_the_layer_wrote_it"]


class _NormalizedNet:
    """CS231n's ``FullyConnectedNet`` with batch normalization: its layers' settings dicts in a list
    made by ``__init__`` on a configuration's branch, the mode set by ``loss`` and the running means
    written into them by the layer, read again in the next call."""

    def __init__(self, weights, normalization=None):
        self.params = {f"W{i + 1}": w for i, w in enumerate(weights)}
        self.num_layers = len(weights)
        self.normalization = normalization
        self.bn_params = []
        if self.normalization == "batchnorm":
            self.bn_params = [{"mode": "train"} for _ in range(self.num_layers - 1)]

    def loss(self, X, y):
        if self.normalization == "batchnorm":
            for bn_param in self.bn_params:
                bn_param["mode"] = "train"
        out = X
        for i in range(1, self.num_layers):
            out = out @ self.params[f"W{i}"]
            if self.normalization == "batchnorm":
                out, _ = _batchnorm_keeping_running_mean(
                    out, 1.5, self.bn_params[i - 1]
                )
            out = np.tanh(out)
        scores = out @ self.params[f"W{self.num_layers}"]
        loss = np.mean((scores - y) ** 2)
        for bn_param in self.bn_params:
            loss += 0.1 * np.sum(bn_param["running_mean"] ** 2)
        return loss


def layers_writing_statistics_into_their_settings(w1, w2, x, y):
    """Both configurations of the net: the settings dicts written by a loop and by the layer."""
    plain = _NormalizedNet([w1, w2]).loss(x, y)
    return plain + _NormalizedNet([w1, w2], normalization="batchnorm").loss(x, y)


def inputs_layers_writing_statistics_into_their_settings():
    r = np.random.default_rng(6)
    return (
        r.normal(size=(3, 4)),
        r.normal(size=(4, 2)),
        r.normal(size=(5, 3)),
        r.normal(size=(5, 2)),
    )


PROGRAMS += ["layers_writing_statistics_into_their_settings"]


def _unpack_into(v):
    return v * 2.0, np.sum(v)


def local_function_unpacking_into_a_list_of_its_caller(x):
    """A local function writing an item of its enclosing function's list from an unpacking
    (``hs[1], c = pair(v)``): the list is handed through it and back."""
    hs = [x, x * 0.5]

    def step(v):
        hs[1], c = _unpack_into(v)
        return c

    c = step(np.sin(x))
    return np.sum(hs[1] * hs[0]) * c


def inputs_local_function_unpacking_into_a_list_of_its_caller():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["local_function_unpacking_into_a_list_of_its_caller"]


def _sgd_momentum_cs231n(w, dw, config=None):
    """CS231n's ``optim.sgd_momentum``: the settings dict filled by ``setdefault`` on the first call,
    the velocity kept in it."""
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    config.setdefault("momentum", 0.9)
    v = config.get("velocity", np.zeros_like(w))
    v = config["momentum"] * v - config["learning_rate"] * dw
    config["velocity"] = v
    return w + v, config


def momentum_steps_with_a_settings_dict(x):
    """The optimizer's dict gains keys in the first step (``setdefault``, ``velocity``): a compiled loop
    runs that step on its own and rolls the others."""
    w = x * 1.0
    config = {"learning_rate": 0.2}
    for _ in range(3):
        dw = np.tanh(w) + 0.1 * w
        w, config = _sgd_momentum_cs231n(w, dw, config)
    return np.sum(w**2) + np.sum(config["velocity"])


def inputs_momentum_steps_with_a_settings_dict():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["momentum_steps_with_a_settings_dict"]


class _AdamFromScratch:
    """ML-From-Scratch's ``Adam``: moments made on the first ``update`` (``if self.m is None``)."""

    def __init__(self, learning_rate=0.05, b1=0.9, b2=0.999):
        self.learning_rate, self.eps = learning_rate, 1e-8
        self.m = None
        self.v = None
        self.b1, self.b2 = b1, b2

    def update(self, w, grad_wrt_w):
        if self.m is None:
            self.m = np.zeros(np.shape(grad_wrt_w))
            self.v = np.zeros(np.shape(grad_wrt_w))
        self.m = self.b1 * self.m + (1 - self.b1) * grad_wrt_w
        self.v = self.b2 * self.v + (1 - self.b2) * np.power(grad_wrt_w, 2)
        m_hat = self.m / (1 - self.b1)
        v_hat = self.v / (1 - self.b2)
        return w - self.learning_rate * m_hat / (np.sqrt(v_hat) + self.eps)


def adam_object_whose_moments_start_as_none(x):
    """The optimizer's state is ``None`` until the first step: that step runs on its own, the test
    ``self.m is None`` known to Python in every step, forward and backward."""
    opt = _AdamFromScratch()
    w = x * 1.0
    for _ in range(3):
        w = opt.update(w, np.sin(w) + 0.5 * w)
    return np.sum(w**2)


def inputs_adam_object_whose_moments_start_as_none():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["adam_object_whose_moments_start_as_none"]


def items_read_through_flat(x):
    """``x.flat``: its items in C order, iterated and indexed (NumPy's flat iterator, read)."""
    total = 0.0
    for v in x.flat:
        total += v**2
    return total + 3.0 * x.flat[4] + np.sum(np.tanh(x))


def inputs_items_read_through_flat():
    return (np.array([[0.3, -0.8, 1.2], [0.6, 0.15, -0.45]]),)


PROGRAMS += ["items_read_through_flat"]


def appends_chosen_by_a_conditional_expression(x):
    """``a() if c else b()`` as a statement (numpy-ml writes ``d["Z"].append(Z) if "Z" in d else
    None``): the ``if`` statement it stands for, on data in a loop, and a constant arm doing nothing.
    """
    hs = []
    for v in x:
        hs.append(v**2) if v > 0 else hs.append(-v)
    print("negative total") if np.sum(x) < -100 else None
    return sum(hs)


def inputs_appends_chosen_by_a_conditional_expression():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["appends_chosen_by_a_conditional_expression"]


def _apply_to(fn, v):
    return fn(v)


def _scaled_square(scale, v):
    return scale * v**2


def jax_partial_passed_to_a_helper(x):
    """``jax.tree_util.Partial`` (a ``functools.partial`` that is a pytree) bound to a value of the
    function and handed to a helper."""
    fn = jax.tree_util.Partial(_scaled_square, x[0])
    return np.sum(_apply_to(fn, x[1:]))


def inputs_jax_partial_passed_to_a_helper():
    return (np.array([0.3, -0.8, 1.2, 0.5]),)


PROGRAMS += ["jax_partial_passed_to_a_helper"]


def rows_picked_by_a_list_held_in_a_name(v):
    """``idx = [0, 3, 3, 4]`` then ``(U + v)[idx]``: NumPy reads the list as an integer array (a row
    repeated), under ``jax.jit`` too (JAX refuses a list as an index)."""
    table = np.arange(10.0).reshape(5, 2) / 10
    idx = [0, 3, 3, 4]
    return np.sum(((table + v)[idx] @ v) ** 2)


def inputs_rows_picked_by_a_list_held_in_a_name():
    return (np.array([0.3, -0.2]),)


PROGRAMS += ["rows_picked_by_a_list_held_in_a_name"]


def _layer_outputs(x, weights, outputs=None, scale=None):
    """The Python idiom for a list default: ``outputs=None``, then ``if outputs is None: outputs = []``."""
    if outputs is None:
        outputs = []
    if scale is not None:
        x = scale * x
    for w in weights:
        x = np.tanh(x * w)
        outputs.append(x)
    # a test the loop above could change is still read when the code runs
    return outputs if outputs is not None else [x]


def _countdown_default(x, left=None):
    total = 0.0
    for i in range(3):
        if left is None:
            left = 2
        else:
            left = left - 1
        total = total + left * np.sum(x**2)
    return total


def list_defaults_left_none(x):
    """Helpers whose list parameter defaults to ``None`` and is made inside: the ``is None`` test read
    where the helper is called (the default, or ``None`` passed), a test in a loop as it runs.
    """
    weights = [0.5, -1.2, 0.8]
    hs = _layer_outputs(x, weights)
    gs = _layer_outputs(x, weights, None, scale=2.0)
    return np.sum(np.stack(hs) ** 2) + np.sum(gs[-1]) + _countdown_default(x)


def inputs_list_defaults_left_none():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["list_defaults_left_none"]


def columns_of_listed_pairs(x):
    """``list(zip(*pairs))`` unpacked into columns (the transpose idiom with the ``list`` people add)."""
    pairs = [(np.tanh(x), x[0] * x), (x**2, np.sin(x))]
    firsts, seconds = list(zip(*pairs))
    return sum(np.sum(a * b) for a, b in zip(firsts, seconds))


def inputs_columns_of_listed_pairs():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["columns_of_listed_pairs"]


class RecordingLayer:
    """numpy-ml's way: the layer keeps what its forward pass computed in a dict of lists."""

    def __init__(self, W, b):
        self.W = W
        self.b = b
        self.derived_variables = {"Z": [], "A": []}

    def forward(self, X):
        Z = X @ self.W + self.b
        A = np.tanh(Z)
        self.derived_variables["Z"].append(Z)
        self.derived_variables["A"].append(A)
        return A


def layer_recording_its_steps(W):
    """A layer object made in the function, called twice, its recorded pre-activations read after."""
    X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    layer = RecordingLayer(W, np.array([0.1, -0.2, 0.3]))
    h = layer.forward(X)
    h = layer.forward(h[:, ::-1])
    Z = layer.derived_variables["Z"]
    return np.sum(h**2) + np.sum(Z[0] * Z[1]) + len(layer.derived_variables["A"])


def inputs_layer_recording_its_steps():
    return (np.linspace(-0.5, 0.7, 9).reshape(3, 3),)


PROGRAMS += ["layer_recording_its_steps"]


def _scaled_by_mode(x, mode):
    """``if``/``if`` on a mode string (numpy-ml's ``pad2D``), each assigning the result."""
    if mode == "double":
        y = 2 * x
    if mode == "triple":
        y = 3 * x
    return y


def _padding_for(mode):
    """A helper that returns on some branches only (ML-From-Scratch's ``determine_padding``)."""
    if mode == "valid":
        return 0
    elif mode == "same":
        return 1


def descent_with_hook(x, callback=None, verbose=False):
    """An optimizer's optional hook (``if callback: callback(x, i)``), left ``None``; a flag tested too."""
    for i in range(3):
        x = x - 0.1 * np.sin(x)
        if callback:
            callback(x, i)
        if verbose:
            print("step", i)
    return np.sum(_scaled_by_mode(x, "triple") ** 2) + np.sum(
        np.pad(x, _padding_for("same")) ** 2
    )


def inputs_descent_with_hook():
    return (np.linspace(0.1, 1.0, 4),)


PROGRAMS += ["descent_with_hook"]


@jax.numpy.vectorize
def _soft_step(r, k):
    """``@jnp.vectorize`` at module level: a function of scalars, mapped over broadcast arrays."""
    return jax.numpy.tanh(k * r) + 0.1 * r**2


def messages_and_vectorized(x):
    """An error message of literals written side by side, one an f-string (as error messages are),
    and a ``@jnp.vectorize`` function."""
    if x.ndim != 1:
        msg = f"expected a vector, got shape {x.shape};" " reshape it first"
        raise ValueError(msg)
    label = f"n={x.size}" " points"
    return np.sum(_soft_step(x, 2.0) ** 2) + len(label)


def inputs_messages_and_vectorized():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["messages_and_vectorized"]


def _batchnorm_forward_by_mode(x, gamma, beta, bn_param):
    """CS231n's ``batchnorm_forward`` whole: a mode read from the dict, the cache made in the ``train``
    branch, names it holds bound again after (the running averages), and written back into the dict.
    """
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    out, cache = None, None
    if mode == "train":
        sample_mean = np.mean(x, axis=0)
        sample_var = np.var(x, axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        cache = (x, x_hat, sample_mean, sample_var, gamma, beta, eps)
        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var
    elif mode == "test":
        x_hat = (x - running_mean) / np.sqrt(running_var + eps)
        out = gamma * x_hat + beta
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, cache


def batchnorm_by_mode_twice(W):
    x = np.array(
        [[0.3, -1.0, 0.5], [1.2, 0.4, -0.7], [-0.5, 0.8, 0.9], [0.1, -0.3, -1.1]]
    )
    gamma, beta = np.array([1.2, 0.8, 1.0]), np.array([0.1, 0.0, -0.1])
    bn_param = {"mode": "train"}
    h, _ = _batchnorm_forward_by_mode(x @ W, gamma, beta, bn_param)
    h2, cache = _batchnorm_forward_by_mode(np.tanh(h), gamma, beta, bn_param)
    return (
        np.sum(h2**3) + 0.1 * np.sum(bn_param["running_mean"] ** 2) + np.sum(cache[3])
    )


def inputs_batchnorm_by_mode_twice():
    return (np.array([[0.5, -0.3, 0.2], [0.1, 0.9, -0.4], [-0.2, 0.2, 0.7]]),)


PROGRAMS += ["batchnorm_by_mode_twice"]


def spread_operands_and_listed_terms(x):
    """``np.einsum(spec, *factors)`` of factors the function makes (a CP decomposition's), a spread
    display, and SciPy's ``logsumexp`` of a list of terms (an HMM's forward step)."""
    factors = (x[:, None], np.cos(x)[:, None])
    K = np.einsum("ir,jr->ij", *factors)
    z = np.maximum(*(x, 0.5 * x))
    return np.sum(K**2) + logsumexp([x[0] + 1.0, x[1] * 2.0, x[2]]) + np.sum(z)


def inputs_spread_operands_and_listed_terms():
    return (np.array([0.3, -0.8, 1.2, 0.5]),)


PROGRAMS += ["spread_operands_and_listed_terms"]


class VerboseScaler:
    """scikit-learn's habit: a message naming ``type(self).__name__``, printed only when verbose."""

    def __init__(self, scale, verbose=0):
        self.scale = scale
        self.verbose = verbose

    def loss(self, x):
        if self.verbose:
            message = "[{}] scale {}"
            print(message.format(type(self).__name__, self.scale))
        name = self.__class__.__name__
        return np.sum((self.scale * x) ** 2) * len(name)


def object_naming_its_class(x):
    return VerboseScaler(0.5).loss(x)


def inputs_object_naming_its_class():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["object_naming_its_class"]


class _KeywordGain:
    def __init__(self, c=1.0):
        self.c = c

    def apply(self, z):
        return self.c * z


class _GainedModel:
    """An ``__init__`` making an object from its own parameter, passed by keyword (``Scale(c=c)``)."""

    def __init__(self, c=2.0, shift=0.0):
        self.inner = _KeywordGain(c=c)
        self.shift = shift

    def forward(self, q):
        return self.inner.apply(q) + self.shift


def object_made_from_its_makers_parameter(x):
    m = _GainedModel(c=3.0, shift=0.5)
    return np.sum(m.forward(x) ** 2)


def inputs_object_made_from_its_makers_parameter():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["object_made_from_its_makers_parameter"]


class _SquareLoss:
    def __call__(self, x):
        return np.sum(x**2)


class _CubeLoss:
    def __call__(self, x):
        return np.sum(x**3)


def objects_unpacked_from_a_list(x):
    """numpy-ml's tests: a list of loss objects, unpacked into names and called."""
    losses = [_SquareLoss(), _CubeLoss()]
    sq, cu = losses
    return sq(x) + 0.5 * cu(x)


def inputs_objects_unpacked_from_a_list():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["objects_unpacked_from_a_list"]


try:  # an optional import, as library code writes it
    from scipy.special import ndtr as _ndtr
except ImportError:  # pragma: no cover
    _ndtr = None


def optional_import_fallback(x):
    """``ndtr(x) if _ndtr is not None else <fallback>``: the fallback (``np.vectorize`` of ``math.erf``, which
    s2s cannot read) is decided away where the code is read."""
    if _ndtr is None:
        return np.sum(0.5 * (1 + np.vectorize(math.erf)(x / np.sqrt(2.0))))
    cdf = _ndtr(x) if _ndtr is not None else np.vectorize(math.erf)(x)
    return np.sum(cdf**2)


def inputs_optional_import_fallback():
    return (np.array([0.3, -0.8, 1.2]),)


PROGRAMS += ["optional_import_fallback"]


def _smoothstep(t):
    return t * t * (3 - 2 * t)


def pieces_by_np_piecewise(x):
    """``np.piecewise``: tax brackets by lambdas and a constant, a smoothstep by a module-level function,
    and a default piece (one function more than conditions)."""
    tax = np.piecewise(
        x,
        [x < 0.0, (x >= 0.0) & (x < 1.0), x >= 1.0],
        [0.0, lambda v: 0.2 * v, lambda v: 0.2 + 0.4 * (v - 1.0)],
    )
    step = np.piecewise(x, [x <= 0.0, x >= 1.0], [0.0, 1.0, _smoothstep])
    return np.sum(tax**2) + np.sum(step * x)


def inputs_pieces_by_np_piecewise():
    return (np.array([-0.5, 0.3, 0.7, 1.6, 2.2]),)


PROGRAMS += ["pieces_by_np_piecewise"]


class _TableSigmoid:
    def __call__(self, x):
        return 1 / (1 + np.exp(-x))


class _TableTanh:
    def __call__(self, x):
        return np.tanh(x)


TABLE_ACTIVATIONS = {"sigmoid": _TableSigmoid, "tanh": _TableTanh}


class _TableActivation:
    """ML-From-Scratch's layer: its function an object of a class looked up by name in a module table."""

    def __init__(self, name):
        self.activation_name = name
        self.activation_func = TABLE_ACTIVATIONS[name]()

    def forward_pass(self, X):
        return self.activation_func(X)


class _TableDense:
    def __init__(self, W, w0):
        self.W, self.w0 = W, w0

    def forward_pass(self, X):
        return X.dot(self.W) + self.w0


def activation_classes_by_name(W, X):
    """Layers in a list, an activation layer's class picked from a dict of classes by its name."""
    layers = [
        _TableDense(W, 0.1),
        _TableActivation("sigmoid"),
        _TableActivation("tanh"),
    ]
    out = X
    for layer in layers:
        out = layer.forward_pass(out)
    return np.mean(out**2)


def inputs_activation_classes_by_name():
    r = np.random.default_rng(71)
    return r.normal(size=(3, 2)), r.normal(size=(4, 3))


def _table_activation(name):
    return TABLE_ACTIVATIONS[name]()


def _function_by_name(name):
    if name == "tanh":
        return np.tanh
    elif name == "sigmoid":
        return _logistic_of
    raise ValueError(f"unknown activation {name}")


def _logistic_of(z):
    return 1 / (1 + np.exp(-z))


def activations_from_helpers(W, X):
    """A helper returning an object of a class from a table, and one returning a function, called at
    once (``get_activation("tanh")(z)``)."""
    act = _table_activation("sigmoid")
    h = act(X @ W)
    return np.sum(_function_by_name("tanh")(h) ** 2)


def inputs_activations_from_helpers():
    r = np.random.default_rng(72)
    return r.normal(size=(3, 2)), r.normal(size=(4, 3))


PROGRAMS += ["activation_classes_by_name", "activations_from_helpers"]


class _CheckedPenalty:
    """numpy-ml's LogisticRegression: ``__init__`` checks its arguments before it keeps them."""

    def __init__(self, penalty="l2", gamma=0.5):
        assert penalty in ["l2", "l1"], "penalty must be l1 or l2"
        if gamma < 0:
            raise ValueError("gamma must be non-negative")
        self.penalty, self.gamma = penalty, gamma

    def loss(self, w, X, y):
        order = 2 if self.penalty == "l2" else 1
        norm = np.linalg.norm(w, ord=order)
        return np.mean((X @ w - y) ** 2) + self.gamma * norm**order


def checked_init_attribute_tests(w, X, y):
    """A method's conditional expression on an attribute its class's checked ``__init__`` sets: read at
    the call, after the object is made (once folded as the placeholder ``None``: a silent wrong value).
    """
    model = _CheckedPenalty(penalty="l2")
    return model.loss(w, X, y)


def inputs_checked_init_attribute_tests():
    r = np.random.default_rng(73)
    return r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)


PROGRAMS += ["checked_init_attribute_tests"]


def running_best_from_none(w, X):
    """``best = None`` then ``if best is None or v > best: best = v`` in a loop: the guard decided in Python
    on the first step, the comparison compiled on the others (once both sides ran eagerly: ``v > None``).
    """
    best = None
    for x in X:
        v = np.tanh(x @ w)
        if best is None or v > best:
            best = v
    return best


def inputs_running_best_from_none():
    return np.array([0.4, 0.7]), np.array([[1.0, 0.0], [0.3, 0.9], [-0.5, 0.2]])


def sqrt_until_converged(a, tol=1e-12, max_iter=60):
    """A fixed-point loop that stops once the step is small, its previous iterate ``None`` at first:
    ``if prev is not None and abs(x - prev) < tol: break``."""
    x = 1.0
    prev = None
    for _ in range(max_iter):
        x = 0.5 * (x + a / x)
        if prev is not None and abs(x - prev) < tol:
            break
        prev = x
    return x**3


def inputs_sqrt_until_converged():
    return (np.array(5.0),)


def guarded_optional_arguments(w, mask=None, scale=None):
    """``if mask is not None and mask.any()`` and ``if scale is None or scale > 0`` of parameters left
    ``None``: Python never reaches the second operand."""
    if mask is not None and mask.any():
        w = w * mask
    if scale is None or scale > 0:
        return np.sum(w**2)
    return np.sum(w)


def inputs_guarded_optional_arguments():
    return (np.array([1.0, -2.0, 0.5]),)


PROGRAMS += [
    "running_best_from_none",
    "sqrt_until_converged",
    "guarded_optional_arguments",
]


NN_ARCHITECTURE = [
    {"input_dim": 3, "output_dim": 4, "activation": "relu"},
    {"input_dim": 4, "output_dim": 2, "activation": "sigmoid"},
]


def _sigmoid_of(Z):
    return 1 / (1 + np.exp(-Z))


def _layer_by_config(A_prev, W, b, activation="relu"):
    """ "Let's code a neural network in plain NumPy": the activation picked into a local name by string."""
    Z = W @ A_prev + b
    if activation == "relu":
        activation_func = _relu_of
    elif activation == "sigmoid":
        activation_func = _sigmoid_of
    else:
        raise Exception("Non-supported activation function")
    return activation_func(Z)


def _relu_of(Z):
    return np.maximum(0, Z)


def configured_layers(params, X):
    """A loop over a module-level architecture (a list of dicts of strings) beside the parameters: each
    layer's activation string differs, so the loop is written out, one step per row."""
    A = X
    for (W, b), layer in zip(params, NN_ARCHITECTURE):
        A = _layer_by_config(A, W, b, layer["activation"])
    return np.sum(A**2)


def inputs_configured_layers():
    r = np.random.default_rng(74)
    params = [
        (r.normal(size=(4, 3)), 0.5 + r.random((4, 1))),
        (r.normal(size=(2, 4)), r.normal(size=(2, 1))),
    ]
    return params, r.normal(size=(3, 5))


PROGRAMS += ["configured_layers"]


def keys_by_str_format(params, X, num_layers=2):
    """CS231n's ``params["W{}".format(i + 1)]`` (and a named field), and a message built by ``.format``."""
    h = X
    for i in range(num_layers):
        W = params["W{}".format(i + 1)]  # noqa: UP032
        b = params["b{idx}".format(idx=i + 1)]  # noqa: UP032
        h = np.tanh(h @ W + b)
    message = "hidden {} of mean {:.3f}".format(h.shape, 1.0)  # noqa: UP032
    assert message.startswith("hidden"), message
    return np.sum(h**2)


def inputs_keys_by_str_format():
    r = np.random.default_rng(75)
    params = {"W1": r.normal(size=(3, 4)), "b1": r.normal(size=4)}
    params.update({"W2": r.normal(size=(4, 2)), "b2": r.normal(size=2)})
    return params, r.normal(size=(5, 3))


PROGRAMS += ["keys_by_str_format"]


@dataclass
class _DerivedConfig:
    width: int
    depth: int
    total: int = 0

    def __post_init__(self):
        self.total = self.width * self.depth


def config_with_post_init(x):
    """A dataclass made in the function whose ``__post_init__`` computes a field: its value is the
    computed one (once read as the declared default 0: a silent inf)."""
    cfg = _DerivedConfig(3, 2)
    return np.sum(x**2) / cfg.total + cfg.width * np.mean(x)


def inputs_config_with_post_init():
    return (np.array([0.5, -1.0, 2.0]),)


PROGRAMS += ["config_with_post_init"]


def penalty_over_sorted_items(params, X):
    """``for name, p in sorted(params.items())`` (a deterministic order), weights told by their names."""
    total = np.sum(np.tanh(X @ params["W1"]) @ params["W2"])
    for name, p in sorted(params.items(), reverse=True):
        if name.startswith("W"):
            total = total + 0.1 * np.sum(p**2)
    return total


def inputs_penalty_over_sorted_items():
    r = np.random.default_rng(76)
    return {
        "W2": r.normal(size=(4, 2)),
        "W1": r.normal(size=(3, 4)),
        "b": r.normal(size=2),
    }, r.normal(size=(5, 3))


PROGRAMS += ["penalty_over_sorted_items"]


def options_in_empty_dicts(w, X, num_layers=3):
    """CS231n's ``self.bn_params = [{} for i in range(num_layers - 1)]``, read by ``.get`` with defaults."""
    ln_params = [{} for i in range(num_layers - 1)]
    h = X
    for i in range(num_layers - 1):
        eps = ln_params[i].get("eps", 1e-5)
        h = np.tanh(h * w[i]) / np.sqrt(np.var(h) + eps)
    return np.sum(h**2)


def inputs_options_in_empty_dicts():
    r = np.random.default_rng(77)
    return r.normal(size=2), r.normal(size=(4, 3))


PROGRAMS += ["options_in_empty_dicts"]


class _ActivationBase(abc.ABC):
    """numpy-ml's activations: an abstract base whose ``__init__`` takes ``**kwargs`` and calls ``super``."""

    def __init__(self, **kwargs):
        super().__init__()

    def __call__(self, z):
        return self.fn(z)

    @abc.abstractmethod
    def fn(self, z):
        raise NotImplementedError


class _TanhActivation(_ActivationBase):
    def fn(self, z):
        return np.tanh(z)


class _LeakyActivation(_ActivationBase):
    def __init__(self, alpha=0.3):
        self.alpha = alpha
        super().__init__()

    def fn(self, z):
        return np.where(z > 0, z, self.alpha * z)


def activation_objects_zipped_with_weights(Ws, x):
    """A list display of activation objects of two classes, looped over beside the weights (``zip``)."""
    acts = [_LeakyActivation(alpha=0.2), _TanhActivation()]
    h = x
    for W, act in zip(Ws, acts):
        h = act(h @ W)
    return np.sum(h**2)


def inputs_activation_objects_zipped_with_weights():
    r = np.random.default_rng(78)
    return [r.normal(size=(3, 3)), r.normal(size=(3, 2))], r.normal(size=(4, 3)) + 0.5


PROGRAMS += ["activation_objects_zipped_with_weights"]


class _RunningLoss:
    """A running total kept as a class-level default, updated through ``self`` (its first read is the
    class's value, not a placeholder)."""

    total = 0.0
    weight = 0.5

    def add(self, v):
        self.total = self.total + self.weight * v


def class_default_updated_by_a_method(w, x):
    tally = _RunningLoss()
    for row in x:
        tally.add(np.sum(np.tanh(row @ w) ** 2))
    return tally.total


def inputs_class_default_updated_by_a_method():
    r = np.random.default_rng(33)
    return r.normal(size=(3, 2)), r.normal(size=(4, 3))


PROGRAMS += ["class_default_updated_by_a_method"]


def scalar_types_and_predicates(x):
    """Library code's casts by NumPy's scalar types (``np.float64(v)``; ``np.int32(v)`` passes no derivative)
    and its ``np.isscalar`` checks."""
    total = np.float64(x[0]) ** 2 + np.int32(x[1] * 3.7) * x[1]
    if np.isscalar(total):
        total = total * np.ones(2)
    bins = np.digitize(x, np.array([-0.5, 0.5]))  # (integers: no derivative)
    return np.sum(total * np.tanh(x[:2])) + np.sum(bins * x)


def inputs_scalar_types_and_predicates():
    return (np.array([0.7, -1.3, 0.4]),)


PROGRAMS += ["scalar_types_and_predicates"]


def _decayed_steps(ps, steps=2):
    """A helper rebinding its list parameter by a comprehension over it, in a loop (an optimizer's
    steps): s2s does not know the parameter is a list before the loop; its items are what the loop reads.
    """
    for _ in range(steps):
        ps = [p * 0.9 - 0.05 * np.tanh(p) for p in ps]
    return ps


def list_parameter_rebound_in_a_loop(w, x):
    h = np.tanh(x @ w)
    ps = _decayed_steps([h, w * 0.5])
    for _ in range(2):
        ps = [p - 0.1 * np.cos(p) for p in ps]
    return sum(np.sum(p**2) for p in ps)


def inputs_list_parameter_rebound_in_a_loop():
    r = np.random.default_rng(34)
    return r.normal(size=(3, 2)), r.normal(size=(4, 3))


PROGRAMS += ["list_parameter_rebound_in_a_loop"]


class _ChainLinear:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return x @ self.W


class _ChainTanh:
    def forward(self, x):
        return np.tanh(x)


class _Chain:
    """A Keras-like container given its layers one by one (``*layers``) and keeping ``list(layers)``."""

    def __init__(self, *layers, scale=1.0):
        self.layers = list(layers)
        self.scale = scale

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x * self.scale


def layers_given_one_by_one(W1, W2, X):
    net = _Chain(_ChainLinear(W1), _ChainTanh(), _ChainLinear(W2), scale=0.5)
    return np.sum(net.forward(X) ** 2)


def inputs_layers_given_one_by_one():
    r = np.random.default_rng(35)
    return r.normal(size=(3, 4)), r.normal(size=(4, 2)), r.normal(size=(5, 3))


PROGRAMS += ["layers_given_one_by_one"]


class _TanhBlock:
    def __init__(self, w):
        self.w = w

    def forward(self, z):
        return np.tanh(z * self.w)


class _TwoBlocks:
    """Its ``__init__`` fills a dict of layers item by item; two such models in one function, each loop
    over its layers written out in its own method."""

    def __init__(self, w):
        self.layers = {}
        self.layers["first"] = _TanhBlock(w)
        self.layers["second"] = _TanhBlock(w * 0.5)

    def forward(self, z):
        for layer in self.layers.values():
            z = layer.forward(z)
        return z


def two_models_of_one_class(w, x):
    encoder = _TwoBlocks(np.mean(w))
    decoder = _TwoBlocks(np.sum(w**2))
    return np.sum(decoder.forward(encoder.forward(x)) ** 2)


def inputs_two_models_of_one_class():
    r = np.random.default_rng(36)
    return r.normal(size=3), r.normal(size=(4, 2))


PROGRAMS += ["two_models_of_one_class"]


def flattened_copy_written(W, x):
    """``W.flatten()`` is a copy: writing into it leaves ``W`` as it was (``ravel`` may be a view)."""
    flat = W.flatten()
    flat[::2] = 0.0
    masked = flat.reshape(W.shape)
    return np.sum(np.tanh(x @ masked) ** 2) + np.sum(W**2)


def inputs_flattened_copy_written():
    r = np.random.default_rng(37)
    return r.normal(size=(3, 2)), r.normal(size=(4, 3))


PROGRAMS += ["flattened_copy_written"]


def convolution_over_an_ndindex_grid(K, x):
    """CS231n's naive convolution, its output positions from ``np.ndindex`` (one loop over the grid)."""
    kh, kw = K.shape
    out = np.zeros((x.shape[0] - kh + 1, x.shape[1] - kw + 1))
    for i, j in np.ndindex(out.shape):
        out[i, j] = np.sum(x[i : i + kh, j : j + kw] * K)
    return np.sum(np.tanh(out) ** 2)


def inputs_convolution_over_an_ndindex_grid():
    r = np.random.default_rng(38)
    return r.normal(size=(2, 2)), r.normal(size=(4, 5))


def weights_by_ndenumerate(W, scale):
    """An energy summed over ``np.ndenumerate``: each entry weighted by its position; the same sum as a
    comprehension over the grid of two extents written out."""
    total = 0.0
    for (i, j), w in np.ndenumerate(W):
        total += w**2 * (i + 1) * scale[j]
    ring = sum(W[i, j] * W[(i + 1) % 3, j] for i, j in np.ndindex(3, 2))
    return total + ring + sum(v * i for (i, j), v in np.ndenumerate(W))


def inputs_weights_by_ndenumerate():
    r = np.random.default_rng(39)
    return r.normal(size=(3, 2)), r.normal(size=2)


PROGRAMS += ["convolution_over_an_ndindex_grid", "weights_by_ndenumerate"]


def positions_of_ndindex_not_unpacked(W):
    """``for idx in np.ndindex(W.shape)``: the rank is not written (a located error that says to unpack)."""
    total = 0.0
    for idx in np.ndindex(W.shape):
        total += W[idx] ** 2
    return total


def bptt_over_reversed_steps(Wh, xs):
    """min-char-rnn's loss with its backward sweep: states kept by step in a dict (``hs[-1]`` the start),
    read again in ``for t in reversed(range(len(xs)))``; and in a list read one ahead.
    """
    hs = {}
    hs[-1] = np.zeros(3)
    for t in range(len(xs)):
        hs[t] = np.tanh(Wh @ hs[t - 1] + xs[t])
    total, dh_next = 0.0, np.zeros(3)
    for t in reversed(range(len(xs))):
        dh = hs[t] + dh_next
        dh_next = Wh.T @ ((1 - hs[t] ** 2) * dh)
        total += np.sum(dh**2) * (t + 1)
    states = [np.zeros(3)]
    for t in range(len(xs)):
        states.append(np.tanh(Wh @ states[-1] + xs[t]))
    for t in reversed(range(1, len(xs))):
        total += np.sum(states[t + 1] * states[t - 1])
    return total


def inputs_bptt_over_reversed_steps():
    r = np.random.default_rng(40)
    return r.normal(size=(3, 3)) * 0.5, r.normal(size=(4, 3))


PROGRAMS += ["bptt_over_reversed_steps"]


class _SigmoidCrossEntropy:
    def loss(self, y, p):
        return -(y * np.log(p) + (1 - y) * np.log(1 - p))


class _TanhOfAScratchNet:
    def fn(self, z):
        return np.tanh(z)


class _ScratchNet:
    """ML-From-Scratch's network: its loss given as a class (made in ``__init__``), its activation as an
    object."""

    def __init__(self, W, loss, act_fn):
        self.W = W
        self.loss_function = loss()
        self.act_fn = act_fn

    def test_on_batch(self, X, y):
        p = 0.5 * (self.act_fn.fn(X @ self.W) + 1)
        return np.mean(self.loss_function.loss(y, p))


def scratch_net_given_a_loss_class(W, X, y):
    net = _ScratchNet(W, loss=_SigmoidCrossEntropy, act_fn=_TanhOfAScratchNet())
    return net.test_on_batch(X, y)


def inputs_scratch_net_given_a_loss_class():
    r = np.random.default_rng(41)
    return (
        r.normal(size=(3, 2)) * 0.3,
        r.normal(size=(4, 3)),
        (r.random((4, 2)) > 0.5).astype(float),
    )


class _KwNeuron:
    def __init__(self, w, b, nonlin=True):
        self.w = w
        self.b = b
        self.nonlin = nonlin

    def __call__(self, x):
        act = np.dot(self.w, x) + self.b
        return np.tanh(act) if self.nonlin else act


class _KwLayer:
    """micrograd's layer: its keywords passed on to each neuron through ``**kwargs``."""

    def __init__(self, W, bs, **kwargs):
        self.neurons = [_KwNeuron(w, b, **kwargs) for w, b in zip(W, bs)]

    def __call__(self, x):
        return np.array([n(x) for n in self.neurons])


def micrograd_layers_with_kwargs(W, bs, x):
    hidden = _KwLayer(W, bs)(x)
    return np.sum(_KwLayer(W, bs, nonlin=False)(hidden) ** 2)


def inputs_micrograd_layers_with_kwargs():
    r = np.random.default_rng(42)
    return r.normal(size=(3, 3)), r.normal(size=3), r.normal(size=3)


PROGRAMS += ["scratch_net_given_a_loss_class", "micrograd_layers_with_kwargs"]


def displays_with_star_items(x, ws):
    """Shapes built from shapes and lists joined with ``*`` items: ``x.reshape(-1, *x.shape[2:])``,
    ``np.zeros((*shape, 2))``, ``np.stack([x0, *hs])``, ``for w in [*rest, first]``."""
    flat = x.reshape(-1, *x.shape[2:])
    first, *rest = ws
    h, hs = flat, []
    for w in [*rest, first]:
        h = np.tanh(h @ w)
        hs.append(h)
    grid = np.zeros((*h.shape, 2)) + h[..., None]
    stacked = np.stack([flat, *hs])
    return np.sum(stacked**2) + np.sum(np.reshape(grid, (-1, *grid.shape[2:])) ** 3)


def inputs_displays_with_star_items():
    r = np.random.default_rng(43)
    return r.normal(size=(2, 2, 3)), [r.normal(size=(3, 3)) for _ in range(2)]


PROGRAMS += ["displays_with_star_items"]


class _RegularizedDense:
    def __init__(self, w, l2=0.0):
        self.w = w
        self.l2 = l2

    def forward(self, x):
        self.out = x * self.w


def _l2_penalty_of(layer):
    return layer.l2 * np.sum(layer.w**2)


def layers_handed_to_a_penalty_helper(w, x):
    """nnfs's loss: layers updated by their ``forward``, then handed whole to a helper inside an
    expression (``data_loss + loss.regularization_loss(dense1)``)."""
    first = _RegularizedDense(w, l2=0.1)
    second = _RegularizedDense(w * 2.0, l2=0.3)
    first.forward(x)
    second.forward(np.tanh(first.out))
    return np.sum(second.out**2) + 2.0 * _l2_penalty_of(first) + _l2_penalty_of(second)


def inputs_layers_handed_to_a_penalty_helper():
    r = np.random.default_rng(44)
    return r.normal(size=3), r.normal(size=3)


PROGRAMS += ["layers_handed_to_a_penalty_helper"]


class _CachedMomentum:
    """numpy-ml's optimizer: its cache read through a local name (``C = self.cache``) and written so."""

    def __init__(self, lr, momentum):
        self.lr = lr
        self.momentum = momentum
        self.cache = {}

    def update(self, param, param_grad, param_name):
        C = self.cache
        if param_name not in C:
            C[param_name] = np.zeros_like(param_grad)
        update = self.momentum * C[param_name] + self.lr * param_grad
        C[param_name] = update
        return param - update


def momentum_steps_with_an_aliased_cache(lr, w, X, y):
    opt = _CachedMomentum(lr, 0.8)
    for _ in range(3):
        w = opt.update(w, 2 * X.T @ (X @ w - y) / len(y), "w")
    return np.mean((X @ w - y) ** 2)


def inputs_momentum_steps_with_an_aliased_cache():
    r = np.random.default_rng(45)
    return 0.1, r.normal(size=3) * 0.1, r.normal(size=(6, 3)), r.normal(size=6)


PROGRAMS += ["momentum_steps_with_an_aliased_cache"]


def _logistic_prime(z):
    s = 1.0 / (1.0 + np.exp(-z))
    return s * (1 - s)


def hand_backprop_norm(weights, biases, x, y):
    """Nielsen's ``network.py`` backprop: layers read from the end by the loop's index (``zs[-l]``,
    ``weights[-l + 1]``, ``activations[-l - 1]``), per-layer gradients written the same way
    (``nabla_b[-l] = delta``), then differentiated again through their norm."""
    nabla_b = [np.zeros(b.shape) for b in biases]
    nabla_w = [np.zeros(w.shape) for w in weights]
    activation = x
    activations = [x]
    zs = []
    for b, w in zip(biases, weights):
        z = np.dot(w, activation) + b
        zs.append(z)
        activation = 1.0 / (1.0 + np.exp(-z))
        activations.append(activation)
    delta = (activations[-1] - y) * _logistic_prime(zs[-1])
    nabla_b[-1] = delta
    nabla_w[-1] = np.dot(delta, activations[-2].transpose())
    for l in range(2, len(weights) + 1):
        delta = np.dot(weights[-l + 1].transpose(), delta) * _logistic_prime(zs[-l])
        nabla_b[-l] = delta
        nabla_w[-l] = np.dot(delta, activations[-l - 1].transpose())
    return sum(np.sum(nb**2) for nb in nabla_b) + sum(np.sum(nw**2) for nw in nabla_w)


def inputs_hand_backprop_norm():
    r = np.random.default_rng(45)
    sizes = [3, 4, 3, 2]
    weights = [r.normal(size=(4, 3)), r.normal(size=(3, 4)), r.normal(size=(2, 3))]
    biases = [r.normal(size=(m, 1)) for m in sizes[1:]]
    return weights, biases, r.normal(size=(3, 1)), r.normal(size=(2, 1))


PROGRAMS += ["hand_backprop_norm"]


def _by_width(w):
    return w.shape[0]


def layers_sorted_by_a_key(ws, x):
    """``sorted`` of Python values by a key (a function of yours, a local one, a dict's ``get``), decided
    when the code is traced: layers applied narrowest first, then weighted by their position.
    """

    def backwards(i):
        return -i

    order = sorted(range(len(ws)), key=backwards)
    total = sum(np.sum(ws[i] ** 2) * (k + 1) for k, i in enumerate(order))
    widths = {k: _by_width(w) for k, w in enumerate(ws)}
    for i in sorted(widths, key=widths.get):
        total = total + np.sum(np.tanh(x[: ws[i].shape[1]] @ ws[i].T)) * (i + 1)
    return total


def inputs_layers_sorted_by_a_key():
    r = np.random.default_rng(46)
    return [
        r.normal(size=(3, 2)),
        r.normal(size=(1, 3)),
        r.normal(size=(2, 2)),
    ], r.normal(size=3)


PROGRAMS += ["layers_sorted_by_a_key"]


class FluentAdaline:
    """Raschka's ``AdalineGD``: ``fit`` runs gradient descent on ``self.w_``, records ``self.cost_``, and
    ends ``return self`` (scikit-learn's fluent style)."""

    def __init__(self, eta=0.01, n_iter=4):
        self.eta = eta
        self.n_iter = n_iter

    def fit(self, X, y, w0):
        self.w_ = w0.copy()
        self.cost_ = []
        for _ in range(self.n_iter):
            errors = y - self.net_input(X)
            self.w_[1:] += self.eta * X.T.dot(errors)
            self.w_[0] += self.eta * errors.sum()
            self.cost_.append((errors**2).sum() / 2.0)
        return self

    def net_input(self, X):
        return np.dot(X, self.w_[1:]) + self.w_[0]


def fluent_fit_costs(w0, X, y):
    """``Est(...).fit(...)`` bound to a name, and ``m = m.fit(...)``: the object itself, updated."""
    ada = FluentAdaline(eta=0.01, n_iter=3).fit(X, y, w0)
    again = FluentAdaline(eta=0.02)
    again = again.fit(X, y, ada.w_)
    return ada.cost_[-1] + sum(again.cost_) + np.sum(again.net_input(X) ** 2) * 0.01


def inputs_fluent_fit_costs():
    r = np.random.default_rng(47)
    return r.normal(size=4), r.normal(size=(6, 3)), r.normal(size=6)


PROGRAMS += ["fluent_fit_costs"]


def library_layers_and_optimizer(W1, W2, x):
    """A layer class and an optimizer factory of another module (``layer_library``), whose code reads that
    module's own helpers and classes: written in place as the user's are."""
    opt = layer_library.plain_sgd(0.1)
    h = LibraryDense(W1, 0.1)(x)
    grads = [np.tanh(W1), np.tanh(W2)]
    steps, _ = opt.update(grads, opt.init([W1, W2]))
    return np.sum(LibraryDense(W2 + steps[1], 0.0)(h) ** 2) + np.sum(steps[0] ** 2)


def inputs_library_layers_and_optimizer():
    r = np.random.default_rng(48)
    return r.normal(size=(3, 4)), r.normal(size=(4, 2)), r.normal(size=(5, 3))


PROGRAMS += ["library_layers_and_optimizer"]
