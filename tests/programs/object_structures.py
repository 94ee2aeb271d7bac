"""Networks held as containers of layer objects of different classes, as NumPy textbooks and libraries
write them (``frontend/object_structures``): "Deep Learning from Scratch"'s ``TwoLayerNet`` (an
``OrderedDict`` of layers that keep state on ``self``), numpy-ml's ``Sequential`` made by a helper, a
dict of named blocks, layers appended in a loop over a display, and one class appended per parameter.
"""

from collections import OrderedDict

import numpy as np


def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)


def cross_entropy_error(y, t):
    if y.ndim == 1:
        t = t.reshape(1, t.size)
        y = y.reshape(1, y.size)
    batch_size = y.shape[0]
    return -np.sum(t * np.log(y + 1e-7)) / batch_size


class Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b
        self.x = None

    def forward(self, x):
        self.x = x
        return np.dot(x, self.W) + self.b


class Relu:
    def __init__(self):
        self.mask = None

    def forward(self, x):
        self.mask = x <= 0
        out = x.copy()
        out[self.mask] = 0
        return out


class SoftmaxWithLoss:
    def __init__(self):
        self.loss = None
        self.y = None

    def forward(self, x, t):
        self.y = softmax(x)
        self.loss = cross_entropy_error(self.y, t)
        return self.loss


class TwoLayerNet:
    def __init__(self, params, weight_decay_lambda=0.01):
        self.params = params
        self.weight_decay_lambda = weight_decay_lambda
        self.layers = OrderedDict()
        self.layers["Affine1"] = Affine(self.params["W1"], self.params["b1"])
        self.layers["Relu1"] = Relu()
        self.layers["Affine2"] = Affine(self.params["W2"], self.params["b2"])
        self.lastLayer = SoftmaxWithLoss()

    def predict(self, x):
        for layer in self.layers.values():
            x = layer.forward(x)
        return x

    def loss(self, x, t):
        y = self.predict(x)
        weight_decay = 0
        for idx in range(1, 3):
            W = self.params["W" + str(idx)]
            weight_decay += 0.5 * self.weight_decay_lambda * np.sum(W**2)
        return self.lastLayer.forward(y, t) + weight_decay


def two_layer_net_loss(params, x, t):
    net = TwoLayerNet(params)
    return net.loss(x, t)


class Dense:
    def __init__(self, W, b):
        self.params = {"W": W, "b": b}

    def forward(self, X):
        return X @ self.params["W"] + self.params["b"]


class Tanh:
    def forward(self, X):
        return np.tanh(X)


class Softplus:
    def forward(self, X):
        return np.logaddexp(0.0, X)


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, X):
        out = X
        for layer in self.layers:
            out = layer.forward(out)
        return out


def build(params):
    return Sequential(
        [
            Dense(params["W1"], params["b1"]),
            Tanh(),
            Dense(params["W2"], params["b2"]),
            Softplus(),
        ]
    )


def sequential_loss(params, x, t):
    model = build(params)
    return np.mean((model.forward(x) - t) ** 2)


def named_blocks_loss(params, x, t):
    blocks = {"encoder": Dense(params["W1"], params["b1"]), "squash": Tanh()}
    blocks["decoder"] = Dense(params["W2"], params["b2"])
    h = x
    for name, block in blocks.items():
        h = block.forward(h)
        if name == "squash":
            h = h * 0.5
    penalty = sum(
        np.sum(b.params["W"] ** 2) for b in (blocks["encoder"], blocks["decoder"])
    )
    return np.mean((h - t) ** 2) + 1e-3 * penalty / len(blocks)


def appended_layers_loss(params, x, t):
    layers = []
    for k in (1, 2):
        layers.append(Dense(params[f"W{k}"], params[f"b{k}"]))
        layers.append(Tanh())
    out = x
    for i, layer in enumerate(layers):
        out = layer.forward(out)
    return np.mean((out - t) ** 2) + 0.01 * i


def per_parameter_layers_loss(weights, x, t):
    """One ``Dense`` per ``(W, b)`` pair, however many: the list of one class ``object_lists`` reads."""
    layers = []
    for W, b in weights:
        layers.append(Dense(W, b))
    h = x
    for layer in layers:
        h = np.tanh(layer.forward(h))
    return np.mean((h - t) ** 2)


def passed_on_whole(params, x, t):
    """The container handed to a function whole: no names can stand for it (a located error)."""
    layers = [Dense(params["W1"], params["b1"]), Tanh()]
    return np.mean((_run(layers, x) - t) ** 2)


def _run(layers, x):
    for layer in layers:
        x = layer.forward(x)
    return x


def two_classes_per_parameter(weights, x, t):
    """Layers of two classes appended per parameter: how many is known only when it runs (a located
    error)."""
    layers = []
    for W, b in weights:
        layers.append(Affine(W, b))
        layers.append(Relu())
    h = x
    for layer in layers:
        h = layer.forward(h)
    return np.mean((h - t) ** 2)


def inputs():
    rng = np.random.default_rng(7)
    params = {
        "W1": 0.5 * rng.normal(size=(4, 5)),
        "b1": 0.3 + 0.1 * rng.normal(size=5),
        "W2": 0.5 * rng.normal(size=(5, 3)),
        "b2": 0.1 * rng.normal(size=3),
    }
    x = rng.normal(size=(6, 4))
    t = np.eye(3)[rng.integers(0, 3, size=6)]
    return params, x, t


def loop_variable_read_after(weights, x, t):
    """The appending loop's variable read after it (its last value): no comprehension can stand for the
    loop (a located error, never another ``W``)."""
    layers = []
    for W, b in weights:
        layers.append(Dense(W, b))
    h = x
    for layer in layers:
        h = np.tanh(layer.forward(h))
    return np.mean((h - t) ** 2) + 0.01 * np.sum(W)


def appended_by_a_local_function(params, x, t):
    """The list first named by a local ``def`` that appends to it (NNFS's ``model.add(layer)``)."""
    layers = []

    def add(layer):
        layers.append(layer)

    add(Dense(params["W1"], params["b1"]))
    add(Tanh())
    h = x
    for layer in layers:
        h = layer.forward(h)
    return np.mean((h - t[:, :1]) ** 2)
