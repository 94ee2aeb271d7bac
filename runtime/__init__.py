"""What generated s2s modules call, always through one alias: ``from s2s import runtime as rt``.

Generated code is backend-neutral: it asks its arguments for their array
namespace (``xp = rt.namespace(...)``) and calls ``xp.tanh``, ``xp.sum``, ...
Under ``jax.jit`` that namespace is ``jax.numpy`` and the code compiles to XLA;
on NumPy arrays the same code runs eagerly. This package never imports the
compiler (libcst), and imports JAX only when JAX arrays reach it.
"""

from .arrays import (
    namespace,
    unbroadcast,
    reduced_like,
    reduced_count,
    index_add,
    index_set,
    index_get,
    index_get_vjp,
    index_set_value_vjp,
    grad_seed,
    zeros_like_float,
)
from .trees import fill_like, tree_add, tree_leaves, tree_zeros_like
from .control import cond, cond_with_residuals, scan, while_loop
from .checkpoints import while_loop_with_tape, while_loop_reverse
from .iteration import range, iterate, enumerate, zip, reversed, items, keys, values, append  # noqa: A004 (loop inputs)
from .iteration import sequence_vjp, enumerate_vjp, zip_vjp, reversed_vjp, items_vjp, values_vjp
from .linalg import (
    matmul_vjp_lhs,
    matmul_vjp_rhs,
    einsum_vjp,
    tensordot_vjp,
)
from .linalg import dot_vjp, inner_vjp, norm_vjp, solve_vjp_a, solve_vjp_b
from .rulesupport import (
    inverse_permutation,
    opposite,
    step,
    clip_partial,
    extremum_vjp,
    prod_vjp,
    cumprod_vjp,
    concatenate_vjp,
    unstack,
    hstack_vjp,
    vstack_vjp,
    split_vjp,
    tile_vjp,
    repeat_vjp,
    pad_vjp,
    diag_vjp,
    take_vjp,
    array_vjp,
)

__all__ = [
    "namespace",
    "unbroadcast",
    "reduced_like",
    "reduced_count",
    "index_add",
    "index_set",
    "index_get",
    "index_get_vjp",
    "grad_seed",
    "zeros_like_float",
    "cond",
    "scan",
    "while_loop",
    "while_loop_with_tape",
    "while_loop_reverse",
    "range",
    "iterate",
    "enumerate",
    "zip",
    "reversed",
    "items",
    "keys",
    "values",
    "values_vjp",
    "append",
    "sequence_vjp",
    "enumerate_vjp",
    "zip_vjp",
    "reversed_vjp",
    "items_vjp",
    "index_set_value_vjp",
    "cond_with_residuals",
    "fill_like",
    "tree_add",
    "tree_leaves",
    "tree_zeros_like",
    "matmul_vjp_lhs",
    "matmul_vjp_rhs",
    "einsum_vjp",
    "tensordot_vjp",
    "dot_vjp",
    "inner_vjp",
    "norm_vjp",
    "solve_vjp_a",
    "solve_vjp_b",
    "inverse_permutation",
    "opposite",
    "step",
    "clip_partial",
    "extremum_vjp",
    "prod_vjp",
    "cumprod_vjp",
    "concatenate_vjp",
    "unstack",
    "hstack_vjp",
    "vstack_vjp",
    "split_vjp",
    "tile_vjp",
    "repeat_vjp",
    "pad_vjp",
    "diag_vjp",
    "take_vjp",
    "array_vjp",
]
