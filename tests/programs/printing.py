"""Functions that print and log as people's NumPy code does (issue 13): ``tests/test_output.py``."""

import logging
import warnings
from warnings import warn

import jax
import numpy as np

logger = logging.getLogger("s2s_tests.model")


def train_step(w, x):
    print("w", np.sum(w), sep=": ")
    h = x
    for i in range(3):
        h = np.tanh(h @ w)
        print(f"step {i}: {np.sum(h):.4f}")
        if i == 1:
            print("halfway")
    loss = np.sum(h**2)
    if loss > 0.01:
        print("loss is large")
    print(f"loss={loss:.5f}")
    return loss


def logged(w, x):
    h = np.tanh(x @ w)
    logger.info("norm %.3f", np.linalg.norm(h))
    logger.debug("never shown at INFO")
    logger.warning(f"mean {np.mean(h):.4f}")
    return np.sum(h**2)


def jax_style(w, x):
    h = np.tanh(x @ w)
    jax.debug.print("sum {}", np.sum(h))
    return np.sum(h**2)


def jax_style_keywords(w, x):
    """The JAX docs' keyword form, fields named, formatted and read twice, beside a positional one."""
    h = np.tanh(x @ w)
    jax.debug.print(
        "{} total={total:.6f} n={n} again={total:.2f}", 7, total=np.sum(h), n=h.shape[0]
    )
    return np.sum(h**2)


def old_style_messages(w, x):
    """printf's ``%`` and ``str.format`` messages, as older NumPy code writes them."""
    h = np.tanh(x @ w)
    loss = np.sum(h**2)
    for epoch in range(2):
        print("epoch %d: loss %.3f" % (epoch, loss * (epoch + 1)))
        print(
            "%5.2f|%-8.3e|%+g|%05.1f|%s|%r|%%" % (loss, loss, -loss, loss, epoch, "a")
        )
    print("steps %d, scale %x" % (loss * 10, 255))
    print(
        "mean {:.4f} of {} items, {name}={v:>8.2f}".format(
            np.mean(h), 2, name="w", v=loss
        )
    )
    logger.info("sum %.2f" % np.sum(h))
    return loss


def checked_inputs(w, x):
    """Library code's ``warnings.warn``: under a test of the data, with a category and a formatted
    message, warned when it runs (``rt.warn``)."""
    if np.any(np.isnan(x)):
        warnings.warn("nan in x", stacklevel=2)
    if np.sum(w**2) > 1.0:
        warn(f"large weights: {np.sum(w ** 2):.2f}", RuntimeWarning, stacklevel=2)
    return np.sum(np.tanh(x @ w) ** 2)
