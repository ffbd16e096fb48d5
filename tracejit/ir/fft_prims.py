"""The `fft` primitive: discrete Fourier transforms over an operand's trailing axes.

`fft(x, kind, lengths)` transforms the last `len(lengths)` axes of `x`, as `jax.lax.fft`:
  "fft"/"ifft":  complex -> complex, same shape (ifft scaled by 1/N, NumPy's "backward");
  "rfft":        real -> complex, the last axis n -> n // 2 + 1;
  "irfft":       complex -> real, the last axis n // 2 + 1 -> lengths[-1] (scaled by 1/N).
`norm` is NumPy's ("backward", the default, "ortho" or "forward"), applied by the library
inside the transform as NumPy applies it: an ifft scaled by 1/N and then multiplied by N
would lose a subnormal that NumPy's forward-normed ifft keeps. `tracejit.numpy.fft` pads or
crops the transformed axes and splits repeated ones. The implementation is the pocketfft family: ducc0, `scipy.fft` or
`np.fft`, the first installed (ir/fft_host.py). No backend renders this
primitive: compiled CPU programs call it back, and CUDA programs run the same function with
CuPy (cuFFT) on the device (ir/array_library.py).

VJPs are the transposes, in JAX's convention for complex values (a linear map's cotangent
is its transpose applied, with no conjugation): the DFT matrix is symmetric, so fft and
ifft transpose to themselves; rfft's transpose is the real part of the fft of the cotangent
zero-padded to n; irfft's is the conjugated rfft of the cotangent with the doubled
interior bins weighted by 2, times irfft's scale (1/N for "backward"). A normalization is a
real scalar, its own transpose.
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
NORMS = ("backward", "ortho", "forward")


def scale(kind: str, norm: str, n: int) -> float:
    """The factor that `kind` with NumPy's `norm` applies to the unnormalized transform of
    `n` points: 1/N on the forward transforms for "forward", on the inverse ones for
    "backward", 1/sqrt(N) on both for "ortho"."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") != (kind in ("ifft", "irfft")) else 1.0


def complex_dtype(dt) -> np.dtype:
    """complex64 for float32 / complex64 operands, complex128 otherwise."""
    dt = np.dtype(dt)
    return np.dtype(np.complex64 if dt in (np.float32, np.complex64) else np.complex128)


def real_dtype(dt) -> np.dtype:
    return np.dtype(np.float32 if np.dtype(dt) in (np.float32, np.complex64) else np.float64)


def positions(ndim: int, lengths, axes=None) -> tuple:
    """The transformed axes as non-negative positions: `axes` (negative, counted from the
    end, so that a batch axis in front leaves them), default the trailing ones."""
    k = len(lengths)
    axes = tuple(range(-k, 0)) if axes is None else tuple(axes)
    if len(axes) != k or len(set(axes)) != k or not all(-ndim <= a < 0 for a in axes):
        raise ShapeError(f"fft: axes {axes} for {k} lengths of a rank-{ndim} operand")
    return tuple(ndim + a for a in axes)


def _fft_rule(avals, kind, lengths, axes=None, norm="backward"):
    ((shape, dt, _),) = avals
    if kind not in KINDS or norm not in NORMS or not 1 <= len(lengths) <= len(shape):
        raise ShapeError(
            f"fft: kind {kind!r}, norm {norm!r}, lengths {lengths}, rank-{len(shape)} operand"
        )
    pos = positions(len(shape), lengths, axes)
    if dtypes.is_complex(dt) != (kind != "rfft"):
        raise TracejitTypeError(f"fft {kind}: operand of dtype {dt}")
    expect = tuple(lengths[:-1]) + ((lengths[-1] // 2 + 1) if kind == "irfft" else lengths[-1],)
    if tuple(shape[p] for p in pos) != expect:
        raise ShapeError(f"fft {kind}: shape {shape} along axes {pos} for lengths {lengths}")
    out = list(shape)
    if kind == "rfft":
        out[pos[-1]] = shape[pos[-1]] // 2 + 1
        return (tuple(out), complex_dtype(dt), False)
    if kind == "irfft":
        out[pos[-1]] = lengths[-1]
        return (tuple(out), real_dtype(dt), False)
    return (tuple(shape), dt, False)


def fft_impl(x, kind, lengths, *, axes=None, norm="backward", xp=np, workers=None, out=None):
    """The transform in the host library (ir/fft_host.py) or, given `xp` (CuPy), in
    `xp.fft`; on `workers` threads (the CPU program's fft step, backend_cpu/fft_step.py)
    and into `out` where given."""
    lib = None if xp is np else xp.fft
    want = real_dtype(x.dtype) if kind == "irfft" else complex_dtype(x.dtype)  # as _fft_rule
    pos = positions(x.ndim, lengths, axes)
    result = fft_host.transform(x, kind, lengths, pos, norm=norm, lib=lib, workers=workers, out=out)
    return result if out is not None else result.astype(want, copy=False)


def _fft_into(x, outs, *, kind, lengths, axes=None, norm="backward"):
    """Into the compiled program's output buffer (ducc0 writes there itself), one thread."""
    fft_impl(x, kind, lengths, axes=axes, norm=norm, out=outs[0])


register("fft", OPAQUE, _fft_rule, fft_impl,
         rules={ARRAY_IMPLS: fft_impl, INTO_IMPLS: _fft_into})  # fmt: skip
dtypes.COMPLEX_HOST_PRIMS.add("fft")  # a host step: NumPy computes on complex buffers


def attrs(lengths, axes=None, norm="backward") -> dict:
    """The primitive's attributes: `axes` only where they are not the trailing ones, `norm`
    only where it is not "backward"."""
    lengths = tuple(lengths)
    out: dict = {"lengths": lengths}
    if axes is not None and tuple(axes) != tuple(range(-len(lengths), 0)):
        out["axes"] = tuple(axes)
    if norm != "backward":
        out["norm"] = norm
    return out


@defvjp("fft")
def _fft_vjp(e, ct, x, *, out, kind, lengths, axes=None, norm="backward"):
    on = attrs(lengths, axes, norm)
    if kind in ("fft", "ifft"):
        return [e.fft(ct, kind=kind, **on)]
    last = positions(ct.ndim, lengths, axes)[-1]  # the real axis
    if kind == "rfft":
        widths = [(0, 0)] * ct.ndim
        widths[last] = (0, lengths[-1] - ct.shape[last])
        zero = e.bind("const", value=ConstValue(np.zeros((), ct.dtype)))
        full = e.pad(ct, zero, widths=tuple(widths))
        return [e.real(e.fft(full, kind="fft", **on))]
    x_hat = e.fft(ct, kind="rfft", **attrs(lengths, axes))  # unnormalized: the scale below
    m, odd = x_hat.shape[last], lengths[-1] % 2
    weights = np.concatenate([[1.0], np.full(m - 2 + odd, 2.0), np.ones(1 - odd)])
    weights *= scale("irfft", norm, math.prod(lengths))
    c = e.bind("const", value=ConstValue(np.asarray(weights, x_hat.dtype)))
    w = e.broadcast_in_dim(c, shape=x_hat.shape, dims=(last,))
    return [e.conj(e.mul(x_hat, w))]


__all__ = [
    "KINDS", "NORMS", "attrs", "complex_dtype", "fft_impl", "positions", "real_dtype", "scale",
]  # fmt: skip
