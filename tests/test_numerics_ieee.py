"""Regression tests for silent wrong results in generated code (issue 13): every compiled
result here is checked against NumPy, bit for bit where NumPy's result is exact."""

from __future__ import annotations

import numpy as np

import tracejit as tj
from tracejit.backend_cpu import compiler
from tracejit.backend_cuda import nvrtc


def _same(got, want):
    """Bit-exact equality, NaN equal to NaN, -0.0 distinct from 0.0."""
    got = np.asarray(tj.device_get(got))
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    assert got.tobytes() == want.tobytes(), (got, want)


# ---------------------------------------------------------------- no FP contraction


def test_no_contraction_of_multiply_add(device):
    # x*2 - y fused into fma(x, 2, -y) never overflows: NumPy gives inf at x = y = 1e308;
    # the std of equal products is 0 only if every product rounds the same way.
    def f(x, y, a, b):
        return x * 2.0 - y, np.std(a * b), a * b + x[0]

    x = np.array([1e308, 1.5, -3.0])
    a = np.full(4, 0.1)
    b = np.full(4, 0.7)
    got = tj.jit(f, device=device)(x, x, a, b)
    with np.errstate(over="ignore"):
        want = f(x, x, a, b)
    for g, w in zip(got, want):
        _same(g, w)


def test_contraction_is_an_opt_in():
    assert "-ffp-contract=off" in compiler.command("c++", "s.cpp", "s.so")
    assert "-fmad=false" in nvrtc.options()
    tj.config.fp_contract = True
    try:
        assert "-ffp-contract=fast" in compiler.command("c++", "s.cpp", "s.so")
        assert "-fmad=true" in nvrtc.options()
    finally:
        tj.config.fp_contract = False
