"""Lists of layer objects made in the function (``frontend/object_lists``): numpy-ml and NNFS styles."""

from typing import NamedTuple

import numpy as np


class Dense:
    def __init__(self, W, b, activation=None):
        self.W = W
        self.b = b
        self.activation = activation

    def __call__(self, x):
        z = x @ self.W + self.b
        if self.activation == "relu":
            return np.maximum(z, 0)
        elif self.activation == "tanh":
            return np.tanh(z)
        return z

    def l2(self):
        return np.sum(self.W**2)

    @property
    def width(self):
        return self.W.shape[1]


class MLP:
    def __init__(self, params, activations):
        self.layers = [Dense(W, b, act) for (W, b), act in zip(params, activations)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def regularization(self):
        return sum(layer.l2() for layer in self.layers)


def mlp_loss(params, X, y, weight_decay=1e-3):
    """A network object holding a list of layer objects, called in turn, regularized by a generator."""
    model = MLP(params, ["relu", "tanh", None])
    pred = model(X)[:, 0]
    return np.mean((pred - y) ** 2) + weight_decay * model.regularization()


class Affine(NamedTuple):
    W: np.ndarray
    b: np.ndarray
    scale: float = 1.0

    def apply(self, x):
        return np.tanh(x @ self.W + self.b) * self.scale


def records_loss(params, X, y):
    """A display of records of one class (``NamedTuple``s with a method), read by index-free loops."""
    (W1, b1), (W2, b2), (W3, b3) = params
    layers = [Affine(W1, b1), Affine(W2, b2, 0.5), Affine(W3, b3)]
    widths = 0
    for layer in layers:
        X = layer.apply(X)
        widths = widths + layer.W.shape[1]
    return np.mean((X[:, 0] - y) ** 2) / widths + 0.01 * len(layers)


def passed_on(params, X, y):
    """The list handed whole to a helper: not a list of tuples s2s can write (its located error)."""
    layers = [Dense(W, b, "tanh") for W, b in params]
    return np.sum(_forward_all(layers, X))


def _forward_all(layers, X):
    for layer in layers:
        X = layer(X)
    return X


class Tutorial:
    def __init__(self, params):
        self.layers = [Dense(W, b) for W, b in params]

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = np.tanh(layer(x))
        return self.layers[-1](x)


def sliced_layers_loss(params, X, y):
    """A tutorial's MLP: the hidden layers by a slice of the list, the output layer by its index; items
    read by index (an attribute, a property, a method) and a loop over ``reversed`` of a slice.
    """
    model = Tutorial(params)
    pred = model.forward(X)[:, 0]
    decay = sum(layer.l2() for layer in reversed(model.layers[1:]))
    first = np.sum(model.layers[0].W ** 2) / model.layers[-1].width
    return np.mean((pred - y) ** 2) + 1e-3 * decay + 0.01 * first


def inputs():
    r = np.random.default_rng(0)
    params = [
        (0.6 * r.normal(size=(3, 5)), 0.1 * r.normal(size=5)),
        (0.6 * r.normal(size=(5, 4)), np.zeros(4)),
        (0.6 * r.normal(size=(4, 1)), np.zeros(1)),
    ]
    X = r.normal(size=(6, 3))
    return params, X, np.sin(X[:, 0])


def updated_in_the_loop(params, X, y):
    """An attribute of each object changed in the loop: the objects in the list change (NumPy), which
    tuples read out of it would not: the located error, never a stale value."""
    layers = [Dense(W, b, "tanh") for W, b in params]
    for layer in layers:
        layer.W = layer.W * 0.5
    for layer in layers:
        X = layer(X)
    return np.sum(X)


class _Scaled:
    def __init__(self, scale):
        self.scale = scale


class ScaledLayer(_Scaled):
    """A layer whose ``__init__`` calls its base's first (``super().__init__(scale)``)."""

    def __init__(self, W, scale=1.0):
        super().__init__(scale)
        self.W = W

    def __call__(self, x):
        return np.tanh(x @ self.W) * self.scale


def base_init_in_a_list(params, X, y):
    layers = [ScaledLayer(W, s) for (W, _), s in zip(params, (1.0, 0.5, 2.0))]
    for layer in layers:
        X = layer(X)
    return np.mean((X[:, 0] - y) ** 2)
