"""The user's ``jax.tree_util`` calls on the differentiated path, lowered where they are read.

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

``is_leaf=`` is a located error: the leaves would be decided by a function
s2s would have to call when it reads the code.
"""

from __future__ import annotations

import sys

import libcst as cst

from .. import ir
from ..cstutil import call
from .lax_control import CallSite

KINDS = {
    "map": ("tree_util.tree_map", "tree.map"),
    "leaves": ("tree_util.tree_leaves", "tree.leaves"),
}


def kind(obj) -> str | None:
    """``"map"`` for ``jax.tree_util.tree_map`` (by identity), ``"leaves"`` for ``tree_leaves``; else None."""
    jax = sys.modules.get("jax")
    if jax is None or obj is None:
        return None
    for name, paths in KINDS.items():
        for path in paths:
            module, attribute = path.split(".")
            if obj is getattr(getattr(jax, module, None), attribute, None):
                return name
    return None


def lower(resolver, which: str, node: cst.Call) -> cst.BaseExpression:
    what = f"`{resolver.source.file.module.code_for_node(node.func)}`"
    c = CallSite(resolver, "tree_" + which, node, what)
    if which == "leaves":
        args = c.bind(("tree",), keywords=("is_leaf",))
        _no_is_leaf(c, args)
        return resolver.mark(call("rt.leaves", resolver.expr(args["tree"])), node)
    args = c.bind(("f", "tree"), star="rest", keywords=("is_leaf",))
    _no_is_leaf(c, args)
    trees = [args["tree"], *args.get("rest", [])]
    trees = [resolver._atom(t, c, "tree") for t in trees]
    lists = []
    for tree in trees:
        name = c.fresh("leaves")
        resolver._pending.append(
            ir.Assign(cst.Name(name), call("rt.leaves", tree), c.origin)
        )
        lists.append(cst.Name(name))
    mapped = c.fresh("mapped")
    resolver._pending.append(ir.Assign(cst.Name(mapped), cst.List([]), c.origin))
    items = [cst.Name(c.fresh("leaf")) for _ in trees]
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


def _no_is_leaf(c, args):
    if "is_leaf" in args:
        c.fail(
            "`is_leaf=`",
            "map over the leaves without it (write the loop over the containers yourself)",
            at=args["is_leaf"],
        )
