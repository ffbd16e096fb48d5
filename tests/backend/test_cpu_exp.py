"""The CPU backend's inline float32 exp (`tj_expf`, backend_cpu/fast_exp.py) against float64
`np.exp`: ulp error over a dense sweep and over every float32 whose exp is subnormal, exact
special values, the overflow and underflow edges, and its use inside softmax, log_softmax,
logsumexp and sigmoid. float64 exp must stay on libm.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
from tracejit import nn
from tracejit.backend_cpu.compiler import find_compiler
from tracejit.backend_cpu.fast_exp import EXPF_C
from tracejit.errors import TracejitError

try:
    find_compiler()
except TracejitError as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no C++ compiler: {exc}", allow_module_level=True)

F32 = np.float32
MAX_ULP = 2.0  # the target; tools/fit_exp.py --check-compiled measured 0.900 on [-104, 89]
TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "fit_exp.py"
LN_MAX = np.log(np.float64(np.finfo(F32).max))  # 88.7228...: above it exp overflows


@pytest.fixture(scope="module")
def exp32():
    return tj.jit(np.exp, device="cpu")


def reference(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.exp(x.astype(np.float64))


def ulp_error(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|y - exp(x)| in float32 ulps of the exact (float64) exp(x); the ulp of a subnormal is
    2^-149. Where float32 rounding of exp(x) overflows, only +inf counts as right."""
    exact = reference(x)
    with np.errstate(over="ignore"):
        ref32 = exact.astype(F32)
    e = np.floor(np.log2(np.maximum(exact, 2.0**-126)))
    with np.errstate(invalid="ignore"):
        err = np.abs(y.astype(np.float64) - exact) / 2.0 ** (e - 23)
    inf_ok = np.isinf(ref32) == np.isinf(y)
    return np.where(np.isinf(ref32) & inf_ok, 0.0, np.where(inf_ok, err, np.inf))


def float32_range(lo: float, hi: float, stride: int) -> np.ndarray:
    """Every `stride`-th float32 in [lo, hi), 0 <= lo < hi."""
    a, b = np.array([lo, hi], F32).view(np.int32)
    return np.arange(a, b, stride, dtype=np.int32).view(F32)


def _check(exp32, x: np.ndarray) -> None:
    err = ulp_error(np.asarray(exp32(x)), x)
    assert err.max() <= MAX_ULP, f"{err.max():.3f} ulp at x={x[err.argmax()]!r}"


def test_float32_uses_the_inline_exp_and_float64_libm():
    f32 = tj.jit(np.exp, device="cpu").lower(np.ones(4, F32)).compile().source()
    f64 = tj.jit(np.exp, device="cpu").lower(np.ones(4, np.float64)).compile().source()
    assert "tj_expf(" in f32 and "expf(float)" not in f32
    assert "tj_expf" not in f64 and "double exp(double)" in f64


def test_dense_sweep_within_2_ulp(exp32):
    # Every 4099th float32 in [-104, 89] (~540k values), both signs.
    pos = float32_range(0.0, 89.0, 4099)
    neg = -float32_range(0.0, 104.0, 4099)
    _check(exp32, np.concatenate([pos, neg]))


def test_every_subnormal_result_within_2_ulp(exp32):
    # exp(x) < 2^-126 for x < -87.34; below -103.98 it rounds to 0. Every float32 between.
    x = -float32_range(87.33, 104.0, 1)
    y = np.asarray(exp32(x))
    err = ulp_error(y, x)
    assert err.max() <= MAX_ULP, f"{err.max():.3f} ulp at x={x[err.argmax()]!r}"
    assert y.min() == 0.0 and np.min(y[y > 0]) == np.float32(2.0**-149)


def test_overflow_edge(exp32):
    # Every float32 in [88, 89): finite up to ln(FLT_MAX), +inf after, within 2 ulp below.
    x = float32_range(88.0, 89.0, 1)
    y = np.asarray(exp32(x))
    _check(exp32, x)
    assert np.all(np.isinf(y) == (x > LN_MAX))


def test_special_values_exact(exp32):
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 3e-40], F32)
    big = np.array([89.0, 100.0, 104.0, 105.0, 1e10, 1e30, np.finfo(F32).max], F32)
    y = np.asarray(exp32(x))
    assert np.isnan(y[0]) and np.isnan(y[1])
    np.testing.assert_array_equal(y[2:], [np.inf, 0, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(np.asarray(exp32(big)), np.full(big.shape, np.inf, F32))
    tiny = -big[2:]  # exp(-104) < 2^-150: rounds to 0
    np.testing.assert_array_equal(np.asarray(exp32(tiny)), np.zeros(tiny.shape, F32))
    # e rounded to float32 (NumPy's own float32 exp is 1 ulp above it).
    np.testing.assert_array_equal(np.asarray(exp32(np.array([1.0], F32))), [F32(np.e)])


def test_fit_script_models_the_compiled_code(exp32):
    """tools/fit_exp.py checks a NumPy model of tj_expf; it must be bit-exact to the C."""
    spec = importlib.util.spec_from_file_location("fit_exp", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    consts = [float.fromhex(h) for h in re.findall(r"(-?0x1[.0-9a-f]*p[-+]?\d+)f", EXPF_C)]
    q = np.array(consts[5:10][::-1], F32)  # Q's constants, highest power first
    assert consts[3:5] == [float(c) for c in tool.ln2_split()]
    x = np.concatenate([float32_range(0.0, 104.0, 8191), np.array([np.nan, np.inf], F32)])
    x = np.concatenate([x, -x])
    y = np.asarray(exp32(x))
    np.testing.assert_array_equal(y, tool.exp_f32(x, q))


floats32 = st.floats(-60, 60, width=32) | st.sampled_from([0.0, -0.0, -np.inf, -100.0, 85.0])
ROWS, COLS = 3, 17  # one shape, so each function compiles once


@pytest.fixture(scope="module")
def row_fns():
    return {
        "softmax": tj.jit(lambda x: nn.softmax(x, axis=-1), device="cpu"),
        "log_softmax": tj.jit(lambda x: nn.log_softmax(x, axis=-1), device="cpu"),
        "logsumexp": tj.jit(lambda x: nn.logsumexp(x, axis=-1), device="cpu"),
        "sigmoid": tj.jit(nn.sigmoid, device="cpu"),
    }


def _numpy_row_fns(x: np.ndarray) -> dict:
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    s = np.sum(e, axis=-1, keepdims=True)
    return {
        "softmax": e / s,
        "log_softmax": x - m - np.log(s),
        "logsumexp": (np.log(s) + m)[:, 0],
        "sigmoid": 1.0 / (1.0 + np.exp(-x)),
    }


@settings(max_examples=15)
@given(st.lists(floats32, min_size=ROWS * COLS, max_size=ROWS * COLS))
def test_softmax_family_matches_numpy(row_fns, values):
    x = np.array(values, F32).reshape(ROWS, COLS)
    x[:, 0] = np.where(np.isinf(x[:, 0]), 0.0, x[:, 0])  # every row has a finite entry
    with np.errstate(all="ignore"):
        ref = _numpy_row_fns(x.astype(np.float64))
    for name, f in row_fns.items():
        got = np.asarray(f(x))
        # log_softmax at -inf entries is -inf in both; the others compare within 2e-5.
        np.testing.assert_allclose(got, ref[name], rtol=2e-5, atol=1e-6, err_msg=name)


@pytest.fixture(scope="module")
def exp64():
    return tj.jit(np.exp, device="cpu")


@given(
    st.lists(
        st.floats(-800, 800) | st.sampled_from([np.nan, -np.inf, np.inf]), min_size=32, max_size=32
    )
)
def test_float64_exp_unchanged(exp64, values):
    x = np.array(values, np.float64)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(np.asarray(exp64(x)), np.exp(x), rtol=1e-15, atol=0)
