"""``emit.fuse``: temporaries read once are written into their reader, and only where that computes the same.

The end-to-end tests run fused modules against JAX; these check each
guarantee of the pass on small functions built by hand.
"""

import libcst as cst

from s2s import ir
from s2s.emit.fuse import fuse
from s2s.errors import Origin

LINE_3, LINE_4 = (Origin("model.py", n, 0, 1, "...") for n in (3, 4))


def _assign(target, value, origin=LINE_3):
    return ir.Assign(cst.Name(target), cst.parse_expression(value), origin)


def _code(fn):
    return ir.to_source(fuse(fn), comments=False)


def _fn(*body, returns="y"):
    ret = ir.Return(cst.Name(returns), LINE_3)
    return ir.Function("f", (ir.Param("a"), ir.Param("b")), (*body, ret))


def test_a_chain_of_temporaries_becomes_one_expression():
    fn = _fn(_assign("_m", "a @ b"), _assign("_s", "_m + 1.0"), _assign("y", "_s * b"))
    assert "y = (a @ b + 1.0) * b" in _code(fn)


def test_a_temporary_read_twice_stays():
    fn = _fn(_assign("_m", "a @ b"), _assign("y", "_m * _m"))
    assert "_m = a @ b" in _code(fn)


def test_a_name_the_value_reads_rebound_in_between_keeps_the_temporary():
    fn = _fn(
        _assign("_t", "a * 2"),
        _assign("a", "a + 1"),
        _assign("y", "_t + a"),
    )
    assert "_t = a * 2" in _code(fn)


def test_user_names_and_other_lines_stay():
    fn = _fn(
        _assign("h", "a * 2"),
        _assign("_t", "b * 3"),
        _assign("y", "h + _t", LINE_4),
    )
    code = _code(fn)
    assert "h = a * 2" in code and "_t = b * 3" in code


def test_a_temporary_a_local_function_reads_stays():
    inner = ir.Function(
        "body", (ir.Param("c"),), (ir.Return(cst.parse_expression("c + _t"), LINE_3),)
    )
    fn = _fn(_assign("_t", "a * 2"), ir.Def(inner), _assign("y", "body(b)"))
    assert "_t = a * 2" in _code(fn)


def test_cotangents_of_user_names_keep_their_names_and_those_of_temporaries_go():
    fn = _fn(
        _assign("h_bar", "a * b"),
        _assign("_m_bar", "h_bar * 2.0"),
        _assign("y", "_m_bar @ b"),
    )
    code = _code(fn)
    assert "h_bar = a * b" in code and "y = h_bar * 2.0 @ b" in code


def test_terms_of_a_derivative_added_on_one_line_are_one_sum():
    fn = _fn(
        _assign("y_bar", "a * b"),
        _assign("_t", "a + 1.0"),
        _assign("y_bar", "y_bar + _t * b"),
        _assign("y_bar", "y_bar + a"),
        _assign("y", "y_bar * 2.0", LINE_4),
    )
    assert "y_bar = a * b + (a + 1.0) * b + a" in _code(fn)


def test_equal_terms_are_added_once_doubled():
    fn = _fn(
        _assign("y_bar", "a * b"), _assign("y_bar", "y_bar + a * b"), returns="y_bar"
    )
    assert "y_bar = 2 * (a * b)" in _code(fn)


def test_terms_added_after_another_line_reads_the_derivative_stay_apart():
    fn = _fn(
        _assign("y_bar", "a * b"),
        _assign("z", "y_bar * 3.0"),
        _assign("y_bar", "y_bar + z"),
        returns="y_bar",
    )
    assert "y_bar = a * b" in _code(fn)
