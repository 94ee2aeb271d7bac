"""Calls bind with Python's rules in every API function (issue 10): positional-only, keyword,
keyword-only, defaults, ``*args`` and ``**kwargs`` (per call shape); ``argnums`` count positional
arguments, as in JAX. Hypothesis draws signatures and call forms.

Oracles: ``jax.grad`` (``jax.vjp``, ...) of a ``jax.numpy`` twin of the same source.
"""

import functools
import inspect
import re

import jax
import numpy as np
import pytest
from api_modules import RNG, W, X, assert_trees_close
from api_modules import write_module as _module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax_checks import jvp_of, oracle

import s2s

jax.config.update("jax_enable_x64", True)

# --- call binding ---------------------------------------------------------------------------------

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


def test_keyword_only_arguments_passed_by_keyword_are_used():
    f, twin = SIGNED.keyword_only, SIGNED_TWIN["keyword_only"]
    assert_trees_close(
        s2s.grad(f)(X, scale=10.0), oracle(jax.grad, twin)(X, scale=10.0)
    )
    assert_trees_close(s2s.grad(f)(X), oracle(jax.grad, twin)(X))
    np.testing.assert_allclose(s2s.transform(f)(X, scale=10.0), f(X, scale=10.0))


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_every_api_binds_like_python(backend):
    f, twin = SIGNED.f, SIGNED_TWIN["f"]
    kw = dict(scale=1.7, shift=-0.3)
    for argnums in (0, 1, (0, 1), -1):
        want = oracle(jax.grad, twin, argnums)(X, W, **kw)
        assert_trees_close(s2s.grad(f, argnums, backend=backend)(X, W, **kw), want)
        # `w` by keyword is still parameter 1 (JAX refuses keyword arguments in argnums)
        if argnums != -1:
            assert_trees_close(
                s2s.grad(f, argnums, backend=backend)(X, w=W, **kw), want
            )
        value, grads = s2s.value_and_grad(f, argnums, backend=backend)(X, W, 0.5, **kw)
        assert_trees_close(
            (value, grads), oracle(jax.value_and_grad, twin, argnums)(X, W, 0.5, **kw)
        )
    assert_trees_close(
        s2s.grad(f, -1, backend=backend)(X, w=W, **kw),
        oracle(jax.grad, twin, -1)(X, w=W, **kw),
    )
    assert_trees_close(
        s2s.grad(f, 2, backend=backend)(X, W, 0.9, scale=1.7),
        oracle(jax.grad, twin, 2)(X, W, 0.9, scale=1.7),
    )
    np.testing.assert_allclose(
        s2s.transform(f, backend=backend)(X, b=0.1, w=W, scale=2.0),
        f(X, b=0.1, w=W, scale=2.0),
    )
    for jac in ("jacfwd", "jacrev", "hessian"):
        got = getattr(s2s, jac)(f, (0, 1), backend=backend)(X, W, **kw)
        assert_trees_close(got, getattr(jax, jac)(twin, (0, 1))(X, W, **kw), rtol=1e-8)
    bound, bound_twin = functools.partial(f, scale=1.7), functools.partial(
        twin, scale=1.7
    )
    ct = RNG.normal()
    out, vjp_fn = s2s.vjp(bound, X, W, backend=backend)
    want_out, want_vjp = jax.vjp(bound_twin, X, W)
    assert_trees_close((out, vjp_fn(ct)), (want_out, want_vjp(ct)))
    tangents = (RNG.normal(size=3), RNG.normal(size=3))
    assert_trees_close(
        s2s.jvp(bound, (X, W), tangents, backend=backend),
        oracle(jvp_of, bound_twin)((X, W), tangents),
    )
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
    np.testing.assert_allclose(
        jac, jax.jacrev(SIGNED_TWIN["vector"], 1)(X, W, scale=0.5)
    )


def test_star_parameters_bind_per_call_shape():
    """``*args``/``**kwargs`` receive what Python gives them; each call shape is its own module."""
    star, twin = SIGNED.star, SIGNED_TWIN["star"]
    for args in ((X,), (X, W), (X, W, 2.0 * X)):
        assert_trees_close(s2s.grad(star)(*args), oracle(jax.grad, twin)(*args))
    assert_trees_close(
        s2s.grad(star, argnums=(0, 1))(X, W),
        oracle(jax.grad, twin, argnums=(0, 1))(X, W),
    )
    double, twin = SIGNED.double_star, SIGNED_TWIN["double_star"]
    assert_trees_close(
        s2s.grad(double)(X, a=W, b=2.0), oracle(jax.grad, twin)(X, a=W, b=2.0)
    )
    assert_trees_close(s2s.grad(double)(X), oracle(jax.grad, twin)(X))
    assert "xs_0, xs_1" in s2s.grad(star).at(X, W).source
    with pytest.raises(s2s.S2SError, match="generates its code for each call's shape"):
        _ = s2s.grad(star).source
    with pytest.raises(TypeError):
        s2s.grad(double)(X, X)  # as Python: double_star takes one positional argument


def test_star_parameters_through_jvp_vjp_and_hessian():
    star, twin = SIGNED.star, SIGNED_TWIN["star"]
    assert_trees_close(
        s2s.jvp(star, (X, W), (W, X)), oracle(jvp_of, twin)((X, W), (W, X))
    )
    assert_trees_close(s2s.vjp(star, X, W)[1](1.0), jax.vjp(twin, X, W)[1](1.0))
    assert_trees_close(s2s.hessian(star)(X, W), oracle(jax.hessian, twin)(X, W))


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


    def spreads_into_an_op(x):
        # (a sequence whose items the code does not show: a display's are written out)
        return np.sum(np.add(*x[:2]))


    def _star(*xs):
        return np.sum(xs[0] * xs[1] ** 2)


    partial_of_star = functools.partial(_star, 2.0)


    def _configured(w, x, *, activation=None, **kwargs):
        h = x @ w
        if activation == "tanh":
            h = np.tanh(h)
        return np.sum(h**2) * kwargs.get("scale", 1.0)


    configured = functools.partial(_configured, activation="tanh", scale=0.5)
    """)


@pytest.mark.parametrize(
    "name, message",
    [
        ("rebinds", "`xs` (a `*`/`**` parameter) is assigned in the body"),
        ("spreads_into_an_op", "`*` argument unpacking in a call of `np.add`"),
    ],
)
def test_star_arguments_s2s_cannot_bind_are_located_errors(name, message):
    with pytest.raises(s2s.S2SError, match=re.escape(message)):
        s2s.grad(getattr(VARIADIC_ERRORS, name))(X)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_partial_of_a_function_with_star_arguments_binds_at_the_call_it_makes(
    backend,
):
    """``partial(loss, activation="tanh", scale=0.5)``: the partial's values fill ``loss``'s ``**kwargs``."""
    assert_trees_close(
        s2s.grad(VARIADIC_ERRORS.partial_of_star, backend=backend)(X), 4.0 * X
    )
    w, xs = X[:2, None] * np.ones((2, 3)), np.stack([X[:2], -X[:2]])[:, None, :]
    f = VARIADIC_ERRORS.configured

    def twin(w, x):
        return jax.numpy.sum(jax.numpy.tanh(x @ w) ** 2) * 0.5

    assert_trees_close(
        s2s.vmap(s2s.grad(f, backend=backend), (None, 0), backend=backend)(w, xs),
        jax.vmap(jax.grad(twin), (None, 0))(w, xs),
    )


def test_a_local_tuple_spread_into_a_helper_binds_its_items():
    assert_trees_close(s2s.grad(VARIADIC_ERRORS.spreads_a_local)(X), 2 * X)


KINDS = ("posonly", "normal", "kwonly")


@st.composite
def signatures(draw):
    """Parameters (name, kind, default or None), in an order Python accepts, and a call of them."""
    count = draw(st.integers(1, 5))
    kinds = sorted(
        draw(st.lists(st.sampled_from(KINDS), min_size=count, max_size=count)),
        key=KINDS.index,
    )
    params, defaulted = [], False
    for i, kind in enumerate(kinds):
        has_default = draw(st.booleans()) if kind == "kwonly" or not defaulted else True
        defaulted = defaulted or (has_default and kind != "kwonly")
        default = round(draw(st.floats(-2, 2)), 3) if has_default else None
        params.append((f"p{i}", kind, default))
    call, positional = [], True  # per parameter: "pos", "kw" or "omit"
    for name, kind, default in params:
        forms = (
            ["pos"]
            if kind == "posonly"
            else (["pos", "kw"] if kind == "normal" else ["kw"])
        )
        if not positional:
            forms = [f for f in forms if f != "pos"]
        if default is not None:
            forms.append("omit")
        # a positional-only parameter after an omitted one: pass it, and the omitted ones before it
        if not forms:
            forms = ["pos"]
        form = draw(st.sampled_from(forms))
        positional = positional and form == "pos"
        call.append(form)
    call = _repair(params, call)
    positional_params = [p for p in params if p[1] != "kwonly"]
    argnums = (
        draw(st.integers(0, len(positional_params) - 1)) if positional_params else None
    )
    return params, call, argnums


def _repair(params, call):
    """Python needs every parameter before a positionally passed one passed positionally too."""
    last = max((i for i, form in enumerate(call) if form == "pos"), default=-1)
    return ["pos" if i < last else form for i, form in enumerate(call)]


def _signature_text(params, rest=False, opts=False):
    """The parameter list; ``rest``/``opts``: with ``*rest`` (before the keyword-only ones) and ``**opts``."""
    parts, slash, star = [], False, False
    for name, kind, default in params:
        if (
            kind != "posonly"
            and not slash
            and any(k == "posonly" for _, k, _ in params)
        ):
            parts.append("/")
            slash = True
        if kind == "kwonly" and not star:
            parts.append("*rest" if rest else "*")
            star = True
        parts.append(name if default is None else f"{name}={default!r}")
    if not slash and all(k == "posonly" for _, k, _ in params):
        parts.append("/")
    if rest and not star:
        parts.append("*rest")
    if opts:
        parts.append("**opts")
    return ", ".join(parts)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=signatures())
def test_random_signatures_bind_like_python(drawn):
    params, call, argnums = drawn
    terms = " + ".join(
        f"np.sum(np.sin({name} * {i + 1}.0) * {name})"
        for i, (name, _, _) in enumerate(params)
    )
    module, twin = _module(
        f"import numpy as np\n\n\ndef f({_signature_text(params)}):\n    return {terms}\n"
    )
    values = {name: RNG.normal(size=3) for name, _, _ in params}
    args = tuple(
        values[name] for (name, _, _), form in zip(params, call) if form == "pos"
    )
    kwargs = {
        name: values[name] for (name, _, _), form in zip(params, call) if form == "kw"
    }
    np.testing.assert_allclose(
        s2s.transform(module.f)(*args, **kwargs), module.f(*args, **kwargs)
    )
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

    want = oracle(jax.grad, along)(bound.arguments[name])
    np.testing.assert_allclose(
        s2s.grad(module.f, argnums)(*args, **kwargs), want, rtol=1e-9, atol=1e-12
    )


@st.composite
def variadic_calls(draw):
    """A drawn signature with ``*rest`` and/or ``**opts`` added, a call that fills them, and argnums among
    the positional arguments the call passes."""
    params, call, _ = draw(signatures())
    star, double = draw(st.booleans()), draw(st.booleans())
    named_positional = all(
        form == "pos" for (_, kind, _), form in zip(params, call) if kind != "kwonly"
    )
    extra = draw(st.integers(0, 2)) if star and named_positional else 0
    keywords = [f"e{i}" for i in range(draw(st.integers(0, 2)))] if double else []
    count = sum(form == "pos" for form in call) + extra
    argnums = draw(st.integers(0, count - 1)) if count else None
    return params, call, star, double, extra, keywords, argnums


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=variadic_calls())
def test_random_variadic_signatures_bind_like_python(drawn):
    params, call, star, double, extra, keywords, argnums = drawn
    text = _signature_text(params, rest=star, opts=double)
    terms = " + ".join(
        f"np.sum(np.sin({name} * {i + 1}.0) * {name})"
        for i, (name, _, _) in enumerate(params)
    )
    body = [f"    total = {terms}"]
    if star:
        body += [
            "    for i, r in enumerate(rest):",
            "        total = total + np.sum(np.cos(r * (i + 1.0)) * r)",
        ]
    if double:
        body += [
            "    for key in opts:",
            "        total = total + np.sum(np.tanh(opts[key]) * opts[key])",
        ]
    module, twin = _module(
        "import numpy as np\n\n\ndef f("
        + text
        + "):\n"
        + "\n".join(body)
        + "\n    return total\n"
    )
    values = {name: RNG.normal(size=3) for name, _, _ in params}
    args = tuple(
        values[name] for (name, _, _), form in zip(params, call) if form == "pos"
    )
    args += tuple(RNG.normal(size=3) for _ in range(extra))
    kwargs = {
        name: values[name] for (name, _, _), form in zip(params, call) if form == "kw"
    }
    kwargs.update({key: RNG.normal(size=3) for key in keywords})
    np.testing.assert_allclose(
        s2s.transform(module.f)(*args, **kwargs), module.f(*args, **kwargs)
    )
    if argnums is not None:
        want = jax.grad(twin["f"], argnums)(*args, **kwargs)
        np.testing.assert_allclose(
            s2s.grad(module.f, argnums)(*args, **kwargs), want, rtol=1e-9, atol=1e-12
        )


# --- functions and objects a parameter holds ------------------------------------------------------

HELD, HELD_TWIN = _module("""
    import functools

    import numpy as np


    def softplus(z):
        return np.log1p(np.exp(z))


    class Model:
        def __init__(self, scale, activation=np.tanh):
            self.scale = scale
            self.activation = activation

        def apply(self, w, x):
            return self.activation(x * w) * self.scale


    MODEL = Model(2.0)
    OTHER = Model(0.5, softplus)


    def loss(w, x, act=softplus, model=MODEL):
        return np.sum(act(model.apply(w, x))) + np.sum(w**2)


    def per_example(w, x, model=MODEL):
        return np.sum(model.apply(w, x) ** 2)


    def summed(w, x):
        return np.sum(w * x)
    """)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_functions_and_objects_held_by_defaults_are_read_as_bound(backend):
    """``def loss(w, x, act=softplus, model=MODEL)``: read with ``act`` and ``model`` bound to their defaults,
    as a helper given them is (the JAX tutorial's ``model=MODEL``); a partial binds others.
    """
    f, twin = HELD.loss, HELD_TWIN["loss"]
    want = oracle(jax.grad, twin)(X, W)
    assert_trees_close(s2s.grad(f, backend=backend)(X, W), want)
    # passing the default itself is the same call
    assert_trees_close(s2s.grad(f, backend=backend)(X, W, model=HELD.MODEL), want)
    assert_trees_close(
        s2s.jvp(f, (X, W), (W, X), backend=backend),
        oracle(jvp_of, twin)((X, W), (W, X)),
    )
    assert_trees_close(
        s2s.hessian(f, backend=backend)(X, W), jax.hessian(twin)(X, W), rtol=1e-8
    )
    other = functools.partial(f, act=np.sin, model=HELD.OTHER)
    other_twin = functools.partial(twin, act=jax.numpy.sin, model=HELD_TWIN["OTHER"])
    assert_trees_close(
        s2s.grad(other, backend=backend)(X, W), jax.grad(other_twin)(X, W)
    )
    xs = RNG.normal(size=(4, 3))
    assert_trees_close(
        s2s.vmap(s2s.grad(HELD.per_example), (None, 0), backend=backend)(W, xs),
        jax.vmap(jax.grad(HELD_TWIN["per_example"]), (None, 0))(W, xs),
    )
    assert "def loss_grad(w, x)" in s2s.grad(f).source


def test_another_object_for_a_held_parameter_is_a_type_error():
    grad = s2s.grad(HELD.loss)
    with pytest.raises(TypeError, match=r"functools.partial\(f, model=...\)"):
        grad(X, W, model=HELD.OTHER)
    with pytest.raises(TypeError, match="`act` holds `softplus`"):
        s2s.grad(HELD.loss, argnums=2)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_vmap_of_a_partial_maps_the_arguments_the_call_passes(backend):
    """``vmap(partial(f, W))(xs)`` maps ``xs``, the call's first argument, not ``f``'s first parameter
    (it mapped ``W``: a silent wrong answer when the shapes agreed)."""
    ws, xs = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    f, twin = HELD.summed, HELD_TWIN["summed"]
    assert_trees_close(
        s2s.vmap(functools.partial(f, ws), backend=backend)(xs),
        jax.vmap(functools.partial(twin, ws))(xs),
    )
    assert_trees_close(
        s2s.vmap(functools.partial(f, x=xs), backend=backend)(ws),
        jax.vmap(functools.partial(twin, x=xs))(ws),
    )


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_an_object_a_default_holds_changed_since_is_read_again(backend):
    """``model=MODEL``'s attributes are constants of the generated code: changing one (in place too) makes
    it again (it kept the first values: a silent wrong gradient)."""
    f, twin = HELD.loss, HELD_TWIN["loss"]
    grad = s2s.grad(f, backend=backend)
    grad(X, W)
    saved = HELD.MODEL.scale
    try:
        for scale in (3.0, np.array([1.0, 2.0, 0.5])):
            HELD.MODEL.scale = HELD_TWIN["MODEL"].scale = scale
            assert_trees_close(grad(X, W), jax.grad(twin)(X, W))
        HELD.MODEL.scale[:] = HELD_TWIN["MODEL"].scale[:] = 4.0  # in place
        assert_trees_close(grad(X, W), jax.grad(twin)(X, W))
    finally:
        HELD.MODEL.scale = HELD_TWIN["MODEL"].scale = saved
