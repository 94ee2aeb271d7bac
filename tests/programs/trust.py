"""Programs that once gave a wrong answer with no error (issue 10), as users write them: the trust tests' inputs."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

import s2s

SCALE = 2.0
rt = 3.0  # a module constant named like generated code's runtime alias


def mlp_last_layer_by_negative_index(params, x):
    for W, b in params[:-1]:
        x = np.tanh(x @ W + b)
    W, b = params[-1]
    return np.sum(x @ W + b)


def same_layer_by_two_indices(params, x):
    W, b = params[-1]
    W2, b2 = params[1]
    v = params[0][-1]
    return np.sum(np.tanh(x @ W + b) * (x @ W2)) + np.sum(v * b2)


def make_scaler(s):
    def scale(x):
        return s * x

    return scale


double = make_scaler(2.0)
triple = make_scaler(3.0)


def two_closures_from_one_factory(x):
    return np.sum(double(x) + triple(x) ** 2)


def one_line(x): return np.sum(np.sin(x) * SCALE)  # fmt: skip


def one_line_blocks(x):
    if np.sum(x) > 0: y = x * 2  # fmt: skip
    else: y = x * 3  # fmt: skip
    for i in range(2): y = y * x  # fmt: skip
    return np.sum(y)


def scaled_by(xp, rt):
    return xp * rt


def names_of_generated_code(xp, rt):
    for i in range(2):
        xp = np.sin(xp) * rt
    return np.sum(scaled_by(xp, rt)) + np.sum(xp)


def module_constant_named_rt(x):
    return np.sum(np.cos(x) * rt)


def write_through_out(x):
    y = np.zeros(3)
    np.multiply(x, 2.0, out=y)
    z = np.sum(np.sin(x, out=y)) + np.sum(y)
    return z * np.sum(y * x)


def write_through_copyto(x):
    y = np.ones(3)
    np.copyto(y, x * x)
    w = np.zeros(3)
    np.copyto(w, x, where=x > 0.0)
    return np.sum(y * w)


def write_through_fill(x):
    y = np.empty(3)
    y.fill(np.sum(x))
    return np.sum(np.tanh(y) * x)


def _shifted(x, c):
    return np.sin(x) + c


def _shifted_fwd(x, c):
    # one array, not the pair (output, residuals) JAX's convention asks for
    return np.sin(x) + c


def _shifted_bwd(res, g):
    return (g * np.cos(res), g)


shifted_one_value_fwd = s2s.custom_vjp(_shifted)
shifted_one_value_fwd.defvjp(_shifted_fwd, _shifted_bwd)


def uses_fwd_without_pair(x):
    return np.sum(shifted_one_value_fwd(x, 1.0))


def _cube(x):
    return x**3


def _cube_fwd(x):
    return x**3, x


def _cube_bwd(x, g):
    # one array: with a single argument JAX still asks for a tuple `(ct,)`
    return 3 * g * x**2


cube_bwd_without_tuple = s2s.custom_vjp(_cube)
cube_bwd_without_tuple.defvjp(_cube_fwd, _cube_bwd)


def uses_bwd_without_tuple(x):
    return np.sum(cube_bwd_without_tuple(x))


BIAS = np.array([0.5, -0.5, 0.25])


# keyword-only parameters in any order, an array default
def _shift(a, *, d=2.0, e, bias=BIAS):
    return a * d + e + bias


def helper_with_keyword_only_parameters(x):
    return np.sum(np.tanh(_shift(x, e=1.0)) ** 2) + np.sum(_shift(x, d=0.5, e=x))


def complex_literal_on_the_path(x):
    return np.sum(np.real(x * 1j * x))


def complex_constant_meets_the_path(x):
    """A DFT by its complex matrix (Parseval: the value is ``sum(x**2)``): the matrix is made off the
    differentiated path, and its product with ``x`` is on it."""
    n = np.arange(len(x))
    M = np.exp(-2j * np.pi * np.outer(n, n) / len(x))
    magnitude = np.abs(M)  # (real again: no complex value reaches the path through it)
    X = M @ x
    return np.sum(np.abs(X) ** 2) / len(x) + np.sum(magnitude * x)


def complex_argument_meets_the_path(x, M):
    return np.sum(np.abs(M @ x) ** 2)


@jax.jit
def _dense(W, x):
    return jnp.tanh(x @ W)


def _affine(x, a, *, b=1.0):
    return a * x + b


_half = functools.partial(_affine, a=0.5)


def known_wrappers_inside(W, x):
    h = _dense(W, x)
    g = jax.jit(_affine)(h, 2.0)
    k = jax.checkpoint(_dense)(W, x)
    p = functools.partial(_affine, 3.0)(h, b=0.5)
    step = jax.jit(_dense)
    q = step(W, x)

    @jax.jit
    def inner(y):
        return y * W[0, 0]

    return np.sum(g * k + p * q + _half(h) + inner(h))


def _twice(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return 2 * fn(*args)

    return wrapper


@_twice
def _doubled(x):
    return np.sum(x**2)


def calls_a_decorated_helper(x):
    return _doubled(x)


def decorated_local_function(x):
    @_twice
    def inner(y):
        return y * 2

    return np.sum(inner(x))


_batched = jax.vmap(_dense, in_axes=(None, 0))


def calls_a_vmapped_helper(W, x):
    """The JAX tutorial's ``batched_predict = jax.vmap(predict, in_axes=(None, 0))``: s2s.vmap of it."""
    return np.sum(_batched(W, x))


def _dense_total(W, x):
    return np.sum(np.tanh(x @ W))


_dense_grad = jax.grad(_dense_total)


def calls_a_jax_grad_helper(W, x):
    # s2s.grad's, made from the function and options JAX's holds
    return np.sum(_dense_grad(W, x))


_dense_jacobian = jax.jacrev(_dense_total)


def calls_a_jax_jacrev_helper(W, x):
    return np.sum(_dense_jacobian(W, x))


def _scaled_by_default(a, *, c=np.array([0.5, 1.0, 2.0])):
    return a * c


def keywords_numpy_and_jax_spell_differently(x):
    y = np.clip(x, a_min=-0.5, a_max=1.5) + x.clip(0.0, 1.5)
    return np.sum(_scaled_by_default(x, c=x) * y) + np.sum(_scaled_by_default(x))


sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))


def calls_a_module_level_lambda(x):
    return np.sum(sigmoid(x) * x)


def vector_output_not_depending_on_x(x):
    return np.ones(3) * 2.0


def scaled_with_keyword_only(x, y=2.0, *, c=3.0):
    return np.sum(np.sin(x) * y * c)


def writes_with_repeated_indices(x):
    buf = np.zeros(3)
    buf[[0, 0, 2]] += x  # NumPy: the last write to a repeated index wins
    buf[np.array([1, 1, 2])] = x * x
    return np.sum(buf * buf * np.array([1.0, 2.0, 3.0]))


def reads_with_a_list_index(x):
    y = x[[2, 0]] * x[[0, 1]]
    z = np.zeros((2, 3))
    z[[1, 0], [0, 2]] = y
    return np.sum(z * z) + np.sum(x[[True, False, True]])


LOG_2PI = np.log(2.0 * np.pi)  # a NumPy scalar, as module constants usually are


def gaussian_log_likelihood(mu, x):
    return -0.5 * np.sum((x - mu) ** 2 + LOG_2PI)


def loop_over_dict_layers(params, x):
    for layer in params:
        x = np.tanh(x * layer["w"] + layer["b"])
    return np.sum(x)


def _chain(ws, z):
    if not ws:
        return z
    return _chain(ws[1:], np.tanh(z * ws[0]))


def recursion_until_a_tuple_is_empty(x):
    return np.sum(_chain((x, 2.0 * x), np.ones(2)))


def _row_sums(a, keepdims=False):
    out = np.sum(a, axis=1, keepdims=True)
    if not keepdims:
        out = np.squeeze(out, axis=1)
    return out


def static_flag_default_picks_a_branch(x):
    return np.sum(_row_sums(x) ** 2) + np.sum(_row_sums(x, keepdims=True))


def closure_defined_before_a_branch_sets_what_it_reads(x):
    scaled = lambda z: z * c  # reads ``c`` when called, after the if
    if x[0] > 0:
        c = np.sin(x[1])
    else:
        c = np.cos(x[1])
    return np.sum(scaled(x))


def closure_reads_what_a_loop_computed(x):
    s = 1.0
    for i in range(3):
        s = s * x[i]

    def shift(y):
        return y + s

    return np.sum(shift(x) ** 2)


def mlp_of_one_layer(params, x):  # ``params[:-1]`` is empty: the loop runs zero times
    for W, b in params[:-1]:
        x = np.tanh(x @ W + b)
    W, b = params[-1]
    return np.sum(x @ W + b)


def shift_by_hidden_biases(params, x):  # a loop with no residuals, zero times
    for _, b in params[:-1]:
        x = x + b
    W, b = params[-1]
    return np.sum(np.tanh(x @ W + b))


def _logsumexp(a, axis=None, keepdims=False):  # in SciPy's style
    m = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out


def helper_tests_an_argument_is_not_none(x):
    return (
        np.sum(_logsumexp(x, axis=1))
        + _logsumexp(x)
        + np.sum(_logsumexp(x, keepdims=True))
    )


# jax.numpy needs arrays there: s2s writes xp.asarray([...])
def lists_where_numpy_takes_arrays(
    x,
):
    a = np.take(x, [1, 0], axis=0)
    b = np.maximum(x, [0.1, 0.2, 0.3])
    c = np.where(x > 0, x, [1.0, 2.0, 3.0])
    d = np.dot(x, [1.0, 2.0, 3.0])
    e = np.sum([x[0], x[1] ** 2])
    return (
        np.sum(a * x[:2])
        + np.sum(b * c * x)
        + d
        + e
        + np.sum(x.take([2, 1]) ** 2)
        + np.sum(np.reshape(x, [3, 1]))
    )


def lists_joined_by_plus(x):
    pair = [x[0]] + [x[1] * 2.0]
    twice = pair + pair
    return pair[0] * pair[1] + np.sum(np.stack(twice) ** 2)


# which `+` this is depends on the arguments' types
def joins_two_list_arguments(ws, vs):
    both = ws + vs
    return np.sum(np.stack(both) ** 2)


def _scaled(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 3.0 * fn(*args, **kwargs)

    return wrapper


@_scaled
# transformed as the wrapper: `*args`/`**kwargs` bound per call shape
def decorated_model(x, W, scale=1.0):
    return np.sum(np.tanh(x @ W) * scale)


def _sum_of_squares(*terms, weight=1.0, **extra):
    total = 0.0
    for t in terms:
        total = total + np.sum(t**2)
    return weight * total + extra["bias"] * np.sum(terms[0])


def sums_variadic_terms(x):
    return _sum_of_squares(x, np.sin(x), weight=2.0, bias=0.5) + _sum_of_squares(
        x, bias=1.0
    )


def repeats_a_list_argument(ws):  # `ws * 2` repeats the list: no array rule undoes that
    both = ws * 2
    return np.sum(np.stack(both) * np.array([[1.0], [3.0]]))


# XLA's CPU compiler aborted on the two scatters of this gradient
def reversed_then_new_axis(
    x,
):
    return np.sum(x[::-1][None] * np.arange(4.0).reshape(2, 2))


def nan_marked_targets(w, X, y, valid):
    """Targets marked missing with NaN, skipped by ``nanmean``: ``where``'s cotangent is a select, so the
    NaN of the branch not taken never reaches ``w`` (it did through ``g * mask`` on NumPy).
    """
    r = np.where(valid, X @ w - y, np.nan)
    return np.nanmean(r**2)


def float_written_into_int_buffer(w, labels):
    """Floats written into an integer array are truncated: no derivative flows through them."""
    out = np.zeros_like(labels)
    out[0] = 3.0 * w[0]
    out[1:] = w[1:]
    return np.sum(out * w)


def whole_array_write_then_reversed(h):
    # XLA's CPU compiler aborted on `ones.at[...].set(v)[:, ::-1]`; a whole-array write is no scatter
    buf = np.ones((2, 4))
    buf[...] -= np.cos(h)
    return np.sum(buf[:, ::-1] * np.arange(8.0).reshape(2, 4))


def chained_names_rebound(w):
    """``a = b = v`` names one value (one random draw, one array)."""
    a = b = np.tanh(w)
    a = a * 2.0
    return np.sum(a * b)


def _add_in_place(v, b):
    v += b
    return v


def helper_updates_its_argument_and_the_caller_rebinds(w):
    h = 2.0 * w
    h = _add_in_place(h, 1.0)
    return np.sum(h**2)


def repeated_list_of_numbers(w):
    """``[0.0] * n`` holds numbers: writing one item replaces it (only arrays would be shared)."""
    weights = [0.0] * 3
    weights[1] += 2.0
    weights[2] = 0.5
    return sum(c * np.sum(w**k) for k, c in enumerate(weights))


def chained_arrays_written(w):  # refused: NumPy changes both names
    a = b = np.zeros(3)
    a[0] = w[0]
    return np.sum(a) + np.sum(b)


def helper_updates_its_argument_read_later(w):  # refused: NumPy changes `h` too
    h = 2.0 * w
    out = _add_in_place(h, 1.0)
    return np.sum(h**2) + np.sum(out)


def repeated_list_of_arrays_written(w):  # refused: the items are one array
    hs = [np.zeros(2)] * 2
    hs[0][1] = w[0]
    return np.sum(hs[1] * w)


def one_array_under_two_keys_written(w):  # refused: both keys hold one array
    h = np.tanh(w)
    pair = {"a": h, "b": h}
    pair["a"][0] = 5.0
    return np.sum(pair["b"] ** 2)


def one_array_twice_in_a_list_updated(w):  # refused: both items are one array
    x = w * 1.0
    track = [x]
    track.append(x)
    track[0] += 0.5 * w
    return np.sum((track[0] - track[1]) ** 2) + np.sum(track[0] ** 2)


def dict_item_updated_in_place(w):  # accepted: the dict's only item is a new array
    track = {"current": w * 1.0}
    track["current"] -= 0.1 * np.tanh(track["current"])
    return np.sum(track["current"] ** 2)


def _mse(w, X, y):
    return np.mean((X @ w - y) ** 2)


def _scaled_view(v):
    out = v.reshape(-1)
    return out


def helper_result_updated_in_place(w, X, y):
    """A helper returning a new value (``np.mean``): its result shares no memory with ``w``."""
    loss = _mse(w, X, y)
    loss += 1.0
    loss += 0.1 * np.sum(w)
    return loss


def helper_view_updated_in_place(w):  # refused: the helper returns a view of `w`
    v = _scaled_view(w)
    v += 1.0
    return np.sum(v) + np.sum(w)


def pairs_collected_then_unpacked(x):
    """A list of tuples collected by a loop, then looped over with unpacking: each step is one tuple
    (the loop visited the tuple's components, each stacked, and gave a wrong value with no error).
    """
    pairs = []
    for i in range(2):
        pairs.append((x * (i + 1.0), x + i))
    s = 0.0
    for a, b in pairs:
        s = s + np.sum(a * b**2)
    last_a, last_b = pairs[-1]
    return s + np.sum(last_a * last_b) + len(pairs)


def caches_read_backwards(ws, x):
    """The deep-learning course's caches: (A_prev, W, Z) per layer, read in reverse."""
    A = x
    caches = []
    for W in ws:
        Z = A @ W
        caches.append((A, W, Z))
        A = np.maximum(Z, 0.1 * Z)
    total = 0.0
    for A_prev, W, Z in reversed(caches):
        total = total + np.sum(Z * np.mean(A_prev)) * np.sum(W)
    return total + np.sum(A)


def _shifted_by_default(a, c=jax.numpy.array([0.5, -0.25, 1.0])):
    return np.tanh(a) + np.tanh(c)


def jax_constant_on_the_numpy_backend(x):
    """A default made with jax.numpy: a NumPy constant on the NumPy backend (``astype`` of a JAX array failed)."""
    u = _shifted_by_default(x)
    return np.sum(u.astype(np.float64) * 2.0)


def lagged_outputs_filter(a, x):
    """A direct-form IIR filter: the last outputs kept by name, ``y[n]`` written after they are read."""
    y = np.zeros_like(x)
    y1 = y2 = 0.0
    for n in range(len(x)):
        y[n] = x[n] - a[0] * y1 - a[1] * y2
        y2, y1 = y1, y[n]
    return np.sum(y**2)


def lagged_rows(a, X):
    """Rows kept by name are views of ``Y``, but of rows earlier iterations wrote: no later write reaches them."""
    Y = np.zeros_like(X)
    y1 = y2 = np.zeros(X.shape[1])
    for n in range(X.shape[0]):
        Y[n] = np.tanh(X[n] - a[0] * y1) - a[1] * y2
        y2 = y1
        y1 = Y[n]
    return np.sum(Y**2) + np.sum(y1 * y2)


def row_view_written_in_its_iteration(
    w,
):  # refused: NumPy changes the view `y1` too (a matrix's row)
    Y = np.outer(w, w)
    total = 0.0
    for n in range(Y.shape[0]):
        y1 = Y[n]
        Y[n] = Y[n] * 2.0
        total = total + np.sum(y1)
    return total


def row_item_written_in_its_iteration(w):
    """The same with a vector: ``y1 = y[n]`` is a number, a copy, which the write leaves as it was."""
    y = w * w
    total = 0.0
    for n in range(y.shape[0]):
        y1 = y[n]
        y[n] = y[n] * 2.0
        total = total + y1 * y[n]
    return total


def _tanh_weighted(x, a, b):
    return np.sum(np.tanh(a * x) * b)


def _inner_in_a(a, x, b):
    return _tanh_weighted(x, a, b)


def gradient_inside_reaching_a_helper(b, a, x):
    """A gradient taken inside (its module read again) and the outer one reach the same helper for other
    arguments: the two ``_tanh_weighted_vjp`` had one name, the later replacing the earlier (a wrong value).
    """
    g = _inner_in_a_grad(a, x, b)
    return np.sum(g**2) + _tanh_weighted(x, a, b)


_inner_in_a_grad = s2s.grad(_inner_in_a)


def copy_read_by_the_loop_that_updates_it(y0, a):
    """h31: ``y_prev = y`` before a loop that updates ``y`` and reads ``y_prev`` (a Newton or fixed-point
    step): copy propagation put ``y`` for ``y_prev`` inside the loop's body, where ``y`` is the carry, so
    ``y - y_prev`` was zero: a wrong value and gradient with no error."""
    y = y0 * 1.0
    for _ in range(3):
        y_prev = y
        for _ in range(2):
            y = y - 0.5 * (y - y_prev - a * np.tanh(y))
    return np.sum(y**2)


# --- corpus I: an item read out of a dict is the very array the dict holds ---------------------------


def dict_item_handle_updated(w):
    """``W = d["W"]; W *= 2``: NumPy changes ``d["W"]`` too (s2s once computed ``W`` as a copy)."""
    d = {"W": np.tanh(w)}
    W = d["W"]
    W *= 2.0
    return np.sum(d["W"] * w)


def dict_entry_updated_handle_read(w):
    """``W = d["W"]; d["W"] *= 2``: the handle sees the update."""
    d = {"W": np.tanh(w)}
    W = d["W"]
    d["W"] *= 2.0
    return np.sum(W * w)


def state_dict_advanced_through_handles(w):
    """A simulation's state in a dict, advanced in place through names read out of it."""
    state = {"x": w * 1.0, "v": np.zeros_like(w)}
    for _ in range(3):
        x, v = state["x"], state["v"]
        v += 0.1 * (-w * x)
        x += 0.1 * v
    return np.sum(state["x"] ** 2)


def list_argument_item_updated(ws, w):
    """``W = ws[0]`` of a list argument holding arrays: the very array (refused when the code runs)."""
    W = ws[0]
    W *= 2.0
    return np.sum(ws[0] * w)


def functions_in_a_list_handed_to_an_op(w, x):
    """``np.piecewise`` handed local functions in a list, which read ``w``: once a silent zero gradient (its
    conditions held in a name, the op itself, with no rules, rather than the ``np.where`` chain).
    """

    def left(r):
        return r * w

    def right(r):
        return r * w * 2.0

    conditions = [x < 0, x >= 0]
    return np.sum(np.piecewise(x, conditions, [left, right]))


def early_return_in_a_loop_on_data(v):
    """A ``return`` inside a ``for`` loop, under an ``if`` on data (corpus I: an internal error under XLA)."""
    y = 1.0
    for step in range(10):
        y = y - v * 0.1
        if y < 0:
            return step + y * v
    return y


def dict_keyed_by_step(W, idx):
    """min-char-rnn's dicts keyed by the time step."""
    xs, hs = {}, {}
    hs[-1] = np.zeros(3)
    loss = 0.0
    for t in range(len(idx)):
        xs[t] = np.zeros(3)
        xs[t][idx[t]] = 1
        hs[t] = np.tanh(W @ hs[t - 1] + xs[t])
        loss += np.sum(hs[t])
    return loss


def floats_written_into_integers(w):
    """``margins = np.zeros_like(y)`` of integer labels: NumPy truncates what is written, which then has
    no derivative (a tangent carried through it was a silent wrong jvp)."""
    out = np.zeros(3, dtype=int)
    out[:] = 2.5 * w + 4.0
    counts = np.zeros_like(out)
    for i in range(3):
        counts[i] = w[i] * 3.0 + 1.5
    kept = np.zeros(3)
    kept[1:] = out[1:] * w[1:]
    return np.sum(out * w) + np.sum(counts * w**2) + np.sum(kept)


def _normalized_in_place(v):
    v /= np.linalg.norm(v)
    return v


def helper_updates_a_view_of_an_array_read_later(
    w,
):  # refused: NumPy normalizes x[:2] in place
    x = w * 1.0
    u = _normalized_in_place(x[:2])
    return np.sum(x**2) + np.sum(u)


def local_function_updates_its_argument_read_later(w):  # refused: NumPy doubles x
    def scaled_in_place(v):
        v *= 2.0
        return v

    x = w * 1.0
    u = scaled_in_place(x)
    return np.sum(x**2) + np.sum(u)


def local_function_updates_a_row_of_a_matrix_read_later(
    w,
):  # refused: NumPy changes M[0]
    def normalized_in_place(v):
        v /= np.linalg.norm(v)
        return v

    M = np.outer(w, w) + 1.0
    r = normalized_in_place(M[0])
    return np.sum(M) + r[0]


SENSORS = np.array([0, 2])
SENSOR_LIST = [1, 3]


def readings_by_index_arrays_then_updated(k, u0):
    """A heat equation read at sensors every step: ``u[SENSORS]`` (an index array: a copy) kept, then
    ``u -=`` in place; NumPy's readings keep their values."""
    u = u0.copy()
    readings, pairs = [], []
    for n in range(3):
        readings.append(u[SENSORS] + u[SENSOR_LIST] * 0.5)
        first = u[np.array([0, 1])]
        u -= k * (u - np.roll(u, 1))
        pairs.append(first * u[np.arange(2)])
    return np.sum(np.array(readings) ** 2) + np.sum(np.stack(pairs))


def _scaled_in_place(v):
    v *= 2.0
    return np.sum(v)


def _through_another(v):
    return _scaled_in_place(v) + 1.0


def helper_updates_through_another_read_later(
    w,
):  # refused: NumPy doubles x, two helpers down
    x = w * 1.0
    s = _through_another(x)
    return s + np.sum(x * w)


def _first_set(v, c=2.0):
    v[0] = v[0] * c
    return np.sum(v)


def partial_of_a_helper_writing_elements_read_later(w):  # refused: NumPy changes x[0]
    x = w * 1.0
    h = functools.partial(_first_set, c=3.0)
    s = h(x)
    return s + np.sum(x**2)


def _sequence_mask(X, valid_len, value=0.0):
    """d2l's ``sequence_mask``: it writes into the array it is given."""
    mask = np.arange(X.shape[1])[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_scores_rebound(
    w,
):  # accepted: the caller rebinds what it passed, as d2l does
    X = np.outer(w, w)
    lens = np.array([1, 2, 3])
    X = _sequence_mask(X.reshape(3, -1), lens, value=-1e6)
    return np.sum(np.exp(X - np.max(X)))


def view_bound_in_a_branch_then_written(w):  # refused: `v` is `a` when the test holds
    a = np.zeros(3)
    b = w * 1.0
    if w[0] > -10.0:
        v = a
    else:
        v = b
    a[0] = w[0]
    return np.sum(v * w)


def row_bound_in_a_branch_then_written(
    w,
):  # refused where the code runs: `prev` views a row of `C`
    C = np.zeros((3, 3))
    c0 = np.zeros(3)
    s = 0.0
    for t in range(3):
        if t > 0:
            prev = C[t - 1]
        else:
            prev = c0
        C[t - 1] = np.tanh(w * (t + 1.0))
        s = s + np.sum(prev * w)
    return s


def previous_row_or_start(w):
    """Karpathy's LSTM: ``prev = C[t - 1] if t > 0 else c0`` then ``C[t] = ...``: ``C`` and ``c0`` share
    nothing (the row is read before ``C`` is written), accepted in both spellings."""
    C = np.zeros((3, 3))
    c0 = np.tanh(w)
    for t in range(3):
        prev = C[t - 1] if t > 0 else c0
        C[t] = np.tanh(w * (t + 1.0) + prev)
    D = np.zeros((3, 3))
    for t in range(3):
        if t > 0:
            prev = D[t - 1]
        else:
            prev = c0
        D[t] = np.sin(w + prev)
    return np.sum(C) + np.sum(D**2)


# custom rules reached through an inner ``jax.vmap`` (corpus Y: the rule was lost, silently)
@jax.custom_vjp
def gradient_scaled(v, s):
    return v


def _gradient_scaled_fwd(v, s):
    return v, s


def _gradient_scaled_bwd(s, g):
    return g * s, jnp.zeros_like(s)


gradient_scaled.defvjp(_gradient_scaled_fwd, _gradient_scaled_bwd)


@jax.custom_jvp
def tangent_halved(v):
    return jnp.sin(v)


tangent_halved.defjvp(lambda p, t: (jnp.sin(p[0]), 0.5 * jnp.cos(p[0]) * t[0]))


def scaled_row(v):
    return gradient_scaled(v, 0.5) ** 2


def custom_vjp_mapped_directly(x):
    return jnp.sum(jax.vmap(gradient_scaled, in_axes=(0, None))(x, 0.5) ** 2)


def custom_vjp_mapped_in_a_lambda(x):
    return jnp.sum(jax.vmap(lambda v: gradient_scaled(v, 0.25) * v)(x))


def custom_vjp_mapped_in_a_helper(x):
    return jnp.sum(jax.vmap(scaled_row)(x))


def custom_jvp_mapped(x):
    return jnp.sum(jax.vmap(tangent_halved)(x) * x)


@dataclasses.dataclass
class ScaleLayer:
    """A mutable dataclass (``eq=True`` leaves it unhashable) with ``__call__``."""

    k: float = 2.0

    def __call__(self, v):
        return jnp.tanh(v) * self.k


def unhashable_layer_called(x):
    layer = ScaleLayer(k=3.0)
    y = layer(x)
    return jnp.sum(y**2)


def _bisected_root(c, lo=0.0, hi=3.0):
    for _ in range(20):
        mid = 0.5 * (lo + hi)
        if mid**3 - c > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def bisection_in_a_helper(c, w):
    """A helper whose value depends on ``c`` only through the ``if`` of its loop: ``c``'s gradient is
    zero (as ``jax.grad`` of a ``jnp.where`` port), never None, beside ``w``'s."""
    return _bisected_root(np.sum(c)) * np.sum(w**2) + np.sum(c) * 0.0


def _steps_below(c):
    k = 0.0
    while k * k < c:
        k = k + 1.0
    return k


def counted_by_a_while_helper(c, w):
    return _steps_below(np.sum(c**2)) * np.sum(w)
