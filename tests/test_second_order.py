"""Second derivatives of every op-table case, in both orders, against JAX.

For each case, ``f(inputs..., ct) = np.sum(<call> * ct)`` is written to a real
module (s2s reads source), with ``df = s2s.grad(f, argnums)`` and
``g(inputs..., ct, v...) = sum_i np.sum(df(inputs..., ct)[i] * v_i)``.
``argnums`` holds every input and ``ct``, so the rules of the runtime helpers
that gradients call are exercised in their cotangent argument too.

- forward over reverse: ``s2s.hessian(f, argnums)`` (it differentiates the
  generated ``f_vjp`` in forward mode) against ``jax.hessian`` of the
  ``jax.numpy`` twin, on the NumPy backend and compiled through XLA;
- reverse over reverse: ``s2s.grad(g, argnums)`` (it differentiates the
  generated ``f_grad``, called as a helper, in reverse mode) against the
  Hessian applied to ``v`` (not for the library's elementwise ops: their
  derivative formulas are made of ops whose own cases check it).

The first draw checks both against the whole Hessian; a second draw checks the
NumPy backend again against JAX's Hessian-vector product (cheaper to compile).
Every draw compiles a JAX oracle, and every case an s2s Hessian: two draws per
case keep the file fast. Then the same two checks for loops over each kind of
Python container and array (the rules of the loop inputs' cotangents), and
third derivatives of one case per op whose second-order rules call helpers of
their own (those helpers' rules).
"""

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from op_table import CASES, CORE_CASES, draw_inputs
from op_table_library import HEADER, LIBRARY_CASES, namespace
from oracles import Oracle, output_shape

import s2s
from s2s.rules import op_named

jax.config.update("jax_enable_x64", True)

# case id -> the reason it cannot pass yet, outside the rules (none now)
XFAIL: dict = {}
# cases JAX, the oracle, cannot differentiate twice
NO_ORACLE = {
    "scipy.special.exp1(x)": "jax.hessian of jax.scipy.special.exp1 fails under jit in JAX itself "
    "('No constant handler for type DynamicJaxprTracer')",
    "scipy.special.expn(2,x)": "jax.hessian of jax.scipy.special.expn fails under jit in JAX itself "
    "('No constant handler for type DynamicJaxprTracer')",
    # JAX's partial in ``a`` (``x``) has no derivative: s2s's second derivative there is an error too
    # (test_library_ops.py), the cases with a constant ``a`` (``x``) check the others
    "scipy.special.gammainc(a,x)": "JAX has no second derivative of gammainc in a (igamma_grad_a)",
    "jax.scipy.special.gammaincc(a,x)": "JAX has no second derivative of gammaincc in a (igamma_grad_a)",
    "jax.scipy.special.zeta(x,q)": "s2s evaluates JAX's partial of zeta in x, with no derivative of its own",
}

_MODULES = {}
_TRANSFORMED = {}


def _functions(case, folder):
    """``f`` and ``g`` from a real module, the ``jax.numpy`` twin of ``f``, and argnums (every input, then ``ct``)."""
    if case.id not in _MODULES:
        args = ", ".join(case.names)
        n = len(case.names) + 1
        vs = ", ".join(f"v{i}" for i in range(n))
        terms = " + ".join(f"np.sum(d[{i}] * v{i})" for i in range(n))
        argnums = tuple(range(n))
        path = folder / f"second_{len(_MODULES)}.py"
        path.write_text(
            f"{HEADER}\nimport s2s\n\n\n"
            f"def f({args}, ct):\n    return np.sum({case.call} * ct)\n\n\n"
            f"df = s2s.grad(f, {argnums})\n\n\n"
            f"def g({args}, ct, {vs}):\n    d = df({args}, ct)\n    return {terms}\n"
        )
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        twin = eval(f"lambda {args}, ct: np.sum({case.call} * ct)", namespace(jnp))
        _MODULES[case.id] = (module.f, module.g, twin, argnums)
    return _MODULES[case.id]


def _transformed(case, folder, kind):
    """The case's ``s2s.hessian`` (``numpy`` or ``xla`` backend) or reverse-over-reverse gradient (``reverse``), built once."""
    key = (case.id, kind)
    if key not in _TRANSFORMED:
        f, g, _, argnums = _functions(case, folder)
        if kind == "reverse":
            _TRANSFORMED[key] = s2s.grad(g, argnums, backend="numpy")
        else:
            _TRANSFORMED[key] = s2s.hessian(f, argnums, backend=kind)
    return _TRANSFORMED[key]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("second_order")


def _params(cases):
    return [
        pytest.param(
            c,
            id=c.id,
            marks=([pytest.mark.xfail(reason=XFAIL[c.id])] if c.id in XFAIL else [])
            + ([pytest.mark.skip(reason=NO_ORACLE[c.id])] if c.id in NO_ORACLE else []),
        )
        for c in cases
    ]


def _draw(case, data):
    """The case's inputs and ``ct``, and directions ``v`` for each of them."""
    inputs = draw_inputs(case, data.draw)
    rng = np.random.default_rng(len(case.id))
    values = [inputs[n] for n in case.names]
    call = eval(f"lambda {', '.join(case.names)}: {case.call}", namespace(jnp))
    ct = rng.normal(size=output_shape(call, *values))
    args = (*values, ct)
    return args, tuple(rng.normal(size=np.shape(a)) for a in args)


def _contract(hessian, vs, argnums):
    """``H @ v`` from JAX's nested Hessian blocks, one entry per argument."""
    return [
        sum(np.tensordot(hessian[i][j], vs[j], axes=np.ndim(vs[j])) for j in argnums)
        for i in argnums
    ]


def _close(case, got, want, what):
    tol = dict(rtol=max(case.rtol, 1e-6), atol=max(case.atol, 1e-8))
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(g, w, **tol, err_msg=f"{what}, argument {i}")


def _check_reverse(case, folder, args, vs, hv):
    if case.id in LIBRARY_ELEMENTWISE:
        return
    _close(
        case,
        _transformed(case, folder, "reverse")(*args, *vs),
        hv,
        "reverse over reverse",
    )


def _oracle(fn, *args):
    """``fn(*args)`` compiled by XLA without its optimizing passes: each case compiles once, and runs once."""
    return Oracle(fn)(*args)


def _settings(max_examples=1, **kw):
    # no shrinking: each example compiles, and the failure message names the argument and block
    return settings(
        max_examples=max_examples,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=[HealthCheck.function_scoped_fixture],
        **kw,
    )


@pytest.mark.parametrize("case", _params(CORE_CASES))
@_settings(max_examples=1, derandomize=True)
@given(data=st.data())
def test_second_derivatives_match_jax(case, folder, data):
    check_second_derivatives(case, folder, data)


# a composition (``decompose``) differentiates twice through its ops, each tested here on its own cases;
# cases tagged ``second-order`` reach ops with rules of their own through one (``linalg.eigh``)
OWN_RULES = [
    c
    for c in LIBRARY_CASES
    if op_named(c.op).family != "decompose" or "second-order" in c.tags
]


# an elementwise rule's derivative formula is made of ops whose reverse rules their own cases test here
# (reverse over reverse of ``g * d(x)``); forward over reverse checks the formula's own derivative
LIBRARY_ELEMENTWISE = frozenset(
    c.id for c in OWN_RULES if op_named(c.op).family == "elementwise"
)


@pytest.mark.parametrize("case", _params(OWN_RULES))
@_settings(max_examples=1, derandomize=True)
@given(data=st.data())
def test_library_second_derivatives_match_jax(case, folder, data):
    check_second_derivatives(case, folder, data)


def check_second_derivatives(case, folder, data):
    """First draw: ``s2s.hessian`` (NumPy and XLA) against ``jax.hessian``, reverse over reverse against it applied
    to ``v``. Next draws (NumPy): the Hessian applied to ``v`` and reverse over reverse, against ``jax.jvp`` of ``jax.grad``.
    """
    _, _, twin, argnums = _functions(case, folder)
    args, vs = _draw(case, data)
    if (case.id, "xla") not in _TRANSFORMED:
        # JAX's Hessian and s2s's XLA one compile as one program (a compile per program is the slow part)
        s2s_xla = _transformed(case, folder, "xla")
        want, got_xla = _oracle(
            lambda *a: (jax.hessian(twin, argnums)(*a), s2s_xla(*a)), *args
        )
        got_numpy = _transformed(case, folder, "numpy")(*args)
        for backend, got in (("numpy", got_numpy), ("xla", got_xla)):
            for i in argnums:
                _close(case, got[i], want[i], f"hessian ({backend}), row {i}")
        _check_reverse(case, folder, args, vs, _contract(want, vs, argnums))
        return
    _, want = _oracle(lambda a, v: jax.jvp(jax.grad(twin, argnums), a, v), args, vs)
    _close(
        case,
        _contract(_transformed(case, folder, "numpy")(*args), vs, argnums),
        want,
        "hessian @ v (numpy)",
    )
    _check_reverse(case, folder, args, vs, want)


# --- loops over Python containers and arrays: the rules of the loop inputs' cotangents -------------

LOOPS = {  # name: (parameters, loop, inputs from a normal sampler)
    "list": (
        "ws, x",
        "for w in ws:\n        h = np.tanh(h * w)",
        lambda r: ([r(3), r(3)], r(3)),
    ),
    "enumerate_list": (
        "ws, x",
        "for i, w in enumerate(ws):\n        h = np.tanh(h * w + i)",
        lambda r: ([r(3), r(3)], r(3)),
    ),
    "zip_lists": (
        "ws, bs, x",
        "for w, b in zip(ws, bs):\n        h = np.tanh(h * w + b)",
        lambda r: ([r(3)] * 2, [r(3)] * 2, r(3)),
    ),
    "reversed_list": (
        "ws, x",
        "for w in reversed(ws):\n        h = np.sin(h * w)",
        lambda r: ([r(3), r(3)], r(3)),
    ),
    "dict_items": (
        "d, x",
        "for k, w in d.items():\n        h = np.tanh(h * w)",
        lambda r: ({"a": r(3), "b": r(2, 3)}, r(3)),
    ),
    "dict_values": (
        "d, x",
        "for w in d.values():\n        h = np.tanh(h * w)",
        lambda r: ({"a": r(3), "b": r(3)}, r(3)),
    ),
    "array": (
        "ws, x",
        "for w in ws:\n        h = np.tanh(h * w)",
        lambda r: (r(2, 3), r(3)),
    ),
    "enumerate_array": (
        "ws, x",
        "for i, w in enumerate(ws):\n        h = np.tanh(h * w) + i",
        lambda r: (r(2, 3), r(3)),
    ),
    "zip_arrays": (
        "ws, bs, x",
        "for w, b in zip(ws, bs):\n        h = np.tanh(h * w + b)",
        lambda r: (r(3, 3), r(2, 3), r(3)),
    ),
    "reversed_array": (
        "ws, x",
        "for w in reversed(ws):\n        h = np.sin(h * w)",
        lambda r: (r(2, 3), r(3)),
    ),
}


def _leaf_paths(value, path=""):
    """Subscripts reaching each array of ``value`` (``[0]``, ``["a"]``, ``""``)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaf_paths(v, f"{path}[{k!r}]")]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in _leaf_paths(v, f"{path}[{i}]")]
    return [path]


def _loop_functions(name, args, folder):
    params, loop, _ = LOOPS[name]
    names = [p.strip() for p in params.split(",")]
    body = f"def f({params}):\n    h = x\n    {loop}\n    return np.sum(h * h)\n"
    terms = [
        f"np.sum(d[{i}]{p} * v_{n}{p})"
        for i, (n, a) in enumerate(zip(names, args))
        for p in _leaf_paths(a)
    ]
    vs = ", ".join(f"v_{n}" for n in names)
    path = folder / f"loop_{name}.py"
    path.write_text(
        f"import numpy as np\n\nimport s2s\n\n\n{body}\n\ndf = s2s.grad(f, {tuple(range(len(names)))})\n\n\n"
        f"def g({params}, {vs}):\n    d = df({params})\n    return {' + '.join(terms)}\n"
    )
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scope = {"np": jnp}
    exec(body, scope)
    return module.f, module.g, scope["f"]


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_second_derivatives_through_loops_match_jax(name, folder):
    """Loops over lists, ``enumerate``, ``zip``, ``reversed``, dict views and arrays: ``s2s.hessian`` and reverse over reverse."""
    rng = np.random.default_rng(0)
    args = LOOPS[name][2](lambda *shape: rng.normal(size=shape))
    f, g, twin = _loop_functions(name, args, folder)
    argnums = tuple(range(len(args)))
    vs = jax.tree.map(lambda a: rng.normal(size=np.shape(a)), args)
    want = _oracle(jax.hessian(twin, argnums), *args)
    _, hv = _oracle(
        lambda a, v: jax.jvp(jax.grad(twin, argnums), a, v), tuple(args), tuple(vs)
    )
    checks = [
        ("hessian", s2s.hessian(f, argnums, backend="numpy")(*args), want),
        ("reverse over reverse", s2s.grad(g, argnums, backend="numpy")(*args, *vs), hv),
    ]
    for what, got, expected in checks:
        assert jax.tree.structure(got) == jax.tree.structure(expected), what
        for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(expected)):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8, err_msg=what)


# --- third derivatives: the helpers' own rules have rules (one case per op whose rules add helpers) --------

THIRD_ORDER_OPS = (
    "prod",
    "cumprod",
    "linalg.norm",
    "linalg.solve",
    "linalg.det",
    "einsum",
    "dot",
    "inner",
    "tensordot",
)
THIRD = [next(c for c in CASES if c.op == op) for op in THIRD_ORDER_OPS]
SINGULAR_VALUES = next(c for c in CASES if c.call == "np.linalg.norm(x, 'nuc')")


def _third_order_function(case, folder):
    """``h(inputs..., ct, v..., w...)``: the gradient of ``g`` (reverse over reverse) applied to ``w``, as a module."""
    names = list(case.names)
    args = ", ".join(names)
    n = len(names) + 1
    argnums = tuple(range(n))
    vs = ", ".join(f"v{i}" for i in range(n))
    ws = ", ".join(f"w{i}" for i in range(n))

    def total(d, v):
        return " + ".join(f"np.sum({d}[{i}] * {v}{i})" for i in range(n))

    path = (
        folder
        / f"third_{THIRD_ORDER_OPS.index(case.op) if case in THIRD else 'nuc'}.py"
    )
    path.write_text(
        "import numpy as np\n\nimport s2s\n\n\n"
        f"def f({args}, ct):\n    return np.sum({case.call} * ct)\n\n\ndf = s2s.grad(f, {argnums})\n\n\n"
        f"def g({args}, ct, {vs}):\n    d = df({args}, ct)\n    return {total('d', 'v')}\n\n\ndg = s2s.grad(g, {argnums})\n\n\n"
        f"def h({args}, ct, {vs}, {ws}):\n    d = dg({args}, ct, {vs})\n    return {total('d', 'w')}\n"
    )
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.h, argnums


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in THIRD])
@_settings(derandomize=True)
@given(data=st.data())
def test_third_derivatives_match_jax(case, folder, data):
    """Reverse over reverse over reverse (NumPy backend) against JAX's third derivative applied to ``v`` and ``w``."""
    h, argnums = _third_order_function(case, folder)
    _, _, twin, _ = _functions(case, folder)
    args, vs = _draw(case, data)
    ws = tuple(np.cos(np.arange(np.size(a)) + 1.0).reshape(np.shape(a)) for a in args)

    def hvp(*xs):
        return jax.jvp(jax.grad(twin, argnums), xs, vs)[1]

    want = _oracle(lambda a: jax.jvp(hvp, a, ws)[1], args)
    _close(
        case,
        s2s.grad(h, argnums, backend="numpy")(*args, *vs, *ws),
        want,
        "third derivative",
    )


def test_third_derivatives_of_singular_value_norms_are_refused(folder):
    h, argnums = _third_order_function(SINGULAR_VALUES, folder)
    x = np.array([[2.0, 0.5], [0.3, 1.0]])
    args = (x, np.array(1.5))
    with pytest.raises(
        s2s.S2SError, match=r"third derivatives of linalg\.norm with ord='nuc'"
    ):
        s2s.grad(h, argnums, backend="numpy")(*args, *args, *args)
