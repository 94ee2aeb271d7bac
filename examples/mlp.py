"""A three-layer tanh MLP classifier with a softmax cross-entropy loss.

``params`` is a list of ``(W, b)`` pairs, one per layer; ``y`` holds one-hot
labels. Run ``python examples/mlp.py`` to print the gradient module that s2s
writes for ``loss`` and the gradient it computes.
"""

import numpy as np


def forward(params, x):
    """The MLP's logits for a batch ``x``."""
    (W1, b1), (W2, b2), (W3, b3) = params
    h1 = np.tanh(x @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    return h2 @ W3 + b3


def loss(params, x, y):
    """Mean softmax cross-entropy of the MLP's logits against one-hot ``y``."""
    logits = forward(params, x)
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    return -np.mean(np.sum(y * log_probs, axis=-1))


def loss_and_accuracy(params, x, y):
    """The same loss, plus the accuracy as an auxiliary output (for ``has_aux=True``)."""
    accuracy = np.mean(np.argmax(forward(params, x), axis=-1) == np.argmax(y, axis=-1))
    return loss(params, x, y), accuracy


def init(rng, sizes, dtype=np.float32):
    """Parameters for layer widths ``sizes`` (input first): a list of ``(W, b)``."""
    return [
        (
            (rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype),
            np.zeros(n, dtype),
        )
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def data(rng, batch, n_in, n_classes, dtype=np.float32):
    """A random batch: inputs ``x`` and one-hot labels ``y``."""
    x = rng.standard_normal((batch, n_in)).astype(dtype)
    y = np.eye(n_classes, dtype=dtype)[rng.integers(0, n_classes, batch)]
    return x, y


if __name__ == "__main__":
    import s2s

    rng = np.random.default_rng(0)
    params = init(rng, [8, 16, 16, 4])
    x, y = data(rng, 5, 8, 4)
    loss_grad = s2s.grad(loss)
    print(loss_grad.source)
    for i, (dW, db) in enumerate(loss_grad(params, x, y), start=1):
        print(
            f"layer {i}: |dW| = {np.linalg.norm(dW):.6f}  |db| = {np.linalg.norm(db):.6f}"
        )
