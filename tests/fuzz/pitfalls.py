"""Statement families aimed at what a source rewrite can get wrong.

``Pitfalls`` is mixed into ``Gen`` (``programs.py``): ``s_semantics`` (late
binding, list joins, index arrays, chained, masked and strided writes, helpers
that mutate their argument) and ``s_library`` (library-code idioms: optional
arguments, docstrings and annotations, static branches, recursion, shapes
read from arrays, NumPy-scalar constants).
"""

from __future__ import annotations

import random

from .vocabulary import _shape_text


class Pitfalls:
    """Semantics and library-idiom statement families; some set ``fd_only`` (no twin spelling)."""

    def s_semantics(self, lines, depth):
        """Python and NumPy semantics a rewrite can get wrong: late binding, index arrays, chained and masked writes."""
        names = sorted(
            n
            for n, v in self.env.items()
            if len(v.shape) == 1 and not v.const and v.shape[0] >= 2
        )
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        k = self.env[n].shape[0]
        name = self.fresh_name("e")
        style = self.pick(
            [
                "late_binding",
                "list_join",
                "list_repeat",
                "branch_closure",
                "loop_set_closure",
                "loop_closure",
                "list_index_read",
                "list_index_write",
                "repeated_index",
                "inf_table",
                "chained_write",
                "mask_write",
                "strided_write",
                "swap",
                "helper_mutates",
                "row_view",
                "container_alias",
                "int_write",
                "view_updated_by_helper",
                "index_copy_then_update",
                "view_in_a_branch",
                "library_view_write",
                "list_append_alias",
                "complex_through_nondiff",
                "attribute_updated_by_method",
            ]
        )
        self.feature("sem_" + style)
        if style == "late_binding":
            lines += [
                f"a_ = {n} * 2.0",
                "g_ = lambda z: z * a_",
                f"a_ = np.tanh({n})",
                f"{name} = g_({n})",
            ]
            self.define(name, (k,), fresh=True)
        elif style == "list_join":  # Python joins the lists: the cotangent splits
            j = self.fresh_name("pair")
            lines += [
                f"{j} = [np.tanh({n})] + [{n} * 0.5]",
                f"{j} = {j} + [{n}]",
                f"{name} = {j}[0] * {j}[1] + np.stack({j})[2]",
            ]
            self.define(name, (k,), fresh=True)
        # Python repeats the list: refused on the differentiated path, never summed
        elif style == "list_repeat":
            j = self.fresh_name("rep")
            lines += [
                f"{j} = [np.tanh({n}), {n} * 0.5] * 2",
                f"{name} = {j}[0] * {j}[3] + np.stack({j})[2]",
            ]
            self.define(name, (k,), fresh=True)
        # defined before an if assigns what it captures, called after
        elif style == "branch_closure":
            g, a = self.fresh_name("gb"), self.fresh_name("ab")
            lines += [
                f"{g} = lambda z: z * {a}",
                f"if np.sum({n}) > 0.1:",
                f"    {a} = np.tanh({n})",
                "else:",
                f"    {a} = {n} * 0.5",
                f"{name} = {g}({n})",
            ]
            self.define(name, (k,), fresh=True)
        # captures a value a loop computes; called after the loop
        elif style == "loop_set_closure":
            g, a = self.fresh_name("gl"), self.fresh_name("al")
            lines += [
                f"{a} = 1.0",
                f"for j_ in range({k}):",
                f"    {a} = {a} * np.cos({n}[j_])",
                f"def {g}(z):",
                f"    return z + {a}",
                f"{name} = {g}({n})",
            ]
            self.define(name, (k,), fresh=True)
        elif style == "loop_closure":
            lines += [
                "fs_ = []",
                "for j_ in range(2):",
                "    def gj_(z, j_=j_):",
                "        return z * (j_ + 1.0)",
                "    fs_.append(gj_)",
                f"{name} = fs_[0]({n}) + fs_[1]({n})",
            ]
            self.define(name, (k,), fresh=True)
        elif style == "list_index_read":
            idx = [self.r.randint(-k, k - 1) for _ in range(self.r.randint(2, 3))]
            lines.append(f"{name} = {n}[{idx}] * 2.0")
            self.define(name, (len(idx),), fresh=True)
        elif style == "index_copy_then_update":
            # an index array's read is a copy (a slice's is a view: refused): the update leaves it
            idx = [self.r.randint(-k, k - 1) for _ in range(2)]
            index = self.pick([f"{idx}", f"np.array({idx})", "np.arange(2)", ":2"])
            lines += [
                f"{name}_w = {n} * 1.0",
                f"{name}_kept = {name}_w[{index}]",
                f"{name}_w *= 2.0",
                f"{name} = {name}_kept * {name}_w[:2]",
            ]
            self.define(name, (2,), fresh=True)
        elif style == "list_index_write":
            lines += [
                f"{name} = np.zeros({k})",
                f"{name}[{list(range(k))[::-1]}] = np.tanh({n})",
            ]
            self.define(name, (k,), fresh=True)
        elif style == "repeated_index":
            lines += [f"{name} = np.zeros({k})", f"{name}[[0, 0]] += {n}[:2]"]
            self.define(name, (k,), fresh=True)
            self.fd_only = (
                True  # NumPy's buffered semantics: the twin's .at[].add accumulates
            )
        elif style == "inf_table":
            # a table started at inf (or a huge number), written by an index array and row by row, read
            # where written: no arithmetic may touch the old values
            fill = self.pick(["np.inf", "1e17", "-np.inf", "NEG_INF"])
            if (
                fill == "NEG_INF"
            ):  # a module constant that is not finite (CTC's, Viterbi's)
                self.helper('NEG_INF = -float("inf")\n')
            lines += [
                f"{name} = np.full({k}, {fill})",
                f"{name}[np.array([0, {k - 1}])] = np.tanh({n}[:2])",
                f"for {name}_i in range(1, {k} - 1):",
                f"    {name}[{name}_i] = 0.5 * {n}[{name}_i] + {name}[0]",
            ]
            self.define(name, (k,), fresh=True)
        elif style == "chained_write":
            lines += [
                f"{name} = np.zeros((2, {k}))",
                f"{name}[1][0] = {n}[-1] * 3.0",
                f"{name}[0][1:] += np.sin({n}[1:])",
            ]
            if self.p(0.3):
                # through an index array or a mask: NumPy writes into a copy (refused, never into the array)
                inner = self.pick(["[[0, 1]]", f"[{name}[:, 0] > -1.0]"])
                lines.append(f"{name}{inner}[0] = {n}[0] * 5.0")
            self.define(name, (2, k), fresh=True)
            self.fd_only = (
                True  # a[i][j] = v writes through the view a[i]: no twin spelling
            )
        elif style == "int_write":
            # ``margins = np.zeros_like(labels)``: floats written into integers are truncated, no tangent
            lines += [
                f"{name}_i = np.zeros({k}, dtype=int)",
                f"{name}_i[:] = {n} * 2.5 + 4.0",
                f"{name}_i[0] = {n}[-1] * 1.5",
                f"{name} = {n} * {name}_i",
            ]
            self.define(name, (k,), fresh=True)
        elif style == "view_updated_by_helper":
            # a function updating its parameter in place (``v /= ...``), given a view of an array the caller
            # reads afterwards: NumPy changes the array (refused), or given a copy (accepted)
            self.helper("def halved_(v):\n    v /= 2.0\n    return v\n")
            # the same through a second helper, or by an element written (``v[0] = ...``)
            self.helper("def halved_twice_(v):\n    return halved_(v) * 1.0\n")
            self.helper("def first_zeroed_(v):\n    v[0] = 0.0\n    return v\n")
            local = self.p(0.3)
            if local:
                lines += ["def doubled_(v):", "    v *= 2.0", "    return v"]
            call = (
                "doubled_"
                if local
                else self.pick(["halved_", "halved_twice_", "first_zeroed_"])
            )
            given = self.pick(
                [f"{name}_b[1:]", f"{name}_b[:2]", f"{name}_b[1:].copy()"]
            )
            if not local and self.p(0.3):
                # a partial of it, called later (its local function hands the argument on)
                self.imports.add("import functools")
                lines.append(f"{name}_f = functools.partial({call})")
                call = f"{name}_f"
            lines += [
                f"{name}_b = {n} * 1.0",
                f"{name}_u = {call}({given})",
                f"{name} = {name}_b * 1.5 + np.sum({name}_u)",
            ]
            self.define(name, (k,), fresh=True)
            self.fd_only = True  # the twin's arrays cannot be updated in place
        elif style == "mask_write":
            lines += [
                f"{name} = np.tanh({n})",
                f"{name}[{name} > 0.5] = 0.5",
                f"{name}[{name} < -0.5] *= 2.0",
                # a number written by a mask among full slices (attention padding: a ``where``)
                f"{name}_m = np.outer({name}, {n})",
                f"{name}_m[:, {n} > 0.2] = -1.0",
                f"{name} = {name} + np.sum({name}_m, axis=1) * 0.1",
            ]
            self.define(name, (k,), fresh=True)
            self.fd_only = True
        elif style == "strided_write":
            lines += [
                f"{name} = np.zeros({2 * k})",
                f"{name}[::2] += {n}",
                f"{name}[::-1] *= 1.5",
                f"{name}[1::2] = {n} * {n}",
            ]
            self.define(name, (2 * k,), fresh=True)
        elif style == "view_in_a_branch":
            # a view bound in one branch survives it: the write is read through it (refused, or where the
            # other branch ran, NumPy's value); ``prev = rows[t - 1] if t > 0 else start`` (no alias)
            v, buf = self.fresh_name("vb"), self.fresh_name("buf")
            lines += [
                f"{buf} = np.zeros((3, {k}))",
                f"{v}_start = np.tanh({n})",
                "for t_ in range(3):",
                f"    {v} = {buf}[t_ - 1] if t_ > 0 else {v}_start",
                f"    {buf}[t_] = np.sin({n} * (t_ + 1.0) + {v})",
            ]
            if self.pick([False, True]):
                lines += [
                    f"if np.sum({n}) > 0.0:",
                    f"    {v} = {buf}[0]",
                    "else:",
                    f"    {v} = {v}_start",
                    f"{buf}[0] = {n} * 0.5",
                    f"{name} = np.sum({buf}, axis=0) + {v}",
                ]
            else:
                lines.append(f"{name} = np.sum({buf}, axis=0)")
            self.define(name, (k,), fresh=True)
        elif style == "swap":
            lines += [
                f"a_, b_ = {n}[0], {n}[1] * 0.5",
                "for _ in range(3):",
                "    a_, b_ = b_, a_ + 0.5 * np.tanh(b_)",
                f"{name} = a_ * b_",
            ]
            self.define(name, (), fresh=True)
        elif style == "helper_mutates":
            self.helper("def fill_first(buf, v):\n    buf[0] = v\n    return buf\n")
            lines += [
                f"{name} = np.zeros({k})",
                (
                    f"fill_first({name}, np.sum({n}))"
                    if self.p(0.5)
                    else f"_ = fill_first({name}, np.sum({n}))"
                ),
            ]
            self.define(name, (k,), fresh=True)
            self.fd_only = True  # the caller's buffer changes
        elif style == "container_alias":
            # one array under two items of a dict or list, updated through one: NumPy changes both (refused);
            # or a new array under the updated item (accepted)
            shared = self.p(0.5)
            held = "a_" if shared else "a_ * 1.0"
            box, cur, ref = self.pick(
                [
                    (f'{{"cur": {held}, "ref": a_}}', '"cur"', '"ref"'),
                    (f"[{held}, a_]", "0", "1"),
                ]
            )
            update = [
                self.pick(
                    [
                        f"box_[{cur}] -= 0.5 * np.tanh({n})",
                        f"box_[{cur}][0] = np.sum({n})",
                    ]
                )
            ]
            # (drawn apart, so other programs stay as they were) an item read out under a name of its
            # own and updated through it: the very array the container holds (refused), or a copy
            side = random.Random(self.seed * 13 + len(lines))
            if side.random() < 0.5:
                self.feature("sem_item_handle")
                copy = side.choice(["", ".copy()"])
                write = side.choice(
                    ["h_ *= 1.5", f"h_[0] = np.sum({n})", f"h_ += np.tanh({n})"]
                )
                update = [f"h_ = box_[{cur}]{copy}", write]
            lines += [
                f"a_ = {n} * 2.0",
                f"box_ = {box}",
                *update,
                f"{name} = box_[{cur}] * box_[{ref}]",
            ]
            self.define(name, (k,), fresh=True)
            self.fd_only = True  # the twin spells no writes through a dict's item
        elif style == "list_append_alias":
            # a list grown through a second name (an item of a dict, a copy of the name): Python's other
            # name sees the item (refused where it is read after; right where it is not, or grown directly)
            form = self.pick(["item", "name", "direct", "unread"])
            if form == "item":
                lines += ["book_ = {'terms': [], 'n': 2}", "t_ = book_['terms']"]
                grown, read = "t_", "book_['terms']"
            elif form == "name":
                lines += ["t_ = []", "u_ = t_"]
                grown, read = "u_", "t_"
            elif form == "direct":
                lines += ["book_ = {'terms': []}"]
                grown, read = "book_['terms']", "book_['terms']"
            else:
                lines += ["t_ = []", "u_ = t_"]
                grown, read = "u_", "u_"
            lines += [
                f"{grown}.append(np.tanh({n}))",
                f"{grown}.append({n} * 0.5)",
                f"{name} = sum({read}, np.zeros({k}))",
            ]
            self.define(name, (k,), fresh=True)
            self.fd_only = True
        elif style == "library_view_write":
            # NumPy functions that return views (or the array itself) updated in place: NumPy changes the
            # original too (refused, or right)
            view = self.pick(
                [
                    "np.flipud(m_)",
                    "np.fliplr(m_)",
                    "np.rot90(m_)",
                    'np.einsum("ij->ji", m_)',
                    "m_.astype(np.float64, copy=False)",
                    "np.asarray(m_)",
                ]
            )
            lines += [
                f"m_ = np.outer(np.tanh({n}), {n}) + 0.0",
                f"v_ = {view}",
                self.pick(["v_ *= 1.5", "v_[0] = 2.0 * v_[0]", "v_ += 0.25"]),
                f"{name} = np.sum(m_ * m_, axis=0)",
            ]
            self.define(name, (k,), fresh=True)
            self.fd_only = True
        elif style == "complex_through_nondiff":
            # a complex value cut off from the result by an op whose zero derivative holds for real values
            # only (refused, never a zero), or a real one's angle (right: zero)
            value = self.pick([f"{n} + 1j * np.cos({n})", f"{n} - 0.5"])
            read = self.pick(["np.angle(z_)", "np.imag(z_)", "np.real(np.sign(z_))"])
            lines += [f"z_ = {value}", f"{name} = {read} * {n} + {n}"]
            self.define(name, (k,), fresh=True)
            self.fd_only = True
        elif style == "attribute_updated_by_method":
            # a method updating its object's attribute in place (``self.w -= ...``), the array also held by
            # a name the function reads after: NumPy changes it too (refused), or not read (right), or a
            # method that rebinds (right)
            self.helper(
                "class Scaled_():\n    def __init__(self, w):\n        self.w = w\n\n"
                "    def step(self, g):\n        self.w -= 0.1 * g\n        return self.w\n\n"
                "    def fresh_step(self, g):\n        self.w = self.w - 0.1 * g\n        return self.w\n"
            )
            method = self.pick(["step", "fresh_step"])
            read = self.pick(["w_ * 2.0", "s_.w * 2.0"])
            lines += [
                f"w_ = {n} * 1.0",
                "s_ = Scaled_(w_)",
                f"s_.{method}(np.tanh({n}))",
                f"{name} = {read} + s_.w",
            ]
            self.define(name, (k,), fresh=True)
            self.fd_only = True
        else:  # row_view
            lines += [
                f"{name} = np.zeros((2, {k}))",
                f"row_ = {name}[1]",
                f"row_ += {n}",
                f"{name}[0, :] = {n} * {n}",
            ]
            self.define(name, (2, k), fresh=True)
            self.fd_only = True

    def s_library(self, lines, depth):
        """Library-code idioms (scipy/optax style): optional arguments tested with ``is None``, docstrings,
        annotations, static ``axis``/``keepdims`` branches, recursion over a list, shapes read from arrays,
        NumPy-scalar module constants."""
        names = sorted(
            n for n, v in self.env.items() if 1 <= len(v.shape) <= 2 and not v.const
        )
        if not names:
            return self.s_assign(lines, depth)
        n = self.pick(names)
        v = self.env[n]
        name = self.fresh_name("lib")
        weights = {
            "optional": 2,
            "logsumexp": 2,
            "annotated": 2,
            "recursive": 1,
            "shape": 2,
            "np_constant": 2,
            "assert": 0.3,
            "astype": 0.3,
            "cholesky": 0.5,
        }
        for bug, style_ in (
            ("container_truth", "recursive"),
            ("static_default_branch", "logsumexp"),
            ("numpy_scalar_constant", "np_constant"),
        ):
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
            call = self.pick(
                [
                    f"affine({n})",
                    f"affine({n}, 0.5)",
                    f"affine({n}, shift=np.tanh({n}))",
                    f"affine({n}, scale=2.0, shift=0.1)",
                ]
            )
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
                call, shape = self.pick(
                    [
                        (f"logsumexp({n})", ()),
                        (f"logsumexp({n}, axis=-1)", v.shape[:1]),
                        (f"logsumexp({n}, axis=0, keepdims=True)", (1, v.shape[1])),
                        (f"logsumexp({n}, 1)", v.shape[:1]),
                    ]
                )
            else:
                call, shape = self.pick(
                    [
                        (f"logsumexp({n})", ()),
                        (f"logsumexp({n}, axis=0)", ()),
                        (f"logsumexp({n}, keepdims=True)", (1,)),
                    ]
                )
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
            lines.append(
                f"{name} = "
                + self.pick(
                    [
                        f"gated({n})",
                        f"gated({n}, 0.3)",
                        f"gated({n}, gate=1.5, eps=0.0)",
                    ]
                )
            )
            self.define(name, v.shape, fresh=True)
        elif style == "recursive":
            self.helper(
                "def chain(ws, z):\n"
                "    if not ws:\n        return z\n"
                "    return chain(ws[1:], np.tanh(z * ws[0]))\n"
            )
            if self.p(0.2):
                # the same recursion as a local function: a located error (module-level recursion works)
                lines += [
                    "def local_chain_(ws, z):",
                    "    if not ws:",
                    "        return z",
                    "    return local_chain_(ws[1:], np.tanh(z * ws[0]))",
                    f"{name} = local_chain_([0.5, 1.5], {n})",
                ]
                self.define(name, v.shape, fresh=True)
                return
            lines.append(
                f"{name} = chain([0.5, 1.5, -0.7], {n})"
                if self.p(0.5)
                else f"{name} = chain(({n}, {n}), np.ones({_shape_text(v.shape)}))"
            )
            self.define(name, v.shape, fresh=True)
        elif style == "shape":
            if len(v.shape) == 2:
                lines += [
                    f"rows_, cols_ = {n}.shape",
                    f"{name} = np.sum({n}, axis=0) / rows_ + {n}.shape[-1] * np.mean({n}) / (len({n}) * cols_)",
                ]
                self.define(name, v.shape[1:], fresh=True)
            else:
                lines.append(
                    f"{name} = {n} * ({n}.shape[0] - 1) / {n}.size + np.sum({n}) / len({n}) * {n}.ndim"
                )
                self.define(name, v.shape, fresh=True)
        elif style == "np_constant":
            line = self.pick(
                [
                    "LOG2PI = np.log(2.0 * np.pi)",
                    "EPS = np.finfo(np.float64).eps",
                    "SQRT2 = np.sqrt(2.0)",
                    "HALF = np.float64(0.5)",
                ]
            )
            if line not in self.module_globals:
                self.module_globals.append(line)
            const = line.split(" =")[0]
            lines.append(f"{name} = {n} * {const} + np.tanh({n})")
            self.define(name, v.shape, fresh=True)
        elif style == "assert":
            lines.append(f'assert {n}.ndim == {len(v.shape)}, "unexpected rank"')
            lines.append(f"{name} = np.tanh({n})")
            self.define(name, v.shape, fresh=True)
        elif style == "cholesky":
            # a GP's solve: ``cf = cho_factor(K)``, then ``cho_solve(cf, y)`` and the factor's diagonal
            self.imports.add("import scipy.linalg")
            lower = self.pick(["", ", lower=True"])
            lines += [
                f"{name}_v = np.ravel({n})",
                f"{name}_K = np.outer({name}_v, {name}_v) + 2.0 * np.eye({name}_v.shape[0])",
                f"{name}_cf = scipy.linalg.cho_factor({name}_K{lower})",
                f"{name} = np.sum(scipy.linalg.cho_solve({name}_cf, np.tanh({name}_v))) "
                f"+ np.sum(np.log(np.diag({name}_cf[0])))",
            ]
            self.define(name, (), fresh=True)
            self.fd_only = True  # the twin spells no SciPy
        else:
            lines.append(f"{name} = {n}.astype(np.float64) * 2.0")
            self.define(name, v.shape, fresh=True)
