"""The CUDA backend on a GPU: `jit(device="cuda")` against the NumPy reference interpreter.

Runs only with CuPy and a CUDA GPU (`benchmarks/gpu_check.sh` runs it on an H100/H200).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _cuda_programs import (
    DTYPES,
    _binary,
    _convert,
    _gather,
    _layout,
    _reductions,
    _rowwise_last,
    _unary,
    _w1,
    mlp_args,
    mlp_step,
    needs_gpu,
)
from _strategies import arrays_of
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import DeviceError
from tracejit.tracer.core import bind

# ---------------------------------------------------------------- on the GPU


def assert_close(got, want, loose: float = 1.0):
    """Equal to the reference; float tolerance covers CUDA's <= 2-ulp math and sum order."""
    got, want = tj.device_get(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    if want.dtype.kind == "f":
        rtol, atol = (1e-5, 1e-6) if want.dtype == np.float32 else (1e-12, 1e-13)
        rtol, atol = rtol * loose, atol * loose
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def run_both(fun, *args, loose: float = 1.0):
    got = tj.tree_flatten(tj.jit(fun, device="cuda")(*args))[0]
    want = tj.tree_flatten(tj.jit(fun, device="numpy")(*args))[0]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, loose)
    return got


def gpu_values(dtype, shape):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        elements = st.booleans()
    elif dt.kind == "i":
        info = np.iinfo(dt)
        elements = st.one_of(st.integers(-40, 40), st.sampled_from([0, -1, info.min, info.max]))
    else:
        width = 32 if dt == np.float32 else 64
        tiny = float(np.finfo(dt).smallest_subnormal)
        special = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.5, 1.5, 2.5, -2.5, tiny, -tiny])
        elements = st.one_of(st.floats(-30, 30, width=width), special)
    return arrays_of(elements, dt, shape)


GPU_SHAPES = [(), (7,), (3, 5), (0, 4), (1031,)]


@functools.cache
def _fun(kind, dtype):
    return {"unary": _unary, "binary": _binary}[kind](dtype)


@needs_gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=10)
@given(data=st.data())
def test_gpu_every_elementwise_primitive_matches_the_reference(dtype, data):
    shape = data.draw(st.sampled_from(GPU_SHAPES))
    x = data.draw(gpu_values(dtype, shape))
    y = data.draw(gpu_values(dtype, shape))
    with np.errstate(all="ignore"):
        run_both(_fun("unary", dtype), x)
        run_both(_fun("binary", dtype), x, y)
        if np.dtype(dtype).kind == "f":
            x = np.where(np.abs(x) < 2e9, x, 0).astype(dtype)
        run_both(_convert, x)


@needs_gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=8)
@given(data=st.data())
def test_gpu_reductions_match_the_reference(dtype, data):
    x = data.draw(gpu_values(dtype, (2, 3, 4)))
    if np.dtype(dtype).kind == "i":
        x = np.clip(x, -3, 3).astype(dtype)
    with np.errstate(all="ignore"):
        run_both(_reductions, x)


def assert_bits_equal(got, want):
    """Equal values, signs of zero and subnormals included (no tolerance)."""
    got, want = tj.device_get(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want)  # a NaN's sign bit is not specified (x86 sets it, CUDA not)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


def _ieee_exact(a, b):
    """Correctly rounded ops (NumPy's results bit for bit) and reductions over subnormals."""
    return (a / b, a * b, a + b, a - b, a * b + a, tnp.sqrt(tnp.abs(a)), tnp.arctan2(a * 0, b))


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_gpu_keeps_subnormals_and_signed_zeros(dtype):
    # Regression (H200): kernels compiled with flush-to-zero gave 0 / 1e-45 = nan,
    # argmax([0, 1e-45]) = 0 and prod([1e-45, inf]) = nan; 0-d inputs copied by cupy.asarray
    # (a memset for any value == 0) lost the sign of -0.0: 1 / -0 = inf, atan2(0, -0) = 0.
    tiny = np.finfo(dtype).smallest_subnormal
    x = np.array([1.0, 0.0, -0.0, 0.0, tiny, -tiny, 3 * tiny, 1e-30, 2.0], dtype)
    y = np.array([-0.0, -0.0, -0.0, tiny, 2.0, 0.5, tiny, 1e-10, -0.0], dtype)
    f = tj.jit(_ieee_exact, device="cuda")
    with np.errstate(all="ignore"):
        for xs, ys in [(x, y), *zip(x, y)]:  # whole arrays, then every pair as 0-d arrays
            xs, ys = np.asarray(xs), np.asarray(ys)
            for got, want in zip(f(xs, ys), _ieee_exact(xs, ys)):
                assert_bits_equal(got, np.asarray(want, dtype))
    r = np.array([[0.0, tiny, 0.0], [tiny, np.inf, 2.0], [-tiny, -0.0, -tiny]], dtype)
    reds = tj.jit(lambda a: (a.argmax(axis=1), a.max(axis=1), a.prod(axis=1), a.sum(axis=1),
                             a.argmin(axis=0), a.min(axis=0)), device="cuda")  # fmt: skip
    want = (r.argmax(1), r.max(1), r.prod(1), r.sum(1), r.argmin(0), r.min(0))
    for got, w in zip(reds(r), want):
        assert_bits_equal(got, w)


@needs_gpu
@pytest.mark.parametrize(
    "shape", [(64, 1024), (5, 7), (3, 20000), (1, 1), (300, 33), (0, 5)], ids=str
)
def test_gpu_rowwise_kernels_match_the_reference(shape):
    rng = np.random.default_rng(1)
    x = (rng.normal(size=shape) * 3).astype(np.float32)
    g = rng.normal(size=shape[-1:]).astype(np.float32)
    b = rng.normal(size=shape[-1:]).astype(np.float32)
    if shape[0] == 0:
        x = np.zeros(shape, np.float32)
    run_both(_rowwise_last, x, g, b, loose=10.0)
    if x.size:
        run_both(lambda a: (tnp.argmax(a, axis=-1), tj.nn.softmax(a, axis=0)), x, loose=10.0)


@needs_gpu
@pytest.mark.parametrize("shape", [(4096, 300), (33, 70), (100000,)], ids=str)
def test_gpu_column_and_full_reductions_match_numpy(shape):
    x = np.random.default_rng(2).normal(size=shape)
    axis = 0
    got = tj.jit(lambda a: (a.sum(axis=axis), a.max(axis=axis), tnp.argmin(a, axis=axis),
                            tnp.flip(a, -1).max(axis=axis)), device="cuda")(x)  # fmt: skip
    np.testing.assert_allclose(tj.device_get(got[0]), x.sum(axis=0), rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(tj.device_get(got[1]), x.max(axis=0))
    np.testing.assert_array_equal(tj.device_get(got[2]), x.argmin(axis=0))
    # a reversed kept axis (stride -1) reads in column layout (ir/cwriter/layout.py)
    np.testing.assert_array_equal(tj.device_get(got[3]), np.flip(x, -1).max(axis=0))


@needs_gpu
def test_gpu_layout_gather_and_matmul_match_the_reference():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(2, 3, 4)), rng.normal(size=(4,))
    run_both(_layout, x, y)
    run_both(_gather, rng.normal(size=(6, 4)), np.array([0, 3, -1, 2, 2]))
    for dt in (np.float32, np.float64, np.int32, np.int64):
        a = rng.integers(-5, 5, (2, 3, 4)).astype(dt)
        b = rng.integers(-5, 5, (2, 4, 5)).astype(dt)
        run_both(lambda p, q: (p @ q, p.mT @ p, (p @ q).sum(axis=-1)), a, b)


@needs_gpu
def test_gpu_w1_on_misaligned_and_odd_sizes():
    import cupy

    rng = np.random.default_rng(4)
    for n in (1, 5, 4099, 1 << 20):
        x = rng.normal(size=n + 1).astype(np.float32)
        y = rng.normal(size=n + 1).astype(np.float32)
        run_both(_w1, x[:n], y[:n])
        xd, yd = cupy.asarray(x)[1:], cupy.asarray(y)[1:]  # 4-byte offset: the scalar path
        got = tj.jit(_w1, device="cuda")(xd, yd)
        np.testing.assert_allclose(got.get(), _w1(x[1:], y[1:]), rtol=1e-5, atol=1e-6)


@needs_gpu
def test_gpu_mlp_step_matches_the_reference_in_float64():
    args = mlp_args(batch=64, n_in=20, hidden=32, n_out=10, dtype=np.float64)
    run_both(mlp_step, *args, loose=1000.0)


@needs_gpu
def test_gpu_cupy_inputs_stay_on_device_and_outputs_are_cupy():
    import cupy

    x = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
    f = tj.jit(lambda a, s: a * s + 1.0, device="cuda")
    out = f(x, 2.0)
    assert isinstance(out, cupy.ndarray)
    np.testing.assert_array_equal(out.get(), np.arange(12, dtype=np.float32).reshape(3, 4) * 2 + 1)
    out2 = f(np.ones((3, 4), np.float32), 2.0)  # NumPy in: copied to the device, CuPy out
    assert isinstance(out2, cupy.ndarray)
    assert f.lower(x, 2.0).compile().kernels()
    with pytest.raises(DeviceError, match="device_get"):
        tj.jit(lambda a: a + 1.0)(x)


@needs_gpu
def test_gpu_device_put_get_roundtrip_and_grad():
    import cupy

    for z in (np.float32(-0.0), np.array(-0.0), np.array([-0.0, 5e-324])):
        back = tj.device_get(tj.device_put(z, "cuda"))
        np.testing.assert_array_equal(np.signbit(back), np.signbit(z))
        np.testing.assert_array_equal(back, z)

    x = tj.device_put(np.linspace(-1, 1, 9), "cuda")
    assert isinstance(x, cupy.ndarray)
    g = tj.jit(tj.grad(lambda a: tnp.sum(tnp.tanh(a) ** 2)), device="cuda")(x)
    xs = np.linspace(-1, 1, 9)
    want = 2 * np.tanh(xs) * (1 - np.tanh(xs) ** 2)
    np.testing.assert_allclose(tj.device_get(g), want, rtol=1e-12)


def _index_cases(n: int, shape: tuple, rng) -> np.ndarray:
    """Indices in range, negative, and far out of range both ways (the prims clamp)."""
    pool = np.array([-(10**6), -2 * n - 3, -n - 1, -n, -1, 0, n - 1, n, 10**6])
    return rng.choice(pool, shape)


# 1-D, a middle axis, many rows over few columns (each case compiles 5 programs per dtype;
# the edge test adds a long last axis).
NATIVE_CASES = [((7,), 0), ((4, 3, 2), 1), ((1031, 3), 0)]


@needs_gpu
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32, np.float64])
def test_gpu_native_fallbacks_match_numpy_bit_for_bit(dtype):
    rng = np.random.default_rng(7)
    for shape, axis in NATIVE_CASES:
        n = shape[axis]
        x = gpu_example(dtype, shape, rng)
        idx = _index_cases(n, (6,), rng).astype(np.int32)
        along = _index_cases(n, shape[:axis] + (5,) + shape[axis + 1 :], rng)
        upd = gpu_example(dtype, shape[:axis] + (6,) + shape[axis + 1 :], rng)
        upd_along = gpu_example(dtype, along.shape, rng)
        for fun, *args in _native_cases(axis, x, idx, along, upd, upd_along):
            assert_native_bit_exact(fun, *args)


def _native_cases(axis, x, idx, along, upd, upd_along) -> list[tuple]:
    return [
        (lambda x, i: bind("take", x, i, axis=axis), x, idx),
        (lambda x, i: bind("take_along_axis", x, i, axis=axis), x, along),
        (lambda x, i, u: bind("take_add", x, i, u, axis=axis), x, idx, upd),
        (lambda x, i, u: bind("take_along_add", x, i, u, axis=axis), x, along, upd_along),
        (lambda x: bind("cumsum", x, axis=axis), x),
    ]


@needs_gpu
def test_gpu_native_fallbacks_edge_shapes_and_threefry():
    rng = np.random.default_rng(8)
    f32 = np.float32
    x = rng.standard_normal((3, 2000)).astype(f32) * 1e4
    idx = rng.integers(-5, 5, 50000)
    upd = rng.standard_normal((3, 50000)).astype(f32)  # long index runs: NumPy's add order
    assert_native_bit_exact(lambda x, i, u: bind("take_add", x, i, u, axis=1), x, idx, upd)
    assert_native_bit_exact(lambda x: bind("cumsum", x, axis=1), x)
    empty_idx = np.zeros(0, np.int64)
    assert_native_bit_exact(lambda x, i: bind("take", x, i, axis=0), x, empty_idx)
    assert_native_bit_exact(lambda x: bind("cumsum", x, axis=0), np.zeros((0, 3), f32))
    upd0 = np.zeros((3, 0), f32)  # no updates: the scatter still copies x
    assert_native_bit_exact(lambda x, i, u: bind("take_add", x, i, u, axis=1), x, empty_idx, upd0)
    for key in ([0, 0], [-(2**31), 2**31 - 1], [123, -7]):
        for n in (0, 1, 6, 7, 1031):
            counts = (np.arange(n) * 7919 - 3).astype(np.int32)
            assert_native_bit_exact(lambda k, c: bind("threefry2x32", k, c), np.array(key), counts)
    assert_native_bit_exact(lambda k: tj.random.uniform(k, (5, 7)), tj.random.key(42))
    with pytest.raises(IndexError):  # an empty axis with indices stays a raising host step
        tj.jit(lambda x, i: bind("take", x, i, axis=1), device="cuda")(
            np.zeros((2, 0), f32), np.array([0, 1])
        )


def gpu_example(dtype, shape, rng) -> np.ndarray:
    """Values with NaNs, infinities, signed zeros and integer extremes mixed in."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "i":
        info = np.iinfo(dt)
        pool = np.array([info.min, info.max, -1, 0, 1], dt)
        out = rng.integers(-50, 50, shape).astype(dt)
    else:
        pool = np.array([np.nan, np.inf, -np.inf, -0.0, 1e30, 1e-7], dt)
        out = (rng.standard_normal(shape) * 100).astype(dt)
    mask = rng.random(shape) < 0.2
    return np.where(mask, rng.choice(pool, shape), out).astype(dt)


def assert_native_bit_exact(fun, *args):
    """device="cuda" equals device="numpy" byte for byte (NaN sign bits aside), no host step."""
    jitted = tj.jit(fun, device="cuda")
    got = np.asarray(tj.device_get(jitted(*args)))
    want = np.asarray(tj.jit(fun, device="numpy")(*args))
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    if got.dtype.kind == "f":  # NaN's sign bit is not specified
        got, want = np.where(np.isnan(got), np.nan, got), np.where(np.isnan(want), np.nan, want)
    assert got.tobytes() == want.tobytes(), (fun, got, want)
    assert jitted.lower(*args).compile().executable.fallbacks() == []


@needs_gpu
def test_gpu_outputs_placed_over_inputs_do_not_read_them_through_restrict():
    # Regression (H100): the memory plan placed a kernel's output over a dying input its
    # value does not depend on; that input was `const __restrict__`, so nvcc could load it
    # after the store. `unique_counts(i % 3, size=3)` gave [3, 0, 0]. Under the emulator a
    # restrict pointer aliasing a written one is an error (tests/cuda_emulator/cupy/_module.py).
    i = np.array([[3, -1, 0, 7], [2, 2, -5, 1], [0, 4, 4, -2]])
    values, counts = tj.jit(lambda i: tuple(tnp.unique_counts(i % 3, size=3)), device="cuda")(i)
    want = np.unique_counts(i % 3)
    np.testing.assert_array_equal(tj.device_get(values), want.values)
    np.testing.assert_array_equal(tj.device_get(counts), want.counts)


@needs_gpu
def test_gpu_pow_is_exact_where_the_result_is_representable():
    # CUDA's pow is within 2 ulps but missed exact float64 results in the last bit on an
    # H100 (NumPy's glibc pow is exact there). tj_pow multiplies for integer exponents up to
    # 64 when every product is exact (checked with an FMA) and calls pow otherwise.
    import cupy

    from tracejit.backend_cuda.codegen import HEADER
    from tracejit.backend_cuda.launcher import load_module

    src = (
        HEADER
        + r"""
    extern "C" __global__ void k(const double* x, const double* y, double* out, int* exact) {
      const int i = threadIdx.x;
      double r = 0;
      exact[i] = tj_pow_by_products(x[i], y[i], &r);
      out[i] = tj_pow(x[i], y[i]);
    }"""
    )
    x = np.array([3.0, -2.0, 1.5, 10.0, 10.0, 0.5, 2.0, 3.0, -0.5, 1e200, 2.0, 7.0])
    y = np.array([5.0, -3.0, 4.0, 22.0, 23.0, -10.0, -1074.0, 0.5, 7.0, 2.0, 64.0, 2.5])
    exact = [True, True, True, True, False, True, False, False, True, False, True, False]
    out, flags = cupy.empty(len(x)), cupy.empty(len(x), np.int32)
    kernel = load_module(cupy, src, ["k"]).get_function("k")
    xs, ys = cupy.asarray(x), cupy.asarray(y)
    kernel((1,), (len(x),), tuple(a.data.ptr for a in (xs, ys, out, flags)))
    assert (flags.get() != 0).tolist() == exact
    with np.errstate(over="ignore"):
        got, want = out.get(), x**y
    np.testing.assert_array_equal(got[exact], want[exact])
    np.testing.assert_allclose(got, want, rtol=4e-16)


@needs_gpu
def test_gpu_random_bytes_in_every_file_of_its_cache_entries_rebuild(tmp_path, monkeypatch):
    # The cache-fault suite (tests/backend/test_cache_faults.py) corrupts the C++ entries;
    # a CUDA function has two of its own: the program (source.cu, lib.pkl) under the traced
    # graph's key and the NVRTC binary (lib.cubin) under the source's. Every file of both,
    # overwritten with random bytes: one warning, a rebuild, the right answer.
    from tracejit import cache
    from tracejit.backend_cuda import launcher

    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path))
    x = np.arange(4.0)

    def run():
        return tj.device_get(tj.jit(lambda x: x * 2.0 + 1.0, device="cuda")(x)).tolist()

    assert run() == (x * 2.0 + 1.0).tolist()
    files = list(tmp_path.glob("??/*/*"))
    assert {p.suffix for p in files} >= {".cubin", ".cu", ".pkl", ".json"}
    rng = np.random.default_rng(0)
    for path in files:  # new files in their place (the emulator's cubin is a loaded library)
        junk = path.with_name("junk")
        junk.write_bytes(rng.integers(0, 256, max(path.stat().st_size, 64), np.uint8).tobytes())
        junk.replace(path)
    monkeypatch.setattr(launcher, "_modules", {})  # a fresh process: nothing loaded yet
    with pytest.warns(cache.CacheCorruptionWarning):
        assert run() == (x * 2.0 + 1.0).tolist()
