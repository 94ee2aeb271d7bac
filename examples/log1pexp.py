"""``s2s.custom_jvp``: a derivative rule that stays finite where the derived one does not.

``log(1 + exp(x))`` at ``x = 100`` in float32: ``exp(x)`` overflows to inf, and
the derived gradient ``exp(x) / (1 + exp(x))`` is ``inf / inf = nan``. The rule
``1 - 1 / (1 + exp(x))`` gives 1.0 (``1 / inf = 0``). s2s calls the rule in the
generated gradient (reverse mode transposes the forward-mode rule).
Run ``python examples/log1pexp.py`` (or ``... numpy``).
"""

import sys

import numpy as np

import s2s


def log1pexp_plain(x):
    return np.log(1.0 + np.exp(x))


@s2s.custom_jvp
def log1pexp(x):
    return np.log(1.0 + np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,) = primals
    (x_dot,) = tangents
    ans = log1pexp(x)
    ans_dot = (1 - 1 / (1 + np.exp(x))) * x_dot
    return ans, ans_dot


def main(backend="xla"):
    plain_grad = s2s.grad(log1pexp_plain, backend=backend)
    custom_grad = s2s.grad(log1pexp, backend=backend)
    print(plain_grad.source)
    print(custom_grad.source)

    # Where exp(x) is finite both agree with the closed form sigmoid(x).
    for x in np.array([-3.0, 0.0, 3.0], dtype=np.float32):
        plain, custom, sigmoid = plain_grad(x), custom_grad(x), 1 / (1 + np.exp(-x))
        print(
            f"x = {x}: plain {float(plain):.7g}, custom rule {float(custom):.7g}, sigmoid {sigmoid:.7g}"
        )
        np.testing.assert_allclose(plain, sigmoid, rtol=1e-5)
        np.testing.assert_allclose(custom, sigmoid, rtol=1e-5)

    x = np.float32(100.0)
    # exp(100) overflows float32 (NumPy backend)
    with np.errstate(over="ignore", invalid="ignore"):
        plain, custom = plain_grad(x), custom_grad(x)
    print(f"x = {x} (float32): plain {float(plain)}, custom rule {float(custom)}")
    assert np.asarray(custom).dtype == np.float32 and custom == 1.0
    assert np.isnan(plain)
    return {"plain": plain, "custom": custom}


if __name__ == "__main__":
    main(*sys.argv[1:])
