"""Calls with ``*sequence`` and ``**mapping`` arguments, as people write them (issue 13).

Each ``name`` has ``inputs_name()``; the test differentiates with respect to
the first input. Helpers are module-level functions, as in the NumPy model
zoo and JAX tutorials: a ``batch`` tuple spread into a loss, layers spread
into ``*layers``, settings spread into keyword parameters.
"""

import numpy as np


def _dense(x, w, b=None):
    out = x @ w
    if b is not None:
        out = out + b
    return np.tanh(out)


def _mlp(x, *layers):
    for W in layers:
        x = np.tanh(x @ W)
    return x


def _head_then_rest(x, first, *rest, scale=1.0):
    x = np.tanh(x @ first) * scale
    for W in rest:
        x = x @ W
    return x


def _scaled(x, w, *, scale=1.0, shift=0.0):
    return (x @ w) * scale + shift


def _mse(w, inputs, targets):
    return np.mean((np.tanh(inputs @ w) - targets) ** 2)


def _inputs(seed=0, n=3):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(3, 3)) for _ in range(n)], rng.normal(size=(4, 3))


def batch_tuple_spread(params, x):
    """``loss(params, *batch)``: the JAX tutorials' batch of inputs and targets."""
    batch = (x, np.sin(x))
    return _mse(params[0], *batch)


def layers_spread_into_star_parameter(params, x):
    """``mlp(x, *params)`` into ``def mlp(x, *layers)``, the list's length known only when the code runs."""
    return np.sum(_mlp(x, *params) ** 2)


def layers_spread_after_a_named_parameter(params, x):
    """The first item binds ``first``, the others ``*rest``; a keyword after the ``*``."""
    return np.sum(_head_then_rest(x, *params, scale=0.5))


def positional_items_before_the_spread(params, x):
    """``mlp(x, first, *rest)`` into ``def mlp(x, *layers)``: the items before the ``*`` lead ``layers``."""
    first, *rest = params
    return np.sum(_mlp(x, first, *rest) ** 2) + np.sum(
        _mlp(x, params[1], params[0], *rest)
    )


def shorter_sequence_leaves_the_default(params, x):
    """``dense(x, *params[:1])``: ``b`` keeps its default ``None``."""
    return np.sum(_dense(x, *params[:1]))


def exact_pair(params, x):
    """A tuple whose length matches the parameters, the bias one of its items."""
    pair = (params[0], params[1][0])
    return np.sum(_dense(x, *pair))


def settings_spread_into_keywords(params, x):
    """``scaled(x, w, **settings)`` into keyword-only parameters, one entry a parameter."""
    settings = {"scale": 2.0, "shift": params[1][0, 0]}
    return np.sum(_scaled(x, params[0], **settings))


def partial_settings_keep_defaults(params, x):
    settings = {"shift": 1.0}
    return np.sum(_scaled(x, params[0], **settings) ** 2)


def star_and_double_star(params, x):
    """``*`` gives ``w``, ``**`` gives ``b``."""
    extra = {"b": params[1][0]}
    return np.sum(_dense(x, *params[:1], **extra))


def spread_in_a_local_function(params, x):
    """A local function spreading what it closes over."""

    def body(z):
        return _mlp(z, *params[1:])

    return np.sum(body(x @ params[0]))


def spread_of_a_computed_list(params, x):
    """The ``*`` of an expression is computed once."""
    return np.sum(_mlp(x, *[2.0 * W for W in params]))


def _quadrature(f, a, b, args=()):
    """scipy's style: ``f(x, *args)`` for a function passed in, its extra arguments a tuple."""
    t = a + (b - a) * np.linspace(0.0, 1.0, 5)
    return (b - a) * np.mean(f(t, *args))


def spread_into_a_lambda_passed_in(params, x):
    """``f(t, *args)`` where ``f`` is a lambda: the tuple's items bound to its parameters."""
    w = np.sum(params[0])
    return _quadrature(lambda t, k, c: np.exp(-k * t) * c, 0.0, 1.0, args=(w, x[0, 0]))


def spread_into_a_local_function_with_a_default(params, x):
    """A local ``def`` whose default the short tuple leaves to it."""
    w = np.sum(params[1] ** 2)

    def density(t, k, power=2.0):
        return t**power * np.exp(-k * t)

    return _quadrature(density, 0.0, np.tanh(w) + 1.5, args=(w,))


OPTIONS = {"axis": 0, "keepdims": True}
SHAPE_ARGS = (3, 3)


def constant_settings_spread_into_an_op(params, x):
    """``**OPTIONS`` of a module dict into a NumPy function, ``*SHAPE_ARGS`` of a module tuple."""
    return np.sum(np.sum(params[0] * x[:3], **OPTIONS) ** 2) + np.sum(
        np.reshape(params[1], SHAPE_ARGS) * np.ones(SHAPE_ARGS[0])
    )


def _elementwise(fun, **fun_kwargs):
    """stax's combinator: the keyword settings closed over and spread into the op."""
    return lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)


_LEAKY = _elementwise(np.clip, a_min=-0.5, a_max=0.5)


def closed_over_settings_spread_into_an_op(params, x):
    return np.sum(_LEAKY((), x @ params[0]) ** 2)


def _layer(w, x, **kwargs):
    return np.tanh(x @ w) * kwargs.get("gain", 1.0)


def _serial_apply(params, x, **kwargs):
    """stax's ``serial``: a keyword taken out first, the others passed on to every layer."""
    scale = kwargs.pop("scale", 1.0)
    for w in params:
        x = _layer(w, x, **kwargs)
    return scale * x


def keyword_popped_before_passing_on(params, x):
    plain = np.sum(_serial_apply(params, x))
    return plain + np.sum(_serial_apply(params, x, scale=0.5, gain=2.0))


def _inputs_lists():
    return _inputs()


PROGRAMS = [
    "batch_tuple_spread",
    "layers_spread_into_star_parameter",
    "layers_spread_after_a_named_parameter",
    "positional_items_before_the_spread",
    "shorter_sequence_leaves_the_default",
    "exact_pair",
    "settings_spread_into_keywords",
    "partial_settings_keep_defaults",
    "star_and_double_star",
    "spread_in_a_local_function",
    "spread_of_a_computed_list",
    "spread_into_a_lambda_passed_in",
    "spread_into_a_local_function_with_a_default",
    "constant_settings_spread_into_an_op",
    "closed_over_settings_spread_into_an_op",
    "keyword_popped_before_passing_on",
]
for _name in PROGRAMS:
    globals()[f"inputs_{_name}"] = _inputs_lists


def too_many_items(params, x):
    """Python's ``TypeError``: ``dense`` takes at most two items after ``x``."""
    return np.sum(_dense(x, *params))


def unexpected_setting(params, x):
    settings = {"scale": 2.0, "offset": 1.0}
    return np.sum(_scaled(x, params[0], **settings))


def twice_given(params, x):
    """``w`` from the ``*`` and by keyword."""
    return np.sum(_dense(x, *params[:1], w=params[1]))


def too_many_items_for_a_lambda(params, x):
    """Python's ``TypeError``: the lambda takes one item after ``t``."""
    return _quadrature(lambda t, k: k * t, 0.0, 1.0, args=(params[0][0, 0], 2.0))


def settings_into_double_star(x, settings):
    return np.sum(_kwargs_sink(x, **settings))


def _kwargs_sink(x, **options):
    return x * options.get("scale", 1.0)


def spread_into_an_op(x, shape):
    return np.sum(np.zeros(*shape) + x)


def _needs_a_key(x, **kwargs):
    key = kwargs.pop("key")
    return x * key


def popped_without_a_default(x, shape):
    return np.sum(_needs_a_key(x))


def _popped_twice(x, **kwargs):
    first = kwargs.pop("scale", 1.0)
    second = kwargs.pop("scale", 2.0)  # Python: the default, the key is gone
    return x * first * second


def popped_twice(x, shape):
    return np.sum(_popped_twice(x, scale=3.0))
