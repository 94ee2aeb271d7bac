"""Multi-device checks of ``s2s.pmap`` and ``s2s.data_parallel``, run in one process on 8 CPU devices.

``tests/test_pmap.py`` runs ``python -m tests.pmap_checks`` with
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (set before JAX starts);
each check prints one JSON line ``{"check", "ok", "detail"}``. Oracles: the
same program on one device (full-batch gradients) and ``jax.pmap``. While s2s
runs, ``jax.pmap`` and ``jax.vmap`` raise, so s2s cannot be using them.
"""

import contextlib
import json
import sys
import traceback

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

import s2s
from tests.programs import collectives as C

NDEV = 8
RNG = np.random.default_rng(3)


def arr(*shape):
    return np.asarray(RNG.normal(size=shape), np.float32)


def loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


vg = s2s.value_and_grad(loss)


def train_step(params, x, y):
    value, grads = vg(params, x, y)
    grads = s2s.pmean(grads, axis_name="batch")
    value = lax.pmean(value, "batch")
    new = {
        "w1": params["w1"] - 0.1 * grads["w1"],
        "b1": params["b1"] - 0.1 * grads["b1"],
        "w2": params["w2"] - 0.1 * grads["w2"],
    }
    return new, value


def train_step_lax(params, x, y):
    # the jax.lax spelling, and the loss summed rather than averaged
    value, grads = vg(params, x, y)
    grads = lax.pmean(grads, "batch")
    total = lax.psum(value, "batch")
    new = {
        "w1": params["w1"] - 0.1 * grads["w1"],
        "b1": params["b1"] - 0.1 * grads["b1"],
        "w2": params["w2"] - 0.1 * grads["w2"],
    }
    return new, total


SCALE = 2.0


def scaled(x):
    return x * SCALE


def shift(w, x):
    return jnp.sin(x) @ w


def with_index(x):
    return x * lax.axis_index("i") + s2s.psum(x, "i")


def per_example_pair(w, x):
    return {"out": x @ w, "norm": jnp.sum(x**2)}


@contextlib.contextmanager
def no_jax_maps():
    """``jax.pmap`` and ``jax.vmap`` raise while s2s runs."""
    saved = jax.pmap, jax.vmap

    def refuse(*args, **kwargs):
        raise AssertionError("s2s called jax.pmap or jax.vmap")

    jax.pmap = jax.vmap = refuse
    try:
        yield
    finally:
        jax.pmap, jax.vmap = saved


def close(got, want, rtol=2e-5, atol=2e-6):
    gl, wl = jax.tree.leaves(got), jax.tree.leaves(want)
    assert jax.tree.structure(got) == jax.tree.structure(want), (
        jax.tree.structure(got),
        jax.tree.structure(want),
    )
    for g, w in zip(gl, wl):
        assert np.shape(g) == np.shape(w), (np.shape(g), np.shape(w))
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def spans(leaf, n=NDEV):
    assert len(leaf.sharding.device_set) == n, leaf.sharding


def raises(kind, match, call):
    try:
        call()
    except kind as err:
        assert match in str(err), f"{match!r} not in {str(err)!r}"
        return
    raise AssertionError(f"no {kind.__name__} raised")


def params_and_batch(n=NDEV, per=4):
    params = {"w1": arr(3, 5), "b1": arr(5), "w2": arr(5, 2)}
    return params, arr(n, per, 3), arr(n, per, 2)


# --- checks -------------------------------------------------------------------------------------


def check_training_step_matches_one_device():
    """pmap of value_and_grad + pmean + SGD, three steps, against full-batch gradients on one device."""
    params, x, y = params_and_batch()
    with no_jax_maps():
        step = s2s.pmap(train_step, axis_name="batch", in_axes=(None, 0, 0))
        p = params
        for _ in range(3):
            new, value = step(p, x, y)
            spans(value)
            want_value, grads = vg(p, x.reshape(-1, 3), y.reshape(-1, 2))
            want = {k: p[k] - 0.1 * grads[k] for k in p}
            # out_axes=0: every device's copy of the (replicated) new parameters
            for k in p:
                assert new[k].shape == (NDEV, *p[k].shape)
                assert new[k].sharding.spec == P("batch"), new[k].sharding
                close(new[k], np.broadcast_to(want[k], new[k].shape))
            close(value, np.full(NDEV, want_value, np.float32))
            p = {k: v[0] for k, v in new.items()}
    assert "grads_2 = rt.pmean_examples(grads)" in step.source


def check_training_step_replicated_out_axes_none():
    """``out_axes=None``: the parameters come back once, replicated on every device, and train on."""
    params, x, y = params_and_batch()
    with no_jax_maps():
        step = s2s.pmap(train_step_lax, "batch", in_axes=(None, 0, 0), out_axes=None)
        new, total = step(params, x, y)
        again, _ = step(new, x, y)
    for leaf in jax.tree.leaves((new, total)):
        spans(leaf)
        assert leaf.sharding.is_fully_replicated
    value, grads = vg(params, x.reshape(-1, 3), y.reshape(-1, 2))
    want = {k: params[k] - 0.1 * grads[k] for k in params}
    close(new, want)
    close(total, NDEV * value, rtol=1e-5)
    _, grads2 = vg(want, x.reshape(-1, 3), y.reshape(-1, 2))
    close(again, {k: want[k] - 0.1 * grads2[k] for k in want}, rtol=1e-4, atol=1e-5)


def check_training_step_compiles_to_all_reduce():
    params, x, y = params_and_batch()
    with no_jax_maps():
        step = s2s.pmap(train_step, axis_name="batch", in_axes=(None, 0, 0))
        text = step.lower(params, x, y).compile().as_text()
    assert "all-reduce" in text, "no all-reduce in the compiled program"
    # partitioned: each device's program sees one example, not the batch of 8
    assert "f32[1,4,3]" in text and "f32[8,4,3]" not in text


COLLECTIVES = [
    (C.normalize, lambda: (arr(NDEV, 3) ** 2 + 1.0,), 0),
    (C.center, lambda: (arr(NDEV, 3),), 0),
    (C.extremes, lambda: (arr(3, NDEV),), 1),
    (C.position, lambda: (arr(NDEV),), 0),
    (C.batch_norm, lambda: (arr(NDEV, 5), arr(5)), (0, None)),
    (C.tree_sum, lambda: ({"w": arr(NDEV, 2), "b": arr(NDEV)},), 0),
    (C.total_loss, lambda: (arr(3, 2), arr(NDEV, 3), arr(NDEV, 2)), (None, 0, 0)),
    (C.mean_loss, lambda: (arr(3), arr(NDEV, 3), arr(NDEV)), (None, 0, 0)),
    (C.shared_scale, lambda: (arr(NDEV, 2),), 0),
]


def check_collectives_match_jax_pmap():
    """psum/pmean/pmax/pmin/axis_index (s2s and jax.lax spellings) against ``jax.pmap`` of the same function."""
    for fn, make, in_axes in COLLECTIVES:
        args = make()
        want = jax.pmap(fn, axis_name="batch", in_axes=in_axes)(*args)
        with no_jax_maps():
            got = s2s.pmap(fn, axis_name="batch", in_axes=in_axes)(*args)
        try:
            close(got, want, rtol=1e-5, atol=1e-5)
            for leaf in jax.tree.leaves(got):
                spans(leaf)
                assert leaf.sharding.spec == P("batch"), leaf.sharding
        except AssertionError as err:
            raise AssertionError(f"{fn.__name__}: {err}") from None


def check_axis_index_and_psum():
    x = arr(NDEV, 2)
    want = jax.pmap(with_index, axis_name="i")(x)
    with no_jax_maps():
        pm = s2s.pmap(with_index, axis_name="i")
        got = pm(x)
        text = pm.lower(x).compile().as_text()
    close(got, want)
    assert "all-reduce" in text


def check_in_axes_none_and_1_out_axes():
    w, x = arr(3, 4), arr(3, NDEV)
    want = jax.pmap(shift, in_axes=(None, 1), out_axes=1)(w, x)
    with no_jax_maps():
        got = s2s.pmap(shift, in_axes=(None, 1), out_axes=1)(w, x)
    close(got, want)
    assert got.shape == (4, NDEV), got.shape
    assert got.sharding.spec == P(None, "pmap"), got.sharding
    spans(got)
    # a tree of out_axes, and keyword arguments mapped over axis 0 as in JAX
    w2, x2 = arr(3, 2), arr(NDEV, 3)
    spec = dict(in_axes=(None, 0), out_axes={"out": 1, "norm": 0})
    want = jax.pmap(per_example_pair, **spec)(w2, x2)
    with no_jax_maps():
        got = s2s.pmap(per_example_pair, **spec)(w2, x2)
        by_keyword = s2s.pmap(per_example_pair, in_axes=(None,))(w2, x=x2)
    close(got, want)
    close(by_keyword, jax.pmap(per_example_pair, in_axes=(None, 0))(w2, x2))


def check_fewer_examples_use_fewer_devices():
    """A mapped axis of 4 runs on the first 4 devices (as ``jax.pmap``); ``devices=`` picks them."""
    x = arr(4, 3)
    want = jax.pmap(C.center, axis_name="batch")(x)
    with no_jax_maps():
        got = s2s.pmap(C.center, axis_name="batch")(x)
        last = s2s.pmap(C.center, axis_name="batch", devices=jax.devices()[4:])(x)
    close(got, want)
    close(last, want)
    assert got.sharding.device_set == set(jax.devices()[:4])
    assert last.sharding.device_set == set(jax.devices()[4:])


def check_errors():
    x8, x16 = arr(NDEV, 3), arr(2 * NDEV, 3)
    with no_jax_maps():
        raises(
            ValueError,
            "requires 16 logical devices, but only 8 XLA devices are available",
            lambda: s2s.pmap(C.center, axis_name="batch")(x16),
        )
        raises(
            ValueError,
            "Got axis_size=4, num_local_devices=8",
            lambda: s2s.pmap(C.center, "batch", devices=jax.devices())(arr(4, 3)),
        )
        raises(
            ValueError,
            "pmap got inconsistent sizes for array axes to be mapped",
            lambda: s2s.pmap(shift)(arr(NDEV, 3, 4), arr(4, 3)),
        )
        raises(
            ValueError,
            "pmap requires at least one argument with a mapped axis",
            lambda: s2s.pmap(shift, in_axes=None)(arr(3, 4), x8),
        )
        raises(
            ValueError,
            "pmap was requested to map its argument along axis 2, which implies that its rank should be "
            "at least 3, but is only 2",
            lambda: s2s.pmap(C.center, in_axes=2)(x8),
        )
        raises(
            ValueError,
            "len(in_axes)=1, len(args)=2",
            lambda: s2s.pmap(shift, in_axes=(0,))(arr(3, 4), x8),
        )
        raises(
            ValueError,
            "cannot split argument 1 evenly over 8 devices",
            lambda: s2s.data_parallel(vg, batch_argnums=(1, 2))(
                params_and_batch()[0], arr(10, 3), arr(10, 2)
            ),
        )


def check_data_parallel_training_step():
    """``data_parallel`` of value_and_grad: batch sharded, parameters replicated, results as on one device."""
    params, x, y = params_and_batch()
    x, y = x.reshape(-1, 3), y.reshape(-1, 2)
    with no_jax_maps():
        parallel = s2s.data_parallel(vg, batch_argnums=(1, 2))
        value, grads = parallel(params, x, y)
        text = parallel.lower(params, x, y).compile().as_text()
    want_value, want_grads = vg(params, x, y)
    close((value, grads), (want_value, want_grads))
    for leaf in jax.tree.leaves((value, grads)):
        spans(leaf)
        assert leaf.sharding.is_fully_replicated
    assert "all-reduce" in text and "f32[4,3]" in text and "f32[32,3]" not in text
    assert parallel.source == vg.source


def check_data_parallel_per_example_outputs_and_2d_mesh():
    """Per-example outputs stay sharded along the batch; a 2-D mesh splits the batch over both axes."""
    w, x = arr(3, 2), arr(16, 3)
    per_example = s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0))
    args = (params_and_batch()[0], arr(16, 4, 3), arr(16, 4, 2))
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    with no_jax_maps():
        out = s2s.data_parallel(s2s.transform(shift), batch_argnums=1)(w, x)
        grads = s2s.data_parallel(per_example, (1, 2), mesh=mesh)(*args)
        want_grads = per_example(*args)
    close(out, np.sin(x) @ w)
    spans(out)
    assert out.sharding.spec[0] == "batch"
    close(grads, want_grads)
    for leaf in jax.tree.leaves(grads):
        spans(leaf)
        assert leaf.sharding.spec[0] == ("data", "model"), leaf.sharding


CHECKS = [
    check_training_step_matches_one_device,
    check_training_step_replicated_out_axes_none,
    check_training_step_compiles_to_all_reduce,
    check_collectives_match_jax_pmap,
    check_axis_index_and_psum,
    check_in_axes_none_and_1_out_axes,
    check_fewer_examples_use_fewer_devices,
    check_errors,
    check_data_parallel_training_step,
    check_data_parallel_per_example_outputs_and_2d_mesh,
]


def main() -> int:
    if jax.device_count() != NDEV:
        print(
            json.dumps(
                {
                    "check": "devices",
                    "ok": False,
                    "detail": f"expected {NDEV} devices (XLA_FLAGS), got {jax.devices()}",
                }
            )
        )
        return 1
    failed = 0
    for check in CHECKS:
        try:
            check()
            report = {"check": check.__name__, "ok": True, "detail": ""}
        except Exception:
            failed += 1
            report = {
                "check": check.__name__,
                "ok": False,
                "detail": traceback.format_exc(),
            }
        print(json.dumps(report), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
