"""How each dtype is spelled in generated C++ and CUDA C: one table for both backends.

Integers are the <cstdint> types. float16 and bfloat16 are stored as 16 bits (`tj_f16`,
`tj_bf16`: a struct that converts implicitly to and from float) and computed in float32: the
op table (c_render.py) reads them as float and rounds each operation's result back to 16
bits, so + - * / and sqrt give NumPy's (and ml_dtypes') results bit for bit (float32 has more
than 2 * 11 + 2 significand bits, so the double rounding is exact). Sums accumulate in float.
The conversions are bit manipulations (round to nearest even; F. Giesen's "half <-> float"
method), the same text on the CPU, under NVRTC and in the CUDA emulator: no <cuda_fp16.h>
(NVRTC cannot include it without the toolkit headers) and no `_Float16` (GCC-only).

>>> c_type(np.uint8), c_type(np.float16), c_type(compute_dtype(BFLOAT16))
('uint8_t', 'tj_f16', 'float')
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.ir.dtypes import BFLOAT16, FLOAT16, is_low_precision, real_dtype

C_TYPES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "int8_t",
    np.dtype(np.int16): "int16_t",
    np.dtype(np.int32): "int32_t",
    np.dtype(np.int64): "int64_t",
    np.dtype(np.uint8): "uint8_t",
    np.dtype(np.uint16): "uint16_t",
    np.dtype(np.uint32): "uint32_t",
    np.dtype(np.uint64): "uint64_t",
    FLOAT16: "tj_f16",
    BFLOAT16: "tj_bf16",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.complex64): "tj_c64",
    np.dtype(np.complex128): "tj_c128",
}
_INTEGERS = [dt for dt in C_TYPES if dt.kind in "iu"]
# The unsigned type integer arithmetic wraps in: at least 32 bits, so C's promotion of the
# narrow types to int never overflows (uint16 * uint16 would overflow a signed int).
WRAP_TYPES = {dt: "uint64_t" if dt.itemsize == 8 else "uint32_t" for dt in _INTEGERS}
# The unsigned type of the same width (shift counts compare in it).
UNSIGNED = {dt: f"uint{dt.itemsize * 8}_t" for dt in _INTEGERS}

TYPES_PRELUDE = (
    r"""
#ifdef __CUDACC_RTC__
typedef signed char int8_t;
typedef short int16_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
#endif
#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__device__)
#define TJ_MEMBER __device__ inline
#else
#define TJ_MEMBER inline
#endif
TJ_FN uint32_t tj_f32_bits(float f) { union { float f; uint32_t u; } v; v.f = f; return v.u; }
TJ_FN float tj_bits_f32(uint32_t u) { union { float f; uint32_t u; } v; v.u = u; return v.f; }
// float -> binary16, round to nearest even; NaN stays NaN (quiet), overflow gives Inf.
TJ_FN uint16_t tj_f32_to_f16(float f) {
  uint32_t u = tj_f32_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u >= 0x47800000u) return (uint16_t)(sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (u < 0x38800000u) {  // a subnormal half or zero: the float add rounds the mantissa
    const float magic = tj_bits_f32(0x3f000000u);  // 0.5: aligns 10 bits at the bottom
    return (uint16_t)(sign | (tj_f32_bits(tj_bits_f32(u) + magic) - 0x3f000000u));
  }
  const uint32_t odd = (u >> 13) & 1u;
  u += 0xc8000fffu + odd;  // rebias the exponent (-112 << 23) and round
  return (uint16_t)(sign | (u >> 13));
}
TJ_FN float tj_f16_to_f32(uint16_t h) {
  uint32_t u = ((uint32_t)h & 0x7fffu) << 13;
  const uint32_t exp = u & 0x0f800000u;
  u += 0x38000000u;  // (127 - 15) << 23
  if (exp == 0x0f800000u) {
    u += 0x38000000u;  // Inf / NaN
  } else if (exp == 0) {
    u = tj_f32_bits(tj_bits_f32(u + 0x00800000u) - tj_bits_f32(0x38800000u));  // subnormal
  }
  return tj_bits_f32(u | (((uint32_t)h & 0x8000u) << 16));
}
// double -> float rounded to odd (truncated, the last bit set when inexact): rounding that to
// float16 gives the correctly rounded double -> float16 (24 >= 11 + 2 bits), as NumPy's.
TJ_FN float tj_f64_to_f32_odd(double d) {
  const float f = (float)d;
  if ((double)f == d || f != f) return f;
  uint32_t u = tj_f32_bits(f);
  if ((f < 0 ? -(double)f : (double)f) > (d < 0 ? -d : d)) u -= 1u;  // rounded up: truncate
  return tj_bits_f32(u | 1u);
}
// float -> bfloat16 (the top 16 bits), round to nearest even; NaN stays a quiet NaN.
TJ_FN uint16_t tj_f32_to_bf16(float f) {
  const uint32_t u = tj_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
TJ_FN float tj_bf16_to_f32(uint16_t h) { return tj_bits_f32((uint32_t)h << 16); }
struct tj_f16 {
  uint16_t bits;
  tj_f16() = default;
  TJ_MEMBER tj_f16(float f) : bits(tj_f32_to_f16(f)) {}
  TJ_MEMBER operator float() const { return tj_f16_to_f32(bits); }
  static TJ_MEMBER tj_f16 from_bits(uint16_t b) { tj_f16 h; h.bits = b; return h; }
};
struct tj_bf16 {
  uint16_t bits;
  tj_bf16() = default;
  TJ_MEMBER tj_bf16(float f) : bits(tj_f32_to_bf16(f)) {}
  TJ_MEMBER operator float() const { return tj_bf16_to_f32(bits); }
  static TJ_MEMBER tj_bf16 from_bits(uint16_t b) { tj_bf16 h; h.bits = b; return h; }
};
"""
    + r"""
// complex64/complex128: NumPy's layout (real, imaginary); NumPy's formulas for * and /.
#define TJ_COMPLEX(C, R)                                                                   \
  struct C {                                                                               \
    R re, im;                                                                              \
    C() = default;                                                                         \
    TJ_MEMBER C(R r) : re(r), im(0) {}                                                     \
    TJ_MEMBER C(R r, R i) : re(r), im(i) {}                                                \
  };                                                                                       \
  TJ_FN C operator+(C a, C b) { return C(a.re + b.re, a.im + b.im); }                      \
  TJ_FN C operator-(C a, C b) { return C(a.re - b.re, a.im - b.im); }                      \
  TJ_FN C operator-(C a) { return C(-a.re, -a.im); }                                       \
  TJ_FN C operator*(C a, C b) {                                                            \
    return C(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);                        \
  }                                                                                        \
  TJ_FN C operator/(C a, C b) { /* Smith's algorithm, as NumPy's loops */                 \
    const R ar = b.re < 0 ? -b.re : b.re, ai = b.im < 0 ? -b.im : b.im;                    \
    if (ar >= ai) {                                                                        \
      if (ar == 0 && ai == 0) return C(a.re / ar, a.im / ar);                              \
      const R rat = b.im / b.re, scl = (R)1 / (b.re + b.im * rat);                         \
      return C((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);                      \
    }                                                                                      \
    const R rat = b.re / b.im, scl = (R)1 / (b.im + b.re * rat);                           \
    return C((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);                        \
  }                                                                                        \
  TJ_FN bool operator==(C a, C b) { return a.re == b.re && a.im == b.im; }                 \
  TJ_FN bool operator!=(C a, C b) { return !(a == b); }                                    \
  TJ_FN C tj_conj(C a) { return C(a.re, -a.im); }
TJ_COMPLEX(tj_c64, float)
TJ_COMPLEX(tj_c128, double)
#undef TJ_COMPLEX
"""
)


def c_type(dtype) -> str:
    """The C type a value of `dtype` is stored in: `c_type(np.float32) == "float"`."""
    dt = np.dtype(dtype)
    try:
        return C_TYPES[dt]
    except KeyError:
        raise UnsupportedError(f"{dt} is not supported by compiled kernels yet") from None


def compute_dtype(dtype) -> np.dtype:
    """The dtype arithmetic on `dtype` runs in: float32 for float16 and bfloat16."""
    return np.dtype(np.float32) if is_low_precision(dtype) else np.dtype(dtype)


def float_suffix(dtype) -> str:
    """The libm suffix of `dtype`'s compute type: "f" for float32 (and 16-bit floats)."""
    return "f" if compute_dtype(dtype) == np.float32 else ""


__all__ = [
    "C_TYPES",
    "TYPES_PRELUDE",
    "UNSIGNED",
    "WRAP_TYPES",
    "c_type",
    "compute_dtype",
    "float_suffix",
    "real_dtype",
]
