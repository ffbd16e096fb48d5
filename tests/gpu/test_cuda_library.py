"""Linear algebra, FFTs and sorting on CUDA run CuPy's libraries on the device arrays
(backend_cuda/library.py): no host step, values equal NumPy's, a matrix cuSOLVER rejects
gives NaN as on the CPU, sorting is stable with NaN last. On a GPU and the CUDA emulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from _cuda_programs import needs_gpu
from _devices import EMULATED

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cuda.launcher import _FallbackStep
from tracejit.backend_cuda.library import LibraryStep

pytestmark = needs_gpu


def _compiled(fn, *args):
    return tj.jit(fn, device="cuda").lower(*args).compile()


def _library_prims(compiled) -> set[str]:
    assert not [s for s in compiled.executable.steps if isinstance(s, _FallbackStep)]
    return {s.prim.name for s in compiled.executable.steps if isinstance(s, LibraryStep)}


def _linalg(a, b):
    sym = a @ tnp.swapaxes(a, -1, -2) + 4.0 * tnp.eye(a.shape[-1], dtype=a.dtype)
    w, v = tnp.linalg.eigh(sym)
    u, s, vh = tnp.linalg.svd(a)
    q, r = tnp.linalg.qr(a)
    sign, logdet = tnp.linalg.slogdet(sym)
    return (tnp.linalg.solve(a, b), tnp.linalg.inv(a), tnp.linalg.cholesky(sym),
            tnp.linalg.det(a), sign * logdet, w, tnp.abs(v), s, q @ r, u @ (s[..., None] * vh),
            tnp.linalg.eigvalsh(sym), tnp.linalg.svd(a, compute_uv=False))  # fmt: skip


def _numpy_linalg(a, b):
    sym = a @ np.swapaxes(a, -1, -2) + 4.0 * np.eye(a.shape[-1], dtype=a.dtype)
    sign, logdet = np.linalg.slogdet(sym)
    return (np.linalg.solve(a, b), np.linalg.inv(a), np.linalg.cholesky(sym), np.linalg.det(a),
            sign * logdet, np.linalg.eigvalsh(sym), np.abs(np.linalg.eigh(sym)[1]),
            np.linalg.svd(a, compute_uv=False), a, a, np.linalg.eigvalsh(sym),
            np.linalg.svd(a, compute_uv=False))  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_linear_algebra_runs_cusolver_on_the_device(dtype):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 5, 5)).astype(dtype)
    b = rng.normal(size=(3, 5, 2)).astype(dtype)
    compiled = _compiled(_linalg, a, b)
    names = _library_prims(compiled)
    assert {"solve", "inv", "cholesky", "det", "slogdet", "eigh", "svd", "qr", "eigvalsh",
            "svdvals"} <= names  # fmt: skip
    tol = 1e-9 if dtype == np.float64 else 2e-3
    for got, want in zip(compiled(a, b), _numpy_linalg(a, b)):
        got = tj.device_get(got)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_a_singular_matrix_of_a_stack_gives_nan_for_that_matrix_only():
    a = np.stack([np.eye(3) * 2.0, np.ones((3, 3))])  # the second is singular
    b = np.ones((2, 3, 1))
    compiled = _compiled(lambda a, b: (tnp.linalg.solve(a, b), tnp.linalg.inv(a)), a, b)
    assert _library_prims(compiled) == {"solve", "inv"}
    x, inv = (tj.device_get(o) for o in compiled(a, b))
    np.testing.assert_array_equal(x[0], np.full((3, 1), 0.5))
    np.testing.assert_array_equal(inv[0], np.eye(3) * 0.5)
    assert np.isnan(x[1]).all() and np.isnan(inv[1]).all()
    cpu = tj.jit(lambda a, b: tnp.linalg.solve(a, b))(a, b)
    np.testing.assert_array_equal(x, cpu)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ffts_run_cufft_on_the_device(dtype):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 16)).astype(dtype)

    def f(x):
        spectrum = tnp.fft.rfft(x)
        return spectrum, tnp.fft.irfft(spectrum * 2.0, n=16), tnp.fft.fft2(x + 0j)

    compiled = _compiled(f, x)
    assert _library_prims(compiled) == {"fft"}
    want = (np.fft.rfft(x), np.fft.irfft(np.fft.rfft(x) * 2.0, n=16), np.fft.fft2(x + 0j))
    tol = 1e-12 if dtype == np.float64 else 1e-4
    for got, w in zip(compiled(x), want):
        np.testing.assert_allclose(tj.device_get(got), w, rtol=tol, atol=tol * 10)


def test_sorting_is_stable_with_nan_last_on_the_device():
    x = np.array([[3.0, np.nan, 1.0, 3.0, -0.0, 0.0, 1.0, np.nan, -np.inf],
                  [2.0, 2.0, 2.0, 1.0, 1.0, np.inf, np.nan, 0.5, 2.0]])  # fmt: skip
    compiled = _compiled(lambda x: (tnp.argsort(x, axis=-1), tnp.sort(x, axis=0)), x)
    assert _library_prims(compiled) == {"argsort", "sort"}
    order, ordered = (tj.device_get(o) for o in compiled(x))
    np.testing.assert_array_equal(order, np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(ordered, np.sort(x, axis=0))


def test_bfloat16_sorts_on_the_device_through_float32():
    # tnp converts bfloat16 to float32 (which keeps its order) before argsort: CuPy cannot
    # hold bfloat16, a float32 sort it can
    x = np.array([3.0, -1.0, np.nan, 2.0, 0.5, -1.0], dtype=ml_dtypes.bfloat16)
    compiled = _compiled(lambda x: tnp.argsort(x), x)
    assert _library_prims(compiled) == {"argsort"}
    np.testing.assert_array_equal(tj.device_get(compiled(x)), [1, 5, 4, 3, 0, 2])


_SVD_OF_INF_ON_CUDA = """
import json, numpy as np, tracejit as tj, tracejit.numpy as tnp
bad = 3.0 * np.eye(3)
bad[0, 1] = bad[1, 0] = np.inf  # NumPy's LAPACK never returns on it
a = np.stack([np.arange(9.0).reshape(3, 3) ** 0.5, bad])
got = tj.jit(lambda x: tnp.linalg.svd(x, full_matrices=False), device="cuda")(a)
print(json.dumps([np.asarray(tj.device_get(g)).tolist() for g in got]))
"""


def test_svd_of_a_matrix_holding_inf_is_nan_on_the_device(tmp_path):
    # NaN as on the CPU (JAX's convention), never a hang (NumPy's LAPACK, the emulator's
    # cupy.linalg) nor cuSOLVER's finite vectors (an H100 gave u = I for it)
    env = {**os.environ, "TRACEJIT_CACHE_DIR": str(tmp_path)}
    if EMULATED:  # the child imports the emulator's `cupy` too
        emulator = str(Path(__file__).parents[1] / "cuda_emulator")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [emulator, env.get("PYTHONPATH")]))
    try:
        done = subprocess.run([sys.executable, "-c", _SVD_OF_INF_ON_CUDA], env=env,
                              timeout=120, capture_output=True, text=True, check=True)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("svd of a matrix holding inf did not return in 120 s on the device")
    u, s, vh = (np.array(g) for g in json.loads(done.stdout))
    want = np.linalg.svd(np.arange(9.0).reshape(3, 3) ** 0.5)
    assert np.isnan(u[1]).all() and np.isnan(s[1]).all() and np.isnan(vh[1]).all()
    np.testing.assert_allclose(s[0], want[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_one_matrix_cholesky_is_cusolver_potrf_lower(dtype, upper, monkeypatch):
    """One matrix goes to ?potrf with fill mode LOWER (backend_cuda/potrf.py), not CuPy's
    cholesky: the triangle NumPy reads, and NaN for a matrix that is not positive definite."""
    import cupy

    def refused(*args, **kwargs):
        raise AssertionError("cupy.linalg.cholesky was called for one matrix")

    monkeypatch.setattr(cupy.linalg, "cholesky", refused)
    rng = np.random.default_rng(2)
    g = rng.normal(size=(6, 6)) + (1j * rng.normal(size=(6, 6)) if np.iscomplexobj(dtype(0)) else 0)
    a = (g @ g.conj().T + 6 * np.eye(6)).astype(dtype)
    a[0, 5] += 0.5  # not Hermitian: which triangle is read shows
    a[5, 0] -= 0.25
    f = tj.jit(lambda m: tnp.linalg.cholesky(m, upper=upper), device="cuda")
    got = tj.device_get(f(a))
    tol = 1e-12 if dtype in (np.float64, np.complex128) else 1e-4
    assert got.dtype == dtype
    np.testing.assert_allclose(got, np.linalg.cholesky(a, upper=upper), rtol=tol, atol=tol)
    bad = -np.eye(6, dtype=dtype)
    assert np.isnan(tj.device_get(f(bad))).all()
    assert tj.device_get(f(np.zeros((0, 0), dtype))).shape == (0, 0)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_ffts_over_leading_or_trailing_axes_take_one_plan(dtype, monkeypatch):
    """fft/ifft over leading axes of a C-ordered operand run one strided cuFFT plan
    (backend_cuda/fft_strided.py), not CuPy's fft (transposes), and over trailing axes one
    batched plan, not CuPy's Python path; values are NumPy's."""
    import cupy

    def refused(*args, **kwargs):
        raise AssertionError("cupy.fft was called for a leading-axes transform")

    for name in ("fft", "ifft", "fftn", "ifftn"):
        monkeypatch.setattr(cupy.fft, name, refused)
    rng = np.random.default_rng(3)
    z = (rng.normal(size=(8, 6, 5)) + 1j * rng.normal(size=(8, 6, 5))).astype(dtype)
    tol = 1e-12 if dtype == np.complex128 else 1e-5
    cases = {
        "fft axis 0": (lambda v: tnp.fft.fft(v, axis=0), np.fft.fft(z, axis=0)),
        "ifft axis 0": (lambda v: tnp.fft.ifft(v, axis=0), np.fft.ifft(z, axis=0)),
        "fftn axes 0, 1": (lambda v: tnp.fft.fftn(v, axes=(0, 1)), np.fft.fftn(z, axes=(0, 1))),
        "ifft2 axes 0, 1": (lambda v: tnp.fft.ifft2(v, axes=(0, 1)), np.fft.ifft2(z, axes=(0, 1))),
        "fft2": (tnp.fft.fft2, np.fft.fft2(z)),
        "ifft last axis": (tnp.fft.ifft, np.fft.ifft(z)),
        "fftn every axis, ortho": (
            lambda v: tnp.fft.fftn(v, norm="ortho"),
            np.fft.fftn(z, norm="ortho"),
        ),
        "ifft of one axis": (lambda v: tnp.fft.ifft(v[0, 0]), np.fft.ifft(z[0, 0])),
    }
    for name, (fn, want) in cases.items():
        got = tj.device_get(tj.jit(fn, device="cuda")(z))
        assert got.dtype == dtype, name
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10, err_msg=name)
