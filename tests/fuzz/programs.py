"""Random programs in the style people write, for differential testing of s2s (issue 10).

``generate(seed)`` draws one program from a seeded ``random.Random``: the same
seed gives the same program, byte for byte. A ``Program`` holds

- ``source``: a NumPy module (``import numpy as np``) that s2s reads from a file;
- ``twin``: the same module for ``jax.numpy`` (the oracle), made from
  ``source`` by ``jax_twin`` (in-place writes become ``.at[...]`` updates);
- ``entry``: the name of the function to differentiate;
- ``args_code``: Python text that builds ``args`` (a tuple) and ``kwargs``
  (a dict) from ``np`` and the loaded module ``mod`` (for namedtuple classes);
- ``argnums``: the positional arguments to differentiate (floats: arrays,
  pytrees of arrays, Python floats).

What programs contain (each drawn with some probability):

- a model over a parameter pytree read with constant paths: a list of
  ``(W, b)`` layers (``for W, b in params``, ``params[:-1]`` then
  ``params[-1]``, ``(W1, b1), (W2, b2) = params``, ``params[1][0]``), a dict
  (``p["w1"]``, nested dicts), namedtuples (``layer.w``, a namedtuple of
  layers), a logistic-regression ``(w, b)`` tuple, an RNN over time steps, an
  attention block with a softmax helper, a layer-norm helper;
- activations as NumPy calls, module-level helpers, lambdas and local ``def``s
  closing over differentiated values, and closures made by module-level
  factories (two closures of one factory in one function); sometimes the
  differentiated function is itself made by a factory;
- helpers with every parameter kind (positional-only, positional-or-keyword,
  keyword-only; with and without literal and array defaults) called with
  positional and keyword arguments in varied orders and omitted defaults;
- NumPy keyword calls (``np.sum(x, axis=0)``, ``np.clip(x, a_min=..,
  a_max=..)``, ``np.mean(x, keepdims=True)``), elementwise ops, reductions,
  matmul, constant/negative indices and slices, in-place writes into fresh
  arrays (``buf[-1] += v``), module-level global constants;
- moderate control flow: ``if``/``else`` on data, ``for`` over ``range`` with
  ``break``/``continue``, a bounded ``while``.

Programs are kept well-defined at their inputs: values stay bounded, logs and
square roots take positive arguments, divisions divide by ``1 + z*z``; kinks
(``abs``, ``maximum``, ``clip``, ``max``, ``where`` and data comparisons) are
applied to values that depend on the inputs, and the checker (``check.py``)
probes every kink and comparison at the drawn point and skips programs that sit
within a margin of one.
"""

from __future__ import annotations

import ast
import math
import random
import re
from dataclasses import dataclass, field

B = 2  # batch
D = 3  # input features

UNARY = [
    "np.tanh({})",
    "np.sin({})",
    "np.cos({})",
    "np.square({})",
    "({}) ** 2",
    "np.sqrt({0} * {0} + 1.0)",
    "np.log1p({0} * {0})",
    "np.log(1.0 + np.exp({}))",
    "np.logaddexp(0.0, {})",
    "1.0 / (1.0 + np.exp(-({})))",
    "np.arctan({})",
    "np.exp(np.tanh({}))",
    "-({})",
    "np.sinh(np.tanh({}))",
]
KINKED_UNARY = [  # applied only to values that depend on the inputs
    "np.abs({})",
    "np.maximum({}, 0.0)",
    "np.maximum({0}, 0.1 * ({0}))",
    "np.clip({}, a_min=-0.8, a_max=0.8)",
    "np.clip({}, -1.0, 0.5)",
    "np.where({0} > 0.2, {0}, 0.5 * {0})",
    "np.minimum({}, 0.7)",
]
BINARY = [
    "{} + {}",
    "{} - {}",
    "{} * {}",
    "{0} / (1.0 + {1} * {1})",
    "np.add({}, {})",
    "np.multiply({}, {})",
    "np.logaddexp({}, {})",
    "0.5 * {} + {}",
]
KINKED_BINARY = ["np.maximum({}, {})", "np.minimum({}, {})"]
ACT_NAMES = ["tanh", "softplus", "gelu", "swish", "relu", "leaky", "sine"]


@dataclass
class V:
    shape: tuple
    const: bool = False  # may not depend on the inputs (kinks could tie): no kinked op on it
    fresh: bool = False  # owns its memory (no alias): in-place writes allowed


@dataclass
class Program:
    seed: int
    source: str
    entry: str
    args_code: str
    argnums: tuple
    features: list = field(default_factory=list)
    oracle: str = "any"  # "fd": NumPy semantics the twin cannot express (writes through views): finite differences only
    has_aux: bool = False  # the function returns (loss, aux)
    numpy_source: str = ""  # for a program written with jax.numpy: the NumPy program it was made from (probes read it)

    @property
    def twin(self) -> str:
        return jax_twin(self.source)


def _shape_text(shape):
    return str(shape[0]) if len(shape) == 1 else str(tuple(shape))


class Gen:
    """Draws one program; ``lines`` of the main function, module-level ``top`` text, and the arguments."""

    def __init__(self, seed, avoid=frozenset()):
        self.seed = seed
        self.avoid = frozenset(avoid)  # known open bugs to steer away from (campaign exploration only)
        self.r = random.Random(seed)
        self.env: dict[str, V] = {}
        self.names = 0
        self.module_globals: list[str] = []  # module-level assignments (constants, closures)
        self.helpers: list[str] = []  # module-level function definitions
        self.helper_names: set[str] = set()
        self.imports = {"import numpy as np"}
        self.features: list[str] = []
        self.callables: list = []  # (template, in_shape_rule) usable as activations: "name({})"
        self.scalars = []  # names of Python-float scalars that may be used as coefficients

    # ----------------------------------------------------------------- basics

    def p(self, prob):
        return self.r.random() < prob

    def pick(self, xs):
        return self.r.choice(list(xs))

    def fresh_name(self, prefix):
        self.names += 1
        return f"{prefix}{self.names}"

    def feature(self, name):
        if name not in self.features:
            self.features.append(name)

    def define(self, name, shape, const=False, fresh=False):
        self.env[name] = V(tuple(shape), const, fresh)

    # ----------------------------------------------------------- expressions

    def names_of(self, shape, nonconst=False):
        return sorted(n for n, v in self.env.items() if v.shape == tuple(shape) and not (nonconst and v.const))

    def leaf(self, shape):
        """A name (or an indexing/reduction of one) of ``shape``; (text, const)."""
        shape = tuple(shape)
        options = []
        exact = self.names_of(shape)
        for n in exact:
            options += [("name", n)] * (1 if self.env[n].const else 3)
        for n, v in sorted(self.env.items()):
            s = v.shape
            if len(s) == len(shape) + 1 and s[1:] == shape:
                options.append(("row", n))
                options.append(("reduce0", n))
            if len(s) == len(shape) + 1 and s[:-1] == shape and shape:
                options.append(("reduce_last", n))
            if len(s) == 1 and len(shape) == 1 and s[0] > shape[0]:
                options.append(("slice", n))
            if len(s) == 2 and len(shape) == 1 and s[0] == shape[0]:
                options.append(("col", n))
            if not shape and s:
                options.append(("scalar", n))
        if not options:
            c = self.pick(["0.5", "-0.3", "1.2"])
            return (f"np.full({_shape_text(shape)}, {c})" if shape else c), True
        kind, n = self.pick(options)
        v = self.env[n]
        k = v.shape[0] if v.shape else 1
        if kind == "name":
            return n, v.const
        if kind == "row":
            i = self.r.randint(-k, k - 1)
            return f"{n}[{i}]", v.const
        if kind == "reduce0":
            f = self.pick(["np.sum({}, axis=0)", "np.mean({}, axis=0)", "{}.sum(axis=0)", "np.sum({}, 0)", "np.mean({}, axis=-len({}.shape))"])
            if "len(" in f:
                f = "np.mean({0}, axis=0)"
            if not v.const and self.p(0.15):
                f = "np.max({}, axis=0)"
            return f.format(n), v.const
        if kind == "reduce_last":
            f = self.pick(["np.sum({}, axis=-1)", "np.mean({}, axis=-1)", f"np.sum({{}}, axis={len(v.shape) - 1})"])
            return f.format(n), v.const
        if kind == "slice":
            m = shape[0]
            start = self.r.randint(0, k - m)
            form = self.pick([f"{n}[{start}:{start + m}]", f"{n}[:{m}]", f"{n}[-{m}:]"])
            return form, v.const
        if kind == "col":
            j = self.r.randint(-v.shape[1], v.shape[1] - 1)
            return f"{n}[:, {j}]", v.const
        f = self.pick(["np.sum({})", "np.mean({})", "{}.sum()", "np.sum({} ** 2)", "np.linalg.norm({})" if not v.const else "np.sum({})"])
        if len(v.shape) == 1 and self.p(0.3):
            f = self.pick(["{}[0]", "{}[-1]", "{}[1]"]) if v.shape[0] > 1 else "{}[0]"
        if len(v.shape) == 2 and self.p(0.3):
            i, j = self.r.randint(-v.shape[0], v.shape[0] - 1), self.r.randint(-v.shape[1], v.shape[1] - 1)
            f = self.pick(["{}[0, 0]", "{}[-1, -1]", f"{{}}[{i}, {j}]", "{}[0][-1]"])
        return f.format(n), v.const

    def expr(self, shape, depth=2):
        """(text, const): an expression of ``shape`` over the environment."""
        shape = tuple(shape)
        if depth <= 0:
            return self.leaf(shape)
        kind = self.pick(["leaf", "unary", "unary", "binary", "binary", "scale", "call", "matmul", "global"])
        if kind == "leaf":
            return self.leaf(shape)
        if kind == "unary":
            text, const = self.expr(shape, depth - 1)
            if not const and self.p(0.25):
                return self.pick(KINKED_UNARY).format(text), const
            return self.pick(UNARY).format(text), const
        if kind == "binary":
            a, ca = self.expr(shape, depth - 1)
            bshape = shape if self.p(0.7) or not shape else self.pick([(), shape[-1:]])
            b, cb = self.expr(bshape, depth - 1)
            if self.p(0.5):
                a, b = b, a
            if a == b:
                b = f"np.cos({b})"
            if not ca and not cb and self.p(0.15):
                return "(" + self.pick(KINKED_BINARY).format(a, b) + ")", False
            return "(" + self.pick(BINARY).format(a, b) + ")", ca and cb
        if kind == "scale":
            text, const = self.expr(shape, depth - 1)
            if self.scalars:
                s = self.pick(self.scalars)
                return f"({s} * {text})", const
            return f"(0.5 * {text})", const
        if kind == "call" and self.callables:
            template = self.pick(self.callables)
            text, const = self.expr(shape, depth - 1)
            return template.format(text), const
        if kind == "matmul" and shape:
            mats = [(n, v) for n, v in sorted(self.env.items()) if len(v.shape) == 2 and v.shape[1] == shape[-1]]
            if mats:
                n, v = self.pick(mats)
                a, ca = self.expr(shape[:-1] + (v.shape[0],), depth - 1)
                form = self.pick(["({} @ {})", "np.dot({}, {})", "np.matmul({}, {})"])
                return form.format(a, n), ca and v.const
            mats = [(n, v) for n, v in sorted(self.env.items()) if len(v.shape) == 2 and v.shape[0] == shape[-1]]
            if mats:
                n, v = self.pick(mats)
                a, ca = self.expr(shape[:-1] + (v.shape[1],), depth - 1)
                return f"({a} @ {n}.T)", ca and v.const
        if kind == "global":
            g = self.global_const(shape)
            text, const = self.expr(shape, depth - 1)
            return f"({text} * {g})", const
        return self.leaf(shape)

    def bounded(self, shape, depth=2):
        text, const = self.expr(shape, depth)
        return self.pick(["np.tanh({})", "np.sin({})", "np.cos({})", "0.5 * np.tanh({})"]).format(text), const

    # ------------------------------------------------------- module globals

    def global_const(self, shape):
        shape = tuple(shape)
        if not shape or self.p(0.4):
            name = self.pick(["SCALE", "TEMPERATURE", "GAIN", "ALPHA"])
            line = f"{name} = {self.pick(['0.5', '0.7', '1.3', '-0.4'])}"
        else:
            name = "W_" + "x".join(map(str, shape)) if len(shape) == 2 else f"MASK{shape[0]}"
            rng = random.Random(self.seed * 7 + len(shape))
            values = [round(rng.uniform(-1, 1), 2) for _ in range(int(__import__("math").prod(shape)))]
            if len(shape) == 1:
                line = f"{name} = np.array({values})"
            else:
                rows = [values[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
                line = f"{name} = np.array({rows})"
        if not any(g.startswith(name + " =") for g in self.module_globals):
            self.module_globals.append(line)
            self.feature("global")
        return name

    # ----------------------------------------------------------- activations

    def helper(self, text):
        name = text.split("(", 1)[0].split()[-1]
        if name not in self.helper_names:
            self.helper_names.add(name)
            self.helpers.append(text)

    def activation(self, lines, closure_vars):
        """A template ``"...{}..."`` applying an activation, defining what it needs."""
        style = self.r.choices(["np", "helper", "lambda", "localdef", "factory", "factory2", "default_fn"], [2, 2, 1, 1, 1, 1, 0.4])[0]
        if style == "factory2" and "factory_two" in self.avoid:
            style = "factory"
        act = self.pick(ACT_NAMES)
        bodies = {
            "tanh": "np.tanh({z})",
            "softplus": "np.logaddexp(0.0, {z})",
            "gelu": "0.5 * {z} * (1.0 + np.tanh(0.7978845608 * ({z} + 0.044715 * {z} ** 3)))",
            "swish": "{z} / (1.0 + np.exp(-{z}))",
            "relu": "np.maximum({z}, 0.0)",
            "leaky": "np.where({z} > 0, {z}, 0.1 * {z})",
            "sine": "np.sin({z})",
        }
        body = bodies[act]
        if style == "np":
            return body.format(z="({0})") if act != "tanh" else "np.tanh({})"
        if style == "helper":
            self.feature("helper_act")
            if self.p(0.15) and "one_line_def" not in self.avoid:
                self.feature("one_line_def")
                self.helper(f"def {act}(z): return {body.format(z='z')}\n")
            else:
                self.helper(f"def {act}(z):\n    return {body.format(z='z')}\n")
            return act + "({})"
        if style in ("lambda", "localdef") and closure_vars:
            c = self.pick(closure_vars)
            name = self.fresh_name("act")
            if style == "lambda":
                self.feature("lambda_closure")
                lines.append(f"{name} = lambda z: {body.format(z='z')} * {c}")
            else:
                self.feature("localdef_closure")
                lines += [f"def {name}(z):", f"    u = z * {c}", f"    return {body.format(z='u')}"]
            return name + "({})"
        if style in ("factory", "factory2"):
            self.feature("factory_closure" if style == "factory" else "factory_two_closures")
            self.helper(f"def make_{act}(scale):\n    def apply(z):\n        return scale * {body.format(z='z')}\n\n    return apply\n")
            if style == "factory":
                g = f"{act}_{self.pick(['a', 'b'])}"
                line = f"{g} = make_{act}({self.pick(['0.5', '1.5', '2.0'])})"
                if line not in self.module_globals:
                    self.module_globals.append(line)
                return g + "({})"
            g1, g2 = f"{act}_small", f"{act}_big"
            for g, v in ((g1, "0.5"), (g2, "2.0")):
                line = f"{g} = make_{act}({v})"
                if line not in self.module_globals:
                    self.module_globals.append(line)
            return self.pick([g1 + "({})", g2 + "({})", f"({g1}({{0}}) + {g2}({{0}}))"])
        if style == "default_fn":
            self.feature("function_default")
            self.helper(f"def apply_act(z, fn=np.tanh, *, shift=0.0):\n    return fn(z + shift)\n")
            return self.pick(["apply_act({})", "apply_act({}, np.sin)", "apply_act({}, fn=np.cos, shift=0.1)", "apply_act({}, shift=-0.2)"])
        return "np.tanh({})"

    # ------------------------------------------------------------- helpers

    def kind_helper(self):
        """A module-level helper with every parameter kind; returns a function that draws a call of it."""
        name = self.fresh_name("combine")
        n_posonly = self.r.randint(0, 2)
        n_pk = self.r.randint(1, 2)
        n_kw = self.r.randint(0, 2)
        params = []  # (pname, kind, default or None, role) role: 'arr' (array of the call's shape) or 'scalar'
        for i in range(n_posonly + n_pk + n_kw):
            kind = "po" if i < n_posonly else ("pk" if i < n_posonly + n_pk else "kw")
            params.append([f"{'abcdefgh'[i]}", kind, None, "arr" if i == 0 or self.p(0.5) else "scalar"])
        # defaults: a suffix of positional params, any kw-only param
        positional = [q for q in params if q[1] != "kw"]
        n_def = self.r.randint(0, max(0, len(positional) - 1))
        for q in positional[len(positional) - n_def:]:
            q[2] = True
        for q in params:
            if q[1] == "kw" and self.p(0.6):
                q[2] = True
        if "kwonly_order" in self.avoid:  # defaults last among the keyword-only parameters too
            kws = [q for q in params if q[1] == "kw"]
            n_kwdef = sum(bool(q[2]) for q in kws)
            for k, q in enumerate(kws):
                q[2] = True if k >= len(kws) - n_kwdef else None
        array_default = self.p(0.3)
        sig, body_terms = [], []
        for q in params:
            pname, kind, default, role = q
            if default:
                if role == "arr" and array_default:
                    q[2] = "np.array([0.5, -0.25, 1.0])"  # used only with shape (3,) calls: see below
                    q[3] = "arr3"
                else:
                    q[2] = self.pick(["0.5", "1.0", "-0.3", "2.0"])
                    q[3] = "scalar"
            sig.append(pname + (f"={q[2]}" if q[2] else ""))
        parts = []
        n_po = sum(q[1] == "po" for q in params)
        for i, s in enumerate(sig):
            if params[i][1] == "kw" and (i == 0 or params[i - 1][1] != "kw"):
                parts.append("*")
            parts.append(s)
            if i == n_po - 1 and n_po:
                parts.append("/")
        # body: a smooth combination of every parameter
        first = params[0][0]
        terms = [f"np.tanh({first})"]
        for q in params[1:]:
            terms.append(self.pick([f"{q[0]} * np.sin({first})", f"np.tanh({q[0]})", f"{q[0]} * {first}", f"0.5 * {q[0]}"]))
        body = " + ".join(terms)
        style = self.pick(["expr", "stmts"])
        if style == "expr":
            text = f"def {name}({', '.join(parts)}):\n    return {body}\n"
        else:
            text = f"def {name}({', '.join(parts)}):\n    out = {terms[0]}\n"
            for t in terms[1:]:
                text += f"    out = out + {t}\n"
            text += "    return out\n"
        self.helpers.append(text)
        self.helper_names.add(name)
        self.feature("param_kinds")
        uses_arr3 = any(q[3] == "arr3" for q in params)

        def call(shape):
            if uses_arr3 and tuple(shape)[-1:] != (3,):
                return None
            pos, kws = [], []
            for q in params:
                pname, kind, default, role = q
                if default and self.p(0.4):
                    continue  # omitted default (only when nothing positional follows: handled below)
                if role in ("arr", "arr3"):
                    val, _ = self.expr(shape, 1)
                else:
                    val = self.pick(self.scalars) if self.scalars and self.p(0.5) else self.pick(["0.3", "1.5", "-0.7"])
                q_kind = kind
                if kind == "pk" and self.p(0.5):
                    q_kind = "kw"
                if q_kind == "kw" or kind == "kw":
                    kws.append(f"{pname}={val}")
                else:
                    pos.append((pname, val))
            # positional arguments must be a prefix without gaps: once one is omitted or passed by keyword, the rest go by keyword
            names = [q[0] for q in params if q[1] != "kw"]
            given = {pn for pn, _ in pos}
            prefix = []
            for pn in names:
                if pn in given:
                    val = dict(pos)[pn]
                    if len(prefix) == names.index(pn):
                        prefix.append(val)
                    else:
                        kind = next(q[1] for q in params if q[0] == pn)
                        if kind == "po":
                            return None
                        kws.append(f"{pn}={val}")
            # positional-only parameters without defaults must be given positionally
            for q in params:
                if q[1] == "po" and not q[2] and len(prefix) <= names.index(q[0]):
                    return None
                if not q[2] and q[0] not in given and not any(k.startswith(q[0] + "=") for k in kws):
                    return None
            self.r.shuffle(kws)
            return f"{name}({', '.join(prefix + kws)})"

        return call

    # ------------------------------------------------------------- skeletons

    def layer_sizes(self):
        n = self.pick([2, 2, 3] if "empty_loop" in self.avoid else [1, 2, 2, 3])
        return [D] + [self.pick([2, 3, 4]) for _ in range(n)]

    def arr(self, shape):
        return f"R({', '.join(map(str, shape))})" if shape else "float(rng.uniform(0.3, 1.2))"

    def skeleton(self, lines, sig, args, closure_vars):
        """The model: reads the parameters, leaves ``out`` (shape (B, O) or (O,)) in the environment."""
        style = self.pick(["list_for", "list_last", "list_unpack", "list_index", "dict", "dict_nested", "namedtuple", "nt_layers", "logistic", "rnn", "attention", "layernorm", "layer_records"])
        if style == "layer_records" and "record_loops" in self.avoid:
            style = "list_for"
        self.feature("model_" + style)
        batched = self.p(0.7)
        xshape = (B, D) if batched else (D,)
        sig.append("params")
        sig.append("x")
        self.define("x", xshape)
        sizes = self.layer_sizes()
        tup = self.pick(["tuple", "list"])

        def pair(i, o):
            return f"({self.arr((i, o))}, {self.arr((o,))})" if tup == "tuple" else f"[{self.arr((i, o))}, {self.arr((o,))}]"

        act = self.activation(lines, closure_vars)
        if style.startswith("list"):
            args.append("[" + ", ".join(pair(i, o) for i, o in zip(sizes, sizes[1:])) + "]")
            if style == "list_unpack" and len(sizes) > 2:
                n = len(sizes) - 1
                targets = ", ".join(f"(W{k}, b{k})" for k in range(1, n + 1))
                lines.append(f"{targets} = params")
                h = "x"
                for k in range(1, n + 1):
                    nh = f"h{k}"
                    z = f"{h} @ W{k} + b{k}"
                    lines.append(f"{nh} = {act.format(z) if k < n else z}")
                    h = nh
                    self.define(f"W{k}", (sizes[k - 1], sizes[k]))
                    self.define(f"b{k}", (sizes[k],))
                    self.define(nh, xshape[:-1] + (sizes[k],))
                lines.append(f"out = {h}")
            elif style == "list_index" or style == "list_unpack":
                h = "x"
                n = len(sizes) - 1
                for k in range(n):
                    Wk = self.pick([f"params[{k}][0]", f"params[{k - n}][0]"])
                    bk = self.pick([f"params[{k}][1]", f"params[{k - n}][-1]", f"params[{k}][-1]"])
                    nh = f"h{k}"
                    z = f"{h} @ {Wk} + {bk}"
                    lines.append(f"{nh} = {act.format(z) if k < n - 1 else z}")
                    self.define(nh, xshape[:-1] + (sizes[k + 1],))
                    h = nh
                lines.append(f"out = {h}")
            elif style == "list_last":
                lines.append("h = x")
                lines.append("for W, b in params[:-1]:")
                lines.append(f"    h = {act.format('h @ W + b')}")
                last = self.pick(["W, b = params[-1]", f"W, b = params[{len(sizes) - 2}]", "W = params[-1][0]\nb = params[-1][1]"])
                lines += last.split("\n")
                lines.append("out = h @ W + b")
                self.define("W", (sizes[-2], sizes[-1]))
                self.define("b", (sizes[-1],))
            else:  # list_for
                lines.append("h = x")
                form = self.pick(["for W, b in params:", "for layer in params:", "for i in range(len(params)):", "for i, (W, b) in enumerate(params):"])
                lines.append(form)
                if form == "for layer in params:":
                    lines.append("    W, b = layer")
                elif form == "for i in range(len(params)):":
                    lines.append("    W, b = params[i]")
                lines.append(f"    h = {act.format('h @ W + b')}")
                lines.append("out = h")
            self.define("out", xshape[:-1] + (sizes[-1],))
        elif style == "layer_records":
            # layers as records: a list of dicts, a list of namedtuples, or a dict of dicts read with .items()
            kind = self.pick(["list_of_dicts", "list_of_namedtuples", "dict_items", "dict_values"])
            self.feature("records_" + kind)
            pairs = list(zip(sizes, sizes[1:]))
            if kind == "list_of_namedtuples":
                self.imports.add("from collections import namedtuple")
                self.module_globals.insert(0, 'Layer = namedtuple("Layer", ["w", "b"])')
                args.append("[" + ", ".join(f"mod.Layer({self.arr((i, o))}, {self.arr((o,))})" for i, o in pairs) + "]")
                w, b, head = "layer.w", "layer.b", "for layer in params:"
            elif kind == "list_of_dicts":
                args.append("[" + ", ".join(f'{{"w": {self.arr((i, o))}, "b": {self.arr((o,))}}}' for i, o in pairs) + "]")
                w, b, head = 'layer["w"]', 'layer["b"]', self.pick(["for layer in params:", "for i, layer in enumerate(params):"])
            else:
                # dicts keep insertion order: the layers are applied in the order written
                args.append("{" + ", ".join(f'"layer{k}": {{"w": {self.arr((i, o))}, "b": {self.arr((o,))}}}' for k, (i, o) in enumerate(pairs)) + "}")
                w, b = 'layer["w"]', 'layer["b"]'
                head = "for name, layer in params.items():" if kind == "dict_items" else "for layer in params.values():"
            lines += ["h = x", head, f"    h = {act.format(f'h @ {w} + {b}')}", "out = h"]
            self.define("out", xshape[:-1] + (sizes[-1],))
        elif style in ("dict", "dict_nested"):
            sizes = sizes[:3] if len(sizes) > 2 else sizes + [self.pick([2, 3])]
            if style == "dict":
                args.append("{" + ", ".join(f'"w{k + 1}": {self.arr((i, o))}, "b{k + 1}": {self.arr((o,))}' for k, (i, o) in enumerate(zip(sizes, sizes[1:]))) + "}")
                first = self.pick(['x @ params["w1"] + params["b1"]', 'np.dot(x, params["w1"]) + params["b1"]'])
                lines.append("h = " + act.format(first))
                lines.append('out = h @ params["w2"] + params["b2"]')
            else:
                args.append('{"encoder": {"w": ' + self.arr(sizes[:2]) + ', "b": ' + self.arr(sizes[1:2]) + '}, "head": ' + pair(sizes[1], sizes[2]) + "}")
                lines.append('enc = params["encoder"]')
                lines.append("h = " + act.format('x @ enc["w"] + enc["b"]'))
                lines.append(self.pick(['W, b = params["head"]', 'W = params["head"][0]\nb = params["head"][-1]']).split("\n")[0])
                if "W = params" in lines[-1]:
                    lines.append('b = params["head"][-1]')
                lines.append("out = h @ W + b")
                self.define("W", (sizes[1], sizes[2]))
            self.define("h", xshape[:-1] + (sizes[1],))
            self.define("out", xshape[:-1] + (sizes[2],))
            sizes = sizes[:3]
        elif style in ("namedtuple", "nt_layers"):
            self.imports.add("from collections import namedtuple")
            self.module_globals.insert(0, 'Layer = namedtuple("Layer", ["w", "b"])')
            sizes = sizes[:3] if len(sizes) > 2 else sizes + [self.pick([2, 3])]
            if style == "namedtuple":
                args.append(f"mod.Layer({self.arr(sizes[:2])}, {self.arr(sizes[1:2])})")
                sig.append("head")
                args.append(f"mod.Layer(w={self.arr(sizes[1:3])}, b={self.arr(sizes[2:3])})")
                lines.append(f"h = {act.format('x @ params.w + params.b')}")
                lines.append(self.pick(["out = h @ head.w + head.b", "out = np.matmul(h, head[0]) + head.b", "w, b = head\nout = h @ w + b"]).split("\n")[0])
                if lines[-1] == "w, b = head":
                    lines.append("out = h @ w + b")
            else:
                self.module_globals.insert(1, 'Net = namedtuple("Net", "hidden output")')
                args.append(f"mod.Net(mod.Layer({self.arr(sizes[:2])}, {self.arr(sizes[1:2])}), output=mod.Layer({self.arr(sizes[1:3])}, {self.arr(sizes[2:3])}))")
                lines.append(f"h = {act.format('x @ params.hidden.w + params.hidden.b')}")
                lines.append(self.pick(["out = h @ params.output.w + params[1].b", "layer = params.output\nout = h @ layer.w + layer.b"]).split("\n")[0])
                if lines[-1].startswith("layer ="):
                    lines.append("out = h @ layer.w + layer.b")
            self.define("h", xshape[:-1] + (sizes[1],))
            self.define("out", xshape[:-1] + (sizes[2],))
            sizes = sizes[:3]
        elif style == "logistic":
            args.append(f"({self.arr((D,))}, {self.arr(())})")
            lines.append(self.pick(["w, b = params", "w = params[0]\nb = params[-1]"]).split("\n")[0])
            if lines[-1] == "w = params[0]":
                lines.append("b = params[-1]")
            lines.append("z = x @ w + b")
            self.define("w", (D,))
            self.define("z", xshape[:-1])
            lines.append(f"out = {self.pick(['np.logaddexp(0.0, z)', '1.0 / (1.0 + np.exp(-z))', 'np.tanh(z)'])}")
            self.define("out", xshape[:-1])
            sizes = [D, 1]
        elif style == "rnn":
            H = self.pick([2, 3])
            T = self.pick([2, 3])
            args.append(f'{{"wx": {self.arr((D, H))}, "wh": {self.arr((H, H))}, "b": {self.arr((H,))}}}')
            self.env["x"] = V((T,) + xshape)
            xshape_t = (T,) + xshape
            lines.append(f"h = np.zeros({_shape_text(xshape[:-1] + (H,))})")
            collect = self.p(0.5)
            if collect:
                lines.append("hs = []")
            form = self.pick(["for t in range(x.shape[0]):", "for xt in x:", f"for t in range({T}):"])
            lines.append(form)
            xt = "xt" if form == "for xt in x:" else "x[t]"
            lines.append("    h = " + act.format(xt + ' @ params["wx"] + h @ params["wh"] + params["b"]'))
            if collect:
                lines.append("    hs.append(h)")
                if self.p(0.3) and "list_concat" not in self.avoid:
                    self.feature("list_concat")
                    lines.insert(lines.index("hs = []"), f"h0 = np.zeros({_shape_text(xshape[:-1] + (H,))})")
                    lines.append(self.pick(["out = np.stack([h0] + hs)", "out = np.stack(hs + [h0], axis=0)"]))
                    self.define("out", (T + 1,) + xshape[:-1] + (H,))
                else:
                    lines.append(self.pick(["out = np.stack(hs)", "out = np.stack(hs, axis=0)"]))
                    self.define("out", (T,) + xshape[:-1] + (H,))
            else:
                lines.append("out = h")
                self.define("out", xshape[:-1] + (H,))
            self.define("h", xshape[:-1] + (H,))
            sizes = [D, H]
            self._xshape = xshape_t
        elif style == "attention":
            E = self.pick([2, 3])
            args.append(f'({self.arr((D, E))}, {self.arr((D, E))}, {self.arr((D, E))})')
            self.env["x"] = V((B + 1, D))
            self.helper(
                "def softmax(z, axis=-1):\n"
                "    z = z - np.max(z, axis=axis, keepdims=True)\n"
                "    e = np.exp(z)\n"
                "    return e / np.sum(e, axis=axis, keepdims=True)\n"
            )
            lines.append(self.pick(["wq, wk, wv = params", "wq = params[0]\nwk = params[1]\nwv = params[-1]"]).split("\n")[0])
            if lines[-1] == "wq = params[0]":
                lines += ["wk = params[1]", "wv = params[-1]"]
            lines += ["q = x @ wq", "k = x @ wk", "v = x @ wv"]
            lines.append(self.pick([f"scores = q @ k.T / np.sqrt({E}.0)", f"scores = np.einsum('id,jd->ij', q, k) / np.sqrt(float({E}))", "scores = q @ np.transpose(k) * 0.5"]))
            lines.append(self.pick(["attn = softmax(scores)", "attn = softmax(scores, axis=-1)", "attn = softmax(scores, axis=1)"]))
            lines.append(f"out = {act.format('attn @ v')}")
            for n in ("q", "k", "v"):
                self.define(n, (B + 1, E))
            self.define("attn", (B + 1, B + 1))
            self.define("out", (B + 1, E))
            self._xshape = (B + 1, D)
            sizes = [D, E]
        else:  # layernorm
            H = self.pick([2, 3, 4])
            args.append(f'{{"w": {self.arr((D, H))}, "gamma": {self.arr((H,))}, "beta": {self.arr((H,))}}}')
            self.helper(
                self.pick([
                    "def layer_norm(z, gamma, beta, eps=1e-5):\n"
                    "    mu = np.mean(z, axis=-1, keepdims=True)\n"
                    "    var = np.var(z, axis=-1, keepdims=True)\n"
                    "    return gamma * (z - mu) / np.sqrt(var + eps) + beta\n",
                    "def layer_norm(z, gamma, beta, /, *, eps=1e-5):\n"
                    "    mu = z.mean(axis=-1, keepdims=True)\n"
                    "    zc = z - mu\n"
                    "    var = (zc ** 2).mean(axis=-1, keepdims=True)\n"
                    "    return gamma * zc / np.sqrt(var + eps) + beta\n",
                ])
            )
            lines.append('z = x @ params["w"]')
            call = self.pick(['layer_norm(z, params["gamma"], params["beta"])', 'layer_norm(z, params["gamma"], params["beta"], eps=1e-3)'])
            if "/" in self.helpers[-1].split("\n")[0] and "eps=1e-3" not in call:
                call = call  # keyword-only eps omitted
            lines.append(f"out = {act.format(call)}")
            self.define("z", xshape[:-1] + (H,))
            self.define("out", xshape[:-1] + (H,))
            sizes = [D, H]
        if not hasattr(self, "_xshape"):
            self._xshape = xshape
        if "negative_index" in self.avoid:
            n_top = {"logistic": 2, "attention": 3}.get(style, len(sizes) - 1)
            text = "\n".join(lines)
            text = re.sub(r"params\[-(\d)\]", lambda m: f"params[{n_top - int(m.group(1))}]", text)
            text = re.sub(r"(params\[\d\]|\[\"head\"\])\[-1\]", r"\1[1]", text)
            lines[:] = text.split("\n")
        return sizes

    # ------------------------------------------------------------- statements

    def statement(self, lines, depth=0):
        weights = {
            "assign": 3, "update": 2, "helper_call": 2, "write": 3, "augassign": 1, "if": 1, "for": 1, "while": 1,
            "closure": 2, "kwcall": 2, "method": 2, "tuple_helper": 1, "builtin": 0.4, "index": 2, "container": 1,
            "alias_write": 2, "nested_helper": 1, "module_lambda": 0.7, "semantics": 2.5, "library": 2.5,
        }
        kinds = list(weights)
        if depth > 0:
            kinds = ["assign", "update", "write"]
            weights = {k: 1 for k in kinds}
        kind = self.r.choices(kinds, [weights[k] for k in kinds])[0]
        getattr(self, "s_" + kind)(lines, depth)

    def some_shape(self):
        shapes = sorted({v.shape for v in self.env.values() if len(v.shape) <= 2})
        return self.pick(shapes) if shapes else (D,)

    def s_assign(self, lines, depth):
        shape = self.some_shape()
        name = self.fresh_name("v")
        text, const = (self.bounded(shape) if depth else self.expr(shape, 3))
        if re.fullmatch(r"[\w.]+(\[[^\]]*\])*", text):  # a name or an index of one: a view, not a fresh array
            text = f"np.tanh({text})"
        lines.append(f"{name} = {text}")
        self.define(name, shape, const, fresh=True)

    def s_update(self, lines, depth):
        names = sorted(n for n, v in self.env.items() if v.fresh)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        text, const = self.bounded(self.env[n].shape)
        lines.append(f"{n} = {self.pick(['0.5', '0.8', '-0.6'])} * {n} + {text}")
        self.env[n].const = self.env[n].const and const

    def s_augassign(self, lines, depth):
        names = sorted(n for n, v in self.env.items() if v.fresh)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        text, const = self.bounded(self.env[n].shape, 1)
        lines.append(f"{n} {self.pick(['+=', '-=', '*='])} {text}")
        self.env[n].const = self.env[n].const and const
        self.feature("augassign")

    def s_write(self, lines, depth):
        names = sorted(n for n, v in self.env.items() if v.fresh and v.shape)
        if not names or self.p(0.4):
            shape = self.pick(sorted({v.shape for v in self.env.values() if v.shape and len(v.shape) <= 2}) or [(D,)])
            n = self.fresh_name("buf")
            init = self.pick(["np.zeros({})", "np.ones({})", "np.zeros_like({src})", "{src}.copy()", "np.array({src})"])
            src = self.pick(self.names_of(shape) or ["x"])
            if "{src}" in init and self.env.get(src, V(())).shape != shape:
                init = "np.zeros({})"
            lines.append(f"{n} = " + init.format(_shape_text(shape), src=src))
            self.define(n, shape, const=("zeros" in init or "ones" in init), fresh=True)
        else:
            n = self.pick(names)
        shape = self.env[n].shape
        k = shape[0]
        spots = [(str(self.r.randint(-k, k - 1)), shape[1:]), ("-1", shape[1:]), ("0", shape[1:]), ("1:", (k - 1,) + shape[1:]), (":-1", (k - 1,) + shape[1:]), ("...", shape)]
        if len(shape) == 2:
            j = self.r.randint(-shape[1], shape[1] - 1)
            spots += [(f"{self.r.randint(0, k - 1)}, {j}", ()), (f":, {j}", (k,)), (":, 1:", (k, shape[1] - 1)), ("-1, :", shape[1:])]
        spot, sshape = self.pick(spots)
        if 0 in sshape:
            spot, sshape = "0", shape[1:]
        text, const = self.bounded(sshape, 1)
        op = self.pick(["=", "=", "+=", "-=", "*="])
        lines.append(f"{n}[{spot}] {op} {text}")
        self.env[n].const = self.env[n].const and (const or op == "*=")
        self.feature("inplace_write")

    def s_helper_call(self, lines, depth):
        if not hasattr(self, "_kind_helpers"):
            self._kind_helpers = []
        if not self._kind_helpers or self.p(0.3):
            self._kind_helpers.append(self.kind_helper())
        call = self.pick(self._kind_helpers)
        for _ in range(5):
            shape = self.some_shape()
            text = call(shape)
            if text:
                name = self.fresh_name("u")
                lines.append(f"{name} = {text}")
                self.define(name, shape, fresh=self.p(0.25))  # fresh in NumPy; s2s may refuse writes into a helper result
                return
        return self.s_assign(lines, depth)

    def s_kwcall(self, lines, depth):
        names = sorted(n for n, v in self.env.items() if len(v.shape) == 2 and not v.const)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        name = self.fresh_name("r")
        v = self.env[n]
        form, shape = self.pick([
            (f"np.sum({n}, axis=0)", v.shape[1:]),
            (f"np.mean({n}, axis=-1, keepdims=True)", v.shape[:1] + (1,)),
            (f"np.sum({n} ** 2, axis=1, keepdims=True)", v.shape[:1] + (1,)),
            (f"np.mean({n}, keepdims=True)", (1, 1)),
            (f"np.clip({n}, a_min=-0.9, a_max=0.9)", v.shape),
            (f"np.clip({n}, a_min=-0.5, a_max=None)", v.shape),
            (f"np.max({n}, axis=-1)", v.shape[:1]),
            (f"np.linalg.norm({n}, axis=1)", v.shape[:1]),
            (f"np.transpose({n}, axes=(1, 0))", v.shape[::-1]),
            (f"np.reshape({n}, (-1,))", (v.shape[0] * v.shape[1],)),
            (f"np.concatenate([{n}, {n} * 0.5], axis=0)", (2 * v.shape[0], v.shape[1])),
            (f"np.stack([{n}[0], {n}[-1]], axis=1)", (v.shape[1], 2)),
            (f"np.expand_dims(np.sum({n}, axis=0), axis=0)", (1, v.shape[1])),
            (f"np.var({n}, axis=0, ddof=0)", v.shape[1:]),
            (f"np.std({n}, axis=-1)", v.shape[:1]),
            (f"np.cumsum({n}, axis=1)", v.shape),
            (f"np.where({n} > 0.3, {n}, np.zeros_like({n}))", v.shape),
        ])
        lines.append(f"{name} = {form}")
        view = form.startswith(("np.transpose", "np.reshape", "np.expand_dims"))  # NumPy returns views: not fresh
        self.define(name, shape, fresh=not view)
        self.feature("numpy_keywords")

    def s_closure(self, lines, depth):
        shape = self.some_shape()
        vals = sorted(n for n, v in self.env.items() if not v.const and (v.shape == () or v.shape == shape))
        if not vals:
            return self.s_assign(lines, depth)
        c = self.pick(vals)
        name = self.fresh_name("g")
        body, _ = self.expr(shape, 1)
        style = self.pick(["lambda", "def", "def2"])
        if style == "lambda":
            lines.append(f"{name} = lambda z: np.tanh(z) * {c} + {body}")
            self.feature("lambda_closure")
        elif style == "def":
            lines += [f"def {name}(z, k=2.0):", f"    return np.sin(k * z) + {c}"]
            self.feature("localdef_closure")
        else:
            lines += [f"def {name}(z, *, scale=0.5):", f"    w_ = scale * {c}", "    return np.tanh(z * w_)"]
            self.feature("localdef_closure")
        target = self.fresh_name("v")
        arg, const = self.expr(shape, 1)
        call = self.pick([f"{name}({arg})", f"{name}({arg}) + {name}({arg} * 0.5)"])
        if style == "def" and self.p(0.5):
            call = f"{name}({arg}, k=0.5)"
        if style == "def2" and self.p(0.5):
            call = f"{name}({arg}, scale=1.5)"
        lines.append(f"{target} = {call}")
        self.define(target, shape, False, fresh=True)

    def test_expr(self):
        names = sorted(n for n, v in self.env.items() if not v.const)
        n = self.pick(names)
        v = self.env[n]
        text = self.pick(["np.sum({})", "np.mean({})", "np.max({})", "np.min({})"]).format(n) if v.shape else n
        return f"{text} {self.pick(['>', '<'])} {self.pick(['-0.7', '-0.2', '0.25', '0.6', '1.4'])}"

    def s_if(self, lines, depth):
        if depth > 0:
            return self.s_assign(lines, depth)
        self.feature("if")
        shape = self.some_shape()
        name = self.fresh_name("c")
        a, ca = self.bounded(shape)
        b, cb = self.bounded(shape)
        lines.append(f"if {self.test_expr()}:")
        lines.append(f"    {name} = {a}")
        if self.p(0.3):
            lines.append(f"    {name} = {name} * 2.0")
        lines.append("else:")
        lines.append(f"    {name} = {b}")
        self.define(name, shape, ca and cb, fresh=True)

    def s_for(self, lines, depth):
        if depth > 0:
            return self.s_assign(lines, depth)
        self.feature("for")
        shape = self.some_shape()
        acc = self.fresh_name("acc")
        init = self.pick(["np.zeros({})", "0.0 * {src}", "{src} * 1.0"])
        src = self.pick(self.names_of(shape) or [None])
        if src is None or not shape:
            init = "np.zeros({})" if shape else "0.0"
        lines.append(f"{acc} = " + init.format(_shape_text(shape), src=src))
        self.define(acc, shape, fresh=True, const=True)
        k = self.pick([2, 3])
        i = self.fresh_name("i")
        lines.append(f"for {i} in range({k}):")
        step, const = self.bounded(shape, 1)
        body = [f"    {acc} = 0.7 * {acc} + {step} * (0.5 + 0.25 * {i})"]
        if self.p(0.35):
            self.feature("break_continue")
            jump = [f"    if {self.test_expr()}:", f"        {self.pick(['break', 'continue'])}"]
            body = jump + body if self.p(0.5) else body + jump
        lines += body
        self.env[acc].const = const

    def s_while(self, lines, depth):
        if depth > 0:
            return self.s_assign(lines, depth)
        self.feature("while")
        shape = self.some_shape()
        acc, n = self.fresh_name("w"), self.fresh_name("n")
        src = self.pick(self.names_of(shape, nonconst=True) or [None])
        if src is None:
            return self.s_assign(lines, depth)
        lines.append(f"{acc} = np.tanh({src})")
        lines.append(f"{n} = 0")
        lines.append(f"while {n} < {self.pick([1, 2, 3])} and {self.test_expr()}:")
        lines.append(f"    {n} += 1")
        step, _ = self.bounded(shape, 1)
        lines.append(f"    {acc} = 0.6 * {acc} + 0.3 * {step}")
        self.define(acc, shape, fresh=True)


    # ------------------------------------------------------ more statements

    def s_method(self, lines, depth):
        """Array methods: ``h.sum(axis=0)``, ``h.T``, ``h.reshape(-1)``, ``h.dot(W)``, ``h.clip(..)``, ``h.max(axis=-1)``."""
        names = sorted(n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        v = self.env[n]
        options = [
            (f"{n}.sum()", ()), (f"{n}.mean()", ()), (f"({n} ** 2).sum()", ()), (f"{n}.std()", ()),
            (f"{n}.clip(-0.5, 0.5)", v.shape), (f"{n}.copy() * 2.0", v.shape), (f"{n}.ravel()", (math.prod(v.shape),)),
            (f"{n}.reshape(-1)", (math.prod(v.shape),)), (f"{n}.max()", ()), (f"np.tanh({n}).prod()", ()),
        ]
        if len(v.shape) == 2:
            options += [(f"{n}.T", v.shape[::-1]), (f"{n}.sum(axis=0)", v.shape[1:]), (f"{n}.mean(axis=-1)", v.shape[:1]),
                        (f"{n}.max(axis=-1)", v.shape[:1]), (f"{n}.sum(0)", v.shape[1:]), (f"{n}.transpose()", v.shape[::-1]),
                        (f"{n}.T @ {n}", (v.shape[1], v.shape[1])), (f"{n}.dot({n}.T)", (v.shape[0], v.shape[0])),
                        (f"{n}.reshape({v.shape[1]}, {v.shape[0]})", v.shape[::-1]), (f"{n}.mean(axis=0, keepdims=True)", (1, v.shape[1]))]
        else:
            options += [(f"{n}.dot({n})", ()), (f"{n}[::-1]", v.shape), (f"{n}.reshape(1, -1)", (1, v.shape[0])), (f"{n}[:, None] * {n}[None, :]", (v.shape[0], v.shape[0]))]
        form, shape = self.pick(options)
        name = self.fresh_name("m")
        lines.append(f"{name} = {form}")
        view = any(t in form for t in (".T", ".reshape", ".ravel", ".transpose", "[::-1]")) and " @ " not in form and ".dot" not in form and "*" not in form
        self.define(name, shape, fresh=not view)
        self.feature("methods")

    def s_tuple_helper(self, lines, depth):
        """A helper returning a tuple (or a dict), unpacked at the call."""
        names = sorted(n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        shape = self.env[n].shape
        style = self.pick(["tuple", "tuple", "dict", "nested"])
        a, b = self.fresh_name("p"), self.fresh_name("q")
        if style == "tuple":
            self.helper("def split_stats(z, eps=1e-3):\n    mu = np.mean(z)\n    sd = np.sqrt(np.var(z) + eps)\n    return mu, sd\n")
            lines.append(self.pick([f"{a}, {b} = split_stats({n})", f"{a}, {b} = split_stats({n}, eps=0.01)", f"stats = split_stats({n})\n{a} = stats[0]\n{b} = stats[-1]"]).split("\n")[0])
            if lines[-1].startswith("stats ="):
                lines += [f"{a} = stats[0]", f"{b} = stats[1]" if "negative_index" in self.avoid else f"{b} = stats[-1]"]
            self.define(a, ())
            self.define(b, ())
        elif style == "dict":
            self.helper("def moments(z):\n    return {\"mean\": np.mean(z), \"sq\": np.mean(z * z)}\n")
            lines.append(f"mo = moments({n})")
            lines.append(f"{a} = mo[\"mean\"] * mo[\"sq\"]")
            lines.append(f"{b} = mo[\"sq\"] + 1.0")
            self.define(a, ())
            self.define(b, ())
        else:
            self.helper("def pair_ops(z, w=1.0):\n    return (np.tanh(z) * w, (np.sin(z), np.cos(z)))\n")
            lines.append(f"{a}, ({b}, _) = pair_ops({n}, w=0.5)" if self.p(0.5) else f"{a}, rest = pair_ops({n})\n{b} = rest[0] + rest[1]")
            if "\n" in lines[-1]:
                first, second = lines.pop().split("\n")
                lines += [first, second]
            self.define(a, shape, fresh=self.p(0.25))
            self.define(b, shape, fresh=self.p(0.25))
        self.feature("tuple_helper")

    def s_builtin(self, lines, depth):
        """Python builtins and ``math`` on differentiated values: ``sum`` of a list, ``max``/``abs`` of floats."""
        names = sorted(n for n, v in self.env.items() if not v.const)
        if not names:
            return self.s_assign(lines, depth)
        picked = sorted({self.pick(names) for _ in range(3)})
        name = self.fresh_name("t")
        form = self.pick(["sum_list", "sum_gen", "math", "minmax", "float_scalar"])
        if form == "sum_list":
            lines.append(f"{name} = sum([{', '.join(f'np.sum({p})' for p in picked)}])")
        elif form == "sum_gen":
            lines.append(f"{name} = sum(np.sum(np.tanh(z_)) for z_ in ({', '.join(picked)},))")
        elif form == "math" and self.scalars:
            self.imports.add("import math")
            s_ = self.pick(self.scalars)
            lines.append(f"{name} = math.exp(-{s_}) + math.sqrt(2.0) * {s_} + math.tanh({s_})")
        elif form == "minmax" and self.scalars:
            s_ = self.pick(self.scalars)
            lines.append(f"{name} = max({s_}, 0.1) * abs({s_} - 2.0) + min({s_}, 5.0)")
        else:
            p0 = picked[0]
            lines.append(f"{name} = np.sum({p0}) / {self.env[p0].shape[0]}.0" if self.env[p0].shape else f"{name} = 2.0 * {p0}")
        self.define(name, ())
        self.feature("builtins")

    def s_index(self, lines, depth):
        """Indexing: None/newaxis, ``...``, reversed and strided slices, lists of indices, ``np.take``."""
        names = sorted(n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        v = self.env[n]
        k = v.shape[0]
        options = [(f"{n}[None]", (1,) + v.shape), (f"{n}[np.newaxis, ...]", (1,) + v.shape), (f"{n}[::-1]", v.shape),
                   (f"{n}[::2]", ((k + 1) // 2,) + v.shape[1:]), (f"{n}[[0, -1]]", (2,) + v.shape[1:]),
                   (f"np.take({n}, [1, 0], axis=0)" if k > 1 else f"{n}[[0, 0]]", (2,) + v.shape[1:]),
                   (f"{n}[{-k}]", v.shape[1:]), (f"{n}[{k - 1}:]", (1,) + v.shape[1:]), (f"{n}[-2::-1]" if k > 1 else f"{n}[::-1]", (k - 1 if k > 1 else k,) + v.shape[1:])]
        if len(v.shape) == 2:
            options += [(f"{n}[..., 0]", v.shape[:1]), (f"{n}[:, ::-1]", v.shape), (f"{n}[-1, -1]", ()), (f"{n}[:, None, :]", (k, 1, v.shape[1])),
                        (f"{n}[0:{k}, 1:]", (k, v.shape[1] - 1)), (f"{n}[[1, 0]][:, -1]" if k > 1 else f"{n}[[0]][:, -1]", (2 if k > 1 else 1,)),
                        (f"{n}[np.arange({k}), np.arange({k}) % {v.shape[1]}]", (k,))]
        form, shape = self.pick(options)
        if 0 in shape or len(shape) > 2:
            form = f"np.sum({form})"
            shape = ()
        name = self.fresh_name("ix")
        lines.append(f"{name} = {form}")
        self.define(name, shape, fresh=False)
        self.feature("indexing")

    def s_container(self, lines, depth):
        """Lists and dicts built and read in the function: appends, ``dict.items()`` loops, comprehensions."""
        names = sorted(n for n, v in self.env.items() if not v.const)
        if not names:
            return self.s_assign(lines, depth)
        shape = self.env[self.pick(names)].shape
        same = [n for n in names if self.env[n].shape == shape][:3]
        name = self.fresh_name("k")
        style = self.pick(["append", "dict_items", "comprehension", "dict_values", "zip", "enumerate"])
        if style == "append":
            lines += [f"terms = []", f"for z_ in ({', '.join(same)},):", "    terms.append(np.tanh(z_))", f"{name} = terms[0]" + "".join(f" + terms[{i}]" for i in range(1, len(same)))]
        elif style == "dict_items":
            lines.append("parts = {" + ", ".join(f'"{n}": {n}' for n in same) + "}")
            lines += [f"{name} = {0.0 if not shape else f'np.zeros({_shape_text(shape)})'}", "for key_, val_ in parts.items():", f"    {name} = {name} + np.sin(val_)"]
        elif style == "dict_values":
            lines.append("parts = dict(" + ", ".join(f"{n}={n}" for n in same) + ")")
            lines.append(f"{name} = sum(np.cos(val_) for val_ in parts.values())")
        elif style == "comprehension":
            lines.append(f"{name} = sum([np.tanh(z_) * (i_ + 1) for i_, z_ in enumerate(({', '.join(same)},))])")
        elif style == "zip":
            ws = ", ".join(str(0.5 + 0.25 * i) for i in range(len(same)))
            lines += [f"{name} = {0.0 if not shape else f'np.zeros({_shape_text(shape)})'}", f"for w_, z_ in zip(({ws},), ({', '.join(same)},)):", f"    {name} = {name} + w_ * np.tanh(z_)"]
        else:
            lines += [f"{name} = {0.0 if not shape else f'np.zeros({_shape_text(shape)})'}", f"for i_, z_ in enumerate([{', '.join(same)}]):", f"    {name} = {name} + (i_ + 1.0) * np.sin(z_)"]
        self.define(name, shape, fresh=style != "append" or self.p(0.25))
        self.feature("containers")

    def s_alias_write(self, lines, depth):
        """Writes through views (NumPy changes the viewed array too, and the view when the base changes):
        a view of a fresh array, then writes into the view and/or the base in some order, then reads.
        s2s must refuse or match NumPy (finite differences of the NumPy program are the oracle)."""
        names = sorted(n for n, v in self.env.items() if v.fresh and 1 <= len(v.shape) <= 2 and not v.const)
        if not names or "alias_after_update" in self.avoid:
            return self.s_write(lines, depth)
        base = self.pick(names)
        shape = self.env[base].shape
        views = [(f"{base}[0]", shape[1:]), (f"{base}[1:]", (shape[0] - 1,) + shape[1:]), (f"{base}.reshape(-1)", (math.prod(shape),)),
                 (f"{base}.T", shape[::-1]), (f"{base}[...]", shape), (f"{base}.ravel()", (math.prod(shape),)), (f"np.reshape({base}, (-1,))", (math.prod(shape),)),
                 (f"{base}[::-1]", shape), (f"{base}", shape)]
        if len(shape) == 2:
            views += [(f"{base}[:, 0]", shape[:1]), (f"{base}[:, 1:]", (shape[0], shape[1] - 1)), (f"np.transpose({base})", shape[::-1])]
        form, vshape = self.pick(views)
        if 0 in vshape or not vshape:
            form, vshape = base, shape
        view = self.fresh_name("view")
        lines.append(f"{view} = {form}")
        for _ in range(self.r.randint(1, 3)):
            target, tshape = self.pick([(view, vshape), (base, shape)])
            text, _ = self.bounded(tshape, 1)
            lines.append(self.pick([
                f"{target} {self.pick(['+=', '-=', '*='])} {text}",
                f"{target}[...] = {text}",
                f"{target}[0] {self.pick(['=', '+='])} {self.pick(['0.5', '-1.0'])}",
                f"{target} *= 1.5",
            ]))
            if self.p(0.2):  # a read in between
                r = self.fresh_name("rd")
                lines.append(f"{r} = np.sum({self.pick([view, base])} ** 2)")
                self.define(r, ())
        if self.p(0.3):  # a read in a test only
            c = self.fresh_name("c")
            text, _ = self.bounded((), 1)
            lines += [f"if np.sum({self.pick([view, base])}) > {self.pick(['-0.5', '0.3', '1.0'])}:", f"    {c} = {text}", "else:", f"    {c} = 2.0 * {text}"]
            self.define(c, ())
        self.env[base].fresh = False
        self.define(view, vshape, fresh=False)
        self.fd_only = True
        self.feature("alias_write")

    def s_nested_helper(self, lines, depth):
        """Helpers calling helpers, a local def inside a helper, a global constant as a default."""
        names = sorted(n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        self.global_const(())
        g = next(line.split(" =")[0] for line in self.module_globals if line.split(" =")[0] in ("SCALE", "TEMPERATURE", "GAIN", "ALPHA"))
        self.helper(f"def inner_step(z, rate):\n    return z - rate * np.tanh(z)\n")
        self.helper(
            f"def outer_step(z, rate=0.1, *, n_iter=2):\n"
            f"    def bump(u):\n        return u + rate * np.sin(u)\n\n"
            f"    for _ in range(n_iter):\n        z = inner_step(bump(z), rate)\n"
            f"    return z * {g}\n"
        )
        name = self.fresh_name("o")
        lines.append(f"{name} = " + self.pick([f"outer_step({n})", f"outer_step({n}, 0.2)", f"outer_step({n}, rate=0.3, n_iter=1)", f"outer_step({n}, n_iter=3)"]))
        self.define(name, self.env[n].shape, fresh=True)
        self.feature("nested_helpers")

    def s_module_lambda(self, lines, depth):
        """A lambda bound at module level, or a module-level alias of a NumPy function."""
        names = sorted(n for n, v in self.env.items() if not v.const)
        n = self.pick(names)
        style = self.pick(["lambda", "alias", "tuple_of_fns"])
        name = self.fresh_name("lam")
        if style == "lambda":
            line = "sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))"
            call = f"sigmoid({n})"
        elif style == "alias":
            line = "ACT = np.tanh"
            call = f"ACT({n})"
        else:
            line = "FNS = (np.sin, np.cos)"
            call = f"FNS[0]({n}) * FNS[1]({n})"
        if line not in self.module_globals:
            self.module_globals.append(line)
        lines.append(f"{name} = {call}")
        self.define(name, self.env[n].shape, fresh=True)
        self.feature("module_lambda")

    def s_semantics(self, lines, depth):
        """Python and NumPy semantics a rewrite can get wrong: late binding, index arrays, chained and masked writes."""
        names = sorted(n for n, v in self.env.items() if len(v.shape) == 1 and not v.const and v.shape[0] >= 2)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        k = self.env[n].shape[0]
        name = self.fresh_name("e")
        style = self.pick(["late_binding", "list_join", "branch_closure", "loop_set_closure", "loop_closure", "list_index_read", "list_index_write", "repeated_index", "chained_write", "mask_write", "strided_write", "swap", "helper_mutates", "row_view"])
        self.feature("sem_" + style)
        if style == "late_binding":
            lines += [f"a_ = {n} * 2.0", "g_ = lambda z: z * a_", f"a_ = np.tanh({n})", f"{name} = g_({n})"]
            self.define(name, (k,), fresh=True)
        elif style == "list_join":  # Python joins the lists: the cotangent splits
            j = self.fresh_name("pair")
            lines += [f"{j} = [np.tanh({n})] + [{n} * 0.5]", f"{j} = {j} + [{n}]", f"{name} = {j}[0] * {j}[1] + np.stack({j})[2]"]
            self.define(name, (k,), fresh=True)
        elif style == "branch_closure":  # defined before an if assigns what it captures, called after
            g, a = self.fresh_name("gb"), self.fresh_name("ab")
            lines += [f"{g} = lambda z: z * {a}", f"if np.sum({n}) > 0.1:", f"    {a} = np.tanh({n})", "else:", f"    {a} = {n} * 0.5", f"{name} = {g}({n})"]
            self.define(name, (k,), fresh=True)
        elif style == "loop_set_closure":  # captures a value a loop computes; called after the loop
            g, a = self.fresh_name("gl"), self.fresh_name("al")
            lines += [f"{a} = 1.0", f"for j_ in range({k}):", f"    {a} = {a} * np.cos({n}[j_])", f"def {g}(z):", f"    return z + {a}", f"{name} = {g}({n})"]
            self.define(name, (k,), fresh=True)
        elif style == "loop_closure":
            lines += ["fs_ = []", "for j_ in range(2):", "    def gj_(z, j_=j_):", "        return z * (j_ + 1.0)", "    fs_.append(gj_)", f"{name} = fs_[0]({n}) + fs_[1]({n})"]
            self.define(name, (k,), fresh=True)
        elif style == "list_index_read":
            idx = [self.r.randint(-k, k - 1) for _ in range(self.r.randint(2, 3))]
            lines.append(f"{name} = {n}[{idx}] * 2.0")
            self.define(name, (len(idx),), fresh=True)
        elif style == "list_index_write":
            lines += [f"{name} = np.zeros({k})", f"{name}[{list(range(k))[::-1]}] = np.tanh({n})"]
            self.define(name, (k,), fresh=True)
        elif style == "repeated_index":
            lines += [f"{name} = np.zeros({k})", f"{name}[[0, 0]] += {n}[:2]"]
            self.define(name, (k,), fresh=True)
            self.fd_only = True  # NumPy's buffered semantics: the twin's .at[].add accumulates
        elif style == "chained_write":
            lines += [f"{name} = np.zeros((2, {k}))", f"{name}[1][0] = {n}[-1] * 3.0", f"{name}[0][1:] += np.sin({n}[1:])"]
            self.define(name, (2, k), fresh=True)
            self.fd_only = True  # a[i][j] = v writes through the view a[i]: no twin spelling
        elif style == "mask_write":
            lines += [f"{name} = np.tanh({n})", f"{name}[{name} > 0.5] = 0.5", f"{name}[{name} < -0.5] *= 2.0"]
            self.define(name, (k,), fresh=True)
            self.fd_only = True
        elif style == "strided_write":
            lines += [f"{name} = np.zeros({2 * k})", f"{name}[::2] += {n}", f"{name}[::-1] *= 1.5", f"{name}[1::2] = {n} * {n}"]
            self.define(name, (2 * k,), fresh=True)
        elif style == "swap":
            lines += [f"a_, b_ = {n}[0], {n}[1] * 0.5", "for _ in range(3):", "    a_, b_ = b_, a_ + 0.5 * np.tanh(b_)", f"{name} = a_ * b_"]
            self.define(name, (), fresh=True)
        elif style == "helper_mutates":
            self.helper("def fill_first(buf, v):\n    buf[0] = v\n    return buf\n")
            lines += [f"{name} = np.zeros({k})", f"fill_first({name}, np.sum({n}))" if self.p(0.5) else f"_ = fill_first({name}, np.sum({n}))"]
            self.define(name, (k,), fresh=True)
            self.fd_only = True  # the caller's buffer changes
        else:  # row_view
            lines += [f"{name} = np.zeros((2, {k}))", f"row_ = {name}[1]", f"row_ += {n}", f"{name}[0, :] = {n} * {n}"]
            self.define(name, (2, k), fresh=True)
            self.fd_only = True

    def s_library(self, lines, depth):
        """Library-code idioms (scipy/optax style): optional arguments tested with ``is None``, docstrings,
        annotations, static ``axis``/``keepdims`` branches, recursion over a list, shapes read from arrays,
        NumPy-scalar module constants."""
        names = sorted(n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        v = self.env[n]
        name = self.fresh_name("lib")
        weights = {"optional": 2, "logsumexp": 2, "annotated": 2, "recursive": 1, "shape": 2, "np_constant": 2, "assert": 0.3, "astype": 0.3}
        for bug, style_ in (("container_truth", "recursive"), ("static_default_branch", "logsumexp"), ("numpy_scalar_constant", "np_constant")):
            if bug in self.avoid:
                weights[style_] = 0
        style = self.r.choices(list(weights), list(weights.values()))[0]
        self.feature("lib_" + style)
        if style == "optional":
            self.helper(
                "def affine(z, scale=None, shift=None):\n"
                '    """z * scale + shift, each optional."""\n'
                "    if scale is not None:\n        z = z * scale\n"
                "    if shift is None:\n        return z\n"
                "    return z + shift\n"
            )
            call = self.pick([f"affine({n})", f"affine({n}, 0.5)", f"affine({n}, shift=np.tanh({n}))", f"affine({n}, scale=2.0, shift=0.1)"])
            lines.append(f"{name} = {call}")
            self.define(name, v.shape, fresh=False)
        elif style == "logsumexp":
            self.helper(
                "def logsumexp(a, axis=None, keepdims=False):\n"
                "    m = np.max(a, axis=axis, keepdims=True)\n"
                "    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m\n"
                "    if not keepdims:\n"
                "        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())\n"
                "    return out\n"
            )
            if len(v.shape) == 2:
                call, shape = self.pick([(f"logsumexp({n})", ()), (f"logsumexp({n}, axis=-1)", v.shape[:1]), (f"logsumexp({n}, axis=0, keepdims=True)", (1, v.shape[1])), (f"logsumexp({n}, 1)", v.shape[:1])])
            else:
                call, shape = self.pick([(f"logsumexp({n})", ()), (f"logsumexp({n}, axis=0)", ()), (f"logsumexp({n}, keepdims=True)", (1,))])
            lines.append(f"{name} = {call}")
            self.define(name, shape, fresh=True)
        elif style == "annotated":
            self.imports.add("from typing import Optional")
            self.helper(
                "def gated(z: np.ndarray, gate: Optional[float] = 0.5, *, eps: float = 1e-6) -> np.ndarray:\n"
                '    """A smooth gate.\n\n    Args:\n        z: the input.\n        gate: its weight.\n    """\n'
                "    g = 1.0 / (1.0 + np.exp(-z))  # sigmoid\n"
                "    return gate * z * g + eps\n"
            )
            lines.append(f"{name} = " + self.pick([f"gated({n})", f"gated({n}, 0.3)", f"gated({n}, gate=1.5, eps=0.0)"]))
            self.define(name, v.shape, fresh=True)
        elif style == "recursive":
            self.helper(
                "def chain(ws, z):\n"
                "    if not ws:\n        return z\n"
                "    return chain(ws[1:], np.tanh(z * ws[0]))\n"
            )
            lines.append(f"{name} = chain([0.5, 1.5, -0.7], {n})" if self.p(0.5) else f"{name} = chain(({n}, {n}), np.ones({_shape_text(v.shape)}))")
            self.define(name, v.shape, fresh=True)
        elif style == "shape":
            if len(v.shape) == 2:
                lines += [f"rows_, cols_ = {n}.shape", f"{name} = np.sum({n}, axis=0) / rows_ + {n}.shape[-1] * np.mean({n}) / (len({n}) * cols_)"]
                self.define(name, v.shape[1:], fresh=True)
            else:
                lines.append(f"{name} = {n} * ({n}.shape[0] - 1) / {n}.size + np.sum({n}) / len({n}) * {n}.ndim")
                self.define(name, v.shape, fresh=True)
        elif style == "np_constant":
            line = self.pick(["LOG2PI = np.log(2.0 * np.pi)", "EPS = np.finfo(np.float64).eps", "SQRT2 = np.sqrt(2.0)", "HALF = np.float64(0.5)"])
            if line not in self.module_globals:
                self.module_globals.append(line)
            const = line.split(" =")[0]
            lines.append(f"{name} = {n} * {const} + np.tanh({n})")
            self.define(name, v.shape, fresh=True)
        elif style == "assert":
            lines.append(f'assert {n}.ndim == {len(v.shape)}, "unexpected rank"')
            lines.append(f"{name} = np.tanh({n})")
            self.define(name, v.shape, fresh=True)
        else:
            lines.append(f"{name} = {n}.astype(np.float64) * 2.0")
            self.define(name, v.shape, fresh=True)

    # ------------------------------------------------------------- the whole

    def program(self) -> Program:
        lines: list[str] = []
        sig: list[str] = []
        args: list[str] = []
        kwargs: list[str] = []
        self.scalars = []
        closure_vars: list[str] = []
        sizes = self.skeleton(lines, sig, args, closure_vars)
        xshape = self._xshape
        args.insert(1, self.arr(xshape))
        out_shape = self.env["out"].shape
        # the target and extra scalar arguments
        has_y = self.p(0.7)
        if has_y:
            sig.append("y")
            args.append(self.arr(out_shape))
            self.define("y", out_shape)
        extras = []  # (name, kind) for extra parameters after y
        if self.p(0.5):
            extras.append(("scale", "pos"))
        if self.p(0.3):
            extras.append(("l2", "kwonly"))
        if self.p(0.2):
            extras.append(("steps", "static"))
        if len(out_shape) == 2 and out_shape[-1] >= 2 and self.p(0.25):
            extras.insert(0, ("labels", "int"))  # class labels: an int array, never differentiated
        pos_only = self.p(0.15)
        for name, kind in extras:
            if kind == "pos":
                sig.append(name)
                args.append("float(rng.uniform(0.3, 1.2))")
                self.scalars.append(name)
            if kind == "int":
                sig.append(name)
                args.append(f"rng.integers(0, {out_shape[-1]}, size={out_shape[0]})")
        n_positional = len(sig)
        kwonly = [(n, k) for n, k in extras if k in ("kwonly", "static")]
        if kwonly:
            sig.append("*")
            for name, kind in kwonly:
                if kind == "kwonly":
                    sig.append("l2=0.01")
                    self.scalars.append("l2")
                    if self.p(0.7) and "kwonly_by_keyword" not in self.avoid:
                        kwargs.append("l2=0.05")
                else:
                    sig.append("steps=2")
                    if self.p(0.5) and "kwonly_by_keyword" not in self.avoid:
                        kwargs.append(f"steps={self.pick([1, 3])}")
        if pos_only:
            sig.insert(n_positional, "/") if n_positional == len(sig) else sig.insert(n_positional, "/")
        closure_vars += self.scalars
        # body statements
        for _ in range(self.r.randint(1, 5)):
            self.statement(lines)
        if "steps" in [n for n, _ in extras]:
            acc = self.fresh_name("s")
            shape = self.some_shape()
            step, _ = self.bounded(shape, 1)
            lines += [f"{acc} = np.zeros({_shape_text(shape)})" if shape else f"{acc} = 0.0", "for _ in range(steps):", f"    {acc} = 0.5 * {acc} + {step}"]
            self.define(acc, shape, fresh=True)
        # the loss
        loss = []
        if has_y:
            loss.append(self.pick(["np.mean((out - y) ** 2)", "np.sum((out - y) ** 2) / 2.0", "np.mean(np.square(out - y))", "0.5 * np.sum(np.abs(out - y) ** 2)"]))
        else:
            loss.append(self.pick(["np.sum(out ** 2)", "np.mean(np.tanh(out))", "np.sum(np.sin(out))"]))
        if len(out_shape) >= 1 and out_shape[-1] >= 2 and self.p(0.3):
            self.feature("log_softmax")
            lines.append("zs = out - np.max(out, axis=-1, keepdims=True)")
            lines.append("logp = zs - np.log(np.sum(np.exp(zs), axis=-1, keepdims=True))")
            loss.append("-np.mean(logp[..., 0])" if not has_y else "-np.mean(np.sum(logp * np.tanh(y), axis=-1))")
        if "labels" in sig:
            self.feature("int_labels")
            lines.append("logits = out - np.max(out, axis=1, keepdims=True)")
            lines.append("logq = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))")
            loss.append(self.pick([
                "-np.mean(logq[np.arange(logq.shape[0]), labels])",
                f"-np.sum(np.eye({out_shape[-1]})[labels] * logq) / len(labels)",
                "-np.mean(np.where(labels[:, None] == np.arange(logq.shape[1]), logq, 0.0)) * 2.0",
                "-np.sum(np.take_along_axis(logq, labels[:, None], axis=1))",
            ]))
        if "l2" in self.scalars:
            self.r.choice((0, 1))  # an unused draw, kept so that seeds keep giving the same programs
            leaves = [n for n, v in sorted(self.env.items()) if len(v.shape) == 2 and n not in ("x",) and n.startswith(("W", "w", "k", "q"))]
            lines.append("reg = 0.0")
            if leaves:
                lines.append(f"for leaf in ({', '.join(leaves)},):" if len(leaves) > 0 else "")
                lines.append("    reg = reg + np.sum(leaf * leaf)")
            else:
                lines.append("reg = reg + np.sum(out * out)")
            loss.append("l2 * reg")
        if "scale" in self.scalars and self.p(0.5):
            loss[0] = f"scale * {loss[0]}"
        recent = [n for n in self.env if n not in ("x", "y", "out")][-3:]
        for k, n in enumerate(recent):
            loss.append(f"np.sum({n} * {0.5 + 0.25 * k})" if self.env[n].shape else f"{0.5 + 0.25 * k} * {n}")
        self.r.shuffle(loss)
        has_aux = self.p(0.1)
        if has_aux:
            self.feature("has_aux")
            lines.append("total = " + " + ".join(loss))
            aux_name = self.pick([n for n in self.env if n not in ("x", "y")])
            lines.append(self.pick([f'return total, {{"pred": out, "extra": {aux_name}}}', f"return total, out", f"return total, ({aux_name}, np.sum(out))"]))
        else:
            lines.append("return " + " + ".join(loss))
        entry = self.pick(["loss", "f", "objective", "loss_fn"])
        factory_main = self.p(0.1) and "/" not in sig
        if factory_main:  # the function closes over the factory's argument (a float, or data as an array)
            ret = lines[-1]
            if ret.startswith("return total, "):
                lines.insert(len(lines) - 1, "total = total + np.sum(captured) * np.mean(out)")
            else:
                lines[-1] = "return np.sum(captured) * np.mean(out) + " + ret[len("return "):]
        body = "\n".join("    " + line for line in "\n".join(lines).split("\n"))
        if factory_main:
            self.feature("factory_main")
            inner = f"    def {entry}({', '.join(sig)}):\n" + "\n".join("    " + line for line in body.split("\n"))
            value = self.pick(["0.25", "np.array([0.5, -1.0, 2.0])", "np.linspace(-1.0, 1.0, 4).reshape(2, 2)"])
            main = f"def make_{entry}(captured):\n{inner}\n\n    return {entry}\n\n\n{entry} = make_{entry}({value})\n"
        else:
            main = f"def {entry}({', '.join(sig)}):\n{body}\n"
        head = "\n".join(sorted(self.imports, key=lambda s: (not s.startswith("import"), s)))
        parts = [head]
        if self.module_globals:
            globs = [g for g in self.module_globals if "namedtuple" in g] + [g for g in self.module_globals if "namedtuple" not in g and "make_" not in g]
            parts.append("\n".join(globs))
        parts += self.helpers
        closures = [g for g in self.module_globals if "make_" in g]
        if closures:
            parts.append("\n".join(closures))
        parts.append(main)
        source = "\n\n".join(p.rstrip("\n") for p in parts) + "\n"
        numpy_source = ""
        if not getattr(self, "fd_only", False) and self.p(0.1):
            # the JAX-docs dialect: `import jax.numpy as jnp`, functional updates `x = x.at[i].set(v)`
            self.features.append("jnp_dialect")
            numpy_source, source = source, to_jnp(source)
        # argnums: the parameters (always), and sometimes x, y, scale
        floats = [i for i, s in enumerate(sig[: n_positional + (1 if pos_only else 0)]) if s not in ("/", "*", "labels")]
        choices = [(0,), (0,), (0, 1)] + [tuple(sorted(self.r.sample(floats, self.r.randint(1, len(floats)))))]
        argnums = self.pick(choices)
        args_code = (
            f"rng = np.random.default_rng({self.seed})\n"
            "R = lambda *s: rng.normal(size=s) * 0.8\n"
            f"args = ({', '.join(args)},)\n"
            f"kwargs = dict({', '.join(kwargs)})\n"
        )
        oracle = "fd" if getattr(self, "fd_only", False) else ("jax" if numpy_source else "any")
        return Program(self.seed, source, entry, args_code, argnums, list(self.features), oracle, has_aux, numpy_source)


KNOWN = {
    "kwonly_by_keyword": "keyword-only parameters of the main function passed by keyword are ignored",
    "negative_index": "params[-1] (a negative constant index into a pytree) gives a zero gradient",
    "factory_two": "two closures from one factory share one value",
    "one_line_def": "`def f(x): return ...` on one line crashes",
    "list_concat": "`[h0] + hs` after appends is wrong on NumPy",
    "jvp_kwonly": "s2s.jvp of a function with keyword-only parameters crashes (findings #1)",
    "kwonly_order": "a keyword-only parameter without default after one with a default crashes (findings #2)",
    "empty_loop": "a for loop over an empty list crashes (findings #5)",
    "numpy_scalar_constant": "a module constant that is a NumPy scalar crashes (findings #10)",
    "record_loops": "a for loop over a list of dicts/namedtuples or dict.items() of dicts crashes (findings #11)",
    "container_truth": "`if not ws:` on a list/tuple crashes (findings #12)",
    "static_default_branch": "a static bool default in an if with differently-shaped branches crashes on XLA (findings #14)",
    "alias_after_update": "writes through views after an in-place update give wrong answers (findings #13, #16)",
}


def generate(seed: int, avoid=frozenset()) -> Program:
    """The program of ``seed`` (deterministic); ``avoid``: names from ``KNOWN`` to steer away from."""
    return Gen(seed, avoid).program()


# --------------------------------------------------------------------- the JAX twin


class _Twin(ast.NodeTransformer):
    """NumPy source to jax.numpy: ``a[i] op= v`` -> ``a = a.at[i].set/add/multiply(...)``, ``np.clip`` keywords."""

    OPS = {ast.Add: "add", ast.Sub: "add", ast.Mult: "multiply", ast.Div: "divide"}

    @staticmethod
    def _array(node):
        return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "array", ast.Load()), [node], [])

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.slice, ast.List):  # jax.numpy indexes with arrays, not lists
            node.slice = self._array(node.slice)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "math" and node.attr in ("exp", "sqrt", "tanh", "log", "sin", "cos"):
            node.value = ast.Name("np", ast.Load())  # math on a traced scalar: jax.numpy in the twin
        return node

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name == "numpy" and alias.asname == "np":
                alias.name = "jax.numpy"
        return node

    def _at(self, target, method, value):
        array = ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "asarray", ast.Load()), [_load(target.value)], [])
        at = ast.Attribute(ast.Subscript(ast.Attribute(array, "at", ast.Load()), target.slice, ast.Load()), method, ast.Load())
        return ast.Assign([_store(target.value)], ast.Call(at, [value], []))

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            return ast.copy_location(self._at(node.targets[0], "set", node.value), node)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.target, ast.Subscript):
            value = node.value
            if isinstance(node.op, ast.Sub):
                value = ast.UnaryOp(ast.USub(), value)
            return ast.copy_location(self._at(node.target, self.OPS[type(node.op)], value), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if ast.unparse(node.func) == "np.clip":
            for kw in node.keywords:
                kw.arg = {"a_min": "min", "a_max": "max"}.get(kw.arg, kw.arg)
            if len(node.args) > 1:
                node.keywords = [ast.keyword(k, a) for k, a in zip(["min", "max"], node.args[1:])] + node.keywords
                node.args = node.args[:1]
        if ast.unparse(node.func) == "np.take":
            node.args = [self._array(a) if isinstance(a, ast.List) else a for a in node.args]
        return node


def _load(node):
    node = ast.parse(ast.unparse(node), mode="eval").body
    return node


def _store(node):
    node = _load(node)
    node.ctx = ast.Store()
    return node


def to_jnp(source: str) -> str:
    """The program in the JAX-docs dialect: ``jnp.`` spellings, ``.at[...]`` updates (its own twin)."""
    text = jax_twin(source)
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "jax.numpy" and alias.asname == "np":
                    alias.asname = "jnp"
        if isinstance(node, ast.Name) and node.id == "np":
            node.id = "jnp"
    return ast.unparse(tree) + "\n"


def jax_twin(source: str) -> str:
    tree = _Twin().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
