"""``rt.cond`` / ``rt.scan`` / ``rt.while_loop``: the same results eagerly on NumPy, on JAX, and under jax.jit,
checked against plain Python loops; under jit the loop stays one ``scan``/``while`` in the jaxpr.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from s2s import runtime as rt

jax.config.update("jax_enable_x64", True)

XS = np.arange(12.0).reshape(4, 3)
INIT = {"total": np.zeros(3), "count": 0.0}


def step(carry, x):
    total = carry["total"] + x
    return {"total": total, "count": carry["count"] + 1.0}, (total * x, x.sum())


def python_scan(carry, xs, reverse=False):
    ys = []
    for i in reversed(range(len(xs))) if reverse else range(len(xs)):
        carry, y = step(carry, xs[i])
        ys.append(y)
    ys = ys[::-1] if reverse else ys
    return carry, (np.stack([y[0] for y in ys]), np.stack([y[1] for y in ys]))


def assert_trees_close(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(x, y)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("backend", ["numpy", "jax", "jit"])
def test_scan(backend, reverse):
    want = python_scan(INIT, XS, reverse)
    if backend == "numpy":
        got = rt.scan(step, INIT, XS, reverse=reverse)
    elif backend == "jax":
        got = rt.scan(
            step,
            jax.tree_util.tree_map(jnp.asarray, INIT),
            jnp.asarray(XS),
            reverse=reverse,
        )
    else:
        got = jax.jit(lambda init, xs: rt.scan(step, init, xs, reverse=reverse))(
            INIT, XS
        )
    assert_trees_close(got, want)


def branches(pred, a, b):
    return rt.cond(pred, lambda a, b: (a * b, a + b), lambda a, b: (a - b, a / b), a, b)


@pytest.mark.parametrize("flag", [True, False])
def test_cond(flag):
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    want = (a * b, a + b) if flag else (a - b, a / b)
    # a Python bool stays a Python branch
    assert_trees_close(branches(flag, a, b), want)
    assert_trees_close(branches(np.bool_(flag), a, b), want)
    assert_trees_close(jax.jit(branches)(flag, a, b), want)


def test_while_loop():
    def body(c):
        return c[0] + 1, c[1] * 1.5

    want = (7, np.ones(2) * 1.5**7)
    assert_trees_close(rt.while_loop(lambda c: c[0] < 7, body, (0, np.ones(2))), want)
    assert_trees_close(
        jax.jit(lambda v: rt.while_loop(lambda c: c[0] < 7, body, (0, v)))(np.ones(2)),
        want,
    )


def test_loops_stay_rolled_under_jit():
    def loops(jaxpr):
        return [
            e.primitive.name
            for e in jaxpr.eqns
            if e.primitive.name in ("scan", "while")
        ]

    jaxpr = jax.make_jaxpr(
        lambda xs: rt.scan(lambda c, x: (c + x, c * x), jnp.zeros(3), xs)
    )(jnp.ones((1000, 3)))
    # the loop, and at most its initial carry
    assert loops(jaxpr) == ["scan"] and len(jaxpr.eqns) <= 2
    jaxpr = jax.make_jaxpr(
        lambda v: rt.while_loop(
            lambda c: c[0] < c[1].sum(), lambda c: (c[0] + 1, c[1]), (0, v)
        )
    )(jnp.ones(3))
    assert loops(jaxpr) == ["while"]
