"""Indexing in batched generated code (``s2s.vmap``): ``x[index]`` and the element writes ``x[index] = v``
and ``x[index] += v`` per example, with the batch axis on the array, on index arrays, or on both.

Conventions as in ``batching.py`` (batch axis 0, ``batched`` flags per operand; for an index, one
flag, or one per component of a tuple index).
"""

import numpy as np

from . import arrays, scatters
from .arrays import namespace
from .batch_axes import broadcast_batch, lift
from .iteration import Elements
from .located import ValueRefusal

_MASK_ERROR = (
    "a batched boolean mask selects a different number of elements in each example, "
    "so the batched result has no fixed shape; write it with `xp.where(mask, x, fill)` "
    "instead (e.g. `xp.sum(xp.where(mask, x, 0))` for a masked sum)"
)
_MASK_REFUSAL = (
    "a boolean mask that differs per example selects a different number of elements in each "
    "example, so the selection has no fixed shape under `vmap`",
    "reduce the selection on the line that makes it or the next (`np.sum(x[m])`, `np.mean(x[m])`, "
    "`len(x[m])` are computed as masked reductions), or write it with `np.where(m, x, fill)`",
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
    elif isinstance(index, tuple) and flags:
        # an index computed in batched code (``rt.clip_index``): its integer arrays carry the batch axis
        flags = tuple(_is_array(p) and np.dtype(p.dtype).kind in "iu" for p in parts)
    else:
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
                raise ValueRefusal(*_MASK_REFUSAL)
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
    return x if flag else broadcast_batch(x, size)


def getitem(x, index, batched):
    """Per-example ``x_i[index_i]``; ``batched = (x_batched, index_batched)``, ``index_batched`` a bool, or
    one bool per component of a tuple index (which integer arrays carry a batch axis 0).
    """
    # a container's item: the same key for every example
    if isinstance(x, (dict, list, tuple, Elements)):
        return x[index]
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


def index_get(target, index, batched):
    """Per-example ``rt.index_get(target_i, index_i)`` (``target[index] += v`` reads it): a boolean mask
    over each example's leading axes reads the whole target, as ``rt.index_get`` does under JAX (a
    per-example selection has no fixed shape), and ``index_set`` writes back only where it holds.
    """
    if reads_whole(target, index, batched):
        return target
    return getitem(target, index, batched)


def reads_whole(target, index, batched) -> bool:
    """Whether ``index`` is a boolean mask over the leading axes of ``target``'s examples."""
    t_flag, i_flag = (bool(f) for f in batched[:2])
    if getattr(index, "dtype", None) != np.dtype(bool) or isinstance(target, dict):
        return False
    mask_shape = np.shape(index)[i_flag:]
    return (
        len(mask_shape) > 0
        and mask_shape == np.shape(target)[t_flag:][: len(mask_shape)]
    )


def take(a, indices, axis, mode, batched):
    """Per-example ``np.take(a_i, indices_i, axis, mode=mode)`` where the indices differ per example
    (``jnp.take(E, ids, axis=0)`` under ``jax.vmap``, ``ids`` per example); ``batched = (a_b, indices_b)``.
    JAX's own ``take`` mapped over the examples on JAX values (its ``mode``s as JAX reads them); on NumPy
    values, the positions ``take`` reads (``take_indices``) indexed per example (``getitem``), which
    raises where ``np.take`` does."""
    a_flag, i_flag = (bool(f) for f in batched)
    if arrays._is_jax(a) or arrays._is_jax(indices):
        import jax
        import jax.numpy as jnp

        one = lambda x, i: jnp.take(x, i, axis=axis, mode=mode)  # noqa: E731
        return jax.vmap(one, in_axes=(0 if a_flag else None, 0 if i_flag else None))(
            a, indices
        )
    from .rulesupport import take_indices

    a = np.asarray(a)
    length = take_length(a, axis, a_flag)
    if axis is None:
        a = np.reshape(a, (a.shape[0], -1) if a_flag else (-1,))
        axis = 0
    k = int(axis) % (np.ndim(a) - a_flag)
    indices = take_indices(np.asarray(indices), length, mode)
    index = (slice(None),) * k + (indices,)
    return getitem(a, index, (a_flag, (False,) * k + (i_flag,)))


def take_length(a, axis, a_batched) -> int:
    """``rulesupport.take_length`` of one example of ``a``."""
    from .rulesupport import take_length as length

    return length(a[0] if a_batched else a, axis)


def index_set(target, index, value, batched, size=None):
    """Per-example ``rt.index_set(target_i, index_i, value_i)``: ``target_i[index_i] = value_i`` on a copy
    (repeated indices: the last write wins); ``batched = (target_b, index_b, value_b)``; ``size``, the
    batch size, gives a value the same for every example the batch axis where the target is a container
    that differs per example (each of its leaves carries the axis, the first one written too).
    """
    return _update(target, index, value, batched, "index_set", size)


def zero_at(g, index, batched, like=None):
    """Per-example ``rt.zero_at(g_i, index_i, like_i)``: zeros written at ``index``; ``batched = (g_b,
    index_b, ...)``."""
    # a container's item: the same key for every example
    if arrays.holds_items(g) or isinstance(g, dict):
        return arrays.zero_at(g, index, like)
    g_flag, index_flags = batched[:2]
    return _update(g, index, 0, (g_flag, index_flags, False), "index_set")


def index_add(target, index, value, batched):
    """Per-example ``rt.index_add(target_i, index_i, value_i)``: ``target_i[index_i] += value_i`` on a copy
    (repeated indices accumulate); ``batched = (target_b, index_b, value_b)``."""
    return _update(target, index, value, batched, "index_add")


def index_read_add(target, index, value, batched):
    """Per-example ``rt.index_read_add(target_i, index_i, value_i)``: ``value_i`` added where
    ``target_i[index_i]`` reads, a traced position past an end clamped as the read clamps it.
    """
    t_flag, index_flags, v_flag = batched
    if isinstance(target, (dict, list, tuple, Elements)):
        return index_add(target, index, value, batched)
    parts, flags = _index_flags(index, index_flags, "index_read_add")
    if not traced_positions(parts, flags):
        return index_add(target, index, value, batched)
    return per_example(
        lambda t, v, at: arrays.index_read_add(t, at, v),
        index,
        parts,
        flags,
        (target, t_flag),
        (value, v_flag),
    )


def traced_positions(parts, flags) -> bool:
    """Whether an index holds, per example, traced integers of no axes (each example's own ``i`` in
    ``u[i]``) beside slices and numbers: JAX clamps such a read past an end, and drops such a write.
    """
    shaped = [(p, bool(f)) for p, f in zip(parts, flags) if _is_array(p)]
    return (
        any(arrays._is_jax(p) for p, _ in shaped)
        and all(np.dtype(p.dtype).kind in "iu" for p, _ in shaped)
        and any(np.ndim(p) == f for p, f in shaped)
        and all(np.ndim(p) == f for p, f in shaped)
    )


def per_example(one, index, parts, flags, *operands):
    """``one(operand_1, ..., index)`` of each example, through ``jax.vmap``: ``operands`` are ``(value,
    batched)`` pairs, the index's arrays batched as ``flags`` say (JAX's own reading of one example's
    index: its clamped reads, its dropped writes)."""
    import jax

    dynamic = [k for k, p in enumerate(parts) if _is_array(p)]

    def each(*given):
        values, positions = given[: len(operands)], given[len(operands) :]
        full = list(parts)
        for k, part in zip(dynamic, positions):
            full[k] = part
        return one(*values, tuple(full) if isinstance(index, tuple) else full[0])

    axes = [0 if flag else None for _, flag in operands]
    axes += [0 if flags[k] else None for k in dynamic]
    return jax.vmap(each, in_axes=tuple(axes))(
        *(value for value, _ in operands), *(parts[k] for k in dynamic)
    )


def index_multiply(target, index, value, unique_indices, batched):
    """Per-example ``rt.index_multiply(target_i, index_i, value_i)`` (repeated indices multiply)."""
    return _update(target, index, value, batched, "index_multiply")


def index_min(target, index, value, batched):
    """Per-example ``rt.index_min(target_i, index_i, value_i)``."""
    return _update(target, index, value, batched, "index_min")


def index_max(target, index, value, batched):
    """Per-example ``rt.index_max(target_i, index_i, value_i)``."""
    return _update(target, index, value, batched, "index_max")


def _scatter(name):
    """The unbatched update ``name`` (``index_set``, ``index_max``, ...), which the batched ones call."""
    return getattr(arrays, name, None) or getattr(scatters, name)


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


def _update(target, index, value, batched, name, size=None):
    t_flag, index_flags, v_flag = batched
    t_flag, v_flag = bool(t_flag), bool(v_flag)
    if isinstance(target, (dict, list, tuple, Elements)):
        # a Python container's element (a list of layers' cotangents): the index is the same for every
        # example; the container's leaves carry the batch axis whenever the value does
        from .batched_loops import array_leaves

        first = next(array_leaves(value), None)
        if v_flag and not t_flag and first is not None:
            target = broadcast_batch(target, np.shape(first)[0])
        if t_flag and not v_flag and first is not None:
            held = next(array_leaves(target), None)
            size = size if held is None else np.shape(held)[0]
            if size is None:
                raise ValueError(
                    f"batching.{name}: a value the same for every example written into an empty "
                    "container that differs per example, whose batch size is not known here"
                )
            value = broadcast_batch(value, size)
        # (no leaf: an empty slice's items, ``rest`` of ``first, *rest = [x]``: nothing is written)
        return _scatter(name)(target, index, value)
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
    among_slices = _mask_among_slices(xp, parts, flags, ex_shape)
    if among_slices is not None and np.ndim(value) == int(v_flag):
        # ``scores[:, ~m] = -1e9``: a number written by a mask among full slices, a ``where`` per example
        return _where_update(xp, target, *among_slices, value, v_flag, name)
    comps = _components(xp, parts, flags, name)
    plan = _Plan(xp, ex_shape, size, comps, name)
    v = plan.from_examples(xp, _lift_value(xp, value, v_flag, plan.shape))
    return _scatter(name)(target, plan.index, v)


def _mask_among_slices(xp, parts, flags, ex_shape):
    """``(mask, batched)`` for an index of full slices and one boolean array (``(:, m)``): the mask over
    every axis of an example (with the batch axis where it has one), else None."""
    bools = [k for k, p in enumerate(parts) if _is_array(p) and p.dtype == bool]
    if len(parts) < 2 or len(bools) != 1:
        return None
    if not all(
        k in bools or (isinstance(p, slice) and p == slice(None))
        for k, p in enumerate(parts)
    ):
        return None
    k = bools[0]
    mask, m_flag = parts[k], bool(flags[k])
    ms = np.shape(mask)[1:] if m_flag else np.shape(mask)
    if tuple(ms) != tuple(ex_shape[k : k + len(ms)]):
        return None
    lead = np.shape(mask)[:1] if m_flag else ()
    trailing = len(ex_shape) - k - len(ms)
    shaped = xp.reshape(mask, lead + (1,) * k + tuple(ms) + (1,) * trailing)
    return xp.broadcast_to(shaped, lead + tuple(ex_shape)), m_flag


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
    value = xp.asarray(value, dtype=target.dtype)
    value = lift(value, rank) if v_flag else value
    if name == "index_add":
        return target + xp.where(mask, value, xp.zeros((), target.dtype))
    combined = {
        "index_set": value,
        "index_multiply": target * value,
        "index_min": xp.minimum(target, value),
        "index_max": xp.maximum(target, value),
    }[name]
    return xp.where(mask, combined, target)


# --- the index helpers of ``x.at[...]``'s options, per example ------------------------------------


def _example_shape(target, t_flag):
    return np.shape(target)[1:] if t_flag else np.shape(target)


def _index_size(target, t_flag, parts, flags, name):
    return _batched_source(target, t_flag, parts, flags, name)


def _integers_per_example(out, index, flags, size):
    """The components of a clipped or padded index, each integer one (an array, or a number: ``x.at[7]``)
    given the batch axis where it has none."""
    fixed = [
        p if f or not scatters._integer(p) else broadcast_batch(p, size)
        for p, f in zip(out if isinstance(index, tuple) else (out,), flags)
    ]
    return tuple(fixed) if isinstance(index, tuple) else fixed[0]


def clip_index(target, index, batched):
    """Per-example ``rt.clip_index(target_i, index_i)``. Every integer array of the result carries the
    batch axis (a single ``True`` flag then describes it, see ``_index_flags``)."""
    t_flag, index_flags = bool(batched[0]), batched[1]
    parts, flags = _index_flags(index, index_flags, "clip_index")
    xp = namespace(target, parts)
    size = _index_size(target, t_flag, parts, flags, "clip_index")
    if any(f and scatters._is_bool_array(p) for p, f in zip(parts, flags)):
        raise ValueError(f"batching.clip_index: {_MASK_ERROR}")
    out = scatters.clipped(_example_shape(target, t_flag), index, xp, flags)
    return _integers_per_example(out, index, flags, size)


def fill_index(target, index, batched):
    """Per-example ``rt.fill_index(target_i, index_i)`` (integer arrays with the batch axis, as ``clip_index``)."""
    t_flag, index_flags = bool(batched[0]), batched[1]
    parts, flags = _index_flags(index, index_flags, "fill_index")
    xp = namespace(target, parts)
    size = _index_size(target, t_flag, parts, flags, "fill_index")
    if any(f and scatters._is_bool_array(p) for p, f in zip(parts, flags)):
        raise ValueError(f"batching.fill_index: {_MASK_ERROR}")
    _, out = scatters.padded(_example_shape(target, t_flag), index, xp, flags)
    return _integers_per_example(out, index, flags, size)


def in_bounds(target, index, batched):
    """Per-example ``rt.in_bounds(target_i, index_i)``: ``(batch, *one example's indexed shape)``."""
    t_flag, index_flags = bool(batched[0]), batched[1]
    parts, flags = _index_flags(index, index_flags, "in_bounds")
    xp = namespace(target, parts)
    size = _index_size(target, t_flag, parts, flags, "in_bounds")
    shape = _example_shape(target, t_flag)
    padding, moved = scatters.padded(shape, index, xp, flags)
    inside = xp.pad(xp.ones(shape, bool), padding, constant_values=False)
    if not any(flags):
        return broadcast_batch(inside[moved], size)
    return getitem(
        inside, moved, (False, flags if isinstance(index, tuple) else flags[0])
    )


def require_unique(x, index, unique_indices, batched):
    """Per-example ``rt.require_unique(x_i, index_i, unique_indices)``: ``x`` with the batch axis."""
    x_flag, index_flags = bool(batched[0]), batched[1]
    parts, flags = _index_flags(index, index_flags, "require_unique")
    if not unique_indices and scatters.may_repeat(index, flags):
        raise scatters.Refusal(*scatters.UNIQUE_REFUSAL)
    if x_flag:
        return x
    return broadcast_batch(x, _batched_source(x, False, parts, flags, "require_unique"))


def filled_per_example(g, index, parts, flags):
    """Each example of ``g`` (batched) at its ``index`` (components batched as ``flags`` say), zero where
    an integer position is out of range (``.at[i].get(mode="fill")``)."""
    import jax.numpy as jnp

    return per_example(
        lambda example, at: jnp.asarray(example).at[at].get(mode="fill", fill_value=0),
        index,
        parts,
        flags,
        (g, True),
    )
