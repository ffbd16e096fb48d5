"""Scaling a CuPy array by a constant in IEEE arithmetic: subnormal products kept, as NumPy.

CuPy compiles every kernel of its own with `-ftz=true` (backend_cuda/nvrtc.py), so `out *= f`
or `out /= n` on a CuPy float32/complex64 array flushes subnormal operands and products to
zero where NumPy keeps them; cupy.fft normalizes that way (`out /= n` after cuFFT). The FFT
steps (backend_cuda/fft_strided.py) ask cuFFT for the unnormalized transform and scale here
instead: one grid-stride kernel of tracejit's own, compiled with tracejit's NVRTC options
(-ftz=false), multiplying by the factor NumPy's pocketfft multiplies by (`fft_prims.scale`).

The factor travels as its bits in an integer argument (kernel arguments of tracejit's
kernels are pointers and integers; the CUDA emulator passes them as such).
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import InternalError

SOURCE = r"""
template <typename T, typename B>
__device__ void tj_scale(T* x, B bits, long long n) {
  union { B b; T v; } f;
  f.b = bits;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = x[i] * f.v;
}
extern "C" __global__ void tj_scale_f32(float* x, unsigned long long bits, long long n) {
  tj_scale<float, unsigned>(x, (unsigned)bits, n);
}
extern "C" __global__ void tj_scale_f64(double* x, unsigned long long bits, long long n) {
  tj_scale<double, unsigned long long>(x, bits, n);
}
"""
_NAMES = ("tj_scale_f32", "tj_scale_f64")
_BITS = {np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}
THREADS, MAX_BLOCKS = 256, 4096


def scale_(x, factor: float, xp):
    """Multiply the C-contiguous float or complex CuPy array `x` by `factor` in place (each
    real component, rounded to `x`'s precision as NumPy's float32 `fct` is); `x`."""
    if factor == 1.0 or x.size == 0:
        return x
    if not x.flags.c_contiguous:
        raise InternalError("scale_ takes a C-contiguous array")
    real = np.dtype(x.dtype.char.lower())  # complex64 -> float32
    flat = x.view(real).reshape(-1)
    bits = np.asarray(factor, real).view(_BITS[real])
    from tracejit.backend_cuda.launcher import load_module  # (launcher imports this module)

    fn = load_module(xp, SOURCE, _NAMES).get_function(_NAMES[real == np.float64])
    blocks = min(-(-flat.size // THREADS), MAX_BLOCKS)
    fn((blocks,), (THREADS,), (np.uint64(flat.data.ptr), np.uint64(bits), np.int64(flat.size)))
    return x


__all__ = ["scale_"]
