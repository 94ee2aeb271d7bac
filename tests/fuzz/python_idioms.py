"""Python's own idioms around arrays: closures that change their enclosing function's state, unpacking and
joining as model code writes it (issue 13).

``PythonIdioms`` is mixed into ``Gen`` (``programs.py``): one family, ``s_python``, whose forms are a
local function appending one item per call (or under a condition) to a list of the function, a
``nonlocal`` running total, ``list.extend``, a loop over ``zip(*pairs)`` unpacked into names, tuples
joined by ``+`` in a ``*args`` helper, a nested comprehension's appends, an item target in an
unpacking, a lambda whose default is read where it is made, and a ``return`` of a loop's variable
inside the loop, a ``functools.partial`` whose bound value is rebound after it is made, generator
helpers (``yield`` twice per step, ``yield from``), appends in a row in a loop, and
``functools.reduce`` with an ``operator`` function and with a lambda and a start, a ``partial`` made
as a helper's argument, and NumPy's writes by a mask (``h[h < 0] = 0.1 * h[h < 0]``; finite
differences are their oracle: the twin has no spelling of them), a helper reducing a selection by its
mask argument, objects whose methods store attributes (``layer.forward(x)`` then ``layer.output``, a
base class's ``__call__``), a dict of lists grown in a loop (``frontend/dict_fields``), tuples collected in a loop with one more
appended after it (``rt.append_row``), and a helper
whose branches on
a mode string return ``out, cache`` pairs (``cache = None`` in one, ``raise`` in the last), and a list
that starts with a value and grows by ``+=`` in a loop, beside chained writes ``u[0] = u[-1] = v``;
NumPy functions of sizes (``int(np.prod(z.shape))``, ``int(np.ceil(0.5 * z.size))``); a list built
front first (``returns.insert(0, G)``) walking values backwards; a ``for ... else`` search; a function passed to a helper that passes it
and its ``*args`` on to another, or a keyword popped from ``**kwargs`` before the rest go on (stax's ``serial``); strided slices in a loop whose end is a name bound in it (im2col), or whose width a helper called in a
loop computes from its stride (``runtime/step_constants``); a parenthesized tuple key
(``x[(0, -1)]``, one index per axis); ``jax.grad``/``jax.value_and_grad``/``jax.vmap`` of a local ``def`` or
lambda that reads the enclosing function's variables (lifted: ``frontend/lifted``); a tuple assignment of
arrays and number literals (``coef, intercept = w, 0.0``); a helper returning a number early under a guard
(``if s <= 0: return 1e10``); a tuple's truth (``args if args else (1.0, 2.0)``, ``if not args``); a pad width from a shape in a branch on
a mode string; loops whose range an enclosing loop's index bounds (``for j in range(i + 1, n)``, two
or three deep, ascending or descending, the count through a name: ``passes/bounded_ranges``); slices
whose bounds a loop's index sets, reduced, multiplied and written (``passes/slice_masks``);
``itertools.combinations``/``permutations``/``product`` of arrays and ranges (``frontend/combinatorics``);
a trajectory recorded behind an early ``return`` guard in its loop (``jumps._unskipped_appends``); a
filter's lagged outputs kept as views of the rows earlier iterations wrote (``y2, y1 = y1, y[n]``:
``passes/row_views``); an optax-style ``init, update = momentum(rate)`` pair a factory makes in the function,
closing over a value of it (``frontend/factories``); a ``while t < t_end`` loop on float time recording
a list (``frontend/counted_whiles``); a running total started from an item and updated in place
(``s = v[0]; s += ...``: ``passes/scalar_items``); an object of a class of the program made in the
function and read by its attributes and methods (``frontend/local_objects``); scipy's ``f(t, *args)`` of a
lambda or local ``def`` passed to a quadrature helper (``spread.bind`` of a local function); ``**options``
and ``*sizes`` of module constants into NumPy functions (``calls._constant_spread``); a list collected by
``append``, copied by ``list(...)`` and written back by a reversed loop's index (an RTS smoother's pass);
Gauss-Legendre nodes made in the function by NumPy's ``leggauss`` (``rt.host_call``); a copy
``prev = v`` before a loop that updates ``v`` and reads ``prev`` (a Newton or fixed-point step: copy
propagation once captured the loop's carry, a silent wrong value); functional dict updates
(``{**p, "w": ...}``, ``dict(p)``); NumPy functions of Python lists (a list display bound to a name, a
helper's lists: ``passes/helper_results``); functions kept in a list (local ``def``s and lambdas, or a
factory's list) read by a loop, an index and a generator; ``list(zip(...))``, ``list(enumerate(...))``,
``list(reversed(...))``, ``tuple(zip(...))`` and ``dict(zip(keys, values))`` kept in names
(``frontend/listed_iterators``); a list of layers' ``(W, b)`` tuples of different shapes joined with
``+`` (``params[:-1] + [(W, b)]``: ``rt.join_steps`` of containers); the usual hand-written unflatten,
``out, i = [], 0`` then ``i += n`` of ``n = int(np.prod(shape))`` (a number is no memory:
``passes/aliasing``); ``max``/``min``/``sorted``/``len`` of a module-level list of numbers
(``call_forms.constant_builtin``); ``np.pad`` with ``constant_values`` (a number, a pair, a value of the
program: ``call_forms.constant_padding``); Python's ``sum`` of an array, its rows added (``rt.total``); a sum started as ``0.0`` in a
nested loop (``runtime/peeling``: the inner loop's peeled steps inside the outer's); a list grown by
``xs = xs + [v]`` in a loop (``builtin_calls._grown_by_joins``: appends where no other name holds it); a
module-level function, or a table's function picked by a configuration's string, passed to a local ``def``
(``frontend/local_bindings``); ``*args`` passed on through two helpers with the function they call
(``function_args.bound_call`` with a spread); layers of different classes held in a list, a dict or an
``OrderedDict``, appended in a loop over a display or made by a helper (``frontend/object_structures``);
Runge-Kutta stages from a tableau, each reading the ones before (``frontend/written_loops``); a
module-level table of ``(function, options)`` rows applied with ``**options`` (``function_loops``);
``np.take`` at positions computed from the data, which differ per example under vmap (``rt.batching.take``); a
recursive helper (Hermite polynomials) called with a loop's counter (``frontend/written_loops``); an object
configured by assigning its attributes after it is made, its method storing outputs in a loop (filterpy);
an object made from a dict's keywords (``Emission(**kw)``) whose method runs under ``np.errstate``; library
code's ``hasattr`` checks around a branch no array takes, and ufuncs writing into ``out``; an object made from
constants handed to a helper; a loop's variables read after a ``break`` on data (``passes/jumps``); SGD steps over a dict's keys; the array module held in a
name, a default and an argument (``local_imports``, ``function_args.bindable``); a list rebound by a
comprehension in a loop (``control._carried_as_lists``); a list of placeholders filled at a loop's counter
(``frontend/filled_lists``); sequences read at a comprehension's counter, and beside entry writes at
a loop's (``indexed_loops``); a ``partial``'s keyword given again, ``getattr`` by a constant name;
activations picked by name (a module table of classes, a helper returning a function called at once,
``getattr(np, kind)`` of a helper's literal: ``class_tables``, ``factories``); a class whose
``__init__`` checks its arguments before keeping them; state that starts as ``None`` behind a guard
(``best is None or v > best``); a loop over a configuration table whose strings differ by row; elements
read and written at a position ``np.argmax`` found (a traced integer under XLA); a class-level default
updated through ``self``; NumPy calls given an integer ``dtype`` (no derivative through their results).
"""

from __future__ import annotations

import random

FORMS = (
    "closure_append",
    "closure_maybe_append",
    "nonlocal_total",
    "extend",
    "zip_star",
    "tuple_join",
    "nested_comprehension",
    "item_unpack",
    "lambda_default",
    "return_in_loop",
    "partial_rebound",
    "generator",
    "appends_in_a_row",
    "reduce",
    "partial_inline",
    "mask_write",
    "branch_tuple",
    "plus_equals_list",
    "numpy_sizes",
    "insert_front",
    "loop_else",
    "forwarded_function",
    "strided_window",
    "tuple_key",
    "lifted_local",
    "mixed_unpack",
    "guard_return",
    "tuple_truth",
    "padded_branch",
    "triangular_loop",
    "loop_slice",
    "itertools_pairs",
    "guarded_record",
    "lagged_rows",
    "factory_pair",
    "counted_while",
    "item_accumulator",
    "object_inside",
    "spread_into_local",
    "constant_spread",
    "copied_then_written_back",
    "quadrature_nodes",
    "copy_before_loop",
    "dict_update",
    "stateful_layers",
    "mask_reduced",
    "dict_of_lists",
    "appended_after_loop",
    "layer_list",
    "list_read_as_array",
    "function_list",
    "tree_map_by_hand",
    "local_import",
    "listed_iterators",
    "joined_layer_tuples",
    "unflatten_by_counter",
    "builtins_of_constants",
    "class_method_constructor",
    "object_handed_to_object",
    "object_handed_to_helpers",
    "class_attributes",
    "version_shim",
    "pad_constants",
    "sum_of_an_array",
    "nested_accumulator",
    "joined_in_a_loop",
    "function_to_a_local_def",
    "args_passed_on_twice",
    "layer_containers",
    "stage_tableau",
    "table_rows",
    "take_at_computed_indices",
    "recursion_on_a_counter",
    "configured_object",
    "keyword_object",
    "library_type_checks",
    "constant_object",
    "branching_helpers",
    "returned_object",
    "lists_of_splits",
    "states_by_step",
    "positions_of_nonzeros",
    "list_surgery",
    "bounds_by_builtin_max",
    "appends_on_the_counter",
    "optax_chain",
    "chosen_operands",
    "broke_at",
    "sgd_over_a_dict",
    "array_module_name",
    "rebound_by_comprehension",
    "filled_placeholders",
    "read_at_counter",
    "partial_given_again",
    "recorded_then_updated",
    "counter_power",
    "counter_under_a_root",
    "base_init",
    "settings_dict_and_cache",
    "sgd_over_a_list_by_index",
    "dicts_written_by_their_loop",
    "helper_updating_its_argument",
    "settings_filled_in_the_first_step",
    "list_default_left_none",
    "object_recording_in_a_dict",
    "modes_by_literal",
    "spread_operands",
    "piecewise_pieces",
    "activations_by_name",
    "checked_init",
    "none_started_state",
    "configuration_table",
    "read_at_a_found_position",
    "class_level_default",
    "integer_dtype_argument",
    "grid_positions",
    "reversed_steps",
    "shape_flag",
    "star_items",
    "recurrence_from_a_number",
    "decided_by_comparisons",
    "read_from_the_end",
    "fluent_fit",
    "module_dispatch",
)


class PythonIdioms:
    """The ``python`` statement family; it appends lines and defines the scalar it binds."""

    def s_python(self, lines, depth):
        names = sorted(n for n, v in self.env.items() if not v.const and v.shape)
        if not names:
            return self.s_assign(lines, depth)
        a, b = self.pick(names), self.pick(names)
        name = self.fresh_name("py")
        form = self.pick(FORMS)
        getattr(self, "_py_" + form)(lines, name, a, b)
        self.define(name, ())
        self.feature(form)

    def _py_local_import(self, lines, name, a, b):
        # library code's imports at the top of a function (``frontend/local_imports.py``)
        self.helper(
            "def pooled_norm(z):\n"
            "    from scipy.special import logsumexp\n"
            "    import numpy.linalg as la\n"
            "\n"
            "    return logsumexp(np.ravel(z)) + 0.1 * la.norm(z + 1.0)\n"
        )
        lines.append(f"{name} = pooled_norm({a})")

    def _py_closure_append(self, lines, name, a, b):
        lines += [
            f"{name}_acts = []",
            f"def {name}_layer(z):",
            "    z = np.tanh(z * 0.9)",
            f"    {name}_acts.append(np.sum(z ** 2))",
            "    return z",
            f"{name}_h = {name}_layer({a})",
            f"{name}_h = {name}_layer({name}_h + 0.5)",
            f"{name} = sum({name}_acts) + np.sum({name}_h)",
        ]

    def _py_closure_maybe_append(self, lines, name, a, b):
        lines += [
            f"{name}_kept = []",
            f"def {name}_keep(z, flag):",
            "    if flag:",
            f"        {name}_kept.append(np.sum(np.sin(z)))",
            "    return z * 0.5",
            f"{name}_z = {name}_keep({a}, True)",
            f"{name}_keep({b}, False)",
            f"{name}_keep({name}_z, True)",
            f"{name} = sum({name}_kept) + len({name}_kept)",
        ]

    def _py_nonlocal_total(self, lines, name, a, b):
        lines += [
            f"{name}_tot = 0.0",
            f"def {name}_add(v):",
            f"    nonlocal {name}_tot",
            f"    {name}_tot = {name}_tot + np.sum(np.sin(v))",
            f"{name}_add({a})",
            f"{name}_add({b} * 2.0)",
            f"{name} = {name}_tot",
        ]

    def _py_extend(self, lines, name, a, b):
        lines += [
            f"{name}_l = [np.sum({a})]",
            f"{name}_l.extend([np.sum({b} ** 2), np.mean(np.tanh({a}))])",
            f"{name} = sum({name}_l)",
        ]

    def _py_zip_star(self, lines, name, a, b):
        if self.pick([False, True]):
            # sequences of sequences: each one step-major once under vmap (``enumerate(zip(...))``)
            loop = self.pick(
                [
                    f"for {name}_i, ({name}_u, {name}_v) in enumerate(zip({a}, {b})):",
                    f"for ({name}_i, {name}_u), {name}_v in zip(enumerate({a}), {b}):",
                    f"for {name}_i, ({name}_u, {name}_v) in enumerate(zip(reversed({a}), {b}), 1):",
                ]
            )
            lines += [
                f"{name} = 0.0",
                loop,
                f"    {name} = {name} + ({name}_i + 1.0) * np.sum(np.tanh({name}_u)) * np.mean({name}_v)",
            ]
            return
        lines += [
            f"{name} = 0.0",
            f"for {name}_u, {name}_v in zip(*[({a}, {b}), (np.sin({a}), np.cos({b}))]):",
            f"    {name} = {name} + np.sum({name}_u * {name}_v)",
        ]

    def _py_tuple_join(self, lines, name, a, b):
        self.helper(
            "def joined_with_bias(*parts):\n"
            "    return np.concatenate(parts + (np.ones(2),))\n"
        )
        lines.append(
            f"{name} = np.sum(np.tanh(joined_with_bias(np.ravel({a}), np.ravel({b}))))"
        )

    def _py_nested_comprehension(self, lines, name, a, b):
        lines += [
            f"{name}_flat = np.concatenate([np.ravel(z_) for pair_ in (({a}, {b}), ({a} * 2.0,)) "
            "for z_ in pair_])",
            f"{name} = np.sum({name}_flat ** 2) * 0.1",
        ]

    def _py_item_unpack(self, lines, name, a, b):
        lines += [
            f"{name}_cache = {{}}",
            f'{name}_h, {name}_cache["k"] = np.tanh({a}), {b} * 2.0',
            f'{name} = np.sum({name}_h) + np.sum({name}_cache["k"])',
        ]

    def _py_lambda_default(self, lines, name, a, b):
        lines += [
            f"{name}_s = 2.0",
            f"{name}_f = lambda z, s={name}_s: np.tanh(z * s)",
            f"{name}_s = 5.0",
            f"{name} = np.sum({name}_f({a})) + {name}_s",
        ]

    def _py_return_in_loop(self, lines, name, a, b):
        self.helper(
            "def first_large(z, level):\n"
            "    for v in np.ravel(z):\n"
            "        if v > level:\n"
            "            return v * 2.0\n"
            "    return np.sum(z) * 0.5\n"
        )
        lines.append(f"{name} = first_large({a}, 0.1) + first_large({b}, 100.0)")

    def _py_partial_rebound(self, lines, name, a, b):
        self.imports.add("import functools")
        self.helper("def scaled_by(k, z):\n    return np.tanh(k * z)\n")
        lines += [
            f"{name}_k = np.mean({a}) * 0.5",
            f"{name}_g = functools.partial(scaled_by, {name}_k)",
            f"{name}_k = 3.0",
            f"{name} = np.sum({name}_g({b})) + {name}_k",
        ]

    def _py_generator(self, lines, name, a, b):
        self.helper(
            "def pieces(*zs):\n"
            "    for z in zs:\n"
            "        yield np.ravel(z)\n"
            "        yield np.tanh(z) * 0.5\n"
        )
        self.helper("def pieces_again(*zs):\n    yield from pieces(*zs)\n")
        lines += [
            f"{name}_parts = list(pieces_again({a}, {b}))",
            f"{name} = sum(np.sum(p_ ** 2) for p_ in {name}_parts) + np.sum({name}_parts[-1])",
        ]

    def _py_appends_in_a_row(self, lines, name, a, b):
        lines += [
            f"{name}_l = []",
            f"for {name}_z in ({a}, {b}):",
            f"    {name}_l.append(np.sum(np.sin({name}_z)))",
            f"    {name}_l.append(np.mean({name}_z ** 2))",
            f"{name} = sum({name}_l) + {name}_l[1]",
        ]

    def _py_reduce(self, lines, name, a, b):
        self.imports.add("import functools")
        self.imports.add("import operator")
        lines += [
            f"{name}_parts = [np.sum({a}), np.mean(np.sin({b})), np.sum({a} ** 2) * 0.5]",
            f"{name} = functools.reduce(operator.mul, {name}_parts) + functools.reduce("
            f"lambda t_, z_: t_ + np.sum(np.tanh(z_)), [{a}, {b}], 0.0)",
        ]

    def _py_partial_inline(self, lines, name, a, b):
        self.imports.add("import functools")
        self.helper(
            "def shifted_tanh(z, shift, scale=1.0):\n    return np.tanh(z * scale + shift)\n"
        )
        self.helper("def applied_twice(f, z):\n    return f(f(z))\n")
        self.helper("softplus_p = functools.partial(np.logaddexp, 0.0)\n")
        lines += [
            f"{name}_k = np.mean({a}) * 0.3",
            f"{name} = np.sum(applied_twice(functools.partial(shifted_tanh, shift={name}_k), {b}))"
            f" + np.sum(softplus_p({a}))",
        ]

    def _py_mask_write(self, lines, name, a, b):
        lines += [
            f"{name}_h = np.tanh({a}) * 1.5",
            f"{name}_h[{name}_h < 0] = 0.1 * {name}_h[{name}_h < 0]",
            f"{name}_h[{name}_h > 1.0] = 1.0",
            f"{name} = np.sum({name}_h ** 2) + np.sum({name}_h[{name}_h > 0.5])",
        ]
        self.fd_only = True

    def _py_branch_tuple(self, lines, name, a, b):
        self.helper(
            "def normalized(z, mode):\n"
            '    if mode == "train":\n'
            "        out = z - np.mean(z)\n"
            "        cache = (out, z)\n"
            '    elif mode == "test":\n'
            "        out = z * 0.5\n"
            "        cache = None\n"
            "    else:\n"
            '        raise ValueError("unknown mode " + mode)\n'
            "    return out, cache\n"
        )
        lines += [
            f'{name}_out, {name}_cache = normalized({a}, "train")',
            f'{name}_test, _ = normalized({b}, "test")',
            f"{name} = np.sum({name}_out ** 2) + np.sum({name}_cache[1]) * np.sum({name}_test)",
        ]

    def _py_plus_equals_list(self, lines, name, a, b):
        lines += [
            f"{name}_l = [{a}]",
            f"for {name}_k in range(2):",
            f"    {name}_l += [np.sin({a} * ({name}_k + 1.0))]",
            f"{name}_u = np.tanh({b}) * 1.0",
            f"{name}_u[0] = {name}_u[-1] = np.mean({a}) * 0.5",
            f"{name} = sum(np.sum(z_) for z_ in {name}_l) + np.sum({name}_u ** 2)",
        ]
        self.fd_only = True  # the twin spells no chained item writes

    def _py_numpy_sizes(self, lines, name, a, b):
        # a helper's float default times a size, inside ``int``: NumPy's arithmetic when traced
        self.helper(
            "def top_fraction(v, frac=0.5):\n"
            "    k = int(np.ceil(frac * v.size))\n"
            "    return np.sum(np.sort(np.ravel(v))[-k:])\n"
        )
        lines += [
            f"{name}_top = top_fraction(np.tanh({b})) + top_fraction({a} * 0.5, frac=0.25)",
            f"{name}_flat = np.reshape({a}, (int(np.prod({a}.shape)),))",
            f"{name}_k = int(np.ceil(0.5 * {name}_flat.size))",
            f"{name} = np.sum(np.tanh({name}_flat[-{name}_k:])) + np.sum({b}) * int(np.sqrt(4.0)) + {name}_top",
        ]
        self.fd_only = True  # ``jnp.prod`` of a shape tuple is an error in JAX: the twin has no spelling

    def _py_insert_front(self, lines, name, a, b):
        lines += [
            f"{name}_r = []",
            f"{name}_g = 0.0",
            f"for {name}_v in reversed(list(np.ravel({a}))):",
            f"    {name}_g = np.tanh({name}_v) + 0.9 * {name}_g",
            f"    {name}_r.insert(0, {name}_g)",
            f"{name} = np.sum(np.array({name}_r) * np.arange(1.0, len({name}_r) + 1.0))",
        ]

    def _py_loop_else(self, lines, name, a, b):
        lines += [
            f"{name}_s = 1.0",
            "for _ in range(4):",
            f"    if np.sum(np.tanh({a} * {name}_s)) < np.sum({a}) * 0.5:",
            "        break",
            f"    {name}_s = {name}_s * 0.5",
            "else:",
            f"    {name}_s = 0.1",
            f"{name} = np.sum(np.tanh({a} * {name}_s)) + np.mean({b}) * {name}_s",
        ]

    def _py_read_at_counter(self, lines, name, a, b):
        """Sequences read at a loop's counter: pairs a comprehension made, read by another comprehension's
        counter, and a module-level list read in a loop that writes entries at its counter.
        """
        self.helper("OBSERVED = [0, 2, 1, 1]\n")
        lines += [
            f"{name}_v = np.ravel({a})",
            f"{name}_ps = [({name}_v[k % {name}_v.size], np.tanh({name}_v[0]) * k) for k in range(2)]",
            f"{name}_s = sum({name}_ps[k][0] * {name}_ps[k][1] for k in range(2))",
            f"{name}_al = np.zeros((4, 3))",
            "for t in range(1, 4):",
            "    for j in range(3):",
            f"        {name}_al[t, j] = np.tanh({name}_al[t - 1, j] + np.mean({b})) * (OBSERVED[t] + 1.0)",
            f"{name} = {name}_s + np.sum({name}_al)",
        ]

    def _py_partial_given_again(self, lines, name, a, b):
        """A keyword a ``partial`` binds, given again by a call; a function looked up by a constant name."""
        self.helper("import functools\n")
        self.helper('SQUASH = "tanh"\n')
        self.helper(
            "def weighted(v, w, shift=0.0):\n    return np.sum(v * w) + shift\n"
        )
        lines += [
            f"{name}_g = functools.partial(weighted, w=np.mean({b}), shift=0.5)",
            f"{name}_act = getattr(np, SQUASH)",
            f"{name} = {name}_g({name}_act({a})) + {name}_g({a}, w=np.sum({b}) * 0.1)",
        ]

    def _py_counter_power(self, lines, name, a, b):
        """Powers of values of any sign whose exponent is a loop's counter (no derivative: an integer)."""
        loop = self.pick(
            [
                [f"for {name}_k in range(3):"],
                [f"{name}_k = 0", f"while {name}_k < 3:"],
            ]
        )
        step = [f"    {name}_k += 1"] if loop[-1].startswith("while") else []
        lines += [
            f"{name}_t = 0.0",
            *loop,
            f"    {name}_t = {name}_t + np.sum({a} ** ({name}_k + 1)) * np.mean({b})",
            *step,
            f"{name} = {name}_t",
        ]

    def _py_counter_under_a_root(self, lines, name, a, b):
        """A counter the loop carries itself (an int or a float), read where its partial is infinite
        (``k ** 0.5`` at ``k = 0``, ``np.arcsin(k / 2)`` at ``k = 2``; ``np.sqrt`` the oracle counts as
        a kink), in the loop or after it (a countdown at 0): no input reaches it, so it has no tangent
        (a zero one gave nan).
        """
        if self.p(0.3):
            # a countdown read after its loop, where it is 0 (``left ** 0.5``)
            lines += [
                f"{name}_k = {self.pick(['2', '2.0'])}",
                f"{name}_t = 0.0",
                f"while {name}_k > 0:",
                f"    {name}_t = {name}_t + np.sum({a} ** 2) * {name}_k",
                f"    {name}_k -= 1",
                f"{name} = {name}_t + {name}_k ** 0.5 * np.mean({b})",
            ]
            return
        loop = self.pick([f"for {name}_s in range(3):", f"while {name}_k < 3:"])
        root = self.pick([f"{name}_k ** 0.5", f"np.arcsin({name}_k / 2)"])
        lines += [
            f"{name}_k = {self.pick(['0', '0.0'])}",
            f"{name}_t = 0.0",
            loop,
            f"    {name}_t = {name}_t + {root} * np.sum({a} ** 2) * np.mean({b})",
            f"    {name}_k += 1",
            f"{name} = {name}_t",
        ]

    def _py_recorded_then_updated(self, lines, name, a, b):
        """A scalar state recorded in a history list, then updated in place (NumPy rebinds a number)."""
        op = self.pick(["+=", "-=", "*="])
        lines += [
            f"{name}_y = np.mean({a}) + 0.5",
            f"{name}_hist = [{name}_y * 0.5]",
            f"for {name}_s in range(3):",
            f"    {name}_hist.append({name}_y)",
            f"    {name}_y {op} np.tanh({name}_y) * np.mean({b}) * 0.3",
            f"{name} = sum({name}_hist) + {name}_y",
        ]

    def _py_filled_placeholders(self, lines, name, a, b):
        """A list of placeholders filled at a loop's counter, backward or forward (a Riccati sweep)."""
        sweep = self.pick(["reversed(range(3))", "range(3)"])
        lines += [
            f"{name}_v = np.mean({a}) * 1.0",
            f"{name}_ks = [0.0] * 3",  # (``[None] * 3``: tests only; the JAX twin writes items by .at)
            f"for {name}_k in {sweep}:",
            f"    {name}_v = 0.5 * {name}_v + np.tanh({name}_v) * np.mean({b})",
            f"    {name}_ks[{name}_k] = {name}_v * ({name}_k + 1.0)",
            f"{name} = sum({name}_ks) + {name}_ks[0]",
        ]

    def _py_rebound_by_comprehension(self, lines, name, a, b):
        """A list of parameters rebound by a comprehension in a loop (an optimizer's step); also in a helper,
        over its parameter (a name whose kind s2s does not know before the loop)."""
        self.helper(
            "def shrunk(ps, steps=2):\n"
            "    for _ in range(steps):\n"
            "        ps = [p * 0.9 for p in ps]\n"
            "    return ps\n"
        )
        made = self.pick(
            [
                f"[np.tanh({a}), {b} * 0.5]",
                f"[np.tanh(p) for p in [{a}, {b} * 0.5]]",  # (a list its steps collect)
                f"shrunk([np.tanh({a}), {b} * 0.5])",
            ]
        )
        loop = self.pick(
            [f"for {name}_t in range(2):", f"while np.sum({name}_ps[0]) < 1.5:"]
        )
        lines += [
            f"{name}_ps = {made}",
            loop,
            f"    {name}_gs = [np.cos(p) * 0.3 - 0.4 for p in {name}_ps]",
            f"    {name}_ps = [p - 0.1 * g for p, g in zip({name}_ps, {name}_gs)]",
            f"{name} = sum(np.sum(p ** 2) for p in {name}_ps)",
        ]

    def _py_array_module_name(self, lines, name, a, b):
        """The array-API idiom: the module in a local name, a helper's default and an argument."""
        self.helper("def sq_norm(v, xp=np):\n    return xp.sum(v ** 2)\n")
        lines += [
            f"{name}_xp = np",
            f"{name} = {name}_xp.sum(np.tanh({a})) + sq_norm({b}) + sq_norm({a}, np) * 0.5",
        ]

    def _py_sgd_over_a_dict(self, lines, name, a, b):
        """Hand-written SGD steps updating a dict of parameters key by key (the keys: no batch axis)."""
        lines += [
            f'{name}_p = {{"u": np.tanh({a}), "v": {b} * 0.5}}',
            f"for {name}_s in range(2):",
            f'    {name}_g = {{"u": {name}_p["u"] * 2.0, "v": {name}_p["v"] ** 2}}',
            f"    for {name}_k in {name}_p:",
            f"        {name}_p[{name}_k] = {name}_p[{name}_k] - 0.1 * {name}_g[{name}_k]",
            f'{name} = np.sum({name}_p["u"] ** 2) + np.sum({name}_p["v"])',
        ]

    def _py_sgd_over_a_list_by_index(self, lines, name, a, b):
        """SGD steps updating a list of parameters of different shapes by index (``ws[i] = ws[i] - ...``):
        a Python list no compiled counter can index (``rt.range(..., indexes=)``)."""
        lines += [
            f"{name}_ws = [np.tanh({a}), {b} * 0.5]",
            f"for {name}_s in range(2):",
            f"    {name}_gs = [np.cos(w) * 0.3 for w in {name}_ws]",
            f"    for {name}_i in range(len({name}_ws)):",
            f"        {name}_ws[{name}_i] = {name}_ws[{name}_i] - 0.1 * {name}_gs[{name}_i]",
            f"{name} = sum(np.sum(w ** 2) for w in {name}_ws)",
        ]

    def _py_dicts_written_by_their_loop(self, lines, name, a, b):
        """A loop writing into the dicts of a list it visits (CS231n's ``bn_param["mode"] = mode``), the
        loop's name visiting them again in a later loop (``frontend/item_loops``)."""
        head = self.pick(
            [
                f"for {name}_c in {name}_cfgs:",
                f"for {name}_j, {name}_c in enumerate({name}_cfgs):",
            ]
        )
        lines += [
            f'{name}_cfgs = [{{"scale": 1.0, "w": np.tanh({a})}}, {{"scale": 2.0, "w": {b} * 0.5}}]',
            head,
            f'    {name}_c["w"] = {name}_c["w"] * {name}_c["scale"] + 0.1',
            f'    {name}_c["mode"] = "train"',
            f"{name} = 0.0",
            f"for {name}_c in {name}_cfgs:",
            f'    if {name}_c["mode"] == "train":',
            f'        {name} = {name} + np.sum({name}_c["w"] ** 2)',
        ]

    def _py_helper_updating_its_argument(self, lines, name, a, b):
        """A helper that writes into the dict (or a list's dict) it is given, the caller reading it after
        (CS231n's layers keeping running statistics: ``frontend/written_back``)."""
        self.helper(
            "def keep_stats(h, state, momentum=0.9):\n"
            '    state["mean"] = momentum * state["mean"] + (1 - momentum) * np.mean(h)\n'
            '    return h - state["mean"]\n'
        )
        holder = self.pick(["dict", "list", "statement"])
        if holder == "list":
            lines += [
                f'{name}_states = [{{"mean": 0.5}}, {{"mean": np.mean({b})}}]',
                f"for {name}_j in range(2):",
                f"    {name}_h = keep_stats(np.tanh({a}) * ({name}_j + 1.0), {name}_states[{name}_j])",
                f'{name} = np.sum({name}_h ** 2) + {name}_states[0]["mean"] + {name}_states[1]["mean"] ** 2',
            ]
            return
        call = f"keep_stats(np.tanh({a}), {name}_state)"
        lines += [
            f'{name}_state = {{"mean": np.mean({b})}}',
            f"for {name}_s in range(2):",
            f"    {call}" if holder == "statement" else f"    {name}_h = {call}",
            f'{name} = {name}_state["mean"] ** 2'
            + ("" if holder == "statement" else f" + np.sum({name}_h)"),
        ]

    def _py_settings_filled_in_the_first_step(self, lines, name, a, b):
        """An optimizer's settings dict that the first step fills (CS231n's ``config.setdefault``,
        ``None`` made ``{}``): a compiled loop runs that step on its own (``runtime/peeling``).
        """
        self.helper(
            "def momentum_step(w, g, config=None):\n"
            "    if config is None:\n"
            "        config = {}\n"
            '    config.setdefault("lr", 0.1)\n'
            '    v = config.get("v", np.zeros_like(w))\n'
            '    v = 0.9 * v - config["lr"] * g\n'
            '    config["v"] = v\n'
            "    return w + v, config\n"
        )
        start = self.pick(["None", "{}", '{"lr": 0.2}'])
        lines += [
            f"{name}_w = np.tanh({a})",
            f"{name}_cfg = {start}",
            f"for {name}_s in range(3):",
            f"    {name}_w, {name}_cfg = momentum_step({name}_w, np.cos({name}_w) * np.mean({b}), {name}_cfg)",
            f"{name} = np.sum({name}_w ** 2)",
        ]

    def _py_list_default_left_none(self, lines, name, a, b):
        """A helper whose list parameter defaults to ``None`` and is made inside (``if out is None: out
        = []``), called leaving it, passing ``None``, or passing ``None`` by keyword."""
        self.helper(
            "def gather_powers(v, out=None, scale=None):\n"
            "    if out is None:\n"
            "        out = []\n"
            "    if scale is not None:\n"
            "        v = v * scale\n"
            "    for k in range(1, 4):\n"
            "        out.append(np.tanh(v) ** k)\n"
            "    return out\n"
        )
        call = self.pick(
            [
                f"gather_powers({a})",
                f"gather_powers({a}, None, 0.5)",
                f"gather_powers({a}, out=None, scale=np.mean({b}))",
            ]
        )
        lines += [
            f"{name}_hs = {call}",
            f"{name} = np.sum(np.stack({name}_hs) ** 2) + np.sum({name}_hs[-1])",
        ]

    def _py_object_recording_in_a_dict(self, lines, name, a, b):
        """numpy-ml's layers: an object made in the function keeps its forward pass's values in a dict
        of lists (``self.derived_variables["Z"].append(Z)``), read after its calls."""
        self.helper(
            "class Recorder:\n"
            "    def __init__(self, scale):\n"
            "        self.scale = scale\n"
            '        self.derived = {"Z": [], "A": []}\n\n'
            "    def forward(self, v):\n"
            "        z = v * self.scale\n"
            '        self.derived["Z"].append(z)\n'
            '        self.derived["A"].append(np.tanh(z))\n'
            '        return self.derived["A"][-1]\n'
        )
        steps = self.pick([1, 2, 3])
        lines += [
            f"{name}_rec = Recorder(np.mean({b}))",
            f"{name}_h = {a}",
            f"for {name}_s in range({steps}):",
            f"    {name}_h = {name}_rec.forward({name}_h + 0.1 * {name}_s)",
            f'{name} = np.sum({name}_h ** 2) + np.sum({name}_rec.derived["Z"][0]) * len({name}_rec.derived["A"])',
        ]

    def _py_modes_by_literal(self, lines, name, a, b):
        """Helpers told what to do by a literal: ``if``/``if`` on a mode string, a helper returning on some
        branches only, an optional hook left ``None`` (``if callback: callback(v)``), a flag.
        """
        self.helper(
            "def by_mode(v, mode, callback=None, clip=False):\n"
            '    if mode == "square":\n'
            "        out = v ** 2\n"
            '    if mode == "sine":\n'
            "        out = np.sin(v)\n"
            "    if callback:\n"
            "        callback(out)\n"
            "    if clip:\n"
            "        out = np.clip(out, -0.5, 0.5)\n"
            "    return out\n"
        )
        self.helper(
            "def weight_for(kind):\n"
            '    if kind == "light":\n'
            "        return 0.5\n"
            '    elif kind == "heavy":\n'
            "        return 2.0\n"
        )
        mode = self.pick(['"square"', '"sine"'])
        extra = self.pick(["", ", clip=True", ", None, False", ", callback=None"])
        kind = self.pick(['"light"', '"heavy"'])
        lines.append(
            f"{name} = np.sum(by_mode({a}, {mode}{extra}) * weight_for({kind})) + np.mean({b})"
        )

    def _py_spread_operands(self, lines, name, a, b):
        """``*`` of a sequence the function shows into NumPy functions (``np.einsum(spec, *factors)``),
        and of a display written in the call."""
        form = self.pick(["einsum", "maximum", "display"])
        lines.append(f"{name}_ops = (np.tanh({a}), 0.5 * {a} + 0.1)")
        if form == "einsum":
            lines.append(
                f'{name} = np.einsum("...,...->...", *{name}_ops).sum() + np.mean({b})'
            )
        elif form == "maximum":
            lines.append(f"{name} = np.sum(np.maximum(*{name}_ops)) + np.mean({b})")
        else:
            lines.append(
                f"{name} = np.sum(np.minimum(*(np.sin({a}), {a}))) + np.mean({b})"
            )

    def _py_piecewise_pieces(self, lines, name, a, b):
        """``np.piecewise`` of lambdas, a constant and a default piece (tax brackets, smoothsteps)."""
        default = self.pick(["", ", lambda v: np.tanh(v)"])
        lines.append(
            f"{name}_y = np.piecewise({a}, [{a} < -0.3, {a} > 0.4], "
            f"[lambda v: 0.5 * v, 0.1{default}])"
        )
        lines.append(f"{name} = np.sum({name}_y ** 2) + np.mean({b})")

    def _py_activations_by_name(self, lines, name, a, b):
        """Activations picked by a string: a class from a module table made in a layer's ``__init__``
        (ML-From-Scratch), a helper returning that object, a helper returning a function called at once.
        """
        self.helper(
            "class SoftSign:\n"
            "    def __call__(self, v):\n"
            "        return v / (1 + np.abs(v))\n\n\n"
            "class Wave:\n"
            "    def __call__(self, v):\n"
            "        return np.sin(v)\n\n\n"
            'ACTIVATION_CLASSES = {"softsign": SoftSign, "wave": Wave}\n\n\n'
            "class ActivationLayer:\n"
            "    def __init__(self, kind):\n"
            "        self.func = ACTIVATION_CLASSES[kind]()\n\n"
            "    def forward(self, v):\n"
            "        return self.func(v)\n\n\n"
            "def activation_object(kind):\n"
            "    return ACTIVATION_CLASSES[kind]()\n\n\n"
            "def activation_function(kind):\n"
            '    if kind == "tanh":\n'
            "        return np.tanh\n"
            "    return np.cos\n\n\n"
            "def activation_by_attribute(v, kind):\n"
            "    return getattr(np, kind)(v)\n"
        )
        kind = self.pick(['"softsign"', '"wave"'])
        use = self.pick(["layer", "helper", "function", "getattr", "zipped"])
        if use == "layer":
            lines.append(f"{name}_y = ActivationLayer({kind}).forward({a})")
        elif use == "zipped":  # objects of two classes in a list, beside scales
            objects = self.pick([f"{name}_acts", "[SoftSign(), Wave()]"])
            lines += [
                f"{name}_y = {a}",
                f"{name}_acts = [SoftSign(), Wave()]",
                f"for {name}_s, {name}_f in zip([0.5, 1.5], {objects}):",
                f"    {name}_y = {name}_s * {name}_f({name}_y)",
            ]
        elif use == "helper":
            lines += [
                f"{name}_f = activation_object({kind})",
                f"{name}_y = {name}_f({a})",
            ]
        elif use == "function":
            fn = self.pick(['"tanh"', '"cos"'])
            lines.append(f"{name}_y = activation_function({fn})({a})")
        else:
            fn = self.pick(['"tanh"', '"sin"'])
            lines.append(f"{name}_y = activation_by_attribute({a}, {fn})")
        lines.append(f"{name} = np.sum({name}_y ** 2) + np.mean({b})")

    def _py_configuration_table(self, lines, name, a, b):
        """A loop over a module-level architecture table (dicts of strings that differ by row), beside a
        list of scales, each row's activation picked into a local name by a helper."""
        self.helper(
            "LAYER_TABLE = [\n"
            '    {"activation": "tanh", "gain": 1.0},\n'
            '    {"activation": "softsign", "gain": 0.5},\n'
            '    {"activation": "tanh", "gain": 2.0},\n'
            "]\n\n\n"
            'def activated(v, activation="tanh"):\n'
            '    if activation == "tanh":\n'
            "        func = np.tanh\n"
            '    elif activation == "softsign":\n'
            "        func = np.sin\n"
            "    else:\n"
            '        raise ValueError("unknown activation")\n'
            "    return func(v)\n"
        )
        form = self.pick(["zip", "plain"])
        lines.append(f"{name}_h = {a}")
        if form == "zip":
            lines += [
                f"for {name}_s, {name}_row in zip([0.5, 1.0, 1.5], LAYER_TABLE):",
                f'    {name}_h = {name}_s * activated({name}_h, {name}_row["activation"])',
            ]
        else:
            lines += [
                f"for {name}_row in LAYER_TABLE:",
                f'    {name}_h = {name}_row["gain"] * activated({name}_h, {name}_row["activation"])',
            ]
        lines.append(f"{name} = np.sum({name}_h ** 2) + np.mean({b})")

    def _py_none_started_state(self, lines, name, a, b):
        """State that starts as ``None`` in a loop, tested behind a guard (``best is None or v > best``,
        ``prev is not None and abs(v - prev) < tol``), and an optional argument left ``None``.
        """
        self.helper(
            "def scaled_unless(v, mask=None, scale=None):\n"
            "    if mask is not None and mask.any():\n"
            "        v = v * mask\n"
            "    if scale is None or scale > 0:\n"
            "        return v * 1.5\n"
            "    return v\n"
        )
        form = self.pick(["best", "converged"])
        if form == "best":
            lines += [
                f"{name}_best = None",
                f"for {name}_v in np.ravel({a})[:3]:",
                f"    {name}_t = np.tanh({name}_v)",
                f"    if {name}_best is None or {name}_t > {name}_best:",
                f"        {name}_best = {name}_t",
                f"{name} = {name}_best + np.sum(scaled_unless({b}))",
            ]
        else:
            lines += [
                f"{name}_x = np.mean({a}) ** 2 + 1.0",
                f"{name}_prev = None",
                f"{name}_r = 1.0",
                "for _ in range(8):",
                f"    {name}_r = 0.5 * ({name}_r + {name}_x / {name}_r)",
                f"    if {name}_prev is not None and abs({name}_r - {name}_prev) < 1e-3:",
                "        break",
                f"    {name}_prev = {name}_r",
                f"{name} = {name}_r + np.mean(scaled_unless({b}, scale=2.0))",
            ]

    def _py_checked_init(self, lines, name, a, b):
        """A class whose ``__init__`` checks its arguments (``assert``, ``if ...: raise``) before keeping them,
        its method testing an attribute in a conditional expression or an ``if`` (numpy-ml's models).
        """
        self.helper(
            "class Penalized:\n"
            '    def __init__(self, kind="l2", weight=0.5):\n'
            '        assert kind in ("l1", "l2"), "unknown penalty"\n'
            "        if weight < 0:\n"
            '            raise ValueError("negative weight")\n'
            "        self.kind = kind\n"
            "        self.weight = weight\n\n"
            "    def penalty(self, v):\n"
            '        order = 2 if self.kind == "l2" else 1\n'
            '        if self.kind == "l1":\n'
            "            return self.weight * np.sum(np.sqrt(v * v + 0.1))\n"
            "        return self.weight * np.sum(v ** order)\n"
        )
        self.imports.add("from dataclasses import dataclass, field")
        self.helper(
            "@dataclass\n"
            "class Sizes:\n"
            "    width: int\n"
            "    depth: int\n"
            "    total: int = 0\n\n"
            "    def __post_init__(self):\n"
            "        self.total = self.width * self.depth\n"
        )
        kind = self.pick(['"l1"', '"l2"'])
        weight = self.pick(["", ", weight=0.25", ", 2.0"])
        lines += [
            f"{name}_pen = Penalized({kind}{weight})",
            f"{name}_sizes = Sizes({self.pick(['2, 3', '1, 4'])})",
            f"{name} = {name}_pen.penalty({a}) / {name}_sizes.total + np.mean({b})",
        ]

    def _py_broke_at(self, lines, name, a, b):
        """The loop's variables read after a ``break`` on data: the items of the step that broke."""
        loop = self.pick(
            [
                f"for {name}_i, {name}_v in enumerate(np.ravel({a})):",
                f"for {name}_i, {name}_v in zip(range(3, 9), np.ravel({a}) * 2.0):",
                f"for {name}_i, {name}_v in enumerate([np.sum({a}), np.mean({b}), np.max({a})]):",
            ]
        )
        lines += [
            f"{name}_t = 0.0",
            loop,
            f"    if {name}_t > {self.pick(['0.8', '2.0'])}:",
            "        break",
            f"    {name}_t = {name}_t + {name}_v ** 2",
            f"{name} = {name}_t * {name}_i + np.tanh({name}_v) + np.mean({b})",
        ]

    def _py_forwarded_function(self, lines, name, a, b):
        self.helper("def field(z, s, k):\n    return np.tanh(z * k) - 0.1 * s * z\n")
        self.helper(
            "def euler_step(f, z, s, h, *args):\n    return z + h * f(z, s, *args)\n"
        )
        self.helper(
            "def integrate(f, z, n, *args):\n"
            "    for i in range(n):\n"
            "        z = euler_step(f, z, i * 0.1, 0.1, *args)\n"
            "    return z\n"
        )
        if self.pick([False, True]):
            lines.append(
                f"{name} = np.sum(integrate(field, {a}, 3, np.mean({b})) ** 2)"
            )
            return
        # stax's ``serial``: a keyword popped first, the others passed on to every layer
        self.helper(
            "def scaled_layer(z, k, **kwargs):\n"
            "    return np.tanh(z * k) * kwargs.get('gain', 1.0)\n"
        )
        self.helper(
            "def serial_layers(z, ks, **kwargs):\n"
            "    rng = kwargs.pop('rng', None)\n"
            "    for k in ks:\n"
            "        z = scaled_layer(z, k, **kwargs)\n"
            "    return z if rng is None else z * 0.5\n"
        )
        lines.append(
            f"{name} = np.sum(serial_layers({a}, (0.5, np.mean({b})), gain=1.5)) + "
            f"np.sum(serial_layers({a}, (0.9,), rng=1))"
        )

    def _py_tree_map_by_hand(self, lines, name, a, b):
        # optax-like code's own ``tree_map(fn, tree, *rest)`` given lambdas, the result rebound to the name
        # of a tree it reads (``m = tree_map(lambda m_, g: ..., m, grads)``: was the empty new dict)
        self.helper(
            "def tree_map_by_hand(fn, tree, *rest):\n"
            "    return {k: fn(v, *(r[k] for r in rest)) for k, v in tree.items()}\n"
        )
        lines += [
            f"{name}_m = {{'u': np.ravel({a}) * 0.5, 'v': np.ravel({b})[:2] + 0.1}}",
            f"{name}_g = {{'u': np.tanh(np.ravel({a})), 'v': np.ravel({b})[:2] * 0.3}}",
            f"{name}_m = tree_map_by_hand(lambda m_, g: 0.9 * m_ + 0.1 * g, {name}_m, {name}_g)",
            f"{name}_m = tree_map_by_hand(lambda m_: np.sin(m_), {name}_m)",
            f"{name} = 0.0",
            f"for {name}_k in {name}_m:",
            f"    {name} = {name} + np.sum({name}_m[{name}_k] ** 2)",
        ]

    def _py_strided_window(self, lines, name, a, b):
        form = self.pick(["helper", "loop", "dilated"])
        if form == "dilated":
            # numpy-ml's dilated windows: the width grown by a rebinding, the step a helper's argument
            self.helper(
                "def dilated_taps(v, w, d=1):\n"
                "    fw = w.shape[0]\n"
                "    fw = fw * (d + 1) - d\n"
                "    out = np.zeros(v.shape[0] - fw + 1)\n"
                "    for i in range(v.shape[0] - fw + 1):\n"
                "        i0, i1 = i, i + fw\n"
                "        out[i] = np.sum(v[i0:i1:(d + 1)] * w)\n"
                "    return out\n"
            )
            lines += [
                f"{name}_v = np.concatenate([np.ravel({a}), np.tanh(np.ravel({a})), np.ravel({a})])",
                f"{name} = np.sum(dilated_taps({name}_v, np.array([0.5, -1.0]), d=1) ** 2)",
            ]
            return
        if form == "helper":
            # a helper's strided windows, called in a loop: the width is a number every step shares
            self.helper(
                "def strided_taps(v, stride=1):\n"
                "    n_out = (v.shape[0] - 2) // stride + 1\n"
                "    out = np.zeros(n_out)\n"
                "    for i in range(2):\n"
                "        out += (i + 1.0) * v[i : i + stride * n_out : stride]\n"
                "    return out\n"
            )
            lines += [
                f"{name} = 0.0",
                f"for {name}_row in np.reshape({a}, ({a}.shape[0], -1)):",
                f"    {name}_v = np.concatenate([{name}_row, np.tanh({name}_row), {name}_row])",
                f"    {name} = {name} + np.sum(strided_taps({name}_v, stride=2) ** 2)",
            ]
            return
        lines += [
            f"{name}_v = np.concatenate([np.ravel({a}), np.ravel({a}) * 0.5])",
            f"{name} = 0.0",
            f"for {name}_i in range(2):",
            f"    {name}_end = {name}_i + 2 * 2",
            f"    {name} = {name} + np.sum(np.tanh({name}_v[{name}_i:{name}_end:2]))",
        ]

    def _py_tuple_key(self, lines, name, a, b):
        lines.append(f"{name} = np.atleast_2d({a})[(0, -1)] * 2.0 + np.sum({b}) * 0.5")

    def _py_lifted_local(self, lines, name, a, b):
        # the transformed function is written with ``jnp`` (JAX traces it), its caller with ``np``
        self.imports |= {"import jax", "import jax.numpy as jnp"}
        form = self.pick(
            [
                "def_grad",
                "lambda_grad",
                "value_and_grad",
                "vmap",
                "helper_both_orders",
                "grad_of_grad",
                "local_reading_local",
                "hessian_inside",
                "jacobian_of_lambda",
                "factory_into_map",
                "kernel_matrix",
                "kernel_passed",
                "per_example_grads",
                "mapped_library_function",
                "held_transform",
                "pullback",
                "linearized",
            ]
        )
        if form == "pullback":
            # the autodiff cookbook's ``jax.vjp`` inside (``frontend/pullbacks.py``)
            lines += [
                f"{name}_out, {name}_pull = jax.vjp(lambda u, v: jnp.tanh(u) * jnp.mean(v), {a}, {b})",
                f"{name}_ga, {name}_gb = {name}_pull(jnp.cos({name}_out))",
                f"{name} = jnp.sum({name}_ga * {a}) + jnp.sum({name}_gb ** 2)",
            ]
            return
        if form == "linearized":
            lines += [
                f"{name}_y, {name}_lin = jax.linearize(lambda u: jnp.sin(u) * jnp.sum(u), {a})",
                f"{name} = jnp.sum({name}_lin(jnp.cos({a})) * {name}_y)",
            ]
            return
        if form == "held_transform":
            # a module-level function's derivative held in a name, mapped by ``jax.vmap`` of the name
            # (a PINN's ``u_t = jax.grad(u, argnums=1)``)
            self.helper(
                "def wave_at(w, t):\n" "    return jnp.sum(jnp.tanh(w * t + 0.5 * w))\n"
            )
            lines += [
                f"{name}_ut = jax.grad(wave_at, argnums=1)",
                f"{name}_utt = jax.grad({name}_ut, argnums=1)",
                f"{name}_ts = jnp.ravel({a}) * 0.5",
                f"{name}_w = jnp.ravel({b})[:2] * 1.0",
                f"{name} = jnp.sum(jax.vmap({name}_ut, in_axes=(None, 0))({name}_w, {name}_ts) ** 2)",
                f"{name} = {name} + 0.1 * jnp.sum(jax.vmap({name}_utt, in_axes=(None, 0))({name}_w, {name}_ts))",
            ]
            return
        if form == "mapped_library_function":
            # a library function transformed (``frontend/library_maps.py``): ``jax.vmap(jnp.outer)``
            lines += [
                f"{name}_rows = np.atleast_2d({a}) * jnp.mean({b})",
                f"{name}_sq = jax.vmap(jnp.outer)({name}_rows, {name}_rows)",
                f"{name} = np.sum(jax.vmap(jnp.diag)({name}_sq)) * 0.1",
            ]
            return
        if form == "per_example_grads":
            # DP-SGD's per-example gradients of a dot product, differentiated again (the inner map's
            # derivatives are its function's, mapped: ``helper_versions.vjp_of_mapped_module``)
            lines += [
                f"def {name}_s(w, z):",
                "    return jnp.dot(jnp.tanh(z), w) ** 2",
                f"{name}_rows = np.atleast_2d({a}) * 1.0",
                f"{name}_w = jnp.ones({name}_rows.shape[1]) * jnp.mean({b})",
                f"{name}_g = jax.vmap(jax.grad({name}_s), in_axes=(None, 0))({name}_w, {name}_rows)",
                f"{name} = np.sum({name}_g ** 2) * 0.1",
            ]
            return
        if form == "kernel_passed":
            # a kernel closing over the caller's values, passed to a helper that maps it (GP libraries)
            self.helper(
                "def pairwise(kernel, pts):\n"
                "    return jax.vmap(lambda u: jax.vmap(lambda v: kernel(u, v))(pts))(pts)\n"
            )
            self.helper(
                "def cross(kernel, pts, others):\n"
                "    return jax.vmap(jax.vmap(kernel, (None, 0)), (0, None))(pts, others)\n"
            )
            lines += [
                f"{name}_pts = jnp.stack([jnp.ravel({a}), jnp.ravel({a}) * 0.5 + 0.1], axis=1)",
                f"{name}_s = jnp.mean({b}) ** 2 + 0.5",
            ]
            if self.pick([False, True]):
                lines.append(
                    f"{name}_k = lambda u, v: jnp.exp(-jnp.sum((u - v) ** 2) * {name}_s)"
                )
            else:
                lines += [
                    f"def {name}_k(u, v):",
                    f"    return jnp.tanh(jnp.dot(u, v) * {name}_s)",
                ]
            helper = self.pick(["pairwise", "cross"])
            others = f", {name}_pts[::2]" if helper == "cross" else ""
            lines.append(
                f"{name} = np.sum({helper}({name}_k, {name}_pts{others}) * 0.5)"
            )
            return
        if form == "kernel_matrix":
            # the JAX documentation's kernel matrix: a ``vmap`` of a ``vmap`` inside (``nested_batches``)
            if self.pick([False, True]):
                self.helper(
                    "def rbf(u, v, s):\n    return jnp.exp(-jnp.sum((u - v) ** 2) * s)\n"
                )
            else:  # the kernel calls a helper of the unmapped scale (m08's softplus)
                self.helper("def positive(s):\n    return jnp.logaddexp(s, 0.0)\n")
                self.helper(
                    "def rbf(u, v, s):\n"
                    "    return jnp.exp(-jnp.sum((u - v) ** 2) * positive(s))\n"
                )
            lines += [
                f"{name}_pts = jnp.stack([jnp.ravel({a}) * 1.0, jnp.ravel({a}) * 0.5 + 0.1], axis=1)",
                f"{name}_K = jax.vmap(jax.vmap(rbf, (None, 0, None)), (0, None, None))"
                f"({name}_pts, {name}_pts, jnp.mean({b}) ** 2 + 0.5)",
                f"{name} = np.sum({name}_K * jnp.arange({name}_K.shape[0]))",
            ]
            return
        if form == "factory_into_map":
            # a factory's result passed straight to ``lax.map`` (``lax.scan(cell(W), h0, xs)``'s idiom)
            self.helper(
                "def make_scaled_tanh(s):\n"
                "    def apply(z):\n"
                "        return jnp.tanh(z * s) + s\n"
                "\n"
                "    return apply\n"
            )
            lines.append(
                f"{name} = np.sum(jax.lax.map(make_scaled_tanh(jnp.mean({b})), jnp.ravel({a}) * 1.0))"
            )
            return
        if form == "hessian_inside":
            lines += [
                f"def {name}_e(v):",
                f"    return jnp.sum(jnp.tanh(v * jnp.mean({b})) ** 2) + 0.1 * jnp.sum(v ** 4)",
                f"{name}_H = jax.hessian({name}_e)(jnp.ravel({a}) * 1.0)",
                f"{name} = np.sum({name}_H * 0.5)",
            ]
            return
        if form == "jacobian_of_lambda":
            maker = self.pick(["jax.jacfwd", "jax.jacrev"])
            lines.append(
                f"{name} = np.sum({maker}(lambda v: jnp.sin(v * jnp.mean({b})))(jnp.ravel({a}) * 1.0) ** 2)"
            )
            return
        if form == "grad_of_grad":
            # a PINN's second derivative of a local function, per point (``jnp.array`` of its input)
            lines += [
                f"def {name}_u(t):",
                f"    return jnp.sum(jnp.tanh(t * jnp.mean({b}) + jnp.array([t, 0.5 * t])))",
                f"{name}_utt = jax.grad(jax.grad({name}_u))",
                f"{name} = np.sum(jax.vmap({name}_utt)(jnp.ravel({a}) * 1.0))",
            ]
            return
        if form == "local_reading_local":
            lines += [
                f"def {name}_act(h):",
                f"    return jnp.tanh(h) * jnp.mean({b})",
                f"{name}_f = lambda v: jnp.sum({name}_act(v) ** 2)",
                f"{name} = np.sum(jax.grad({name}_f)({a} * 1.0) * {a})",
            ]
            return
        if form == "helper_both_orders":
            # a helper the inner gradient and the outer one differentiate for other arguments
            self.helper(
                "def weighted_tanh(x, a, w):\n    return jnp.sum(jnp.tanh(a * x) * w)\n"
            )
            self.helper(
                "def weighted_in_a(a, x, w):\n    return weighted_tanh(x, a, w)\n"
            )
            lines += [
                f"{name}_g = jax.grad(weighted_in_a)(1.3, {a} * 1.0, jnp.mean({b}))",
                f"{name} = np.sum({name}_g ** 2) + weighted_tanh({a} * 1.0, 1.3, jnp.mean({b}))",
            ]
            return
        if form == "def_grad":
            lines += [
                f"def {name}_inner(v):",
                f"    return jnp.sum(jnp.tanh(v * jnp.mean({b})) ** 2)",
                f"{name}_g = jax.grad({name}_inner)({a} * 1.0)",
                f"{name} = np.sum({name}_g * {a})",
            ]
        elif form == "lambda_grad":
            lines += [
                f"{name}_f = lambda v, s: jnp.sum(jnp.sin(v * s) * jnp.sum({b}))",
                f"{name} = np.sum(jax.grad({name}_f)({a} * 1.0, 0.5) ** 2)",
            ]
        elif form == "value_and_grad":
            lines += [
                f"def {name}_inner(v):",
                f"    h = jnp.tanh(v + jnp.mean({b}))",
                "    return jnp.sum(h ** 2), h",
                f"({name}_v, {name}_h), {name}_g = jax.value_and_grad({name}_inner, has_aux=True)({a} * 1.0)",
                f"{name} = {name}_v + np.sum({name}_g * {name}_h)",
            ]
        else:
            lines += [
                f"{name}_rows = np.atleast_2d({a})",
                f"{name} = np.sum(jax.vmap(lambda r: jnp.sum(jnp.tanh(r * jnp.mean({b}))))({name}_rows))",
            ]

    def _py_mixed_unpack(self, lines, name, a, b):
        # a tuple assignment of an array and a number literal (scikit-learn's ``coef, intercept = w, 0.0``)
        lines += [
            f"{name}_coef, {name}_icpt = {a}, 0.0",
            f"{name}_scale, {name}_v = 2, {b} * 0.5",
            f"{name} = np.sum({name}_coef ** 2) * {name}_scale + {name}_icpt + np.mean({name}_v)",
        ]

    def _py_guard_return(self, lines, name, a, b):
        # scipy's objective guard: a number returned early where the other return differs per example
        self.helper(
            "def guarded_ratio(z, s):\n"
            "    if s <= 0.0:\n"
            "        return 1e10\n"
            "    if abs(s) >= 1e6:\n"
            "        return 1e10\n"
            "    n = len(np.ravel(z))\n"
            "    return np.sum(z ** 2) / s ** 2 + n * np.log(s)\n"
        )
        lines.append(f"{name} = guarded_ratio({a}, np.mean({b}) ** 2 + 0.5)")

    def _py_tuple_truth(self, lines, name, a, b):
        # scipy's optional ``*args``: a tuple's truth is its length (``args if args else (1.0, 2.0)``)
        self.helper(
            "def spread_args(z, *args):\n"
            "    a, s = args if args else (1.0, 2.0)\n"
            "    if not args:\n"
            "        s = s * 0.5\n"
            "    return np.sum(s * z ** 2 + a * np.tanh(z))\n"
        )
        lines.append(
            f"{name} = spread_args({a}, np.mean({b}), 0.5) + spread_args({b}) * 0.1"
        )

    def _py_padded_branch(self, lines, name, a, b):
        # a pad width from a shape inside a branch on a mode string (a residual no example changes)
        self.helper(
            'def pad_same(h, w, padding="same"):\n'
            "    K = w.shape[0]\n"
            "    h = np.tanh(np.ravel(h) * np.mean(w))\n"
            '    if padding == "same":\n'
            "        h = np.pad(h, (K // 2, K // 2))\n"
            "    return np.sum(h ** 2 * np.arange(1.0, h.shape[0] + 1.0))\n"
        )
        lines.append(f'{name} = pad_same({a}, {b}) + pad_same({b}, {a}, "valid")')

    def _py_triangular_loop(self, lines, name, a, b):
        # pairs j > i, triangles, shrinking counts: a range an enclosing loop's index bounds
        v, n, i, j, k = (f"{name}_{s}" for s in ("v", "n", "i", "j", "k"))
        outer = self.pick(
            [f"for {i} in range({n}):", f"for {i} in range({n} - 1, -1, -1):"]
        )
        inner = self.pick(
            [
                [f"    for {j} in range({i} + 1, {n}):"],
                [f"    for {j} in range({i}):"],
                [f"    for {j} in range(0, {i} + 1, 2):"],
                [f"    {name}_m = {n} - {i}", f"    for {j} in range({name}_m):"],
                [f"    for {j} in range({i}, -1, -1):"],
            ]
        )
        body = f"{name} = {name} + np.tanh({v}[{i}] * {v}[{j}] + 0.1 * {j})"
        if self.p(0.3):  # three deep: the innermost bounded by the middle index
            inner = inner + [f"        for {k} in range({j} + 1):"]
            body = f"    {name} = {name} + np.sin({v}[{k}]) * {v}[{i}]"
        lines += [
            f"{v} = np.ravel({a})",
            f"{n} = {v}.shape[0]",
            f"{name} = 0.0",
            outer,
            *inner,
            f"        {body}",
        ]

    def _py_loop_slice(self, lines, name, a, b):
        # prefixes and suffixes a loop's index bounds: reductions, products, writes
        v, i = f"{name}_v", f"{name}_i"
        term = self.pick(
            [
                f"np.sum({v}[:{i}] ** 2) * 0.5",
                f"np.dot({v}[{i}:], {v}[{i}:])",
                f"{v}[{i} + 1:] @ np.tanh({v}[{i} + 1:])",
                f"np.max({v}[{i}:])",
                f"np.mean(np.sin({v}[:{i} + 1]))",
                f"np.sum({name}_w[{i}:] * {v}[{i}:])",
            ]
        )
        lines += [
            f"{v} = np.ravel({a}) * 1.0",
            f"{name}_w = np.cos({v})",
            f"{name} = 0.0",
            self.pick(
                [
                    f"for {i} in range({v}.shape[0]):",
                    f"for {i} in range({v}.shape[0] - 1, -1, -1):",
                ]
            ),
            f"    {name} = {name} + {term}",
        ]
        if self.p(0.5):
            lines.append(f"    {name}_w[{i}:] = {name}_w[{i}:] * 0.9")
            lines.append(f"{name} = {name} + np.sum({name}_w ** 2)")

    def _py_itertools_pairs(self, lines, name, a, b):
        # pairs of elements by itertools: a zip of index arrays
        self.imports.add("import itertools")
        v = f"{name}_v"
        form = self.pick(
            [
                f"sum(np.tanh({v}[i] * {v}[j]) for i, j in itertools.combinations(range({v}.shape[0]), 2))",
                f"sum(np.sin(p - q) for p, q in itertools.combinations({v}, 2))",
                f"sum(p * q for p, q in itertools.permutations({v}, 2))",
                f"sum({v}[i] * np.cos({v}[j]) for i, j in itertools.product(range(2), range({v}.shape[0])))",
                # the tuples as one index array (``list(...)`` of them: the rows of one array)
                f"np.sum(np.tanh({v}[np.array(list(itertools.combinations(range({v}.shape[0]), 2)))]"
                f".prod(axis=1)))",
            ]
        )
        lines += [f"{v} = np.ravel({a}) * 0.5", f"{name} = {form}"]

    def _py_guarded_record(self, lines, name, a, b):
        # a time-stepping loop recording its states behind a blow-up guard that returns early
        self.helper(
            "def guarded_steps(z, rate):\n"
            "    state = np.ravel(z) * 0.5\n"
            "    kept = [state]\n"
            "    for _ in range(3):\n"
            "        state = state + rate * np.tanh(state)\n"
            "        if np.any(np.abs(state) > 1e3):\n"
            "            return 1e3\n"
            "        kept.append(state)\n"
            "    return np.sum(np.stack(kept) ** 2)\n"
        )
        lines.append(f"{name} = guarded_steps({a}, 0.3) + guarded_steps({b}, 1e4)")

    def _py_lagged_rows(self, lines, name, a, b):
        # a direct-form filter: the last outputs kept as views of rows earlier iterations wrote
        y, n = f"{name}_y", f"{name}_n"
        rows = self.pick([f"np.ravel({a})", f"np.reshape({a}, ({a}.shape[0], -1))"])
        lines += [
            f"{name}_x = {rows} * 1.0",
            f"{y} = np.zeros_like({name}_x)",
            f"{name}_y1 = {name}_y2 = 0.0 * {name}_x[0]",
            f"for {n} in range({name}_x.shape[0]):",
            f"    {y}[{n}] = {name}_x[{n}] - 0.5 * np.tanh({name}_y1) - 0.2 * {name}_y2",
            *self.pick(
                [
                    [f"    {name}_y2, {name}_y1 = {name}_y1, {y}[{n}]"],
                    [f"    {name}_y2 = {name}_y1", f"    {name}_y1 = {y}[{n}]"],
                ]
            ),
            f"{name} = np.sum({y} ** 2) + np.sum({name}_y1 * {name}_y2)",
        ]

    def _py_factory_pair(self, lines, name, a, b):
        # an optax-style pair of closures made in the function, over a value the derivative reaches
        self.helper(
            "def momentum_pair(rate, beta=0.9):\n"
            "    def init(z):\n"
            "        return np.zeros_like(z)\n"
            "\n"
            "    def update(v, g):\n"
            "        v = beta * v + g\n"
            "        return v, -rate * v\n"
            "\n"
            "    return init, update\n"
        )
        # (drawn apart, so other programs stay as they were) optax's NamedTuple of the pair, unpacked
        side = random.Random(self.seed * 29 + len(lines))
        maker = "momentum_pair"
        if side.random() < 0.5:
            self.imports.add("from typing import NamedTuple")
            self.helper(
                "class Transform(NamedTuple):\n"
                "    init: object\n"
                "    update: object\n"
                "\n"
                "\n"
                "def momentum_record(rate, beta=0.9):\n"
                "    def init_fn(z):\n"
                "        return np.zeros_like(z)\n"
                "\n"
                "    def update_fn(v, g):\n"
                "        v = beta * v + g\n"
                "        return v, -rate * v\n"
                "\n"
                "    return Transform(init_fn, update_fn)\n"
            )
            maker = "momentum_record"
        s, v, u = f"{name}_s", f"{name}_v", f"{name}_u"
        lines += [
            f"{name}_init, {name}_update = {maker}(0.1 * np.mean(np.tanh({b})))",
            f"{s} = {a} * 1.0",
            f"{v} = {name}_init({s})",
            "for _ in range(2):",
            f"    {v}, {u} = {name}_update({v}, np.tanh({s}))",
            f"    {s} = {s} + {u}",
            f"{name} = np.sum({s} ** 2)",
        ]

    def _py_chosen_operands(self, lines, name, a, b):
        # ``or``/``and`` that return an operand: an optional argument's default, a gate (``passes/desugar.py``)
        self.helper(
            "def scaled_or_default(v, scale=None):\n"
            "    scale = scale or 2.0\n"
            "    return v * scale\n"
        )
        lines += [
            f"{name}_y = np.mean({a}) or 1.0",
            f"{name}_g = (np.mean({b}) > 0) and np.sum(np.sin({b}))",
            f"{name} = {name}_y * np.sum(np.tanh(scaled_or_default({a}))) + {name}_g "
            f"+ np.sum(scaled_or_default({b}, np.mean({a}) ** 2 + 0.5))",
        ]
        self.fd_only = (
            True  # (JAX's grad cannot take the truth value of a traced scalar)
        )

    def _py_optax_chain(self, lines, name, a, b):
        # optax's chain at module level: a NamedTuple of closures per link, ``del params``, the links'
        # states zipped with their update functions (``calls._holds_function``, ``function_loops._zipped``,
        # ``frontend/deleted_names``)
        self.imports.add("from typing import NamedTuple")
        self.helper(
            "class ChainLink(NamedTuple):\n"
            "    init: object\n"
            "    update: object\n"
            "\n"
            "\n"
            "def scale_link(step):\n"
            "    def init(params):\n"
            "        del params\n"
            "        return ()\n"
            "\n"
            "    def update(updates, state, params=None):\n"
            "        del params\n"
            "        return step * updates, state\n"
            "\n"
            "    return ChainLink(init, update)\n"
            "\n"
            "\n"
            "def trace_link(decay):\n"
            "    def init(params):\n"
            "        return (np.zeros_like(params),)\n"
            "\n"
            "    def update(updates, state, params=None):\n"
            "        new = updates + decay * state[0]\n"
            "        return new, (new,)\n"
            "\n"
            "    return ChainLink(init, update)\n"
            "\n"
            "\n"
            "def chain_links(*links):\n"
            "    inits, updates_fns = zip(*links)\n"
            "\n"
            "    def init(params):\n"
            "        return tuple(fn(params) for fn in inits)\n"
            "\n"
            "    def update(updates, state, params=None):\n"
            "        new_state = []\n"
            "        for s, fn in zip(state, updates_fns):\n"
            "            updates, s = fn(updates, s, params)\n"
            "            new_state.append(s)\n"
            "        return updates, tuple(new_state)\n"
            "\n"
            "    return ChainLink(init, update)\n"
            "\n"
            "\n"
            "OPTIMIZER = chain_links(trace_link(0.5), scale_link(-0.1))\n"
        )
        w, st, u = f"{name}_w", f"{name}_st", f"{name}_u"
        lines += [
            f"{w} = np.ravel({a}) * 0.5",
            f"{st} = OPTIMIZER.init({w})",
            "for _ in range(2):",
            f"    {u}, {st} = OPTIMIZER.update(np.tanh({w}) * np.mean({b}), {st}, {w})",
            f"    {w} = {w} + {u}",
            f"{name} = np.sum({w} ** 2)",
        ]

    def _py_appends_on_the_counter(self, lines, name, a, b):
        # snapshots saved every few steps (a test of the counter alone), over a range the code spells or
        # one a helper's parameter sizes (``frontend/counter_appends``)
        self.helper(
            "def every_other(z, n, save_every=2):\n"
            "    kept = []\n"
            "    for i in range(n):\n"
            "        z = np.tanh(z * 0.9 + 0.1)\n"
            "        if i % save_every == 1:\n"
            "            kept.append(np.sum(z))\n"
            "    return kept\n"
        )
        k = f"{name}_k"
        test = self.pick(
            ["({k} + 1) % 3 == 0", "{k} % 2 == 0 and {k} > 0", "{k} == 1 or {k} == 4"]
        ).format(k=k)
        h, snaps = f"{name}_h", f"{name}_snaps"
        lines += [
            f"{h} = np.ravel({a}) * 0.5",
            f"{snaps} = []",
            f"for {k} in range(6):",
            f"    {h} = np.tanh({h} + 0.1 * np.mean({b}))",
            f"    if {test}:",
            f"        {snaps}.append({h} * 1.0)",
            f"{name} = np.sum(np.array({snaps}) ** 2) + sum(every_other({h}, 5"
            + self.pick(["", ", save_every=3"])
            + "))",
        ]

    def _py_positions_of_nonzeros(self, lines, name, a, b):
        # positions of nonzeros of data used only to index, read and written (statsmodels'
        # zero-inflated models; ``frontend/nonzero_masks``)
        v, idx, out = f"{name}_v", f"{name}_idx", f"{name}_out"
        found = self.pick(
            [
                f"np.nonzero({v} > 0)[0]",
                f"np.where({v} > 0)[0]",
                f"np.flatnonzero({v} > 0)",
                f"np.argwhere({v} > 0)[:, 0]",
                f"np.argwhere({v} > 0).ravel()",
            ]
        )
        lines += [
            f"{v} = np.ravel({a}) * np.mean({b})",
            f"{idx} = {found}",
            f"{out} = np.zeros_like({v})",
            f"{out}[{idx}] = np.tanh({v}[{idx}]) * 2.0",
            # (and written where it indexes)
            f"{name} = np.sum({out}) + np.sum({v}[{idx}] ** 2) + np.sum({v}[{found}] * 0.5)",
        ]

    def _py_bounds_by_builtin_max(self, lines, name, a, b):
        # Python's max/min of lengths as slice bounds and loop counts (numbers known when traced)
        v, k = f"{name}_v", f"{name}_k"
        lines += [
            f"{v} = np.ravel({a}) * np.mean({b})",
            f"{k} = {self.pick(['max(1, len(' + v + ') // 2)', 'min(3, len(' + v + '))', 'max(len(' + v + ') - 4, 1)'])}",
            f"{name} = np.sum({v}[-{k}:] ** 2) + sum({v}[i] for i in range({k}))",
        ]

    def _py_list_surgery(self, lines, name, a, b):
        # a list the function makes changed in place: pop, insert, del, slice assignment, reverse, clear
        # (``frontend/list_methods.py``: each a new list)
        hs = f"{name}_hs"
        lines += [
            f"{hs} = [np.ravel({a}) * 0.5, np.tanh(np.ravel({a})), np.ravel({a}) * np.mean({b})]",
            f"{hs}.append(np.cos({hs}[-1]))",
        ]
        changes = [
            f"{name}_top = {hs}.pop()",
            f"{hs}.insert({self.pick([0, 1, -1])}, {hs}[0] * 1.5)",
            f"del {hs}[{self.pick([0, 1, -2])}]",
            f"{hs}[{self.pick(['1:', ':1', '1:2', '-1:'])}] = [{hs}[0] * 2.0, np.sin({hs}[-1])]",
            f"{hs}.reverse()",
            f"{hs}[0] = {hs}[0] + 1.0",
            f"{name}_first = {hs}.pop({self.pick([0, 1])})",
        ]
        lines += self.r.sample(changes, self.r.randint(2, 4))
        lines.append(f"{name} = sum(np.sum(h ** 2) for h in {hs}) + len({hs})")
        self.fd_only = (
            True  # (the jax.numpy twin would read a list's slice write as `.at[]`)
        )

    def _py_states_by_step(self, lines, name, a, b):
        # min-char-rnn's states in a dict keyed by step, ``hs[-1]`` the start, the last read by a key
        # computed from a length (``batch.getitem``: a container's item under vmap)
        hs, t, xs = f"{name}_hs", f"{name}_t", f"{name}_xs"
        lines += [
            f"{xs} = np.ravel({a}) * 0.5",
            f"{hs} = {{}}",
            f"{hs}[-1] = np.mean({b}) * 0.1",
            f"for {t} in range(len({xs})):",
            f"    {hs}[{t}] = np.tanh({xs}[{t}] + 0.5 * {hs}[{t} - 1])",
            f"{name} = np.sum({hs}[len({xs}) - 1]) + np.sum({hs}["
            + self.pick(["0", f"len({xs}) // 2"])
            + "])",
        ]

    def _py_lists_of_splits(self, lines, name, a, b):
        # a list of the lists ``np.split`` returns (a comprehension, ``list(map(...))``, appends in a
        # loop), read by index or zipped back (``passes/control``: collected items that are lists)
        made = self.pick(["comprehension", "map", "appends"])
        parts = f"np.split(np.ravel({a}) * np.mean({b}), 2)"
        if made == "comprehension":
            lines.append(
                f"{name}_rows = [np.split(np.concatenate([t, t * 0.5]), 2) for t in {parts}]"
            )
        elif made == "map":
            lines.append(
                f"{name}_rows = list(map(lambda t: np.split(np.concatenate([t, t * 0.5]), 2), {parts}))"
            )
        else:
            lines += [
                f"{name}_rows = []",
                f"for {name}_t in {parts}:",
                f"    {name}_rows.append(np.split(np.concatenate([{name}_t, {name}_t * 0.5]), 2))",
            ]
        lines.append(
            f"{name} = np.sum(np.sin({name}_rows[0][1]) * 2.0 + {name}_rows[1][0] ** 2)"
            + self.pick(["", f" + sum(np.sum(u * v) for u, v in zip(*{name}_rows))"])
        )

    def _py_version_shim(self, lines, name, a, b):
        # a library-version shim: the branch ``hasattr`` rules out names what the library lacks
        if self.pick([False, True]):
            lines.append(
                f"{name} = np.trapezoid(np.ravel({a}) ** 2) if hasattr(np, 'trapezoid') "
                f"else np.trapz(np.ravel({a}) ** 2)"
            )
        else:
            lines += [
                "if hasattr(np, 'no_such_function_anywhere'):",
                f"    {name} = np.no_such_function_anywhere({a})",
                "else:",
                f"    {name} = np.sum(np.sin({a})) * np.mean({b})",
            ]

    def _py_settings_dict_and_cache(self, lines, name, a, b):
        """CS231n's batchnorm: settings read from a dict with ``.get``, kept in a cache tuple, and running
        statistics written back into the dict as new entries."""
        lines += [
            f'{name}_p = {{"mode": "train", "eps": 0.5}}',
            f'{name}_eps = {name}_p.get("eps", 1e-5)',
            f'{name}_m = {name}_p.get("momentum", 0.9)',
            f"{name}_h = np.tanh({a}) * {name}_m",
            f"{name}_cache = ({name}_h, {name}_eps)",
            f'{name}_p["running"] = {name}_m * np.mean({b}) + {name}_eps',
            f"{name}_hh, {name}_e = {name}_cache",
            f'{name} = np.sum({name}_hh * {name}_e) + {name}_p["running"]',
        ]

    def _py_base_init(self, lines, name, a, b):
        """Layers whose ``__init__`` calls the base's (``super().__init__``, ``Base.__init__(self, ...)``)
        over an abstract base (numpy-ml's layers)."""
        self.imports.add("import abc")
        self.helper(
            "class LayerBase(abc.ABC):\n"
            "    def __init__(self, scale=1.0, **kwargs):\n"
            "        self.scale = scale\n"
            "\n"
            "    @abc.abstractmethod\n"
            "    def apply(self, v): ...\n"
            "\n"
            "\n"
            "class ScaledTanh(LayerBase):\n"
            "    def __init__(self, w, scale=0.5):\n"
            "        super().__init__(scale)\n"
            "        self.w = w\n"
            "\n"
            "    def apply(self, v):\n"
            "        return np.tanh(v * self.w) * self.scale\n"
            "\n"
            "\n"
            "class Shifted(ScaledTanh):\n"
            "    def __init__(self, w, shift):\n"
            "        ScaledTanh.__init__(self, w, scale=2.0)\n"
            "        self.shift = shift\n"
            "\n"
            "    def apply(self, v):\n"
            "        return np.tanh(v * self.w) * self.scale + self.shift\n"
        )
        made = self.pick([f"ScaledTanh(np.mean({b}))", f"Shifted(np.mean({b}), 0.25)"])
        lines += [f"{name}_m = {made}", f"{name} = np.sum({name}_m.apply({a}))"]

    def _py_class_attributes(self, lines, name, a, b):
        # attributes of the class read through its objects: a constant, a library function held by
        # ``staticmethod``, a class made when the constructor is given None (statsmodels' families)
        self.helper(
            "class Squash(object):\n"
            "    def __call__(self, z):\n"
            "        return np.tanh(z)\n"
            "\n"
            "\n"
            "class Scored(object):\n"
            "    default_squash = Squash\n"
            "    eps = 0.125\n"
            "    combine = staticmethod(np.maximum)\n"
            "\n"
            "    def __init__(self, squash=None):\n"
            "        self.squash = squash if squash is not None else self.default_squash()\n"
            "\n"
            "    def score(self, z):\n"
            "        return self.combine(self.squash(z), -self.eps)\n"
        )
        lines.append(f"{name}_s = Scored()")
        lines.append(
            f"{name} = np.sum({name}_s.score({a} * np.mean({b}))) + {name}_s.eps"
        )

    def _py_object_handed_to_object(self, lines, name, a, b):
        # an object handed to another's constructor, kept whole (``self.model = model``), read through
        # the holder's methods (which change the holder's state) and by its own name
        self.helper(
            "class Coefs(object):\n"
            "    def __init__(self, w, c):\n"
            "        self.w = w\n"
            "        self.c = c\n"
            "\n"
            "\n"
            "class Runner(object):\n"
            "    def __init__(self, coefs, state, damping=None):\n"
            "        self.coefs = coefs\n"
            "        if damping is None:\n"
            "            damping = 1.0\n"
            "        self.state = state * damping\n"
            "\n"
            "    def advance(self):\n"
            "        self.state = np.tanh(self.state * self.coefs.w + self.coefs.c)\n"
        )
        steps = self.pick([1, 2])
        made = self.pick(["named", "inline"])
        if made == "named":
            lines += [
                f"{name}_c = Coefs(np.mean({b}) + 0.5, 0.1)",
                f"{name}_r = Runner({name}_c, {a})",
            ]
        else:  # made where it is handed: read through the holder only
            lines += [
                f"{name}_r = Runner(Coefs(np.mean({b}) + 0.5, 0.1), {a}, damping=0.9)",
                f"{name}_c = Coefs({name}_r.coefs.w, 0.1)",
            ]
        lines += [f"{name}_r.advance()"] * steps
        lines.append(f"{name} = np.sum({name}_r.state) * {name}_c.w + {name}_r.coefs.c")

    def _py_object_handed_to_helpers(self, lines, name, a, b):
        # an object the function makes, handed whole to module-level helpers that read its attributes,
        # call its methods and hand it on (a ray tracer's camera, a model's config): each helper's body
        # written in place
        self.helper(
            "class Lens(object):\n"
            "    def __init__(self, gain, offset=0.1):\n"
            "        doubled = gain * 2.0  # (a local variable of __init__)\n"
            "        self.gain = doubled / 2.0\n"
            "        self.offset = offset\n"
            "\n"
            "    def focus(self, v):\n"
            "        return np.tanh(v * self.gain) + self.offset\n"
        )
        self.helper(
            "def lens_project(lens, v):\n"
            "    out = lens.focus(v)\n"
            "    return out * lens.gain\n"
        )
        self.helper(
            "def lens_render(v, lens, times=2):\n"
            "    total = 0.0\n"
            "    for k in range(times):\n"
            "        total = total + np.sum(lens_project(lens, v * (k + 1)))\n"
            "    return total, lens.offset\n"
        )
        made = self.pick(
            [f"Lens(np.mean({b}) + 0.5)", f"Lens(0.7, offset=np.mean({b}))"]
        )
        call = self.pick(
            [
                f"{name}_t, {name}_o = lens_render({a}, {name}_l)",
                f"{name}_t, {name}_o = lens_render({a}, lens={name}_l, times=1)",
            ]
        )
        lines += [f"{name}_l = {made}", call]
        self.helper("def lens_weight(lens):\n    return lens.gain * lens.offset\n")
        lines.append(  # (a helper handed the object inside an expression: named on a line before)
            f"{name} = {name}_t * {name}_o + np.sum(lens_project({name}_l, {a}))"
            + self.pick(["", f" + 2.0 * lens_weight({name}_l)"])
        )

    def _py_class_method_constructor(self, lines, name, a, b):
        # a constructor by another name: a class method returning ``cls(...)`` (``Model.from_params``)
        record = self.pick([False, True])
        self.helper(
            ("@dataclass\n" if record else "")
            + "class Gain(object):\n"
            + (
                "    scale: float\n    shift: float\n"
                "    bias: np.ndarray = field(default_factory=lambda: np.ones(1) * 0.25)\n"
                if record
                else "    def __init__(self, scale, shift):\n"
                "        self.scale = scale\n        self.shift = shift\n"
                "        self.bias = np.ones(1) * 0.25\n"
            )
            + "\n"
            "    @classmethod\n"
            "    def from_values(cls, v, shift=0.5):\n"
            "        scale = 1.0 + np.mean(v) ** 2\n"
            "        return cls(scale, shift=shift * np.tanh(np.sum(v)))\n"
            "\n"
            "    def apply(self, z):\n"
            "        return self.scale * np.sin(z) + self.shift + np.sum(self.bias)\n"
        )
        if record:
            self.imports.add("from dataclasses import dataclass, field")
        lines += [
            f"{name}_g = Gain.from_values({b})",
            f"{name} = np.sum({name}_g.apply({a})) + {name}_g.scale",
        ]

    def _py_returned_object(self, lines, name, a, b):
        # a helper that makes an object and returns it beside values, in a flat or a nested tuple
        # (``frontend/factories``: the builder written in place, the object under its target's name)
        self.helper(
            "class Smoother:\n"
            "    def __init__(self, width):\n"
            "        self.width = width\n"
            "\n"
            "    def __call__(self, z):\n"
            "        return np.tanh(z / self.width)\n"
            "\n"
            "\n"
            "def fit_smoother(z, scale):\n"
            "    smoother = Smoother(1.0 + scale ** 2)\n"
            "    fitted = smoother(z)\n"
            "    return np.sum(fitted), (smoother, fitted)\n"
            "\n"
            "\n"
            "def smoother_of(z, scale):\n"
            "    made = Smoother(1.0 + scale ** 2)\n"
            "    return made, made(z)\n"
        )
        form = self.pick(["nested", "flat", "held"])
        if form == "flat":
            lines += [
                f"{name}_m, {name}_f = smoother_of({a}, np.mean({b}))",
                f"{name}_s = np.sum({name}_f)",
            ]
        elif form == "nested":
            lines.append(
                f"{name}_s, ({name}_m, {name}_f) = fit_smoother({a}, np.mean({b}))"
            )
        else:  # the object held in a tuple first: a located refusal
            lines += [
                f"{name}_s, {name}_pair = fit_smoother({a}, np.mean({b}))",
                f"{name}_m, {name}_f = {name}_pair",
            ]
        lines.append(
            f"{name} = {name}_s + np.sum({name}_m({a} * 0.5)) + np.mean({name}_f)"
        )

    def _py_counted_while(self, lines, name, a, b):
        # a while loop on float time recording per-step values: the numbers alone count its steps
        t, z, xs = f"{name}_t", f"{name}_z", f"{name}_xs"
        if self.p(0.3):
            # frames of a signal by a counter and the array's length (a size known when traced)
            lines += [
                f"{z} = np.ravel({a}) * 1.0",
                f"{xs}, {t} = [], 0",
                f"while {t} + 2 <= len({z}):",
                f"    {xs}.append({z}[{t}:{t} + 2] * np.array([0.5, 1.0]))",
                f"    {t} += 1",
                f"{name} = np.sum(np.array({xs}) ** 2) + np.mean({b})",
            ]
            return
        end = self.pick(["0.6", "0.5 + 1e-9", "1.0"])
        lines += [
            f"{t}, {xs} = 0.0, []",
            f"{z} = np.ravel({a}) * 1.0",
            f"while {t} < {end}:",
            f"    {z} = {z} + 0.2 * np.tanh({z} * np.mean({b}))",
            f"    {t} += 0.2",
            f"    {xs}.append(np.sum({z} ** 2) * {t})",
            f"{name} = sum({xs}) + len({xs})",
        ]

    def _py_item_accumulator(self, lines, name, a, b):
        # an item taken by an index (a number of a vector) updated in place while its vector is read
        v, i = f"{name}_v", f"{name}_i"
        lines += [
            f"{v} = np.ravel({a}) * 1.0",
            f"{name} = {v}[0]",
            f"for {i} in range(1, {v}.shape[0]):",
            f"    {name} {self.pick(['+=', '*=', '-='])} np.tanh({v}[{i}] * np.mean({b}))",
            f"{name} = {name} + {v}[0]",
        ]

    def _py_object_inside(self, lines, name, a, b):
        # an object of a class of the program, made from values of the function
        self.helper(
            "class Scaler:\n"
            "    def __init__(self, w, shift=0.5):\n"
            "        self.w = w\n"
            "        self.shift = shift\n"
            "\n"
            "    def apply(self, z):\n"
            "        return np.tanh(z * self.w) + self.shift * self.center()\n"
            "\n"
            "    def center(self):\n"
            "        return np.mean(self.w)\n"
        )
        lines += [
            f"{name}_s = Scaler(np.mean(np.tanh({b})) * 0.5)",
            f"{name} = np.sum({name}_s.apply({a})) + {name}_s.shift"
            + self.pick(
                [
                    "",
                    f" + np.sum(Scaler(np.mean({b}), 0.1).apply({a}))",
                    # attributes of objects used where they are made
                    f" + Scaler(np.mean({b}), 0.3).shift * np.sum(Scaler(np.mean({b})).w)",
                ]
            ),
        ]

    def _py_integer_dtype_argument(self, lines, name, a, b):
        # NumPy calls given an integer or bool ``dtype`` on the differentiated path: their results carry no
        # derivative (``Transform.result_dtype``), as JAX's casts do
        call = self.pick(
            [
                f"np.asarray({a} * 3.7, dtype=np.int32)",
                f"np.array({a} * 2.5, dtype=int)",
                f"np.array({a}, dtype=bool)",
                f"np.sum({a} * 3.1, dtype=np.int32)",
                f"np.cumsum(np.ravel({a}) * 2.0, dtype=np.int32)[-1]",
                f"np.full_like({a}, np.mean({a}) * 3.7, dtype=np.int32)",
                # NumPy's scalar types called as casts
                f"np.int32({a} * 3.7)",
                f"np.float64({a} * 0.5)",
            ]
        )
        lines.append(f"{name} = np.sum({call} * {a}) + np.sum(np.tanh({b}))")

    def _py_grid_positions(self, lines, name, a, b):
        # loops and comprehensions over ``np.ndindex``/``np.ndenumerate`` grids (``index_grids``): one loop
        # over the positions, the entries read at traced positions
        # (NumPy's, also in the JAX dialect; its ``ndenumerate`` of a traced array has no JAX twin)
        self.imports.add("import numpy as onp")
        m = f"{name}_m"
        lines.append(  # (2, 3) whatever the operands' sizes
            f"{m} = np.outer(np.concatenate([np.ravel({a})] * 2)[:2], "
            f"np.concatenate([np.ravel({b})] * 3)[:3])"
        )
        form = self.pick(["loop", "enumerated", "comprehension", "filled"])
        if form in ("enumerated", "comprehension"):
            self.fd_only = True
        if form == "loop":
            lines += [
                f"{name} = 0.0",
                f"for i, j in onp.ndindex({m}.shape):",
                f"    {name} = {name} + np.sin({m}[i, j]) * (i + 2 * j)",
            ]
        elif form == "enumerated":
            lines += [
                f"{name} = 0.0",
                f"for (i, j), v in onp.ndenumerate({m}):",
                f"    {name} = {name} + v**2 * (j + 1) - {m}[1 - i, j] * 0.5",
            ]
        elif form == "comprehension":
            lines.append(
                f"{name} = sum(np.tanh(v) * (i + 1) for (i, j), v in onp.ndenumerate({m}))"
                f" + sum({m}[i, j] * {m}[i, 2 - j] for i, j in onp.ndindex(2, 3))"
            )
        else:
            lines += [
                f"{name}_out = np.zeros((2, 2))",
                f"for i, j in onp.ndindex({name}_out.shape):",
                f"    {name}_out[i, j] = np.sum({m}[i : i + 1, j : j + 2] ** 2)",
                f"{name} = np.sum(np.tanh({name}_out))",
            ]

    def _py_reversed_steps(self, lines, name, a, b):
        # min-char-rnn's backward sweep: states kept by step (a dict from ``-1``, a list from its start),
        # read again in ``for t in reversed(range(...))`` (``reversed_ranges``: a loop counting down)
        s = f"{name}_s"
        lines.append(f"{name}_v = np.ravel({a})[:2] * 0.5")
        if self.p(0.5):
            lines += [
                f"{s} = {{}}",
                f"{s}[-1] = np.ravel({b})[:1] * 0.5",
                "for t in range(3):",
                f"    {s}[t] = np.tanh({s}[t - 1] * 0.9 + {name}_v[t % 2])",
            ]
            read, sweep = f"{s}[t]", self.pick(["range(3)", "range(1, 3)"])
        else:
            lines += [
                f"{s} = [np.ravel({b})[:1] * 0.5]",
                "for t in range(3):",
                f"    {s}.append(np.tanh({s}[-1] * 0.9 + {name}_v[t % 2]))",
            ]
            read, sweep = self.pick(
                [(f"{s}[t + 1]", "range(3)"), (f"{s}[t - 1] * {s}[t]", "range(1, 4)")]
            )
        lines += [
            f"{name}, {name}_d = 0.0, 0.0",
            f"for t in reversed({sweep}):",
            f"    {name}_d = {name}_d * 0.5 + {read}",
            f"    {name} = {name} + np.sum({name}_d ** 2) * (t + 1)",
        ]

    def _py_module_dispatch(self, lines, name, a, b):
        # the array-API idiom: a helper given its array module, testing which one it holds
        # (``static_tests``: decided when the code is read)
        self.helper(
            "def squared_norm_xp(v, xp=np):\n"
            "    if xp is np:\n"
            "        return xp.sum(v ** 2)\n"
            "    return xp.sum(xp.abs(v))\n"
        )
        lines.append(f"{name} = squared_norm_xp({a}) + squared_norm_xp({b}, np) * 0.5")

    def _py_fluent_fit(self, lines, name, a, b):
        # scikit-learn's fluent ``fit`` (``return self``), bound by ``Est(...).fit(...)`` or
        # ``m = m.fit(...)``, or called as a statement (``fluent_methods``)
        self.helper(
            "class ShrinkFit:\n"
            "    def __init__(self, rate=0.3, steps=2):\n"
            "        self.rate = rate\n"
            "        self.steps = steps\n"
            "\n"
            "    def fit(self, v, target):\n"
            "        self.coef_ = v * 1.0\n"
            "        self.losses_ = []\n"
            "        for _ in range(self.steps):\n"
            "            self.coef_ = self.coef_ - self.rate * np.tanh(self.coef_ - target)\n"
            "            self.losses_.append(np.sum((self.coef_ - target) ** 2))\n"
            "        return self\n"
        )
        target = f"np.mean({b})"
        form = self.pick(["chained", "rebound", "statement"])
        if form == "chained":
            lines.append(f"{name}_m = ShrinkFit(rate=0.4).fit({a}, {target})")
        else:
            lines.append(f"{name}_m = ShrinkFit()")
            call = f"{name}_m.fit({a}, {target})"
            lines.append(f"{name}_m = {call}" if form == "rebound" else call)
        lines.append(f"{name} = {name}_m.losses_[-1] + np.sum({name}_m.coef_ * 0.5)")

    def _py_read_from_the_end(self, lines, name, a, b):
        # Nielsen's backward loop: a list of items of different shapes read by a range loop's index from
        # the end (``zs[-l]``, ``zs[1 - l]``), beside a carried value (``indexed_loops``' ``_back``)
        n = self.pick([3, 4])
        lines += [
            f"{name}_zs = []",
            f"{name}_h = np.ravel({a})[:1] * np.ones(2)",
            f"for {name}_k in range({n}):",
            f"    {name}_h = np.tanh(np.concatenate([{name}_h, np.ravel({b})[:1] * 0.5]))",
            f"    {name}_zs.append({name}_h * ({name}_k + 1))",
            f"{name} = 0.0",
            f"for {name}_l in range(2, len({name}_zs) + 1):",
            f"    {name} = {name} * 0.5 + np.sum({name}_zs[-{name}_l]) * np.sum({name}_zs[1 - {name}_l] ** 2)",
        ]

    def _py_decided_by_comparisons(self, lines, name, a, b):
        # a helper whose loop's ``if`` (or ``while`` test) reads the input, and whose value depends on it
        # only through those comparisons: its derivative is zero, never None (``reverse``'s helper vjps)
        form = self.pick(["bisect", "count"])
        if form == "bisect":
            self.helper(
                "def bisected_level(z, lo=-2.0, hi=2.0):\n"
                "    for _ in range(6):\n"
                "        mid = 0.5 * (lo + hi)\n"
                "        if np.sum(np.tanh(z)) * 0.3 > mid:\n"
                "            lo = mid\n"
                "        else:\n"
                "            hi = mid\n"
                "    return 0.5 * (lo + hi)\n"
            )
            lines.append(f"{name} = bisected_level({a}) * np.sum({b})")
        else:
            self.helper(
                "def steps_below(z):\n"
                "    k = 0.0\n"
                "    while k * k < np.sum(z ** 2) and k < 5.0:\n"
                "        k = k + 1.0\n"
                "    return k\n"
            )
            lines.append(f"{name} = steps_below({a}) + np.sum({b}) * 0.5")

    def _py_shape_flag(self, lines, name, a, b):
        # the "accept unbatched input" idiom: a flag set under a test of the shape beside a value whose
        # shape changes, the same for every example under vmap (``batch_control._item_flags``)
        v = f"{name}_v"
        if self.pick(["flag", "break"]) == "break":
            # a ``break`` under a test of the shape, after a layer that changes the width
            lines += [
                f"{v} = np.ravel({a})[:1] * np.ones(2) * 0.5",
                f"for {name}_w in [np.ones((2, 3)) * 0.3, np.ones((3, 1)) * 0.2]:",
                f"    {v} = np.tanh({v} @ {name}_w * np.sum({b}))",
                f"    if {v}.shape[-1] == 3:",
                "        break",
                f"{name} = np.sum({v} ** 2)",
            ]
            return
        lines += [
            f"{v} = np.ravel({a})[:2] * 0.5",
            f"{name}_flat = False",
            f"if {v}.ndim == 1:",
            f"    {v} = {v}[None]",
            f"    {name}_flat = True",
            f"{name}_h = np.tanh({v} * np.sum({b}))",
            f"{name}_h = {name}_h[0] if {name}_flat else {name}_h",
            f"{name} = np.sum({name}_h ** 2)",
        ]

    def _py_star_items(self, lines, name, a, b):
        # displays with ``*`` items (``star_items``): shapes built from shapes, lists joined
        form = self.pick(["reshape", "zeros", "stack", "loop"])
        if form == "reshape":
            lines.append(
                f"{name} = np.sum(np.tanh(np.atleast_2d({a}).reshape(-1, *np.atleast_2d({a}).shape[1:]))"
                f" * np.sum({b}))"
            )
        elif form == "zeros":
            lines.append(
                f"{name} = np.sum((np.zeros((*np.shape({a}), 2)) + np.expand_dims({a}, -1)) ** 2)"
            )
        elif form == "stack":
            lines.append(
                f"{name} = np.sum(np.stack([np.ravel({a})[:1], *[np.ravel({b})[:1] * k for k in range(2)]]))"
            )
        else:
            lines += [
                f"{name} = 0.0",
                f"for {name}_t in [np.ravel({b})[:1], *[np.ravel({a})[:1] * k for k in range(2)]]:",
                f"    {name} = {name} + np.sum(np.sin({name}_t))",
            ]

    def _py_recurrence_from_a_number(self, lines, name, a, b):
        # Clenshaw's recurrence started from ``0.0``, over an array's items in either order: its first steps
        # change the carry's shape and run on their own (``runtime/peeling``), each item's cotangent in
        # step order
        c = f"{name}_c"
        lines.append(
            f"{c} = np.concatenate([np.ravel({a}), np.ravel({b})])[:{self.pick([3, 4, 6])}]"
        )
        loop = self.pick(
            [
                f"for k in range(1, {c}.shape[0]):",
                f"for k in range({c}.shape[0] - 1, 0, -1):",
                f"for k in reversed(range(1, {c}.shape[0])):",
            ]
        )
        lines += [
            f"{name}_b1 = {name}_b2 = 0.0",
            loop,
            f"    {name}_b1, {name}_b2 = np.tanh({b}) * {name}_b1 - {name}_b2 * 0.5 + {c}[k] * k, {name}_b1",
            f"{name} = np.sum({name}_b1 ** 2 - {name}_b2)",
        ]

    def _py_class_level_default(self, lines, name, a, b):
        # a running total kept as a class-level default and updated through ``self`` in a method: its first
        # read is the class's value (``local_objects``), never a placeholder
        self.helper(
            "class Tally:\n"
            "    total = 0.25\n"
            "    weight = 0.5\n"
            "\n"
            "    def add(self, v):\n"
            "        self.total = self.total + self.weight * v\n"
            "        return self.total\n"
        )
        lines += [
            f"{name}_t = Tally()",
            f"{name}_t.add(np.sum(np.tanh({a}) ** 2))",
            f"{name}_t.add(np.mean({b}))",
            f"{name} = {name}_t.total" + self.pick(["", f" * {name}_t.weight"]),
        ]

    def _py_layer_list(self, lines, name, a, b):
        # numpy-ml's layers: a list of objects of one class made by a comprehension, called in a loop and
        # summed by a generator (``frontend/object_lists``)
        self.helper(
            "class ScaledTanh:\n"
            '    def __init__(self, w, shift, kind="tanh"):\n'
            "        self.w = w\n"
            "        self.shift = shift\n"
            "        self.kind = kind\n"
            "\n"
            "    def __call__(self, z):\n"
            "        out = np.tanh(z * self.w + self.shift)\n"
            '        if self.kind == "sin":\n'
            "            return np.sin(out)\n"
            "        return out\n"
            "\n"
            "    def penalty(self):\n"
            "        return np.sum(self.w ** 2)\n"
        )
        lines += [
            f"{name}_layers = [ScaledTanh(c * np.mean({b}), 0.1 * c, k) for c, k in zip([0.5, 1.5], ['tanh', 'sin'])]",
            f"{name}_h = {a} * 1.0",
            # all the layers, or the hidden ones by a slice and the last by its index (a tutorial's MLP)
            *self.pick(
                [
                    [
                        f"for {name}_layer in {name}_layers:",
                        f"    {name}_h = {name}_layer({name}_h)",
                    ],
                    [
                        f"for {name}_layer in {name}_layers[:-1]:",
                        f"    {name}_h = {name}_layer({name}_h)",
                        f"{name}_h = {name}_layers[-1]({name}_h) + {name}_layers[0].shift",
                    ],
                ]
            ),
            f"{name} = np.sum({name}_h) + 0.1 * sum({name}_l.penalty() for {name}_l in "
            + self.pick([f"{name}_layers", f"reversed({name}_layers[1:])"])
            + ")",
        ]

    def _py_layer_containers(self, lines, name, a, b):
        # layers of different classes held in a list, a dict or an ``OrderedDict`` (filled item by item,
        # or by an object's ``__init__``), appended in a loop over a display, or made by a helper, run in
        # order by a loop (``frontend/object_structures``)
        self.imports.add("from collections import OrderedDict")
        self.helper(
            "class Shifted:\n"
            "    def __init__(self, w, shift=0.1):\n"
            "        self.w = w\n"
            "        self.shift = shift\n"
            "\n"
            "    def forward(self, z):\n"
            "        self.z = z\n"
            "        return np.tanh(z * self.w + self.shift)\n"
            "\n"
            "\n"
            "class Leaky:\n"
            "    def forward(self, z):\n"
            "        return np.maximum(z, 0.1 * z)\n"
            "\n"
            "\n"
            "class Chain:\n"
            "    def __init__(self, w):\n"
            "        self.layers = OrderedDict()\n"
            '        self.layers["first"] = Shifted(w)\n'
            '        self.layers["leaky"] = Leaky()\n'
            '        self.layers["last"] = Shifted(w * 0.5, 0.2)\n'
            "\n"
            "    def forward(self, z):\n"
            "        for layer in self.layers.values():\n"
            "            z = layer.forward(z)\n"
            "        return z\n"
            "\n"
            "\n"
            "def chain_of(w):\n"
            "    return Chain(w)\n"
            "\n"
            "\n"
            "class Sequential:\n"
            "    def __init__(self, *layers):\n"
            "        self.layers = list(layers)\n"
            "\n"
            "    def forward(self, z):\n"
            "        for layer in self.layers:\n"
            "            z = layer.forward(z)\n"
            "        return z\n"
        )
        w = f"np.mean(np.tanh({b})) * 0.5 + 1.0"
        run = [
            f"{name}_h = {a} * 1.0",
            f"for {name}_layer in {name}_layers:",
            f"    {name}_h = {name}_layer.forward({name}_h)",
        ]
        form = self.pick(
            ["list", "dict", "ordered", "appended", "chain", "builder", "sequential"]
        )
        if form == "list":
            lines.append(f"{name}_layers = [Shifted({w}), Leaky(), Shifted(0.5)]")
            lines += run
        elif form == "dict":
            lines.append(f'{name}_layers = {{"a": Shifted({w}), "b": Leaky()}}')
            lines += [
                r.replace(f"in {name}_layers", f"in {name}_layers.values()")
                for r in run
            ]
            lines.append(
                f'{name}_h = {name}_h + {name}_layers["a"].w * len({name}_layers)'
            )
        elif form == "ordered":
            lines += [
                f"{name}_layers = OrderedDict()",
                f'{name}_layers["a"] = Shifted({w})',
                f'{name}_layers["b"] = Leaky()',
                f"{name}_h = {a} * 1.0",
                f"for {name}_key, {name}_layer in {name}_layers.items():",
                f"    {name}_h = {name}_layer.forward({name}_h)",
            ]
        elif form == "appended":
            lines += [
                f"{name}_layers = []",
                f"for {name}_w in ({w}, 0.7):",
                f"    {name}_layers.append(Shifted({name}_w))",
                f"    {name}_layers.append(Leaky())",
            ]
            lines += run
        elif form == "sequential":  # the layers given one by one (``*layers``)
            lines += [
                f"{name}_net = Sequential(Shifted({w}), Leaky(), Shifted(0.5, 0.2))",
                f"{name}_h = {name}_net.forward({a})",
            ]
        else:
            made = f"Chain({w})" if form == "chain" else f"chain_of({w})"
            lines += [f"{name}_net = {made}", f"{name}_h = {name}_net.forward({a})"]
        lines.append(f"{name} = np.sum({name}_h)")

    def _py_stage_tableau(self, lines, name, a, b):
        # explicit Runge-Kutta stages from a tableau held as lists of lists: each stage reads the ones
        # before it (``frontend/written_loops``); the first sums no stage
        self.helper(
            "STAGE_A = [[], [0.5], [0.25, 0.25]]\n" "STAGE_B = [0.2, 0.3, 0.5]\n"
        )
        stages = self.pick(["STAGE_A", "zip(STAGE_A, STAGE_B)"])
        target = f"{name}_row" if stages == "STAGE_A" else f"{name}_row, {name}_c"
        lines += [
            f"{name}_ks = []",
            f"for {target} in {stages}:",
            f"    {name}_yi = {a} + 0.1 * sum(c * k for c, k in zip({name}_row, {name}_ks))",
            f"    {name}_ks.append(np.tanh({name}_yi * np.mean({b})))",
            f"{name} = np.sum(sum(w * k for w, k in zip(STAGE_B, {name}_ks)))",
        ]

    def _py_table_rows(self, lines, name, a, b):
        # a module-level table of ``(function, options)`` rows, looped over with ``**options``
        # (``function_loops._table_rows``)
        self.helper(
            "def scaled_penalty(z, scale, power=2):\n"
            "    return scale * np.sum(np.abs(z) ** power)\n"
            "\n"
            "\n"
            "def shifted_penalty(z, shift):\n"
            "    return np.sum(np.tanh(z + shift))\n"
            "\n"
            "\n"
            "PENALTY_TABLE = {\n"
            '    "l2": (scaled_penalty, {"scale": 0.1}),\n'
            '    "l3": (scaled_penalty, {"scale": 0.05, "power": 3}),\n'
            '    "shift": (shifted_penalty, {"shift": 0.5}),\n'
            "}\n"
        )
        rows = self.pick(["items", "values"])
        target = (
            f"{name}_key, ({name}_f, {name}_kw)"
            if rows == "items"
            else f"{name}_f, {name}_kw"
        )
        lines += [
            f"{name} = np.sum({b}) * 0.0",
            f"for {target} in PENALTY_TABLE.{rows}():",
            f"    {name} = {name} + {name}_f({a}, **{name}_kw)",
        ]
        if self.pick([False, True]):
            # the loop's names read after it hold the last row's values, as in Python
            lines.append(f"{name} = {name} + {name}_f({b}, **{name}_kw)")

    def _py_constant_object(self, lines, name, a, b):
        # an object of the program made from constants and handed to a helper (a solver's ``grid =
        # Grid()``): made once when the code is read (``frontend/constant_objects``)
        self.helper(
            "class Stencil:\n"
            "    def __init__(self, h=0.5, order=2):\n"
            "        self.h = h\n"
            "        self.weights = np.array([1.0, -2.0, 1.0]) / h**order\n"
            "\n"
            "\n"
            "def smoothed(z, stencil):\n"
            "    return z * stencil.weights[1] * 0.01 + np.tanh(z) * stencil.h\n"
        )
        args = self.pick(["", "0.25", "h=0.75, order=1"])
        lines += [
            f"{name}_st = Stencil({args})",
            f"{name} = np.sum(smoothed({a}, {name}_st)) + {name}_st.h",
        ]

    def _py_library_type_checks(self, lines, name, a, b):
        # library code: ``hasattr`` checks for sparse inputs with a branch no array takes, a ufunc writing
        # into ``out`` (``frontend/ufunc_outputs``)
        self.helper(
            "def dense_scale(x, s):\n"
            '    if hasattr(x, "toarray"):\n'
            "        return x.multiply(s).toarray()\n"
            "    return x * s\n"
        )
        lines += [
            f"{name}_buf = np.empty_like({a} * 1.0)",
            f"np.tanh({a}, out={name}_buf)",
            f"{name}_buf = np.exp(-{name}_buf ** 2, {name}_buf)",
            f"{name} = np.sum(dense_scale({name}_buf, np.mean({b}))) "
            f"+ float(isinstance({b}, np.ndarray))",
        ]

    def _py_keyword_object(self, lines, name, a, b):
        # hmmlearn's ``GaussianHMM(**params)``: an object made from a dict's keywords, a method under
        # ``np.errstate`` (``frontend/object_init``, ``frontend/error_states``)
        self.helper(
            "class Emission:\n"
            "    def __init__(self, loc, log_scale, floor=1e-6):\n"
            "        self.loc = loc\n"
            "        self.scale = np.exp(log_scale) + floor\n"
            "\n"
            "    def logpdf(self, z):\n"
            '        with np.errstate(under="ignore", divide="ignore"):\n'
            "            return -0.5 * ((z - self.loc) / self.scale) ** 2 - np.log(self.scale)\n"
        )
        lines += [
            f'{name}_kw = {{"loc": np.mean({b}), "log_scale": np.tanh({a}) * 0.1}}',
            f"{name} = np.sum(Emission(**{name}_kw).logpdf({a} * 0.5))",
        ]

    def _py_configured_object(self, lines, name, a, b):
        # filterpy's way: an object made, then configured by assigning its attributes (and items of
        # them), its methods storing outputs on ``self`` in a loop (``local_objects``, ``closure_state``)
        self.helper(
            "class Smoother:\n"
            "    def __init__(self, n):\n"
            "        self.state = np.zeros(n)\n"
            "        self.gain = np.ones(n)\n"
            "        self.decay = 0.5\n"
            "\n"
            "    def step(self, z):\n"
            "        self.residual = z - self.state\n"
            "        self.state = self.decay * self.state + self.gain * np.tanh(self.residual)\n"
        )
        lines += [
            f"{name}_s = Smoother(np.size({a}))",
            f"{name}_s.gain = np.full(np.size({a}), np.mean(np.tanh({b})) * 0.5 + 0.5)",
            f"{name}_s.gain[0] = 0.25",
            f"{name}_s.decay *= 0.9",
            f"for {name}_z in (np.ravel({a}), np.ravel({a}) * 0.5):",
            f"    {name}_s.step({name}_z)",
            f"{name} = np.sum({name}_s.state) + np.sum({name}_s.residual ** 2)",
        ]

    def _py_recursion_on_a_counter(self, lines, name, a, b):
        # a recursive helper called with a loop's counter (Chebyshev or Hermite polynomials by their
        # recurrence): the loop is written out (``frontend/written_loops``)
        self.helper(
            "def hermite(n, z):\n"
            "    if n == 0:\n"
            "        return np.ones_like(z)\n"
            "    if n == 1:\n"
            "        return 2.0 * z\n"
            "    return 2.0 * z * hermite(n - 1, z) - 2.0 * (n - 1) * hermite(n - 2, z)\n"
            "\n"
            "\n"
            "HERMITE_DEGREE = 3\n"
        )
        bound = self.pick(["HERMITE_DEGREE + 1", "4", "len([0.5, 0.25, 0.125])"])
        lines += [
            f"{name} = 0.0",
            f"for {name}_n in range({bound}):",
            f"    {name} = {name} + 0.1 * np.sum(hermite({name}_n, np.tanh({a})))",
        ]

    def _py_read_at_a_found_position(self, lines, name, a, b):
        # elements read and written at a position found in the data (``np.argmax``): a traced integer of
        # no axes under XLA, each example's own under vmap (``rt.index_read_add``: JAX's clamped reads)
        lines += [
            f"{name}_flat = np.ravel({a})",
            f"{name}_at = np.argmax(np.ravel({b})) % np.size({name}_flat)",
            f"{name}_row = np.atleast_2d({a})[np.argmin(np.atleast_2d({a})[:, 0])]",
            f"{name} = {name}_flat[{name}_at] ** 2 + {name}_flat[{name}_at - 1] * np.sum({name}_row)",
        ]
        if self.pick([False, True]):
            lines += [
                f"{name}_w = {name}_flat * 1.0",
                f"{name}_w[{name}_at] = np.tanh({name})",
                f"{name} = {name} + np.sum({name}_w * {name}_flat)",
            ]

    def _py_take_at_computed_indices(self, lines, name, a, b):
        # ``np.take`` at positions computed from the data (an embedding lookup): under vmap they differ
        # per example (``rt.batching.take``)
        axis = self.pick(["0", "-1", "None"])
        count = f"np.size({a})" if axis == "None" else f"np.shape({a})[{axis}]"
        lines += [
            f"{name}_at = np.argsort(np.ravel({b}))[:2] % {count}",
            f"{name} = np.sum(np.tanh(np.take({a}, {name}_at, axis={axis})) ** 2)",
        ]

    def _py_list_read_as_array(self, lines, name, a, b):
        # NumPy functions of Python lists, which NumPy reads as one array: a list display bound to a name,
        # a helper's pair of lists built by ``append`` (``passes/helper_results``), a helper's list display
        self.helper(
            "def states_and_inputs(w, n):\n"
            "    h, hs, zs = w * 0.0, [], []\n"
            "    for k in range(n):\n"
            "        h = np.tanh(w * (k + 1) * 0.3 + 0.5 * h)\n"
            "        hs.append(h)\n"
            "        zs.append(w * k)\n"
            "    return hs, zs\n"
        )
        self.helper("def two_views(z):\n    return [np.sin(z), z * 0.5]\n")
        self.fd_only = True  # jax.numpy refuses lists: the twin has no spelling of them
        reduce = self.pick(["np.mean", "np.max", "np.sum", "np.var"])
        lines += [
            f"{name}_terms = [np.sum({a} ** 2), np.sum(np.cos({b}))]",
            f"{name}_hs, _ = states_and_inputs({a}, 3)",
            f"{name} = {reduce}({name}_terms) + np.sum({reduce}({name}_hs, axis=0))",
        ]
        if self.p(0.5):
            lines.append(f"{name} = {name} + np.sum({reduce}(two_views({b}), axis=0))")

    def _py_function_list(self, lines, name, a, b):
        # functions kept in a list: local ``def``s and a lambda bound to a name, or a list a factory
        # returns (``frontend/function_loops``, ``frontend/factories``), read by a loop, an index, a
        # generator
        self.helper(
            "def make_heads(k):\n"
            "    def squashed(z):\n"
            "        return np.tanh(z * k)\n"
            "\n"
            "    return [squashed, lambda z: np.sin(z) * k]\n"
        )
        lines += [
            f"def {name}_scaled(z):",
            f"    return z * np.mean({b})",
            f"{name}_fs = "
            + self.pick(
                [
                    f"[{name}_scaled, lambda z: np.cos(z), np.tanh]",
                    f"make_heads(np.mean({b}) * 0.5)",
                ]
            ),
            f"{name} = np.sum({name}_fs[1]({a}))",
            f"for {name}_f in {name}_fs:",
            f"    {name} = {name} + np.sum({name}_f({a} * 0.5))",
            # the loop's variable read after it: its last function
            f"{name} = {name} + " + self.pick(["0.0", f"np.sum({name}_f({b}))"]),
            f"{name} = {name} + sum(np.sum({name}_g({b})) for {name}_g in {name}_fs)",
        ]
        size = 1
        for d in self.env[a].shape:
            size *= d
        side = random.Random(self.seed * 37 + len(lines))
        if size >= 3 and side.random() < 0.5:
            # (drawn apart) the functions zipped with the data's items, first or second: Python's zip stops
            # at the shorter (``function_loops._zipped``; a shorter data sequence is refused, never clamped)
            pair = [f"{name}_f2, {name}_w", f"{name}_fs, np.ravel({a})"]
            if side.random() < 0.5:
                pair = [", ".join(reversed(p.split(", ", 1))) for p in pair]
            lines += [
                f"for {pair[0]} in zip({pair[1]}):",
                f"    {name} = {name} + {name}_w * np.sum({name}_f2({b}))",
            ]
        if self.pick([False, True]):
            # a module-level registry of functions at a key computed without calls
            self.helper(
                "SQUASHERS = {'tanh': np.tanh, 'soft': lambda z: np.logaddexp(0.0, z), "
                "'identity': lambda z: z}\n"
            )
            key = self.pick(["None", "'soft'", "'tanh'"])
            lines += [
                f"{name}_kind = {key}",
                f"{name} = {name} + np.sum(SQUASHERS[{name}_kind or 'identity']({a}))",
            ]

    def _py_stateful_layers(self, lines, name, a, b):
        # "Neural Networks from Scratch": ``layer.forward(x)`` stores ``self.output``, a base class's
        # method calls the subclass's, and ``layer(x)`` calls ``__call__``
        self.helper(
            "class StoringLayer:\n"
            "    def forward(self, z):\n"
            "        self.inputs = z\n"
            "        self.output = self.act(z * self.w)\n"
            "\n"
            "    def __call__(self, z):\n"
            "        self.forward(z)\n"
            "        return self.output\n"
            "\n"
            "\n"
            "class TanhLayer(StoringLayer):\n"
            "    def __init__(self, w):\n"
            "        self.w = w\n"
            "\n"
            "    def act(self, z):\n"
            "        return np.tanh(z)\n"
        )
        lines += [
            f"{name}_l = TanhLayer(np.mean(np.tanh({b})) * 0.5 + 1.0)",
            f"{name}_l.forward({a})",
            f"{name}_first = np.sum({name}_l.output ** 2)",
            f"{name} = {name}_first + np.sum({name}_l({a} * 0.5))",
        ]
        if self.p(0.5):  # what the last call stored
            lines.append(f"{name} = {name} + np.sum({name}_l.inputs)")

    def _py_appended_after_loop(self, lines, name, a, b):
        # deeplearning.ai's caches: tuples collected in a loop, one more appended after it
        lines += [
            f"{name}_caches = []",
            f"{name}_h = np.tanh({a})",
            f"for {name}_k in range(2):",
            f"    {name}_prev = {name}_h",
            f"    {name}_h = np.sin({name}_h * 0.9 + 0.1 * {name}_k)",
            f"    {name}_caches.append(({name}_prev, {name}_h * 1.5))",
            f"{name}_caches.append(({name}_h, {name}_h * 2.0))",
            f"{name} = np.sum({name}_caches[-1][1]) + np.sum({name}_caches[0][0] ** 2) "
            f"+ len({name}_caches)",
        ]

    def _py_dict_of_lists(self, lines, name, a, b):
        # a training-style record: lists held in a dict, grown through it in a loop
        lines += [
            f'{name}_rec = {{"val": [], "sq": []}}',
            f"{name}_z = np.tanh({a})",
            "for _ in range(2):",
            f"    {name}_z = np.sin({name}_z) * 0.9",
            f'    {name}_rec["val"].append(np.sum({name}_z))',
            f'    {name}_rec["sq"].append({name}_z ** 2)',
            f'{name} = sum({name}_rec["val"]) + np.sum(np.stack({name}_rec["sq"])[-1])',
        ]

    def _py_mask_reduced(self, lines, name, a, b):
        # a selection by the program's mask, as a helper's argument: reduced, it compiles
        self.helper(
            "def masked_mean(values, keep):\n"
            "    return np.mean(values[keep] ** 2) + np.max(values[keep])\n"
        )
        keep = f"np.abs(np.sin({a})) >= np.median(np.abs(np.sin({a})))"
        if self.p(0.3):
            # the Gram matrix of rows a mask selects (a class's scatter): a product contracting them
            lines += [
                f"{name}_v = np.ravel({a})",
                f"{name}_m = np.abs(np.sin({name}_v)) >= np.median(np.abs(np.sin({name}_v)))",
                f"{name}_A = np.outer({name}_v, np.array([1.0, -0.5]))[{name}_m]",
                f"{name} = np.sum(np.tanh({name}_A.T @ {name}_A))",
            ]
            return
        if self.pick([False, True]):
            # a selection of a 1-D mask given a node axis, reduced whole (a quadrature per group)
            lines += [
                f"{name}_v = np.ravel({a})",
                f"{name}_m = np.abs(np.sin({name}_v)) >= np.median(np.abs(np.sin({name}_v)))",
                f"{name}_e = {name}_v[{name}_m][:, None] + np.array([-1.0, 0.5])[None, :]",
                f"{name} = np.sum(np.logaddexp(0.0, {name}_e)) + np.mean({name}_v[{name}_m][None] ** 2)",
                f"{name} = {name} + np.sum(np.tanh(np.mean({name}_e, axis=0)))",
            ]
            return
        lines.append(f"{name} = masked_mean(np.tanh({a}), {keep})")

    def _py_spread_into_local(self, lines, name, a, b):
        # scipy's style: a function passed in, called with the tuple of its extra arguments
        self.helper(
            "def quadrature(f, lo, hi, args=()):\n"
            "    t = lo + (hi - lo) * np.linspace(0.0, 1.0, 4)\n"
            "    return (hi - lo) * np.mean(f(t, *args))\n"
        )
        k = f"{name}_k"
        lines.append(f"{k} = np.mean(np.tanh({a}))")
        lines += self.pick(
            [
                [
                    f"{name} = quadrature(lambda t, r: np.exp(-r * t), 0.0, 1.0, args=({k},))"
                ],
                [
                    f"def {name}_f(t, r, c=2.0):",
                    "    return c * np.tanh(r * t)",
                    f"{name} = quadrature({name}_f, 0.0, 1.0, ({k},)) + quadrature(",
                    f"    {name}_f, 0.5, 1.0, args=({k}, np.mean({b}))",
                    ")",
                ],
            ]
        )

    def _py_constant_spread(self, lines, name, a, b):
        # settings and sizes held in module constants, spread into NumPy functions
        self.helper('SUM_OPTIONS = {"axis": 0, "keepdims": True}\nTILE = (2, 1)\n')
        lines.append(
            f"{name} = np.sum(np.sum(np.reshape({a}, ({a}.shape[0], -1)), **SUM_OPTIONS) ** 2)"
            f" + np.sum(np.ones(TILE) * np.mean({b}))"
            + self.pick(["", f" + np.sum(np.zeros(*TILE[:1]) + np.mean({a}))"])
        )

    def _py_copied_then_written_back(self, lines, name, a, b):
        # an RTS smoother's backward pass: a collected list copied, then written back by a loop's index
        ms, sm, t = f"{name}_ms", f"{name}_sm", f"{name}_t"
        lines += [
            f"{name}_m = 0.0 * np.mean({a})",
            f"{ms} = []",
            f"for {name}_v in np.ravel({a}):",
            f"    {name}_m = 0.8 * {name}_m + 0.2 * {name}_v",
            f"    {ms}.append({name}_m)",
            f"{sm} = " + self.pick([f"list({ms})", f"{ms}.copy()"]),
            f"for {t} in reversed(range(len({ms}) - 1)):",
            f"    {sm}[{t}] = {ms}[{t}] + 0.5 * np.tanh({sm}[{t} + 1] - {ms}[{t}])",
            f"{name} = np.sum(np.array({sm}) ** 2) + np.mean({b})",
        ]

    def _py_quadrature_nodes(self, lines, name, a, b):
        # NumPy's quadrature nodes made in the function: run when the code is traced, as JAX runs them
        self.imports |= {"from numpy.polynomial.legendre import leggauss"}
        x, w = f"{name}_x", f"{name}_w"
        lines += [
            f"{x}, {w} = leggauss({self.pick([3, 4, 5])})",
            f"{name} = np.sum({w} * np.tanh(np.mean({a}) * {x} + np.mean({b})))",
        ]

    def _py_copy_before_loop(self, lines, name, a, b):
        # ``prev = v`` taken before a loop that updates ``v`` and reads ``prev``
        v, prev = f"{name}_v", f"{name}_prev"
        step = f"{v} = {v} - 0.5 * ({v} - {prev} - 0.3 * np.tanh({v} * np.mean({b})))"
        lines.append(f"{v} = np.ravel({a}) * 1.0")
        lines += self.pick(
            [
                [f"{prev} = {v}", "for _ in range(3):", f"    {step}"],
                [
                    "for _ in range(2):",
                    f"    {prev} = {v}",
                    "    for _ in range(2):",
                    f"        {step}",
                ],
            ]
        )
        lines.append(f"{name} = np.sum({v} ** 2)")

    def _py_dict_update(self, lines, name, a, b):
        if self.pick([False, True]):
            # cs231n's options dict: a mode string carried through a loop, a key the loop sets
            o = f"{name}_opts"
            lines += [
                f'{o} = {{"mode": "train", "p": 0.8}}',
                f"{name} = 0.0",
                f"for {name}_k in range(2):",
                f'    {o}["u"] = np.cos({a} * ({name}_k + 1.0)) * 0.5 + 0.5',
                f'    if {o}["mode"] == "train":',
                f'        {name}_mask = ({o}["u"] < {o}["p"]) / {o}["p"]',
                "    else:",
                f"        {name}_mask = np.ones_like({a})",
                f"    {name} = {name} + np.sum(np.tanh({a}) * {name}_mask) * np.mean({b})",
            ]
            # a helper given a display of options and arrays (mapped: its number gets the batch axis)
            self.helper(
                "def gated(opts):\n"
                "    if opts['mode'] == 'train':\n"
                "        return np.sum(np.tanh(opts['z']) * opts['scale'])\n"
                "    return np.sum(opts['z'])\n"
            )
            lines.append(
                f"{name} = {name} + gated({{'mode': 'train', 'scale': 0.5, 'z': {a}}})"
            )
            return
        # functional dict updates, as JAX code writes them
        p, q, r = f"{name}_p", f"{name}_q", f"{name}_r"
        if random.Random(self.seed * 37 + len(lines)).random() < 0.5:
            # (drawn apart) merges as Python 3.9 writes them: ``|``, ``|=``, spreads after the first entry,
            # ``dict(a, k=v)``, ``.update`` of a dict the function made (``frontend/dict_merges.py``)
            lines += [
                f'{p} = {{"w": np.ravel({a}) * 1.0, "s": np.mean({b})}}',
                f'{q} = {p} | {{"w": {p}["w"] * 0.5}}',
                f'{q} |= {{"t": np.sum({b} ** 2)}}',
                f'{r} = {{"s": 2.0, **{q}, "u": np.sin({p}["s"]), **{p}}}',
                f'{r}.update({{"t": {q}["t"] * 0.5}}, s={r}["s"] + 1.0)',
                f'{r} = dict({r}, v=np.tanh({q}["t"]))',
                f'{name} = np.sum(np.tanh({r}["w"]) * {r}["s"]) + {r}["u"] * {r}["t"] + {r}["v"]',
            ]
            return
        lines += [
            f'{p} = {{"w": np.ravel({a}) * 1.0, "s": np.mean({b})}}',
            f'{q} = {{**{p}, "w": {p}["w"] * 0.5}}',
            f"{r} = dict({q})",
            f'{r}["s"] = {r}["s"] + 1.0',
            f'{name} = np.sum(np.tanh({r}["w"]) * {r}["s"]) + np.sum({p}["w"])',
        ]

    def _py_listed_iterators(self, lines, name, a, b):
        p, st, bk, nd, tp = (
            f"{name}_{k}" for k in ("pairs", "steps", "back", "named", "tup")
        )
        lines += [
            f"{p} = list(zip([{a}, np.sin({a})], [{b}, {b} * 2.0]))",
            f"{st} = list(enumerate([np.tanh({a}), {a} ** 2]))",
            f"{bk} = list(reversed({p}))",
            f'{nd} = dict(zip(["u", "v"], [np.cos({a}), {b}]))',
            f"{tp} = tuple(zip(np.ravel({a})[:2], [0.5, 1.5]))",
            f"{name} = sum(np.sum({name}_u) * np.mean({name}_v) for {name}_u, {name}_v in {bk})",
            f"{name} = {name} + sum({name}_k * np.sum({name}_h) for {name}_k, {name}_h in {st})",
            f'{name} = {name} + np.sum({nd}["u"]) * np.mean({nd}["v"]) + len({tp})',
            f"{name} = {name} + sum({name}_x * {name}_c for {name}_x, {name}_c in {tp})",
        ]

    def _py_joined_layer_tuples(self, lines, name, a, b):
        layers = f"{name}_layers"
        lines += [
            f"{layers} = [({a}, np.ravel({b})), (np.ravel({a})[:1], {b} * 1.0)]",
            f"{name}_W, {name}_c = {layers}[-1]",
            f"{name}_new = {layers}[:-1] + [({name}_W * 0.5, {name}_c + 1.0)]",
            f"{name} = sum(np.sum({name}_w ** 2) + np.sum(np.tanh({name}_d)) "
            f"for {name}_w, {name}_d in {name}_new)",
        ]

    def _py_unflatten_by_counter(self, lines, name, a, b):
        self.helper(
            "def unflatten_by_counter(flat, shapes):\n"
            "    out, i = [], 0\n"
            "    for shape in shapes:\n"
            "        n = int(np.prod(shape))\n"
            "        out.append(flat[i : i + n].reshape(shape))\n"
            "        i += n\n"
            "    return out\n"
        )
        flat = f"np.ravel({a})"
        size = 1
        for d in self.env[a].shape:
            size *= d
        # (drawn apart, so other programs stay as they were) split points summed from sizes, offsets with a
        # leading zero: integer arithmetic on known integers (``runtime/known_integers.py``), a display of
        # sizes or a comprehension over a module constant of shapes
        apart = random.Random(self.seed * 31 + len(lines))
        if size >= 2 and apart.random() < 0.5:
            shapes = f"{name.upper()}_SHAPES"
            self.module_globals.append(f"{shapes} = [(1,), ({size - 1},)]")
            lines += apart.choice(
                [
                    [
                        f"{name}_sizes = [1, {size - 1}]",
                        f"{name}_parts = np.split({flat}, np.cumsum({name}_sizes)[:-1])",
                    ],
                    [
                        f"{name}_sizes = [int(np.prod(s)) for s in {shapes}]",
                        f"{name}_parts = np.split({flat}, np.cumsum({name}_sizes)[:-1])",
                    ],
                    [
                        f"{name}_ends = np.cumsum([0] + [np.prod(s) for s in {shapes}])",
                        f"{name}_parts = [{flat}[{name}_ends[k] : {name}_ends[k + 1]].reshape(s) "
                        f"for k, s in enumerate({shapes})]",
                    ],
                ]
            )
            lines.append(
                f"{name} = np.sum({name}_parts[0] ** 2) + np.sum(np.tanh({name}_parts[1])) * np.mean({b})"
            )
            self.fd_only = True  # (the jax.numpy twin's split points would be traced)
            return
        lines += [
            f"{name}_n = {flat}.shape[0]",
            f"{name}_parts = unflatten_by_counter({flat}, [(1,), ({name}_n - 1,)])",
            f"{name} = np.sum({name}_parts[0] ** 2) + np.sum(np.tanh({name}_parts[1])) * np.mean({b})",
        ]

    def _py_builtins_of_constants(self, lines, name, a, b):
        line = "LEVELS = [3, 1, 2]"
        if line not in self.module_globals:
            self.module_globals.append(line)
        lines.append(
            f"{name} = np.sum({a}) * max(LEVELS) / len(LEVELS) "
            f"+ sorted(LEVELS)[0] * np.mean({b}) + min(LEVELS)"
        )

    def _py_pad_constants(self, lines, name, a, b):
        values = self.pick(["1.5", f"(0.0, np.mean({b}))", "((0.5, -1.0),)"])
        lines += [
            f"{name}_p = np.pad(np.ravel({a}), "
            + self.pick(
                ["(1, 2)", "pad_width=(1, 2)", "pad_width=((1, 2),), mode='constant'"]
            )
            + f", constant_values={values})",
            f"{name} = np.sum(np.diff({name}_p) ** 2) + np.sum(np.tanh({name}_p))",
        ]

    def _py_sum_of_an_array(self, lines, name, a, b):
        lines.append(
            f"{name} = np.sum(sum(np.tanh({a}) * 2.0)) + sum(np.ravel({b}) ** 2)"
        )

    def _py_nested_accumulator(self, lines, name, a, b):
        lines += [
            f"{name} = 0.0",
            f"for {name}_i in range(2):",
            f"    for {name}_j in range(2):",
            f"        {name} = {name} + np.tanh({a} * ({name}_i + 0.5 * {name}_j)) * np.mean({b})",
            f"{name} = np.sum({name} ** 2)",
        ]

    def _py_joined_in_a_loop(self, lines, name, a, b):
        lines += [
            f"{name}_s = [np.tanh({a})]",
            "for _ in range(2):",
            f"    {name}_s = {name}_s + [np.sin({name}_s[-1]) * np.mean({b})]",
            f"{name} = np.sum(np.stack({name}_s) ** 2) + len({name}_s)",
        ]

    def _py_branching_helpers(self, lines, name, a, b):
        # a local helper with an ``if``/``elif`` chain on data, called in a loop and after it by another
        # local helper: inlined twice, its branch functions nest (``passes/inline``'s renaming apart)
        lines += [
            f"def {name}_act(z, c):",
            "    if c > 0.5:",
            "        return np.sin(z)",
            "    elif c > -0.5:",
            "        return np.tanh(z)",
            "    return z * 0.5",
            f"def {name}_net(z):",
            f"    for {name}_c in np.array([1.0, 0.0, -1.0]):",
            f"        z = {name}_act(z, {name}_c)",
            f"    return {name}_act(z, np.mean({b}) * 0.1 + "
            + self.pick(["1.0", "0.0", "-1.0"])
            + ")",
            f"{name} = np.sum({name}_net({a}))",
        ]

    def _py_function_to_a_local_def(self, lines, name, a, b):
        self.helper("def softsign(z):\n    return z / (1.0 + np.abs(z))\n")
        line = 'ACTS_BY_NAME = {"tanh": np.tanh, "softsign": softsign}'
        if line not in self.late_globals:
            self.late_globals.append(line)
        lines += [
            f"def {name}_layer(z, act, scale=1.0):",
            "    return scale * act(z * 0.5)",
            f"{name} = np.sum({name}_layer({a}, softsign)) + np.mean({name}_layer({b}, np.sin, scale=2.0))",
            f'for {name}_key in ["softsign", "tanh"]:',
            f"    {name} = {name} + np.sum({name}_layer({a}, ACTS_BY_NAME[{name}_key]))",
        ]

    def _py_args_passed_on_twice(self, lines, name, a, b):
        self.helper("def shifted_rhs(t, y, k, c):\n    return -k * y + c * t\n")
        self.helper(
            "def one_step(f, t, y, h, *args):\n    return y + h * f(t, y, *args)\n"
        )
        self.helper(
            "def two_steps(f, y, *args):\n"
            "    return one_step(f, 0.1, one_step(f, 0.0, y, 0.1, *args), 0.1, *args)\n"
        )
        lines.append(
            f"{name} = np.sum(two_steps(shifted_rhs, np.tanh({a}), np.mean({b}), 0.5) ** 2)"
        )
