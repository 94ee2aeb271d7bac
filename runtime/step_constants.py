"""Values a compiled loop's steps all share, kept known to Python instead of traced.

``jax.lax.scan`` traces its body once, so a value the body computes from Python numbers alone (a slice's
width ``stride * Ho``, a count) is the same at every step. Stacked as a step's output it would become a
traced array, and a backward loop that slices it again would get a traced width where the forward step had
a Python int: ``x[i:i + w]`` then needs a size known only when the code runs.

``recording(body)`` notes which of a step's output leaves are NumPy or Python values (not traced);
``restored(ys, record)`` gives each of them back as ``np.broadcast_to(value, (n, ...))``: the stacked
value, still known to Python, with a zero stride along the steps. ``held_apart(xs, body)`` hands a loop's
input leaves with a zero stride along the steps (such values, or the user's own ``np.broadcast_to``) to
every step as they are, row 0, known to Python, instead of slicing them into traced values. The values
are exactly those ``lax.scan`` would have computed: only whether Python knows them changes.
"""

from __future__ import annotations

import numpy as np

from .arrays import _is_jax


def _is_known(leaf) -> bool:
    """A value Python holds (a number, a NumPy value), not a traced or JAX array."""
    return isinstance(leaf, (bool, int, float, np.ndarray, np.generic)) and not _is_jax(
        leaf
    )


def recording(body):
    """``(body', record)``: ``body`` noting, in ``record``, the leaves of its output ``y`` Python holds."""
    import jax

    record = {}

    def step(carry, x):
        carry, y = body(carry, x)
        leaves = jax.tree.leaves(y)
        record.clear()
        record.update({i: leaf for i, leaf in enumerate(leaves) if _is_known(leaf)})
        return carry, y

    return step, record


def restored(ys, record: dict):
    """``ys`` (the stacked outputs) with the leaves ``record`` holds as those values, once per step."""
    if not record:
        return ys
    import jax

    leaves, tree = jax.tree.flatten(ys)
    for i, value in record.items():
        value = np.asarray(value)
        leaves[i] = np.broadcast_to(value, (leaves[i].shape[0], *value.shape))
    return jax.tree.unflatten(tree, leaves)


def _repeated(leaf) -> bool:
    """A NumPy array whose rows are one row (a zero stride along its first axis)."""
    return (
        isinstance(leaf, np.ndarray)
        and leaf.ndim > 0
        and leaf.shape[0] > 0
        and leaf.strides[0] == 0
    )


def held_apart(xs, body):
    """``(xs', body', length)``: ``xs`` without its repeated leaves, and ``body`` given them back, row 0 as
    Python holds it, at every step; ``length`` the steps' count (None where nothing was held apart).
    """
    import jax

    leaves, tree = jax.tree.flatten(xs)
    held = {i: leaf for i, leaf in enumerate(leaves) if _repeated(leaf)}
    if not held:
        return xs, body, None
    length = int(next(iter(held.values())).shape[0])
    rest = [leaf for i, leaf in enumerate(leaves) if i not in held]

    def step(carry, x):
        given = iter(x)
        full = [_row(held[i]) if i in held else next(given) for i in range(len(leaves))]
        return body(carry, jax.tree.unflatten(tree, full))

    return rest, step, length


def _row(leaf):
    row = leaf[0]
    return row.item() if row.ndim == 0 else row


def scan(body, init, xs, length=None, reverse=False):
    """``jax.lax.scan(body, init, xs)`` with the inputs every step shares held apart and the outputs every
    step shares restored (see the module)."""
    import jax

    xs, body, held = held_apart(xs, body)
    body, known = recording(body)
    init, body, whole = texts_static(init, body)
    try:
        carry, ys = jax.lax.scan(
            body, init, xs, length=length if held is None else held, reverse=reverse
        )
    except TypeError as err:
        if "carry input and carry output must have equal types" not in str(err):
            raise
        from .located import Refusal

        raise Refusal(
            "a compiled loop carries values of one shape and dtype from step to step, but its steps keep "
            "changing the shape (or dtype) of a value they carry (`V = V[:-1] + ...`: one shorter each "
            "step, as in a binomial tree's backward induction; the first steps that do run on their own, "
            "a few at most)",
            "keep the carried array's shape and mask what a step drops (`np.where(np.arange(n) < k, "
            "new, 0.0)`), or run eagerly with backend='numpy'",
        ) from err
    steps = held if held is not None else length
    if steps is None:  # (as ``lax.scan`` counted them)
        steps = next((int(np.shape(leaf)[0]) for leaf in jax.tree.leaves(xs)), 0)
    return whole(carry), restored(whole(ys, steps), known)


class _Text:
    """A string a loop carries, as a node of the carry's structure (JAX carries arrays only)."""

    def __init__(self, value: str):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, _Text) and other.value == self.value

    def __hash__(self):
        return hash(self.value)


_REGISTERED = []


def texts_static(init, body):
    """``(init', body', whole)``: a loop's carry and outputs with their strings (``{"mode": "train", ...}``:
    a dict of options carried through) made part of their structure, ``body`` seeing them as strings, and
    ``whole(tree, steps=None)`` giving them back: the final carry's as strings, ``steps`` stacked outputs'
    as that many rows of one (a step's is the string, as a loop over them reads it). A step that
    changes one changes the carry's structure, which the loop reports as such.
    """
    import jax

    if not _REGISTERED:
        jax.tree_util.register_pytree_node(
            _Text, lambda t: ((), t.value), lambda value, _: _Text(value)
        )
        _REGISTERED.append(True)
    if not any(isinstance(leaf, str) for leaf in jax.tree.leaves(init)):
        return init, body, lambda tree, steps=None: tree

    def static(tree):
        return jax.tree.map(
            lambda leaf: _Text(leaf) if isinstance(leaf, str) else leaf, tree
        )

    def whole(tree, steps=None):
        def text(leaf):
            if not isinstance(leaf, _Text):
                return leaf
            if steps is None:
                return leaf.value
            # one per step, with a zero stride: a loop over them holds each apart (``held_apart``)
            return np.broadcast_to(np.asarray(leaf.value), (steps,))

        return jax.tree.map(text, tree, is_leaf=lambda leaf: isinstance(leaf, _Text))

    def step(carry, x):
        carry, y = body(whole(carry), x)
        return static(carry), static(y)

    return static(init), step, whole
