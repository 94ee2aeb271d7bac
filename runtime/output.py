"""What a transformed function prints or logs, at every call, in call order.

``print(...)``, ``logging.info(...)``, ``logger.warning(...)`` and
``jax.debug.print(...)`` in a user's function become ``rt.debug_print`` and
``rt.log`` statements (``s2s/frontend/output.py``). On NumPy values they print
or log at once; under ``jax.jit`` the array values go through one ordered JAX
debug callback, so compiled code prints each call's values, in program order,
also inside compiled loops and branches. Values that are no arrays (a dict
key in a loop over a dict) are formatted as they are.
"""

from __future__ import annotations

import logging
import string
import sys

import numpy as np

from .trees import uses_jax


class _Formatter(string.Formatter):
    """``str.format``, with a format spec applied to each element of an array (a batch of values), and the
    conversion ``!d`` (printf's ``%d`` of ``"%d" % x``): the value truncated to an integer first.
    """

    def convert_field(self, value, conversion):
        if conversion != "d":
            return super().convert_field(value, conversion)
        if np.ndim(value) > 0:
            return np.trunc(np.asarray(value)).astype(np.int64)
        return int(np.asarray(value))

    def format_field(self, value, spec):
        if spec and np.ndim(value) > 0:
            return np.array2string(
                np.asarray(value), formatter={"all": lambda v: format(v, spec)}
            )
        if spec and np.ndim(value) == 0 and hasattr(value, "item"):
            value = value.item()
        return format(value, spec)


_FORMAT = _Formatter().format


# the checks that failed while compiled code ran: (their exception, the generated file and line that made
# them), read by ``located.failed_check`` (JAX reports a callback's exception as text only)
FAILED: list = []


def _when_known(show, values) -> None:
    """``show(*values)`` now, or, where some values are traced, once the compiled code computes them."""
    traced = [i for i, v in enumerate(values) if uses_jax(v)]
    if not traced and not _tracing():
        show(*values)
        return
    import jax

    where = _generated_line()

    def callback(*known):
        full = list(values)
        for i, value in zip(traced, known):
            full[i] = value
        try:
            show(*full)
        except Exception as exc:
            if where is not None:
                FAILED.append((exc, where))
            raise

    jax.debug.callback(callback, *(values[i] for i in traced), ordered=True)


def _generated_line():
    """``(file, line)`` of the generated code that is running now (tracing), else None."""
    from . import loader

    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename in loader.GENERATED:
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


def _tracing() -> bool:
    """Whether JAX is tracing a function now (a ``print("done")`` with no values must run when the
    compiled code runs, not once when it is traced)."""
    if "jax" not in sys.modules:
        return False
    from jax._src import core  # no public spelling of this question

    return not core.trace_state_clean()


def debug_print(fmt: str, *values) -> None:
    """``print(fmt.format(*values))``."""
    _when_known(lambda *known: print(_FORMAT(fmt, *known)), values)


def log(logger: str | None, level: int, msg: str, *values, style: str = "%") -> None:
    """``logging.getLogger(logger).log(level, msg, *values)`` (``style="{"``: the message ``msg.format(*values)``)."""
    target = logging.getLogger(logger)

    def show(*known):
        if style == "{":
            target.log(level, "%s", _FORMAT(msg, *known))
        else:
            target.log(level, msg, *known)

    _when_known(show, values)


def warn(category: str, fmt: str, *values) -> None:
    """``warnings.warn(fmt.format(*values), category)`` (``category``: the name of one of Python's warning
    classes), when the values are known: under ``jax.jit``, at every call of the compiled code, as Python's
    warning filters let it through."""
    import builtins
    import warnings

    kind = getattr(builtins, category)
    _when_known(
        lambda *known: warnings.warn(_FORMAT(fmt, *known), kind, stacklevel=2), values
    )


def check(ok, fmt: str = "", *values, hint: str | None = None) -> None:
    """``assert ok, fmt.format(*values)``: at once on known values (shapes, NumPy arrays), when the compiled
    code runs on traced ones (the failure then surfaces as JAX's runtime error, which quotes it). With a
    ``hint``, a check s2s wrote: its failure is s2s's refusal (``Refusal``), not the user's assertion.
    """

    def verify(known_ok, *known):
        if not np.all(np.asarray(known_ok)):
            message = _FORMAT(fmt, *known) if fmt else ""
            if hint is not None:
                from .located import Refusal

                raise Refusal(message, hint)
            raise AssertionError(message)

    if not uses_jax(
        ok
    ):  # a fact known now (shapes, dtypes): checked at once, also while tracing
        verify(ok, *values)
    else:
        _when_known(verify, (ok, *values))


RAISED = "__s2s_raised__"  # marks an exception a ``raise`` statement of the user's code raised


def raise_(kind: str, fmt: str = "", *values):
    """``raise kind(message)``: the user's ``raise`` of a built-in exception. A branch that raises under a
    test known only at run time is not traced as raising: ``rt.cond`` checks the test when the compiled
    code runs instead (``runtime.control``)."""
    import builtins

    exc = (
        getattr(builtins, kind)(_FORMAT(fmt, *values))
        if fmt
        else getattr(builtins, kind)()
    )
    setattr(exc, RAISED, True)
    raise exc


def raise_if(test, kind: str, fmt: str = "", *values) -> None:
    """``if test: raise kind(message)`` (a guard): at once on a known test, when the compiled code runs on a
    traced one (the failure then surfaces as JAX's runtime error, which quotes the message). Under
    ``vmap``, any example's test raises."""

    def verify(known_test, *known):
        if np.any(np.asarray(known_test)):
            raise_(kind, fmt, *known)

    if not uses_jax(test):
        verify(test, *values)
    else:
        _when_known(verify, (test, *values))


__all__ = ["check", "debug_print", "log", "raise_", "raise_if"]


def item_is_copy(base, count, item) -> bool:
    """Whether ``item = base[i]`` (``count`` indices) is a copy: a number taken from an array of at most
    ``count`` axes (NumPy gives a scalar), or an immutable number a list holds; not a view of an array,
    nor an array a list or dict holds (the very object)."""
    if isinstance(base, (list, tuple, dict)):
        return isinstance(item, (bool, int, float, complex, np.generic))
    return np.ndim(base) <= count


def is_number(value) -> bool:
    """Whether ``value`` (the result of arithmetic) is a number: NumPy gives a 0-d result as a scalar, which
    an in-place update (``y += v``) rebinds and no list holding ``y`` sees change; an array it changes.
    """
    return np.ndim(value) == 0


def refused(message: str, hint: str):
    """What s2s cannot compute, in a branch that may not run (``if params is None: np.random.randn(...)``):
    the located refusal when it runs, nothing when it does not."""
    from .located import Refusal

    raise Refusal(message, hint)
