"""The inline float32 tanh (`tj_tanhf`, ir/cwriter/fast_tanh.py) against float64 `np.tanh`:
ulp error over a dense sweep, exact special values, its use inside fused expressions, and
the same bits from the CUDA backend (under the emulator here). float64 tanh must stay on libm.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
from tracejit import nn
from tracejit.backend_cpu.compiler import find_compiler
from tracejit.backend_cpu.fast_exp import EXPF_C
from tracejit.errors import TracejitError
from tracejit.ir.cwriter.fast_tanh import TANHF_C

try:
    find_compiler()
except TracejitError as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no C++ compiler: {exc}", allow_module_level=True)

F32 = np.float32
# tools/fit_tanh.py --check-compiled measured 1.03 over every float32 in [0, 10.5]; NumPy's
# float32 tanh 1.37 on the same machine (benchmarks/RESULTS.md)
MAX_ULP = 1.1
TOOLS = pathlib.Path(__file__).resolve().parents[2] / "tools"


@pytest.fixture(scope="module")
def tanh32():
    return tj.jit(np.tanh, device="cpu")


def ulp_error(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|y - tanh(x)| in float32 ulps of the exact (float64) tanh(x)."""
    exact = np.tanh(x.astype(np.float64))
    e = np.floor(np.log2(np.maximum(np.abs(exact), 2.0**-126)))
    return np.abs(y.astype(np.float64) - exact) / 2.0 ** (e - 23)


def float32_range(lo: float, hi: float, stride: int) -> np.ndarray:
    a, b = np.array([lo, hi], F32).view(np.int32)
    return np.arange(a, b, stride, dtype=np.int32).view(F32)


def test_float32_uses_the_inline_tanh_and_float64_libm():
    f32 = tj.jit(np.tanh, device="cpu").lower(np.ones(4, F32)).compile().source()
    f64 = tj.jit(np.tanh, device="cpu").lower(np.ones(4, np.float64)).compile().source()
    assert "tj_tanhf(" in f32 and "tanhf(float)" not in f32
    assert "tj_tanhf" not in f64 and "double tanh(double)" in f64


def test_dense_sweep_within_the_bound(tanh32):
    # Every 13th float32 in [2^-12, 10] (~10M values), every 7919th below 2^-12, and -x.
    x = np.concatenate([float32_range(0.0, 2.0**-12, 7919), float32_range(2.0**-12, 10.0, 13)])
    y = np.asarray(tanh32(x))
    err = ulp_error(y, x)
    assert err.max() <= MAX_ULP, f"{err.max():.3f} ulp at x={x[err.argmax()]!r}"
    assert np.all(np.abs(y) <= 1.0)
    np.testing.assert_array_equal(np.asarray(tanh32(-x)), -y)  # odd, bit for bit


def test_special_values_exact(tanh32):
    tiny = np.array([2.0**-12 * 0.999, 1e-10, 1e-30, 1.2e-38], F32)
    subnormal = np.array([1e-40, 1e-45, 2.0**-149], F32)
    big = np.array([9.011, 9.5, 10.0, 20.0, 1e30, np.finfo(F32).max, np.inf], F32)  # rounds to 1
    x = np.concatenate([tiny, subnormal, -tiny, -subnormal])
    np.testing.assert_array_equal(np.asarray(tanh32(x)), x)  # tanh rounds to x there
    np.testing.assert_array_equal(np.asarray(tanh32(big)), np.ones_like(big))
    np.testing.assert_array_equal(np.asarray(tanh32(-big)), -np.ones_like(big))
    zeros = np.asarray(tanh32(np.array([0.0, -0.0], F32)))
    assert np.all(zeros == 0) and list(np.signbit(zeros)) == [False, True]
    nans = np.asarray(tanh32(np.array([np.nan, -np.nan], F32)))
    assert np.all(np.isnan(nans))


def test_near_the_clamp_and_the_split(tanh32):
    x = np.array([8.9, -8.9, 9.0, 9.0109, 9.011, 10.0, 1.0, 0.99999994, 2.0**-12, 0.5], F32)
    err = ulp_error(np.asarray(tanh32(x)), x)
    assert err.max() <= MAX_ULP, f"{err.max():.3f} ulp at x={x[err.argmax()]!r}"


def _fit_tool():
    """tools/fit_tanh.py as a module (it imports tools/fit_exp.py)."""
    sys.path.insert(0, str(TOOLS))
    try:
        spec = importlib.util.spec_from_file_location("fit_tanh", TOOLS / "fit_tanh.py")
        tool = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tool)
    finally:
        sys.path.remove(str(TOOLS))
    return tool


def _hex_constants(c_text: str) -> list[float]:
    return [float.fromhex(h) for h in re.findall(r"(-?0x1[.0-9a-f]*p[-+]?\d+)f", c_text)]


def test_fit_script_models_the_compiled_code(tanh32):
    """tools/fit_tanh.py checks a NumPy model of tj_tanhf; it must be bit-exact to the C."""
    tool = _fit_tool()
    consts = _hex_constants(TANHF_C)
    # P (highest power first), -2/ln2, 1.5*2^23 twice, ln2/2 head and tail, exp's polynomial
    assert len(consts) == 7 + 5 + 6
    p = np.array(consts[:7][::-1], F32)
    e_coefs = np.array(consts[12:][::-1], F32)
    # tj_expf's polynomial (Q highest first, after its 5 reduction constants), h = -r/2
    exp_q = [1.0, *_hex_constants(EXPF_C)[5:10][::-1]]
    np.testing.assert_array_equal(e_coefs, [c * (-2.0) ** (i + 1) for i, c in enumerate(exp_q)])
    x = np.concatenate([float32_range(0.0, 10.5, 4099), np.array([np.nan, np.inf, -0.0], F32)])
    x = np.concatenate([x, -x])
    np.testing.assert_array_equal(np.asarray(tanh32(x)), tool.tanh_f32(x, p, e_coefs))


def test_cuda_computes_the_same_bits(device, tanh32):
    """One implementation on both backends: device tanh gives the CPU's bits (NaN as NaN)."""
    x = np.concatenate([float32_range(0.0, 10.5, 20011), float32_range(0.9, 1.1, 97)])
    x = np.concatenate([x, -x, np.array([np.nan, np.inf, -np.inf, -0.0, 1e-40], F32)])
    got = np.asarray(tj.device_get(tj.jit(np.tanh, device=device)(x)))
    want = np.asarray(tanh32(x))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32))


def _w1(x, y):
    return np.tanh(x * y + 0.5 * x) * 2.0 - y


@pytest.fixture(scope="module")
def w1():
    return tj.jit(_w1, device="cpu")


@pytest.fixture(scope="module")
def gelu():
    return tj.jit(lambda x: nn.gelu(x), device="cpu")


floats32 = st.floats(-12, 12, width=32) | st.sampled_from([0.0, -0.0, np.inf, -np.inf, 3e-40])
N = 32  # one shape, so each function compiles once


@given(st.lists(st.tuples(floats32, floats32), min_size=N, max_size=N))
def test_fused_w1_and_gelu_match_numpy(w1, gelu, pairs):
    x, y = (np.array(v, F32) for v in zip(*pairs))
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        ref = _w1(x64, y64)
        gelu_ref = 0.5 * x64 * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x64 + 0.044715 * x64**3)))
    np.testing.assert_allclose(np.asarray(w1(x, y)), ref, rtol=2e-5, atol=1e-6)
    # 1 + tanh cancels for x < 0: a few ulps of tanh near -1 (6e-8 each) times |x| / 2.
    np.testing.assert_allclose(np.asarray(gelu(x)), gelu_ref, rtol=2e-5, atol=2e-6)


@pytest.fixture(scope="module")
def tanh64():
    return tj.jit(np.tanh, device="cpu")


@given(
    st.lists(st.floats(-30, 30) | st.sampled_from([np.nan, np.inf, -0.0]), min_size=N, max_size=N)
)
def test_float64_tanh_unchanged(tanh64, values):
    x = np.array(values, np.float64)
    np.testing.assert_allclose(np.asarray(tanh64(x)), np.tanh(x), rtol=1e-15, atol=0)
