"""float32 softmax and logsumexp at most NumPy's error (issue 13), on every device.

softmax: the rounding of `x - max` (up to 2^-18 relative where |x - max| ~ 100) is folded
back into exp (nn._exp_shifted); NumPy's stable float32 formula keeps it (~67 ulps).
logsumexp: log(sum) + max is added in float64 and rounded once. The oracles are float64
NumPy (tools/ulp_report.py measures the worst cases over many rows).
"""

from __future__ import annotations

import numpy as np

import tracejit as tj

F32 = np.float32


def _ulps(got, exact) -> np.ndarray:
    """|got - exact| in float32 ulps of exact (normal results)."""
    _, e = np.frexp(np.asarray(exact, np.float64))
    return np.abs(np.asarray(got, np.float64) - exact) / np.ldexp(1.0, e - 24)


def _softmax64(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def test_softmax_keeps_the_rounding_of_the_shift(device):
    # Rows [m, m - 60..85]: x - m rounds by up to 2^-19 relative, 32 ulps of exp(x - m).
    rng = np.random.default_rng(0)
    m = rng.uniform(10.0, 50.0, (2048, 1))
    x = np.concatenate([m, m - rng.uniform(60.0, 85.0, (2048, 3))], axis=1).astype(F32)
    got = np.asarray(tj.device_get(tj.jit(lambda a: tj.nn.softmax(a), device=device)(x)))
    exact = _softmax64(x.astype(np.float64))
    err = _ulps(got, exact)
    # before: 30-64 ulps (NumPy's float32 formula the same); exp, the sum and the division
    # leave a few (CUDA's expf: 2 ulp)
    assert err.max() <= 6.0, f"{err.max():.2f} ulps at {np.unravel_index(err.argmax(), err.shape)}"


def test_softmax_specials_as_the_shifted_formula(device):
    # A row whose max is not finite shifts by 0 (nn._shifted): +inf gives nan / 0 as
    # exp(x) / sum(exp(x)) does; -inf entries give 0; a NaN row is NaN.
    x = np.array(
        [[np.inf, 1.0, 2.0], [-np.inf, 0.0, 3.0], [np.nan, 1.0, 0.0], [100.0, 89.0, -1e30]]
    )
    x = x.astype(F32)
    got = np.asarray(tj.device_get(tj.jit(lambda a: tj.nn.softmax(a), device=device)(x)))
    np.testing.assert_array_equal(got[0], [np.nan, 0.0, 0.0])
    np.testing.assert_array_equal(got[2], [np.nan] * 3)
    assert got[1, 0] == 0.0 and got[3, 2] == 0.0
    exact = _softmax64(x[[1, 3]].astype(np.float64))
    np.testing.assert_allclose(got[[1, 3]], exact, rtol=4e-7, atol=0)


def test_logsumexp_rounds_once(device):
    # Rows of k equal values m: exp(0) = 1 and the sum k are exact, so the result is
    # m + log(k) rounded once. Before, log(k) rounded to float32 first: off by 1 ulp on ~20%.
    rng = np.random.default_rng(1)
    m = rng.uniform(-100.0, 100.0, 4096).astype(F32)
    f = tj.jit(lambda a: tj.nn.logsumexp(a, axis=-1), device=device)
    for k in (2, 3, 5):
        got = np.asarray(tj.device_get(f(np.repeat(m[:, None], k, axis=1))))
        want = (m.astype(np.float64) + np.log(float(k))).astype(F32)
        np.testing.assert_array_equal(got, want)


def test_softmax_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 5)) * 4
    w = rng.standard_normal((3, 5))

    def loss(a):
        return np.sum(tj.nn.softmax(a) * w)

    got = np.asarray(tj.jit(tj.grad(loss))(x))
    h, want = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = h
        p = _softmax64(x + d)
        q = _softmax64(x - d)
        want[i] = np.sum((p - q) * w) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
