"""Compiled loops whose first steps change the carry's shape: those steps run on their own, the rest rolled.

``total = 0`` then ``for x in xs: total = total + x`` (or a recurrence ``b1, b2 = 2 * x * b1 - b2 +
c[k], b1`` started from ``0.0``) carries a number into the first step and an array out of it, which no
``lax.scan`` can carry. ``peeled(body, init, xs, length, reverse)`` runs the first steps on their own
until a step keeps the carry's shapes (at most ``MAX_PEELED``), then the others in one ``lax.scan``:
exactly NumPy's loop, with only those steps written out.

The steps' outputs (a gradient's residuals hold the carry too) stack where their shapes agree; a leaf
whose first steps' values are shaped unlike the others' is a ``PeeledLeaf``, which only a scan reads:
the backward loop over it (``scan_peeled``) runs the same steps on their own and rolls the others; read
as a sequence (a list the loop collected) it is its steps' values in order.
"""

from __future__ import annotations

import numpy as np

from . import step_constants
from .collected import stack
from .iteration import Elements
from .located import Refusal
from .trees import tree_leaves, tree_map

# steps run on their own before a compiled loop's carry must keep its shapes
MAX_PEELED = 4


class PeeledLeaf:
    """One per-step output of a loop whose ``first`` steps (values in step order) ran on their own and are
    shaped unlike the ``rest`` (stacked); ``at_end``: those steps are the last ones (a reversed loop).
    """

    def __init__(self, first: list, rest, at_end: bool):
        self.first, self.rest, self.at_end = first, rest, at_end

    def rows(self) -> int:
        """How many steps ``rest`` stacks (a part of outputs: the rows of its leaves)."""
        leaves = [] if self.rest is None else list(tree_leaves(self.rest))
        return int(np.shape(leaves[0])[0]) if leaves else 0

    def steps(self) -> list:
        """The values of every step, in step order."""
        rest = [tree_map(lambda a, i=i: a[i], self.rest) for i in range(self.rows())]
        return [*rest, *self.first] if self.at_end else [*self.first, *rest]

    def with_steps(self, values: list) -> PeeledLeaf:
        """A ``PeeledLeaf`` split like this one holding ``values`` (one per step: their cotangents)."""
        k = len(self.first)
        first, rest = (
            (values[-k:], values[:-k]) if self.at_end else (values[:k], values[k:])
        )
        return PeeledLeaf(list(first), stack(rest) if rest else None, self.at_end)

    def __len__(self):
        return len(self.steps())

    def __iter__(self):
        return iter(self.steps())

    def __getitem__(self, i):
        return self.steps()[i]

    def __jax_array__(self, *args, **kwargs):
        raise Refusal(
            "the values a compiled loop collects change shape in its first steps (a carry that starts as "
            "a number and becomes an array): they cannot be stacked into one array",
            "start the carry with its final shape (`total = np.zeros_like(xs[0])`), or run eagerly "
            "with backend='numpy'",
        )

    __array__ = __jax_array__


def has_peeled(xs) -> bool:
    return any(isinstance(leaf, PeeledLeaf) for leaf in tree_leaves(xs))


def _step(xs, i):
    return tree_map(lambda leaf: leaf[i], xs)


def peeled(body, init, xs, length, reverse, settled_carry, ran=None):
    """``lax.scan(body, init, xs)`` of a body whose first step changes the carry's shapes (see the module);
    ``settled_carry(step, carry)`` gives ``(carry, reshaped)`` for the next step; ``ran``: the first
    step's ``(carry, output)`` where the caller ran it already. None where the steps' outputs differ in
    structure."""
    import jax

    n = length if length is not None else len(jax.tree.leaves(xs)[0])
    if n == 0:
        return jax.lax.scan(body, init, xs, length=length, reverse=reverse)
    order = list(reversed(range(n))) if reverse else list(range(n))
    carry, firsts = init, []
    for i in order[:MAX_PEELED]:
        if ran is not None and not firsts:
            carry, y = ran
        else:
            carry, y = body(carry, _step(xs, i))
        firsts.append(y)
        if len(firsts) == n:
            break
        following = _step(xs, order[len(firsts)])
        carry, reshaped = settled_carry(lambda c: body(c, following)[0], carry)
        if not reshaped:
            break
    k = len(firsts)
    # every step ran on its own: outputs of other structures stay the steps' own
    if k == n:
        if not _alike(firsts, None):
            return carry, Elements(firsts[::-1] if reverse else firsts)
        return carry, _joined(firsts, None, reverse)
    rest = tree_map(lambda a: a[: n - k] if reverse else a[k:], xs)
    carry, ys = step_constants.scan(body, carry, rest, length=n - k, reverse=reverse)
    return carry, _joined(firsts, ys, reverse)


def _alike(firsts, rest) -> bool:
    """Whether the steps run on their own, and the others' stacked outputs, have one structure."""
    import jax

    structure = jax.tree.structure(firsts[0])
    return all(jax.tree.structure(y) == structure for y in firsts) and (
        rest is None or jax.tree.structure(rest) == structure
    )


def _joined(firsts, rest, at_end):
    """The outputs of the steps run on their own (in the order they ran) and of the others (stacked), as
    one tree in step order: stacked where shapes agree, ``PeeledLeaf`` where not; where their structures
    differ (a settings dict the first step fills: ``config.setdefault(...)``), part by part
    (``_joined_by_parts``)."""
    import jax
    import jax.numpy as jnp

    if not _alike(firsts, rest):
        return _joined_by_parts(firsts, rest, at_end)
    in_order = firsts[::-1] if at_end else firsts
    structure = jax.tree.structure(firsts[0])
    columns = zip(*(jax.tree.leaves(y) for y in in_order))
    others = (
        jax.tree.leaves(rest) if rest is not None else [None] * structure.num_leaves
    )
    out = []
    for values, stacked in zip(columns, others):
        if any(isinstance(v, PeeledLeaf) for v in values):
            # a loop inside whose own first steps ran on their own (an accumulator started as a number in
            # a nested loop): kept per step, which the backward loop reads as this one's
            out.append(PeeledLeaf(list(values), stacked, at_end))
            continue
        shapes = {np.shape(v) for v in values}
        if _held(stacked):
            # a value the rolled steps share, known to Python (``x is None``'s False): kept so, the peeled
            # steps' own beside it where they differ
            count = len(values) + len(stacked)
            same = all(
                isinstance(v, (bool, int, float, np.generic, np.ndarray))
                and np.array_equal(np.asarray(v), stacked[0])
                for v in values
            )
            out.append(
                np.broadcast_to(stacked[0], (count, *np.shape(stacked[0])))
                if same
                else PeeledLeaf(list(values), stacked, at_end)
            )
            continue
        if stacked is not None and all(_decided(v) for v in values):
            # a test Python decided on the peeled steps (``best is None`` while ``best`` was None): their
            # backward steps read it as decided there, the rolled ones as the traced values they are
            out.append(PeeledLeaf(list(values), stacked, at_end))
            continue
        text = _one_text(values, stacked)
        if (
            text is not None
        ):  # a string every step holds (a mode): one per step, zero-strided
            count = len(values) + (0 if stacked is None else len(stacked))
            out.append(np.broadcast_to(np.asarray(text), (count,)))
        elif stacked is None and len(shapes) == 1:
            out.append(jnp.stack([jnp.asarray(v) for v in values]))
        elif stacked is not None and shapes == {np.shape(stacked)[1:]}:
            own = jnp.stack([jnp.asarray(v, stacked.dtype) for v in values])
            out.append(jnp.concatenate([stacked, own] if at_end else [own, stacked]))
        elif stacked is None:
            # every step ran on its own, each value its own shape (a list of layers' activations): the
            # items as a Python list is, visited one by one where they are read
            out.append(Elements(list(values)))
        else:
            out.append(PeeledLeaf(list(values), stacked, at_end))
    return jax.tree.unflatten(structure, out)


def _decided(value) -> bool:
    """A truth value Python holds (a bool, or NumPy's bools: a batch's test every example shares)."""
    return type(value) is bool or (
        isinstance(value, np.ndarray) and value.dtype == np.dtype(bool)
    )


def _held(stacked) -> bool:
    """Whether stacked outputs are one value every step shares (``step_constants.restored``'s)."""
    return (
        isinstance(stacked, np.ndarray)
        and stacked.ndim > 0
        and len(stacked) > 0
        and stacked.strides[0] == 0
    )


def _joined_by_parts(firsts, rest, at_end):
    """Outputs of differing structures joined where their containers agree (tuples and lists of one
    length, dicts of the same keys: part by part), a ``PeeledLeaf`` of the steps' whole parts where not
    (only a backward loop reads them, step by step)."""
    in_order = firsts[::-1] if at_end else firsts
    trees = [*in_order, *([] if rest is None else [rest])]
    head = trees[0]
    # (a step run on its own gives a ``Zipped`` item's cotangent where the rolled steps give a tuple)
    if isinstance(head, (tuple, list)) and all(
        isinstance(t, (tuple, list))
        and isinstance(t, tuple) == isinstance(head, tuple)
        and len(t) == len(head)
        for t in trees
    ):
        parts = [
            _joined([f[i] for f in firsts], None if rest is None else rest[i], at_end)
            for i in range(len(head))
        ]
        return type(head)(parts)
    if type(head) is dict and all(
        type(t) is dict and t.keys() == head.keys() for t in trees
    ):
        return {
            key: _joined(
                [f[key] for f in firsts], None if rest is None else rest[key], at_end
            )
            for key in head
        }
    return PeeledLeaf(list(in_order), rest, at_end)


def _one_text(values, stacked):
    """The string every step's output holds at a leaf (the peeled steps' ``values``, the others'
    ``stacked`` rows), else None."""
    if not isinstance(values[0], str) or any(v != values[0] for v in values):
        return None
    if stacked is not None and not (
        np.asarray(stacked).dtype.kind == "U"
        and np.all(np.asarray(stacked) == values[0])
    ):
        return None
    return values[0]


def scan_peeled(scan, f, init, xs, reverse):
    """``scan(f, init, xs, reverse=reverse)`` over sequences holding ``PeeledLeaf``s (a backward loop over
    a peeled loop's residuals): the peeled steps on their own, before or after the others rolled.
    """
    leaves = [leaf for leaf in tree_leaves(xs) if isinstance(leaf, PeeledLeaf)]
    k, at_end = len(leaves[0].first), leaves[0].at_end
    n = k + leaves[0].rows()
    own = list(range(n - k, n)) if at_end else list(range(k))

    def step_of(leaf, i):
        if isinstance(leaf, PeeledLeaf):
            return leaf.first[own.index(i)]
        return leaf[i]

    def rest_of(leaf):
        if isinstance(leaf, PeeledLeaf):
            return leaf.rest
        part = leaf[: n - k] if at_end else leaf[k:]
        if isinstance(part, Elements) and len({np.shape(v) for v in part.items}) == 1:
            return stack(
                part.items
            )  # per-step values (a collected list's cotangents), rolled again
        return part

    first_order = own[::-1] if reverse else own
    ys = {}
    # the peeled steps run first where the scan meets them first
    peeled_first = at_end == reverse
    carry, rest_ys = init, None

    def rolled(carry):
        if n == k:  # every step ran on its own
            return carry, None
        return scan(f, carry, tree_map(rest_of, xs), reverse=reverse)

    if not peeled_first:
        carry, rest_ys = rolled(carry)
    for i in first_order:
        carry, ys[i] = f(carry, tree_map(lambda leaf: step_of(leaf, i), xs))
    if peeled_first:
        carry, rest_ys = rolled(carry)
    # (``_joined`` reads the peeled steps' outputs last step first where they are at the end, as the
    # forward loop runs them, whatever order this loop ran them in)
    ran = [ys[i] for i in (own[::-1] if at_end else own)]
    if all(y is None for y in ran) and rest_ys is None:
        return carry, None
    return carry, _joined(ran, rest_ys, at_end)
