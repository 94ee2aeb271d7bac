from numpy import concatenate, stack, sum as total


def f(x, y):
    first = x[0]
    cols = x[:, 1:]
    pair = (first, y)
    a, b = pair
    joined = concatenate([a * b, cols[-1]], axis=0)
    return total(stack([joined, joined ** 2])) + x[1, 2]


def example(rng):
    return rng.normal(size=(3, 3)), rng.normal(size=(3,))
