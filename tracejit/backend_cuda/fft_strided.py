"""fft / ifft over leading or trailing axes of a CuPy array by one cuFFT plan of our own.

CuPy's `fft(x, axis=0)` moves the axis last (a transposed copy), transforms and hands back
a transposed view, which the library step then copied into its C-ordered buffer: 0.47 ms
for 4096x4096 complex64 on an H100, where torch took 0.155 and CuPy's strided `fftn` 0.28
(it copies the input first; benchmarks/gpu_probe.py, eleventh session). Here the plan reads
the C-ordered operand where it lies, cuFFT's dimensions the transformed axes:

* leading axes `0..k-1`: the trailing axes are the batch (`istride` = the batch count,
  `idist` = 1);
* trailing axes (fft2 of a stack, fft along the last axis): the leading axes are the batch
  (`istride` = 1, `idist` = the transform's size). CuPy's `fftn`/`fft2` plan the same but
  pay their Python path on every call: an fft2 of 1024x1024 complex64 took 0.129 ms through
  it where CuPy's own call took 0.058, JAX 0.100 (H100, twelfth session's sweep).

The result is written C-ordered, as cuFFT's out-of-place complex transforms leave their
input as it was. Plans are kept per (device, dimensions, layout, dtype), as CuPy keeps its
own. Every fft step here (this plan's, and `cupy.fft`'s for other axes) asks for the
unnormalized transform and applies NumPy's `norm` factor with ieee_scale.py: CuPy's own
`out /= n` flushes float32 subnormals (an ifft's results of tiny inputs).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from tracejit.backend_cuda.ieee_scale import scale_
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.fft_prims import positions, scale
from tracejit.ir.primitives import get as get_primitive


def layout(x, kind: str, positions: tuple) -> tuple | None:
    """(dims, istride, idist, batch) of one plan for `kind` over `positions` of `x`: leading
    or trailing axes of a C-ordered complex array; None where no one plan does it here."""
    if kind not in ("fft", "ifft") or x.dtype not in (np.complex64, np.complex128):
        return None
    if x.size == 0 or not x.flags.c_contiguous:
        return None
    p, k = positions[0], len(positions)
    if positions != tuple(range(p, p + k)):
        return None
    dims = tuple(x.shape[p : p + k])
    outer, inner = math.prod(x.shape[:p]), math.prod(x.shape[p + k :])
    if inner == 1:  # trailing axes (or all): the leading ones are the batch
        return dims, 1, math.prod(dims), outer
    if outer == 1:  # leading axes: the trailing ones are the batch
        return dims, inner, 1, inner
    return None


@functools.lru_cache(maxsize=32)
def _plan(cufft, device: int, dims: tuple, stride: int, dist: int, batch: int, double: bool):
    fft_type = cufft.CUFFT_Z2Z if double else cufft.CUFFT_C2C
    return cufft.PlanNd(dims, dims, stride, dist, dims, stride, dist, fft_type, batch, "C",
                        len(dims) - 1, None)  # fmt: skip


def planned(x, kind: str, plan_layout: tuple, xp, norm: str = "backward"):
    """`kind` ("fft" or "ifft", with NumPy's `norm`) of the C-ordered complex CuPy array `x`
    by one plan of `plan_layout` (`layout`), as a new C-ordered array."""
    from cupy.cuda import cufft

    dims = plan_layout[0]
    plan = _plan(cufft, xp.cuda.Device().id, *plan_layout, x.dtype == np.complex128)
    out = xp.empty(x.shape, x.dtype)
    plan.fft(x, out, cufft.CUFFT_FORWARD if kind == "fft" else cufft.CUFFT_INVERSE)
    return scale_(out, scale(kind, norm, math.prod(dims)), xp)


def fft_impl(x, kind, lengths, *, axes=None, norm="backward", xp):
    """The `fft` primitive on CuPy: one plan here (`layout`), else through `cupy.fft`; either
    way the unnormalized transform, then NumPy's factor in IEEE arithmetic (ieee_scale.py)."""
    if x.size == 0:  # cuFFT refuses a plan of no transforms (cupy.fft.fftn raised)
        shape, dtype, _ = get_primitive("fft").rule(
            [(x.shape, x.dtype, False)], kind, lengths, axes
        )
        return xp.zeros(shape, dtype)
    plan_layout = layout(x, kind, positions(x.ndim, lengths, axes))
    if plan_layout is not None:
        return planned(x, kind, plan_layout, xp, norm)
    unscaled = "forward" if kind in ("ifft", "irfft") else "backward"  # CuPy divides nothing
    out = ARRAY_IMPLS.get("fft")(x, kind, lengths, axes=axes, norm=unscaled, xp=xp)
    factor = scale(kind, norm, math.prod(lengths))
    return out if factor == 1.0 else scale_(xp.ascontiguousarray(out), factor, xp)


__all__ = ["fft_impl", "layout", "planned"]
