"""sort / argsort along the last axis on CUDA run tracejit's own bitonic row kernel
(backend_cuda/row_sort.py) for rows up to MAX_ROW: bit for bit NumPy's stable sort (NaN
payloads and signs, -0.0 and 0.0 in input order, subnormals apart from zero), every dtype
CuPy holds. Longer rows, other axes and non-contiguous operands take CuPy's sort. On a GPU
and the CUDA emulator."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from _cuda_programs import needs_gpu
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cuda import row_sort
from tracejit.backend_cuda.row_sort import MAX_ROW

pytestmark = needs_gpu

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64]  # fmt: skip
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _floats(dt: np.dtype) -> np.ndarray:
    """NaNs of both signs and several payloads, signed zeros, subnormals, infinities, ties."""
    u = _UINT[dt.itemsize]
    sign = u(1) << u(8 * dt.itemsize - 1)
    quiet = np.array(np.nan, dt).view(u)
    nans = np.array([quiet, quiet | sign, quiet | u(1), quiet | sign | u(5)], u).view(dt)
    tiny = np.array([1, 1 | sign, 2], u).view(dt)  # the least subnormals, +-
    info = np.finfo(dt)
    plain = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 1.5, info.max, info.min,
                      info.tiny, -info.tiny], dt)  # fmt: skip
    return np.concatenate([nans, tiny, plain, np.array([1e-45, -1e-45], np.float32).astype(dt)])


def _pool(dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind == "f":
        return _floats(dt)
    info = np.iinfo(dt)
    return np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1, 2, 7], dt)


def _awkward(rng, dtype, shape) -> np.ndarray:
    """Values drawn from `_pool` (many duplicates): every tie rule shows."""
    pool = _pool(dtype)
    return pool[rng.integers(0, len(pool), size=shape)]


def _bits(a: np.ndarray) -> np.ndarray:
    """The values' bits; a float16 NaN's payload dropped: tracejit sorts float16 as float32
    (ir/passes/widen.py), and its converts keep a NaN's sign, not its payload (CPU too)."""
    if a.dtype.kind != "f":
        return a
    bits = a.view(_UINT[a.dtype.itemsize])
    if a.dtype == np.float16:
        return np.where(np.isnan(a), bits & np.uint16(0x8000) | np.uint16(0x7E00), bits)
    return bits


def _sorts(x: np.ndarray):
    f = tj.jit(lambda v: (tnp.sort(v, axis=-1), tnp.argsort(v, axis=-1)), device="cuda")
    return tuple(tj.device_get(o) for o in f(x))


def _check(x: np.ndarray) -> None:
    ordered, order = _sorts(x)
    assert ordered.dtype == x.dtype and order.dtype == np.int64
    np.testing.assert_array_equal(order, np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(_bits(ordered), _bits(np.sort(x, axis=-1, kind="stable")))


@pytest.fixture
def own_kernel_only(monkeypatch):
    """CuPy's sort refused: what runs is the row kernel."""
    import cupy

    def refused(*args, **kwargs):
        raise AssertionError("CuPy's sort was called for rows the kernel sorts")

    monkeypatch.setattr(cupy, "sort", refused)
    monkeypatch.setattr(cupy, "argsort", refused)


@pytest.fixture
def cupy_calls(monkeypatch):
    """The names of CuPy's sorts called."""
    import cupy

    seen = []
    for name in ("sort", "argsort"):
        original = getattr(cupy, name)

        def call(*args, _original=original, _name=name, **kwargs):
            seen.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(cupy, name, call)
    return seen


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_rows_of_every_dtype_are_numpys_stable_sort_bit_for_bit(dtype, own_kernel_only):
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 31, 32, 33, 1000):
        _check(_awkward(rng, dtype, (3, n)))


def test_the_longest_row_runs_here_and_one_more_element_takes_cupys_sort(cupy_calls):
    rng = np.random.default_rng(1)
    _check(_awkward(rng, np.float32, (2, MAX_ROW)))  # 68 KiB of dynamic shared memory
    assert cupy_calls == []
    x = rng.normal(size=(2, MAX_ROW + 1)).astype(np.float32)
    x[0, :40] = x[1, 7:47] = 0.5  # ties
    _check(x)
    assert sorted(cupy_calls) == ["argsort", "sort"]
    # one long axis: CuPy's radix sort, with keys that give NumPy's order (ir/sorting.py)
    long = _awkward(rng, np.float64, (MAX_ROW + 5,))
    ordered, order = _sorts(long)
    np.testing.assert_array_equal(order, np.argsort(long, kind="stable"))
    np.testing.assert_array_equal(ordered, np.sort(long))


@pytest.mark.parametrize("shape", [(0,), (0, 5), (4, 0), (2, 0, 3), (2, 3, 0)])
def test_empty_rows_and_no_rows(shape, own_kernel_only):
    _check(np.zeros(shape, np.float32))


@pytest.mark.parametrize("indices", [False, True])
def test_the_kernel_keeps_float16_nan_payloads(indices):
    import cupy

    x = _awkward(np.random.default_rng(4), np.float16, (3, 50))
    got = cupy.asnumpy(row_sort.row_sort(cupy.asarray(x), cupy, indices=indices))
    want = np.argsort(x, kind="stable") if indices else np.sort(x, kind="stable")
    np.testing.assert_array_equal(got.view(want.dtype).view(np.uint8), want.view(np.uint8))


def test_one_axis_and_stacked_rows_run_here(own_kernel_only):
    rng = np.random.default_rng(2)
    _check(_awkward(rng, np.float32, (45,)))  # NaN bits kept, unlike CuPy's radix path
    _check(_awkward(rng, np.int16, (2, 3, 70)))


def test_another_axis_sorts_transposed_rows_here(own_kernel_only):
    x = _awkward(np.random.default_rng(3), np.float32, (6, 5))
    f = tj.jit(lambda v: (tnp.sort(v, axis=0), tnp.argsort(v, axis=0)), device="cuda")
    ordered, order = (tj.device_get(o) for o in f(x))
    np.testing.assert_array_equal(order, np.argsort(x, axis=0, kind="stable"))
    np.testing.assert_array_equal(_bits(ordered), _bits(np.sort(x, axis=0, kind="stable")))


def test_an_operand_the_kernel_does_not_take_goes_to_cupys_sort(cupy_calls):
    import cupy

    x = np.arange(12.0).reshape(3, 4)[::-1].copy()
    on_device = cupy.asarray(x)
    assert not on_device.T.flags.c_contiguous
    for operand, axis in ((on_device, 0), (on_device.T, 1)):  # another axis; strided rows
        want = cupy.asnumpy(operand)
        got = row_sort.argsort_impl(operand, axis=axis, xp=cupy)
        np.testing.assert_array_equal(cupy.asnumpy(got), np.argsort(want, axis=axis))
        got = row_sort.sort_impl(operand, axis=axis, xp=cupy)
        np.testing.assert_array_equal(cupy.asnumpy(got), np.sort(want, axis=axis))
    assert cupy_calls == ["argsort", "sort"] * 2


def test_a_module_is_compiled_once_per_dtype_and_padded_length(own_kernel_only):
    x = np.arange(40, 0, -1, dtype=np.uint32)
    _check(x[:20].reshape(2, 10))  # rows padded to 16
    _check(x[:20].reshape(1, 20))  # to 32
    before = row_sort._kernels.cache_info()
    _check(x[:36].reshape(3, 12))  # 16 again
    _check(x[:25].reshape(1, 25))  # 32 again
    after = row_sort._kernels.cache_info()
    assert after.misses == before.misses and after.hits > before.hits


def test_applies_only_to_the_last_contiguous_axis_of_short_rows():
    x = np.zeros((4, 6), np.float32)
    assert row_sort.applies(x, 1) and row_sort.applies(x, -1)
    assert not row_sort.applies(x, 0)
    assert not row_sort.applies(x.T, 1)  # not C-contiguous
    assert not row_sort.applies(np.zeros((2, MAX_ROW + 1), np.float32), 1)
    assert not row_sort.applies(np.zeros(3, np.complex64), 0)
    assert row_sort.applies(np.zeros((2, MAX_ROW), np.float64), 1)


_ROWS = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float16, np.int64, np.uint8]),
    shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=40),
)  # floats: NaN, infinities, subnormals, signed zeros


@settings(max_examples=25, deadline=None)
@given(x=_ROWS)
def test_drawn_arrays_sort_as_numpy_stable(x):
    _check(x)
