"""Module-level helpers of the drawn program: activations and helpers with every parameter kind.

``Helpers`` is mixed into ``Gen`` (``programs.py``): ``helper`` adds a
module-level ``def`` once, ``activation`` returns a ``"...{}..."`` template
(a NumPy call, a helper, a lambda or local ``def`` closing over a value, a
factory-made closure, a function default) and ``kind_helper`` writes a helper
with positional-only, positional-or-keyword and keyword-only parameters and
returns a function that draws calls of it.
"""

from __future__ import annotations

from .vocabulary import ACT_NAMES


class Helpers:
    """Helper and activation drawing; uses ``Gen``'s ``r``, ``helpers``, ``helper_names`` and ``module_globals``."""

    # ----------------------------------------------------------- activations

    def helper(self, text):
        name = text.split("(", 1)[0].split()[-1]
        if name not in self.helper_names:
            self.helper_names.add(name)
            self.helpers.append(text)

    def activation(self, lines, closure_vars):
        """A template ``"...{}..."`` applying an activation, defining what it needs."""
        style = self.r.choices(
            [
                "np",
                "helper",
                "lambda",
                "localdef",
                "factory",
                "factory2",
                "default_fn",
                "by_name",
                "table",
                "factory_inside",
            ],
            [2, 2, 1, 1, 1, 1, 0.4, 0.6, 0.6, 0.6],
        )[0]
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
        if style == "by_name":
            # the deep-learning course's helper: an `if`/`elif` chain on the activation's name, no `else`
            self.feature("act_by_name")
            other = "sine" if act != "sine" else "tanh"
            # (or returning from each branch, raising for other names, with a guard on the rank)
            if self.p(0.5):
                text = (
                    f"def activate_{act}(z, name):\n"
                    f'    if name == "{act}":\n'
                    f"        a = {body.format(z='z')}\n"
                    f'    elif name == "{other}":\n'
                    f"        a = {bodies[other].format(z='z')}\n"
                    "    return a\n"
                )
            else:
                text = (
                    f"def activate_{act}(z, name):\n"
                    "    if z.ndim > 3:\n"
                    '        raise ValueError("expected at most 3 dimensions")\n'
                    f'    if name == "{other}":\n'
                    f"        return {bodies[other].format(z='z')}\n"
                    f'    elif name == "{act}":\n'
                    f"        return {body.format(z='z')}\n"
                    '    raise ValueError(f"unknown activation {name}")\n'
                )
            self.helper(text)
            return f'activate_{act}({{}}, "{act}")'
        if style == "table":
            # a module-level dict of activations, the one to use named by a settings object (``cfg.activation``)
            self.feature("act_table")
            self.helper(f"def {act}_fn(z):\n    return {body.format(z='z')}\n")
            for line in (
                f'ACT_TABLE = {{"sine": np.sin, "{act}": {act}_fn}}',
                "class ActConfig:",
                f'    activation = "{act}"',
                "act_config = ActConfig()",
            ):
                if line not in self.late_globals:
                    self.late_globals.append(line)
            name = self.fresh_name("act")
            lines.append(f"{name} = ACT_TABLE[act_config.activation]")
            return name + "({})"
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
                lines += [
                    f"def {name}(z):",
                    f"    u = z * {c}",
                    f"    return {body.format(z='u')}",
                ]
            return name + "({})"
        if style == "factory_inside" and closure_vars:
            # a factory called in the function, closing over one of its values (``frontend/factories``)
            self.feature("factory_inside")
            self.helper(
                f"def make_{act}_scaled(scale, shift=0.1):\n"
                "    offset = 2.0 * shift\n"
                "    def apply(z):\n"
                f"        return scale * {body.format(z='z')} + offset\n"
                "\n"
                "    return apply\n"
            )
            name = self.fresh_name("act")
            lines.append(f"{name} = make_{act}_scaled({self.pick(closure_vars)})")
            return name + "({})"
        if style == "factory_inside":
            style = "factory"
        if style in ("factory", "factory2"):
            self.feature(
                "factory_closure" if style == "factory" else "factory_two_closures"
            )
            self.helper(
                f"def make_{act}(scale):\n    def apply(z):\n        return scale * {body.format(z='z')}\n\n    return apply\n"
            )
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
            self.helper(
                "def apply_act(z, fn=np.tanh, *, shift=0.0):\n    return fn(z + shift)\n"
            )
            # a function of the user's passed by name: the helper is bound to it
            self.helper(f"def {act}(z):\n    return {body.format(z='z')}\n")
            return self.pick(
                [
                    "apply_act({})",
                    "apply_act({}, np.sin)",
                    "apply_act({}, fn=np.cos, shift=0.1)",
                    "apply_act({}, shift=-0.2)",
                    f"apply_act({{}}, {act})",
                    f"apply_act({{}}, fn={act}, shift=0.3)",
                ]
            )
        return "np.tanh({})"

    # ------------------------------------------------------------- helpers

    def kind_helper(self):
        """A module-level helper with every parameter kind; returns a function that draws a call of it."""
        name = self.fresh_name("combine")
        n_posonly = self.r.randint(0, 2)
        n_pk = self.r.randint(1, 2)
        n_kw = self.r.randint(0, 2)
        # (pname, kind, default or None, role) role: 'arr' (array of the call's shape) or 'scalar'
        params = []
        for i in range(n_posonly + n_pk + n_kw):
            kind = "po" if i < n_posonly else ("pk" if i < n_posonly + n_pk else "kw")
            params.append(
                [
                    f"{'abcdefgh'[i]}",
                    kind,
                    None,
                    "arr" if i == 0 or self.p(0.5) else "scalar",
                ]
            )
        # defaults: a suffix of positional params, any kw-only param
        positional = [q for q in params if q[1] != "kw"]
        n_def = self.r.randint(0, max(0, len(positional) - 1))
        for q in positional[len(positional) - n_def :]:
            q[2] = True
        for q in params:
            if q[1] == "kw" and self.p(0.6):
                q[2] = True
        # defaults last among the keyword-only parameters too
        if "kwonly_order" in self.avoid:
            kws = [q for q in params if q[1] == "kw"]
            n_kwdef = sum(bool(q[2]) for q in kws)
            for k, q in enumerate(kws):
                q[2] = True if k >= len(kws) - n_kwdef else None
        array_default = self.p(0.3)
        sig = []
        for q in params:
            pname, kind, default, role = q
            if default:
                if role == "arr" and array_default:
                    q[2] = (
                        "np.array([0.5, -0.25, 1.0])"  # used only with shape (3,) calls: see below
                    )
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
            terms.append(
                self.pick(
                    [
                        f"{q[0]} * np.sin({first})",
                        f"np.tanh({q[0]})",
                        f"{q[0]} * {first}",
                        f"0.5 * {q[0]}",
                    ]
                )
            )
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
                    val = (
                        self.pick(self.scalars)
                        if self.scalars and self.p(0.5)
                        else self.pick(["0.3", "1.5", "-0.7"])
                    )
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
                if (
                    not q[2]
                    and q[0] not in given
                    and not any(k.startswith(q[0] + "=") for k in kws)
                ):
                    return None
            self.r.shuffle(kws)
            # spread: the last positional arguments as ``*(...)``, keywords as ``**{...}`` (``frontend/spread``)
            if len(prefix) > n_po and self.p(0.2):
                self.feature("star_call")
                k = self.r.randint(1, len(prefix) - n_po)
                prefix = prefix[:-k] + [f"*({', '.join(prefix[-k:])},)"]
            if kws and self.p(0.2):
                self.feature("double_star_call")
                entries = [
                    f'"{kw.split("=", 1)[0]}": {kw.split("=", 1)[1]}' for kw in kws
                ]
                kws = [f"**{{{', '.join(entries)}}}"]
            return f"{name}({', '.join(prefix + kws)})"

        return call
