"""var/std with NumPy's full signature: where= (over the selected elements; an empty selection
gives nan), NumPy 2's mean=, the positional order (out before ddof) and out= refused by name.
Values against NumPy eagerly and compiled (the mask a constant or a traced argument), the
gradient with a mask against float64 central differences. Complex values: test_complex.py."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

RNG = np.random.default_rng(31)
X = RNG.standard_normal((3, 5))
MASK = RNG.random((3, 5)) > 0.3
MASK[1] = False  # an empty selection: nan, as NumPy's
MASK[2, :2] = True
CASES = [
    ("var", {"where": MASK}),
    ("std", {"where": MASK, "axis": 1, "ddof": 1}),
    ("var", {"where": MASK[2], "axis": 0, "keepdims": True}),  # a broadcast mask
    ("std", {"mean": X.mean(1, keepdims=True), "axis": 1}),
    ("var", {"where": MASK, "axis": 1, "dtype": np.float32}),
    ("std", {"where": True, "axis": 0}),
]


def _run(xp, x, mask):
    masked = [
        (name, {**kw, "where": mask} if kw.get("where") is MASK else kw) for name, kw in CASES
    ]
    return [getattr(xp, name)(x, **kw) for name, kw in masked] + [x.var(axis=1, where=mask)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, for the empty selection
def test_where_and_mean_match_numpy(device):
    want = _run(np, X, MASK)
    eager = _run(tnp, X, MASK)
    compiled = tj.device_get(tj.jit(lambda x, m: _run(tnp, x, m), device=device)(X, MASK))
    for i, ref in enumerate(want):
        for got in (np.asarray(eager[i]), np.asarray(compiled[i])):
            assert got.dtype == ref.dtype and got.shape == ref.shape, (i, got.dtype, got.shape)
            np.testing.assert_allclose(got, ref, rtol=4 * np.finfo(ref.dtype).eps, err_msg=str(i))


def test_gradient_with_where_matches_finite_differences():
    def loss(xp, x):
        return xp.sum(xp.var(x, axis=1, where=MASK, ddof=1)[::2] * np.array([1.0, 2.0]))

    got = tj.grad(lambda x: loss(tnp, x))(X)  # the empty row's nan stays out: zeros there
    np.testing.assert_allclose(got, numeric_grad(lambda x: loss(np, x), X), rtol=1e-6, atol=1e-9)


def test_numpys_positional_order_and_out():
    np.testing.assert_allclose(tnp.var(X, 1, None, None, 1), np.var(X, 1, None, None, 1))
    np.testing.assert_allclose(
        tnp.std(X, 0, None, None, 1, True), np.std(X, 0, None, None, 1, True)
    )
    with pytest.raises(tj.errors.UnsupportedError, match="std.*out="):
        tnp.std(X, out=np.empty(()))


def test_second_derivative_is_the_centring_projection():
    # var(x[mask], ddof) = |P x|**2 / (n - ddof), P = I - 11'/n on the selected elements: its
    # Hessian is 2 P / (n - ddof) there and zero elsewhere (jacfwd over grad, eager and jit)
    x, mask, ddof = X[0], MASK[0] | (np.arange(5) < 2), 1
    n = int(mask.sum())
    want = np.zeros((5, 5))
    want[np.ix_(mask, mask)] = 2 * (np.eye(n) - 1 / n) / (n - ddof)
    hess = tj.hessian(lambda x: tnp.var(x, where=mask, ddof=ddof))
    np.testing.assert_allclose(hess(x), want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tj.jit(hess)(x), want, rtol=1e-12, atol=1e-15)
