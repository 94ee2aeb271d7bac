"""Transformations made inside a function, as JAX users write them: ``jax.vmap(f)(xs)``, ``jax.grad`` for a
gradient penalty, s2s's own spellings."""

import functools
from functools import partial

import jax
import jax.numpy as jnp

import s2s


def example_loss(x, w):
    h = jnp.tanh(x @ w)
    if jnp.sum(h) > 0:  # data-dependent: jax.vmap of this would fail; s2s batches it
        h = h * 2.0
    return jnp.sum(h**2)


def twin_example_loss(x, w):
    h = jnp.tanh(x @ w)
    h = jnp.where(jnp.sum(h) > 0, h * 2.0, h)
    return jnp.sum(h**2)


def mean_loss(w, xs):
    return jnp.mean(jax.vmap(example_loss, in_axes=(0, None))(xs, w))


def mean_loss_s2s(w, xs):
    return s2s.vmap(example_loss, in_axes=(0, None))(xs, w).mean()


def gradient_penalty(w, xs):
    grads = jax.vmap(jax.grad(example_loss, argnums=1), in_axes=(0, None))(xs, w)
    return jnp.sum(grads**2)


def value_and_grad_inside(w, xs):
    value, grad = jax.value_and_grad(mean_loss)(w, xs)
    return value + jnp.sum(grad * w)


def twin_mean_loss(w, xs):
    return jnp.mean(jax.vmap(twin_example_loss, in_axes=(0, None))(xs, w))


def twin_gradient_penalty(w, xs):
    grads = jax.vmap(jax.grad(twin_example_loss, argnums=1), in_axes=(0, None))(xs, w)
    return jnp.sum(grads**2)


def twin_value_and_grad_inside(w, xs):
    value, grad = jax.value_and_grad(twin_mean_loss)(w, xs)
    return value + jnp.sum(grad * w)


def local_function(w, xs):
    def f(x):
        return jnp.sum(jnp.tanh(x @ w))

    return jnp.sum(jax.vmap(f)(xs))


def directional_slope(x, t, w):
    # a directional derivative of the per-example loss: vmapped, this is vmap of jvp
    value, slope = jax.jvp(example_loss, (x, w), (t, jnp.zeros_like(w)))
    return slope


def twin_directional_slope(x, t, w):
    return jax.jvp(twin_example_loss, (x, w), (t, jnp.zeros_like(w)))[1]


def mean_loss_lambda(w, xs):
    # the JAX idiom: a lambda that closes over the weights
    return jnp.mean(jax.vmap(lambda x: example_loss(x, w))(xs))


def lambda_penalty(w, xs):
    # jax.grad of a lambda that calls the loss with closed-over data
    g = jax.grad(lambda v: mean_loss(v, xs))(w)
    return jnp.sum(g**2)


def twin_lambda_penalty(w, xs):
    g = jax.grad(lambda v: twin_mean_loss(v, xs))(w)
    return jnp.sum(g**2)


def lambda_doing_more(w, xs):
    # the lambda does more than call one function: lifted, ``w`` its first parameter
    return jnp.sum(jax.vmap(lambda x: example_loss(x, w) + 1.0)(xs))


def twin_lambda_doing_more(w, xs):
    return jnp.sum(jax.vmap(lambda x: twin_example_loss(x, w) + 1.0)(xs))


def least_squares_step(w, xs):
    # the JAX docs' inline loss: ``jax.grad`` of a lambda whose body is the math itself
    y = jnp.sum(xs, axis=1, keepdims=True)
    g = jax.grad(lambda v: jnp.mean((xs @ v - y) ** 2))(w)
    return jnp.sum((w - 0.1 * g) ** 2)


def inner_sgd(w, xs):
    """A local ``def`` reading the enclosing data, differentiated in a loop, and called directly after."""

    def inner_loss(v, scale):
        h = jnp.tanh(xs @ v) * scale
        return jnp.mean(h**2), h

    for _ in range(2):
        (value, h), g = jax.value_and_grad(inner_loss, has_aux=True)(w, 2.0)
        w = w - 0.1 * g
    return value + jnp.sum(h[0]) + inner_loss(w, 1.0)[0]


def aliased_local_gradient(w, xs):
    # ``gf = jax.grad(f)`` of a lambda held in a name, called later with a second argument
    f = lambda v, s: jnp.sum(jnp.sin(xs @ v) * s)
    gf = jax.grad(f)
    return jnp.sum(gf(w, 0.5) * w)


def local_slope(w, xs):
    # ``jax.jvp`` of a local function: a directional derivative along ``w``
    def f(v):
        return jnp.sum(jnp.cos(xs @ v))

    return jax.jvp(f, (w,), (w,))[1]


def _sharp(w, xs):
    return jnp.sum(jnp.tanh(xs @ w) ** 2), w


grad_sharp = jax.grad(
    lambda w, xs: _sharp(w, xs)[0]
)  # made at module level, the docs' spelling
value_and_grad_sharp = jax.value_and_grad(_sharp, has_aux=True)


def module_level_gradients(w, xs):
    (value, aux), g = value_and_grad_sharp(w, xs)
    return value + jnp.sum(grad_sharp(w, xs) * g) + jnp.sum(aux)


def _field_value(w, t, x):
    return jnp.sum(jnp.tanh(w[0] * t + w[1] * x) * w[2])


# a PINN's second derivative made at module level: ``jax.grad`` of a ``jax.grad``
field_xx = jax.grad(jax.grad(_field_value, argnums=2), argnums=2)


def module_level_second_derivative(w, xs):
    return jnp.sum(jnp.stack([field_xx(w, 0.3, x) for x in xs[:, 0]]) ** 2)


def local_reading_local(w, xs):
    def act(h):
        return jnp.tanh(h)

    def f(v):
        return jnp.sum(act(xs @ v))

    return jnp.sum(jax.grad(f)(w))


def pinn_residual(w, xs):
    """A physics-informed residual: a local solution ``u(t)`` closing over ``w`` and ``xs``, its second
    derivative at each collocation point (``jnp.array`` of the input, as PINNs write it).
    """

    def u(t):
        return jnp.sum(jnp.tanh(xs @ w @ jnp.array([t, t * t])))

    u_tt = jax.grad(jax.grad(u))
    ts = xs[:, 0]
    r = jax.vmap(u_tt)(ts) + jax.vmap(u)(ts)
    return jnp.mean(r**2)


def laplacian_of_a_local_gradient(w, xs):
    """``u_x = jax.grad(...)`` of a lambda, read by a lambda inside a vmapped local function: each lifted
    function writes the definitions it reads first."""
    u_x = jax.grad(lambda x: jnp.sum(jnp.tanh(x @ w)))

    def lap(x):
        return jnp.sum(jax.grad(lambda z: jnp.sum(u_x(z) ** 2))(x))

    return jnp.mean(jax.vmap(lap)(xs) ** 2)


def _field(v, w):
    return jnp.tanh(w.T @ v)


def _potential(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def jacobians_inside(w, xs):
    """``jax.jacfwd`` of a function of the program and ``jax.jacrev`` of a lambda, inside: the ``jax.vmap``
    of ``jax.jvp`` (``jax.grad``) they are made of."""
    J = jax.jacfwd(_field)(xs[0], w)
    R = jax.jacrev(lambda v: jnp.tanh(w.T @ v))(xs[1])
    return jnp.sum(J**2) + jnp.sum(R * J)


def newton_steps(w, xs):
    """Newton's method on a local energy: ``jax.grad`` and ``jax.hessian`` (held in a name) of it."""

    def energy(v):
        return jnp.sum(jnp.tanh(w.T @ v) ** 2) + 0.1 * jnp.sum(v**4)

    hess = jax.hessian(energy)
    v = xs[0] * 0.1
    for _ in range(2):
        v = v - jnp.linalg.solve(hess(v) + 2.0 * jnp.eye(5), jax.grad(energy)(v))
    return energy(v)


def laplacian_residual(w, xs):
    """A PINN's Laplacian, ``jnp.trace(jax.hessian(u, argnums=1)(w, x))``, at each point (mapped)."""

    def lap(x):
        return jnp.trace(jax.hessian(_potential, argnums=1)(w, x))

    return jnp.mean(jax.vmap(lap)(xs) ** 2)


def jacfwd_of_a_gradient(w, xs):
    """``du = jax.grad(u)``, then ``jax.jacfwd(du)``: forward over reverse, by hand."""
    du = jax.grad(_potential, argnums=1)
    H = jax.jacfwd(du, argnums=1)(w, xs[0])
    return jnp.sum(H * jnp.eye(5)) + jnp.sum(H[0] ** 2)


def _q_values(w, x):
    return jnp.tanh(x @ w)


def per_example_picks(w, xs):
    """A DQN's TD target: each example's network output indexed by its own action, under ``jax.vmap``."""
    actions = jnp.arange(4) % 2
    picked = jax.vmap(lambda x, a: _q_values(w, x)[a] ** 2)(xs, actions)
    table = jnp.asarray(
        w
    )  # (JAX indexes a NumPy array by a traced index no more than NumPy does)
    rows = jax.vmap(lambda i, x: jnp.sum(table[i] * x[1:3]))(jnp.arange(4) % 5, xs)
    return jnp.mean(picked) + jnp.sum(rows)


def _network(w, t):
    h = jnp.array([t, 1.0])
    for _ in range(2):
        h = jnp.tanh(w[:2] @ h)
    return jnp.sum(h)


def pinn_jacfwd_of_a_gradient(w, xs):
    """The PINN tutorial's ``d2u = jax.jacfwd(jax.grad(u, argnums=1), argnums=1)`` over a network with a
    loop (the forward tangent's carry ignored after it: its cotangent is zeros), per point.
    """
    du = jax.grad(_network, argnums=1)
    d2u = jax.jacfwd(du, argnums=1)
    res = jax.vmap(lambda t: d2u(w, t) + _network(w, t))(xs[:, 0])
    return jnp.mean(res**2)


def _huber(x, delta=1.0):
    ax = jnp.abs(x)
    return jnp.where(ax <= delta, 0.5 * x**2, delta * (ax - 0.5 * delta))


def per_example_huber(w, xs):
    """A per-example loss under ``jax.vmap`` whose ``jnp.where`` mixes ranks (the batched module's ranks
    are Python ints when its gradient reads it again)."""
    return jnp.mean(jax.vmap(lambda x: _huber(jnp.sum(x @ w)))(xs))


def vectorized_soft_threshold(w, xs):
    """``jnp.vectorize`` of a lambda and of a helper: an elementwise map, read as ``np.vectorize``'s (a
    ``vmap`` over every element)."""
    shrink = jnp.vectorize(lambda v: jnp.sign(v) * jnp.maximum(jnp.abs(v) - 0.1, 0.0))
    return jnp.sum(shrink(xs @ w) ** 2) + jnp.sum(jnp.vectorize(_huber)(w))


def checkpointed_lambda_blocks(w, xs):
    """Residual blocks each run as ``jax.checkpoint(lambda h: ...)(h)`` in a loop, a ``jax.jit`` of a
    lambda and a lambda called where it is written (swish): each the local function it is.
    """
    h = xs @ w
    for scale in (0.5, 1.5):
        h = jax.checkpoint(lambda z: z + scale * jnp.tanh(z))(h)
    h = jax.jit(lambda z, s: z * s)(h, 0.3)
    return jnp.sum((lambda z: z * jax.nn.sigmoid(z))(h) ** 2)


def _pairwise(kernel, xs):
    """A helper that maps the function it is given over pairs (the GP libraries' Gram matrix)."""
    return jax.vmap(lambda a: jax.vmap(lambda b: kernel(a, b))(xs))(xs)


def _cross(kernel, xs, ys):
    return jax.vmap(jax.vmap(kernel, (None, 0)), (0, None))(xs, ys)


def gram_of_a_passed_lambda(w, xs):
    """A kernel closing over the parameters, passed to a helper that maps it (lambdas inside)."""
    scale = jnp.sum(w**2)
    kernel = lambda a, b: jnp.exp(-jnp.sum((a - b) ** 2) / scale) * w[0, 0]
    return jnp.sum(_pairwise(kernel, xs) * 0.5)


def gram_of_a_passed_def(w, xs):
    """A local ``def`` mapped by name in the helper (``jax.vmap(jax.vmap(kernel, ...), ...)``)."""
    h = xs @ w

    def kernel(a, b):
        return jnp.tanh(jnp.dot(a, b)) + jnp.sum(w[:, 1]) * a[0]

    return jnp.sum(_cross(kernel, h, h[:3]))


def map_of_an_enclosing_function(w, xs):
    """A local function's transformation of a local function of the one enclosing it."""

    def score(x):
        return jnp.sum(jnp.sin(x @ w))

    def scores(batch):
        return jax.vmap(score)(batch) + jax.vmap(lambda x: score(2.0 * x))(batch)

    return jnp.sum(scores(xs) ** 2)


def enclosing_variable_rebound(w, xs):
    def score(x):
        return jnp.sum(x @ w)

    def scores(batch):
        w = 2.0
        return jax.vmap(score)(batch) * w

    return jnp.sum(scores(xs))


def local_with_default(w, xs):
    def f(v, scale=2.0):
        return jnp.sum(xs @ v) * scale

    return jnp.sum(jax.grad(f)(w))


def lambda_with_wrong_in_axes(w, xs):
    return jnp.sum(jax.vmap(lambda x: example_loss(x, w), in_axes=(0, 0))(xs))


def example_score(x, w):
    h = jnp.dot(x, w)
    return jnp.sum(h**2) + jnp.inner(h, jnp.tanh(h))


batched_score = jax.vmap(
    example_score, in_axes=(0, None)
)  # the JAX tutorial's module-level spelling


def products_per_example(w, xs):
    """``jnp.dot``/``jnp.inner`` per example: ``jax.vmap`` made inside and at module level."""
    return jnp.sum(jax.vmap(example_score, in_axes=(0, None))(xs, w)) + jnp.mean(
        batched_score(xs, w)
    )


def einsum_example_loss(x, w):
    return jnp.sum(jnp.einsum("j,jk->k", x, w) ** 2)


def einsum_mean_loss(w, xs):
    """The batched helper's ``einsum`` differentiated (``rt.batching.einsum``'s rule)."""
    return jnp.mean(jax.vmap(einsum_example_loss, in_axes=(0, None))(xs, w))


def _affine_example(p, x):
    return jnp.tanh(x @ p["w"] + p["b"])


def vmap_named_with_a_dict_prefix(w, xs):
    """``f = jax.vmap(...)`` kept in a name, ``in_axes`` a dict prefix (a bias per example), ``out_axes=1``."""
    p = {"w": w, "b": 0.1 * xs[:, :2]}
    f = jax.vmap(_affine_example, in_axes=({"w": None, "b": 0}, 0), out_axes=1)
    out = f(p, xs)
    return jnp.sum(out**2) + jnp.sum(out[0])


def _curvature(w, xs):
    return jnp.sum(jnp.sin(xs @ w) ** 2) + 0.25 * jnp.sum(w**4)


def hvp_penalty(w, xs):
    # the autodiff cookbook's Hessian-vector product, forward over reverse, of a lambda closing over xs
    hv = jax.jvp(lambda v: jax.grad(_curvature)(v, xs), (w,), (jnp.ones_like(w),))[1]
    # and a lambda whose parameters come in another order than the function's
    slope = jax.jvp(lambda b, a: _curvature(a, b), (xs, w), (xs * 0.5, w))[1]
    return jnp.sum(hv * w) + slope


grad_curvature = jax.grad(
    _curvature
)  # made at module level, then handed to jax.jvp inside


def hvp_of_a_module_level_gradient(w, xs):
    hv = jax.jvp(grad_curvature, (w, xs), (jnp.ones_like(w), jnp.zeros_like(xs)))[1]
    return jnp.sum(hv * w)


def _cookbook_hvp(f, primals, tangents):
    # the cookbook's helper: primals and tangents arrive as tuples held in names
    return jax.jvp(jax.grad(f, argnums=(0, 1)), primals, tangents)[1]


def _scaled_cosines(x, k=0.5):
    return jnp.sum(jnp.cos(x) * k)


def hvp_of_a_function_with_a_default(w, xs):
    """``jax.jvp(jax.grad(f), (x,), (t,))`` of an ``f`` whose later parameter keeps its default."""
    hv = jax.jvp(jax.grad(_scaled_cosines), (w,), (jnp.sin(w),))[1]
    return jnp.sum(hv * w) + jnp.sum(xs)


def hvp_of_tuples_in_names(w, xs):
    hw, hx = _cookbook_hvp(_curvature, (w, xs), (jnp.cos(w), 0.5 * xs))
    return jnp.sum(hw * w) + jnp.sum(hx**2)


def _task_mse(p, x, y):
    return jnp.mean((jnp.tanh(x * p["w"] + p["b"]) - y) ** 2)


def maml_task_loss(p, x, y):
    """MAML (the JAX tutorial's): one inner SGD step by ``jax.grad`` of dict parameters, then the loss."""
    g = jax.grad(_task_mse)(p, x, y)
    adapted = jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)
    return _task_mse(adapted, x, y)


def maml_batch_loss(p, xs, ys):
    return jnp.mean(jax.vmap(maml_task_loss, in_axes=(None, 0, 0))(p, xs, ys))


def _dot_loss(w, x):
    return jnp.dot(jnp.tanh(x), w) ** 2


def clipped_step_loss(w, xs):
    """DP-SGD's step: per-example gradients by ``jax.vmap(jax.grad(...))``, differentiated again."""
    grads = jax.vmap(jax.grad(_dot_loss), in_axes=(None, 0))(w, xs)
    return jnp.sum((w - 0.1 * jnp.mean(grads, axis=0)) ** 2)


def maps_a_map(W, xs):
    """``jax.vmap`` over weights of ``local_function``, which maps over examples itself."""
    return jnp.sum(jax.vmap(local_function, in_axes=(0, None))(W, xs) ** 2)


def hessian_of_two_arguments(w, xs):
    return jnp.sum(jax.hessian(_potential, argnums=(0, 1))(w, xs[0])[0][0])


def library_functions_mapped(w, xs):
    """``jax.vmap(jnp.dot)`` and friends: a library function transformed, called at once or by a name
    (``xs`` (4, 5), ``w`` (5, 2))."""
    scores = jax.vmap(jnp.dot, in_axes=(0, None))(xs, w)  # (4, 2)
    outer_rows = jax.vmap(jnp.outer)(xs, xs)  # (4, 5, 5)
    diagonals = jax.vmap(jnp.diag)(outer_rows)  # (4, 5)
    softmax_rows = jax.vmap(jax.nn.softmax)
    slopes = jax.grad(jnp.sum)(jnp.tanh(scores))
    return (
        jnp.sum(softmax_rows(scores) * scores)
        + jnp.mean(diagonals)
        + jnp.sum(slopes**2)
    )


def decorated_local_map(w, xs):
    """``@jax.jit`` over ``@partial(jax.vmap, in_axes=(0, None))`` on a local function (the JAX
    documentation's style): the undecorated function, then the transformations applied to it.
    """

    @jax.jit
    @partial(jax.vmap, in_axes=(0, None))
    def per_example(x, w):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    return jnp.mean(per_example(xs, w))


def partial_of_vmap_applied(w, xs):
    """``functools.partial(jax.vmap, in_axes=...)(fn)``: ``jax.vmap(fn, in_axes=...)``."""
    batched = functools.partial(jax.vmap, in_axes=(0, None))(example_loss)
    return jnp.mean(batched(xs, w))


def decorated_local_gradient(w, xs):
    """``@jax.grad`` on a local function closing over ``xs``."""

    @jax.grad
    def slope(w):
        return jnp.sum(jnp.sin(xs @ w))

    return jnp.sum(slope(w) ** 2)


def _u_solution(w, t):
    return jnp.sum(jnp.tanh(w[:, 0] * t + w[:, 1]))


def pinn_derivatives_held_in_names(w, xs):
    """JAX's PINN style: ``u_t = jax.grad(u, argnums=1)`` of a module-level solution held in a name, and
    its own derivative, mapped over the collocation points by ``jax.vmap`` of the names.
    """
    u_t = jax.grad(_u_solution, argnums=1)
    u_tt = jax.grad(u_t, argnums=1)
    ts = xs[:, 0]
    r = jax.vmap(u_tt, in_axes=(None, 0))(w, ts) + jax.vmap(u_t, in_axes=(None, 0))(
        w, ts
    )
    return jnp.mean(r**2)


def _layer_output(w, xs):
    return {"h": jnp.tanh(xs @ w), "penalty": jnp.sum(w**2)}


def pullback_inside(w, xs):
    """JAX's autodiff cookbook: ``out, vjp_fn = jax.vjp(f, *primals)`` then ``vjp_fn(ct)``, a tree's
    value and cotangent, two primals; and ``has_aux``."""
    out, vjp_fn = jax.vjp(lambda a, b: jnp.tanh(a * b), w[:, 0], xs[0, :5])
    ga, gb = vjp_fn(jnp.cos(out))
    tree, pull = jax.vjp(_layer_output, w, xs)
    gw, _ = pull({"h": jnp.ones_like(tree["h"]), "penalty": 0.5})
    value, pull_aux, aux = jax.vjp(lambda v: (jnp.sin(v), jnp.sum(v)), w, has_aux=True)
    (gv,) = pull_aux(value)
    return jnp.sum(ga * gb) + jnp.sum(gw**2) + jnp.sum(gv) * aux + jnp.sum(out)


def linearized_inside(w, xs):
    """``y, f_jvp = jax.linearize(f, x)`` then ``f_jvp(t)``: a library function and one of the program."""
    y, f_jvp = jax.linearize(jnp.sin, w)
    loss, l_jvp = jax.linearize(example_loss, xs[0], w)
    return jnp.sum(f_jvp(jnp.ones_like(w)) * y) + l_jvp(xs[1], w) * loss
