"""What runs is what is transformed, at the API: issue 10's cases where the function handed to s2s was
not the code it differentiated.

1. Calls bind with Python's rules (positional-only, keyword, keyword-only,
   defaults, ``functools.partial``) in every API function; ``argnums`` count
   positional parameters, as in JAX.
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
import importlib
import importlib.util
import inspect
import itertools
import pathlib
import re
import sys
import tempfile
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2s

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(10)
FOLDER = pathlib.Path(tempfile.mkdtemp(prefix="s2s_api_trust_"))
_counter = itertools.count()


def _module(text: str):
    """Write ``text`` to a new module file and import it; with its jax.numpy twin (a dict of its names)."""
    text = textwrap.dedent(text)
    name = f"api_trust_{next(_counter)}"
    path = FOLDER / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    twin = {"__name__": name + "_twin"}
    exec(compile(text.replace("import numpy as np", "import jax.numpy as np"), str(path), "exec"), twin)
    return module, twin


def assert_trees_close(got, want, rtol=1e-9, atol=1e-12):
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want), (got, want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


# --- 1. call binding ---------------------------------------------------------------------------------

SIGNED, SIGNED_TWIN = _module("""
    import numpy as np


    def f(x, /, w, b=0.5, *, scale, shift=0.25):
        return np.sum(np.sin(x * w) * scale + b * x**2) + shift * np.sum(w**3)


    def keyword_only(x, *, scale=2.0):
        return np.sum(x * scale)


    def vector(x, /, w, *, scale=1.5):
        return np.sin(x * w) * scale


    def star(*xs):
        total = 0.0
        for i, x in enumerate(xs):
            total = total + np.sum(np.sin(x) * (i + 1.0))
        return total + np.sum(xs[0] ** 2)


    def double_star(x, **options):
        total = np.sum(x**2)
        for key in options:
            total = total + np.sum(np.tanh(options[key] * x))
        return total
    """)
X, W = RNG.normal(size=3), RNG.normal(size=3)


def test_keyword_only_arguments_passed_by_keyword_are_used():
    f, twin = SIGNED.keyword_only, SIGNED_TWIN["keyword_only"]
    assert_trees_close(s2s.grad(f)(X, scale=10.0), jax.grad(twin)(X, scale=10.0))
    assert_trees_close(s2s.grad(f)(X), jax.grad(twin)(X))
    np.testing.assert_allclose(s2s.transform(f)(X, scale=10.0), f(X, scale=10.0))


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_every_api_binds_like_python(backend):
    f, twin = SIGNED.f, SIGNED_TWIN["f"]
    kw = dict(scale=1.7, shift=-0.3)
    for argnums in (0, 1, (0, 1), -1):
        want = jax.grad(twin, argnums)(X, W, **kw)
        assert_trees_close(s2s.grad(f, argnums, backend=backend)(X, W, **kw), want)
        if argnums != -1:  # `w` by keyword is still parameter 1 (JAX refuses keyword arguments in argnums)
            assert_trees_close(s2s.grad(f, argnums, backend=backend)(X, w=W, **kw), want)
        value, grads = s2s.value_and_grad(f, argnums, backend=backend)(X, W, 0.5, **kw)
        assert_trees_close((value, grads), jax.value_and_grad(twin, argnums)(X, W, 0.5, **kw))
    assert_trees_close(s2s.grad(f, -1, backend=backend)(X, w=W, **kw), jax.grad(twin, -1)(X, w=W, **kw))
    assert_trees_close(s2s.grad(f, 2, backend=backend)(X, W, 0.9, scale=1.7), jax.grad(twin, 2)(X, W, 0.9, scale=1.7))
    np.testing.assert_allclose(s2s.transform(f, backend=backend)(X, b=0.1, w=W, scale=2.0), f(X, b=0.1, w=W, scale=2.0))
    for jac in ("jacfwd", "jacrev", "hessian"):
        got = getattr(s2s, jac)(f, (0, 1), backend=backend)(X, W, **kw)
        assert_trees_close(got, getattr(jax, jac)(twin, (0, 1))(X, W, **kw), rtol=1e-8)
    bound, bound_twin = functools.partial(f, scale=1.7), functools.partial(twin, scale=1.7)
    ct = RNG.normal()
    out, vjp_fn = s2s.vjp(bound, X, W, backend=backend)
    want_out, want_vjp = jax.vjp(bound_twin, X, W)
    assert_trees_close((out, vjp_fn(ct)), (want_out, want_vjp(ct)))
    tangents = (RNG.normal(size=3), RNG.normal(size=3))
    assert_trees_close(s2s.jvp(bound, (X, W), tangents, backend=backend), jax.jvp(bound_twin, (X, W), tangents))
    out, f_jvp = s2s.linearize(bound, X, W, backend=backend)
    want_out, want_jvp = jax.linearize(bound_twin, X, W)
    assert_trees_close((out, f_jvp(*tangents)), (want_out, want_jvp(*tangents)))


def test_binding_errors_are_pythons():
    with pytest.raises(TypeError):
        s2s.grad(SIGNED.f)(X, W)  # `scale` is required
    with pytest.raises(TypeError):
        s2s.grad(SIGNED.f)(x=X, w=W, scale=1.0)  # `x` is positional-only
    with pytest.raises(TypeError):
        s2s.grad(SIGNED.keyword_only)(X, 3.0)  # `scale` is keyword-only


def test_argnums_count_positional_parameters():
    with pytest.raises(ValueError, match="argnums"):
        s2s.grad(SIGNED.keyword_only, argnums=1)
    with pytest.raises(ValueError, match="argnums"):
        s2s.jacfwd(SIGNED.f, argnums=3)
    jac = s2s.jacrev(SIGNED.vector, 1)(X, W, scale=0.5)
    np.testing.assert_allclose(jac, jax.jacrev(SIGNED_TWIN["vector"], 1)(X, W, scale=0.5))


def test_star_parameters_bind_per_call_shape():
    """``*args``/``**kwargs`` receive what Python gives them; each call shape is its own module."""
    star, twin = SIGNED.star, SIGNED_TWIN["star"]
    for args in ((X,), (X, W), (X, W, 2.0 * X)):
        assert_trees_close(s2s.grad(star)(*args), jax.grad(twin)(*args))
    assert_trees_close(s2s.grad(star, argnums=(0, 1))(X, W), jax.grad(twin, argnums=(0, 1))(X, W))
    double, twin = SIGNED.double_star, SIGNED_TWIN["double_star"]
    assert_trees_close(s2s.grad(double)(X, a=W, b=2.0), jax.grad(twin)(X, a=W, b=2.0))
    assert_trees_close(s2s.grad(double)(X), jax.grad(twin)(X))
    assert "xs_0, xs_1" in s2s.grad(star).at(X, W).source
    with pytest.raises(s2s.S2SError, match="generates its code for each call's shape"):
        s2s.grad(star).source
    with pytest.raises(TypeError):
        s2s.grad(double)(X, X)  # as Python: double_star takes one positional argument


def test_star_parameters_through_jvp_vjp_and_hessian():
    star, twin = SIGNED.star, SIGNED_TWIN["star"]
    assert_trees_close(s2s.jvp(star, (X, W), (W, X)), jax.jvp(twin, (X, W), (W, X)))
    assert_trees_close(s2s.vjp(star, X, W)[1](1.0), jax.vjp(twin, X, W)[1](1.0))
    assert_trees_close(s2s.hessian(star)(X, W), jax.hessian(twin)(X, W))


VARIADIC_ERRORS, _ = _module("""
    import functools

    import numpy as np


    def rebinds(*xs):
        xs = xs[1:]
        return np.sum(xs[0])


    def _g(a, b):
        return a * b


    def spreads_a_local(x):
        pair = (x, x)
        return np.sum(_g(*pair))


    def _star(*xs):
        return np.sum(xs[0])


    partial_of_star = functools.partial(_star, 1.0)
    """)


@pytest.mark.parametrize(
    "name, message",
    [
        ("rebinds", "`xs` (a `*`/`**` parameter) is assigned in the body"),
        ("spreads_a_local", "`*` argument unpacking is not supported"),
        ("partial_of_star", "a functools.partial of `_star`"),
    ],
)
def test_star_arguments_s2s_cannot_bind_are_located_errors(name, message):
    with pytest.raises(s2s.S2SError, match=re.escape(message)):
        s2s.grad(getattr(VARIADIC_ERRORS, name))(X)


KINDS = ("posonly", "normal", "kwonly")


@st.composite
def signatures(draw):
    """Parameters (name, kind, default or None), in an order Python accepts, and a call of them."""
    count = draw(st.integers(1, 5))
    kinds = sorted(draw(st.lists(st.sampled_from(KINDS), min_size=count, max_size=count)), key=KINDS.index)
    params, defaulted = [], False
    for i, kind in enumerate(kinds):
        has_default = draw(st.booleans()) if kind == "kwonly" or not defaulted else True
        defaulted = defaulted or (has_default and kind != "kwonly")
        default = round(draw(st.floats(-2, 2)), 3) if has_default else None
        params.append((f"p{i}", kind, default))
    call, positional = [], True  # per parameter: "pos", "kw" or "omit"
    for name, kind, default in params:
        forms = ["pos"] if kind == "posonly" else (["pos", "kw"] if kind == "normal" else ["kw"])
        if not positional:
            forms = [f for f in forms if f != "pos"]
        if default is not None:
            forms.append("omit")
        if not forms:  # a positional-only parameter after an omitted one: pass it, and the omitted ones before it
            forms = ["pos"]
        form = draw(st.sampled_from(forms))
        positional = positional and form == "pos"
        call.append(form)
    call = _repair(params, call)
    positional_params = [p for p in params if p[1] != "kwonly"]
    argnums = draw(st.integers(0, len(positional_params) - 1)) if positional_params else None
    return params, call, argnums


def _repair(params, call):
    """Python needs every parameter before a positionally passed one passed positionally too."""
    last = max((i for i, form in enumerate(call) if form == "pos"), default=-1)
    return ["pos" if i < last else form for i, form in enumerate(call)]


def _signature_text(params):
    parts, slash, star = [], False, False
    for name, kind, default in params:
        if kind != "posonly" and not slash and any(k == "posonly" for _, k, _ in params):
            parts.append("/")
            slash = True
        if kind == "kwonly" and not star:
            parts.append("*")
            star = True
        parts.append(name if default is None else f"{name}={default!r}")
    if not slash and all(k == "posonly" for _, k, _ in params):
        parts.append("/")
    return ", ".join(parts)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=signatures())
def test_random_signatures_bind_like_python(drawn):
    params, call, argnums = drawn
    terms = " + ".join(f"np.sum(np.sin({name} * {i + 1}.0) * {name})" for i, (name, _, _) in enumerate(params))
    module, twin = _module(f"import numpy as np\n\n\ndef f({_signature_text(params)}):\n    return {terms}\n")
    values = {name: RNG.normal(size=3) for name, _, _ in params}
    args = tuple(values[name] for (name, _, _), form in zip(params, call) if form == "pos")
    kwargs = {name: values[name] for (name, _, _), form in zip(params, call) if form == "kw"}
    np.testing.assert_allclose(s2s.transform(module.f)(*args, **kwargs), module.f(*args, **kwargs))
    if argnums is None:
        return
    name = [p for p in params if p[1] != "kwonly"][argnums][0]
    bound = inspect.signature(twin["f"]).bind(*args, **kwargs)
    bound.apply_defaults()

    def along(value):
        arguments = dict(bound.arguments, **{name: value})
        again = inspect.signature(twin["f"]).bind_partial()
        again.arguments.update(arguments)
        return twin["f"](*again.args, **again.kwargs)

    want = jax.grad(along)(bound.arguments[name])
    np.testing.assert_allclose(s2s.grad(module.f, argnums)(*args, **kwargs), want, rtol=1e-9, atol=1e-12)


@st.composite
def variadic_calls(draw):
    """A drawn signature with ``*rest`` and/or ``**opts`` added, a call that fills them, and argnums among
    the positional arguments the call passes."""
    params, call, _ = draw(signatures())
    star, double = draw(st.booleans()), draw(st.booleans())
    named_positional = all(form == "pos" for (_, kind, _), form in zip(params, call) if kind != "kwonly")
    extra = draw(st.integers(0, 2)) if star and named_positional else 0
    keywords = [f"e{i}" for i in range(draw(st.integers(0, 2)))] if double else []
    count = sum(form == "pos" for form in call) + extra
    argnums = draw(st.integers(0, count - 1)) if count else None
    return params, call, star, double, extra, keywords, argnums


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=variadic_calls())
def test_random_variadic_signatures_bind_like_python(drawn):
    params, call, star, double, extra, keywords, argnums = drawn
    text = _signature_text(params)
    if star:
        text = text.replace(", *, ", ", ") if ", *, " in text else text.replace("*, ", "")
        names = [p for p in text.split(", ") if p and p != "/"]
        kwonly_at = next((i for i, (_, kind, _) in enumerate(params) if kind == "kwonly"), None)
        cut = len([p for p in text.split(", ") if p]) if kwonly_at is None else text.split(", ").index(names[kwonly_at])
        parts = [p for p in text.split(", ") if p]
        text = ", ".join([*parts[:cut], "*rest", *parts[cut:]])
    if double:
        text = f"{text}, **opts" if text else "**opts"
    terms = " + ".join(f"np.sum(np.sin({name} * {i + 1}.0) * {name})" for i, (name, _, _) in enumerate(params))
    body = [f"    total = {terms}"]
    if star:
        body += ["    for i, r in enumerate(rest):", "        total = total + np.sum(np.cos(r * (i + 1.0)) * r)"]
    if double:
        body += ["    for key in opts:", "        total = total + np.sum(np.tanh(opts[key]) * opts[key])"]
    module, twin = _module("import numpy as np\n\n\ndef f(" + text + "):\n" + "\n".join(body) + "\n    return total\n")
    values = {name: RNG.normal(size=3) for name, _, _ in params}
    args = tuple(values[name] for (name, _, _), form in zip(params, call) if form == "pos")
    args += tuple(RNG.normal(size=3) for _ in range(extra))
    kwargs = {name: values[name] for (name, _, _), form in zip(params, call) if form == "kw"}
    kwargs.update({key: RNG.normal(size=3) for key in keywords})
    np.testing.assert_allclose(s2s.transform(module.f)(*args, **kwargs), module.f(*args, **kwargs))
    if argnums is not None:
        want = jax.grad(twin["f"], argnums)(*args, **kwargs)
        np.testing.assert_allclose(s2s.grad(module.f, argnums)(*args, **kwargs), want, rtol=1e-9, atol=1e-12)


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
    assert_trees_close(s2s.grad(WRAPPED.doubled)(X), jax.grad(WRAPPED_TWIN["doubled"])(X))


def test_a_wraps_decorator_with_star_args_keeps_what_the_wrapper_does():
    """``return 2.0 * fn(*args)``: the wrapper is transformed at the call's shape, its doubling kept."""
    assert_trees_close(s2s.grad(WRAPPED.doubled_star)(X), jax.grad(WRAPPED_TWIN["doubled_star"])(X))


def test_a_wraps_decorator_s2s_cannot_read_is_an_error_at_the_wrapper():
    with pytest.raises(s2s.S2SError, match="an expression statement") as info:
        s2s.grad(WRAPPED.printed)(X)
    wrapper_line = next(
        i
        for i, line in enumerate(pathlib.Path(WRAPPED.__file__).read_text().splitlines(), 1)
        if 'print("called")' in line
    )
    assert (info.value.origin.path, info.value.origin.line) == (WRAPPED.__file__, wrapper_line)


def test_jit_of_a_transformed_function_is_its_generated_code():
    x = 0.7
    second = s2s.grad(jax.jit(s2s.grad(WRAPPED.scalar)))(x)
    np.testing.assert_allclose(second, jax.grad(jax.grad(WRAPPED_TWIN["scalar"]))(x))
    hess = s2s.jacfwd(jax.jit(s2s.grad(WRAPPED.plain)))(X)
    np.testing.assert_allclose(hess, jax.hessian(WRAPPED_TWIN["plain"])(X))


def test_a_transformed_function_called_inside_is_never_unwrapped_into_the_original():
    module, twin = _module(
        """
        import jax
        import numpy as np

        import s2s


        def cube(x):
            return np.sum(np.sin(x) * x**3)


        jit_gradient = jax.jit(s2s.grad(cube))


        def uses(x):
            return np.sum(jit_gradient(x) * x)
        """
    )
    want = jax.grad(lambda x: jnp.sum(jax.grad(twin["cube"])(x) * x))(X)
    assert_trees_close(s2s.grad(module.uses)(X), want)


@pytest.mark.parametrize(
    "wrap", [jax.jit, jax.checkpoint, jax.remat, s2s.transform], ids=["jit", "checkpoint", "remat", "transform"]
)
def test_wrappers_with_the_same_math_are_looked_through(wrap):
    assert_trees_close(s2s.grad(wrap(WRAPPED.plain))(X), jax.grad(WRAPPED_TWIN["plain"])(X))
    assert_trees_close(s2s.jacrev(wrap(WRAPPED.elementwise))(X), jax.jacrev(WRAPPED_TWIN["elementwise"])(X))


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
    of_transformed = s2s.grad(functools.partial(s2s.grad(f, 2), X))(W)  # a partial of a transformed function
    assert_trees_close(of_transformed, jax.grad(lambda b: jax.grad(twin, 2)(X, b, 0.5))(W))


def test_negative_argnums_count_the_arguments_passed_as_in_jax():
    f, twin = WRAPPED.three, WRAPPED_TWIN["three"]
    for call in ((X, W), (X, W, 0.3)):
        assert_trees_close(s2s.grad(f, -1)(*call), jax.grad(twin, -1)(*call))
        assert_trees_close(s2s.jacrev(f, (0, -1))(*call), jax.jacrev(twin, (0, -1))(*call))


@pytest.mark.parametrize(
    "make, named",
    [
        (lambda: jax.vmap(WRAPPED.elementwise), "jax.vmap"),
        (lambda: jax.grad(WRAPPED.plain), "jax.grad"),
        (lambda: jax.value_and_grad(WRAPPED.plain), "jax.value_and_grad"),
        (lambda: jax.hessian(WRAPPED.plain), "jax.hessian"),
        (lambda: np.vectorize(WRAPPED.scalar), "np.vectorize"),
        (lambda: WRAPPED.Model().loss, "bound method"),
        (lambda: WRAPPED.Model(), "Model object"),
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
        "method",
        "object",
        "builtin",
        "jacobian",
        "jit_vmap",
    ],
)
@pytest.mark.parametrize("api", ["grad", "jacfwd", "transform"])
def test_wrappers_s2s_cannot_see_through_are_errors_naming_them(make, named, api):
    with pytest.raises(s2s.S2SError, match=f"s2s.{api} cannot transform.*{named}") as info:
        getattr(s2s, api)(make())
    assert info.value.hint


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
    monkeypatch.setattr(GLOBALS, "G", GLOBALS.G + 0.0)  # a new float object, the same value
    transformed(X)
    assert transformed.generated is generated
    monkeypatch.setattr(GLOBALS, "G", 7)  # the same value as a float would be no reason to keep it: an int
    transformed(X)
    assert transformed.generated is not generated


def test_helpers_constants_and_rebound_helpers_are_seen(monkeypatch):
    through_module, through_name = s2s.grad(GLOBALS.through_module), s2s.grad(GLOBALS.through_name)
    for transformed in (through_module, through_name):
        transformed(X)
    monkeypatch.setattr(HELPERS, "K", -1.5)
    HELPERS_TWIN["K"] = -1.5
    GLOBALS_TWIN["G"] = GLOBALS.G
    assert_trees_close(
        through_module(X), jax.grad(lambda x: HELPERS_TWIN["scaled"](x) + jnp.sum(GLOBALS.G * jnp.sin(x)))(X)
    )
    assert_trees_close(through_name(X), jax.grad(HELPERS_TWIN["scaled"])(X))
    monkeypatch.setattr(HELPERS, "scaled", HELPERS.other)  # the module attribute now names another function
    assert_trees_close(
        through_module(X), jax.grad(lambda x: HELPERS_TWIN["other"](x) + jnp.sum(GLOBALS.G * jnp.sin(x)))(X)
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
def test_higher_derivatives_follow_the_values_the_first_derivative_read(monkeypatch, backend):
    second = s2s.grad(s2s.grad(GLOBALS.scalar, backend=backend), backend=backend)
    hessian = s2s.hessian(GLOBALS.cubic, backend=backend)
    jac = s2s.jacfwd(s2s.grad(GLOBALS.through_module), backend=backend)
    for g in (2.0, -3.0):
        monkeypatch.setattr(GLOBALS, "G", g)
        GLOBALS_TWIN["G"] = g
        np.testing.assert_allclose(second(0.4), jax.grad(jax.grad(GLOBALS_TWIN["scalar"]))(0.4))
        np.testing.assert_allclose(hessian(X), jax.hessian(GLOBALS_TWIN["cubic"])(X), rtol=1e-9)
        want = jax.hessian(lambda x: HELPERS_TWIN["scaled"](x) + jnp.sum(g * jnp.sin(x)))(X)
        np.testing.assert_allclose(jac(X), want, rtol=1e-9, atol=1e-12)


def test_vjp_and_linearize_keep_the_function_they_were_made_with(monkeypatch):
    monkeypatch.setattr(GLOBALS, "G", 2.0)
    GLOBALS_TWIN["G"] = 2.0
    out, vjp_fn = s2s.vjp(GLOBALS.f10, X)
    _, f_jvp = s2s.linearize(GLOBALS.f10, X)
    want_out, want_vjp = jax.vjp(GLOBALS_TWIN["f10"], X)
    _, want_jvp = jax.linearize(GLOBALS_TWIN["f10"], X)
    monkeypatch.setattr(GLOBALS, "G", 9.0)
    GLOBALS_TWIN["G"] = 9.0
    assert_trees_close((out, vjp_fn(1.0), f_jvp(W)), (want_out, want_vjp(1.0), want_jvp(W)))
    assert_trees_close(s2s.vjp(GLOBALS.f10, X)[1](1.0), jax.vjp(GLOBALS_TWIN["f10"], X)[1](1.0))
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
    with pytest.raises(TypeError, match="does not differentiate complex inputs.*real and imaginary parts"):
        call(_abs2)
