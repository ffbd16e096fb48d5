"""Derive the constants of the CPU backend's inline float32 exp (`tj_expf`).

Run `python tools/fit_exp.py` (NumPy only, a few seconds): it derives the ln 2 split, fits the
polynomial, rounds it to float32, checks the float32 evaluation on a dense sweep and prints the
C constants pasted into `tracejit/backend_cpu/fast_exp.py`. `--check-compiled` also compiles
`np.exp` with tracejit (device="cpu") and compares it with float64 exp on every float32 in
[-104, 89] (~2.2e9 values, a few minutes).

The form (what `tj_expf` computes):

    xc = copysign(min(|x|, XCLAMP), x)        NaN stays NaN; |k| <= 150 below
    kb = fma(xc, log2(e), 1.5 * 2^23)         = 1.5 * 2^23 + k, k = rint(xc / ln 2)
    kf = kb - 1.5 * 2^23                      the float k
    r  = fma(-kf, LN2_HI, xc)                 exact (see below)
    r  = fma(-kf, LN2_LO, r)                  r ~= xc - k ln 2, |r| <= ~0.3466
    p  = fma(fma(Q(r), r, 1), r, 1)           ~= e^r = 1 + r (1 + r Q(r)), Q of degree DEGREE
    e^x = (p * 2^k2) * 2^k1                   k1 = k >> 1, k2 = k - k1

kb's bit pattern is 0x4B400000 + k (k fits in its low mantissa bits), and 0x4B400000 << 22
wraps to 0 in 32 bits, so `kbits << 23` is k << 23 and `(kbits >> 1) << 23` is k1 << 23: the
exponent arithmetic needs no float-to-int conversion, and NaN flows through it as NaN
(p is NaN). p * 2^k2 is formed by adding k2 << 23 to p's bits.

Why two scale factors: 2^k alone is not a normal float32 for k >= 128 nor for k < -126
(subnormal results). With |k| <= 150, k1 and k2 lie in [-75, 75]: p * 2^k2 is a normal float
(exact) and 2^k1 is one, so the one rounding onto the subnormal grid, or to +inf, happens in
the last multiplication: subnormal results are p correctly rounded, and overflow is IEEE's.
XCLAMP = 104: exp(104) overflows and exp(-104) < 2^-150 rounds to 0, so clamping changes no
result, and +-inf land on the right side.

Why the FMA makes a one-float LN2_HI exact: for |xc| >= ln2/2 (else k = 0 and r = xc),
ulp(xc) >= 2^-25 and LN2_HI is a float32 in [1/2, 1), so xc and k * LN2_HI are both
multiples of 2^-25 (k is an integer); their difference |r| < 1/2 is then a multiple of 2^-25
below 2^24 * 2^-25, a float32: the FMA, which rounds only the exact result, is exact.
LN2_LO = float32(ln2 - LN2_HI) leaves |ln2 - LN2_HI - LN2_LO| < 2^-50, times |k| <= 150.
The one rounding of r (second FMA) costs at most |r| 2^-24 relative, ~0.35 ulp.

Why degree 6 (DEGREE 4 for Q): degree 5 fits e^r to 1.9 x 2^-24 and measured 2.29 ulp in
float32; degree 6 fits to 0.06 x 2^-24 and measures 0.88 ulp. The Horner form in r (rather
than 1 + r + r^2 Q) is one operation fewer and, here, slightly more accurate.

The fit: Q minimizes the relative error of 1 + r + r^2 Q(r) against e^r on |r| <= R_MAX, by
weighted least squares with Lawson reweighting towards the minimax, in float64.
"""

from __future__ import annotations

import argparse

import numpy as np

F32 = np.float32
LD = np.longdouble
LN2 = np.log(LD(2))  # long double: the split needs ln 2 beyond float64's 53 bits
LOG2E = F32(1.0 / np.log(2.0))
# exp(104) > FLT_MAX and exp(-104) < 2^-150 (half the smallest subnormal): clamping |x| to
# 104 changes no result and keeps |k| <= 150. The sweep covers [XMIN, XMAX].
XCLAMP = 104.0
XMAX = 89.0
XMIN = -104.0
MAGIC = F32(1.5 * 2**23)
# |r| <= ln2/2 plus the slack from rounding xc*log2(e) in float32 before rint (|xc| <= 104).
R_MAX = 0.3466 + 1e-4
DEGREE = 4  # of Q: e^r is then a degree-6 polynomial, whose fit error is << 1 ulp


def ln2_split() -> tuple[np.float32, np.float32]:
    """LN2_HI = float32(ln 2) and LN2_LO = float32(ln 2 - LN2_HI) (see the module docstring)."""
    hi = F32(LN2)
    lo = F32(LN2 - LD(hi))
    return hi, lo


def fit_q(degree: int = DEGREE, iters: int = 60):
    """Coefficients (ascending) of Q with 1 + r + r^2 Q(r) ~= e^r on |r| <= R_MAX, and the
    max relative error reached."""
    r = np.linspace(-R_MAX, R_MAX, 200001)
    r = r[r != 0]
    target = np.expm1(r) - r  # = r^2 Q(r) exactly
    cols = r[:, None] ** (np.arange(degree + 1) + 2)
    w_rel = 1.0 / np.exp(r)  # relative error of e^r
    lawson = np.ones_like(r)
    best = (np.inf, None)
    for it in range(iters):
        w = w_rel * lawson
        c = np.linalg.lstsq(cols * w[:, None], target * w, rcond=None)[0]
        err = (cols @ c - target) * w_rel
        if np.abs(err).max() < best[0]:
            best = (np.abs(err).max(), c)
        if it >= 3:
            lawson = np.maximum(lawson * np.abs(err) / (lawson * np.abs(err)).max(), 1e-30)
    return best[1], best[0]


def _fma(a, b, c):
    """float32 fma(a, b, c): the product of two float32 is exact in long double."""
    return (np.asarray(a, F32).astype(LD) * np.asarray(b, F32).astype(LD) + c).astype(F32)


def exp_f32(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """`tj_expf` evaluated in float32 exactly as the C does it (same operations, same order)."""
    x = np.asarray(x, F32)
    q = np.asarray(q, F32)
    hi, lo = ln2_split()
    ax = np.abs(x)
    xc = np.copysign(np.where(F32(XCLAMP) < ax, F32(XCLAMP), ax), x).astype(F32)
    kb = _fma(xc, LOG2E, LD(MAGIC))
    kf = (kb - MAGIC).astype(F32)
    r = _fma(-kf, hi, xc.astype(LD))
    r = _fma(-kf, lo, r.astype(LD))
    qv = np.full_like(r, q[-1])
    for c in q[-2::-1]:
        qv = _fma(qv, r, LD(c))
    qv = _fma(qv, r, LD(1))
    p = _fma(qv, r, LD(1))
    u23 = np.uint32(23)
    kbits = kb.view(np.uint32)
    k_sh = kbits << u23
    k1_sh = (kbits >> np.uint32(1)) << u23
    pk2 = (p.view(np.uint32) + (k_sh - k1_sh)).view(F32)
    with np.errstate(over="ignore", invalid="ignore"):
        return (pk2 * (k1_sh + np.uint32(0x3F800000)).view(F32)).astype(F32)


def reference(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(x, F32).astype(np.float64))


def ulp_error(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|y - exp(x)| in float32 ulps of the exact exp(x) (2^-149 in the subnormal range); 0
    where both are +inf, inf where only one of them rounds to +inf."""
    exact = reference(x)
    with np.errstate(over="ignore"):
        ref32 = exact.astype(F32)
    e = np.floor(np.log2(np.maximum(exact, 2.0**-126)))
    with np.errstate(invalid="ignore"):
        err = np.abs(y.astype(np.float64) - exact) / 2.0 ** (e - 23)
    both_inf = np.isinf(ref32) & np.isinf(y)
    return np.where(both_inf, 0.0, np.where(np.isinf(ref32) != np.isinf(y), np.inf, err))


def float32_range(lo: float, hi: float, stride: int = 1) -> np.ndarray:
    """Every `stride`-th float32 in [lo, hi] (any signs), in increasing order."""
    out = []
    if lo < 0:
        a, b = np.array([max(-hi, 0.0) if hi < 0 else 0.0, -lo], F32).view(np.int32)
        out.append(-np.arange(a, b + 1, stride, dtype=np.int32).view(F32)[::-1])
    if hi >= 0:
        a, b = np.array([max(lo, 0.0), hi], F32).view(np.int32)
        out.append(np.arange(a, b + 1, stride, dtype=np.int32).view(F32))
    return np.concatenate(out)


def sweep(stride: int) -> np.ndarray:
    """Every `stride`-th float32 in [-104, 89], plus every float32 whose exp is subnormal or
    within 2^20 ulps of the overflow and underflow-to-zero thresholds."""
    return np.unique(
        np.concatenate(
            [
                float32_range(XMIN, XMAX, stride),
                float32_range(-104.0, -87.33),  # exp(-87.33) ~= 2^-126: the subnormal results
                float32_range(88.0, 89.0),
            ]
        )
    )


def max_ulp(q, stride: int) -> float:
    xs = sweep(stride)
    return float(ulp_error(exp_f32(xs, q), xs).max())


def c_literal(v) -> str:
    """A float32 as a C hex literal: `c_literal(0.5) == "0x1p-1f"`."""
    mantissa, exponent = float(F32(v)).hex().split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}f"


def check_compiled(chunk: int = 1 << 24) -> float:
    """Max ulp error of tracejit's compiled float32 exp over every float32 in [-104, 89]."""
    import tracejit as tj

    f = tj.jit(np.exp, device="cpu")
    worst = 0.0
    for lo, hi in ((0.0, 104.0), (0.0, 89.0)):
        sign = -1 if hi == 104.0 else 1
        a, b = np.array([lo, hi], F32).view(np.int32)
        for start in range(a, b + 1, chunk):
            x = sign * np.arange(start, min(start + chunk, b + 1), dtype=np.int32).view(F32)
            worst = max(worst, float(ulp_error(np.asarray(f(x)), x).max()))
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check-compiled", action="store_true", help="exhaustive, [-104, 89]")
    args = ap.parse_args()
    hi, lo = ln2_split()
    print(f"LN2_HI = {c_literal(hi)}, LN2_LO = {c_literal(lo)}")
    q, fit_err = fit_q()
    print(f"fit: max relative error {fit_err:.3e} ({fit_err / 2.0**-24:.4f} x 2^-24)")
    q32 = q.astype(F32)
    print(
        f"float32 max error, every 97th float32 in [-104, 89] and the edges: "
        f"{max_ulp(q32, 97):.3f} ulp"
    )
    print("Q (ascending powers of r):", ", ".join(c_literal(v) for v in q32))
    if args.check_compiled:
        print(f"compiled exp, every float32 in [-104, 89]: max {check_compiled():.3f} ulp")


if __name__ == "__main__":
    main()
