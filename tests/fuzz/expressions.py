"""Expressions over the drawn program's environment, and module-level global constants.

``Expressions`` is mixed into ``Gen`` (``programs.py``): ``leaf`` and ``expr``
give ``(text, const)`` for a requested shape, ``bounded`` squashes one into a
bounded range, ``global_const`` defines a module constant and returns its name.
"""

from __future__ import annotations

import random

from .vocabulary import BINARY, KINKED_BINARY, KINKED_UNARY, UNARY, _shape_text


class Expressions:
    """Expression drawing; uses ``Gen``'s ``r``, ``env``, ``scalars``, ``callables`` and ``module_globals``."""

    # ----------------------------------------------------------- expressions

    def names_of(self, shape, nonconst=False):
        return sorted(
            n
            for n, v in self.env.items()
            if v.shape == tuple(shape) and not (nonconst and v.const)
        )

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
            f = self.pick(
                [
                    "np.sum({}, axis=0)",
                    "np.mean({}, axis=0)",
                    "{}.sum(axis=0)",
                    "np.sum({}, 0)",
                    "np.mean({}, axis=-len({}.shape))",
                ]
            )
            if "len(" in f:
                f = "np.mean({0}, axis=0)"
            if not v.const and self.p(0.15):
                f = "np.max({}, axis=0)"
            return f.format(n), v.const
        if kind == "reduce_last":
            f = self.pick(
                [
                    "np.sum({}, axis=-1)",
                    "np.mean({}, axis=-1)",
                    f"np.sum({{}}, axis={len(v.shape) - 1})",
                ]
            )
            return f.format(n), v.const
        if kind == "slice":
            m = shape[0]
            start = self.r.randint(0, k - m)
            form = self.pick([f"{n}[{start}:{start + m}]", f"{n}[:{m}]", f"{n}[-{m}:]"])
            return form, v.const
        if kind == "col":
            j = self.r.randint(-v.shape[1], v.shape[1] - 1)
            return f"{n}[:, {j}]", v.const
        f = self.pick(
            [
                "np.sum({})",
                "np.mean({})",
                "{}.sum()",
                "np.sum({} ** 2)",
                "np.linalg.norm({})" if not v.const else "np.sum({})",
            ]
        )
        if len(v.shape) == 1 and self.p(0.3):
            f = self.pick(["{}[0]", "{}[-1]", "{}[1]"]) if v.shape[0] > 1 else "{}[0]"
        if len(v.shape) == 2 and self.p(0.3):
            i, j = self.r.randint(-v.shape[0], v.shape[0] - 1), self.r.randint(
                -v.shape[1], v.shape[1] - 1
            )
            f = self.pick(["{}[0, 0]", "{}[-1, -1]", f"{{}}[{i}, {j}]", "{}[0][-1]"])
        return f.format(n), v.const

    def expr(self, shape, depth=2):
        """(text, const): an expression of ``shape`` over the environment."""
        shape = tuple(shape)
        if depth <= 0:
            return self.leaf(shape)
        kind = self.pick(
            [
                "leaf",
                "unary",
                "unary",
                "binary",
                "binary",
                "scale",
                "call",
                "matmul",
                "global",
            ]
        )
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
            mats = [
                (n, v)
                for n, v in sorted(self.env.items())
                if len(v.shape) == 2 and v.shape[1] == shape[-1]
            ]
            if mats:
                n, v = self.pick(mats)
                a, ca = self.expr(shape[:-1] + (v.shape[0],), depth - 1)
                form = self.pick(["({} @ {})", "np.dot({}, {})", "np.matmul({}, {})"])
                return form.format(a, n), ca and v.const
            mats = [
                (n, v)
                for n, v in sorted(self.env.items())
                if len(v.shape) == 2 and v.shape[0] == shape[-1]
            ]
            if mats:
                n, v = self.pick(mats)
                a, ca = self.expr(shape[:-1] + (v.shape[1],), depth - 1)
                return f"({a} @ {n}.T)", ca and v.const
        if kind == "global":
            g = self.global_const(shape, settings=True)
            text, const = self.expr(shape, depth - 1)
            return f"({text} * {g})", const
        return self.leaf(shape)

    def bounded(self, shape, depth=2):
        text, const = self.expr(shape, depth)
        return (
            self.pick(
                ["np.tanh({})", "np.sin({})", "np.cos({})", "0.5 * np.tanh({})"]
            ).format(text),
            const,
        )

    # ------------------------------------------------------- module globals

    def global_const(self, shape, settings=False):
        shape = tuple(shape)
        # a settings dict (module configuration), read by key
        if settings and not shape and self.p(0.3):
            line = (
                'CONFIG = {"scale": 0.5, "gain": 1.3, "sizes": [1, 2], "act": "tanh"}'
            )
            if line not in self.module_globals:
                self.module_globals.append(line)
                self.feature("global_settings")
            return self.pick(
                ['CONFIG["scale"]', 'CONFIG["gain"]', 'CONFIG["sizes"][-1]']
            )
        if not shape or self.p(0.4):
            name = self.pick(["SCALE", "TEMPERATURE", "GAIN", "ALPHA"])
            line = f"{name} = {self.pick(['0.5', '0.7', '1.3', '-0.4'])}"
        else:
            name = (
                "W_" + "x".join(map(str, shape))
                if len(shape) == 2
                else f"MASK{shape[0]}"
            )
            rng = random.Random(self.seed * 7 + len(shape))
            values = [
                round(rng.uniform(-1, 1), 2)
                for _ in range(int(__import__("math").prod(shape)))
            ]
            if len(shape) == 1:
                line = f"{name} = np.array({values})"
            else:
                rows = [
                    values[i * shape[1] : (i + 1) * shape[1]] for i in range(shape[0])
                ]
                line = f"{name} = np.array({rows})"
        if not any(g.startswith(name + " =") for g in self.module_globals):
            self.module_globals.append(line)
            self.feature("global")
        return name
