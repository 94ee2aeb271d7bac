"""Statements of the drawn program's body: the dispatcher and the basic families.

``Statements`` is mixed into ``Gen`` (``programs.py``): ``statement`` draws a
kind and calls ``s_<kind>``; this module has assignments, updates, in-place
writes, helper and NumPy keyword calls, local closures, and ``if``/``for``/
``while``. The other families live in ``idioms.py`` and ``pitfalls.py``.
"""

from __future__ import annotations

import re

from .vocabulary import D, V, _shape_text


class Statements:
    """Basic statement families; each ``s_*`` appends lines and defines what it binds."""

    # ------------------------------------------------------------- statements

    def statement(self, lines, depth=0):
        weights = {
            "assign": 3,
            "update": 2,
            "helper_call": 2,
            "write": 3,
            "augassign": 1,
            "if": 1,
            "for": 1,
            "while": 1,
            "closure": 2,
            "kwcall": 2,
            "method": 2,
            "tuple_helper": 1,
            "builtin": 1.2,
            "index": 2,
            "container": 1,
            "alias_write": 2,
            "nested_helper": 1,
            "variadic": 1,
            "module_lambda": 0.7,
            "semantics": 2.5,
            "library": 2.5,
            "print": 0.5,
            "python": 2.5,
        }
        kinds = list(weights)
        if depth > 0:
            kinds = ["assign", "update", "write", "print"]
            weights = {**dict.fromkeys(kinds[:3], 1), "print": 0.3}
        kind = self.r.choices(kinds, [weights[k] for k in kinds])[0]
        getattr(self, "s_" + kind)(lines, depth)

    def s_print(self, lines, depth):
        """Output as people write it: ``print`` with an f-string or several arguments (the programs'
        results must not change, nor a branch or loop that only prints be dropped)."""
        names = sorted(self.env)
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        lines.append(
            self.pick(
                [
                    f'print(f"{n} {{np.sum({n}):.3f}}")',
                    f'print("{n}", {n})',
                    f'print("{n} mean", np.mean({n}), sep="=")',
                ]
            )
        )
        self.feature("print")

    def some_shape(self):
        shapes = sorted({v.shape for v in self.env.values() if len(v.shape) <= 2})
        return self.pick(shapes) if shapes else (D,)

    def s_assign(self, lines, depth):
        shape = self.some_shape()
        name = self.fresh_name("v")
        text, const = self.bounded(shape) if depth else self.expr(shape, 3)
        # a name or an index of one: a view, not a fresh array
        if re.fullmatch(r"[\w.]+(\[[^\]]*\])*", text):
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
            shape = self.pick(
                sorted(
                    {
                        v.shape
                        for v in self.env.values()
                        if v.shape and len(v.shape) <= 2
                    }
                )
                or [(D,)]
            )
            n = self.fresh_name("buf")
            init = self.pick(
                [
                    "np.zeros({})",
                    "np.ones({})",
                    "np.zeros_like({src})",
                    "{src}.copy()",
                    "np.array({src})",
                ]
            )
            src = self.pick(self.names_of(shape) or ["x"])
            if "{src}" in init and self.env.get(src, V(())).shape != shape:
                init = "np.zeros({})"
            if init == "{src}.copy()" and src in ("x", "y") and self.p(0.5):
                n = src  # ``x = x.copy()``: the argument rebound to its own copy, then written
                self.feature("argument_rebound_to_copy")
            lines.append(f"{n} = " + init.format(_shape_text(shape), src=src))
            self.define(n, shape, const=("zeros" in init or "ones" in init), fresh=True)
        else:
            n = self.pick(names)
        shape = self.env[n].shape
        k = shape[0]
        spots = [
            (str(self.r.randint(-k, k - 1)), shape[1:]),
            ("-1", shape[1:]),
            ("0", shape[1:]),
            ("1:", (k - 1,) + shape[1:]),
            (":-1", (k - 1,) + shape[1:]),
            ("...", shape),
        ]
        if len(shape) == 2:
            j = self.r.randint(-shape[1], shape[1] - 1)
            spots += [
                (f"{self.r.randint(0, k - 1)}, {j}", ()),
                (f":, {j}", (k,)),
                (":, 1:", (k, shape[1] - 1)),
                ("-1, :", shape[1:]),
            ]
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
                # fresh in NumPy; s2s may refuse writes into a helper result
                self.define(name, shape, fresh=self.p(0.25))
                return
        return self.s_assign(lines, depth)

    def s_kwcall(self, lines, depth):
        names = sorted(
            n for n, v in self.env.items() if len(v.shape) == 2 and not v.const
        )
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        name = self.fresh_name("r")
        v = self.env[n]
        form, shape = self.pick(
            [
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
                (
                    f"np.concatenate([{n}, {n} * 0.5], axis=0)",
                    (2 * v.shape[0], v.shape[1]),
                ),
                (f"np.stack([{n}[0], {n}[-1]], axis=1)", (v.shape[1], 2)),
                (f"np.expand_dims(np.sum({n}, axis=0), axis=0)", (1, v.shape[1])),
                (f"np.var({n}, axis=0, ddof=0)", v.shape[1:]),
                (f"np.std({n}, axis=-1)", v.shape[:1]),
                (f"np.cumsum({n}, axis=1)", v.shape),
                (f"np.where({n} > 0.3, {n}, np.zeros_like({n}))", v.shape),
                # ufunc methods (``frontend/ufunc_methods.py``)
                (f"np.add.reduce({n}, axis=1)", v.shape[:1]),
                (f"np.multiply.accumulate(0.5 * {n} + 1.0)", v.shape),
                (f"np.maximum.accumulate({n}, axis=1)", v.shape),
                (f"np.minimum.accumulate({n} * 2.0)", v.shape),
                (f"np.subtract.outer({n}[0], {n}[-1])", (v.shape[1], v.shape[1])),
            ]
        )
        lines.append(f"{name} = {form}")
        # NumPy returns views: not fresh
        view = form.startswith(("np.transpose", "np.reshape", "np.expand_dims"))
        self.define(name, shape, fresh=not view)
        self.feature("numpy_keywords")

    def s_closure(self, lines, depth):
        shape = self.some_shape()
        vals = sorted(
            n
            for n, v in self.env.items()
            if not v.const and (v.shape == () or v.shape == shape)
        )
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
            lines += [
                f"def {name}(z, *, scale=0.5):",
                f"    w_ = scale * {c}",
                "    return np.tanh(z * w_)",
            ]
            self.feature("localdef_closure")
        target = self.fresh_name("v")
        arg, const = self.expr(shape, 1)
        call = self.pick([f"{name}({arg})", f"{name}({arg}) + {name}({arg} * 0.5)"])
        if style == "def" and self.p(0.5):
            call = f"{name}({arg}, k=0.5)"
        if style == "def2" and self.p(0.5):
            call = f"{name}({arg}, scale=1.5)"
        if style == "lambda" and self.p(0.3):
            # the lambda called where it is written (``frontend/called_lambdas.py``)
            self.feature("called_lambda")
            call = f"(lambda z: np.tanh(z) * {c} + {body})({arg})"
        elif self.p(0.35):
            # the local function (or a lambda) passed to a module-level helper
            # (``frontend/local_function_args.py``)
            self.feature("passed_closure")
            self.helper(
                "def apply_fn(fn, z, times=1):\n    for _ in range(times):\n"
                "        z = 0.5 * fn(z) + 0.5 * z\n    return z\n"
            )
            fn = self.pick([name, f"lambda u: {name}(u) * 0.5"])
            call = f"apply_fn({fn}, {arg}, times={self.pick([1, 2])})"
        lines.append(f"{target} = {call}")
        self.define(target, shape, False, fresh=True)

    def test_expr(self):
        names = sorted(n for n, v in self.env.items() if not v.const)
        n = self.pick(names)
        v = self.env[n]
        text = (
            self.pick(["np.sum({})", "np.mean({})", "np.max({})", "np.min({})"]).format(
                n
            )
            if v.shape
            else n
        )
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
        sources = sorted(n for n, v in self.env.items() if v.shape and v.shape[-1] >= 3)
        if sources and self.p(0.3):
            return self._window_loop(lines, self.pick(sources))
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
        step, const = self.bounded(shape, 1)
        body = [f"    {acc} = 0.7 * {acc} + {step} * (0.5 + 0.25 * {i})"]
        if self.p(0.25):
            # first assigned in the loop, read after it (the last step's value)
            self.feature("assigned_in_loop")
            last = self.fresh_name("last")
            lines += [
                f"for {i} in range({k}):",
                *body,
                f"    {last} = np.tanh({acc}) * (1.0 + {i})",
            ]
            self.env[acc].const = const
            self.define(last, shape, fresh=True, const=const)
            return
        if self.p(0.35):
            self.feature("break_continue")
            jump = [
                f"    if {self.test_expr()}:",
                f"        {self.pick(['break', 'continue'])}",
            ]
            if self.p(0.3):
                # a truth value from data held in a variable (gym's ``terminated = bool(a or b)``)
                self.feature("truth_value_in_loop")
                flag = self.fresh_name("stop")
                jump = [
                    f"    {flag} = "
                    + self.pick(
                        ["bool({} or {})", "{} and not {}", "({}) or ({})"]
                    ).format(self.test_expr(), self.test_expr()),
                    f"    if {flag}:",
                    f"        {self.pick(['break', 'continue'])}",
                ]
            if self.p(0.4):
                # a switch known when the code is read (gym's ``kinematics_integrator``) beside the jump
                self.feature("static_switch_in_loop")
                self.helper('STEP_KIND = "decay"\n')
                body = [
                    '    if STEP_KIND == "decay":',
                    "    " + body[0],
                    "    else:",
                    f"        {acc} = 0.5 * {acc} + {step}",
                ]
            body = jump + body if self.p(0.5) else body + jump
        lines += [f"for {i} in range({k}):", *body]
        self.env[acc].const = const

    def _window_loop(self, lines, src):
        """Windows of a fixed width at the loop's index (``x[i:i + k]``, ``x[b * k:(b + 1) * k]``)."""
        self.feature("window")
        shape = self.env[src].shape
        n = shape[-1]
        k = self.pick([2, 3]) if n > 3 else 2
        lead = ":, " * (len(shape) - 1)  # along the last axis
        i, acc = self.fresh_name("i"), self.fresh_name("acc")
        form = self.pick(["sliding", "strided", "batches"])
        if form == "batches":
            loop = f"for {i} in range({n // k}):"
            window = f"{src}[{lead}{i} * {k} : ({i} + 1) * {k}]"
        else:
            step = 1 if form == "sliding" else k
            loop = f"for {i} in range(0, {n - k + 1}, {step}):"
            window = self.pick(
                [
                    f"{src}[{lead}{i} : {i} + {k}]",
                    f"{src}[{lead}{i} : {k} + {i}]",
                    f"{src}[{lead}{i}_lo : {i}_hi]",  # bounds assigned as a pair (numpy-ml)
                ]
            )
        bounds = [f"    {i}_lo, {i}_hi = {i}, {i} + {k}"] if f"{i}_lo" in window else []
        lines += [
            f"{acc} = 0.0",
            loop,
            *bounds,
            f"    {acc} = {acc} + np.sum(np.tanh({window}) * (0.5 + 0.1 * {i}))",
        ]
        self.define(acc, ())

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
        first = self.p(
            0.3
        )  # a name first assigned in the loop, read after it: one step at least
        test = f"({n} < 1 or {self.test_expr()})" if first else self.test_expr()
        lines.append(f"while {n} < {self.pick([1, 2, 3])} and {test}:")
        lines.append(f"    {n} += 1")
        step, _ = self.bounded(shape, 1)
        lines.append(f"    {acc} = 0.6 * {acc} + 0.3 * {step}")
        self.define(acc, shape, fresh=True)
        if first:
            self.feature("assigned_in_while")
            last = self.fresh_name("last")
            lines.append(f"    {last} = np.tanh({acc}) * (1.0 + {n})")
            self.define(last, shape, fresh=True)
