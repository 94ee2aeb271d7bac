"""``s2s.runtime.batching``: the helpers batched generated code calls for rank-dependent ops.

Every helper must equal the per-example Python loop ``stack([op(example_i) ...])``
of the NumPy op: eagerly on NumPy arrays (float64, tight tolerance), and under
``jax.jit`` on float32 JAX arrays, where ``jax.vmap`` of the ``jax.numpy`` op is
a second oracle. Jitted functions are cached by their static configuration so
hypothesis examples reuse them (they retrace only for new shapes).
"""

import itertools
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from s2s.runtime import arrays
from s2s.runtime import batching as bt

from s2s import runtime as rt

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FLAG_PAIRS = [(True, False), (False, True), (True, True)]
B = 2
RNG = np.random.default_rng(0)


def rand(shape, rng=RNG):
    return rng.normal(size=shape)


# --------------------------------------------------------------------------- harness


def per_example(example_fn, args, flags):
    size = next(np.shape(a)[0] for a, f in zip(args, flags) if f)
    outs = [
        example_fn(*[a[i] if f else a for a, f in zip(args, flags)])
        for i in range(size)
    ]
    return np.stack([np.asarray(o) for o in outs])


_JITS = {}


def _as_jax_input(a):
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype == np.float64 else a


def check(
    key, batched_fn, example_fn, args, flags, vmap_fn=None, rtol=1e-5, on_jax=True
):
    """``batched_fn`` equals the per-example loop of ``example_fn``: on NumPy arrays, and (``on_jax``)
    jitted on JAX arrays next to ``jax.vmap(vmap_fn)`` (``key`` names the static configuration).
    """
    args = [np.asarray(a) for a in args]
    flags = tuple(flags)
    want = per_example(example_fn, args, flags)
    got = batched_fn(*args)
    assert isinstance(got, (np.ndarray, np.generic)), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if not on_jax:
        return

    args32 = [_as_jax_input(a) for a in args]
    want32 = per_example(example_fn, args32, flags)
    jitted = _JITS.get(key)
    if jitted is None:
        in_axes = tuple(0 if f else None for f in flags)

        def both(*xs):
            oracle = None if vmap_fn is None else jax.vmap(vmap_fn, in_axes)(*xs)
            return batched_fn(*xs), oracle

        jitted = _JITS[key] = jax.jit(both)
    got, oracle = jitted(*[jnp.asarray(a) for a in args32])
    assert isinstance(got, jax.Array)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(
        np.asarray(got, np.float64), want32.astype(np.float64), rtol=rtol, atol=1e-5
    )
    if oracle is not None:
        assert oracle.shape == want.shape
        np.testing.assert_allclose(
            np.asarray(got, np.float64),
            np.asarray(oracle, np.float64),
            rtol=rtol,
            atol=1e-5,
        )


def batch(shape, flag, size=B, rng=RNG):
    return rand(((size,) if flag else ()) + tuple(shape), rng)


# --------------------------------------------------------------------------- products

PRODUCTS = {
    "matmul": (bt.matmul, np.matmul, jnp.matmul),
    "dot": (bt.dot, np.dot, jnp.dot),
    "inner": (bt.inner, np.inner, jnp.inner),
    "outer": (bt.outer, np.outer, jnp.outer),
    "vdot": (bt.vdot, np.vdot, jnp.vdot),
}


def product_shapes(op, ra, rb):
    """Per-example shapes (distinct sizes, size-1 stack dims that broadcast) for ``op`` at ranks ``ra``, ``rb``."""
    if op == "matmul":
        a = (6,) * (ra - 2) + (4, 3) if ra >= 2 else (3,)
        b = (1,) * (rb - 2) + (3, 5) if rb >= 2 else (3,)
        if ra == 3 and rb == 3:
            a, b = (1, 4, 3), (6, 3, 5)
        return a, b
    if op == "dot":
        a = (6, 4)[: max(ra - 1, 0)] + (3,) if ra else ()
        b = (7,) * (rb - 2) + (3, 5) if rb >= 2 else (3,) * rb
        return a, b
    if op == "inner":
        return (6, 4)[: max(ra - 1, 0)] + (3,) * (ra > 0), (7, 5)[: max(rb - 1, 0)] + (
            3,
        ) * (rb > 0)
    if op == "outer":
        return (4, 3, 1)[:ra], (5, 1, 2)[:rb]
    sized = {0: (), 1: (6,), 2: (2, 3), 3: (3, 1, 2)}  # vdot: equal sizes
    if (ra == 0) != (rb == 0):
        return ((1,) * ra, (1,) * rb)
    return sized[ra], sized[rb]


PRODUCT_CASES = [
    (op, ra, rb, flags)
    for op in PRODUCTS
    for ra in range(4)
    for rb in range(4)
    for flags in FLAG_PAIRS
    if not (op == "matmul" and (ra == 0 or rb == 0))
]


@pytest.mark.parametrize(
    "op,ra,rb,flags",
    PRODUCT_CASES,
    ids=[f"{o}-{a}x{b}-{int(f[0])}{int(f[1])}" for o, a, b, f in PRODUCT_CASES],
)
def test_products_every_rank_combination(op, ra, rb, flags):
    fn, np_op, jnp_op = PRODUCTS[op]
    a_shape, b_shape = product_shapes(op, ra, rb)
    args = [batch(a_shape, flags[0]), batch(b_shape, flags[1])]
    # NumPy for every flag pair; one pair per rank combination (in turn) under jax.jit
    on_jax = FLAG_PAIRS.index(flags) == (ra + rb) % 3
    check(
        (op, flags),
        lambda a, b: fn(a, b, flags),
        np_op,
        args,
        flags,
        jnp_op,
        on_jax=on_jax,
    )


@st.composite
def product_case(draw, op):
    size = draw(st.integers(1, 3))
    flags = draw(st.sampled_from(FLAG_PAIRS))
    dim = st.integers(1, 3)
    low = 1 if op == "matmul" else 0
    ra, rb = draw(st.integers(low, 3)), draw(st.integers(low, 3))
    k = draw(dim)
    if op == "matmul":
        stack = draw(st.lists(dim, min_size=1, max_size=1)) * 1
        sa = [s if draw(st.booleans()) else 1 for s in stack][: max(ra - 2, 0)]
        sb = [s if draw(st.booleans()) else 1 for s in stack][: max(rb - 2, 0)]
        a = tuple(sa) + ((draw(dim), k) if ra >= 2 else (k,))
        b = tuple(sb) + ((k, draw(dim)) if rb >= 2 else (k,))
    elif op == "dot":
        a = tuple(draw(dim) for _ in range(max(ra - 1, 0))) + (k,) * (ra > 0)
        b = (
            tuple(draw(dim) for _ in range(rb - 2)) + (k, draw(dim))
            if rb >= 2
            else (k,) * rb
        )
    elif op == "inner":
        a = tuple(draw(dim) for _ in range(max(ra - 1, 0))) + (k,) * (ra > 0)
        b = tuple(draw(dim) for _ in range(max(rb - 1, 0))) + (k,) * (rb > 0)
    elif op == "outer":
        a = tuple(draw(dim) for _ in range(ra))
        b = tuple(draw(dim) for _ in range(rb))
    else:  # vdot: the same number of elements
        a = tuple(draw(dim) for _ in range(ra))
        n = int(np.prod(a))
        b = draw(st.sampled_from([(n,), (1, n), (n, 1)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return flags, [batch(a, flags[0], size, rng), batch(b, flags[1], size, rng)]


@pytest.mark.parametrize("op", list(PRODUCTS))
@SETTINGS
@given(data=st.data())
def test_products_random_shapes(op, data):
    flags, args = data.draw(product_case(op))
    fn, np_op, jnp_op = PRODUCTS[op]
    check((op, flags), lambda a, b: fn(a, b, flags), np_op, args, flags, jnp_op)


def test_complex_vdot_conjugates_the_first_operand():
    a = rand((B, 2, 3)) + 1j * rand((B, 2, 3))
    b = rand((6,)) + 1j * rand((6,))
    got = bt.vdot(a, b, (True, False))
    want = np.stack([np.vdot(a[i], b) for i in range(B)])
    np.testing.assert_allclose(got, want)


TENSORDOT_CASES = [
    ((3, 4), (4, 5), 1),
    ((2, 3, 4), (3, 4, 5), 2),
    ((3,), (4,), 0),
    ((2, 3), (2, 3), 2),
    ((2, 3, 4), (4, 2), ([0, 2], [1, 0])),
    ((2, 3, 4), (5, 3), ([-2], [-1])),
    ((3, 4), (4, 3), (1, 0)),
    ((3, 4), (4, 3), ((0, 1), (1, 0))),
    ((), (3,), 0),
]


@pytest.mark.parametrize("flags", FLAG_PAIRS)
@pytest.mark.parametrize("a_shape,b_shape,axes", TENSORDOT_CASES)
def test_tensordot(a_shape, b_shape, axes, flags):
    args = [batch(a_shape, flags[0]), batch(b_shape, flags[1])]
    check(
        ("tensordot", repr(axes), flags),
        lambda a, b: bt.tensordot(a, b, axes, flags),
        lambda a, b: np.tensordot(a, b, axes),
        args,
        flags,
        lambda a, b: jnp.tensordot(a, b, axes),
    )


@st.composite
def tensordot_case(draw):
    size = draw(st.integers(1, 3))
    flags = draw(st.sampled_from(FLAG_PAIRS))
    a = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    b_free = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    picked = draw(st.permutations(range(len(a))))[: draw(st.integers(0, len(a)))]
    b_rank = len(picked) + len(b_free)
    slots = draw(st.permutations(range(b_rank)))
    b = [0] * b_rank
    for axis, slot in zip(picked, slots):
        b[slot] = a[axis]
    free = iter(b_free)
    for slot in slots[len(picked) :]:
        b[slot] = next(free)
    neg_a = [x - len(a) if draw(st.booleans()) else x for x in picked]
    neg_b = [s - b_rank if draw(st.booleans()) else s for s in slots[: len(picked)]]
    axes = (tuple(neg_a), tuple(neg_b))
    if draw(st.booleans()) and sorted(picked) == list(
        range(len(a) - len(picked), len(a))
    ):
        # an int: a's last n axes against b's first n, in order
        n = len(picked)
        b = list(a[len(a) - n :]) + list(b_free)
        axes = n
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return (
        flags,
        axes,
        [batch(a, flags[0], size, rng), batch(tuple(b), flags[1], size, rng)],
    )


@SETTINGS
@given(case=tensordot_case())
def test_tensordot_random(case):
    flags, axes, args = case
    check(
        ("tensordot", repr(axes), flags),
        lambda a, b: bt.tensordot(a, b, axes, flags),
        lambda a, b: np.tensordot(a, b, axes),
        args,
        flags,
        lambda a, b: jnp.tensordot(a, b, axes),
    )


# --------------------------------------------------------------------------- einsum

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ji,jk", [(3, 2), (3, 4)]),
    ("i,i", [(3,), (3,)]),
    ("i,j", [(3,), (4,)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("bA", [(2, 3)]),
    ("ab,Bb", [(2, 3), (4, 3)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(5, 2, 3), (1, 3, 4)]),
    ("i...->...", [(3, 2, 4)]),
    ("...i,...i", [(2, 1, 3), (4, 3)]),
    ("...", [(2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("a , a -> ", [(3,), (3,)]),
    ("z,z->z", [(3,), (3,)]),
]


@pytest.mark.parametrize(
    "subscripts,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES]
)
def test_einsum(subscripts, shapes):
    for flags in itertools.product([False, True], repeat=len(shapes)):
        if not any(flags):
            continue
        args = [batch(s, f) for s, f in zip(shapes, flags)]
        check(
            ("einsum", subscripts, flags),
            lambda *ops, flags=flags: bt.einsum(subscripts, flags, *ops),
            lambda *ops: np.einsum(subscripts, *ops),
            args,
            flags,
            lambda *ops: jnp.einsum(subscripts, *ops),
        )


@st.composite
def einsum_case(draw):
    size = draw(st.integers(1, 3))
    sizes = {c: draw(st.integers(1, 3)) for c in "abcd"}
    ellipsis = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n = draw(st.integers(1, 3))
    specs, shapes = [], []
    for _ in range(n):
        letters = draw(st.lists(st.sampled_from("abcd"), max_size=3))
        shape = [sizes[c] for c in letters]
        spec = "".join(letters)
        if ellipsis and draw(st.booleans()):
            k = draw(st.integers(0, len(ellipsis)))
            dims = [
                d if draw(st.booleans()) else 1 for d in ellipsis[len(ellipsis) - k :]
            ]
            at = draw(st.integers(0, len(letters)))
            spec = spec[:at] + "..." + spec[at:]
            shape = shape[:at] + dims + shape[at:]
        specs.append(spec)
        shapes.append(tuple(shape))
    subscripts = ",".join(specs)
    if draw(st.booleans()):  # explicit output
        used = sorted(set("".join(specs)) - {"."})
        out = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))])
        if "..." in subscripts:
            at = draw(st.integers(0, len(out)))
            out = out[:at] + "..." + out[at:]
        subscripts += "->" + out
    flags = tuple(draw(st.booleans()) for _ in range(n))
    if not any(flags):
        flags = (True,) + flags[1:]
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return subscripts, flags, [batch(s, f, size, rng) for s, f in zip(shapes, flags)]


@SETTINGS
@given(case=einsum_case())
def test_einsum_random(case):
    subscripts, flags, args = case
    check(
        ("einsum", subscripts, flags),
        lambda *ops: bt.einsum(subscripts, flags, *ops),
        lambda *ops: np.einsum(subscripts, *ops),
        args,
        flags,
        lambda *ops: jnp.einsum(subscripts, *ops),
    )


# --------------------------------------------------------------------------- indexing


def _template(index, flags):
    """The index with its integer arrays taken out (they become jit arguments) and their flags."""
    parts = index if isinstance(index, tuple) else (index,)
    comp_flags = flags if isinstance(flags, tuple) else (flags,)
    template, dynamic, dyn_flags = [], [], []
    for part, flag in zip(parts, comp_flags):
        if isinstance(part, np.ndarray) and part.dtype.kind in "iu":
            template.append(("array", len(dynamic)))
            dynamic.append(part)
            dyn_flags.append(flag)
        else:
            template.append(("static", part))
    return template, dynamic, dyn_flags


def _rebuild(template, arrays_, single):
    parts = tuple(p if kind == "static" else arrays_[p] for kind, p in template)
    return parts[0] if single else parts


def check_getitem(shape, x_flag, index, flags, size=B, rng=RNG):
    single = not isinstance(index, tuple)
    template, dynamic, dyn_flags = _template(index, flags)
    x = batch(shape, x_flag, size, rng)

    def batched_fn(x, *arrs):
        return bt.getitem(x, _rebuild(template, arrs, single), (x_flag, flags))

    def example(x, *arrs):
        return x[_rebuild(template, arrs, single)]

    check(
        ("getitem", repr(template), x_flag, flags),
        batched_fn,
        example,
        [x, *dynamic],
        [x_flag, *dyn_flags],
        example,
    )


def ints(shape, n, size=None, rng=RNG):
    """Integer indices in ``[-n, n)`` (negative ones included), with a batch axis of ``size`` if given."""
    return rng.integers(-n, n, ((size,) if size else ()) + tuple(shape))


S = slice(None)
GETITEM_CASES = [
    # (per-example shape, x batched, index, index flags)
    ((4, 5, 3), True, 1, False),
    ((4, 5, 3), True, -1, False),
    ((4, 5), True, (), ()),
    ((4, 5), True, slice(1, None, 2), False),
    ((4, 5), True, (slice(None, None, -1), slice(-2, 0, -1)), (False, False)),
    ((4, 5, 3), True, (S, 2), (False, False)),
    ((4, 5, 3), True, (Ellipsis, 1), (False, False)),
    ((4, 5, 3), True, (None, 1, None, Ellipsis, None), (False,) * 5),
    ((4, 5), True, ints((2,), 4), False),
    ((4, 5), True, ints((B, 2), 4, B), True),
    ((4, 5), False, ints((B, 2, 3), 4, B), True),
    ((4, 5), False, ints((B,), 4, B), True),
    ((4, 5, 3), True, (S, ints((B, 2), 5, B), 1), (False, True, False)),
    ((4, 5, 3), True, (ints((B, 2), 4, B), S, ints((2,), 3)), (True, False, False)),
    ((4, 5, 3), False, (ints((B, 2), 4, B), S, ints((2,), 3)), (True, False, False)),
    ((4, 5, 3), True, (1, S, ints((B, 2), 3, B)), (False, False, True)),
    ((4, 5, 3), True, (S, 1, ints((B, 2), 3, B)), (False, False, True)),
    ((4, 5, 3), True, (S, ints((B, 2), 5, B), None, 1), (False, True, False, False)),
    ((4, 5, 3), True, (ints((2, 1), 4), ints((B, 3), 5, B)), (False, True)),
    (
        (4, 5, 3),
        True,
        (ints((B, 2), 4, B), Ellipsis, ints((2,), 3)),
        (True,) + (False,) * 2,
    ),
    (
        (4, 5),
        True,
        (ints((B, 2), 4, B), Ellipsis, ints((2,), 5)),
        (True,) + (False,) * 2,
    ),
    (
        (4, 5, 3),
        True,
        (None, ints((B,), 4, B), S, ints((B,), 3, B)),
        (False, True, False, True),
    ),
    ((4, 5, 3), True, (S, ints((B, 2), 5, B), ints((2,), 3)), (False, True, False)),
    ((4, 5, 3), True, (Ellipsis, ints((B, 2, 2), 3, B), None), (False, True, False)),
    ((3, 4), True, np.array([True, False, True]), False),
    ((3, 4), True, (S, np.array([True, False, True, True])), (False, False)),
    ((3, 4), True, np.array([[True, False, True, False]] * 3), False),
    ((3, 4), False, (np.array([True, False, True]), ints((B, 2), 4, B)), (False, True)),
]


@pytest.mark.parametrize("case", range(len(GETITEM_CASES)))
def test_getitem(case):
    shape, x_flag, index, flags = GETITEM_CASES[case]
    check_getitem(shape, x_flag, index, flags)


def test_getitem_list_index_and_batch_of_one():
    x = rand((1, 4, 3))
    got = bt.getitem(x, (S, [0, 2, 0]), (True, (False, False)))
    np.testing.assert_array_equal(got, x[:, :, [0, 2, 0]][:, :])
    np.testing.assert_array_equal(got[0], x[0][:, [0, 2, 0]])


@st.composite
def index_case(draw):
    size = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    adv = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    comps, flags, kinds = [], [], []
    for n in shape:
        kind = draw(st.sampled_from(["full", "slice", "int", "array", "batched"]))
        if kind == "full":
            part, flag = S, False
        elif kind == "slice":
            part = slice(
                draw(st.sampled_from([None, -2, -1, 0, 1, 2])),
                draw(st.sampled_from([None, -2, -1, 0, 1, 3])),
                draw(st.sampled_from([None, 1, 2, -1])),
            )
            flag = False
        elif kind == "int":
            part, flag = draw(st.integers(-n, n - 1)), False
        else:
            k = draw(st.integers(0, len(adv)))
            dims = tuple(d if draw(st.booleans()) else 1 for d in adv[len(adv) - k :])
            flag = kind == "batched"
            part = ints(dims, n, size if flag else None, rng)
        comps.append(part)
        flags.append(flag)
        kinds.append(kind)
    runs = [
        (p, q)
        for p in range(len(comps) + 1)
        for q in range(p, len(comps) + 1)
        if all(k == "full" for k in kinds[p:q])
    ]
    if draw(st.booleans()):  # an Ellipsis for a run of full slices (possibly none)
        p, q = draw(st.sampled_from(runs))
        comps[p:q], flags[p:q] = [Ellipsis], [False]
    elif draw(st.booleans()):  # trailing full slices left out
        while comps and comps[-1] is S:
            comps.pop()
            flags.pop()
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(comps)))
        comps.insert(at, None)
        flags.insert(at, False)
    x_flag = draw(st.booleans()) or not any(flags)
    if len(comps) == 1 and draw(st.booleans()):
        return size, shape, x_flag, comps[0], flags[0], rng
    return size, shape, x_flag, tuple(comps), tuple(flags), rng


@SETTINGS
@given(case=index_case())
def test_getitem_random(case):
    size, shape, x_flag, index, flags, rng = case
    check_getitem(shape, x_flag, index, flags, size, rng)


def test_getitem_batched_mask_is_an_error():
    x = rand((B, 3, 4))
    mask = x > 0
    differs = "selects a different number of elements in each example"
    with pytest.raises(ValueError, match=differs) as err:
        bt.getitem(x, mask, (True, True))
    assert "np.where(m, x, fill)" in err.value.hint
    with pytest.raises(ValueError, match=differs):
        jax.jit(lambda x: bt.getitem(x, x > 0, (True, True)))(jnp.asarray(x))
    with pytest.raises(ValueError, match=differs):
        bt.getitem(x, (S, mask[:, 0]), (True, (False, True)))


def test_no_batched_operand_is_an_error():
    with pytest.raises(ValueError, match="no operand is batched"):
        bt.matmul(np.ones((2, 2)), np.ones(2), (False, False))
    with pytest.raises(ValueError, match="neither"):
        bt.getitem(np.ones(3), np.array([0]), (False, False))
    with pytest.raises(ValueError, match="not an array"):
        bt.getitem(np.ones((2, 3)), (S, 1), (True, (True, False)))


def check_update(
    name, shape, t_flag, index, flags, value, v_flag, size=B, rng=RNG, on_jax=True
):
    single = not isinstance(index, tuple)
    template, dynamic, dyn_flags = _template(index, flags)
    target = batch(shape, t_flag, size, rng)
    fn = getattr(bt, name)
    reference = getattr(arrays, name)
    k = len(dynamic)

    def batched_fn(t, *rest):
        idx = _rebuild(template, rest[:k], single)
        return fn(t, idx, rest[k], (t_flag, flags, v_flag))

    def example(t, *rest):
        return reference(t, _rebuild(template, rest[:k], single), rest[k])

    check(
        (name, repr(template), t_flag, flags, v_flag),
        batched_fn,
        example,
        [target, *dynamic, value],
        [t_flag, *dyn_flags, v_flag],
        example,
        on_jax=on_jax,
    )


def _indexed_shape(shape, index, flags):
    parts = index if isinstance(index, tuple) else (index,)
    comp_flags = flags if isinstance(flags, tuple) else (flags,)
    first = tuple(p[0] if f else p for p, f in zip(parts, comp_flags))
    return np.zeros(shape)[first if isinstance(index, tuple) else first[0]].shape


def values_for(shape, index, flags, size=B, rng=RNG):
    """Values to write: a scalar, the indexed shape (batched or not), a broadcasting suffix."""
    indexed = _indexed_shape(shape, index, flags)
    suffix = tuple(1 if i % 2 else d for i, d in enumerate(indexed[1:]))
    return [
        (np.array(2.5), False),
        (rand((size,), rng), True),
        (rand(indexed, rng), False),
        (rand((size, *indexed), rng), True),
        (rand((size, *suffix), rng), True),
    ]


UPDATE_CASES = [
    *(
        c
        for c in GETITEM_CASES
        if not (isinstance(c[2], np.ndarray) and c[2].ndim == 2)
    ),
    # repeated indices: index_add accumulates them, index_set keeps the last write
    ((4,), True, np.array([1, 1, 3, 1]), False),
    ((4, 3), False, np.array([[0, 2, 0], [2, 2, 2]])[:B], True),
    ((4, 3), True, (np.array([[0, 0], [3, 3]])[:B], S), (True, False)),
    ((4, 3), True, (S, np.array([2, 0, 2]), None), (False, False, False)),
]


@pytest.mark.parametrize("name", ["index_set", "index_add"])
@pytest.mark.parametrize("case", range(len(UPDATE_CASES)))
def test_index_updates(name, case):
    shape, t_flag, index, flags = UPDATE_CASES[case]
    # every value on NumPy; one of them (in turn) under jax.jit, to keep compiles few
    for i, (value, v_flag) in enumerate(values_for(shape, index, flags)):
        on_jax = i == (case + 2 * (name == "index_add")) % 5
        check_update(name, shape, t_flag, index, flags, value, v_flag, on_jax=on_jax)


@pytest.mark.parametrize("name", ["index_set", "index_add"])
@SETTINGS
@given(case=index_case(), data=st.data())
def test_index_updates_random(name, case, data):
    size, shape, t_flag, index, flags, rng = case
    options = values_for(shape, index, flags, size, rng)
    value, v_flag = data.draw(st.sampled_from(options))
    if not (t_flag or v_flag) and not any(
        flags if isinstance(flags, tuple) else (flags,)
    ):
        t_flag = True
    check_update(name, shape, t_flag, index, flags, value, v_flag, size, rng)


@pytest.mark.parametrize("name", ["index_set", "index_add"])
def test_index_updates_with_masks(name):
    target = rand((B, 3, 4))
    fn, reference = getattr(bt, name), getattr(arrays, name)
    # a batched mask with a per-example scalar or full-shaped value keeps the shape: a where
    for m_flag in (True, False):
        mask = target > 0 if m_flag else target[0] > 0
        full = [(rand((B, 3, 4)), True), (rand((3, 4)), False)]
        for value, v_flag in [
            (np.array(2.5), False),
            (rand((B,)), True),
            *(full if name == "index_set" else []),
        ]:
            check(
                (name, "mask", m_flag, v_flag),
                lambda t, m, v: fn(t, m, v, (True, m_flag, v_flag)),
                reference,
                [target, mask, value],
                [True, m_flag, v_flag],
            )
        rows = mask[..., 0]  # a mask over the leading axis
        check(
            (name, "rows", m_flag),
            lambda t, m, v: fn(t, m, v, (True, m_flag, True)),
            reference,
            [target, rows, rand((B,))],
            [True, m_flag, True],
        )
    # an unbatched (concrete) mask with a value per selected element
    mask = np.array([True, False, True])
    check_update(name, (3, 4), True, mask, False, rand((B, 2, 4)), True)
    with pytest.raises(ValueError, match="batched boolean mask"):
        fn(target, target[..., 0] > 0, rand((B, 2, 4)), (True, True, True))
    if (
        name == "index_add"
    ):  # NumPy's ``x[mask] += v`` takes no full-shaped ``v`` either
        with pytest.raises(ValueError, match="batched boolean mask"):
            fn(target, target > 0, rand((B, 3, 4)), (True, True, True))


def test_index_set_value_with_leading_unit_axes_numpy():
    # NumPy drops a value's leading size-1 axes (``x[1:3] = ones((1, 2))``; JAX refuses)
    target = rand((B, 4))
    value = rand((1, 2))
    got = bt.index_set(target, slice(1, 3), value, (True, False, False))
    want = np.stack([arrays.index_set(t, slice(1, 3), value) for t in target])
    np.testing.assert_array_equal(got, want)


def test_index_add_accumulates_and_index_set_keeps_the_last_write():
    target = np.zeros((2, 3))
    index = np.array([[1, 1, 1], [0, 2, 0]])
    value = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    flags = (True, True, True)
    added = bt.index_add(target, index, value, flags)
    np.testing.assert_array_equal(added, [[0, 6, 0], [10, 0, 5]])
    written = bt.index_set(target, index, value, flags)
    np.testing.assert_array_equal(written, [[0, 3, 0], [6, 0, 5]])
    jitted = jax.jit(lambda t, i, v: bt.index_set(t, i, v, flags))
    np.testing.assert_array_equal(jitted(target, index, value), written)
    assert np.all(target == 0)  # inputs are not written to


# --------------------------------------------------------------------------- linear algebra


def square(shape, rng=RNG):
    """Well-conditioned square matrices of ``shape`` (``(..., n, n)``)."""
    return rand(shape, rng) + 4 * np.eye(shape[-1])


SOLVE_CASES = [
    ((3, 3), (3,)),
    ((3, 3), (3, 2)),
    ((2, 3, 3), (3,)),
    ((2, 3, 3), (3, 1)),
    ((3, 3), (2, 3, 4)),
    ((1, 3, 3), (2, 3, 2)),
    ((2, 3, 3), (2, 3, 2)),
    ((1, 1), (1,)),
]


@pytest.mark.parametrize("flags", FLAG_PAIRS)
@pytest.mark.parametrize("a_shape,b_shape", SOLVE_CASES)
def test_solve(a_shape, b_shape, flags):
    a = square(((B,) if flags[0] else ()) + a_shape)
    args = [a, batch(b_shape, flags[1])]
    check(
        ("solve", flags),
        lambda a, b: bt.solve(a, b, flags),
        np.linalg.solve,
        args,
        flags,
        jnp.linalg.solve,
        rtol=1e-4,
        on_jax=FLAG_PAIRS.index(flags) == SOLVE_CASES.index((a_shape, b_shape)) % 3,
    )


@settings(SETTINGS, max_examples=10)
@given(
    size=st.integers(1, 3),
    n=st.integers(1, 3),
    stack=st.lists(st.integers(1, 2), max_size=2),
    b_rank=st.integers(1, 3),
    flags=st.sampled_from(FLAG_PAIRS),
    seed=st.integers(0, 2**16),
)
def test_solve_random(size, n, stack, b_rank, flags, seed):
    rng = np.random.default_rng(seed)
    a_shape = (*stack, n, n)
    b_shape = (n,) if b_rank == 1 else (*stack[: b_rank - 2], n, 2)
    a = square(((size,) if flags[0] else ()) + a_shape, rng)
    args = [a, batch(b_shape, flags[1], size, rng)]
    check(
        ("solve", flags),
        lambda a, b: bt.solve(a, b, flags),
        np.linalg.solve,
        args,
        flags,
        jnp.linalg.solve,
        rtol=1e-4,
    )


NORM_CASES = [
    ((), None, None),
    ((3,), None, None),
    ((2, 3), None, None),
    ((2, 3, 2), None, None),
    *(((3,), o, None) for o in (1, 2, np.inf, -np.inf, 0, 3, -1)),
    *(((3,), o, a) for o in (None, 1, 2) for a in (0, -1, (0,))),
    *(((2, 3), o, None) for o in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)),
    *(((2, 3), o, (1, 0)) for o in ("fro", 1, 2, np.inf)),
    *(((2, 3), o, a) for o in (None, 1, np.inf) for a in (0, -1)),
    *(((2, 3, 2), o, a) for o in (None, "fro", 1, -2) for a in ((0, 2), (-1, 0))),
    ((2, 3, 2), 2, 1),
]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape,ord,axis", NORM_CASES)
def test_norm(shape, ord, axis, keepdims):
    x = batch(shape, True)
    check(
        ("norm", repr(ord), repr(axis), keepdims),
        lambda x: bt.norm(x, ord, axis, keepdims),
        lambda x: np.linalg.norm(x, ord, axis, keepdims),
        [x],
        [True],
        lambda x: jnp.linalg.norm(x, ord, axis, keepdims),
        rtol=1e-4,
        on_jax=keepdims == bool(NORM_CASES.index((shape, ord, axis)) % 2),
    )


def test_norm_of_an_improper_rank_is_an_error():
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        bt.norm(rand((B, 2, 2, 2)), ord=2)


# --------------------------------------------------------------------------- control flow

Pair = namedtuple("Pair", "left right")


@pytest.mark.parametrize("size", [1, 3])
def test_select(size):
    def tree():
        return {
            "a": (rand((size,)), [rand((size, 2, 1)), rand((size, 3))]),
            "b": Pair(rand((size, 1)), None),
        }

    on_true, on_false = tree(), tree()
    pred = np.arange(size) % 2 == 0

    def leaves(t):
        return list(rt.tree_leaves(t))

    got = bt.select(pred, on_true, on_false)
    assert isinstance(got["b"], Pair) and got["b"].right is None
    assert isinstance(got["a"][1], list)
    for g, t, f in zip(leaves(got), leaves(on_true), leaves(on_false)):
        want = np.stack([t[i] if pred[i] else f[i] for i in range(size)])
        np.testing.assert_array_equal(g, want)
    jitted = jax.jit(bt.select)(pred, on_true, on_false)
    for g, w in zip(leaves(jitted), leaves(got)):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    # values of different structures on the two paths: the located refusal, with the way out
    with pytest.raises(rt.located.Refusal, match="different structures"):
        bt.select(pred, (rand((size,)),), (rand((size,)), rand((size,))))


def test_any_example():
    assert bool(bt.any_example(np.array([False, True])))
    assert not bool(bt.any_example(np.array([False])))
    assert bool(jax.jit(bt.any_example)(jnp.array([True, False])))


def test_exported_as_a_module():
    assert rt.batching is bt


@pytest.mark.parametrize("g_batched", [True, False])
@pytest.mark.parametrize(
    "example, g_example",
    [((2,), (2,)), ((3, 2), (3, 2)), ((1, 2), (3, 2))],
    ids=["list", "nested", "array"],
)
def test_array_vjp_transpose_is_its_adjoint(g_batched, example, g_example):
    """``<array_vjp(g), c> == <g, array_vjp_transpose(c)>``: the pair's rules transpose each other (lists of
    batched items as ``jnp.array([t, x])`` makes them, or an array ``g`` is summed down to).
    """
    from s2s.runtime import batched_shape_vjps as shape_vjps

    rng, size = np.random.default_rng(0), 4
    batched = rng.normal(size=(size, *example))
    data = batched
    if example == g_example and len(example) == 1:  # a list of per-example values
        data = [batched[:, i] for i in range(example[0])]
    elif example == g_example:  # a nested one
        data = [
            [batched[:, i, j] for j in range(example[1])] for i in range(example[0])
        ]
    g = rng.normal(size=((size,) if g_batched else ()) + g_example)
    forth = shape_vjps.array_vjp(g, data, (g_batched, True))
    ct = jax.tree_util.tree_map(lambda leaf: rng.normal(size=np.shape(leaf)), forth)
    back = shape_vjps.array_vjp_transpose(ct, g, data, (g_batched, True))
    assert np.shape(back) == np.shape(g)
    left = sum(
        np.sum(a * b)
        for a, b in zip(jax.tree_util.tree_leaves(forth), jax.tree_util.tree_leaves(ct))
    )
    np.testing.assert_allclose(left, np.sum(g * back), rtol=1e-12)
