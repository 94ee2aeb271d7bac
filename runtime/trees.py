"""Pytrees in generated code: cotangents of containers (tuple, list, dict, namedtuple) and of records.

A record is an object of a class registered with JAX's pytree registry
(``jax.tree_util.register_pytree_node_class``, ``register_dataclass``,
``flax.struct.dataclass``, Equinox modules): its children are the ones JAX
flattens it into, named by attribute where the registry names them (the
dataclass kinds) and by position otherwise, and it is rebuilt by JAX's
unflatten, so a cotangent of a record is a record of the same class.
"""

from .arrays import _is_jax, index_add, zeros_like_float

_RECORD_TYPES = {}  # type -> whether JAX's registry flattens its objects


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _is_record(tree) -> bool:
    kind = type(tree)
    known = _RECORD_TYPES.get(kind)
    if known is None:
        known = _RECORD_TYPES[kind] = _registered(tree)
    return known


def _registered(tree) -> bool:
    if tree is None or isinstance(tree, (tuple, list, dict, int, float, complex, str)):
        return False
    if hasattr(tree, "shape") or hasattr(tree, "__array__"):
        return False
    try:
        import jax
    except ImportError:  # pragma: no cover - the numpy backend runs without JAX
        return False
    return not jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(tree))


def _one_level(tree):
    import jax

    flat, treedef = jax.tree_util.tree_flatten_with_path(
        tree, is_leaf=lambda node: node is not tree
    )
    return [
        (_key_of(path[0], i), child) for i, (path, child) in enumerate(flat)
    ], treedef


def _key_of(entry, position):
    name = getattr(entry, "name", None)  # GetAttrKey: a dataclass field
    return name if isinstance(name, str) else position


def _children(tree):
    if isinstance(tree, dict):
        return list(tree.items())
    if _is_record(tree):
        return _one_level(tree)[0]
    return list(enumerate(tree))


def _rebuild(tree, children):
    if isinstance(tree, dict):
        return dict(children)
    values = [v for _, v in children]
    if _is_record(tree):
        return _one_level(tree)[1].unflatten(values)
    if _is_namedtuple(tree):
        return type(tree)(*values)
    return type(tree)(values)


def _is_container(tree):
    return isinstance(tree, (tuple, list, dict)) or _is_record(tree)


def _child(tree, key):
    """The child of a container that ``_children`` lists under ``key``."""
    if _is_record(tree):
        return dict(_children(tree))[key]
    return tree[key]


def tree_leaves(tree):
    """The arrays and scalars of a tree (tuples, lists, dicts, namedtuples, records), in order; ``None`` is no leaf."""
    if isinstance(tree, dict):
        for v in tree.values():
            yield from tree_leaves(v)
    elif isinstance(tree, (tuple, list)):
        for v in tree:
            yield from tree_leaves(v)
    elif _is_record(tree):
        for _, v in _children(tree):
            yield from tree_leaves(v)
    elif tree is not None:
        yield tree


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to each leaf, structure (and ``None``) kept."""
    if tree is None:
        return None
    if _is_container(tree):
        return _rebuild(tree, [(k, tree_map(fn, v)) for k, v in _children(tree)])
    return fn(tree)


def uses_jax(*trees) -> bool:
    """Whether any leaf of the trees is a JAX value (the compiled path of ``cond``, ``scan``, ``while``)."""
    return any(_is_jax(leaf) for tree in trees for leaf in tree_leaves(tree))


def tree_zeros_like(tree):
    """Float zeros with the structure and shapes of ``tree`` (``None`` stays ``None``)."""
    if type(tree).__name__ == "Elements":  # items of different shapes
        return type(tree)([tree_zeros_like(item) for item in tree.items])
    # a variable with no value yet (``rt.unset``): no value, and a zero cotangent of no shape yet
    return tree_map(
        lambda leaf: (
            _unset_cotangent(leaf)
            if getattr(type(leaf), "placeholder", False)
            else zeros_like_float(leaf)
        ),
        tree,
    )


def _unset_cotangent(leaf):
    from .control import Unset, UnsetCotangent

    if isinstance(leaf, Unset):
        return UnsetCotangent(leaf.name, leaf.where)
    return leaf


def tree_add(a, b):
    """Leafwise sum of two cotangents of the same structure; ``None`` counts as zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict) and isinstance(
        b, dict
    ):  # entries either side lacks count as zero
        return {
            k: tree_add(a.get(k), b.get(k)) for k in [*a, *(k for k in b if k not in a)]
        }
    if _is_container(a):
        if len(_children(a)) != len(_children(b)):
            raise ValueError(
                f"cotangents of different structures cannot be added: {type(a).__name__} of "
                f"{len(_children(a))} and {type(b).__name__} of {len(_children(b))}"
            )
        return _rebuild(a, [(k, tree_add(v, _child(b, k))) for k, v in _children(a)])
    from .iteration import Elements

    if isinstance(a, Elements):  # per-step cotangents of a loop over a Python sequence
        return Elements(tree_add(x, y) for x, y in zip(a.items, b.items, strict=True))
    return a + b


def _get(tree, key):
    if isinstance(key, str) and (_is_namedtuple(tree) or _is_record(tree)):
        return getattr(tree, key)
    return _child(tree, key)


def _child_key(tree, key):
    """The key of ``tree``'s child reached by ``key``, as ``_children`` lists it: an attribute of a
    namedtuple is its index, a negative index of a tuple or list counts from the end (``params[-1]``).
    """
    if isinstance(key, str) and _is_namedtuple(tree):
        return tree._fields.index(key)
    if _is_record(tree):
        return _record_key(tree, key)
    if (
        isinstance(tree, (tuple, list))
        and isinstance(key, int)
        and not isinstance(key, bool)
    ):
        if not -len(tree) <= key < len(tree):
            raise IndexError(
                f"index {key} is out of range for a {type(tree).__name__} of length {len(tree)}"
            )
        return key % len(tree)
    return key


def _record_key(tree, key):
    """The child of a record that ``tree.<key>`` (or ``tree[key]``) reads: a named child, or the one child
    that is that very attribute (a class registered with ``tree_flatten`` returning its attributes).
    """
    children = _children(tree)
    if any(k == key for k, _ in children):
        return key
    if isinstance(key, str):
        value = getattr(tree, key)
        found = [k for k, v in children if v is value]
        if len(found) == 1:
            return found[0]
    raise TypeError(
        f"`.{key}` of a {type(tree).__name__} is not one of the children JAX's pytree registry flattens it "
        "into, so s2s cannot place its derivative: register the class with "
        "`jax.tree_util.register_dataclass` (or return the attribute itself from `tree_flatten`)"
    )


def fill_like(tree, leaves):
    """A cotangent shaped like ``tree``: ``leaves`` maps paths to values, zeros stand everywhere else.

    A path is a tuple of keys (indices, dict keys, namedtuple field names). When a
    path reaches an array before it ends, the rest of it indexes that array, and
    the value is added there: ``fill_like(x, {(0,): a})`` is ``x``-shaped zeros
    with ``a`` in row 0. Values at the same place accumulate.
    """
    return fill(tree, leaves, ())


def fill(tree, leaves, lead: tuple):
    """``fill_like``, each array indexed by ``lead`` before the rest of a path."""
    from .iteration import Elements

    if isinstance(
        tree, Elements
    ):  # a list of items of different shapes (``collected.join_steps``)
        return Elements(fill(list(tree.items), leaves, lead))
    if not leaves:
        return tree_zeros_like(tree)
    if () in leaves:
        rest = {p: v for p, v in leaves.items() if p != ()}
        return tree_add(leaves[()], fill(tree, rest, lead) if rest else None)
    if not _is_container(tree):
        out = zeros_like_float(tree)
        for path, value in leaves.items():
            index = (*lead, *path) if lead or len(path) > 1 else path[0]
            out = index_add(out, index, value)
        return out
    grouped = {}
    for (
        path,
        value,
        # ``params[1]`` and ``params[-1]`` are one place: their values add up
    ) in leaves.items():
        group = grouped.setdefault(_child_key(tree, path[0]), {})
        group[path[1:]] = tree_add(group.get(path[1:]), value)
    children = [
        (k, fill(v, grouped[k], lead) if k in grouped else tree_zeros_like(v))
        for k, v in _children(tree)
    ]
    return _rebuild(tree, children)


def fill_like_vjp(g, leaves):
    """The cotangents of ``leaves`` in ``fill_like(tree, leaves)``: what ``g`` holds at each path."""
    return fill_vjp(g, leaves, ())


def fill_vjp(g, leaves, lead: tuple):
    """``fill_like_vjp``, each array indexed by ``lead`` first (the batch axis of ``fill_examples``)."""
    from .arrays import unbroadcast

    out = {}
    for path, value in leaves.items():
        part, rest = g, list(path)
        while rest and (_is_container(part) or type(part).__name__ == "Elements"):
            part = list(part.items) if type(part).__name__ == "Elements" else part
            part = _get(part, rest.pop(0))
        if rest:  # the path goes on into an array: the value was added at that index
            index = (*lead, *rest) if lead or len(rest) > 1 else rest[0]
            if lead:  # each example summed to its own value's shape
                from .batched_vjps import unbroadcast as examples_unbroadcast

                part = examples_unbroadcast(part[index], value, (True, True))
            else:
                part = unbroadcast(part[index], value)
        out[path] = part
    return out


__all__ = ["fill_like", "fill_like_vjp", "tree_add", "tree_leaves", "tree_zeros_like"]
