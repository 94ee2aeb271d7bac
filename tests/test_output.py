"""``print``, ``logging`` and ``jax.debug.print`` inside transformed functions (issue 13).

They print at every call, in program order, with the runtime values (under
``jax.jit`` through ordered debug callbacks), on both backends, under ``grad``,
``vmap`` and ``jvp``; a branch or loop that only prints is kept. The oracle is
what the plain NumPy function prints.
"""

import logging
import warnings

import jax
import numpy as np
import pytest

import s2s
from tests.programs import printing as P

jax.config.update("jax_enable_x64", True)

BACKENDS = ("xla", "numpy")
W = np.eye(2) * 0.5
X = np.ones(2)


def _printed(capsys, fn, *args):
    capsys.readouterr()
    fn(*args)
    return capsys.readouterr().out


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_prints_what_the_function_prints_at_every_call(capsys, backend):
    want = _printed(capsys, P.train_step, W, X)
    assert "halfway" in want and "loss is large" in want
    grad = s2s.grad(P.train_step, backend=backend)
    for _ in range(2):  # compiled once, printed at each call
        assert _printed(capsys, grad, W, X) == want


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_prints_once_per_call(capsys, backend):
    want = _printed(capsys, P.train_step, W, X)
    assert _printed(capsys, s2s.jvp, P.train_step, (W, X), (W, X)) == want


def test_vmap_prints_every_example(capsys):
    xs = np.stack([X, 2 * X])
    batched = s2s.vmap(P.train_step, in_axes=(None, 0))
    out = _printed(capsys, batched, W, xs)
    first = _printed(capsys, P.train_step, W, xs[0]).splitlines()
    second = _printed(capsys, P.train_step, W, xs[1]).splitlines()
    step0 = next(line for line in out.splitlines() if line.startswith("step 0"))
    assert step0 == f"step 0: [{first[1].split(': ')[1]} {second[1].split(': ')[1]}]"


@pytest.mark.parametrize("backend", BACKENDS)
def test_logging_goes_through_the_logger_at_its_level(caplog, backend):
    with caplog.at_level(logging.INFO, logger="s2s_tests.model"):
        P.logged(W, X)
        want = [(r.levelno, r.getMessage()) for r in caplog.records]
        caplog.clear()
        s2s.grad(P.logged, backend=backend)(W, X)
        got = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert got == want and len(want) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_debug_print(capsys, backend):
    out = _printed(capsys, s2s.grad(P.jax_style, backend=backend), W, X)
    label, value = out.split()
    assert label == "sum" and float(value) == pytest.approx(
        np.sum(np.tanh(X @ W)), rel=1e-12
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_debug_print_with_keywords(capsys, backend):
    out = _printed(capsys, s2s.grad(P.jax_style_keywords, backend=backend), W, X)
    total = np.sum(np.tanh(X @ W))
    assert out == f"7 total={total:.6f} n={X.shape[0]} again={total:.2f}\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_printf_and_format_messages_print_as_python(capsys, caplog, backend):
    """``"%d ... %.3f" % (...)`` (printf's ``%d`` of a float truncates it) and ``"{:.4f}".format(...)``."""
    with caplog.at_level(logging.INFO, logger="s2s_tests.model"):
        want = _printed(capsys, P.old_style_messages, W, X)
        logged = [r.getMessage() for r in caplog.records]
        caplog.clear()
        assert (
            _printed(capsys, s2s.grad(P.old_style_messages, backend=backend), W, X)
            == want
        )
        assert [r.getMessage() for r in caplog.records] == logged and logged


@pytest.mark.parametrize("backend", BACKENDS)
def test_warnings_warn_when_the_code_runs(backend):
    def warned(fn, *args):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(*args)
        return [(c.category, str(c.message)) for c in caught]

    nan_x = np.array([np.nan, 1.0])
    for args in ((W * 3, X), (W * 0.1, nan_x)):
        want = warned(P.checked_inputs, *args)
        assert len(want) == 1
        assert warned(s2s.grad(P.checked_inputs, backend=backend), *args) == want
