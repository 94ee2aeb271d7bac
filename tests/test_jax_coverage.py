"""``python -m s2s.rules --coverage``: s2s measured against the functions JAX differentiates, per namespace.

The measure is computed (``s2s/rules/coverage.py`` probes every public function), so these tests
check that it runs, that the functions users write most (the ones named by the issue that asked for
JAX's vocabulary) are covered, and that coverage only grows.
"""

import io

import pytest

from s2s.rules.__main__ import main
from s2s.rules.coverage import known, namespaces

# namespace -> functions that must be covered (each also has an op-table case, tested in every mode)
NAMED = {
    "jax.numpy": (
        "sort argsort argmax argmin convolve atleast_1d atleast_2d atleast_3d diff take_along_axis "
        "nansum nanmean cross kron polyval sinc logaddexp2 heaviside trapezoid median quantile "
        "average cov corrcoef cbrt exp2 fmax fmin vecdot matvec rot90 diagonal"
    ),
    "jax.numpy.linalg": "cholesky slogdet eigh svd qr pinv det inv solve norm lstsq svdvals eigvalsh "
    "matrix_power",
    "jax.nn": "relu relu6 sigmoid log_sigmoid softplus silu swish gelu elu celu selu leaky_relu glu "
    "softmax log_softmax logsumexp one_hot standardize",
    "jax.scipy.special": "logsumexp erf erfc erfinv gammaln digamma xlogy xlog1py expit logit "
    "log_ndtr ndtr entr gamma beta betaln i0e i1e kl_div rel_entr softmax log_softmax",
}
# covered / differentiable when this test was written: a drop is a regression
FLOOR = {
    "jax.numpy": 165,
    "jax.numpy.linalg": 24,
    "jax.nn": 29,
    "jax.scipy.special": 30,
}


@pytest.fixture(scope="module")
def measured():
    return {ns.name: ns for ns in namespaces()}


@pytest.mark.parametrize("namespace", sorted(NAMED))
def test_the_functions_users_write_are_covered(namespace):
    missing = [name for name in NAMED[namespace].split() if not known(namespace, name)]
    assert not missing, f"{namespace}: not covered: {missing}"


@pytest.mark.parametrize("namespace", sorted(FLOOR))
def test_coverage_does_not_shrink(measured, namespace):
    assert len(measured[namespace].covered) >= FLOOR[namespace]


def test_the_report_names_each_namespace_and_what_is_missing(measured):
    out = io.StringIO()
    main(out, argv=["--coverage"])
    text = out.getvalue()
    for ns in measured.values():
        assert f"  {ns.name}: {len(ns.covered)} of {ns.differentiable} (" in text
        for name in ns.missing:
            assert name in text
    # no probe crashes the process (text and file functions are not probed)
    assert "array_repr" not in text
