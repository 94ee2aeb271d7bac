"""Calls of NumPy's and SciPy's functions that s2s has no op for, on values known when the code is traced
(``frontend/host_calls.py``): quadrature nodes made inside the function, as scientific code writes it.
"""

import numpy as np
import scipy.integrate


def _gauss_legendre(f, a, b, n=6):
    x, w = np.polynomial.legendre.leggauss(n)
    t = 0.5 * (b - a) * x + 0.5 * (b + a)
    return 0.5 * (b - a) * np.sum(w * f(t))


def truncated_moment(theta):
    """The second moment of an exponential density on ``[0, theta[1]]`` by Gauss-Legendre quadrature."""
    rate, upper = theta[0], theta[1]
    mass = _gauss_legendre(lambda t: np.exp(-rate * t), 0.0, upper)
    second = _gauss_legendre(lambda t: t**2 * np.exp(-rate * t), 0.0, upper, n=8)
    return second / mass


def hermite_expectation(theta, n=5):
    """E[tanh(mu + sigma z)] for a standard normal ``z``, by Gauss-Hermite nodes."""
    z, w = np.polynomial.hermite_e.hermegauss(n)
    return np.sum(w * np.tanh(theta[0] + theta[1] * z)) / np.sqrt(2 * np.pi)


def inputs_truncated_moment():
    return (np.array([0.7, 1.3]),)


def inputs_hermite_expectation():
    return (np.array([0.2, 0.9]),)


PROGRAMS = ["truncated_moment", "hermite_expectation"]


def on_the_differentiated_path(theta):
    """``polyval`` of the parameters: no derivative rule, never a zero."""
    return np.polynomial.polynomial.polyval(0.5, theta) ** 2


def count_from_data(theta, n):
    """The count of nodes is an argument: traced under ``jax.jit``, known on NumPy."""
    x, w = np.polynomial.legendre.leggauss(n)
    return np.sum(w * np.exp(theta[0] * x))


def _square(t):
    return t**2


def given_a_function(theta):
    """``quad`` calls a function: s2s cannot see what it reads, so it does not run it."""
    value, _ = scipy.integrate.quad(_square, 0.0, 1.0)
    return value * np.sum(theta)
