"""Reverse mode through ``while`` loops: the forward loop records checkpoints, the backward loop recomputes.

A ``while`` loop's trip count is known only when it ends, and a compiled
(XLA) program needs its buffers' sizes up front, so the forward pass cannot
stack one residual per step the way ``scan`` does. Instead
``while_loop_with_tape`` keeps the loop's *carry* at every ``stride``-th step
in ``slots`` preallocated slots, doubling the stride (and dropping every
other checkpoint) whenever the slots fill up: no hint about the trip count is
needed. ``while_loop_reverse`` then walks the checkpoints backwards; for each
segment between two checkpoints it recomputes the segment's carries into a
second buffer of ``slots`` carries and runs the step's backward function on
each, last step first, recomputing that step's residuals from its carry.

Cost for ``n`` steps, where ``F`` is one forward step and ``B`` one backward step:

- ``n <= slots``: time ``n*F`` forward, ``n*(F + B)`` backward; memory ``2*slots`` carries.
- ``slots < n <= slots**2``: one more ``n*F`` in the backward pass (the segments' recomputation).
- beyond: segments longer than ``slots`` recompute each carry from the nearest inner checkpoint,
  about ``n * n / (2 * slots**2)`` extra forward steps.

``slots`` is the largest power of two (at most ``MAX_SLOTS``) whose two buffers
fit in ``CHECKPOINT_BYTES``; set ``s2s.runtime.checkpoints.CHECKPOINT_BYTES``
before the first call to trade memory for recomputation.

A loop over ``range`` with traced bounds (``rt.scan`` over a ``DynamicRange``)
is such a loop too: ``range_with_tape`` runs it, and its per-step residuals
are ``TapeLeaf`` placeholders that ``scan_tape`` (the backward ``rt.scan``)
recomputes the same way.

On NumPy values the loop runs as plain Python: every carry is kept (a list),
and the backward pass recomputes each step's residuals from its carry.
"""

from __future__ import annotations

import numpy as np

from .arrays import _is_jax
from .iteration import Elements
from .trees import tree_leaves, uses_jax

CHECKPOINT_BYTES = 256 * 2**20
MAX_SLOTS = 1024


def while_loop_with_tape(cond_fn, body_fn, init):
    """``while cond_fn(carry): carry = body_fn(carry)[0]``; returns ``(carry, tape)`` for ``while_loop_reverse``.

    ``body_fn`` returns ``(new_carry, residuals)``; the residuals are dropped
    here (recomputed by the backward pass), so XLA removes their computation.
    """
    from .control import filled

    traced = uses_jax(init) or _is_jax(cond_fn(init))
    init, check = filled(lambda carry: body_fn(carry)[0], init, traced)
    if check is not None:
        check(cond_fn(init))
    if not traced:
        carry, carries = init, []
        while bool(np.asarray(cond_fn(carry))):
            carries.append(carry)
            carry = body_fn(carry)[0]
            # the body read traced values: compiled from this step on
            if uses_jax(carry):
                from .control import settled_carry

                carry, _ = settled_carry(lambda c: body_fn(c)[0], carry)
                carry, tape = _jax_forward(cond_fn, body_fn, carry)
                return carry, Peeled(Elements(carries), tape)
        return carry, Elements(carries)
    return _jax_forward(cond_fn, body_fn, init)


class Peeled:
    """The tape of a ``while`` loop whose first steps ran in Python (their carries, ``first``) before a
    step computed traced values and the rest ran compiled (``rest``, a checkpointed tape). A JAX pytree
    (registered on first use), so a loop around the ``while`` can keep it per step.
    """

    def __init__(self, first: Elements, rest):
        self.first, self.rest = first, rest
        _register_peeled()


_registered = []


def _register_peeled():
    if _registered:
        return
    import jax

    jax.tree_util.register_pytree_node(
        Peeled,
        lambda t: ((tuple(t.first.items), t.rest), None),
        lambda _, children: Peeled(Elements(list(children[0])), children[1]),
    )
    _registered.append(True)


def while_loop_reverse(body_fn, body_bwd, carry_bar, tape):
    """The backward pass of a ``while`` loop: ``carry_bar = body_bwd(carry_bar, residuals_k)`` for k = n-1 ... 0.

    ``residuals_k`` is ``body_fn(carry_k)[1]``, recomputed from the tape.
    """
    if isinstance(tape, Peeled):
        carry_bar = _jax_reverse(body_fn, body_bwd, carry_bar, tape.rest)
        tape = tape.first
    if isinstance(tape, Elements):
        for carry in reversed(tape.items):
            carry_bar = body_bwd(carry_bar, body_fn(carry)[1])
        return carry_bar
    return _jax_reverse(body_fn, body_bwd, carry_bar, tape)


class TapeLeaf:
    """One per-step output of a loop over a traced ``range``: never stacked, recomputed by the backward loop.

    Read as a value (a list the loop collected, stacked or summed after it), it is the ``Refusal`` that
    says why (JAX's own error names the class: ``located.COLLECTED`` reads it so).
    """

    def __init__(self, loop, index):
        self.loop, self.index = loop, index

    def _refuse(self, *args, **kwargs):
        from .located import COLLECTED, Refusal

        raise Refusal(*COLLECTED)

    __array__ = __float__ = __int__ = __bool__ = __len__ = __iter__ = __getitem__ = (
        _refuse
    )
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __neg__ = _refuse
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = __pow__ = __rpow__ = _refuse


def range_with_tape(cond_fn, body_fn, init):
    """A taped ``while`` loop whose residuals ``(i, outputs)`` stand for a scan's per-step outputs, as ``TapeLeaf``s."""
    import jax

    carry, tape = _jax_forward(cond_fn, body_fn, init)
    outputs = jax.eval_shape(lambda: body_fn(init)[1][1])
    leaves, structure = jax.tree.flatten(outputs)
    loop = (body_fn, tape)
    return carry, structure.unflatten([TapeLeaf(loop, j) for j in range(len(leaves))])


def has_tape(xs) -> bool:
    return any(isinstance(leaf, TapeLeaf) for leaf in tree_leaves(xs))


REVERSE_TWICE_MESSAGE = (
    "reverse mode through the backward loop of a loop over `range` with bounds known only at run time "
    "(the gradient of a gradient) is not supported: take second derivatives forward over reverse "
    "(s2s.hessian, or s2s.jvp of s2s.grad), or pass the bound as a Python int"
)


NESTED_MESSAGE = (
    "reverse mode through a loop over `range` with bounds known only at run time, inside another loop or a "
    "branch, is not supported: write that loop as a `while` loop (`j = 0`, `while j < n:`, `j = j + 1`), or "
    "pass the bound as a Python int"
)


def scan_tape(f, init, xs):
    """The backward ``rt.scan`` of a loop over a traced ``range``: ``f`` over its steps, last first, residuals recomputed.

    Returns ``(carry, ys)`` like ``rt.scan``. The steps' outputs cannot be
    stacked (their number is known only at run time): where ``f`` has some (it
    is the forward loop of a gradient of this backward loop), a ``TypeError``
    says so; else ``ys`` is the structure of one step's outputs (``None``, ``()``).
    """
    import jax

    from .iteration import DynamicRange

    body_fn, tape = next(
        leaf for leaf in tree_leaves(xs) if isinstance(leaf, TapeLeaf)
    ).loop

    def item_of(residuals):
        i, outputs = residuals
        values = jax.tree.leaves(outputs)
        return jax.tree.map(
            lambda leaf: (
                values[leaf.index]
                if isinstance(leaf, TapeLeaf)
                else i if isinstance(leaf, DynamicRange) else leaf
            ),
            xs,
        )

    def step_bwd(carry_bar, residuals):
        return f(carry_bar, item_of(residuals))[0]

    first = _get(tape[2], 0)  # a carry of the forward loop: the shapes every step sees
    ys = jax.eval_shape(lambda: f(init, item_of(body_fn(first)[1]))[1])
    if jax.tree.leaves(ys):
        raise TypeError(REVERSE_TWICE_MESSAGE)
    return _jax_reverse(body_fn, step_bwd, init, tape), ys


# --- compiled (JAX) ------------------------------------------------------------------------


def _slots(carry) -> int:
    size = sum(
        np.dtype(leaf.dtype).itemsize * int(np.prod(leaf.shape))
        for leaf in tree_leaves(carry)
    )
    fit = max(2, CHECKPOINT_BYTES // max(1, 2 * size))
    return int(min(MAX_SLOTS, 2 ** int(np.log2(fit))))


def _buffer(carry, slots):
    import jax
    import jax.numpy as jnp

    return jax.tree.map(lambda leaf: jnp.zeros((slots, *leaf.shape), leaf.dtype), carry)


def _put(buffer, i, carry):
    import jax

    return jax.tree.map(lambda buf, leaf: buf.at[i].set(leaf), buffer, carry)


def _get(buffer, i):
    import jax

    return jax.tree.map(lambda buf: buf[i], buffer)


def _jax_forward(cond_fn, body_fn, init):
    import jax
    import jax.numpy as jnp

    # weak Python scalars take the body's types
    types = jax.eval_shape(lambda carry: body_fn(carry)[0], init)
    init = jax.tree.map(lambda leaf, t: jnp.asarray(leaf, t.dtype), init, types)
    slots = _slots(init)

    def thin(buffer):  # keep every other checkpoint: the stride doubles
        return jax.tree.map(
            lambda buf: jnp.concatenate([buf[0::2], jnp.zeros_like(buf[: slots // 2])]),
            buffer,
        )

    def step(state):
        k, stride, carry, buffer = state
        full = k == slots * stride
        buffer, stride = jax.lax.cond(
            full, lambda: (thin(buffer), 2 * stride), lambda: (buffer, stride)
        )
        keep = k % stride == 0
        slot = jnp.minimum(k // stride, slots - 1)
        buffer = jax.tree.map(
            lambda buf, leaf: buf.at[slot].set(jnp.where(keep, leaf, buf[slot])),
            buffer,
            carry,
        )
        return k + 1, stride, body_fn(carry)[0], buffer

    start = (jnp.asarray(0), jnp.asarray(1), init, _buffer(init, slots))
    n, stride, carry, buffer = jax.lax.while_loop(
        lambda state: cond_fn(state[2]), step, start
    )
    return carry, (n, stride, buffer)


def _jax_reverse(body_fn, body_bwd, carry_bar, tape):
    import jax

    n, stride, buffer = tape
    segments = (n + stride - 1) // stride

    def segment(j, state):  # segments last to first
        carry_bar, inner = state
        j = segments - 1 - j
        length = jax.numpy.minimum(stride, n - j * stride)
        return _sweep(body_fn, body_bwd, carry_bar, inner, _get(buffer, j), length)

    # n <= slots: a checkpoint per step, nothing to recompute but residuals
    def every_carry_kept(
        carry_bar,
    ):
        def step(i, carry_bar):
            return body_bwd(carry_bar, body_fn(_get(buffer, n - 1 - i))[1])

        return jax.lax.fori_loop(0, n, step, carry_bar)

    def segmented(carry_bar):
        # one buffer for every segment's carries
        inner = jax.tree.map(jax.numpy.zeros_like, buffer)
        return jax.lax.fori_loop(0, segments, segment, (carry_bar, inner))[0]

    return jax.lax.cond(stride == 1, every_carry_kept, segmented, carry_bar)


def _sweep(body_fn, body_bwd, carry_bar, buffer, start, length):
    """Backward through ``length`` steps from carry ``start``, its carries recomputed into ``buffer``'s slots.

    Returns ``(carry_bar, buffer)``: the buffer is reused by the next segment.
    """
    import jax
    import jax.numpy as jnp

    slots = jax.tree.leaves(buffer)[0].shape[0]
    stride = jnp.maximum(1, (length + slots - 1) // slots)

    def advance(carry, steps):
        return jax.lax.fori_loop(0, steps, lambda _, c: body_fn(c)[0], carry)

    # the carry after step k goes to slot (k + 1) // stride when it starts a segment
    def fill(k, state):
        carry, buffer = state
        carry = body_fn(carry)[0]
        keep = (k + 1) % stride == 0
        slot = (k + 1) // stride
        buffer = jax.tree.map(
            lambda buf, leaf: buf.at[slot].set(jnp.where(keep, leaf, buf[slot])),
            buffer,
            carry,
        )
        return carry, buffer

    buffer = _put(buffer, 0, start)
    last = (length - 1) // stride  # the slot of the last checkpoint needed
    _, buffer = jax.lax.fori_loop(0, last * stride, fill, (start, buffer))

    def step(i, carry_bar):  # steps last to first
        k = length - 1 - i
        carry = advance(_get(buffer, k // stride), k % stride)
        return body_bwd(carry_bar, body_fn(carry)[1])

    return jax.lax.fori_loop(0, length, step, carry_bar), buffer
