"""Random straight-line programs from a small grammar: lowering keeps their value, gradients match JAX.

Programs read ``x`` (shape (3,)), ``y`` (shape (2, 3)) and a Python float ``s``, and
chain unary and binary elementwise ops with broadcasting, reductions, indexing,
tuple packing and unpacking, augmented assignment, reassignment and JAX's ``x.at[i].set/add/
multiply/min/max`` updates (whose meaning the ``jax.numpy`` twin gives). In-place
updates go only to fresh arrays: NumPy would also change every alias of an
aliased one, which a functional rewrite cannot reproduce.
"""

import importlib.util
import itertools

import jax
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2s
from s2s import ir, runtime
from s2s.frontend.source import load
from s2s.pipeline import lower

jax.config.update("jax_enable_x64", True)

UNARY = [
    "np.tanh({})",
    "np.sin({})",
    "np.cos({})",
    "np.square({})",
    "np.sqrt({0} * {0} + 1.0)",
    "np.log1p({0} * {0})",
    "-{}",
]
BINARY = [
    "{} + {}",
    "{} - {}",
    "{} * {}",
    "{0} / (1.0 + {1} * {1})",
    "np.maximum({}, {})",
    "s * {} + {}",
]
REDUCE = {
    (2, 3): ["np.sum({}, axis=0)", "np.mean({}, axis=0)", "{}[0]", "{}[-1]"],
    (3,): ["np.sum({})", "{}[1]"],
}
REDUCED_SHAPE = {
    "np.sum({}, axis=0)": (3,),
    "np.mean({}, axis=0)": (3,),
    "{}[0]": (3,),
    "{}[-1]": (3,),
    "np.sum({})": (),
    "{}[1]": (),
}
# JAX's functional updates (the twin runs them on jax.numpy arrays): index -> updates allowed there
# (``multiply`` only where no position repeats: its derivative needs that, as JAX's does)
AT = {
    (3,): {"1": "set add multiply max", "-1": "add min", "1:": "multiply max",
           "np.array([0, 2, 0])": "add max min"},
    (2, 3): {"0": "set max", "-1, 1:": "add multiply", "..., 0": "min set",
             "np.array([1, 0, 1])": "add set"},
}  # fmt: skip
_counter = itertools.count()


def _broadcast(a, b):
    return np.broadcast_shapes(a, b)


@st.composite
def programs(draw):
    shapes = {"x": (3,), "y": (2, 3)}
    fresh = set()  # results of arithmetic no other name shares: safe to update in place
    lines = []
    for i in range(draw(st.integers(2, 7))):
        names = sorted(shapes)
        kind = draw(
            st.sampled_from(
                [
                    "unary",
                    "binary",
                    "binary",
                    "reduce",
                    "pack",
                    "augassign",
                    "reassign",
                    "at",
                ]
            )
        )
        a = draw(st.sampled_from(names))
        b = draw(st.sampled_from(names))
        target = f"v{i}"
        if kind == "unary":
            lines.append(f"{target} = " + draw(st.sampled_from(UNARY)).format(a))
            shapes[target] = shapes[a]
            fresh.add(target)
        elif kind == "binary":
            lines.append(f"{target} = " + draw(st.sampled_from(BINARY)).format(a, b))
            shapes[target] = _broadcast(shapes[a], shapes[b])
            fresh.add(target)
        elif kind == "reduce" and shapes[a] in REDUCE:
            template = draw(st.sampled_from(REDUCE[shapes[a]]))
            lines.append(f"{target} = " + template.format(a))
            shapes[target] = REDUCED_SHAPE[template]
            if template.startswith("{}["):
                fresh.discard(a)  # indexing makes a view: `a` now shares memory
        elif kind == "pack":
            lines += [f"pair = ({a}, np.tanh({b}))", f"{target}, w{i} = pair"]
            shapes[target], shapes[f"w{i}"] = shapes[a], shapes[b]
            fresh.discard(a)  # `target` is `a` itself now
        elif (
            kind == "augassign"
            and a in fresh
            and _broadcast(shapes[a], shapes[b]) == shapes[a]
        ):
            lines.append(f"{a} *= np.cos({b})")
        elif kind == "at" and shapes[a] in AT:
            index = draw(st.sampled_from(sorted(AT[shapes[a]])))
            method = draw(st.sampled_from(AT[shapes[a]][index].split()))
            lines.append(f"{target} = {a}.at[{index}].{method}(np.tanh(np.sum({b})))")
            shapes[target] = shapes[a]
            fresh.add(target)
        elif kind == "reassign" and a not in ("x", "y"):
            lines.append(f"{a} = np.sin({a}) + {a}")
            fresh.add(a)
    used = sorted(shapes)
    terms = " + ".join(f"np.sum({n} * {k + 1.0})" for k, n in enumerate(used[-3:]))
    body = "\n".join("    " + line for line in lines)
    return f"import numpy as np\n\n\ndef f(x, y, s):\n{body}\n    return {terms}\n"


def _load(source, folder):
    path = folder / f"program_{next(_counter)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    twin = {}
    exec(
        compile(
            source.replace("import numpy as np", "import jax.numpy as np"),
            str(path),
            "exec",
        ),
        twin,
    )
    return module.f, twin["f"]


def _lowered(f):
    fn = lower(load(f), on_stage=lambda *a: None).function
    scope = {"rt": runtime}
    exec(ir.to_source(fn).replace("):\n", "):\n    xp = rt.namespace()\n", 1), scope)
    return scope["f"]


ARGS = (np.array([0.3, -1.2, 0.8]), np.array([[0.5, -0.4, 1.1], [-0.7, 0.2, 0.9]]), 0.7)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(source=programs())
def test_lowering_keeps_the_value(tmp_path, source):
    f, twin = _load(source, tmp_path)
    # ``x.at[...]`` is JAX's: the twin computes what the program means
    want = (
        twin(*jax.tree_util.tree_map(jax.numpy.asarray, ARGS))
        if ".at[" in source
        else f(*ARGS)
    )
    np.testing.assert_allclose(_lowered(f)(*ARGS), want, rtol=1e-12, err_msg=source)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(source=programs())
def test_gradient_matches_jax(tmp_path, source):
    f, twin = _load(source, tmp_path)
    want = jax.grad(twin, (0, 1))(*ARGS)
    for backend in ("numpy", "xla"):
        got = s2s.grad(f, (0, 1), backend=backend)(*ARGS)
        for g, w in zip(got, want):
            np.testing.assert_allclose(
                g, w, rtol=1e-9, atol=1e-12, err_msg=f"{backend}\n{source}"
            )
