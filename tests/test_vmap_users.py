"""``s2s.vmap`` on per-example code written the way users write it (``tests/programs/vmap_users.py``).

The oracle is JAX's definition of ``vmap``: the original function called on each example's slice
(``in_axes`` as a tree prefix of the arguments, keyword arguments over axis 0), the results
stacked along ``out_axes`` (``None``: the same value for every example). Each case runs on the
NumPy backend in float64 (tight tolerance) and on XLA in float32. Differentiable per-example losses
are also checked as per-example gradients, ``s2s.vmap(s2s.grad(f))``, against a loop of
``s2s.grad(f, backend="numpy")`` and, where a ``jax.numpy`` twin can be written, against
``jax.vmap(oracle(jax.grad, twin))``.

A case marked ``xfail(strict=True)`` fails today for the reason named (the groups of
``/tmp/vmap_triage.md``); strictness makes a fix flip it, and then the mark goes.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_checks import oracle

import s2s
from tests.programs import vmap_users as P

B = 4


def n(r, *shape):
    return r.normal(size=shape)


def spd(r, *batch, d=3):
    a = r.normal(size=batch + (d, d))
    return a @ np.swapaxes(a, -1, -2) + d * np.eye(d)


def gru_params(r):
    return {k: 0.5 * n(r, 2, 3) for k in ("wz", "wr", "wh")} | {
        k: 0.5 * n(r, 3, 3) for k in ("uz", "ur", "uh")
    }


def mlp_layers(r):
    return [(n(r, 3, 4), n(r, 4)), (n(r, 4, 4), n(r, 4)), (n(r, 4, 3), n(r, 3))]


CLIP_SCALES = np.array([[0.1], [1.0], [3.0], [0.2]])


# --- what fails today: test id -> its root cause (a fix flips the strict xfail) ------------


def _both(*idents, reason):
    return {f"{i}-{b}": reason for i in idents for b in ("numpy", "xla")}


VMAP_XFAIL = {}

GRAD_XFAIL = {}

TWIN_XFAIL = {k: v for k, v in GRAD_XFAIL.items() if k.endswith("-xla")}

# --- the oracle ---------------------------------------------------------------------------


def _slice(value, axes, i):
    if axes is None:
        return value
    if isinstance(axes, int):
        return jax.tree.map(lambda leaf: np.take(leaf, i, axis=axes), value)
    if isinstance(axes, dict):
        return {k: _slice(value[k], axes[k], i) for k in value}
    return type(value)(_slice(v, a, i) for v, a in zip(value, axes))


def _size(value, axes):
    if axes is None:
        return None
    if isinstance(axes, int):
        return np.shape(jax.tree.leaves(value)[0])[axes]
    pairs = axes.items() if isinstance(axes, dict) else enumerate(axes)
    for k, a in pairs:
        size = _size(value[k], a)
        if size is not None:
            return size
    return None


def _stack(outs, axes):
    if axes is None:
        for o in outs[1:]:
            jax.tree.map(np.testing.assert_array_equal, o, outs[0])
        return outs[0]
    if isinstance(axes, int):
        return jax.tree.map(
            lambda *ls: np.stack([np.asarray(v) for v in ls], axis=axes), *outs
        )
    if isinstance(axes, dict):
        return {k: _stack([o[k] for o in outs], axes[k]) for k in outs[0]}
    return tuple(_stack([o[j] for o in outs], a) for j, a in enumerate(axes))


def loop(fn, args, in_axes, out_axes=0, kwargs=None):
    """``fn`` on each example, results stacked along ``out_axes`` (JAX's ``vmap`` semantics)."""
    kwargs = kwargs or {}
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    size = next(
        s
        for s in [_size(a, ax) for a, ax in zip(args, axes)]
        + [_size(v, 0) for v in kwargs.values()]
        if s is not None
    )
    outs = [
        fn(
            *(_slice(a, ax, i) for a, ax in zip(args, axes)),
            **{k: _slice(v, 0, i) for k, v in kwargs.items()},
        )
        for i in range(size)
    ]
    return _stack(outs, out_axes)


def to32(tree):
    def cast(leaf):
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f":
            return leaf.astype(np.float32)
        return leaf

    return jax.tree.map(cast, tree)


def to64(tree):
    def cast(leaf):
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f":
            return leaf.astype(np.float64)
        return leaf

    return jax.tree.map(cast, tree)


def assert_tree_close(got, want, backend, tol=None):
    tol = tol or (
        dict(rtol=1e-9, atol=1e-9) if backend == "numpy" else dict(rtol=1e-4, atol=1e-4)
    )
    assert jax.tree.structure(got) == jax.tree.structure(
        want
    ), f"structure {jax.tree.structure(got)} != {jax.tree.structure(want)}"
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
        assert (g.dtype.kind in "iub") == (
            w.dtype.kind in "iub"
        ), f"dtype {g.dtype} != {w.dtype}"
        np.testing.assert_allclose(g, w, **tol)


# --- cases --------------------------------------------------------------------------------


def case(
    fn, make, in_axes=0, out_axes=0, kwargs=None, id=None, xfail=None, xla_xfail=None
):
    """``xfail``: reason on both backends; ``xla_xfail``: reason on XLA only (a dict backend->reason also works)."""
    marks = {}
    if xfail:
        marks = {"numpy": xfail, "xla": xfail}
    if xla_xfail:
        marks["xla"] = xla_xfail
    return (fn, make, in_axes, out_axes, kwargs, id or fn.__name__, marks)


def params_for(cases):
    out = []
    for fn, make, in_axes, out_axes, kwargs, ident, marks in cases:
        for backend in ("numpy", "xla"):
            reason = marks.get(backend) or VMAP_XFAIL.get(f"{ident}-{backend}")
            out.append(
                pytest.param(
                    fn,
                    make,
                    in_axes,
                    out_axes,
                    kwargs,
                    backend,
                    id=f"{ident}-{backend}",
                    marks=(
                        [pytest.mark.xfail(strict=True, reason=reason)]
                        if reason
                        else []
                    ),
                )
            )
    return out


def MLP(r):
    return {"w1": n(r, 3, 5), "b1": n(r, 5), "w2": n(r, 5, 2), "b2": n(r, 2)}


def _with_nans(r):
    y = n(r, B, 5)
    y[y > 0.8] = np.nan
    return y


CASES = [
    case(P.mlp_predict, lambda r: (MLP(r), n(r, B, 3)), (None, 0)),
    case(P.positive_mean, lambda r: (n(r, B, 7),), 0),
    case(P.halve_until_small, lambda r: (np.array([1.0, 2.0, 3.0, 0.01]),), 0),
    case(P.selection_sum_over_its_length, lambda r: (n(r, B, 7),), 0),
    case(P.masked_mse, lambda r: (n(r, B, 5), _with_nans(r)), 0),
    case(
        P.path_score, lambda r: (n(r, 3, 3), r.integers(0, 3, size=(B, 4))), (None, 0)
    ),
    case(
        P.mse_through_a_helper,
        lambda r: (n(r, 3), n(r, B, 6, 3), n(r, B, 6)),
        (None, 0, 0),
    ),
    case(
        P.mlp_predict,
        lambda r: ({**MLP(r), "b2": n(r, B, 2)}, n(r, B, 3)),
        ({"w1": None, "b1": None, "w2": None, "b2": 0}, 0),
        id="mlp_predict-dict-prefix",
    ),
    case(
        P.mlp_loss,
        lambda r: ((n(r, 3, 4), n(r, 4), n(r, 4, 2), n(r, 2)), n(r, B, 3), n(r, B, 2)),
        (None, 0, 0),
    ),
    case(
        P.logistic_loss,
        lambda r: (n(r, 3), 0.5, n(r, B, 3), r.choice([-1.0, 1.0], size=B)),
        (None, None, 0, 0),
    ),
    case(
        P.softmax_xent,
        lambda r: (n(r, 3, 5), n(r, B, 3), r.integers(0, 5, size=B)),
        (None, 0, 0),
    ),
    case(P.huber, lambda r: (np.array([0.1, 2.5, -3.0, 0.7]), 0.1 * n(r, B)), 0),
    case(P.huber_where, lambda r: (2 * n(r, B, 5), n(r, B, 5)), 0),
    case(
        P.hinge_loss,
        lambda r: (n(r, 4), n(r, B, 4), r.choice([-1.0, 1.0], size=B)),
        (None, 0, 0),
    ),
    case(
        P.hinge_loss,
        lambda r: (n(r, 4), n(r, B, 4), r.choice([-1.0, 1.0], size=B), 0.1),
        (None, 0, 0, None),
        id="hinge_loss-python-float-arg",
    ),
    case(P.attention, lambda r: (n(r, B, 3, 4), n(r, B, 5, 4), n(r, B, 5, 2)), 0),
    case(
        P.attention,
        lambda r: (n(r, 3, 4, B), n(r, 5, 4), n(r, 5, 2)),
        (-1, None, None),
        out_axes=1,
        id="attention-axis-last-out1",
    ),
    case(P.causal_attention, lambda r: (n(r, B, 4, 3), n(r, B, 4, 3)), 0),
    case(P.layer_norm, lambda r: (n(r, B, 2, 5), n(r, 5), n(r, 5)), (0, None, None)),
    case(
        P.layer_norm,
        lambda r: (n(r, 2, B, 5), n(r, 5), n(r, 5)),
        (1, None, None),
        out_axes=1,
        id="layer_norm-axis1-out1",
    ),
    case(
        P.rnn_states,
        lambda r: ((n(r, 2, 3), 0.5 * n(r, 3, 3), n(r, 3)), n(r, B, 4, 2)),
        (None, 0),
    ),
    case(
        P.gru_loss,
        lambda r: (gru_params(r), n(r, B, 4, 2), n(r, B, 3)),
        (None, 0, 0),
    ),
    case(
        P.mlp_xent,
        lambda r: (mlp_layers(r), n(r, B, 3), r.integers(0, 3, size=B)),
        (None, 0, 0),
    ),
    case(P.onehot_xent, lambda r: (n(r, B, 5), r.integers(0, 5, size=B)), 0),
    case(P.clipped_mse, lambda r: (2 * n(r, B, 4), n(r, B, 4)), 0),
    case(P.conv_valid, lambda r: (n(r, B, 6), n(r, 3)), (0, None)),
    case(
        P.conv_valid,
        lambda r: (n(r, 6), n(r, B, 3)),
        (None, 0),
        id="conv_valid-batched-kernel",
    ),
    case(P.conv_slices, lambda r: (n(r, B, 6), n(r, 3)), (0, None)),
    case(P.horner, lambda r: (n(r, 4), n(r, B)), (None, 0)),
    case(
        P.horner,
        lambda r: (n(r, B, 4), n(r, B, 3)),
        (0, 0),
        id="horner-batched-coeffs",
    ),
    case(P.ema, lambda r: (n(r, B, 5),), 0),
    case(P.ema, lambda r: (n(r, 5, B),), 1, out_axes=1, id="ema-axis1-out1"),
    case(P.poly_features, lambda r: (n(r, B, 3),), 0),
    case(P.newton_cuberoot, lambda r: (np.array([0.3, 2.0, 27.0, 100.0]),), 0),
    case(P.bisect_sqrt, lambda r: (np.array([0.25, 2.0, 9.0, 50.0]),), 0),
    case(P.gd_early_stop, lambda r: (np.array([0.5, 1.0, 2.0, 1.5]), n(r, B)), 0),
    case(P.power_iteration, lambda r: (spd(r, B),), 0),
    case(P.fixed_point_cos, lambda r: (np.array([0.0, 1.0, -2.0, 3.0]),), 0),
    case(P.piecewise, lambda r: (np.array([-3.0, -0.5, 0.5, 4.0]),), 0),
    case(P.clip_by_norm, lambda r: (n(r, B, 3) * CLIP_SCALES,), 0),
    case(P.safe_log, lambda r: (np.array([2.0, -1.0, 0.5, 0.0]),), 0),
    case(P.sign_scale, lambda r: (n(r, B, 3),), 0),
    case(
        P.bracket_or_raise,
        lambda r: (np.array([0.2, -0.5, 0.95, 0.1]), 1.5),
        (0, None),
    ),
    case(P.positive_sum, lambda r: (n(r, B, 5),), 0),
    case(P.running_best, lambda r: (n(r, B, 5),), 0),
    case(P.set_ends, lambda r: (n(r, B, 4),), 0),
    case(P.zero_negatives, lambda r: (n(r, B, 5),), 0),
    case(P.bump_first_column, lambda r: (n(r, B, 3, 2),), 0),
    case(P.embed_bag, lambda r: (n(r, 6, 3), r.integers(0, 6, size=(B, 4))), (None, 0)),
    case(P.peak, lambda r: (n(r, B, 5),), 0),
    case(P.sort_by_key, lambda r: (n(r, B, 5), n(r, B, 5)), 0),
    case(P.around_peak, lambda r: (n(r, B, 5),), 0),
    case(P.window, lambda r: (n(r, B, 6), np.array([0, 2, 3, 1])), 0),
    case(P.leaky_relu, lambda r: (n(r, B, 5),), 0),
    case(P.cumsum_normalize, lambda r: (n(r, 5, B),), -1),
    case(P.top_k, lambda r: (n(r, B, 5),), 0),
    case(P.trimmed_mean, lambda r: (n(r, B, 5),), 0),
    case(P.norms, lambda r: (n(r, B, 3, 2),), 0),
    case(P.solve_ridge, lambda r: (n(r, B, 5, 3), n(r, B, 5)), 0),
    case(
        P.solve_ridge,
        lambda r: (n(r, 5, 3), n(r, B, 5)),
        (None, 0),
        id="solve_ridge-shared-A",
    ),
    case(P.mahalanobis, lambda r: (n(r, B, 3), n(r, 3), spd(r)), (0, None, None)),
    case(
        P.mahalanobis,
        lambda r: (n(r, B, 3), n(r, 3), spd(r, B)),
        (0, None, 0),
        id="mahalanobis-batched-cov",
    ),
    case(P.standardize, lambda r: (n(r, 4, 3, B),), -1),
    case(P.patches, lambda r: (n(r, B, 4, 6),), 0),
    case(P.bilinear, lambda r: (n(r, B, 3), n(r, 3, 4), n(r, B, 4)), (0, None, 0)),
    case(P.heads, lambda r: (n(r, B, 3, 4), n(r, 2, 4, 2)), (0, None)),
    case(P.outer_update, lambda r: (n(r, 3, 2), n(r, B, 3), n(r, B, 2)), (None, 0, 0)),
    case(P.summarize, lambda r: (n(r, B, 4),), 0),
    case(
        P.summarize,
        lambda r: (n(r, B, 4),),
        0,
        out_axes={"mean": 0, "max": 0, "centered": 1},
        id="summarize-dict-out-axes",
    ),
    case(P.moments, lambda r: (n(r, B, 3, 2),), 0, out_axes=(0, 1)),
    case(
        P.scale_shift,
        lambda r: (n(r, B, 3),),
        0,
        kwargs=lambda r: {"scale": n(r, B, 3)},
    ),
    case(
        P.scale_shift,
        lambda r: (n(r, B, 3),),
        (0,),
        kwargs=lambda r: {"scale": n(r, B, 3), "shift": n(r, B, 1)},
        id="scale_shift-both-keywords",
    ),
    case(
        P.affine_dict,
        lambda r: ({"w": n(r, 3, 2), "b": n(r, B, 2)}, n(r, B, 3)),
        ({"w": None, "b": 0}, 0),
    ),
    case(
        P.with_shared,
        lambda r: (n(r, 3, 2), n(r, B, 3)),
        (None, 0),
        out_axes=(None, 0),
    ),
    case(
        P.count_tokens,
        lambda r: (np.array([[0, 1, 1, 4], [2, 2, 2, 2], [0, 1, 2, 3], [4, 4, 0, 0]]),),
        0,
    ),
    case(
        P.count_tokens_add_at,
        lambda r: (np.array([[0, 1, 1, 4], [2, 2, 2, 2], [0, 1, 2, 3], [4, 4, 0, 0]]),),
        0,
    ),
    case(P.zero_at, lambda r: (n(r, B, 5), np.array([0, 4, 2, 2])), 0),
    case(P.suppress_peak, lambda r: (n(r, B, 5),), 0),
    case(
        P.first_above,
        lambda r: (n(r, B, 5) - np.array([[0.0], [0.0], [0.0], [9.0]]), 0.5),
        (0, None),
    ),
    case(P.newton_history, lambda r: (np.array([0.5, 2.0, 30.0, 1.0]),), 0),
    case(
        P.any_negative,
        lambda r: (n(r, B, 3) + np.array([[3.0], [0.0], [3.0], [0.0]]),),
        0,
    ),
    case(
        P.both_conditions,
        lambda r: (np.array([[0.2, 0.3], [1.0, 2.0], [-1.0, 0.2], [0.1, 0.1]]),),
        0,
    ),
    case(P.pairs, lambda r: (n(r, B, 3, 2),), 0),
    case(
        P.nll_take_along,
        lambda r: (n(r, B, 3, 5), r.integers(0, 5, size=(B, 3))),
        0,
    ),
    case(P.fraction_positive, lambda r: (n(r, B, 5),), 0),
    case(P.roll_shared, lambda r: (n(r, B, 5), 2), (0, None)),
    case(P.det_and_chol, lambda r: (spd(r, B),), 0),
    case(P.reversed_tail, lambda r: (n(r, B, 5),), 0),
    case(P.int_div_index, lambda r: (n(r, B, 5),), 0),
    case(P.outer_newaxis, lambda r: (n(r, B, 3), n(r, B, 2)), 0),
    case(P.zip_loop, lambda r: (n(r, B, 4), n(r, B, 4)), 0),
    case(
        P.decay_while,
        lambda r: (n(r, B, 3), np.array([0.5, 0.9, 0.7, 0.8])),
        0,
        out_axes=(-1, 0),
        id="decay_while-out-axes-neg",
    ),
    case(
        P.affine_dict,
        lambda r: ({"w": n(r, 3, 2), "b": n(r, 2, B)}, n(r, 3, B)),
        ({"w": None, "b": 1}, 1),
        id="affine_dict-axis1",
    ),
    case(P.pairs, lambda r: (n(r, 2, 3, 2),), 0, id="pairs-batch-of-2"),
    case(
        P.options_dict_mapped,
        lambda r: (n(r, 3), np.abs(n(r, B, 3)) % 1.0),
        (None, 0),
    ),
    # as many examples as steps (a batch axis swapped twice passed unseen), and not
    case(P.enumerated_pairs, lambda r: (n(r, 3, 3, 2), n(r, 3, 3, 2)), 0),
    case(
        P.enumerated_pairs,
        lambda r: (n(r, 2, 3, 2), n(r, 2, 3, 2)),
        0,
        id="enumerated_pairs-batch-of-2",
    ),
    case(P.unpack_point, lambda r: (n(r, B, 2),), 0),
    case(P.unpack_point, lambda r: (n(r, 2, 2),), 0, id="unpack_point-batch-of-2"),
    case(P.seq_len, lambda r: (n(r, B, 5),), 0),
    case(P.n_rows, lambda r: (n(r, B, 3, 2),), 0),
    case(P.guarded_objective, lambda r: (np.array([0.1, 0.6]), n(r, B, 5)), (None, 0)),
    case(
        P.guarded_objective,
        lambda r: (
            np.array([[0.1, 0.6], [0.2, -0.3], [0.0, 1.0], [1.0, 2.0]]),
            n(r, 5),
        ),
        (0, None),
        id="guarded_objective-guard-per-example",
    ),
    case(P.spread_keywords, lambda r: (n(r, B, 3),), 0),
    case(P.tuple_truth, lambda r: (n(r, B, 3), 0.7), (0, None)),
    case(P.char_rnn_states_by_step, lambda r: (n(r, 2), n(r, B, 3)), (None, 0)),
    case(
        P.lagged_correlations,
        lambda r: (n(r, 5), r.integers(-3, 4, size=B)),
        (None, 0),
    ),
    # facts of an example's shape, the same for every example: one flag, one step to stop at
    case(P.accepts_unbatched_input, lambda r: (n(r, 3, 2), n(r, B, 3)), (None, 0)),
    case(
        P.accepts_unbatched_input,
        lambda r: (n(r, 3, 2), n(r, B, 5, 3)),
        (None, 0),
        id="accepts_unbatched_input-batched-examples",
    ),
    case(
        P.layers_until_a_width,
        lambda r: ([n(r, 3, 4), n(r, 4, 1)], n(r, B, 3)),
        (None, 0),
    ),
]


@pytest.mark.parametrize(
    "fn, make, in_axes, out_axes, make_kwargs, backend", params_for(CASES)
)
def test_vmap_matches_a_loop_over_examples(
    fn, make, in_axes, out_axes, make_kwargs, backend
):
    r = np.random.default_rng(0)
    args = make(r)
    kwargs = make_kwargs(r) if make_kwargs else {}
    if backend == "xla":
        args, kwargs = to32(args), to32(kwargs)
        want = loop(fn, to64(args), in_axes, out_axes, to64(kwargs))
    else:
        want = loop(fn, args, in_axes, out_axes, kwargs)
    batched = s2s.vmap(fn, in_axes=in_axes, out_axes=out_axes, backend=backend)
    got = batched(*args, **kwargs)
    assert_tree_close(got, want, backend)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_axis_size_with_nothing_mapped(backend):
    x = np.random.default_rng(2).normal(size=(3, 2))
    if backend == "xla":
        x = x.astype(np.float32)
    got = s2s.vmap(P.moments, in_axes=None, axis_size=B, backend=backend)(x)
    want = tuple(np.broadcast_to(o, (B,) + o.shape) for o in P.moments(to64(x)))
    assert_tree_close(got, want, backend)


# --- per-example gradients ----------------------------------------------------------------


def t_logsumexp(z):
    m = jnp.max(z)
    return m + jnp.log(jnp.sum(jnp.exp(z - m)))


def t_mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    return 0.5 * jnp.sum((jnp.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)


def t_logistic_loss(w, b, x, y):
    return jnp.log1p(jnp.exp(-y * (jnp.dot(x, w) + b)))


def t_softmax_xent(W, x, label):
    logits = x @ W
    return t_logsumexp(logits) - logits[label]


def t_huber(pred, target, delta=1.0):
    r = pred - target
    a = jnp.abs(r)
    return jnp.where(a <= delta, 0.5 * r**2, delta * (a - 0.5 * delta))


def t_huber_where(pred, target, delta=1.0):
    r = jnp.abs(pred - target)
    return jnp.sum(jnp.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta)))


def t_hinge_loss(w, x, y, lam=0.01):
    return jnp.maximum(0.0, 1.0 - y * jnp.dot(w, x)) + lam * jnp.sum(w**2)


def t_attention_loss(wq, x):
    q = x @ wq
    s = q @ x.T / jnp.sqrt(x.shape[-1])
    p = jax.nn.softmax(s, axis=-1)
    return jnp.mean((p @ x) ** 2)


def t_layer_norm_loss(gamma, beta, x):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    y = gamma * (x - mean) / jnp.sqrt(var + 1e-5) + beta
    return jnp.sum(y**2 * jnp.linspace(0.0, 1.0, x.shape[-1]))


def t_gru_loss(p, xs, target):
    h = jnp.zeros(p["uz"].shape[0])
    for x in xs:
        z = jax.nn.sigmoid(x @ p["wz"] + h @ p["uz"])
        r = jax.nn.sigmoid(x @ p["wr"] + h @ p["ur"])
        hh = jnp.tanh(x @ p["wh"] + (r * h) @ p["uh"])
        h = (1.0 - z) * h + z * hh
    return jnp.sum((h - target) ** 2)


def t_mlp_xent(layers, x, label):
    for w, b in layers[:-1]:
        x = jnp.maximum(x @ w + b, 0.0)
    w, b = layers[-1]
    logits = x @ w + b
    return t_logsumexp(logits) - logits[label]


def t_horner(coeffs, x):
    result = 0.0
    for c in coeffs:
        result = result * x + c
    return result


def t_conv_loss(w, x):
    k = w.shape[0]
    out = jnp.stack([jnp.dot(x[i : i + k], w) for i in range(x.shape[0] - k + 1)])
    return jnp.sum(out**2)


def t_ridge_loss(A, b):
    n_ = A.shape[1]
    return jnp.sum(jnp.linalg.solve(A.T @ A + 0.1 * jnp.eye(n_), A.T @ b) ** 2)


def t_clipped_mse(pred, y):
    return jnp.mean(jnp.clip(pred - y, -1.0, 1.0) ** 2)


def t_onehot_xent(logits, label):
    y = jnp.eye(logits.shape[0])[label]
    return -jnp.sum(y * (logits - t_logsumexp(logits)))


def t_positive_sum(x):
    return jnp.sum(jnp.where(x > 0, x, 0.0))


def t_nll_take_along(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=1)
    return -jnp.take_along_axis(logp, labels[:, None], axis=1).mean()


def t_zip_loop(xs, ys):
    return jnp.sum(xs * ys)


def t_pairs(points):
    return jnp.sum(jnp.arange(1, points.shape[0] + 1) * points[:, 0] * points[:, 1])


def t_dict_loss(params, x):
    return jnp.sum(jnp.tanh(x @ params["w"] + params["b"]) ** 2)


def t_outer_update_loss(m, u, v):
    return jnp.sum((m + 0.5 * jnp.outer(u, v)) ** 2)


def gcase(fn, make, in_axes, twin=None, id=None, xfail=None, xla_xfail=None):
    marks = {}
    if xfail:
        marks = {"numpy": xfail, "xla": xfail}
    if xla_xfail:
        marks["xla"] = xla_xfail
    return (fn, make, in_axes, twin, id or fn.__name__, marks)


GRAD_CASES = [
    gcase(  # batch 4, 4 classes: a wrong axis would broadcast silently
        P.reductions_along_a_parameter_axis,
        lambda r: (n(r, 3, 4), n(r, B, 3), r.integers(0, 4, size=B)),
        (None, 0, 0),
    ),
    gcase(
        P.reductions_along_a_parameter_axis,
        lambda r: (n(r, 3, 5), n(r, B, 3), r.integers(0, 5, size=B)),
        (None, 0, 0),
        id="reductions_along_a_parameter_axis-5",
    ),
    gcase(
        P.force_penalty,
        lambda r: (n(r, 3, 2), n(r, B, 5), n(r, 3), n(r, 2)),
        (None, 0, None, None),
        P.force_penalty,
    ),
    gcase(
        P.lagged_correlations,
        lambda r: (n(r, 5), r.integers(-3, 4, size=B)),
        (None, 0),
        P.t_lagged_correlations,
    ),
    gcase(P.tuple_key, lambda r: (n(r, B, 2, 3),), 0, P.tuple_key),
    gcase(
        P.softmax_scores_written_at_labels,
        lambda r: (n(r, 3, 4), n(r, B, 5, 3), r.integers(0, 4, size=(B, 5))),
        (None, 0, 0),
    ),
    gcase(P.positional_encoding_loss, lambda r: (n(r, 10), n(r, B, 4, 2)), (None, 0)),
    gcase(
        P.weighted_squares, lambda r: (n(r, 3), n(r, B, 3), n(r, B, 3)), (None, 0, 0)
    ),
    gcase(
        P.weighted_squares, lambda r: (n(r, 3), n(r, B, 3)), (None, 0), id="unweighted"
    ),
    gcase(P.cut_points, lambda r: (n(r, B, 2), n(r, 3)), (0, None)),
    gcase(P.grow_past_ten, lambda r: (1.3, n(r, B)), (None, 0)),
    gcase(P.newton_cube_root, lambda r: (1.0 + np.abs(n(r, B)), n(r, B)), (0, 0)),
    gcase(
        P.path_score, lambda r: (n(r, 3, 3), r.integers(0, 3, size=(B, 4))), (None, 0)
    ),
    gcase(
        P.mse_through_a_helper,
        lambda r: (n(r, 3), n(r, B, 6, 3), n(r, B, 6)),
        (None, 0, 0),
    ),
    gcase(
        P.mlp_loss,
        lambda r: ((n(r, 3, 4), n(r, 4), n(r, 4, 2), n(r, 2)), n(r, B, 3), n(r, B, 2)),
        (None, 0, 0),
        t_mlp_loss,
    ),
    gcase(
        P.logistic_loss,
        lambda r: (n(r, 3), 0.5, n(r, B, 3), r.choice([-1.0, 1.0], size=B)),
        (None, None, 0, 0),
        t_logistic_loss,
    ),
    gcase(
        P.softmax_xent,
        lambda r: (n(r, 3, 5), n(r, B, 3), r.integers(0, 5, size=B)),
        (None, 0, 0),
        t_softmax_xent,
    ),
    gcase(
        P.huber,
        lambda r: (np.array([0.1, 2.5, -3.0, 0.7]), 0.1 * n(r, B)),
        (0, 0),
        t_huber,
    ),
    gcase(P.huber_where, lambda r: (2 * n(r, B, 5), n(r, B, 5)), 0, t_huber_where),
    gcase(
        P.hinge_loss,
        lambda r: (n(r, 4), n(r, B, 4), r.choice([-1.0, 1.0], size=B)),
        (None, 0, 0),
        t_hinge_loss,
    ),
    gcase(
        P.attention_loss,
        lambda r: (n(r, 4, 4), n(r, B, 3, 4)),
        (None, 0),
        t_attention_loss,
    ),
    gcase(
        P.layer_norm_loss,
        lambda r: (n(r, 5), n(r, 5), n(r, B, 2, 5)),
        (None, None, 0),
        t_layer_norm_loss,
    ),
    gcase(
        P.gru_loss,
        lambda r: (gru_params(r), n(r, B, 4, 2), n(r, B, 3)),
        (None, 0, 0),
        t_gru_loss,
    ),
    gcase(
        P.mlp_xent,
        lambda r: (mlp_layers(r), n(r, B, 3), r.integers(0, 3, size=B)),
        (None, 0, 0),
        t_mlp_xent,
    ),
    gcase(P.horner, lambda r: (n(r, 4), n(r, B)), (None, 0), t_horner),
    gcase(P.conv_loss, lambda r: (n(r, 3), n(r, B, 6)), (None, 0), t_conv_loss),
    gcase(P.ridge_loss, lambda r: (n(r, B, 5, 3), n(r, B, 5)), 0, t_ridge_loss),
    gcase(P.clipped_mse, lambda r: (2 * n(r, B, 4), n(r, B, 4)), 0, t_clipped_mse),
    gcase(
        P.onehot_xent,
        lambda r: (n(r, B, 5), r.integers(0, 5, size=B)),
        0,
        t_onehot_xent,
    ),
    gcase(P.positive_sum, lambda r: (n(r, B, 5),), 0, t_positive_sum),
    gcase(
        P.clipped_step_loss, lambda r: (n(r, 3), n(r, B, 3) * CLIP_SCALES), (None, 0)
    ),
    gcase(P.newton_cuberoot, lambda r: (np.array([0.3, 2.0, 27.0, 100.0]),), 0),
    gcase(P.piecewise, lambda r: (np.array([-3.0, -0.5, 0.5, 4.0]),), 0),
    gcase(P.safe_log, lambda r: (np.array([2.0, -1.0, 0.5, 3.0]),), 0),
    gcase(P.fixed_point_cos, lambda r: (np.array([0.0, 1.0, -2.0, 3.0]),), 0),
    gcase(
        P.nll_take_along,
        lambda r: (n(r, B, 3, 5), r.integers(0, 5, size=(B, 3))),
        0,
        t_nll_take_along,
    ),
    gcase(P.zip_loop, lambda r: (n(r, B, 4), n(r, B, 4)), 0, t_zip_loop),
    gcase(P.pairs, lambda r: (n(r, B, 3, 2),), 0, t_pairs),
    gcase(
        P.both_conditions,
        lambda r: (np.array([[0.2, 0.3], [1.0, 2.0], [-1.0, 0.2], [0.1, 0.1]]),),
        0,
    ),
    gcase(
        P.dict_loss,
        lambda r: ({"w": n(r, 3, 2), "b": n(r, 2, B)}, n(r, 3, B)),
        ({"w": None, "b": 1}, 1),
        t_dict_loss,
        id="dict_loss-axis1",
    ),
    gcase(
        P.outer_update_loss,
        lambda r: (n(r, 3, 2), n(r, B, 3), n(r, B, 2)),
        (None, 0, 0),
        t_outer_update_loss,
    ),
    gcase(
        P.layers_until_a_width,
        lambda r: ([n(r, 3, 4), n(r, 4, 1)], n(r, B, 3)),
        (None, 0),
    ),
]


def grad_params(cases, with_twin=False):
    out = []
    for fn, make, in_axes, twin, ident, marks in cases:
        backends = ("xla",) if with_twin else ("numpy", "xla")
        if with_twin and twin is None:
            continue
        table = TWIN_XFAIL if with_twin else GRAD_XFAIL
        for backend in backends:
            reason = marks.get(backend) or table.get(f"{ident}-{backend}")
            out.append(
                pytest.param(
                    fn,
                    make,
                    in_axes,
                    twin,
                    backend,
                    id=f"{ident}-{backend}",
                    marks=(
                        [pytest.mark.xfail(strict=True, reason=reason)]
                        if reason
                        else []
                    ),
                )
            )
    return out


def per_example_grads(fn, args, in_axes):
    return loop(s2s.grad(fn, backend="numpy"), args, in_axes)


@pytest.mark.parametrize("fn, make, in_axes, twin, backend", grad_params(GRAD_CASES))
def test_per_example_gradients_match_a_loop(fn, make, in_axes, twin, backend):
    args = make(np.random.default_rng(1))
    if backend == "xla":
        args = to32(args)
    want = per_example_grads(fn, to64(args), in_axes)
    got = s2s.vmap(s2s.grad(fn), in_axes=in_axes, backend=backend)(*args)
    assert_tree_close(got, want, backend)


@pytest.mark.parametrize(
    "fn, make, in_axes, twin, backend", grad_params(GRAD_CASES, with_twin=True)
)
def test_per_example_gradients_match_jax_vmap_of_grad(fn, make, in_axes, twin, backend):
    args = to32(make(np.random.default_rng(1)))
    want = jax.vmap(oracle(jax.grad, twin), in_axes=in_axes)(*args)
    got = s2s.vmap(s2s.grad(fn), in_axes=in_axes)(*args)
    assert_tree_close(got, jax.tree.map(np.asarray, want), "xla")


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_per_example_selection_that_escapes_is_a_located_error(backend):
    xs = np.random.default_rng(5).normal(size=(B, 7))
    with pytest.raises(
        s2s.S2SError, match="selects a different number of elements"
    ) as err:
        s2s.vmap(P.selection_escapes, backend=backend)(xs)
    assert err.value.origin.path == P.__file__
    assert "np.where" in err.value.hint


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_an_op_setting_that_differs_per_example_is_a_located_error(backend):
    x = np.arange(3.0)
    with pytest.raises(s2s.S2SError, match="`repeats` that differs per example") as err:
        s2s.vmap(P.repeated_per_example, in_axes=(None, 0), backend=backend)(
            x, np.array([1, 2])
        )
    assert err.value.origin.path == P.__file__
