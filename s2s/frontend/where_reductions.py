"""NumPy reductions with ``where=``: the same reductions of ``np.where(mask, x, identity)``.

``np.sum(x, where=m)`` is ``np.sum(np.where(m, x, 0))``, ``np.prod`` fills
with 1, ``np.mean(x, where=m)`` is that sum over ``np.sum`` of the mask
broadcast to ``x`` (``np.var``/``np.std``: the selected elements' squared deviations from that mean,
over their count less ``ddof``), and ``np.max``/``np.min`` fill with their ``initial=``
(which NumPy requires with ``where=``), also kept as the reduction's floor or
ceiling. Without ``where=``, ``initial=`` joins the reduction as one more item:
``np.max(x, initial=c)`` is ``np.maximum(np.max(x), c)``, ``np.sum(x, initial=c)``
is ``np.sum(x) + c`` (``np.prod`` multiplies). Every other argument (``axis``, ``keepdims``) is passed on as
written. The derivative is then ``where``'s: none outside the mask. Other
reductions with ``where=`` keep the keyword, and its located error.
"""

from __future__ import annotations

import libcst as cst

from ..cstutil import call

FILL = {"sum": "0.0", "nansum": "0.0", "prod": "1.0", "mean": "0.0"}
EXTREMA = {
    "max": "xp.maximum",
    "min": "xp.minimum",
    "amax": "xp.maximum",
    "amin": "xp.minimum",
}


def rewrite(op: str, args: list) -> cst.BaseExpression | None:
    """``xp.<op>(*args)`` without its ``where=``, as the reduction of a ``np.where``; None when it has none."""
    where = next(
        (a for a in args if a.keyword is not None and a.keyword.value == "where"), None
    )
    if where is None:
        return _with_initial(op, args)
    if op not in FILL and op not in EXTREMA and op not in SPREADS:
        return None
    rest = [a for a in args if a is not where]
    data = next((a for a in rest if a.keyword is None or a.keyword.value == "a"), None)
    if data is None:
        return None
    mask, x = where.value, data.value
    if op in SPREADS:
        return _spread(op, mask, x, [a for a in rest if a is not data])
    if op in EXTREMA:
        initial = next(
            (a for a in rest if a.keyword is not None and a.keyword.value == "initial"),
            None,
        )
        if initial is None:
            return (
                None  # NumPy's own error: `where=` without `initial=` has no identity
            )
        others = [a for a in rest if a is not data and a is not initial]
        filled = call("xp.where", mask, x, initial.value)
        reduced = cst.Call(
            cst.parse_expression(f"xp.{op.lstrip('a')}"), [cst.Arg(filled), *others]
        )
        return call(EXTREMA[op], reduced, initial.value)
    others = [a for a in rest if a is not data]
    filled = call("xp.where", mask, x, cst.Float(FILL[op]))
    name = "sum" if op in ("mean", "nansum") else op
    total = cst.Call(cst.parse_expression(f"xp.{name}"), [cst.Arg(filled), *others])
    if op != "mean":  # (``initial=`` beside ``where=``: joined as one more item)
        return _with_initial(name, total.args) or total
    ones = call("xp.where", mask, call("xp.ones_like", x), cst.Float("0.0"))
    count = cst.Call(cst.parse_expression("xp.sum"), [cst.Arg(ones), *others])
    return cst.BinaryOperation(total, cst.Divide(), count)


SPREADS = ("var", "std")


def _spread(op: str, mask, x, others: list) -> cst.BaseExpression | None:
    """``np.var(x, axis, ddof=, keepdims=, where=m)`` (``np.std``: its square root): the squared deviations
    from the mean of the selected elements, summed where ``m`` holds, over their count less ``ddof``;
    None for arguments beyond those (``dtype``, ``out``, ``mean``, ``correction``)."""
    keywords = {a.keyword.value: a.value for a in others if a.keyword is not None}
    positional = [a.value for a in others if a.keyword is None]
    if len(positional) > 1 or set(keywords) - {"axis", "ddof", "keepdims"}:
        return None
    axis = positional[0] if positional else keywords.get("axis", cst.Name("None"))
    keepdims = keywords.get("keepdims", cst.Name("False"))
    ddof = keywords.get("ddof", cst.Integer("0"))

    def summed(value, keep):
        return call("xp.sum", value, axis=axis, keepdims=keep)

    ones = call("xp.where", mask, call("xp.ones_like", x), cst.Float("0.0"))
    center = cst.BinaryOperation(
        summed(call("xp.where", mask, x, cst.Float("0.0")), cst.Name("True")),
        cst.Divide(),
        summed(ones, cst.Name("True")),
    )
    deviations = call(
        "xp.where",
        mask,
        call("xp.square", cst.BinaryOperation(x, cst.Subtract(), center)),
        cst.Float("0.0"),
    )
    count = cst.BinaryOperation(summed(ones, keepdims), cst.Subtract(), ddof)
    variance = cst.BinaryOperation(summed(deviations, keepdims), cst.Divide(), count)
    return variance if op == "var" else call("xp.sqrt", variance)


# how a reduction's ``initial=`` joins the reduction of the array (NumPy reduces it as one more item)
JOINED = {"sum": cst.Add(), "nansum": cst.Add(), "prod": cst.Multiply()}


def _with_initial(op: str, args: list) -> cst.BaseExpression | None:
    """``xp.<op>(x, ..., initial=c)`` as the reduction joined with ``c``: ``np.max(x, initial=c)`` is
    ``np.maximum(np.max(x), c)``, ``np.sum(x, initial=c)`` is ``np.sum(x) + c``; None without one.
    """
    initial = next(
        (a for a in args if a.keyword is not None and a.keyword.value == "initial"),
        None,
    )
    if initial is None or (op not in EXTREMA and op not in JOINED):
        return None
    others = [a for a in args if a is not initial]
    reduced = cst.Call(cst.parse_expression(f"xp.{op.lstrip('a')}"), others)
    if op in EXTREMA:
        return call(EXTREMA[op], reduced, initial.value)
    return cst.BinaryOperation(reduced, JOINED[op], initial.value)
