"""Control flow that generated code calls: ``rt.cond``, ``rt.scan``, ``rt.while_loop``.

One call, two backends. On NumPy values (and Python scalars) they run as plain
Python, so ``pdb`` steps through real values; when any operand is a JAX value
they are ``jax.lax.cond`` / ``scan`` / ``while_loop``, so the loop stays rolled
in the compiled program (a ``scan`` of Python values whose first step computes
JAX values, from traced values its body reads, is rolled too; one whose carry
changes shape in that step, ``s = 0.0`` then ``s = s + x``, runs step by step,
as JAX cannot roll it). A predicate that is a concrete Python or NumPy bool
picks its branch in Python on either backend (no tracing of the other branch).
``rt.scan`` over ``Elements`` (a Python container) runs at trace time on either
backend, and over a ``DynamicRange`` as a ``while`` loop (see ``iteration``).
"""

from __future__ import annotations

import sys

import numpy as np

from . import checkpoints, output
from .arrays import _concrete_key, _is_jax, namespace, zeros_like_float
from .iteration import DynamicRange, Elements, per_element, plain
from .located import Refusal
from .trees import (
    _RECORD_TYPES,
    _child,
    _children,
    _is_container,
    _is_record,
    _rebuild,
    tree_leaves,
    tree_map,
    uses_jax,
)


def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (``jax.lax.cond`` on traced predicates)."""
    if _is_jax(pred):
        import jax

        if isinstance(pred, jax.core.Tracer):
            branches = _untaped(true_fn), _untaped(false_fn)
            return _lax_cond(pred, *branches, operands, lambda out: out)
    return _assigned(
        true_fn(*operands) if bool(np.asarray(pred)) else false_fn(*operands)
    )


def _assigned(out):
    """A branch's outputs, checked to hold a value for each name an ``if`` assigns in one branch only:
    Python's ``UnboundLocalError`` when the branch taken assigns none (raised here, before an array
    function of JAX's could read it)."""
    for leaf in tree_leaves(out):
        if isinstance(leaf, Unset) and leaf.where == "branch":
            leaf._fail()
    return out


def _lax_cond(pred, true_fn, false_fn, operands, outputs):
    """``jax.lax.cond``, its error for branches of which one appends and one skips (``Skipped``) ours."""
    import jax

    for leaf in tree_leaves(operands):
        if isinstance(leaf, Unset) and leaf.where == "branch":
            message, hint = BRANCH_UNSET
            raise Refusal(message.format(leaf.name), hint.format(leaf.name))
    skips, raised = set(), {}

    def watched(fn, side):
        def run(*args):
            try:
                out = fn(*args)
            except Exception as exc:
                if getattr(exc, output.RAISED, False):
                    raised[side] = exc
                raise
            skips.add(has_skipped(outputs(out)))
            return out

        return run

    try:
        return jax.lax.cond(
            pred, watched(true_fn, True), watched(false_fn, False), *operands
        )
    except TypeError:
        if len(skips) > 1:
            raise Refusal(*SKIPPED) from None
        raise
    except Exception as exc:
        if not getattr(exc, output.RAISED, False):
            raise
        raise Refusal(*RAISES_ON_DATA) from exc


def cond_with_residuals(pred, true_fn, false_fn, *operands):
    """``rt.cond`` for branches that return ``(outputs, residuals)``: gives ``outputs, (true_residuals, false_residuals)``.

    The branch not taken has ``None`` residuals, or zeros of their shapes when
    the predicate is traced (``lax.cond`` needs both branches to return alike)
    or when a zero-step loop's body runs for its outputs' structure.
    """
    if _is_jax(pred):
        import jax

        if isinstance(pred, jax.core.Tracer):
            import jax.numpy as jnp

            true_fn, false_fn = _untaped(true_fn), _untaped(false_fn)
            try:
                shapes = [
                    jax.eval_shape(lambda *ops, fn=fn: fn(*ops)[1], *operands)
                    for fn in (true_fn, false_fn)
                ]
            except Exception as exc:
                if not getattr(exc, output.RAISED, False):
                    raise
                raise Refusal(*RAISES_ON_DATA) from exc
            zeros = [
                jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shape)
                for shape in shapes
            ]

            def taken_true(*ops):
                out, res = true_fn(*ops)
                return out, (res, zeros[1])

            def taken_false(*ops):
                out, res = false_fn(*ops)
                return out, (zeros[0], res)

            return _lax_cond(
                pred, taken_true, taken_false, operands, lambda out: out[0]
            )
    taken = bool(np.asarray(pred))
    # both branches' residuals, the one not taken as zeros: the structure a traced predicate gives
    if _probing:
        (out, res), (_, other) = (true_fn(*operands), false_fn(*operands))[
            :: 1 if taken else -1
        ]
        other = tree_map(
            lambda leaf: namespace(leaf).zeros(np.shape(leaf), _dtype(leaf)), other
        )
        return out, ((res, other) if taken else (other, res))
    if taken:
        out, res = true_fn(*operands)
        return _assigned(out), (res, None)
    out, res = false_fn(*operands)
    return _assigned(out), (None, res)


def _untaped(fn):
    """``fn``, checked not to return the per-step residuals of a loop over a traced ``range`` (``TapeLeaf``s):
    they stand for a tape that the loop's own backward pass reads, and cannot leave a compiled loop or branch.
    """

    def checked(*args):
        out = fn(*args)
        if checkpoints.has_tape(out):
            raise TypeError(checkpoints.NESTED_MESSAGE)
        return out

    return checked


def unpair(pair):
    """``(value, tangent)`` of a branch's residuals in forward mode; ``(None, None)`` for the branch not taken."""
    return (None, None) if pair is None else pair


def _stack(items):
    """Per-step outputs stacked along a new leading axis, structure kept.

    Leaves whose shapes differ from step to step (a loop over layers of
    different sizes), that are missing on some steps (the residuals of a
    branch not taken), or containers whose keys differ from step to step,
    stay a Python sequence, as ``Elements``: nothing is dropped.
    """
    if all(it is None for it in items):
        return None
    if any(it is None or isinstance(it, Skipped) for it in items):
        return Elements(items)
    if len({type(it) for it in items}) > 1:
        return Elements(items)
    first = items[0]
    if isinstance(first, Elements):  # tapes of inner `while` loops
        return Elements(items)
    if isinstance(first, dict):
        if any(it.keys() != first.keys() for it in items):
            return Elements(
                items
            )  # dicts with other keys (layers with and without a bias)
        return {k: _stack([it[k] for it in items]) for k in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(
            *(_stack([it[i] for it in items]) for i in range(len(first)))
        )
    if _is_record(first):
        if any(
            [k for k, _ in _children(it)] != [k for k, _ in _children(first)]
            for it in items
        ):
            return Elements(items)
        return _rebuild(
            first,
            [(k, _stack([_child(it, k) for it in items])) for k, _ in _children(first)],
        )
    if isinstance(first, (tuple, list)):
        if len({len(it) for it in items}) > 1:
            return Elements(items)
        return type(first)(_stack([it[i] for it in items]) for i in range(len(first)))
    if isinstance(first, str) or len({np.shape(it) for it in items}) > 1:
        return Elements(items)
    if _concrete_key(first):  # typed keys (NumPy backend): JAX stacks them
        import jax.numpy as jnp

        return jnp.stack(items)
    return namespace(*items).stack([namespace(it).asarray(it) for it in items])


def rows(ys, axis=0):
    """A list collected by a loop whose items are containers (``caches.append((A, W, Z))``): the loop's
    outputs hold each component stacked (along ``axis``: 1 under ``vmap``), so the list is rebuilt item
    by item, and indexing, slicing and looping over it give its items as Python's list does. Arrays (and
    ``Elements`` of arrays) stay as they are."""
    if isinstance(ys, Elements):
        return list(ys.items) if any(_is_container(y) for y in ys.items) else ys
    if not _is_container(ys):
        return ys
    first = list(tree_leaves(ys))
    n = len(first[0]) if isinstance(first[0], Elements) else np.shape(first[0])[axis]
    return [_step(ys, i, axis) for i in range(n)]


def rows_vjp(g, ys, axis=0):
    """The cotangent of ``ys`` in ``rows(ys)``: the items' cotangents stacked back, zeros for items none reached."""
    if not isinstance(g, list):
        return g
    items = ys.items if isinstance(ys, Elements) else None
    parts = [
        (
            part
            if part is not None
            else tree_map(zeros_like_float, items[i] if items else _step(ys, i, axis))
        )
        for i, part in enumerate(g)
    ]
    if items is not None:
        return Elements(parts)
    stacked = _stack(parts)
    return (
        stacked if axis == 0 else tree_map(lambda leaf: _to_axis(leaf, axis), stacked)
    )


def _step(ys, i, axis):
    """Step ``i`` of every stacked leaf of ``ys`` (along ``axis``; ``Elements`` by item)."""
    return tree_map(
        lambda leaf: (
            leaf[i]
            if isinstance(leaf, Elements)
            else namespace(leaf).take(leaf, i, axis=axis)
        ),
        ys,
    )


def _to_axis(leaf, axis):
    return (
        leaf if isinstance(leaf, Elements) else namespace(leaf).moveaxis(leaf, 0, axis)
    )


def join_steps(parts, axis=0):
    """``a + b + ...`` of lists (``[h0] + hs``, ``hs + gs``), each a Python list, a loop's stacked items or
    ``Elements``: the stacked parts concatenated along ``axis`` (1 under ``vmap``: examples first) where the
    items share a shape; else ``Elements`` of all the items (activations of layers of different widths).
    """
    parts = [p for p in parts if not (isinstance(p, (list, tuple)) and not p)]
    if not any(isinstance(p, Elements) for p in parts):
        stacked = [
            _stacked(p, axis) if isinstance(p, (list, tuple)) else p for p in parts
        ]
        shapes = {
            None if s is None else np.shape(s)[:axis] + np.shape(s)[axis + 1 :]
            for s in stacked
        }
        if len(shapes) == 1 and None not in shapes:
            return namespace(*stacked).concatenate(stacked, axis=axis)
    return Elements([item for p in parts for item in _items(p, axis)])


def join_steps_vjp(g, parts, axis=0):
    """The cotangents of ``join_steps``'s parts from its own, each in its part's form."""
    lengths = [len(p) if not hasattr(p, "shape") else np.shape(p)[axis] for p in parts]
    items = _items(g, axis) if isinstance(g, Elements) else None
    out, start = [], 0
    for part, n in zip(parts, lengths):
        if (
            not hasattr(part, "shape") and n == 0
        ):  # an empty list's cotangent: an empty list
            out.append(Elements([]) if isinstance(part, Elements) else type(part)())
        elif items is not None:
            piece = items[start : start + n]
            stacked = _stacked(piece, axis) if hasattr(part, "shape") else None
            out.append(
                stacked
                if stacked is not None
                else (Elements(piece) if isinstance(part, Elements) else list(piece))
            )
        else:
            index = (slice(None),) * axis + (slice(start, start + n),)
            piece = g[index]
            out.append(piece if hasattr(part, "shape") else _items(piece, axis))
        start += n
    return out


def _stacked(items, axis):
    """Arrays of one shape stacked along ``axis``; None where their shapes differ."""
    items = list(items)
    if not items or len({np.shape(it) for it in items}) > 1:
        return None
    return namespace(*items).stack([namespace(it).asarray(it) for it in items], axis)


def _items(part, axis):
    """A list's items, from its Python list, its ``Elements`` or its stacked array (along ``axis``)."""
    if isinstance(part, Elements):
        return list(part.items)
    if isinstance(part, (list, tuple)):
        return list(part)
    return [
        namespace(part).take(part, i, axis=axis) for i in range(np.shape(part)[axis])
    ]


def _slice(xs, i):
    """Step ``i`` of every sequence in the tree ``xs`` (``Elements`` included)."""
    return tree_map(lambda leaf: leaf[i], xs)


def _length(xs, length):
    if length is not None:
        return int(length)
    if isinstance(xs, Elements):
        return len(xs.items)
    leaves = list(tree_leaves(xs))
    if not leaves:
        raise ValueError("scan needs `length` when it has no sequence to scan over")
    first = leaves[0]
    return len(first.items) if isinstance(first, Elements) else int(np.shape(first)[0])


def _has_elements(xs) -> bool:
    return any(isinstance(leaf, Elements) for leaf in tree_leaves(xs))


def _has_range(xs) -> bool:
    return any(isinstance(leaf, DynamicRange) for leaf in tree_leaves(xs))


class Unset:
    """The value of a variable that a ``for`` loop assigns and the code after it reads, before the loop's
    first step: ``scan`` runs that step on its own (``_first_step``), whose carry holds the variable's
    value. After a loop that ran no step, any use of it is an error, as Python's ``NameError``.
    """

    def __init__(self, name: str, where: str = "loop"):
        self.name, self.where = name, where

    def _fail(self, *args, **kwargs):
        ran = (
            "the loop that assigns it ran no iteration"
            if self.where == "loop"
            else "the branch that assigns it was not taken"
        )
        raise UnboundLocalError(f"`{self.name}` has no value: {ran}")

    __array__ = __float__ = __int__ = __bool__ = __len__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = __pow__ = __neg__ = _fail
    __getitem__ = __iter__ = _fail
    placeholder = True

    def __repr__(self):
        return f"rt.unset({self.name!r})"


def unset(name: str, where: str = "loop") -> Unset:
    """``name``'s value before a loop that assigns it (see ``Unset``), or before an ``if`` one branch of
    which assigns it (``where="branch"``: a static test picks the branch, as Python does).
    """
    return Unset(name, where)


BRANCH_UNSET = (
    "`{}` is assigned in one branch of an `if` only, and the test is known only at run time: "
    "a compiled program needs a value on both paths",
    "give `{}` a value before the `if`, or assign it in both branches",
)


class Skipped:
    """The item of a step whose ``if`` skipped the ``append`` (``if W.ndim == 2: mats.append(W)``, or a
    comprehension's ``if`` clause): ``rt.kept`` drops it after the loop. The condition must be known when
    traced (a loop over a Python list, a shape test), as the list's length is its number of true steps.
    """

    placeholder = True

    def __getitem__(self, step):
        return self  # the stacked form of skipped items: each step's is skipped

    def __repr__(self):
        return "rt.skipped()"


_SKIPPED = Skipped()
_RECORD_TYPES[Skipped] = (
    False  # a leaf of s2s's trees; to JAX, a node with no leaves (``skipped``)
)

RAISES_ON_DATA = (
    "a `raise` in a branch whose test is known only at run time: compiled code runs both branches",
    "check the condition on its own line, `if bad: raise ValueError(...)` (checked when the code runs), "
    "and compute the value without the `raise`; or run eagerly with backend='numpy'",
)

SKIPPED = (
    "an `append` skipped on a condition known only at run time: the list's length would depend on "
    "the values, which a compiled program cannot have",
    "filter on what is known when traced (a shape, a dict key, a position in a Python list), keep "
    "every item and mask the ones to drop (`np.where(keep, v, 0.0)`; `sum(v for v in vs if v > 0)` "
    "compiles, so does a slice: `x[::2]`), or run eagerly with backend='numpy'",
)


ALL_SKIPPED = (
    "a list to which a loop compiled as one rolled step (over an array's rows) appends nothing: "
    "the derivative of its steps needs the items' shapes",
    "drop the loop (its test is false on every row), or loop over a Python list",
)


def skipped() -> Skipped:
    """The item of a step that appends nothing (see ``Skipped``). To JAX it is a node with no leaves, so
    a ``lax.scan`` whose steps all skip (a static test in a rolled loop) or that saves it for its
    backward pass carries it as it is."""
    if "jax" in sys.modules and not _skipped_registered:
        import jax

        jax.tree_util.register_pytree_node(
            Skipped, lambda _: ((), None), lambda _, __: _SKIPPED
        )
        _skipped_registered.append(True)
    return _SKIPPED


_skipped_registered: list = []


def has_skipped(tree) -> bool:
    return any(isinstance(leaf, Skipped) for leaf in tree_leaves(tree))


def kept(ys):
    """A list collected by a conditional ``append``, from the loop's per-step items: the skipped ones
    dropped, the others stacked as a loop appending on every step would give them."""
    if isinstance(ys, Skipped):  # every step of a rolled loop skipped
        return np.zeros((0,))
    if not isinstance(ys, Elements):
        return ys  # no step skipped (or none ran)
    items = [y for y in ys.items if not isinstance(y, Skipped)]
    return _stack(items) if items else np.zeros((0,))  # Python's `sum([])` is 0


def kept_vjp(g, ys):
    """The per-step cotangents of ``rt.kept(ys)`` from its own: the skipped steps' placeholders back."""
    if isinstance(ys, Skipped):
        raise Refusal(*ALL_SKIPPED)
    if not isinstance(ys, Elements) or g is None:
        return g
    skips = [isinstance(y, Skipped) for y in ys.items]
    parts = iter(per_element(g, skips.count(False)))
    return Elements([y if skip else next(parts) for y, skip in zip(ys.items, skips)])


def _has_unset(tree) -> bool:
    return any(isinstance(leaf, Unset) for leaf in tree_leaves(tree))


def _first_step(f, init, xs, length, reverse):
    """``scan`` of a loop whose carry holds ``Unset`` values: its first step on its own (it assigns them),
    the other steps a scan from that step's carry, the steps' outputs joined."""
    if _has_range(xs):
        raise TypeError(
            "a variable first assigned in a loop over a range whose bound is traced, read after it: "
            "give it a value before the loop"
        )
    n = _length(xs, length)
    if (
        n == 0
    ):  # the code after the loop reads what the loop did not assign: Python's error, here
        names = ", ".join(
            f"`{leaf.name}`" for leaf in tree_leaves(init) if isinstance(leaf, Unset)
        )
        raise UnboundLocalError(
            f"{names} has no value: the loop that assigns it ran no iteration"
        )
    first = n - 1 if reverse else 0
    carry, y_first = f(init, _slice(xs, first))
    part = slice(None, -1) if reverse else slice(1, None)
    rest = tree_map(
        lambda leaf: (
            Elements(leaf.items[part]) if isinstance(leaf, Elements) else leaf[part]
        ),
        xs,
    )
    carry, ys = scan(f, carry, rest, None if length is None else n - 1, reverse)
    if y_first is None and ys is None:
        return carry, None
    parts = [] if ys is None else _unstacked(ys, n - 1)
    steps = [*parts, y_first] if reverse else [y_first, *parts]
    return carry, _stack(steps)


def _unstacked(ys, n):
    return [_slice(ys, i) for i in range(n)]


def scan(f, init, xs=None, length=None, reverse=False):
    """``jax.lax.scan`` semantics: ``carry, y = f(carry, x)`` per step; returns ``(carry, stacked ys)``.

    ``xs`` may hold ``Elements`` (visited at trace time) or a ``DynamicRange``
    (alone, or beside the ``TapeLeaf`` residuals of a gradient's forward loop
    over it, or beside empty tuples of residuals: a ``while`` loop then).
    """
    if checkpoints.has_tape(xs):
        if not reverse:
            raise TypeError(COLLECT_MESSAGE)
        return checkpoints.scan_tape(f, init, xs)
    if _has_unset(init):
        return _first_step(f, init, xs, length, reverse)
    if _has_range(xs):
        return _scan_range(f, init, xs, reverse)
    if not _has_elements(xs) and uses_jax(init, xs):
        import jax

        body, xs = _untaped(f), plain(xs)
        init, reshaped = settled_carry(lambda c: body(c, _first(xs))[0], init)
        peeled = _peeled(body, init, xs, length, reverse) if reshaped else None
        if peeled is not None:
            return peeled
        return jax.lax.scan(body, init, xs, length=length, reverse=reverse)
    n = _length(xs, length)
    carry, ys = init, [None] * n
    for k, i in enumerate(reversed(range(n)) if reverse else range(n)):
        carry, ys[i] = f(carry, _slice(xs, i))
        if k == 0 and not _has_elements(xs) and uses_jax(carry, ys[i]):
            if _same_shapes(init, carry):
                return _rolled(f, init, xs, carry, reverse)
            rolled = _after_first(_untaped(f), carry, ys[i], plain(xs), n, reverse)
            if rolled is not None:
                return rolled
    return carry, (_stack(ys) if n else _no_steps(f, init, xs))


def _first(xs):
    """One step's slice of ``xs`` (``None`` stays ``None``)."""
    return tree_map(lambda leaf: leaf[0], xs)


def settled_carry(step, init):
    """``(init, reshaped)``: ``init`` in the dtypes one ``step`` computes where those are wider (a float32
    accumulator fed float64 values under ``jax_enable_x64``: NumPy's loop would have widened it, and the
    values are the same), and whether that step changes a carry's shape (``s = 0.0`` then ``s = s + x``),
    which no ``lax`` loop can carry: the caller runs that first step on its own (``_peeled``). Anything
    else is left for ``lax.scan``/``lax.while_loop`` to report."""
    import jax
    import jax.numpy as jnp

    try:
        out = jax.eval_shape(step, init)
    except Exception:  # the loop's own call reports it, with its own message
        return init, False
    if jax.tree.structure(out) != jax.tree.structure(init):
        return init, False
    leaves, outs = jax.tree.leaves(init), jax.tree.leaves(out)
    reshaped = any(np.shape(a) != o.shape for a, o in zip(leaves, outs))
    wider = [
        jnp.asarray(a, o.dtype) if _widens(jnp, a, o) else a
        for a, o in zip(leaves, outs)
    ]
    return jax.tree.unflatten(jax.tree.structure(init), wider), reshaped


def _widens(jnp, leaf, out) -> bool:
    dtype = jnp.result_type(leaf)
    return dtype != out.dtype and jnp.promote_types(dtype, out.dtype) == out.dtype


def _peeled(body, init, xs, length, reverse):
    """``lax.scan`` of a body whose first step changes the carry's shape: that step on its own, the rest
    rolled from its carry (exactly NumPy's loop; only the first step is written out); None where the
    steps' outputs cannot stack."""
    import jax

    n = length if length is not None else len(jax.tree.leaves(xs)[0])
    if n == 0:
        return jax.lax.scan(body, init, xs, length=length, reverse=reverse)
    first = n - 1 if reverse else 0
    carry, y_first = body(init, tree_map(lambda a: a[first], xs))
    return _after_first(body, carry, y_first, xs, n, reverse)


def _after_first(body, carry, y_first, xs, n, reverse):
    """The scan's other ``n - 1`` steps rolled in one ``lax.scan`` from the first step's carry, its
    output joined to theirs; None where the first step's outputs are shaped unlike the others'.
    """
    import jax
    import jax.numpy as jnp

    rest = tree_map(lambda a: a[:-1] if reverse else a[1:], xs)
    carry, ys = jax.lax.scan(body, carry, rest, length=n - 1, reverse=reverse)
    if jax.tree.structure(y_first) != jax.tree.structure(ys) or any(
        np.shape(one) != np.shape(others)[1:]
        for one, others in zip(jax.tree.leaves(y_first), jax.tree.leaves(ys))
    ):
        return None  # the first step's outputs are shaped unlike the others': they cannot stack

    def joined(one, others):
        one = jnp.asarray(one, others.dtype)[None]
        parts = [others, one] if reverse else [one, others]
        return jnp.concatenate(parts)

    return carry, jax.tree.map(joined, y_first, ys)


def _same_shapes(init, carry) -> bool:
    """Whether a step keeps the carry's structure and shapes."""
    import jax

    if jax.tree.structure(init) != jax.tree.structure(carry):
        return False
    return all(
        np.shape(a) == np.shape(b)
        for a, b in zip(jax.tree.leaves(init), jax.tree.leaves(carry))
    )


def _rolled(f, init, xs, carry, reverse):
    """The scan of NumPy and Python inputs whose first step computed JAX values (its body reads traced values
    from its scope, under ``jax.jit``): one rolled ``lax.scan``, as for JAX inputs.

    ``init`` takes the dtypes of the carry after that step (``_done = False`` becomes a bool array). A carry
    whose shapes change in the first step (``s = 0.0`` then ``s = s + x``) cannot be a ``lax.scan``'s: the
    caller rolls the other steps from the first one's carry (``_after_first``).
    """
    import jax
    import jax.numpy as jnp

    init = jax.tree.map(
        lambda leaf, like: jnp.asarray(leaf, jnp.result_type(like)), init, carry
    )
    return jax.lax.scan(_untaped(f), init, plain(xs), reverse=reverse)


def _no_steps(f, init, xs):
    """The stacked outputs of zero steps: empty arrays with the structure one step would give.

    The structure comes from one call of ``f`` on zeros shaped like an element
    of ``xs``; where no such element can be made (a Python sequence), or the
    body cannot run on it (it indexes an empty array with it), ``None``, as
    for a loop whose steps output nothing.
    """
    if _has_elements(xs):
        return None
    element = tree_map(
        lambda leaf: (
            leaf.step
            if isinstance(leaf, _NoSteps)
            else namespace(leaf).zeros(np.shape(leaf)[1:], _dtype(leaf))
        ),
        xs,
    )
    # branches keep the residuals of both sides: a backward loop reads either
    _probing.append(True)
    try:
        with np.errstate(all="ignore"):
            _, y = f(init, element)
    except (IndexError, ValueError, TypeError):
        return None
    finally:
        _probing.pop()
    return tree_map(_no_steps_of, y)


# non-empty while ``_no_steps`` runs a body for the structure of its outputs
_probing: list = []


class _NoSteps(np.ndarray):
    """Outputs of zero steps (shape ``(0, ...)``) that keep the one step ``_no_steps`` ran: the body of a
    backward loop of zero steps runs on it (its residuals' shapes may depend on data, as masks' do).
    """

    step = None

    def __array_finalize__(self, obj):
        self.step = getattr(obj, "step", None)


def _no_steps_of(value):
    out = namespace(value).zeros((0, *np.shape(value)), _dtype(value))
    if isinstance(out, np.ndarray):
        out = out.view(_NoSteps)
        out.step = value
    return out


def _dtype(leaf):
    return leaf.dtype if hasattr(leaf, "dtype") else np.asarray(leaf).dtype


COLLECT_MESSAGE = (
    "a loop over `range` with bounds known only at run time cannot collect per-step outputs; "
    "loop over a fixed range and stop early with `break`"
)


def _scan_range(f, init, xs, reverse):
    """A loop over ``range`` with traced bounds (``xs`` holds one ``DynamicRange`` and no arrays): a ``while`` loop.

    It cannot stack per-step outputs; when its steps have some (the residuals
    of a gradient's forward loop), they come back as ``TapeLeaf`` placeholders
    that the backward loop recomputes from checkpoints. Steps without outputs
    give the structure of one step's (``None``, empty tuples), as ``lax.scan``.
    """
    import jax
    import jax.numpy as jnp

    (bounds,) = [leaf for leaf in tree_leaves(xs) if isinstance(leaf, DynamicRange)]
    if any(not isinstance(leaf, DynamicRange) for leaf in tree_leaves(xs)):
        raise TypeError(
            "a range whose bounds are known only at run time cannot be zipped with arrays"
        )
    n = bounds.count(jnp)

    def step(state):
        k, carry = state
        i = bounds.start + (n - 1 - k if reverse else k) * bounds.step
        carry, y = _untaped(f)(carry, tree_map(lambda leaf: i, xs))
        return (k + 1, carry), (i, y)

    start = (jnp.asarray(0, n.dtype), init)
    outputs = jax.eval_shape(lambda: step(start)[1][1])
    if jax.tree.leaves(outputs):
        if reverse:
            raise TypeError(checkpoints.REVERSE_TWICE_MESSAGE)
        (_, carry), ys = checkpoints.range_with_tape(
            lambda state: state[0] < n, step, start
        )
        return carry, ys
    _, carry = jax.lax.while_loop(
        lambda state: state[0] < n, lambda state: step(state)[0], start
    )
    return carry, outputs  # no arrays: the structure of one step's outputs


def while_loop(cond_fn, body_fn, init):
    """``jax.lax.while_loop`` semantics: ``body_fn`` while ``cond_fn(carry)``; returns the final carry."""
    if uses_jax(init) or _is_jax(cond_fn(init)):
        import jax

        # a dtype a step widens (a shape it changes: lax.while_loop's error, as the loop may run no step)
        init, _ = settled_carry(body_fn, init)
        return jax.lax.while_loop(cond_fn, body_fn, init)
    carry = init
    while bool(np.asarray(cond_fn(carry))):
        carry = body_fn(carry)
    return carry
