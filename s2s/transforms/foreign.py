"""The ``foreign`` family: how ``y = rt.foreign(fn, *args, keywords=...)`` is differentiated and batched.

The operands are ``fn`` (operand 0) and ``args``; each derivation names the
operands that carry a derivative (or a batch axis) at this call, makes JAX's
function for them (a ``nondiff`` runtime op), and calls it through
``rt.foreign`` again, with the same operands and keywords::

    # forward: the tangent of y
    _fn_jvp = rt.jvp_of((1,))
    y_dot = rt.foreign(_fn_jvp, fn, a, b, a_dot)

    # reverse: the cotangents of the active operands
    _fn_vjp = rt.vjp_of((1,))
    (a_bar,) = rt.foreign(_fn_vjp, fn, a, b, y_bar)

    # batch: fn mapped over its batched operands (axis 0), every output leaf batched
    _fn_batched = rt.vmap_of((None, 0, None))
    y = rt.foreign(_fn_batched, fn, a, b)

Since each result is a foreign call, derivatives of derivatives and batched
derivatives need no other rule. ``keywords`` hold compile-time constants only
(the resolver refuses any other keyword argument), so no derivative flows
through them.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import call, literal
from ..errors import MissingRule
from ..passes.dataflow import free_names
from ..passes.normal_form import is_static


def _keywords(transform, e) -> dict:
    """The call's ``keywords=`` argument, checked to hold constants (a dict of literals)."""
    keywords = dict(e.kwargs)
    given = keywords.get("keywords")
    constant = (
        given is None
        or (
            isinstance(given, cst.Dict)
            and all(is_static(el.value) or _is_none(el.value) for el in given.elements)
        )
        or _is_none(given)
    )
    if set(keywords) - {"keywords"} or not constant:
        raise MissingRule(
            "no rule for `rt.foreign` with keyword arguments other than constants",
            transform.origin,
            "pass the library function's array arguments positionally",
        )
    return {} if given is None else {"keywords": given}


def _check_closures(transform, e, carried, what) -> None:
    """A local function handed to the library that reads a value carrying a derivative (or a batch
    axis): JAX's transform of the call sees only its operands, so that dependence would be lost (a
    silent zero). A located error."""
    for k, a in enumerate(e.args):
        if isinstance(a, cst.Name) and a.value in transform.defs:
            read = sorted(free_names(transform.defs[a.value]) & carried)
            named = [n for n in read if not n.startswith("_")]
            value = f"`{named[0]}`" if named else "a value computed from the inputs"
            if (
                read and k == 0
            ):  # the function called itself: a closure a local factory made
                raise MissingRule(
                    f"`{a.value}`, a function made by a local function and called here, reads {value}, "
                    f"which carries {what}: s2s does not follow closures that local factories make",
                    transform.origin,
                    "define the factory at module level (s2s binds the closures a module-level "
                    "factory makes), or call the function it makes where it is made",
                )
            if read:
                raise MissingRule(
                    f"`{a.value}`, a local function handed to a library function, reads `{read[0]}`, "
                    f"which carries {what}: JAX transforms the library's call in its arguments only",
                    transform.origin,
                    f"pass `{read[0]}` to the library function as an argument where it takes one "
                    "(`cg(A, b)` takes the matrix itself), or write the computation with s2s's ops "
                    "(`np.linalg.solve(A, b)`)",
                )


def _is_none(atom) -> bool:
    return isinstance(atom, cst.Name) and atom.value in ("None", "True", "False")


def _label(transform, e, suffix) -> cst.Name:
    """A fresh name for the function a derivation makes: ``_l2_loss_vjp`` for ``rt.foreign(l2_loss, ...)``."""
    fn = e.args[0]
    stem = fn.value.strip("_") if isinstance(fn, cst.Name) else "foreign"
    return cst.Name(transform.namer.fresh(f"_{stem}_{suffix}"))


class Foreign:
    """Derivations of ``rt.foreign``: JAX's ``jvp``, ``vjp`` and ``vmap`` of the library function, as foreign calls."""

    name = "foreign"

    def forward(self, fwd, op, e, bindings, target):
        keywords = _keywords(fwd, e)
        _check_closures(fwd, e, fwd.active, "a derivative")
        wrt = [i for i, a in enumerate(e.args) if fwd.is_active(a)]
        maker = _label(fwd, e, "jvp")
        fwd.emit(maker, call("rt.jvp_of", literal(tuple(wrt))))
        tangents = [fwd.tangent(e.args[i]) for i in wrt]
        return call("rt.foreign", maker, *e.args, *tangents, **keywords)

    def reverse(self, back, op, e, bindings, target):
        keywords = _keywords(back, e)
        _check_closures(back, e, back.active, "a derivative")
        g = back.take(target)
        wrt = [i for i, a in enumerate(e.args) if back.is_active(a)]
        if g is None or not wrt:
            return
        maker = _label(back, e, "vjp")
        back.emit(maker, call("rt.vjp_of", literal(tuple(wrt))))
        value = call("rt.foreign", maker, *e.args, g, **keywords)
        back.contribute_many([e.args[i] for i in wrt], value)

    def batch(self, b, op, e, bindings, target):
        keywords = _keywords(b, e)
        _check_closures(b, e, b.batched, "a batch axis")
        operands, axes = [], []
        for a in e.args:
            batched = b.is_batched(a)
            if batched and isinstance(a, (cst.Tuple, cst.List, cst.Dict)):
                a = a.with_changes(  # a container literal: its unbatched elements broadcast
                    elements=[
                        el.with_changes(value=b.broadcast(el.value))
                        for el in a.elements
                    ]
                )
            operands.append(a)
            axes.append(0 if batched else None)
        maker = _label(b, e, "batched")
        b.emit(maker, call("rt.vmap_of", literal(tuple(axes))))
        return call("rt.foreign", maker, *operands, **keywords), True
