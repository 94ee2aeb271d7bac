"""A program: the user's function and every helper it calls, lowered, with derivative-flow summaries.

Helpers are the user's own functions (same module or imported); each is
lowered once and later gets its own generated derivative, mirroring the
user's structure. ``flows[h][i]`` says whether a derivative flows from
parameter ``i`` of helper ``h`` to its output.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
from collections import OrderedDict
from dataclasses import dataclass, field, fields, replace

import libcst as cst

from . import ir
from .custom import custom_rule
from .errors import S2SError
from .freshness import GENERATED_KEY, Watch
from .frontend import source
from .frontend.resolve import GENERATED_NAMES
from .frontend.scope import Scope
from .passes.dataflow import free_names, used_names
from .pipeline import lower
from .transforms.activity import activity, diff_names


@dataclass(frozen=True)
class Custom:
    """A helper with a user-defined rule: ``kind`` "jvp" (``rules`` = (jvp,)) or "vjp" (``rules`` = (fwd, bwd)),
    by the names of the rule functions, which are helpers too."""

    kind: str
    rules: tuple[str, ...]
    nondiff_argnums: tuple[int, ...]
    diff_argnums: tuple[int, ...]


@dataclass
class Program:
    main: ir.Function
    # name -> lowered Function, callees first
    helpers: dict = field(default_factory=dict)
    constants: dict = field(default_factory=dict)
    # constant name -> (module, attribute), and the literal defaults calls were written with: ``Resolved``'s
    owners: dict = field(default_factory=dict)
    defaults: dict = field(default_factory=dict)
    flows: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)  # FunctionSource of main and helpers
    custom: dict = field(default_factory=dict)  # helper name -> Custom
    rule_functions: set = field(default_factory=set)  # helpers that are custom rules
    custom_main: bool = (
        False  # the transformed function itself has a custom rule: ``main`` calls that helper
    )
    # a helper that is the batched module of another function (``jax.vmap(f)(xs)`` inside): its name ->
    # (that function, the inner ``vmap``'s axes), to map it again over merged batch axes
    batched_of: dict = field(default_factory=dict)
    # the vjps of such helpers that a generated module holds: its function's name -> (the helper, the
    # argument positions with cotangents); and read back from a generated module, a helper that is one ->
    # (the function mapped, the inner ``vmap``'s axes, those positions), to map it again over merged axes
    batched_vjps: dict = field(default_factory=dict)
    vjp_of_batched: dict = field(default_factory=dict)
    # (function, argument positions) -> the name of its vjp kept among the helpers (``codegen``)
    helper_vjps: dict = field(default_factory=dict)
    helper_jvps: dict = field(default_factory=dict)
    # ``lowered(fn)``: the helper name of a function of the program, lowered on first asking (the
    # function an inner ``vmap`` maps, only where an outer one maps it again)
    lowered: object = None

    def watch(self) -> Watch:
        """A watch on the values its functions read (and that parameters bound to a function or an object of
        the program hold: ``model=MODEL``)."""
        held = [src.env[name] for src in self.sources for name in src.fixed]
        return Watch.of((src.fn for src in self.sources), held)

    @property
    def digest(self) -> str:
        """A hash of every function's source text (the input of the transformation)."""
        h = hashlib.sha256()
        for src in self.sources:
            h.update(src.name.encode() + b"\0" + src.text.encode() + b"\0")
        return h.hexdigest()[:16]


def build(fn) -> Program:
    """Lower ``fn`` and, callees first, every user function it calls; names come from one ``Scope``.

    A program built before for the same function is handed out again (a copy: transforms add helpers
    to it) while every value it read is still the same (``freshness.Watch``): ``grad``, ``jvp`` and
    ``vmap`` of one function read it once.
    """
    entry = (
        getattr(fn, "s2s_generated_function", None) or fn
    )  # (a transformed one's module)
    built = _BUILT.get(id(fn))
    if built is not None and built.serves(fn, entry):
        _BUILT.move_to_end(id(fn))
        return built.builder.copy().program
    builder = _Builder(Program(main=None), Scope(dict.fromkeys(GENERATED_NAMES)))
    builder.start(fn, entry)
    _BUILT[id(fn)] = _Built(
        fn, entry, _code_of(entry), builder, builder.program.watch()
    )
    while len(_BUILT) > 64:
        _BUILT.popitem(last=False)
    return builder.copy().program


@dataclass
class _Built:
    """A program as ``build`` made it, and what it was made from."""

    fn: object
    entry: object
    code: tuple
    builder: _Builder
    watch: Watch

    def serves(self, fn, entry) -> bool:
        """Whether it is the program of ``fn`` now: the same function and code, reading the same values."""
        return (
            self.fn is fn
            and self.entry is entry
            and all(a is b for a, b in zip(_code_of(entry), self.code))
            and self.watch.fresh()
        )


def _code_of(fn) -> tuple:
    """The code and defaults of a function (either can be assigned anew), held: compared by identity."""
    return tuple(
        getattr(fn, a, None) for a in ("__code__", "__defaults__", "__kwdefaults__")
    )


_BUILT: OrderedDict = OrderedDict()  # id(fn) -> _Built, most recently used last


@dataclass
class _Builder:
    """Builds a program: lowers functions into it, naming module-level objects in one ``Scope``."""

    program: Program
    scope: Scope
    visiting: list = field(default_factory=list)

    def __post_init__(self):
        self.program.lowered = self.lowered

    def copy(self) -> _Builder:
        """A builder of a copy of the program: what is added to one is not added to the other."""
        p = self.program
        program = replace(
            p,
            **{
                f.name: copy.copy(getattr(p, f.name))
                for f in fields(p)
                if isinstance(getattr(p, f.name), (dict, list, set))
            },
        )
        scope = Scope(
            dict(self.scope.values),
            {k: list(v) for k, v in self.scope.spellings.items()},
        )
        return _Builder(program, scope)

    def start(self, fn, entry) -> None:
        program, scope = self.program, self.scope
        rule = custom_rule(fn)
        # the function itself has a custom rule: main calls it as a helper
        if rule is not None:
            name = scope.name(rule.name, fn, function=True)
            self.add(name, fn, None)
            program.main = _calling(program.helpers[name], name)
            program.custom_main = True
            return
        if _mapped_function(entry) is not None:
            # a batched module mapped again (``vmap(vmap(k))``): main calls it, and mapping the call writes
            # it over both axes at once (``nested_batches.merged``)
            name = scope.name(entry.__name__, entry, function=True)
            self.add(name, entry, None)
            program.main = _calling(program.helpers[name], name)
            return
        src = source.load(fn)  # read (and checked against the running code) once
        name = scope.name(src.name, fn, function=True)
        program.main = self.visit(fn, name, src, helper=False)

    def visit(self, live_fn, name, src=None, helper=True):
        program = self.program
        src = src or source.load(live_fn)
        resolved = lower(src, name, scope=self.scope, helper=helper)
        program.sources.append(src)
        # names are unique in the scope: no two values share one
        program.constants.update(resolved.constants)
        program.owners.update(resolved.owners)
        program.defaults.update(resolved.defaults)
        # the helpers its code calls (a helper read and then bound per call, ``trap(integrand, ...)`` as
        # ``trap_integrand``, is not lowered on its own: its unbound body may not be readable)
        used = used_names(resolved.function)
        for helper_name, helper in sorted(resolved.helpers.items()):
            if helper_name in used:
                self.add(helper_name, helper, name)
        return resolved.function

    def add(self, helper_name, helper, caller):
        """Lower the helper ``helper_name`` (called from ``caller``) and summarize its flows."""
        program, visiting = self.program, self.visiting
        if (
            helper_name in program.helpers
            or helper_name in visiting
            or helper_name == caller
        ):
            return  # done, or recursive: its summary is being computed (see below)
        visiting.append(helper_name)
        n = len(inspect.signature(helper).parameters)
        program.flows[helper_name] = (False,) * n
        lowered = self.visit(helper, helper_name)
        visiting.pop()
        if (
            len(lowered.param_names) != n
        ):  # ``**kwargs`` read as a parameter per key (``kwargs_act``)
            program.flows[helper_name] = (False,) * len(lowered.param_names)
        program.helpers[helper_name] = lowered
        inner = _mapped_function(helper)
        if (
            inner is not None
        ):  # an inner ``vmap``: what it maps, should an outer one map it again
            program.batched_of[helper_name] = inner
        made = _vjp_of_mapped(helper)
        if (
            made is not None
        ):  # its vjp, in a gradient module read again (``vmap(grad(f))``)
            program.vjp_of_batched[helper_name] = made
        rule = custom_rule(helper)
        if rule is None:
            _summarize(helper_name, lowered, program)
            return
        live_rules = _check_custom(rule, lowered, n)
        names = tuple(
            self.scope.name(
                # (a lambda given as a rule: named after what it is the rule of)
                (
                    live.__name__
                    if live.__name__.isidentifier()
                    else f"{helper_name}_{part}"
                ),
                live,
                function=True,
            )
            for live, part in zip(live_rules, _RULE_PARTS[rule.kind])
        )
        for name, live in zip(names, live_rules):
            self.add(name, live, caller)
            program.rule_functions.add(name)
        for name, live in zip(names, live_rules):
            if name in program.helpers:
                continue
            # a rule being lowered calls the function it is the rule of (``s2s.grad(softplus_jvp)``)
            rule_source = source.load(live)
            raise S2SError(
                f"`{name}` is the custom_{rule.kind} rule of `{helper_name}` and calls it: s2s transforms "
                f"the functions that call `{helper_name}`, where its rule applies, not the rule itself",
                rule_source.origin(rule_source.node),
                f"transform a function that calls `{helper_name}` (JAX's rule runs there), or give "
                f"`{name}`'s code a name of its own without the decorator",
            )
        _check_rule_functions(rule, [program.helpers[name] for name in names], n)
        diff = tuple(i for i in range(n) if i not in rule.nondiff_argnums)
        program.custom[helper_name] = Custom(
            rule.kind, names, rule.nondiff_argnums, diff
        )
        program.flows[helper_name] = tuple(i in diff for i in range(n))

    def lowered(self, fun) -> str:
        """The helper name of ``fun``, lowered into the program on first asking."""
        name = self.scope.name(getattr(fun, "__name__", "mapped"), fun, function=True)
        self.add(name, fun, None)
        return name


# what each of a custom function's rule functions is, by its kind
_RULE_PARTS = {"jvp": ("jvp",), "vjp": ("fwd", "bwd")}


def _mapped_function(helper):
    """``(fun, axes)`` of a helper that is ``s2s.vmap``'s batched module of ``fun`` (``vmapping.Axes``'s
    spec: in_axes, out_axes, axis_size, axis_name), or a copy of one in a generated module; else None.
    """
    made = getattr(helper, "s2s_made_by", None)
    if made is None and _is_transformed(helper):
        made = helper  # (the inner map of a map merged with it: ``vmap`` of ``vmap(vmap(k))``)
    if made is not None and made.kind == "batch":
        return made.fn, made.argnums.spec
    maker = _generated_program(helper)
    return None if maker is None else maker.batched_of.get(helper.__name__)


def _is_transformed(obj) -> bool:
    from .api import Transformed

    return isinstance(obj, Transformed)


def _vjp_of_mapped(helper):
    """``(fun, axes, which)`` of a function of a generated module that is the vjp of such a copy (the
    arguments at ``which`` get cotangents), else None."""
    maker = _generated_program(helper)
    found = None if maker is None else maker.batched_vjps.get(helper.__name__)
    if found is None or found[0] not in maker.batched_of:
        return None
    return (*maker.batched_of[found[0]], found[1])


def _generated_program(helper):
    """The ``Program`` a generated module's function was made from (None: not one, or read from a file)."""
    generated = getattr(helper, "__globals__", {}).get(GENERATED_KEY)
    return getattr(generated, "program", None)


def _calling(helper: ir.Function, name: str) -> ir.Function:
    """``def f(x, y): f_out = f(x, y); return f_out``: a main function that calls the helper ``name``."""
    params = tuple(ir.Param(p.name) for p in helper.params)
    out = cst.Name(f"{name}_out")
    value = cst.Call(cst.Name(name), [cst.Arg(cst.Name(p.name)) for p in params])
    body = (ir.Assign(out, value, helper.origin), ir.Return(out, helper.origin))
    return ir.Function(name, params, body, helper.origin)


def _check_custom(rule, primal: ir.Function, n: int) -> tuple:
    """The rule functions of a custom function, after checking it is complete and consistent."""
    name = rule.name
    if any(r is None for r in rule.rules):
        how = (
            f"@{name}.defjvp"
            if rule.kind == "jvp"
            else f"{name}.defvjp({name}_fwd, {name}_bwd)"
        )
        raise S2SError(
            f"custom_{rule.kind} function `{name}` has no rule",
            primal.origin,
            f"define it with `{how}`",
        )
    for i in rule.nondiff_argnums:
        if not isinstance(i, int) or not 0 <= i < n:
            raise S2SError(
                f"custom_{rule.kind} function `{name}` has nondiff_argnums={rule.nondiff_argnums}, "
                f"but it takes {n} arguments",
                primal.origin,
            )
    return rule.rules


def _check_rule_functions(rule, lowered: list, n: int) -> None:
    """Arities of the rule functions against JAX's conventions, at the rule's line."""
    k = len(rule.nondiff_argnums)
    expected = [k + 2] if rule.kind == "jvp" else [n, k + 2]
    shapes = (
        ["(*nondiff_args, primals, tangents)"]
        if rule.kind == "jvp"
        else ["the same arguments as the function", "(*nondiff_args, residuals, g)"]
    )
    for fn, count, shape in zip(lowered, expected, shapes):
        if len(fn.params) != count:
            raise S2SError(
                f"`{fn.name}`, the custom_{rule.kind} rule of `{rule.name}`, takes {len(fn.params)} arguments; "
                f"it must take {count}: {shape}",
                fn.origin,
            )
    if rule.kind == "vjp":
        fwd, bwd = lowered
        diff = n - k
        _check_returns(fwd, 2, f"`{fwd.name}` must return a pair (output, residuals)")
        _check_returns(
            bwd,
            diff,
            f"`{bwd.name}` must return a tuple with one cotangent per differentiable argument ({diff})",
        )


def _check_returns(fn: ir.Function, count: int, message: str) -> None:
    """``fn`` must return a tuple of ``count`` values, written as one (``return y, (x, c)``): an array in
    its place would be unpacked row by row, a wrong answer with no error."""
    value = _returned_tuple(fn)
    origin = fn.body[-1].origin or fn.origin
    if value is None:
        raise S2SError(
            message + ", written as a tuple in its `return`",
            origin,
            "return a tuple: `return y, residuals`",
        )
    if len(value.elements) != count:
        raise S2SError(message + f", but returns {len(value.elements)} values", origin)


def _returned_tuple(fn: ir.Function) -> cst.Tuple | None:
    """The tuple ``fn`` returns: its ``return`` value, or the tuple last assigned to the name it returns."""
    value = fn.body[-1].value
    if isinstance(value, cst.Name):
        assigned = [
            s.value
            for s in fn.body
            if isinstance(s, ir.Assign) and s.target.deep_equals(value)
        ]
        value = assigned[-1] if assigned else value
    return value if isinstance(value, cst.Tuple) else None


def _summarize(name: str, fn: ir.Function, program: Program) -> None:
    """``program.flows[name]``: a fixed point, so a recursive helper's calls to itself count too.

    The summary starts with no flow at all and only ever grows, so this ends
    after at most one round per parameter.
    """
    while True:
        flows = _flows(fn, program)
        if flows == program.flows[name]:
            return
        program.flows[name] = tuple(a or b for a, b in zip(flows, program.flows[name]))


def _flows(fn: ir.Function, program: Program) -> tuple[bool, ...]:
    out = fn.body[-1].value
    # a local function returned (a factory's closure) carries what it reads from here
    local = {s.function.name: s.function for s in fn.body if isinstance(s, ir.Def)}
    outputs = set()
    for name in diff_names(out):
        outputs |= free_names(local[name]) - {"xp", "rt"} if name in local else {name}
    active = activity(
        fn.body,
        fn.param_names,
        outputs,
        frozenset(program.helpers),
        program.flows,
    )
    return tuple(p in active or p in outputs for p in fn.param_names)
