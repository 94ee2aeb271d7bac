"""Elementwise ops: each body returns the partial derivative(s) of ``ans``.

Reverse mode is ``unbroadcast(g * partial, arg)``; at kinks and ties the
partials follow JAX (``abs`` has slope 1 at 0; ``maximum``/``minimum``/``clip``
split ties evenly).
"""

import numpy as xp

from s2s import runtime as rt

from .registry import decompose, elementwise


@elementwise
def add(x1, x2):
    return 1, 1


@elementwise
def subtract(x1, x2):
    return 1, -1


@elementwise
def multiply(x1, x2):
    return x2, x1


@elementwise
def divide(x1, x2):
    # (``-(x1 / ...)``: a boolean numerator, ``(u < p) / p``, has no negative)
    return 1 / x2, -(x1 / x2**2)


@elementwise
def power(x1, x2, *, ans):
    # x ** 0 has slope 0, also at x = 0 where 0 * 0 ** -1 is nan (JAX: for integer exponents; for a float
    # exponent JAX gives nan there); log of 0 is replaced by log of 1, so 0 ** y has no slope in y (JAX);
    # an integer exponent has none at all (JAX: float0), also where a loop gives its counter a zero tangent
    # (0 * log(x) would be nan for a negative x)
    return (
        xp.where(x2 == 0, 0.0, x2 * x1 ** (x2 - 1)),
        xp.log(xp.where((x1 == 0) | rt.integer_valued(x2), 1, x1)) * ans,
    )


@elementwise
def remainder(x1, x2):
    return 1, -xp.floor(x1 / x2)


@elementwise
def negative(x):
    return -1


@elementwise
def positive(x):
    return 1


@elementwise
def abs_(x):
    return xp.where(x >= 0, 1.0, -1.0)


@elementwise
def exp(x, *, ans):
    return ans


@elementwise
def expm1(x, *, ans):
    return ans + 1


@elementwise
def log(x):
    return 1 / x


@elementwise
def log1p(x):
    return 1 / (1 + x)


@elementwise
def log2(x):
    return 1 / (x * xp.log(2.0))


@elementwise
def log10(x):
    return 1 / (x * xp.log(10.0))


@elementwise
def sqrt(x, *, ans):
    return 0.5 / ans


@elementwise
def square(x):
    return 2 * x


@elementwise
def reciprocal(x, *, ans):
    return -(ans**2)


@elementwise
def sin(x):
    return xp.cos(x)


@elementwise
def cos(x):
    return -xp.sin(x)


@elementwise
def tan(x, *, ans):
    return 1 + ans**2


@elementwise
def arcsin(x):
    return 1 / xp.sqrt(1 - x**2)


@elementwise
def arccos(x):
    return -1 / xp.sqrt(1 - x**2)


@elementwise
def arctan(x):
    return 1 / (1 + x**2)


@elementwise
def arctan2(x1, x2):
    return x2 / (x1**2 + x2**2), -x1 / (x1**2 + x2**2)


@elementwise
def sinh(x):
    return xp.cosh(x)


@elementwise
def cosh(x):
    return xp.sinh(x)


@elementwise
def tanh(x, *, ans):
    return 1 - ans**2


@elementwise
def arcsinh(x):
    return 1 / xp.sqrt(x**2 + 1)


@elementwise
def arccosh(x):
    return 1 / xp.sqrt(x**2 - 1)


@elementwise
def arctanh(x):
    return 1 / (1 - x**2)


@elementwise
def maximum(x1, x2):
    return rt.step(x1, x2), rt.step(x2, x1)


@elementwise
def minimum(x1, x2):
    return rt.step(x2, x1), rt.step(x1, x2)


@elementwise
def where(condition, x, y):
    return None, rt.selects(condition), rt.selects(xp.logical_not(condition))


@elementwise
def clip(a, a_min=None, a_max=None):
    # JAX's clip is minimum(maximum(a, a_min), a_max): ties split evenly.
    return (
        rt.clip_partial(a, a_min, a_max, 0),
        rt.clip_partial(a, a_min, a_max, 1),
        rt.clip_partial(a, a_min, a_max, 2),
    )


@elementwise
def logaddexp(x1, x2, *, ans):
    return xp.exp(x1 - ans), xp.exp(x2 - ans)


@decompose
def hypot(x1, x2):
    # JAX's formula, so its derivative is JAX's at the origin too (0.5 each: ``abs`` and ``maximum``'s ties)
    a, b = xp.abs(x1), xp.abs(x2)
    big, small = xp.maximum(a, b), xp.minimum(a, b)
    ratio = small / xp.where(big == 0, xp.ones_like(big), big)
    r = xp.where(big == 0, big, big * xp.sqrt(1 + ratio**2))
    return xp.where(xp.isinf(a) | xp.isinf(b), xp.inf, r)


@elementwise
def cbrt(x, *, ans):
    return 1 / (3 * ans**2)


@elementwise
def exp2(x, *, ans):
    return ans * xp.log(2.0)


@elementwise
def deg2rad(x):
    return xp.pi / 180


@elementwise
def rad2deg(x):
    return 180 / xp.pi


@elementwise
def logaddexp2(x1, x2, *, ans):
    return xp.exp2(x1 - ans), xp.exp2(x2 - ans)


@elementwise
def float_power(x1, x2, *, ans):
    return (
        xp.where(x2 == 0, 0.0, x2 * x1 ** (x2 - 1)),
        xp.log(xp.where(x1 == 0, 1, x1)) * ans,
    )


@elementwise
def fmod(x1, x2):
    return 1, -xp.trunc(x1 / x2)


@elementwise
def fmax(x1, x2):
    # JAX: where(x1 > x2 | isnan(x2), x1, x2): a tie goes to x2
    return (
        xp.logical_or(x1 > x2, xp.isnan(x2)),
        xp.logical_not(xp.logical_or(x1 > x2, xp.isnan(x2))),
    )


@elementwise
def fmin(x1, x2):
    return (
        xp.logical_or(x1 < x2, xp.isnan(x2)),
        xp.logical_not(xp.logical_or(x1 < x2, xp.isnan(x2))),
    )


@elementwise
def copysign(x1, x2):
    # JAX: where(signbit(x2), -abs(x1), abs(x1)); abs has slope 1 at 0; no slope in x2
    return xp.where(x1 >= 0, 1.0, -1.0) * xp.where(xp.signbit(x2), -1.0, 1.0), 0


@elementwise
def heaviside(x1, x2):
    # 0 below zero, 1 above, x2 at zero
    return 0, x1 == 0


@elementwise
def ldexp(x1, x2):
    return xp.exp2(x2), None


@elementwise
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    return xp.isfinite(x)


# zero for real values; a complex value given to them is refused where it is made (``activity``), so a
# derivative must reach it: they are no ``nondiff`` ops, whose zero would hold for real values only
@elementwise
def imag(val):
    return 0


@elementwise
def angle(z, deg=False):
    return 0
