"""One matrix's svd on CUDA runs cuSOLVER's Jacobi ?gesvdj (backend_cuda/gesvdj.py), not CuPy's
svd: values as NumPy's, orthonormal vectors that reconstruct the matrix and equal NumPy's up
to a sign (a phase) per singular pair, NaN for a matrix holding inf or NaN, gradients as the
CPU's. On a GPU and the CUDA emulator."""

from __future__ import annotations

import numpy as np
import pytest
from _cuda_programs import needs_gpu
from _devices import EMULATED

import tracejit as tj
import tracejit.numpy as tnp

pytestmark = needs_gpu

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.fixture
def no_cupy_svd(monkeypatch):
    """CuPy's own `cupy.linalg.svd` refused: the call must take ?gesvdj."""
    import cupy

    def refused(*args, **kwargs):
        raise AssertionError("cupy.linalg.svd was called for one matrix")

    monkeypatch.setattr(cupy.linalg, "svd", refused)


def _matrix(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape)
    if np.iscomplexobj(dtype(0)):
        a = a + 1j * rng.normal(size=shape)
    return a.astype(dtype)


def _tol(dtype):
    return 1e-4 if np.dtype(dtype).char in "fF" else 1e-11


def _svd_on_cuda(a, full_matrices):
    f = tj.jit(lambda x: tnp.linalg.svd(x, full_matrices=full_matrices), device="cuda")
    return tuple(tj.device_get(r) for r in f(a))


def _check_factors(a, got, full_matrices, tol):
    """Shapes and dtypes as NumPy's, orthonormal U and Vh, U diag(s) Vh = a, values as NumPy's."""
    u, s, vh = got
    want = np.linalg.svd(a, full_matrices=full_matrices)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
    k = s.shape[0]
    scale = max(float(want[1][0]) if k else 1.0, 1.0)
    np.testing.assert_allclose(s, want[1], rtol=tol, atol=tol * scale)
    np.testing.assert_allclose(u.conj().T @ u, np.eye(u.shape[1]), atol=tol)
    np.testing.assert_allclose(vh @ vh.conj().T, np.eye(vh.shape[0]), atol=tol)
    np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, atol=tol * scale)
    return want


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 6), (7, 4), (4, 7)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_of_one_matrix_is_gesvdj_and_equals_numpy(dtype, shape, full_matrices, no_cupy_svd):
    a = _matrix(shape, dtype, seed=sum(shape))
    tol = _tol(dtype)
    u, s, vh = got = _svd_on_cuda(a, full_matrices)
    want_u, _, want_vh = _check_factors(a, got, full_matrices, tol)
    # singular pairs (distinct values here) as NumPy's up to a sign or phase: u_i vh_i agrees
    for i in range(s.shape[0]):
        np.testing.assert_allclose(np.outer(u[:, i], vh[i]), np.outer(want_u[:, i], want_vh[i]),
                                   atol=tol * 10, err_msg=f"singular pair {i}")  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_rank_deficient_and_one_by_one_matrices(dtype, no_cupy_svd):
    rank2 = _matrix((6, 2), dtype, 1) @ _matrix((2, 5), dtype, 2)  # singular values 0 after 2
    cases = [(rank2, False), (rank2, True), (rank2.T.copy(), False),
             (_matrix((1, 1), dtype), True), (np.zeros((3, 3), dtype), False)]  # fmt: skip
    for a, full in cases:
        _check_factors(a, _svd_on_cuda(a, full), full, _tol(dtype))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_size_zero_matrices_have_numpys_shapes(shape, full_matrices):
    a = np.zeros(shape, np.float32)
    got = _svd_on_cuda(a, full_matrices)
    for g, w in zip(got, np.linalg.svd(a, full_matrices=full_matrices)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_a_matrix_holding_inf_or_nan_gives_nan(dtype, no_cupy_svd):
    for value in (np.inf, np.nan):
        a = _matrix((5, 3), dtype)
        a[1, 2] = value
        for r in _svd_on_cuda(a, False):
            assert np.isnan(r).all()


def _loss(x):
    u, s, vh = tnp.linalg.svd(x, full_matrices=False)
    return tnp.sum(s) + tnp.sum(tnp.abs(u[:, :1] * vh[:1]))  # sign-invariant in each pair


@pytest.mark.parametrize(("shape", "dtype"), [((5, 5), np.float32), ((6, 4), np.float64)])
def test_gradient_on_cuda_equals_the_cpus(shape, dtype, no_cupy_svd):
    a = _matrix(shape, dtype, seed=5)
    want = tj.jit(tj.grad(_loss), device="cpu")(a)
    got = tj.device_get(tj.jit(tj.grad(_loss), device="cuda")(a))
    np.testing.assert_allclose(got, want, rtol=_tol(dtype) * 10, atol=_tol(dtype) * 10)


def test_tolerance_sweeps_and_order_are_set(monkeypatch):
    """Machine epsilon of the real type, 100 sweeps, sorted values; the parameters ended."""
    from cupy_backends.cuda.libs import cusolver

    calls = []
    for name in ("createGesvdjInfo", "destroyGesvdjInfo", "xgesvdjSetTolerance",
                 "xgesvdjSetMaxSweeps", "xgesvdjSetSortEig"):  # fmt: skip
        original = getattr(cusolver, name)

        def record(*args, _name=name, _original=original):
            calls.append(_name)
            if _name.startswith("xgesvdjSet"):
                calls.append(args[1])
            return _original(*args)

        monkeypatch.setattr(cusolver, name, record)
    for dtype in (np.float32, np.complex128):
        calls.clear()
        _svd_on_cuda(_matrix((4, 3), dtype), False)
        eps = float(np.finfo(np.dtype(dtype).char.lower()).eps)
        assert calls == ["createGesvdjInfo", "xgesvdjSetTolerance", eps, "xgesvdjSetMaxSweeps",
                         100, "xgesvdjSetSortEig", 1, "destroyGesvdjInfo"]  # fmt: skip


def _no_host_reads(monkeypatch):
    """The emulator's arrays refuse every read by the host (a synchronization on a GPU)."""
    from cupy._array import ndarray

    def refused(*args, **kwargs):
        raise AssertionError("a device array was read on the host")

    for name in ("get", "item", "__bool__", "__int__", "__float__"):
        monkeypatch.setattr(ndarray, name, refused)


@pytest.mark.skipif(not EMULATED, reason="sets gesvdj's status through the emulator's stand-in")
@pytest.mark.parametrize(("status", "nan"), [(4, False), (-3, True), (1, True)])
def test_status_is_decided_on_the_device(status, nan, monkeypatch):
    """info = k + 1 (sweeps ran out: 4 here) keeps Jacobi's approximation; any other non-zero
    info (a rejected parameter) gives NaN; the host never reads it."""
    from cupy_backends.cuda.libs import cusolver

    original = cusolver.sgesvdj

    def gesvdj(*args):
        original(*args)
        cusolver._at(args[-2], 1, np.int32)[0] = status

    a = _matrix((5, 3), np.float32)
    f = tj.jit(lambda x: tnp.linalg.svd(x, full_matrices=False), device="cuda")
    f.lower(a).compile()
    with monkeypatch.context() as patch:
        patch.setattr(cusolver, "sgesvdj", gesvdj)
        _no_host_reads(patch)
        out = f(a)
    for r in out:
        r = tj.device_get(r)
        assert np.isnan(r).all() if nan else np.isfinite(r).all()
