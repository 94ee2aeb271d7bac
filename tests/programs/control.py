"""Programs with control flow and in-place writes, as users write them: the control-flow test table's inputs."""

import numpy as np


def branch_on_data(x):
    if x.sum() > 0:
        y = np.sin(x) * 2
    else:
        y = np.cos(x)
    return np.sum(y * x)


def elif_chain(x):
    s = np.sum(x)
    if s > 1.0:
        y = x * s
    elif s > -1.0:
        y = np.tanh(x)
    else:
        y = -x
    return np.sum(y**2)


def conditional_expression(x):
    y = np.exp(x) if x.mean() > 0 else np.exp(-x)
    return np.sum(y)


def boolean_predicate(x):
    y = x
    if x.sum() > 0 and not x.max() > 3.0:
        y = x * 3.0
    return np.sum(y * y)


def static_flag(x, squared=True):
    if squared:
        return np.sum(x * x)
    return np.sum(x)


def early_return(x):
    if np.max(x) > 2.0:
        return np.sum(x)
    y = np.tanh(x)
    return np.sum(y * y)


def rnn(W, h, xs):
    for x in xs:
        h = np.tanh(h @ W + x)
    return np.sum(h)


def indexed_loop(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sin(x[i] * w)
    return total


def enumerate_and_zip(x, y):
    acc = np.zeros(())
    for i, (a, b) in enumerate(zip(x, y)):
        acc = acc + (i + 1) * a * b
    return acc


def loop_with_break(x):
    h = x
    for i in range(8):
        h = np.sin(h) + 0.5 * h
        if np.sum(h) > 3.0:
            break
    return np.sum(h)


def loop_with_continue(x):
    acc = np.zeros_like(x)
    for row in np.reshape(x, (3, -1)):
        if row.sum() < 0:
            continue
        acc = acc + np.sum(row**2)
    return np.sum(acc * x)


def return_in_loop(x):
    h = x
    for i in range(6):
        h = h * 1.5
        if np.sum(h) > 5.0:
            return np.sum(np.sin(h))
    return np.sum(h)


def nested_loops(x):
    s = np.zeros(())
    for i in range(3):
        for j in range(2):
            s = s + np.sum(np.cos(x * (i + j)))
    return s


def loop_over_layers(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


def cond_in_loop(x):
    h = x
    for i in range(4):
        if np.sum(h) > 0:
            h = h * 0.5 - 0.3
        else:
            h = np.exp(h)
    return np.sum(h)


def element_writes(x):
    y = np.zeros(6)
    y[0] = x[0] * 2
    y[1:3] = np.sin(x[1:3])
    y[3] += x[3] ** 2
    y[y < 0.1] = 0.1
    return np.sum(y * x)


def write_in_loop(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * (i + 1)
    return np.sum(out**2)


def collected_outputs(W, xs):
    h = np.zeros(W.shape[0])
    hs = []
    for x in xs:
        h = np.tanh(W @ h + x)
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def while_loop(x):
    y = x
    while np.sum(y) < 10.0:
        y = y * 2.0
    return np.sum(y)


def while_with_weights(x, w):
    y = x
    k = 0
    while np.sum(y * y) < 10.0:
        y = np.sin(y) * w + y
        k = k + 1
    return np.sum(y) + k


def newton_sqrt(a):
    y = a
    n = 0
    while np.max(np.abs(y * y - a)) > 1e-12 and n < 60:
        y = 0.5 * (y + a / y)
        n = n + 1
    return np.sum(y)


def while_with_break(x):
    h = x
    n = 0
    while n < 10:
        h = np.tanh(h) + h
        if np.sum(h) > 4.0:
            break
        n = n + 1
    return np.sum(h * h)


def while_in_for(x, w):
    s = x * 0.0
    for i in range(3):
        y = x * (i + 1)
        while np.sum(y * y) < 20.0:
            y = y * w + 0.1
        s = s + np.tanh(y)
    return np.sum(s)


def for_in_while(x):
    h = x
    while np.sum(h) < 5.0:
        for i in range(2):
            h = np.sin(h) + h * 1.2 + 0.1
    return np.sum(np.cos(h))


def traced_range(x, n):
    for i in range(n):
        x = np.sin(x) * 1.1 + 0.1 * i
    return np.sum(x)


def _nest(x, n):
    if n == 0:
        return x
    return _nest(np.sin(x) * 1.5, n - 1)


def static_recursion(x):
    return np.sum(_nest(x, 3))


def loop_over_dict(params, x):
    h = x
    for name, (W, b) in params.items():
        h = np.tanh(h @ W + b)
    total = np.sum(h**2)
    for name in params.keys():
        total = total + 0.1 * np.sum(params[name][1])
    for W, b in params.values():
        total = total + 0.01 * np.sum(W * W)
    return total


def while_in_branch(x, w):
    if np.sum(x) > 0:
        y = x
        while np.sum(y * y) < 9.0:
            y = y * w + 0.2
    else:
        y = x * 2.0
    return np.sum(np.sin(y))


def _settle(y, w):
    while np.max(np.abs(y)) < 3.0:
        y = y * w + np.tanh(y)
    return y


def while_in_helper(x, w):
    return np.sum(_settle(x, w) ** 2)


def cond_in_while(x):
    y = x
    n = 0
    while n < 5:
        if np.sum(y) > 1.0:
            y = y * 0.5
        else:
            y = np.exp(y)
        n = n + 1
    return np.sum(y)


def loop_without_residuals(x):
    h = x
    for i in range(3):
        h = h * 0.5
    return np.sum(h)


def empty_loop(x):
    h = x
    for i in range(0):
        h = np.sin(h)
    return np.sum(h)


def two_returns_in_loop(x):
    h = x
    for i in range(4):
        h = h * 1.5
        if np.sum(h) > 3.0:
            return np.sum(h)
        if np.sum(h) < -3.0:
            return -np.sum(h)
    return np.sum(h * 2)


def enumerate_in_branch(x, y):
    h = x
    if np.sum(x) > 0:
        for i, row in enumerate(y):
            h = h + row * i
    return np.sum(h * h)


def enumerate_with_break(x, y):
    h = x
    for i, row in enumerate(y):
        if i > 5:
            break
        h = h + row * h[i]
    return np.sum(h)


def write_after_conditional_expression(x):
    t = x * 2.0 if np.sum(x) > 0 else x * 3.0
    t[0] = 1.0
    return np.sum(t * x)


def masked_augmented_write(x):
    out = np.sin(x)
    out[out > 0.3] += 2.0 * x[0]
    out[1:] *= 1.5
    return np.sum(out * x)


def counter_in_arithmetic(x, y):
    v = x * 1.0
    for i, row in enumerate(y):
        n = 0
        while np.mean(row) > -0.35 and n < 2:
            n = n + 1
            if np.min(v) < 0.15:
                break
            v = 0.9 * v + np.cos(0.5 * i + 0.25) * row
    return np.sum(v * 3.0)


def return_in_empty_loop(x):
    for i in range(0):
        if np.min(x) > -0.9:
            return np.sum(x * 2.0)
    return np.sum(np.sin(x))


# --- lists collected by `append` in a loop, read after it (tests/test_control_regressions.py) ---------


def collected_array_reads(h0, x, w):
    hs = []
    h = h0
    for i in range(3):
        h = np.tanh(h * x + 0.1 * i)
        hs.append(h)
    t = (
        np.sum(np.stack(hs) * w)
        + np.sum(np.stack(hs, axis=1) * w.T)
        + np.sum(np.array(hs) ** 2)
    )
    t = (
        t
        + np.sum(np.concatenate(hs) * w.ravel())
        + np.sum(np.vstack(hs) * w)
        + np.sum(np.hstack(hs))
    )
    t = t + np.sum(hs) + np.sum(np.mean(hs, axis=0) * w[0]) + np.sum(np.tanh(hs) * w)
    t = (
        t
        + np.sum(hs[-1] * w[0])
        + np.sum(hs[0]) * len(hs)
        + np.sum(np.stack(hs[::-1]) * w)
        + np.sum(np.stack(hs[1:]))
    )
    for k, g in enumerate(hs):
        t = t * 0.5 + np.sum(g * w[k])
    a, b, c = hs
    return t + np.sum(a * b - c)


def collected_list_operations(h0, x, w):
    hs = []
    h = h0
    for i in range(3):
        h = np.tanh(h * x + 0.1 * i)
        hs.append(h)
    first = [h0, h0 * 2.0]
    allh = [h0] + hs + [x] + first  # 7 items
    both = hs + hs[::-1]
    more = list(hs)
    more.append(x * 3.0)
    copied = hs.copy()
    copied[1] = h0 * 0.5
    copied += [w[0]]
    t = np.sum(np.stack(allh) * np.concatenate([w, w, w])[:7]) + np.sum(
        np.stack(both) * np.concatenate([w, w])
    )
    t = (
        t
        + np.sum(np.stack(more) ** 2)
        + np.sum(np.stack(copied) * np.concatenate([w, w])[:4])
        + len(allh)
    )
    for g in [] + hs + [x]:
        t = t * 0.5 + np.sum(g * g)
    return t


def collected_in_branches(h0, x, w):
    hs = []
    h = h0
    for i in range(3):
        h = np.tanh(h * x + 0.1 * i)
        hs.append(h)
    if np.sum(x) > 0:
        gs = [h0] + hs
        t = np.sum(np.stack(hs) * w)
    else:
        gs = hs + [h0]
        t = np.sum(np.stack(hs[::-1]) * w)
    return t + np.sum(np.stack(gs[1:]) * w)


def collected_in_nested_loops(h0, x, w):
    outs = []
    for j in range(2):
        hs = []
        h = h0
        for i in range(3):
            h = np.sin(h * x + i * j)
            hs.append(h)
        outs.append(np.stack([x] + hs))
    return np.sum(np.stack(outs) ** 2) + np.sum(outs[-1][1:] * w)


def collected_returned(h0, x, w):
    hs = []
    h = h0
    for i in range(3):
        h = np.tanh(h * x + 0.1 * i)
        hs.append(h)
    return np.sum(hs[0] * w[0]), [h0] + hs, {"hs": hs}


def rows_with_the_previous_row(X, W):
    """Karpathy's LSTM loop: rows written in place, the previous row or the start picked by a test on the
    step, a slice bounded by a shape's sum, and the loop variable read after the loop.
    """
    n, k = X.shape
    d = W.shape[1]
    Hin = np.zeros((n, k + d + 1))
    H = np.zeros((n, d))
    for t in range(n):
        prev = H[t - 1] if t > 0 else np.ones(d)
        Hin[t, 0] = 1
        Hin[t, 1 : k + 1] = X[t]
        Hin[t, k + 1 :] = prev
        H[t] = np.tanh(Hin[t].dot(W))
    return np.sum(H**2) + np.sum(H[t] * X[t, 0])
