"""Check one random program (``programs.Program``) against oracles.

``check(program, folder, backends=("numpy",))`` writes the program to a real
file, imports it and its ``jax.numpy`` twin, and returns an ``Outcome``:

- ``skipped``: the program is not well-defined at its inputs (a kink or a
  data comparison within ``MARGIN`` of a tie, or a branch that the perturbed
  points decide differently), or the twin or the NumPy program itself fails
  (a generator bug: ``oracle``);
- ``oracle``: the twin and the NumPy program disagree (value, or the twin's
  gradient against central finite differences of the NumPy program): a
  generator problem, never counted against s2s;
- ``ok``: every s2s result matches;
- ``refused``: s2s raised ``s2s.S2SError`` located at ``file:line:col`` of
  the program's file (``unhelpful`` when the message has no location in it);
- ``crash``: any other exception from s2s;
- ``mismatch``: a wrong number or a wrong structure (the worst).

Checked, per backend: ``s2s.grad(f, argnums)`` against ``jax.grad`` of the
twin, ``s2s.value_and_grad`` (value and gradient), ``s2s.jvp`` against
``jax.jvp`` (tangents for every positional argument; keyword-only parameters
keep their defaults, as ``s2s.jvp`` binds primals positionally), and, with the
JAX oracle, ``s2s.vjp`` against ``jax.vjp`` (cotangents of every positional
argument); ``s2s.vmap`` of the program and of its gradient over a batch of
the first differentiated argument (its point and points moved from it)
against the program and the oracle's gradient example by example. With the
finite-difference oracle the same, but ``vjp``. Run with
``jax.config.update("jax_enable_x64", True)``: everything is float64.
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib.util
import inspect
import itertools
import re
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import jax
import numpy as np

import s2s

MARGIN = 1e-4  # each kink and data comparison must be this far from its tie
EPS = 1e-6  # central finite-difference step (the twin's vetting, path probes)
FD_STEP = 1e-6  # central finite-difference step of the finite-difference oracle
RTOL, ATOL = 1e-6, 1e-8  # s2s against JAX, float64
FD_RTOL, FD_ATOL = 1e-5, 1e-6  # the twin's gradient against finite differences
SEVERITY = ["ok", "skipped", "oracle", "refused", "unhelpful", "crash", "mismatch"]
_counter = itertools.count()


@dataclass
class Finding:
    kind: str  # refused / unhelpful / crash / mismatch
    mode: str  # grad / value_and_grad / jvp (and the backend)
    message: str
    key: str = ""  # groups findings of one cause


@dataclass
class Outcome:
    status: str
    findings: list = field(default_factory=list)
    note: str = ""
    path: str = ""

    def worst(self):
        return max([self.status] + [f.kind for f in self.findings], key=SEVERITY.index)


# ----------------------------------------------------------------------- loading


def load(program, folder):
    """(module, twin module, path): the program written to ``folder`` and imported, and its twin."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"fuzz_{program.seed}_{next(_counter)}"
    path = folder / f"{stem}.py"
    path.write_text(program.source)
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module  # namedtuples and inspect look modules up by name
    spec.loader.exec_module(module)
    twin_path = folder / f"{stem}_twin.py"
    twin_path.write_text(program.twin)
    twin_spec = importlib.util.spec_from_file_location(stem + "_twin", twin_path)
    twin = importlib.util.module_from_spec(twin_spec)
    sys.modules[stem + "_twin"] = twin  # (dataclasses look their module up by name too)
    twin_spec.loader.exec_module(twin)
    return module, twin, str(path)


def unload(path):
    sys.modules.pop(Path(path).stem, None)
    sys.modules.pop(Path(path).stem + "_twin", None)
    sys.modules.pop(Path(path).stem + "_probe", None)


def arguments(program, module):
    scope = {"np": np, "mod": module}
    exec(program.args_code, scope)
    return scope["args"], scope["kwargs"]


# ------------------------------------------------------------------------ probes


class _Instrument(ast.NodeTransformer):
    """Routes every kink and data comparison through a recorder (``_rec``): ties are then measurable."""

    KINKS: ClassVar = {
        "np.maximum",
        "np.minimum",
        "np.abs",
        "np.absolute",
        "np.clip",
        "np.max",
        "np.min",
        "np.amax",
        "np.amin",
        "np.linalg.norm",
        "np.sqrt",
        "np.sign",
        "np.std",
    }

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(
            node.ops[0], (ast.Lt, ast.Gt, ast.LtE, ast.GtE)
        ):
            node.left = ast.Call(
                ast.Name("_cmp", ast.Load()), [node.left, node.comparators[0]], []
            )
        return node

    METHODS: ClassVar = {
        "clip": "np.clip",
        "max": "np.max",
        "min": "np.min",
        "std": "np.sqrt_std",
    }
    BUILTINS: ClassVar = {"max": "np.maximum", "min": "np.minimum", "abs": "np.abs"}

    def visit_Call(self, node):
        self.generic_visit(node)
        name = ast.unparse(node.func)
        # the JAX-docs dialect
        name = "np." + name[4:] if name.startswith("jnp.") else name
        kink = lambda n, args: ast.Call(
            ast.Name("_kink", ast.Load()), [ast.Constant(n)] + args, node.keywords
        )
        if name in self.KINKS:
            return kink(name, node.args)
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in self.METHODS
            and not name.startswith(("np.", "math.", "jnp."))
        ):
            return kink(self.METHODS[node.func.attr], [node.func.value] + node.args)
        if (
            isinstance(node.func, ast.Name)
            and name in self.BUILTINS
            and len(node.args) == (1 if name == "abs" else 2)
        ):
            return kink(self.BUILTINS[name], node.args)
        return node


class Recorder:
    def __init__(self):
        self.signs = []
        self.gap = np.inf

    def record(self, diff):
        diff = np.asarray(diff, dtype=float)
        self.signs.append(tuple(np.sign(diff).ravel()))
        if diff.size:
            self.gap = min(self.gap, float(np.min(np.abs(diff))))

    def cmp(self, a, b):
        floats = any(
            isinstance(v, float)
            or getattr(getattr(v, "dtype", None), "kind", "") == "f"
            for v in (a, b)
        )
        if floats:
            self.record(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
        return a

    def kink(self, name, *args, **kw):
        # the square root of a variance: a kink where it is zero
        if name in (
            "np.sqrt_std",
            "np.std",
        ):
            out = np.std(*args, **kw)
            self.record(out)
            return out
        fn = {
            "np.maximum": np.maximum,
            "np.minimum": np.minimum,
            "np.abs": np.abs,
            "np.absolute": np.abs,
            "np.clip": np.clip,
            "np.max": np.max,
            "np.min": np.min,
            "np.amax": np.max,
            "np.amin": np.min,
            "np.linalg.norm": np.linalg.norm,
            "np.sqrt": np.sqrt,
            "np.sign": np.sign,
        }[name]
        a = np.asarray(args[0], dtype=float)
        if name in ("np.maximum", "np.minimum"):
            self.record(a - np.asarray(args[1], dtype=float))
        elif name in ("np.abs", "np.absolute", "np.sqrt", "np.sign"):
            self.record(a)
        elif name == "np.clip":
            lo = args[1] if len(args) > 1 else kw.get("a_min", kw.get("min"))
            hi = args[2] if len(args) > 2 else kw.get("a_max", kw.get("max"))
            for bound in (lo, hi):
                if bound is not None:
                    self.record(a - np.asarray(bound, dtype=float))
        elif name in ("np.max", "np.min", "np.amax", "np.amin"):
            axis = args[1] if len(args) > 1 else kw.get("axis")
            s = np.sort(
                a.ravel() if axis is None else a, axis=-1 if axis is None else axis
            )
            s = np.moveaxis(s, -1 if axis is None else axis, -1)
            if s.shape[-1] > 1:
                self.record(
                    s[..., -1] - s[..., -2]
                    if name in ("np.max", "np.amax")
                    else s[..., 1] - s[..., 0]
                )
        elif name == "np.linalg.norm":
            self.record(
                np.sqrt(
                    np.sum(
                        a * a, axis=kw.get("axis", args[2] if len(args) > 2 else None)
                    )
                )
            )
        return fn(*args, **kw)


def probed_function(program, path):
    tree = ast.fix_missing_locations(
        _Instrument().visit(ast.parse(program.numpy_source or program.source))
    )
    rec = Recorder()  # module-level code (constants) runs once, unrecorded
    # a module of its own (dataclasses look their module up by name)
    module = types.ModuleType(Path(path).stem + "_probe")
    sys.modules[module.__name__] = module
    scope = module.__dict__
    scope.update({"_cmp": rec.cmp, "_kink": rec.kink})
    exec(compile(tree, path + ":probe", "exec"), scope)
    return scope


def path_of(scope, entry, args, kwargs):
    rec = Recorder()
    scope["_cmp"], scope["_kink"] = rec.cmp, rec.kink
    # (records every decision; the value is not needed)
    scope[entry](*copy.deepcopy(args), **copy.deepcopy(kwargs))
    return tuple(rec.signs), rec.gap


# ------------------------------------------------------------------------- trees


BATCH = 3  # examples in a batch of the vmap checks
MODES = ("grad", "value_and_grad", "jvp", "vjp", "vmap", "vmap_grad")
# the campaign's (``benchmarks/fuzz_trust.py``) add batched forward mode: ``vmap(jacfwd(f))``
CAMPAIGN_MODES = (*MODES, "vmap_jacfwd")


def stacked(trees):
    """One tree of the ``trees``' leaves stacked along a new leading axis."""
    return jax.tree_util.tree_map(
        lambda *ls: np.stack([np.asarray(leaf, dtype=float) for leaf in ls]), *trees
    )


def _check_vmap(findings, program, f, tf, args, an, backends, modes, oracle, path, tol):
    """``s2s.vmap(f)`` and ``s2s.vmap(s2s.grad(f))`` over a batch of the first differentiated argument
    (the program's point and points moved from it; the other arguments shared) against ``f`` (and the
    oracle's gradient) example by example: JAX's definition of ``vmap``."""
    i = program.argnums[0]
    if not all(np.asarray(leaf).dtype.kind == "f" for leaf in leaves(args[i])):
        return
    rng = np.random.default_rng(program.seed + 3)
    examples = [args[i]] + [
        moved(args, [i], [random_like(args[i], rng)], 0.05)[i] for _ in range(BATCH - 1)
    ]
    batch = stacked(examples)
    in_axes = tuple(0 if j == i else None for j in range(len(args)))

    def at(example):
        a = list(copy.deepcopy(args))
        a[i] = copy.deepcopy(example)
        return a

    try:
        want = stacked([f(*at(e)) for e in examples])
        if {"vmap_grad", "vmap_jacfwd"} & set(modes):
            if oracle == "jax":
                grads = [jax.grad(tf, an)(*at(e)) for e in examples]
            else:
                grads = [fd_grad(f, tuple(at(e)), {}, an) for e in examples]
            want_grads = stacked(grads)
    except (
        Exception
    ):  # a moved point the program (or its twin) does not take: no batch to check
        return

    def batched_args():
        a = list(copy.deepcopy(args))
        a[i] = copy.deepcopy(batch)
        return a

    for backend in backends:
        checks = [("vmap", "vmap", lambda: s2s.vmap(f, in_axes, backend=backend), want)]
        if "vmap_grad" in modes:
            checks.append(
                (
                    "vmap_grad",
                    "vmap_grad",
                    lambda: s2s.vmap(
                        s2s.grad(f, an, backend=backend), in_axes, backend=backend
                    ),
                    want_grads,
                )
            )
        if "vmap_jacfwd" in modes:
            # batched forward mode: the gradient as ``jacfwd`` computes it, per example
            checks.append(
                (
                    "vmap_jacfwd",
                    "vmap_jacfwd",
                    lambda: s2s.vmap(
                        s2s.jacfwd(f, an, backend=backend), in_axes, backend=backend
                    ),
                    want_grads,
                )
            )
        if i > 0 and backend == "numpy":
            # the arguments before the batched one held by a ``functools.partial``: the call's first argument
            # is the batched one (the partial's mapped were ``f``'s first parameters once, silently)
            checks.append(
                (
                    "vmap",
                    "vmap_of_partial",
                    lambda: _call_rest(
                        s2s.vmap(
                            functools.partial(f, *copy.deepcopy(args[:i])),
                            in_axes[i:],
                            backend=backend,
                        ),
                        i,
                    ),
                    want,
                )
            )
        for mode, label, make, expected in checks:
            if mode not in modes:
                continue
            what = f"{label}/{backend}"
            got = _run(findings, what, path, lambda: make()(*batched_args()))
            if got is not None and (msg := compare(got, expected, what, **tol)):
                findings.append(Finding("mismatch", what, msg, what))


def _changeable(module, twin) -> list:
    """``(owner, twin's owner, name)`` of the program's module-level float arrays, and of the float
    attributes (arrays, numbers) of its module-level objects of its own classes (``model=MODEL``'s).
    """
    out = []
    for k, v in vars(module).items():
        if k[:1].isupper() and isinstance(v, np.ndarray) and v.dtype.kind == "f":
            out.append((module, twin, k))
        elif type(v).__module__ == module.__name__ and hasattr(v, "__dict__"):
            held = getattr(twin, k, None) if twin is not None else None
            for a, x in vars(v).items():
                array = isinstance(x, np.ndarray) and x.dtype.kind == "f"
                if (array or type(x) is float) and (twin is None or hasattr(held, a)):
                    out.append((v, held, a))
    return out


def _check_module_arrays_changed(findings, module, twin, f, tf, an, fresh, tol, path):
    """The program's module-level float arrays halved in place (and its module-level objects' float
    attributes halved) between two calls of one compiled gradient (a scaler refit between epochs): the
    second call reads the new values, as ``jax.grad`` of the twin does (finite differences of the program
    where ``twin`` is None; XLA had compiled the first values into the code once: a silent wrong gradient).
    """
    places = _changeable(module, twin)
    if not places:
        return
    grad = s2s.grad(f, an, backend="xla")
    what = "grad_after_module_change/xla"
    if _run(findings, what, path, lambda: grad(*fresh()[0], **fresh()[1])) is None:
        return
    saved = [
        (o, t, k, copy.copy(getattr(o, k)), t is not None and getattr(t, k))
        for o, t, k in places
    ]
    try:
        for owner, held, k in places:
            value = getattr(owner, k)
            if isinstance(value, np.ndarray):
                value[...] *= 0.5  # in place, as a refit does
            else:
                setattr(owner, k, value * 0.5)
            if held is not None:
                setattr(held, k, getattr(held, k) * 0.5)
        if twin is not None:
            want = jax.grad(functools.partial(tf, **fresh()[1]), an)(*fresh()[0])
        else:
            want = fd_grad(f, *fresh(), an)
        got = _run(findings, what, path, lambda: grad(*fresh()[0], **fresh()[1]))
        if got is not None and (msg := compare(got, want, what, **tol)):
            findings.append(Finding("mismatch", what, msg, what))
    finally:
        for owner, held, k, value, twin_value in saved:
            if isinstance(value, np.ndarray):
                getattr(owner, k)[...] = value
            else:
                setattr(owner, k, value)
            if held is not None:
                setattr(held, k, twin_value)


def _call_rest(fn, i):
    """``fn`` called with the arguments from position ``i`` on (the ones before it are a partial's)."""
    return lambda *a: fn(*a[i:])


def leaves(tree):
    return jax.tree_util.tree_leaves(tree)


def moved(args, argnums, direction, eps):
    out = list(args)
    for i, d in zip(argnums, direction):
        out[i] = jax.tree_util.tree_map(
            lambda a, t: np.asarray(a) + eps * t if np.ndim(a) else float(a + eps * t),
            args[i],
            d,
        )
    return tuple(out)


def random_like(tree, rng):
    return jax.tree_util.tree_map(
        lambda a: rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()),
        tree,
    )


def tangent_of(value, rng):
    """A random tangent of ``value``, its dicts' keys in reversed order (JAX matches dicts whatever their
    order; s2s must read a tangent's entries by key, as the primal's)."""

    def leaf(a):
        dtype = np.asarray(a).dtype
        if dtype.kind != "f":
            return np.zeros(np.shape(a), dtype=jax.dtypes.float0)
        return rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal())

    return _reversed_dicts(jax.tree_util.tree_map(leaf, value))


def _reversed_dicts(tree):
    if isinstance(tree, dict):
        return {k: _reversed_dicts(tree[k]) for k in reversed(list(tree))}
    if isinstance(tree, list):
        return [_reversed_dicts(v) for v in tree]
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return tuple(_reversed_dicts(v) for v in tree)
    return tree


def compare(got, want, what, rtol=RTOL, atol=ATOL):
    """None when ``got`` matches ``want`` (structure and values), else a description."""
    g_leaves, g_tree = jax.tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    if g_tree != w_tree:
        return f"{what}: structure {g_tree} != JAX's {w_tree}"
    for k, (g, w) in enumerate(zip(g_leaves, w_leaves)):
        g, w = np.asarray(g), np.asarray(w)
        # float0: the cotangent of an integer input
        if "V" in (
            g.dtype.kind,
            w.dtype.kind,
        ):
            other = g if w.dtype.kind == "V" else w
            if other.dtype.kind != "V" and np.any(other != 0):
                return f"{what}: leaf {k}: float0 (an integer input's cotangent) against {other!r}"
            continue
        if g.shape != w.shape:
            return f"{what}: leaf {k} has shape {g.shape}, JAX's {w.shape}"
        if not np.allclose(g, w, rtol=rtol, atol=atol):
            return f"{what}: leaf {k} differs:\n  s2s: {np.array2string(g, precision=6)}\n  jax: {np.array2string(np.asarray(w), precision=6)}"
    return None


# ---------------------------------------------------------------------- checking


def _located(error, path):
    text = str(error)
    return re.search(re.escape(path) + r":\d+:\d+", text) is not None


def _key(kind, mode, error):
    if kind in ("refused", "unhelpful"):
        line = str(error).split("\n")[0]
        line = line.split("error: ", 1)[-1]
        return re.sub(r"`[^`]*`", "`_`", line)
    tb = traceback.extract_tb(error.__traceback__)
    frames = [f for f in tb if "/s2s/" in f.filename or "/runtime/" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].name}" if frames else "?"
    return f"{type(error).__name__} at {where}: {str(error).splitlines()[0][:120] if str(error) else ''}"


def _run(findings, mode, path, thunk):
    """Run one s2s call; record a refusal or crash; return its result or None."""
    try:
        return thunk()
    except s2s.S2SError as e:
        generated = any(c.__name__ == "GeneratedCodeError" for c in type(e).__mro__)
        if generated and re.search(
            r"error: [\w.]*(Error|Exception)\b:", str(e).split("\n")[0]
        ):
            # the generated code failed with a Python/JAX exception: an internal error, reported at the user's line
            findings.append(
                Finding(
                    "crash", mode, str(e), _key("refused", mode, e).replace("`_`", "_")
                )
            )
            return None
        kind = "refused" if _located(e, path) else "unhelpful"
        findings.append(Finding(kind, mode, str(e), _key(kind, mode, e)))
    except Exception as e:  # (broad on purpose) any other exception from s2s is a bug
        findings.append(
            Finding(
                "crash",
                mode,
                "".join(traceback.format_exception(e))[-4000:],
                _key("crash", mode, e),
            )
        )
    return None


def check(
    program,
    folder,
    backends=("numpy",),
    modes=MODES,
    avoid=frozenset(),
    oracle="jax",
) -> Outcome:
    """``oracle``: "jax" (the twin) or "fd" (finite differences of the NumPy program, faster;
    always for programs whose NumPy semantics the twin cannot express: ``program.oracle == "fd"``).

    ``avoid``: known bugs (``programs.KNOWN``) not to trigger (campaign exploration only).
    """
    try:
        module, twin, path = load(program, folder)
    except Exception as e:
        return Outcome("oracle", note=f"program does not load: {e!r}")
    try:
        f = getattr(module, program.entry)
        if "jvp_kwonly" in avoid and any(
            p.kind is inspect.Parameter.KEYWORD_ONLY
            for p in inspect.signature(f).parameters.values()
        ):
            modes = tuple(m for m in modes if m != "jvp")
        return _check(
            program,
            module,
            twin,
            path,
            backends,
            modes,
            oracle if program.oracle == "any" else program.oracle,
        )
    finally:
        unload(path)


def fd_grad(f, args, kwargs, an, eps=FD_STEP):
    """Central finite differences of ``f`` in float64: the gradient with respect to ``an``, JAX's structure."""

    def one(i):
        flat, tree = jax.tree_util.tree_flatten(args[i])
        grads = []
        for k, leaf in enumerate(flat):
            base = np.array(leaf, dtype=float)
            g = np.zeros_like(base)
            for idx in np.ndindex(base.shape):
                vals = []
                for sign in (1, -1):
                    moved_leaf = base.copy()
                    moved_leaf[idx] += sign * eps
                    new = list(flat)
                    new[k] = moved_leaf if np.ndim(leaf) else float(moved_leaf)
                    a = list(copy.deepcopy(args))
                    a[i] = jax.tree_util.tree_unflatten(tree, new)
                    vals.append(f(*a, **copy.deepcopy(kwargs)))
                g[idx] = (vals[0] - vals[1]) / (2 * eps)
            grads.append(g if np.ndim(leaf) else float(g))
        return jax.tree_util.tree_unflatten(tree, grads)

    return tuple(one(i) for i in an) if isinstance(an, tuple) else one(an)


def fd_jvp(f, primals, tangents, eps=FD_STEP):
    def along(sign):
        moved_args = [
            jax.tree_util.tree_map(
                lambda p, t: (
                    p
                    if np.asarray(t).dtype == jax.dtypes.float0
                    else (
                        np.asarray(p) + sign * eps * t
                        if np.ndim(p)
                        else float(p + sign * eps * t)
                    )
                ),
                p,
                t,
            )
            for p, t in zip(primals, tangents)
        ]
        return f(*copy.deepcopy(moved_args))

    return f(*copy.deepcopy(primals)), (along(1) - along(-1)) / (2 * eps)


def compiled_if_it_can(fn, *trees):
    """``fn(*trees)`` under ``jax.jit`` (the trees' float arrays its arguments, their other leaves held
    fixed), or op by op where JAX cannot trace it (Python control flow on a value). JAX run op by op
    compiles each op of a derivative on its own: hundreds of compiles for one program. Whatever stops
    the compiled run, the run op by op says: it is the oracle. (``jax_checks.compiled`` makes top-level
    ints static; the random programs' twins also hold ints inside trees and return aux values.)
    """
    leaves, tree = jax.tree_util.tree_flatten(trees)
    traced = [
        i
        for i, leaf in enumerate(leaves)
        if isinstance(leaf, np.ndarray) and np.issubdtype(leaf.dtype, np.floating)
    ]

    def with_traced(*values):
        merged = list(leaves)
        for i, v in zip(traced, values):
            merged[i] = v
        return fn(*jax.tree_util.tree_unflatten(tree, merged))

    try:
        return jax.jit(with_traced)(*(leaves[i] for i in traced))
    except Exception:
        return fn(*copy.deepcopy(trees))


def _check(program, module, twin, path, backends, modes, oracle):
    f, tf = getattr(module, program.entry), getattr(twin, program.entry)
    aux = program.has_aux
    fv = (lambda *a, **k: f(*a, **k)[0]) if aux else f  # the value alone
    args, kwargs = arguments(program, module)
    argnums = program.argnums
    # an int or a tuple
    an = argnums[0] if len(argnums) == 1 and program.seed % 2 else argnums
    fresh = lambda: (copy.deepcopy(args), copy.deepcopy(kwargs))
    rng = np.random.default_rng(program.seed + 1)
    # the program (and its twin) runs, and the point is away from kinks and ties
    try:
        a, k = fresh()
        value = fv(*a, **k)
        want_aux = f(*fresh()[0], **fresh()[1])[1] if aux else None
    except Exception as e:
        return Outcome("oracle", note=f"program fails: {e!r}", path=path)
    if np.shape(value) != () or not np.isfinite(value):
        return Outcome(
            "oracle", note=f"value {value!r} is not a finite scalar", path=path
        )
    probe = probed_function(program, path)
    direction = [random_like(args[i], rng) for i in argnums]
    signs, gap = path_of(probe, program.entry, args, kwargs)
    # jvp binds positional primals only: keyword-only parameters keep their defaults there
    if kwargs:
        gap = min(gap, path_of(probe, program.entry, args, {})[1])
    if gap < MARGIN:
        return Outcome(
            "skipped", note=f"a kink or comparison {gap:.2g} from its tie", path=path
        )
    plus, minus = moved(args, argnums, direction, EPS), moved(
        args, argnums, direction, -EPS
    )
    if (
        path_of(probe, program.entry, plus, kwargs)[0] != signs
        or path_of(probe, program.entry, minus, kwargs)[0] != signs
    ):
        return Outcome(
            "skipped", note="the perturbed points take another path", path=path
        )
    primals = fresh()[0]
    tangents = tuple(
        tangent_of(p, np.random.default_rng(program.seed + 2)) for p in primals
    )
    if oracle == "jax":

        def twin_transforms(a, primals):
            """The twin's value, ``jax.grad``, and ``jax.jvp`` and ``jax.vjp`` where checked."""
            value = tf(*a, **copy.deepcopy(kwargs))
            grad = jax.grad(functools.partial(tf, **kwargs), an, has_aux=aux)(*a)
            jvp = (
                jax.jvp(tf, tuple(primals), tangents, has_aux=aux)
                if "jvp" in modes
                else None
            )
            vjp = None
            if "vjp" in modes:
                out = jax.vjp(tf, *primals, has_aux=aux)
                vjp = (out[0], out[1](1.0)) + ((out[2],) if aux else ())
            return (value[0] if aux else value), (grad[0] if aux else grad), jvp, vjp

        try:
            want_value, want, want_jvp, want_vjp = compiled_if_it_can(
                twin_transforms, fresh()[0], copy.deepcopy(primals)
            )
        except Exception as e:
            return Outcome("oracle", note=f"the twin fails: {e!r}", path=path)
        if not np.allclose(value, want_value, rtol=1e-9, atol=1e-12):
            return Outcome(
                "oracle", note=f"value {value} != twin's {want_value}", path=path
            )
        numeric = (
            fv(*copy.deepcopy(plus), **fresh()[1])
            - fv(*copy.deepcopy(minus), **fresh()[1])
        ) / (2 * EPS)
        want_t = want if isinstance(an, tuple) else (want,)
        analytic = sum(
            float(np.sum(np.asarray(g) * d))
            for w, dd in zip(want_t, direction)
            for g, d in zip(leaves(w), leaves(dd))
        )
        if not np.isclose(analytic, numeric, rtol=FD_RTOL, atol=FD_ATOL):
            return Outcome(
                "oracle",
                note=f"twin gradient {analytic} != finite differences {numeric}",
                path=path,
            )
        tol = dict(rtol=RTOL, atol=ATOL)
    else:
        want_value = value
        want = fd_grad(fv, args, kwargs, an)
        want_jvp = (
            fd_jvp(fv, primals, tangents)
            + ((f(*copy.deepcopy(primals))[1],) if aux else ())
            if "jvp" in modes
            else None
        )
        tol = dict(rtol=FD_RTOL, atol=FD_ATOL)

    findings = []
    for backend in backends:
        if "grad" in modes:
            got = _run(
                findings,
                f"grad/{backend}",
                path,
                lambda: s2s.grad(f, an, has_aux=aux, backend=backend)(
                    *fresh()[0], **fresh()[1]
                ),
            )
            if got is not None and (
                msg := compare(
                    got, (want, want_aux) if aux else want, f"grad/{backend}", **tol
                )
            ):
                findings.append(
                    Finding("mismatch", f"grad/{backend}", msg, f"grad/{backend}")
                )
        if "value_and_grad" in modes:
            got = _run(
                findings,
                f"value_and_grad/{backend}",
                path,
                lambda: s2s.value_and_grad(f, an, has_aux=aux, backend=backend)(
                    *fresh()[0], **fresh()[1]
                ),
            )
            if got is not None:
                msg = compare(
                    got,
                    ((want_value, want_aux) if aux else want_value, want),
                    f"value_and_grad/{backend}",
                    **tol,
                )
                if msg:
                    findings.append(
                        Finding(
                            "mismatch",
                            f"value_and_grad/{backend}",
                            msg,
                            f"value_and_grad/{backend}",
                        )
                    )
        if "vjp" in modes and oracle == "jax":

            def s2s_vjp():
                res = s2s.vjp(f, *fresh()[0], has_aux=aux, backend=backend)
                return (res[0], res[1](1.0)) + ((res[2],) if aux else ())

            got = _run(findings, f"vjp/{backend}", path, s2s_vjp)
            if got is not None and (
                msg := compare(tuple(got), tuple(want_vjp), f"vjp/{backend}", **tol)
            ):
                findings.append(
                    Finding("mismatch", f"vjp/{backend}", msg, f"vjp/{backend}")
                )
        if "jvp" in modes:
            got = _run(
                findings,
                f"jvp/{backend}",
                path,
                lambda: s2s.jvp(f, fresh()[0], tangents, has_aux=aux, backend=backend),
            )
            if got is not None and (
                msg := compare(tuple(got), tuple(want_jvp), f"jvp/{backend}", **tol)
            ):
                findings.append(
                    Finding("mismatch", f"jvp/{backend}", msg, f"jvp/{backend}")
                )
    if not aux and not kwargs and {"vmap", "vmap_grad", "vmap_jacfwd"} & set(modes):
        _check_vmap(
            findings, program, f, tf, args, an, backends, modes, oracle, path, tol
        )
    if "grad" in modes and "xla" in backends and not aux:
        held = twin if oracle == "jax" else None
        _check_module_arrays_changed(
            findings, module, held, f, tf, an, fresh, tol, path
        )
    status = "ok"
    if findings:
        status = max((fd.kind for fd in findings), key=SEVERITY.index)
    return Outcome(status, findings, path=path)
