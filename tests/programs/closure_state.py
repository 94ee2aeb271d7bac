"""Local functions that change their enclosing function's lists and names, as people write them
(issue 13: ``frontend/closure_state.py``).

Each ``name`` has ``inputs_name()``; the tests differentiate with respect to the first input.
"""

import numpy as np


def activations_collected_by_a_layer(params, x):
    outs = []

    def layer(W, h):
        h = np.tanh(h @ W)
        outs.append(h)
        return h

    h = x
    for W in params:
        h = layer(W, h)
    return sum(np.sum(o**2) for o in outs) + np.sum(h)


def per_step_losses_in_a_compiled_loop(W, xs):
    losses = []

    def step(x):
        losses.append(np.sum(np.tanh(x @ W) ** 2))

    for x in xs:
        step(x)
    return np.mean(np.stack(losses))


def rnn_states_recorded_by_a_cell(W, xs):
    states = []

    def cell(h, x):
        h = np.tanh(h @ W + x)
        states.append(h)
        return h

    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = cell(h, xs[t])
    return np.sum(np.array(states) ** 2)


def a_counter_and_a_total_declared_nonlocal(w, xs):
    total = 0.0
    count = 0

    def add(x):
        nonlocal total, count
        total = total + np.sum(np.sin(x * w))
        count += 1

    for x in xs:
        add(x)
    add(xs[0] * 2)
    return total / count


def appends_under_a_condition(params, x):
    kept = []

    def maybe_keep(h, keep):
        if keep:
            kept.append(np.sum(h**2))
        return np.tanh(h)

    h = x
    for i, W in enumerate(params):
        h = maybe_keep(h @ W, i % 2 == 0)
    return sum(kept) + np.sum(h)


def a_call_inside_an_expression(w, x):
    terms = []

    def term(k):
        v = np.sum(np.cos(k * w * x))
        terms.append(v)
        return v

    y = term(1.0) * 2.0 + term(2.0)
    return y + np.sum(np.stack(terms))


def siblings_and_a_nested_helper(w, x):
    log = []

    def record(v):
        log.append(v)

    def block(h):
        def inner(z):
            record(np.sum(z**2))
            return np.tanh(z)

        h = inner(h * w)
        record(np.sum(h))
        return h

    h = block(x)
    h = block(h)
    return sum(log) * np.sum(h)


def extend_with_several_items(params, x):
    feats = []

    def features(h):
        feats.extend([np.sum(h), np.sum(h**2)])

    for W in params:
        x = np.tanh(x @ W)
        features(x)
    return np.sum(np.stack(feats))


def a_list_read_inside_the_helper(w, xs):
    hs = [np.zeros(w.shape[0])]

    def step(x):
        hs.append(np.tanh(hs[-1] * w + x))

    for i in range(3):
        step(xs[i])
    return np.sum(hs[-1] ** 2) + np.sum(hs[1])


def defaults_read_where_the_function_is_made(w, xs):
    scale = 3.0
    scaled = lambda z, s=scale: s * z
    scale = 100.0  # the lambda keeps 3.0
    total = np.sum(scaled(w))
    for k in range(3):

        def term(x, k=k, gain=w * scale):
            return np.sum(np.tanh(x * gain) * k)

        total = total + term(xs[k])
    return total


def _inputs_layers(seed=0):
    r = np.random.default_rng(seed)
    return [r.normal(size=(3, 3)) * 0.5 for _ in range(3)], r.normal(size=(2, 3))


def _inputs_matrix_and_rows(seed=1):
    r = np.random.default_rng(seed)
    return r.normal(size=(3, 3)) * 0.5, r.normal(size=(4, 3))


def _inputs_vector_and_rows(seed=2):
    r = np.random.default_rng(seed)
    return r.normal(size=3), r.normal(size=(4, 3))


PROGRAMS = {
    "activations_collected_by_a_layer": _inputs_layers,
    "per_step_losses_in_a_compiled_loop": _inputs_matrix_and_rows,
    "rnn_states_recorded_by_a_cell": _inputs_matrix_and_rows,
    "a_counter_and_a_total_declared_nonlocal": _inputs_vector_and_rows,
    "appends_under_a_condition": _inputs_layers,
    "a_call_inside_an_expression": _inputs_vector_and_rows,
    "siblings_and_a_nested_helper": _inputs_vector_and_rows,
    "extend_with_several_items": _inputs_layers,
    "defaults_read_where_the_function_is_made": _inputs_vector_and_rows,
}
for _name, _inputs in PROGRAMS.items():
    globals()[f"inputs_{_name}"] = _inputs
PROGRAMS = list(PROGRAMS)
# numpy backend only: under XLA the list grows in a compiled loop, a located error
inputs_a_list_read_inside_the_helper = _inputs_vector_and_rows


# --- what stays a located error --------------------------------------------------------------


def passed_as_a_value(w, xs):
    seen = []

    def keep(x):
        seen.append(np.sum(x * w))
        return x

    handler = keep
    y = handler(xs[0])
    return np.sum(np.stack(seen)) + np.sum(y)


def read_on_the_same_line(w, x):
    acc = []

    def push(v):
        acc.append(v)
        return v

    return push(np.sum(w * x)) + len(acc)


def in_a_conditional_expression(w, x):
    acc = []

    def push(v):
        acc.append(v)
        return v

    y = push(np.sum(w)) if np.sum(x) > 0 else 0.0
    return y + sum(acc)


def one_line_helpers(x):
    """Local functions written on one line, one of them appending to the enclosing list."""
    acts = []

    def double(y): return 2.0 * y  # fmt: skip

    def keep(y): acts.append(np.sum(np.tanh(y)))  # fmt: skip

    keep(double(x))
    keep(x**2)
    return sum(acts) + np.sum(double(x) ** 2)


def inputs_one_line_helpers():
    return (np.random.default_rng(9).normal(size=4),)


PROGRAMS += ["one_line_helpers"]
