"""Derive the constants of the inline float32 tanh (`tj_tanhf`, both backends).

Run `python tools/fit_tanh.py` (NumPy only, ~30 s): it fits the polynomial, rounds it to
float32, checks a bit-exact NumPy model of the C on a sweep, and prints the C constants
pasted into `tracejit/ir/cwriter/fast_tanh.py`. `--check-compiled` also compiles `np.tanh`
with tracejit (device="cpu") and compares it with float64 tanh on every float32 in [0, 10.5].

The form, for t = min(|x|, 10), all in float32 with every FMA written out:

    t < 1:   tanh(t) = t + t * (s P(s)),  s = t*t             (P degree 6, P(0) ~= -1/3)
    t >= 1:  tanh(t) = 1 - 2e / (1 + e), e = exp(-2t)         (tj_expf's polynomial)

Why two pieces: a single rational (the previous `tj_tanhf`, 3.0 ulp) or a single
exp-based formula rounds ~5 times in quantities of the result's own size; here each piece
ends in one rounding of the result plus errors that are small next to it:

- below 1, the correction t s P(s) is at most 0.24 of the result, so the float32 rounding of
  s, of the Horner steps and of s P(s) cost at most ~0.24 of an ulp each in the result;
  the final FMA rounds once (0.5). Measured: 0.97 ulp.
- from 1 on, q = 2e / (1 + e) <= 0.24 is subtracted from 1: q's relative errors (exp's 0.9
  ulp, the rounding of 1 + e and of the quotient) cost at most a quarter of an ulp of the
  result each; `1 - q` rounds once. Measured: 1.03 ulp (just above 1, where q is largest).

exp(-2t) is `tj_expf`'s reduction and polynomial (tools/fit_exp.py) on -2t: k = rint(-2t /
ln 2), h = t + k ln2/2 (Cody-Waite, exact head), e^(-2h) by the same polynomial with its
coefficients scaled by (-2)^i (exact), times 2^k as an exponent-bit add (-2t >= -20: 2^k is
normal, no clamp or second factor). NaN: t >= 1 is false, so a NaN takes the polynomial
branch and stays NaN; -0.0 -> -0.0 and |x| < 2^-12 -> x come out of the first branch; from
|x| >= 9.011 (where tanh rounds to 1) the result is exactly 1, infinities included.

The fit: P minimizes the error of t s P(s) relative to tanh(t) on a dense grid of t in
[0, 1], by weighted least squares with Lawson reweighting towards the minimax, in float64.
"""

from __future__ import annotations

import argparse

import numpy as np
from fit_exp import MAGIC, c_literal, fit_q, ln2_split

F32 = np.float32
LD = np.longdouble
SPLIT = 1.0  # t below: the polynomial; from here: 1 - 2e / (1 + e)
CLAMP = 10.0  # tanh(10) rounds to 1 by a wide margin; exp(-20) is normal
DEGREE = 6  # of P in s: the smallest with a fit error << 1 ulp on [0, 1]


def fit_poly(degree: int = DEGREE, iters: int = 60):
    """Coefficients (ascending powers of s) of P with t + t s P(s) ~= tanh(t) on [0, SPLIT],
    and the max error reached, relative to tanh(t)."""
    t = np.linspace(1e-4, SPLIT, 200001)
    s = t * t
    target = (np.tanh(t) / t - 1.0) / s
    weight = t * s / np.tanh(t)  # an error in P costs t s / tanh(t) of the result
    cols = s[:, None] ** np.arange(degree + 1)
    lawson = np.ones_like(t)
    best = (np.inf, None)
    for it in range(iters):
        w = weight * lawson
        c = np.linalg.lstsq(cols * w[:, None], target * w, rcond=None)[0]
        err = (cols @ c - target) * weight
        if np.abs(err).max() < best[0]:
            best = (np.abs(err).max(), c)
        if it >= 3:
            lawson = np.maximum(lawson * np.abs(err) / (lawson * np.abs(err)).max(), 1e-30)
    return best[1], best[0]


def exp_coefficients() -> np.ndarray:
    """tj_expf's polynomial e^r ~= 1 + r (1 + r Q(r)) as coefficients of h = -r/2, from the
    power 1 up (ascending): (-2)^i scales each exactly."""
    q = fit_q()[0].astype(F32)
    c = np.concatenate([[F32(1)], q]).astype(F32)  # e^r = 1 + r (c[0] + r (c[1] + ...))
    return np.array([F32(v * (-2.0) ** (i + 1)) for i, v in enumerate(c)], F32)


def _fma(a, b, c):
    """float32 fma(a, b, c): the product of two float32 is exact in long double."""
    return (np.asarray(a, F32).astype(LD) * np.asarray(b, F32).astype(LD) + c).astype(F32)


def _exp_minus_2t(t: np.ndarray, e_coefs: np.ndarray) -> np.ndarray:
    hi, lo = ln2_split()
    kb = _fma(t, F32(-2.0 / np.log(2.0)), LD(MAGIC))
    kf = (kb - MAGIC).astype(F32)
    h = _fma(kf, F32(hi / 2), t.astype(LD))
    h = _fma(kf, F32(lo / 2), h.astype(LD))
    q = np.full_like(h, e_coefs[-1])
    for c in e_coefs[-2::-1]:
        q = _fma(q, h, LD(c))
    pe = _fma(q, h, LD(1))
    shift = kb.view(np.uint32) << np.uint32(23)
    return (pe.view(np.uint32) + shift).view(F32)


def tanh_f32(x: np.ndarray, p: np.ndarray, e_coefs: np.ndarray) -> np.ndarray:
    """`tj_tanhf` evaluated in float32 exactly as the C does it (same operations, same order)."""
    x = np.asarray(x, F32)
    ax = np.abs(x)
    t = np.where(ax > F32(CLAMP), F32(CLAMP), ax).astype(F32)
    s = t * t
    pv = np.full_like(s, p[-1])
    for c in p[-2::-1]:
        pv = _fma(pv, s, LD(c))
    small = _fma(t, s * pv, t.astype(LD))
    with np.errstate(all="ignore"):
        e = _exp_minus_2t(t, e_coefs)
        big = F32(1) - (e + e) / (F32(1) + e)
    return np.copysign(np.where(t >= F32(SPLIT), big, small), x).astype(F32)


def ulp_error(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|y - tanh(x)| in units of the float32 ulp of the exact tanh(x) (x, y float32)."""
    exact = np.tanh(x.astype(np.float64))
    e = np.floor(np.log2(np.maximum(np.abs(exact), 2.0**-126)))
    return np.abs(y.astype(np.float64) - exact) / 2.0 ** (e - 23)


def float32_range(lo: float, hi: float, stride: int = 1) -> np.ndarray:
    """Every `stride`-th float32 in [lo, hi) (0 <= lo < hi), by bit pattern."""
    a, b = np.array([lo, hi], F32).view(np.int32)
    return np.arange(a, b, stride, dtype=np.int32).view(F32)


def max_ulp(p, e_coefs, stride: int) -> float:
    xs = np.concatenate([float32_range(0.0, 2.0**-7, 997), float32_range(2.0**-7, 10.5, stride)])
    return float(ulp_error(tanh_f32(xs, p, e_coefs), xs).max())


def check_compiled(chunk: int = 1 << 24) -> float:
    """Max ulp error of tracejit's compiled float32 tanh over every float32 in [0, 10.5]."""
    import tracejit as tj

    f = tj.jit(np.tanh, device="cpu")
    lo, hi = np.array([0.0, 10.5], F32).view(np.int32)
    worst = 0.0
    for start in range(lo, hi, chunk):
        x = np.arange(start, min(start + chunk, hi), dtype=np.int32).view(F32)
        worst = max(worst, float(ulp_error(np.asarray(f(x)), x).max()))
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check-compiled", action="store_true", help="exhaustive, [0, 10.5]")
    args = ap.parse_args()
    p, fit_err = fit_poly()
    print(f"fit: max error relative to tanh {fit_err:.3e} ({fit_err / 2.0**-24:.3f} x 2^-24)")
    p32, e32 = p.astype(F32), exp_coefficients()
    print(f"float32 max error, every 7th float32 in [2^-7, 10.5): {max_ulp(p32, e32, 7):.3f} ulp")
    print("P (ascending powers of s):", ", ".join(c_literal(v) for v in p32))
    print("exp(-2h) (ascending powers of h from 1):", ", ".join(c_literal(v) for v in e32))
    hi, lo = ln2_split()
    consts = [F32(-2.0 / np.log(2.0)), F32(hi / 2), F32(lo / 2)]
    print("-2/ln2, ln2_hi/2, ln2_lo/2:", ", ".join(c_literal(v) for v in consts))
    if args.check_compiled:
        print(f"compiled tanh, every float32 in [0, 10.5]: max {check_compiled():.3f} ulp")


if __name__ == "__main__":
    main()
