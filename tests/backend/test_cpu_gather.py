"""Native C++ gather/scatter, cumsum and threefry (backend_cpu/gather.py) against NumPy.

Each primitive runs through `device="cpu"` (compiled, no NumPy callback) and `device="numpy"`
(the reference impls in ir/structural.py and random.py); results must match bit for bit,
including float sums (scatter-add and cumsum keep NumPy's sequential order).
"""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad
from _strategies import arrays_of
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
from tracejit.backend_cpu.compiler import find_compiler
from tracejit.errors import TracejitError
from tracejit.tracer.core import bind

try:
    find_compiler()
except TracejitError as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no C++ compiler: {exc}", allow_module_level=True)

tnp = tj.numpy
DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
INDEX_DTYPES = [np.int32, np.int64]
# Compiling costs ~0.2 s per distinct shape: keep the example counts small.
FEW = settings(max_examples=8, deadline=None)

shapes = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple)


def values(dtype, shape):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        elements = st.booleans()
    elif dt.kind == "i":
        info = np.iinfo(dt)
        elements = st.one_of(st.integers(-50, 50), st.sampled_from([info.min, info.max]))
    else:
        width = 32 if dt == np.float32 else 64
        special = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 1e30, 1e-7])
        elements = st.one_of(st.floats(-100, 100, width=width), special)
    return arrays_of(elements, dt, shape)


def indices(shape, n, dtype):
    """Indices in and far out of range, negative ones included (clamped by the prims)."""
    elements = st.one_of(st.integers(-n - 1, n), st.sampled_from([-(10**6), 10**6, -2 * n - 3]))
    return arrays_of(elements, dtype, shape)


def compare(fun, *args):
    """Run `fun` compiled for the CPU and through NumPy; same bytes, no NumPy callback."""
    cpu = tj.jit(fun, device="cpu")
    got = cpu(*args)
    want = tj.jit(fun, device="numpy")(*args)
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    if got.dtype.kind == "f":  # NaN's sign bit is not specified (x86 makes -nan from inf-inf)
        got, want = np.where(np.isnan(got), np.nan, got), np.where(np.isnan(want), np.nan, want)
    assert got.tobytes() == want.tobytes(), (got, want)
    return cpu.lower(*args).compile().executable.fallbacks()


@st.composite
def gather_case(draw, along: bool):
    shape = draw(shapes)
    axis = draw(st.integers(0, len(shape) - 1))
    dtype = draw(st.sampled_from(DTYPES))
    idt = draw(st.sampled_from(INDEX_DTYPES))
    n = shape[axis]
    if along:
        ishape = shape[:axis] + (draw(st.integers(0, 4)),) + shape[axis + 1 :]
    else:
        ishape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))  # () is a 0-d index
    if n == 0:  # NumPy raises on a non-empty gather from an empty axis
        ishape = ishape[:axis] + (0,) + ishape[axis + 1 :] if along else (0,)
    x = draw(values(dtype, shape))
    idx = draw(indices(ishape, n, idt))
    return x, idx, axis


@FEW
@given(gather_case(along=False))
def test_take_is_native_and_matches_numpy(case):
    x, idx, axis = case
    assert compare(lambda x, i: bind("take", x, i, axis=axis), x, idx) == []


@FEW
@given(gather_case(along=True))
def test_take_along_axis_is_native_and_matches_numpy(case):
    x, idx, axis = case
    assert compare(lambda x, i: bind("take_along_axis", x, i, axis=axis), x, idx) == []


@FEW
@given(gather_case(along=False), st.data())
def test_take_add_is_native_and_matches_add_at(case, data):
    x, idx, axis = case
    ushape = x.shape[:axis] + idx.shape + x.shape[axis + 1 :]
    upd = data.draw(values(x.dtype, ushape))
    fun = lambda x, i, u: bind("take_add", x, i, u, axis=axis)
    assert compare(fun, x, idx, upd) == []


@FEW
@given(gather_case(along=True), st.data())
def test_take_along_add_is_native_and_matches_add_at(case, data):
    x, idx, axis = case
    upd = data.draw(values(x.dtype, idx.shape))
    fun = lambda x, i, u: bind("take_along_add", x, i, u, axis=axis)
    assert compare(fun, x, idx, upd) == []


@FEW
@given(st.data())
def test_cumsum_is_native_and_matches_numpy(data):
    shape = data.draw(shapes)
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = data.draw(values(data.draw(st.sampled_from(DTYPES)), shape))
    assert compare(lambda x: bind("cumsum", x, axis=axis), x) == []


def test_float_sums_keep_numpy_order_bit_for_bit():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2000)).astype(np.float32) * 1e4
    idx = rng.integers(-5, 5, 50000)
    upd = rng.standard_normal((3, 50000)).astype(np.float32)
    fun = lambda x, i, u: bind("take_add", x, i, u, axis=1)
    assert compare(fun, x, idx, upd) == []
    assert compare(lambda x: bind("cumsum", x, axis=1), x) == []
    rows = rng.standard_normal((21, 300)) * 1e8  # more rows than one scan group (8)
    assert compare(lambda x: bind("cumsum", x, axis=1), rows) == []


def test_empty_axis_with_indices_stays_a_numpy_callback():
    x, idx = np.zeros((2, 0), np.float32), np.array([0, 1])
    with pytest.raises(IndexError):
        tj.jit(lambda x, i: bind("take", x, i, axis=1), device="cpu")(x, idx)


@FEW
@given(
    st.lists(st.integers(-(2**31), 2**31 - 1), min_size=2, max_size=2),
    st.integers(0, 9),
    st.sampled_from(INDEX_DTYPES),
)
def test_threefry_is_native_and_bit_exact(key, n, cdt):
    k = np.array(key, np.int64)
    counts = (np.arange(n) * 7919 - 3).astype(cdt)
    assert compare(lambda k, c: bind("threefry2x32", k, c), k, counts) == []


def test_random_uniform_matches_numpy():
    key = tj.random.key(42)
    fun = lambda k: tj.random.uniform(k, (5, 7))
    assert compare(fun, key) == []


# ---------------------------------------------------------------- gradients


def _grad_check(fun, x, *rest):
    jitted = tj.jit(tj.grad(fun), device="cpu")
    got = jitted(x, *rest)
    assert jitted.lower(x, *rest).compile().executable.fallbacks() == []
    want = numeric_grad(lambda v: float(fun(v, *rest)), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@settings(max_examples=5, deadline=None)
@given(st.integers(1, 5), st.lists(st.integers(-7, 7), min_size=1, max_size=6))
def test_gradients_through_take_indexing_and_cumsum(n, raw):
    x = np.linspace(-1.0, 2.0, n * 3).reshape(n, 3)
    idx = np.array(raw)
    _grad_check(lambda x, i: tnp.sum(tnp.sin(tnp.take(x, i, axis=0)) ** 2), x, idx)
    _grad_check(lambda x, i: tnp.sum(tnp.cumsum(x, axis=0) * x[np.clip(i, -n, n - 1)][0]), x, idx)
    order = np.argsort(x * np.array([1.0, -1.0, 0.5]), axis=0)
    _grad_check(lambda x, o: tnp.sum(tnp.take_along_axis(x, o, axis=0) ** 3), x, order)
