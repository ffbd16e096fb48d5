"""mean, nanmean, average, var, std, nanvar and nanstd of float16 and bfloat16 work in float32
(the sums, the division, var's deviations and their squares, std's square root) and round once
to the input's dtype, as JAX does and as NumPy's own float16 mean does. Summing and dividing in
float16 made the mean of 70000 ones nan (a sum of inf over an inf count) and the variance of
arange(256) inf. The reference is NumPy in float32 rounded to the low dtype: bit for bit where
the float32 work is exact (small integers), else within the low dtype's rounding. NumPy's own
float16 var and nanmean overflow there: these tests follow the float32 rule instead."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

LOW = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)]
ONES = np.ones(70_000)  # a float16 sum or count of these overflows (max 65504)
RAMP = np.arange(256.0).reshape(16, 16)  # float16 var: a sum of squares of 1.4e6
RNG = np.random.default_rng(5)
NOISE = RNG.standard_normal((6, 40)) * 30 + 4
MASK = RNG.random((6, 40)) > 0.4


def _both(fn, x, device):
    """fn(x) eagerly and compiled for `device`, as NumPy arrays."""
    compiled = tj.device_get(tj.jit(fn, device=device)(x))
    return np.asarray(fn(x)), np.asarray(compiled)


def _float32_reference(name, x, **kw):
    """NumPy's `name` of x computed in float32, rounded once to x's dtype."""
    return np.asarray(getattr(np, name)(x.astype(np.float32), **kw)).astype(x.dtype)


@pytest.mark.parametrize("dt", LOW, ids=str)
@pytest.mark.parametrize("name", ["mean", "nanmean", "average"])
def test_mean_of_many_ones_is_one(name, dt, device):
    x = ONES.astype(dt)
    for got in _both(getattr(tnp, name), x, device):
        assert got.dtype == dt and got.shape == ()
        assert float(got) == 1.0, (name, dt, got)
    if dt == np.float16 and name != "nanmean":  # NumPy's nanmean of float16 sums in float16: inf
        assert getattr(np, name)(x) == 1.0


# (name, kwargs): every value exact in float32, so the results equal the reference bit for bit
EXACT_CASES = [
    ("mean", {}),
    ("mean", {"axis": 1}),
    ("mean", {"axis": (0, 1), "keepdims": True}),
    ("mean", {"axis": 0, "where": RAMP % 3 > 0}),
    ("nanmean", {"axis": 0}),
    ("average", {"axis": 1}),
    ("var", {}),
    ("var", {"axis": 0, "ddof": 1}),
    ("var", {"axis": 1, "keepdims": True, "where": RAMP % 5 > 0}),
    ("std", {}),
    ("std", {"axis": 1, "ddof": 2}),
    ("nanvar", {}),
    ("nanvar", {"axis": 0, "ddof": 1, "keepdims": True}),
    ("nanstd", {"axis": 1}),
]


@pytest.mark.parametrize("dt", LOW, ids=str)
@pytest.mark.parametrize("case", range(len(EXACT_CASES)))
def test_ramp_statistics_round_once_from_float32(case, dt, device):
    name, kw = EXACT_CASES[case]
    x = RAMP.astype(dt)
    want = _float32_reference(name, x, **kw)
    for got in _both(lambda a: getattr(tnp, name)(a, **kw), x, device):
        assert got.dtype == dt and got.shape == want.shape, (got.dtype, got.shape)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {kw}")


def test_numpys_float16_results_where_they_do_not_overflow():
    x = RAMP[:4].astype(np.float16)  # 0..63: NumPy's float16 var and std stay finite
    for name in ("mean", "var", "std", "nanmean", "nanvar", "nanstd"):
        np.testing.assert_allclose(np.asarray(getattr(tnp, name)(x)), getattr(np, name)(x),
                                   rtol=np.finfo(np.float16).eps)  # fmt: skip


@pytest.mark.parametrize("dt", LOW, ids=str)
def test_noisy_statistics_within_one_rounding(dt, device):
    x = NOISE.astype(dt)
    with_nan = np.where(MASK, x, np.nan).astype(dt)
    cases = [("mean", x, {"axis": 1}), ("var", x, {"axis": 1, "ddof": 1}), ("std", x, {}),
             ("mean", x, {"where": MASK, "axis": 1}), ("std", x, {"where": MASK, "axis": 0}),
             ("nanmean", with_nan, {"axis": 1}), ("nanvar", with_nan, {"axis": 1}),
             ("nanstd", with_nan, {})]  # fmt: skip
    rtol = 2 * float(ml_dtypes.finfo(dt).eps)
    for name, a, kw in cases:
        want = np.asarray(getattr(np, name)(a.astype(np.float64), **kw))
        for got in _both(lambda v, name=name, kw=kw: getattr(tnp, name)(v, **kw), a, device):
            assert got.dtype == dt, (name, got.dtype)
            want64 = np.asarray(want).astype(np.float64)
            np.testing.assert_allclose(got.astype(np.float64), want64, rtol=rtol, err_msg=name)


def test_explicit_dtype_and_weighted_average(device):
    x32 = ONES.astype(np.float32) * 3
    for got in _both(lambda a: tnp.mean(a, dtype=np.float16), x32, device):
        assert got.dtype == np.float16 and float(got) == 3.0  # summed in float32
    for got in _both(lambda a: tnp.var(a, dtype=np.float16), RAMP.astype(np.float32), device):
        np.testing.assert_array_equal(got, np.float16(np.var(RAMP.astype(np.float32))))
    x, w = ONES.astype(np.float16), np.full(70_000, 2.0, np.float16)

    def weighted(a):
        return tnp.average(a, weights=w, returned=True)

    for got in (weighted(x), tj.device_get(tj.jit(weighted, device=device)(x))):
        avg, scl = (np.asarray(g) for g in got)
        assert avg.dtype == scl.dtype == np.float16
        assert float(avg) == 1.0 and np.isinf(scl)  # the weights sum to 140000, as NumPy


def test_average_counts_and_weights_ignore_infinite_values(device):
    x, w = np.array([np.inf, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])

    def both(a):
        return tnp.average(a, returned=True), tnp.average(a, weights=w, returned=True)

    want = (np.average(x, returned=True), np.average(x, weights=w, returned=True))
    for got in (both(x), tj.device_get(tj.jit(both, device=device)(x))):
        np.testing.assert_array_equal(np.asarray(got, np.float64), np.asarray(want))  # was nan


def test_gradients_unchanged_and_through_float16():
    x = RNG.standard_normal(7).astype(np.float32)
    got = tj.grad(lambda v: tnp.mean(v * v))(x)
    want = numeric_grad(lambda v: np.mean(v * v), x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32
    for fn in (tnp.mean, tnp.var, tnp.std):
        g32 = tj.grad(lambda v, fn=fn: fn(v * v))(x)
        g16 = tj.grad(lambda v, fn=fn: fn(v * v))(x.astype(np.float16))
        assert g16.dtype == np.float16
        np.testing.assert_allclose(g16, g32, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_sums_and_scans_accumulate_in_float32_eagerly_as_compiled(device, dtype):
    """The reference interpreter's sum, prod, cumsum and cumprod of 16-bit floats accumulate
    in float32 and round once, as compiled programs do: eagerly, ml_dtypes' bfloat16 sum of
    3000 ones stalled at 256 (NumPy's float16 cumsum at 2048)."""
    ones, grow = np.ones(3000, dtype), np.full(40, 1.1, dtype)
    grown = np.cumprod(grow.astype(np.float64))  # float32 products round to these within 2 ulp
    ulp = float(ml_dtypes.finfo(dtype).eps)
    for name, x, want, rtol in (
        ("sum", ones, dtype(3000.0), 0),  # exact in float32, rounded once
        ("cumsum", ones, np.arange(1.0, 3001.0).astype(dtype), 0),
        ("prod", grow, grown[-1], 2 * ulp),  # (16-bit steps: 1.1 ** 40 off by ~10%)
        ("cumprod", grow, grown, 2 * ulp),
    ):
        fn = getattr(tnp, name)
        eager = np.asarray(fn(x))
        compiled = tj.device_get(tj.jit(fn, device=device)(x))
        assert eager.dtype == compiled.dtype == dtype, name
        for got in (eager, compiled):
            want64 = np.asarray(want).astype(np.float64)
            np.testing.assert_allclose(got.astype(np.float64), want64, rtol=rtol, err_msg=name)
