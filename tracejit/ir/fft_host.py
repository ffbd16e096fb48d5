"""The host FFT library behind the `fft` primitive: ducc0, else `scipy.fft`, else `np.fft`.

All three are Martin Reinecke's pocketfft family and keep float32 / complex64 in single
precision. ducc0 (pocketfft's successor, the FFT inside JAX's CPU backend) is the fastest
here and the only one that writes into a given output array (through a padded stand-in where
its rows would lie a critical stride apart, `_padded`): a 4096 x 4096 complex64 fft2
took 62 ms against scipy.fft's 121 ms on one thread (its column pass avoids the critical
stride of 32 KiB rows) and a compiled program's fft step writes straight into its output
buffer instead of copying a fresh result into it (benchmarks/RESULTS.md). `scipy.fft` runs
several 1-D transforms at once in SIMD lanes (a 1024 x 1024 fft2 15-35 ms against NumPy's
130-150 ms); `np.fft` is the fallback with neither installed.

>>> import numpy as np
>>> transform(np.array([1.0, 0.0, -1.0, 0.0], np.complex64), "fft", (4,))
array([0.+0.j, 2.+0.j, 0.+0.j, 2.+0.j], dtype=complex64)
"""

from __future__ import annotations

import ctypes
import functools
import sys

import numpy as np


@functools.cache
def library():
    """The module used: `ducc0.fft`, `scipy.fft` or `np.fft` (the first installed)."""
    try:
        import ducc0.fft

        return ducc0.fft
    except ImportError:
        pass
    try:
        import scipy.fft
    except ImportError:
        return np.fft
    return scipy.fft


# ducc0 transforms several rows at once; writing rows a multiple of 4 KiB apart, they
# compete for the same cache sets. A 1024 x 1024 complex64 fft2 (8 KiB rows) took 5.6 ms of
# one thread's time into a contiguous array and 4.0 ms into one whose rows are a cache line
# longer, copy back included; 2048 (16 KiB rows) 23 against 16-19 ms; 4096 (32 KiB) the
# same 61 ms either way (benchmarks/RESULTS.md).
CRITICAL_STRIDE = 4096
MAX_PADDED_ROW = 16384  # bytes


# NumPy asks for transparent huge pages on arrays of 4 MiB or more. This VM's balloon device
# takes free memory back (virtio-balloon free page reporting: free 2 MiB blocks, about two
# seconds after they are freed), and a huge page taken from such blocks is slow to fault in: a 4096 x 4096 complex64
# fft2 into a fresh 128 MiB output took 108 ms back to back but 347 ms (up to 622) 2.5 s
# apart, and 566-625 ms in linalg_bench's interleaved rounds (torch, on 4 KiB pages, 341 /
# 361 / 378-399). On 4 KiB pages: 249 / 263 / 247-293 ms. A 2048 x 2048 one (32 MiB) kept
# its huge pages fast either way (37 ms 2.5 s apart; 87-89 on 4 KiB pages), so only results
# from 64 MiB on are advised onto small pages (benchmarks/RESULTS.md).
SMALL_PAGES_FROM = 1 << 26  # bytes
_MADV_NOHUGEPAGE = 15


@functools.cache
def _madvise():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return fn


def small_pages(a: np.ndarray) -> np.ndarray:
    """`a` (about to be written) on ordinary pages: its whole pages are advised against
    transparent huge pages where it is big and the platform has `madvise` (advice only: the
    values and any page already touched stay as they are)."""
    madvise = _madvise()
    if madvise is None or a.nbytes < SMALL_PAGES_FROM:
        return a
    start = a.__array_interface__["data"][0]
    first = -(-start // 4096) * 4096
    last = (start + a.nbytes) // 4096 * 4096
    if last > first:
        madvise(first, last - first, _MADV_NOHUGEPAGE)  # failure only leaves the advice off
    return a


def _padded(out: np.ndarray, axes) -> np.ndarray | None:
    """A stand-in for `out` whose rows are 64 bytes longer (the caller copies it back), where
    ducc0 would write `out`'s rows a critical stride apart; else None."""
    row = out.shape[-1] * out.itemsize if out.ndim else 0
    if (
        out.ndim < 2
        or out.ndim - 1 not in axes
        or out.size < 2 * out.shape[-1]
        or row % CRITICAL_STRIDE
        or row > MAX_PADDED_ROW
        or not out.flags.c_contiguous
    ):
        return None
    full = np.empty(out.shape[:-1] + (out.shape[-1] + 64 // out.itemsize,), out.dtype)
    return small_pages(full)[..., : out.shape[-1]]


# ducc0's `inorm` (0: none, 1: 1/sqrt(N), 2: 1/N) for NumPy's norm, forward / inverse kinds
_INORM = {
    False: {"backward": 0, "ortho": 1, "forward": 2},
    True: {"backward": 2, "ortho": 1, "forward": 0},
}


def _ducc_call(lib, x, kind, lengths, axes, out, workers, norm):
    inorm = _INORM[kind in ("ifft", "irfft")][norm]
    if kind in ("fft", "ifft"):
        return lib.c2c(x, axes=axes, forward=kind == "fft", inorm=inorm, out=out, nthreads=workers)
    if kind == "rfft":
        return lib.r2c(x, axes=axes, forward=True, inorm=inorm, out=out, nthreads=workers)
    return lib.c2r(
        x, axes=axes, lastsize=lengths[-1], forward=False, inorm=inorm, out=out,
        nthreads=workers,
    )  # fmt: skip


def _ducc(lib, x, kind, lengths, axes, out, workers, norm):
    if out is None:
        shape, last = list(x.shape), axes[-1]
        if kind == "rfft":
            shape[last] = shape[last] // 2 + 1
            dtype = np.result_type(x.dtype, np.complex64)
        elif kind == "irfft":
            shape[last], dtype = lengths[-1], np.finfo(x.dtype).dtype
        else:
            dtype = x.dtype
        out = np.empty(shape, dtype)
    small_pages(out)
    stand_in = _padded(out, axes)
    if stand_in is None:
        return _ducc_call(lib, x, kind, lengths, axes, out, workers, norm)
    _ducc_call(lib, x, kind, lengths, axes, stand_in, workers, norm)
    np.copyto(out, stand_in)
    return out


def _fftn_api(lib, x, kind, lengths, axes, workers, norm):
    """`scipy.fft` / `np.fft` (and CuPy's `cupy.fft`): `workers` only where it is given.
    One axis goes through the one-dimensional call (the same result from scipy and NumPy;
    through CuPy's `fftn`, a transform over a leading axis took 1.9x CuPy's own
    `fft(x, axis=0)` on an H100)."""
    extra = {"norm": norm} if workers is None else {"norm": norm, "workers": workers}
    if len(axes) == 1:
        (axis,) = axes
        if kind == "irfft":
            return lib.irfft(x, n=lengths[0], axis=axis, **extra)
        return getattr(lib, kind)(x, axis=axis, **extra)
    if kind == "fft":
        return lib.fftn(x, axes=axes, **extra)
    if kind == "ifft":
        return lib.ifftn(x, axes=axes, **extra)
    if kind == "rfft":
        return lib.rfftn(x, axes=axes, **extra)
    return lib.irfftn(x, s=lengths, axes=axes, **extra)


def transform(
    x, kind: str, lengths: tuple, axes=None, *, norm="backward", lib=None, out=None, workers=None
):
    """`kind` over `axes` of `x` (non-negative, default the last `len(lengths)`; the real
    axis of rfft / irfft last) with `lengths` (ir/fft_prims.py), on `workers`
    threads (one when None), with NumPy's `norm`, into `out` where given (then returned), in `lib` (default
    `library()`; CUDA programs pass `cupy.fft`). The result may be of a wider dtype than
    the primitive's (NumPy's older `np.fft` computes in double): the caller casts."""
    lib = library() if lib is None else lib
    if isinstance(out, np.ndarray):  # (not CuPy's)
        small_pages(out)
    if axes is None:
        axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if getattr(lib, "__name__", "") == "ducc0.fft":
        if x.size:
            threads = 1 if workers is None else workers
            return _ducc(lib, x, kind, lengths, axes, out, threads, norm)
        lib = np.fft  # ducc0 refuses an empty operand
    result = _fftn_api(lib, x, kind, lengths, axes, workers if lib is not np.fft else None, norm)
    if out is None:
        return result
    np.copyto(out, result)
    return out


__all__ = ["SMALL_PAGES_FROM", "library", "small_pages", "transform"]
