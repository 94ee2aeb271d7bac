"""``s2s.stop_gradient``: a value that takes part in the computation but passes no derivative.

In ``x * stop_gradient(y)`` the gradient with respect to ``x`` is ``y``, and with
respect to ``y`` it is exactly zero: the generated module computes no
cotangent for ``y`` at all. Run ``python examples/stop_gradient.py`` (or
``... numpy``).
"""

import sys

import numpy as np

import s2s


def product(x, y):
    return np.sum(x * s2s.stop_gradient(y))


def main(backend="xla"):
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([4.0, 5.0, 6.0])
    product_grad = s2s.grad(product, argnums=(0, 1), backend=backend)
    print(product_grad.source)
    dx, dy = product_grad(x, y)
    print("grad wrt x:", dx)
    print("grad wrt y:", dy)
    np.testing.assert_array_equal(dx, y)
    np.testing.assert_array_equal(dy, np.zeros(3))
    return {"dx": dx, "dy": dy}


if __name__ == "__main__":
    main(*sys.argv[1:])
