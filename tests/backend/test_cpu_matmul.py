"""Matmul on the CPU backend: big products split into slabs across OpenMP threads, one
single-threaded BLAS call per slab (rows of C when m >= n, else columns), every transpose."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cpu import blas
from tracejit.backend_cpu.compiler import find_compiler
from tracejit.errors import TracejitError

try:
    find_compiler()
except TracejitError as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no C++ compiler: {exc}", allow_module_level=True)


# (m, k, n): rows split (m >= n, m not a multiple of the 16-row slab), columns split, and a
# product below the split threshold.
SHAPES = [(203, 130, 70), (40, 150, 333), (8, 9, 10)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mkn", SHAPES, ids=str)
def test_split_matmul_matches_numpy_with_transposes(dtype, mkn):
    m, k, n = mkn
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)

    def f(a, b, at, bt):
        return [a @ b, tnp.transpose(at) @ b, a @ tnp.transpose(bt), tnp.transpose(at) @ bt.T]

    want = a.astype(np.float64) @ b.astype(np.float64)
    rtol = 1e-4 if dtype == np.float32 else 1e-12
    for got in tj.jit(f)(a, b, at, bt):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_batched_split_matmul_matches_numpy():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 100, 120)), rng.standard_normal((3, 120, 90))
    np.testing.assert_allclose(tj.jit(lambda a, b: a @ b)(a, b), a @ b, rtol=1e-12, atol=1e-12)


def test_blas_runs_single_threaded_under_our_threads():
    if blas.gemm_pointers() == (0, 0):
        pytest.skip("scipy-openblas32 is not installed (pip install tracejit[blas])")
    assert blas.library().scipy_openblas_get_num_threads() == 1
