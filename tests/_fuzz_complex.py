"""Error-bound rules of complex values and the FFTs (see _fuzz_bounds for the model).

A complex Shadow's `err` bounds the modulus of the error, |z - z_exact|; u is the unit
roundoff of the parts' dtype (float32 for complex64).
- + and - round each part once: exact on exact operands (bit for bit), else
  ea + eb + 2u|out| (each part within u of its value, |re| + |im| <= sqrt(2) |out|).
- x * y = (ac - bd) + (ad + bc)i is not correctly rounded, and an implementation may fuse it
  into FMAs: each part within 2u (|ac| + |bd|) of its exact value, so 4u |x||y| in modulus
  plus the propagated ea|y| + eb|x| + ea eb.
- |z|: hypot within 1 ulp, ea plus 2u |out| (a naive sqrt(re^2 + im^2) that overflows or
  underflows on large or tiny parts is outside this bound: a wrong result).
- sum of n terms: per part (n - 1) u sum |z| (Higham), 2 (n - 1) u sum |z| in modulus.
- FFT of length N (pocketfft/ducc, cuFFT: Cooley-Tukey, mixed radix, Bluestein for primes):
  ||fft(x) - y||_2 <= c log2(N) u ||fft(x)||_2 = c log2(N) u sqrt(N) ||x||_2 (Higham,
  section 24.1, with accurate twiddles); elementwise within that norm bound. c = 8 over
  log2(N) + 1 covers Bluestein's three passes. Input bounds add sum_j e_j (|w^jk| = 1),
  and the norm's scale (1/N for ifft, 1/sqrt(N) for "ortho") multiplies both. irfft is the
  ifft of the Hermitian extension: twice the input's sum and norm.
Non-finite values (overflow of a product, an infinite part) are undecided: NumPy's complex
arithmetic does not follow C99 Annex G, and neither implementation promises to.
"""

from __future__ import annotations

import math

import numpy as np
from _fuzz_bounds import TINY, Shadow, finish, unit_roundoff

ERRSTATE = {"all": "ignore"}
FFT_C = 8


def _nonfinite(*zs) -> np.ndarray:
    out = False
    for z in zs:
        out = out | ~np.isfinite(z)
    return np.asarray(out)


def _u(dtype) -> float:
    return unit_roundoff(np.finfo(dtype).dtype)


def c_exact_rule(out, *args) -> Shadow:
    """real, imag, conj, negative: bits move, nothing rounds."""
    err = np.zeros(np.shape(out))
    unk = np.zeros(np.shape(out), bool)
    for a in args:
        err, unk = np.maximum(err, a.err), unk | a.unk
    return finish(out, err, unk)


def c_make_rule(out, a: Shadow, b: Shadow) -> Shadow:
    """x + 1j * y of reals: the parts' bounds (1j * y's real part is 0 * y, +-0 or NaN at an
    infinite y, and its zero's sign is not a contract: a tiny bound, non-finite undecided)."""
    err = np.maximum(a.err + b.err, TINY)
    return finish(out, err, a.unk | b.unk | _nonfinite(a.value, b.value))


def c_add_rule(out, a: Shadow, b: Shadow) -> Shadow:
    inexact = (a.err > 0) | (b.err > 0)
    with np.errstate(**ERRSTATE):
        err = np.where(inexact, a.err + b.err + 2 * _u(out.dtype) * np.abs(out), 0.0)
    return finish(out, err, a.unk | b.unk | (inexact & _nonfinite(out)))


def c_mul_rule(out, a: Shadow, b: Shadow) -> Shadow:
    x, y = np.abs(a.value.astype(np.complex128)), np.abs(b.value.astype(np.complex128))
    with np.errstate(**ERRSTATE):
        err = a.err * y + b.err * x + a.err * b.err + 4 * _u(out.dtype) * x * y
    unk = a.unk | b.unk | _nonfinite(out, a.value, b.value)
    return finish(out, np.maximum(err, TINY), unk)


def c_abs_rule(out, a: Shadow) -> Shadow:
    with np.errstate(**ERRSTATE):
        err = a.err + 2 * _u(out.dtype) * np.abs(out)
    return finish(out, np.maximum(err, TINY), a.unk | _nonfinite(a.value))


# |f'(w)| bounds on the disk |w - z| <= e, times e: the first-order move of f
_MOVES = {
    "exp": lambda z, e: np.abs(np.exp(z)) * np.exp(e) * e,
    "log": lambda z, e: e / (np.abs(z) - e),
    "sqrt": lambda z, e: e / (2 * np.sqrt(np.abs(z) - e)),
    "sin": lambda z, e: np.cosh(np.abs(z.imag) + e) * e,
    "cos": lambda z, e: np.cosh(np.abs(z.imag) + e) * e,
    "reciprocal": lambda z, e: e / (np.abs(z) - e) ** 2,
    "square": lambda z, e: 2 * (np.abs(z) + e) * e,
}


def _extreme(*zs) -> np.ndarray:
    """Parts far from 1 (beyond 2^(+-maxexp/2)), where intermediate squares and products of
    the formulas may overflow or underflow differently in the two implementations."""
    out = False
    for z in zs:
        big = 2.0 ** (np.finfo(z.dtype).maxexp // 2)
        for p in (np.abs(z.real), np.abs(z.imag)):
            out = out | (p > big) | ((p > 0) & (p < 1 / big))
    return np.asarray(out)


def c_func_rule(out, a: Shadow, name: str) -> Shadow:
    """exp, log, sqrt, sin, cos, reciprocal, square: each implementation within 8 ulp of the
    exact value norm-wise (tracejit's tests measure at most 6; glibc's complex functions a few),
    so 16 u |out|, plus the first-order move of an inexact operand. A log or sqrt operand
    within its bound of the branch cut (the negative real axis) is undecided: an exact one is
    compared, its zero's sign choosing the side."""
    z = a.value.astype(np.complex128)
    e = a.err
    with np.errstate(**ERRSTATE):
        move = np.where(e > 0, _MOVES[name](z, e), 0.0)
        err = move + 16 * _u(out.dtype) * np.abs(out) + 16 * np.finfo(out.dtype).tiny
        unk = a.unk | _nonfinite(out, z) | _extreme(a.value) | ~np.isfinite(err)
        if name in ("log", "sqrt", "reciprocal"):
            unk |= (e > 0) & ~(np.abs(z) > 2 * e)
        if name in ("log", "sqrt"):
            unk |= (e > 0) & (z.real < e) & (np.abs(z.imag) <= e)
    return finish(out, np.where(unk, 0.0, err), unk)


def c_pow_rule(out, a: Shadow, p: float) -> Shadow:
    """z ** p for a small integer p or 0.5 (NumPy's npy_cpow, or its ** fast path: square,
    reciprocal, sqrt): z ** 0 is exactly 1 + 0j for every z; an exact zero base gives an
    exact result (0 + 0j, NaN, or sqrt's signed zero); else the move of w^p over the disk
    |w - z| <= e plus (|p| + 2) 4 u |out| for the products and the final reciprocal."""
    if p == 0:
        return finish(out, 0.0, np.zeros(out.shape, bool))
    z, e = a.value.astype(np.complex128), a.err
    x, m = np.abs(z), abs(p)
    zero = (z == 0) & (e == 0) & ~a.unk
    with np.errstate(**ERRSTATE):
        if p == 0.5:
            move = e / (2 * np.sqrt(x - e))
        elif p > 0:
            move = m * (x + e) ** (m - 1) * e
        else:
            move = m * e / (x - e) ** (m + 1)
        err = move + (m + 2) * 4 * _u(out.dtype) * np.abs(out)
        unk = a.unk | _nonfinite(out, a.value) | _extreme(a.value) | ((e > 0) & ~(2 * e < x))
    return finish(out, np.where(zero, 0.0, np.maximum(err, TINY)), unk & ~zero)


def c_div_rule(out, a: Shadow, b: Shadow) -> Shadow:
    """x / y (NumPy: Smith's algorithm): 8 u |out| per implementation plus the propagated
    (ex + |out| ey) / (|y| - ey); extreme parts and non-finite values undecided."""
    y = np.abs(b.value.astype(np.complex128))
    q = np.abs(out.astype(np.complex128))
    with np.errstate(**ERRSTATE):
        err = (a.err + q * b.err) / (y - b.err) + 16 * _u(out.dtype) * q
        err = err + 16 * np.finfo(out.dtype).tiny
    unk = a.unk | b.unk | _nonfinite(out, a.value, b.value) | _extreme(a.value, b.value)
    unk |= (b.err > 0) & ~(y > 2 * b.err)
    unk |= ~np.isfinite(err)
    return finish(out, np.where(unk, 0.0, err), unk)


def c_sum_rule(out, a: Shadow, axes) -> Shadow:
    """`out` keeps the reduced axes."""
    n = int(np.prod([a.value.shape[i] for i in axes]))
    z = np.abs(a.value.astype(np.complex128))
    with np.errstate(**ERRSTATE):
        total = np.sum(z, axis=axes, keepdims=True)
        err = np.sum(a.err, axis=axes, keepdims=True)
        err = err + 2 * max(n - 1, 0) * _u(out.dtype) * total
    unk = np.any(a.unk | _nonfinite(a.value), axis=axes, keepdims=True) | _nonfinite(out)
    return finish(out, np.maximum(err, TINY), unk)


def fft_rule(out, a: Shadow, axes: tuple, kind: str, norm) -> Shadow:
    """`axes`: the transformed axes (normalized); `out` has them at the same positions."""
    x = a.value.astype(np.complex128)
    big_n = max(math.prod(out.shape[i] if kind == "irfft" else x.shape[i] for i in axes), 1)
    forward = {None: 1.0, "backward": 1.0, "ortho": big_n**-0.5, "forward": 1.0 / big_n}
    inverse = {None: 1.0 / big_n, "backward": 1.0 / big_n, "ortho": big_n**-0.5, "forward": 1.0}
    scale = (inverse if kind in ("ifft", "irfft") else forward)[norm]
    twice = 2.0 if kind == "irfft" else 1.0
    with np.errstate(**ERRSTATE):
        # scaled by the largest |x|: squares of values below 1e-154 underflow (a row of
        # -1.3e-232 had norm 0, so a bound of 0 for its ortho ifft's last-bit difference)
        big = np.max(np.abs(x), axis=axes, keepdims=True, initial=0.0)
        safe = np.where(big > 0, big, 1.0)
        norm2 = big * np.sqrt(np.sum((np.abs(x) / safe) ** 2, axis=axes, keepdims=True))
        e_sum = np.sum(a.err, axis=axes, keepdims=True)
        # NumPy scales a float16 input's transform by 1/N rounded to float16 (its "real
        # dtype"): one rounding of the input's precision on top of the output's
        u = max(_u(out.dtype), _u(a.value.dtype))
        rounding = FFT_C * (math.log2(max(big_n, 1)) + 1) * u * math.sqrt(big_n)
        err = scale * twice * (e_sum + rounding * norm2)
        # the rounding model's underflow term: each rounding in the subnormal range is off by
        # up to half the smallest subnormal, and an implementation that scales by 1/N and back
        # (norm="forward" ifft as N ifft) multiplies that by N: [-0, -1.4e-45] (float32),
        # forward-normed ifft, is -1.4e-45 in NumPy and -0 after a halving and doubling
        tiny = float(np.finfo(out.real.dtype).smallest_subnormal)
        err = err + 2 * twice * big_n * tiny
    unk = np.any(a.unk | _nonfinite(x), axis=axes, keepdims=True)
    # partial sums up to sum |x| before any scaling: where they may overflow the dtype, an
    # implementation that scales last gives inf (fft([3.4e38, 3.4e38], norm="forward") in
    # complex64: inf+nanj here, NumPy's 3.4e38): not a contract, undecided
    with np.errstate(**ERRSTATE):
        l1 = np.sum(np.abs(x), axis=axes, keepdims=True) * twice
    unk = unk | (l1 >= float(np.finfo(out.dtype).max) / 2)
    err = np.broadcast_to(np.maximum(err, TINY), out.shape)
    unk = np.broadcast_to(unk, out.shape) | _nonfinite(out)
    return finish(out, err, unk)
