"""``passes/cse.py`` and the folded decompositions: primal code is as lean as derivative code (issue 14).

The end-to-end tests run every program through the pass against JAX; these
check each guarantee on small functions built by hand, and the two cases the
issue names (``np.var``'s ``n - 0`` and its second ``mean``).
"""

import libcst as cst

import s2s
from s2s import ir
from s2s.passes.cse import cse
from s2s.pipeline import copies
from tests.programs import numpy_style as P


def _assign(target, value):
    return ir.Assign(cst.Name(target), cst.parse_expression(value))


def _shared(*body, returns):
    fn = ir.Function(
        "f",
        (ir.Param("x"), ir.Param("k")),
        (*body, ir.Return(cst.parse_expression(returns))),
    )
    return ir.to_source(cse(fn, copies), comments=False)


def test_a_value_computed_twice_is_computed_once():
    code = _shared(
        _assign("a", "xp.mean(x, axis=-1)"),
        _assign("b", "xp.mean(x, axis=-1)"),
        returns="a * b",
    )
    assert code.count("xp.mean") == 1 and "return a * a" in code


def test_values_alike_once_their_inputs_are_shared_are_shared_too():
    code = _shared(
        _assign("m", "xp.mean(x)"),
        _assign("mu", "xp.mean(x)"),
        _assign("d", "x - m"),
        _assign("e", "x - mu"),
        returns="d * e",
    )
    assert code.count("x - ") == 1


def test_random_draws_and_rebound_inputs_are_not_shared():
    code = _shared(
        _assign("a", "xp.random.normal(k)"),
        _assign("b", "xp.random.normal(k)"),
        _assign("c", "x + 1"),
        _assign("x", "x * 2"),
        _assign("d", "x + 1"),
        returns="a + b + c + d",
    )
    assert code.count("xp.random.normal") == 2 and code.count("x + 1") == 2


def test_an_element_write_forgets_what_was_computed():
    code = _shared(
        _assign("a", "xp.sum(x)"),
        ir.Assign(cst.parse_expression("x[0]"), cst.Float("1.0")),
        _assign("b", "xp.sum(x)"),
        returns="a + b",
    )
    assert code.count("xp.sum(x)") == 2


def test_var_reads_the_users_mean_and_divides_by_its_count():
    module = s2s.grad(P.standardized).source
    assert "- 0" not in module and module.count("xp.mean(") == 1


def test_a_value_substituted_into_an_expression_keeps_its_meaning():
    """``k = kind or "id"`` written into ``k == "tanh"`` needs parentheses (a gradient took the branch
    ``kind or ("id" == "tanh")`` picked); so do comparisons, ``and``/``or`` and conditional values.
    """
    from s2s.cstutil import substitute

    cases = {
        ('k == "tanh"', "k", 'kind or "id"'): '(kind or "id") == "tanh"',
        ("k < 2", "k", "a < b"): "(a < b) < 2",
        ("k and c", "k", "a or b"): "(a or b) and c",
        ("c and k", "k", "a and b"): "c and (a and b)",
        ("k if c else 0", "k", "a if b else d"): "(a if b else d) if c else 0",
        ("not k", "k", "a or b"): "not (a or b)",
    }
    for (expr, name, value), want in cases.items():
        got = substitute(
            cst.parse_expression(expr), {name: cst.parse_expression(value)}
        )
        written = cst.Module([]).code_for_node(got)
        assert written == want
        env = {"kind": None, "a": 1, "b": 0, "c": 2, "d": 3}
        assert eval(written, env) == eval(expr.replace(name, f"({value})"), env)
