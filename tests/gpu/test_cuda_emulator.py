"""Checks of the CUDA emulator itself (tests/cuda_emulator), where it is the `cupy` in use.

The root conftest.py installs it on machines without CuPy (TRACEJIT_CUDA_EMULATOR=1 forces
it, =0 turns it off). The oracles are CUDA's documented shuffle semantics written out in
Python.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

import numpy as np
import pytest
from _devices import EMULATED, TEST_DEVICES

emulated = pytest.mark.skipif(not EMULATED, reason="`cupy` is not the CUDA emulator here")


def _kernel(tmp_path, source: str, name: str):
    import cupy

    from tracejit.backend_cuda import nvrtc

    path = tmp_path / f"{name}.so"
    path.write_bytes(nvrtc.compile_source(source, "-arch=sm_90", ".cubin"))
    return cupy, cupy.RawModule(path=str(path)).get_function(name)


SHUFFLES = r"""
extern "C" __global__ void shuffles(const int* mode, int* out) {
  int lane = threadIdx.x % 32, v = 100 + threadIdx.x, m = mode[0], w = mode[1];
  int r = m == 0 ? __shfl_xor_sync(0xffffffffu, v, mode[2], w)
        : m == 1 ? __shfl_down_sync(0xffffffffu, v, mode[2], w)
        : m == 2 ? __shfl_up_sync(0xffffffffu, v, mode[2], w)
                 : __shfl_sync(0xffffffffu, v, mode[2], w);
  (void)lane;
  out[threadIdx.x] = r;
}
"""


def _cuda_shuffle(mode: int, width: int, k: int, n: int) -> np.ndarray:
    """What CUDA's __shfl_*_sync return for value 100 + thread index (Programming Guide)."""
    out = []
    for t in range(n):
        lane, base = t % 32, t - t % 32
        seg = lane // width * width
        if mode == 0:
            src = lane ^ k
            src = lane if src >= seg + width else src
        elif mode == 1:
            src = lane + k if lane + k < seg + width else lane
        elif mode == 2:
            src = lane - k if lane - k >= seg else lane
        else:
            src = seg + k % width
        out.append(100 + base + src)
    return np.array(out, np.int32)


@emulated
@pytest.mark.parametrize("mode", [0, 1, 2, 3], ids=["xor", "down", "up", "idx"])
def test_shuffles_follow_cuda_semantics(tmp_path, mode):
    cupy, kernel = _kernel(tmp_path, SHUFFLES, "shuffles")
    for width in (32, 16, 8, 2):
        for k in (1, 3, width // 2, width - 1):
            params = cupy.asarray(np.array([mode, width, k], np.int32))
            out = cupy.empty(64, np.int32)
            kernel((1,), (64,), (params.data.ptr, out.data.ptr))
            np.testing.assert_array_equal(out.get(), _cuda_shuffle(mode, width, k, 64))


@emulated
def test_syncthreads_orders_shared_memory_and_blocks_run_independently(tmp_path):
    src = r"""
    extern "C" __global__ void reverse(const float* x, float* y) {
      __shared__ float s[128];
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      s[threadIdx.x] = x[i];
      __syncthreads();
      y[i] = s[blockDim.x - 1 - threadIdx.x];
    }"""
    cupy, kernel = _kernel(tmp_path, src, "reverse")
    x = np.arange(384, dtype=np.float32)
    xd, yd = cupy.asarray(x), cupy.empty(384, np.float32)
    kernel((3,), (128,), (xd.data.ptr, yd.data.ptr))
    np.testing.assert_array_equal(yd.get(), x.reshape(3, 128)[:, ::-1].ravel())


@emulated
def test_out_of_bounds_writes_and_unwritten_outputs_are_visible(tmp_path):
    src = r"""
    extern "C" __global__ void oob(float* y) { y[threadIdx.x] = 1.0f; }"""
    cupy, kernel = _kernel(tmp_path, src, "oob")
    y = cupy.empty(31, np.float32)
    assert np.isnan(y.get()).all()  # fresh device memory is poison, as on a GPU it is garbage
    with pytest.raises(RuntimeError, match="wrote outside an allocation of 124 bytes"):
        kernel((1,), (32,), (y.data.ptr,))


@emulated
def test_barrier_misuse_is_an_error_not_a_hang(tmp_path):
    src = r"""
    extern "C" __global__ void exited(float* y) {
      if (threadIdx.x < 16) return;
      y[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
    }
    extern "C" __global__ void split(float* y) {
      if (threadIdx.x < 16) { __syncthreads(); } else { y[0] = __shfl_xor_sync(0xffffffffu, 1.0f, 1); }
    }"""
    cupy, exited = _kernel(tmp_path, src, "exited")
    split = cupy.RawModule(path=str(tmp_path / "exited.so")).get_function("split")
    y = cupy.zeros(32, np.float32)
    with pytest.raises(RuntimeError, match="names a lane that has exited"):
        exited((1,), (32,), (y.data.ptr,))
    with pytest.raises(RuntimeError, match="deadlock"):
        split((1,), (32,), (y.data.ptr,))


@emulated
def test_a_race_between_barriers_shows_up_as_different_blocks(tmp_path):
    # Thread 0 reads what thread 1 writes, with no __syncthreads between: on a GPU the
    # answer depends on timing. The emulator runs odd blocks' threads in reverse order, so
    # the two blocks disagree where a fixed order would hide the race.
    src = r"""
    extern "C" __global__ void racy(float* y) {
      __shared__ float s[2];
      if (threadIdx.x == 0) s[1] = 0.0f;
      __syncthreads();
      if (threadIdx.x == 1) s[1] = 1.0f;
      if (threadIdx.x == 0) y[blockIdx.x] = s[1];
    }"""
    cupy, kernel = _kernel(tmp_path, src, "racy")
    y = cupy.zeros(2, np.float32)
    kernel((2,), (2,), (y.data.ptr,))
    assert y.get()[0] != y.get()[1]


@pytest.mark.skipif(
    "TRACEJIT_CUDA_EMULATOR" in os.environ or "TRACEJIT_TEST_DEVICE" in os.environ,
    reason="the emulator or the devices were chosen explicitly",
)
def test_a_machine_without_cupy_runs_the_cuda_tests_on_the_emulator():
    # Guards CI: without CuPy and with g++, the default run must not skip the CUDA tests.
    if shutil.which("g++") is None:
        pytest.skip("no g++: the CUDA emulator compiles kernels with it")
    # CuPy installed (then a real GPU decides), or the emulator's stand-in on the path
    assert importlib.util.find_spec("cupy") is not None
    if EMULATED:
        assert "cuda" in TEST_DEVICES


@emulated
def test_a_restrict_pointer_that_aliases_a_written_one_is_an_error(tmp_path):
    # `const T* __restrict__` promises nvcc that nothing the kernel writes changes it; it may
    # then load through the non-coherent cache after a store to the same address (an H100
    # gave wrong results where g++ -O1 did not). Distinct buffers launch fine.
    src = r"""
    extern "C" __global__ void inplace(const float* __restrict__ x, float* y) {
      y[threadIdx.x] = x[threadIdx.x] + 1.0f;
    }"""
    cupy, kernel = _kernel(tmp_path, src, "inplace")
    x, y = cupy.zeros(4, np.float32), cupy.zeros(4, np.float32)
    kernel((1,), (4,), (x.data.ptr, y.data.ptr))
    assert (y.get() == 1).all()
    with pytest.raises(RuntimeError, match="restrict parameter 0 aliases"):
        kernel((1,), (4,), (x.data.ptr, x.data.ptr))


@emulated
def test_dynamic_shared_memory_past_48_kib_needs_the_kernels_attribute(tmp_path):
    # as CUDA: `extern __shared__` is the launch's `shared_mem` bytes; more than 48 KiB is
    # refused until cudaFuncSetAttribute raises the kernel's maximum (at most 227 KiB)
    src = r"""
    extern "C" __global__ void rotate(const int* x, int* y, int n) {
      extern __shared__ int s[];
      for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = x[i];
      __syncthreads();
      for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = s[(i + 1) % n];
    }"""
    cupy, kernel = _kernel(tmp_path, src, "rotate")
    n = 16384  # 64 KiB
    x = np.arange(n, dtype=np.int32)
    xd, yd = cupy.asarray(x), cupy.empty(n, np.int32)
    with pytest.raises(RuntimeError, match="CUDA_ERROR_INVALID_VALUE"):
        kernel((1,), (64,), (xd.data.ptr, yd.data.ptr, n), shared_mem=4 * n)
    with pytest.raises(RuntimeError, match="CUDA_ERROR_INVALID_VALUE"):
        kernel.max_dynamic_shared_size_bytes = 228 * 1024
    kernel.max_dynamic_shared_size_bytes = 4 * n
    kernel((2,), (64,), (xd.data.ptr, yd.data.ptr, n), shared_mem=4 * n)
    np.testing.assert_array_equal(yd.get(), np.roll(x, -1))
