"""An inline, branch-free float32 log for generated C++ (`tj_logf`), evaluated in double.

glibc's vector `logf` (libmvec) is up to 3.83 ulp off over the float32 range, NumPy's own
float32 log up to 3.01 (tools/ulp_report.py). `tj_logf` widens x to double (float32
subnormals become normal doubles), splits it as 2^e m with m in [sqrt(1/2), sqrt(2)) by
integer arithmetic on the bits, and sums log(m) = 2 atanh(s), s = (m - 1) / (m + 1), as the
series 2 s (1 + s^2/3 + ... + s^12/13): |s| <= 0.1716, so the first omitted term is below
2^-40 relative, and every double operation rounds at 2^-53. The one rounding to float32 then
gives the correctly rounded result except where the exact log lies within ~2^-39 of a
rounding boundary: at most 0.5 ulp and a hair (measured: tools/ulp_report.py).

Special values as C99/NumPy: NaN -> NaN, x < 0 -> NaN, +-0 -> -inf, +inf -> +inf, 1 -> +0.
The series is plain Horner (no contraction: -ffp-contract=off), so the vector lanes and the
scalar tail of a loop compute the same bits.

>>> "tj_logf" in LOGF_C
True
"""

from __future__ import annotations

LOGF_NAME = "tj_logf"

LOGF_C = r"""
// log for float32 in double: x = 2^e m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s),
// s = (m - 1) / (m + 1). Analysis: backend_cpu/fast_log.py.
TJ_FN float tj_logf(float xf) {
  // Special inputs (<= 0, inf, NaN) add their special result to r, which is finite for every
  // non-NaN input (the bit arithmetic below always yields m in [sqrt(1/2), sqrt(2))). A select
  // on r (or one before the conversion to double) would let GCC move the division or the
  // conversion into a branch, which it then does not vectorize (they may trap).
  const bool ok = (xf > 0.0f) & (xf < __builtin_inff());  // no &&: no branch
  const float inf_or_nan = xf == __builtin_inff() ? xf : __builtin_nanf("");
  const float special = ok ? 0.0f : (xf == 0.0f ? -__builtin_inff() : inf_or_nan);
  const double x = (double)xf;
  const uint64_t bits = __builtin_bit_cast(uint64_t, x);
  // bits(x) - bits(sqrt(1/2)) = e << 52 + (bits of m / sqrt(1/2)): an arithmetic shift gives e
  const int64_t e = (int64_t)(bits - 0x3FE6A09E667F3BCDull) >> 52;
  const double m = __builtin_bit_cast(double, bits - ((uint64_t)e << 52));
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  double p = 1.0 / 13.0;
  p = p * z + 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z + 1.0 / 7.0;
  p = p * z + 1.0 / 5.0;
  p = p * z + 1.0 / 3.0;
  p = p * z + 1.0;
  const double r = (double)e * 0x1.62e42fefa39efp-1 + 2.0 * s * p;
  return (float)r + special;  // r + 0 is r: log is never -0
}
"""

__all__ = ["LOGF_C", "LOGF_NAME"]
