"""Per-example code written the way users write it (JAX docs, NumPy model zoos, optax/scipy-like
library code), for ``s2s.vmap`` and ``s2s.vmap(s2s.grad(...))``: checked against a Python loop
over examples in ``tests/test_vmap_users.py``.

Plain NumPy, one example at a time: Python ``if``/``while``/``for``/``break`` on per-example
values, in-place writes, gathers with per-example indices, helpers calling helpers, tuples and
dicts of parameters and results.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

# --- small helpers, the way a model file has them -----------------------------------------


def relu(z):
    return np.maximum(z, 0.0)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def logsumexp(z):
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def dense(x, w, b):
    return x @ w + b


# --- models and per-example losses --------------------------------------------------------


def mlp_predict(params, x):
    h = relu(dense(x, params["w1"], params["b1"]))
    return dense(h, params["w2"], params["b2"])


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    pred = h @ w2 + b2
    return 0.5 * np.sum((pred - y) ** 2)


def logistic_loss(w, b, x, y):
    # y in {-1, +1}
    z = np.dot(x, w) + b
    return np.log1p(np.exp(-y * z))


def softmax_xent(W, x, label):
    logits = x @ W
    return logsumexp(logits) - logits[label]


def huber(pred, target, delta=1.0):
    r = pred - target
    if np.abs(r) <= delta:
        return 0.5 * r**2
    else:
        return delta * (np.abs(r) - 0.5 * delta)


def huber_where(pred, target, delta=1.0):
    r = np.abs(pred - target)
    return np.sum(np.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta)))


def hinge_loss(w, x, y, lam=0.01):
    margin = y * np.dot(w, x)
    return np.maximum(0.0, 1.0 - margin) + lam * np.sum(w**2)


def attention(q, k, v):
    d = q.shape[-1]
    scores = q @ k.T / np.sqrt(d)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v


def attention_loss(wq, x):
    q = x @ wq
    out = attention(q, x, x)
    return np.mean(out**2)


def causal_attention(q, k):
    s = q @ k.T
    mask = np.tril(np.ones((q.shape[0], k.shape[0]), dtype=bool))
    s = np.where(mask, s, -1e9)
    s = s - np.max(s, axis=1, keepdims=True)
    p = np.exp(s)
    return p / np.sum(p, axis=1, keepdims=True)


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def layer_norm_loss(gamma, beta, x):
    weights = np.linspace(0.0, 1.0, x.shape[-1])
    return np.sum(layer_norm(x, gamma, beta) ** 2 * weights)


def rnn_states(params, xs):
    wx, wh, b = params
    h = np.zeros(wh.shape[0])
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ wx + h @ wh + b)
        hs.append(h)
    return np.stack(hs)


def gru_cell(h, x, p):
    z = sigmoid(x @ p["wz"] + h @ p["uz"])
    r = sigmoid(x @ p["wr"] + h @ p["ur"])
    hh = np.tanh(x @ p["wh"] + (r * h) @ p["uh"])
    return (1.0 - z) * h + z * hh


def gru_loss(p, xs, target):
    h = np.zeros(p["uz"].shape[0])
    for x in xs:
        h = gru_cell(h, x, p)
    return np.sum((h - target) ** 2)


def mlp_apply(layers, x):
    for w, b in layers[:-1]:
        x = relu(dense(x, w, b))
    w, b = layers[-1]
    return dense(x, w, b)


def mlp_xent(layers, x, label):
    logits = mlp_apply(layers, x)
    return logsumexp(logits) - logits[label]


def onehot_xent(logits, label):
    y = np.eye(logits.shape[0])[label]
    logp = logits - logsumexp(logits)
    return -np.sum(y * logp)


def clipped_mse(pred, y):
    return np.mean(np.clip(pred - y, -1.0, 1.0) ** 2)


# --- signal processing, polynomials ---------------------------------------------------------


def conv_valid(x, kernel):
    return np.convolve(x, kernel, mode="valid")


def conv_slices(x, w):
    k = w.shape[0]
    out = np.zeros(x.shape[0] - k + 1)
    for i in range(out.shape[0]):
        out[i] = np.dot(x[i : i + k], w)
    return out


def conv_loss(w, x):
    return np.sum(conv_slices(x, w) ** 2)


def horner(coeffs, x):
    result = 0.0
    for c in coeffs:
        result = result * x + c
    return result


def ema(x, alpha=0.3):
    out = np.empty_like(x)
    s = x[0]
    for t in range(x.shape[0]):
        s = alpha * x[t] + (1 - alpha) * s
        out[t] = s
    return out


def poly_features(x, degree=3):
    return np.stack([x**d for d in range(degree + 1)], axis=-1)


# --- iterations whose trip count depends on the example -------------------------------------


def newton_cuberoot(a):
    x = np.maximum(a, 1.0)
    it = 0
    while np.abs(x**3 - a) > 1e-5 * np.maximum(a, 1.0) and it < 50:
        x = x - (x**3 - a) / (3.0 * x**2)
        it += 1
    return x


def bisect_sqrt(c, tol=1e-5):
    lo, hi = 0.0, max(c, 1.0)
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        if mid * mid > c:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def gd_early_stop(a, b, lr=0.3):
    # minimize 0.5 * a * x**2 - b * x from 0; stop once the gradient is small
    x = 0.0
    steps = 0
    for i in range(200):
        g = a * x - b
        if np.abs(g) < 1e-3:
            break
        x = x - lr * g
        steps += 1
    return x, steps


def power_iteration(A):
    n = A.shape[0]
    v = np.ones(n) / np.sqrt(n)
    lam = 0.0
    diff = 1.0
    it = 0
    while diff > 1e-5 * lam and it < 200:
        w = A @ v
        new = np.linalg.norm(w)
        v = w / new
        diff = np.abs(new - lam)
        lam = new
        it += 1
    return lam


def fixed_point_cos(x):
    for i in range(100):
        nxt = np.cos(x)
        if np.abs(nxt - x) < 1e-5:
            break
        x = nxt
    return x


# --- per-example branches -------------------------------------------------------------------


def piecewise(x):
    if x < -1.0:
        y = -2.0 * x
    elif x < 1.0:
        y = x**2 + 1.0
    else:
        y = np.log(x) + 2.0
    return y


def clip_by_norm(g, max_norm=1.0):
    n = np.linalg.norm(g)
    if n > max_norm:
        g = g * (max_norm / n)
    return g


def clipped_step_loss(w, x):
    step = clip_by_norm(x * w)
    return np.sum((w - step) ** 2)


def safe_log(x):
    if x > 0:
        return np.log(x)
    return -30.0


def sign_scale(x):
    if float(np.sum(x)) > 0.0:
        return x
    return -x


def positive_sum(x):
    total = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            total += x[i]
    return total


def running_best(x):
    best = x[0]
    where = 0
    for i in range(1, x.shape[0]):
        if x[i] > best:
            best = x[i]
            where = i
    return best, where


# --- in-place writes --------------------------------------------------------------------------


def set_ends(x):
    y = x.copy()
    y[0] = 0.0
    y[-1] = 2.0 * y[-1]
    return y


def zero_negatives(x):
    y = np.array(x)
    y[y < 0] = 0.0
    return y


def bump_first_column(m):
    m = m.copy()
    m[:, 0] += 1.0
    m[1] *= 2.0
    return m


# --- gathers with per-example indices -------------------------------------------------------


def embed_bag(table, idx):
    return table[idx].sum(axis=0)


def peak(x):
    i = np.argmax(x)
    return x[i] - x[np.argmin(x)], i


def sort_by_key(keys, values):
    order = np.argsort(keys)
    return values[order]


def around_peak(x):
    i = int(np.argmax(x))
    return x[max(i - 1, 0)] + x[i]


def window(x, start):
    return x[start : start + 3]


# --- elementwise, scans, sorting ------------------------------------------------------------


def leaky_relu(x, slope=0.01):
    return np.where(x > 0, x, slope * x)


def cumsum_normalize(x):
    c = np.cumsum(np.abs(x))
    return c / c[-1]


def top_k(x, k=2):
    s = np.sort(x)[::-1]
    return s[:k]


def trimmed_mean(x):
    s = np.sort(x)
    return np.mean(s[1:-1])


# --- linear algebra -------------------------------------------------------------------------


def norms(x):
    total = np.linalg.norm(x)
    rows = np.linalg.norm(x, axis=1, keepdims=True)
    return x / rows, total


def solve_ridge(A, b, lam=0.1):
    n = A.shape[1]
    return np.linalg.solve(A.T @ A + lam * np.eye(n), A.T @ b)


def ridge_loss(A, b):
    return np.sum(solve_ridge(A, b) ** 2)


def mahalanobis(x, mu, cov):
    d = x - mu
    return d @ np.linalg.inv(cov) @ d


def standardize(x):
    mu = x.mean(axis=0, keepdims=True)
    sd = x.std(axis=0, keepdims=True) + 1e-6
    return (x - mu) / sd


def patches(img):
    # (4, 6) image -> 6 patches of 2x2, summed
    p = img.reshape(2, 2, 3, 2).transpose(0, 2, 1, 3).reshape(6, 4)
    return p.sum(axis=1)


def bilinear(x, W, y):
    return np.einsum("i,ij,j->", x, W, y)


def heads(x, wq):
    # x: (T, d), wq: (H, d, k) -> (H, T, k)
    return np.einsum("td,hdk->htk", x, wq)


def outer_update(m, u, v, lr=0.5):
    return m + lr * np.outer(u, v)


# --- structured arguments and results -------------------------------------------------------


def summarize(x):
    return {"mean": np.mean(x), "max": np.max(x), "centered": x - np.mean(x)}


def moments(x):
    mu = np.mean(x, axis=0)
    return mu, x - mu


def scale_shift(x, *, scale, shift=0.0):
    return x * scale + shift


def affine_dict(params, x):
    return np.tanh(x @ params["w"] + params["b"])


def with_shared(w, x):
    return w.sum() * 2.0, x @ w


# --- more patterns: scatters at per-example indices, early return, duplicates -----------------


def count_tokens(idx, vocab=5):
    counts = np.zeros(vocab)
    counts[idx] += 1.0  # NumPy: a repeated index is counted once
    return counts


def count_tokens_add_at(idx, vocab=5):
    counts = np.zeros(vocab)
    np.add.at(counts, idx, 1.0)
    return counts


def zero_at(x, i):
    y = x.copy()
    y[i] = 0.0
    return y


def suppress_peak(x):
    y = x.copy()
    y[np.argmax(y)] = -1.0
    return y


def first_above(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return i
    return -1


def newton_history(a):
    hist = np.zeros(8)
    x = np.maximum(a, 1.0)
    k = 0
    while np.abs(x * x - a) > 1e-4 * a and k < 8:
        hist[k] = x
        x = 0.5 * (x + a / x)
        k += 1
    return x, hist


def any_negative(x):
    if np.any(x < 0):
        return x - np.min(x)
    return x


def both_conditions(x):
    s = x.sum()
    if s > 0 and x.max() < 1.5:
        return s
    elif s > 0:
        return 2.0 * s
    return -s


def pairs(points):
    total = 0.0
    for i, p in enumerate(points):
        x, y = p
        total = total + (i + 1) * x * y
    return total


def _dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if mode == "train":
        return x * ((dropout_param["u"] < p) / p)
    return x


def options_dict_mapped(w, u):
    """cs231n's dropout, its uniforms in the dict of options: mapped over ``u``, the dict's number gets the
    batch axis and its string stays."""
    return np.sum(_dropout_forward(w, {"mode": "train", "p": 0.75, "u": u}) ** 2)


def enumerated_pairs(centers, contexts):
    """word2vec's ``enumerate(zip(...))``: a sequence of sequences, each made step-major once."""
    total = 0.0
    for i, (c, o) in enumerate(zip(centers, contexts)):
        total = total + (i + 1) * np.sum(np.tanh(c) * o)
    for (j, c), o in zip(enumerate(reversed(centers), 1), contexts):
        total = total + j * np.sum(c * o)
    return total


def nll_take_along(logits, labels):
    logp = logits - logits.max(axis=1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))
    return -np.take_along_axis(logp, labels[:, None], axis=1).mean()


def fraction_positive(x):
    return np.mean(x > 0), (x > 0).astype(np.float32) * x


def roll_shared(x, k):
    return np.roll(x, k) - x


def det_and_chol(A):
    L = np.linalg.cholesky(A)
    return np.linalg.det(A), L


def reversed_tail(x):
    return x[::-1][:3] + x[-3:]


def int_div_index(x):
    n = x.shape[0]
    mid = n // 2
    return x[mid] + x[n % 3]


def outer_newaxis(u, v):
    return u[:, None] * v[None, :] + u[:, np.newaxis]


def zip_loop(xs, ys):
    acc = 0.0
    for a, b in zip(xs, ys):
        acc = acc + a * b
    return acc


def decay_while(x, rate):
    steps = 0
    while np.sum(x**2) > 0.1:
        x = x * rate
        steps += 1
    return x, steps


def dict_loss(params, x):
    return np.sum(affine_dict(params, x) ** 2)


def outer_update_loss(m, u, v):
    return np.sum(outer_update(m, u, v) ** 2)


def unpack_point(p):
    x, y = p
    return np.hypot(x, y) + 0.5 * x


def seq_len(tokens):
    return len(tokens)


def n_rows(m):
    return m.shape[0]


def positive_mean(x):
    """A mean over a data-dependent selection (each example selects its own number of elements)."""
    return np.mean(x[x > 0])


def selection_sum_over_its_length(x):
    sel = x[x > 0]
    return np.sum(sel) / len(sel)


def masked_mse(pred, y):
    """The README's NaN-masked loss: observed entries only."""
    obs = ~np.isnan(y)
    return np.mean((pred[obs] - y[obs]) ** 2)


def selection_escapes(x):
    sel = x[x > 0]
    return np.sum(sel) + sel[0]


def halve_until_small(q):
    """``lax.while_loop`` with a per-example test and a shared integer counter in its carry."""

    def cond(c):
        x, it = c
        return (jnp.abs(x) > 1e-3) & (it < 50)

    def body(c):
        x, it = c
        return x * 0.5, it + 1

    x, steps = lax.while_loop(cond, body, (q, 0))
    return x * steps


def path_score(trans, y):
    """A CRF's gold-path score: an unbatched table read at per-example labels, collected by a loop."""
    score = sum(trans[y[t - 1], y[t]] for t in range(1, y.shape[0]))
    picked = []
    for t in range(y.shape[0]):
        picked.append(trans[y[t], 0])
    return score + np.sum(np.stack(picked) ** 2)


def _average(total, count):
    return total / count


def mse_through_a_helper(w, X, y):
    """A shape read inline as a helper's argument, and in an index: one example's, not the batch's."""
    r = X @ w - y
    return _average(np.sum(r**2), r.shape[0]) + r[r.shape[0] - 1]


def grow_past_ten(c, y):
    """A ``while`` loop that reads nothing per example (its gradient's forward loop is shared), then a loss
    that does."""
    u = c
    while u < 10.0:
        u = u * 1.5 + c
    return (u - y) ** 2


def newton_cube_root(a, b):
    """``lax.while_loop`` Newton iterations with a Python int counter beside per-example values."""

    def cond(s):
        x, i = s
        return jnp.logical_and(jnp.abs(x**3 + a * x - b) > 1e-10, i < 50)

    def body(s):
        x, i = s
        return x - (x**3 + a * x - b) / (3 * x**2 + a), i + 1

    x, _ = lax.while_loop(cond, body, (jnp.ones_like(b), 0))
    return x**2


def cut_points(theta, gaps):
    """A list of a per-example entry and numbers (``np.pi`` too) inside ``hstack`` and ``concatenate``."""
    cut = np.cumsum(np.concatenate([[theta[0]], np.exp(gaps)]))
    both = np.hstack(([theta[1], 0.5, np.pi], gaps))
    return np.sum(np.tanh(cut)) + np.sum(both**2)


def weighted_squares(w, x, sample_weight=None):
    """scikit-learn's optional weights: ``if sample_weight is not None`` on a per-example argument."""
    d = (x - w) ** 2
    if sample_weight is not None:
        d = d * sample_weight
    return np.sum(d)


def positional_encoding_loss(w, x, n_freqs=2):
    """NeRF's positional encoding: a list that starts with the input and grows by ``+=`` in a loop."""
    feats = [x]
    for k in range(n_freqs):
        feats += [np.sin(2.0**k * np.pi * x), np.cos(2.0**k * np.pi * x)]
    return np.sum(np.concatenate(feats, axis=-1) * w)


def softmax_scores_written_at_labels(W, X, y):
    """cs231n's ``d[np.arange(N), y] -= 1``: an in-place write at (row, per-example label) pairs."""
    scores = X @ W
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    N = X.shape[0]
    d = p.copy()
    d[np.arange(N), y] -= 1
    return np.sum(d**2) - np.sum(np.log(p[np.arange(N), y]))


def tuple_key(x):
    """``x[(0, 1)]`` is ``x[0, 1]``: one index per axis, never one fancy index."""
    return x[(0, 1)] * 2.0 + x[-1, 0]


def guarded_objective(theta, y):
    """scipy's guard: a number returned early where the other return differs per example (``y``)."""
    if theta[1] <= 0:
        return 1e10
    return np.sum((y - theta[0]) ** 2) / theta[1] ** 2


def _combined(a, /, b, c=2.0, *, d, e=-0.3):
    return np.tanh(a) + 0.5 * b + np.tanh(c) + d * np.sin(a) + np.tanh(e)


def spread_keywords(x):
    """A helper called with a dict of keywords spread (``**{...}``), some numbers, one per example."""
    return np.sum(_combined(np.exp(np.tanh(x)), **{"d": np.cos(x), "e": 1.5, "b": 0.3}))


def _spread_args(x, *args):
    a, b = args if args else (1.0, 2.0)
    if not args:
        b = b * 0.5
    return np.sum(b * x**2 + a * np.tanh(x))


def tuple_truth(x, a):
    """A tuple's truth (scipy's optional ``args``) is the same for every example."""
    return _spread_args(x, a, 0.5) + _spread_args(x * 2.0)


def bracket_or_raise(u, scale):
    """A ``for ... else: raise`` whose message formats a per-example value (g42)."""
    lo, hi = -1.0, 1.0
    for _ in range(10):
        if np.tanh(lo * scale) < u < np.tanh(hi * scale):
            break
        lo, hi = 2 * lo, 2 * hi
    else:
        raise ValueError(f"could not bracket u={u}")
    return (lo + 0.5 * hi) * scale**2


def char_rnn_states_by_step(w, xs):
    """Karpathy's min-char-rnn: hidden states in a dict keyed by step (``hs[-1]`` the previous state), the
    last one read as ``hs[len(inputs) - 1]``, a key known when the code is traced."""
    hs = {}
    hs[-1] = np.zeros(2)
    loss = 0.0
    for t in range(len(xs)):
        hs[t] = np.tanh(w * xs[t] + hs[t - 1])
        loss += np.sum(hs[t])
    return loss + np.sum(hs[len(xs) - 1])


def lagged_correlations(w, lags):
    """A series compared with itself shifted by a lag per example (``np.roll`` with the mapped shift), flat
    and along an axis."""
    flat = np.sum(np.roll(w, lags) * w)
    rows = np.roll(np.outer(w, w[:2]), lags, axis=0)
    return flat + np.sum(rows * np.arange(1.0, 3.0))


def t_lagged_correlations(w, lags):
    flat = jnp.sum(jnp.roll(w, lags) * w)
    rows = jnp.roll(jnp.outer(w, w[:2]), lags, axis=0)
    return flat + jnp.sum(rows * jnp.arange(1.0, 3.0))


def repeated_per_example(x, k):
    """``np.repeat`` with counts that differ per example: each example's result its own length."""
    return np.sum(np.repeat(x, k))


def _hamiltonian(p, W, q):
    return jnp.dot(p, W @ q)


def force_penalty(W, xs, p, q):
    """A Hamiltonian network's force (``jax.grad`` of a helper reducing by ``jnp.dot``) penalised, mapped
    over data the force does not read: the inner gradient's cotangent for ``W`` has no batched operand.
    """
    force = jax.grad(_hamiltonian, argnums=2)(p, W, q)
    return jnp.mean(xs) + jnp.sum(force**2)


def _logsumexp_along(a, axis=None):
    """The helper people write: ``axis`` a parameter, ``None`` (every axis) by default."""
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def _spread(a, axis=None):
    return np.std(a, axis=axis) + np.var(a, axis=axis) + np.linalg.norm(a, axis=axis)


def reductions_along_a_parameter_axis(W, x, label):
    """Reductions whose ``axis`` comes from a helper's parameter (``None`` by default, or given):
    per example, ``None`` names each example's own axes."""
    logits = x @ W
    rows = _logsumexp_along(np.tanh(W), axis=1)
    return (
        _logsumexp_along(logits)
        - logits[label]
        + np.sum(rows)
        + _spread(logits)
        + np.prod(np.cos(logits), axis=None)
        + np.mean(_spread(np.outer(x, logits), axis=0))
    )


def accepts_unbatched_input(W, x):
    """The library idiom: a single input is given a leading axis, and the result loses it again; the flag
    is set under a test of the shape, the same for every example (one bool, not one per example).
    """
    squeeze = False
    if x.ndim == 1:
        x = x[None]
        squeeze = True
    out = np.tanh(x @ W)
    return out[0] if squeeze else out


def layers_until_a_width(ws, x):
    """A loop over layers of different widths that stops at the first output of width 4: a ``break``
    under a test of the shape, taken at the same step for every example."""
    for w in ws:
        x = np.tanh(x @ w)
        if x.shape[-1] == 4:
            break
    return np.sum(x**2)
