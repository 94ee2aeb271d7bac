"""Item writes into lists and dicts the function made: every transformation, and the writes NumPy would see.

``c[k] = v`` into a list or dict built in the function is a new container
with one item replaced (``rt.index_set``). Oracles: central differences of the
NumPy function for the gradient, the gradient along a tangent for ``jvp``, a
loop of gradients for ``vmap(grad)``, differences of the gradient for the
Hessian; ``vmap`` against a loop of the function. A module's settings (a dict of
numbers and strings) are read as constants, and read again when they change;
writing into them is a located error. Dict comprehensions (with
``if`` clauses too) fill a dict so. A write another name would see (the same
list held twice, an item updated in place, the caller's dict) is a located
error.
"""

import jax
import numpy as np
import pytest

import s2s
from tests.programs import container_writes as P

jax.config.update("jax_enable_x64", True)

BACKENDS = ("numpy", "xla")
W = np.random.default_rng(0).normal(size=(2, 4))
T = np.random.default_rng(1).normal(size=4)


def _numeric_grad(f, w, eps=1e-6):
    return np.array(
        [(f(w + eps * e) - f(w - eps * e)) / (2 * eps) for e in np.eye(w.size)]
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", P.VALID)
def test_every_transformation_of_item_writes(name, backend):
    f = getattr(P, name)
    w = W[0]
    grad = s2s.grad(f, backend=backend)
    g = np.asarray(grad(w))
    np.testing.assert_allclose(g, _numeric_grad(f, w), rtol=1e-6, atol=1e-8)
    value, tangent = s2s.jvp(f, (w,), (T,), backend=backend)
    np.testing.assert_allclose(value, f(w), rtol=1e-12)
    np.testing.assert_allclose(tangent, g @ T, rtol=1e-10)
    np.testing.assert_allclose(
        s2s.vmap(f, backend=backend)(W), [f(w) for w in W], rtol=1e-12
    )
    per_example = s2s.vmap(grad, backend=backend)(W)
    np.testing.assert_allclose(per_example, [grad(w) for w in W], rtol=1e-10)
    hessian = s2s.hessian(f, backend=backend)(w)
    numpy_grad = s2s.grad(f, backend="numpy")
    np.testing.assert_allclose(
        hessian, _numeric_grad(numpy_grad, w), rtol=1e-5, atol=1e-7
    )


@pytest.mark.parametrize(
    "name, message",
    [
        ("written_through_another_name", "the same container as `held`"),
        ("item_updated_in_place", "may be the caller's `w`"),
        ("argument_dict_written", "may be the caller's `params`"),
        ("writes_settings", "write into `SETTINGS`, which the module holds"),
    ],
)
def test_a_write_another_name_would_see_is_a_located_error(name, message):
    f = getattr(P, name)
    arg = {"a": W[0]} if name == "argument_dict_written" else W[0]
    with pytest.raises(s2s.S2SError, match=message) as info:
        s2s.grad(f)(arg)
    assert info.value.origin.path == P.__file__


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_settings_changed_in_place_are_read_again(backend, monkeypatch):
    """Settings are baked into the generated code and watched by value: an in-place change regenerates it."""
    grad = s2s.grad(P.reads_settings, backend=backend)
    w = W[0]
    before = np.asarray(grad(w))
    monkeypatch.setitem(P.SETTINGS, "scale", 3.0)
    after = np.asarray(grad(w))
    np.testing.assert_allclose(after, _numeric_grad(P.reads_settings, w), rtol=1e-6)
    assert not np.allclose(before, after)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_arrays_changed_in_place_are_read_again(backend):
    """``MU[:] = X.mean(0)`` between calls (a scaler refit between epochs), an object's array attribute and
    a closure's array changed in place: XLA compiled the values they held, so the module is stale and
    made again (it kept the first values: a silent wrong gradient)."""
    f = P.reads_module_arrays_changed_in_place
    grad, value = s2s.grad(f, backend=backend), s2s.transform(f, backend=backend)
    batched = s2s.vmap(f, backend=backend)
    w = W[0]
    saved = [a.copy() for a in (P.MU, P.SCALER.scale, P.CENTER)]
    try:
        for changed, new in (
            (P.MU, [1.0, 2.0, 0.0, -1.0]),
            (P.SCALER.scale, 0.5),
            (P.CENTER, 0.3),
        ):
            grad(w), value(w), batched(W)
            changed[:] = new
            np.testing.assert_allclose(
                np.asarray(grad(w)), _numeric_grad(f, w), rtol=1e-6
            )
            np.testing.assert_allclose(value(w), f(w), rtol=1e-12)
            np.testing.assert_allclose(batched(W), [f(x) for x in W], rtol=1e-12)
    finally:
        for a, old in zip((P.MU, P.SCALER.scale, P.CENTER), saved):
            a[:] = old


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_containers_of_arrays_are_values_read_again_when_changed(
    backend, monkeypatch
):
    """``TABLEAU = {"a": np.array(...)}`` and ``BASIS = [np.eye(4), ...]`` are module values (as an array
    is); an entry rebound or an item appended regenerates the code."""
    f = P.reads_arrays_in_module_containers
    grad = s2s.grad(f, backend=backend)
    w = W[0]
    np.testing.assert_allclose(np.asarray(grad(w)), _numeric_grad(f, w), rtol=1e-6)
    monkeypatch.setitem(P.TABLEAU, "a", np.array([5.0, 0.0, 1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(grad(w)), _numeric_grad(f, w), rtol=1e-6)
    monkeypatch.setattr(P, "BASIS", [*P.BASIS, -np.eye(4)])
    np.testing.assert_allclose(np.asarray(grad(w)), _numeric_grad(f, w), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_helpers_dict_of_new_arrays_shares_nothing(backend):
    """``g = grads(p, X, y)`` returning ``{"w": X.T @ r}``, then ``p[k] -= lr * g[k]`` into copies: accepted
    (it was refused as "may be the caller's `X`"); a helper's dict holding ``X`` itself stays refused.
    """
    rng = np.random.default_rng(1)
    params, X, y = {"w": rng.normal(size=2)}, rng.normal(size=(4, 2)), np.ones(4)
    f = P.sgd_step_on_copies
    got = s2s.grad(f, backend=backend)(params, X, y)
    eps, want = 1e-6, []
    for i in range(2):
        d = np.eye(2)[i] * eps
        want.append(
            (f({"w": params["w"] + d}, X, y) - f({"w": params["w"] - d}, X, y))
            / (2 * eps)
        )
    np.testing.assert_allclose(got["w"], want, rtol=1e-6)
    with pytest.raises(s2s.S2SError, match="`X`"):
        s2s.grad(P.update_through_a_helpers_dict, backend=backend)(params, X)
