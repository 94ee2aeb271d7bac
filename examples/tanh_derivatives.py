"""Higher derivatives by transforming generated code again: ``s2s.grad(s2s.grad(f))``.

Each ``s2s.grad`` reads the module the previous one generated, so the second
and third derivatives of ``tanh`` are again readable NumPy. With
``t = tanh(x)``, the closed forms are

    tanh'   = 1 - t**2
    tanh''  = -2 t (1 - t**2)
    tanh''' = (1 - t**2) (6 t**2 - 2)

Run ``python examples/tanh_derivatives.py`` (or ``... numpy``).
"""

import sys

import numpy as np

import s2s


def f(x):
    return np.tanh(x)


def main(backend="xla"):
    x = 0.5
    d1 = s2s.grad(f, backend=backend)
    d2 = s2s.grad(d1, backend=backend)
    d3 = s2s.grad(d2, backend=backend)
    for derivative in (d1, d2, d3):
        print(derivative.source)

    t = np.tanh(x)
    closed_forms = (1 - t**2, -2 * t * (1 - t**2), (1 - t**2) * (6 * t**2 - 2))
    values = (d1(x), d2(x), d3(x))
    for order, (value, expected) in enumerate(zip(values, closed_forms), start=1):
        print(f"order {order}: s2s {float(value):+.15f}   closed form {expected:+.15f}")
        # float32 unless float64 is enabled in JAX (the NumPy backend computes in float64)
        rtol = 1e-12 if np.asarray(value).dtype == np.float64 else 1e-5
        np.testing.assert_allclose(value, expected, rtol=rtol)
    return {"derivatives": values, "closed_forms": closed_forms}


if __name__ == "__main__":
    main(*sys.argv[1:])
