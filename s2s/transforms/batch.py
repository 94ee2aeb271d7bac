"""Batching (``s2s.vmap``): a normal-form function becomes the same computation on a batch of examples.

Output guarantees: the result is again Python over ``xp``/``rt``, with no
``jax.vmap`` inside. Every value is either *batched* (a leading batch axis,
axis 0, one slice per example; a container whose array leaves all have it)
or *unbatched* (the same for every example, no batch axis). A statement that
reads no batched value is kept as it is; the others follow the batching rule
of their op (``Op.rules["batch"]``, derived by its batch family in
``families.py``), of their control-flow call (``batch_control.py``), or call
the helper's own ``<helper>_batched``. Shapes read in the user's code
(``x.shape``, ``len(x)``, ``x.ndim``) are those of one example.
"""

from __future__ import annotations

import ast
from dataclasses import replace

import libcst as cst

from .. import ir
from ..cstutil import call, dotted, literal, names_in, rewrite, tuple_of
from ..errors import MissingRule, S2SError
from ..naming import Namer
from ..passes.dataflow import free_names, used_names
from ..passes.normal_form import eqn_of, is_static
from ..rules.registry import op_named
from . import batch_control
from .activity import diff_names, rule_hint
from .families import batch_broadcast
from .skeleton import Context, HelperRequests, Transform

# what a loop runs over, made step-major by their batching rules (``rt.loop_first``)
STEP_MAJOR = frozenset({"iterate", "zip", "reversed", "enumerate"})
_EXAMPLE_ATTRIBUTES = {
    "shape": "example_shape",
    "ndim": "example_ndim",
    "size": "example_size",
}


class _PerExample(cst.CSTTransformer):
    """Shape queries on batched names (``x.shape``, ``len(x)``) as queries on one example."""

    def __init__(self, batched):
        self.batched = batched

    def leave_Attribute(self, original, updated):
        attr = updated.attr.value
        if (
            attr in _EXAMPLE_ATTRIBUTES
            and isinstance(updated.value, cst.Name)
            and updated.value.value in self.batched
        ):
            return call(f"rt.{_EXAMPLE_ATTRIBUTES[attr]}", updated.value)
        return updated

    def leave_Call(self, original, updated):
        if (
            isinstance(updated.func, cst.Name)
            and updated.func.value == "len"
            and len(updated.args) == 1
            and isinstance(updated.args[0].value, cst.Name)
            and updated.args[0].value.value in self.batched
        ):
            return call("rt.example_len", updated.args[0].value)
        return updated


# runtime functions whose result holds its first argument's leaves, each batched as that one's
_LEAVES_KEPT = frozenset({"tree_zeros_like"})


class Batch(Transform):
    """Builds the batched statements of a body, in order, deciding which values carry the batch axis."""

    mode = "batch"
    control = batch_control.RULES

    def __init__(
        self, body, batched, ctx: Context, size: str, requests=None, axis_name=None
    ):
        super().__init__(body, set(batched), ctx)
        self.batched = self.active  # names whose values carry the batch axis
        self.size = size  # the name holding the batch size
        self.axis_name = axis_name  # what collectives name this vmap's axis by
        self.requests = requests if requests is not None else HelperRequests("batched")
        # batched loop inputs (``rt.iterate(x)``): step-major, the batch axis second
        self.step_major: set[str] = set()
        # a gradient's taped ``while`` body -> (its batched version, the Batch that emitted it, the test,
        # whether the carry is batched, whether the test is per example)
        self.taped: dict[str, tuple] = {}
        self.parent: Batch | None = None  # the body this one is nested in
        # the tapes of a gradient's ``while`` loops (their checkpoints carry the batch axis second)
        self.tapes: set[str] = set()
        # containers made by a display here: key -> whether the item is batched (a literal is not)
        self.displayed: dict[str, dict] = {}
        # names holding an index expression (``t = xp.s_[i, y]``): its components keep their own flags
        self.indices: dict[str, cst.Subscript] = {}
        # ``z = rt.zip(r, x)`` of sequences some batched and some not -> the sequences (what a loop over
        # ``z`` iterates with each one's own batching: a shared ``range`` of indices stays shared)
        self.zipped: dict[str, list] = {}

    def nested(self, body, batched, params=None, displayed=None) -> Batch:
        """The batched statements of a local function's ``body``, given its batched names; with its
        ``params``, the displays it reads from here (a parameter of the same name is another value);
        ``displayed``: parameters that are displays, with their items' flags (a loop's carry).
        """
        inner = Batch(body, batched, self.ctx, self.size, self.requests, self.axis_name)
        inner.step_major = set(self.step_major)
        inner.indices = dict(self.indices)
        inner.zipped = dict(self.zipped)
        if params is not None:
            inner.displayed = {
                k: v for k, v in self.displayed.items() if k not in set(params)
            }
        inner.displayed.update(displayed or {})
        inner.taped = self.taped
        inner.parent = self
        inner.tapes = self.tapes
        inner.run(body)
        return inner

    def sees(self, other: Batch) -> bool:
        """Whether a function ``other`` emitted is in scope here (``other`` is this body or encloses it)."""
        scope = self
        while scope is not None and scope is not other:
            scope = scope.parent
        return scope is other

    def run(self, body) -> list:
        for stmt in body:
            self.visit(stmt)
        self.origin = None
        return self.out

    # --- what is batched ---------------------------------------------------------------
    def is_batched(self, atom) -> bool:
        if is_index_expression(atom):  # ``xp.s_[i, 1:3]``: batched where a component is
            return any(self.is_batched(a) for a in _index_atoms(atom))
        if isinstance(atom, cst.Name) and atom.value in self.defs:
            return bool(free_names(self.defs[atom.value]) & self.batched)
        if isinstance(
            atom, (cst.Tuple, cst.List, cst.Dict)
        ):  # (functions in a display too)
            return any(self.is_batched(el.value) for el in atom.elements)
        return bool(diff_names(atom) & self.batched)

    def per_example(self, node):
        """``node`` with its shape queries on batched names read per example."""
        if not names_in(node) & self.batched:
            return node  # no batched name: nothing to rewrite
        return rewrite(node, _PerExample(self.batched))

    def mark(self, target, batched: bool) -> None:
        names = set(ir.target_names(target)) - {"_"}
        if batched:
            self.batched |= names
        else:
            self.batched -= names

    def broadcast(self, atom) -> cst.BaseExpression:
        """An atom with the batch axis (broadcast when unbatched)."""
        return batch_broadcast(self, atom)

    # --- statements --------------------------------------------------------------------
    def visit(self, stmt):
        if isinstance(stmt, ir.Def):
            self.out.append(stmt)
            return
        self.origin = stmt.origin
        # rebound: no longer the display it was
        for name in ir.target_names(stmt.target):
            self.displayed.pop(name, None)
        e = eqn_of(stmt.value, self.helpers)
        every = (*e.args, *(v for _, v in e.kwargs))
        if e.kind == "getitem":  # the index may be batched too
            every = (*every, *_index_atoms(stmt.value))
        if _same_for_every_example(e) or self._container_truth(e):
            every = ()  # ``name == "W"``, ``sw is not None``, ``not args``
        if not any(self.is_batched(a) for a in every) and not _collective(e):
            self.out.append(replace(stmt, value=self.per_example(stmt.value)))
            self.mark(stmt.target, False)
            return
        if e.kind == "runtime" and e.name in self.control:
            self.control[e.name](self, stmt, e)
            return
        held = self._displayed_argument(e)
        # ``**{"e": 1.5, ...}``'s ``e``: as batched as the display holds it
        if held is not None:
            self.emit(stmt.target, self.per_example(stmt.value))
            self.mark(stmt.target, held)
            return
        if e.kind == "copy":
            value = stmt.value
            if isinstance(stmt.target, cst.Name) and is_index_expression(value):
                self.indices[stmt.target.value] = value
            if isinstance(value, (cst.Tuple, cst.List, cst.Dict)):
                value = self._container(value)
            elif isinstance(stmt.target, (cst.Tuple, cst.List)):
                if self._unpacks_a_display(stmt.target, value):
                    return
                value = self._unpacked(stmt.target, value)
            self.emit(stmt.target, self.per_example(value))
            items = _display_items(stmt.value)
            if isinstance(stmt.target, cst.Name) and items is not None:
                self.displayed[stmt.target.value] = {
                    k: not is_static(v) for k, v in items.items()
                }
            pairs = _side_by_side(stmt.target, stmt.value)
            flags = (
                self.displayed.get(stmt.value.value)
                if isinstance(stmt.value, cst.Name)
                and isinstance(stmt.target, (cst.Tuple, cst.List))
                else None
            )
            # ``a, b = res``: each item as batched as the display held it (a tuple of its own too)
            if flags is not None:
                for k, el in enumerate(stmt.target.elements):
                    self.mark(el.value, batch_control.any_batched(flags.get(k, True)))
                    if isinstance(flags.get(k), dict) and isinstance(
                        el.value, cst.Name
                    ):
                        self.displayed[el.value.value] = flags[k]
            elif pairs is None:
                self.mark(stmt.target, True)
            else:  # ``lo, hi = 0.0, c``: a literal stays one value for every example
                for target, element in pairs:
                    self.mark(target, not is_static(element))
            return
        if e.kind == "getitem":
            self.emit(stmt.target, self.per_example(self.getitem(stmt.value)))
            self.mark(stmt.target, self._item_batched(stmt.value))
            sliced = self._displayed_slice(stmt.value)
            if sliced is not None and isinstance(stmt.target, cst.Name):
                self.displayed[stmt.target.value] = _sequence_display(sliced)
                self.mark(stmt.target, any(sliced))
            return
        if e.kind == "attribute":
            base = e.args[0]
            value = (
                call("rt.example_transpose", base)
                if e.name == "T"
                else self.per_example(stmt.value)
            )
            self.emit(stmt.target, value)
            self.mark(stmt.target, e.name not in _EXAMPLE_ATTRIBUTES)
            return
        if e.kind == "helper":
            flags = tuple(self._helper_flag(a) for a in e.args)
            name = self.requests.name(e.name, flags, stmt.origin)
            args = [self._display_batched(a) if f else a for a, f in zip(e.args, flags)]
            # ``average(total, r.shape[0])``: a shape read per example
            self.emit(stmt.target, call(name, *(self.per_example(a) for a in args)))
            self.mark(stmt.target, True)
            return
        if e.kind in ("op", "runtime") and isinstance(stmt.target, cst.Name):
            value, batched = self.derive(e, stmt.target.value)
            self.emit(stmt.target, self.per_example(value))
            self.mark(stmt.target, batched)
            held = e.args[0] if e.args else None
            if (
                e.kind == "runtime"
                and e.name in _LEAVES_KEPT
                and isinstance(held, cst.Name)
                and held.value in self.displayed
            ):  # zeros like a tuple some of whose items are batched: those items, as it holds them
                self.displayed[stmt.target.value] = self.displayed[held.value]
            if e.kind == "runtime" and e.name in STEP_MAJOR:
                self.step_major.add(stmt.target.value)
            return
        raise MissingRule(
            f"no batching rule for {e.label()}", stmt.origin, rule_hint(e.name)
        )

    def _helper_flag(self, atom):
        """How a mapped helper receives an argument: False (the same for every example), True (mapped),
        or, for a sequence display or a name holding one, a tuple of its items' flags (the helper knows
        its length, so ``if not ws:`` in a recursion over it is the same for every example).
        """
        if not self.is_batched(atom):
            return False
        if isinstance(atom, (cst.Tuple, cst.List)) and _display_items(atom) is not None:
            return (True,) * len(
                atom.elements
            )  # ``_display_batched`` gives each item the axis
        if isinstance(atom, cst.Name):
            items = _sequence_items(self.displayed.get(atom.value))
            if items is not None:
                return tuple(batch_control.any_batched(f) for f in items)
        return True

    def _displayed_slice(self, value: cst.Subscript) -> list | None:
        """The item flags of ``ws[1:]`` (a slice with constant bounds) of a sequence display ``ws``."""
        base, parts = value.value, value.slice
        if not (isinstance(base, cst.Name) and len(parts) == 1):
            return None
        items = _sequence_items(self.displayed.get(base.value))
        bounds = parts[0].slice
        if items is None or not isinstance(bounds, cst.Slice):
            return None
        ends = [bounds.lower, bounds.upper, bounds.step]
        if not all(end is None or _constant_key(end) for end in ends):
            return None
        kept = slice(*(None if end is None else _key_value(end) for end in ends))
        return [items[k] for k in range(len(items))[kept]]

    def _display_batched(self, atom):
        """A dict, tuple or list display a mapped helper receives with the batch axis: its items without it
        given one (``{"p": 0.75, "u": u}``: every item of a mapped container carries the axis); strings,
        ``None`` and booleans stay, the same for every example."""
        if isinstance(atom, cst.Dict):
            return atom.with_changes(
                elements=[
                    (
                        el.with_changes(value=self._item_batched_value(el.value))
                        if isinstance(el, cst.DictElement)
                        else el
                    )
                    for el in atom.elements
                ]
            )
        if isinstance(atom, (cst.Tuple, cst.List)):
            return atom.with_changes(
                elements=[
                    el.with_changes(value=self._item_batched_value(el.value))
                    for el in atom.elements
                ]
            )
        return atom

    def _item_batched_value(self, value):
        if isinstance(
            value, (cst.Dict, cst.Tuple, cst.List)
        ):  # (its own items, batched or not)
            return self._display_batched(value)
        if self.is_batched(value) or isinstance(
            value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
        ):
            return value
        if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
            return value
        return call("rt.broadcast_batch", value, cst.Name(self.size))

    def _container_truth(self, e) -> bool:
        """``not args`` of a tuple, list or dict display: its length decides, the same for every example."""
        return (
            e.kind == "runtime"
            and e.name == "logical_not"
            and len(e.args) == 1
            and isinstance(e.args[0], cst.Name)
            and e.args[0].value in self.displayed
        )

    def _displayed_item(self, base, key) -> bool | None:
        """Whether the item at a constant ``key`` of ``base``, a display, is batched (a literal the display
        put there is not); None where ``base`` is no display or the key is not constant or not held.
        """
        if not _constant_key(key):
            return None
        held = _key_value(key)
        # ``rt.argument((k, c), 1, d)``: the display written in place
        items = _display_items(base)
        if items is not None:
            return self.is_batched(items[held]) if held in items else None
        if not (isinstance(base, cst.Name) and base.value in self.displayed):
            return None
        flags = self.displayed[base.value]
        return batch_control.any_batched(flags[held]) if held in flags else None

    def _displayed_argument(self, e) -> bool | None:
        """Whether ``rt.argument(d, key, default)`` is batched, for ``d`` a display holding ``key``, else None."""
        if not (e.kind == "runtime" and e.name == "argument" and len(e.args) == 3):
            return None
        return self._displayed_item(e.args[0], e.args[1])

    def _item_batched(self, value: cst.Subscript) -> bool:
        """Whether ``x[key]`` of a batched ``x`` is batched: not for a literal that a display put at a
        constant key (``arguments = {"d": 0.3, "c": h}``, then ``arguments["d"]``)."""
        parts = value.slice
        if len(parts) != 1 or not isinstance(parts[0].slice, cst.Index):
            return True
        held = self._displayed_item(value.value, parts[0].slice.value)
        return True if held is None else held

    def _unpacks_a_display(self, target, value) -> bool:
        """``first, *rest = ws`` of a sequence display of known length: unpacked as Python does, each
        target as batched as its items (``rest`` a display too). False for anything else.
        """
        starred = [
            k
            for k, el in enumerate(target.elements)
            if isinstance(el, cst.StarredElement)
        ]
        items = (
            _sequence_items(self.displayed.get(value.value))
            if isinstance(value, cst.Name)
            else None
        )
        if len(starred) != 1 or items is None:
            return False
        (star,) = starred
        after = len(target.elements) - star - 1
        if len(items) < star + after:
            return False  # Python's own error when it runs
        self.emit(target, value)
        for k, el in enumerate(target.elements):
            if k == star:
                rest = items[star : len(items) - after]
                self.mark(el.value, any(rest))
                if isinstance(el.value, cst.Name):
                    self.displayed[el.value.value] = _sequence_display(rest)
            else:
                self.mark(el.value, items[k if k < star else k - len(target.elements)])
        return True

    def _unpacked(self, target, value):
        """``a, b = p`` of a batched value: each example unpacked (a batched array along the axis after the
        batch axis, ``rt.unpack_examples``), never the batch itself."""
        if any(isinstance(el, cst.StarredElement) for el in target.elements):
            raise MissingRule(
                "no batching rule for starred unpacking (`a, *rest = x`) of a value that differs per example",
                self.origin,
                "index the parts instead: `a, rest = x[0], x[1:]`",
            )
        return call("rt.unpack_examples", value, cst.Integer(str(len(target.elements))))

    def _container(self, atom):
        """A tuple, list or dict literal holding batched values: its unbatched elements broadcast (a nested
        display's too: every item of a batched container carries the batch axis)."""

        def each(value):
            if isinstance(value, (cst.Tuple, cst.List, cst.Dict)) and self.is_batched(
                value
            ):
                return self._container(value)
            return self.broadcast(value)

        return atom.with_changes(
            elements=[el.with_changes(value=each(el.value)) for el in atom.elements]
        )

    def getitem(self, value: cst.Subscript) -> cst.BaseExpression:
        """``x[key]`` per example: a batched array indexed past its batch axis, a container as it is."""
        if (
            len(value.slice) == 1
            and isinstance(value.slice[0].slice, cst.Index)
            and is_index_expression(value.slice[0].slice.value)
        ):  # ``x[xp.s_[1, 0]]`` (``x.at[1, 0].get()``): the components, one per axis
            value = value.with_changes(slice=value.slice[0].slice.value.slice)
        base, parts = value.value, [el.slice for el in value.slice]
        slices = [p for p in parts if isinstance(p, cst.Slice)]
        if any(self.is_batched(n) for s in slices for n in _bounds(s)):
            raise MissingRule(
                "no batching rule for a slice whose bounds differ per example",
                self.origin,
                "slice with bounds that are the same for every example",
            )
        keys = [p.value for p in parts if isinstance(p, cst.Index)]
        plain = all(is_static(k) for k in keys)  # ints, None, ``...``: no arrays
        if self.is_batched(base) and plain:
            single = len(keys) == len(parts) == 1
            # a key written in the code, or a value known when the code is traced (``hs[len(xs) - 1]``
            # of a dict keyed by step)
            keyed = single and not isinstance(keys[0], cst.Tuple)
            # a container's element, or a row of an array: ``example_item`` tells them apart
            if keyed and base.value not in self.arrays:
                return call("rt.example_item", base, keys[0])
            if single and isinstance(keys[0], cst.Tuple):
                # ``x[(0, 1)]``: one index per axis of an array (never one fancy index past the batch
                # axis), one key of a dict: ``example_item`` tells them apart when it runs
                return call("rt.example_item", base, keys[0])
            if (
                len(parts) == len(slices) == 1
                and isinstance(base, cst.Name)
                and base.value not in self.arrays
            ):  # ``items[:-1]`` of what may be a list (an append's cotangent): its items, or the array's
                # (bounds the same for every example: checked above)
                return call("rt.example_item", base, _slice_call(slices[0]))
            everything = cst.SubscriptElement(cst.Slice(lower=None, upper=None))
            return value.with_changes(slice=[everything, *value.slice])
        if slices:  # ``x[i, 1:3]``: the index as a value, one flag per component
            index = cst.Subscript(
                cst.parse_expression("xp.s_"),
                [
                    el.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                    for el in value.slice
                ],
            )
            flags = [
                isinstance(p, cst.Index) and self.is_batched(p.value) for p in parts
            ]
            key_flags = flags[0] if len(parts) == 1 else tuple(flags)
            return call(
                "rt.batching.getitem",
                base,
                index,
                literal((self.is_batched(base), key_flags)),
            )
        index = keys[0] if len(keys) == 1 else tuple_of(*keys)
        flags = [self.is_batched(k) for k in keys]
        key_flags = flags[0] if len(keys) == 1 else tuple(flags)
        return call(
            "rt.batching.getitem",
            base,
            index,
            literal((self.is_batched(base), key_flags)),
        )


def _constant_key(key) -> bool:
    """An int (``-1`` too) or string written in the code, or a tuple of them (a path ``("b",)`` keying the
    dict of ``fill_like_vjp``): a key a container's item may have."""
    if isinstance(key, cst.UnaryOperation) and isinstance(key.operator, cst.Minus):
        key = key.expression
    if isinstance(key, cst.Tuple):
        return bool(key.elements) and all(_constant_key(e.value) for e in key.elements)
    return isinstance(key, (cst.Integer, cst.SimpleString))


def _same_for_every_example(e) -> bool:
    """``k == "W"`` (or ``!=``, ``in``): strings are keys and names, never values that differ per example;
    and ``sw is not None`` (``is``): an example is an array whatever the batch holds."""
    if e.kind != "op":
        return False
    if e.name in ("is", "is_not"):
        return True
    # ``"floor" in kw``, ``key in ("loc", "scale")``: a key's membership
    return e.name in ("equal", "not_equal", "in", "not_in") and any(
        _is_text(a) for a in e.args
    )


def _is_text(atom) -> bool:
    """A string literal, or a display of them."""
    if isinstance(atom, (cst.Tuple, cst.List)):
        return bool(atom.elements) and all(_is_text(e.value) for e in atom.elements)
    return isinstance(atom, cst.SimpleString)


def _collective(e) -> bool:
    """Whether ``e`` calls a collective (``rt.psum``): over this vmap's axis it differs from the op per
    example even when nothing it reads is batched (``psum(1, "i")`` is the batch size).
    """
    op = op_named("rt." + e.name) if e.kind == "runtime" else None
    rule = op.rules.get("batch") if op is not None else None
    return rule is not None and rule.family == "collective"


def is_index_expression(atom) -> bool:
    """``xp.s_[...]``: an index with several components (or a slice), as a value."""
    return isinstance(atom, cst.Subscript) and dotted(atom.value) == "xp.s_"


def _index_atoms(value: cst.Subscript) -> list:
    """The atoms of a subscript's index: keys and slice bounds."""
    atoms = []
    for el in value.slice:
        part = el.slice
        atoms.extend([part.value] if isinstance(part, cst.Index) else _bounds(part))
    return atoms


def _bounds(s: cst.Slice) -> list:
    return [b for b in (s.lower, s.upper, s.step) if b is not None]


def batch(
    fn: ir.Function,
    in_axes: tuple,
    out_axes=0,
    axis_size=None,
    helpers=frozenset(),
    flows=None,
    custom=None,
    requests=None,
    axis_name=None,
) -> ir.Function:
    """The batched function of ``fn`` (normal form): ``in_axes`` has one entry per parameter (None, an
    int, or a tree prefix of those), ``out_axes`` likewise for the result; collectives naming
    ``axis_name`` combine its examples."""
    ctx = Context(Namer(used_names(fn)), helpers, flows or {}, custom or {})
    size = ctx.namer.fresh("batch_size")
    batched = {p.name for p, axes in zip(fn.params, in_axes) if not _unmapped(axes)}
    *stmts, ret = fn.body
    b = Batch(stmts, batched, ctx, size, requests, axis_name)
    # a mapped helper's sequence of known length (``HelperRequests`` flags of a display): its items' axes
    b.displayed = {
        p.name: _sequence_display([not _unmapped(a) for a in axes])
        for p, axes in zip(fn.params, in_axes)
        if isinstance(axes, tuple) and axes and not _unmapped(axes)
    }
    b.run(stmts)
    b.origin = ret.origin
    out = _outputs(b, ret.value, out_axes, fn.name)
    body = [*prelude(fn, in_axes, axis_size, size), *b.out, ir.Return(out, ret.origin)]
    mapped = [p.name for p, axes in zip(fn.params, in_axes) if not _unmapped(axes)]
    doc = f"`{fn.name}` mapped over " + (
        ", ".join(f"`{n}`" for n in mapped) if mapped else f"a batch of {axis_size}"
    )
    return ir.Function(
        f"{fn.name}_batched", fn.params, tuple(body), fn.origin, docstring=doc + "."
    )


def prelude(fn: ir.Function, in_axes: tuple, axis_size, size: str) -> list:
    """The batched entry's first statements: the batch size, and mapped axes moved to the front."""
    pairs = [
        tuple_of(cst.Name(p.name), _axes_literal(axes))
        for p, axes in zip(fn.params, in_axes)
        if not _unmapped(axes)
    ]
    keywords = (
        {"axis_size": cst.Integer(str(axis_size))} if axis_size is not None else {}
    )
    stmts = [ir.Assign(cst.Name(size), call("rt.batch_size", *pairs, **keywords))]
    for p, axes in zip(fn.params, in_axes):
        if _unmapped(axes) or axes == 0:
            continue
        arguments = [cst.Name(p.name), _axes_literal(axes), cst.Name(size)]
        if isinstance(axes, tuple) and any(_unmapped(a) for a in axes):
            # the sequence's unmapped items stay unbatched, as ``Batch.displayed`` reads them
            arguments.append(cst.Name("True"))
        stmts.append(ir.Assign(cst.Name(p.name), call("rt.batch_leaves", *arguments)))
    return stmts


def _unmapped(axes) -> bool:
    if axes is None:
        return True
    if isinstance(axes, dict):
        return all(_unmapped(a) for a in axes.values())
    if isinstance(axes, (tuple, list)):
        return all(_unmapped(a) for a in axes)
    return False


def _axes_literal(axes) -> cst.BaseExpression:
    if isinstance(axes, dict):
        return cst.Dict(
            [cst.DictElement(literal(k), _axes_literal(v)) for k, v in axes.items()]
        )
    if isinstance(axes, list):
        return cst.List([cst.Element(_axes_literal(a)) for a in axes])
    if isinstance(axes, tuple):
        return tuple_of(*(_axes_literal(a) for a in axes))
    return literal(axes)


def _outputs(b: Batch, out, out_axes, name: str) -> cst.BaseExpression:
    """The returned value with its batch axes where ``out_axes`` puts them."""
    if isinstance(out_axes, (tuple, list)) and isinstance(out, cst.Tuple):
        if len(out_axes) != len(out.elements):
            raise S2SError(
                f"vmap out_axes {out_axes!r} does not match the {len(out.elements)} outputs of `{name}`",
                b.origin,
            )
        return tuple_of(
            *(_outputs(b, el.value, a, name) for el, a in zip(out.elements, out_axes))
        )
    out = b.per_example(out)  # ``return len(x)``: one example's length
    if _unmapped(out_axes):
        if b.is_batched(out):
            raise S2SError(
                f"vmap has mapped output but out_axes is None: `{name}`'s result differs per example",
                b.origin,
                "give out_axes an axis for it, or return a value that is the same for every example",
            )
        return out
    value = _with_batch_axis(b, out)
    if out_axes == 0:
        return value
    return call("rt.unbatch_leaves", value, _axes_literal(out_axes))


def _with_batch_axis(b: Batch, out) -> cst.BaseExpression:
    """A returned value with the batch axis on every leaf: an unbatched one (a constant included) is the
    same for every example, broadcast, as JAX's ``vmap`` returns it."""
    if isinstance(out, (cst.Tuple, cst.List)):
        return out.with_changes(
            elements=[
                el.with_changes(value=_with_batch_axis(b, el.value))
                for el in out.elements
            ]
        )
    if isinstance(out, cst.Dict):
        return out.with_changes(
            elements=[
                el.with_changes(value=_with_batch_axis(b, el.value))
                for el in out.elements
            ]
        )
    if b.is_batched(out):
        return out
    return call("rt.broadcast_batch", out, cst.Name(b.size))


def _slice_call(s: cst.Slice) -> cst.Call:
    """``slice(lower, upper, step)`` for the slice ``lower:upper:step``."""
    none = cst.Name("None")
    return call("slice", s.lower or none, s.upper or none, s.step or none)


def _key_value(key):
    """The int or string a constant key (``_constant_key``) is."""
    return ast.literal_eval(cst.Module([]).code_for_node(key))


def _sequence_items(flags: dict | None) -> list | None:
    """The item flags, in order, of a sequence display's ``displayed`` entry (keys from both ends), else
    None (no display, or a dict's)."""
    if not flags or not all(type(k) is int for k in flags):
        return None
    n = sum(k >= 0 for k in flags)
    if set(flags) != set(range(-n, n)):
        return None
    return [flags[k] for k in range(n)]


def _sequence_display(items) -> dict:
    """A sequence's ``displayed`` entry: its item flags keyed from both ends."""
    n = len(items)
    return {k: f for j, f in enumerate(items) for k in (j, j - n)}


def _display_items(value) -> dict | None:
    """``{key: element}`` of a tuple, list or dict display with constant keys (ints from both ends for a
    sequence), else None."""
    if isinstance(value, (cst.Tuple, cst.List)):
        if any(isinstance(el, cst.StarredElement) for el in value.elements):
            return None
        n = len(value.elements)
        return {k: el.value for j, el in enumerate(value.elements) for k in (j, j - n)}
    if isinstance(value, cst.Dict):
        if not all(
            isinstance(el, cst.DictElement) and _constant_key(el.key)
            for el in value.elements
        ):
            return None
        return {_key_value(el.key): el.value for el in value.elements}
    return None


def _side_by_side(target, value):
    """``[(target_i, value_i)]`` of ``a, b = x, y`` (a tuple or list display unpacked, no ``*``), else None."""
    displays = (cst.Tuple, cst.List)
    if not isinstance(target, displays) or not isinstance(value, displays):
        return None
    if len(target.elements) != len(value.elements) or any(
        isinstance(el, cst.StarredElement) for el in (*target.elements, *value.elements)
    ):
        return None
    return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
