"""CPU reduction strategies against NumPy: column reductions (reduced axis outermost, columns
vectorized), full reductions split into per-thread partials, and row kernels that keep an
expensive per-element value in a scratch row and multiply by a reciprocal.

Shapes are chosen to cross the strategies' boundaries: more columns than one column block
(256), enough elements for the parallel threshold (32K), rows longer than the scratch limit.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cpu.compiler import find_compiler
from tracejit.errors import TracejitError
from tracejit.tracer.core import bind

try:
    find_compiler()
except TracejitError as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no C++ compiler: {exc}", allow_module_level=True)

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])


def assert_same(got, want, rtol=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    if want.dtype.kind == "f":
        if rtol is None:
            rtol = 1e-5 if want.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def draw_array(seed: int, dtype, shape, special_rate: float = 0.0) -> np.ndarray:
    """Small values (sums stay exact-ish, products bounded) with optional NaN/Inf/-0.0."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "i":
        return rng.integers(-3, 4, shape).astype(dt)
    x = rng.choice(np.array([0.5, 1.0, 1.5, -0.5, -1.0, 2.0, -0.25]), shape).astype(dt)
    if special_rate:
        mask = rng.random(shape) < special_rate
        x[mask] = rng.choice(SPECIAL, int(mask.sum())).astype(dt)
    return x


def _reduce_all_ops(x, axes):
    outs = [bind(p, x, axes=axes) for p in ("reduce_sum", "reduce_max", "reduce_min")]
    if len(axes) == 1:
        outs += [bind("argmax", x, axis=axes[0]), bind("argmin", x, axis=axes[0])]
    return outs


@functools.cache
def reducer(axes, device):
    return tj.jit(lambda x: _reduce_all_ops(x, axes), device=device)


def check_reductions(x, axes):
    got = reducer(axes, "cpu")(x)
    want = reducer(axes, "numpy")(x)
    for g, w in zip(got, want):
        assert_same(g, w)


COLUMN_CASES = [((37, 300), (0,)), ((5, 3, 513), (0, 1)), ((4, 6, 20), (1,))]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,axes", COLUMN_CASES, ids=str)
@settings(max_examples=5)
@given(seed=st.integers(0, 2**32 - 1))
def test_column_reductions_match_numpy_in_every_dtype(dtype, shape, axes, seed):
    check_reductions(draw_array(seed, dtype, shape, special_rate=0.02), axes)


def test_column_max_propagates_nan_and_argmax_finds_the_first_nan():
    x = np.zeros((300, 600), np.float32)
    x[7, 3] = np.nan
    x[250, 3] = np.nan
    x[100, 400] = np.nan
    x[5, 10] = np.inf
    x[9, 599] = -np.inf
    got = reducer((0,), "cpu")(x)
    want = reducer((0,), "numpy")(x)
    for g, w in zip(got, want):
        assert_same(g, w)
    _total, mx, mn, amax, amin = got
    assert np.isnan(mx[3]) and np.isnan(mn[400]) and mx[10] == np.inf and mn[599] == -np.inf
    assert amax[3] == 7 and amin[3] == 7 and amax[400] == 100


def test_large_column_sum_is_parallel_and_matches_numpy():
    # (600, 700) crosses the parallel threshold: three column blocks run as parallel units.
    x = draw_array(3, np.float64, (600, 700))
    f = tj.jit(lambda x: tnp.sum(x * 2.0, axis=0))
    assert_same(f(x), (x * 2.0).sum(axis=0))


def test_column_reduction_with_an_inner_store_writes_every_element():
    # The MLP backward pattern: the relu gradient is stored and its column sum reduced.
    rng = np.random.default_rng(0)
    g, h = rng.standard_normal((256, 300)), rng.standard_normal((256, 300))

    def f(g, h):
        d = g * (h > 0)
        return d, tnp.sum(d, axis=0)

    got = tj.jit(f)(g, h)
    want = tj.jit(f, device="numpy")(g, h)
    for a, b in zip(got, want):
        assert_same(a, b)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_full_reductions_split_across_threads_match_numpy(dtype):
    x = draw_array(11, dtype, (70001,), special_rate=0.0)
    check_reductions(x, (0,))
    y = draw_array(12, dtype, (300, 257))
    check_reductions(y, (0, 1))


def test_split_full_reductions_keep_first_index_and_nan():
    x = np.ones(100000, np.float32)
    check_reductions(x, (0,))  # ties everywhere: index 0
    assert reducer((0,), "cpu")(x)[3] == 0
    x[90000] = np.nan
    x[95000] = np.nan
    x[50] = 5.0
    got = reducer((0,), "cpu")(x)
    assert np.isnan(got[1]) and np.isnan(got[2]) and got[3] == 90000 and got[4] == 90000
    x = np.full(100000, -1, np.int64)
    x[60000] = 3
    x[99999] = 3
    assert reducer((0,), "cpu")(x)[3] == 60000


def _softmax(x):
    e = tnp.exp(x - tnp.max(x, axis=-1, keepdims=True))
    return e / tnp.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cols", [1, 33, 10000], ids=lambda c: f"cols{c}")
def test_softmax_rows_with_infinities_match_numpy(dtype, cols):
    # 10000 columns exceed the scratch row limit: exp is recomputed rather than stored.
    x = draw_array(5, dtype, (6, cols)) * 3
    x[1, :] = -np.inf  # all -inf: NaN, as NumPy
    x[2, 0] = -np.inf  # one -inf: exp gives 0 there
    x[3, -1] = np.inf  # +inf: NaN row
    x[4, 0] = np.nan
    got = tj.jit(_softmax)(x)
    want = tj.jit(_softmax, device="numpy")(x)
    assert_same(got, want, rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_softmax_computes_exp_once_per_element():
    x = np.ones((8, 64), np.float32)
    source = tj.jit(_softmax).lower(x).compile().source()
    kernel = source[source.index("static void k0") :]
    assert kernel.count("= tj_expf(") == 1, kernel  # float32 exp is inline (fast_exp.py)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_division_by_extreme_row_sums_is_the_quotient(dtype):
    # x / sum: a reciprocal multiply is only used where it equals the quotient to 1 ulp.
    # Sums that are subnormal, huge, zero, negative zero or infinite take the division.
    info = np.finfo(dtype)
    scales = [1.0, float(info.tiny) / 1000, float(info.max) / 100, 0.0, -0.0, np.inf, 3.0, -2.0]
    x = np.outer(np.array(scales, dtype), np.linspace(0.5, 1.5, 40).astype(dtype))
    x = x.astype(dtype)
    f = tj.jit(lambda x: x / tnp.sum(x, axis=-1, keepdims=True))
    with np.errstate(all="ignore"):
        want = x / x.sum(axis=-1, keepdims=True)
    got = f(x)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~finite], want[~finite])
    eps = float(info.eps)
    np.testing.assert_allclose(got[finite], want[finite], rtol=2 * eps, atol=0)


def test_reduction_kernels_pick_their_strategy():
    x = np.ones((64, 600), np.float32)
    col = tj.jit(lambda x: tnp.sum(x, axis=0)).lower(x).compile().source()
    full = tj.jit(lambda x: tnp.sum(x)).lower(x).compile().source()
    row = tj.jit(lambda x: tnp.sum(x, axis=1)).lower(x).compile().source()
    assert "c0" in col and "tj_parallel_parts(" not in col.split("static int tj_step_")[1]
    assert "tj_parallel_parts(" in full.split("static int tj_step_")[1]
    assert "reduction(+:a0b)" in row and "c0" not in row.split("static void k0")[1]
