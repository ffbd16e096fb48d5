"""tracejit.numpy reductions and scans against NumPy: values and result dtypes, eager and under
`jit`, over drawn shapes (0-d, size-1 and size-0 axes), dtypes, axes and values.

The property tests run `jit` on the reference executor (device="numpy"), so each drawn example
checks the traced graph without a compile; `test_reductions_compile_for_the_test_device` runs a
batch of them through the device under test in one compile.
"""

from __future__ import annotations

import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ShapeError

ALL_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
NUMERIC = [np.float32, np.float64, np.int32, np.int64]
REFERENCE = "numpy"  # the executor of the property tests: see the module docstring


def _elements(dtype, nan: bool = False):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind == "i":
        return st.integers(-5, 5)  # products of up to 4**3 of these stay well inside int32
    values = st.floats(-10, 10, width=dtype.itemsize * 8)
    return st.one_of(values, st.just(np.nan)) if nan else values


@st.composite
def arrays(draw, dtypes=ALL_DTYPES, min_side=0, max_dims=3, nan=False):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=min_side, max_side=4))
    return draw(hnp.arrays(dtype, shape, elements=_elements(dtype, nan)))


@st.composite
def axes_for(draw, ndim: int):
    """None, one axis (possibly negative) or a tuple of distinct axes."""
    if ndim == 0:
        return draw(st.sampled_from([None, 0, -1, ()]))
    one = st.integers(-ndim, ndim - 1)
    many = st.lists(one, max_size=ndim, unique_by=lambda a: a % ndim).map(tuple)
    return draw(st.one_of(st.none(), one, many))


def tolerance(dtype, scale: float = 1.0) -> dict:
    """Float32 results may round differently in compiled code; ints and bools are exact."""
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return {"rtol": 1e-5, "atol": 1e-5 * scale}
    if dtype == np.float64:
        return {"rtol": 1e-12, "atol": 1e-12 * scale}
    return {"rtol": 0, "atol": 0}


def assert_matches(got, expected, scale: float = 1.0):
    expected = np.asarray(expected)
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, equal_nan=True, **tolerance(got.dtype, scale))


def check(fn, x, *, scale=1.0, **kwargs):
    """`tnp.<fn>` eager and jitted on `x` equals `np.<fn>`, values and dtype."""
    with np.errstate(all="ignore"):
        expected = getattr(np, fn)(x, **kwargs)
    assert_matches(getattr(tnp, fn)(x, **kwargs), expected, scale)
    jitted = tj.jit(lambda a: getattr(tnp, fn)(a, **kwargs), device=REFERENCE)
    assert_matches(jitted(x), expected, scale)


def _scale(x) -> float:
    return 1.0 + float(np.sum(np.abs(x.astype(np.float64)))) if x.size else 1.0


def _reduces_empty(x, axis) -> bool:
    axes = range(x.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    return any(x.shape[a] == 0 for a in axes) if x.ndim else False


# ---------------------------------------------------------------- sum, prod


@given(x=arrays(), data=st.data(), keepdims=st.booleans())
def test_sum_and_prod_match_numpy(x, data, keepdims):
    axis = data.draw(axes_for(x.ndim))
    dtype = data.draw(st.sampled_from([None, np.float64, np.int64]))
    check("sum", x, axis=axis, keepdims=keepdims, dtype=dtype, scale=_scale(x))
    check("prod", x, axis=axis, keepdims=keepdims, dtype=dtype, scale=10.0 ** min(x.size, 30))


@given(x=arrays(dtypes=[np.int32, np.bool_], min_side=1))
def test_sum_of_int32_and_bool_accumulates_in_int64(x):
    assert tnp.sum(x).dtype == np.int64 == np.sum(x).dtype
    assert tnp.cumsum(x).dtype == np.int64


def test_sum_and_prod_of_size0_axes_are_their_identities():
    x = np.zeros((0, 3), np.float32)
    assert_matches(tnp.sum(x, axis=0), np.zeros(3, np.float32))
    assert_matches(tnp.prod(x, axis=0), np.ones(3, np.float32))
    assert_matches(tj.jit(lambda a: tnp.prod(a), device=REFERENCE)(x), np.float32(1))


@given(x=arrays(dtypes=NUMERIC, min_side=1), initial=st.integers(-3, 3))
def test_initial_is_combined_like_numpy(x, initial):
    check("sum", x, axis=0 if x.ndim else None, initial=initial, scale=_scale(x))
    check("max", x, initial=initial)
    check("min", x, initial=initial)


# ---------------------------------------------------------------- mean, var, std


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@given(x=arrays(), data=st.data(), keepdims=st.booleans())
def test_mean_matches_numpy_including_empty_axes(x, data, keepdims):
    axis = data.draw(axes_for(x.ndim) if x.ndim else st.sampled_from([None, ()]))
    check("mean", x, axis=axis, keepdims=keepdims, scale=_scale(x))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@given(x=arrays(dtypes=NUMERIC + [np.bool_]), data=st.data(), ddof=st.sampled_from([0, 1, 2]))
def test_var_and_std_match_numpy(x, data, ddof):
    axis = data.draw(axes_for(x.ndim) if x.ndim else st.sampled_from([None, ()]))
    keepdims = data.draw(st.booleans())
    scale = _scale(x) ** 2
    check("var", x, axis=axis, ddof=ddof, keepdims=keepdims, scale=scale)
    # std near 0 is sqrt of a rounding error: its tolerance is the square root of var's
    check("std", x, axis=axis, ddof=ddof, keepdims=keepdims, scale=math.sqrt(scale) * 300)


def test_mean_of_ints_is_float64_and_of_float32_is_float32():
    assert tnp.mean(np.arange(4, dtype=np.int32)).dtype == np.float64
    assert tnp.var(np.array([True, False])).dtype == np.float64
    assert tnp.mean(np.ones(3, np.float32)).dtype == np.float32
    assert tnp.mean(np.ones(3, np.float32), dtype=np.float64).dtype == np.float64


# ---------------------------------------------------------------- max, min, argmax, argmin


@given(x=arrays(nan=True), data=st.data(), keepdims=st.booleans())
def test_max_and_min_match_numpy_and_propagate_nan(x, data, keepdims):
    axis = data.draw(axes_for(x.ndim))
    for fn in ("max", "min", "amax", "amin"):
        if _reduces_empty(x, axis):
            with pytest.raises(ValueError):
                getattr(np, fn)(x, axis=axis)
            with pytest.raises(ShapeError, match="size-0"):
                getattr(tnp, fn)(x, axis=axis)
        else:
            check(fn, x, axis=axis, keepdims=keepdims)


@given(x=arrays(nan=True), data=st.data(), keepdims=st.booleans())
def test_argmax_and_argmin_match_numpy(x, data, keepdims):
    axis = data.draw(st.one_of(st.none(), st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1)))
    for fn in ("argmax", "argmin"):
        if x.size == 0 and (axis is None or x.shape[axis] == 0):
            with pytest.raises(ValueError):
                getattr(np, fn)(x, axis=axis)
            with pytest.raises(ShapeError):
                getattr(tnp, fn)(x, axis=axis)
        else:
            check(fn, x, axis=axis, keepdims=keepdims)


def test_max_of_an_empty_axis_says_what_is_wrong_under_jit():
    f = tj.jit(lambda a: tnp.max(a, axis=1), device=REFERENCE)
    with pytest.raises(ShapeError, match=r"max: cannot reduce the size-0 axis.*\(2, 0\)") as err:
        f(np.zeros((2, 0), np.float32))
    assert "initial" in str(err.value) and "test_tnp_reductions.py" in err.value.source


# ---------------------------------------------------------------- all, any


@given(x=arrays(), data=st.data(), keepdims=st.booleans())
def test_all_and_any_match_numpy(x, data, keepdims):
    axis = data.draw(axes_for(x.ndim))
    check("all", x, axis=axis, keepdims=keepdims)
    check("any", x, axis=axis, keepdims=keepdims)


# ---------------------------------------------------------------- cumsum


@given(x=arrays(), data=st.data())
def test_cumsum_matches_numpy(x, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1)))
    dtype = data.draw(st.sampled_from([None, np.float64, np.int64]))
    check("cumsum", x, axis=axis, dtype=dtype, scale=_scale(x))


@given(x=arrays(dtypes=NUMERIC, max_dims=1), include_initial=st.booleans())
def test_cumulative_sum_matches_numpy(x, include_initial):
    if x.ndim == 0:
        x = x.reshape(1)
    check("cumulative_sum", x, include_initial=include_initial, scale=_scale(x))


# ---------------------------------------------------------------- nansum, nanmean


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@given(x=arrays(dtypes=NUMERIC, nan=True), data=st.data(), keepdims=st.booleans())
def test_nansum_and_nanmean_match_numpy(x, data, keepdims):
    axis = data.draw(axes_for(x.ndim) if x.ndim else st.sampled_from([None, ()]))
    check("nansum", x, axis=axis, keepdims=keepdims, scale=_scale(np.nan_to_num(x)))
    check("nanmean", x, axis=axis, keepdims=keepdims, scale=_scale(np.nan_to_num(x)))


# ---------------------------------------------------------------- errors, scalars, methods


@pytest.mark.parametrize("fn", ["sum", "mean", "max", "all", "argmax", "cumsum", "var"])
def test_an_out_of_range_axis_is_a_shape_error_naming_the_axis(fn):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ShapeError, match=rf"{fn}: axis 2 is out of bounds.*rank 2"):
        getattr(tnp, fn)(x, axis=2)
    f = tj.jit(lambda a: getattr(tnp, fn)(a, axis=-3), device=REFERENCE)
    with pytest.raises(ShapeError, match=rf"{fn}: axis -3 is out of bounds"):
        f(x)


def test_a_repeated_axis_is_a_shape_error():
    with pytest.raises(ShapeError, match="repeated axis"):
        tnp.sum(np.ones((2, 3)), axis=(1, -1))


def test_python_scalars_reduce_like_numpy_and_traced_ones_too():
    assert_matches(tnp.sum(3), np.sum(3))
    assert_matches(tnp.mean(True), np.mean(True))
    assert_matches(tnp.max(2.5), np.max(2.5))
    f = tj.jit(lambda s: (tnp.sum(s), tnp.mean(s)), device=REFERENCE)
    total, avg = f(2)  # traced as a weak int: sums like NumPy's int64, averages in float64
    assert_matches(total, np.sum(2))
    assert_matches(avg, np.mean(2))


def test_tracer_methods_and_numpy_functions_reach_the_same_reductions():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def f(a):
        return (a.sum(axis=0), a.mean(axis=1, keepdims=True), a.argmax(), np.max(a, axis=-1),
                np.add.reduce(a, axis=1), a.cumsum(axis=1), a.std(), a.any())  # fmt: skip

    got = tj.jit(f, device=REFERENCE)(x)
    expected = f(x)
    for g, e in zip(got, expected):
        assert_matches(g, e)


def test_reductions_compile_for_the_test_device(device):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 7)).astype(np.float32)
    i = rng.integers(-5, 5, size=(4, 3)).astype(np.int32)

    def f(m, a, b):  # m is numpy (the oracle) or tracejit.numpy
        return (m.sum(a, axis=1), m.mean(a), m.var(a, axis=0, ddof=1), m.max(a, axis=0),
                m.min(a), m.argmax(a, axis=1), m.argmin(a), m.all(a > -3, axis=1),
                m.any(b > 3), m.cumsum(b, axis=0), m.prod(b, axis=1), m.sum(b))  # fmt: skip

    got = tj.device_get(tj.jit(lambda a, b: f(tnp, a, b), device=device)(x, i))
    for g, e in zip(got, f(np, x, i)):
        assert_matches(g, e, scale=50.0)
