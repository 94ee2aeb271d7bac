"""NamedTuple records made and updated in transformed code: ``State(mu, nu)``, ``p._replace(w=...)``.

A record is a tuple whose fields have names; its cotangent (and tangent) is a record of the same type,
field by field, as in JAX, where a NamedTuple is a pytree.
"""

from __future__ import annotations

from .trees import tree_zeros_like


def record(cls, *fields):
    """``cls(*fields)``: a NamedTuple made from its fields, in order."""
    return cls(*fields)


def record_fields(g):
    """The cotangents of ``record(cls, *fields)``'s fields: ``g``'s, in order (a list)."""
    return list(g)


def replaced(value, names, *fields):
    """``value._replace(**dict(zip(names, fields)))``."""
    return value._replace(**dict(zip(names, fields)))


def replaced_vjp(g, names):
    """The cotangent of the record ``value`` in ``replaced(value, names, *fields)``: ``g`` with the
    replaced fields zero (their values come from ``fields``)."""
    return g._replace(**{n: tree_zeros_like(getattr(g, n)) for n in names})


def replaced_fields_vjp(g, names):
    """The cotangents of ``replaced``'s ``fields``: ``g``'s fields of those names (a list)."""
    return [getattr(g, n) for n in names]


def record_like(fields, like):
    """The record of ``like``'s type holding ``fields``: the transpose of ``record_fields``."""
    return type(like)(*fields)


def replaced_fields_into(fields, names, like):
    """The record shaped like ``like``, zero but for the fields ``names`` holding ``fields``: the
    transpose of ``replaced_fields_vjp``."""
    return tree_zeros_like(like)._replace(**dict(zip(names, fields)))


def batched_record(cls, fields, batched, size):
    """``record(cls, *fields)`` in batched code: the fields the same for every example broadcast."""
    from .batch_axes import broadcast_batch

    return cls(
        *(f if flag else broadcast_batch(f, size) for f, flag in zip(fields, batched))
    )
