"""Rules for the runtime functions that lowered code calls: element writes, list building, loop inputs.

Registered as ``rt.<name>``; their vocabulary is the same as the ops'.
"""

import numpy as xp

from s2s import runtime as rt

from .registry import jvp, linear, no_derivative, nondiff, vjp


@vjp(name="rt.index_set")
def index_set(target, index, value, *, g):
    return rt.zero_at(g, index), None, rt.index_set_value_vjp(g, index, value, target)


# linear in ``target`` and ``value`` together, but a float written into an integer array is truncated:
# its tangent is cast as the value is stored (zero into integers)
@jvp(index_set)
def index_set_jvp(target, index, value, *, ans, target_dot, value_dot):
    return (
        rt.zero_at(target_dot, index, ans),
        None,
        rt.index_set(
            rt.tree_zeros_like(ans),
            index,
            rt.astype_jvp(value_dot, rt.written_dtype(target, value)),
        ),
    )


@linear(name="rt.zero_at", roles={"like": "data"})
def zero_at(g_, index, like=None, *, g):
    return rt.zero_at(g, index), None, None


@linear(name="rt.index_get")
def index_get(target, index, *, g):
    return rt.index_get_vjp(g, target, index), None


# two batch axes as one (an inner ``vmap`` mapped again: ``runtime/batch_merging.py``)
@linear(name="rt.merged_examples", roles={"b1": "static", "b2": "static"})
def merged_examples(x, outer, inner, b1, b2, *, g):
    return rt.merged_examples_vjp(g, x, outer, inner, b1, b2), None, None, None, None


@linear(
    name="rt.merged_examples_vjp", roles={"x": "data", "b1": "static", "b2": "static"}
)
def merged_examples_vjp(ct, x, outer, inner, b1, b2, *, g):
    return rt.merged_examples(g, outer, inner, b1, b2), None, None, None, None, None


@linear(name="rt.split_examples", roles={"b1": "static", "b2": "static"})
def split_examples(y, b1, b2, out_axes, *, g):
    return rt.split_examples_vjp(g, b1, b2, out_axes), None, None, None


@linear(name="rt.split_examples_vjp", roles={"b1": "static", "b2": "static"})
def split_examples_vjp(ct, b1, b2, out_axes, *, g):
    return rt.split_examples(g, b1, b2, out_axes), None, None, None


# a selection by a key the function is given: a mask or positions, told apart when traced (passes/masks.py)
@linear(name="rt.selection")
def selection(x, index, fill=True, *, g):
    return rt.selection_vjp(g, x, index), None, None


@linear(name="rt.selection_vjp", roles={"x": "data"})
def selection_vjp(ct, x, index, *, g):
    return rt.selection(g, index, False), None, None


@linear(name="rt.append")
def append(items_, value, *, g):
    return g[:-1], g[-1]


@linear(name="rt.as_float")
def as_float(v, *, g):
    return xp.reshape(g, xp.shape(v))


nondiff("an integer", "rt.as_int")
nondiff("a truth value", "rt.as_bool")
nondiff("a mask", "rt.nonzero_mask")
nondiff("a dtype", "rt.written_dtype")


@linear(name="rt.item")
def item(v, *, g):
    return xp.reshape(g, xp.shape(v))


@linear(name="rt.record", roles={"cls": "static"})
def record(cls, *fields, g):
    # ``fields`` is one parameter (the sequence); its cotangent is a list.
    return None, rt.record_fields(g)


@linear(name="rt.record_fields")
def record_fields(record_, *, g):
    return rt.record_like(g, record_)


@linear(name="rt.record_like", roles={"like": "static"})
def record_like(fields, like, *, g):
    return rt.record_fields(g), None


@linear(name="rt.replaced", roles={"names": "static"})
def replaced(value, names, *fields, g):
    return rt.replaced_vjp(g, names), None, rt.replaced_fields_vjp(g, names)


@linear(name="rt.replaced_vjp", roles={"names": "static"})
def replaced_vjp(ct, names, *, g):
    return rt.replaced_vjp(g, names), None


@linear(name="rt.replaced_fields_vjp", roles={"names": "static"})
def replaced_fields_vjp(ct, names, *, g):
    return rt.replaced_fields_into(g, names, ct), None


@linear(name="rt.replaced_fields_into", roles={"names": "static", "like": "static"})
def replaced_fields_into(fields, names, like, *, g):
    return rt.replaced_fields_vjp(g, names), None, None


@linear(name="rt.join")
def join(a, b, *, g):
    return g[: len(a)], g[len(a) :]


@linear(name="rt.repeat_list", roles={"count": "static"})
def repeat_list(items_, count, *, g):
    return rt.repeat_list_vjp(g, items_, count), None


@linear(name="rt.repeat_list_vjp", roles={"items_": "data", "count": "static"})
def repeat_list_vjp(ct, items_, count, *, g):
    return rt.repeat_list(g, count), None, None


@linear(name="rt.as_list")
def as_list(xs, *, g):
    # ``list(xs)`` in generated code (``passes/normal_form.py`` reads Python's ``list`` as this op)
    return rt.sequence_like(g, xs)


@linear(name="rt.as_dict")
def as_dict(d, *, g):
    # ``dict(d)``: a copy, its cotangent the same entries
    return g


@linear(name="rt.dict_merge")
def dict_merge(a, b, *, g):
    # ``{**a, **b}``: ``a``'s entries that ``b`` shadows get no cotangent
    return rt.entries(g, a, b), rt.entries(g, b)


@linear(name="rt.entries", roles={"like": "data", "skip": "data"})
def entries(values, like, skip=None, *, g):
    return rt.entries(g, values, skip), None, None


@linear(name="rt.as_tuple")
def as_tuple(xs, *, g):
    return rt.sequence_like(g, xs)


@linear(name="rt.sequence_like", roles={"xs": "data"})
def sequence_like(ct, xs, *, g):
    return rt.sequence_like_transpose(g, ct), None


@linear(name="rt.sequence_like_transpose", roles={"like": "data"})
def sequence_like_transpose(u, like, *, g):
    return rt.sequence_like(g, u), None


@linear(name="rt.kept")
def kept(ys, size=None, *, g):
    return rt.kept_vjp(g, ys), None


@linear(name="rt.kept_vjp", roles={"ys": "data"})
def kept_vjp(ct, ys, *, g):
    return rt.kept(g), None


# ``hs.append(v)`` after the loop that collected ``hs``
@linear(name="rt.append_row")
def append_row(collected, item, axis=0, *, g):
    return (
        rt.append_row_first(g, collected, item, axis),
        rt.append_row_last(g, collected, item, axis),
        None,
    )


@linear(name="rt.append_row_first", roles={"collected": "data", "item": "data"})
def append_row_first(ct, collected, item, axis=0, *, g):
    return rt.append_row(g, rt.tree_zeros_like(item), axis), None, None, None


@linear(name="rt.append_row_last", roles={"collected": "data", "item": "data"})
def append_row_last(ct, collected, item, axis=0, *, g):
    return rt.append_row(rt.tree_zeros_like(collected), g, axis), None, None, None


@linear(name="rt.rows")
def rows(ys, axis=0, *, g):
    return rt.rows_vjp(g, ys, axis), None


@linear(name="rt.rows_vjp", roles={"ys": "data"})
def rows_vjp(ct, ys, axis=0, *, g):
    return rt.rows(g, axis), None, None


@linear(name="rt.join_steps", roles={"parts": "data"})
def join_steps(parts, axis=0, *, g):
    return rt.join_steps_vjp(g, parts, axis), None


@linear(name="rt.join_steps_vjp", roles={"parts": "data"})
def join_steps_vjp(ct, parts, axis=0, *, g):
    return rt.join_steps(g, axis), None, None


@linear(name="rt.dict_get")
def dict_get(d, key, default=None, *, g):
    return rt.dict_get_vjp(g, d, key), None, rt.dict_default_vjp(g, d, key, default)


@linear(name="rt.dict_get_vjp", roles={"d": "data"})
def dict_get_vjp(ct, d, key, *, g):
    return rt.dict_get(g, key, 0.0), None, None


@linear(name="rt.dict_default_vjp", roles={"d": "data", "default": "data"})
def dict_default_vjp(ct, d, key, default=None, *, g):
    return rt.dict_default_vjp(g, d, key, default), None, None, None


@linear(name="rt.leaves")
def leaves(tree, *, g):
    return rt.leaves_vjp(g, tree)


@linear(name="rt.leaves_vjp", roles={"tree": "data"})
def leaves_vjp(ct, tree, *, g):
    return rt.leaves(g), None


@linear(name="rt.unflatten_like", roles={"tree": "data"})
def unflatten_like(tree, new_leaves, *, g):
    return None, rt.unflatten_like_vjp(g, tree, new_leaves)


@linear(name="rt.unflatten_like_vjp", roles={"tree": "data", "new_leaves": "data"})
def unflatten_like_vjp(ct, tree, new_leaves, *, g):
    return rt.unflatten_like(tree, g), None, None


@linear(name="rt.ravel")
def ravel(tree, *, g):
    return rt.ravel_vjp(g, tree)


@linear(name="rt.ravel_vjp", roles={"tree": "data"})
def ravel_vjp(ct, tree, *, g):
    return rt.ravel(g), None


@linear(name="rt.unravel_like", roles={"tree": "data"})
def unravel_like(tree, flat, *, g):
    return None, rt.unravel_like_vjp(g, tree)


@linear(name="rt.unravel_like_vjp", roles={"tree": "data"})
def unravel_like_vjp(ct, tree, *, g):
    return rt.unravel_like(tree, g), None


@linear(name="rt.argument", roles={"source": "data"})
def argument(source, key, default=None, *, g):
    return (
        rt.argument_vjp(g, source, key),
        None,
        rt.argument_default_vjp(g, source, key, default),
    )


@linear(name="rt.argument_vjp", roles={"source": "data"})
def argument_vjp(ct, source, key, *, g):
    return rt.argument(g, key, 0.0), None, None


@linear(name="rt.argument_default_vjp", roles={"source": "data", "default": "data"})
def argument_default_vjp(ct, source, key, default=None, *, g):
    return rt.argument_default_vjp(g, source, key, default), None, None, None


@linear(name="rt.total")
def total(items, *, g):
    return rt.total_vjp(g, items)


@linear(name="rt.total_vjp", roles={"items": "data"})
def total_vjp(ct, items, *, g):
    return rt.total(g), None


@linear(name="rt.batched_total", roles={"size": "static"})
def batched_total(items, size, *, g):
    return rt.batched_total_vjp(g, items, (True, True), size), None


@linear(
    name="rt.batched_total_vjp",
    roles={"items": "data", "flags": "static", "size": "static"},
)
def batched_total_vjp(ct, items, flags, size, *, g):
    return rt.batched_total(g, size), None, None, None


@linear(name="rt.iterate")
def iterate(xs, *, g):
    return rt.sequence_vjp(g, xs)


@vjp(name="rt.enumerate")
def enumerate_(xs, start=0, *, g):
    return rt.enumerate_vjp(g, xs)


@jvp(enumerate_)
def enumerate_forward(xs, start=0, *, xs_dot):
    return rt.enumerate_jvp(xs_dot, start)


@linear(name="rt.zip")
def zip_(*sequences, g):
    return rt.zip_vjp(g, sequences)


@linear(name="rt.reversed")
def reversed_(xs, *, g):
    return rt.reversed_vjp(g, xs)


@linear(name="rt.items")
def items(d, *, g):
    return rt.items_vjp(g, d)


@linear(name="rt.values")
def values(d, *, g):
    return rt.values_vjp(g, d)


nondiff("loop counters are integers", "rt.range")
nondiff(
    "positions: integers (itertools' combinations of arrays)",
    "rt.combination_indices",
    "rt.permutation_indices",
    "rt.product_indices",
)
nondiff("an index: integers or a mask", "rt.index_array")
nondiff(
    "truth values",
    "rt.logical_not",
    "rt.logical_and",
    "rt.logical_or",
    "rt.any",
    "rt.all",
)
nondiff("dictionary keys are static", "rt.keys", "rt.sorted_keys")
nondiff("a tree's key paths are static", "rt.leaf_paths", "rt.keystr")
nondiff("strings carry no derivative", "rt.str_method")
nondiff(
    "by definition: `stop_gradient(x)` is `x` with no derivative", "rt.stop_gradient"
)

nondiff(
    "output: prints, logs or checks an assertion, its value is None",
    "rt.debug_print",
    "rt.log",
    "rt.warn",
    "rt.check",
)
nondiff("the user's `raise`: no value", "rt.raise_", "rt.raise_if")
nondiff("a refusal when it runs: no value", "rt.refused")
nondiff("a truth value: whether an item taken by an index is a copy", "rt.item_is_copy")
nondiff("a truth value: whether the result of arithmetic is a number", "rt.is_number")
nondiff("a truth value: whether a value has an integer dtype", "rt.integer_valued")
nondiff("a check that a call's `*`/`**` arguments fit: no value", "rt.check_call")
nondiff(
    "a variable's value before the loop that assigns it, an item not appended: none",
    "rt.unset",
    "rt.skipped",
)


no_derivative(
    "a library function s2s has no rule for (it runs on values known when the code is traced): write it "
    "with NumPy ops, which s2s differentiates, or compute it outside the function and pass it in",
    rt.host_call,
    "rt.host_call",
)
