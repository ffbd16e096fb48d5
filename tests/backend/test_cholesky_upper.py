"""`tnp.linalg.cholesky(a, upper=True)` is NumPy's upper factor bit for bit, signs of zero
included: LAPACK's ?potrf 'U' on the upper triangle (NumPy's `cholesky_up`), not L^H (whose
diagonal is -0.j and whose rounding differs). The lower factor is NumPy's bit for bit too,
but compiled from n = 128 on (?potrf 'U' of A^T: equal to rounding, backend_cpu/lapack.py).

From n = 64 on, NumPy's threaded OpenBLAS rounds ?potrf differently from its one-thread run,
and the compiled CPU program runs LAPACK on one thread: the oracle is NumPy on one thread.
Each case factors a Hermitian positive definite matrix H (upper: the bits and signs of zero),
and H with a small perturbation of its strictly lower triangle (upper and lower), whose
upper factor (NumPy's reads only the upper triangle) and lower one factor two different
matrices, each as NumPy does. Gradients of upper=True are checked in
test_linalg_solvers.py (float64) and test_linalg_complex.py (complex128).
"""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import tracejit as tj
import tracejit.numpy as tnp

RNG = np.random.default_rng(21)


def _input(dtype, shape):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    n = shape[-1]
    h = x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)
    return h.astype(dtype), (h + 0.1 * np.tril(RNG.standard_normal(shape), -1)).astype(dtype)


def _factors(m, h, a):
    return m.linalg.cholesky(h, upper=True), m.linalg.cholesky(a, upper=True), m.linalg.cholesky(a)


def _parts(x):
    x = np.asarray(x)
    return (x.real, x.imag) if x.dtype.kind == "c" else (x,)


def _bitwise(got, want):
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        for gp, wp in zip(_parts(g), _parts(w)):
            np.testing.assert_array_equal(gp, wp, err_msg=f"factor {i}")
            np.testing.assert_array_equal(np.signbit(gp), np.signbit(wp), f"factor {i}")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (130, 130)], ids=["stack", "n130"])
def test_factors_equal_numpy_bit_for_bit(dtype, shape, device):
    h, a = _input(dtype, shape)
    with threadpool_limits(1, user_api="blas"):
        want = _factors(np, h, a)
        eager = _factors(tnp, h, a)
        compiled = tj.device_get(tj.jit(lambda *xs: _factors(tnp, *xs), device=device)(h, a))
    _bitwise(eager, want)
    if device == "cpu":  # NumPy's gufuncs below 128, scipy-openblas32's ?potrf from 128 on
        small = shape[-1] < 128  # L from 128 on: ?potrf 'U' of A^T (backend_cpu/lapack.py)
        _bitwise(compiled if small else compiled[:2], want if small else want[:2])
        np.testing.assert_allclose(compiled[2], want[2], rtol=1e-12, atol=1e-12)
    else:  # cuSOLVER's 'L' factor of A^T, transposed: equal to rounding
        for g, w in zip(compiled, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(np.tril(compiled[1], -1), 0)
        np.testing.assert_array_equal(np.triu(compiled[2], 1), 0)


def test_not_positive_definite_upper_gives_nan_for_that_matrix():
    _, a = _input(np.float64, (3, 4, 4))
    a[1, 0, 3] = 1e3  # the upper triangle of matrix 1 is no longer positive definite
    for got in (tnp.linalg.cholesky(a, upper=True),
                tj.jit(lambda a: tnp.linalg.cholesky(a, upper=True), device="cpu")(a)):  # fmt: skip
        assert np.isnan(got[1]).all() and not np.isnan(got[[0, 2]]).any()
        np.testing.assert_array_equal(got[0], np.linalg.cholesky(a[0], upper=True))
