"""Every compute dtype through a representative set of ops, compiled, against NumPy.

One jitted program per dtype (arithmetic, comparisons, where, reductions, matmul, astype,
indexing, scatter-add) on the test device (cpu; cuda under the emulator), each output checked
against NumPy on the same inputs (ml_dtypes for bfloat16). Integers take values over their
whole range, so +, -, * and negation wrap as NumPy's do, bit for bit. float16 and bfloat16 are
computed in float32 and rounded after each operation: + - * / and where are bit-exact against
NumPy; sums, means and matmuls accumulate in float32, so they are compared with the exact
(float64) result within a few ulps of the dtype instead of NumPy's own 16-bit summation.
"""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", BF16, "float32", "float64"]
ALL_DTYPES = ["bool", *INTS, *FLOATS]
# CI runs a representative subset (each dtype costs a compile per device); the others are the
# same code at another width. HYPOTHESIS_PROFILE=thorough runs all of them.
DTYPES = (
    ALL_DTYPES
    if os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
    else ["bool", "int8", "uint16", "int64", "uint64", "float16", BF16, "float32"]
)


def _data(dt: np.dtype, shape, rng) -> np.ndarray:
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":  # the whole range: overflow must wrap
        return rng.integers(0, 256, (*shape, dt.itemsize), dtype=np.uint8).view(dt)[..., 0]
    return (rng.standard_normal(shape) * 3).astype(dt)


def _program(x, y, idx):
    out = {
        "add": x + y,
        "mul": x * y,
        "lt": x < y,
        "eq": x == y,
        "where": tnp.where(x < y, x, y),
        "max_axis0": tnp.max(x, axis=0),
        "min": tnp.minimum(x, y),
        "sum_axis1": tnp.sum(x, axis=1),
        "mean": tnp.mean(x),
        "matmul": x @ y.T,
        "astype_f32": x.astype(np.float32),
        "astype_i8": x.astype(np.int8),
        "astype_bool": x.astype(np.bool_),
        "index": x[1:, ::2][idx],
        "at_add": tnp.zeros_like(x).at[idx].add(y[: len(idx)]),
    }
    if x.dtype != np.bool_:
        out.update({"sub": x - y, "neg": -x, "abs": tnp.abs(x)})
    if tnp.issubdtype(x.dtype, tnp.integer):
        out.update({"floordiv": x // y, "mod": x % y})  # NumPy gives 0 for a zero divisor
    if tnp.issubdtype(x.dtype, tnp.floating):
        out.update({"div": x / y, "sqrt": tnp.sqrt(tnp.abs(x)), "exp": tnp.exp(x * 0.25)})
    return out


def _numpy(x, y, idx):
    with np.errstate(all="ignore"):
        out = {
            "add": x + y,
            "mul": x * y,
            "lt": x < y,
            "eq": x == y,
            "where": np.where(x < y, x, y),
            "max_axis0": np.max(x, axis=0),
            "min": np.minimum(x, y),
            "sum_axis1": np.sum(x, axis=1),
            "mean": np.mean(x),
            "matmul": (x @ y.T).astype(x.dtype),  # ml_dtypes' bfloat16 matmul gives float32
            "astype_f32": x.astype(np.float32),
            "astype_i8": x.astype(np.int8),
            "astype_bool": x.astype(np.bool_),
            "index": x[1:, ::2][idx],
        }
        at_add = np.zeros_like(x)
        np.add.at(at_add, idx, y[: len(idx)])
        out["at_add"] = at_add
        if x.dtype != np.bool_:
            out.update({"sub": x - y, "neg": -x, "abs": np.abs(x)})
        if x.dtype.kind in "iu":
            out.update({"floordiv": x // y, "mod": x % y})
        if x.dtype.kind == "f" or x.dtype == BF16:
            out.update(
                {"div": x / y, "sqrt": np.sqrt(np.abs(x)), "exp": np.exp(x * x.dtype.type(0.25))}
            )
    return out


# Results that round differently from NumPy's on purpose: accumulated in float32 (16-bit
# floats) or in a wider type, compared with the float64 result within `_ULPS` ulps.
ACCUMULATED = {"sum_axis1", "mean", "matmul", "at_add"}
_ULPS = 4


def _exact_accumulation(name, x, y, idx):
    wide = x.astype(np.float64), y.astype(np.float64)
    if name == "sum_axis1":
        return wide[0].sum(axis=1)
    if name == "mean":
        return wide[0].mean()
    if name == "matmul":
        return wide[0] @ wide[1].T
    out = np.zeros_like(wide[0])
    np.add.at(out, idx, wide[1][: len(idx)])
    return out


def _check(name, got, want, dt, x, y, idx):
    got = np.asarray(tj.device_get(got))
    assert got.dtype == np.asarray(want).dtype, (name, got.dtype, np.asarray(want).dtype)
    inexact = dt.kind == "f" or dt == BF16
    if inexact and name in ACCUMULATED:
        exact = _exact_accumulation(name, x, y, idx)
        eps = float(tnp.finfo(dt).eps)
        scale = np.abs(x.astype(np.float64)).max() * max(x.shape) * 8
        tol = _ULPS * eps * max(scale, 1.0) if dt.itemsize <= 2 else 1e-5 * scale
        np.testing.assert_allclose(got.astype(np.float64), exact, atol=tol, err_msg=name)
    elif name == "exp" or (name == "mean" and dt.kind != "f"):
        rtol = 2 * float(tnp.finfo(want.dtype).eps)
        np.testing.assert_allclose(
            got.astype(np.float64), np.asarray(want).astype(np.float64), rtol=rtol, err_msg=name
        )
    else:  # bit-exact (NaN where NumPy has NaN)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} on {dt}")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_ops_match_numpy_in_every_dtype(dtype, device):
    dt = np.dtype(dtype)
    rng = np.random.default_rng(7)
    x, y = _data(dt, (5, 6), rng), _data(dt, (5, 6), rng)
    idx = np.array([0, 3, 0, 2])
    got = tj.jit(_program, device=device)(x, y, idx)
    want = _numpy(x, y, idx)
    assert set(got) == set(want)
    for name in want:
        _check(name, got[name], want[name], dt, x, y, idx)


def _wrapping_ops(x, y):
    return x + y, x - y, x * y, -x, abs(x), x // y, x % y


def test_integer_extremes_wrap_as_numpy(device):
    pairs = {}
    for dt in ["int8", "int16", "uint8", "uint16", "uint32"]:
        info = np.iinfo(dt)
        x = np.array([info.min, info.max, info.max, info.min, 0, 1], dt)
        y = np.array([info.max, 1, info.max, info.min + 1 or 1, info.max, info.max], dt)
        pairs[dt] = (x, y)
    # one compiled program for every dtype
    got = tj.jit(lambda ps: {k: _wrapping_ops(*p) for k, p in ps.items()}, device=device)(pairs)
    for dt, (x, y) in pairs.items():
        with np.errstate(all="ignore"):
            want = _wrapping_ops(x, y)
        for g, w in zip(got[dt], want):
            np.testing.assert_array_equal(tj.device_get(g), w, err_msg=dt)


def _special_floats(rng) -> np.ndarray:
    """float32 values that exercise 16-bit rounding: random bit patterns (NaN, Inf,
    subnormals included), values around the float16 overflow and halfway cases."""
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near = np.float32([65504, 65519.99, 65520, 65536, 6.1e-5, 5.96e-8, 2.98e-8, 2.99e-8, 1e-40])
    halves = np.arange(2**16, dtype=np.uint32) << 16 | (1 << 15)  # bfloat16 ties
    wide = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32)
    with np.errstate(all="ignore"):
        ties = (wide[:-1] + np.diff(wide) / 2).astype(np.float32)  # float16 ties (where exact)
    return np.concatenate([bits, near, -near, halves.view(np.float32), ties])


@pytest.mark.parametrize("dtype", ["float16", BF16], ids=str)
def test_16_bit_float_conversions_are_bit_exact(dtype, device):
    dt = np.dtype(dtype)
    x = _special_floats(np.random.default_rng(3))
    every = np.arange(2**16, dtype=np.uint16).view(dt)  # every 16-bit pattern, NaNs too

    # float64 just off the 16-bit ties: rounding through float32 would land on the tie
    rng = np.random.default_rng(4)
    with np.errstate(invalid="ignore", over="ignore"):
        x64 = x.astype(np.float64) * (1 + rng.uniform(-1e-9, 1e-9, x.size))

    @tj.jit(device=device)
    def f(x, x64, h):
        return x.astype(dt), x64.astype(dt), h.astype(np.float32), h.astype(np.float64)

    down, down64, up32, up64 = (np.asarray(tj.device_get(o)) for o in f(x, x64, every))
    for got, src in ((down, x), (down64, x64)):  # ml_dtypes rounds float64 through float32
        with np.errstate(invalid="ignore", over="ignore"):
            want = src.astype(dt)
        nan = np.isnan(want.astype(np.float32))
        assert np.array_equal(np.isnan(got.astype(np.float32)), nan)
        np.testing.assert_array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])
    for got, wide in ((up32, np.float32), (up64, np.float64)):
        with np.errstate(invalid="ignore"):  # ml_dtypes warns converting its NaNs
            ref = every.astype(wide)
        ok = ~np.isnan(ref)
        assert np.array_equal(np.isnan(got), ~ok)
        np.testing.assert_array_equal(got[ok], ref[ok])


@pytest.mark.parametrize("dtype", ["float16", BF16], ids=str)
def test_16_bit_float_gradients_match_finite_differences(dtype):
    dt = np.dtype(dtype)
    x = np.linspace(-1.5, 1.5, 7).astype(dt)

    def loss(x):
        return tnp.sum(tnp.sin(x) * x + x @ x)

    g = tj.jit(tj.grad(loss))(x)
    assert g.dtype == dt

    def loss64(v):
        return np.sum(np.sin(v) * v + v @ v)

    x64, h = x.astype(np.float64), 1e-6
    fd = [(loss64(x64 + e) - loss64(x64 - e)) / (2 * h) for e in np.eye(len(x)) * h]
    eps = float(tnp.finfo(dt).eps)
    np.testing.assert_allclose(g.astype(np.float64), fd, rtol=4 * eps, atol=8 * eps)


@pytest.mark.parametrize("dtype", ["float16", BF16, "int8", "uint64"], ids=str)
def test_sort_matches_numpy_nan_last(dtype, device):
    dt = np.dtype(dtype)
    x = _data(dt, (3, 7), np.random.default_rng(2))
    if dt.kind != "i" and dt.kind != "u":
        x[1, 2] = x[0, 0] = np.nan
    got = tj.jit(lambda x: (tnp.sort(x, axis=1), tnp.argsort(x, axis=0)), device=device)(x)
    # ml_dtypes' own bfloat16 sort misplaces NaN: the oracle sorts the exact float32 values
    ref = x.astype(np.float32) if dt == BF16 else x
    sorted_ = np.asarray(tj.device_get(got[0]))
    assert sorted_.dtype == dt
    # NumPy's comparison finds no NaN in an ml_dtypes array: compare the exact float32 values
    wide = dt if dt.kind in "iu" else np.float32
    np.testing.assert_array_equal(sorted_.astype(wide), np.sort(ref, axis=1).astype(wide))
    np.testing.assert_array_equal(tj.device_get(got[1]), np.argsort(ref, axis=0, kind="stable"))
