"""Generated gradients against careful hand-written ones (``_hand_written.py``), in lines of code.

For each example, ``s2s.grad`` of its loss must compute the hand-written
gradient (float64, NumPy backend) before its size counts. Lines of code are
the formatted module's lines less blank lines, comments, docstrings and
imports: what a reviewer reads. The goal is a generated module at most twice
the hand-written one.

    python benchmarks/generated_size.py [--show NAME]
"""

import argparse
import ast
import inspect
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _hand_written as hand
from _twins import load_example

import s2s


def code_lines(text: str) -> int:
    """Lines a reviewer reads: not blank, not a comment, not in a docstring or an import."""
    tree = ast.parse(text)
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            skipped.update(range(node.lineno, node.end_lineno + 1))
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.FunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            skipped.update(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(
        1
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip() and not line.lstrip().startswith("#") and number not in skipped
    )


def _inputs(rng):
    mlp = load_example("examples/mlp.py")
    attention = load_example("examples/attention.py")
    layernorm = load_example("examples/layernorm.py")
    x = rng.standard_normal((6, 4))
    return {
        "mlp": (
            mlp.loss,
            0,
            (
                mlp.init(rng, [4, 5, 5, 3], np.float64),
                *mlp.data(rng, 6, 4, 3, np.float64),
            ),
            hand.mlp_loss_grad,
        ),
        "logistic": (
            load_example("examples/logistic.py").loss,
            (0, 1),
            (rng.standard_normal(4), 0.3, x, (rng.random(6) > 0.5) * 1.0),
            hand.logistic_loss_grad,
        ),
        "layernorm": (
            layernorm.loss,
            0,
            (layernorm.init(rng, 4, 3, np.float64), x, rng.standard_normal((6, 3))),
            hand.layernorm_loss_grad,
        ),
        "attention": (
            attention.loss,
            0,
            (attention.init(rng, 4, np.float64), x, rng.standard_normal((6, 4))),
            hand.attention_loss_grad,
        ),
        "polynomial": (
            load_example("examples/polynomial.py").f,
            0,
            (rng.standard_normal(5),),
            hand.polynomial_f_grad,
        ),
    }


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [np.asarray(tree)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", help="print this example's generated module")
    args = parser.parse_args()
    print(f"{'example':12} {'generated':>9} {'by hand':>8} {'ratio':>6}")
    for name, (loss, argnums, inputs, by_hand) in _inputs(
        np.random.default_rng(0)
    ).items():
        grad = s2s.grad(loss, argnums, backend="numpy")
        for got, want in zip(_leaves(grad(*inputs)), _leaves(by_hand(*inputs))):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=name)
        generated = code_lines(grad.source)
        written = code_lines(inspect.getsource(by_hand))
        print(f"{name:12} {generated:9d} {written:8d} {generated / written:6.1f}")
        if args.show == name:
            print(grad.source)


if __name__ == "__main__":
    main()
