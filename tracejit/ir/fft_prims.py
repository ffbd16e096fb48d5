"""The `fft` primitive: discrete Fourier transforms over an operand's trailing axes.

`fft(x, kind, lengths)` transforms the last `len(lengths)` axes of `x`, as `jax.lax.fft`:
  "fft"/"ifft":  complex -> complex, same shape (ifft scaled by 1/N, NumPy's "backward");
  "rfft":        real -> complex, the last axis n -> n // 2 + 1;
  "irfft":       complex -> real, the last axis n // 2 + 1 -> lengths[-1] (scaled by 1/N).
`tracejit.numpy.fft` moves the transformed axes to the end, pads or crops them and applies
the other normalizations. The implementation is the pocketfft family: ducc0, `scipy.fft` or
`np.fft`, the first installed (ir/fft_host.py). No backend renders this
primitive: compiled CPU programs call it back, and CUDA programs run the same function with
CuPy (cuFFT) on the device (ir/array_library.py).

VJPs are the transposes, in JAX's convention for complex values (a linear map's cotangent
is its transpose applied, with no conjugation): the DFT matrix is symmetric, so fft and
ifft transpose to themselves; rfft's transpose is the real part of the fft of the cotangent
zero-padded to n; irfft's is the conjugated rfft of the cotangent with the doubled
interior bins weighted by 2, over N.
"""

from __future__ import annotations

import math

import numpy as np

from tracejit.errors import ShapeError, TracejitTypeError
from tracejit.ir import dtypes, fft_host
from tracejit.ir.array_library import ARRAY_IMPLS, INTO_IMPLS
from tracejit.ir.autodiff import defvjp
from tracejit.ir.graph import ConstValue
from tracejit.ir.primitives import OPAQUE, register

KINDS = ("fft", "ifft", "rfft", "irfft")


def complex_dtype(dt) -> np.dtype:
    """complex64 for float32 / complex64 operands, complex128 otherwise."""
    dt = np.dtype(dt)
    return np.dtype(np.complex64 if dt in (np.float32, np.complex64) else np.complex128)


def real_dtype(dt) -> np.dtype:
    return np.dtype(np.float32 if np.dtype(dt) in (np.float32, np.complex64) else np.float64)


def _fft_rule(avals, kind, lengths):
    ((shape, dt, _),) = avals
    k = len(lengths)
    if kind not in KINDS or not 1 <= k <= len(shape):
        raise ShapeError(
            f"fft: kind {kind!r} over {k} trailing axes of a rank-{len(shape)} operand"
        )
    want_complex = kind != "rfft"
    if dtypes.is_complex(dt) != want_complex:
        raise TracejitTypeError(f"fft {kind}: operand of dtype {dt}")
    lead, tail = tuple(shape[:-k]), tuple(shape[-k:])
    expect = tuple(lengths[:-1]) + ((lengths[-1] // 2 + 1) if kind == "irfft" else lengths[-1],)
    if tail != expect:
        raise ShapeError(f"fft {kind}: trailing shape {tail} for lengths {tuple(lengths)}")
    if kind == "rfft":
        return (lead + tail[:-1] + (tail[-1] // 2 + 1,), complex_dtype(dt), False)
    if kind == "irfft":
        return (lead + tuple(lengths), real_dtype(dt), False)
    return (tuple(shape), dt, False)


def fft_impl(x, kind, lengths, *, xp=np, workers=None, out=None):
    """The transform in the host library (ir/fft_host.py) or, given `xp` (CuPy), in
    `xp.fft`; on `workers` threads (the CPU program's fft step, backend_cpu/fft_step.py)
    and into `out` where given."""
    lib = None if xp is np else xp.fft
    want = _fft_rule([(x.shape, x.dtype, False)], kind, lengths)[1]
    result = fft_host.transform(x, kind, lengths, lib=lib, workers=workers, out=out)
    return result if out is not None else result.astype(want, copy=False)


def _fft_into(x, outs, *, kind, lengths):
    """Into the compiled program's output buffer (ducc0 writes there itself), one thread."""
    fft_host.transform(x, kind, lengths, out=outs[0])


register("fft", OPAQUE, _fft_rule, fft_impl,
         rules={ARRAY_IMPLS: fft_impl, INTO_IMPLS: _fft_into})  # fmt: skip
dtypes.COMPLEX_HOST_PRIMS.add("fft")  # a host step: NumPy computes on complex buffers


def _const(e, array, like):
    """`array` (the trailing axes' shape) broadcast over `like`."""
    c = e.bind("const", value=ConstValue(np.asarray(array, like.dtype)))
    dims = tuple(range(like.ndim - c.ndim, like.ndim))
    return e.broadcast_in_dim(c, shape=like.shape, dims=dims)


@defvjp("fft")
def _fft_vjp(e, ct, x, *, out, kind, lengths):
    if kind in ("fft", "ifft"):
        return [e.fft(ct, kind=kind, lengths=lengths)]
    if kind == "rfft":
        n = lengths[-1]
        widths = tuple((0, 0) for _ in range(ct.ndim - 1)) + ((0, n - ct.shape[-1]),)
        zero = e.bind("const", value=ConstValue(np.zeros((), ct.dtype)))
        full = e.pad(ct, zero, widths=widths)
        return [e.real(e.fft(full, kind="fft", lengths=lengths))]
    x_hat = e.fft(ct, kind="rfft", lengths=lengths)
    m, odd = x_hat.shape[-1], lengths[-1] % 2
    weights = np.concatenate([[1.0], np.full(m - 2 + odd, 2.0), np.ones(1 - odd)])
    weights = weights / math.prod(lengths)
    return [e.conj(e.mul(x_hat, _const(e, weights, x_hat)))]


__all__ = ["KINDS", "complex_dtype", "fft_impl", "real_dtype"]
