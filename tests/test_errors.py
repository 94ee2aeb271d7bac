"""Bad input gets one clear error naming the construct, the user's file:line:col, a caret, and a hint.

One table of bad programs drives the compile-time checks; the API's runtime
errors follow JAX's (types and messages).
"""

import dataclasses
import importlib.util
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s
from s2s.errors import S2SError

HEADER = (  # five lines: the messages below cite absolute line numbers
    "import jax, logging, numpy as np, scipy.special as sp\nfrom jax import lax\n\n"
    "weights_table, rng = {1.0, 2.0}, np.random.default_rng(0)\n\n"
)
LINE0 = HEADER.count("\n")  # the case's `def` line is LINE0 + 1

# name, body of `f`, expected message fragment, (line within the case, column) of the caret
CASES = [
    (
        "parameter_a_formula_ignores",
        "def f(x):\n    return np.sum(np.gradient(x, edge_order=2) ** 2)",
        "`gradient` with `edge_order=` other than its default (1) is not supported",
        (2, 18),
    ),
    (
        "while_loop_reads_before_assigning",
        "def f(x):\n    while np.sum(x) < 10.0:\n        x = x + y\n        y = x * 2\n    return np.sum(x)",
        "`y` is read in the `while` loop (line 8) before it is assigned (line 9)",
        (3, 8),
    ),
    (
        "append_twice_per_iteration",
        "def f(x):\n    hs = []\n    for r in x:\n        hs.append(r)\n        if np.sum(r) > 0:\n            hs.append(r * 2)\n    return np.sum(np.stack(hs))",
        "the list `hs` may grow by more than one `append` in an iteration",
        (4, 8),
    ),
    (
        "append_not_empty",
        "def f(x, hs):\n    for r in x:\n        hs.append(r)\n    return np.sum(np.stack(hs))",
        "`hs.append` changes a parameter, made outside `f`",
        (3, 8),
    ),
    (
        "ifexp_in_while",
        "def f(x):\n    while (1 if np.sum(x) < 1 else 0):\n        x = x * 2\n    return np.sum(x)",
        "a conditional expression in a `while` test",
        (2, 4),
    ),
    (
        "comprehension_in_a_while_test",
        "def f(x):\n    while np.sum([v * 2.0 for v in x]) > 1.0:\n        x = x * 0.5\n    return np.sum(x)",
        "list comprehension in a `while` test",
        (2, 17),
    ),
    (
        "reraise",
        "def f(x):\n    if x.ndim > 1:\n        raise\n    return np.sum(x)",
        "`raise` of anything but a built-in exception with one message",
        (3, 8),
    ),
    (
        "raise_of_a_module_exception",
        "def f(x):\n    if x.ndim > 1:\n        raise np.linalg.LinAlgError('no')\n    return np.sum(x)",
        "`raise` of anything but a built-in exception with one message",
        (3, 8),
    ),
    (
        "write_into_argument",
        "def f(x):\n    x[0] = 1.0\n    return np.sum(x)",
        "in-place write into `x`, which may be the caller's `x`",
        (2, 4),
    ),
    (
        "write_into_view",
        "def f(x):\n    y = np.zeros(3)\n    v = y[1:]\n    y[0] = x[0]\n    return np.sum(v * x[1:])",
        "in-place write into `y`, which may share memory with `v`",
        (4, 4),
    ),
    (
        "print_to_a_file",
        "def f(x):\n    print(x, file=None)\n    return np.sum(x)",
        "`print(..., file=...)` in a transformed function",
        (2, 13),
    ),
    (
        "print_without_a_newline",
        "def f(x):\n    print(x, end='')\n    return np.sum(x)",
        "`print(..., end=...)` without a newline",
        (2, 13),
    ),
    (
        "logging_call_used_as_a_value",
        "def f(x):\n    _ = logging.info('x %s', x)\n    return np.sum(x)",
        "an output call (`print`, `logging`) used as a value",
        (2, 8),
    ),
    (
        "formatted_key",
        'def f(params, x):\n    w = 2\n    return np.sum(params[f"W{1:{w}d}"] * x)',
        "an f-string with `!a` or a field inside its format spec (`{x:{width}}`) is not supported",
        (3, 25),
    ),
    (
        "iterator_read_twice",
        "def f(ws, x):\n    pairs = zip(ws, ws)\n    a = sum(np.sum(p * x) for p, _ in pairs)\n"
        "    return a + sum(np.sum(q) for _, q in pairs)",
        "Python's builtin `zip` is not supported",
        (2, 12),
    ),
    (
        "yield_in_while",
        "def f(x):\n    def g():\n        while True:\n            yield x\n"
        "    return sum(v for _, v in zip(range(3), g()))",
        "a generator that yields inside a `while` loop is not supported",
        (3, 8),
    ),
    (
        "yield_as_value",
        "def f(x):\n    def g():\n        s = yield x\n        yield s\n    return sum(g())",
        "`yield` used as a value (a generator that is sent values) is not supported",
        (3, 12),
    ),
    (
        "generator_transformed",
        "def f(x):\n    s = 0.0\n    for v in x: s = s + v; yield s",
        "`f` is a generator function (it has `yield`)",
        (3, 27),
    ),
    (
        "return_value_in_generator",
        "def f(x):\n    def g():\n        yield x\n        return x\n    return sum(g())",
        "`return` with a value in a generator is not supported",
        (4, 8),
    ),
    (
        "starargs",
        "def f(*xs):\n    return np.sum(xs[0])",
        "`*args`/`**kwargs` parameters",
        (1, 6),
    ),
    (
        "undefined",
        "def f(x):\n    return np.sum(x * weights)",
        "name `weights` is not defined",
        (2, 22),
    ),
    (
        "norule",
        "def f(x):\n    y = np.fft.fft(x).real\n    return np.sum(y)",
        "no derivative rule for `fft.fft`",
        (2, 8),
    ),
    (
        "library_function_on_the_differentiated_path",
        "def f(x):\n    c = np.polynomial.polynomial.polyval(0.5, x)\n    return c**2",
        "no derivative rule for `polyval` (run by `rt.host_call`)",
        (2, 8),
    ),
    (
        "class_as_a_default",
        "class Tanh:\n    def forward(self, x):\n        return np.tanh(x)\n\n\n"
        "def build(w, act=Tanh):\n    return act(), w\n\n\n"
        "def f(x):\n    a, w = build(x)\n    return np.sum(a.forward(w))",
        "the default of `act` (of `build`), a class of your program",
        (11, 11),
    ),
    (
        "local_function_in_star_args",
        "def apply_all(x, *fns):\n    for fn in fns:\n        x = fn(x)\n    return x\n\n\n"
        "def f(x):\n    s = np.mean(x)\n    return np.sum(apply_all(x, lambda z: z * s))",
        "a local function passed to `apply_all` in its `*`/`**` parameters",
        (9, 18),
    ),
    (
        "dict_of_pairs",
        'def f(x):\n    p = dict([("a", x), ("b", x)])\n    return np.sum(p["a"])',
        "`dict(...)` of pairs: s2s reads `dict(d)` as a copy of the dict `d`",
        (2, 8),
    ),
    (
        "other_library",
        "def f(x):\n    return np.sum(sp.ellipk(x))",
        "comes from `scipy.special`",
        (2, 18),
    ),
    (
        "method_of_an_object_argument",
        "def f(w, prior):\n    return np.sum(w**2) - prior.log_prob(w)",
        "`prior.log_prob()` calls a method of an object whose type s2s does not know",
        (2, 26),
    ),
    (
        "unsupported_array_method",
        "def f(x):\n    y = x * 1.0\n    return np.sum(y.partition(1))",
        "array method `.partition()` is not supported",
        (3, 18),
    ),
    (
        "no_return",
        "def f(x):\n    y = x * 2",
        "`f` can reach its end without a `return`",
        (1, 0),
    ),
    (
        "return_on_one_path",
        "def f(x):\n    if np.sum(x) > 0:\n        return np.sum(x)",
        "`f` can reach its end without a `return`",
        (1, 0),
    ),
    (
        "nonliteral_global",
        "def f(x):\n    return np.sum(x) * weights_table",
        "refers to set",
        (2, 23),
    ),
    (
        "aliased_update",
        "def f(x):\n    h = x\n    h += 1.0\n    return np.sum(h * x)",
        "in-place update of `h`, which may share memory with `x`",
        (3, 4),
    ),
    (
        "view_update",
        "def f(x):\n    v = x.reshape(-1)\n    v *= 2.0\n    return np.sum(x)",
        "in-place update of `v`, which may share memory with `x`",
        (3, 4),
    ),
    (
        "factory_closure_reached_by_a_derivative",
        "def scaler(*rates):\n    def update(g):\n        return -rates[0] * g\n    return update\n\n"
        "def f(w, x):\n    update = scaler(w)\n    return np.sum(x + update(x))",
        "`scaler` returns a function that reads its arguments (a closure)",
        (7, 13),
    ),
    (
        "lax_function_s2s_does_not_read",
        "def f(w, xs):\n    def body(a, b):\n        return a + b\n    return np.sum(lax.associative_scan(body, w * xs))",
        "`lax.associative_scan` comes from `jax.lax`, which s2s does not read",
        (4, 18),
    ),
    (
        "function_handed_to_an_op",
        "def f(w, x):\n    def row(r):\n        return r * w\n    c = [x < 0, x >= 0]\n"
        "    y = np.piecewise(x, c, [row, row])\n    return np.sum(y)",
        "no derivative rule for `piecewise`",
        (5, 4),
    ),
    (
        "numpy_seed_inside",
        "def f(x):\n    np.random.seed(0)\n    return np.sum(x)",
        "`np.random.seed(...)` inside the function (NumPy's global random state)",
        (2, 4),
    ),
    (
        "import_in_a_branch",
        "def f(x):\n    if x[0] > 0:\n        import math\n    return np.sum(x)",
        "`import` inside a block of the function",
        (3, 8),
    ),
    (
        "import_of_a_missing_name",
        "def f(x):\n    from scipy.special import no_such_function\n    return np.sum(x)",
        "`no_such_function` imported from `scipy.special`, which has none",
        (2, 4),
    ),
    (
        "ufunc_reduce_of_another_ufunc",
        "def f(x):\n    return np.hypot.reduce(x)",
        "`np.hypot.reduce`: s2s reads `np.add.reduce`",
        (2, 11),
    ),
    (
        "ufunc_reduce_with_a_dtype",
        "def f(x):\n    return np.sum(np.add.reduce(x, dtype=float))",
        "`np.add.reduce` with `dtype`",
        (2, 18),
    ),
    (
        "vectorize_casting_results",
        "def f(x):\n    return np.sum(np.vectorize(np.tanh, otypes=[int])(x))",
        "`np.vectorize` with `otypes` other than floats",
        (2, 18),
    ),
    (
        "numpy_random_draw",
        "def f(x):\n    return np.sum(x * np.random.normal(size=3))",
        "`np.random.normal` comes from `numpy.random`",
        (2, 22),
    ),
    (
        "generator_draw",
        "def f(x):\n    return np.sum(x * rng.normal(size=3))",
        "`rng.normal()` calls a method of a Generator",
        (2, 22),
    ),
    (
        "jax_transform_inside",
        "def f(x):\n    return np.sum(jax.vmap(abs)(x))",
        "s2s.vmap cannot transform `abs`, a builtin or compiled function",
        (2, 18),
    ),
    (
        "out_into_argument",
        "def f(x):\n    np.multiply(x, 2.0, out=x)\n    return np.sum(x)",
        "in-place write into `x`, which may be the caller's `x`",
        (2, 4),
    ),
    (
        "write_through_an_alias_of_a_rebound_argument",
        "def f(x):\n    h = x\n    x = x.copy()\n    h[0] = 1.0\n    return np.sum(x * h)",
        "in-place write into `h`, which may be the caller's `x`",
        (4, 4),
    ),
    (
        "sort_argument_in_place",
        "def f(x):\n    x.sort()\n    return x[0]",
        "in-place write into `x`, which may be the caller's `x`",
        (2, 4),
    ),
    (
        "other_in_place_method",
        "def f(x):\n    y = x * 1.0\n    y.partition(1)\n    return np.sum(y)",
        "`y.partition(...)` as an expression statement: an array method that changes `y` in place",
        (3, 4),
    ),
    (
        "computed_function",
        "def f(x):\n    fs = [np.sin, np.cos]\n    fs.append(np.tan)\n    return np.sum(fs[0](x))",
        "a call of `fs[0]`, a function computed at run time",
        (4, 18),
    ),
    (
        "view_update_read_by_a_closure",
        "def f(x):\n    v = x * 2.0\n    w = v[1:]\n    w *= 1.5\n    def g(z):\n        return z * v\n    return np.sum(g(x))",
        "in-place update of `w`, which may share memory with `v`",
        (4, 4),
    ),
    (
        "write_into_a_captured_array",
        "def f(x):\n    buf = np.zeros(3)\n    def put(v):\n        buf[0] = v\n        return v\n    return np.sum(buf) + put(np.sum(x))",
        "`put` changes `buf`, which this line also reads",
        (6, 18),
    ),
    (
        "write_into_a_captured_array_another_name_holds",
        "def f(x):\n    buf = np.zeros(3)\n    alias = buf\n    def put(v):\n        buf[0] = v\n"
        "        return v\n    out = put(np.sum(x))\n    return np.sum(alias) + out",
        "`put` writes into `buf` (`buf[...] = ...`), which `alias` holds too",
        (7, 4),
    ),
    (
        "alias_updated_in_place_after_its_twin",
        "def f(x):\n    v = x * 2.0\n    w = v\n    v -= np.cos(x)\n    w *= 1.5\n    return np.sum(w * w)",
        "in-place update of `v`, which may share memory with `w`",
        (4, 4),
    ),
    (
        "base_written_then_view_read_in_a_test",
        "def f(x):\n    buf = x.copy()\n    view = buf[...]\n    buf[...] = 0.5 * x\n    if np.max(view) < 1.0:\n        return np.sum(x * x)\n    return np.sum(x)",
        "in-place write into `buf`, which may share memory with `view`",
        (4, 4),
    ),
    (
        "base_updated_then_view_written",
        "def f(x):\n    buf = np.zeros(3)\n    row = buf[0:2]\n    buf *= 1.5\n    row[...] = np.tanh(x)\n    return np.sum(buf ** 2)",
        "in-place update of `buf`, which may share memory with `row`",
        (4, 4),
    ),
    (
        "append_to_the_callers_list_from_a_local_function",
        "def f(ws, x, acts):\n    def layer(h, W):\n        out = np.tanh(h @ W)\n        acts.append(out)\n        return out\n    for W in ws:\n        x = layer(x, W)\n    return np.sum(x) + np.sum(np.stack(acts))",
        "`acts.append` changes a list of the enclosing scope, made outside `layer`",
        (4, 8),
    ),
    (
        "local_functions_appended_to_a_list",
        "def f(w, X):\n    preds = []\n    for k in range(2):\n        def predict(Xq):\n            return np.tanh(Xq @ w)\n        preds.append(predict)\n        w = w * 0.5\n    return np.sum(np.mean([p(X) for p in preds], axis=0))",
        "a local function appended to a list (a list of functions built at run time)",
        (6, 21),
    ),
    (
        "a_passed_function_reads_a_name_the_helper_binds",
        "def _gram(k, xs):\n    x = xs * 2.0\n    return jax.vmap(k)(x)\n\n\ndef f(x):\n    return np.sum(_gram(lambda a: np.sin(a) * x, x[:, None]))",
        "a transformation of `k` here, which reads `x` where it is defined, where `x` names something else",
        (3, 20),
    ),
    (
        "complex_valued_transform",
        "def f(x):\n    spec = np.fft.rfft(x)\n    return np.sum(spec.real ** 2)",
        "no derivative rule for `fft.rfft`",
        (2, 11),
    ),
    (
        "method_changing_an_object_held_by_another",
        "class Loss:\n    def remember(self, w):\n        self.w = w\n\n\n"
        "class Model:\n    def set(self, *, loss):\n        self.loss = loss\n\n"
        "    def finalize(self, w):\n        self.loss.remember(w)\n\n\n"
        "def f(x):\n    m = Model()\n    m.set(loss=Loss())\n    m.finalize(x)\n"
        "    return np.sum(m.loss.w)",
        "`self.loss.remember(...)` as an expression statement (a method called for what it changes "
        "in `self.loss`",
        (11, 8),
    ),
    (
        "helper_changing_its_parameter_called_as_a_statement",
        "def update(p, g):\n    p['w'] -= 0.1 * g\n\n\n"
        "def f(x, params):\n    update(params, x)\n"
        "    return np.sum(params['w'] ** 2)",
        "`update(...)` as an expression statement (a function called for what it changes in its "
        "arguments in place",
        (6, 4),
    ),
    (
        "helper_changing_a_module_dict",
        "STATE = {'m': 0.0}\n\n\ndef keep(h, st):\n    st['m'] = 0.9 * st['m'] + np.mean(h)\n"
        "    return h - st['m']\n\n\ndef f(x):\n    out = keep(x, STATE)\n"
        "    return np.sum(out ** 2) + STATE['m']",
        "`keep` updates its parameter `st` in place (`st[...] = ...`), which holds `STATE` here",
        (10, 4),
    ),
    (
        "helper_writing_an_item_another_name_holds",
        "def keep(h, st):\n    st['m'] = np.mean(h)\n    return h\n\n\n"
        "def f(x):\n    ps = [{'m': 0.0}]\n    p0 = ps[0]\n    out = keep(x, ps[0])\n"
        "    return np.sum(out) + p0['m']",
        "which holds `ps[0]`, a view of `ps`, here: NumPy changes `ps` too, and `p0` is read after",
        (9, 4),
    ),
    (
        "vjp_function_kept_as_a_value",
        "def f(x):\n    out, pull = jax.vjp(np.sin, x)\n    fs = [pull]\n    return np.sum(fs[0](x)[0])",
        "the function `jax.vjp` returns, `pull`, used other than called with a cotangent",
        (2, 16),
    ),
    (
        "derivative_given_as_an_axis",
        "def f(x):\n    h = np.tanh(x)\n    return np.sum(np.sum(h, h * 2.0))",
        "`sum` is given a value that carries a derivative as its `axis`",
        (3, 18),
    ),
    (
        "append_to_a_parameter_list",
        "def f(x, acts):\n    acts.append(x)\n    return np.sum(x)",
        "`acts.append` changes a parameter, made outside `f`",
        (2, 4),
    ),
    (
        "global_rebound",
        "COUNT = 0\n\n\ndef f(x):\n    global COUNT\n    COUNT = COUNT + 1\n    return np.sum(x * COUNT)",
        "`global` statement",
        (5, 4),
    ),
    (
        # (a silent wrong value before: the tuple kept the dict as it was)
        "dict_held_by_a_tuple_then_given_a_key",
        "def f(x):\n    d = {'w': x * 1.0}\n    cache = (d, x)\n    d['w'] = x * 2.0\n"
        "    return np.sum(cache[0]['w'] ** 2)",
        "item write into `d`, which is the same container as `cache`",
        (4, 4),
    ),
    (
        "dict_appended_to_a_list_then_given_a_key_by_another_name",
        "def f(x):\n    d = {'w': x * 1.0}\n    held = []\n    held.append(d)\n    d2 = d\n"
        "    d2['w'] = x * 2.0\n    return np.sum(held[0]['w'] ** 2)",
        "item write into `d2`, which is the same container as `held`",
        (6, 4),
    ),
    (
        "append_through_a_second_name_of_a_containers_list",
        "def f(x):\n    report = {'terms': []}\n    terms = report['terms']\n"
        "    terms.append(np.sum(x ** 2))\n    return sum(report['terms'], 0.0)",
        "`terms.append` also grows `report['terms']`, the same list",
        (4, 4),
    ),
    (
        "append_through_an_alias_of_a_list",
        "def f(x):\n    xs = [x, 2 * x]\n    ys = xs\n    ys.append(3 * x)\n"
        "    return sum(np.sum(v) for v in xs)",
        "`ys.append` also grows `xs`, the same list",
        (4, 4),
    ),
    (
        "update_through_a_view_numpy_makes_flipud",
        "def f(x):\n    m = np.outer(x, x)\n    v = np.flipud(m)\n    v[0] *= 3.0\n    return np.sum(m)",
        "in-place write into `v`, which may share memory with `m`",
        (4, 4),
    ),
    (
        "update_through_the_diagonal_einsum_views",
        "def f(x):\n    K = np.outer(x, x)\n    d = np.einsum('ii->i', K)\n    d += 1.0\n"
        "    return np.sum(np.linalg.inv(K))",
        "in-place update of `d`, which may share memory with `K`",
        (4, 4),
    ),
    (
        "library_function_writing_its_argument",
        "def f(x):\n    y = np.zeros(6)\n    np.put(y, [1, 3], x[:2])\n    return np.sum(y * y)",
        "`np.put(...)` as an expression statement: a function called for what it writes",
        (3, 4),
    ),
    (
        "method_updating_an_attribute_another_name_holds",
        "class Affine:\n    def __init__(self, W):\n        self.W = W\n\n    def step(self, g):\n"
        "        self.W -= 0.1 * g\n\ndef f(x):\n    W = x * 1.0\n    layer = Affine(W)\n"
        "    layer.step(np.tanh(x))\n    return np.sum(W * W)",
        "this call updates an object's attribute in place",
        (11, 4),
    ),
    (
        "chained_write_through_an_index_array",
        "def f(x):\n    A = np.outer(np.ones(2), x)\n    A[[0, 1]][0] = 100.0\n    return np.sum(A)",
        "a write into `A[[0, 1]]`, which is a copy",
        (3, 4),
    ),
    (
        "del_of_a_dict_item",
        "def f(x):\n    d = {'a': x, 'b': 2 * x}\n    del d['b']\n    return np.sum(d['a'])",
        "`del` of an item or an attribute",
        (3, 4),
    ),
    (
        "bitwise_or_of_dicts_s2s_cannot_see",
        "def merge(p, q):\n    return p | q\n\ndef f(x):\n"
        "    d = merge({'w': x}, {'b': 2 * x})\n    return np.sum(d['w'] * d['b'])",
        "`bitwise_or` (`|`, `&`, `^`, `~` or a shift) of a value that carries a derivative",
        (2, 4),
    ),
    (
        "local_function_reading_a_derivative_handed_to_a_library",
        "def f(x):\n    A = np.eye(3) * 4.0 + np.diag(x**2)\n\n    def matvec(v):\n"
        "        return A @ v\n\n"
        "    sol, _ = jax.scipy.sparse.linalg.cg(matvec, x)\n    return np.sum(sol**2)",
        "`matvec`, a local function handed to a library function, reads `A`",
        (7, 13),
    ),
    (
        "function_passed_through_kwargs",
        "def apply(h, **kwargs):\n    return kwargs['act'](h)\n\ndef f(x):\n"
        "    return np.sum(apply(x, act=np.tanh))",
        "a function passed to `apply` through its `*args` or `**kwargs`",
        (5, 31),
    ),
    (
        "local_function_calling_itself",
        "def f(x):\n    def power(b, n):\n        if n == 0:\n            return 1.0\n"
        "        return b * power(b, n - 1)\n\n    return power(x[0], 3) + x[1]",
        "`power` is a local function that calls itself",
        (2, 4),
    ),
    (
        "complex_value_through_a_nondiff_op",
        "def f(x):\n    z = x + 1j * np.cos(x)\n    return np.sum(np.real(np.sign(z)) * x)",
        "a complex number on the differentiated path",
        (2, 12),
    ),
    (
        "complex_value_made_by_a_helper_reaching_angle",
        "def phase(a, b):\n    return a + 1j * b\n\ndef f(x):\n    return np.sum(np.angle(phase(x, x * x)))",
        "a complex number on the differentiated path",
        (2, 15),
    ),
    (
        "custom_jvp_rule_transformed_itself",
        "@jax.custom_jvp\ndef softplus(x):\n    return np.log1p(np.exp(x))\n\n@softplus.defjvp\n"
        "def f(primals, tangents):\n    (x,), (t,) = primals, tangents\n"
        "    return softplus(x), t / (1.0 + np.exp(-x))",
        "`f` is the custom_jvp rule of `softplus` and calls it",
        (6, 0),
    ),
    (
        "shape_assigned",
        "def f(x):\n    y = x.copy()\n    y.shape = (2, -1)\n    return np.sum(y[0] * y[1])",
        "assignment to an attribute (`y.shape = ...`)",
        (3, 4),
    ),
    (
        "write_through_flat",
        "def f(x):\n    z = x.copy()\n    z.flat[::2] = 0.0\n    return np.sum(z ** 2)",
        "an in-place write into an attribute or call result",
        (3, 4),
    ),
    (
        "printf_message_with_named_fields",
        'def f(x):\n    print("%(loss).3f" % {"loss": np.sum(x)})\n    return np.sum(x)',
        "this `%` formatting in an output statement",
        (2, 10),
    ),
    (
        "format_message_reading_an_attribute",
        'def f(x):\n    print("{0.shape}".format(x))\n    return np.sum(x)',
        "the field `{0.shape}` of this `.format` in an output statement",
        (2, 10),
    ),
    (
        "your_function_handed_to_lax_reduce_window",
        "def plus(a, b):\n    return a + b\n\ndef f(x):\n"
        '    return np.sum(jax.lax.reduce_window(x, 0.0, plus, (2,), (2,), "VALID"))',
        "`plus`, a function of your program, handed to `jax.lax.reduce_window`",
        (5, 48),
    ),
]


def _compile_case(tmp_path, name, body):
    path = tmp_path / f"case_{name}.py"
    path.write_text(HEADER + body + "\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module.f


@pytest.mark.parametrize("name, body, message, where", CASES, ids=[c[0] for c in CASES])
def test_compile_time_error(tmp_path, name, body, message, where):
    path, f = _compile_case(tmp_path, name, body)
    with pytest.raises(S2SError) as info:
        s2s.generate(f, ("grad",))
    err = info.value
    assert message in err.message
    assert err.origin is not None and err.origin.path == str(path)
    assert (err.origin.line - LINE0, err.origin.col) == where
    rendered = err.render().splitlines()
    assert rendered[0].startswith(
        f"{path}:{err.origin.line}:{err.origin.col + 1}: error: "
    )
    caret_line = rendered[2]
    assert caret_line.strip().startswith("^")
    assert rendered[-1].startswith("hint: ") or len(rendered) == 3


def test_cli_reports_one_message_without_traceback(tmp_path):
    path, _ = _compile_case(tmp_path, "cli_if", CASES[0][1])
    run = subprocess.run(
        [sys.executable, "-m", "s2s.cli.main", "grad", f"{path}::f"],
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0
    assert "Traceback" not in run.stderr and run.stdout == ""
    line, col = CASES[0][3]
    assert f"{path}:{LINE0 + line}:{col + 1}: error: {CASES[0][2]}" in run.stderr


def test_cli_never_overwrites_the_source(tmp_path):
    path, _ = _compile_case(tmp_path, "cli_same", "def f(x):\n    return np.sum(x * x)")
    before = path.read_text()
    run = subprocess.run(
        [sys.executable, "-m", "s2s.cli.main", "grad", f"{path}::f", "-o", str(path)],
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0 and "refusing to overwrite" in run.stderr
    assert path.read_text() == before


# --- runtime errors, with JAX's types and messages -------------------------------


def vector_valued(x):
    return x * 2.0


def scalar(x, n):
    return np.sum(x) * n


def pair_required(x):
    return np.sum(x)


def test_grad_of_non_scalar_output_is_a_type_error():
    with pytest.raises(
        TypeError, match="Gradient only defined for scalar-output functions"
    ):
        s2s.grad(vector_valued)(np.ones(3))


def test_grad_with_respect_to_integers_is_a_type_error():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        s2s.grad(scalar)(np.arange(3), 2.0)


@dataclasses.dataclass
class _PlainParams:
    w: np.ndarray


def _plain_params_loss(p, x):
    return np.sum(p.w * x)


def test_grad_of_an_object_that_is_no_pytree_says_to_register_it():
    with pytest.raises(
        TypeError, match="holds a _PlainParams, which is neither an array"
    ):
        s2s.grad(_plain_params_loss)(_PlainParams(np.ones(2)), np.ones(2))


def test_argnums_out_of_range_is_a_value_error():
    with pytest.raises(ValueError, match="argnums"):
        s2s.grad(scalar, argnums=2)


def test_has_aux_needs_a_pair():
    with pytest.raises(S2SError, match="must return a pair"):
        s2s.grad(pair_required, has_aux=True)(np.ones(3))


def test_wrong_arguments_are_a_type_error():
    with pytest.raises(TypeError):
        s2s.grad(scalar)(np.ones(3))


def test_messages_render_without_internal_frames():
    err = S2SError("something", None, "do this")
    assert err.render() == "error: something\nhint: do this"
    assert textwrap.dedent(str(err)) == err.render()


LAYERS = "import numpy as np\n\nSCALE = 0.5\n\n\ndef dense(x, W, b):\n    return np.tanh(x @ W + b) * SCALE\n"


def _two_modules(tmp_path, model_source):
    (tmp_path / "layers_mod.py").write_text(LAYERS)
    (tmp_path / "model_mod.py").write_text(model_source)
    sys.path.insert(0, str(tmp_path))
    try:
        for name in ("layers_mod", "model_mod"):
            sys.modules.pop(name, None)
        import model_mod

        return model_mod
    finally:
        sys.path.remove(str(tmp_path))


def test_helpers_and_constants_reached_through_their_module(tmp_path):
    import jax

    model = _two_modules(
        tmp_path,
        "import numpy as np\n\nimport layers_mod\n\n\ndef loss(W, b, x):\n"
        "    return np.sum(layers_mod.dense(x, W, b) ** 2) * layers_mod.SCALE\n",
    )
    rng = np.random.default_rng(0)
    W, b, x = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(4, 3))
    got = s2s.grad(model.loss, (0, 1), backend="numpy")(W, b, x)

    def twin(W, b, x):
        return jax.numpy.sum((jax.numpy.tanh(x @ W + b) * 0.5) ** 2) * 0.5

    for g, w in zip(got, jax.grad(twin, (0, 1))(W, b, x)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_one_name_with_two_values_keeps_both(tmp_path):
    """``SCALE`` is 2.0 in the model and 0.5 in the layers: the generated module holds both (``SCALE_2``)."""
    import jax

    model = _two_modules(
        tmp_path,
        "import numpy as np\n\nimport layers_mod\n\nSCALE = 2.0\n\n\ndef loss(W, b, x):\n"
        "    return np.sum(layers_mod.dense(x, W, b)) * SCALE\n",
    )
    rng = np.random.default_rng(1)
    W, b, x = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(4, 3))

    def twin(W, b, x):
        return jax.numpy.sum(jax.numpy.tanh(x @ W + b) * 0.5) * 2.0

    for backend in ("numpy", "xla"):
        got = s2s.grad(model.loss, (0, 1), backend=backend)(W, b, x)
        for g, w in zip(got, jax.grad(twin, (0, 1))(W, b, x)):
            np.testing.assert_allclose(g, w, rtol=1e-5)


def test_an_argument_rebound_to_its_copy_may_be_written(tmp_path):
    """``x = x.copy()`` makes ``x`` a fresh array: writing into it changes nothing of the caller's."""
    body = "def f(x):\n    x = x.copy()\n    x[:, 0] += 1.0\n    x[1] *= 2.0\n    return np.sum(x * x)"
    path, f = _compile_case(tmp_path, "rebound_copy", body)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(s2s.transform(f, backend="numpy")(x), f(x.copy()))
    eps, numeric = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        numeric[i] = (f(x + d) - f(x - d)) / (2 * eps)
    np.testing.assert_allclose(s2s.grad(f, backend="numpy")(x), numeric, rtol=1e-6)
    assert np.array_equal(
        x, np.arange(6.0).reshape(2, 3)
    )  # the caller's array is untouched


@pytest.mark.parametrize(
    "holder", ["d = {'W': W}", "pair = [W, 1.0]"], ids=["dict", "list"]
)
def test_the_copy_an_aliasing_hint_names_works_when_followed(tmp_path, holder):
    """A container holding ``W`` updated in place: the hint's copy is of ``W`` itself (not of the
    container: ``W = d.copy()`` would make ``W`` a dict), and the function with it transforms.
    """
    read = "d['W']" if holder.startswith("d") else "pair[0]"
    body = f"def f(W):\n    W = W * 1.0\n    {holder}\n    W += 1.0\n    return np.sum({read} ** 2) + np.sum(W)"
    _, f = _compile_case(tmp_path, "held_then_updated", body)
    with pytest.raises(S2SError) as info:
        s2s.grad(f)(np.ones(2))
    assert "copy first (`W = W.copy()`)" in info.value.hint
    followed = body.replace("    W += 1.0", "    W = W.copy()\n    W += 1.0")
    _, g = _compile_case(tmp_path, "hint_followed", followed)
    w = np.array([0.5, -2.0])
    np.testing.assert_allclose(s2s.grad(g)(w), 2 * w + 1.0)


@pytest.mark.parametrize(
    "line, followed",
    [
        ("    y.shape = (2, -1)", "    y = y.reshape(2, -1)"),
        (
            "    y.flat[::2] = 0.0",
            "    flat = y.flatten()\n    flat[::2] = 0.0\n    y = flat.reshape(y.shape)",
        ),
    ],
    ids=["shape", "flat"],
)
def test_attribute_writes_have_hints_that_work_when_followed(tmp_path, line, followed):
    body = f"def f(x):\n    y = x.copy()\n{line}\n    return np.sum(y ** 3)"
    _, f = _compile_case(tmp_path, "attribute_write", body)
    with pytest.raises(S2SError) as info:
        s2s.grad(f)(np.arange(1.0, 7.0))
    assert (
        "flat = y.flatten()" if "flat" in line else "y = y.reshape("
    ) in info.value.hint
    _, g = _compile_case(
        tmp_path, "attribute_write_followed", body.replace(line, followed)
    )
    x = np.arange(1.0, 7.0)
    want = 3 * x**2 * (np.arange(6) % 2 if "flat" in line else 1)
    np.testing.assert_allclose(s2s.grad(g)(x), want, rtol=1e-6)


def test_a_mutable_default_changed_by_calls_is_still_its_default(tmp_path):
    """``trace=[]`` appended to by a plain call: the located error about the append, never "the file
    changed since it was imported" (the literal ``[]`` no longer equals the live default).
    """
    body = "def f(w, *, trace=[]):\n    obj = np.sum(w ** 2)\n    trace.append(obj)\n    return obj"
    path, f = _compile_case(tmp_path, "mutated_default", body)
    f(np.ones(2))
    with pytest.raises(S2SError, match=r"`trace\.append` changes a parameter") as info:
        s2s.grad(f)(np.ones(2))
    assert info.value.origin.path == str(path)


def test_a_complex_valued_transform_says_to_write_real_matrices(tmp_path):
    _, f = _compile_case(
        tmp_path, "fft", "def f(x):\n    return np.sum(np.fft.rfft(x).real)"
    )
    with pytest.raises(S2SError) as info:
        s2s.generate(f, ("grad",))
    assert (
        "gives complex values" in info.value.hint
        and "np.cos(np.outer" in info.value.hint
    )


LIST_INDEXED_BY_A_COMPILED_COUNTER = """
def f(logp, labels):
    ext = [0]
    for l in labels:
        ext += [l, 0]
    S = len(ext)
    {as_array}
    alpha = np.zeros((logp.shape[0], S))
    alpha[0, 0] = logp[0, 0]
    for t in range(1, logp.shape[0]):
        for s in range(S):
            alpha[t, s] = alpha[t - 1, s] + logp[t, ext[{index}]]
    return alpha[-1, -1]
"""


def test_a_list_indexed_by_a_compiled_loops_counter_says_to_make_it_an_array(tmp_path):
    """k26 (CTC's extended labels): read at the counter (``ext[s]``), the list is zipped with the loop
    (``frontend/indexed_loops``, also where the body writes ``alpha[t, s]``) and compiles; read at
    another position (``ext[S - 1 - s]``), the hint names the list and what to write, and following it
    works."""
    logp, labels = np.log(np.full((4, 3), 1 / 3)), [1, 2]
    case = LIST_INDEXED_BY_A_COMPILED_COUNTER.format
    _, zipped = _compile_case(tmp_path, "zipped", case(as_array="", index="s"))
    np.testing.assert_allclose(
        np.asarray(s2s.grad(zipped)(logp, labels)),
        s2s.grad(zipped, backend="numpy")(logp, labels),
    )
    _, f = _compile_case(tmp_path, "listed", case(as_array="", index="S - 1 - s"))
    with pytest.raises(S2SError) as info:
        s2s.grad(f)(logp, labels)
    assert "`ext = np.array(ext)`" in info.value.hint
    _, g = _compile_case(
        tmp_path,
        "arrayed",
        case(as_array="ext = np.array(ext)", index="S - 1 - s"),
    )
    np.testing.assert_allclose(
        np.asarray(s2s.grad(g)(logp, labels)),
        s2s.grad(g, backend="numpy")(logp, labels),
    )


HELPER_CHANGING_ITS_ARGUMENT = """
import numpy as np


def update(p, g, lr=0.1):
    p["w"] -= lr * g
{returned}

def f(x):
    params = {{"w": x * 1.0}}
    for _ in range(2):
        {call}
    return np.sum(params["w"] ** 2)
"""


def test_a_helper_changing_its_argument_called_as_a_statement_hands_the_change_back(
    tmp_path,
):
    """``update(params, g)`` as a statement, ``update`` writing ``p["w"] -= ...``: the call hands the
    dict back (``written_back``) and the gradient is NumPy's; so it is with ``update`` returning it
    and the call assigning it, as the hint for a parameter's dict says."""
    _, f = _compile_case(
        tmp_path,
        "statement",
        HELPER_CHANGING_ITS_ARGUMENT.format(
            returned="", call='update(params, 2 * params["w"])'
        ),
    )
    x = np.array([0.3, -0.2])
    for backend in ("numpy", "xla"):
        np.testing.assert_allclose(
            s2s.grad(f, backend=backend)(x), 2 * x * 0.8**4, rtol=1e-6
        )
    assert " = update_written_back(params, " in s2s.generate(f, ("grad",)).text
    hinted = 'params = update(params, 2 * params["w"])'
    _, g = _compile_case(
        tmp_path,
        "returned",
        HELPER_CHANGING_ITS_ARGUMENT.format(returned="    return p", call=hinted),
    )
    x = np.array([0.3, -0.2])
    for backend in ("numpy", "xla"):
        np.testing.assert_allclose(
            s2s.grad(g, backend=backend)(x), 2 * x * 0.8**4, rtol=1e-6
        )


def test_vmap_axes_given_as_a_pytree_object_say_what_s2s_reads():
    import jax

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class _Pair:
        w: object
        b: object

    with pytest.raises(
        TypeError, match="an object of the pytree class `_Pair` as an axes prefix"
    ):
        s2s.vmap(_plain_params_loss, in_axes=(_Pair(w=None, b=0), 0))
