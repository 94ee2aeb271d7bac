"""More statement families: the idioms of users' NumPy code.

``Idioms`` is mixed into ``Gen`` (``programs.py``): array methods, helpers
returning tuples and dicts, Python builtins and ``math``, indexing, lists and
dicts built in the function, writes through views, nested helpers, and
module-level lambdas and aliases.
"""

from __future__ import annotations

import math

from .vocabulary import _shape_text


class Idioms:
    """Idiom statement families; each ``s_*`` appends lines and defines what it binds."""

    # ------------------------------------------------------ more statements

    def s_method(self, lines, depth):
        """Array methods: ``h.sum(axis=0)``, ``h.T``, ``h.reshape(-1)``, ``h.dot(W)``, ``h.clip(..)``, ``h.max(axis=-1)``."""
        names = sorted(
            n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const
        )
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        v = self.env[n]
        options = [
            (f"{n}.sum()", ()),
            (f"{n}.mean()", ()),
            (f"({n} ** 2).sum()", ()),
            (f"{n}.std()", ()),
            (f"{n}.clip(-0.5, 0.5)", v.shape),
            (f"{n}.copy() * 2.0", v.shape),
            (f"{n}.ravel()", (math.prod(v.shape),)),
            (f"{n}.reshape(-1)", (math.prod(v.shape),)),
            (f"{n}.max()", ()),
            (f"np.tanh({n}).prod()", ()),
        ]
        if len(v.shape) == 2:
            options += [
                (f"{n}.T", v.shape[::-1]),
                (f"{n}.sum(axis=0)", v.shape[1:]),
                (f"{n}.mean(axis=-1)", v.shape[:1]),
                (f"{n}.max(axis=-1)", v.shape[:1]),
                (f"{n}.sum(0)", v.shape[1:]),
                (f"{n}.transpose()", v.shape[::-1]),
                (f"{n}.T @ {n}", (v.shape[1], v.shape[1])),
                (f"{n}.dot({n}.T)", (v.shape[0], v.shape[0])),
                (f"{n}.reshape({v.shape[1]}, {v.shape[0]})", v.shape[::-1]),
                (f"{n}.mean(axis=0, keepdims=True)", (1, v.shape[1])),
            ]
        else:
            options += [
                (f"{n}.dot({n})", ()),
                (f"{n}[::-1]", v.shape),
                (f"{n}.reshape(1, -1)", (1, v.shape[0])),
                (f"{n}[:, None] * {n}[None, :]", (v.shape[0], v.shape[0])),
            ]
        form, shape = self.pick(options)
        name = self.fresh_name("m")
        lines.append(f"{name} = {form}")
        view = (
            any(t in form for t in (".T", ".reshape", ".ravel", ".transpose", "[::-1]"))
            and " @ " not in form
            and ".dot" not in form
            and "*" not in form
        )
        self.define(name, shape, fresh=not view)
        self.feature("methods")

    def s_tuple_helper(self, lines, depth):
        """A helper returning a tuple (or a dict), unpacked at the call."""
        names = sorted(
            n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const
        )
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        shape = self.env[n].shape
        style = self.pick(["tuple", "tuple", "dict", "nested"])
        a, b = self.fresh_name("p"), self.fresh_name("q")
        if style == "tuple":
            self.helper(
                "def split_stats(z, eps=1e-3):\n    mu = np.mean(z)\n    sd = np.sqrt(np.var(z) + eps)\n    return mu, sd\n"
            )
            lines.append(
                self.pick(
                    [
                        f"{a}, {b} = split_stats({n})",
                        f"{a}, {b} = split_stats({n}, eps=0.01)",
                        f"stats = split_stats({n})\n{a} = stats[0]\n{b} = stats[-1]",
                    ]
                ).split("\n")[0]
            )
            if lines[-1].startswith("stats ="):
                lines += [
                    f"{a} = stats[0]",
                    (
                        f"{b} = stats[1]"
                        if "negative_index" in self.avoid
                        else f"{b} = stats[-1]"
                    ),
                ]
            self.define(a, ())
            self.define(b, ())
        elif style == "dict":
            self.helper(
                'def moments(z):\n    return {"mean": np.mean(z), "sq": np.mean(z * z)}\n'
            )
            lines.append(f"mo = moments({n})")
            lines.append(f'{a} = mo["mean"] * mo["sq"]')
            lines.append(f'{b} = mo["sq"] + 1.0')
            self.define(a, ())
            self.define(b, ())
        else:
            self.helper(
                "def pair_ops(z, w=1.0):\n    return (np.tanh(z) * w, (np.sin(z), np.cos(z)))\n"
            )
            lines.append(
                f"{a}, ({b}, _) = pair_ops({n}, w=0.5)"
                if self.p(0.5)
                else f"{a}, rest = pair_ops({n})\n{b} = rest[0] + rest[1]"
            )
            if "\n" in lines[-1]:
                first, second = lines.pop().split("\n")
                lines += [first, second]
            self.define(a, shape, fresh=self.p(0.25))
            self.define(b, shape, fresh=self.p(0.25))
        self.feature("tuple_helper")

    def s_builtin(self, lines, depth):
        """Python builtins and ``math`` on differentiated values: ``sum`` of a list, ``max``/``abs`` of floats;
        ``np.linspace`` between differentiated bounds and ``np.meshgrid`` of differentiated vectors;
        ``np.poly``/``np.polydiv`` (decompositions with loops) and ``np.r_``/``np.c_``.
        """
        names = sorted(n for n, v in self.env.items() if not v.const)
        if not names:
            return self.s_assign(lines, depth)
        picked = sorted({self.pick(names) for _ in range(3)})
        name = self.fresh_name("t")
        form = self.pick(
            ["sum_list", "sum_gen", "sum_filtered", "list_filtered", "append_filtered", "math", "minmax",
             "float_scalar", "spaced", "grid", "roots", "joined", "where_nan", "chained",
             "where_keyword", "ufunc_at", "user_object", "map_unzip"]
        )  # fmt: skip
        vectors = [p for p in picked if len(self.env[p].shape) == 1]
        if form == "sum_list":
            lines.append(f"{name} = sum([{', '.join(f'np.sum({p})' for p in picked)}])")
        elif form == "sum_filtered":
            # ``sum`` over a comprehension with an ``if`` on a static fact (the item's rank)
            lines.append(
                f"{name} = sum(np.sum(z_**2) for z_ in ({', '.join(picked)},) if z_.ndim >= 1)"
            )
        elif form == "list_filtered":
            # a list comprehension filtered on a static fact, then looped over (it may keep nothing)
            rank = self.pick([0, 1, 2])
            lines.append(
                f"{name}_kept = [z_ for z_ in ({', '.join(picked)},) if z_.ndim == {rank}]"
            )
            lines.append(
                f"{name} = sum(np.sum(np.tanh(z_)) for z_ in {name}_kept) + len({name}_kept)"
            )
        elif form == "append_filtered":
            # appends an ``if`` on a static fact may skip, or makes on either side
            rank = self.pick([0, 1, 2])
            lines.append(f"{name}_parts = []")
            lines.append(f"for z_ in ({', '.join(picked)},):")
            lines.append(f"    if z_.ndim == {rank}:")
            lines.append(f"        {name}_parts.append(np.sum(z_ * 2.0))")
            if self.p(0.5):
                lines.append("    else:")
                lines.append(f"        {name}_parts.append(np.sum(np.sin(z_)))")
            lines.append(f"{name} = sum({name}_parts) + 0.5")
        elif form == "where_nan" and vectors:
            # entries marked missing with NaN, skipped by ``nanmean`` (NaN must not leak into the gradient)
            a = vectors[0]
            lines.append(
                f"{name} = np.nanmean(np.where(np.abs({a}) > np.min(np.abs({a})), {a} ** 2, np.nan))"
                f" + np.nanmean(np.where((np.abs({a}) >= np.min(np.abs({a}))) | ~({a} > 0), {a}, np.nan))"
                f" + np.sum({a}[({a} > -1.0) & ({a} < 1.0)] ** 2)"
            )
        elif form == "ufunc_at" and any(self.env[v].shape[0] >= 3 for v in vectors):
            # ``np.add.at`` with a repeated index (it accumulates), ``np.maximum.at``
            self.feature("ufunc_at")
            a = next(v for v in vectors if self.env[v].shape[0] >= 3)
            lines.append(f"{name}_acc = np.zeros(2)")
            lines.append(
                f"np.add.at({name}_acc, np.array([0, 1, 1]), np.tanh({a}[:3]) * 2.0)"
            )
            lines.append(f"np.maximum.at({name}_acc, [1, 0], {a}[:2])")
            lines.append(f"{name} = np.sum({name}_acc * np.array([1.0, 2.0]))")
        elif form == "map_unzip":
            # ``zip(*pairs)`` unpacked into columns, ``map`` of a function and of a lambda
            self.feature("map_unzip")
            a = picked[0]
            # (``list(zip(*...))`` by the seed, no draw: other programs stay as they were)
            unzip = ("zip({})", "list(zip({}))", "tuple(zip({}))")[self.seed % 3]
            rows = unzip.format(
                f"*[(np.tanh({a}), {a} * 0.5), ({a} ** 2, np.sin({a}))]"
            )
            lines.append(f"{name}_p, {name}_q = {rows}")
            lines.append(
                f"{name} = sum(map(np.sum, {name}_p)) + sum(map(lambda z_: np.sum(z_ * 2.0), {name}_q))"
            )
        elif form == "user_object":
            # a module-level object of a class of the program's: its method, ``self`` bound, reads its fields
            self.feature("user_object")
            self.helper(
                "class Scaler:\n    def __init__(self, factor, shift):\n        self.factor = factor\n"
                "        self.shift = shift\n        self.limits = (slice(0, 2), (2,))\n\n"
                "    def apply(self, z):\n        return np.tanh(z * self.factor) + self.shift\n\n\n"
                "SCALER = Scaler(0.7, -0.1)\n"
            )
            a = picked[0]
            if self.seed % 2:  # (no draw: other programs stay as they were)
                # the object a helper's default holds (``model=MODEL``), read as a bound helper's
                self.helper(
                    "def scaler_applied(z, scaler=SCALER):\n"
                    "    return np.sum(scaler.apply(z)) * scaler.factor\n"
                )
                lines.append(f"{name} = scaler_applied({a})")
            else:
                lines.append(f"{name} = np.sum(SCALER.apply({a})) * SCALER.factor")
        elif form == "where_keyword":
            # ``where=`` in reductions (``frontend/where_reductions.py``)
            self.feature("where_keyword")
            a = picked[0]
            lines.append(
                f"{name} = np.sum(np.tanh({a}), where={a} > 0) + np.mean({a} ** 2, where={a} < 0.5)"
                f" + np.max({a}, where=np.abs({a}) < 1.0, initial=-2.0)"
                f" + np.sum({a} ** 2, where={a} < 0.3, initial=0.5)"
            )
        elif form == "chained":
            # one value under two names
            a = picked[0]
            lines.append(f"{name}_a = {name}_b = np.tanh({a})")
            lines.append(f"{name} = np.sum({name}_a * {name}_b)")
        elif form == "sum_gen":
            lines.append(
                f"{name} = sum(np.sum(np.tanh(z_)) for z_ in ({', '.join(picked)},))"
            )
        elif form == "math" and self.scalars:
            self.imports.add("import math")
            s_ = self.pick(self.scalars)
            lines.append(
                f"{name} = math.exp(-{s_}) + math.sqrt(2.0) * {s_} + math.tanh({s_})"
            )
        elif form == "spaced" and self.scalars:
            # samples between differentiated bounds: their derivative flows to both
            s_ = self.pick(self.scalars)
            lines.append(
                f"{name} = np.sum(np.sin(np.linspace(-{s_}, 2.0 * {s_} + 1.0, 5)))"
            )
        elif form == "grid" and vectors:
            a, b = vectors[0], vectors[-1]
            lines.append(f"{name}_x, {name}_y = np.meshgrid({a}, {b})")
            lines.append(f"{name} = np.sum(np.tanh({name}_x) * {name}_y)")
        elif form == "roots" and vectors:
            # decompositions with loops (``np.poly``, ``np.polydiv``) inlined at arguments named like their temps
            a = vectors[0]
            lines.append(
                f"{name} = np.sum(np.polydiv(np.poly(np.tanh({a})), np.array([1.0, 0.5]))[0] ** 2)"
            )
        elif form == "joined" and vectors:
            a, b = vectors[0], vectors[-1]
            lines.append(f"{name} = np.sum(np.r_[{a}, 1.0, {b}] ** 2)")
            lines.append(
                f"{name} = {name} + np.sum(np.c_[{a}, 2.0 * {a}] @ np.ones(2))"
            )
        elif form == "minmax" and self.scalars:
            s_ = self.pick(self.scalars)
            lines.append(f"{name} = max({s_}, 0.1) * abs({s_} - 2.0) + min({s_}, 5.0)")
        else:
            p0 = picked[0]
            lines.append(
                f"{name} = np.sum({p0}) / {self.env[p0].shape[0]}.0"
                if self.env[p0].shape
                else f"{name} = 2.0 * {p0}"
            )
        self.define(name, ())
        self.feature("builtins")

    def s_index(self, lines, depth):
        """Indexing: None/newaxis, ``...``, reversed and strided slices, lists of indices, ``np.take``."""
        names = sorted(
            n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const
        )
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        v = self.env[n]
        k = v.shape[0]
        options = [
            (f"{n}[None]", (1,) + v.shape),
            (f"{n}[np.newaxis, ...]", (1,) + v.shape),
            (f"{n}[::-1]", v.shape),
            (f"{n}[::2]", ((k + 1) // 2,) + v.shape[1:]),
            (f"{n}[[0, -1]]", (2,) + v.shape[1:]),
            (
                f"np.take({n}, [1, 0], axis=0)" if k > 1 else f"{n}[[0, 0]]",
                (2,) + v.shape[1:],
            ),
            (f"{n}[{-k}]", v.shape[1:]),
            (f"{n}[{k - 1}:]", (1,) + v.shape[1:]),
            (
                f"{n}[-2::-1]" if k > 1 else f"{n}[::-1]",
                (k - 1 if k > 1 else k,) + v.shape[1:],
            ),
        ]
        if len(v.shape) == 2:
            options += [
                (f"{n}[..., 0]", v.shape[:1]),
                (f"{n}[:, ::-1]", v.shape),
                (f"{n}[-1, -1]", ()),
                (f"{n}[:, None, :]", (k, 1, v.shape[1])),
                (f"{n}[0:{k}, 1:]", (k, v.shape[1] - 1)),
                (
                    f"{n}[[1, 0]][:, -1]" if k > 1 else f"{n}[[0]][:, -1]",
                    (2 if k > 1 else 1,),
                ),
                (f"{n}[np.arange({k}), np.arange({k}) % {v.shape[1]}]", (k,)),
            ]
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
        style = self.pick(
            [
                *("append", "dict_items", "comprehension", "dict_values", "zip"),
                *("enumerate", "dict_writes", "dict_loop_writes", "list_item_write"),
                *("dict_comprehension", "grown_list", "zip_shorter", "next_item"),
                *("append_mixed", "keys_by_name"),
            ]
        )
        if style == "append":
            lines += [
                "terms = []",
                f"for z_ in ({', '.join(same)},):",
                "    terms.append(np.tanh(z_))",
                f"{name} = terms[0]"
                + "".join(f" + terms[{i}]" for i in range(1, len(same))),
            ]
        elif style == "dict_items":
            lines.append("parts = {" + ", ".join(f'"{n}": {n}' for n in same) + "}")
            lines += [
                f"{name} = {0.0 if not shape else f'np.zeros({_shape_text(shape)})'}",
                "for key_, val_ in parts.items():",
                f"    {name} = {name} + np.sin(val_)",
            ]
        elif style == "dict_values":
            lines.append("parts = dict(" + ", ".join(f"{n}={n}" for n in same) + ")")
            lines.append(f"{name} = sum(np.cos(val_) for val_ in parts.values())")
        elif style == "comprehension":
            lines.append(
                f"{name} = sum([np.tanh(z_) * (i_ + 1) for i_, z_ in enumerate(({', '.join(same)},))])"
            )
        elif style == "zip":
            ws = ", ".join(str(0.5 + 0.25 * i) for i in range(len(same)))
            zipped = f"zip(({ws},), ({', '.join(same)},))"
            if self.p(0.4):  # the iterator kept in a name, looped over once
                lines.append(f"pairs_ = {zipped}")
                zipped = "pairs_"
            lines += [
                f"{name} = {0.0 if not shape else f'np.zeros({_shape_text(shape)})'}",
                f"for w_, z_ in {zipped}:",
                f"    {name} = {name} + w_ * np.tanh(z_)",
            ]
        elif (
            style == "keys_by_name"
        ):  # keys sorted and filtered by string methods, as configs are read
            first = same[0]
            lines += [
                "parts = {" + ", ".join(f'"{n}": {n}' for n in same) + "}",
                f"{name} = {0.0 if not shape else f'np.zeros({_shape_text(shape)})'}",
                "for key_ in sorted(parts):",
                f'    if key_.startswith("{first[0]}") or key_.endswith("{first[-1]}"):',
                f"        {name} = {name} + np.tanh(parts[key_])",
            ]
        elif style == "append_mixed":  # values of any shapes collected, then summed
            lines += [
                "terms = []",
                f"for z_ in ({', '.join(names[:3])},):",
                "    terms.append(np.tanh(z_) * 0.5)",
                f"{name} = sum(np.sum(t_**2) for t_ in terms)",
            ]
            shape = ()
        elif (
            style == "zip_shorter"
        ):  # zip stops at the shorter input: the last items go unread
            ws = ", ".join(str(0.5 + 0.25 * i) for i in range(max(len(same) - 1, 1)))
            lines += [
                f"{name} = {0.0 if not shape else f'np.zeros({_shape_text(shape)})'}",
                f"for w_, z_ in zip(({ws},), [{', '.join(same)}]):",
                f"    {name} = {name} + w_ * np.tanh(z_)",
            ]
        elif style == "next_item":  # each step reads its item and the next one
            lines += [
                f"seq_ = [{', '.join(same)}]",
                f"{name} = {0.0 if not shape else f'np.zeros({_shape_text(shape)})'}",
                "for i_ in range(len(seq_) - 1):",
                f"    {name} = {name} + seq_[i_] * np.tanh(seq_[i_ + 1])",
            ]
        elif (
            style == "dict_writes"
        ):  # a dict filled item by item, as NumPy code keeps caches and gradients
            lines.append("cache = {}")
            lines += [f'cache["{n}"] = np.tanh({n})' for n in same]
            lines.append(f"{name} = " + " + ".join(f'cache["{n}"]' for n in same))
        elif style == "dict_loop_writes":  # items written in a loop over a dict's keys
            lines.append("parts = {" + ", ".join(f'"{n}": {n}' for n in same) + "}")
            lines += [
                "scaled = {}",
                "for key_ in parts:",
                "    scaled[key_] = np.sin(parts[key_]) * 0.5",
                f"{name} = " + " + ".join(f'scaled["{n}"]' for n in same),
            ]
        elif (
            style == "dict_comprehension"
        ):  # an update of every entry, as optimizers write it
            lines.append("parts = {" + ", ".join(f'"{n}": {n}' for n in same) + "}")
            # an ``if`` clause drops the first entry (when another is left to read)
            dropped = same[0] if len(same) > 1 and self.p(0.5) else None
            test = f' if key_ != "{dropped}"' if dropped else ""
            lines.append(
                "stepped = {key_: val_ - 0.1 * np.tanh(val_) for key_, val_ in parts.items()"
                + test
                + "}"
            )
            kept = [n for n in same if n != dropped]
            lines.append(f"{name} = " + " + ".join(f'stepped["{n}"]' for n in kept))
        elif (
            style == "grown_list"
        ):  # a list that starts with its first state; each step reads the last
            first, rest = same[0], same[1:] or same
            loop = (
                f"for z_ in ({', '.join(rest)},):"
                if self.p(0.5)
                else f"for _ in range({self.pick([1, 2, 3])}):"
            )
            step = "z_" if loop.startswith("for z_") else first
            lines += [
                f"states = [{first}]",
                loop,
                f"    states.append(np.tanh(0.5 * states[-1] + {step}))",
                f"{name} = states[-1] + 0.5 * states[0]",
            ]
        elif style == "list_item_write":  # a list holding the arrays, one item replaced
            lines += [
                f"held = [{', '.join(same)}]",
                "held[0] = np.cos(held[-1]) * held[0]",
                f"{name} = " + " + ".join(f"held[{i}]" for i in range(len(same))),
            ]
        else:
            lines += [
                f"{name} = {0.0 if not shape else f'np.zeros({_shape_text(shape)})'}",
                f"for i_, z_ in enumerate([{', '.join(same)}]):",
                f"    {name} = {name} + (i_ + 1.0) * np.sin(z_)",
            ]
        self.define(name, shape, fresh=style != "append" or self.p(0.25))
        self.feature("containers")

    def s_alias_write(self, lines, depth):
        """Writes through views (NumPy changes the viewed array too, and the view when the base changes):
        a view of a fresh array, then writes into the view and/or the base in some order, then reads.
        s2s must refuse or match NumPy (finite differences of the NumPy program are the oracle).
        """
        names = sorted(
            n
            for n, v in self.env.items()
            if v.fresh and 1 <= len(v.shape) <= 2 and not v.const
        )
        if not names or "alias_after_update" in self.avoid:
            return self.s_write(lines, depth)
        base = self.pick(names)
        shape = self.env[base].shape
        views = [
            (f"{base}[0]", shape[1:]),
            (f"{base}[1:]", (shape[0] - 1,) + shape[1:]),
            (f"{base}.reshape(-1)", (math.prod(shape),)),
            (f"{base}.T", shape[::-1]),
            (f"{base}[...]", shape),
            (f"{base}.ravel()", (math.prod(shape),)),
            (f"np.reshape({base}, (-1,))", (math.prod(shape),)),
            (f"{base}[::-1]", shape),
            (f"{base}", shape),
        ]
        if len(shape) == 2:
            views += [
                (f"{base}[:, 0]", shape[:1]),
                (f"{base}[:, 1:]", (shape[0], shape[1] - 1)),
                (f"np.transpose({base})", shape[::-1]),
            ]
        form, vshape = self.pick(views)
        if 0 in vshape or not vshape:
            form, vshape = base, shape
        view = self.fresh_name("view")
        lines.append(f"{view} = {form}")
        for _ in range(self.r.randint(1, 3)):
            target, tshape = self.pick([(view, vshape), (base, shape)])
            text, _ = self.bounded(tshape, 1)
            lines.append(
                self.pick(
                    [
                        f"{target} {self.pick(['+=', '-=', '*='])} {text}",
                        f"{target}[...] = {text}",
                        f"{target}[0] {self.pick(['=', '+='])} {self.pick(['0.5', '-1.0'])}",
                        f"{target} *= 1.5",
                    ]
                )
            )
            if self.p(0.2):  # a read in between
                r = self.fresh_name("rd")
                lines.append(f"{r} = np.sum({self.pick([view, base])} ** 2)")
                self.define(r, ())
        if self.p(0.3):  # a read in a test only
            c = self.fresh_name("c")
            text, _ = self.bounded((), 1)
            lines += [
                f"if np.sum({self.pick([view, base])}) > {self.pick(['-0.5', '0.3', '1.0'])}:",
                f"    {c} = {text}",
                "else:",
                f"    {c} = 2.0 * {text}",
            ]
            self.define(c, ())
        self.env[base].fresh = False
        self.define(view, vshape, fresh=False)
        self.fd_only = True
        self.feature("alias_write")

    def s_nested_helper(self, lines, depth):
        """Helpers calling helpers, a local def inside a helper, a global constant as a default."""
        names = sorted(
            n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const
        )
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        self.global_const(())
        g = next(
            line.split(" =")[0]
            for line in self.module_globals
            if line.split(" =")[0] in ("SCALE", "TEMPERATURE", "GAIN", "ALPHA")
        )
        self.helper("def inner_step(z, rate):\n    return z - rate * np.tanh(z)\n")
        self.helper(
            f"def outer_step(z, rate=0.1, *, n_iter=2):\n"
            f"    def bump(u):\n        return u + rate * np.sin(u)\n\n"
            f"    for _ in range(n_iter):\n        z = inner_step(bump(z), rate)\n"
            f"    return z * {g}\n"
        )
        name = self.fresh_name("o")
        lines.append(
            f"{name} = "
            + self.pick(
                [
                    f"outer_step({n})",
                    f"outer_step({n}, 0.2)",
                    f"outer_step({n}, rate=0.3, n_iter=1)",
                    f"outer_step({n}, n_iter=3)",
                ]
            )
        )
        self.define(name, self.env[n].shape, fresh=True)
        self.feature("nested_helpers")

    def s_variadic(self, lines, depth):
        """``*args``/``**kwargs``: a helper summing what they receive, or a ``functools.wraps`` decorator passing
        them on (``fn(*args, **kwargs)``), called in several shapes."""
        names = sorted(
            n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const
        )
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        name = self.fresh_name("va")
        if self.p(0.5):
            self.helper(
                "def weighted_sum(*terms, scale=1.0, **named):\n"
                "    total = 0.0\n"
                "    for i, t in enumerate(terms):\n"
                "        total = total + (i + 1.0) * np.sum(np.tanh(t))\n"
                "    for key in named:\n"
                "        total = total + np.sum(named[key] ** 2)\n"
                "    return scale * total\n"
            )
            terms = self.pick(
                [[n], [n, f"np.sin({n})"], [f"{n} * 2.0", n, f"np.cos({n})"], []]
            )
            extra = self.pick(
                ["", ", scale=0.5", f", bias={n} * 0.1", f", scale=2.0, w={n}"]
            )
            call = f"weighted_sum({', '.join(terms)}{extra})".replace("(, ", "(")
            lines.append(f"{name} = {call}")
            self.define(name, (), fresh=True)
        else:
            self.imports.add("import functools")
            self.helper(
                "def doubled(fn):\n"
                "    @functools.wraps(fn)\n"
                "    def wrapper(*args, **kwargs):\n"
                "        return 2.0 * fn(*args, **kwargs)\n\n"
                "    return wrapper\n"
            )
            self.helper(
                "@doubled\ndef smooth(z, k=1.0):\n    return np.tanh(k * z) + 0.1 * z\n"
            )
            lines.append(
                f"{name} = "
                + self.pick(
                    [f"smooth({n})", f"smooth({n}, 0.5)", f"smooth({n}, k=2.0)"]
                )
            )
            self.define(name, self.env[n].shape, fresh=True)
        self.feature("variadic")

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
