"""numpy.linalg and scipy.linalg functions as users call them: flags held in variables, and the limits JAX
has (full SVDs of non-square matrices, QR of wide ones) as clear errors at the user's line.
"""

import importlib.util
import textwrap

import jax
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
import pytest

import s2s

SOURCE = """
import numpy as np
import scipy.linalg


def cho_flag(c, b, lower):
    return np.sum(scipy.linalg.cho_solve((c, lower), b))


def cho_held(c, b):
    factor = (c, True)
    return np.sum(scipy.linalg.cho_solve(factor, b))


def gp_lower(k):
    cf = scipy.linalg.cho_factor(k @ k.T + 3 * np.eye(3), lower=True)
    return np.sum(scipy.linalg.cho_solve(cf, np.arange(1.0, 4.0))) + np.sum(
        np.log(np.diag(cf[0]))
    )


def gp_upper(k):
    cf = scipy.linalg.cho_factor(k @ k.T + 3 * np.eye(3))
    return np.sum(scipy.linalg.cho_solve(cf, np.arange(1.0, 4.0))) + np.sum(
        np.log(np.diag(cf[0]))
    )


def full_svd(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(u) + np.sum(s)


def wide_qr(a):
    q, r = np.linalg.qr(a)
    return np.sum(r)


def nearest(x):
    return np.quantile(x, 0.5, method="nearest")
"""


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    path = tmp_path_factory.mktemp("linalg") / "linalg_user.py"
    path.write_text(textwrap.dedent(SOURCE))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


C = np.eye(3) * 3.0 + 0.1
B = np.arange(1.0, 4.0)


@pytest.mark.parametrize("lower", [True, False])
def test_a_cho_solve_flag_held_in_a_variable_is_a_value(m, lower):
    def twin(c):
        return jnp.sum(jax.scipy.linalg.cho_solve((c, lower), B))

    got = s2s.grad(m.cho_flag)(C, B, lower)
    np.testing.assert_allclose(got, jax.grad(twin)(C), rtol=1e-6)


def test_a_factor_tuple_held_in_a_variable_is_read_as_its_display(m):
    def twin(c):
        return jnp.sum(jax.scipy.linalg.cho_solve((c, True), B))

    np.testing.assert_allclose(s2s.grad(m.cho_held)(C, B), jax.grad(twin)(C), rtol=1e-6)


@pytest.mark.parametrize("lower", [True, False])
def test_cho_factor_then_cho_solve_as_the_jax_docs_write_them(m, lower):
    """``cf = cho_factor(K, lower=...)`` then ``cho_solve(cf, y)`` and ``cf[0]``'s diagonal: a GP's
    likelihood, against JAX."""

    def twin(k):
        cf = jax.scipy.linalg.cho_factor(k @ k.T + 3 * jnp.eye(3), lower=lower)
        return jnp.sum(jax.scipy.linalg.cho_solve(cf, B)) + jnp.sum(
            jnp.log(jnp.diag(cf[0]))
        )

    for backend in ("numpy", "xla"):
        got = s2s.grad(m.gp_lower if lower else m.gp_upper, backend=backend)(C)
        np.testing.assert_allclose(got, jax.grad(twin)(C), rtol=1e-6)


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("full_svd", (np.ones((3, 2)),), "full_matrices=True of a 3x2 matrix"),
        (
            "wide_qr",
            (np.ones((2, 3)),),
            "np.linalg.qr\\(mode='reduced'\\) of a 2x3 matrix",
        ),
        ("nearest", (np.ones(4),), "quantile method 'nearest'"),
    ],
)
def test_what_jax_does_not_differentiate_is_named_at_the_users_line(
    m, name, args, message
):
    with pytest.raises(Exception, match=message) as info:
        s2s.grad(getattr(m, name))(*args)
    assert "linalg_user.py" in str(info.value)
