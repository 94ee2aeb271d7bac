"""s2s: source-to-source differentiation of NumPy programs, compiled through XLA.

import s2s
df = s2s.grad(loss)          # same semantics as jax.grad
df(params, x, y)             # runs compiled by XLA
print(df.source)             # the generated gradient module
"""

from .api import (
    Transformed,
    grad,
    jvp,
    jvp_source,
    linearize,
    transform,
    value_and_grad,
    vjp,
)
from .checking import check_grads
from .codegen import generate
from .custom import custom_jvp, custom_vjp, stop_gradient
from .errors import S2SError
from .jacobians import hessian, jacfwd, jacrev
from .parallel import data_parallel, pmap
from .runtime.collectives import axis_index, pmax, pmean, pmin, psum
from .vmapping import vmap

__version__ = "0.1.0"
__all__ = [
    "S2SError",
    "Transformed",
    "axis_index",
    "check_grads",
    "custom_jvp",
    "custom_vjp",
    "data_parallel",
    "generate",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "jvp_source",
    "linearize",
    "pmap",
    "pmax",
    "pmean",
    "pmin",
    "psum",
    "stop_gradient",
    "transform",
    "value_and_grad",
    "vjp",
    "vmap",
]
