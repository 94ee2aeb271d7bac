"""Array helpers shared by every backend: namespace lookup, broadcasting, index updates."""

import numpy as np

from .located import Refusal


def _is_jax(value):
    """A JAX array or tracer: JAX computes with it. A typed key array outside any trace
    (``jax.random.key(0)`` on the NumPy backend) is not: only ``jax.random`` draws read it.
    """
    if not type(value).__module__.startswith(("jax", "jaxlib")):
        return False
    return not _concrete_key(value)


def namespace(*values):
    """The array namespace of the values: ``jax.numpy`` if any leaf is a JAX array or tracer (its twin that
    keeps integer arithmetic on known values known, ``known_integers``), else ``numpy``.

    Containers (tuple, list, dict, namedtuple) are searched leaf by leaf; Python
    scalars and NumPy arrays leave the choice to NumPy.
    """
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, (tuple, list)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif _is_jax(value):
            from .known_integers import jnp

            return jnp
        elif not isinstance(value, (np.ndarray, np.generic, int, float)):
            from .trees import _children, _is_record

            if _is_record(value):
                stack.extend(v for _, v in _children(value))
    return np


def _concrete_key(value) -> bool:
    """A typed key array that is not a tracer (``jax.random.key(0)`` on the NumPy backend)."""
    import jax

    if isinstance(value, jax.core.Tracer):
        return False
    dtype = getattr(value, "dtype", None)
    return dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


JOINED_LISTS = (
    "`+` or `*` joined or repeated Python lists (or tuples) on the differentiated path: s2s differentiates "
    "arithmetic on arrays, not on lists",
    "join arrays with `np.concatenate`/`np.stack`, or build the list with one display `[a, b, c]`",
)


def unbroadcast(value, like):
    """Sum ``value`` down to the shape of ``like``: the transpose of NumPy broadcasting.

    A cotangent that is a Python list (of a result that is one) longer than the list ``like``: the
    operator joined or repeated lists (``ws + vs``, ``[w] * 3``), which no array rule undoes: an error.
    """
    if isinstance(value, (list, tuple)) and isinstance(like, (list, tuple)):
        if len(value) != len(like):
            raise Refusal(*JOINED_LISTS)
        return value
    shape = np.shape(like)
    if np.shape(value) == shape:
        return value
    xp = namespace(value)
    extra = np.ndim(value) - len(shape)
    if extra:
        value = xp.sum(value, axis=tuple(range(extra)))
    kept = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(value)[i] != 1)
    if kept:
        value = xp.sum(value, axis=kept, keepdims=True)
    return xp.reshape(value, shape)


def broadcast_like(value, like):
    """``value`` broadcast to the shape of ``like``: the tangent of an operand that broadcasts in an elementwise op.

    A result ``like`` that is a Python list or tuple: the operator joined or repeated sequences
    (``args + (w,)``), which no array rule computes: an error, never an array sum.
    """
    if isinstance(like, (list, tuple)):
        raise Refusal(*JOINED_LISTS)
    shape = np.shape(like)
    if np.shape(value) == shape:
        return value
    return namespace(value).broadcast_to(value, shape)


def reduced_like(g, like, axis=None, keepdims=False):
    """Broadcast the cotangent ``g`` of a reduction over ``axis`` back to the shape of ``like``."""
    xp = namespace(g, like)
    shape = np.shape(like)
    if not keepdims and axis is not None:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        axes = sorted(a % len(shape) for a in axes)
        g = xp.expand_dims(g, tuple(axes))
    elif not keepdims:
        g = xp.reshape(g, (1,) * len(shape))
    return xp.broadcast_to(g, shape)


def reduced_count(a, axis=None):
    """How many elements of ``a`` a reduction over ``axis`` combines into each result."""
    shape = np.shape(a)
    if axis is None:
        return int(np.prod(shape))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return int(np.prod([shape[i] for i in axes]))


def index_add(target, index, value):
    """``target`` with ``value`` added at ``index`` (repeated indices accumulate), as a new array.

    A container ``target`` (the cotangent of a dict or list read with a key
    known only at trace time) gets ``value`` added to its element ``index``.
    """
    from .iteration import Elements

    if isinstance(
        target, Elements
    ):  # a list of items of different shapes: item by item
        if isinstance(index, slice):
            items = list(target.items)
            for k, v in zip(range(*index.indices(len(items))), value, strict=True):
                items[k] = index_add(items[k], (), v)
            return Elements(items)
        return _with_item(target, index, index_add(target[index], (), value))
    if isinstance(target, (dict, list, tuple)):
        from .trees import tree_add

        if (
            isinstance(index, tuple) and not index
        ):  # the whole container (an item of ``Elements``)
            return tree_add(target, value)
        out = dict(target) if isinstance(target, dict) else list(target)
        out[index] = tree_add(out[index], value)
        if isinstance(target, tuple):
            return type(target)(*out) if hasattr(target, "_fields") else tuple(out)
        return out
    mask = number_write_mask(index, target, value)
    if mask is not None:
        # ``x.at[mask].add(v)``: a ``where``, which compiles with a mask known only at run time
        xp = namespace(target, index, value)
        value = xp.asarray(value, dtype=xp.asarray(target).dtype)
        return target + xp.where(mask, value, xp.zeros((), value.dtype))
    from .trees import uses_jax

    # (a traced index into a NumPy array, a constant or integers known when traced: JAX's scatter)
    if _is_jax(target) or _is_jax(value) or uses_jax(index):
        import jax.numpy as jnp

        # ``x[None]``, ``x[:, None, :]``: a reshape, not a scatter (XLA's CPU compiler aborts on some
        if _reshapes(index):
            # compositions of such scatters with reversals: ``cumsum``'s vjp)
            indexed = np.shape(jnp.asarray(target)[index])
            return target + jnp.reshape(
                jnp.broadcast_to(value, indexed), np.shape(target)
            )
        target = jnp.asarray(target)
        return target.at[index].add(_as_element(jnp, value, target))
    out = np.array(target, copy=True)
    np.add.at(out, index, value)
    return out


def _reshapes(index) -> bool:
    """An index of whole axes and inserted ones (``None``, ``(:, None, :)``, ``...``): the indexed array is
    the array reshaped."""
    parts = index if isinstance(index, tuple) else (index,)
    return bool(parts) and all(
        p is None or p is Ellipsis or (isinstance(p, slice) and p == slice(None))
        for p in parts
    )


def truncates(target, value) -> bool:
    """Whether writing ``value`` into ``target`` casts it to integers (NumPy's and JAX's ``x[i] = v``)."""
    dtype = getattr(target, "dtype", None)
    if dtype is None or not np.issubdtype(np.dtype(dtype), np.integer):
        return False
    kind = getattr(value, "dtype", None)
    if kind is None:
        return isinstance(value, (float, complex))
    return not np.issubdtype(np.dtype(kind), np.integer) and np.dtype(kind) != bool


def written_dtype(target, value):
    """The dtype a value written into ``target`` (``x[i] = v``) is stored as: ``target``'s (integers truncate
    the value, so its tangent is zero there: ``rt.astype_jvp``); None in a container, which stores the
    value as it is (an array, a number, a tuple of them: its tangent as it is too).
    """
    return getattr(target, "dtype", None)


def index_add_value_vjp(g, index, value):
    """The cotangent of ``value`` in ``index_add(target, index, value)``: ``g`` at ``index``, summed to ``value``'s shape."""
    if isinstance(g, (dict, list, tuple)):
        return g[index]
    mask = number_write_mask(index, g, value)
    if mask is not None:
        return unbroadcast(namespace(g, index).where(mask, g, 0), value)
    if _gathers(index) and (_is_jax(g) or _is_jax(index)):
        # JAX's scatter-add drops an update whose index is out of range (a graph's padding edges):
        # it gets no cotangent (a plain gather would clamp, and hand it the last row's)
        import jax.numpy as jnp

        return unbroadcast(
            jnp.asarray(g).at[index].get(mode="fill", fill_value=0), value
        )
    if _traced_position(index):
        return _dropped_past_the_end(g, index, value)
    return unbroadcast(g[index], value)


def _is_mask(index, target) -> bool:
    """A boolean array selecting elements of ``target`` (``x[x > 0] = v``)."""
    dtype = getattr(index, "dtype", None)
    return (
        dtype is not None
        and dtype == np.dtype(bool)
        and np.ndim(index) > 0
        and np.shape(index) == np.shape(target)[: np.ndim(index)]
    )


def _mask_broadcasts(index, target, value) -> bool:
    return np.ndim(value) == 0 or np.shape(value) == np.shape(target)


def _bool_array(index) -> bool:
    dtype = getattr(index, "dtype", None)
    return dtype is not None and dtype == np.dtype(bool) and np.ndim(index) > 0


def number_write_mask(index, target, value):
    """For a number written by a boolean mask (``x[m] = 0.0``, or among full slices: ``scores[:, ~m] =
    -1e9``, ``x[:, m] += v``): the mask shaped to broadcast against ``target``, so that a ``where`` does
    the write (it compiles with a mask known only when the code runs); else None."""
    if np.ndim(value) != 0:
        return None
    if _is_mask(index, target):
        lead, mask = 0, index
    elif (
        isinstance(index, tuple)
        and sum(_bool_array(i) for i in index) == 1
        and all(
            _bool_array(i) or (isinstance(i, slice) and i == slice(None)) for i in index
        )
    ):
        lead = next(k for k, i in enumerate(index) if _bool_array(i))
        mask = index[lead]
        if np.shape(mask) != np.shape(target)[lead : lead + np.ndim(mask)]:
            return None
    else:
        return None
    trailing = np.ndim(target) - lead - np.ndim(mask)
    return namespace(target, mask).reshape(
        mask, (1,) * lead + np.shape(mask) + (1,) * trailing
    )


def index_set(target, index, value):
    """``target`` with ``value`` written at ``index``, as a new array (``target`` is unchanged).

    A boolean mask with a scalar (or full-shaped) value is a ``where``, which
    compiles under ``jax.jit``; NumPy's other mask writes need concrete masks.
    A Python list or dict ``target`` (``grads["w"] = g``, ``hs[i] = h``) is
    copied with its item replaced: its other items are the same objects.
    """
    if holds_items(target):
        return _with_item(target, index, value)
    mask = number_write_mask(index, target, value)
    if (
        mask is None
        and _is_mask(index, target)
        and _mask_broadcasts(index, target, value)
    ):
        mask = namespace(target, index).reshape(
            index, np.shape(index) + (1,) * (np.ndim(target) - np.ndim(index))
        )
    if mask is not None:
        xp = namespace(target, index, value)
        return xp.where(mask, xp.asarray(value, dtype=xp.asarray(target).dtype), target)
    from .trees import uses_jax

    if _is_jax(target) or _is_jax(value) or uses_jax(index):
        import jax.numpy as jnp

        target = jnp.asarray(target)
        value = _as_element(jnp, value, target)
        # repeated indices: NumPy's last write wins (XLA's ``set`` picks any), so only the last write to
        # each place lands; the others are sent past the end and dropped (never arithmetic on the old
        # values: ``inf - inf``, or a 1e17 that swallows the new value)
        if _gathers(index):
            kept = _last_writes(target, index)
            places = jnp.reshape(jnp.arange(target.size), target.shape)[index]
            values = jnp.broadcast_to(value, places.shape).reshape(-1)
            places = jnp.where(kept, places, target.size).reshape(-1)
            flat = target.reshape(-1).at[places].set(values, mode="drop")
            return flat.reshape(target.shape)
        if (
            index is Ellipsis
        ):  # the whole array: no scatter (XLA's CPU compiler crashed on one)
            return jnp.broadcast_to(jnp.asarray(value, target.dtype), target.shape)
        return target.at[index].set(value)
    out = np.array(target, copy=True)
    out[index] = value
    return out


def _as_element(jnp, value, target):
    """A value written into an array takes the array's dtype, as NumPy's item assignment does (a float64
    value into a float32 array under ``jax_enable_x64``; a float into integers, truncated toward zero):
    JAX's scatter only warns today, and will refuse.
    """
    value = jnp.asarray(value)
    if value.dtype != target.dtype and (
        all(jnp.issubdtype(d, jnp.floating) for d in (value.dtype, target.dtype))
        or truncates(target, value)
    ):
        return value.astype(target.dtype)
    return value


def _python(value) -> bool:
    """A Python value (not an array): its truth is Python's (``not ()`` is True), known at trace time."""
    return value is None or type(value) in (bool, int, float, str, tuple, list, dict)


def logical_not(x):
    """``not x`` in a test: Python's for Python values (a static flag stays static, an empty tuple is false),
    elementwise for arrays (which the test's ``cond`` then reads)."""
    return (not x) if _python(x) else namespace(x).logical_not(x)


def logical_and(a, b):
    """``a and b`` in a test: decided at trace time where a Python value decides it, else elementwise."""
    if _python(a):
        return b if a else False
    if _python(b):
        return a if b else False
    return namespace(a, b).logical_and(a, b)


def logical_or(a, b):
    """``a or b`` in a test: decided at trace time where a Python value decides it, else elementwise."""
    if _python(a):
        return True if a else b
    if _python(b):
        return True if b else a
    return namespace(a, b).logical_or(a, b)


NONZERO_AXES = (
    "positions of nonzeros (`np.nonzero(m)[0]`) read as the mask they select by, but `m` has {} axes: "
    "positions and mask agree only for one",
    "index by the mask itself (`x[m != 0]`, `np.where(m, a, b)`), or run eagerly with backend='numpy'",
)


def nonzero_mask(m):
    """``np.nonzero(m)[0]`` used only to index, read as the mask it selects by: ``m != 0`` (the same items,
    in the same order), for ``m`` of one axis."""
    if np.ndim(m) != 1:
        message, hint = NONZERO_AXES
        raise Refusal(message.format(np.ndim(m)), hint)
    return namespace(m).asarray(m) != 0


def batched_nonzero_mask(m, batched, size):
    """``nonzero_mask`` of each example (``batched``: whether ``m`` holds the batch axis)."""
    from .batch_axes import broadcast_batch

    if not batched[0]:
        return broadcast_batch(nonzero_mask(m), size)
    if np.ndim(m) != 2:
        message, hint = NONZERO_AXES
        raise Refusal(message.format(np.ndim(m) - 1), hint)
    return namespace(m).asarray(m) != 0


def index_array(elements):
    """``x[[0, 2]]``'s index as NumPy reads it, an array: a NumPy one when its elements are known (a constant
    under ``jax.jit``, so a boolean one is a mask of known size), else one of the elements' namespace.
    """
    if any(_is_jax(e) for e in elements):
        return namespace(*elements).asarray(elements)
    return np.asarray(elements)


def _gathers(index) -> bool:
    """Whether ``index`` holds an integer array (or list): advanced indexing, where an index may repeat."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(
        isinstance(p, list)
        or (
            np.ndim(p) > 0
            and getattr(p, "dtype", None) is not None
            and np.dtype(p.dtype).kind in "iu"
        )
        for p in parts
    )


def _last_writes(target, index):
    """For each element of ``target[index]``: whether it is the last write to its place (NumPy's rule for
    repeated indices), so a repeated index's earlier values neither land nor get cotangents.
    """
    xp = namespace(target)
    shape = np.shape(target[index])
    order = xp.reshape(xp.arange(int(np.prod(shape))), shape)
    if _is_jax(order) or _is_jax(target):
        last = xp.full(np.shape(target), -1).at[index].max(order)
    else:
        last = np.full(np.shape(target), -1)
        np.maximum.at(last, index, order)
    return last[index] == order


def index_get(target, index):
    """``target[index]`` as ``target[index] += v`` reads it.

    Under JAX a boolean mask selects a number of elements known only at run
    time, which cannot be traced: the whole array is read instead, and
    ``index_set`` writes the result back only where the mask holds.
    """
    if _is_mask(index, target) and (_is_jax(target) or _is_jax(index)):
        return target
    return target[index]


def index_get_vjp(g, target, index):
    """The cotangent of ``target`` in ``rt.index_get(target, index)``."""
    if _is_mask(index, target) and (_is_jax(target) or _is_jax(index)):
        return g
    # ``track["x"] -= v`` of a dict or list: its item's cotangent, zeros elsewhere
    if holds_items(target):
        from .trees import tree_zeros_like

        return index_add(tree_zeros_like(target), index, g)
    return index_read_add(zeros_like_float(target), index, g)


def index_read_add(target, index, value):
    """``target`` with ``value`` added at the elements ``target[index]`` reads: the transpose of a read, as
    ``index_add`` is of its own write, but at a traced position of no axes (``u[i]``, ``M[i, 1:3]``) a
    position past either end is clamped, as JAX's ``dynamic_slice`` clamps it when it reads (and its
    transpose), where ``index_add`` drops the value (JAX's scatter)."""
    if _clamps(target, index, value):
        import jax.numpy as jnp

        target = jnp.asarray(target)
        return target.at[index].add(jnp.asarray(value, target.dtype), mode="clip")
    return index_add(target, index, value)


def index_read_add_value_vjp(g, index, value):
    """The cotangent of ``value`` in ``index_read_add(target, index, value)``: ``g`` at ``index`` (a traced
    position past an end clamped, as the read clamped it)."""
    if _clamps(g, index, value):
        import jax.numpy as jnp

        return unbroadcast(jnp.asarray(g)[index], value)
    return index_add_value_vjp(g, index, value)


def _clamps(target, index, value) -> bool:
    """Whether JAX reads ``target[index]`` at a traced position it clamps (``dynamic_slice``)."""
    return (
        not holds_items(target)
        and not isinstance(target, tuple)
        and _traced_position(index)
        and not _is_mask(index, target)
    )


def _traced_position(index) -> bool:
    """An index of traced integers of no axes (``u[i]``, ``M[i, 0]``), beside slices and numbers."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(_is_jax(p) and np.ndim(p) == 0 for p in parts) and not any(
        _is_jax(p) and np.ndim(p) > 0 for p in parts
    )


def _dropped_past_the_end(g, index, value):
    """``g`` at ``index`` for the value a write at a traced position stored: zeros where the position is
    past an end (JAX's scatter drops such a write, so the value reached nothing)."""
    import jax.numpy as jnp

    return unbroadcast(jnp.asarray(g).at[index].get(mode="fill", fill_value=0), value)


def holds_items(x) -> bool:
    """A Python list or dict, or the ``Elements`` a loop collected (whose items ``x[i] = v`` replaces)."""
    from .iteration import Elements

    return isinstance(x, (dict, list, Elements))


def _with_item(container, index, value):
    """A copy of ``container`` with one item replaced; the other items are the same objects."""
    from .iteration import Elements

    if _is_jax(index) and not isinstance(container, Elements):
        from .located import refuse_traced_item

        refuse_traced_item(container, index)
    if isinstance(container, dict):
        return {**container, index: value}
    items = list(container)
    items[index] = value
    return Elements(items) if isinstance(container, Elements) else items


def zero_at(g, index, like=None):
    """The cotangent of ``target`` in ``rt.index_set(target, index, value)``: ``g`` with zeros at ``index`` (the
    item a container's write replaced: zeros shaped like it). A tangent's dict gets the key the write made
    (``xs[t] = np.zeros(n)``): zeros shaped like the item of ``like``, the written container.
    """
    if isinstance(g, dict) and index not in g:
        if isinstance(like, dict) and index in like:
            from .trees import tree_zeros_like

            return {**g, index: tree_zeros_like(like[index])}
        return g  # a cotangent dict's missing entry is a zero
    if holds_items(g):
        from .trees import tree_zeros_like

        _refuse_list_slice(g, index)
        return _with_item(g, index, tree_zeros_like(g[index]))
    return index_set(g, index, 0)


def _refuse_list_slice(items, index) -> None:
    """A derivative through ``xs[a:b] = v`` of a Python list the function did not make (its own lists'
    slice writes are new lists: ``frontend/list_methods.py``): a located error, never a guess.
    """
    if isinstance(index, slice) and not isinstance(items, dict):
        from .located import Refusal

        raise Refusal(
            "a slice of a Python list written in place (`xs[a:b] = ...`), of a list s2s did not see made "
            "in this function: the write may change its length, and its derivative is not followed",
            "build the new list: `xs = xs[:a] + new_items + xs[b:]`",
        )


def index_set_value_vjp(g, index, value, target=None):
    """The cotangent of ``value`` in ``rt.index_set(target, index, value)``: ``g`` at ``index``, summed to
    ``value``'s shape; none where ``target`` holds integers and ``value`` does not (the write truncates it).
    """
    if truncates(target, value):
        return zeros_like_float(value)
    # a cotangent dict's missing entry is a zero
    if isinstance(g, dict) and index not in g:
        from .trees import tree_zeros_like

        return tree_zeros_like(value)
    if holds_items(g):
        _refuse_list_slice(g, index)
        return g[index]
    mask = number_write_mask(index, g, value)
    if mask is None and _is_mask(index, g) and _mask_broadcasts(index, g, value):
        mask = namespace(g, index).reshape(
            index, np.shape(index) + (1,) * (np.ndim(g) - np.ndim(index))
        )
    if mask is not None:
        return unbroadcast(namespace(g, index).where(mask, g, 0), value)
    if _gathers(index):
        return unbroadcast(
            namespace(g).where(_last_writes(g, index), g[index], 0), value
        )
    if _traced_position(index):
        return _dropped_past_the_end(g, index, value)
    return unbroadcast(g[index], value)


def stop_gradient(x):
    """``x`` itself; no derivative flows through it (``jax.lax.stop_gradient`` on JAX values, for JAX's own transforms)."""
    from .trees import uses_jax

    if uses_jax(x):
        import jax

        return jax.lax.stop_gradient(x)
    return x


def holds_numbers(x) -> bool:
    """Whether a leaf is a number or an array (not a string, a tree's key path ``DictKey(key='w')``, or
    another Python object the code carries along)."""
    return (
        isinstance(x, (bool, int, float, complex, np.ndarray, np.generic))
        or hasattr(x, "__array__")
        or hasattr(x, "shape")
    )


def zeros_like_float(x):
    """Zeros shaped like ``x``, in ``x``'s floating dtype (the cotangent of a value no gradient reaches)."""
    if isinstance(x, (type, str, np.dtype)) or callable(x):
        return None  # no numbers: a dtype (``self.dtype = np.float64``), a string, a function
    if _concrete_key(x):  # a key's cotangent (NumPy backend): zeros of its shape
        return np.zeros(np.shape(x))
    if getattr(type(x), "placeholder", False):
        return x  # no value (``rt.unset``, ``rt.skipped``): none, nor its tangent
    if getattr(type(x), "integral", False):
        return None  # loop counters (``BoundedRange``): no tangent, no cotangent
    if isinstance(x, (list, tuple, dict)) or type(x).__name__ == "Elements":
        from .trees import tree_zeros_like

        # a container's (``layers[-1]`` read of a list of layers): leaf by leaf
        return tree_zeros_like(x)
    if not holds_numbers(x):
        return None  # an object that holds no numbers (a tree's key path: ``DictKey(key='w')``)
    xp = namespace(x)
    x = xp.asarray(x)
    dtype = x.dtype if xp.issubdtype(x.dtype, xp.inexact) else xp.result_type(float)
    return xp.zeros(x.shape, dtype)


def grad_seed(out):
    """The cotangent that starts ``grad``: ones like ``out``, which must be a real scalar."""
    xp = namespace(out)
    shape = np.shape(out)
    if shape != ():
        raise TypeError(
            "Gradient only defined for scalar-output functions. "
            f"Output had shape: {shape}."
        )
    dtype = xp.asarray(out).dtype
    if not xp.issubdtype(dtype, xp.floating):
        raise TypeError(
            "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
            f"but got {dtype}. For holomorphic differentiation or integer outputs, use vjp directly."
        )
    return xp.ones_like(out)


def integer_valued(value) -> bool:
    """Whether ``value`` has an integer or boolean dtype (a Python int, a loop's counter): as in JAX, such
    a value has no derivative, also where a loop hands it a zero tangent."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return isinstance(value, (bool, int, np.integer, np.bool_))
    return np.dtype(dtype).kind in "iub"
