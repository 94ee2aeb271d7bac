"""What runs is what is transformed, at the API: issue 10's cases where the function handed to s2s was
not the code it differentiated.

1. (test_api_binding.py) Calls bind with Python's rules in every API
   function; ``functools.partial`` binds its arguments (below).
2. Wrappers: ``jax.jit``/``jax.checkpoint`` are looked through, a
   ``functools.wraps`` decorator is read as its own code, s2s's transformed
   functions as their generated modules; ``jax.vmap``, ``jax.grad``,
   ``np.vectorize``, methods, objects are errors naming them.
3. Globals (constants, helpers, closure cells, other modules') rebound after a
   transform are seen by new and existing transformed functions.
4. (test_api_trust_source.py) A source file edited after import is an error.
5. Complex inputs are refused with a TypeError.

Oracles: ``jax.grad`` (``jax.vjp``, ...) of a ``jax.numpy`` twin of the same
source, or the NumPy function itself for values. Test modules are written to
temporary files, since s2s reads source from files.
"""

import functools
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from api_modules import W, X, assert_trees_close
from api_modules import write_module as _module

import s2s

jax.config.update("jax_enable_x64", True)


# --- 2. wrappers ----------------------------------------------------------------------------------------

WRAPPED, WRAPPED_TWIN = _module("""
    import functools

    import numpy as np


    def twice(fn):
        @functools.wraps(fn)
        def wrapper(x):
            return 2.0 * fn(x)

        return wrapper


    def twice_star(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return 2.0 * fn(*args)

        return wrapper


    @twice
    def doubled(x):
        return np.sum(np.sin(x) * x)


    @twice_star
    def doubled_star(x):
        return np.sum(np.sin(x) * x)


    def noisy(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            print("called")
            return fn(*args)

        return wrapper


    @noisy
    def printed(x):
        return np.sum(np.sin(x) * x)


    def guarded(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            try:
                return fn(*args)
            finally:
                pass

        return wrapper


    @guarded
    def unreadable(x):
        return np.sum(np.sin(x) * x)


    def plain(x):
        return np.sum(np.sin(x) * x)


    def scalar(x):
        return np.sin(x) * x**3


    def elementwise(x):
        return np.sin(x) * x


    def three(a, b, c=0.5, *, d=2.0):
        return np.sum(a * np.cos(b) * c) + d * np.sum(b**2)


    class Model:
        def loss(self, x):
            return np.sum(x**2)

        def __call__(self, x):
            return np.sum(x**2)
    """)


def test_a_wraps_decorator_is_read_as_its_own_code():
    assert_trees_close(
        s2s.grad(WRAPPED.doubled)(X), jax.grad(WRAPPED_TWIN["doubled"])(X)
    )


def test_a_wraps_decorator_with_star_args_keeps_what_the_wrapper_does():
    """``return 2.0 * fn(*args)``: the wrapper is transformed at the call's shape, its doubling kept."""
    assert_trees_close(
        s2s.grad(WRAPPED.doubled_star)(X), jax.grad(WRAPPED_TWIN["doubled_star"])(X)
    )


def test_a_wraps_decorator_that_prints_prints_at_every_call(capsys):
    grad, want = s2s.grad(WRAPPED.printed), jax.grad(WRAPPED_TWIN["printed"])(X)
    for _ in range(2):
        capsys.readouterr()
        assert_trees_close(grad(X), want)
        assert capsys.readouterr().out == "called\n"


def test_a_wraps_decorator_s2s_cannot_read_is_an_error_at_the_wrapper():
    with pytest.raises(s2s.S2SError, match="`try` statement") as info:
        s2s.grad(WRAPPED.unreadable)(X)
    wrapper_line = next(
        i
        for i, line in enumerate(
            pathlib.Path(WRAPPED.__file__).read_text().splitlines(), 1
        )
        if line.strip() == "try:"
    )
    assert (info.value.origin.path, info.value.origin.line) == (
        WRAPPED.__file__,
        wrapper_line,
    )


def test_jit_of_a_transformed_function_is_its_generated_code():
    x = 0.7
    second = s2s.grad(jax.jit(s2s.grad(WRAPPED.scalar)))(x)
    np.testing.assert_allclose(second, jax.grad(jax.grad(WRAPPED_TWIN["scalar"]))(x))
    hess = s2s.jacfwd(jax.jit(s2s.grad(WRAPPED.plain)))(X)
    np.testing.assert_allclose(hess, jax.hessian(WRAPPED_TWIN["plain"])(X))


def test_a_transformed_function_called_inside_is_never_unwrapped_into_the_original():
    module, twin = _module("""
        import jax
        import numpy as np

        import s2s


        def cube(x):
            return np.sum(np.sin(x) * x**3)


        jit_gradient = jax.jit(s2s.grad(cube))


        def uses(x):
            return np.sum(jit_gradient(x) * x)
        """)
    want = jax.grad(lambda x: jnp.sum(jax.grad(twin["cube"])(x) * x))(X)
    assert_trees_close(s2s.grad(module.uses)(X), want)


@pytest.mark.parametrize(
    "wrap",
    [jax.jit, jax.checkpoint, jax.remat, s2s.transform],
    ids=["jit", "checkpoint", "remat", "transform"],
)
def test_wrappers_with_the_same_math_are_looked_through(wrap):
    assert_trees_close(
        s2s.grad(wrap(WRAPPED.plain))(X), jax.grad(WRAPPED_TWIN["plain"])(X)
    )
    assert_trees_close(
        s2s.jacrev(wrap(WRAPPED.elementwise))(X),
        jax.jacrev(WRAPPED_TWIN["elementwise"])(X),
    )


def test_partial_binds_its_arguments_and_argnums_count_the_rest():
    f, twin = WRAPPED.three, WRAPPED_TWIN["three"]
    cases = [  # (bound arguments, bound keywords, argnums, arguments of the call)
        ((X,), {}, 0, (W, 0.25)),
        ((X,), {"d": 3.0}, (0, 1), (W, 0.25)),
        ((), {"c": 1.5}, (0, 1), (X, W)),
        ((X, W), {}, 0, (0.25,)),
        ((X,), {}, -1, (W,)),
    ]
    for bound, keywords, argnums, rest in cases:
        got = s2s.grad(functools.partial(f, *bound, **keywords), argnums)(*rest)
        want = jax.grad(functools.partial(twin, *bound, **keywords), argnums)(*rest)
        assert_trees_close(got, want)
    nested = s2s.grad(jax.jit(functools.partial(f, X)), 0)(W, d=0.5)
    assert_trees_close(nested, jax.grad(functools.partial(twin, X), 0)(W, d=0.5))
    # a partial of a transformed function
    of_transformed = s2s.grad(functools.partial(s2s.grad(f, 2), X))(W)
    assert_trees_close(
        of_transformed, jax.grad(lambda b: jax.grad(twin, 2)(X, b, 0.5))(W)
    )


def test_negative_argnums_count_the_arguments_passed_as_in_jax():
    f, twin = WRAPPED.three, WRAPPED_TWIN["three"]
    for call in ((X, W), (X, W, 0.3)):
        assert_trees_close(s2s.grad(f, -1)(*call), jax.grad(twin, -1)(*call))
        assert_trees_close(
            s2s.jacrev(f, (0, -1))(*call), jax.jacrev(twin, (0, -1))(*call)
        )


@pytest.mark.parametrize(
    "make, named",
    [
        (lambda: jax.vmap(WRAPPED.elementwise), "jax.vmap"),
        (lambda: jax.grad(WRAPPED.plain), "jax.grad"),
        (lambda: jax.value_and_grad(WRAPPED.plain), "jax.value_and_grad"),
        (lambda: jax.hessian(WRAPPED.plain), "jax.hessian"),
        (lambda: np.vectorize(WRAPPED.scalar), "np.vectorize"),
        (lambda: np.sin, "builtin"),
        (lambda: s2s.jacfwd(WRAPPED.plain), "s2s.jacfwd"),
        (lambda: jax.jit(jax.vmap(WRAPPED.elementwise)), "jax.vmap"),
    ],
    ids=[
        "vmap",
        "grad",
        "value_and_grad",
        "hessian",
        "vectorize",
        "builtin",
        "jacobian",
        "jit_vmap",
    ],
)
@pytest.mark.parametrize("api", ["grad", "jacfwd", "transform"])
def test_wrappers_s2s_cannot_see_through_are_errors_naming_them(make, named, api):
    if (api, named) == ("jacfwd", "s2s.jacfwd"):
        # a Jacobian of a Jacobian is the Hessian (``test_a_jacobian_of_a_jacobian_is_the_hessian``)
        x = np.array([0.3, -1.2])
        np.testing.assert_allclose(
            s2s.jacfwd(make())(x), jax.hessian(WRAPPED_TWIN["plain"])(x), rtol=1e-6
        )
        return
    with pytest.raises(
        s2s.S2SError, match=f"s2s.{api} cannot transform.*{named}"
    ) as info:
        getattr(s2s, api)(make())
    assert info.value.hint


@pytest.mark.parametrize("make", [lambda: WRAPPED.Model().loss, WRAPPED.Model])
def test_a_method_of_a_users_object_and_a_called_object_are_their_class_functions(make):
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(s2s.grad(make(), backend="numpy")(x), 2 * x)
    np.testing.assert_allclose(s2s.jacfwd(make(), backend="numpy")(x), 2 * x)


def test_a_vmap_error_says_where_to_put_the_vmap():
    with pytest.raises(s2s.S2SError) as info:
        s2s.jacfwd(jax.vmap(WRAPPED.elementwise))
    assert "jax.vmap(s2s.jacfwd(elementwise))" in info.value.hint
    assert info.value.origin.line == WRAPPED.elementwise.__code__.co_firstlineno


# --- 3. globals rebound after a transform ---------------------------------------------------------------

HELPERS, HELPERS_TWIN = _module("""
    import numpy as np

    K = 3.0


    def scaled(x):
        return np.sum(K * x**2)


    def other(x):
        return np.sum(np.cos(x))
    """)
GLOBALS, GLOBALS_TWIN = _module(f"""
    import numpy as np

    import {HELPERS.__name__} as helpers
    from {HELPERS.__name__} import scaled

    G = 2.0


    def f10(x):
        return np.sum(G * x)


    def through_module(x):
        return helpers.scaled(x) + np.sum(G * np.sin(x))


    def through_name(x):
        return scaled(x)


    def scalar(x):
        return G * np.sin(x) * x**2


    def cubic(x):
        return np.sum(G * x**3)


    def make(c):
        def closed(x):
            return np.sum(c * x**2)

        def set_c(value):
            nonlocal c
            c = value

        return closed, set_c
    """)


def _twin_grad(name, **values):
    """jax.grad of the twin function with its module globals set to ``values``."""
    GLOBALS_TWIN.update(values)
    return jax.grad(GLOBALS_TWIN[name])


def test_a_rebound_module_constant_is_seen_by_new_and_existing_transforms(monkeypatch):
    existing = s2s.grad(GLOBALS.f10)
    assert_trees_close(existing(X), _twin_grad("f10", G=2.0)(X))
    monkeypatch.setattr(GLOBALS, "G", 5.0)
    assert_trees_close(s2s.grad(GLOBALS.f10)(X), _twin_grad("f10", G=5.0)(X))
    assert_trees_close(existing(X), _twin_grad("f10", G=5.0)(X))
    assert "5.0" in existing.source


def test_an_equal_value_under_a_new_object_keeps_the_module(monkeypatch):
    transformed = s2s.grad(GLOBALS.f10)
    transformed(X)
    generated = transformed.generated
    # a new float object, the same value
    monkeypatch.setattr(GLOBALS, "G", GLOBALS.G + 0.0)
    transformed(X)
    assert transformed.generated is generated
    # the same value as a float would be no reason to keep it: an int
    monkeypatch.setattr(GLOBALS, "G", 7)
    transformed(X)
    assert transformed.generated is not generated


def test_helpers_constants_and_rebound_helpers_are_seen(monkeypatch):
    through_module, through_name = s2s.grad(GLOBALS.through_module), s2s.grad(
        GLOBALS.through_name
    )
    for transformed in (through_module, through_name):
        transformed(X)
    monkeypatch.setattr(HELPERS, "K", -1.5)
    HELPERS_TWIN["K"] = -1.5
    GLOBALS_TWIN["G"] = GLOBALS.G
    assert_trees_close(
        through_module(X),
        jax.grad(lambda x: HELPERS_TWIN["scaled"](x) + jnp.sum(GLOBALS.G * jnp.sin(x)))(
            X
        ),
    )
    assert_trees_close(through_name(X), jax.grad(HELPERS_TWIN["scaled"])(X))
    # the module attribute now names another function
    monkeypatch.setattr(HELPERS, "scaled", HELPERS.other)
    assert_trees_close(
        through_module(X),
        jax.grad(lambda x: HELPERS_TWIN["other"](x) + jnp.sum(GLOBALS.G * jnp.sin(x)))(
            X
        ),
    )
    monkeypatch.setattr(GLOBALS, "scaled", HELPERS.other)  # the imported name, rebound
    assert_trees_close(through_name(X), jax.grad(HELPERS_TWIN["other"])(X))
    HELPERS_TWIN["K"] = 3.0


def test_a_rebound_closure_cell_is_seen():
    closed, set_c = GLOBALS.make(2.0)
    transformed = s2s.grad(closed)
    assert_trees_close(transformed(X), jax.grad(lambda x: jnp.sum(2.0 * x**2))(X))
    set_c(-4.0)
    assert_trees_close(transformed(X), jax.grad(lambda x: jnp.sum(-4.0 * x**2))(X))


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_higher_derivatives_follow_the_values_the_first_derivative_read(
    monkeypatch, backend
):
    second = s2s.grad(s2s.grad(GLOBALS.scalar, backend=backend), backend=backend)
    hessian = s2s.hessian(GLOBALS.cubic, backend=backend)
    jac = s2s.jacfwd(s2s.grad(GLOBALS.through_module), backend=backend)
    for g in (2.0, -3.0):
        monkeypatch.setattr(GLOBALS, "G", g)
        GLOBALS_TWIN["G"] = g
        np.testing.assert_allclose(
            second(0.4), jax.grad(jax.grad(GLOBALS_TWIN["scalar"]))(0.4)
        )
        np.testing.assert_allclose(
            hessian(X), jax.hessian(GLOBALS_TWIN["cubic"])(X), rtol=1e-9
        )
        want = jax.hessian(
            lambda x: HELPERS_TWIN["scaled"](x) + jnp.sum(g * jnp.sin(x))
        )(X)
        np.testing.assert_allclose(jac(X), want, rtol=1e-9, atol=1e-12)


def test_each_transform_of_a_function_reads_it_once_while_its_values_stand(monkeypatch):
    """``program.build`` hands out copies of the program it read: ``grad``, ``jvp`` and ``vmap`` of one
    function lower it once, a transform's helpers do not leak into the next one's program, and a
    rebound value (or a module array changed in place) makes it read the function again.
    """
    from s2s import pipeline, program

    lowered = []
    real_lower = program.lower
    monkeypatch.setattr(
        program,
        "lower",
        lambda src, *a, **k: lowered.append(src.name) or real_lower(src, *a, **k),
    )
    program._BUILT.clear()
    monkeypatch.setattr(GLOBALS, "G", 2.0)
    GLOBALS_TWIN["G"] = 2.0
    assert_trees_close(
        s2s.grad(GLOBALS.through_module)(X), jax.grad(_twin_through_module)(X)
    )
    assert lowered.count("through_module") == 1
    _, tangent = s2s.jvp(GLOBALS.through_module, (X,), (W,))
    assert_trees_close(tangent, jax.jvp(_twin_through_module, (X,), (W,))[1])
    batched = s2s.vmap(GLOBALS.through_module)(np.stack([X, W]))
    assert_trees_close(batched, jax.vmap(_twin_through_module)(jnp.stack([X, W])))
    assert lowered.count("through_module") == 1 and lowered.count("scaled") == 1
    # each transform got its own copy: what one added is not in the program handed out next
    first, second = program.build(GLOBALS.through_module), program.build(
        GLOBALS.through_module
    )
    first.helpers["added_by_a_transform"] = None
    assert first is not second and "added_by_a_transform" not in second.helpers
    monkeypatch.setattr(GLOBALS, "G", -3.0)
    GLOBALS_TWIN["G"] = -3.0
    assert_trees_close(
        s2s.grad(GLOBALS.through_module)(X), jax.grad(_twin_through_module)(X)
    )
    assert lowered.count("through_module") == 2
    assert pipeline.lower is real_lower


def _twin_through_module(x):
    return HELPERS_TWIN["scaled"](x) + jnp.sum(GLOBALS_TWIN["G"] * jnp.sin(x))


def test_vjp_and_linearize_keep_the_function_they_were_made_with(monkeypatch):
    monkeypatch.setattr(GLOBALS, "G", 2.0)
    GLOBALS_TWIN["G"] = 2.0
    out, vjp_fn = s2s.vjp(GLOBALS.f10, X)
    _, f_jvp = s2s.linearize(GLOBALS.f10, X)
    want_out, want_vjp = jax.vjp(GLOBALS_TWIN["f10"], X)
    _, want_jvp = jax.linearize(GLOBALS_TWIN["f10"], X)
    monkeypatch.setattr(GLOBALS, "G", 9.0)
    GLOBALS_TWIN["G"] = 9.0
    assert_trees_close(
        (out, vjp_fn(1.0), f_jvp(W)), (want_out, want_vjp(1.0), want_jvp(W))
    )
    assert_trees_close(
        s2s.vjp(GLOBALS.f10, X)[1](1.0), jax.vjp(GLOBALS_TWIN["f10"], X)[1](1.0)
    )
    GLOBALS_TWIN["G"] = GLOBALS.G


# --- 5. complex inputs (4, edited files, is in test_api_trust_source.py) ------------------------------------------------------------------------------------

Z = np.array([1.0 + 2.0j, -0.5 + 0.3j])


def _abs2(z):
    return jnp.sum(jnp.abs(z) ** 2)


@pytest.mark.parametrize(
    "call",
    [
        lambda f: s2s.grad(f)(Z),
        lambda f: s2s.value_and_grad(f)(Z),
        lambda f: s2s.vjp(f, Z),
        lambda f: s2s.jvp(f, (Z,), (Z,)),
        lambda f: s2s.linearize(f, Z),
        lambda f: s2s.jacfwd(f)(Z),
        lambda f: s2s.jacrev(f)(Z),
        lambda f: s2s.hessian(f)(Z),
        lambda f: s2s.grad(lambda tree: f(tree["z"]))({"z": Z}),
        lambda f: s2s.grad(f)(1.0 + 2.0j),
    ],
    ids=[
        "grad",
        "value_and_grad",
        "vjp",
        "jvp",
        "linearize",
        "jacfwd",
        "jacrev",
        "hessian",
        "pytree",
        "python_complex",
    ],
)
def test_complex_inputs_are_refused(call):
    with pytest.raises(
        TypeError,
        match=r"does not differentiate complex inputs.*real and imaginary parts",
    ):
        call(_abs2)
