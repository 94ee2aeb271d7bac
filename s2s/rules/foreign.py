"""``rt.foreign``: a library function that JAX traces, called from generated code, with JAX's own derivatives.

Its rules in every mode are derived by the ``foreign`` family
(``s2s/transforms/foreign.py``): each is again a call of ``rt.foreign``, of the
function that ``rt.vjp_of``, ``rt.jvp_of`` or ``rt.vmap_of`` makes for the
operands that carry derivatives or a batch axis there, so derivatives of any
order and batched derivatives are foreign calls too. The template below is what
the reverse rule computes when every operand is differentiated.
"""

from dataclasses import replace
from types import MappingProxyType

from s2s import runtime as rt

from .registry import MODES, RUNTIME_OPS, Rule, batch, nondiff, vjp

FAMILY = "foreign"
# what ``python -m s2s.rules`` says of it
FOREIGN = (
    "foreign: rt.foreign(fn, *args) calls a library's JAX code (optax, Flax, Equinox); JAX's own vjp, jvp "
    "and vmap at the call are its rules, in every mode (README: Library code)"
)


@vjp(name="rt.foreign")
def foreign(fn, *args, keywords=None, g):
    everything = rt.vjp_of(None)
    cotangents = rt.foreign(everything, fn, *args, g, keywords=keywords)
    return cotangents[0], cotangents[1:]


RUNTIME_OPS["rt.foreign"] = replace(
    RUNTIME_OPS["rt.foreign"],
    family=FAMILY,
    rules=MappingProxyType({mode: Rule(FAMILY, foreign) for mode in MODES}),
)

nondiff(
    "makes the function (JAX's vjp, jvp or vmap of a library function) that a derivative or batched "
    "`rt.foreign` call runs",
    "rt.vjp_of",
    "rt.jvp_of",
    "rt.vmap_of",
)
# their arguments are constants (which operands, which axes): the same function for every example
batch("static", "rt.vjp_of", "rt.jvp_of", "rt.vmap_of")
