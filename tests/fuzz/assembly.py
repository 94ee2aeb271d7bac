"""The whole program: its signature, arguments, body, loss and module text, as a ``Program``.

``Assembly.program`` (mixed into ``Gen``, ``programs.py``) draws the model
skeleton, the extra arguments, the body statements and the loss, and writes
the module (imports, globals, helpers, closures, the entry function) with the
code that builds its arguments; ``Program`` is what it returns.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .twin import jax_twin, to_jnp
from .vocabulary import _shape_text


@dataclass
class Program:
    seed: int
    source: str
    entry: str
    args_code: str
    argnums: tuple
    features: list = field(default_factory=list)
    oracle: str = (
        "any"  # "fd": NumPy semantics the twin cannot express (writes through views): finite differences only
    )
    has_aux: bool = False  # the function returns (loss, aux)
    numpy_source: str = (
        ""  # for a program written with jax.numpy: the NumPy program it was made from (probes read it)
    )

    @property
    def twin(self) -> str:
        return jax_twin(self.source)


class Assembly:
    """The top of the draw; uses every other mixin of ``Gen``."""

    # ------------------------------------------------------------- the whole

    def program(self) -> Program:
        lines: list[str] = []
        sig: list[str] = []
        args: list[str] = []
        kwargs: list[str] = []
        self.scalars = []
        closure_vars: list[str] = []
        self.skeleton(lines, sig, args, closure_vars)
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
            # class labels: an int array, never differentiated
            extras.insert(0, ("labels", "int"))
        # a boolean mask the caller passes (``np.mean(err[valid] ** 2)``), drawn apart so that the
        # main draw, and so every other program, stays as it was
        side = random.Random(self.seed * 11 + 3)
        mask_shape = out_shape[: side.choice((1, len(out_shape)))]
        if has_y and out_shape and side.random() < 0.2:
            extras.append(("valid", "mask"))
        pos_only = self.p(0.15)
        for name, kind in extras:
            if kind == "pos":
                sig.append(name)
                args.append("float(rng.uniform(0.3, 1.2))")
                self.scalars.append(name)
            if kind == "int":
                sig.append(name)
                args.append(f"rng.integers(0, {out_shape[-1]}, size={out_shape[0]})")
            if kind == "mask":
                sig.append(name)
                args.append(f"np.resize([True, False, True, True], {mask_shape})")
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
            sig.insert(n_positional, "/")
        closure_vars += self.scalars
        # body statements
        for _ in range(self.r.randint(1, 5)):
            self.statement(lines)
        if "steps" in [n for n, _ in extras]:
            acc = self.fresh_name("s")
            shape = self.some_shape()
            step, _ = self.bounded(shape, 1)
            lines += [
                f"{acc} = np.zeros({_shape_text(shape)})" if shape else f"{acc} = 0.0",
                "for _ in range(steps):",
                f"    {acc} = 0.5 * {acc} + {step}",
            ]
            self.define(acc, shape, fresh=True)
        # the loss
        loss = []
        if has_y:
            loss.append(
                self.pick(
                    [
                        "np.mean((out - y) ** 2)",
                        "np.sum((out - y) ** 2) / 2.0",
                        "np.mean(np.square(out - y))",
                        "0.5 * np.sum(np.abs(out - y) ** 2)",
                    ]
                )
            )
        else:
            loss.append(
                self.pick(
                    ["np.sum(out ** 2)", "np.mean(np.tanh(out))", "np.sum(np.sin(out))"]
                )
            )
        if "valid" in sig:
            self.feature("mask_argument")
            loss[0] = side.choice(
                [
                    "np.mean((out - y)[valid] ** 2)",
                    "np.sum(np.abs(out - y)[valid]) / len((out - y)[valid])",
                    "np.mean(((out - y) ** 2)[valid])",
                ]
            )
        if len(out_shape) >= 1 and out_shape[-1] >= 2 and self.p(0.3):
            self.feature("log_softmax")
            lines.append("zs = out - np.max(out, axis=-1, keepdims=True)")
            lines.append(
                "logp = zs - np.log(np.sum(np.exp(zs), axis=-1, keepdims=True))"
            )
            loss.append(
                "-np.mean(logp[..., 0])"
                if not has_y
                else "-np.mean(np.sum(logp * np.tanh(y), axis=-1))"
            )
        if "labels" in sig:
            self.feature("int_labels")
            lines.append("logits = out - np.max(out, axis=1, keepdims=True)")
            lines.append(
                "logq = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))"
            )
            loss.append(
                self.pick(
                    [
                        "-np.mean(logq[np.arange(logq.shape[0]), labels])",
                        f"-np.sum(np.eye({out_shape[-1]})[labels] * logq) / len(labels)",
                        "-np.mean(np.where(labels[:, None] == np.arange(logq.shape[1]), logq, 0.0)) * 2.0",
                        "-np.sum(np.take_along_axis(logq, labels[:, None], axis=1))",
                    ]
                )
            )
        if "l2" in self.scalars:
            # an unused draw, kept so that seeds keep giving the same programs
            self.r.choice((0, 1))
            leaves = [
                n
                for n, v in sorted(self.env.items())
                if len(v.shape) == 2
                and n not in ("x",)
                and n.startswith(("W", "w", "k", "q"))
            ]
            lines.append("reg = 0.0")
            if self.p(0.3):
                # the JAX tutorials' weight decay over every leaf (``frontend/tree_calls``)
                self.feature("tree_leaves")
                self.imports.add("import jax")
                lines.append(
                    "reg = reg + sum(np.sum(leaf * leaf) for leaf in jax.tree_util.tree_leaves(params))"
                )
                if self.p(0.5):
                    # a decay weighted by each leaf's key path (optax's masks)
                    lines.append(
                        "reg = reg + sum(jax.tree_util.tree_leaves(jax.tree_util.tree_map_with_path("
                        "lambda path, leaf: np.sum(leaf ** 2) / (1.0 + len(path)), params)))"
                    )
            elif self.p(0.15):
                # the flatten utility: every parameter in one vector
                self.feature("ravel_pytree")
                self.imports.add("from jax.flatten_util import ravel_pytree")
                lines.append("flat, unravel = ravel_pytree(params)")
                lines.append("reg = reg + np.sum(flat * flat) + 0.0 * np.sum(flat[:1])")
            elif leaves:
                lines.append(
                    f"for leaf in ({', '.join(leaves)},):" if len(leaves) > 0 else ""
                )
                lines.append("    reg = reg + np.sum(leaf * leaf)")
            else:
                lines.append("reg = reg + np.sum(out * out)")
            loss.append("l2 * reg")
        if "scale" in self.scalars and self.p(0.5):
            loss[0] = f"scale * {loss[0]}"
        recent = [n for n in self.env if n not in ("x", "y", "out")][-3:]
        for k, n in enumerate(recent):
            loss.append(
                f"np.sum({n} * {0.5 + 0.25 * k})"
                if self.env[n].shape
                else f"{0.5 + 0.25 * k} * {n}"
            )
        self.r.shuffle(loss)
        has_aux = self.p(0.1)
        if has_aux:
            self.feature("has_aux")
            lines.append("total = " + " + ".join(loss))
            aux_name = self.pick([n for n in self.env if n not in ("x", "y")])
            lines.append(
                self.pick(
                    [
                        f'return total, {{"pred": out, "extra": {aux_name}}}',
                        "return total, out",
                        f"return total, ({aux_name}, np.sum(out))",
                    ]
                )
            )
        else:
            lines.append("return " + " + ".join(loss))
        entry = self.pick(["loss", "f", "objective", "loss_fn"])
        factory_main = self.p(0.1) and "/" not in sig
        # the function closes over the factory's argument (a float, or data as an array)
        if factory_main:
            ret = lines[-1]
            if ret.startswith("return total, "):
                lines.insert(
                    len(lines) - 1, "total = total + np.sum(captured) * np.mean(out)"
                )
            else:
                lines[-1] = (
                    "return np.sum(captured) * np.mean(out) + " + ret[len("return ") :]
                )
        # some lines written the way people also write them: ``a = 1; b = 2``, ``if c: s = s + 1``
        # (drawn apart, so that every other program stays as it was)
        written = "\n".join(lines).split("\n")
        side = random.Random(self.seed * 13 + 5)
        if side.random() < 0.15:
            written = _joined_lines(written, side)
            self.feature("semicolons")
        if side.random() < 0.15:
            written = _one_line_suites(written, side)
            self.feature("one_line_suites")
        body = "\n".join("    " + line for line in written)
        if factory_main:
            self.feature("factory_main")
            inner = f"    def {entry}({', '.join(sig)}):\n" + "\n".join(
                "    " + line for line in body.split("\n")
            )
            value = self.pick(
                [
                    "0.25",
                    "np.array([0.5, -1.0, 2.0])",
                    "np.linspace(-1.0, 1.0, 4).reshape(2, 2)",
                ]
            )
            main = f"def make_{entry}(captured):\n{inner}\n\n    return {entry}\n\n\n{entry} = make_{entry}({value})\n"
        else:
            main = f"def {entry}({', '.join(sig)}):\n{body}\n"
        head = "\n".join(
            sorted(self.imports, key=lambda s: (not s.startswith("import"), s))
        )
        parts = [head]
        if self.module_globals:
            globs = [g for g in self.module_globals if "namedtuple" in g] + [
                g
                for g in self.module_globals
                if "namedtuple" not in g and "make_" not in g
            ]
            parts.append("\n".join(globs))
        parts += self.helpers
        closures = [g for g in self.module_globals if "make_" in g] + self.late_globals
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
        floats = [
            i
            for i, s in enumerate(sig[: n_positional + (1 if pos_only else 0)])
            if s not in ("/", "*", "labels", "valid")
        ]
        choices = [(0,), (0,), (0, 1)] + [
            tuple(sorted(self.r.sample(floats, self.r.randint(1, len(floats)))))
        ]
        argnums = self.pick(choices)
        args_code = (
            f"rng = np.random.default_rng({self.seed})\n"
            "R = lambda *s: rng.normal(size=s) * 0.8\n"
            f"args = ({', '.join(args)},)\n"
            f"kwargs = dict({', '.join(kwargs)})\n"
        )
        oracle = (
            "fd"
            if getattr(self, "fd_only", False)
            else ("jax" if numpy_source else "any")
        )
        return Program(
            self.seed,
            source,
            entry,
            args_code,
            argnums,
            list(self.features),
            oracle,
            has_aux,
            numpy_source,
        )


def _simple(line: str) -> bool:
    """Whether ``line`` is one whole simple statement that another may join on its line."""
    text = line.strip()
    balanced = all(text.count(o) == text.count(c) for o, c in ("()", "[]", "{}"))
    return (
        bool(text)
        and balanced
        and not text.endswith((":", "\\", ","))
        and "#" not in text
        and '"""' not in text
        and not text.startswith(("def ", "class ", "@", "elif", "else", "except"))
    )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _joined_lines(lines: list, draw: random.Random) -> list:
    """``lines`` with some pairs of simple statements of one block on one line, ``a = 1; b = 2``."""
    out = []
    for line in lines:
        prev = out[-1] if out else ""
        if (
            _simple(prev)
            and _simple(line)
            and _indent(prev) == _indent(line)
            and ";" not in prev
            and not prev.strip().startswith("return")
            and draw.random() < 0.4
        ):
            out[-1] = f"{prev}; {line.strip()}"
        else:
            out.append(line)
    return out


def _one_line_suites(lines: list, draw: random.Random) -> list:
    """``lines`` with some ``for``/``if``/``while`` headers whose block is one simple statement written
    on the header's line, ``for w in ws: s = s + w``."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        head = line.strip()
        if (
            i + 1 < len(lines)
            and head.startswith(("for ", "if ", "while ", "else:"))
            and head.endswith(":")
            and "#" not in head
            and _simple(lines[i + 1])
            and _indent(lines[i + 1]) > _indent(line)
            and (i + 2 >= len(lines) or _indent(lines[i + 2]) <= _indent(line))
            and draw.random() < 0.6
        ):
            out.append(f"{line} {lines[i + 1].strip()}")
            i += 2
            continue
        out.append(line)
        i += 1
    return out
