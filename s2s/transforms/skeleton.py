"""What every transform shares: its context, fresh names, emission with origins, and dispatch to rules.

A transform (forward mode, reverse mode) walks the statements of a normal-form
body and emits new ones. ``Transform`` gives each of them:

- ``ctx``: what every function generated for one program shares (the namer,
  the user's helpers, their flow summaries, custom rules);
- ``emit``: one statement, simplified (``fold``) and cited under the user's
  line being transformed (``origin``; reverse mode marks it ``backward``);
- ``rule``: the op a call stands for and its rule in this transform's mode,
  bound to the call's arguments, or a located ``MissingRule``;
- ``derive``: that rule applied by its family (``families.py``), which owns
  how each mode reads a family's rules;
- ``control``: the mode's rules for ``rt.cond``/``scan``/``while_loop``, which
  transform their functions' bodies by calling back into the transform
  (``nested``) instead of importing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

import libcst as cst

from .. import ir
from ..cstutil import call, names_in
from ..errors import MissingRule
from ..naming import Namer
from ..rules.registry import op_named
from ..templates import bind, instantiate
from .activity import RULE_HINT, array_evidence, diff_names
from .dependence import local_functions
from .families import FAMILIES
from .simplify import fold

# ops whose rules read their ``dtype`` themselves
_CASTS_OF_THEIR_OWN = frozenset({"astype"})


@dataclass(frozen=True)
class Context:
    """What every function generated for one program shares: names, helpers and their flow summaries."""

    namer: Namer
    helpers: frozenset = frozenset()
    flows: dict = field(default_factory=dict)
    # helper name -> ``program.Custom``: its rule, called instead
    custom: dict = field(default_factory=dict)
    # the helper vjps that reverse-mode code calls, each for the cotangents its callers use
    vjps: HelperRequests = field(default_factory=lambda: HelperRequests("vjp"))


class HelperRequests:
    """The versions of user helpers that transformed code calls: (helper, which arguments the transform
    follows) -> the generated function's name, ``<helper>_<suffix>`` (``_2``, ... for other arguments).
    """

    def __init__(self, suffix: str, taken=frozenset()):
        self.suffix = suffix
        self.names: dict = {}
        # names the module's other functions have (a generated module read again for a second derivative
        # holds a ``f_vjp`` of its own, for other arguments)
        self.taken = set(taken)
        # (helper, which) -> the line of the first call that asked for it
        self.origins: dict = {}

    def name(self, helper: str, which: tuple, origin=None) -> str:
        self.origins.setdefault((helper, which), origin)
        if (helper, which) not in self.names:
            base, k = f"{helper}_{self.suffix}", 1
            name = base
            while name in self.taken:
                k += 1
                name = f"{base}_{k}"
            self.taken.add(name)
            self.names[(helper, which)] = name
        return self.names[(helper, which)]


class Transform:
    """One body being transformed: the statements emitted so far (``out``) and what they are made from."""

    mode: ClassVar[str]  # the key of this transform's rules in ``Op.rules``
    control: ClassVar[dict]  # ``rt.<name>`` -> this mode's rule for a control-flow call
    phase: ClassVar[str | None] = None  # how emitted statements cite their origin

    def __init__(self, body, active, ctx: Context):
        self.active = active
        self.ctx = ctx
        self.helpers = ctx.helpers
        self.flows = ctx.flows
        self.namer = ctx.namer
        self.arrays = array_evidence(body, ctx.helpers)
        self.defs = local_functions(body)
        self.out: list[ir.Stmt] = []
        self.origin = None

    # --- emission ----------------------------------------------------------------------
    def emit(self, target, value) -> None:
        """``target = value``, simplified, citing the statement being transformed."""
        origin = self.origin
        if origin is not None and self.phase is not None:
            origin = replace(origin, phase=self.phase)
        self.out.append(ir.Assign(target, fold(value), origin))

    def emit_locals(self, template, bindings: dict) -> dict:
        """Emit a rule's own assignments under fresh names; the bindings extended with them."""
        bindings = dict(bindings)
        for local, value in template.statements:
            names = {n: cst.Name(self.namer.fresh(f"_{n}")) for n in names_in(local)}
            self.emit(instantiate(local, names), instantiate(value, bindings))
            bindings.update(names)
        return bindings

    def zeros(self, name: str, arrays=None) -> cst.Call:
        """Float zeros shaped like the variable ``name`` (a tree of zeros when it may be a container).

        Float even where ``name`` holds integers (a loop counter read by
        arithmetic): a derivative is never an integer, and both branches of a
        ``cond`` must give the same dtypes.
        """
        known = self.arrays if arrays is None else arrays
        return call(
            "rt.zeros_like_float" if name in known else "rt.tree_zeros_like",
            cst.Name(name),
        )

    def is_active(self, atom) -> bool:
        return bool(diff_names(atom) & self.active)

    # --- dispatch ----------------------------------------------------------------------
    def rule(self, e):
        """The op ``e`` calls, its rule in this mode and its parameters bound to the call's atoms."""
        op = op_named(("rt." if e.kind == "runtime" else "") + e.name)
        rule = op.rules.get(self.mode) if op is not None else None
        needs_template = (
            self.mode != "batch" or rule is None or rule.family == "explicit"
        )
        if rule is None or (needs_template and rule.template is None):
            if self.mode == "batch":
                kind = "batching"
            elif op is None or op.rule is None:
                kind = "derivative"
            else:
                kind = f"{self.mode}-mode"
            raise MissingRule(f"no {kind} rule for {e.label()}", self.origin, RULE_HINT)
        bindings = bind(op, e, self.origin) if op.signature is not None else {}
        return op, rule, bindings

    def derive(self, e, target: str):
        """Apply the op's rule in this mode through its family's derivation."""
        op, rule, bindings = self.rule(e)
        return getattr(FAMILIES[rule.family], self.mode)(self, op, e, bindings, target)

    def result_dtype(self, e):
        """The dtype a NumPy call's ``dtype`` argument casts its result to (``np.asarray(v, dtype=int)``,
        ``np.sum(x, dtype=np.int32)``), else None. A derivative reaches the result through that cast
        (``rt.astype_jvp``): none through an integer or bool type, as in JAX; the rules of the ops read
        their operands' derivatives as if no cast were there."""
        if e.kind == "runtime" or e.name in _CASTS_OF_THEIR_OWN:
            return None
        op = op_named(e.name)
        if op is None or op.signature is None or "dtype" not in op.params:
            return None
        atom = bind(op, e, self.origin).get("dtype")
        if atom is None or (isinstance(atom, cst.Name) and atom.value == "None"):
            return None
        return atom

    def nested(self, *args, **kwargs):
        """This transform of a function's body (a branch, a loop body): what control rules recurse with."""
        raise NotImplementedError
