"""The user's ``jax.tree_util`` calls on the differentiated path, lowered where they are read.

- ``jax.tree_util.tree_map_with_path(f, t, *rest)`` is the same loop with the key paths of ``t``'s
  leaves first (``rt.leaf_paths(t)``: JAX's ``DictKey``/``SequenceKey`` tuples, Python values), so
  ``f(path, leaf)`` reads ``path[-1].key`` as JAX's does (optax's weight-decay masks), and
  ``jax.tree_util.keystr(path)`` is ``rt.keystr(path)``, JAX's text of it;
- ``jax.tree_util.tree_leaves(t)`` (``jax.tree.leaves``) is ``rt.leaves(t)``:
  the leaves as a list, in JAX's order;
- ``jax.tree_util.tree_map(f, t, *rest)`` (``jax.tree.map``) is a loop over
  the leaves of ``t`` and ``rest`` side by side, calling ``f`` (a ``lambda``,
  a local ``def`` or a function of the program) on each, then
  ``rt.unflatten_like(t, results)``::

      _leaves = rt.leaves(params)
      _leaves_2 = rt.leaves(grads)
      _mapped = []
      for _leaf, _leaf_2 in zip(_leaves, _leaves_2):
          _mapped.append(update(_leaf, _leaf_2))
      new = rt.unflatten_like(params, _mapped)

  The loop and ``f`` are then transformed like the user's own, in every mode.

- ``leaves, treedef = jax.tree_util.tree_flatten(tree)`` (``jax.tree.flatten``) is
  ``leaves = rt.leaves(tree)``, and ``treedef`` (also ``tree_structure(tree)``) stands for
  ``tree``'s structure: ``tree_unflatten(treedef, xs)`` and ``treedef.unflatten(xs)`` are
  ``rt.unflatten_like(tree, xs)``, ``treedef.num_leaves`` is ``len(rt.leaves(tree))``. Any other
  use of ``treedef`` is a located error.
- ``flat, unravel = jax.flatten_util.ravel_pytree(tree)`` is
  ``flat = rt.ravel(tree)`` and a local function ``unravel(v)`` that is
  ``rt.unravel_like(tree, v)``: the leaves raveled into one vector, in JAX's
  order, and cut back.

- ``jax.tree_util.tree_reduce(f, tree[, initializer])`` (``jax.tree.reduce``) and
  ``functools.reduce(f, xs[, initial])`` are a loop over the leaves (the items) calling ``f`` on the
  total so far and each one, the first leaf starting the total where no start is given.
  ``operator.add``, ``operator.mul`` and the like are the ops they name (``frontend/spellings``).

``is_leaf=`` is a located error: the leaves would be decided by a function
s2s would have to call when it reads the code.
"""

from __future__ import annotations

import functools
import sys

import libcst as cst

from .. import ir
from ..cstutil import call
from .lax_control import CallSite

KINDS = {
    "map": ("tree_util.tree_map", "tree.map"),
    "map_with_path": ("tree_util.tree_map_with_path", "tree.map_with_path"),
    "leaves": ("tree_util.tree_leaves", "tree.leaves"),
    "ravel": ("flatten_util.ravel_pytree",),
    "flatten": ("tree_util.tree_flatten", "tree.flatten"),
    "structure": ("tree_util.tree_structure", "tree.structure"),
    "unflatten": ("tree_util.tree_unflatten", "tree.unflatten"),
    "reduce": ("tree_util.tree_reduce", "tree.reduce"),
    "keystr": ("tree_util.keystr",),
}


def kind(obj) -> str | None:
    """``"map"`` for ``jax.tree_util.tree_map`` (by identity), ``"leaves"`` for ``tree_leaves``; else None."""
    if obj is functools.reduce:
        return "fold"
    jax = sys.modules.get("jax")
    if jax is None or obj is None:
        return None
    for name, paths in KINDS.items():
        for path in paths:
            module, attribute = path.split(".")
            if obj is getattr(getattr(jax, module, None), attribute, None):
                return name
    return None


def ravel_assignment(resolver, small: cst.Assign, origin) -> list | None:
    """``flat, unravel = ravel_pytree(tree)``: ``flat = rt.ravel(tree)``, and ``unravel`` a local function
    ``unravel(v) = rt.unravel_like(tree, v)`` (``tree`` kept under a name of its own); None for any other
    assignment."""
    value = small.value
    if not (
        isinstance(value, cst.Call)
        and isinstance(value.func, (cst.Name, cst.Attribute))
        and kind(resolver._callee_object(value.func)) == "ravel"
    ):
        return None
    target = small.targets[0].target if len(small.targets) == 1 else None
    names = (
        [e.value for e in target.elements]
        if isinstance(target, (cst.Tuple, cst.List))
        else []
    )
    what = f"`{resolver.source.file.module.code_for_node(value.func)}`"
    c = CallSite(resolver, "tree_ravel", value, what)
    if len(names) != 2 or not all(isinstance(n, cst.Name) for n in names):
        c.fail(
            "its value kept whole",
            "unpack it where it is called: `flat, unravel = ravel_pytree(tree)`",
        )
    tree = resolver._atom(c.bind(("pytree",))["pytree"], c, "tree")
    flat, unravel = names
    out = [*resolver._take_pending()]
    out.append(ir.Assign(resolver.target(flat), call("rt.ravel", tree), origin))
    if unravel.value != "_":
        v = c.fresh("flat")
        body = (ir.Return(call("rt.unravel_like", tree, cst.Name(v)), origin),)
        resolver._local_fns[unravel.value] = ir.Function(
            unravel.value, (ir.Param(v),), body, origin
        )
    return out


def flatten_assignment(resolver, small: cst.Assign, origin) -> list | None:
    """``leaves, treedef = tree_flatten(tree)``: ``leaves = rt.leaves(tree)``, ``treedef`` standing for
    ``tree``'s structure (``resolver.treedefs``); ``treedef = tree_structure(tree)`` likewise. None for
    any other assignment."""
    value = small.value
    which = (
        kind(resolver._callee_object(value.func))
        if isinstance(value, cst.Call)
        and isinstance(value.func, (cst.Name, cst.Attribute))
        else None
    )
    if which not in ("flatten", "structure"):
        return None
    target = small.targets[0].target if len(small.targets) == 1 else None
    what = f"`{resolver.source.file.module.code_for_node(value.func)}`"
    c = CallSite(resolver, "tree_" + which, value, what)
    args = c.bind(("tree",), keywords=("is_leaf",))
    _no_is_leaf(c, args)
    if which == "structure":
        if not isinstance(target, cst.Name):
            c.fail(
                "its value unpacked",
                "assign it to one name: `treedef = tree_structure(tree)`",
            )
        resolver.treedefs[target.value] = resolver._atom(args["tree"], c, "tree")
        return [*resolver._take_pending()]
    names = (
        [e.value for e in target.elements]
        if isinstance(target, (cst.Tuple, cst.List))
        else []
    )
    if len(names) != 2 or not all(isinstance(n, cst.Name) for n in names):
        c.fail(
            "its value kept whole",
            "unpack it where it is called: `leaves, treedef = tree_flatten(tree)`",
        )
    tree = resolver._atom(args["tree"], c, "tree")
    leaves, treedef = names
    resolver.treedefs[treedef.value] = tree
    out = [*resolver._take_pending()]
    out.append(ir.Assign(resolver.target(leaves), call("rt.leaves", tree), origin))
    return out


def treedef_read(resolver, node) -> cst.BaseExpression | None:
    """A ``PyTreeDef``'s own reads of a tree structure this function took (``resolver.treedefs``):
    ``treedef.unflatten(leaves)`` is ``tree_unflatten(treedef, leaves)``, ``treedef.num_leaves`` the
    number of the tree's leaves; any other read of one a located error; None for any other node.
    """
    method = node if isinstance(node, cst.Call) else None
    attribute = method.func if method is not None else node
    if not (
        isinstance(attribute, cst.Attribute)
        and isinstance(attribute.value, cst.Name)
        and attribute.value.value in resolver.treedefs
    ):
        return None
    tree, what = resolver.treedefs[attribute.value.value], attribute.attr.value
    if method is not None and what == "unflatten" and len(method.args) == 1:
        leaves = resolver.expr(method.args[0].value)
        return resolver.mark(call("rt.unflatten_like", tree, leaves), node)
    if method is None and what == "num_leaves":
        count = cst.Call(cst.Name("len"), [cst.Arg(call("rt.leaves", tree))])
        return resolver.mark(count, node)
    name = attribute.value.value
    resolver.fail(
        node,
        f"`{name}`, a tree structure, is used other than by `tree_unflatten`, "
        f"`{name}.unflatten(...)` or `{name}.num_leaves`",
        f"rebuild the tree with `jax.tree_util.tree_unflatten({name}, leaves)`, or use "
        "`jax.tree_util.tree_map`",
    )


def lower(resolver, which: str, node: cst.Call) -> cst.BaseExpression:
    what = f"`{resolver.source.file.module.code_for_node(node.func)}`"
    c = CallSite(resolver, "tree_" + which, node, what)
    if which in ("ravel", "flatten"):
        c.fail(
            "its value kept whole",
            (
                "unpack it where it is called: `flat, unravel = ravel_pytree(tree)`"
                if which == "ravel"
                else "unpack it where it is called: `leaves, treedef = tree_flatten(tree)`"
            ),
        )
    if which == "structure":
        c.fail(
            "its value used in place",
            "assign it to a name: `treedef = tree_structure(tree)`",
        )
    if which == "unflatten":
        args = c.bind(("treedef", "leaves"))
        treedef = args["treedef"]
        if not (isinstance(treedef, cst.Name) and treedef.value in resolver.treedefs):
            c.fail(
                "a tree structure that does not come from `tree_flatten` or `tree_structure` in "
                "this function",
                "flatten the tree here: `leaves, treedef = jax.tree_util.tree_flatten(tree)`",
                at=treedef,
            )
        tree = resolver.treedefs[treedef.value]
        rebuilt = call("rt.unflatten_like", tree, resolver.expr(args["leaves"]))
        return resolver.mark(rebuilt, node)
    if which == "leaves":
        args = c.bind(("tree",), keywords=("is_leaf",))
        _no_is_leaf(c, args)
        return resolver.mark(call("rt.leaves", resolver.expr(args["tree"])), node)
    if which in ("reduce", "fold"):
        return _reduced(resolver, c, which, node)
    if which == "keystr":  # a key path's text: a Python string, read as JAX writes it
        args = c.bind(("path",), keywords=("simple", "separator"), required=1)
        keywords = {k: resolver.expr(v) for k, v in args.items() if k != "path"}
        text = call("rt.keystr", resolver.expr(args["path"]), **keywords)
        return resolver.mark(text, node)
    args = c.bind(("f", "tree"), star="rest", keywords=("is_leaf",))
    _no_is_leaf(c, args)
    trees = [args["tree"], *args.get("rest", [])]
    trees = [resolver._atom(t, c, "tree") for t in trees]
    lists = []
    if (
        which == "map_with_path"
    ):  # ``f(path, leaf, ...)``: the first tree's key paths first
        paths = c.fresh("paths")
        resolver._pending.append(
            ir.Assign(cst.Name(paths), call("rt.leaf_paths", trees[0]), c.origin)
        )
        lists.append(cst.Name(paths))
    for tree in trees:
        name = c.fresh("leaves")
        resolver._pending.append(
            ir.Assign(cst.Name(name), call("rt.leaves", tree), c.origin)
        )
        lists.append(cst.Name(name))
    mapped = c.fresh("mapped")
    resolver._pending.append(ir.Assign(cst.Name(mapped), cst.List([]), c.origin))
    items = [
        cst.Name(c.fresh("path" if k == 0 and len(lists) > len(trees) else "leaf"))
        for k in range(len(lists))
    ]
    step = resolver._lax_apply(c, args["f"], items, "leaf_fun")
    append = ir.Assign(
        cst.Name(mapped), call("rt.append", cst.Name(mapped), step), c.origin
    )
    if len(items) == 1:
        target, iterable = items[0], lists[0]
    else:
        target = cst.Tuple([cst.Element(i) for i in items])
        iterable = cst.Call(cst.Name("zip"), [cst.Arg(x) for x in lists])
    resolver._pending.append(ir.For(target, iterable, (append,), c.origin))
    rebuilt = call("rt.unflatten_like", trees[0], cst.Name(mapped))
    return resolver.mark(rebuilt, node)


def _reduced(resolver, c, which: str, node: cst.Call) -> cst.BaseExpression:
    """``tree_reduce(f, tree[, initializer])`` over the tree's leaves, ``functools.reduce(f, xs[,
    initial])`` over a sequence: a loop calling ``f`` on the total so far and each item.
    """
    if which == "reduce":
        args = c.bind(("f", "tree", "initializer"), keywords=("is_leaf",), required=2)
        _no_is_leaf(c, args)
        items = call("rt.leaves", resolver._atom(args["tree"], c, "tree"))
        start = args.get("initializer")
    else:
        args = c.bind(("f", "xs", "initial"), required=2)
        items = resolver.expr(args["xs"])
        start = args.get("initial")
    listed = c.fresh("items")
    resolver._pending.append(ir.Assign(cst.Name(listed), items, c.origin))
    total, item = c.fresh("total"), c.fresh("item")
    rest = cst.Name(listed)
    if (
        start is None
    ):  # the first item starts the total, as Python and JAX do (an empty one raises)
        first = cst.Subscript(
            cst.Name(listed), [cst.SubscriptElement(cst.Index(cst.Integer("0")))]
        )
        rest = cst.Subscript(
            cst.Name(listed),
            [cst.SubscriptElement(cst.Slice(lower=cst.Integer("1"), upper=None))],
        )
    else:
        first = resolver.expr(start)
    resolver._pending.append(ir.Assign(cst.Name(total), first, c.origin))
    if start is None:
        remaining = c.fresh("rest")
        resolver._pending.append(ir.Assign(cst.Name(remaining), rest, c.origin))
        rest = cst.Name(remaining)
    step = resolver._lax_apply(
        c, args["f"], [cst.Name(total), cst.Name(item)], "reducer"
    )
    resolver._pending.append(
        ir.For(
            cst.Name(item),
            rest,
            (ir.Assign(cst.Name(total), step, c.origin),),
            c.origin,
        )
    )
    return resolver.mark(cst.Name(total), node)


def _no_is_leaf(c, args):
    if "is_leaf" in args:
        c.fail(
            "`is_leaf=`",
            "map over the leaves without it (write the loop over the containers yourself)",
            at=args["is_leaf"],
        )
