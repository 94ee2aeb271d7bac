"""``s2s.pmap`` and ``s2s.data_parallel``: the multi-device checks run in a subprocess with 8 CPU devices
(``tests/pmap_checks.py``); here, what one device can show: errors, ``.source``, one-device runs.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import s2s
from tests import pmap_checks as K
from tests.programs import collectives as C

ROOT = Path(__file__).resolve().parent.parent


def test_multi_device_checks():
    """Every check of ``tests/pmap_checks.py`` passes on 8 devices (the training step, the JAX oracle, ...)."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    ).strip()
    env["JAX_PLATFORMS"] = "cpu"
    done = subprocess.run(
        [sys.executable, "-m", "tests.pmap_checks"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    reports = []
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            reports.append(json.loads(line))
    failed = [r for r in reports if not r["ok"]]
    detail = "\n".join(f"{r['check']}:\n{r['detail']}" for r in failed)
    assert not failed, detail or done.stderr[-4000:]
    assert [r["check"] for r in reports] == [c.__name__ for c in K.CHECKS], (
        done.stdout[-4000:] + done.stderr[-4000:]
    )
    assert done.returncode == 0, done.stderr[-4000:]


def one(*shape):
    return np.asarray(np.random.default_rng(0).normal(size=shape), np.float32)


def test_pmap_on_one_device_is_the_batched_module():
    params, x, y = K.params_and_batch(n=1)
    spec = dict(axis_name="batch", in_axes=(None, 0, 0))
    step = s2s.pmap(K.train_step, **spec)
    got = step(params, x, y)
    want = s2s.vmap(K.train_step, **spec)(params, x, y)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    assert step.source == s2s.vmap(K.train_step, **spec).source
    assert "def train_step_batched(" in step.source
    assert "pmap(" not in step.source and "vmap(" not in step.source


def test_data_parallel_on_one_device_is_the_function():
    params, x, y = K.params_and_batch(n=1)
    x, y = x[0], y[0]
    got = s2s.data_parallel(K.vg, batch_argnums=(1, 2), devices=jax.devices())(
        params, x, y
    )
    want = K.vg(params, x, y)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_a_changed_global_is_seen_as_by_the_function(monkeypatch):
    """Both run the module s2s generates again when a value it baked in changes (``freshness``)."""
    x = one(1, 3)
    pm = s2s.pmap(K.scaled)
    dp = s2s.data_parallel(s2s.transform(K.scaled))
    np.testing.assert_allclose(pm(x), 2.0 * x)
    np.testing.assert_allclose(dp(x), 2.0 * x)
    monkeypatch.setattr(K, "SCALE", 3.0)
    np.testing.assert_allclose(pm(x), 3.0 * x)
    np.testing.assert_allclose(dp(x), 3.0 * x)


@pytest.mark.parametrize(
    "make, kind, match",
    [
        (
            lambda: s2s.pmap(C.center, "batch")(one(2, 3)),
            ValueError,
            "requires 2 logical devices, but only 1 XLA devices are available",
        ),
        (
            lambda: s2s.pmap(C.center, devices=jax.devices())(one(2, 3)),
            ValueError,
            "Got axis_size=2, num_local_devices=1",
        ),
        (
            lambda: s2s.pmap(K.shift)(one(1, 3, 4), one(2, 3)),
            ValueError,
            "pmap got inconsistent sizes for array axes to be mapped:\n"
            "  * one axis had size 1: axis 0 of argument w of type float32[1,3,4];\n"
            "  * one axis had size 2: axis 0 of argument x of type float32[2,3]",
        ),
        (
            lambda: s2s.pmap(K.shift, in_axes=None)(one(3, 4), one(1, 3)),
            ValueError,
            "pmap requires at least one argument with a mapped axis",
        ),
        (
            lambda: s2s.pmap(C.center, in_axes=-3)(one(1, 3)),
            ValueError,
            "pmap was requested to map its argument along axis -3, which implies that its rank should be "
            "at least 3, but is only 2 (its shape is (1, 3))",
        ),
        (
            lambda: s2s.pmap(C.center)(3.0),
            ValueError,
            "its rank should be at least 1, but is only 0",
        ),
        (
            lambda: s2s.pmap(K.shift, in_axes=(None, 0, 0))(one(3, 4), one(1, 3)),
            ValueError,
            "len(in_axes)=3, len(args)=2",
        ),
        (
            lambda: s2s.pmap(K.shift, in_axes=(None, {"a": 0}))(one(3, 4), one(1, 3)),
            ValueError,
            "pmap in_axes specification must be a tree prefix of the corresponding value",
        ),
        (
            lambda: s2s.pmap(C.center)(one(0, 3)),
            ValueError,
            "mapped axis of size 0",
        ),
        (
            lambda: s2s.pmap(K.shift, in_axes=(None, 0), out_axes=None)(
                one(3, 4), one(1, 3)
            ),
            s2s.S2SError,
            "mapped output but out_axes is None",
        ),
        (lambda: s2s.pmap(C.center, backend="numpy"), ValueError, "backend must be"),
        (lambda: s2s.pmap(C.center, 0), TypeError, "axis_name must be a string"),
        (
            lambda: s2s.pmap(C.center, in_axes="a"),
            TypeError,
            "pmap in_axes must be an int, None, or (nested) container",
        ),
        (
            lambda: s2s.pmap(C.center, out_axes=1.5),
            TypeError,
            "pmap out_axes must be an int, None, or (nested) container",
        ),
        (lambda: s2s.pmap(C.center, devices=[]), ValueError, "empty list of devices"),
        (
            lambda: s2s.pmap(C.center, devices=jax.devices() * 2),
            ValueError,
            "the same device twice",
        ),
        (
            lambda: s2s.data_parallel(K.vg, batch_argnums="x"),
            TypeError,
            "batch_argnums must be an int or a non-empty tuple of ints",
        ),
        (
            lambda: s2s.data_parallel(K.vg, batch_argnums=3)(1.0, one(2)),
            ValueError,
            "batch_argnums 3 is out of range for a call with 2 positional arguments",
        ),
        (
            lambda: s2s.data_parallel(
                K.vg, devices=jax.devices(), mesh=s2s.data_parallel(K.vg).mesh
            ),
            ValueError,
            "devices or a mesh, not both",
        ),
        (
            lambda: s2s.data_parallel(K.vg, batch_argnums=1)(
                K.params_and_batch(1)[0], np.float32(1.0), one(2)
            ),
            ValueError,
            "every leaf of a batch argument needs a batch axis",
        ),
    ],
)
def test_errors_without_devices(make, kind, match):
    with pytest.raises(kind) as info:
        make()
    assert match in str(info.value)
