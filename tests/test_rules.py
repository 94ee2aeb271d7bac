"""One harness over the op table: every rule, called as Python, against JAX (and finite differences).

For each case the call's arguments are bound to the rule's parameters with
``Op.signature.bind``, as the compiler binds them. Reverse mode: the rule's
cotangents (``unbroadcast(g * partial, arg)`` for elementwise rules) must
match ``jax.vjp`` of the same call on ``jax.numpy`` in float64. Forward mode,
where the family derives it (elementwise: partials times tangents; linear: the
op applied to tangents), must agree with the reverse rule (adjoint identity).
A decomposition's body must compute the library function on NumPy; s2s
differentiates the body, so its derivatives are checked where s2s makes them
(``test_ops_e2e``, ``test_ops_vmap``, ``test_second_order``). Every other rule
also runs with ``xp = jax.numpy`` under ``jax.jit`` and must agree with NumPy.
"""

import ast
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_table import CASES, CORE_CASES, draw_inputs
from op_table_library import LIBRARY_CASES, namespace
from oracles import Oracle
from s2s.runtime import unbroadcast

from s2s.rules import ALIASES, op_named

jax.config.update("jax_enable_x64", True)

SETTINGS = settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def return_arity(rule) -> int:
    """Number of entries of the rule's return expression (a tuple literal counts its elements)."""
    import inspect
    import textwrap

    fn = ast.parse(textwrap.dedent(inspect.getsource(rule))).body[0]
    value = fn.body[-1].value
    return len(value.elts) if isinstance(value, ast.Tuple) else 1


class Call:
    """A case's call, parsed: the op, its argument nodes bound to the rule's parameters."""

    def __init__(self, case):
        body = ast.parse(case.call, mode="eval").body
        self.source = case.call
        self.index = None
        # ``np.split(...)[i]``: one piece of a list output
        if isinstance(body, ast.Subscript):
            self.index, body = ast.literal_eval(body.slice), body.value
        self.node = body
        # a call that spells JAX's function runs compiled, not op by op, wherever NumPy evaluates it
        self.compiled = (
            Oracle(lambda env: self.evaluate(body, env, jnp))
            if case.call.startswith("jax.")
            else None
        )
        self.op = op_named(ALIASES.get(case.func_name, case.func_name))
        self.names = case.names
        if self.op.rule is not None:
            kwargs = {k.arg: k.value for k in body.keywords}
            self.bound = self.op.signature.bind(*body.args, **kwargs)
            self.arity = return_arity(self.op.rule)
            self.leading = list(self.op.signature.parameters)[: self.arity]

    def evaluate(self, node, env, module=np):
        if node is self.node and module is np and self.compiled is not None:
            return jax.tree.map(np.asarray, self.compiled(dict(env)))
        return eval(
            compile(ast.Expression(node), "<case>", "eval"),
            namespace(module),
            dict(env),
        )

    def output(self, env, module=np):
        out = self.evaluate(self.node, env, module)
        return out if self.index is None else out[self.index]

    def arguments(self, env, module=np):
        """The rule's positional and keyword arguments, evaluated on ``env``."""
        bound = self.op.signature.bind(*self.bound.args, **self.bound.kwargs)
        for name, value in bound.arguments.items():
            if isinstance(value, tuple):  # *operands
                bound.arguments[name] = tuple(
                    self.evaluate(v, env, module) for v in value
                )
            else:
                bound.arguments[name] = self.evaluate(value, env, module)
        return bound

    def leaves(self, param):
        """The argument nodes of ``param``: one node, or the elements of a list / varargs."""
        node = self.bound.arguments.get(param)
        if isinstance(node, tuple):
            return list(node), True
        if isinstance(node, (ast.List, ast.Tuple)):
            return list(node.elts), True
        return [node], False

    def distribute(self, param, cotangent, result):
        """Add ``cotangent`` of ``param`` into ``result`` (input name -> cotangent)."""
        if cotangent is None:
            return  # no derivative flows into this parameter
        nodes, is_list = self.leaves(param)
        values = cotangent if is_list else [cotangent]
        assert len(values) == len(
            nodes
        ), f"{param}: {len(values)} cotangents for {len(nodes)} arguments"
        for node, value in zip(nodes, values):
            if node is None or value is None:
                continue
            if isinstance(node, ast.Name) and node.id in self.names:
                result[node.id] = result.get(node.id, 0) + value
            else:
                used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & set(
                    self.names
                )
                assert not used, f"case passes {used} to {param} through an expression"


def _rebind(rule, xp):
    fn = types.FunctionType(
        rule.__code__, {**rule.__globals__, "xp": xp}, rule.__name__, rule.__defaults__
    )
    fn.__kwdefaults__ = rule.__kwdefaults__
    return fn


def rule_cotangents(call, env, g, ans, xp=np):
    """Cotangents of the inputs according to the rule (input name -> array)."""
    rule = call.op.rule if xp is np else _rebind(call.op.rule, xp)
    bound = call.arguments(env, xp)
    params = rule.__code__.co_varnames[
        : rule.__code__.co_argcount + rule.__code__.co_kwonlyargcount + 1
    ]
    extra = {k: v for k, v in (("ans", ans), ("g", g)) if k in params}
    out = rule(*bound.args, **bound.kwargs, **extra)
    out = out if call.arity > 1 else (out,)
    result = {}
    for param, entry in zip(call.leading, out):
        if entry is not None and call.op.family == "elementwise":
            arg = bound.arguments[param]
            entry = (
                unbroadcast(g * entry, arg)
                if isinstance(arg, (np.ndarray, jax.Array))
                else None
            )
        call.distribute(param, entry, result)
    return result


_ORACLES = {}


def jax_vjp(call, env, g):
    """``jax.vjp`` of the call on ``jax.numpy``: the value and input cotangents (one oracle per case)."""
    names = call.names
    key = (call.source, names)
    if key not in _ORACLES:

        def oracle(values, g):
            out, pullback = jax.vjp(lambda *v: call.output(zip(names, v), jnp), *values)
            return out, pullback(g)

        _ORACLES[key] = Oracle(oracle)
    out, cotangents = _ORACLES[key](
        tuple(jnp.asarray(env[n]) for n in names), jnp.asarray(g)
    )
    return np.asarray(out), {n: np.asarray(c) for n, c in zip(names, cotangents)}


def full_g(call, env, g, module=np):
    """The cotangent the rule sees: for a piece of a list output, a list with None elsewhere."""
    if call.index is None:
        return g
    pieces = call.evaluate(call.node, env, module)
    return [g if i == call.index % len(pieces) else None for i in range(len(pieces))]


def assert_close(actual, expected, case, what):
    np.testing.assert_allclose(
        actual, expected, rtol=case.rtol, atol=case.atol, err_msg=f"{case.call}: {what}"
    )


def check_reverse(case, call, env, g):
    """The rule's cotangents against ``jax.vjp``; for a decomposition, its body's value (see ``check_decompose``)."""
    if call.op.family == "decompose":
        return check_decompose(call, env)
    out, expected = jax_vjp(call, env, g)
    np.testing.assert_allclose(
        call.output(env), out, rtol=1e-10, atol=1e-12, err_msg="value"
    )
    if call.op.family == "nondiff":
        for name in case.names:
            assert not np.any(
                expected[name]
            ), f"{case.call}: JAX has a gradient for {name}"
        return {}
    ans = call.evaluate(call.node, env)
    got = rule_cotangents(call, env, full_g(call, env, g), ans)
    for name in case.names:
        assert_close(
            got.get(name, np.zeros_like(env[name])),
            expected[name],
            case,
            f"cotangent of {name}",
        )
    return got


def check_decompose(call, env):
    """A decomposition's body, run on NumPy, computes the library function (no derivative: None).

    Its derivatives are s2s's derivatives of the body, which ``test_ops_e2e``,
    ``test_ops_vmap`` and ``test_second_order`` check against JAX's of the
    library function itself (and finite differences).
    """
    bound = call.arguments(env)
    out = call.op.rule(*bound.args, **bound.kwargs)
    np.testing.assert_allclose(
        out if call.index is None else out[call.index],
        call.output(env),
        rtol=1e-10,
        atol=1e-12,
        err_msg=f"{call.source}: decomposed value",
    )
    return None


def check_forward(case, call, env, g, got, rng):
    """Forward mode as the family derives it, by the adjoint identity ``<g, J t> == <J^T g, t>``.

    ``J^T g`` is the rule's reverse mode, already checked against JAX; the
    forward side is what the compiler will emit: elementwise, the partials
    times the tangents; linear, the op applied to the tangents.
    """
    if call.op.family not in ("elementwise", "linear"):
        return
    tangents = {n: rng.normal(size=np.shape(env[n])) for n in case.names}
    if call.op.family == "linear":
        jvp = call.output(tangents)
    else:
        bound = call.arguments(env)
        params = call.op.rule.__code__.co_varnames
        extra = {"ans": call.output(env)} if "ans" in params else {}
        partials = call.op.rule(*bound.args, **bound.kwargs, **extra)
        partials = partials if call.arity > 1 else (partials,)
        jvp = np.zeros(np.shape(g))
        for param, partial in zip(call.leading, partials):
            node = call.bound.arguments.get(param)
            if (
                partial is not None
                and isinstance(node, ast.Name)
                and node.id in case.names
            ):
                jvp = jvp + partial * tangents[node.id]
    forward = np.sum(g * jvp)
    reverse = sum(np.sum(got.get(n, 0) * tangents[n]) for n in case.names)
    scale = 1 + sum(np.sum(np.abs(got.get(n, 0) * tangents[n])) for n in case.names)
    assert (
        abs(forward - reverse) <= 1e-9 * scale
    ), f"{case.call}: jvp {forward} vs vjp {reverse}"


def check_finite_differences(case, call, env, g, got, rng, h=1e-6):
    """Directional derivative by central differences against the rule's cotangents."""
    direction = {n: rng.normal(size=np.shape(env[n])) for n in case.names}

    def f(t):
        return np.sum(
            g * call.output({n: env[n] + t * direction[n] for n in case.names})
        )

    numeric = (f(h) - f(-h)) / (2 * h)
    analytic = sum(np.sum(got.get(n, 0) * direction[n]) for n in case.names)
    assert abs(numeric - analytic) <= 1e-5 * (
        1 + abs(analytic)
    ), f"{case.call}: {numeric} vs {analytic}"


@pytest.mark.parametrize("case", CORE_CASES, ids=[c.id for c in CORE_CASES])
@SETTINGS
@given(data=st.data())
def test_rule_matches_jax(case, data):
    check_rule(case, data)


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=[c.id for c in LIBRARY_CASES])
@settings(SETTINGS, max_examples=1)
@given(data=st.data())
def test_library_rule_matches_jax(case, data):
    check_rule(case, data)


def check_rule(case, data):
    """Reverse mode against JAX, forward mode by the adjoint identity, and finite differences where smooth."""
    call = Call(case)
    env = draw_inputs(case, data.draw)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    with np.errstate(all="ignore"):
        g = rng.normal(size=np.shape(call.output(env)))
        got = check_reverse(case, call, env, g)
        if got is None:
            return
        check_forward(case, call, env, g, got, rng)
        if case.fd and call.op.family != "nondiff":
            check_finite_differences(case, call, env, g, got, rng)


JIT_CASES = [
    c
    for c in CASES
    if op_named(ALIASES.get(c.func_name, c.func_name)).family
    in ("elementwise", "linear", "vjp")
]


@pytest.mark.parametrize("case", JIT_CASES, ids=[c.id for c in JIT_CASES])
@settings(max_examples=1, deadline=None, derandomize=True)
@given(data=st.data())
def test_rule_runs_under_jit(case, data):
    """The rule body with ``xp = jax.numpy``, inputs, ``ans`` and ``g`` traced by ``jax.jit``."""
    call = Call(case)
    env = draw_inputs(case, data.draw)
    with np.errstate(all="ignore"):
        ans = call.evaluate(call.node, env)
        g = np.random.default_rng(0).normal(size=np.shape(call.output(env)))
        expected = rule_cotangents(call, env, full_g(call, env, g), ans)

        @jax.jit
        def traced(env, g, ans):
            return rule_cotangents(call, env, full_g(call, env, g, jnp), ans, jnp)

        got = traced(
            {n: jnp.asarray(v) for n, v in env.items()},
            jnp.asarray(g),
            jax.tree.map(jnp.asarray, ans),
        )
    assert set(got) == set(expected)
    for name in expected:
        np.testing.assert_allclose(
            got[name],
            expected[name],
            rtol=1e-9,
            atol=1e-12,
            err_msg=f"{case.call}: {name}",
        )
