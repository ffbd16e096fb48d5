"""C helpers shared by the generated C++ and CUDA: one text, with the backend's `TJ_FN`
(`static inline` in C++, `static __device__ __forceinline__` in CUDA) defined before it.

These are the element-level semantics of the kernel library (gathers, scatters, scans, the
PRNG, reductions); each backend writes only the loops around them:

- `tj_clamp_index(i, n)`: NumPy's index rule of `take` (ir/structural.py): wrap once when
  negative, then clip to [0, max(n - 1, 0)].
- `tj_wrap_add(a, b)`: NumPy's `a + b` of one dtype: integers wrap (added in the unsigned
  type: signed overflow is undefined in C and NVRTC has no -fwrapv), bools `||`.
- `tj_wrap_mul(a, b)`: NumPy's `a * b` likewise: integers wrap, bools `&&`, complex values
  by the formula of NumPy's scalar loop, `(ar*br - ai*bi, ar*bi + ai*br)`, each product
  rounded (never fused), no special case for infinities: `(inf + 0j) * (1 + 0j)` is
  `inf + nanj`, as in NumPy. (NumPy's SIMD loop for `multiply` of two arrays fuses
  `ar*br - ai*bi` into one fma; `accumulate` overlaps its operands and runs the scalar one.)
- `SCAN_COMBINE`: the helper that combines two elements of each scan primitive, so both
  backends write one scan loop (sequential along the axis, NumPy's `accumulate` order) for
  `cumsum` and `cumprod`.
- `tj_arg_better(bv, bi, av, ai, is_max)`: is candidate (bv, bi) better than (av, ai) in an
  argmax/argmin? The first NaN wins, then the extreme value, then the smaller index (NumPy
  returns the first occurrence); an index < 0 is "no candidate yet".
- `tj_rotl32`, `tj_threefry_block`: Threefry-2x32 (ir/threefry.py).

>>> "tj_threefry_block" in LIBRARY and "TJ_FN int64_t tj_clamp_index" in LIBRARY
True
>>> SCAN_COMBINE["cumprod"]
'tj_wrap_mul'
"""

from __future__ import annotations

from tracejit.ir.threefry import C_BLOCK

_HELPERS = r"""
// NumPy's reference: where(i < 0, i + n, i), then clip to [0, max(n - 1, 0)].
TJ_FN int64_t tj_clamp_index(int64_t i, int64_t n) {
  if (i < 0) i += n;
  if (i > n - 1) i = n - 1;
  if (i < 0) i = 0;
  return i;
}
// NumPy's a + b: integers wrap (through the unsigned type), bools add as ||.
template <class T> TJ_FN T tj_wrap_add(T a, T b) {  // every integer type, modulo 2**bits
  return (T)((unsigned long long)a + (unsigned long long)b);
}
TJ_FN bool tj_wrap_add(bool a, bool b) { return a || b; }
TJ_FN float tj_wrap_add(float a, float b) { return a + b; }
TJ_FN double tj_wrap_add(double a, double b) { return a + b; }
// NumPy's a * b: integers wrap (through the unsigned type), bools multiply as &&.
template <class T> TJ_FN T tj_wrap_mul(T a, T b) {  // every integer type, modulo 2**bits
  return (T)((unsigned long long)a * (unsigned long long)b);
}
TJ_FN bool tj_wrap_mul(bool a, bool b) { return a && b; }
TJ_FN float tj_wrap_mul(float a, float b) { return a * b; }
TJ_FN double tj_wrap_mul(double a, double b) { return a * b; }
// A complex product by the formula of NumPy's scalar loop (the one `accumulate` runs), its four
// products hidden from the optimizer: g++ 12 -O3 vectorizes a complex multiply into
// vfmaddsub (a fused multiply-add) even under -ffp-contract=off. NVRTC compiles with
// -fmad=false and has no such pattern.
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define TJ_OPAQUE(v)
#elif defined(__x86_64__) || defined(__i386__)
#define TJ_OPAQUE(v) __asm__("" : "+x"(v))
#elif defined(__aarch64__)
#define TJ_OPAQUE(v) __asm__("" : "+w"(v))
#else
#define TJ_OPAQUE(v) __asm__("" : "+m"(v))
#endif
template <class C, class R> TJ_FN C tj_complex_mul(C a, C b) {
  R rr = a.re * b.re, ii = a.im * b.im, ri = a.re * b.im, ir = a.im * b.re;
  TJ_OPAQUE(rr); TJ_OPAQUE(ii); TJ_OPAQUE(ri); TJ_OPAQUE(ir);
  return C(rr - ii, ri + ir);
}
TJ_FN tj_c64 tj_wrap_mul(tj_c64 a, tj_c64 b) { return tj_complex_mul<tj_c64, float>(a, b); }
TJ_FN tj_c128 tj_wrap_mul(tj_c128 a, tj_c128 b) { return tj_complex_mul<tj_c128, double>(a, b); }
// argmax/argmin: is candidate (bv, bi) better than (av, ai)? The first NaN wins, then the
// extreme value, then the smaller index (NumPy returns the first occurrence).
template <class T> TJ_FN bool tj_arg_better(T bv, int64_t bi, T av, int64_t ai, bool is_max) {
  if (ai < 0) return bi >= 0;
  if (bi < 0) return false;
  bool an = av != av, bn = bv != bv;
  if (an || bn) return an && bn ? bi < ai : bn;
  if (bv == av) return bi < ai;
  return is_max ? bv > av : bv < av;
}
"""

LIBRARY = _HELPERS + C_BLOCK + "\n"

# scan primitive -> the helper combining the running value with the next element
SCAN_COMBINE = {"cumsum": "tj_wrap_add", "cumprod": "tj_wrap_mul"}

__all__ = ["LIBRARY", "SCAN_COMBINE"]
