"""The smallest example: an elementwise polynomial summed to a scalar.

The gradient is ``1 + 2 x + 3 x**2``; the benchmark uses this function on a
large array to measure pure elementwise throughput.
"""

import numpy as np


def f(x):
    return np.sum(x + x * x + x * x * x)


if __name__ == "__main__":
    import s2s

    x = np.linspace(-1.0, 1.0, 5)
    f_grad = s2s.grad(f)
    print(f_grad.source)
    print(f_grad(x))
    print(1 + 2 * x + 3 * x**2)
