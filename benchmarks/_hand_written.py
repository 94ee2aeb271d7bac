"""Careful hand-written gradients of the examples' losses: what a person would check in.

Each is the NumPy a practitioner writes with the calculus done by hand: the
forward values the backward pass needs, then the cotangents, fused into as few
expressions as stay readable. ``benchmarks/generated_size.py`` compares each
with s2s's generated module, line for line, after checking they compute the
same gradient.
"""

import numpy as np

EPS = 1e-5  # the examples' own


def mlp_loss_grad(params, x, y):
    (W1, b1), (W2, b2), (W3, b3) = params
    h1 = np.tanh(x @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    logits = h2 @ W3 + b3
    e = np.exp(logits - np.max(logits, axis=-1, keepdims=True))
    softmax = e / np.sum(e, axis=-1, keepdims=True)
    d_logits = (softmax * np.sum(y, axis=-1, keepdims=True) - y) / x.shape[0]
    d_a2 = (d_logits @ W3.T) * (1 - h2**2)
    d_a1 = (d_a2 @ W2.T) * (1 - h1**2)
    return [
        (x.T @ d_a1, np.sum(d_a1, axis=0)),
        (h1.T @ d_a2, np.sum(d_a2, axis=0)),
        (h2.T @ d_logits, np.sum(d_logits, axis=0)),
    ]


def logistic_loss_grad(w, b, x, y, l2=0.01):
    dz = (1 / (1 + np.exp(-(x @ w + b))) - y) / x.shape[0]
    return x.T @ dz + 2 * l2 * w, np.sum(dz)


def layernorm_loss_grad(params, x, y):
    gamma, beta, W = params
    inv_std = 1 / np.sqrt(np.var(x, axis=-1, keepdims=True) + EPS)
    normed = (x - np.mean(x, axis=-1, keepdims=True)) * inv_std
    h = gamma * normed + beta
    d_err = 2 * (h @ W - y) / y.size
    d_h = d_err @ W.T
    return np.sum(d_h * normed, axis=0), np.sum(d_h, axis=0), h.T @ d_err


def attention_loss_grad(params, x, y):
    q, k, v = x @ params["Wq"], x @ params["Wk"], x @ params["Wv"]
    scale = 1 / np.sqrt(x.shape[-1])
    e = np.exp(q @ k.T * scale - np.max(q @ k.T * scale, axis=-1, keepdims=True))
    weights = e / np.sum(e, axis=-1, keepdims=True)
    h = x + weights @ v
    centered = h - np.mean(h, axis=-1, keepdims=True)
    inv_std = 1 / np.sqrt(np.mean(centered**2, axis=-1, keepdims=True) + EPS)
    normed = centered * inv_std
    d_out = 2 * (params["gamma"] * normed + params["beta"] - y) / y.size
    d_n = d_out * params["gamma"]
    d_h = inv_std * (
        d_n
        - np.mean(d_n, axis=-1, keepdims=True)
        - normed * np.mean(d_n * normed, axis=-1, keepdims=True)
    )
    d_w = d_h @ v.T
    d_scores = weights * (d_w - np.sum(d_w * weights, axis=-1, keepdims=True)) * scale
    return {
        "Wq": x.T @ (d_scores @ k),
        "Wk": x.T @ (d_scores.T @ q),
        "Wv": x.T @ (weights.T @ d_h),
        "gamma": np.sum(d_out * normed, axis=0),
        "beta": np.sum(d_out, axis=0),
    }


def polynomial_f_grad(x):
    return 1 + 2 * x + 3 * x * x
