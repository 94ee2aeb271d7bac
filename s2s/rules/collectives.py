"""Rules of the collectives over a named axis (``rt.psum`` and the rest, ``runtime/collectives.py``).

Derivatives are JAX's: ``psum`` and ``pmean`` are linear and their own
transposes (each example's cotangent is summed, or averaged, over the axis);
``pmax`` and ``pmin`` have none, so differentiating through one is an error,
as in JAX. Under ``s2s.vmap`` the ``collective`` batch family (families.py)
rewrites a collective over the vmap's own axis into a reduction over its
examples (``rt.psum_examples``), whose derivatives are below too, so batched
code is differentiated again (``s2s.grad`` of ``s2s.vmap``).
"""

from s2s import runtime as rt

from .registry import batch, linear, no_derivative, nondiff, signature_of


@linear(name="rt.psum")
def psum(x, axis_name, *, g):
    return rt.psum(g, axis_name), None


@linear(name="rt.pmean")
def pmean(x, axis_name, *, g):
    return rt.pmean(g, axis_name), None


no_derivative("JAX differentiates neither", rt.pmax, "rt.pmax", "rt.pmin")
nondiff("an example's integer position", "rt.axis_index")
signature_of(rt.axis_index, "rt.axis_index")
batch("collective", "rt.psum", "rt.pmean", "rt.pmax", "rt.pmin", "rt.axis_index")


@linear(name="rt.psum_examples")
def psum_examples(x, *, g):
    return rt.unsum_batch(g, x)


@linear(name="rt.pmean_examples")
def pmean_examples(x, *, g):
    return rt.pmean_examples_vjp(g, x)


@linear(name="rt.pmean_examples_vjp")
def pmean_examples_vjp(ct, like, *, g):
    return rt.pmean_examples(g), None


no_derivative(
    "JAX differentiates neither",
    rt.pmax_examples,
    "rt.pmax_examples",
    "rt.pmin_examples",
)
nondiff("each example's integer position", "rt.axis_index_examples")
