"""What batched generated code (``s2s.vmap``) calls for ops whose batching depends on ranks.

Convention: a *batched* operand carries its batch axis at axis 0 (size ``B``); an
*unbatched* one has no batch axis and is shared by every example. A ``batched``
argument is a tuple of bools, one per operand, in order. Results are always
batched. Each function computes exactly ``stack([op(example_i(args)) for i in
range(B)])``, where ``example_i(a)`` is ``a[i]`` for a batched operand and ``a``
otherwise, without a Python loop over the batch and without ``jax.vmap``: the
batch axis rides along in broadcasting, ``einsum`` letters or an ``arange(B)``
advanced index. Everything works eagerly on NumPy arrays and on JAX arrays under
``jax.jit`` (only static shapes and ranks are read).
"""

import numpy as np

from . import arrays
from .arrays import namespace
from .trees import _children, _is_container, _rebuild

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

__all__ = [
    "any_example",
    "dot",
    "einsum",
    "getitem",
    "index_add",
    "index_set",
    "inner",
    "matmul",
    "norm",
    "outer",
    "select",
    "solve",
    "tensordot",
    "vdot",
]


# --------------------------------------------------------------------------- helpers


def _flags(batched, count, name):
    """``batched`` as a tuple of ``count`` bools, checked: at least one operand is batched."""
    flags = tuple(bool(f) for f in batched)
    if len(flags) != count:
        raise ValueError(
            f"batching.{name}: `batched` has {len(flags)} flags for {count} operands"
        )
    if not any(flags):
        raise ValueError(
            f"batching.{name}: no operand is batched, so there is no batch size; "
            "call the unbatched operation instead"
        )
    return flags


def _rank(x, flag):
    """The rank of one example of ``x``."""
    return np.ndim(x) - int(flag)


def _lift(xp, x, flag, rank):
    """A batched ``x`` with size-1 axes inserted after the batch axis, so one example has rank ``rank``.

    An unbatched ``x`` is returned as it is: right-aligned broadcasting already
    pads it on the left (and its missing batch axis broadcasts against ``B``).
    """
    if not flag:
        return x
    pad = rank - _rank(x, flag)
    if pad <= 0:
        return x
    shape = np.shape(x)
    return xp.reshape(x, (shape[0],) + (1,) * pad + shape[1:])


def _contract(xp, a, b, flags, a_axes, b_axes):
    """Per-example ``tensordot(a_i, b_i, (a_axes, b_axes))`` (non-negative per-example axes) as one einsum."""
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    letters = iter(_LETTERS[1:])
    batch = _LETTERS[0]
    a_letters = [next(letters) for _ in range(ra)]
    b_letters = [None] * rb
    for i, j in zip(a_axes, b_axes):
        b_letters[j] = a_letters[i]
    b_letters = [c if c is not None else next(letters) for c in b_letters]
    out = [a_letters[i] for i in range(ra) if i not in a_axes]
    out += [b_letters[j] for j in range(rb) if j not in b_axes]
    a_spec = (batch if flags[0] else "") + "".join(a_letters)
    b_spec = (batch if flags[1] else "") + "".join(b_letters)
    return xp.einsum(f"{a_spec},{b_spec}->{batch}{''.join(out)}", a, b)


def _multiply(xp, a, b, flags):
    """Per-example ``a_i * b_i`` (NumPy broadcasting within each example)."""
    rank = max(_rank(a, flags[0]), _rank(b, flags[1]))
    return _lift(xp, a, flags[0], rank) * _lift(xp, b, flags[1], rank)


def _flatten(xp, x, flag):
    """One example of ``x`` raveled: ``(B, n)`` for a batched ``x``, ``(n,)`` for an unbatched one."""
    shape = np.shape(x)
    if flag:
        return xp.reshape(x, (shape[0], int(np.prod(shape[1:], dtype=int))))
    return xp.reshape(x, (int(np.prod(shape, dtype=int)),))


# --------------------------------------------------------------------------- products


def matmul(a, b, batched):
    """Per-example ``np.matmul(a_i, b_i)``: 1-D operands promoted as NumPy does, stacks broadcast per example."""
    flags = _flags(batched, 2, "matmul")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if ra == 0 or rb == 0:
        raise ValueError(
            "batching.matmul: matmul does not take scalar (0-d) examples; use `*`"
        )
    if ra == 1:
        a = xp.expand_dims(a, -2)
    if rb == 1:
        b = xp.expand_dims(b, -1)
    rank = max(ra, rb, 2)
    out = xp.matmul(_lift(xp, a, flags[0], rank), _lift(xp, b, flags[1], rank))
    if ra == 1 and rb == 1:
        return out[..., 0, 0]
    if ra == 1:
        return out[..., 0, :]
    if rb == 1:
        return out[..., 0]
    return out


def dot(a, b, batched):
    """Per-example ``np.dot(a_i, b_i)``: a product with scalars, else ``a_i``'s last axis against ``b_i``'s
    second-to-last (its only axis when ``b_i`` is 1-D)."""
    flags = _flags(batched, 2, "dot")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if ra == 0 or rb == 0:
        return _multiply(xp, a, b, flags)
    return _contract(xp, a, b, flags, [ra - 1], [max(rb - 2, 0)])


def inner(a, b, batched):
    """Per-example ``np.inner(a_i, b_i)``: a product with scalars, else the last axes contracted."""
    flags = _flags(batched, 2, "inner")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if ra == 0 or rb == 0:
        return _multiply(xp, a, b, flags)
    return _contract(xp, a, b, flags, [ra - 1], [rb - 1])


def vdot(a, b, batched):
    """Per-example ``np.vdot(a_i, b_i)``: both raveled, ``a_i`` conjugated, summed products (one scalar each)."""
    flags = _flags(batched, 2, "vdot")
    xp = namespace(a, b)
    a = _flatten(xp, a, flags[0])
    b = _flatten(xp, b, flags[1])
    if xp.iscomplexobj(a):
        a = xp.conj(a)
    a_spec = "zi" if flags[0] else "i"
    b_spec = "zi" if flags[1] else "i"
    return xp.einsum(f"{a_spec},{b_spec}->z", a, b)


def outer(a, b, batched):
    """Per-example ``np.outer(a_i, b_i)``: both raveled, every product (one matrix each)."""
    flags = _flags(batched, 2, "outer")
    xp = namespace(a, b)
    a = _flatten(xp, a, flags[0])
    b = _flatten(xp, b, flags[1])
    return xp.expand_dims(a, -1) * xp.expand_dims(b, -2)


def tensordot(a, b, axes, batched):
    """Per-example ``np.tensordot(a_i, b_i, axes)``; ``axes`` an int (``a_i``'s last ``axes`` axes against
    ``b_i``'s first) or a pair of per-example axes (or sequences of them, negative ones allowed).
    """
    flags = _flags(batched, 2, "tensordot")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if not isinstance(axes, (tuple, list)) and np.ndim(axes) == 0:
        n = int(axes)
        if n < 0 or n > min(ra, rb):
            raise ValueError(f"batching.tensordot: cannot contract {n} axes")
        a_axes, b_axes = list(range(ra - n, ra)), list(range(n))
    else:
        a_axes, b_axes = (
            [int(x)] if np.ndim(x) == 0 else [int(i) for i in x] for x in axes
        )
        if len(a_axes) != len(b_axes):
            raise ValueError("batching.tensordot: shape-mismatch for sum")
        a_axes = [_axis(i, ra, "tensordot") for i in a_axes]
        b_axes = [_axis(i, rb, "tensordot") for i in b_axes]
    return _contract(xp, a, b, flags, a_axes, b_axes)


def _axis(axis, rank, name):
    if not -rank <= axis < rank:
        raise ValueError(
            f"batching.{name}: axis {axis} is out of bounds for an example of rank {rank}"
        )
    return axis % rank


def einsum(subscripts, *operands, batched):
    """Per-example ``np.einsum(subscripts, *operands_i)``: a fresh letter names the batch axis of the
    batched operands and leads the output (implicit output made explicit as NumPy reads it:
    the ellipsis dims, then the letters seen once, sorted)."""
    flags = _flags(batched, len(operands), "einsum")
    xp = namespace(*operands)
    if not isinstance(subscripts, str):
        raise TypeError(
            "batching.einsum: give the subscripts as a string, not in sublist form"
        )
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    specs = inputs.split(",")
    if len(specs) != len(operands):
        raise ValueError(
            f"batching.einsum: {len(specs)} operand subscripts for {len(operands)} operands"
        )
    if not arrow:
        letters = [c for c in inputs if c.isalpha()]
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    fresh = [c for c in _LETTERS if c not in spec]
    if not fresh:
        raise ValueError("batching.einsum: no letter is left for the batch axis")
    batch = fresh[0]
    specs = [batch + s if f else s for s, f in zip(specs, flags)]
    return xp.einsum(",".join(specs) + "->" + batch + output, *operands)


# --------------------------------------------------------------------------- linear algebra


def solve(a, b, batched):
    """Per-example ``np.linalg.solve(a_i, b_i)``: ``b_i`` a vector when it is 1-D (NumPy 2's rule), else
    (a stack of) matrices, stacks broadcast per example."""
    flags = _flags(batched, 2, "solve")
    xp = namespace(a, b)
    ra, rb = _rank(a, flags[0]), _rank(b, flags[1])
    if ra < 2 or rb < 1:
        raise ValueError(
            "batching.solve: each example needs a (stack of) square matrices and a "
            "vector or matrices"
        )
    if rb == 1:
        b = xp.expand_dims(b, -1)
        rank = ra
        return xp.linalg.solve(
            _lift(xp, a, flags[0], rank), _lift(xp, b, flags[1], rank)
        )[..., 0]
    rank = max(ra, rb)
    return xp.linalg.solve(_lift(xp, a, flags[0], rank), _lift(xp, b, flags[1], rank))


def norm(x, ord=None, axis=None, keepdims=False):
    """Per-example ``np.linalg.norm(x_i, ord, axis, keepdims)`` of a batched ``x`` (``axis`` names
    per-example axes; with ``axis=None`` the example's rank picks a vector or a matrix norm).
    """
    xp = namespace(x)
    shape = np.shape(x)
    if not shape:
        raise ValueError("batching.norm: `x` must be batched (batch axis 0)")
    rank = len(shape) - 1
    if axis is None:
        if ord is None:
            flat = xp.linalg.norm(_flatten(xp, x, True), axis=-1)
            return xp.reshape(flat, shape[:1] + (1,) * rank) if keepdims else flat
        if rank not in (1, 2):
            raise ValueError("batching.norm: Improper number of dimensions to norm.")
        axes = (1,) if rank == 1 else (1, 2)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(_axis(int(i), rank, "norm") + 1 for i in axis)
    else:
        axes = _axis(int(axis), rank, "norm") + 1
    if isinstance(axes, tuple) and len(axes) == 1:
        axes = axes[0]
    return xp.linalg.norm(x, ord=ord, axis=axes, keepdims=keepdims)


# --------------------------------------------------------------------------- control flow


def _map2(fn, a, b):
    if a is None and b is None:
        return None
    if _is_container(a):
        if _is_container(b) and len(a) == len(b):
            return _rebuild(a, [(k, _map2(fn, v, b[k])) for k, v in _children(a)])
        raise ValueError(
            "batching.select: the two branches' values differ in structure "
            f"({type(a).__name__} of {len(a)} against {type(b).__name__})"
        )
    if _is_container(b):
        raise ValueError(
            "batching.select: the two branches' values differ in structure "
            f"({type(a).__name__} against {type(b).__name__})"
        )
    return fn(a, b)


def select(pred, on_true, on_false):
    """Per-example ``on_true_i if pred_i else on_false_i`` for pytrees of batched leaves (``pred``: ``(B,)``)."""
    xp = namespace(pred, on_true, on_false)
    size = np.shape(pred)
    if len(size) != 1:
        raise ValueError(
            f"batching.select: `pred` must have shape (B,), not {tuple(size)}"
        )

    def leaf(t, f):
        rank = max(np.ndim(t), np.ndim(f), 1)
        return xp.where(xp.reshape(pred, size + (1,) * (rank - 1)), t, f)

    return _map2(leaf, on_true, on_false)


def any_example(pred):
    """Whether any example's ``pred`` holds: the test of a batched ``while`` loop."""
    return namespace(pred).any(pred)


# --------------------------------------------------------------------------- indexing

_MASK_ERROR = (
    "a batched boolean mask selects a different number of elements in each example, "
    "so the batched result has no fixed shape; write it with `xp.where(mask, x, fill)` "
    "instead (e.g. `xp.sum(xp.where(mask, x, 0))` for a masked sum)"
)


def _index_flags(index, flags, name):
    """The index as a tuple of components and one batched flag per component."""
    parts = index if isinstance(index, tuple) else (index,)
    if isinstance(flags, (tuple, list)):
        flags = tuple(bool(f) for f in flags)
        if not isinstance(index, tuple) and len(flags) == 1:
            pass
        elif len(flags) != len(parts):
            raise ValueError(
                f"batching.{name}: {len(flags)} index flags for {len(parts)} index "
                "components"
            )
    else:
        if isinstance(index, tuple) and flags:
            raise ValueError(
                f"batching.{name}: give one batched flag per component of a tuple index"
            )
        flags = (bool(flags),) * len(parts)
    return parts, flags


def _is_array(part):
    return getattr(part, "dtype", None) is not None and hasattr(part, "shape")


def _components(xp, parts, flags, name):
    """Classify index components: ``("new",)``, ``("ellipsis",)``, ``("slice", s)``, ``("int", i)``,
    ``("array", a, batched)``; lists become arrays, unbatched masks their ``nonzero`` arrays.
    """
    out = []
    for part, flag in zip(parts, flags):
        if isinstance(part, list):
            part = arrays.index_array(part)
        if part is None:
            kind = ("new",)
        elif part is Ellipsis:
            kind = ("ellipsis",)
        elif isinstance(part, slice):
            kind = ("slice", part)
        elif isinstance(part, (bool, np.bool_)):
            raise ValueError(
                f"batching.{name}: a boolean scalar index is not supported in batched code"
            )
        elif isinstance(part, (int, np.integer)):
            kind = ("int", part)
        elif _is_array(part) and np.dtype(part.dtype) == np.dtype(bool):
            if flag:
                raise ValueError(f"batching.{name}: {_MASK_ERROR}")
            if np.ndim(part) == 0:
                raise ValueError(
                    f"batching.{name}: a boolean scalar index is not supported in "
                    "batched code"
                )
            # an unbatched mask: its ``nonzero`` integer arrays (NumPy's own reading)
            nonzero = np.nonzero if isinstance(part, np.ndarray) else xp.nonzero
            out.extend(("array", p, False) for p in nonzero(part))
            continue
        elif _is_array(part) and np.dtype(part.dtype).kind in "iu":
            if flag and np.ndim(part) == 0:
                raise ValueError(
                    f"batching.{name}: a batched index array needs its batch axis 0"
                )
            kind = ("array", part, flag)
        else:
            raise IndexError(
                f"batching.{name}: only integers, slices, None, Ellipsis and integer or "
                f"boolean arrays are valid indices, not {type(part).__name__}"
            )
        if flag and kind[0] != "array":
            raise ValueError(
                f"batching.{name}: index component {part!r} is marked batched but is "
                "not an array"
            )
        out.append(kind)
    return out


class _Plan:
    """How one gather ``x[index]`` computes every example's ``x_i[index_i]`` at once.

    The gather's axes are labelled ``"B"`` (the batch), ``("S", j)`` (the broadcast
    shape of the advanced indices) and ``("b", k)`` (what slices keep). Where ``x`` is
    batched, ``arange(B)`` leads the index as one more advanced index, so the gather
    is ``(B, *S, *basic)``; where ``x`` is ``shared`` (unbatched: only the index is
    batched), the gather follows NumPy's rule on its own index. ``perm`` reorders the
    gather into ``(B, *one example's NumPy layout)`` without its ``None`` axes, and
    ``shape`` is that layout with them.
    """

    def __init__(self, xp, ex_shape, size, comps, name, shared=False):
        consumed = sum(c[0] in ("slice", "int", "array") for c in comps)
        ellipses = sum(c[0] == "ellipsis" for c in comps)
        if ellipses > 1:
            raise IndexError(
                f"batching.{name}: an index can only have a single ellipsis ('...')"
            )
        rest = len(ex_shape) - consumed
        if rest < 0:
            raise IndexError(
                f"batching.{name}: too many indices: each example has {len(ex_shape)} "
                f"dimensions but {consumed} were indexed"
            )
        has_array = any(c[0] == "array" for c in comps)
        if not ellipses:
            comps = [*comps, ("ellipsis",)]
        adv_shapes, entries, example, basic = [], [], [], []
        # NumPy's test for one example: are its advanced indices adjacent (``None`` and
        # ``...``, even an empty one, separate them)? If not, their axes lead.
        axis, status, first = 0, -1, 0
        for c in comps:
            if c[0] == "array" or (c[0] == "int" and has_array):
                if status == -1:
                    status, first = 0, len(example)
                elif status == 1:
                    status = 2
            elif status == 0:
                status = 1
            if c[0] == "new":
                example.append("new")
            elif c[0] in ("slice", "ellipsis"):
                for cut in [c[1]] if c[0] == "slice" else [slice(None)] * rest:
                    example.append(("b", len(basic)))
                    basic.append(len(range(*cut.indices(ex_shape[axis]))))
                    entries.append(cut)
                    axis += 1
            else:
                if c[0] == "array":
                    adv_shapes.append(np.shape(c[1])[1:] if c[2] else np.shape(c[1]))
                entries.append(c)
                axis += 1
        adv = np.broadcast_shapes(*adv_shapes) if has_array else ()
        m = len(adv)
        block = ["B"] + [("S", j) for j in range(m)]
        if has_array:
            at = first if status != 2 else 0
            example[at:at] = block[1:]
        basics = [("b", k) for k in range(len(basic))]
        if not has_array:
            lead, gathered = [slice(None)], ["B", *basics]
        elif not shared:
            lead, gathered = [xp.reshape(xp.arange(size), (size,) + (1,) * m)], [
                *block,
                *basics,
            ]
        else:  # NumPy's test again, on the gather's index (no ``None``, no ``...``)
            lead = []
            spots = [i for i, e in enumerate(entries) if not isinstance(e, slice)]
            if spots == list(range(spots[0], spots[-1] + 1)):
                gathered = basics[: spots[0]] + block + basics[spots[0] :]
            else:
                gathered = block + basics
        sizes = {"B": size}
        sizes.update({("S", j): n for j, n in enumerate(adv)})
        sizes.update({("b", k): n for k, n in enumerate(basic)})
        final = ["B", *example]
        self.perm = [gathered.index(a) for a in final if a != "new"]
        self.r_shape = tuple(sizes[a] for a in gathered)
        self.shape = tuple(1 if a == "new" else sizes[a] for a in final)
        index = list(lead)
        for e in entries:
            if isinstance(e, slice):
                index.append(e)
            elif e[0] == "int" or not e[2]:
                index.append(e[1])
            else:  # a batched integer array: (B, 1.., *its per-example shape)
                shape = np.shape(e[1])
                index.append(
                    xp.reshape(
                        e[1], shape[:1] + (1,) * (m + 1 - len(shape)) + shape[1:]
                    )
                )
        self.index = tuple(index)

    def to_examples(self, xp, r):
        """The gather in each example's layout: ``(B, *one example's shape)``."""
        if self.perm != sorted(self.perm):
            r = xp.transpose(r, self.perm)
        if np.shape(r) != self.shape:
            r = xp.reshape(r, self.shape)
        return r

    def from_examples(self, xp, v):
        """A ``(B, *one example's indexed shape)`` value in the gather's layout: ``to_examples``'s inverse."""
        v = xp.reshape(v, tuple(self.r_shape[a] for a in self.perm))
        if self.perm != sorted(self.perm):
            v = xp.transpose(v, [int(i) for i in np.argsort(self.perm)])
        return v


def _batched_source(x, x_flag, parts, flags, name):
    if x_flag:
        return np.shape(x)[0]
    for part, flag in zip(parts, flags):
        if flag:
            return np.shape(part)[0]
    raise ValueError(
        f"batching.{name}: neither the array nor its index is batched, so there is "
        "no batch size; index the unbatched array instead"
    )


def _broadcast_batch(xp, x, flag, size):
    if flag:
        return x
    x = xp.asarray(x)
    return xp.broadcast_to(x, (size, *np.shape(x)))


def getitem(x, index, batched):
    """Per-example ``x_i[index_i]``; ``batched = (x_batched, index_batched)``, ``index_batched`` a bool, or
    one bool per component of a tuple index (which integer arrays carry a batch axis 0).
    """
    x_flag, index_flags = batched
    x_flag = bool(x_flag)
    parts, flags = _index_flags(index, index_flags, "getitem")
    xp = namespace(x, parts)
    x = xp.asarray(x)
    size = _batched_source(x, x_flag, parts, flags, "getitem")
    comps = _components(xp, parts, flags, "getitem")
    # an unbatched ``x`` (a shared table read at batched indices) is gathered from as it
    # is: the batch axis comes from the indices, and ``x`` is never broadcast
    ex_shape = np.shape(x)[1:] if x_flag else np.shape(x)
    plan = _Plan(xp, ex_shape, size, comps, "getitem", shared=not x_flag)
    return plan.to_examples(xp, x[plan.index])


def index_set(target, index, value, batched):
    """Per-example ``rt.index_set(target_i, index_i, value_i)``: ``target_i[index_i] = value_i`` on a copy
    (repeated indices: the last write wins); ``batched = (target_b, index_b, value_b)``.
    """
    return _update(target, index, value, batched, "index_set")


def index_add(target, index, value, batched):
    """Per-example ``rt.index_add(target_i, index_i, value_i)``: ``target_i[index_i] += value_i`` on a copy
    (repeated indices accumulate); ``batched = (target_b, index_b, value_b)``."""
    return _update(target, index, value, batched, "index_add")


def _lift_value(xp, value, flag, shape):
    """``value`` (one example's value, batched or not) broadcast to ``shape`` = ``(B, *indexed shape)``."""
    value = xp.asarray(value)
    vshape = np.shape(value)
    ex = list(vshape[1:] if flag else vshape)
    while len(ex) > len(shape) - 1 and ex[0] == 1:  # NumPy drops leading unit dims
        ex.pop(0)
    if flag:
        value = xp.reshape(
            value, vshape[:1] + (1,) * (len(shape) - 1 - len(ex)) + tuple(ex)
        )
    else:
        value = xp.reshape(value, tuple(ex))
    return xp.broadcast_to(value, shape)


def _update(target, index, value, batched, name):
    t_flag, index_flags, v_flag = batched
    t_flag, v_flag = bool(t_flag), bool(v_flag)
    parts, flags = _index_flags(index, index_flags, name)
    xp = namespace(target, parts, value)
    target = xp.asarray(target)
    if t_flag:
        size = np.shape(target)[0]
    elif v_flag:
        size = np.shape(value)[0]
    else:
        size = _batched_source(target, False, parts, flags, name)
    target = _broadcast_batch(xp, target, t_flag, size)
    ex_shape = np.shape(target)[1:]
    if len(parts) == 1 and _is_array(parts[0]):
        mask = parts[0]
        if np.dtype(mask.dtype) == np.dtype(bool):
            # a mask with a scalar or full-shaped value: a ``where`` (compiles under jit, and a
            # batched mask keeps every example's shape)
            if _mask_fits(mask, flags[0], value, v_flag, ex_shape, name):
                return _where_update(xp, target, mask, flags[0], value, v_flag, name)
            if flags[0]:
                raise ValueError(
                    f"batching.{name}: a batched boolean mask can only write a scalar "
                    "(index_set: or a full-shaped value) per example, as a `where`: "
                    + _MASK_ERROR.replace("the batched result", "the written value")
                )
    comps = _components(xp, parts, flags, name)
    plan = _Plan(xp, ex_shape, size, comps, name)
    v = plan.from_examples(xp, _lift_value(xp, value, v_flag, plan.shape))
    if name == "index_add":
        return arrays.index_add(target, plan.index, v)
    return arrays.index_set(target, plan.index, v)


def _mask_fits(mask, m_flag, value, v_flag, ex_shape, name):
    """``rt.index_set``'s ``where`` case per example: the mask covers leading axes, the value is a scalar
    (or, for ``index_set`` only, full-shaped: ``x[mask] = v`` then writes ``v[mask]``).
    """
    ms = np.shape(mask)[1:] if m_flag else np.shape(mask)
    vs = np.shape(value)[1:] if v_flag else np.shape(value)
    full = name == "index_set" and tuple(vs) == tuple(ex_shape)
    return (
        len(ms) > 0
        and tuple(ms) == tuple(ex_shape[: len(ms)])
        and (len(vs) == 0 or full)
    )


def _where_update(xp, target, mask, m_flag, value, v_flag, name):
    rank = np.ndim(target) - 1
    ms = np.shape(mask)
    mask = xp.reshape(mask, ms + (1,) * (rank - (len(ms) - int(m_flag))))
    value = _lift(xp, xp.asarray(value, dtype=target.dtype), v_flag, rank)
    if name == "index_add":
        return target + xp.where(mask, value, xp.zeros((), target.dtype))
    return xp.where(mask, value, target)
