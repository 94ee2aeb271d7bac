"""Loops over a ``range`` whose bounds are traced but whose values lie in a span known when traced.

``for j in range(i + 1, n)`` inside ``for i in range(n)``: compiled, ``i`` is
traced, so the inner range has no length known when traced. The compiler
(``passes/bounded_ranges``) gives it the span of all its values,
``rt.range(i + 1, n, within=(1, n))``, and ``rt.range`` returns a
``BoundedRange``. ``scan`` over one runs every step of the span and keeps the
carry of the steps outside ``range(start, stop, step)`` as it was: a loop of
fixed length, which ``lax.scan`` compiles, whose backward loop (over the same
range) skips the same steps, and which an enclosing compiled loop can run
(the range and its steps' outputs are pytrees that it stacks).

The steps' outputs (a gradient's residuals) are ``SpanSteps``, one per step
of the span, read only by a loop over the same range. Read as values (a list
the loop collects) they are an error: its length would change from step to
step of the enclosing loop.
"""

from __future__ import annotations

import numpy as np

from .located import Refusal
from .trees import tree_leaves, tree_map

COLLECTED = (
    "a loop over `range` whose bounds an enclosing compiled loop's index sets (`range(i + 1, n)`) "
    "cannot collect per-step outputs: their number would change from step to step of the enclosing loop"
)
COLLECTED_HINT = (
    "accumulate into an array of fixed size instead (`out[j] = ...` on a preallocated `np.zeros(n)`), "
    "or run eagerly with backend='numpy'"
)


class BoundedRange:
    """``range(start, stop, step)`` with traced ``start``/``stop``, every value in ``range(low, high)``.

    A JAX pytree (registered on first use): ``start`` and ``stop`` its children.
    """

    integral = True  # its tangent and cotangent are none (``zeros_like_float``)

    def __init__(self, start, stop, step: int, low: int, high: int, examples=None):
        self.start, self.stop, self.step = start, stop, step
        self.low, self.high = low, high
        # batched code's copy for each of ``examples`` examples (``rt.broadcast_batch``): the same range,
        # its values given the batch axis
        self.examples = examples
        _register()

    def broadcast(self, size) -> BoundedRange:
        return BoundedRange(self.start, self.stop, self.step, self.low, self.high, size)

    def span(self) -> np.ndarray:
        """The values the loop visits, in the range's order."""
        values = np.arange(self.low, max(self.low, self.high))
        return values if self.step > 0 else values[::-1]

    def holds(self, j):
        """Whether ``j`` is a value of ``range(start, stop, step)``."""
        if self.step > 0:
            inside = (self.start <= j) & (j < self.stop)
            offset = j - self.start
        else:
            inside = (self.stop < j) & (j <= self.start)
            offset = self.start - j
        return (
            inside if abs(self.step) == 1 else inside & (offset % abs(self.step) == 0)
        )

    def count(self, xp):
        """How many values the range has."""
        step = self.step
        return xp.maximum(0, (self.stop - self.start + step - np.sign(step)) // step)

    def __getitem__(self, k):
        """Step ``k`` of a stack of ranges (an enclosing loop's per-step residuals)."""
        return BoundedRange(
            self.start[k], self.stop[k], self.step, self.low, self.high, self.examples
        )

    def __array__(self, *args, **kwargs):
        # (also what makes it a leaf, not a record, of ``trees``)
        raise TypeError(
            "a range whose bounds are known only at run time is not an array: loop over it"
        )

    __jax_array__ = __array__


class SpanSteps:
    """The outputs of a loop's steps over a ``BoundedRange``'s span (stacked ``values``)."""

    def __init__(self, values):
        self.values = values
        _register()

    def __getitem__(self, k):
        return SpanSteps(tree_map(lambda leaf: leaf[k], self.values))

    def _refuse(self, *args, **kwargs):
        raise Refusal(COLLECTED, COLLECTED_HINT)

    __jax_array__ = __array__ = __len__ = __iter__ = __float__ = _refuse
    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = _refuse
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = __neg__ = _refuse


_registered = []


def _register():
    if _registered:
        return
    import jax

    jax.tree_util.register_pytree_node(
        BoundedRange,
        lambda r: ((r.start, r.stop), (r.step, r.low, r.high, r.examples)),
        lambda aux, children: BoundedRange(*children, *aux),
    )
    jax.tree_util.register_pytree_node(
        SpanSteps, lambda s: ((s.values,), None), lambda _, c: SpanSteps(c[0])
    )
    _registered.append(True)


def stacked(items):
    """Per-step ``BoundedRange``s or ``SpanSteps`` of an enclosing loop, stacked (``collected.stack``)."""
    from .collected import stack

    first = items[0]
    if isinstance(first, SpanSteps):
        return SpanSteps(stack([it.values for it in items]))
    starts, stops = stack([it.start for it in items]), stack([it.stop for it in items])
    return BoundedRange(
        starts, stops, first.step, first.low, first.high, first.examples
    )


def _check_inside(bounds: BoundedRange) -> None:
    """That the range's values lie in its span, when the compiled code runs (the compiler proves it: a
    failure is s2s's error, raised rather than a step skipped)."""
    from .output import _when_known

    def inside(start, stop):
        start, stop = int(np.asarray(start)), int(np.asarray(stop))
        values = range(start, stop, bounds.step)
        if len(values) and (min(values) < bounds.low or max(values) >= bounds.high):
            raise AssertionError(
                f"s2s: range({start}, {stop}, {bounds.step}) leaves the span range({bounds.low}, "
                f"{bounds.high}) the compiler gave it; please report this"
            )

    _when_known(inside, (bounds.start, bounds.stop))


def _own(leaf) -> bool:
    """A loop's own ``BoundedRange``; one an enclosing loop stacked (a residual, read by the inner loop
    of the backward loop's steps) has bounds of one or more axes."""
    return (
        isinstance(leaf, BoundedRange)
        and np.ndim(leaf.start) == np.ndim(leaf.stop) == 0
    )


def has_bounded(xs) -> bool:
    return any(_own(leaf) for leaf in tree_leaves(xs))


def scan_bounded(scan, f, init, xs, length, reverse):
    """``scan(f, init, xs)`` where ``xs`` holds one ``BoundedRange`` of its own: every step of its span,
    the carry kept where a step is not one of the range's. The ``SpanSteps`` in ``xs`` are the outputs of
    a loop over the same range (a gradient's forward loop): their values, one per step.
    """
    import jax
    import jax.numpy as jnp

    from .control import _has_unset, filled

    leaves = list(tree_leaves(xs))
    at = [k for k, leaf in enumerate(leaves) if _own(leaf)]
    bounds = leaves[at[0]]
    if len(at) > 1:
        raise TypeError("a loop cannot zip two ranges whose bounds another loop sets")
    span = bounds.span()
    if bounds.examples is not None:  # each step's value for every example
        span = np.broadcast_to(span[:, None], (len(span), bounds.examples))
    plain = tree_map(
        lambda leaf: (
            span
            if leaf is bounds
            else leaf.values if isinstance(leaf, SpanSteps) else leaf
        ),
        xs,
    )

    def step(carry, x):
        new, y = f(carry, x)
        j = list(tree_leaves(x))[at[0]]
        keep = bounds.holds(j if bounds.examples is None else j[0])
        return jax.tree.map(lambda n, o: jnp.where(keep, n, o), new, carry), y

    if not reverse:  # (the backward loop runs over the same ranges)
        _check_inside(bounds)
    if _has_unset(init):
        first = tree_map(lambda leaf: leaf[0], plain)
        init, check = filled(lambda c: f(c, first)[0], init, True)
        check(bounds.count(jnp) > 0)
    carry, ys = scan(step, init, plain, length, reverse)
    return carry, tree_map(SpanSteps, ys)
