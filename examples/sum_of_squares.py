"""The first gradients: ``grad``, ``argnums`` and ``value_and_grad(..., has_aux=True)``.

Run ``python examples/sum_of_squares.py`` (or ``... numpy`` for the eager NumPy
backend) to print each generated gradient module and check its numbers
against the closed forms.
"""

import sys

import numpy as np

import s2s


def sum_of_squares(x):
    return np.sum(x**2)


def sum_squared_error(x, y):
    return np.sum((x - y) ** 2)


def loss_and_predictions(w, x, y):
    """Mean squared error of a linear model, and its predictions (an auxiliary output)."""
    predictions = x @ w
    return np.mean((predictions - y) ** 2), predictions


def main(backend="xla"):
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([0.5, 2.5, 2.0])

    # d/dx sum(x**2) = 2 x
    sum_of_squares_grad = s2s.grad(sum_of_squares, backend=backend)
    print(sum_of_squares_grad.source)
    dx = sum_of_squares_grad(x)
    print("grad sum_of_squares:", dx)
    np.testing.assert_allclose(dx, 2 * x)

    # argnums=(0, 1): a tuple of gradients, 2 (x - y) and -2 (x - y)
    sse_grad = s2s.grad(sum_squared_error, argnums=(0, 1), backend=backend)
    print(sse_grad.source)
    dx_sse, dy_sse = sse_grad(x, y)
    print("grad sum_squared_error:", dx_sse, dy_sse)
    np.testing.assert_allclose(dx_sse, 2 * (x - y))
    np.testing.assert_allclose(dy_sse, -2 * (x - y))

    # has_aux=True: the function returns (loss, aux); the result is ((loss, aux), grad)
    rng = np.random.default_rng(0)
    inputs, targets = rng.standard_normal((4, 3)), rng.standard_normal(4)
    loss_value_and_grad = s2s.value_and_grad(
        loss_and_predictions, has_aux=True, backend=backend
    )
    print(loss_value_and_grad.source)
    (loss, predictions), dw = loss_value_and_grad(x, inputs, targets)
    print("loss:", loss, "predictions:", predictions, "grad:", dw)
    np.testing.assert_allclose(predictions, inputs @ x, rtol=1e-6)
    np.testing.assert_allclose(loss, np.mean((inputs @ x - targets) ** 2), rtol=1e-6)
    np.testing.assert_allclose(
        dw, 2 * inputs.T @ (inputs @ x - targets) / len(targets), rtol=1e-5
    )
    return {
        "grad": dx,
        "sse_grad": (dx_sse, dy_sse),
        "loss": loss,
        "predictions": predictions,
        "loss_grad": dw,
    }


if __name__ == "__main__":
    main(*sys.argv[1:])
