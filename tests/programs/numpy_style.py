"""Objectives written the way public NumPy example programs write them (issue 13).

Each ``<name>`` has an ``inputs_<name>()`` giving float64 arguments; the first
argument is differentiated. ``tests/test_numpy_style.py`` checks s2s's gradient
on both backends against central differences of the function itself.
"""

import numpy as np

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
