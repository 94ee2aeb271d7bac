"""``jax.tree_util.tree_map``, ``tree_leaves`` and ``jax.flatten_util.ravel_pytree`` on the differentiated
path (``frontend/tree_calls.py``).

Gradients on both backends equal ``jax.grad`` of the same function; the
batched and forward transforms agree with JAX's too. What stays unsupported
(``is_leaf=``) and Python's ``sum`` of an array are located errors.
"""

import jax
import numpy as np
import pytest

import s2s
from s2s.errors import S2SError
from tests.programs import tree_calls as P

jax.config.update("jax_enable_x64", True)


def _close(got, want):
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(
        want
    )
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for a, b in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
@pytest.mark.parametrize("name", list(P.PROGRAMS))
def test_gradient_equals_jax(name, backend):
    f = getattr(P, name)
    args = P.PROGRAMS[name]()
    if backend == "numpy":
        args = jax.tree_util.tree_map(np.asarray, args)
    _close(s2s.grad(f, backend=backend)(*args), jax.grad(f)(*args))


@pytest.mark.parametrize(
    "name",
    [
        "one_sgd_step_then_loss",
        "scaled_by_a_closure",
        "ravel_then_unravel",
        "reduced_by_tree_reduce",
        "chained_by_functools_reduce",
        "flat_objective_unraveled_at_module_level",
        "decay_masked_by_path",
    ],
)
def test_batched_and_forward_transforms_equal_jax(name):
    f = getattr(P, name)
    params, x = P.PROGRAMS[name]()
    xs = np.stack([x, 2 * x, -x])
    _close(
        s2s.vmap(f, in_axes=(None, 0))(params, xs),
        jax.vmap(f, in_axes=(None, 0))(params, xs),
    )
    tangents = jax.tree_util.tree_map(np.ones_like, params)
    _close(
        s2s.jvp(f, (params, x), (tangents, np.zeros_like(x))),
        jax.jvp(f, (params, x), (tangents, np.zeros_like(x))),
    )
    _close(
        s2s.vmap(s2s.grad(f), in_axes=(None, 0))(params, xs),
        jax.vmap(jax.grad(f), in_axes=(None, 0))(params, xs),
    )


def test_leaves_come_in_jax_order_with_dict_keys_sorted():
    params, x = P.PROGRAMS["l2_by_tree_leaves"]()  # keys w2, b2, w1: sorted b2, w1, w2
    got = s2s.grad(P.weighted_by_position)(params, x)
    _close(got, jax.grad(P.weighted_by_position)(params, x))


@pytest.mark.parametrize(
    "name, construct",
    [
        ("with_is_leaf", "`is_leaf=`"),
        ("ravel_kept_whole", "`ravel_pytree`: its value kept whole"),
        (
            "treedef_read_otherwise",
            "`treedef`, a tree structure, is used other than by",
        ),
    ],
)
def test_what_stays_unsupported_is_a_located_error(name, construct):
    params, x = P.PROGRAMS["l2_by_tree_leaves"]()
    with pytest.raises(S2SError) as err:
        s2s.grad(getattr(P, name))(params, x)
    text = str(err.value)
    assert construct in text, text
    assert "tree_calls.py:" in text and "^" in text and "hint:" in text


def test_python_sum_of_an_array_adds_its_rows():
    """``sum(params["w1"])``: Python's ``sum`` iterates the array's rows (as ``jax.grad`` of it does), also
    per example under ``vmap``."""
    params, x = P.PROGRAMS["l2_by_tree_leaves"]()
    f = P.sum_of_an_array
    for backend in ("xla", "numpy"):
        _close(s2s.grad(f, backend=backend)(params, x), jax.grad(f)(params, x))
    batch = jax.tree_util.tree_map(lambda a: np.stack([a, 2 * a]), params)
    _close(
        s2s.vmap(s2s.grad(f), in_axes=(0, None))(batch, x),
        jax.vmap(jax.grad(f), in_axes=(0, None))(batch, x),
    )


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_scalar_leaves_beside_batched_ones_under_vmap(backend):
    x = np.linspace(-1.0, 2.0, 6).reshape(2, 3)
    f = P.scalar_leaves_beside_batched
    _close(s2s.vmap(f, backend=backend)(x), jax.vmap(f)(x))
    _close(s2s.vmap(s2s.grad(f), backend=backend)(x), jax.vmap(jax.grad(f))(x))


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_namedtuples_made_inside_in_every_transform(backend):
    """``Stats(m, v)`` and ``s._replace(var=...)``: records made in transformed code (``rt.record``)."""
    x = np.linspace(-1.0, 2.0, 6).reshape(2, 3)
    _close(s2s.vmap(P.moments, backend=backend)(x), jax.vmap(P.moments)(x))
    _close(s2s.jit(P.moments)(x[0]), P.moments(x[0]))
    t = np.ones(3)
    _close(
        s2s.jvp(P.moments_loss, (x[0],), (t,)), jax.jvp(P.moments_loss, (x[0],), (t,))
    )
    _close(
        s2s.hessian(P.moments_loss, backend=backend)(x[0]),
        jax.hessian(P.moments_loss)(x[0]),
    )
    _close(
        s2s.vmap(s2s.grad(P.moments_loss), backend=backend)(x),
        jax.vmap(jax.grad(P.moments_loss))(x),
    )
