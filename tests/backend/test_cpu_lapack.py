"""The CPU program's LAPACK steps (backend_cpu/lapack.py): scipy-openblas32 on the buffers.

Compiled for the CPU, solve/inv/cholesky/det/slogdet of matrices from `lapack.MIN_N` on run
scipy-openblas32's ?getrf/?getrs/?potrf on transposed views; the values are NumPy's to
rounding, batched over leading axes, and a matrix LAPACK rejects gives what NumPy's path gives
(NaN for that matrix; det 0, slogdet (0, -inf)). Without the library NumPy's path runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cpu import blas, lapack, lapack_threads

N = lapack.MIN_N + 3
needs_lapack = pytest.mark.skipif(
    lapack.routines(np.dtype(np.float64)) is None, reason="scipy-openblas32 is not installed"
)


def _inputs(dtype, lead=(2,), n=N, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=lead + (n, n))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.normal(size=x.shape)
    a = x / (2.0 * n**0.5) + np.eye(n)  # well conditioned, det within float32's range
    h = x @ np.conj(np.swapaxes(x, -1, -2)) / n + np.eye(n)  # Hermitian positive definite
    b = rng.normal(size=lead + (n, 3))
    return a.astype(dtype), h.astype(dtype), b.astype(dtype)


def _all(m, a, h, b):
    sign, logabs = m.linalg.slogdet(a)
    return (m.linalg.solve(a, b), m.linalg.solve(a, b[..., :1]), m.linalg.inv(a),
            m.linalg.cholesky(h), m.linalg.det(a), sign, logabs)  # fmt: skip


@pytest.fixture
def calls(monkeypatch):
    """Counts the LAPACK path's calls, per primitive."""
    counts = {}
    for name, fn in list(lapack._INTO.items()):

        def counted(*args, _fn=fn, _name=name):
            counts[_name] = counts.get(_name, 0) + 1
            return _fn(*args)

        monkeypatch.setitem(lapack._INTO, name, counted)
    return counts


def _close(got, want, dtype):
    rtol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * np.abs(w).max(initial=1.0))


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_values_match_numpy_batched(dtype, calls):
    a, h, b = _inputs(dtype, lead=(2, 1))
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    _close(got, _all(np, a, h, b), dtype)
    assert calls == {"solve": 2, "inv": 1, "cholesky": 1, "slogdet": 1, "det": 1}


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rejected_matrices_give_numpys_path_results(dtype, calls):
    a, h, b = _inputs(dtype, lead=(3,))
    a[1, :, 7] = 0.0  # singular: a zero column, an exact zero pivot
    h[2, 5, 5] = -1.0  # not positive definite
    h[0, 0, 0] = np.nan  # NaN on the diagonal: potrf fails
    compiled = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    eager = _all(tnp, a, h, b)  # NumPy's np.linalg, NaN where it raises (ir/linalg_prims.py)
    for g, w in zip(compiled, eager, strict=True):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    assert np.isnan(compiled[0][1]).all() and np.isnan(compiled[2][1]).all()
    assert np.isnan(compiled[3][0]).any() and np.isnan(compiled[3][2]).all()
    np.testing.assert_array_equal(compiled[4][1], 0.0)
    np.testing.assert_array_equal([compiled[5][1], compiled[6][1]], [0.0, -np.inf])
    good = [0, 2]  # the regular matrices of the stack: LAPACK's values, as NumPy's
    want = [np.linalg.solve(a[good], b[good]), np.linalg.inv(a[good])]
    _close([np.asarray(compiled[0])[good], np.asarray(compiled[2])[good]], want, dtype)
    _close([np.asarray(compiled[3])[1]], [np.linalg.cholesky(h[1])], dtype)
    assert calls["cholesky"] == 1 and calls["solve"] == 2


@needs_lapack
def test_empty_stack_and_upper_triangle(calls):
    a, h, b = _inputs(np.float64, lead=(0,))
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    _close(got, _all(np, a, h, b), np.float64)
    _, h, _ = _inputs(np.float64, lead=())
    upper = tj.jit(lambda h: tnp.linalg.cholesky(h, upper=True), device="cpu")(h)
    np.testing.assert_allclose(upper, np.linalg.cholesky(h, upper=True), rtol=1e-10, atol=1e-12)
    assert calls == {"solve": 2, "inv": 1, "cholesky": 2, "slogdet": 1, "det": 1}


def test_numpys_path_without_scipy_openblas32(monkeypatch, calls):
    monkeypatch.setattr(lapack, "routines", lambda dtype: None)
    a, h, b = _inputs(np.float64, lead=(2,))
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    _close(got, _all(np, a, h, b), np.float64)
    assert calls == {}


def test_small_matrices_take_numpys_path(calls):
    a, h, b = _inputs(np.float64, lead=(4,), n=5)
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    for g, w in zip(got, _all(np, a, h, b), strict=True):
        np.testing.assert_array_equal(g, w)  # NumPy's own routines, bit for bit
    assert calls == {}


def test_thread_count_follows_size_setting_and_load(monkeypatch):
    monkeypatch.delenv("TRACEJIT_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(lapack_threads, "_cores", lambda: 4)
    others = {"n": 0}
    monkeypatch.setattr(lapack_threads, "_others_running", lambda: others["n"])
    big = lapack_threads.MIN_N
    assert lapack_threads.count(big) == 4 and lapack_threads.count(big - 1) == 1
    others["n"] = 1
    assert lapack_threads.count(big) == 3  # the cores other tasks leave free
    others["n"] = 9
    assert lapack_threads.count(big) == 1
    others["n"] = None  # no /proc/loadavg
    assert lapack_threads.count(big) == 1
    others["n"] = 0
    monkeypatch.setenv("TRACEJIT_NUM_THREADS", "1")
    assert lapack_threads.count(big) == 1
    monkeypatch.setenv("TRACEJIT_NUM_THREADS", "2")
    assert lapack_threads.count(big) == 2


@needs_lapack
def test_several_threads_inside_one_outside(monkeypatch, calls):
    get = blas.library().scipy_openblas_get_num_threads
    monkeypatch.setattr(lapack_threads, "count", lambda n: 2)
    with lapack_threads.threads(N):
        assert get() == 2
    assert get() == 1
    a, h, b = _inputs(np.float32, lead=(2,))
    got = tj.jit(lambda *xs: _all(tnp, *xs), device="cpu")(a, h, b)
    _close(got, _all(np, a, h, b), np.float32)
    assert get() == 1 and calls["cholesky"] == 1
