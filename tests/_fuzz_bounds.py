"""Running error bounds: how far a conforming implementation may be from NumPy's result.

Every value of a fuzzed program is carried as a `Shadow`: NumPy's result, an elementwise
bound `err` (float64) and a mask `unk`. The claim for each element is: the exact result of
the program (on the same inputs) lies within `err` of NumPy's value, and so does the result
of any implementation that meets the per-operation accuracy below, so two conforming
implementations differ by at most `2 * err`. Where `err == 0` the result is exact: every
conforming implementation gives the same bits (NaN payloads aside). `unk` marks elements the
bound cannot decide (a comparison, floor or conversion whose operand is within its error of
the jump, a possible overflow): those are not compared.

Per-operation accuracy, the stated bounds (u = unit roundoff, 2^-24 float32, 2^-53 float64):
- IEEE basic operations (+ - * / sqrt, conversions): correctly rounded, so exact on exact
  operands and within 0.5 ulp otherwise. No contraction into FMA: `a*b+c` rounds twice.
- Transcendental functions (exp, log, sin, tanh, pow, ...): within LIBM_ULPS ulp of the exact
  value. glibc documents at most 4 ulp for its scalar and libmvec vector functions on x86_64
  (manual, "Known Maximum Errors in Math Functions"); NumPy's SIMD float32 functions and
  SVML float64 functions claim at most 4 ulp; tracejit's inline float32 exp/tanh measure
  0.9 / 1.03 ulp (backend_cpu/fast_exp.py, ir/cwriter/fast_tanh.py). Where C99 Annex F
  fixes the result (operand NaN, +-inf, +-0, log(1), pow with exponent 0 or base 1), it must be exact.
- Sums and products of n terms in any order: within (n - 1) u of each term's magnitude
  (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., section 4.2); dot
  products and matmul likewise with the contraction length. Scans whose order tracejit
  documents as NumPy's (cumprod: ir/structural.py) are bounded as that sequence of correctly
  rounded operations, so they are exact on exact operands.
Propagation is first order with the operand bounds taken at the interval ends, so it holds
for the monotonic functions exactly and for the rest through their derivative bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LIBM_ULPS = 4  # per implementation, see the module docstring
TINY = 5e-324  # the bound of a +-0 whose sign is not determined (max(-0.0, 0.0))


@dataclass
class Shadow:
    value: np.ndarray  # NumPy's result, in the program's dtype
    err: np.ndarray  # float64, >= 0
    unk: np.ndarray  # bool: not decided

    @property
    def f64(self) -> np.ndarray:
        return self.value.astype(np.float64)


def exact(value) -> Shadow:
    value = np.asarray(value)
    return Shadow(value, np.zeros(value.shape), np.zeros(value.shape, bool))


def unit_roundoff(dtype) -> float:
    dt = np.dtype(dtype)
    return float(np.finfo(dt).eps) / 2 if dt.kind == "f" else 0.0


def ulp(out: np.ndarray) -> np.ndarray:
    """The spacing of `out`'s dtype at each element (float64; +inf where out is not finite)."""
    with np.errstate(all="ignore"):
        return np.abs(np.spacing(np.abs(out))).astype(np.float64)


def scaled(e: np.ndarray, m) -> np.ndarray:
    """e * |m| with 0 * inf = 0: an exact operand contributes nothing, however large `m` is."""
    with np.errstate(all="ignore"):
        return np.where(e == 0, 0.0, e * np.abs(m))


def finish(value: np.ndarray, err: np.ndarray, unk: np.ndarray) -> Shadow:
    """Normalize a bound: NaN bounds, and inexact results that may overflow, become unknown."""
    value = np.asarray(value)
    err = np.broadcast_to(np.asarray(err, np.float64), value.shape).copy()
    unk = np.broadcast_to(np.asarray(unk, bool), value.shape).copy()
    with np.errstate(all="ignore"):
        if value.dtype.kind == "f":
            big = float(np.finfo(value.dtype).max)
            v = value.astype(np.float64)
            unk |= (err > 0) & ~(np.abs(v) + 2 * err <= big)
        unk |= ~np.isfinite(err)
    err[unk] = 0.0
    return Shadow(value, err, unk)


def any_err(*shadows: Shadow) -> np.ndarray:
    out = False
    for s in shadows:
        out = out | (s.err > 0)
    return np.asarray(out)


def any_unk(*shadows: Shadow) -> np.ndarray:
    out = False
    for s in shadows:
        out = out | s.unk
    return np.asarray(out)


def rounded(out: np.ndarray, propagated: np.ndarray, inexact: np.ndarray) -> np.ndarray:
    """A correctly rounded operation: exact on exact operands, else + 0.5 ulp."""
    return np.where(inexact, propagated + 0.5 * ulp(out), 0.0)


def libm(out: np.ndarray, propagated: np.ndarray, annex_f: np.ndarray) -> np.ndarray:
    """A libm function: exact where Annex F fixes the result, else + LIBM_ULPS ulp."""
    return np.where(annex_f, 0.0, propagated + LIBM_ULPS * ulp(out))


def straddles(lo: np.ndarray, hi: np.ndarray, points: str = "int") -> np.ndarray:
    """Whether [lo, hi] contains a jump of floor/round (an integer, or a half for "half")."""
    with np.errstate(all="ignore"):
        if points == "half":
            return np.floor(lo - 0.5) != np.floor(hi - 0.5)
        return (np.floor(lo) != np.floor(hi)) | (np.floor(lo) == lo)


def compare_unknown(a: Shadow, b: Shadow) -> np.ndarray:
    """Where a comparison of `a` and `b` may flip: the gap is within their bounds."""
    e = a.err + b.err
    with np.errstate(all="ignore"):
        gap = np.abs(a.f64 - b.f64)
    return any_unk(a, b) | ((e > 0) & ~(gap > e))
