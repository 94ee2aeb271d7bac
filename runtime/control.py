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

from . import bounded, checkpoints, output, peeling, step_constants
from .arrays import _is_jax, namespace
from .collected import SKIPPED, has_skipped, stack
from .iteration import (
    DynamicRange,
    Elements,
    StepItems,
    as_elements,
    as_lists,
    as_step_items,
    elements_like,
    plain,
)
from .located import COLLECTED, Refusal
from .trees import _children, _rebuild, tree_leaves, tree_map, uses_jax


def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (``jax.lax.cond`` on traced predicates)."""
    if _is_jax(pred):
        import jax

        if isinstance(pred, jax.core.Tracer):
            branches = _branch(true_fn), _branch(false_fn)
            return as_elements(_lax_cond(pred, *branches, operands, lambda out: out))
    return _assigned(true_fn(*operands) if truth(pred) else false_fn(*operands))


def truth(value) -> bool:
    """Python's truth of a branch's test: a tuple, list or dict by its length (``if args:``), a value by
    NumPy's (an array of one element)."""
    if isinstance(value, (tuple, list, dict, str, Elements)) or value is None:
        return bool(len(value)) if value is not None else False
    return bool(np.asarray(value))


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

    _refuse_branch_unset(operands)
    if _has_unset(operands):
        true_fn, false_fn, operands = _unset_filled(true_fn, false_fn, operands)
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
        try:
            return jax.lax.cond(
                pred, watched(true_fn, True), watched(false_fn, False), *operands
            )
        except TypeError as err:
            if len(skips) <= 1 and "dtypes do not match" in str(err):
                return _promoted_cond(pred, true_fn, false_fn, operands, err)
            if len(skips) > 1 or "structure" not in str(err):
                raise
            # a list one branch computed item by item (``Elements``) and the other kept as it was
            try:
                shapes = [jax.eval_shape(fn, *operands) for fn in (true_fn, false_fn)]
            except Exception:
                raise err from None
            try:
                return jax.lax.cond(
                    pred,
                    lambda *ops: _like(true_fn(*ops), shapes[1]),
                    lambda *ops: _like(false_fn(*ops), shapes[0]),
                    *operands,
                )
            except TypeError as again:
                if "structure" not in str(again):
                    raise
                raise Refusal(*BRANCH_STRUCTURE) from again
    except TypeError:
        if len(skips) > 1:
            raise Refusal(*SKIPPED) from None
        raise
    except Exception as exc:
        if not getattr(exc, output.RAISED, False):
            raise
        raise Refusal(*RAISES_ON_DATA) from exc


def _refuse_branch_unset(operands) -> None:
    """A variable one branch of an earlier ``if`` on data assigned, handed to a ``lax.cond``: refused."""
    for leaf in tree_leaves(operands):
        if isinstance(leaf, Unset) and leaf.where == "branch":
            message, hint = BRANCH_UNSET
            raise Refusal(message.format(leaf.name), hint.format(leaf.name))


def _unset_filled(true_fn, false_fn, operands):
    """The branches of a ``lax.cond`` on data whose operands hold a loop's ``Unset`` (a variable a loop
    assigns, in one branch here: ``_result`` of a ``return i`` in the loop), and the operands JAX takes.

    The ``Unset`` operands are not handed to JAX: each branch gets them back from here. An output one
    branch assigns and the other passes on unset is, in the other, zeros shaped like the assigned value
    (found by running both branches once more, into code XLA drops): after the ``if``, only paths where
    the assigning branch ran read it, as in Python (a read before any assignment raises when traced).
    """
    import jax.numpy as jnp

    flat = list(operands)
    held = {k: v for k, v in enumerate(flat) if isinstance(v, Unset)}
    passed = tuple(v for k, v in enumerate(flat) if k not in held)

    def whole(ops):
        it = iter(ops)
        return [held[k] if k in held else next(it) for k in range(len(flat))]

    outs = [list(tree_leaves(fn(*operands))) for fn in (true_fn, false_fn)]
    fills = {}
    for k, (a, b) in enumerate(zip(*outs)):
        if isinstance(a, Unset) != isinstance(b, Unset):
            value = b if isinstance(a, Unset) else a
            fills[k] = (np.shape(value), jnp.result_type(value))

    def filled_branch(fn):
        def run(*ops):
            out = fn(*whole(ops))
            counter = iter(range(len(list(tree_leaves(out)))))

            def leaf(x):
                k = next(counter)
                if k in fills and isinstance(x, Unset):
                    return jnp.zeros(*fills[k])
                return x

            return tree_map(leaf, out)

        return run

    return filled_branch(true_fn), filled_branch(false_fn), passed


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

            true_fn, false_fn = _branch(true_fn), _branch(false_fn)
            if _has_unset(
                operands
            ):  # (a loop's ``_result`` before a ``return`` in it ran)
                _refuse_branch_unset(operands)
                true_fn, false_fn, operands = _unset_filled(true_fn, false_fn, operands)
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

            return as_elements(
                _lax_cond(pred, taken_true, taken_false, operands, lambda out: out[0])
            )
    taken = truth(pred)
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
        return _assigned(out), (res, _not_taken(false_fn, operands, res))
    out, res = false_fn(*operands)
    return _assigned(out), (_not_taken(true_fn, operands, res), res)


def _not_taken(fn, operands, res):
    """The residuals of the branch a test known when the code is traced did not take: None, or, inside a
    trace (a branch of a compiled ``if`` on data, a compiled loop), zeros of their shapes, since the
    test reaches the backward pass as a traced value (a residual), which runs both branches there.
    """
    jax = sys.modules.get("jax")
    if jax is None or not any(
        isinstance(leaf, jax.core.Tracer) for leaf in tree_leaves((operands, res))
    ):
        return None
    return zero_residuals(fn, operands)


def zero_residuals(fn, operands):
    """Zeros shaped like the residuals ``fn`` would give, from its shapes alone (nothing of it runs); its
    strings (a dict key a loop computes, ``"W" + str(l)``) as they are, since they are not data.
    """
    import jax

    held = {}

    def arrays():
        leaves, held["tree"] = jax.tree.flatten(fn(*operands)[1])
        held["strings"] = {k: v for k, v in enumerate(leaves) if isinstance(v, str)}
        return [v for v in leaves if not isinstance(v, str)]

    try:
        shapes = iter(jax.eval_shape(arrays))
    # the branch cannot run: it raises, or reads what only the other assigns
    except Exception:
        return None
    leaves = []
    for k in range(held["tree"].num_leaves):
        if k in held["strings"]:
            leaves.append(held["strings"][k])
        else:
            shape = next(shapes)
            leaves.append(np.zeros(shape.shape, shape.dtype))
    return held["tree"].unflatten(leaves)


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


def _branch(fn):
    """``_untaped(fn)`` as a ``lax.cond`` branch: the ``Elements`` among its outputs (the items of a loop
    over differently shaped values) handed to JAX as ``StepItems``, which the caller reads back as
    ``Elements`` (``as_elements``)."""
    checked = _untaped(fn)
    return lambda *operands: as_step_items(checked(*operands))


def _promoted_cond(pred, true_fn, false_fn, operands, err):
    """``jax.lax.cond`` of branches whose outputs differ only in dtype (a number one returns, made an array
    beside the other's float32 values): each output in the dtype NumPy's ``if`` would give the two.
    """
    import jax
    import jax.numpy as jnp

    try:
        shapes = [jax.eval_shape(fn, *operands) for fn in (true_fn, false_fn)]
        dtypes = jax.tree.map(
            lambda a, b: jnp.result_type(
                jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type),
                jax.ShapeDtypeStruct(b.shape, b.dtype, weak_type=b.weak_type),
            ),
            *shapes,
        )
    except Exception:
        raise err from None

    def cast(fn):
        return lambda *ops: jax.tree.map(
            lambda leaf, dtype: jnp.asarray(leaf, dtype), fn(*ops), dtypes
        )

    return jax.lax.cond(pred, cast(true_fn), cast(false_fn), *operands)


def _like(out, other):
    """``out`` with a list or tuple where ``other`` (the other branch's output) holds ``StepItems`` of as
    many items as ``StepItems`` too: the same Python list, in the form the other branch computed.
    """
    if (
        isinstance(other, StepItems)
        and isinstance(out, (list, tuple))
        and not isinstance(out, StepItems)
        and len(out) == len(other)
    ):
        return StepItems([_like(o, t) for o, t in zip(out, other)])
    if isinstance(out, (list, tuple, dict)) and type(out) is type(other):
        if isinstance(out, dict):
            if out.keys() == other.keys():
                return {k: _like(v, other[k]) for k, v in out.items()}
        elif len(out) == len(other):
            return _rebuild(
                out, [(k, _like(v, t)) for (k, v), t in zip(_children(out), other)]
            )
    return out


def _stepped(fn):
    """``_untaped(fn)`` as a ``lax.scan`` body: the ``Elements`` among its outputs handed to JAX as
    ``StepItems`` (stacked item by item), and read back as ``Elements`` from its inputs.
    """
    checked = _untaped(fn)

    def step(carry, x):
        carry, y = checked(carry, as_elements(x))
        return carry, as_step_items(y)

    return step


def unpair(pair):
    """``(value, tangent)`` of a branch's residuals in forward mode; ``(None, None)`` for the branch not taken."""
    return (None, None) if pair is None else pair


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


def _carrying_lists(f):
    """``f``, a loop's step, with the ``Elements`` of the carry it returns as Python lists."""

    def step(carry, x):
        carry, y = f(carry, x)
        return as_lists(carry), y

    return step


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


class UnsetCotangent(Unset):
    """The cotangent of an ``Unset`` value (``rt.tree_zeros_like`` of it): zero, shaped like the value it
    meets in a batched ``select`` (an example whose loop returned early beside one whose did not).
    """

    def __repr__(self):
        return f"rt.unset_cotangent({self.name!r})"


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


CARRY_STRUCTURE = (
    "a loop variable changes its structure or shape in the loop's first step (`state = s0` then "
    "`state = (x, v)`), and what the steps keep for a derivative then differs in structure from step "
    "to step, which no compiled loop can hold",
    "give the variable its final structure and shape before the loop (`state = (s0[0], s0[1])`, "
    "`total = np.zeros(n)`), or run eagerly with backend='numpy'",
)


BRANCH_STRUCTURE = (
    "a variable holds values of different structures on the two paths of a test known only at run "
    "time (an `if` on data, or a loop's step that a `break` or `return` on data may skip): one path "
    "makes a tuple, list or dict where the other keeps an array, and a compiled program needs one",
    "give the variable its final structure before the `if` or the loop (`state = (s0[0], s0[1])`, "
    "not `state = s0`), or run eagerly with backend='numpy'",
)


RAISES_ON_DATA = (
    "a `raise` in a branch whose test is known only at run time: compiled code runs both branches",
    "check the condition on its own line, `if bad: raise ValueError(...)` (checked when the code runs), "
    "and compute the value without the `raise`; or run eagerly with backend='numpy'",
)


def _has_unset(tree) -> bool:
    return any(isinstance(leaf, Unset) for leaf in tree_leaves(tree))


def filled(step, init, traced: bool):
    """``(init, check)``: under JAX (``traced``), each ``Unset`` of a ``while`` loop's carry as zeros of the
    shape and dtype that ``step`` gives it (the body assigns it before it reads it), found by
    ``jax.eval_shape`` (a batched body's ``select`` of the old value reads a placeholder scalar).
    ``check(ran)``, called with the loop's first test, raises Python's ``UnboundLocalError`` where the loop
    ran no iteration, when the compiled code runs: the code after it reads the variable.

    ``(init, None)`` without an ``Unset``, and on NumPy, whose Python loop keeps the ``Unset`` until a step
    assigns it (read after no step, it raises; a batched step's ``select`` keeps it for an example whose
    loop ran no step).
    """
    if not traced or not _has_unset(init):
        return init, None
    import jax
    import jax.numpy as jnp

    names = [leaf.name for leaf in tree_leaves(init) if isinstance(leaf, Unset)]
    marked = tree_map(lambda leaf: 0.0 if isinstance(leaf, Unset) else leaf, init)
    flat, structure = jax.tree.flatten(marked)
    out = jax.tree.leaves(jax.eval_shape(step, marked))
    unset = [
        isinstance(leaf, Unset)
        for leaf in jax.tree.leaves(init, is_leaf=lambda x: isinstance(x, Unset))
    ]
    leaves = [
        jnp.zeros(o.shape, o.dtype) if u else leaf
        for leaf, o, u in zip(flat, out, unset)
    ]

    def check(ran):
        def verify(known):
            if not np.all(np.asarray(known)):
                listed = ", ".join(f"`{n}`" for n in names)
                raise UnboundLocalError(
                    f"{listed} has no value: the loop that assigns it ran no iteration"
                )

        output._when_known(verify, (ran,))

    return structure.unflatten(leaves), check


def _first_step(f, init, xs, length, reverse):
    """``scan`` of a loop whose carry holds ``Unset`` values: its first step on its own (it assigns them),
    the other steps a scan from that step's carry, the steps' outputs joined."""
    if _has_range(
        xs
    ):  # a ``while`` loop: the variable zeros of the step's shape (``filled``)
        import jax.numpy as jnp

        (bounds,) = [leaf for leaf in tree_leaves(xs) if isinstance(leaf, DynamicRange)]
        first = tree_map(lambda leaf: bounds.start, xs)
        init, check = filled(lambda c: _untaped(f)(c, first)[0], init, True)
        check(bounds.count(jnp) > 0)
        return _scan_range(f, init, xs, reverse)
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
    if ys is not None and n > 1:
        # what the first step output unset (a residual: the value before it), zeros
        y_first = _unset_as_zeros(y_first, _slice(ys, 0))
        joined = _prepended(y_first, ys, reverse)
        if joined is not None:  # (one concatenation per leaf, not a slice per step)
            return carry, None if joined is _BOTH_NONE else joined
    parts = [] if ys is None else _unstacked(ys, n - 1)
    steps = [*parts, y_first] if reverse else [y_first, *parts]
    return carry, stack(steps)


def _prepended(first, rest, at_end):
    """One step's outputs joined to the others' (stacked) as one stack, leaf by leaf (at the end for a
    reversed loop); None where a leaf is no array of the others' step shape."""
    if first is None and rest is None:
        return _BOTH_NONE
    if isinstance(first, (tuple, list)) and isinstance(rest, (tuple, list)):
        if len(first) != len(rest) or type(first) is not type(rest):
            return None
        items = [_prepended(a, b, at_end) for a, b in zip(first, rest)]
        if any(i is None for i in items):
            return None
        items = [None if i is _BOTH_NONE else i for i in items]
        return type(first)(*items) if hasattr(first, "_fields") else type(first)(items)
    if isinstance(first, dict) and isinstance(rest, dict):
        if first.keys() != rest.keys():
            return None
        items = {k: _prepended(v, rest[k], at_end) for k, v in first.items()}
        if any(i is None for i in items.values()):
            return None
        return {k: None if i is _BOTH_NONE else i for k, i in items.items()}
    numeric = hasattr(first, "shape") or isinstance(first, (bool, int, float))
    if not (numeric and hasattr(rest, "shape")) or np.shape(rest)[1:] != np.shape(
        first
    ):
        return None
    xp = namespace(first, rest)
    head = xp.expand_dims(xp.asarray(first, dtype=rest.dtype), 0)
    return xp.concatenate([rest, head] if at_end else [head, rest])


_BOTH_NONE = object()  # (a step output of no value at every step, in ``_prepended``)


def _unset_as_zeros(output, like):
    """``output`` with its ``Unset`` leaves as zeros shaped like the matching leaves of ``like`` (another
    step's output), so the steps stack into arrays (and the backward loop rolls: ``Elements`` would
    visit them one by one). So are its ``None`` parts where ``like`` holds arrays: the residuals of a
    branch the first step did not take, its test static there (a Python ``t > 0``) and traced after
    (``rt.cond_with_residuals`` gives zeros for the branch not taken then)."""
    if isinstance(output, Unset) and hasattr(like, "shape"):
        return namespace(like).zeros_like(like)
    if output is None and like is not None:
        leaves = tree_leaves(like)
        if leaves and all(hasattr(leaf, "shape") for leaf in leaves):
            return tree_map(lambda leaf: namespace(leaf).zeros_like(leaf), like)
    if isinstance(output, (tuple, list)) and isinstance(like, (tuple, list)):
        items = [_unset_as_zeros(a, b) for a, b in zip(output, like)]
        if len(output) != len(like):
            return output
        return (
            type(output)(*items) if hasattr(output, "_fields") else type(output)(items)
        )
    if (
        isinstance(output, dict)
        and isinstance(like, dict)
        and output.keys() == like.keys()
    ):
        return {k: _unset_as_zeros(v, like[k]) for k, v in output.items()}
    return output


def _unstacked(ys, n):
    return [_slice(ys, i) for i in range(n)]


def scan(f, init, xs=None, length=None, reverse=False):
    """``jax.lax.scan`` semantics: ``carry, y = f(carry, x)`` per step; returns ``(carry, stacked ys)``.

    ``xs`` may hold ``Elements`` (visited at trace time) or a ``DynamicRange``
    (alone, or beside the ``TapeLeaf`` residuals of a gradient's forward loop
    over it, or beside empty tuples of residuals: a ``while`` loop then).
    """
    if _has_elements(init) and (uses_jax(init, xs) or _has_range(xs)):
        # a carried list of items of different shapes (a list's cotangent, ``rt.restack``'s ``Elements``):
        # the Python list it stands for, a pytree JAX carries, before and after every step, and the
        # ``Elements`` again after the loop (a backward loop over it visits its items)
        carry, ys = scan(_carrying_lists(f), as_lists(init), xs, length, reverse)
        return elements_like(carry, init), ys
    # a range an enclosing compiled loop's index bounds: the steps of its span
    if bounded.has_bounded(xs):
        return bounded.scan_bounded(scan, f, init, xs, length, reverse)
    # the backward loop of a loop whose first steps ran on their own
    if peeling.has_peeled(xs):
        return peeling.scan_peeled(scan, f, init, xs, reverse)
    if checkpoints.has_tape(xs):
        if not reverse:
            raise TypeError(COLLECT_MESSAGE)
        return checkpoints.scan_tape(f, init, xs)
    if _has_unset(init) and (uses_jax(init, xs) or _has_range(xs)):
        # compiled: the first step's carry gives the variable its shape (on NumPy, Python's loop keeps
        # it unset until a step assigns it, and a read of it after none raises)
        return _first_step(f, init, xs, length, reverse)
    if _has_range(xs):
        return _scan_range(f, init, xs, reverse)
    if not _has_elements(xs) and uses_jax(init, xs):
        import jax

        body, xs = _stepped(f), plain(xs)
        # values every step shares stay known to Python (``step_constants``)
        xs, body, held = step_constants.held_apart(xs, body)
        length = length if held is None else held
        body, known = step_constants.recording(body)
        # strings carried through (a dict of options) stay Python's, in the carry's structure
        init, body, whole = step_constants.texts_static(init, body)
        init, reshaped = settled_carry(
            lambda c: body(c, _first(xs))[0], init, first=True
        )
        if reshaped:
            done = peeling.peeled(body, init, xs, length, reverse, settled_carry)
            if done is None:
                raise Refusal(*CARRY_STRUCTURE)
            return whole(done[0]), whole(done[1], _length(xs, length))
        carry, ys = jax.lax.scan(body, init, xs, length=length, reverse=reverse)
        return whole(carry), step_constants.restored(
            whole(ys, _length(xs, length)), known
        )
    n = _length(xs, length)
    carry, ys = init, [None] * n
    for k, i in enumerate(reversed(range(n)) if reverse else range(n)):
        carry, ys[i] = f(carry, _slice(xs, i))
        if k == 0 and not _has_elements(xs) and uses_jax(carry, ys[i]):
            if _has_unset(init):  # Python inputs, JAX values from the first step on
                return _first_step(f, init, xs, length, reverse)
            if _same_shapes(init, carry):
                return _rolled(f, init, xs, carry, reverse)
            ran = (carry, as_step_items(ys[i]))
            rolled = peeling.peeled(
                _stepped(f), init, plain(xs), n, reverse, settled_carry, ran
            )
            if rolled is not None:
                return rolled
    return carry, (stack(ys) if n else _no_steps(f, init, xs))


def _first(xs):
    """One step's slice of ``xs`` (``None`` stays ``None``)."""
    return tree_map(lambda leaf: leaf[0], xs)


def settled_carry(step, init, first=False):
    """``(init, reshaped)``: ``init`` in the dtypes one ``step`` computes where those are wider (a float32
    accumulator fed float64 values under ``jax_enable_x64``: NumPy's loop would have widened it, and the
    values are the same), and whether that step changes a carry's shape (``s = 0.0`` then ``s = s + x``),
    which no ``lax`` loop can carry: the caller runs the first steps on their own (``peeling``), as it does
    the ``first`` step when it changes the carry's structure (a dict's key set in the loop), which the
    steps after must keep. A step that changes the carry's structure otherwise (a list growing by one
    each step) is a ``Refusal``. Anything
    else is left for ``lax.scan``/``lax.while_loop`` to report."""
    import jax
    import jax.numpy as jnp

    try:
        out = jax.eval_shape(step, init)
    except Exception:  # the loop's own call reports it, with its own message
        return init, False
    if jax.tree.structure(out) != jax.tree.structure(init) and first:
        # a key a dict gets in the first step (``d["u"] = us[i]``): that step runs on its own, and the
        # next one (``peeling``, not ``first``) must keep the structure it gave
        return init, True
    if jax.tree.structure(out) != jax.tree.structure(init):
        raise Refusal(
            "a compiled loop carries values of one structure from step to step, but a step turns "
            f"{jax.tree.structure(init)} into {jax.tree.structure(out)} (a Python list that grows "
            "in the loop, or a dict that gets a key per step?)",
            "append one item per step to a list made before the loop (s2s collects its items), "
            "write into a preallocated array (`hs[t] = ...`), or run eagerly with backend='numpy'",
        )
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
    caller runs the first steps on their own (``peeling``).
    """
    import jax
    import jax.numpy as jnp

    init = jax.tree.map(
        lambda leaf, like: (
            leaf if isinstance(leaf, str) else jnp.asarray(leaf, jnp.result_type(like))
        ),
        init,
        carry,
    )
    return step_constants.scan(_stepped(f), init, plain(xs), reverse=reverse)


def _no_steps(f, init, xs):
    """The stacked outputs of zero steps: empty arrays with the structure one step would give.

    The structure comes from one call of ``f`` on zeros shaped like an element
    of ``xs`` (of an empty Python sequence, a float: ``sum(a * k for a, k in
    zip([], ks))`` is 0); where the body cannot run on it (it indexes an empty
    array with it, unpacks it), ``None``, as for a loop whose steps output
    nothing.
    """
    element = tree_map(_probe, xs)
    # a float stands for an item of a Python sequence of unknown kind (a dict's key, a record): the body
    # may fail on it in any way
    failures = Exception if _has_elements(xs) else (IndexError, ValueError, TypeError)
    # branches keep the residuals of both sides: a backward loop reads either
    _probing.append(True)
    try:
        with np.errstate(all="ignore"):
            _, y = f(init, element)
    except failures:
        return None
    finally:
        _probing.pop()
    return tree_map(_no_steps_of, y)


def _probe(leaf):
    """An element like those of a sequence with none: its rows' shape, or of an empty Python sequence a
    float (a tuple of them for a ``zip``)."""
    if isinstance(leaf, _NoSteps):
        return leaf.step
    if isinstance(leaf, Elements):
        item = _AnyItem.like(() if leaf.batch is None else leaf.batch)
        return item if leaf.width is None else (item,) * leaf.width
    return namespace(leaf).zeros(np.shape(leaf)[1:], _dtype(leaf))


class _AnyItem(np.ndarray):
    """The item ``_no_steps`` gives a body looping over an empty Python sequence, whose items may be
    numbers, arrays or dicts of them: zeros, whose entries (``layer["W"]``, ``p.get("eps", 1e-5)``) are
    such zeros too. Only the structure of what the body returns is read from it."""

    @classmethod
    def like(cls, shape) -> _AnyItem:
        return np.zeros(shape).view(cls)

    def __getitem__(self, key):
        if isinstance(key, str) or self.ndim == 0:
            return _AnyItem.like(())
        return super().__getitem__(key)

    def get(self, key, default=None):
        return _AnyItem.like(())


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


COLLECT_MESSAGE = COLLECTED[0]


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
        from .iteration import DYNAMIC_RANGE_READS

        raise Refusal(*DYNAMIC_RANGE_READS)
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
    traced = uses_jax(init) or _is_jax(cond_fn(init))
    init, check = filled(body_fn, init, traced)
    if check is not None:
        check(cond_fn(init))
    if traced:
        import jax

        # a dtype a step widens (a shape it changes: lax.while_loop's error, as the loop may run no step)
        init, _ = settled_carry(body_fn, init)
        return jax.lax.while_loop(cond_fn, body_fn, init)
    carry = init
    while bool(np.asarray(cond_fn(carry))):
        carry = body_fn(carry)
        # the body read traced values (``lo, hi = -20.0, 20.0`` bisecting on data): compiled from
        # this step on, the first one run already
        if uses_jax(carry):
            import jax

            carry, _ = settled_carry(body_fn, carry)
            return jax.lax.while_loop(cond_fn, body_fn, carry)
    return carry
