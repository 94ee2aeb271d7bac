"""What a lowered ``for`` loop runs over: arrays along axis 0, ranges, and Python containers.

``rt.scan`` takes a tree of sequences. An array is iterated along its
leading axis as one rolled loop (``lax.scan`` under JAX). ``Elements`` (a
Python list, tuple or dict view, wrapped by ``rt.iterate``) is iterated at
trace time, one copy of the body per element: what a loop over a list of
layer parameters wants. A ``DynamicRange`` (``range(n)`` with ``n`` known
only at run time) becomes a ``while`` loop.
"""

from __future__ import annotations

import builtins
import itertools
import sys

import numpy as np

from .arrays import _is_jax, namespace
from .trees import _child, _children, _is_record, _rebuild, tree_zeros_like


class Elements:
    """A Python sequence that a loop visits element by element, at trace time; ``width``: how many
    sequences ``zip`` put side by side in each item (a loop over no items still unpacks that many);
    ``batch``: for an empty one a batched loop runs over, the batch size its items would have.
    """

    def __init__(self, items, width=None, batch=None):
        self.items = list(items)
        self.width = width
        self.batch = batch

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        # a slice of a list of items of different shapes is one too (``acts[1:]``)
        return Elements(self.items[i]) if isinstance(i, slice) else self.items[i]

    def __iter__(self):
        return iter(self.items)

    def __repr__(self):
        return f"Elements({self.items!r})"


class Zipped(tuple):
    """Sequences of equal length visited side by side (``enumerate`` and ``zip`` of arrays).

    Under JAX it is a pytree (registered on first use), so a loop's input can
    also be a residual that a ``cond`` or ``scan`` returns.
    """

    def __new__(cls, sequences):
        if "jax" in sys.modules:
            _register_tuple(Zipped)
        return super().__new__(cls, sequences)


_registered: set = set()


def _register_tuple(cls):
    """``cls`` (a tuple subclass) as a JAX pytree, once: its items the children."""
    if cls not in _registered:
        import jax

        jax.tree_util.register_pytree_node(
            cls, lambda z: (tuple(z), None), lambda _, children: cls(children)
        )
        _registered.add(cls)


class StepItems(tuple):
    """A compiled loop's per-step ``Elements`` (items of different shapes: a loop over layers inside it),
    stacked: item ``k`` holds every step's ``k``-th item along a leading axis.

    Under JAX it is a pytree (registered on first use), so ``lax.scan`` stacks it as a step's output
    (its residuals) and slices it as a step's input (the backward loop's); a compiled step reads its
    slice as ``Elements`` again (``runtime/control.py``, ``stepped``).
    """

    def __new__(cls, items):
        if "jax" in sys.modules:
            _register_tuple(StepItems)
        return super().__new__(cls, items)


def _converted(tree, kind, convert):
    """``tree`` with each node of type ``kind`` replaced by ``convert(node, recurse)``: the same object
    where it holds none (a container is rebuilt only around one)."""

    def walk(node):
        if isinstance(node, kind):
            return convert(node, walk)
        if isinstance(node, (tuple, list, dict)) or _is_record(node):
            children = list(_children(node))
            new = [(k, walk(v)) for k, v in children]
            # (``builtins``: this module's ``any`` and ``zip`` are ``rt``'s)
            if builtins.any(
                a is not b for (_, a), (_, b) in builtins.zip(children, new)
            ):
                return _rebuild(node, new)
        return node

    return walk(tree)


class StepSlice(tuple):
    """A ``slice`` among a compiled step's outputs (``x[:, t + 1]``'s index, kept for the backward loop):
    its ``(start, stop, step)``, a pytree JAX stacks and slices (registered on first use), a ``slice``
    again in a compiled step's inputs."""

    def __new__(cls, items):
        if "jax" in sys.modules:
            _register_tuple(StepSlice)
        return super().__new__(cls, items)


def as_step_items(tree):
    """``tree`` with its ``Elements`` as ``StepItems`` and its slices as ``StepSlice`` (a compiled step's
    outputs)."""
    tree = _converted(
        tree, Elements, lambda e, walk: StepItems([walk(i) for i in e.items])
    )
    return _converted(tree, slice, lambda s, walk: StepSlice((s.start, s.stop, s.step)))


def as_lists(tree):
    """``tree`` with its ``Elements`` as the Python lists they stand for (a function's outputs)."""
    return _converted(tree, Elements, lambda e, walk: [walk(i) for i in e.items])


def elements_like(tree, like):
    """``tree`` (a loop's carry, its ``Elements`` carried as Python lists: ``as_lists``) with ``Elements``
    again where ``like`` (the carry it started from) had them, so a later loop visits their items and
    never slices each array of the list."""
    if isinstance(like, Elements) and isinstance(tree, list):
        return Elements(tree, like.width, like.batch)
    if isinstance(like, tuple) and isinstance(tree, tuple) and len(like) == len(tree):
        items = tuple(elements_like(t, k) for t, k in builtins.zip(tree, like))
        return type(tree)(*items) if hasattr(tree, "_fields") else items
    if isinstance(like, list) and isinstance(tree, list) and len(like) == len(tree):
        return [elements_like(t, k) for t, k in builtins.zip(tree, like)]
    if isinstance(like, dict) and isinstance(tree, dict):
        return {
            k: elements_like(v, like[k]) if k in like else v for k, v in tree.items()
        }
    return tree


def as_elements(tree):
    """``tree`` with its ``StepItems`` as ``Elements`` and its ``StepSlice``s as slices (a compiled step's
    inputs)."""
    tree = _converted(tree, StepSlice, lambda s, walk: slice(*s))
    return _converted(tree, StepItems, lambda e, walk: Elements([walk(i) for i in e]))


def plain(xs):
    """``xs`` with ``Zipped`` nodes as plain tuples (what ``jax.lax.scan`` takes)."""
    if isinstance(xs, StepItems):
        return StepItems([plain(x) for x in xs])
    if isinstance(xs, StepSlice):
        return xs
    if isinstance(xs, tuple) and not hasattr(xs, "_fields"):
        return tuple(plain(x) for x in xs)
    if isinstance(xs, list):
        return [plain(x) for x in xs]
    return xs


class DynamicRange:
    """``range(start, stop, step)`` whose bounds are traced values: iterated by a ``while`` loop."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def count(self, xp):
        return xp.maximum(
            0, (self.stop - self.start + self.step - xp.sign(self.step)) // self.step
        )


def is_array(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic)) or _is_jax(value)


def _concrete(value) -> bool:
    if _is_jax(value):
        import jax

        return not isinstance(value, jax.core.Tracer)
    return True


def range(*bounds, within=None, indexes=()):
    """Python's ``range`` as loop input: an integer array; for traced bounds, a ``BoundedRange`` where
    ``within`` (``(low, high)``, known when traced) holds every value, else a ``DynamicRange``.

    ``indexes``: the sequences the loop's body indexes by its counter (``ws[i] = ws[i] - lr * gs[i]``).
    Where one is a Python list, tuple or dict, whose items (of any shapes) no compiled counter can pick,
    the counts are ``Elements``, visited when the code is traced, as ``for w in ws`` visits a list.
    """
    if builtins.all(_concrete(b) for b in bounds):
        if builtins.any(isinstance(xs, (list, tuple, dict)) for xs in indexes):
            return Elements(builtins.range(*(int(b) for b in bounds)))
        return np.arange(*(int(b) for b in bounds))
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if within is not None and builtins.all(_concrete(b) for b in (*within, step)):
        from .bounded import BoundedRange

        return BoundedRange(start, stop, int(step), *(int(b) for b in within))
    return DynamicRange(start, stop, step)


def combination_indices(n, r):
    """``itertools.combinations(range(n), r)`` as ``r`` index arrays (``frontend/combinatorics.py``)."""
    return _columns(itertools.combinations(builtins.range(int(n)), int(r)), r)


def permutation_indices(n, r):
    """``itertools.permutations(range(n), r)`` as ``r`` index arrays."""
    return _columns(itertools.permutations(builtins.range(int(n)), int(r)), r)


def product_indices(*counts):
    """``itertools.product(range(n0), range(n1), ...)`` as one index array per count."""
    ranges = [builtins.range(int(n)) for n in counts]
    return _columns(itertools.product(*ranges), len(counts))


def _columns(tuples, r) -> tuple:
    rows = np.array(list(tuples), dtype=int).reshape(-1, int(r))
    return tuple(rows[:, k] for k in builtins.range(int(r)))


def iterate(xs):
    """``xs`` as loop input: arrays, ranges and ``Elements`` as they are, Python containers as ``Elements``."""
    if isinstance(xs, (Elements, DynamicRange, Zipped)) or is_array(xs):
        return xs
    if isinstance(xs, (int, float, complex, bool)):
        raise TypeError(f"cannot loop over a number ({type(xs).__name__})")
    if isinstance(xs, dict):
        return Elements(xs.keys())
    return Elements(xs)


DYNAMIC_RANGE_READS = (
    "a loop over `range(n)` with `n` computed from the data, reading items of a sequence by its index "
    "(or zipped with it): under jit its number of steps must be known when the code is traced",
    "loop over the whole sequence and test the index (`for i in range(len(x)): if i < n: ...`), or "
    "compute with a mask (`np.sum(np.where(np.arange(len(x)) < n, x**2, 0.0))`), or run eagerly "
    "with backend='numpy'",
)


def length(xs) -> int:
    if isinstance(xs, Elements):
        return len(xs.items)
    if isinstance(xs, Zipped):
        return length(xs[0])
    if isinstance(xs, DynamicRange):
        from .located import Refusal

        raise Refusal(*DYNAMIC_RANGE_READS)
    return int(np.shape(xs)[0])


def enumerate(xs, start=0):
    """Python's ``enumerate`` as loop input: (indices, items)."""
    xs = iterate(xs)
    if isinstance(xs, Elements):
        return Elements(builtins.enumerate(xs.items, start))
    return Zipped((np.arange(start, start + length(xs)), xs))


def enumerate_jvp(xs_dot, start=0):
    """The tangent of ``enumerate(xs)``: float zeros for the indices (integers carry none), ``xs_dot`` for the items."""
    xs_dot = iterate(xs_dot)
    if isinstance(xs_dot, Elements):
        return Elements((0.0, x) for x in xs_dot.items)
    return Zipped((np.zeros(length(xs_dot)), xs_dot))


def zip(*sequences):
    """Python's ``zip`` as loop input: the sequences side by side, cut to the shortest.

    A dict zipped with a ``range`` is refused: that is how s2s reads a ``range`` loop reading ``d[i]``
    (``frontend/indexed_loops.py``), and a dict's iteration gives its keys, not ``d[0], d[1], ...``.
    """
    counter = sequences[0] if sequences else None
    if (
        isinstance(counter, DynamicRange)
        or (isinstance(counter, np.ndarray) and counter.dtype.kind in "iu")
    ) and builtins.any(isinstance(s, dict) for s in sequences[1:]):
        from .located import Refusal

        raise Refusal(
            "a dict read by a `range` loop's index (`d[i]`), or zipped with a range",
            "loop over the dict's items (`for k, v in d.items()`), or keep the values in a list",
        )
    sequences = [iterate(s) for s in sequences]
    if builtins.any(isinstance(s, Elements) for s in sequences):
        return Elements(builtins.zip(*sequences), width=len(sequences))
    n = builtins.min(length(s) for s in sequences)
    return Zipped(s if length(s) == n else s[:n] for s in sequences)


def any(xs):
    """Python's ``any`` of a list's items (collected ones stacked along axis 0): NumPy's on items known when
    the code is traced (an ``if`` on it is decided then, as Python decides it), ``jax.numpy``'s on traced ones.
    """
    from .arrays import namespace

    return namespace(xs).any(namespace(xs).asarray(xs), axis=0)


def all(xs):
    """Python's ``all`` of a list's items, as ``any``."""
    from .arrays import namespace

    return namespace(xs).all(namespace(xs).asarray(xs), axis=0)


def reversed(xs):
    """Python's ``reversed`` as loop input."""
    xs = iterate(xs)
    if isinstance(xs, Elements):
        return Elements(builtins.reversed(xs.items))
    if isinstance(xs, Zipped):
        return Zipped(reversed(x) for x in xs)
    if isinstance(xs, DynamicRange):
        last = (
            xs.start + (xs.count(np if not _is_jax(xs.stop) else _jnp()) - 1) * xs.step
        )
        return DynamicRange(last, xs.start - xs.step, -xs.step)
    return xs[::-1]


def items(d):
    """``d.items()`` as loop input (visited at trace time)."""
    return Elements(d.items())


def keys(d):
    """``d.keys()`` as loop input (visited at trace time)."""
    return Elements(d.keys())


def str_method(text, method, *args, **kwargs):
    """``text.method(*args)`` of a Python string (a dict key, a name), called when the code is traced.

    Any other object is refused: a method of that name on a user's object may compute what has a
    derivative, which a string method never carries.
    """
    if not isinstance(text, str):
        from .located import Refusal

        raise Refusal(
            f"`.{method}()` of a {type(text).__name__}: s2s calls it as a string method, and this is no "
            "string",
            "compute it outside the function and pass the result in, or write it with NumPy ops",
        )
    return getattr(text, method)(*args, **kwargs)


def dict_get(d, key, default=None):
    """``d.get(key, default)`` of a dict (a settings dict, a layer's parameters)."""
    if not isinstance(d, dict):
        from .located import Refusal

        raise Refusal(
            f"`.get()` of a {type(d).__name__}: s2s calls it as a dict's method, and this is no dict",
            "compute it outside the function and pass the result in",
        )
    return d.get(key, default)


def dict_get_vjp(g, d, key):
    """The cotangent of ``d`` in ``dict_get(d, key, default)``: ``g`` at ``key`` where ``d`` holds it."""
    from .arguments import argument_vjp

    return argument_vjp(g, d, key)


def dict_default_vjp(g, d, key, default=None):
    """The cotangent of ``default`` in ``dict_get(d, key, default)``: ``g`` where ``d`` lacks ``key``."""
    from .arguments import argument_default_vjp

    return argument_default_vjp(g, d, key, default)


def sorted_keys(d, key=None, reverse=False):
    """Python's ``sorted`` of a dict's keys (``for name in sorted(params)``), of strings or of Python's
    numbers, decided when the code is traced (``key``: a function of yours, called on them then).

    Sorting anything else (arrays sort by value, with a derivative) is refused: ``np.sort`` is the op.
    """
    if isinstance(d, Elements):
        d = d.items
    if isinstance(d, builtins.range):
        d = list(d)
    if isinstance(d, dict) or type(d).__name__ in ("dict_keys",):
        return builtins.sorted(d, key=key, reverse=reverse)
    if isinstance(d, (list, tuple)) and builtins.all(
        type(k) in (str, int, float, bool) for k in d
    ):  # (Python's own values, known when the code is traced; never arrays or NumPy's numbers)
        return builtins.sorted(d, key=key, reverse=reverse)
    from .located import Refusal

    raise Refusal(
        "Python's `sorted` of something other than a dict's keys, strings or Python numbers "
        "(`sorted` has no derivative: it orders names and counts)",
        "sort arrays with `np.sort` (it has a derivative); to order a list of arrays, sort their "
        "positions (`for i in sorted(range(len(ws)), key=...)`) and read `ws[i]`",
    )


def values(d):
    """``d.values()`` as loop input (visited at trace time)."""
    return Elements(d.values())


def total(items):
    """Python's ``sum`` of a list, a tuple or ``d.values()`` (arrays of shapes ``+`` broadcasts), or of an
    array: its rows added, ``np.sum(x, axis=0)`` (``scipy.optimize.rosen``'s ``sum(100.0 * (...) ** 2)``).
    Under ``vmap`` its twin (``batched_total``) adds each example's rows."""
    if hasattr(items, "shape"):
        if np.ndim(items) == 0:
            raise TypeError("iteration over a 0-d array")  # Python's
        return namespace(items).sum(items, axis=0)
    out = 0
    for item in items.items if isinstance(items, Elements) else items:
        out = out + item
    return out


def total_vjp(g, items):
    """The cotangents of ``total``'s items: ``g``, summed to each item's shape (of an array: ``g`` for
    each row)."""
    from .arrays import unbroadcast

    if hasattr(items, "shape"):
        return namespace(g, items).broadcast_to(g, np.shape(items))

    parts = [
        unbroadcast(g, item)
        for item in (items.items if isinstance(items, Elements) else items)
    ]
    return Elements(parts) if isinstance(items, Elements) else type(items)(parts)


def append(items_, value):
    """``items_ + [value]``: ``lst.append(value)`` outside a loop, as a new list."""
    return [*items_, value]


def repeat_list(items_, count):
    """``items_ * count`` of a Python list or tuple (``[w, b] * 2``): Python's repetition, whose cotangent
    adds up the copies."""
    if not isinstance(items_, (list, tuple)):
        from .located import Refusal

        raise Refusal(
            f"`*` repeating a {type(items_).__name__}: s2s read it as a list's repetition",
            "multiply arrays by their values; repeat a list written as a display (`[a, b] * 2`)",
        )
    return items_ * int(count)


def repeat_list_vjp(g, items_, count):
    """The cotangents of ``items_`` in ``repeat_list(items_, count)``: each item's copies added."""
    n = len(items_)
    out = [None] * n
    for k, part in enumerate(g):
        out[k % n] = part if out[k % n] is None else out[k % n] + part
    return type(items_)(out)


def join(a, b):
    """``a + b`` of two Python lists (or two tuples): Python's concatenation, whose cotangent splits. Of an
    array and a list display (``x + [h]``: NumPy would add them) it is an error, never a sum.
    """
    a, b = (list(v.items) if isinstance(v, Elements) else v for v in (a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return a + b  # (a list and a tuple: Python's TypeError)
    from .located import Refusal

    raise Refusal(
        "`+` of a list or tuple display and an array: NumPy adds them elementwise, which s2s does not "
        "read from a display of arrays",
        "to add elementwise, write `x + np.array([...])`; to join lists, make both operands lists",
    )


def _jnp():
    import jax.numpy as jnp

    return jnp


__all__ = [
    "DynamicRange",
    "Elements",
    "StepItems",
    "Zipped",
    "all",
    "any",
    "append",
    "dict_default_vjp",
    "dict_get",
    "dict_get_vjp",
    "enumerate",
    "enumerate_jvp",
    "enumerate_vjp",
    "enumerate_vjp_transpose",
    "items",
    "items_vjp",
    "items_vjp_transpose",
    "iterate",
    "range",
    "repeat_list",
    "repeat_list_vjp",
    "reversed",
    "reversed_vjp",
    "reversed_vjp_transpose",
    "sequence_vjp",
    "sequence_vjp_transpose",
    "sorted_keys",
    "str_method",
    "total",
    "total_vjp",
    "values_vjp",
    "values_vjp_transpose",
    "zip",
    "zip_vjp",
    "zip_vjp_transpose",
]  # fmt: skip


# --- cotangents of loop inputs -------------------------------------------------------


def per_element(g, n):
    """The per-step cotangents of a loop over ``n`` elements (stacked, or ``Elements``)."""
    if g is None:
        return [None] * n
    if isinstance(g, Elements):
        return list(g.items)
    # per-step dicts (a loop over a list of dict layers), stacked leaf by leaf
    if isinstance(g, dict):
        parts = {k: per_element(v, n) for k, v in g.items()}
        return [{k: p[i] for k, p in parts.items()} for i in builtins.range(n)]
    if isinstance(g, (tuple, list)) and not is_array(g):
        parts = [per_element(x, n) for x in g]
        if hasattr(g, "_fields"):  # namedtuples take their fields as arguments
            return [type(g)(*(p[i] for p in parts)) for i in builtins.range(n)]
        return [type(g)(p[i] for p in parts) for i in builtins.range(n)]
    if _is_record(g):
        parts = [(k, per_element(v, n)) for k, v in _children(g)]
        return [_rebuild(g, [(k, p[i]) for k, p in parts]) for i in builtins.range(n)]
    if (
        np.shape(g)[0] < n
    ):  # JAX would clamp the reads past the end: a wrong cotangent, silently
        raise AssertionError(f"s2s: {np.shape(g)[0]} per-step cotangents for {n} steps")
    return [g[i] for i in builtins.range(n)]


def sequence_vjp(g, xs):
    """The cotangent of ``xs`` from that of ``rt.iterate(xs)``: an array as is, a container per element."""
    return _visited_vjp(g, xs, None)


def _visited_vjp(g, xs, steps):
    """``sequence_vjp`` of a loop that visited the first ``steps`` elements of ``xs`` (a ``zip`` stops at its
    shortest sequence; None: all of them); the elements after them get zero cotangents.
    """
    if is_array(xs) and isinstance(g, Elements):
        # an array's rows' cotangents, held step by step (a Python float beside 0-d arrays): its own (traced
        # ones for a constant array zipped with traced values: jax.numpy's)
        xp = namespace(xs, list(g.items))
        rows = [xp.asarray(item) for item in g.items]
        rows += [
            xp.zeros(np.shape(xs)[1:]) for _ in builtins.range(len(xs) - len(rows))
        ]
        return xp.stack(rows)
    if is_array(xs) or isinstance(xs, (Zipped, DynamicRange)) or g is None:
        return g
    if isinstance(xs, dict):
        return None  # a loop over a dict visits its keys
    parts = per_element(g, len(xs) if steps is None else steps)
    parts = [*parts, *(tree_zeros_like(x) for x in list(xs)[len(parts) :])]
    if type(xs).__name__ == "PeeledLeaf":  # a peeled loop's outputs: split the same way
        return xs.with_steps(parts)
    if isinstance(xs, tuple) and hasattr(xs, "_fields"):
        return type(xs)(*parts)
    if isinstance(
        xs, Elements
    ):  # per-step values of different shapes: a loop reads them step by step
        return Elements(parts)
    return type(xs)(parts) if isinstance(xs, (tuple, list)) else parts


def enumerate_vjp(g, xs):
    if g is None:
        return None
    if isinstance(g, Elements) or not isinstance(g, tuple):
        return sequence_vjp(
            Elements(p[1] if p is not None else None for p in per_element(g, len(xs))),
            xs,
        )
    return sequence_vjp(g[1], xs)


def zip_vjp(g, sequences):
    if (
        g is None
    ):  # a loop that ran no step (``zip(hs, hs[1:])`` of one item): zeros for what it zipped
        return [
            (
                tree_zeros_like(xs)
                if isinstance(xs, (list, tuple, Elements)) or is_array(xs)
                else None
            )
            for xs in sequences
        ]
    if isinstance(g, Elements):
        steps = g.items
        return [
            _visited_vjp(
                Elements(s[k] if s is not None else None for s in steps), xs, len(steps)
            )
            for k, xs in builtins.enumerate(sequences)
        ]
    # the loop ran as many steps as the shortest sequence has elements
    steps = builtins.min(length(iterate(xs)) for xs in sequences)
    out = []
    for part, xs in builtins.zip(g, sequences):
        n = length(iterate(xs))
        if part is not None and is_array(xs) and np.shape(part)[0] != n:
            part = _pad_rows(part, xs)
        out.append(_visited_vjp(part, xs, steps))
    return out


def _pad_rows(part, xs):
    from .arrays import namespace

    xp = namespace(part, xs)
    extra = np.shape(xs)[0] - np.shape(part)[0]
    return xp.concatenate([part, xp.zeros((extra, *np.shape(part)[1:]), part.dtype)])


def reversed_vjp(g, xs):
    if g is None:
        return None
    if isinstance(g, Elements) or not is_array(xs):
        return sequence_vjp(Elements(builtins.reversed(per_element(g, len(xs)))), xs)
    return g[::-1]


def values_vjp(g, d):
    if g is None:
        return None
    return dict(builtins.zip(d.keys(), per_element(g, len(d))))


def items_vjp(g, d):
    if g is None:
        return None
    steps = per_element(g, len(d))
    return {
        k: (step[1] if step is not None else None)
        for k, step in builtins.zip(d.keys(), steps)
    }


# --- transposes of the loop inputs' cotangents (second derivatives through loops) -------------


def _restack(parts, like):
    """Per-element values ``parts`` in the structure of the loop cotangent ``like`` (the inverse of ``per_element``)."""
    if isinstance(like, Elements):
        return Elements(parts)
    if isinstance(like, (tuple, list)) and not is_array(like):
        fields = [
            _restack([p[k] for p in parts], field)
            for k, field in builtins.enumerate(like)
        ]
        return type(like)(*fields) if hasattr(like, "_fields") else type(like)(fields)
    if isinstance(like, dict):  # (a loop over a list of dicts: each entry stacked)
        return type(like)(
            (k, _restack([p[k] for p in parts], field)) for k, field in like.items()
        )
    if _is_record(like):
        fields = [
            (k, _restack([_child(p, k) for p in parts], field))
            for k, field in _children(like)
        ]
        return _rebuild(like, fields)
    from .arrays import namespace

    return namespace(*parts).stack(list(parts))


def sequence_vjp_transpose(u, like, xs):
    """The transpose of ``sequence_vjp(g, xs)``: ``u`` (shaped like ``xs``) in the structure of ``g`` (``like``)."""
    if is_array(xs) or isinstance(xs, (Zipped, DynamicRange)) or like is None:
        return u
    if isinstance(xs, dict):
        from .trees import tree_zeros_like

        return tree_zeros_like(like)
    return _restack(list(u), like)


def enumerate_vjp_transpose(u, like, xs):
    """The transpose of ``enumerate_vjp(g, xs)``: ``u`` (shaped like ``xs``) as the cotangent of ``enumerate(xs)``."""
    if like is None:
        return None
    if isinstance(like, Elements) or not isinstance(like, tuple):
        items = per_element(
            sequence_vjp_transpose(u, Elements([None] * len(xs)), xs), len(xs)
        )
        return _restack([(0.0, item) for item in items], like)
    from .trees import tree_zeros_like

    return type(like)(
        (tree_zeros_like(like[0]), sequence_vjp_transpose(u, like[1], xs))
    )


def zip_vjp_transpose(u, like, sequences):
    """The transpose of ``zip_vjp(g, sequences)``: the per-sequence values ``u`` as the cotangent of ``zip(*sequences)``."""
    if like is None:
        return None
    if isinstance(like, Elements):
        columns = [
            per_element(
                sequence_vjp_transpose(part, Elements([None] * len(xs)), xs), len(xs)
            )
            for part, xs in builtins.zip(u, sequences)
        ]
        return Elements(
            tuple(column[k] for column in columns)
            for k in builtins.range(len(like.items))
        )
    out = []
    for part, field, xs in builtins.zip(u, like, sequences):
        part = sequence_vjp_transpose(part, field, xs)
        if part is not None and is_array(xs) and np.shape(field)[0] != np.shape(xs)[0]:
            part = part[: np.shape(field)[0]]  # zip cut ``xs`` to the shortest sequence
        out.append(part)
    return type(like)(out)


def reversed_vjp_transpose(u, like, xs):
    """The transpose of ``reversed_vjp(g, xs)``."""
    if like is None:
        return None
    if isinstance(like, Elements) or not is_array(xs):
        items = per_element(
            sequence_vjp_transpose(u, Elements([None] * len(xs)), xs), len(xs)
        )
        return _restack(items[::-1], like)
    return u[::-1]


def values_vjp_transpose(u, like, d):
    """The transpose of ``values_vjp(g, d)``: the dict ``u`` as per-step cotangents of ``values(d)``."""
    if like is None:
        return None
    return _restack([u[k] for k in d], like)


def items_vjp_transpose(u, like, d):
    """The transpose of ``items_vjp(g, d)``: the dict ``u`` as per-step ``(key, value)`` cotangents of ``items(d)``."""
    if like is None:
        return None
    from .trees import tree_zeros_like

    steps = per_element(like, len(d))
    return _restack(
        [(tree_zeros_like(step[0]), u[k]) for k, step in builtins.zip(d.keys(), steps)],
        like,
    )


def as_list(xs) -> list:
    """``list(xs)``: a container's items, an array's rows, a dict's keys (what Python's ``list`` gives)."""
    return builtins.list(xs.items if isinstance(xs, Elements) else xs)


def as_dict(d) -> dict:
    """``dict(d)``: a copy of a dict (its values the same objects)."""
    return builtins.dict(d)


def dict_merge(a, b) -> dict:
    """``{**a, **b}`` (``a | b``): ``a``'s entries, then ``b``'s, which win where both have a key."""
    return {**a, **b}


def entries(values, like, skip=None) -> dict:
    """``like``'s keys, each with its entry in ``values`` unless ``skip`` has that key or ``values``
    lacks it (then zeros shaped like ``like``'s entry): the cotangent of either side of a
    ``dict_merge`` from that of its result (``a``'s keys ``b`` shadows get none), and its own transpose.
    """
    if values is None:
        return None
    return {
        k: (
            values[k]
            if k in values and (skip is None or k not in skip)
            else tree_zeros_like(v)
        )
        for k, v in like.items()
    }


def as_tuple(xs) -> tuple:
    """``tuple(xs)``, as ``as_list``."""
    return builtins.tuple(as_list(xs))


def sequence_like(g, xs):
    """The cotangent of ``xs`` from that of ``list(xs)`` or ``tuple(xs)``: an array's rows stacked back, a
    container's items in its own type (a dict gets zeros: ``list(d)`` reads its keys only).
    """
    if g is None:
        return None
    if isinstance(xs, dict):
        from .trees import tree_zeros_like

        return tree_zeros_like(xs)
    items = builtins.list(g.items if isinstance(g, Elements) else g)
    if is_array(xs):
        from .arrays import namespace

        return namespace(*items).stack(items)
    if isinstance(xs, Elements):
        return Elements(items)
    return type(xs)(*items) if hasattr(xs, "_fields") else type(xs)(items)


def sequence_like_transpose(u, like):
    """The transpose of ``sequence_like(g, xs)``: ``u`` (shaped like ``xs``) as the list or tuple ``like`` is."""
    if like is None:
        return None
    items = as_list(u)
    return type(like)(items) if isinstance(like, (list, tuple)) else items
