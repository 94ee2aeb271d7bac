"""Loops whose carry starts as a Python number and becomes an array, or whose first steps run before the
body reads traced values: compiled with their first steps on their own (``runtime/peeling.py``).
"""

import jax.numpy as jnp


def running_sum(xs):
    """``total = 0`` then ``total = total + x`` over rows: the carry is a number, then a row."""
    total = 0
    for x in xs:
        total = total + jnp.tanh(x)
    return jnp.sum(total / xs.shape[0])


def clenshaw(x, c):
    """Clenshaw's recurrence from ``0.0``: ``b2`` lags ``b1``, so the carry settles after two steps."""
    b1 = b2 = 0.0
    for k in range(c.shape[0] - 1, 0, -1):
        b1, b2 = 2 * x * b1 - b2 + c[k], b1
    return jnp.sum(x * b1 - b2 + c[0])


def reversed_decay(xs, w):
    """A reversed loop whose carry starts as a number: its last steps run first, on their own."""
    acc = 0.0
    for x in reversed(list(xs)):
        acc = 0.5 * acc + jnp.sin(x * w)
    return jnp.sum(acc**2)


def bisect(c):
    """Bisection whose bounds start as Python floats: the first test is known when traced, then the body
    reads ``c`` and the loop compiles from its second step."""
    lo, hi = -2.0, 2.0
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        if jnp.tanh(mid) * c < 0.3:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi) * c


def collected_before_update(xs):
    """The carry collected before each update: the first item a number, the others rows."""
    total = 0.0
    seen = []
    for x in xs:
        seen.append(total)
        total = total + x
    return jnp.sum(total) + sum(jnp.sum(s) for s in seen)


def _quadratic(z, a):
    return jnp.sum(a * (z[1:] - z[:-1] ** 2) ** 2 + (1 - z[:-1]) ** 2)


def backtracking_descent(z0, a):
    """Gradient steps with a backtracking (Armijo) line search: a ``while True`` whose step starts as a
    Python float, inside a compiled ``for`` (its tape kept per step of the outer loop).
    """
    z = z0
    for _ in range(3):
        g = 2.0 * (z - 0.5) * a
        t = 1.0
        f0 = _quadratic(z, a)
        while True:
            if _quadratic(z - t * g, a) <= f0 - 0.3 * t * jnp.dot(g, g):
                break
            t = 0.5 * t
        z = z - t * g
    return _quadratic(z, a)


def shrinking_lattice(sigma):
    """A trinomial tree's backward induction (h30): the carry loses two entries every step, so every step
    runs on its own; a branch on the step's parity gives the steps residuals of different structures
    (their outputs were lost: an internal unpacking error in the backward loop)."""
    u = jnp.exp(sigma)
    n = 3
    V = jnp.maximum(1.0 - u ** jnp.arange(-n, n + 1), 0.0)
    for step in range(n - 1, -1, -1):
        V = 0.3 * V[2:] + 0.4 * V[1:-1] + 0.3 * V[:-2]
        if step % 2 == 0:
            V = jnp.maximum(V, 1.0 - u ** jnp.arange(-step, step + 1))
    return V[0]


def binomial_backward_induction(s, n=6):
    """A binomial tree's backward induction over more steps than run on their own: the carry shrinks
    at every step, which no compiled loop carries (a located error under XLA, NumPy's loop on NumPy).
    """
    V = jnp.ones(n + 1)
    for i in range(n - 1, -1, -1):
        V = V[:-1] * s + 1.0
    return V[0]


def clenshaw_upward(x, c):
    """The recurrence over ``c``'s items in order, read by a ``range`` loop's index (zipped with the
    items, ``indexed_loops``) and by ``zip`` itself: the steps run on their own give each item's
    cotangent in step order."""
    b1 = b2 = 0.0
    for k in range(1, c.shape[0]):
        b1, b2 = 2 * x * b1 - b2 + c[k] * k, b1
    d1 = 0.0
    for k, ck in zip(range(c.shape[0]), c):
        d1 = d1 * x + ck * (k + 1)
    return jnp.sum(x * b1 - b2 + c[0] + d1)
