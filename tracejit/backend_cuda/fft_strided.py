"""fft / ifft over the leading axes of a CuPy array by one strided cuFFT plan, in place.

CuPy's `fft(x, axis=0)` moves the axis last (a transposed copy), transforms and hands back
a transposed view, which the library step then copied into its C-ordered buffer: 0.47 ms
for 4096x4096 complex64 on an H100, where torch took 0.155 and CuPy's strided `fftn` 0.28
(it copies the input first; benchmarks/gpu_probe.py, eleventh session). Here the plan reads
the C-ordered operand where it lies: the transformed axes `0..k-1` are cuFFT's dimensions,
the trailing axes its batch (`istride = idist`'s batch count, `idist = 1`), and the result
is written C-ordered, as cuFFT's out-of-place complex transforms leave their input as it was.

Plans are kept per (device, dimensions, batch, dtype), as CuPy keeps its own.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.fft_prims import positions, scale


def applies(x, kind: str, positions: tuple) -> bool:
    """Whether `kind` over `positions` of `x` is a leading-axes complex transform here."""
    k = len(positions)
    return (
        kind in ("fft", "ifft")
        and positions == tuple(range(k))
        and k < x.ndim
        and x.dtype in (np.complex64, np.complex128)
        and x.size > 0
        and x.flags.c_contiguous
    )


@functools.lru_cache(maxsize=16)
def _plan(cufft, device: int, dims: tuple, batch: int, double: bool):
    fft_type = cufft.CUFFT_Z2Z if double else cufft.CUFFT_C2C
    return cufft.PlanNd(dims, dims, batch, 1, dims, batch, 1, fft_type, batch, "C",
                        len(dims) - 1, None)  # fmt: skip


def leading(x, kind: str, positions: tuple, xp, norm: str = "backward"):
    """`kind` ("fft" or "ifft", with NumPy's `norm`) over the leading axes `positions` of the
    C-ordered complex CuPy array `x` (`applies`), as a new C-ordered array."""
    from cupy.cuda import cufft

    k = len(positions)
    dims, batch = tuple(x.shape[:k]), math.prod(x.shape[k:])
    plan = _plan(cufft, xp.cuda.Device().id, dims, batch, x.dtype == np.complex128)
    out = xp.empty(x.shape, x.dtype)
    plan.fft(x, out, cufft.CUFFT_FORWARD if kind == "fft" else cufft.CUFFT_INVERSE)
    factor = scale(kind, norm, math.prod(dims))
    if factor != 1.0:
        out *= np.dtype(x.dtype.char.lower()).type(factor)  # complex64 -> float32
    return out


def fft_impl(x, kind, lengths, *, axes=None, norm="backward", xp):
    """The `fft` primitive on CuPy: over leading axes here, else through `cupy.fft`."""
    pos = positions(x.ndim, lengths, axes)
    if applies(x, kind, pos):
        return leading(x, kind, pos, xp, norm)
    return ARRAY_IMPLS.get("fft")(x, kind, lengths, axes=axes, norm=norm, xp=xp)


__all__ = ["applies", "fft_impl", "leading"]
