"""s2s: source-to-source differentiation of NumPy programs, compiled through XLA.

    import s2s
    df = s2s.grad(loss)          # same semantics as jax.grad
    df(params, x, y)             # runs compiled by XLA
    print(df.source)             # the generated gradient module
"""

from .api import grad, value_and_grad, vjp, jvp, linearize, jvp_source, transform, Transformed
from .codegen import generate
from .jacobians import jacfwd, jacrev, hessian
from .custom import custom_jvp, custom_vjp, stop_gradient
from .checking import check_grads
from .errors import S2SError

__version__ = "0.1.0"
__all__ = [
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "linearize",
    "jvp_source",
    "jacfwd",
    "jacrev",
    "hessian",
    "custom_jvp",
    "custom_vjp",
    "stop_gradient",
    "check_grads",
    "transform",
    "Transformed",
    "generate",
    "S2SError",
]
