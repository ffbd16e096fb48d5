"""Derive the coefficients of the CPU backend's inline float32 tanh (`tj_tanhf`).

Run `python tools/fit_tanh.py` (NumPy only, ~20 s): it fits, picks the scale, rounds to
float32, checks the float32 evaluation, and prints the C constants pasted into
`tracejit/backend_cpu/fast_tanh.py`. `--check-compiled` also compiles `np.tanh` with
tracejit (device="cpu") and compares it with float64 tanh on every float32 in [0, 10].

The form (what `tj_tanhf` computes for t = min(|x|, CLAMP), s = t*t):

    a = t * P(s),  b = Q(s)          a / b ~= tanh(t / 2)         (P degree 2, Q degree 3)
    tanh(t) = 2ab / (a^2 + b^2)      the double-angle formula 2T / (1 + T^2)

Why this form and not the usual t * P(s) / Q(s) of degree 4/4, which costs the same (the
division dominates): in float32, each of the ~10 roundings of a direct rational can cost up
to 1 ulp where the result is just below a power of two, and the direct form measured 5.2 ulp
at worst. The double-angle step damps every error made in a and b by sech(t)
(d ln tanh(t) / d ln T = (1 - T^2) / (1 + T^2) = 1 / cosh(t)), so large |x| is accurate;
for small |x| the rounding of P and Q near their constant terms is what remains, and scaling
both polynomials by K (which leaves a / b unchanged) moves P(0) and Q(0) to the top of their
binade, halving those roundings' relative size. `b*b + a*a` is summed by an FMA on b*b (the
larger term for t < 2), so the rounding of the smaller a*a is the one that gets damped.

The fit: a / b approximates tanh(t/2) with relative error weighted by sech(t) (what that
error costs in tanh(t)), by Sanathanan-Koerner linearized least squares with Lawson
reweighting towards the minimax, in float64 on a dense grid of t in [0, CLAMP].
"""

from __future__ import annotations

import argparse

import numpy as np

F32 = np.float32
# tanh(9) = 1 - 3.05e-8: 1.0f is within 0.52 ulp of it, so |x| >= 9 returns +-1 exactly.
CLAMP = 9.0
# Below 2^-12, x^3/3 < half an ulp of x: tanh(x) rounds to x, which is returned as is.
TINY = 2.0**-12
P_DEGREE, Q_DEGREE = 2, 3  # in s = t*t; the smallest pair whose fit error is << 1 ulp


def fit_half_angle(m: int = P_DEGREE, n: int = Q_DEGREE, iters: int = 80):
    """Coefficients (ascending powers of s) of P, Q with t*P(s)/Q(s) ~= tanh(t/2), P(0)=1/2,
    Q(0)=1; and the max weighted relative error reached."""
    t = np.unique(
        np.concatenate(
            [
                np.linspace(0.0, CLAMP, 40001)[1:],
                CLAMP * (1.0 - np.cos(np.linspace(0.0, np.pi / 2, 10001)))[1:],
            ]
        )
    )
    g = np.tanh(t / 2) / (t / 2)  # target for P(s)/Q(s) with P(0) = Q(0) = 1
    z = t * t / CLAMP**2  # the fit runs in z = s / CLAMP^2 in [0, 1]: well conditioned
    sech = 1.0 / np.cosh(t)
    lawson = np.ones_like(t)
    q_prev = np.ones_like(t)
    best = (np.inf, None, None)
    for it in range(iters):
        # P(z) - g Q(z) = 0 linearized (Sanathanan-Koerner: divide by the last Q), relative
        # to g, weighted by sech(t) and the Lawson weights.
        cols_p = z[:, None] ** np.arange(1, m + 1)
        cols_q = -g[:, None] * z[:, None] ** np.arange(1, n + 1)
        w = lawson * sech / (g * q_prev)
        a = np.concatenate([cols_p, cols_q], axis=1) * w[:, None]
        sol = np.linalg.lstsq(a, (g - 1.0) * w, rcond=None)[0]
        p = np.concatenate([[1.0], sol[:m]])
        q = np.concatenate([[1.0], sol[m:]])
        p_val, q_val = np.polyval(p[::-1], z), np.polyval(q[::-1], z)
        err = (p_val / q_val / g - 1.0) * sech
        if np.abs(err).max() < best[0]:
            scale_p = CLAMP ** (2.0 * np.arange(m + 1))
            scale_q = CLAMP ** (2.0 * np.arange(n + 1))
            best = (np.abs(err).max(), 0.5 * p / scale_p, q / scale_q)
        q_prev = q_val
        if it >= 5:  # Lawson: weight up where the error is large
            lawson = np.maximum(lawson * np.abs(err) / (lawson * np.abs(err)).max(), 1e-30)
    return best[1], best[2], best[0]


def _fma(a, b, c):
    """float32 fma(a, b, c): the product of two float32 is exact in long double."""
    ld = np.longdouble
    return (a.astype(ld) * b.astype(ld) + c.astype(ld)).astype(F32)


def tanh_f32(x: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """`tj_tanhf` evaluated in float32 exactly as the C does it (same operations, same order)."""
    x = np.asarray(x, F32)
    p, q = np.asarray(p, F32), np.asarray(q, F32)
    ax = np.abs(x)
    t = np.where(ax > F32(CLAMP), F32(CLAMP), ax).astype(F32)
    s = t * t
    pv = np.full_like(s, p[-1])
    for c in p[-2::-1]:
        pv = _fma(pv, s, np.full_like(s, c))
    qv = np.full_like(s, q[-1])
    for c in q[-2::-1]:
        qv = _fma(qv, s, np.full_like(s, c))
    a = t * pv
    num = F32(2) * (a * qv)
    den = _fma(qv, qv, a * a)
    with np.errstate(invalid="ignore"):
        r = num / den
    r = np.where(r > F32(1), F32(1), r)
    r = np.where(ax >= F32(CLAMP), F32(1), r)
    r = np.where(ax < F32(TINY), ax, r)
    return np.copysign(r, x).astype(F32)


def ulp_error(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|y - tanh(x)| in units of the float32 ulp of the exact tanh(x) (x, y float32)."""
    exact = np.tanh(x.astype(np.float64))
    e = np.floor(np.log2(np.maximum(np.abs(exact), 2.0**-126)))
    return np.abs(y.astype(np.float64) - exact) / 2.0 ** (e - 23)


def float32_range(lo: float, hi: float, stride: int = 1) -> np.ndarray:
    """Every `stride`-th float32 in [lo, hi) (0 <= lo < hi), by bit pattern."""
    a, b = np.array([lo, hi], F32).view(np.int32)
    return np.arange(a, b, stride, dtype=np.int32).view(F32)


def max_ulp(p, q, stride: int) -> float:
    xs = np.concatenate([float32_range(0.0, 2.0**-7, 997), float32_range(2.0**-7, 10.0, stride)])
    return float(ulp_error(tanh_f32(xs, p, q), xs).max())


def choose_scale(p, q) -> float:
    """The K in [1.5, 2) for K*P, K*Q with the smallest float32 error on a coarse sample."""
    errs = {k: max_ulp(F32(k) * p, F32(k) * q, 211) for k in np.arange(1.5, 2.0, 0.01)}
    return float(min(errs, key=errs.get))


def c_literal(v) -> str:
    """A float32 as a C hex literal: `c_literal(0.5) == "0x1p-1f"`."""
    mantissa, exponent = float(F32(v)).hex().split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}f"


def check_compiled(chunk: int = 1 << 24) -> float:
    """Max ulp error of tracejit's compiled float32 tanh over every float32 in [0, 10]."""
    import tracejit as tj

    f = tj.jit(np.tanh, device="cpu")
    lo, hi = np.array([0.0, 10.0], F32).view(np.int32)
    worst = 0.0
    for start in range(lo, hi, chunk):
        x = np.arange(start, min(start + chunk, hi), dtype=np.int32).view(F32)
        worst = max(worst, float(ulp_error(np.asarray(f(x)), x).max()))
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check-compiled", action="store_true", help="exhaustive check, [0, 10]")
    args = ap.parse_args()
    p, q, fit_err = fit_half_angle()
    print(f"fit: max sech-weighted relative error {fit_err:.3e} ({fit_err / 2.0**-24:.3f} x 2^-24)")
    k = choose_scale(p.astype(F32), q.astype(F32))
    p32, q32 = (k * p).astype(F32), (k * q).astype(F32)
    print(f"scale K = {k:.2f}; float32 max error, every 7th float32 in [2^-7, 10) and a sweep")
    print(f"below: {max_ulp(p32, q32, 7):.3f} ulp")
    print("P (ascending powers of s):", ", ".join(c_literal(v) for v in p32))
    print("Q (ascending powers of s):", ", ".join(c_literal(v) for v in q32))
    if args.check_compiled:
        print(f"compiled tanh, every float32 in [0, 10]: max {check_compiled():.3f} ulp")


if __name__ == "__main__":
    main()
