"""How s2s decides which values carry derivatives (``s2s/transforms/activity.py``), tested directly.

A variable is active when it depends differentiably on a differentiated input
and a differentiated output depends differentiably on it. Static values
(shapes), comparisons and other nondiff ops never are; a local function handed
to a call stands for what it reads; a user function passes on what its flow
summary says; containers pass activity through their reads.
"""

import numpy as np
import pytest
from programs import activity as P

import s2s
from s2s import ir
from s2s.errors import MissingRule
from s2s.passes.normal_form import eqn_of
from s2s.program import build
from s2s.transforms.activity import activity, diff_names


def _active(fn, wrt=(0,)):
    """The active names of the lowered ``fn``, and the statements binding them (by their op)."""
    program = build(fn)
    main = program.main
    *body, ret = main.body
    names = activity(
        body,
        [main.params[i].name for i in wrt],
        diff_names(ret.value),
        frozenset(program.helpers),
        program.flows,
    )
    ops = {
        eqn_of(s.value, frozenset(program.helpers)).name
        for s in body
        if isinstance(s, ir.Assign) and names & set(ir.target_names(s.target))
    }
    return names, ops


def test_static_values_and_nondiff_ops_are_not_active():
    names, ops = _active(P.through_ops)
    assert {"w", "h"} <= names
    assert ops >= {"matmul", "tanh", "multiply", "sum"}
    assert not ops & {"greater", "argmax"}  # comparisons and argmax carry no derivative
    assert "n" not in names  # a shape


def test_input_not_reaching_the_output_is_not_active():
    names, _ = _active(P.through_ops, wrt=(1,))
    assert "x" in names and "w" not in names


def test_a_local_function_handed_to_a_call_stands_for_its_closure():
    names, ops = _active(P.closure_handed_to_a_call)
    assert "piecewise" in ops  # active through `row`, which reads `w`
    with pytest.raises(MissingRule, match="no derivative rule for `piecewise`"):
        s2s.grad(P.closure_handed_to_a_call)(np.ones(2), np.ones((3, 2)))


def test_a_loop_body_reading_a_weight_makes_the_loop_active():
    names, ops = _active(P.closure_handed_to_a_loop)
    assert "scan" in ops


def test_helper_arguments_follow_the_flow_summary():
    program = build(P.helper_summary)
    # an axis carries no derivative
    assert program.flows["_reduce"] == (
        True,
        True,
        False,
    )
    names, ops = _active(P.helper_summary)
    assert "_reduce" in ops


def test_containers_pass_activity_through_constant_reads():
    names, _ = _active(P.containers)
    assert {"params", "W", "b", "scale"} <= names
